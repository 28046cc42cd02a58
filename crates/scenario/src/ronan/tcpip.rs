//! Tables V and VII of Ronan, Long and Walsh, the TCP/IP column: the
//! 7182-octet file sent by FTP over TCP/IP over AX.25 with Table IV's MTU,
//! MSS and TCP window, each host behind the same host and KISS TNC path,
//! with the same calibrated values, as the AX.25 CM-CL column of
//! [`super::measured`] (no refit).
//!
//! Each station is a smoltcp 0.14 stack over an AX.25 interface
//! ([`linklab_ip::Host`]) whose frames cross the host latency, the serial
//! link, the TNC's processor and the carrier hold of
//! [`crate::transfer::KissPath`] on their way to the radio and back.
//!
//! The paper sets MTU and TCP window on the Linux hosts and says nothing of
//! the AX.25 mode IP used. Linux sends IP in UI frames unless a route or
//! the interface's `ip_default_mode` asks for connected mode (`axparms
//! --route add ... --ipmode V`; the default mode is datagram), so the checked rows carry IP in UI frames
//! ([`Encapsulation::Datagram`]); the same runs in connected mode
//! ([`Encapsulation::VirtualCircuit`], the AX.25 engines behaving as the
//! Linux stack of the CM-CL column) are shown beside them. Both hosts use
//! the TCP timestamps option (RFC 7323 section 3), as two Linux hosts do
//! by default (`net.ipv4.tcp_timestamps` = 1): every segment carries 12
//! octets of options and so 12 octets less data than Table IV's MSS (116
//! octets a segment at window 1: 62 data segments, not 57). A ping first
//! opens the path (and, in connected mode, the AX.25 link), as FTP's
//! control connection would have; the time runs from the data
//! connection's SYN to the last octet at the receiver.

use core::time::Duration;
use linklab_core::{earliest, Engine, Instant, Streams};

use crate::radio_ip::{hosts, Addresses, HostSetup, SimError};
use linklab_channel::{Medium, MediumEvent, RadioChannel, RadioConfig, StationId};
use linklab_ip::apps::{Ping, PingConfig};

use crate::workload::{FileTransfer, Workload};
use linklab_ip::{Encapsulation, Host, TcpConfig};
use linklab_sim::{
    drive, ConfidenceInterval, DriveError, Metric, ReplicationOutput, Runner, World,
};
use thiserror::Error;

use super::reference::{published_row, Published};
use super::{MeasuredConfig, RonanError, TRANSFER_S};
use crate::published::load;
use crate::report::{Check, Paper, Progress, RunOptions, Section, Table};
use crate::transfer::{replication_stations, HostAndTnc, TransferConfig};
use crate::{check_note, section_text};

/// Largest relative gap allowed between the simulated TCP/IP transfer
/// and the published one: wider than the AX.25 columns', as smoltcp is
/// not the Linux TCP the paper measured (see `note`).
const TOLERANCE: f64 = 0.15;

/// Octets of TCP options on every segment of a connection using
/// timestamps (RFC 7323 3: kind 8, length 10, padded to 12).
const TIMESTAMPS_OCTETS: usize = 12;

/// Virtual-time limit of one phase of a run.
const HORIZON: Duration = Duration::from_secs(3600);

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
struct IpTestbed {
    hosts: [Host; 2],
    stations: [HostAndTnc; 2],
    radio: RadioChannel,
    now: Instant,
    frames: u64,
}

