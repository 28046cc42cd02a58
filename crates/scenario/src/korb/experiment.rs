//! Korb's experiments as scenario files: `kind = "korb-ping"` (section
//! 3.1, Table 1) and `kind = "korb-ftp"` (sections 3.3-3.5, Tables 2-4),
//! and the replications behind them.

use crate::korb::bsd42::Bsd42Config;
use linklab_ip::CongestionControl;
use linklab_sim::{ConfidenceInterval, Metric, ReplicationOutput, Runner};
use serde::Deserialize;

use linklab_channel::x25net::PerCallLimit;

use super::run::{median, ping_sequence, transfers, Direction, SETTLED_FROM};
use super::testbed::{TestbedConfig, RFC877_MTU, SEGMENT_OCTETS};
use super::KorbError;
use crate::experiment::{
    run_all, validate_replications, Experiment, ExperimentError, ExperimentKind, InvalidField,
};
use crate::report::{Output, Progress, RunOptions, Table};

/// Aggregate goodput of the files, bit/s.
const RATE: Metric = Metric::new("rate");
/// The slowest file's transfer time, s.
const MAX_TIME: Metric = Metric::new("max_time");
/// Files completed.
const COMPLETED: Metric = Metric::new("completed");
/// Data segments the senders transmitted again.
const RETRANSMITTED: Metric = Metric::new("retransmitted");
/// Data segments the receivers had already received.
const SPURIOUS: Metric = Metric::new("spurious");
/// Data segments the senders transmitted.
const SEGMENTS: Metric = Metric::new("segments");
/// Virtual circuits opened.
const CIRCUITS: Metric = Metric::new("circuits");
/// Datagrams dropped on the way.
const DROPPED: Metric = Metric::new("dropped");

/// Replications are added until every 95% half-width is within this
/// share of its mean (full runs), up to `max_replications`.
const PRECISION: f64 = 0.02;

/// `kind = "korb-ping"`: section 3.1's ping sequence, 64-octet pings then
/// 512-octet pings, one a second, from a start with no circuit open.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PingExperiment {
    /// Pings of each size (Korb: 100).
    pub pings: u16,
    /// Replications at least (full runs add more, up to
    /// `max_replications`, until the medians' intervals are within 2%).
    pub replications: u64,
    /// Most replications in a full run.
    pub max_replications: u64,
    /// Replications under `--quick`.
    pub quick_replications: u64,
}

/// The medians and averages of one ping configuration, ms.
#[derive(Debug, Clone, PartialEq)]
pub struct PingStats {
    /// Keyed by [`ping_metric`].
    pub values: Vec<(Metric, ConfidenceInterval)>,
    /// Replications run.
    pub replications: u64,
}

impl PingStats {
    /// The interval of statistic `metric` (see [`ping_metric`]).
    pub fn get(&self, metric: Metric) -> Option<ConfidenceInterval> {
        self.values
            .iter()
            .find(|(m, _)| *m == metric)
            .map(|(_, c)| *c)
    }
}

/// Table 1's statistics: ping sizes (octets), then median or average, then
/// over sequence numbers 1-100 or 50-100.
const PING_METRICS: [(usize, [[Metric; 2]; 2]); 2] = [
    (
        64,
        [
            [
                Metric::new("64/average/1-100"),
                Metric::new("64/average/50-100"),
            ],
            [
                Metric::new("64/median/1-100"),
                Metric::new("64/median/50-100"),
            ],
        ],
    ),
    (
        512,
        [
            [
                Metric::new("512/average/1-100"),
                Metric::new("512/average/50-100"),
            ],
            [
                Metric::new("512/median/1-100"),
                Metric::new("512/median/50-100"),
            ],
        ],
    ),
];

/// One of Table 1's statistics: the median or average round trip of
/// `size`-octet pings over sequence numbers 1-100, or 50-100 if `settled`;
/// `None` for a size Table 1 does not have.
pub fn ping_metric(size: usize, median: bool, settled: bool) -> Option<Metric> {
    PING_METRICS
        .iter()
        .find(|(s, _)| *s == size)
        .map(|(_, m)| m[usize::from(median)][usize::from(settled)])
}

fn replications(opts: &RunOptions, min: u64, max: u64, quick: u64) -> (u64, u64) {
    if opts.quick {
        (quick, quick)
    } else {
        (min, max.max(min))
    }
}

