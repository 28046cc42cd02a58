//! Maximum throughput against message length (Bux et al. 1982, section
//! 3.1, Figs. 2-6), the experiment of kind `bux-throughput`.
//!
//! Each case of a figure (a line, a bit-error probability and a modulus)
//! gives three curves: NRM primary to secondary, NRM secondary to
//! primary, and ABM (one direction of the symmetrical link in one-way
//! flow, the mean of both in two-way flow). One-way flow has one station
//! saturated and the other silent; two-way flow has both saturated, and
//! one NRM run then gives both NRM curves.

use core::time::Duration;
use std::collections::BTreeMap;

use linklab_link::WindowLimit;
use linklab_wire::control::Modulus;
use serde::Deserialize;

use super::model::one_way_bound;
use super::replicate::{BuxPoint, DirectionEstimate, Estimate, Replications, Walk};
use super::simulate::{frame_overhead_bits, LinkRun, MessageLength, Procedure, Traffic};
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
pub const KIND: &str = "bux-throughput";

/// Traffic on the reverse channel (section 3.1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Flow {
    /// The reverse channel carries no I frames.
    OneWay,
    /// Both stations always have information to send.
    TwoWay,
}

/// A maximum-throughput experiment: `crates/scenario/experiments/bux-throughput-*.toml`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThroughputExperiment {
    /// What the file reproduces.
    pub title: String,
    /// One-way or two-way flow.
    pub flow: Flow,
    /// Constant or exponentially distributed message lengths.
    pub length_distribution: LengthDistribution,
    /// Message lengths l (or means), bits, the x axis.
    pub message_lengths_bits: Vec<u32>,
    /// The lengths run with `--quick`.
    pub quick_message_lengths_bits: Vec<u32>,
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
    /// Length of each replication's measured period in mean I-frame times.
    pub i_frame_times_per_replication: u32,
    /// The same with `--quick`.
    pub quick_i_frame_times_per_replication: u32,
    /// The figures.
    pub figure: Vec<ThroughputFigure>,
}

/// One figure of the paper.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThroughputFigure {
    /// File-name-safe id, e.g. `bux-fig2`.
    pub id: String,
    /// Caption.
    pub title: String,
    /// Its cases, three curves each.
    pub case: Vec<ThroughputCase>,
}

/// A line, an error rate and a modulus.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThroughputCase {
    /// Legend prefix, e.g. "v = 4.8 kbit/s".
    pub label: String,
    /// Transmission rate v, bit/s.
    pub bit_rate_bps: u32,
    /// Processing plus propagation delay t_p, ms.
    pub t_p_ms: f64,
    /// Independent bit-error probability.
    pub p_bit: f64,
    /// Modulus of the sequence numbers, 8 or 128.
    pub modulus: u32,
}

/// The three curves of a case, by message length.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CaseCurves {
    /// NRM, primary to secondary.
    pub nrm_primary: Vec<(u32, Estimate)>,
    /// NRM, secondary to primary.
    pub nrm_secondary: Vec<(u32, Estimate)>,
    /// ABM.
    pub abm: Vec<(u32, Estimate)>,
    /// The section 3.1.1 bound for one direction.
    pub bound: Vec<(u32, f64)>,
}

impl CaseCurves {
    /// The estimate at `bits` of `curve`.
    pub fn at(curve: &[(u32, Estimate)], bits: u32) -> Option<Estimate> {
        curve.iter().find(|(l, _)| *l == bits).map(|(_, e)| *e)
    }
}

/// What the experiment measured: per figure, per case.
#[derive(Debug, Clone, PartialEq)]
pub struct ThroughputResults {
    /// By figure id, the cases in file order.
    pub figures: BTreeMap<String, Vec<CaseCurves>>,
    /// The output (figures and a table) for `linklab sim`.
    pub output: Output,
}

/// What identifies one simulated point (cases shared between figures run
/// once).
type RunKey = (Procedure, u32, u64, u64, u64, u32, Flow, bool);

impl ThroughputExperiment {
    /// Parses a TOML experiment file.
    pub fn from_toml(text: &str) -> Result<Self, BuxError> {
        Ok(Experiment::from_toml_as(text)?)
    }

    /// Runs every point and keeps the curves for checks.
    pub fn measure(
        &self,
        opts: &RunOptions,
        progress: &dyn Progress,
    ) -> Result<ThroughputResults, BuxError> {
        let (points, results) = run_all(self, opts, progress)?;
        self.walk(opts, &mut Walk::results(&points, results))
    }

