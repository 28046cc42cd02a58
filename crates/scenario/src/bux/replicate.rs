//! One point of a figure: a [`LinkRun`] replicated with the sim
//! [`Runner`] (replication/deletion, MSER-5 on each replication's series,
//! Student-t 95% intervals), two replications at a time.

use std::sync::Mutex;

use linklab_sim::{ConfidenceInterval, ReplicationOutput, Runner};
use serde::Serialize;

use super::simulate::{simulate, LinkRun, Traffic};
use super::BuxError;
use crate::report::{Point, Progress};

/// Threads the replications of one point share.
const THREADS: usize = 2;

/// A mean with its 95% confidence half-width.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The mean over the replications.
    pub mean: f64,
    /// Half-width of the 95% Student-t interval.
    pub half_width: f64,
}

impl Estimate {
    fn of(ci: ConfidenceInterval) -> Estimate {
        Estimate {
            mean: ci.mean,
            half_width: ci.half_width,
        }
    }

    /// Lower end of the interval.
    pub fn lower(self) -> f64 {
        self.mean - self.half_width
    }

    /// Upper end of the interval.
    pub fn upper(self) -> f64 {
        self.mean + self.half_width
    }

    /// Half-width over mean.
    pub fn relative(self) -> f64 {
        if self.mean == 0.0 {
            0.0
        } else {
            (self.half_width / self.mean).abs()
        }
    }

    /// The same estimate divided by `by` (normalised to an I-frame time).
    pub fn scaled(self, by: f64) -> Estimate {
        Estimate {
            mean: self.mean / by,
            half_width: self.half_width / by,
        }
    }

    /// A figure point at `x`.
    pub fn point(self, x: f64) -> Point {
        Point {
            x,
            y: self.mean,
            half_width: Some(self.half_width),
        }
    }

    /// "0.812 ± 0.004".
    pub fn show(self) -> String {
        format!("{:.4} ± {:.4}", self.mean, self.half_width)
    }
}

/// What one point measured in one direction (by sending station).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DirectionEstimate {
    /// Throughput relative to v.
    pub throughput: Option<Estimate>,
    /// Mean transfer time, s.
    pub transfer_s: Option<Estimate>,
    /// Mean buffer-holding time, s.
    pub holding_s: Option<Estimate>,
}

/// How many replications a point runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Replications {
    /// Replications run first (and the step in which more are added).
    pub initial: u64,
    /// Relative precision sought: half-width over mean.
    pub precision: f64,
    /// The most replications run for the precision.
    pub max: u64,
}

impl Replications {
    /// Exactly `n` replications.
    pub fn fixed(n: u64) -> Replications {
        Replications {
            initial: n,
            precision: f64::INFINITY,
            max: n,
        }
    }
}

/// Runs replications of `run` with master seed `seed` (replication r uses
/// `Streams::new(seed).replication(r)`) by the sequential procedure of
/// [`Runner::run_to_precision`]: `replications.initial` first, then as
/// many again until every measure the point reports (the throughputs with
/// saturated sources, else the transfer and buffer-holding times) is
/// within `replications.precision` of its mean, or `replications.max`
/// have run. `progress` gets the initial replications as work and one
/// unit per replication run (added ones come with their own work).
pub fn replicate(
    run: &LinkRun,
    replications: Replications,
    seed: u64,
    progress: &dyn Progress,
    what: &str,
) -> Result<[DirectionEstimate; 2], BuxError> {
    if replications.initial < 2 {
        return Err(BuxError::TooFewReplications {
            replications: replications.initial,
        });
    }
    let delays = run
        .traffic
        .iter()
        .any(|t| matches!(t, Traffic::Poisson { .. }));
    let failure = Mutex::new(None);
    let ran = std::sync::atomic::AtomicU64::new(0);
    let runner = Runner::new(seed, replications.initial);
    let report = runner.run_to_precision(
        THREADS,
        replications.precision,
        replications.max.max(replications.initial),
        |streams| {
            let mut out = ReplicationOutput::new();
            if ran.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= replications.initial {
                progress.add_work(1);
            }
            match simulate(run, &streams) {
                Ok(measured) => {
                    for (i, d) in measured.directions.into_iter().enumerate() {
                        if !delays && d.delivered > 0 {
                            out.series(format!("throughput/{i}"), d.throughput);
                        }
                        if delays && !d.transfer_s.is_empty() {
                            out.series(format!("transfer/{i}"), d.transfer_s);
                        }
                        if delays && !d.holding_s.is_empty() {
                            out.series(format!("holding/{i}"), d.holding_s);
                        }
                    }
                }
                Err(e) => {
                    if let Ok(mut slot) = failure.lock() {
                        slot.get_or_insert(e);
                    }
                }
            }
            progress.advance(1, what);
            out
        },
    );
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    let get = |name: String| report.ci(&name).map(Estimate::of);
    Ok([0, 1].map(|i| DirectionEstimate {
        throughput: get(format!("throughput/{i}")),
        transfer_s: get(format!("transfer/{i}")),
        holding_s: get(format!("holding/{i}")),
    }))
}