/// Runs `replicate` to the precision of a full run or the count of a
/// quick one; the first failure of any replication is returned.
fn replicate<F>(
    opts: &RunOptions,
    seed_offset: u64,
    (min, max): (u64, u64),
    progress: &dyn Progress,
    what: &str,
    replicate: F,
) -> Result<linklab_sim::Report, KorbError>
where
    F: Fn(linklab_core::Streams) -> Result<ReplicationOutput, KorbError> + Sync,
{
    progress.add_work(min);
    let runner = Runner::new(opts.seed.wrapping_add(seed_offset), min);
    runner.try_run_to_precision(opts.jobs, PRECISION, max, |streams| {
        let out = replicate(streams);
        progress.advance(1, what);
        out
    })
}

impl PingExperiment {
    /// Runs the ping sequence on `testbed`.
    pub fn simulate(
        &self,
        testbed: &TestbedConfig,
        opts: &RunOptions,
        progress: &dyn Progress,
    ) -> Result<PingStats, KorbError> {
        let counts = replications(
            opts,
            self.replications,
            self.max_replications,
            self.quick_replications,
        );
        let pings = self.pings;
        let report = replicate(opts, 1, counts, progress, "Korb Table 1: ping", |streams| {
            let outcome = ping_sequence(testbed, &streams, pings)?;
            let mut out = ReplicationOutput::new();
            for (size, rtts) in [(64, &outcome.small), (512, &outcome.large)] {
                for settled in [false, true] {
                    let from = if settled { SETTLED_FROM - 1 } else { 0 };
                    let rtts: Vec<f64> = rtts.iter().skip(from).flatten().copied().collect();
                    let metric = |median| ping_metric(size, median, settled);
                    if let (Some(m), Some(metric)) = (median(&rtts), metric(true)) {
                        out.value(metric, m);
                    }
                    if let (false, Some(metric)) = (rtts.is_empty(), metric(false)) {
                        let mean = rtts.iter().sum::<f64>() / rtts.len() as f64;
                        out.value(metric, mean);
                    }
                }
            }
            Ok(out)
        })?;
        let mut values = Vec::new();
        for size in [64, 512] {
            for median in [true, false] {
                for settled in [false, true] {
                    if let Some(metric) = ping_metric(size, median, settled) {
                        if let Some(ci) = report.ci(metric) {
                            values.push((metric, ci));
                        }
                    }
                }
            }
        }
        Ok(PingStats {
            values,
            replications: report.replications,
        })
    }
}

impl ExperimentKind for PingExperiment {
    type Point = ();
    type Result = Output;
    type Error = KorbError;

    fn validate(&self) -> Result<(), InvalidField> {
        if !(SETTLED_FROM as u16..=1000).contains(&self.pings) {
            return Err(InvalidField::new(
                "pings",
                format!(
                    "{} is out of range {SETTLED_FROM}-1000 (Table 1 also takes sequence numbers {SETTLED_FROM} on)",
                    self.pings
                ),
            ));
        }
        validate_replications(
            self.replications,
            self.max_replications,
            self.quick_replications,
        )
    }

    /// One point: this kind's run is not cut into parts.
    fn points(&self, _: &RunOptions) -> Result<Vec<()>, KorbError> {
        Ok(vec![()])
    }

    fn run_point(
        &self,
        opts: &RunOptions,
        (): &(),
        progress: &dyn Progress,
    ) -> Result<Output, KorbError> {
        let stats = self.simulate(&TestbedConfig::korb1987(1), opts, progress)?;
        let mut table = Table {
            id: "korb-ping".into(),
            title: format!(
                "Ping round trips over the X.25 network, {} replications",
                stats.replications
            ),
            columns: ["statistic", "mean_ms", "ci95_ms"].map(String::from).into(),
            rows: Vec::new(),
        };
        for (metric, ci) in &stats.values {
            table.rows.push(vec![
                metric.name().into(),
                format!("{:.0}", ci.mean),
                format!("{:.0}", ci.half_width),
            ]);
        }
        Ok(Output {
            tables: vec![table],
            figures: Vec::new(),
        })
    }

    fn assemble(
        &self,
        _: &RunOptions,
        _: &[()],
        results: Vec<Output>,
    ) -> Result<Output, KorbError> {
        Ok(results.into_iter().next().unwrap_or_default())
    }
}

