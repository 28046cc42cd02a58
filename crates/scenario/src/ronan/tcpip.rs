//! Tables V and VII of Ronan, Long and Walsh, the TCP/IP column: the
//! 7182-octet file sent by FTP over TCP/IP over AX.25 (Linux `mode vc`)
//! with Table IV's MTU, MSS and TCP window, each host behind the same host
//! and KISS TNC path, with the same calibrated values, as the AX.25 CM-CL
//! column of [`super::measured`] (no refit).
//!
//! Each station is a smoltcp 0.14 stack over an AX.25 interface
//! ([`linklab_ip::Host`]) whose frames cross the host latency, the serial
//! link, the TNC's processor and the carrier hold of
//! [`crate::transfer::KissPath`] on their way to the radio and back; the
//! AX.25 engines behave as the Linux stack does (T1 and T2 and the
//! acknowledgement policy of the CM-CL column). A ping first brings the
//! AX.25 link up, as FTP's control connection would have; the time runs
//! from the data connection's SYN to the last octet at the receiver.

use core::time::Duration;
use std::sync::Mutex;

use linklab_channel::{Medium, MediumEvent, RadioChannel, RadioConfig, StationConfig, StationId};
use linklab_ip::sim::{hosts, Addresses, HostSetup, SimError};
use linklab_ip::workload::{FileTransfer, Ping, PingConfig, Workload};
use linklab_ip::{Host, TcpConfig};
use linklab_link::Instant;
use linklab_sim::{ConfidenceInterval, ReplicationOutput, Runner, Streams};
use thiserror::Error;

use super::reference::{published, published_row, Published};
use super::{MeasuredConfig, RonanError, THREADS};
use crate::report::{Check, Paper, Progress, RunOptions, Section, Table};
use crate::transfer::{Station, TransferConfig};

/// Tolerance of the TCP/IP column (issue 5, item 6).
const TOLERANCE: f64 = 0.15;

/// Virtual-time limit of one phase of a run.
const HORIZON: Duration = Duration::from_secs(3600);

/// Wake-ups at one instant after which a run is declared stuck.
const MAX_STEPS_AT_ONE_INSTANT: u32 = 100_000;

/// Why the TCP/IP transfer could not be simulated.
#[derive(Debug, Error)]
pub enum TcpipError {
    /// The shared Ronan configuration or reference could not be read.
    #[error(transparent)]
    Ronan(#[from] RonanError),
    /// A host was refused or a workload failed to start.
    #[error("IP host: {0}")]
    Host(#[from] SimError),
    /// A workload could not start or failed.
    #[error("{0}")]
    Workload(String),
    /// The run went quiet, looped or passed its horizon.
    #[error(
        "the TCP/IP transfer at {bit_rate} bit/s, window {window} stopped at {at_s:.3} s: {why}"
    )]
    Stuck {
        /// Radio bit rate, bit/s.
        bit_rate: u32,
        /// Window k.
        window: u8,
        /// Virtual time, s.
        at_s: f64,
        /// What happened.
        why: &'static str,
    },
}

/// What one TCP/IP transfer measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TcpipOutcome {
    /// From the data connection's SYN to the last octet at the receiver.
    pub transfer: Duration,
    /// Segments the sender sent (SYN, data, FIN and pure ACKs).
    pub sender_segments: u64,
    /// Segments the receiver sent (its acknowledgements, SYN-ACK, FIN).
    pub receiver_segments: u64,
    /// Octets of IP and TCP header (and options) in all segments, both
    /// directions.
    pub header_octets: u64,
    /// Segments that re-sent sequence space (sender's sniffer).
    pub retransmitted: u64,
    /// Segments whose sequence space the receiver already had.
    pub spurious: u64,
    /// AX.25 frames both stations put on the air.
    pub frames: u64,
}

/// Two IP hosts, each behind a host and KISS TNC, on one radio channel.
struct Bench {
    hosts: [Host; 2],
    stations: [Station; 2],
    radio: RadioChannel,
    now: Instant,
    frames: u64,
}

