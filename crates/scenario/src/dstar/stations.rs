//! Several ID-1 radios on one DD channel: the emergency-communications
//! case Ronan, Long and Walsh argue from (section I: "a lot of traffic on
//! a channel all in contention for the same bandwidth", whose effect on
//! TCP/IP they call unstudied) and did not measure.
//!
//! n − 1 field stations (stations 0 to n − 2) and one base station (the
//! last, say an emergency operations centre), every radio in range of
//! every other, each PC on
//! the Ethernet port of its radio as in Table I. Each field station runs
//! iperf to the base over IPv4 at once, on the calibrated channel of
//! Table I ([`DdConfig::id1`]). The base reaches each field station by a
//! static neighbour table ([`EthInterface::with_neighbours`]; the paper
//! configured its routing statically), the field stations reach the base
//! only.
//!
//! With two radios this is Table I's IPv4 TCP run, frame for frame. With
//! more, the radios' behaviour when several wait for the channel decides
//! the outcome, and it is not documented; the two rules of
//! [`Contention`] bound it, and the section runs both.

use core::net::IpAddr;
use core::time::Duration;

use linklab_channel::{Contention, DdChannel, DdConfig, DdStats, StationId};
use linklab_core::{Instant, Streams};
use linklab_ip::apps::{FileReceiver, FileSender};
use linklab_ip::{EthInterface, Host, TcpConfig};
use linklab_sim::{ConfidenceInterval, Metric, ReplicationOutput, Runner};
use smoltcp::wire::{IpAddress, IpEndpoint};

use super::testbed::{
    ipv4, linux_tcp, mac, pc, run_pcs, Application, TestbedError, IPERF_PORT, MTU,
};
use crate::report::{
    Check, Figure, Paper, Point, Progress, RunOptions, Section, Series, SeriesStyle, Table,
};
use crate::{check_note, section_text};

/// The PCs: each field station with the base as its neighbour, the base
/// (the last) with a neighbour for every field station; ISNs drawn from
/// `streams` as in Table I.
fn pcs(stations: usize, streams: &Streams) -> Vec<Host<EthInterface>> {
    let base = stations - 1;
    (0..stations)
        .map(|i| {
            let link = if i == base {
                let neighbours = (0..base).map(|j| (IpAddr::V4(ipv4(j)), mac(j)));
                EthInterface::with_neighbours(mac(base), neighbours.collect(), MTU, 100)
            } else {
                EthInterface::new(mac(i), mac(base), MTU, 100)
            };
            pc(i, link, streams)
        })
        .collect()
}

/// Every field station's iperf client, opened at its start time, and the
/// base's servers, one port each (5001 for station 0, 5002 for station 1,
/// ...).
struct Flows {
    tcp: TcpConfig,
    octets: usize,
    base: IpAddress,
    starts: Vec<Instant>,
    clients: Vec<Option<FileSender>>,
    servers: Vec<FileReceiver>,
    failure: Option<String>,
}

impl Application for Flows {
    fn step(&mut self, hosts: &mut [Host<EthInterface>], now: Instant) {
        let Some((base, field)) = hosts.split_last_mut() else {
            return;
        };
        for (i, (client, host)) in self.clients.iter_mut().zip(field).enumerate() {
            if client.is_none() && self.starts[i] <= now {
                let port = IPERF_PORT + i as u16;
                let remote = IpEndpoint::new(self.base, port);
                let data = vec![0x5A; self.octets];
                match FileSender::connect(host, &self.tcp, remote, 49152, data, now) {
                    Ok(sender) => *client = Some(sender),
                    Err(e) => self.failure = Some(e),
                }
            }
            if let Some(client) = client {
                client.step(host, now);
            }
        }
        for server in &mut self.servers {
            server.step(base);
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.starts
            .iter()
            .zip(&self.clients)
            .filter(|(_, c)| c.is_none())
            .map(|(start, _)| *start)
            .min()
    }

    fn finished(&self) -> bool {
        self.failure.is_some()
            || self
                .clients
                .iter()
                .all(|c| c.as_ref().is_some_and(|c| c.failure().is_some()))
    }
}

/// The first field station starts at time zero, each other at a time
/// drawn uniformly from the first [`START_SPREAD`], as operators would
/// start theirs: in a model without clock jitter, identical TCPs started
/// at one instant keep their retransmission timers in step, and two that
/// collide once collide for ever.
const START_SPREAD: Duration = Duration::from_secs(5);

fn starts(field: usize, streams: &Streams) -> Vec<Instant> {
    (0..field)
        .map(|i| {
            if i == 0 {
                return Instant::ZERO;
            }
            let u = streams.stream(&format!("iperf-start/{i}")).uniform();
            Instant::ZERO + START_SPREAD.mul_f64(u)
        })
        .collect()
}

/// What one run of [`tcp_to_base`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct StationsRun {
    /// Goodput of each field station's flow, bytes/s (station 0 first).
    pub bytes_per_s: Vec<f64>,
    /// The radios' counters, by station (the base last).
    pub radio: Vec<DdStats>,
}

