//! Mean transfer time and buffer-holding time against the useful channel
//! load or against t_p (Bux et al. 1982, section 3.2, Figs. 7-11), the
//! experiment of kind `bux-transfer-time`.
//!
//! Both stations receive Poisson arrivals at the same useful load Y_u
//! ("symmetrical traffic conditions"); one NRM run gives the primary to
//! secondary and the secondary to primary curves, one ABM run both
//! directions of the balanced link (their mean is the ABM curve). Times
//! are shown relative to the mean I-frame transmission time, as in the
//! paper.

use core::time::Duration;
use std::collections::BTreeMap;

use linklab_link::WindowLimit;
use serde::Deserialize;

use super::model::{md1_transfer_s, mg1_exponential_transfer_s, nrm_secondary_transfer_s};
use super::replicate::{BuxPoint, DirectionEstimate, Estimate, Replications, Walk};
use super::simulate::{frame_overhead_bits, LinkRun, Procedure, Traffic};
use super::{modulus, BuxError, LengthDistribution};
use super::{
    validate_modulus, validate_p_bit, MAX_BIT_RATE_BPS, MAX_FRAME_TIMES, MAX_MESSAGE_BITS,
    MAX_T_P_MS,
};
use crate::experiment::{
    all_in_range, each_valid, file_name_id, in_range, run_all, validate_replications, Experiment,
    ExperimentKind, InvalidField,
};
use crate::report::{Figure, Output, Point, Progress, RunOptions, Series, SeriesStyle, Table};

/// The experiment's `kind` in its TOML file.
pub const KIND: &str = "bux-transfer-time";

/// What a figure plots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Measure {
    /// Arrival at the sender to correct reception at the other station.
    TransferTime,
    /// Arrival at the sender to the acknowledgement that frees its buffer.
    BufferHoldingTime,
}

/// A transfer-time experiment: `crates/scenario/experiments/bux-transfer-time*.toml`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferTimeExperiment {
    /// What the file reproduces.
    pub title: String,
    /// Replications per point.
    pub replications: u64,
    /// Replications per point with `--quick`.
    pub quick_replications: u64,
    /// Relative precision sought in the full run: replications are added
    /// (as many as `replications` at a time) until every 95% half-width
    /// is at most this share of its mean, e.g. 0.02.
    pub relative_precision: f64,
    /// The most replications a point runs for that precision (the quick
    /// run always runs `quick_replications`).
    pub max_replications: u64,
    /// Messages per station and replication (sets the measured period).
    pub messages_per_replication: u32,
    /// The same with `--quick`.
    pub quick_messages_per_replication: u32,
    /// The figures.
    pub figure: Vec<TransferTimeFigure>,
}

/// One figure: a sweep over the load (one t_p) or over t_p (one load).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferTimeFigure {
    /// File-name-safe id, e.g. `bux-fig7`.
    pub id: String,
    /// Caption.
    pub title: String,
    /// Transfer time or buffer-holding time.
    pub measure: Measure,
    /// Constant or exponential lengths.
    pub length_distribution: LengthDistribution,
    /// l (or its mean), bits.
    pub message_length_bits: u32,
    /// Transmission rate v, bit/s.
    pub bit_rate_bps: u32,
    /// Modulus, 8 or 128.
    pub modulus: u32,
    /// The bit-error probabilities, one set of curves each.
    pub p_bits: Vec<f64>,
    /// Useful loads Y_u (the x axis if more than one).
    pub loads: Vec<f64>,
    /// Loads run with `--quick`.
    pub quick_loads: Vec<f64>,
    /// t_p values, ms (the x axis, relative to the I-frame time, if more
    /// than one).
    pub t_p_ms: Vec<f64>,
    /// t_p values run with `--quick`.
    pub quick_t_p_ms: Vec<f64>,
}

/// One curve's points: (x, estimate relative to the I-frame time).
pub type Curve = Vec<(f64, Estimate)>;

/// The curves of one figure for one p_bit.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DelayCurves {
    /// p_bit.
    pub p_bit: f64,
    /// NRM, primary to secondary.
    pub nrm_primary: Curve,
    /// NRM, secondary to primary.
    pub nrm_secondary: Curve,
    /// ABM (mean of both directions).
    pub abm: Curve,
    /// ABM, each direction.
    pub abm_directions: [Curve; 2],
}

