//! Two Linux PCs, each on the Ethernet port of an ID-1 in DD mode, in
//! virtual time: smoltcp over [`EthInterface`] for TCP (iperf), and UDP/IPv4
//! for NORM datagrams carried by this module itself (the workspace's
//! smoltcp has no UDP sockets; the 28 octets of IPv4 and UDP header are
//! written here, see [`udp_ipv4`]; [`normcl`](super::normcl) uses them).

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use core::time::Duration;
use linklab_core::{earliest, Engine, Instant, Streams};

use linklab_channel::{DdChannel, DdConfig, DdStats, Medium, StationId};
use linklab_ip::apps::{FileReceiver, FileSender};
use linklab_ip::ether::MacAddress;
use linklab_ip::{CongestionControl, EthInterface, Host, TcpConfig};
use linklab_sim::{drive, DriveError, World};
use smoltcp::wire::{IpAddress, IpCidr};
use thiserror::Error;

/// The MAC address of PC `i` (02:00:00:00:00:0i+1).
pub const fn mac(i: usize) -> MacAddress {
    [2, 0, 0, 0, 0, (i + 1) as u8]
}
/// The IPv4 address of PC `i` on the paper's network: 192.168.254.(i + 1).
pub const fn ipv4(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(192, 168, 254, (i + 1) as u8)
}
/// The IPv6 address of PC `i` on the paper's network: fec0::(i + 1).
pub const fn ipv6(i: usize) -> Ipv6Addr {
    Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, (i + 1) as u16)
}
/// The paper's two PCs' MAC addresses.
pub const MACS: [MacAddress; 2] = [mac(0), mac(1)];
/// The paper's IPv4 addresses (192.168.254.1 and .2).
pub const IPV4: [Ipv4Addr; 2] = [ipv4(0), ipv4(1)];
/// The paper's IPv6 addresses (fec0::1 and fec0::2).
pub const IPV6: [Ipv6Addr; 2] = [ipv6(0), ipv6(1)];
/// The NORM port.
pub const NORM_PORT: u16 = 6003;
/// The iperf port.
pub const IPERF_PORT: u16 = 5001;
/// Ethernet MTU.
pub const MTU: usize = 1500;

/// Why a run could not be made.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum TestbedError {
    /// A socket could not be opened or a NORM engine configured.
    #[error("set-up: {0}")]
    Setup(String),
    /// Too many wake-ups at one instant.
    #[error("livelock at {at_s:.3} s")]
    Livelock {
        /// Virtual time, seconds.
        at_s: f64,
    },
    /// The published figures did not parse.
    #[error(transparent)]
    Published(#[from] crate::published::PublishedError),
    /// A protocol missing from the published figures.
    #[error("crates/scenario/published/dstar_dd.csv has no row for {protocol}")]
    Unpublished {
        /// The protocol, as the paper names it.
        protocol: &'static str,
    },
}

/// A Linux-like TCP for iperf over the DD link: 64 KiB buffers, CUBIC,
/// Nagle, 40 ms delayed ACK (Linux's minimum), a user timeout of
/// `timeout` (`None` for the control runs).
pub fn linux_tcp(timeout: Option<Duration>) -> TcpConfig {
    TcpConfig {
        window_octets: 65_535,
        send_buffer_octets: 65_535,
        congestion: CongestionControl::Cubic,
        nagle: true,
        ack_delay_ms: Some(40),
        timeout,
    }
}

/// PC `i`: a smoltcp host on `link` with the IPv4 and IPv6 addresses of
/// [`ipv4`] and [`ipv6`], its ISNs drawn from `streams`.
pub(crate) fn pc(i: usize, link: EthInterface, streams: &Streams) -> Host<EthInterface> {
    let cidrs = [
        IpCidr::new(IpAddress::Ipv4(ipv4(i)), 24),
        IpCidr::new(IpAddress::Ipv6(ipv6(i)), 64),
    ];
    let seed = streams.stream(&format!("host/{i}")).next_u64();
    Host::on_link(link, &cidrs, seed, Instant::ZERO)
}

