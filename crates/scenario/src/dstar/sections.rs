//! The report sections: Table I (control configuration) and Table II
//! (the hostile point-to-point path).

use core::time::Duration;

use linklab_channel::{DdConfig, ErrorModel, GilbertElliott};
use linklab_core::Streams;
use linklab_sim::ConfidenceInterval;

use super::normcl::dtn_norm_transfer;
use super::tcpcl::dtn_tcpcl_transfer;
use super::testbed::{linux_tcp, tcp_bulk, TestbedError};
use crate::experiment::{in_range, run_all, InvalidField};
use crate::published::{load, Row, Source, DSTAR_DD};
use crate::report::{Basis, Check, Paper, Progress, RunOptions, Section, Table};
use crate::{check_note, section_text};
use serde::Deserialize;

/// The paper's two configurations: Table I and Table II.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Configuration {
    /// Table I: the control configuration.
    Control,
    /// Table II: the hostile point-to-point path.
    PointToPoint,
}

/// One row of the paper's Tables I and II, bytes/s.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Published {
    /// The table.
    configuration: Configuration,
    /// The protocol, as the paper names it.
    protocol: String,
    /// Minimum (`None`: unreadable in the paper).
    #[serde(rename = "min_Bps")]
    min: Option<f64>,
    /// Maximum.
    #[serde(rename = "max_Bps")]
    max: f64,
    /// Average.
    #[serde(rename = "avg_Bps")]
    avg: f64,
}

impl Row for Published {
    const SOURCE: Source = DSTAR_DD;
}

impl Published {
    /// The minimum as a table shows it.
    fn min_text(&self) -> String {
        self.min.map_or("?".into(), |m| format!("{m:.0}"))
    }
}

/// The protocols of both tables, in the order they are run.
const PROTOCOLS: [&str; 5] = [
    "IPv4 TCP",
    "IPv6 TCP",
    "DTN TCP-CL",
    "DTN NORM-CL 128k",
    "DTN NORM-CL 84k",
];

/// The published rows of `configuration`, in the order of [`PROTOCOLS`].
fn published(configuration: Configuration) -> Result<Vec<Published>, TestbedError> {
    let rows = load::<Published>()?;
    PROTOCOLS
        .iter()
        .map(|&protocol| {
            rows.iter()
                .find(|r| r.configuration == configuration && r.protocol == protocol)
                .cloned()
                .ok_or(TestbedError::Unpublished { protocol })
        })
        .collect()
}

/// The paper's "6MB" file, read as 6 MiB: its sample dtnsend report
/// (639445 ms) is then 9839 B/s, inside NORM-84's range of Table I (9819
/// to 9927), where 6·10⁶ octets would give 9383 B/s, inside no row's.
pub const FILE_OCTETS: usize = 6 * 1024 * 1024;
/// iperf -t 600 (section III).
const IPERF_SECONDS: u64 = 600;

/// How Table I is run (`kind = "dstar-table-1"`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table1Config {
    /// The radios' turnaround, ms (calibrated: 30).
    pub turnaround_ms: u64,
    /// The radios' transmit buffer, full Ethernet frames of 1514 octets
    /// (calibrated: 64).
    pub buffer_frames: usize,
    /// iperf -t, seconds (the paper: 600).
    pub iperf_seconds: u64,
    /// The file dtnsend and NORM carry, octets (the paper: 6 MiB).
    pub file_octets: usize,
    /// Seeded runs per row (the paper: 25).
    pub runs: usize,
    /// Seeded runs per row under `--quick`.
    pub quick_runs: usize,
}

impl Table1Config {
    /// The paper's runs on the calibrated ID-1.
    pub fn paper() -> Table1Config {
        Table1Config {
            turnaround_ms: linklab_channel::dstar::ID1_TURNAROUND_MS,
            buffer_frames: linklab_channel::dstar::ID1_BUFFER_OCTETS / 1514,
            iperf_seconds: IPERF_SECONDS,
            file_octets: FILE_OCTETS,
            runs: 25,
            quick_runs: 3,
        }
    }