/// TCP congestion control as written in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Congestion {
    /// No congestion window (4.2BSD).
    None,
    /// Reno (RFC 5681).
    Reno,
    /// CUBIC (RFC 9438).
    Cubic,
}

impl Congestion {
    fn smoltcp(self) -> CongestionControl {
        match self {
            Congestion::None => CongestionControl::None,
            Congestion::Reno => CongestionControl::Reno,
            Congestion::Cubic => CongestionControl::Cubic,
        }
    }
}

/// The sending TCP as written in a file (the receiver is smoltcp).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tcp {
    /// smoltcp 0.14 (RFC 6298 timer, `congestion` applies).
    #[default]
    Smoltcp,
    /// 4.2BSD's timers ([`crate::korb::bsd42`]), no congestion window;
    /// with the interface queue of a 4.2BSD host (`IFQ_MAXLEN`).
    Bsd42,
}

/// A direction as written in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileDirection {
    /// Purdue to CSNET.
    Put,
    /// CSNET to Purdue.
    Get,
}

impl From<FileDirection> for Direction {
    fn from(d: FileDirection) -> Direction {
        match d {
            FileDirection::Put => Direction::Put,
            FileDirection::Get => Direction::Get,
        }
    }
}

/// `kind = "korb-ftp"`: FTP transfers over the X.25 network (Korb
/// sections 3.3-3.5): `files` files of `file_octets` at once, in each
/// direction and with each most number of circuits given.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtpExperiment {
    /// `"put"`, `"get"` or both.
    pub directions: Vec<FileDirection>,
    /// Most circuits the interface opens to the other host, each a row.
    pub circuits: Vec<usize>,
    /// Files transferred at once.
    pub files: usize,
    /// Octets per file.
    pub file_octets: usize,
    /// TCP window (receive and send buffers), octets (4.2BSD: 2048).
    pub window_octets: usize,
    /// TCP segment size, octets (absent: 4.2BSD's 512); beyond 536 the
    /// interface's MTU grows past RFC 877's 576 to carry it.
    #[serde(default)]
    pub segment_octets: Option<usize>,
    /// TCP congestion control (smoltcp senders; 4.2BSD has none).
    pub congestion: Congestion,
    /// The sending TCP (absent: smoltcp).
    #[serde(default)]
    pub tcp: Tcp,
    /// The 4.2BSD sender's floor of the retransmission timeout, s, in
    /// place of `TCPTV_MIN`'s 1 s (absent: 1 s); the ceiling rises with
    /// it if needed.
    #[serde(default)]
    pub min_rto_s: Option<f64>,
    /// The network's per-call throughput class, bit/s of user data, in
    /// place of the calibrated model's (absent: the fitted 6,902 bit/s;
    /// the bucket depth stays one 576-octet datagram; see
    /// `linklab_channel::x25net::PerCallLimit`).
    #[serde(default)]
    pub per_call_limit_bps: Option<f64>,
    /// Replications at least per row.
    pub replications: u64,
    /// Most replications per row in a full run.
    pub max_replications: u64,
    /// Replications per row under `--quick`.
    pub quick_replications: u64,
}

/// One row of an FTP experiment.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct FtpRow {
    /// The direction.
    pub direction: Direction,
    /// Most circuits.
    pub circuits: usize,
    /// Rate (all octets over the longest transfer), bit/s.
    pub rate: ConfidenceInterval,
    /// The longest transfer, s.
    pub max_time: ConfidenceInterval,
    /// Transfers completed intact, mean per replication.
    pub completed: f64,
    /// Segments the sender retransmitted, mean.
    pub retransmitted: f64,
    /// Segments the receiver already had (spurious retransmissions), mean.
    pub spurious: f64,
    /// Data segments sent, mean.
    pub segments: f64,
    /// Circuits the sender had open in all, mean.
    pub circuits_opened: f64,
    /// Datagrams dropped by the sender's interface (queue full), mean.
    pub dropped: f64,
    /// Replications run.
    pub replications: u64,
}

impl FtpExperiment {
    /// Parses and checks a built-in experiment file.
    pub fn from_toml(text: &str) -> Result<Self, KorbError> {
        Experiment::from_toml_as(text)
            .map_err(|e: ExperimentError| KorbError::Experiment(Box::new(e)))
    }

