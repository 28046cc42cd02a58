//! Zieliński experiments as data: the TOML files
//! `crates/scenario/experiments/zielinski-*.toml` deserialise into
//! [`ThroughputExperiment`] and [`RealWindowExperiment`], whose
//! [`ExperimentKind`] runs simulate them (`linklab sim FILE.toml`).
//!
//! - `kind = "zielinski-throughput"`: effective throughput against the
//!   window k for pairs of TNC profiles, beside the model's "AX.25 imm"
//!   and "AX.25 T2" curves (Figs. 4-6, 10-13).
//! - `kind = "zielinski-real-window"`: the distribution of the sender's
//!   real window size, I frames per transmission, at one k (Figs. 7-9,
//!   14-15).

use core::time::Duration;

use linklab_channel::profile::profile;
use linklab_channel::ErrorModel;
use linklab_core::Streams;
use linklab_models::zielinski::Params;
use linklab_sim::{try_map_ordered, ConfidenceInterval};
use serde::Deserialize;

use super::station::LinkSetup;
use super::testbed::{run_transfer, station_config, TransferSetup};
use super::ZielinskiError;
use crate::experiment::{
    all_in_range, each_valid, file_name_id, in_range, Experiment, ExperimentError, ExperimentKind,
    InvalidField, OfKind,
};
use crate::report::{Figure, Output, Point, Progress, RunOptions, Series, SeriesStyle, Table};

/// The `kind` of a [`ThroughputExperiment`] file.
pub const THROUGHPUT_KIND: &str = "zielinski-throughput";
/// The `kind` of a [`RealWindowExperiment`] file.
pub const REAL_WINDOW_KIND: &str = "zielinski-real-window";

/// One simulated TNC pair.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pair {
    /// Legend text.
    pub label: String,
    /// Profile of the sending TNC (`linklab_channel::profile::profile_names`).
    pub sender: String,
    /// Profile of the receiving TNC.
    pub recipient: String,
    /// Host serial rate R_w of both TNCs, bit/s.
    pub serial_bps: u32,
}

/// One throughput figure.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThroughputFigure {
    /// File-name-safe id, e.g. `fig4`.
    pub id: String,
    /// Caption.
    pub title: String,
    /// Radio link rate R_wl, bit/s.
    pub radio_bps: u32,
    /// The simulated pairs.
    pub pairs: Vec<Pair>,
}

/// `kind = "zielinski-throughput"`: throughput against k (Figs. 4-6,
/// 10-13).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThroughputExperiment {
    /// What the file reproduces.
    pub title: String,
    /// N1 (PACLEN), octets.
    pub n1_octets: usize,
    /// Size of the file sent, octets.
    pub file_octets: usize,
    /// The windows k simulated.
    pub windows: Vec<u8>,
    /// FRACK, the fixed T1 of both TNCs, ms.
    pub frack_ms: u64,
    /// The T2 of the "AX.25 T2" model curve, ms.
    pub model_t2_ms: u64,
    /// Replications per point in a full run.
    pub replications: u64,
    /// Replications per point with `--quick`.
    pub quick_replications: u64,
    /// The figures.
    pub figures: Vec<ThroughputFigure>,
}

/// One case of a real-window-size distribution.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowCase {
    /// Legend text.
    pub label: String,
    /// Profile of the sending TNC.
    pub sender: String,
    /// Profile of the receiving TNC.
    pub recipient: String,
    /// Radio link rate R_wl, bit/s.
    pub radio_bps: u32,
    /// Host serial rate R_w, bit/s.
    pub serial_bps: u32,
    /// N1 (PACLEN), octets.
    pub n1_octets: usize,
}

/// One histogram figure.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowFigure {
    /// File-name-safe id, e.g. `fig7`.
    pub id: String,
    /// Caption.
    pub title: String,
    /// The cases, one bar series each.
    pub cases: Vec<WindowCase>,
}