/// The paper's two PCs, each the other's neighbour.
pub(crate) fn pcs(streams: &Streams) -> [Host<EthInterface>; 2] {
    [0, 1].map(|i| pc(i, EthInterface::new(mac(i), mac(1 - i), MTU, 100), streams))
}

/// What runs on the PCs above their TCP/IP stacks.
pub(crate) trait Application {
    /// Moves data between the application and its sockets, and runs its
    /// timers due at `now`.
    fn step(&mut self, hosts: &mut [Host<EthInterface>], now: Instant);
    /// When the application's own timers are next due.
    fn poll_timeout(&self) -> Option<Instant>;
    /// The run is over (done, or failed for good).
    fn finished(&self) -> bool;
}

/// Runs `app` on `hosts` (host i on radio i) over `medium` from time zero
/// until it is finished, `end` comes or nothing is left scheduled; returns
/// the instant the run stopped.
pub(crate) fn run_pcs(
    medium: &mut DdChannel,
    hosts: &mut [Host<EthInterface>],
    app: &mut impl Application,
    end: Instant,
) -> Result<Instant, TestbedError> {
    let mut pcs = Pcs {
        medium,
        hosts,
        app,
        end,
        now: Instant::ZERO,
    };
    match drive(&mut pcs, Instant::ZERO, end) {
        Ok(at) => Ok(at),
        // Nothing scheduled: the stacks wait for nothing (TCP aborted).
        Err(DriveError::Stalled { at }) => Ok(at),
        Err(DriveError::Livelock { at }) => Err(TestbedError::Livelock {
            at_s: at.as_secs_f64(),
        }),
        // Wake-ups are clamped to `end`, where the run is done.
        Err(DriveError::Horizon { at, .. }) => Ok(at),
    }
}

/// The PCs and their application: what [`drive`] takes through time.
struct Pcs<'a, A> {
    medium: &'a mut DdChannel,
    hosts: &'a mut [Host<EthInterface>],
    app: &'a mut A,
    end: Instant,
    now: Instant,
}

impl<A: Application> World for Pcs<'_, A> {
    /// Moves frames among the hosts, the application and the radios until
    /// nothing moves.
    fn settle(&mut self, now: Instant) {
        loop {
            let mut busy = false;
            for host in self.hosts.iter_mut() {
                host.poll(now);
            }
            self.app.step(self.hosts, now);
            for (i, host) in self.hosts.iter_mut().enumerate() {
                host.poll(now);
                while let Some(frame) = host.link_mut().poll_transmit(now) {
                    busy = true;
                    self.medium.transmit(now, StationId(i), frame);
                }
            }
            while self.medium.poll_event().is_some() {}
            while let Some(delivery) = self.medium.poll_delivery() {
                busy = true;
                if delivery.is_intact() {
                    self.hosts[delivery.to.0]
                        .link_mut()
                        .handle_frame(&delivery.frame);
                }
            }
            if !busy {
                return;
            }
        }
    }

    fn done(&self) -> bool {
        self.app.finished() || self.now >= self.end
    }

    fn next_wake(&mut self, now: Instant) -> Option<Instant> {
        earliest(
            [self.medium.poll_timeout(), self.app.poll_timeout()]
                .into_iter()
                .chain(self.hosts.iter_mut().map(|h| h.poll_at(now))),
        )
        .map(|next| next.min(self.end))
    }

    fn advance(&mut self, to: Instant) {
        self.now = to;
        self.medium.handle_timeout(to);
    }
}

/// What a TCP bulk run measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TcpRun {
    /// Octets received by the server during the run.
    pub received: usize,
    /// Goodput, octets per second of the run's duration.
    pub bytes_per_s: f64,
    /// The connection was aborted (user timeout) before the end.
    pub timed_out: bool,
    /// The radios' counters.
    pub radio: [DdStats; 2],
}

/// iperf's client and server: one connection that sends for the run's
/// duration.
struct Iperf {
    client: FileSender,
    server: FileReceiver,
}