impl StationsRun {
    /// The flows' goodput together, bytes/s.
    pub fn aggregate(&self) -> f64 {
        self.bytes_per_s.iter().sum()
    }

    /// Jain's fairness index of the flows' goodput: 1 when every station
    /// gets the same, 1/k when one of k gets everything.
    pub fn fairness(&self) -> f64 {
        let sum = self.aggregate();
        let squares: f64 = self.bytes_per_s.iter().map(|x| x * x).sum();
        if squares == 0.0 {
            return 0.0;
        }
        sum * sum / (self.bytes_per_s.len() as f64 * squares)
    }

    /// Frames still in the base's radio buffer at the end: the ACKs (and
    /// any other frames) queued for the base's turns on the channel.
    pub fn base_backlog(&self) -> u64 {
        self.radio
            .last()
            .map_or(0, |r| r.frames_queued - r.frames_sent)
    }

    /// The share of all frames sent that went out in a collision.
    pub fn collided(&self) -> f64 {
        let sent: u64 = self.radio.iter().map(|r| r.frames_sent).sum();
        let collided: u64 = self.radio.iter().map(|r| r.frames_sent_collided).sum();
        if sent == 0 {
            return 0.0;
        }
        collided as f64 / sent as f64
    }
}

/// iperf from each of `stations` − 1 field stations to the base until
/// `duration`, each from its start (see `START_SPREAD`), over IPv4 with
/// `tcp`, on a DD channel of `stations` radios; a station's goodput is
/// what arrived from it over its time on the air.
pub fn tcp_to_base(
    channel: DdConfig,
    stations: usize,
    tcp: &TcpConfig,
    duration: Duration,
    streams: &Streams,
) -> Result<StationsRun, TestbedError> {
    if stations < 2 {
        return Err(TestbedError::Setup(format!(
            "{stations} stations: a base and at least one field station are needed"
        )));
    }
    let mut medium = DdChannel::with_radios(channel, stations, streams);
    let mut hosts = pcs(stations, streams);
    let base = stations - 1;
    let mut flows = Flows {
        tcp: *tcp,
        // Enough data never to run out: the air rate for the whole run.
        octets: (duration.as_secs_f64() * f64::from(channel.bit_rate) / 8.0) as usize + 1,
        base: IpAddress::Ipv4(ipv4(base)),
        starts: starts(base, streams),
        clients: (0..base).map(|_| None).collect(),
        servers: Vec::new(),
        failure: None,
    };
    for i in 0..base {
        let port = IPERF_PORT + i as u16;
        let server =
            FileReceiver::listen(&mut hosts[base], tcp, port).map_err(TestbedError::Setup)?;
        flows.servers.push(server);
    }
    let end = Instant::ZERO + duration;
    run_pcs(&mut medium, &mut hosts, &mut flows, end)?;
    if let Some(failure) = flows.failure {
        return Err(TestbedError::Setup(failure));
    }
    Ok(StationsRun {
        bytes_per_s: flows
            .servers
            .iter()
            .zip(&flows.starts)
            .map(|(s, &start)| s.received().len() as f64 / (end - start).as_secs_f64())
            .collect(),
        radio: (0..stations).map(|i| medium.stats(StationId(i))).collect(),
    })
}

/// Stations on the channel, the base included.
const STATIONS: [usize; 5] = [2, 3, 4, 6, 8];
/// iperf -t of every run, seconds (shorter than Table I's 600: a run
/// reaches its steady rate within seconds, and the sweep has 10 cells).
const IPERF_SECONDS: u64 = 120;
/// Seeded runs per cell, and under `--quick`.
const RUNS: (u64, u64) = (8, 3);

const AGGREGATE: Metric = Metric::new("aggregate_bytes_per_s");
const LEAST: Metric = Metric::new("least_station_bytes_per_s");
const FAIRNESS: Metric = Metric::new("jain_fairness");
const COLLIDED: Metric = Metric::new("collided_share");
const BACKLOG: Metric = Metric::new("base_backlog_frames");

/// One cell of the sweep.
struct Cell {
    contention: Contention,
    stations: usize,
    aggregate: ConfidenceInterval,
    least: ConfidenceInterval,
    fairness: f64,
    collided: f64,
    backlog: f64,
}