    /// Walks every figure's cases and lengths: lists the points, or builds
    /// the curves, the figures and the table from their results.
    fn walk(
        &self,
        opts: &RunOptions,
        walk: &mut Walk<'_, RunKey>,
    ) -> Result<ThroughputResults, BuxError> {
        let lengths = if opts.quick {
            &self.quick_message_lengths_bits
        } else {
            &self.message_lengths_bits
        };
        let (plan, frame_times) = self.plan(opts);
        if lengths.is_empty() {
            return Err(BuxError::EmptySweep {
                what: "message_lengths_bits",
            });
        }
        let mut figures = BTreeMap::new();
        let mut output = Output::default();
        let mut rows = Vec::new();
        for figure in &self.figure {
            let mut curves = Vec::new();
            let mut series = Vec::new();
            for case in &figure.case {
                let m = modulus(case.modulus)?;
                let c = self.case_curves(case, m, lengths, plan, frame_times, walk)?;
                for (label, curve) in [
                    ("NRM primary → secondary", &c.nrm_primary),
                    ("NRM secondary → primary", &c.nrm_secondary),
                    ("ABM", &c.abm),
                ] {
                    series.push(Series {
                        label: format!("{}: {label}", case.label),
                        style: SeriesStyle::Simulated,
                        points: curve.iter().map(|(l, e)| e.point(f64::from(*l))).collect(),
                    });
                }
                series.push(Series {
                    label: format!(
                        "{}: bound of 3.1.1 (framing, block errors, modulus)",
                        case.label
                    ),
                    style: SeriesStyle::Model,
                    points: c
                        .bound
                        .iter()
                        .map(|(l, b)| Point {
                            x: f64::from(*l),
                            y: *b,
                            half_width: None,
                        })
                        .collect(),
                });
                for (i, &l) in lengths.iter().enumerate() {
                    rows.push(vec![
                        figure.id.clone(),
                        case.label.clone(),
                        l.to_string(),
                        c.nrm_primary[i].1.show(),
                        c.nrm_secondary[i].1.show(),
                        c.abm[i].1.show(),
                        format!("{:.4}", c.bound[i].1),
                    ]);
                }
                curves.push(c);
            }
            output.figures.push(Figure {
                id: figure.id.clone(),
                title: figure.title.clone(),
                x_label: match self.length_distribution {
                    LengthDistribution::Constant => "message length l (bit)".into(),
                    LengthDistribution::Exponential => "mean message length l (bit)".into(),
                },
                y_label: "maximum throughput / transmission rate".into(),
                log_x: true,
                log_y: false,
                series,
            });
            figures.insert(figure.id.clone(), curves);
        }
        output.tables.push(Table {
            id: format!(
                "{}-table",
                self.figure.first().map_or("bux", |f| f.id.as_str())
            ),
            title: format!("{} (95% confidence intervals)", self.title),
            columns: [
                "figure",
                "case",
                "l (bit)",
                "NRM P→S",
                "NRM S→P",
                "ABM",
                "bound 3.1.1",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        });
        Ok(ThroughputResults { figures, output })
    }

    /// How many replications a point runs, and how many I-frame times
    /// each measures: fixed in a quick run, to the precision asked in a
    /// full one.
    pub fn plan(&self, opts: &RunOptions) -> (Replications, u32) {
        if opts.quick {
            (
                Replications::fixed(self.quick_replications),
                self.quick_i_frame_times_per_replication,
            )
        } else {
            (
                Replications {
                    initial: self.replications,
                    precision: self.relative_precision,
                    max: self.max_replications,
                },
                self.i_frame_times_per_replication,
            )
        }
    }

    /// The link of `case` with messages of `bits` under `procedure` and
    /// `traffic`, measured over `frame_times` I-frame times.
    pub fn link_run(
        &self,
        case: &ThroughputCase,
        bits: u32,
        procedure: Procedure,
        traffic: [Traffic; 2],
        frame_times: u32,
    ) -> Result<LinkRun, BuxError> {
        let m = modulus(case.modulus)?;
        let t_p = Duration::from_secs_f64(case.t_p_ms / 1e3);
        let length = self.length_distribution.length(bits);
        let i_frame_s =
            (f64::from(bits) + frame_overhead_bits(m) as f64) / f64::from(case.bit_rate_bps);
        Ok(LinkRun {
            procedure,
            modulus: m,
            bit_rate_bps: case.bit_rate_bps,
            t_p,
            p_bit: case.p_bit,
            length,
            traffic,
            t1: LinkRun::default_t1(case.bit_rate_bps, t_p, length),
            measured: Duration::from_secs_f64(i_frame_s * f64::from(frame_times)),
            slices: 100,
            window_limit: WindowLimit::Withhold,
        })
    }

    fn case_curves(
        &self,
        case: &ThroughputCase,
        m: Modulus,
        lengths: &[u32],
        replications: Replications,
        frame_times: u32,
        walk: &mut Walk<'_, RunKey>,
    ) -> Result<CaseCurves, BuxError> {
        let t_p = Duration::from_secs_f64(case.t_p_ms / 1e3);
        let overhead = frame_overhead_bits(m) as f64;
        let mut c = CaseCurves::default();
        for &bits in lengths {
            let run = self.link_run(
                case,
                bits,
                Procedure::Nrm,
                [Traffic::Silent; 2],
                frame_times,
            )?;
            let run = |procedure, traffic| LinkRun {
                procedure,
                traffic,
                ..run.clone()
            };
            let mut point = |procedure: Procedure, traffic: [Traffic; 2]| {
                let key: RunKey = (
                    procedure,
                    case.bit_rate_bps,
                    case.t_p_ms.to_bits(),
                    case.p_bit.to_bits(),
                    u64::from(case.modulus),
                    bits,
                    self.flow,
                    traffic[0] == Traffic::Saturated,
                );
                walk.point(key, || BuxPoint {
                    run: run(procedure, traffic),
                    replications,
                    what: format!(
                        "Bux {}: {} l = {bits} bit",
                        figure_what(self.flow),
                        procedure.name()
                    ),
                })
            };
            let (s, q) = (Traffic::Saturated, Traffic::Silent);
            let thr = |e: &DirectionEstimate| {
                e.throughput
                    .ok_or(BuxError::NoEstimate { what: "throughput" })
            };
            match self.flow {
                Flow::OneWay => {
                    let p = point(Procedure::Nrm, [s, q])?;
                    let sp = point(Procedure::Nrm, [q, s])?;
                    let a = point(Procedure::Abm, [s, q])?;
                    c.nrm_primary.push((bits, thr(&p[0])?));
                    c.nrm_secondary.push((bits, thr(&sp[1])?));
                    c.abm.push((bits, thr(&a[0])?));
                }
                Flow::TwoWay => {
                    let n = point(Procedure::Nrm, [s, s])?;
                    let a = point(Procedure::Abm, [s, s])?;
                    c.nrm_primary.push((bits, thr(&n[0])?));
                    c.nrm_secondary.push((bits, thr(&n[1])?));
                    let (a0, a1) = (thr(&a[0])?, thr(&a[1])?);
                    c.abm.push((
                        bits,
                        Estimate {
                            mean: (a0.mean + a1.mean) / 2.0,
                            half_width: (a0.half_width + a1.half_width) / 2.0,
                        },
                    ));
                }
            }
            let window = f64::from(m.value() - 1);
            c.bound.push((
                bits,
                one_way_bound(
                    f64::from(bits),
                    overhead,
                    case.p_bit,
                    window,
                    f64::from(case.bit_rate_bps),
                    t_p.as_secs_f64(),
                ),
            ));
        }
        Ok(c)
    }
}

fn figure_what(flow: Flow) -> &'static str {
    match flow {
        Flow::OneWay => "one-way throughput",
        Flow::TwoWay => "two-way throughput",
    }
}