/// `kind = "zielinski-real-window"`: real window sizes (Figs. 7-9, 14-15).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RealWindowExperiment {
    /// What the file reproduces.
    pub title: String,
    /// The window k set in both TNCs.
    pub window: u8,
    /// Size of the file sent, octets.
    pub file_octets: usize,
    /// FRACK, the fixed T1 of both TNCs, ms.
    pub frack_ms: u64,
    /// Replications per case in a full run.
    pub replications: u64,
    /// Replications per case with `--quick`.
    pub quick_replications: u64,
    /// The figures.
    pub figures: Vec<WindowFigure>,
}

/// Parses a TOML experiment file of kind `T` (errors give line, column
/// and field, as for `linklab sim`).
pub fn parse<T: OfKind>(text: &str) -> Result<T, ZielinskiError> {
    Experiment::from_toml_as(text).map_err(|error| match error {
        ExperimentError::WrongKind { found, expected } => ZielinskiError::Kind {
            found: found.to_string(),
            wanted: expected,
        },
        other => ZielinskiError::Toml(other.to_string()),
    })
}

/// The largest file an experiment file may give, octets.
const MAX_FILE_OCTETS: usize = 1 << 24;
/// The fastest radio or serial rate an experiment file may give, bit/s.
const MAX_RATE_BPS: u32 = 10_000_000;
/// The longest FRACK or model T2 an experiment file may give, ms.
const MAX_TIMER_MS: u64 = 600_000;

/// Checks a profile `field` names a known TNC profile.
fn validate_profile(field: &'static str, name: &str) -> Result<(), InvalidField> {
    profile(name)
        .map(|_| ())
        .map_err(|e| InvalidField::new(field, e.to_string()))
}

/// Checks replications per point: 2-1000 (a confidence interval needs
/// two), and 2 up to that with `--quick`.
fn validate_replications(replications: u64, quick: u64) -> Result<(), InvalidField> {
    in_range("replications", replications, 2..=1000)?;
    in_range("quick_replications", quick, 2..=replications)
}

impl Pair {
    /// Checks both profiles and the serial rate.
    fn validate(&self) -> Result<(), InvalidField> {
        validate_profile("sender", &self.sender)?;
        validate_profile("recipient", &self.recipient)?;
        in_range("serial_bps", self.serial_bps, 1..=MAX_RATE_BPS)
    }
}

impl ThroughputFigure {
    /// Checks the id, the radio rate and every pair.
    fn validate(&self) -> Result<(), InvalidField> {
        file_name_id(&self.id)?;
        in_range("radio_bps", self.radio_bps, 1..=MAX_RATE_BPS)?;
        each_valid("pairs", &self.pairs, "the list is empty", |t| t.validate())
    }
}

impl ExperimentKind for ThroughputExperiment {
    type Point = TransferSetup;
    type Result = Measured;
    type Error = ZielinskiError;

    fn validate(&self) -> Result<(), InvalidField> {
        in_range("n1_octets", self.n1_octets, 1..=256)?;
        in_range("file_octets", self.file_octets, 1..=MAX_FILE_OCTETS)?;
        all_in_range("windows", &self.windows, 1..=7)?;
        in_range("frack_ms", self.frack_ms, 1..=MAX_TIMER_MS)?;
        in_range("model_t2_ms", self.model_t2_ms, 0..=MAX_TIMER_MS)?;
        validate_replications(self.replications, self.quick_replications)?;
        each_valid("figures", &self.figures, "the list is empty", |t| {
            t.validate()
        })
    }

    /// Every pair of every figure at every window.
    fn points(&self, _: &RunOptions) -> Result<Vec<TransferSetup>, ZielinskiError> {
        self.setups()
    }

    fn run_point(
        &self,
        opts: &RunOptions,
        setup: &TransferSetup,
        progress: &dyn Progress,
    ) -> Result<Measured, ZielinskiError> {
        measure_point(setup, self.replications(opts), opts, progress)
    }