fn rule(contention: Contention) -> &'static str {
    match contention {
        Contention::AllKey => "all waiting key (1-persistent)",
        Contention::OneKeys => "one keys (ideal arbitration)",
    }
}

fn sweep(opts: &RunOptions, progress: &dyn Progress) -> Result<Vec<Cell>, TestbedError> {
    let runs = if opts.quick { RUNS.1 } else { RUNS.0 };
    let rules = [Contention::AllKey, Contention::OneKeys];
    progress.add_work(runs * (rules.len() * STATIONS.len()) as u64);
    let tcp = linux_tcp(None);
    let mut cells = Vec::new();
    for contention in rules {
        let channel = DdConfig {
            contention,
            ..DdConfig::id1()
        };
        for stations in STATIONS {
            let report = Runner::new(opts.seed, runs).try_run_parallel(opts.jobs, |streams| {
                let run = tcp_to_base(
                    channel,
                    stations,
                    &tcp,
                    Duration::from_secs(IPERF_SECONDS),
                    &streams,
                )?;
                progress.advance(1, "D-STAR: several radios on one channel");
                let least = run
                    .bytes_per_s
                    .iter()
                    .copied()
                    .fold(f64::INFINITY, f64::min);
                let mut out = ReplicationOutput::new();
                out.value(AGGREGATE, run.aggregate())
                    .value(LEAST, least)
                    .value(FAIRNESS, run.fairness())
                    .value(COLLIDED, run.collided())
                    .value(BACKLOG, run.base_backlog() as f64);
                Ok::<_, TestbedError>(out)
            })?;
            let ci = |metric| {
                report
                    .ci(metric)
                    .ok_or(TestbedError::Setup(format!("{runs} runs give no interval")))
            };
            cells.push(Cell {
                contention,
                stations,
                aggregate: ci(AGGREGATE)?,
                least: ci(LEAST)?,
                fairness: ci(FAIRNESS)?.mean,
                collided: ci(COLLIDED)?.mean,
                backlog: ci(BACKLOG)?.mean,
            });
        }
    }
    Ok(cells)
}