impl Bench {
    fn new(config: &TransferConfig, streams: &Streams) -> Result<Bench, TcpipError> {
        let path = config.path.ok_or(TcpipError::Workload(
            "the TCP/IP column needs a host and KISS TNC path".into(),
        ))?;
        let mut phases = streams.stream("slot-phase");
        let slot = u64::try_from(config.station.slot_time.as_micros().max(1)).unwrap_or(1);
        let mut station = || StationConfig {
            slot_phase: Duration::from_micros(phases.below(slot)),
            ..config.station
        };
        let radio_stations = [station(), station()];
        let radio = RadioChannel::new(
            RadioConfig::new(config.bit_rate),
            &radio_stations,
            streams,
            "radio",
        );
        let mut setup = HostSetup::ronan_table_4(config.window);
        setup.link.t1 = config.stack.t1;
        setup.link.t2 = config.stack.t2;
        setup.link.ack_policy = config.stack.ack_policy;
        Ok(Bench {
            hosts: hosts(&setup, streams)?,
            stations: [Station::new(&path), Station::new(&path)],
            radio,
            now: Instant::ZERO,
            frames: 0,
        })
    }

    /// Runs until `workload` is done; `stuck` names the failure.
    fn run(
        &mut self,
        workload: &mut dyn Workload,
        stuck: impl Fn(Instant, &'static str) -> TcpipError,
    ) -> Result<(), TcpipError> {
        let limit = self.now + HORIZON;
        let mut steps_here = 0u32;
        loop {
            self.settle(workload);
            if workload.done() {
                return Ok(());
            }
            let now = self.now;
            let next = [self.radio.poll_timeout(), workload.poll_at()]
                .into_iter()
                .chain(self.stations.iter().map(Station::next_wake))
                .chain(self.hosts.iter_mut().map(|h| h.poll_at(now)))
                .flatten()
                .min()
                .ok_or_else(|| stuck(now, "nothing left to happen"))?
                .max(now);
            steps_here = if next == now { steps_here + 1 } else { 0 };
            if steps_here > MAX_STEPS_AT_ONE_INSTANT {
                return Err(stuck(now, "components kept asking for attention"));
            }
            if next > limit {
                return Err(stuck(now, "the horizon passed"));
            }
            self.now = next;
            if self.radio.poll_timeout().is_some_and(|t| t <= next) {
                self.radio.handle_timeout(next);
            }
            for host in &mut self.hosts {
                host.ax25_mut().handle_timeout(next);
            }
        }
    }

    /// Moves datagrams and frames at `self.now` until nothing moves. KISS
    /// gives the hosts no carrier or key-up hints.
    fn settle(&mut self, workload: &mut dyn Workload) {
        let now = self.now;
        loop {
            let mut busy = false;
            for host in &mut self.hosts {
                host.poll(now);
            }
            workload.step(&mut self.hosts, now);
            for (host, station) in self.hosts.iter_mut().zip(&mut self.stations) {
                host.poll(now);
                while let Some(frame) = host.ax25_mut().poll_transmit(now) {
                    busy = true;
                    station.send(now, frame);
                }
            }
            for (i, station) in self.stations.iter_mut().enumerate() {
                busy |= station.shuttle(now, StationId(i), &mut self.radio);
            }
            while let Some(event) = self.radio.poll_event() {
                busy = true;
                self.on_medium_event(now, event);
            }
            while let Some(delivery) = self.radio.poll_delivery() {
                busy = true;
                if let (true, Some(s)) =
                    (delivery.is_intact(), self.stations.get_mut(delivery.to.0))
                {
                    s.receive(now, delivery.frame, 0);
                }
            }
            for (host, station) in self.hosts.iter_mut().zip(&mut self.stations) {
                while let Some((frame, _)) = station.poll_delivery(now) {
                    busy = true;
                    host.ax25_mut().handle_frame(now, &frame);
                }
            }
            if !busy {
                break;
            }
        }
    }

    fn on_medium_event(&mut self, now: Instant, event: MediumEvent) {
        let others = |station: StationId| (0..2).filter(move |i| *i != station.0);
        match event {
            MediumEvent::TransmitterKeyed { station, .. } => {
                for i in others(station) {
                    self.stations[i].other_keyed();
                }
            }
            MediumEvent::TransmissionEnded { station, at } => {
                for i in others(station) {
                    self.stations[i].other_unkeyed(at);
                }
            }
            MediumEvent::FrameSent {
                station, octets, ..
            } => {
                self.frames += 1;
                if let Some(s) = self.stations.get_mut(station.0) {
                    s.frame_sent(now, octets);
                }
            }
            _ => {}
        }
    }
}

/// Simulates one FTP-like transfer of `message_octets` with Table IV's
/// settings for `config.window`, through `config.path`.
pub fn run_tcpip_transfer(
    config: &TransferConfig,
    message_octets: usize,
    streams: &Streams,
) -> Result<TcpipOutcome, TcpipError> {
    let mut bench = Bench::new(config, streams)?;
    let stuck = |at: Instant, why| TcpipError::Stuck {
        bit_rate: config.bit_rate,
        window: config.window,
        at_s: at.as_micros() as f64 / 1e6,
        why,
    };
    let addresses = Addresses::standard();
    let ping = PingConfig {
        target: addresses.ipv4[1],
        ident: 0x21,
        count: 1,
        payload_octets: 8,
        interval: Duration::from_secs(1),
        wait: Duration::from_secs(120),
    };
    let mut up = Ping::start(&mut bench.hosts, &ping, bench.now).map_err(TcpipError::Workload)?;
    bench.run(&mut up, stuck)?;
    if up.report().received != 1 {
        return Err(stuck(bench.now, "the AX.25 link did not come up"));
    }
    let mut payload = streams.stream("payload");
    let data: Vec<u8> = (0..message_octets)
        .map(|_| payload.below(256) as u8)
        .collect();
    let before = counters(&bench.hosts);
    let frames_before = bench.frames;
    let tcp = TcpConfig::ronan_table_4(config.window);
    let mut ft = FileTransfer::start(
        &mut bench.hosts,
        addresses.ipv4_address(1),
        &tcp,
        data,
        bench.now,
    )
    .map_err(TcpipError::Workload)?;
    bench.run(&mut ft, stuck)?;
    if let Some(why) = ft.failure() {
        return Err(TcpipError::Workload(why.to_string()));
    }
    let report = ft.report();
    if !report.byte_exact {
        return Err(TcpipError::Workload(format!(
            "the receiver got {} octets that differ from the {message_octets} sent",
            report.received_octets
        )));
    }
    let after = counters(&bench.hosts);
    let delta = |i: usize, f: fn(&linklab_ip::TcpCounters) -> u64| f(&after[i]) - f(&before[i]);
    Ok(TcpipOutcome {
        transfer: report.transfer_time,
        sender_segments: delta(0, |c| c.segments),
        receiver_segments: delta(2, |c| c.segments),
        header_octets: delta(0, |c| c.datagram_octets - c.payload_octets)
            + delta(2, |c| c.datagram_octets - c.payload_octets),
        retransmitted: delta(0, |c| c.repeated_segments),
        spurious: delta(3, |c| c.repeated_segments),
        frames: bench.frames - frames_before,
    })
}

/// Sender tx, sender rx, receiver tx, receiver rx sniffer counters.
fn counters(hosts: &[Host; 2]) -> [linklab_ip::TcpCounters; 4] {
    let d = |i: usize| hosts[i].ax25().device();
    [
        d(0).tx_sniffer().counters(),
        d(0).rx_sniffer().counters(),
        d(1).tx_sniffer().counters(),
        d(1).rx_sniffer().counters(),
    ]
}

/// One simulated row of the TCP/IP column.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TcpipRow {
    /// Radio bit rate, bit/s.
    pub bit_rate: u32,
    /// Window k.
    pub window: u8,
    /// Transfer time, s (95 %).
    pub transfer: ConfidenceInterval,
    /// Means per transfer of the other [`TcpipOutcome`] counts.
    pub sender_segments: f64,
    /// Receiver's segments (acknowledgements).
    pub receiver_segments: f64,
    /// IP and TCP header octets, both directions.
    pub header_octets: f64,
    /// Retransmitted segments.
    pub retransmitted: f64,
    /// Spurious (already received) segments.
    pub spurious: f64,
    /// AX.25 frames on the air.
    pub frames: f64,
}