    fn assemble(
        &self,
        _: &RunOptions,
        _: &[TransferSetup],
        measured: Vec<Measured>,
    ) -> Result<Output, ZielinskiError> {
        Ok(self.output(&self.by_figure(measured)))
    }
}

impl WindowCase {
    /// Checks both profiles, the rates and N1.
    fn validate(&self) -> Result<(), InvalidField> {
        validate_profile("sender", &self.sender)?;
        validate_profile("recipient", &self.recipient)?;
        in_range("radio_bps", self.radio_bps, 1..=MAX_RATE_BPS)?;
        in_range("serial_bps", self.serial_bps, 1..=MAX_RATE_BPS)?;
        in_range("n1_octets", self.n1_octets, 1..=256)
    }
}

impl WindowFigure {
    /// Checks the id and every case.
    fn validate(&self) -> Result<(), InvalidField> {
        file_name_id(&self.id)?;
        each_valid("cases", &self.cases, "the list is empty", |t| t.validate())
    }
}

impl ExperimentKind for RealWindowExperiment {
    type Point = TransferSetup;
    type Result = Measured;
    type Error = ZielinskiError;

    fn validate(&self) -> Result<(), InvalidField> {
        in_range("window", self.window, 1..=7)?;
        in_range("file_octets", self.file_octets, 1..=MAX_FILE_OCTETS)?;
        in_range("frack_ms", self.frack_ms, 1..=MAX_TIMER_MS)?;
        validate_replications(self.replications, self.quick_replications)?;
        each_valid("figures", &self.figures, "the list is empty", |t| {
            t.validate()
        })
    }

    /// Every case of every figure.
    fn points(&self, _: &RunOptions) -> Result<Vec<TransferSetup>, ZielinskiError> {
        self.setups()
    }

    fn run_point(
        &self,
        opts: &RunOptions,
        setup: &TransferSetup,
        progress: &dyn Progress,
    ) -> Result<Measured, ZielinskiError> {
        measure_point(setup, self.replications(opts), opts, progress)
    }

    fn assemble(
        &self,
        _: &RunOptions,
        _: &[TransferSetup],
        measured: Vec<Measured>,
    ) -> Result<Output, ZielinskiError> {
        Ok(self.output(&self.by_figure(measured)))
    }
}

/// Simulated replications of one transfer set-up.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct Measured {
    /// Throughput, bit/s (mean and 95% half-width over replications).
    pub throughput: ConfidenceInterval,
    /// Transmissions of the sender with 1..=7 I frames (index 0 is one
    /// frame), summed over the replications.
    pub real_windows: [u64; 7],
}

impl Measured {
    /// Mean real window size.
    pub fn mean_window(&self) -> f64 {
        let n: u64 = self.real_windows.iter().sum();
        let sum: u64 = (1..=7u64).zip(self.real_windows).map(|(w, c)| w * c).sum();
        if n == 0 {
            0.0
        } else {
            sum as f64 / n as f64
        }
    }

    /// Share of transmissions with `w` I frames.
    pub fn share(&self, w: usize) -> f64 {
        let n: u64 = self.real_windows.iter().sum();
        match (w.checked_sub(1).and_then(|i| self.real_windows.get(i)), n) {
            (Some(&c), n) if n > 0 => c as f64 / n as f64,
            _ => 0.0,
        }
    }

    /// The most frequent real window size.
    pub fn mode(&self) -> usize {
        (1..=7)
            .max_by_key(|&w| self.real_windows[w - 1])
            .unwrap_or(1)
    }
}