/// What the experiment measured.
#[derive(Debug, Clone, PartialEq)]
pub struct TransferTimeResults {
    /// By figure id, one entry per p_bit.
    pub figures: BTreeMap<String, Vec<DelayCurves>>,
    /// The output for `linklab sim`.
    pub output: Output,
}

type RunKey = (
    Procedure,
    u64,
    u64,
    u64,
    u64,
    u32,
    u32,
    u32,
    LengthDistribution,
);

/// A closed-form transfer time: (Y_u, l, overhead, v, t_p) to seconds.
type Formula = fn(f64, f64, f64, f64, f64) -> Option<f64>;

impl TransferTimeExperiment {
    /// Parses a TOML experiment file.
    pub fn from_toml(text: &str) -> Result<Self, BuxError> {
        Ok(Experiment::from_toml_as(text)?)
    }

    /// Runs every point and keeps the curves for checks.
    pub fn measure(
        &self,
        opts: &RunOptions,
        progress: &dyn Progress,
    ) -> Result<TransferTimeResults, BuxError> {
        let (points, results) = run_all(self, opts, progress)?;
        self.walk(opts, &mut Walk::results(&points, results))
    }

    /// Walks every figure's error rates, loads and t_p: lists the points,
    /// or builds the curves, the figures and the table from their results.
    fn walk(
        &self,
        opts: &RunOptions,
        walk: &mut Walk<'_, RunKey>,
    ) -> Result<TransferTimeResults, BuxError> {
        let (replications, messages) = if opts.quick {
            (self.quick_replications, self.quick_messages_per_replication)
        } else {
            (self.replications, self.messages_per_replication)
        };
        let plan = if opts.quick {
            Replications::fixed(replications)
        } else {
            Replications {
                initial: replications,
                precision: self.relative_precision,
                max: self.max_replications,
            }
        };
        let sweeps: Vec<(Vec<f64>, Vec<f64>)> = self
            .figure
            .iter()
            .map(|f| {
                if opts.quick {
                    (f.quick_loads.clone(), f.quick_t_p_ms.clone())
                } else {
                    (f.loads.clone(), f.t_p_ms.clone())
                }
            })
            .collect();
        let mut figures = BTreeMap::new();
        let mut output = Output::default();
        let mut rows = Vec::new();
        for (figure, (loads, t_ps)) in self.figure.iter().zip(&sweeps) {
            if loads.is_empty() || t_ps.is_empty() {
                return Err(BuxError::EmptySweep {
                    what: "loads or t_p_ms",
                });
            }
            for &load in loads {
                if !(load > 0.0 && load < 1.0) {
                    return Err(BuxError::Parameter {
                        name: "loads",
                        value: load,
                        why: "a useful load must lie strictly between 0 and 1",
                    });
                }
            }
            let m = modulus(figure.modulus)?;
            let overhead = frame_overhead_bits(m) as f64;
            let l = f64::from(figure.message_length_bits);
            let v = f64::from(figure.bit_rate_bps);
            let i_frame_s = (l + overhead) / v;
            let over_tp = t_ps.len() > 1;
            let mut all = Vec::new();
            let mut series = Vec::new();
            for &p_bit in &figure.p_bits {
                let mut c = DelayCurves {
                    p_bit,
                    ..DelayCurves::default()
                };
                for &load in loads {
                    for &t_p_ms in t_ps {
                        let t_p = Duration::from_secs_f64(t_p_ms / 1e3);
                        let x = if over_tp {
                            t_p.as_secs_f64() / i_frame_s
                        } else {
                            load
                        };
                        let rate = load * v / l;
                        let length = figure
                            .length_distribution
                            .length(figure.message_length_bits);
                        let mut point = |procedure: Procedure| {
                            let key: RunKey = (
                                procedure,
                                p_bit.to_bits(),
                                load.to_bits(),
                                t_p_ms.to_bits(),
                                u64::from(figure.modulus),
                                figure.message_length_bits,
                                figure.bit_rate_bps,
                                messages,
                                figure.length_distribution,
                            );
                            let run = LinkRun {
                                procedure,
                                modulus: m,
                                bit_rate_bps: figure.bit_rate_bps,
                                t_p,
                                p_bit,
                                length,
                                traffic: [Traffic::Poisson {
                                    messages_per_s: rate,
                                }; 2],
                                t1: LinkRun::default_t1(figure.bit_rate_bps, t_p, length),
                                measured: Duration::from_secs_f64(f64::from(messages) / rate),
                                slices: 100,
                                window_limit: WindowLimit::Withhold,
                            };
                            let what = format!(
                                "Bux transfer time: {} Y_u = {load} t_p = {t_p_ms} ms p_bit = {p_bit}",
                                procedure.name()
                            );
                            walk.point(key, || BuxPoint {
                                run,
                                replications: plan,
                                what,
                            })
                        };
                        let nrm = point(Procedure::Nrm)?;
                        let abm = point(Procedure::Abm)?;
                        let pick = |d: &DirectionEstimate| {
                            match figure.measure {
                                Measure::TransferTime => d.transfer_s,
                                Measure::BufferHoldingTime => d.holding_s,
                            }
                            .map(|e| e.scaled(i_frame_s))
                            .ok_or(BuxError::NoEstimate {
                                what: "transfer time",
                            })
                        };
                        c.nrm_primary.push((x, pick(&nrm[0])?));
                        c.nrm_secondary.push((x, pick(&nrm[1])?));
                        let (a0, a1) = (pick(&abm[0])?, pick(&abm[1])?);
                        c.abm_directions[0].push((x, a0));
                        c.abm_directions[1].push((x, a1));
                        c.abm.push((
                            x,
                            Estimate {
                                mean: (a0.mean + a1.mean) / 2.0,
                                half_width: (a0.half_width + a1.half_width) / 2.0,
                            },
                        ));
                        rows.push(vec![
                            figure.id.clone(),
                            format!("{p_bit}"),
                            format!("{load}"),
                            format!("{t_p_ms}"),
                            c.nrm_primary.last().map_or(String::new(), |p| p.1.show()),
                            c.nrm_secondary.last().map_or(String::new(), |p| p.1.show()),
                            c.abm.last().map_or(String::new(), |p| p.1.show()),
                        ]);
                    }
                }
                for (label, curve) in [
                    ("NRM primary → secondary", &c.nrm_primary),
                    ("NRM secondary → primary", &c.nrm_secondary),
                    ("ABM, both directions", &c.abm),
                ] {
                    series.push(Series {
                        label: format!("p_bit = {p_bit}: {label}"),
                        style: SeriesStyle::Simulated,
                        points: curve.iter().map(|(x, e)| e.point(*x)).collect(),
                    });
                }
                all.push(c);
            }
            // Closed forms for the error-free link (section 3.2).
            if figure.measure == Measure::TransferTime && figure.p_bits.contains(&0.0) {
                let model = |f: Formula| {
                    loads
                        .iter()
                        .flat_map(|&load| t_ps.iter().map(move |&t| (load, t)))
                        .filter_map(|(load, t_p_ms)| {
                            let x = if over_tp {
                                t_p_ms / 1e3 / i_frame_s
                            } else {
                                load
                            };
                            f(load, l, overhead, v, t_p_ms / 1e3).map(|t| Point {
                                x,
                                y: t / i_frame_s,
                                half_width: None,
                            })
                        })
                        .collect::<Vec<_>>()
                };
                let (label, ideal): (&str, Formula) = match figure.length_distribution {
                    LengthDistribution::Constant => ("M/D/1 (ABM, error-free)", md1_transfer_s),
                    LengthDistribution::Exponential => {
                        ("M/G/1 (ABM, error-free)", mg1_exponential_transfer_s)
                    }
                };
                series.push(Series {
                    label: label.into(),
                    style: SeriesStyle::Model,
                    points: model(ideal),
                });
                if figure.length_distribution == LengthDistribution::Constant {
                    series.push(Series {
                        label: "modified M/D/1, + τ/2 (NRM secondary → primary, error-free)".into(),
                        style: SeriesStyle::Model,
                        points: model(nrm_secondary_transfer_s),
                    });
                }
            }
            output.figures.push(Figure {
                id: figure.id.clone(),
                title: figure.title.clone(),
                x_label: if over_tp {
                    "t_p / I-frame transmission time".into()
                } else {
                    "useful channel load Y_u".into()
                },
                y_label: match figure.measure {
                    Measure::TransferTime => {
                        "mean transfer time / I-frame transmission time".into()
                    }
                    Measure::BufferHoldingTime => {
                        "mean buffer-holding time / I-frame transmission time".into()
                    }
                },
                log_x: false,
                log_y: false,
                series,
            });
            figures.insert(figure.id.clone(), all);
        }
        output.tables.push(Table {
            id: format!(
                "{}-table",
                self.figure.first().map_or("bux", |f| f.id.as_str())
            ),
            title: format!(
                "{} (relative to the I-frame time; 95% confidence intervals)",
                self.title
            ),
            columns: [
                "figure",
                "p_bit",
                "Y_u",
                "t_p (ms)",
                "NRM P→S",
                "NRM S→P",
                "ABM",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        });
        Ok(TransferTimeResults { figures, output })
    }
}

impl TransferTimeFigure {
    /// Checks the figure's id, its link and its sweeps.
    fn validate(&self) -> Result<(), InvalidField> {
        file_name_id(&self.id)?;
        in_range(
            "message_length_bits",
            self.message_length_bits,
            1..=MAX_MESSAGE_BITS,
        )?;
        in_range("bit_rate_bps", self.bit_rate_bps, 1..=MAX_BIT_RATE_BPS)?;
        validate_modulus(self.modulus)?;
        if self.p_bits.is_empty() {
            return Err(InvalidField::new("p_bits", "the list is empty"));
        }
        self.p_bits
            .iter()
            .try_for_each(|&p| validate_p_bit("p_bits", p))?;
        for (field, loads) in [("loads", &self.loads), ("quick_loads", &self.quick_loads)] {
            if loads.is_empty() {
                return Err(InvalidField::new(field, "the list is empty"));
            }
            if let Some(load) = loads.iter().find(|&&y| !(y > 0.0 && y < 1.0)) {
                return Err(InvalidField::new(
                    field,
                    format!("{load}: a useful load must lie strictly between 0 and 1"),
                ));
            }
        }
        all_in_range("t_p_ms", &self.t_p_ms, 0.0..=MAX_T_P_MS)?;
        all_in_range("quick_t_p_ms", &self.quick_t_p_ms, 0.0..=MAX_T_P_MS)
    }
}

impl ExperimentKind for TransferTimeExperiment {
    type Point = (RunKey, BuxPoint);
    type Result = [DirectionEstimate; 2];
    type Error = BuxError;