    /// The testbed for `circuits` circuits with this file's TCP.
    pub fn testbed(&self, circuits: usize) -> TestbedConfig {
        let mut testbed = match self.tcp {
            Tcp::Smoltcp => TestbedConfig::korb1987(circuits),
            Tcp::Bsd42 => TestbedConfig::korb1987_bsd42(circuits, self.bsd42_timers()),
        };
        testbed.tcp.window_octets = self.window_octets;
        testbed.tcp.send_buffer_octets = self.window_octets;
        testbed.segment_octets = self.segment_octets();
        testbed.tcp.congestion = self.congestion.smoltcp();
        if let Some(rate_bps) = self.per_call_limit_bps {
            testbed.net.per_call = Some(PerCallLimit {
                rate_bps,
                burst_octets: RFC877_MTU as u32,
            });
        }
        testbed
    }

    /// The TCP segment size, octets.
    pub fn segment_octets(&self) -> usize {
        self.segment_octets.unwrap_or(SEGMENT_OCTETS)
    }

    /// The 4.2BSD sender's timers: 4.2BSD's, with this file's window as
    /// its send buffer and its floor, if given.
    pub fn bsd42_timers(&self) -> Bsd42Config {
        let bsd = Bsd42Config::bsd42();
        let min_rto = self
            .min_rto_s
            .map_or(bsd.min_rto, core::time::Duration::from_secs_f64);
        Bsd42Config {
            send_buffer: self.window_octets,
            mss: self.segment_octets(),
            min_rto,
            max_rto: bsd.max_rto.max(min_rto),
            ..bsd
        }
    }

    /// Runs every row, the rows on the run's threads.
    pub fn simulate(
        &self,
        opts: &RunOptions,
        progress: &dyn Progress,
    ) -> Result<Vec<FtpRow>, KorbError> {
        Ok(run_all(self, opts, progress)?.1)
    }

    /// The rows as a table.
    pub fn table(&self, id: &str, title: &str, rows: &[FtpRow]) -> Table {
        let mut table = Table {
            id: id.into(),
            title: title.into(),
            columns: [
                "direction",
                "circuits",
                "rate_bps",
                "ci95_bps",
                "longest_s",
                "completed",
                "retransmitted",
                "spurious",
                "data_segments",
                "circuits_opened",
                "queue_drops",
                "replications",
            ]
            .map(String::from)
            .into(),
            rows: Vec::new(),
        };
        for r in rows {
            table.rows.push(vec![
                r.direction.name().into(),
                r.circuits.to_string(),
                format!("{:.0}", r.rate.mean),
                format!("{:.0}", r.rate.half_width),
                format!("{:.1}", r.max_time.mean),
                format!("{:.2}/{}", r.completed, self.files),
                format!("{:.1}", r.retransmitted),
                format!("{:.1}", r.spurious),
                format!("{:.0}", r.segments),
                format!("{:.1}", r.circuits_opened),
                format!("{:.1}", r.dropped),
                r.replications.to_string(),
            ]);
        }
        table
    }
}

impl ExperimentKind for FtpExperiment {
    type Point = (Direction, usize);
    type Result = FtpRow;
    type Error = KorbError;

    fn validate(&self) -> Result<(), InvalidField> {
        if self.directions.is_empty() {
            return Err(InvalidField::new("directions", "the list is empty"));
        }
        if self.circuits.is_empty() {
            return Err(InvalidField::new("circuits", "the list is empty"));
        }
        if let Some(c) = self.circuits.iter().find(|&&c| !(1..=16).contains(&c)) {
            return Err(InvalidField::new(
                "circuits",
                format!("{c} is out of range 1-16 (the DTE's logical channels)"),
            ));
        }
        if !(1..=32).contains(&self.files) {
            return Err(InvalidField::new(
                "files",
                format!("{} is out of range 1-32", self.files),
            ));
        }
        if !(1..=10_000_000).contains(&self.file_octets) {
            return Err(InvalidField::new(
                "file_octets",
                format!("{} is out of range 1-10000000", self.file_octets),
            ));
        }
        if !(512..=65_535).contains(&self.window_octets) {
            return Err(InvalidField::new(
                "window_octets",
                format!(
                    "{} is out of range 512-65535 (one segment to TCP's largest unscaled window)",
                    self.window_octets
                ),
            ));
        }
        if !(64..=8192).contains(&self.segment_octets()) {
            return Err(InvalidField::new(
                "segment_octets",
                format!("{} is out of range 64-8192", self.segment_octets()),
            ));
        }
        if self.segment_octets() > self.window_octets {
            return Err(InvalidField::new(
                "segment_octets",
                format!(
                    "{} is more than the window ({} octets)",
                    self.segment_octets(),
                    self.window_octets
                ),
            ));
        }
        if self.tcp == Tcp::Bsd42 && self.congestion != Congestion::None {
            return Err(InvalidField::new(
                "congestion",
                "4.2BSD has no congestion window: use \"none\" with tcp = \"bsd42\"",
            ));
        }
        if let Some(rto) = self.min_rto_s {
            if self.tcp != Tcp::Bsd42 || !(0.1..=120.0).contains(&rto) {
                return Err(InvalidField::new(
                    "min_rto_s",
                    format!("{rto}: only with tcp = \"bsd42\", 0.1-120 s"),
                ));
            }
        }
        if let Some(rate) = self.per_call_limit_bps {
            if !(100.0..=1e9).contains(&rate) {
                return Err(InvalidField::new(
                    "per_call_limit_bps",
                    format!("{rate} is out of range 100-1000000000"),
                ));
            }
        }
        validate_replications(
            self.replications,
            self.max_replications,
            self.quick_replications,
        )
    }

