//! Applications that run on two [`Host`]s: a file transfer over one TCP
//! connection and ICMP echo (ping). Each is a small state machine that
//! the runner steps after every poll of the hosts.

use core::time::Duration;

use smoltcp::iface::SocketHandle;
use smoltcp::phy::ChecksumCapabilities;
use smoltcp::socket::icmp;
use smoltcp::wire::{Icmpv4Packet, Icmpv4Repr, IpAddress, IpEndpoint, Ipv4Address};

use linklab_link::Instant;

use crate::host::{Host, IpLink, TcpConfig};
use crate::iface::Ax25Interface;

/// A workload the runner steps, on hosts over links of type `L`.
pub trait Workload<L: IpLink = Ax25Interface> {
    /// Acts on the hosts' sockets at `now` (after they were polled).
    fn step(&mut self, hosts: &mut [Host<L>; 2], now: Instant);
    /// The workload has finished (successfully or not).
    fn done(&self) -> bool;
    /// When the workload next wants to act without any network event.
    fn poll_at(&self) -> Option<Instant> {
        None
    }
}

/// TCP port the file server listens on.
pub const FILE_PORT: u16 = 20;

/// Sends `data` from host 0 to host 1 over one TCP connection; host 1
/// counts and keeps what arrives (an FTP data connection without the
/// control connection).
#[derive(Debug)]
pub struct FileTransfer {
    data: Vec<u8>,
    client: SocketHandle,
    server: SocketHandle,
    offset: usize,
    received: Vec<u8>,
    started: Option<Instant>,
    finished: Option<Instant>,
    failed: Option<String>,
}

/// What a file transfer measured.
#[derive(Debug, Clone, PartialEq)]
pub struct TransferReport {
    /// Octets the server received.
    pub received_octets: usize,
    /// The server received exactly the octets sent.
    pub byte_exact: bool,
    /// From the client's connect to the server's last octet.
    pub transfer_time: Duration,
    /// File octets over the transfer time, bit/s.
    pub goodput_bps: f64,
}

impl FileTransfer {
    /// Opens a listening socket on host 1 and a connection from host 0 to
    /// `server_ip`, both with `tcp`, to carry `data`.
    pub fn start<L: IpLink>(
        hosts: &mut [Host<L>; 2],
        server_ip: IpAddress,
        tcp: &TcpConfig,
        data: Vec<u8>,
        now: Instant,
    ) -> Result<FileTransfer, String> {
        FileTransfer::start_on(hosts, server_ip, (49152, FILE_PORT), tcp, data, now)
    }

    /// As [`FileTransfer::start`], from client port `ports.0` to server
    /// port `ports.1` (for several transfers at once).
    pub fn start_on<L: IpLink>(
        hosts: &mut [Host<L>; 2],
        server_ip: IpAddress,
        ports: (u16, u16),
        tcp: &TcpConfig,
        data: Vec<u8>,
        now: Instant,
    ) -> Result<FileTransfer, String> {
        let (client_port, server_port) = ports;
        let [client_host, server_host] = hosts;
        let server = server_host.add_socket(tcp.socket());
        server_host
            .tcp(server)
            .listen(server_port)
            .map_err(|e| format!("server cannot listen on port {server_port}: {e}"))?;
        let client = client_host.add_socket(tcp.socket());
        client_host
            .tcp_connect(client, IpEndpoint::new(server_ip, server_port), client_port)
            .map_err(|e| format!("client cannot connect to {server_ip}: {e}"))?;
        Ok(FileTransfer {
            data,
            client,
            server,
            offset: 0,
            received: Vec::new(),
            started: Some(now),
            finished: None,
            failed: None,
        })
    }