impl IpTestbed {
    fn new(
        config: &TransferConfig,
        encapsulation: Encapsulation,
        streams: &Streams,
    ) -> Result<IpTestbed, TcpipError> {
        let path = config.path.ok_or(TcpipError::Workload(
            "the TCP/IP column needs a host and KISS TNC path".into(),
        ))?;
        let radio_stations = replication_stations(config, streams);
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
        setup.encapsulation = encapsulation;
        let mut hosts = hosts(&setup, streams)?;
        // Linux's default (module doc).
        for host in &mut hosts {
            host.set_tcp_timestamps(true);
        }
        Ok(IpTestbed {
            hosts,
            stations: [HostAndTnc::new(&path), HostAndTnc::new(&path)],
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
        let start = self.now;
        let mut run = Run {
            testbed: self,
            workload,
        };
        drive(&mut run, start, start + HORIZON)
            .map(|_| ())
            .map_err(|e| match e {
                DriveError::Stalled { at } => stuck(at, "nothing left to happen"),
                DriveError::Livelock { at } => stuck(at, "components kept asking for attention"),
                DriveError::Horizon { at, .. } => stuck(at, "the horizon passed"),
            })
    }

    /// Moves datagrams and frames at `now` until nothing moves. KISS
    /// gives the hosts no carrier or key-up hints.
    fn settle(&mut self, workload: &mut dyn Workload, now: Instant) {
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

/// An [`IpTestbed`] running a workload: what [`drive`] takes through time.
struct Run<'a> {
    testbed: &'a mut IpTestbed,
    workload: &'a mut dyn Workload,
}

impl World for Run<'_> {
    fn settle(&mut self, now: Instant) {
        self.testbed.settle(self.workload, now);
    }

    fn done(&self) -> bool {
        self.workload.done()
    }

    /// The earliest of the channel's, the workload's, the host and TNC
    /// paths' and the hosts' wake-ups.
    fn next_wake(&mut self, now: Instant) -> Option<Instant> {
        let testbed = &mut *self.testbed;
        earliest(
            [testbed.radio.poll_timeout(), self.workload.poll_at()]
                .into_iter()
                .chain(testbed.stations.iter().map(HostAndTnc::next_wake))
                .chain(testbed.hosts.iter_mut().map(|h| h.poll_at(now))),
        )
    }

    fn advance(&mut self, to: Instant) {
        let testbed = &mut *self.testbed;
        testbed.now = to;
        if testbed.radio.poll_timeout().is_some_and(|t| t <= to) {
            testbed.radio.handle_timeout(to);
        }
        for host in &mut testbed.hosts {
            host.ax25_mut().handle_timeout(to);
        }
    }
}

/// Simulates one FTP-like transfer of `message_octets` with Table IV's
/// settings for `config.window`, through `config.path`, IP carried as
/// `encapsulation` says.
pub fn run_tcpip_transfer(
    config: &TransferConfig,
    message_octets: usize,
    encapsulation: Encapsulation,
    streams: &Streams,
) -> Result<TcpipOutcome, TcpipError> {
    let mut testbed = IpTestbed::new(config, encapsulation, streams)?;
    let stuck = |at: Instant, why| TcpipError::Stuck {
        bit_rate: config.bit_rate,
        window: config.window,
        at_s: at.as_secs_f64(),
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
    let mut up =
        Ping::start(&mut testbed.hosts, &ping, testbed.now).map_err(TcpipError::Workload)?;
    testbed.run(&mut up, stuck)?;
    if up.report().received != 1 {
        return Err(stuck(testbed.now, "the first ping went unanswered"));
    }
    let mut payload = streams.stream("payload");
    let data: Vec<u8> = (0..message_octets)
        .map(|_| payload.below(256) as u8)
        .collect();
    let before = counters(&testbed.hosts);
    let frames_before = testbed.frames;
    let tcp = TcpConfig::ronan_table_4(config.window);
    let mut ft = FileTransfer::start(
        &mut testbed.hosts,
        addresses.ipv4_address(1),
        &tcp,
        data,
        testbed.now,
    )
    .map_err(TcpipError::Workload)?;
    testbed.run(&mut ft, stuck)?;
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
    let after = counters(&testbed.hosts);
    let delta = |i: usize, f: fn(&linklab_ip::TcpCounters) -> u64| f(&after[i]) - f(&before[i]);
    Ok(TcpipOutcome {
        transfer: report.transfer_time,
        sender_segments: delta(0, |c| c.segments),
        receiver_segments: delta(2, |c| c.segments),
        header_octets: delta(0, |c| c.datagram_octets - c.payload_octets)
            + delta(2, |c| c.datagram_octets - c.payload_octets),
        retransmitted: delta(0, |c| c.repeated_segments),
        spurious: delta(3, |c| c.repeated_segments),
        frames: testbed.frames - frames_before,
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
    /// How IP crossed AX.25.
    pub encapsulation: Encapsulation,
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

/// Octets of TCP and IP headers on the air.
const HEADER_OCTETS: Metric = Metric::new("header_octets");
/// Segments the sending host transmitted.
const SENDER_SEGMENTS: Metric = Metric::new("sender_segments");
/// Segments the receiving host transmitted.
const RECEIVER_SEGMENTS: Metric = Metric::new("receiver_segments");
/// Retransmitted segments.
const RETRANSMITTED: Metric = Metric::new("retransmitted");
/// Spurious (already received) segments.
const SPURIOUS: Metric = Metric::new("spurious");
/// AX.25 frames on the air.
const FRAMES: Metric = Metric::new("frames");

fn replicate(
    config: &TransferConfig,
    message_octets: usize,
    encapsulation: Encapsulation,
    replications: u64,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<TcpipRow, TcpipError> {
    let report = Runner::new(opts.seed, replications).try_run_parallel(opts.jobs, |streams| {
        let outcome = run_tcpip_transfer(config, message_octets, encapsulation, &streams);
        progress.advance(1, "Ronan Tables V, VII: TCP/IP through host and TNC");
        let o = outcome?;
        let mut out = ReplicationOutput::new();
        out.value(TRANSFER_S, o.transfer.as_secs_f64())
            .value(SENDER_SEGMENTS, o.sender_segments as f64)
            .value(RECEIVER_SEGMENTS, o.receiver_segments as f64)
            .value(HEADER_OCTETS, o.header_octets as f64)
            .value(RETRANSMITTED, o.retransmitted as f64)
            .value(SPURIOUS, o.spurious as f64)
            .value(FRAMES, o.frames as f64);
        Ok::<_, TcpipError>(out)
    })?;
    let ci = |metric| {
        report
            .ci(metric)
            .ok_or(TcpipError::Ronan(RonanError::Transfer(
                crate::TransferError::TooFewReplications { replications },
            )))
    };
    Ok(TcpipRow {
        encapsulation,
        bit_rate: config.bit_rate,
        window: config.window,
        transfer: ci(TRANSFER_S)?,
        sender_segments: ci(SENDER_SEGMENTS)?.mean,
        receiver_segments: ci(RECEIVER_SEGMENTS)?.mean,
        header_octets: ci(HEADER_OCTETS)?.mean,
        retransmitted: ci(RETRANSMITTED)?.mean,
        spurious: ci(SPURIOUS)?.mean,
        frames: ci(FRAMES)?.mean,
    })
}

/// Simulates every bit rate and window of the CM-CL experiment `config`
/// with TCP/IP, carried as `encapsulation` says, in place of the DTN
/// application. Every run does `config.replications`, quick or not.
pub fn simulate(
    config: &MeasuredConfig,
    encapsulation: Encapsulation,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<Vec<TcpipRow>, TcpipError> {
    // One transfer takes milliseconds to simulate: a quick run does the
    // full count too, so that quick and full runs report the same rows.
    let replications = config.replications;
    let cells = config.bit_rates_bps.len() * config.windows.len();
    progress.add_work(replications * cells as u64);
    let mut rows = Vec::with_capacity(cells);
    for &rate in &config.bit_rates_bps {
        for &window in &config.windows {
            let transfer = config.transfer_config(rate, window);
            rows.push(replicate(
                &transfer,
                config.message_octets,
                encapsulation,
                replications,
                opts,
                progress,
            )?);
        }
    }
    Ok(rows)
}

/// Tables V (1200 bit/s) and VII (9600 bit/s), the TCP/IP column: the
/// simulated FTP-like transfer through host and KISS TNC, with the CM-CL
/// column's calibration, against the published times, IP in UI frames
/// (checked) and in connected mode (shown); with where TCP's headers,
/// acknowledgements and retransmissions go.
pub fn tables_5_7_tcpip(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, TcpipError> {
    let config = MeasuredConfig::built_in()?;
    let reference = load::<Published>().map_err(RonanError::from)?;
    let datagram = simulate(&config, Encapsulation::Datagram, opts, progress)?;
    let vc = simulate(&config, Encapsulation::VirtualCircuit, opts, progress)?;
    let mut section = Section {
        heading: "Tables V and VII: TCP/IP over AX.25 through host and KISS TNC".into(),
        text: text(&config),
        ..Section::default()
    };
    let mut table = Table {
        id: "ronan-tables-5-7-tcpip".into(),
        title: "Tables V and VII, TCP/IP column: 7182 octets by TCP over AX.25 with Table IV's \
                settings, published and simulated through host and KISS TNC, IP in UI frames \
                (Linux's default) and in connected mode; timed from the data connection's SYN \
                to the last octet at the receiver"
            .into(),
        columns: [
            "bit_rate_bps",
            "window",
            "paper_tcpip_s",
            "simulated_s",
            "ci95_s",
            "gap_%",
            "vc_mode_s",
            "vc_gap_%",
            "paper_ax25_cl_s",
            "data_segments_min",
            "sender_segments",
            "ack_segments",
            "header_octets",
            "retransmitted",
            "spurious",
            "frames",
            "vc_frames",
        ]
        .map(String::from)
        .into(),
        rows: Vec::new(),
    };
    for (row, vc) in datagram.iter().zip(&vc) {
        let Some(p) = published_row(&reference, row.bit_rate, row.window) else {
            continue;
        };
        let gap = |t: f64| format!("{:+.1}", 100.0 * (t / p.tcpip_s - 1.0));
        let payload = 128 * usize::from(row.window) - TIMESTAMPS_OCTETS;
        table.rows.push(vec![
            row.bit_rate.to_string(),
            row.window.to_string(),
            format!("{:.2}", p.tcpip_s),
            format!("{:.2}", row.transfer.mean),
            format!("{:.2}", row.transfer.half_width),
            gap(row.transfer.mean),
            format!("{:.2}", vc.transfer.mean),
            gap(vc.transfer.mean),
            format!("{:.2}", p.ax25_cm_cl_s),
            config.message_octets.div_ceil(payload).to_string(),
            format!("{:.1}", row.sender_segments),
            format!("{:.1}", row.receiver_segments),
            format!("{:.0}", row.header_octets),
            format!("{:.1}", row.retransmitted),
            format!("{:.1}", row.spurious),
            format!("{:.1}", row.frames),
            format!("{:.1}", vc.frames),
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
            .with_note(note(row, vc, p, &config)),
        );
    }
    section.tables.push(table);
    Ok(section)
}

fn note(row: &TcpipRow, vc: &TcpipRow, p: &Published, config: &MeasuredConfig) -> String {
    let mss = 128 * usize::from(row.window);
    let retransmission = if row.transfer.mean / p.tcpip_s - 1.0 > TOLERANCE / 2.0 {
        format!(
            " {}",
            check_note!("ronan-ax25/tableV-VII/tcpip/window*/retransmission")
        )
    } else {
        String::new()
    };
    let bound = p.tcpip_s * (1.0 + TOLERANCE);
    let (low, high) = (
        row.transfer.mean - row.transfer.half_width,
        row.transfer.mean + row.transfer.half_width,
    );
    let unsettled = if low <= bound && bound <= high {
        format!(
            " {}",
            check_note!(
                "ronan-ax25/tableV-VII/tcpip/window*/unsettled",
                low = format!("{low:.1}"),
                high = format!("{high:.1}"),
                tol = format!("{:.0}", 100.0 * TOLERANCE),
                bound = format!("{bound:.1}"),
                n = row.transfer.n,
            )
        )
    } else {
        String::new()
    };
    check_note!(
        "ronan-ax25/tableV-VII/tcpip/window*",
        payload = mss - TIMESTAMPS_OCTETS,
        mtu = mss + 40,
        mss = mss,
        win = 2 * mss,
        lat = config.host_latency_ms,
        pf = config.tnc_per_frame_ms,
        hold = config.carrier_hold_ms,
        seg = format!("{:.1}", row.sender_segments),
        data = config.message_octets.div_ceil(mss - TIMESTAMPS_OCTETS),
        ack = format!("{:.1}", row.receiver_segments),
        hdr = format!("{:.0}", row.header_octets),
        retx = format!("{:.1}", row.retransmitted),
        sp = format!("{:.1}", row.spurious),
        frames = format!("{:.1}", row.frames),
        vc_t = format!("{:.1}", vc.transfer.mean),
        vc_gap = format!("{:+.1}", 100.0 * (vc.transfer.mean / p.tcpip_s - 1.0)),
        vc_frames = format!("{:.1}", vc.frames),
        cl = format!("{:.2}", p.ax25_cm_cl_s),
        retransmission = retransmission,
        unsettled = unsettled,
    )
}

fn text(config: &MeasuredConfig) -> String {
    section_text!(
        "ronan-ax25/tables-5-7-tcpip",
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
        let a = run_tcpip_transfer(&config, 7182, Encapsulation::VirtualCircuit, &streams).unwrap();
        let b = run_tcpip_transfer(&config, 7182, Encapsulation::VirtualCircuit, &streams).unwrap();
        assert_eq!(a, b);
        // 7182 octets in segments of at most 896: at least 9 data segments
        // plus SYN and FIN, 40 header octets each.
        assert!(a.sender_segments >= 11, "{a:?}");
        assert!(a.header_octets >= 40 * (a.sender_segments + a.receiver_segments));
        assert!(a.spurious <= a.retransmitted);
        assert!(a.transfer > Duration::from_secs(5), "{a:?}");
    }

    #[test]
    fn in_ui_frames_a_tcp_window_is_one_key_up_and_its_acks_the_next() {
        let config = MeasuredConfig::built_in().unwrap().transfer_config(1200, 1);
        let streams = Streams::new(5).replication(0);
        let ui = run_tcpip_transfer(&config, 7182, Encapsulation::Datagram, &streams).unwrap();
        let vc =
            run_tcpip_transfer(&config, 7182, Encapsulation::VirtualCircuit, &streams).unwrap();
        // With timestamps (12 octets of options) 62 data segments of at
        // most 116 octets, 52 octets of header each; one acknowledgement
        // each.
        assert!(ui.sender_segments >= 62 + 2, "{ui:?}");
        assert!(ui.receiver_segments >= 62, "{ui:?}");
        assert!(ui.header_octets >= 52 * (ui.sender_segments + ui.receiver_segments));
        // Every UI frame is a datagram; connected mode adds the AX.25
        // acknowledgements (an RR answering each poll at window 1).
        assert_eq!(ui.frames, ui.sender_segments + ui.receiver_segments);
        assert!(
            vc.frames >= 2 * (vc.sender_segments + vc.receiver_segments) - 4,
            "{vc:?}"
        );
        assert!(ui.transfer < vc.transfer, "{ui:?} {vc:?}");
        assert!(ui.spurious <= ui.retransmitted);
    }
}