/// Runs every set-up `replications` times (replication r of every set-up
/// uses `Streams::new(opts.seed).replication(r)`), the set-ups shared
/// among `opts.jobs` threads; results in input order.
pub fn measure_all(
    setups: &[TransferSetup],
    replications: u64,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<Vec<Measured>, ZielinskiError> {
    try_map_ordered(opts.jobs, setups, |_, setup| {
        measure_point(setup, replications, opts, progress)
    })
}

/// One set-up's `replications` (replication r uses
/// `Streams::new(opts.seed).replication(r)`), one after the other.
fn measure_point(
    setup: &TransferSetup,
    replications: u64,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<Measured, ZielinskiError> {
    if replications < 2 {
        return Err(ZielinskiError::TooFewReplications { replications });
    }
    progress.add_work(1);
    let outcome = measure(setup, replications, &Streams::new(opts.seed));
    progress.advance(1, "Zieliński transfers");
    outcome
}

fn measure(
    setup: &TransferSetup,
    replications: u64,
    master: &Streams,
) -> Result<Measured, ZielinskiError> {
    let mut samples = Vec::new();
    let mut real_windows = [0u64; 7];
    for r in 0..replications {
        let result = run_transfer(setup, &master.replication(r))?;
        samples.push(result.throughput_bps);
        for w in result.real_windows {
            if let Some(c) = usize::try_from(w)
                .ok()
                .and_then(|w| w.checked_sub(1))
                .and_then(|i| real_windows.get_mut(i))
            {
                *c += 1;
            }
        }
    }
    let throughput = ConfidenceInterval::from_samples(&samples, 0.95)
        .ok_or(ZielinskiError::TooFewReplications { replications })?;
    Ok(Measured {
        throughput,
        real_windows,
    })
}

fn setup(
    sender: &str,
    recipient: &str,
    radio_bps: u32,
    link: LinkSetup,
    file_octets: usize,
) -> Result<TransferSetup, ZielinskiError> {
    if link.window == 0 || link.window > 7 {
        return Err(ZielinskiError::Window { k: link.window });
    }
    if link.n1 == 0 || link.n1 > 256 || file_octets == 0 || radio_bps == 0 || link.serial_bps == 0 {
        return Err(ZielinskiError::Parameter(format!(
            "N1 must be 1-256 octets and the file, radio rate and serial rate positive \
             (N1 {}, file {file_octets} octets, R_wl {radio_bps} bit/s, R_w {} bit/s)",
            link.n1, link.serial_bps
        )));
    }
    Ok(TransferSetup {
        sender: profile(sender)?,
        recipient: profile(recipient)?,
        radio_bps,
        link,
        file_octets,
        station: station_config(),
        errors: ErrorModel::Perfect,
    })
}

/// The model of eq. 1-4 with the simulated stations' T_102, p and T_103
/// (see [`station_config`]).
pub fn model(radio_bps: u32, n1: usize, t2: Duration) -> Params {
    let station = station_config();
    Params {
        bitrate_bps: f64::from(radio_bps),
        n1: u32::try_from(n1).unwrap_or(u32::MAX),
        t102_s: station.slot_time.as_secs_f64(),
        persist: station.persistence,
        t103_s: station.txdelay.as_secs_f64(),
        t2_s: t2.as_secs_f64(),
        ..Params::default()
    }
}

/// The simulated curves of one throughput figure.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureResult {
    /// The figure as configured.
    pub spec: ThroughputFigure,
    /// Per pair, per window (in [`ThroughputExperiment::windows`] order).
    pub curves: Vec<Vec<Measured>>,
}

impl FigureResult {
    /// The measurements of the pair labelled `label`.
    pub fn curve(&self, label: &str) -> Option<&[Measured]> {
        self.spec
            .pairs
            .iter()
            .position(|p| p.label == label)
            .and_then(|i| self.curves.get(i))
            .map(Vec::as_slice)
    }
}

impl ThroughputExperiment {
    /// Replications for `opts`.
    fn replications(&self, opts: &RunOptions) -> u64 {
        if opts.quick {
            self.quick_replications
        } else {
            self.replications
        }
    }

    /// Simulates every pair at every window.
    pub fn simulate(
        &self,
        opts: &RunOptions,
        progress: &dyn Progress,
    ) -> Result<Vec<FigureResult>, ZielinskiError> {
        let measured = measure_all(&self.setups()?, self.replications(opts), opts, progress)?;
        Ok(self.by_figure(measured))
    }

    /// Every pair of every figure at every window, in that order.
    fn setups(&self) -> Result<Vec<TransferSetup>, ZielinskiError> {
        let mut setups = Vec::new();
        for figure in &self.figures {
            for pair in &figure.pairs {
                for &k in &self.windows {
                    let link = LinkSetup {
                        window: k,
                        n1: self.n1_octets,
                        serial_bps: pair.serial_bps,
                        t1: Duration::from_millis(self.frack_ms),
                    };
                    setups.push(setup(
                        &pair.sender,
                        &pair.recipient,
                        figure.radio_bps,
                        link,
                        self.file_octets,
                    )?);
                }
            }
        }
        Ok(setups)
    }

    /// The measurements of [`Self::setups`] grouped by figure and pair.
    fn by_figure(&self, measured: Vec<Measured>) -> Vec<FigureResult> {
        let mut measured = measured.into_iter();
        self.figures
            .iter()
            .map(|figure| FigureResult {
                spec: figure.clone(),
                curves: figure
                    .pairs
                    .iter()
                    .map(|_| measured.by_ref().take(self.windows.len()).collect())
                    .collect(),
            })
            .collect()
    }

    /// Simulated throughput against k (with the models) per figure, and a
    /// table per figure.
    pub fn output(&self, results: &[FigureResult]) -> Output {
        let mut out = Output::default();
        let t2 = Duration::from_millis(self.model_t2_ms);
        for result in results {
            let spec = &result.spec;
            let ks: Vec<u32> = self.windows.iter().map(|&k| u32::from(k)).collect();
            let model_series = |label: &str, t2: Duration| Series {
                label: label.to_string(),
                style: SeriesStyle::Model,
                points: ks
                    .iter()
                    .map(|&k| Point {
                        x: f64::from(k),
                        y: model(spec.radio_bps, self.n1_octets, t2)
                            .row(k)
                            .throughput_bps,
                        half_width: None,
                    })
                    .collect(),
            };
            let mut series = vec![
                model_series("AX.25 imm (eq. 2, T2 = 0)", Duration::ZERO),
                model_series(
                    &format!("AX.25 T2 (eq. 2, T2 = {} ms)", self.model_t2_ms),
                    t2,
                ),
            ];
            let mut rows = Vec::new();
            for (pair, curve) in spec.pairs.iter().zip(&result.curves) {
                series.push(Series {
                    label: pair.label.clone(),
                    style: SeriesStyle::Simulated,
                    points: ks
                        .iter()
                        .zip(curve)
                        .map(|(&k, m)| Point {
                            x: f64::from(k),
                            y: m.throughput.mean,
                            half_width: Some(m.throughput.half_width),
                        })
                        .collect(),
                });
                for (&k, m) in ks.iter().zip(curve) {
                    rows.push(vec![
                        pair.label.clone(),
                        pair.sender.clone(),
                        pair.recipient.clone(),
                        k.to_string(),
                        format!("{:.0}", m.throughput.mean),
                        format!("{:.0}", m.throughput.half_width),
                        format!("{:.2}", m.mean_window()),
                    ]);
                }
            }
            out.figures.push(Figure {
                id: format!("zielinski-{}", spec.id),
                title: spec.title.clone(),
                x_label: "window size k".to_string(),
                y_label: "effective throughput [bit/s]".to_string(),
                log_x: false,
                log_y: false,
                series,
            });
            out.tables.push(Table {
                id: format!("zielinski-{}-table", spec.id),
                title: format!("{} (simulated, 95% CI half-width)", spec.title),
                columns: [
                    "pair",
                    "sender",
                    "recipient",
                    "k",
                    "throughput_bps",
                    "ci_half_width_bps",
                    "mean_real_window",
                ]
                .map(String::from)
                .to_vec(),
                rows,
            });
        }
        out
    }
}

/// The simulated cases of one histogram figure.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowResult {
    /// The figure as configured.
    pub spec: WindowFigure,
    /// Per case.
    pub cases: Vec<Measured>,
}