    /// Every (direction, circuits), in the file's order.
    fn points(&self, _: &RunOptions) -> Result<Vec<(Direction, usize)>, KorbError> {
        Ok(self
            .directions
            .iter()
            .flat_map(|&d| self.circuits.iter().map(move |&c| (Direction::from(d), c)))
            .collect())
    }

    /// One row: the transfers of one direction on `circuits` circuits,
    /// replicated to the precision of a full run or the count of a quick
    /// one.
    fn run_point(
        &self,
        opts: &RunOptions,
        &(direction, circuits): &(Direction, usize),
        progress: &dyn Progress,
    ) -> Result<FtpRow, KorbError> {
        let counts = replications(
            opts,
            self.replications,
            self.max_replications,
            self.quick_replications,
        );
        let testbed = self.testbed(circuits);
        let offset = 100 + circuits as u64 * 2 + u64::from(direction == Direction::Get);
        let (files, octets) = (self.files, self.file_octets);
        let report = replicate(opts, offset, counts, progress, "Korb: FTP", |streams| {
            let t = transfers(&testbed, &streams, direction, files, octets)?;
            let mut out = ReplicationOutput::new();
            out.value(RATE, t.rate_bps)
                .value(MAX_TIME, t.max_time_s)
                .value(COMPLETED, t.completed as f64)
                .value(RETRANSMITTED, t.sent.repeated_segments as f64)
                .value(SPURIOUS, t.received.repeated_segments as f64)
                .value(SEGMENTS, t.sent.data_segments as f64)
                .value(CIRCUITS, t.circuits as f64)
                .value(DROPPED, t.dropped as f64);
            Ok(out)
        })?;
        let ci = |metric: Metric| {
            report
                .ci(metric)
                .ok_or(KorbError::NoResult(metric.name().into()))
        };
        Ok(FtpRow {
            direction,
            circuits,
            rate: ci(RATE)?,
            max_time: ci(MAX_TIME)?,
            completed: ci(COMPLETED)?.mean,
            retransmitted: ci(RETRANSMITTED)?.mean,
            spurious: ci(SPURIOUS)?.mean,
            segments: ci(SEGMENTS)?.mean,
            circuits_opened: ci(CIRCUITS)?.mean,
            dropped: ci(DROPPED)?.mean,
            replications: report.replications,
        })
    }

    fn assemble(
        &self,
        _: &RunOptions,
        _: &[(Direction, usize)],
        rows: Vec<FtpRow>,
    ) -> Result<Output, KorbError> {
        let title = format!(
            "{} file(s) of {} octets at once over the X.25 network, TCP window {} octets",
            self.files, self.file_octets, self.window_octets
        );
        Ok(Output {
            tables: vec![self.table("korb-ftp", &title, &rows)],
            figures: Vec::new(),
        })
    }
}

impl PingExperiment {
    /// Parses and checks a built-in experiment file.
    pub fn from_toml(text: &str) -> Result<Self, KorbError> {
        Experiment::from_toml_as(text)
            .map_err(|e: ExperimentError| KorbError::Experiment(Box::new(e)))
    }
}