    fn channel(&self) -> DdConfig {
        let mut c = DdConfig::id1();
        c.turnaround = Duration::from_millis(self.turnaround_ms);
        c.buffer_octets = self.buffer_frames * 1514;
        c
    }

    fn runs(&self, opts: &RunOptions) -> usize {
        if opts.quick {
            self.quick_runs
        } else {
            self.runs
        }
    }

    /// Checks every field against what the runs can take.
    pub fn validate(&self) -> Result<(), InvalidField> {
        in_range("turnaround_ms", self.turnaround_ms, 0..=1000)?;
        in_range("buffer_frames", self.buffer_frames as u64, 1..=10_000)?;
        in_range("iperf_seconds", self.iperf_seconds, 1..=3600)?;
        in_range("file_octets", self.file_octets as u64, 1..=16 << 20)?;
        in_range("runs", self.runs as u64, 1..=1000)?;
        in_range("quick_runs", self.quick_runs as u64, 1..=1000)
    }
}

fn ci(samples: &[f64]) -> (f64, f64) {
    ConfidenceInterval::from_samples(samples, 0.95)
        .map_or((samples.first().copied().unwrap_or(0.0), 0.0), |c| {
            (c.mean, c.half_width)
        })
}

/// Table I: the five protocols on the clean channel, as the paper ran
/// them.
pub fn table_1(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, TestbedError> {
    table_1_with(&Table1Config::paper(), opts, progress)
}

/// Table I with `config`.
pub fn table_1_with(
    config: &Table1Config,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<Section, TestbedError> {
    let (points, results) = run_all(config, opts, progress)?;
    table_1_section(config, opts, &points, results)
}

/// One run of Table I: the row (0 and 1 iperf over IPv4 and IPv6, 2 DTN
/// over TCPCL, 3 and 4 NORM at 128 and 84 kbit/s) and the run's index,
/// which picks its seed.
pub type Table1Point = (usize, usize);

impl Table1Config {
    /// Every row's runs, row by row.
    pub(crate) fn points(&self, opts: &RunOptions) -> Vec<Table1Point> {
        let runs = self.runs(opts);
        (0..5)
            .flat_map(|row| (0..runs).map(move |r| (row, r)))
            .collect()
    }

    /// One run: its throughput, bytes/s, and the radio's overrun drops.
    pub(crate) fn run_point(
        &self,
        opts: &RunOptions,
        &(row, r): &Table1Point,
        progress: &dyn Progress,
    ) -> Result<(f64, u64), TestbedError> {
        let duration = Duration::from_secs(self.iperf_seconds);
        let channel = self.channel();
        let seed = Streams::new(opts.seed).stream_index(r as u64).next_u64();
        let payload = || vec![0xA5; self.file_octets];
        progress.add_work(1);
        let (result, what) = match row {
            0 | 1 => {
                let run = tcp_bulk(channel, row == 1, &linux_tcp(None), duration, seed)?;
                (
                    (run.bytes_per_s, run.radio[0].overrun_drops),
                    "D-STAR Table I: iperf",
                )
            }
            2 => {
                let run =
                    dtn_tcpcl_transfer(channel, &linux_tcp(None), payload(), duration * 20, seed)?;
                (
                    (run.bytes_per_s, run.radio[0].overrun_drops),
                    "D-STAR Table I: DTN over TCPCL",
                )
            }
            _ => {
                let rate = if row == 3 { 128e3 } else { 84e3 };
                let run = dtn_norm_transfer(channel, rate, payload(), duration * 20, seed)?;
                (
                    (run.bytes_per_s, run.radio[0].overrun_drops),
                    "D-STAR Table I: NORM",
                )
            }
        };
        progress.advance(1, what);
        Ok(result)
    }
}

/// Table I's section from every run's throughput and drops.
pub(crate) fn table_1_section(
    config: &Table1Config,
    opts: &RunOptions,
    points: &[Table1Point],
    results: Vec<(f64, u64)>,
) -> Result<Section, TestbedError> {
    let (duration, object) = (
        Duration::from_secs(config.iperf_seconds),
        config.file_octets,
    );
    let runs = config.runs(opts);
    let channel = config.channel();
    let mut ours: Vec<(Vec<f64>, u64)> = vec![(Vec::new(), 0); 5];
    for (&(row, _), (bytes_per_s, drops)) in points.iter().zip(results) {
        ours[row].0.push(bytes_per_s);
        ours[row].1 += drops;
    }

    let mut table = Table {
        id: "dstar-table-1".into(),
        title: "Table I: D-STAR DD throughput, control configuration (bytes/s)".into(),
        columns: [
            "protocol",
            "paper min",
            "paper max",
            "paper average",
            "linklab mean",
            "95% ±",
            "radio overrun drops (all runs)",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    let paper = published(Configuration::Control)?;
    let mut checks = Vec::new();
    let mut means = [0.0; 5];
    for (row, p) in paper.iter().enumerate() {
        let (name, min, max, avg) = (&p.protocol, p.min_text(), p.max, p.avg);
        let (samples, drops) = &ours[row];
        let (mean, hw) = ci(samples);
        means[row] = mean;
        table.rows.push(vec![
            name.to_string(),
            min.clone(),
            format!("{max:.0}"),
            format!("{avg:.0}"),
            format!("{mean:.0}"),
            format!("{hw:.0}"),
            drops.to_string(),
        ]);
        let (basis, role) = match row {
            0 | 4 => (Basis::Fit, "fit"),
            _ => (Basis::Prediction, "prediction"),
        };
        checks.push(
            Check::relative(
                format!("ronan-dstar/table-1/{}", crate::report::check_id_part(name)),
                Paper::RonanDstar,
                format!("{name} average throughput, bytes/s ({role})"),
                avg,
                mean,
                "B/s",
                0.15,
            )
            .with_basis(basis)
            .with_note(check_note!(
                "ronan-dstar/table-1/*",
                runs = runs,
                hw = format!("{hw:.0}"),
                min = min,
                max = format!("{max:.0}"),
                role = role,
                how = match row {
                    0 | 1 => check_note!("ronan-dstar/table-1/ipv*-tcp"),
                    2 => check_note!("ronan-dstar/table-1/dtn-tcp-cl"),
                    _ => check_note!("ronan-dstar/table-1/dtn-norm-cl-*"),
                },
                overrun = if row == 3 {
                    format!(" {}", check_note!("ronan-dstar/table-1/dtn-norm-cl-128k"))
                } else {
                    String::new()
                },
            )),
        );
    }
    let (v4, v6, n128, n84) = (means[0], means[1], means[3], means[4]);
    let [p_v4, p_v6, p_dtn, p_n128, p_n84] = [0, 1, 2, 3, 4].map(|i| &paper[i]);
    let gain = n84 / v4 - 1.0;
    // The paper's gain in whole per cent, and the band of ± 7 points.
    let paper_gain = ((p_n84.avg / p_v4.avg - 1.0) * 100.0).round();
    let (low, high) = (paper_gain - 7.0, paper_gain + 7.0);
    checks.push(
        Check::qualitative(
            "ronan-dstar/table-1/norm-84-best",
            Paper::RonanDstar,
            format!("NORM at 84 kbit/s is the best, about {paper_gain:.0}% above IPv4"),
            format!(
                "NORM-84 about {paper_gain:.0}% above IPv4 ({:.0} vs {:.0} B/s)",
                p_n84.avg, p_v4.avg
            ),
            format!("NORM-84 {:+.1}% over IPv4", gain * 100.0),
            means.iter().all(|&m| m <= n84) && (low / 100.0..=high / 100.0).contains(&gain),
        )
        .with_note(check_note!(
            "ronan-dstar/table-1/norm-84-best",
            low = format!("{low:.0}"),
            high = format!("{high:.0}"),
            paper_gain = format!("{paper_gain:.0}"),
        )),
    );
    let overrun: u64 = ours[3].1;
    checks.push(
        Check::qualitative(
            "ronan-dstar/table-1/norm-128-overrun",
            Paper::RonanDstar,
            "NORM at 128 kbit/s overruns the channel and does worse than at 84 kbit/s",
            format!(
                "NORM-128 {:.0} B/s, below NORM-84 {:.0} B/s",
                p_n128.avg, p_n84.avg
            ),
            format!("NORM-128 {n128:.0} B/s, {overrun} radio overrun drops; NORM-84 {n84:.0}"),
            overrun > 0 && n128 < n84,
        )
        .with_note(check_note!("ronan-dstar/table-1/norm-128-overrun")),
    );
    checks.push(
        Check::qualitative(
            "ronan-dstar/table-1/ipv6-below-ipv4",
            Paper::RonanDstar,
            "IPv6 below IPv4 (larger header)",
            format!("IPv6 {:.0} < IPv4 {:.0} B/s", p_v6.avg, p_v4.avg),
            format!("IPv6 {v6:.0} < IPv4 {v4:.0} B/s"),
            v6 < v4,
        )
        .with_note(check_note!(
            "ronan-dstar/table-1/ipv6-below-ipv4",
            min = p_v6.min_text()
        )),
    );
    let dtn = means[2];
    checks.push(
        Check::qualitative(
            "ronan-dstar/table-1/tcp-cl-between",
            Paper::RonanDstar,
            "DTN TCP-CL between IPv6 and IPv4 (its overhead on IPv4 below IPv6's header)",
            format!(
                "IPv6 {:.0} < TCP-CL {:.0} < IPv4 {:.0} B/s",
                p_v6.avg, p_dtn.avg, p_v4.avg
            ),
            format!("IPv6 {v6:.0}, TCP-CL {dtn:.0}, IPv4 {v4:.0} B/s"),
            v6 < dtn && dtn < v4,
        )
        .with_note(check_note!("ronan-dstar/table-1/tcp-cl-between")),
    );
    Ok(Section {
        heading: "Table I: D-STAR DD throughput, control configuration".into(),
        text: section_text!(
            "ronan-dstar/table-1",
            frame_overhead_bits = channel.frame_overhead_bits,
            turnaround_ms = channel.turnaround.as_millis(),
            buffer_octets = channel.buffer_octets,
            iperf_seconds = duration.as_secs(),
            file_octets = object,
            runs = runs,
            quick = if opts.quick { " (--quick)" } else { "" },
        ),
        tables: vec![table],
        figures: Vec::new(),
        checks,
    })
}

/// Row `row` of Table II: our mean over every run within the range of
/// the paper's runs (its minimum to its maximum; 0 where the minimum is
/// unreadable). The IPv4 TCP row is the fit of the fade spacing, the
/// others are predictions.
fn range_check(row: usize, p: &Published, ours: f64, config: &Table2Config) -> Check {
    let low = p.min.unwrap_or(0.0);
    let middle = (low + p.max) / 2.0;
    Check::relative(
        format!(
            "ronan-dstar/table-2/{}/within-runs",
            crate::report::check_id_part(&p.protocol)
        ),
        Paper::RonanDstar,
        format!(
            "Table II: {} on the hostile path, our mean of all runs within the range of the \
             paper's runs",
            p.protocol
        ),
        middle,
        ours,
        "B/s",
        (p.max - low) / 2.0 / middle,
    )
    .with_paper_text(format!(
        "{low:.0}-{:.0} (average {:.0}{})",
        p.max,
        p.avg,
        if p.min.is_none() {
            "; minimum unreadable"
        } else {
            ""
        }
    ))
    .with_basis(if row == 0 {
        Basis::Fit
    } else {
        Basis::Prediction
    })
    .with_note(check_note!(
        "ronan-dstar/table-2/*/within-runs",
        good_s = config.good_s
    ))
}

/// The hostile path of Table II: Gilbert-Elliott fades, mean good spell
/// `good_s`, mean fade `fade_s`, bit-error rate `ber_fade` in a fade.
pub fn hostile(good_s: f64, fade_s: f64, ber_fade: f64) -> DdConfig {
    let bit = f64::from(linklab_channel::dstar::DD_BIT_RATE);
    let mut c = DdConfig::id1();
    c.errors = ErrorModel::GilbertElliott(GilbertElliott {
        p_good_to_bad: 1.0 / (good_s * bit),
        p_bad_to_good: 1.0 / (fade_s * bit),
        ber_good: 1e-7,
        ber_bad: ber_fade,
    });
    c
}

/// How Table II is run (`kind = "dstar-table-2"`): the calibrated radios
/// on a hostile path, Gilbert-Elliott fades.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table2Config {
    /// Mean good spell between fades, seconds.
    pub good_s: f64,
    /// Mean fade, seconds.
    pub fade_s: f64,
    /// Bit-error rate in a fade.
    pub ber_fade: f64,
    /// TCP user timeout, seconds: a connection with data unacknowledged
    /// this long is aborted (iperf and the TCPCL connection).
    pub tcp_timeout_s: u64,
    /// iperf -t, seconds.
    pub iperf_seconds: u64,
    /// The file dtnsend and NORM carry, octets.
    pub file_octets: usize,
    /// How long a DTN or NORM transfer may take before it counts as not
    /// completed, seconds.
    pub horizon_s: u64,
    /// Seeded runs per protocol.
    pub runs: usize,
    /// Seeded runs per protocol under `--quick`.
    pub quick_runs: usize,
}

impl Table2Config {
    /// The path of the report: fades of 45 s on average, BER 10⁻³ in a
    /// fade (chosen: long enough to outlast TCP's user timeout of 120 s
    /// with its backed-off retransmissions), a mean good spell of 58 s
    /// between them (fitted once to the IPv4 TCP row's average, example
    /// `dstar_fade_fit`), the paper's runs.
    pub fn paper() -> Table2Config {
        Table2Config {
            good_s: 58.0,
            fade_s: 45.0,
            ber_fade: 1e-3,
            tcp_timeout_s: 120,
            iperf_seconds: IPERF_SECONDS,
            file_octets: FILE_OCTETS,
            horizon_s: 12_000,
            runs: 25,
            quick_runs: 4,
        }
    }

    /// Checks every field against what the runs can take.
    pub fn validate(&self) -> Result<(), InvalidField> {
        for (field, v) in [("good_s", self.good_s), ("fade_s", self.fade_s)] {
            if !(v.is_finite() && (0.01..=1e6).contains(&v)) {
                return Err(InvalidField::new(
                    field,
                    format!("{v} is out of range 0.01-1e6 s"),
                ));
            }
        }
        if !(0.0..=0.5).contains(&self.ber_fade) {
            return Err(InvalidField::new(
                "ber_fade",
                format!("{} is out of range 0-0.5", self.ber_fade),
            ));
        }
        in_range("tcp_timeout_s", self.tcp_timeout_s, 1..=86_400)?;
        in_range("iperf_seconds", self.iperf_seconds, 1..=3600)?;
        in_range("file_octets", self.file_octets as u64, 1..=16 << 20)?;
        in_range("horizon_s", self.horizon_s, 1..=100_000)?;
        in_range("runs", self.runs as u64, 1..=1000)?;
        in_range("quick_runs", self.quick_runs as u64, 1..=1000)
    }
}

/// Runs of one protocol on the hostile path.
#[derive(Default)]
struct Completions {
    completed: usize,
    /// Throughput of the completed runs.
    rates: Vec<f64>,
    /// Throughput of every run: what an iperf run moved over its
    /// duration, 0 for a transfer that did not complete.
    all: Vec<f64>,
}

impl Completions {
    fn add(&mut self, done: bool, bytes_per_s: f64) {
        if done {
            self.completed += 1;
            self.rates.push(bytes_per_s);
        }
        self.all.push(bytes_per_s);
    }

    fn mean(&self) -> Option<f64> {
        (!self.rates.is_empty()).then(|| ci(&self.rates).0)
    }

    fn mean_all(&self) -> f64 {
        ci(&self.all).0
    }
}

/// Table II: completion rates on the hostile path, as in the report.
pub fn table_2(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, TestbedError> {
    table_2_with(&Table2Config::paper(), opts, progress)
}

/// Table II with `config`.
pub fn table_2_with(
    config: &Table2Config,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<Section, TestbedError> {
    let (points, results) = run_all(config, opts, progress)?;
    table_2_section(config, opts, &points, results)
}

/// One run of Table II: the run's index, which picks its seed (every
/// protocol meets the same fades), and the row (0 and 1 iperf over IPv4
/// and IPv6, 2 DTN over TCPCL, 3 and 4 NORM at 128 and 84 kbit/s).
pub type Table2Point = (usize, usize);

impl Table2Config {
    fn runs(&self, opts: &RunOptions) -> usize {
        if opts.quick {
            self.quick_runs
        } else {
            self.runs
        }
    }

    /// Every run's rows, run by run.
    pub(crate) fn points(&self, opts: &RunOptions) -> Vec<Table2Point> {
        (0..self.runs(opts))
            .flat_map(|r| (0..5).map(move |row| (r, row)))
            .collect()
    }

    /// One run: whether it completed, and its throughput, bytes/s.
    pub(crate) fn run_point(
        &self,
        opts: &RunOptions,
        &(r, row): &Table2Point,
        progress: &dyn Progress,
    ) -> Result<(bool, f64), TestbedError> {
        let channel = hostile(self.good_s, self.fade_s, self.ber_fade);
        let tcp = linux_tcp(Some(Duration::from_secs(self.tcp_timeout_s)));
        let duration = Duration::from_secs(self.iperf_seconds);
        let horizon = Duration::from_secs(self.horizon_s);
        let file = || vec![0xA5; self.file_octets];
        let seed = Streams::new(opts.seed ^ 0x7ab1e2)
            .stream_index(r as u64)
            .next_u64();
        progress.add_work(1);
        let (done, what) = match row {
            0 | 1 => {
                let run = tcp_bulk(channel, row == 1, &tcp, duration, seed)?;
                ((!run.timed_out, run.bytes_per_s), "D-STAR Table II: iperf")
            }
            // A transfer not completed moved nothing the application can
            // use.
            2 => {
                let run = dtn_tcpcl_transfer(channel, &tcp, file(), horizon, seed)?;
                (
                    (run.completed.is_some(), run.bytes_per_s),
                    "D-STAR Table II: DTN over TCPCL",
                )
            }
            _ => {
                let rate = if row == 3 { 128e3 } else { 84e3 };
                let run = dtn_norm_transfer(channel, rate, file(), horizon, seed)?;
                (
                    (run.completed.is_some(), run.bytes_per_s),
                    "D-STAR Table II: NORM",
                )
            }
        };
        progress.advance(1, what);
        Ok(done)
    }
}

/// Table II's section from every run's completion and throughput.
pub(crate) fn table_2_section(
    config: &Table2Config,
    opts: &RunOptions,
    points: &[Table2Point],
    results: Vec<(bool, f64)>,
) -> Result<Section, TestbedError> {
    let runs = config.runs(opts);
    let mut ours: [Completions; 5] = Default::default();
    for (&(_, row), (done, bytes_per_s)) in points.iter().zip(results) {
        ours[row].add(done, bytes_per_s);
    }
    let mut table = Table {
        id: "dstar-table-2".into(),
        title: "Table II: D-STAR DD on a hostile path, completion over seeded runs (bytes/s)"
            .into(),
        columns: [
            "protocol",
            "paper min",
            "paper max",
            "paper average",
            "linklab completed",
            "linklab mean of completed",
            "linklab mean of all runs",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    let paper = published(Configuration::PointToPoint)?;
    for (p, c) in paper.iter().zip(&ours) {
        table.rows.push(vec![
            p.protocol.clone(),
            p.min_text(),
            format!("{:.0}", p.max),
            format!("{:.0}", p.avg),
            format!("{}/{runs}", c.completed),
            c.mean().map_or("-".into(), |m| format!("{m:.0}")),
            format!("{:.0}", c.mean_all()),
        ]);
    }
    let path = section_text!(
        "ronan-dstar/table-2/path",
        good_s = config.good_s,
        fade_s = config.fade_s,
        ber_fade = config.ber_fade,
    );
    let tcp_runs = 2 * runs;
    let tcp_timed_out = tcp_runs - ours[0].completed - ours[1].completed;
    let norm_all = ours[3].completed == runs && ours[4].completed == runs;
    let (v4, n84, n128) = (ours[0].mean_all(), ours[4].mean_all(), ours[3].mean_all());
    let mut checks = vec![
        Check::qualitative(
            "ronan-dstar/table-2/tcp-times-out",
            Paper::RonanDstar,
            "On the hostile path iperf's TCP connections time out",
            "12 test runs timed out",
            format!("{tcp_timed_out} of {tcp_runs} IPv4 and IPv6 runs timed out"),
            tcp_timed_out > 0,
        )
        .with_note(check_note!(
            "ronan-dstar/table-2/tcp-times-out",
            path = path,
            iperf_seconds = config.iperf_seconds,
            tcp_timeout_s = config.tcp_timeout_s,
        )),
        Check::qualitative(
            "ronan-dstar/table-2/norm-completes",
            Paper::RonanDstar,
            "NORM (128 and 84 kbit/s) completes every transfer through the fades",
            "every NORM run completed",
            format!(
                "NORM-128 {}/{runs}, NORM-84 {}/{runs}",
                ours[3].completed, ours[4].completed
            ),
            norm_all,
        )
        .with_note(check_note!("ronan-dstar/table-2/norm-completes")),
        Check::qualitative(
            "ronan-dstar/table-2/norm-above-tcp",
            Paper::RonanDstar,
            "Where TCP is unusable NORM still moves data: its throughput above IPv4's",
            format!(
                "NORM-128 {:.0} and NORM-84 {:.0} B/s against IPv4 {:.0} B/s",
                paper[3].avg, paper[4].avg, paper[0].avg
            ),
            format!("NORM-128 {n128:.0}, NORM-84 {n84:.0}, IPv4 {v4:.0} B/s (means of all runs)"),
            n128 > v4 && n84 > v4,
        )
        .with_note(check_note!("ronan-dstar/table-2/norm-above-tcp")),
        Check::qualitative(
            "ronan-dstar/table-2/norm-128-above-84",
            Paper::RonanDstar,
            "On the hostile path NORM at 128 kbit/s averages above NORM at 84 kbit/s",
            format!(
                "NORM-128 {:.0} B/s, NORM-84 {:.0} B/s (the NORM-84 run in 'far far higher' winds)",
                paper[3].avg, paper[4].avg
            ),
            format!("NORM-128 {n128:.0}, NORM-84 {n84:.0} B/s (means of all runs)"),
            n128 > n84,
        )
        .with_note(check_note!("ronan-dstar/table-2/norm-128-above-84")),
        Check::qualitative(
            "ronan-dstar/table-2/dtn-tcp-cl-completes",
            Paper::RonanDstar,
            "DTN over TCPCL completes every transfer through the fades",
            format!(
                "TCP-CL completed, {}-{:.0} B/s",
                paper[2].min_text(),
                paper[2].max
            ),
            format!("{}/{runs} completed", ours[2].completed),
            ours[2].completed == runs,
        )
        .with_note(check_note!(
            "ronan-dstar/table-2/dtn-tcp-cl-completes",
            reconnect_s = super::tcpcl::RECONNECT_AFTER.as_secs(),
        )),
    ];
    for (row, (p, c)) in paper.iter().zip(&ours).enumerate() {
        checks.push(range_check(row, p, c.mean_all(), config));
    }
    Ok(Section {
        heading: "Table II: the hostile point-to-point path".into(),
        text: section_text!(
            "ronan-dstar/table-2",
            path = path,
            runs = runs,
            iperf_seconds = config.iperf_seconds,
            tcp_timeout_s = config.tcp_timeout_s,
            file_octets = config.file_octets,
            horizon_s = config.horizon_s,
        ),
        tables: vec![table],
        figures: Vec::new(),
        checks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_tables_have_every_protocol_and_table_ii_an_unreadable_minimum() {
        let control = published(Configuration::Control).unwrap();
        assert_eq!(control[4].avg, 9877.13);
        assert!(control.iter().all(|p| p.min.is_some()));
        let path = published(Configuration::PointToPoint).unwrap();
        assert_eq!(path[1].min_text(), "?");
        assert_eq!(path[2].min_text(), "1904");
    }
}