impl WindowResult {
    /// The measurement of the case labelled `label`.
    pub fn case(&self, label: &str) -> Option<&Measured> {
        self.spec
            .cases
            .iter()
            .position(|c| c.label == label)
            .and_then(|i| self.cases.get(i))
    }
}

impl RealWindowExperiment {
    /// Simulates every case.
    pub fn simulate(
        &self,
        opts: &RunOptions,
        progress: &dyn Progress,
    ) -> Result<Vec<WindowResult>, ZielinskiError> {
        let measured = measure_all(&self.setups()?, self.replications(opts), opts, progress)?;
        Ok(self.by_figure(measured))
    }

    /// Replications per case: fewer in a quick run.
    fn replications(&self, opts: &RunOptions) -> u64 {
        if opts.quick {
            self.quick_replications
        } else {
            self.replications
        }
    }

    /// Every case of every figure, in that order.
    fn setups(&self) -> Result<Vec<TransferSetup>, ZielinskiError> {
        let mut setups = Vec::new();
        for figure in &self.figures {
            for case in &figure.cases {
                let link = LinkSetup {
                    window: self.window,
                    n1: case.n1_octets,
                    serial_bps: case.serial_bps,
                    t1: Duration::from_millis(self.frack_ms),
                };
                setups.push(setup(
                    &case.sender,
                    &case.recipient,
                    case.radio_bps,
                    link,
                    self.file_octets,
                )?);
            }
        }
        Ok(setups)
    }