    /// Why the transfer failed, if it did.
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// The outcome, once the server has all octets (or the transfer
    /// stopped).
    pub fn report(&self) -> TransferReport {
        let end = self.finished.unwrap_or(Instant::ZERO);
        let start = self.started.unwrap_or(Instant::ZERO);
        let transfer_time = end.saturating_duration_since(start);
        let secs = transfer_time.as_secs_f64();
        TransferReport {
            received_octets: self.received.len(),
            byte_exact: self.received == self.data,
            transfer_time,
            goodput_bps: if secs > 0.0 {
                self.received.len() as f64 * 8.0 / secs
            } else {
                0.0
            },
        }
    }
}

impl<L: IpLink> Workload<L> for FileTransfer {
    fn step(&mut self, hosts: &mut [Host<L>; 2], now: Instant) {
        let client = hosts[0].tcp(self.client);
        if client.may_send() && self.offset < self.data.len() {
            match client.send_slice(&self.data[self.offset..]) {
                Ok(n) => self.offset += n,
                Err(e) => self.failed = Some(format!("client send: {e}")),
            }
        }
        if self.offset == self.data.len() && client.may_send() && client.send_queue() == 0 {
            client.close();
        }
        if self.finished.is_none() && !client.is_open() && self.offset < self.data.len() {
            self.failed = Some(format!(
                "the client's connection closed after {} of {} octets were queued",
                self.offset,
                self.data.len()
            ));
        }
        let server = hosts[1].tcp(self.server);
        let mut buf = [0u8; 2048];
        while server.can_recv() {
            match server.recv_slice(&mut buf) {
                Ok(0) => break,
                Ok(n) => self.received.extend_from_slice(&buf[..n]),
                Err(e) => {
                    self.failed = Some(format!("server receive: {e}"));
                    break;
                }
            }
        }
        if self.finished.is_none() && self.received.len() >= self.data.len() {
            self.finished = Some(now);
        }
        if self.received.len() > self.data.len() {
            self.failed = Some(format!(
                "the server received {} octets, more than the {} sent",
                self.received.len(),
                self.data.len()
            ));
        }
    }

    fn done(&self) -> bool {
        self.finished.is_some() || self.failed.is_some()
    }
}

/// What to ping and how (the options of `ping -c COUNT -s SIZE -i
/// INTERVAL -W WAIT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PingConfig {
    /// The IPv4 address pinged.
    pub target: Ipv4Address,
    /// ICMP identifier of the requests.
    pub ident: u16,
    /// Echo requests to send.
    pub count: u16,
    /// Octets of data in each request (`-s`; 56 by default in `ping`).
    pub payload_octets: usize,
    /// Time between requests.
    pub interval: Duration,
    /// How long replies are waited for after the last request.
    pub wait: Duration,
}

/// ICMP echo (RFC 792) from host 0 to an IPv4 address: requests sent as
/// [`PingConfig`] says, replies timed.
#[derive(Debug)]
pub struct Ping {
    socket: SocketHandle,
    target: Ipv4Address,
    ident: u16,
    count: u16,
    payload_octets: usize,
    interval: Duration,
    wait: Duration,
    sent_at: Vec<Instant>,
    rtts: Vec<Option<Duration>>,
    next_send: Instant,
    last_step: Instant,
}

/// Round-trip statistics as `ping` prints them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PingReport {
    /// Echo requests sent.
    pub transmitted: u16,
    /// Echo replies received.
    pub received: u16,
    /// Shortest round trip.
    pub min: Duration,
    /// Mean round trip.
    pub avg: Duration,
    /// Longest round trip.
    pub max: Duration,
    /// Mean deviation as iputils computes it: sqrt(mean(rtt²) −
    /// mean(rtt)²).
    pub mdev: Duration,
}

