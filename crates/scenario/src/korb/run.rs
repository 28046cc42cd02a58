//! One replication of each of Korb's experiments on the [`Testbed`]:
//! the ping sequence of section 3.1, one FTP transfer (sections 3.3 and
//! 3.4) and five simultaneous puts (section 3.5).

use core::time::Duration;

use crate::korb::bsd42::{Bsd42Config, Bsd42Endpoint, Bsd42Sender};
use linklab_core::{Instant, Streams};
use linklab_ip::apps::{FileReceiver, Ping, PingConfig};

use crate::workload::{FileTransfer, Workload};
use linklab_ip::{Host, TcpCounters, X25Interface};

use super::testbed::{
    ip_address, Bsd42Flow, FtpSender, Testbed, TestbedConfig, TestbedError, IPV4,
};

/// The file of section 3.3, octets.
pub const FTP_FILE_OCTETS: usize = 175_426;
/// Each file of section 3.5 ("five 100K byte files"), octets.
pub const MULTI_FILE_OCTETS: usize = 100_000;
/// Files put at once in section 3.5.
pub const MULTI_FILES: usize = 5;
/// Pings per size in section 3.1.
pub const PINGS: u16 = 100;
/// First sequence number of the paper's "50-100" statistics (1-based).
pub const SETTLED_FROM: usize = 50;

/// Longest virtual time one experiment may take.
const HORIZON: Duration = Duration::from_secs(4 * 3600);

/// Which way the file goes (section 3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Direction {
    /// `put`: from Purdue (host 0) to CSNET (host 1).
    Put,
    /// `get`: from CSNET (host 1) to Purdue (host 0).
    Get,
}

impl Direction {
    /// The FTP command's name.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Put => "put",
            Direction::Get => "get",
        }
    }
}

/// Round trips of the ping sequence, ms, in sequence order (`None`: lost).
#[derive(Debug, Clone, PartialEq)]
pub struct PingOutcome {
    /// The 64-octet pings (sent first, with no circuit open).
    pub small: Vec<Option<f64>>,
    /// The 512-octet pings that follow them.
    pub large: Vec<Option<f64>>,
}

/// One ping run of `count` requests of `size` octets (ICMP header and
/// data, as `ping -s size-8`), one a second.
fn ping(testbed: &mut Testbed, size: usize, count: u16) -> Result<Vec<Option<f64>>, TestbedError> {
    let config = PingConfig {
        target: IPV4[1],
        ident: size as u16,
        count,
        payload_octets: size.saturating_sub(8),
        interval: Duration::from_secs(1),
        wait: Duration::from_secs(60),
    };
    let now = testbed.now();
    let mut ping =
        Ping::start(testbed.hosts_mut(), &config, now).map_err(TestbedError::Workload)?;
    testbed.run(&mut [&mut ping], HORIZON)?;
    Ok(ping
        .rtts()
        .iter()
        .map(|r| r.map(|d| d.as_secs_f64() * 1e3))
        .collect())
}

/// Section 3.1: 100 pings of 64 octets then 100 of 512, one a second,
/// from Purdue to CSNET, starting with no circuit open.
pub fn ping_sequence(
    config: &TestbedConfig,
    streams: &Streams,
    count: u16,
) -> Result<PingOutcome, TestbedError> {
    let mut testbed = Testbed::new(config, streams)?;
    // Let LAPB and the packet layers come up (a few ms) so that the first
    // ping waits for the circuit only, as on a running system.
    testbed.idle(Duration::from_secs(1))?;
    let small = ping(&mut testbed, 64, count)?;
    let large = ping(&mut testbed, 512, count)?;
    Ok(PingOutcome { small, large })
}