impl Application for Iperf {
    fn step(&mut self, hosts: &mut [Host<EthInterface>], now: Instant) {
        let [client, server] = hosts else {
            return;
        };
        self.client.step(client, now);
        self.server.step(server);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    fn finished(&self) -> bool {
        self.client.failure().is_some()
    }
}

/// iperf -t `duration`: host 0 sends to host 1 over IPv4 or IPv6 as fast
/// as TCP lets it for `duration`; goodput is what arrived over the
/// duration (iperf's summary line).
pub fn tcp_bulk(
    channel: DdConfig,
    ipv6: bool,
    tcp: &TcpConfig,
    duration: Duration,
    seed: u64,
) -> Result<TcpRun, TestbedError> {
    let streams = Streams::new(seed);
    let mut medium = DdChannel::new(channel, &streams);
    let mut hosts = pcs(&streams);
    let server = if ipv6 {
        IpAddress::Ipv6(IPV6[1])
    } else {
        IpAddress::Ipv4(IPV4[1])
    };
    // Enough data never to run out: the air rate for the whole run.
    let octets = (duration.as_secs_f64() * f64::from(channel.bit_rate) / 8.0) as usize + 1;
    let server_socket =
        FileReceiver::listen(&mut hosts[1], tcp, IPERF_PORT).map_err(TestbedError::Setup)?;
    let remote = smoltcp::wire::IpEndpoint::new(server, IPERF_PORT);
    let client = FileSender::connect(
        &mut hosts[0],
        tcp,
        remote,
        49152,
        vec![0x5A; octets],
        Instant::ZERO,
    )
    .map_err(TestbedError::Setup)?;
    let mut iperf = Iperf {
        client,
        server: server_socket,
    };
    run_pcs(
        &mut medium,
        &mut hosts,
        &mut iperf,
        Instant::ZERO + duration,
    )?;
    let received = iperf.server.received().len();
    Ok(TcpRun {
        received,
        bytes_per_s: received as f64 / duration.as_secs_f64(),
        timed_out: iperf.client.failure().is_some(),
        radio: [medium.stats(StationId(0)), medium.stats(StationId(1))],
    })
}

/// An IPv4 datagram carrying a UDP datagram of `payload` from `from` to
/// `to` (RFC 791, RFC 768; the UDP checksum is left 0, "no checksum",
/// which the receiver here does not need: the radio's CRC and the
/// Ethernet FCS guard the frame).
pub fn udp_ipv4(from: SocketAddr, to: SocketAddr, payload: &[u8]) -> Option<Vec<u8>> {
    let (IpAddr::V4(src), IpAddr::V4(dst)) = (from.ip(), to.ip()) else {
        return None;
    };
    let total = u16::try_from(28 + payload.len()).ok()?;
    let mut d = Vec::with_capacity(usize::from(total));
    d.extend_from_slice(&[
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        0,
        0x40,
        0,
        64,
        17,
        0,
        0,
    ]);
    d.extend_from_slice(&src.octets());
    d.extend_from_slice(&dst.octets());
    let sum = checksum(&d);
    d[10..12].copy_from_slice(&sum.to_be_bytes());
    let udp_len = total - 20;
    d.extend_from_slice(&from.port().to_be_bytes());
    d.extend_from_slice(&to.port().to_be_bytes());
    d.extend_from_slice(&udp_len.to_be_bytes());
    d.extend_from_slice(&[0, 0]);
    d.extend_from_slice(payload);
    Some(d)
}

/// The source and payload of a UDP/IPv4 datagram written by [`udp_ipv4`].
pub fn parse_udp_ipv4(datagram: &[u8]) -> Option<(SocketAddr, &[u8])> {
    if datagram.len() < 28 || datagram[0] != 0x45 || datagram[9] != 17 {
        return None;
    }
    let total = usize::from(u16::from_be_bytes([datagram[2], datagram[3]]));
    let src: [u8; 4] = datagram[12..16].try_into().ok()?;
    let port = u16::from_be_bytes([datagram[20], datagram[21]]);
    let payload = datagram.get(28..total)?;
    Some((
        SocketAddr::new(IpAddr::V4(Ipv4Addr::from(src)), port),
        payload,
    ))
}

/// The IPv4 header checksum (RFC 791, RFC 1071).
fn checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// NORM segment size: 1500 − 20 (IPv4) − 8 (UDP) − 24 (NORM_DATA with
/// FEC payload ID) − 16 (EXT_FTI), rounded down.
pub const NORM_SEGMENT: u16 = 1400;
