//! Applications on one [`Host`]: the two ends of a file transfer over one
//! TCP connection and ICMP echo (ping). Each is a small state machine that
//! its driver steps after every poll of the host, in virtual time (the
//! simulated benches) or against the clock (`linklab ip`).

use core::time::Duration;

use smoltcp::iface::SocketHandle;
use smoltcp::phy::ChecksumCapabilities;
use smoltcp::socket::{icmp, tcp};
use smoltcp::wire::{Icmpv4Packet, Icmpv4Repr, IpAddress, IpEndpoint, Ipv4Address};

use linklab_core::Instant;

use crate::host::{Host, IpLink, TcpConfig};

/// TCP port the file server listens on.
pub const FILE_PORT: u16 = 20;

/// The sending end of a file transfer: one active TCP connection that
/// carries `data` and is closed once the peer has acknowledged all of it
/// (RFC 9293 3.6, CLOSE after the last SEND).
#[derive(Debug)]
pub struct FileSender {
    socket: SocketHandle,
    data: Vec<u8>,
    offset: usize,
    started: Instant,
    timeout: Option<Duration>,
    established: bool,
    closed: bool,
    done: Option<Result<Instant, String>>,
}

impl FileSender {
    /// Opens a connection from `local_port` of `host` to `remote` with
    /// `tcp` to carry `data`.
    pub fn connect<L: IpLink>(
        host: &mut Host<L>,
        tcp: &TcpConfig,
        remote: IpEndpoint,
        local_port: u16,
        data: Vec<u8>,
        now: Instant,
    ) -> Result<FileSender, String> {
        let socket = host.add_socket_last(tcp.socket());
        host.tcp_connect(socket, remote, local_port)
            .map_err(|e| format!("cannot connect to {remote}: {e}"))?;
        Ok(FileSender {
            socket,
            data,
            offset: 0,
            started: now,
            timeout: tcp.timeout,
            established: false,
            closed: false,
            done: None,
        })
    }

    /// The connection's socket.
    pub fn socket(&self) -> SocketHandle {
        self.socket
    }

    /// Octets handed to TCP so far.
    pub fn queued(&self) -> usize {
        self.offset
    }

    /// The octets to send.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// When the connection was opened.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// `Some(Ok(at))` once every octet was acknowledged and our FIN too,
    /// the peer having closed as well (TIME-WAIT) or not; `Some(Err(why))`
    /// if the connection ended first.
    pub fn outcome(&self) -> Option<&Result<Instant, String>> {
        self.done.as_ref()
    }

    /// Why the transfer failed, if it did.
    pub fn failure(&self) -> Option<&str> {
        self.done.as_ref()?.as_ref().err().map(String::as_str)
    }

    /// Hands TCP what its send buffer takes, closes once all is
    /// acknowledged, and notes how the connection ended.
    pub fn step<L: IpLink>(&mut self, host: &mut Host<L>, now: Instant) {
        if self.done.is_some() {
            return;
        }
        let (len, timeout) = (self.data.len(), self.timeout);
        let socket = host.tcp(self.socket);
        if socket.may_send() && self.offset < len {
            match socket.send_slice(&self.data[self.offset..]) {
                Ok(n) => self.offset += n,
                Err(e) => self.done = Some(Err(format!("cannot send: {e}"))),
            }
        }
        if self.offset == len && socket.may_send() && socket.send_queue() == 0 {
            socket.close();
            self.closed = true;
        }
        let state = socket.state();
        self.established |= !matches!(state, tcp::State::SynSent | tcp::State::Closed);
        match state {
            tcp::State::FinWait2 | tcp::State::TimeWait if self.closed => {
                self.done = Some(Ok(now));
            }
            tcp::State::Closed if self.done.is_none() => {
                let waited = now - self.started;
                let why = match timeout {
                    _ if self.established => format!(
                        "the connection was reset or timed out after {} of {len} octets were queued",
                        self.offset
                    ),
                    Some(t) if waited >= t => {
                        format!("no answer to the connection request within {} s", t.as_secs())
                    }
                    _ => "connection refused (the peer answered with a reset)".to_string(),
                };
                self.done = Some(Err(why));
            }
            _ => {}
        }
    }
}