/// The section of `reproduce`: aggregate and per-station TCP throughput
/// against the number of stations, under both access rules.
pub fn section(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, TestbedError> {
    let cells = sweep(opts, progress)?;
    Ok(Section {
        heading: "Several radios on one DD channel (section I's emergency case)".into(),
        text: section_text!(
            "ronan-dstar/stations",
            field_stations = STATIONS.iter().max().map_or(0, |n| n - 1),
            iperf_seconds = IPERF_SECONDS,
            spread = START_SPREAD.as_secs(),
            runs = if opts.quick { RUNS.1 } else { RUNS.0 },
        ),
        tables: vec![table(&cells)],
        figures: vec![figure(&cells)],
        checks: vec![shared_check(&cells)],
    })
}

fn table(cells: &[Cell]) -> Table {
    Table {
        id: "dstar-stations".into(),
        title: format!(
            "Several radios on one DD channel: iperf -t {IPERF_SECONDS} from every field station to the base at once (bytes/s, 95% intervals)"
        ),
        columns: [
            "access rule",
            "stations",
            "aggregate",
            "95% ±",
            "least station",
            "95% ±",
            "Jain fairness",
            "frames sent in collisions",
            "frames waiting at the base's radio at the end",
        ]
        .map(String::from)
        .to_vec(),
        rows: cells
            .iter()
            .map(|c| {
                vec![
                    rule(c.contention).into(),
                    c.stations.to_string(),
                    format!("{:.0}", c.aggregate.mean),
                    format!("{:.0}", c.aggregate.half_width),
                    format!("{:.0}", c.least.mean),
                    format!("{:.0}", c.least.half_width),
                    format!("{:.3}", c.fairness),
                    format!("{:.1}%", 100.0 * c.collided),
                    format!("{:.0}", c.backlog),
                ]
            })
            .collect(),
    }
}

fn figure(cells: &[Cell]) -> Figure {
    let series =
        |contention: Contention, what: &str, pick: fn(&Cell) -> ConfidenceInterval| Series {
            label: format!("{what}, {}", rule(contention)),
            style: SeriesStyle::Simulated,
            points: cells
                .iter()
                .filter(|c| c.contention == contention)
                .map(|c| {
                    let ci = pick(c);
                    Point {
                        x: c.stations as f64,
                        y: ci.mean,
                        half_width: Some(ci.half_width),
                    }
                })
                .collect(),
        };
    Figure {
        id: "dstar-stations-throughput".into(),
        title: "Several radios on one DD channel: TCP throughput against stations".into(),
        x_label: "stations on the channel (base included)".into(),
        y_label: "throughput (bytes/s)".into(),
        log_x: false,
        log_y: false,
        series: [Contention::AllKey, Contention::OneKeys]
            .into_iter()
            .flat_map(|contention| {
                [
                    series(contention, "aggregate", |c| c.aggregate),
                    series(contention, "least station", |c| c.least),
                ]
            })
            .collect(),
    }
}

/// The paper's premise: the stations contend for one channel's bandwidth.
/// Under either rule, each station's mean share falls with every station
/// added, and from three stations on the least served station gets less
/// than half of what one field station gets alone.
fn shared_check(cells: &[Cell]) -> Check {
    let mut failures = Vec::new();
    let mut shown = Vec::new();
    let share = |c: &Cell| c.aggregate.mean / (c.stations - 1) as f64;
    for contention in [Contention::AllKey, Contention::OneKeys] {
        let row: Vec<&Cell> = cells
            .iter()
            .filter(|c| c.contention == contention)
            .collect();
        let Some(alone) = row.first() else {
            continue;
        };
        for pair in row.windows(2) {
            if share(pair[1]) >= share(pair[0]) {
                failures.push(format!(
                    "{}: mean share at {} stations {:.0}, not below {:.0} at {}",
                    rule(contention),
                    pair[1].stations,
                    share(pair[1]),
                    share(pair[0]),
                    pair[0].stations
                ));
            }
        }
        for c in row.iter().skip(1) {
            if c.least.mean >= alone.aggregate.mean / 2.0 {
                failures.push(format!(
                    "{}, {} stations: least served {:.0}, not below half of {:.0}",
                    rule(contention),
                    c.stations,
                    c.least.mean,
                    alone.aggregate.mean
                ));
            }
        }
        if let Some(last) = row.last() {
            shown.push(format!(
                "{}: one field station {:.0} B/s; {} of them {:.0} together, mean share {:.0}, the least served {:.0}",
                rule(contention),
                alone.aggregate.mean,
                last.stations - 1,
                last.aggregate.mean,
                share(last),
                last.least.mean
            ));
        }
    }
    Check::qualitative(
        "ronan-dstar/stations/shared-bandwidth",
        Paper::RonanDstar,
        "Several radios on one channel, under both access rules: each field station's mean share falls with every station added, and from 3 stations on the least served gets under half of one field station's rate alone",
        "a lot of traffic on a channel all in contention for the same bandwidth",
        if failures.is_empty() {
            shown.join("; ")
        } else {
            failures.join("; ")
        },
        failures.is_empty(),
    )
    .with_note(check_note!("ronan-dstar/stations/shared-bandwidth"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dstar::testbed::tcp_bulk;

    /// With two stations the section's testbed is Table I's IPv4 iperf run,
    /// to the octet.
    #[test]
    fn two_stations_are_table_i() {
        let duration = Duration::from_secs(20);
        let tcp = linux_tcp(None);
        let table_i = tcp_bulk(DdConfig::id1(), false, &tcp, duration, 7).unwrap();
        for contention in [Contention::AllKey, Contention::OneKeys] {
            let channel = DdConfig {
                contention,
                ..DdConfig::id1()
            };
            let run = tcp_to_base(channel, 2, &tcp, duration, &Streams::new(7)).unwrap();
            assert_eq!(run.bytes_per_s, [table_i.bytes_per_s]);
            assert_eq!(run.radio, table_i.radio);
        }
    }

    /// Three stations: both flows get through. Every waiting radio keying
    /// at once collides, and the two carry less than one alone; ideal
    /// arbitration gives
    /// the base fewer turns than the two senders together, so its ACKs
    /// cover more segments and the two flows carry more than one alone.
    #[test]
    fn three_stations_share_the_channel() {
        let duration = Duration::from_secs(20);
        let tcp = linux_tcp(None);
        let run = |contention| {
            let channel = DdConfig {
                contention,
                ..DdConfig::id1()
            };
            tcp_to_base(channel, 3, &tcp, duration, &Streams::new(7)).unwrap()
        };
        let (all, one) = (run(Contention::AllKey), run(Contention::OneKeys));
        for r in [&all, &one] {
            assert!(r.bytes_per_s.iter().all(|&b| b > 0.0), "{r:?}");
        }
        let alone = tcp_bulk(DdConfig::id1(), false, &tcp, duration, 7).unwrap();
        assert!(all.collided() > 0.0, "{all:?}");
        assert!(all.aggregate() < alone.bytes_per_s, "{all:?}");
        assert_eq!(one.collided(), 0.0, "{one:?}");
        let [a, b, base] = [0, 1, 2].map(|i| one.radio[i].frames_sent);
        assert!(base < a + b, "{one:?}");
        assert!(one.aggregate() > alone.bytes_per_s, "{one:?}");
    }
}