impl Ping {
    /// Binds an ICMP socket on host 0; the first request goes at `now`.
    pub fn start<L: IpLink>(
        hosts: &mut [Host<L>; 2],
        config: &PingConfig,
        now: Instant,
    ) -> Result<Ping, String> {
        let PingConfig {
            target,
            ident,
            count,
            payload_octets,
            interval,
            wait,
        } = *config;
        let octets = (payload_octets + 8) * usize::from(count.max(1));
        let buffer = || {
            icmp::PacketBuffer::new(
                vec![icmp::PacketMetadata::EMPTY; usize::from(count.max(1))],
                vec![0; octets],
            )
        };
        let mut socket = icmp::Socket::new(buffer(), buffer());
        socket
            .bind(icmp::Endpoint::Ident(ident))
            .map_err(|e| format!("ICMP socket cannot bind identifier {ident}: {e}"))?;
        let socket = hosts[0].add_socket(socket);
        Ok(Ping {
            socket,
            target,
            ident,
            count,
            payload_octets,
            interval,
            wait,
            sent_at: Vec::new(),
            rtts: vec![None; usize::from(count)],
            next_send: now,
            last_step: now,
        })
    }

    /// Each request's round trip, in sequence order (`None`: no reply
    /// yet).
    pub fn rtts(&self) -> &[Option<Duration>] {
        &self.rtts
    }

    /// The statistics so far.
    pub fn report(&self) -> PingReport {
        let rtts: Vec<f64> = self
            .rtts
            .iter()
            .flatten()
            .map(|d| d.as_secs_f64())
            .collect();
        let n = rtts.len() as f64;
        let (min, avg, max, mdev) = if rtts.is_empty() {
            (0.0, 0.0, 0.0, 0.0)
        } else {
            let avg = rtts.iter().sum::<f64>() / n;
            let sq = rtts.iter().map(|r| r * r).sum::<f64>() / n;
            (
                rtts.iter().copied().fold(f64::INFINITY, f64::min),
                avg,
                rtts.iter().copied().fold(0.0, f64::max),
                (sq - avg * avg).max(0.0).sqrt(),
            )
        };
        PingReport {
            transmitted: self.sent_at.len() as u16,
            received: rtts.len() as u16,
            min: Duration::from_secs_f64(min),
            avg: Duration::from_secs_f64(avg),
            max: Duration::from_secs_f64(max),
            mdev: Duration::from_secs_f64(mdev),
        }
    }
}

impl<L: IpLink> Workload<L> for Ping {
    fn step(&mut self, hosts: &mut [Host<L>; 2], now: Instant) {
        self.last_step = now;
        let caps = ChecksumCapabilities::default();
        let socket = hosts[0].icmp(self.socket);
        if self.sent_at.len() < usize::from(self.count) && now >= self.next_send {
            let seq_no = self.sent_at.len() as u16;
            let data = vec![0x5A; self.payload_octets];
            let request = Icmpv4Repr::EchoRequest {
                ident: self.ident,
                seq_no,
                data: &data,
            };
            if let Ok(buf) = socket.send(request.buffer_len(), IpAddress::Ipv4(self.target)) {
                request.emit(&mut Icmpv4Packet::new_unchecked(buf), &caps);
                self.sent_at.push(now);
                self.next_send = now + self.interval;
            }
        }
        while let Ok((octets, _)) = socket.recv() {
            let Ok(packet) = Icmpv4Packet::new_checked(octets) else {
                continue;
            };
            if let Ok(Icmpv4Repr::EchoReply { ident, seq_no, .. }) =
                Icmpv4Repr::parse(&packet, &caps)
            {
                let i = usize::from(seq_no);
                if let (true, Some(sent), Some(slot)) = (
                    ident == self.ident,
                    self.sent_at.get(i),
                    self.rtts.get_mut(i),
                ) {
                    slot.get_or_insert(now.saturating_duration_since(*sent));
                }
            }
        }
    }

    fn done(&self) -> bool {
        let all_sent = self.sent_at.len() == usize::from(self.count);
        let all_back = self.rtts.iter().all(Option::is_some);
        let waited = self
            .sent_at
            .last()
            .is_some_and(|last| self.last_step.saturating_duration_since(*last) >= self.wait);
        all_sent && (all_back || waited)
    }

    fn poll_at(&self) -> Option<Instant> {
        match self.sent_at.last() {
            _ if self.sent_at.len() < usize::from(self.count) => Some(self.next_send),
            Some(last) => Some(*last + self.wait),
            None => None,
        }
    }
}