    fn validate(&self) -> Result<(), InvalidField> {
        validate_replications(
            self.replications,
            self.max_replications,
            self.quick_replications,
        )?;
        in_range("relative_precision", self.relative_precision, 0.001..=1.0)?;
        for (field, messages) in [
            ("messages_per_replication", self.messages_per_replication),
            (
                "quick_messages_per_replication",
                self.quick_messages_per_replication,
            ),
        ] {
            in_range(field, messages, 1..=MAX_FRAME_TIMES)?;
        }
        each_valid(
            "figure",
            &self.figure,
            "no [[figure]] given",
            TransferTimeFigure::validate,
        )
    }

    /// Every distinct (error rate, load, t_p, procedure), in the order
    /// the figures meet them.
    fn points(&self, opts: &RunOptions) -> Result<Vec<(RunKey, BuxPoint)>, BuxError> {
        Walk::list(|walk| self.walk(opts, walk))
    }

    fn run_point(
        &self,
        opts: &RunOptions,
        (_, point): &(RunKey, BuxPoint),
        progress: &dyn Progress,
    ) -> Result<[DirectionEstimate; 2], BuxError> {
        point.run(opts, progress)
    }

    fn assemble(
        &self,
        opts: &RunOptions,
        points: &[(RunKey, BuxPoint)],
        results: Vec<[DirectionEstimate; 2]>,
    ) -> Result<Output, BuxError> {
        Ok(self.walk(opts, &mut Walk::results(points, results))?.output)
    }
}