/// The receiving end of one TCP connection: keeps what arrives.
#[derive(Debug)]
pub struct FileReceiver {
    socket: SocketHandle,
    received: Vec<u8>,
    failed: Option<String>,
}

impl FileReceiver {
    /// A socket of `host` listening on `port` with `tcp`, after every
    /// other socket ([`Host::add_socket_last`]).
    pub fn listen<L: IpLink>(
        host: &mut Host<L>,
        tcp: &TcpConfig,
        port: u16,
    ) -> Result<FileReceiver, String> {
        let socket = host.add_socket_last(tcp.socket());
        host.tcp(socket)
            .listen(port)
            .map_err(|e| format!("cannot listen on TCP port {port}: {e}"))?;
        Ok(FileReceiver {
            socket,
            received: Vec::new(),
            failed: None,
        })
    }

    /// The connection's socket.
    pub fn socket(&self) -> SocketHandle {
        self.socket
    }

    /// The octets received so far.
    pub fn received(&self) -> &[u8] {
        &self.received
    }

    /// Takes the octets received so far out of the receiver.
    pub fn take(&mut self) -> Vec<u8> {
        core::mem::take(&mut self.received)
    }

    /// Why receiving failed, if it did.
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// Takes everything the socket has received.
    pub fn step<L: IpLink>(&mut self, host: &mut Host<L>) {
        let socket = host.tcp(self.socket);
        let mut buf = [0u8; 2048];
        while socket.can_recv() {
            match socket.recv_slice(&mut buf) {
                Ok(0) => break,
                Ok(n) => self.received.extend_from_slice(&buf[..n]),
                Err(e) => {
                    self.failed = Some(format!("cannot receive: {e}"));
                    break;
                }
            }
        }
    }

    /// The peer closed its side (FIN received) and everything before it
    /// was taken: the transfer is complete.
    pub fn complete<L: IpLink>(&self, host: &mut Host<L>) -> bool {
        let socket = host.tcp(self.socket);
        !socket.may_recv()
            && !socket.can_recv()
            && matches!(
                socket.state(),
                tcp::State::CloseWait
                    | tcp::State::LastAck
                    | tcp::State::TimeWait
                    | tcp::State::Closing
            )
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
        Ping::open(&mut hosts[0], config, now)
    }

    /// Binds an ICMP socket on `host`; the first request goes at `now`.
    pub fn open<L: IpLink>(
        host: &mut Host<L>,
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
        let socket = host.add_socket(socket);
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

    /// Octets of data in each request.
    pub fn payload_octets(&self) -> usize {
        self.payload_octets
    }

    /// When each request went, in sequence-number order.
    pub fn sent_at(&self) -> &[Instant] {
        &self.sent_at
    }

    /// The round trip of each request, by sequence number (`None`: no
    /// reply yet).
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

impl Ping {
    /// Sends the requests that are due and times the replies that came.
    pub fn step_host<L: IpLink>(&mut self, host: &mut Host<L>, now: Instant) {
        self.last_step = now;
        let caps = ChecksumCapabilities::default();
        let socket = host.icmp(self.socket);
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
                    slot.get_or_insert(now - *sent);
                }
            }
        }
    }

    /// Every request was sent and each was answered or waited for long
    /// enough.
    pub fn finished(&self) -> bool {
        let all_sent = self.sent_at.len() == usize::from(self.count);
        let all_back = self.rtts.iter().all(Option::is_some);
        let waited = self
            .sent_at
            .last()
            .is_some_and(|last| self.last_step - *last >= self.wait);
        all_sent && (all_back || waited)
    }

    /// When the next request or the end of the wait is due.
    pub fn next_wakeup(&self) -> Option<Instant> {
        match self.sent_at.last() {
            _ if self.sent_at.len() < usize::from(self.count) => Some(self.next_send),
            Some(last) => Some(*last + self.wait),
            None => None,
        }
    }
}