/// Median of `values` (mean of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// What one or more transfers measured.
#[derive(Debug, Clone, PartialEq)]
pub struct TransferOutcome {
    /// Transfers that delivered their file intact.
    pub completed: usize,
    /// Transfers started.
    pub started: usize,
    /// The longest transfer's time (the data connection only), s.
    pub max_time_s: f64,
    /// All files' octets over the longest time, bit/s (Korb's rate: for
    /// one file FTP's "reported transfer rate", for several the paper's
    /// estimate from the longest time).
    pub rate_bps: f64,
    /// The sender's TCP counters (retransmissions).
    pub sent: TcpCounters,
    /// The receiver's TCP counters (duplicates: spurious retransmissions).
    pub received: TcpCounters,
    /// Circuits the sender opened.
    pub circuits: u64,
    /// Datagrams the sender's interface dropped (queue full).
    pub dropped: u64,
    /// Retransmission time-outs of the senders (4.2BSD senders only; 0
    /// for smoltcp's, which does not count them).
    pub timeouts: u64,
}

/// Steps a workload on the hosts in the other order, so that a workload
/// written for "host 0 sends" runs from host 1.
struct Swapped<W>(W);

impl<W: Workload<X25Interface>> Workload<X25Interface> for Swapped<W> {
    fn step(&mut self, hosts: &mut [Host<X25Interface>; 2], now: Instant) {
        hosts.swap(0, 1);
        self.0.step(hosts, now);
        hosts.swap(0, 1);
    }

    fn done(&self) -> bool {
        self.0.done()
    }

    fn poll_at(&self) -> Option<Instant> {
        self.0.poll_at()
    }
}