    /// The measurements of [`Self::setups`] grouped by figure.
    fn by_figure(&self, measured: Vec<Measured>) -> Vec<WindowResult> {
        let mut measured = measured.into_iter();
        self.figures
            .iter()
            .map(|figure| WindowResult {
                spec: figure.clone(),
                cases: measured.by_ref().take(figure.cases.len()).collect(),
            })
            .collect()
    }

    /// Histograms (share of transmissions per real window size) and a
    /// table per figure.
    pub fn output(&self, results: &[WindowResult]) -> Output {
        let mut out = Output::default();
        for result in results {
            let series = result
                .spec
                .cases
                .iter()
                .zip(&result.cases)
                .map(|(case, m)| Series {
                    label: case.label.clone(),
                    style: SeriesStyle::Bars,
                    points: (1..=7)
                        .map(|w| Point {
                            x: w as f64,
                            y: 100.0 * m.share(w),
                            half_width: None,
                        })
                        .collect(),
                })
                .collect();
            let rows = result
                .spec
                .cases
                .iter()
                .zip(&result.cases)
                .map(|(case, m)| {
                    let mut row = vec![
                        case.label.clone(),
                        case.n1_octets.to_string(),
                        format!("{:.2}", m.mean_window()),
                        format!("{:.0}", m.throughput.mean),
                    ];
                    row.extend((1..=7).map(|w| format!("{:.1}", 100.0 * m.share(w))));
                    row
                })
                .collect();
            let mut columns: Vec<String> =
                ["case", "n1_octets", "mean_real_window", "throughput_bps"]
                    .map(String::from)
                    .to_vec();
            columns.extend((1..=7).map(|w| format!("share_{w}_pct")));
            out.figures.push(Figure {
                id: format!("zielinski-{}", result.spec.id),
                title: result.spec.title.clone(),
                x_label: "real window size [I frames per transmission]".to_string(),
                y_label: "share of transmissions [%]".to_string(),
                log_x: false,
                log_y: false,
                series,
            });
            out.tables.push(Table {
                id: format!("zielinski-{}-table", result.spec.id),
                title: format!("{} (k = {})", result.spec.title, self.window),
                columns,
                rows,
            });
        }
        out
    }
}
