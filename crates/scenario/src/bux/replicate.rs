//! One point of a figure: a [`LinkRun`] replicated with the sim
//! [`Runner`] (replication/deletion, MSER-5 on each replication's series,
//! Student-t 95% intervals), on the threads the run options give.

use core::num::NonZeroUsize;

use linklab_sim::{try_map_ordered, ConfidenceInterval, Metric, ReplicationOutput, Runner};
use serde::{Deserialize, Serialize};

use super::simulate::{simulate, LinkRun, Traffic};
use super::BuxError;
use crate::report::{Point, Progress, RunOptions};

/// Throughput series of each direction (saturated sources).
const THROUGHPUT: [Metric; 2] = [Metric::new("throughput/0"), Metric::new("throughput/1")];
/// Transfer times of each direction's messages (Poisson sources).
const TRANSFER: [Metric; 2] = [Metric::new("transfer/0"), Metric::new("transfer/1")];
/// Buffer-holding times of each direction's messages (Poisson sources).
const HOLDING: [Metric; 2] = [Metric::new("holding/0"), Metric::new("holding/1")];

/// A mean with its 95% confidence half-width.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
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

/// Runs replications of `run` with master seed `opts.seed` (replication r
/// uses `Streams::new(seed).replication(r)`) on `opts.jobs` threads by the
/// sequential procedure of
/// [`Runner::run_to_precision`]: `replications.initial` first, then as
/// many again until every measure the point reports (the throughputs with
/// saturated sources, else the transfer and buffer-holding times) is
/// within `replications.precision` of its mean, or `replications.max`
/// have run. `progress` gets the initial replications as work and one
/// unit per replication run (added ones come with their own work).
pub fn replicate(
    run: &LinkRun,
    replications: Replications,
    opts: &RunOptions,
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
    let ran = std::sync::atomic::AtomicU64::new(0);
    let runner = Runner::new(opts.seed, replications.initial);
    let report = runner.try_run_to_precision(
        opts.jobs,
        replications.precision,
        replications.max.max(replications.initial),
        |streams| {
            if ran.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= replications.initial {
                progress.add_work(1);
            }
            let measured = simulate(run, &streams);
            progress.advance(1, what);
            let mut out = ReplicationOutput::new();
            for (i, d) in measured?.directions.into_iter().enumerate() {
                if !delays && d.delivered > 0 {
                    out.series(THROUGHPUT[i], d.throughput);
                }
                if delays && !d.transfer_s.is_empty() {
                    out.series(TRANSFER[i], d.transfer_s);
                }
                if delays && !d.holding_s.is_empty() {
                    out.series(HOLDING[i], d.holding_s);
                }
            }
            Ok::<_, BuxError>(out)
        },
    )?;
    let get = |metric: Metric| report.ci(metric).map(Estimate::of);
    Ok([0, 1].map(|i| DirectionEstimate {
        throughput: get(THROUGHPUT[i]),
        transfer_s: get(TRANSFER[i]),
        holding_s: get(HOLDING[i]),
    }))
}

/// One point of a Bux sweep: a link replicated to a precision.
#[derive(Debug, Clone, PartialEq)]
pub struct BuxPoint {
    /// The link.
    pub run: LinkRun,
    /// How many replications.
    pub replications: Replications,
    /// What it is, for the progress bar.
    pub what: String,
}

impl BuxPoint {
    /// Replicates it ([`replicate`]).
    pub fn run(
        &self,
        opts: &RunOptions,
        progress: &dyn Progress,
    ) -> Result<[DirectionEstimate; 2], BuxError> {
        progress.add_work(self.replications.initial);
        replicate(&self.run, self.replications, opts, progress, &self.what)
    }
}

/// Runs `points` on `opts.jobs` threads, a point to a thread and its
/// replications one after the other; the results in point order.
pub fn run_all(
    points: &[BuxPoint],
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<Vec<[DirectionEstimate; 2]>, BuxError> {
    let inner = RunOptions {
        jobs: NonZeroUsize::MIN,
        ..*opts
    };
    try_map_ordered(opts.jobs, points, |_, p| p.run(&inner, progress))
}

/// How a Bux sweep's figures and tables are walked: once to list its
/// points, each distinct point once in the order first met (a point two
/// figures share runs once), and once to build the curves from the
/// points' results. One walk serves both, so the points listed are the
/// points used.
#[derive(Debug)]
pub enum Walk<'a, K> {
    /// Listing: every point met goes into the list; the walk gets
    /// stand-in results.
    Plan(&'a mut Vec<(K, BuxPoint)>),
    /// Building: every point's results by key.
    Results(std::collections::BTreeMap<K, [DirectionEstimate; 2]>),
}

impl<K: Ord + Clone> Walk<'_, K> {
    /// A walk over the results of `points`, in the same order.
    pub fn results(
        points: &[(K, BuxPoint)],
        results: Vec<[DirectionEstimate; 2]>,
    ) -> Walk<'static, K> {
        Walk::Results(points.iter().map(|(k, _)| k.clone()).zip(results).collect())
    }

    /// The point `key` (made by `point` when first met): its results when
    /// building, stand-ins when listing.
    pub fn point(
        &mut self,
        key: K,
        point: impl FnOnce() -> BuxPoint,
    ) -> Result<[DirectionEstimate; 2], BuxError> {
        match self {
            Walk::Plan(points) => {
                if !points.iter().any(|(k, _)| *k == key) {
                    points.push((key, point()));
                }
                let stand_in = Some(Estimate {
                    mean: 1.0,
                    half_width: 0.0,
                });
                Ok([DirectionEstimate {
                    throughput: stand_in,
                    transfer_s: stand_in,
                    holding_s: stand_in,
                }; 2])
            }
            Walk::Results(results) => results
                .get(&key)
                .copied()
                .ok_or(BuxError::NoEstimate { what: "a point" }),
        }
    }

    /// The points `walk` meets, each distinct one once, in the order first
    /// met.
    pub fn list<R>(
        walk: impl FnOnce(&mut Walk<'_, K>) -> Result<R, BuxError>,
    ) -> Result<Vec<(K, BuxPoint)>, BuxError> {
        let mut points = Vec::new();
        walk(&mut Walk::Plan(&mut points))?;
        Ok(points)
    }
}