fn replicate(
    config: &TransferConfig,
    message_octets: usize,
    replications: u64,
    seed: u64,
    progress: &dyn Progress,
) -> Result<TcpipRow, TcpipError> {
    let failure = Mutex::new(None);
    let report = Runner::new(seed, replications).run_parallel(THREADS, |streams| {
        let mut out = ReplicationOutput::new();
        match run_tcpip_transfer(config, message_octets, &streams) {
            Ok(o) => {
                out.value("transfer_s", o.transfer.as_secs_f64())
                    .value("sender_segments", o.sender_segments as f64)
                    .value("receiver_segments", o.receiver_segments as f64)
                    .value("header_octets", o.header_octets as f64)
                    .value("retransmitted", o.retransmitted as f64)
                    .value("spurious", o.spurious as f64)
                    .value("frames", o.frames as f64);
            }
            Err(e) => {
                if let Ok(mut f) = failure.lock() {
                    f.get_or_insert(e);
                }
            }
        }
        progress.advance(1, "Ronan Tables V, VII: TCP/IP through host and TNC");
        out
    });
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    let ci = |name| {
        report
            .ci(name)
            .ok_or(TcpipError::Ronan(RonanError::Transfer(
                crate::TransferError::TooFewReplications { replications },
            )))
    };
    Ok(TcpipRow {
        bit_rate: config.bit_rate,
        window: config.window,
        transfer: ci("transfer_s")?,
        sender_segments: ci("sender_segments")?.mean,
        receiver_segments: ci("receiver_segments")?.mean,
        header_octets: ci("header_octets")?.mean,
        retransmitted: ci("retransmitted")?.mean,
        spurious: ci("spurious")?.mean,
        frames: ci("frames")?.mean,
    })
}