impl ThroughputFigure {
    /// Checks the figure's id and every case.
    fn validate(&self) -> Result<(), InvalidField> {
        file_name_id(&self.id)?;
        each_valid(
            "case",
            &self.case,
            "no [[figure.case]] given",
            ThroughputCase::validate,
        )
    }
}

impl ThroughputCase {
    /// Checks the line, the error rate and the modulus.
    fn validate(&self) -> Result<(), InvalidField> {
        in_range("bit_rate_bps", self.bit_rate_bps, 1..=MAX_BIT_RATE_BPS)?;
        in_range("t_p_ms", self.t_p_ms, 0.0..=MAX_T_P_MS)?;
        validate_p_bit("p_bit", self.p_bit)?;
        validate_modulus(self.modulus)
    }
}

impl LengthDistribution {
    /// The message-length law with mean `bits`.
    pub fn length(self, bits: u32) -> MessageLength {
        match self {
            LengthDistribution::Constant => MessageLength::Constant { bits },
            LengthDistribution::Exponential => MessageLength::Exponential { mean_bits: bits },
        }
    }
}

impl ExperimentKind for ThroughputExperiment {
    type Point = (RunKey, BuxPoint);
    type Result = [DirectionEstimate; 2];
    type Error = BuxError;

    fn validate(&self) -> Result<(), InvalidField> {
        for (field, lengths) in [
            ("message_lengths_bits", &self.message_lengths_bits),
            (
                "quick_message_lengths_bits",
                &self.quick_message_lengths_bits,
            ),
        ] {
            all_in_range(field, lengths, 1..=MAX_MESSAGE_BITS)?;
        }
        validate_replications(
            self.replications,
            self.max_replications,
            self.quick_replications,
        )?;
        in_range("relative_precision", self.relative_precision, 0.001..=1.0)?;
        for (field, times) in [
            (
                "i_frame_times_per_replication",
                self.i_frame_times_per_replication,
            ),
            (
                "quick_i_frame_times_per_replication",
                self.quick_i_frame_times_per_replication,
            ),
        ] {
            in_range(field, times, 1..=MAX_FRAME_TIMES)?;
        }
        each_valid(
            "figure",
            &self.figure,
            "no [[figure]] given",
            ThroughputFigure::validate,
        )
    }

    /// Every distinct (case, length, procedure, traffic), in the order
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