/// `files` transfers of `octets` each at once, in `direction`, after the
/// FTP control connection has opened the first circuit (modelled by one
/// echo exchange: the control connection's traffic is what opens it).
pub fn transfers(
    config: &TestbedConfig,
    streams: &Streams,
    direction: Direction,
    files: usize,
    octets: usize,
) -> Result<TransferOutcome, TestbedError> {
    let mut testbed = Testbed::new(config, streams)?;
    testbed.idle(Duration::from_secs(1))?;
    ping(&mut testbed, 64, 1)?;
    let now = testbed.now();
    let (sender, receiver) = match direction {
        Direction::Put => (0, 1),
        Direction::Get => (1, 0),
    };
    if let FtpSender::Bsd42(timers) = &config.sender {
        let flows = (0..files)
            .map(|i| {
                bsd42_flow(
                    &mut testbed,
                    config,
                    streams,
                    timers,
                    (sender, i),
                    octets,
                    now,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        return bsd42_transfers(testbed, sender, flows, octets);
    }
    let mut ftps = Vec::with_capacity(files);
    for i in 0..files {
        let data: Vec<u8> = (0..octets).map(|o| (o * 31 + i * 7) as u8).collect();
        let port = u16::try_from(i).unwrap_or(u16::MAX);
        let ports = (49152u16.saturating_add(port), 2000u16.saturating_add(port));
        let hosts = testbed.hosts_mut();
        if sender == 1 {
            hosts.swap(0, 1);
        }
        let ftp =
            FileTransfer::start_on(hosts, ip_address(receiver), ports, &config.tcp, data, now);
        if sender == 1 {
            hosts.swap(0, 1);
        }
        ftps.push(Swapped(ftp.map_err(TestbedError::Workload)?));
    }
    let result = {
        let mut workloads: Vec<&mut dyn Workload<X25Interface>> = if sender == 1 {
            ftps.iter_mut()
                .map(|f| f as &mut dyn Workload<X25Interface>)
                .collect()
        } else {
            ftps.iter_mut()
                .map(|f| &mut f.0 as &mut dyn Workload<X25Interface>)
                .collect()
        };
        testbed.run(&mut workloads, HORIZON)
    };
    // A transfer that did not finish by the horizon counts as failed (as
    // the paper's starred rows), not as an error of the experiment.
    match result {
        Ok(()) | Err(TestbedError::Horizon { .. }) => {}
        Err(e) => return Err(e),
    }
    let reports: Vec<_> = ftps.iter().map(|f| (f.0.report(), f.0.failure())).collect();
    let completed = reports
        .iter()
        .filter(|(r, failure)| failure.is_none() && r.byte_exact)
        .count();
    let max_time_s = reports
        .iter()
        .map(|(r, _)| r.transfer_time.as_secs_f64())
        .fold(0.0, f64::max);
    let rate_bps = if max_time_s > 0.0 {
        (files * octets) as f64 * 8.0 / max_time_s
    } else {
        0.0
    };
    let [s, r] = [sender, receiver].map(|i| testbed.hosts()[i].link());
    Ok(TransferOutcome {
        completed,
        started: files,
        max_time_s,
        rate_bps,
        sent: s.device().tx_sniffer().counters(),
        received: r.device().rx_sniffer().counters(),
        circuits: s.ip_stats().circuits_opened,
        dropped: s.stats().dropped_refused,
        timeouts: 0,
    })
}

/// The file of `octets` of flow `i` from host `sender` by a
/// [`Bsd42Sender`] (its initial sequence number from the stream
/// `"bsd42/{i}"`) to a smoltcp socket on the other host, on the ports the
/// smoltcp transfers use.
fn bsd42_flow(
    testbed: &mut Testbed,
    config: &TestbedConfig,
    streams: &Streams,
    timers: &Bsd42Config,
    (sender, i): (usize, usize),
    octets: usize,
    now: Instant,
) -> Result<Bsd42Flow, TestbedError> {
    let data: Vec<u8> = (0..octets).map(|o| (o * 31 + i * 7) as u8).collect();
    let port = u16::try_from(i).unwrap_or(u16::MAX);
    let (client, server) = (49152u16.saturating_add(port), 2000u16.saturating_add(port));
    let receiver = 1 - sender;
    let listener = FileReceiver::listen(&mut testbed.hosts_mut()[receiver], &config.tcp, server)
        .map_err(TestbedError::Workload)?;
    let iss = streams.stream(&format!("bsd42/{i}")).next_u64() as u32;
    let tcp = Bsd42Sender::connect(
        timers.clone(),
        Bsd42Endpoint {
            addr: IPV4[sender],
            port: client,
        },
        Bsd42Endpoint {
            addr: IPV4[receiver],
            port: server,
        },
        iss,
        data,
        now,
    );
    Ok(Bsd42Flow {
        sender: tcp,
        receiver: listener,
        finished: None,
        failed: None,
    })
}

/// Runs [`Bsd42Flow`]s from host `sender` and measures them as
/// [`transfers`] does.
fn bsd42_transfers(
    mut testbed: Testbed,
    sender: usize,
    mut flows: Vec<Bsd42Flow>,
    octets: usize,
) -> Result<TransferOutcome, TestbedError> {
    match testbed.run_bsd42(sender, &mut flows, HORIZON) {
        Ok(()) | Err(TestbedError::Horizon { .. }) => {}
        Err(e) => return Err(e),
    }
    let completed = flows
        .iter()
        .filter(|f| f.failed.is_none() && f.receiver.received() == f.sender.data())
        .count();
    let max_time_s = flows
        .iter()
        .map(|f| (f.finished.unwrap_or(Instant::ZERO) - f.sender.started()).as_secs_f64())
        .fold(0.0, f64::max);
    let files = flows.len();
    let rate_bps = if max_time_s > 0.0 {
        (files * octets) as f64 * 8.0 / max_time_s
    } else {
        0.0
    };
    let [s, r] = [sender, 1 - sender].map(|i| testbed.hosts()[i].link());
    Ok(TransferOutcome {
        completed,
        started: files,
        max_time_s,
        rate_bps,
        sent: s.device().tx_sniffer().counters(),
        received: r.device().rx_sniffer().counters(),
        circuits: s.ip_stats().circuits_opened,
        dropped: s.stats().dropped_refused + testbed.device_drops(),
        timeouts: flows.iter().map(|f| f.sender.stats().timeouts).sum(),
    })
}