/// Simulates every bit rate and window of the CM-CL experiment `config`
/// with TCP/IP in place of the DTN application.
pub fn simulate(
    config: &MeasuredConfig,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<Vec<TcpipRow>, TcpipError> {
    let replications = if opts.quick {
        config.quick_replications
    } else {
        config.replications
    };
    let cells = config.bit_rates_bps.len() * config.windows.len();
    progress.add_work(replications * cells as u64);
    let mut rows = Vec::with_capacity(cells);
    for &rate in &config.bit_rates_bps {
        for &window in &config.windows {
            let transfer = config.transfer_config(rate, window);
            rows.push(replicate(
                &transfer,
                config.message_octets,
                replications,
                opts.seed,
                progress,
            )?);
        }
    }
    Ok(rows)
}

/// Tables V (1200 bit/s) and VII (9600 bit/s), the TCP/IP column: the
/// simulated FTP-like transfer through host and KISS TNC, with the CM-CL
/// column's calibration, against the published times; with where TCP's
/// headers, acknowledgements and retransmissions go.
pub fn tables_5_7_tcpip(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, TcpipError> {
    let config = MeasuredConfig::built_in()?;
    let reference = published().map_err(RonanError::from)?;
    let rows = simulate(&config, opts, progress)?;
    let mut section = Section {
        heading: "Tables V and VII: TCP/IP over AX.25 through host and KISS TNC".into(),
        text: text(&config),
        ..Section::default()
    };
    let mut table = Table {
        id: "ronan_tables_5_7_tcpip".into(),
        title: "Tables V and VII, TCP/IP column: 7182 octets by TCP over AX.25 VC with Table \
                IV's settings, published and simulated through host and KISS TNC"
            .into(),
        columns: [
            "bit_rate_bps",
            "window",
            "paper_tcpip_s",
            "simulated_s",
            "ci95_s",
            "gap_%",
            "paper_ax25_cl_s",
            "data_segments_min",
            "sender_segments",
            "ack_segments",
            "header_octets",
            "retransmitted",
            "spurious",
            "frames",
        ]
        .map(String::from)
        .into(),
        rows: Vec::new(),
    };
    for row in &rows {
        let Some(p) = published_row(&reference, row.bit_rate, row.window) else {
            continue;
        };
        let mss = 128 * usize::from(row.window);
        table.rows.push(vec![
            row.bit_rate.to_string(),
            row.window.to_string(),
            format!("{:.2}", p.tcpip_s),
            format!("{:.2}", row.transfer.mean),
            format!("{:.2}", row.transfer.half_width),
            format!("{:+.1}", 100.0 * (row.transfer.mean / p.tcpip_s - 1.0)),
            format!("{:.2}", p.ax25_cm_cl_s),
            config.message_octets.div_ceil(mss).to_string(),
            format!("{:.1}", row.sender_segments),
            format!("{:.1}", row.receiver_segments),
            format!("{:.0}", row.header_octets),
            format!("{:.1}", row.retransmitted),
            format!("{:.1}", row.spurious),
            format!("{:.1}", row.frames),
        ]);
        let name = if row.bit_rate == 1200 { "V" } else { "VII" };
        section.checks.push(
            Check::relative(
                format!("ronan-ax25/table{name}/tcpip/window{}", row.window),
                Paper::RonanAx25,
                format!(
                    "Table {name}: TCP/IP (FTP) transfer of 7182 octets at {} bit/s, window {}",
                    row.bit_rate, row.window
                ),
                p.tcpip_s,
                row.transfer.mean,
                "s",
                TOLERANCE,
            )
            .with_note(note(row, p, &config)),
        );
    }
    section.tables.push(table);
    Ok(section)
}

fn note(row: &TcpipRow, p: &Published, config: &MeasuredConfig) -> String {
    format!(
        "smoltcp 0.14 (RFC 6298 RTO, Reno, Nagle, 10 ms delayed ACK) over AX.25 VC with Table \
         IV's MTU {mtu}, MSS {mss} and window {win} octets, N1 = MTU, behind the CM-CL \
         column's host ({lat} ms) and KISS TNC ({pf} ms per frame, carrier hold {hold} ms), \
         not refitted; AX.25 link up before the SYN, as FTP's control connection leaves it; \
         no FTP control traffic. Per transfer: {seg:.1} segments from the sender, {ack:.1} \
         from the receiver, {hdr:.0} octets of IP and TCP headers, {retx:.1} retransmitted \
         ({sp:.1} spurious), {frames:.1} AX.25 frames. The paper's CM-CL time for this row is \
         {cl:.2} s.",
        mtu = 128 * usize::from(row.window) + 40,
        mss = 128 * usize::from(row.window),
        win = 256 * usize::from(row.window),
        lat = config.host_latency_ms,
        pf = config.tnc_per_frame_ms,
        hold = config.carrier_hold_ms,
        seg = row.sender_segments,
        ack = row.receiver_segments,
        hdr = row.header_octets,
        retx = row.retransmitted,
        sp = row.spurious,
        frames = row.frames,
        cl = p.ax25_cm_cl_s,
    )
}

fn text(config: &MeasuredConfig) -> String {
    format!(
        "The paper's TCP/IP column: the same 7182-octet file sent by FTP between the two \
         Linux hosts over TCP/IP over AX.25 connected mode, with MTU, MSS and TCP window set \
         per window k as Table IV says (MTU 128 k + 40, MSS 128 k, window 256 k). linklab runs \
         smoltcp 0.14 on each host over the real AX.25 engine (IP in I frames, PID 0xCC, one \
         datagram per frame), each host behind the very host and KISS TNC path of the CM-CL \
         column with its calibrated values, not refitted: {lat} ms host latency each way, \
         {serial} bit/s serial link, {pf} ms per frame in the TNC, {hold} ms carrier hold, \
         T1 {t1} s, T2 {t2} s with the Linux acknowledgement policy. What TCP/IP adds: 40 \
         octets of IPv4 and TCP header on every segment (smoltcp sends no timestamps; the SYN \
         carries options), its own acknowledgements (each an I frame of 40 octets from the \
         receiver, or riding on the AX.25 RR's turnaround), the connection's SYN and FIN \
         exchanges, and retransmissions when its RTO (RFC 6298: 1 s initial, 1-60 s) expires \
         before an acknowledgement crosses the slow half-duplex channel; over AX.25 VC the \
         link delivers every copy, so each is spurious. The table counts each per transfer. \
         Not modelled: FTP's control connection and its commands (the link is brought up by \
         a ping before the data connection opens), the Linux TCP stack's own timers (200 ms \
         RTO floor, delayed ACK up to 200 ms) and its congestion window.\n\
         Where it misses: at window 1 (both bit rates) the simulation is far slower than \
         measured: every 128-octet segment is its own AX.25 window, and the receiver's TCP \
         acknowledgement of it (smoltcp acknowledges within 10 ms) is one more I frame that \
         must cross the host, TNC and carrier hold, so each of the ~57 data segments costs \
         two turnarounds; a Linux receiver that held its ACK long enough to ride with the \
         next exchange would save most of them. Elsewhere the gap follows the spurious \
         retransmissions of the connection's first tens of seconds (an RTO from the SYN's \
         short round trip expiring behind full windows, go-back-N re-sending the flight), \
         worst at 1200 bit/s window 4. These rows fail at the issue's 15 %, honestly; the \
         calibration was not refitted for them.",
        lat = config.host_latency_ms,
        serial = config.serial_rate_bps,
        pf = config.tnc_per_frame_ms,
        hold = config.carrier_hold_ms,
        t1 = config.t1_s,
        t2 = config.t2_s,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_transfer_through_host_and_tnc_is_repeatable_and_counted() {
        let config = MeasuredConfig::built_in().unwrap().transfer_config(9600, 7);
        let streams = Streams::new(3).replication(0);
        let a = run_tcpip_transfer(&config, 7182, &streams).unwrap();
        let b = run_tcpip_transfer(&config, 7182, &streams).unwrap();
        assert_eq!(a, b);
        // 7182 octets in segments of at most 896: at least 9 data segments
        // plus SYN and FIN, 40 header octets each.
        assert!(a.sender_segments >= 11, "{a:?}");
        assert!(a.header_octets >= 40 * (a.sender_segments + a.receiver_segments));
        assert!(a.spurious <= a.retransmitted);
        assert!(a.transfer > Duration::from_secs(5), "{a:?}");
    }
}
