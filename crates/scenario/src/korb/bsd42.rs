//! A TCP sender with 4.2BSD's timers, sans-IO: it opens a connection,
//! sends one buffer of data and a FIN to an ordinary TCP receiver (a
//! smoltcp socket on the other host), and takes IPv4 datagrams and time
//! in. It exists because smoltcp's RFC 6298 retransmission timer cannot
//! be set (see the documentation of [`linklab_ip`]), while Korb and Wills
//! (1987) ran 4.2BSD hosts, whose timer is the subject of their section 4.
//!
//! # 4.2BSD's retransmission timer
//! Facts from the CSRG sources of 4.2BSD (`netinet/tcp_timer.h`,
//! `tcp_timer.c`, `tcp_input.c`, `tcp_output.c`, and their SCCS
//! histories), restated, not copied:
//! - **smoothed round trip** `srtt = α·srtt + (1 − α)·rtt` with α = 0.9
//!   (`TCP_ALPHA`), one segment timed at a time (`t_rtt`, `t_rtseq`), the
//!   first sample taken as it is (`srtt` 0 means "no estimate");
//! - **the timeout set when a segment goes out with no timer running, or
//!   when an ACK leaves data outstanding**: β·srtt with β = 2
//!   (`TCP_BETA`), clamped to 1-30 s (`TCPTV_MIN`, `TCPTV_MAX`; the
//!   ceiling was 480 s, then 120 s, then 30 s before 4.2's release, and
//!   became `TCPTV_REXMTMAX` 64 s only in 4.3BSD); before any sample the
//!   timeout is the 1 s floor;
//! - **on expiry**: `t_rxtshift` counts the expiries since the last ACK
//!   that advanced; past `TCP_MAXRXTSHIFT` (12; it was 10 earlier) the
//!   connection is dropped (`ETIMEDOUT`); otherwise the next timeout is
//!   srtt × `tcp_backoff[t_rxtshift − 1]`, a gentle table (1.0, 1.2, 1.4,
//!   1.7, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0, 32.0, 32.0), clamped to 1-30 s
//!   again (the exponential `srtt << t_rxtshift` was a switch,
//!   `tcpexprexmtbackoff`, off by default; 4.3BSD made the backoff
//!   exponential); then `snd_nxt = snd_una` and output resumes from there:
//!   everything unacknowledged that the window allows is sent again
//!   ("retransmit all unacknowledged messages in the window"), go-back-N;
//!   the segment being timed stays timed: the expiry does not touch
//!   `t_rtt`, so its sample, taken when an ACK covers it, runs from its
//!   first transmission and may be the ACK of a copy (Karn's rule and
//!   the reset of `t_rtt` on expiry came with 4.3BSD);
//! - **no congestion window**: the sender sends whatever the receiver's
//!   offered window and its own send buffer (`tcp_sendspace`, 2048) allow
//!   (slow start arrived with 4.3BSD-Tahoe in 1988);
//! - segments of at most the MSS (512 off the local network).
//!
//! Simplifications: the 500 ms slow-timeout tick that counts `t_rtt` and
//! the timers is continuous time here (samples are not rounded to ticks);
//! there is no persist timer (the receiver of this crate's workloads
//! reads at once, so the window never stays shut); the peer's data is not
//! accepted (an FTP data connection carries one direction).

use core::time::Duration;
use linklab_core::{Engine, Instant};

use linklab_ip::{smol_instant, IpLink};
use smoltcp::phy::{ChecksumCapabilities, Device, RxToken as _, TxToken as _};
use smoltcp::wire::{
    IpAddress, IpProtocol, Ipv4Address, Ipv4Packet, Ipv4Repr, TcpControl, TcpPacket, TcpRepr,
    TcpSeqNumber,
};

/// 4.2BSD's `tcp_backoff` table in the form of its last 4.2-era delta:
/// the timeout after the n-th expiry is srtt × `TCP_BACKOFF[n − 1]`.
pub const TCP_BACKOFF: [f64; 12] = [
    1.0, 1.2, 1.4, 1.7, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0, 32.0, 32.0,
];

/// The sender's timers and sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct Bsd42Config {
    /// Largest segment, octets (4.2BSD: 512 off the local network).
    pub mss: usize,
    /// Send buffer, octets: most data outstanding (`tcp_sendspace`,
    /// 1024*2 in 4.2BSD).
    pub send_buffer: usize,
    /// Smoothing gain α of the round-trip estimate (`TCP_ALPHA` 0.9).
    pub alpha: f64,
    /// Timeout multiple β of srtt (`TCP_BETA` 2).
    pub beta: f64,
    /// Floor of the timeout (`TCPTV_MIN`, 1 s).
    pub min_rto: Duration,
    /// Ceiling of the timeout (`TCPTV_MAX`, 30 s).
    pub max_rto: Duration,
    /// Expiries in a row after which the connection is dropped
    /// (`TCP_MAXRXTSHIFT`, 12).
    pub max_rxt_shift: u32,
}

impl Bsd42Config {
    /// 4.2BSD's values (see the module documentation).
    pub fn bsd42() -> Bsd42Config {
        Bsd42Config {
            mss: 512,
            send_buffer: 2048,
            alpha: 0.9,
            beta: 2.0,
            min_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(30),
            max_rxt_shift: 12,
        }
    }

    /// The timeout for `value` seconds, clamped to the floor and ceiling
    /// (`TCPT_RANGESET`).
    fn range(&self, value: f64) -> Duration {
        let lo = self.min_rto.as_secs_f64();
        let hi = self.max_rto.as_secs_f64().max(lo);
        Duration::from_secs_f64(value.clamp(lo, hi))
    }
}

/// The connection's state (RFC 9293 3.3.2 names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bsd42State {
    /// SYN sent, no SYN-ACK yet.
    SynSent,
    /// Data flowing.
    Established,
    /// All data and the FIN sent, the FIN not yet acknowledged.
    FinWait1,
    /// The FIN acknowledged: the transfer is complete.
    FinWait2,
    /// Reset by the peer or dropped after too many expiries.
    Closed,
}

/// What the sender counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bsd42Stats {
    /// Segments sent (with SYN, FIN or data; pure ACKs not counted).
    pub segments_sent: u64,
    /// Of them, segments re-sending sequence space sent before.
    pub retransmitted: u64,
    /// Expiries of the retransmission timer.
    pub timeouts: u64,
    /// Pure ACKs sent (to the peer's SYN and FIN).
    pub acks_sent: u64,
    /// Round-trip samples taken.
    pub rtt_samples: u64,
}

/// One side of a connection: local or remote address and port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bsd42Endpoint {
    /// IPv4 address.
    pub addr: Ipv4Address,
    /// TCP port.
    pub port: u16,
}

/// A 4.2BSD TCP sender of one buffer (see the module documentation).
///
/// Sequence space is kept as offsets from the initial sequence number:
/// the SYN is 0, data octet `i` is `1 + i`, the FIN `1 + len`.
#[derive(Debug)]
pub struct Bsd42Sender {
    config: Bsd42Config,
    local: Bsd42Endpoint,
    remote: Bsd42Endpoint,
    iss: u32,
    data: Vec<u8>,
    state: Bsd42State,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    snd_wnd: u64,
    rcv_nxt: Option<TcpSeqNumber>,
    ack_pending: bool,
    srtt: Option<f64>,
    timing: Option<(Instant, u64)>,
    rexmt_at: Option<Instant>,
    rxt_shift: u32,
    started: Instant,
    outcome: Option<Result<Instant, String>>,
    stats: Bsd42Stats,
}

impl Bsd42Sender {
    /// A sender of `data` from `local` to `remote` with initial sequence
    /// number `iss`; its SYN goes at the first [`Bsd42Sender::poll_transmit`].
    pub fn connect(
        config: Bsd42Config,
        local: Bsd42Endpoint,
        remote: Bsd42Endpoint,
        iss: u32,
        data: Vec<u8>,
        now: Instant,
    ) -> Bsd42Sender {
        Bsd42Sender {
            config,
            local,
            remote,
            iss,
            data,
            state: Bsd42State::SynSent,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            snd_wnd: 1,
            rcv_nxt: None,
            ack_pending: false,
            srtt: None,
            timing: None,
            rexmt_at: None,
            rxt_shift: 0,
            started: now,
            outcome: None,
            stats: Bsd42Stats::default(),
        }
    }

    /// The connection's state.
    pub fn state(&self) -> Bsd42State {
        self.state
    }

    /// What was counted so far.
    pub fn stats(&self) -> Bsd42Stats {
        self.stats
    }

    /// The data to send.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// When the connection was opened.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The smoothed round trip, once sampled.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt.map(Duration::from_secs_f64)
    }

    /// Expiries since the last ACK that advanced (`t_rxtshift`).
    pub fn rxt_shift(&self) -> u32 {
        self.rxt_shift
    }

    /// `Some(Ok(at))` once the FIN is acknowledged (all data delivered),
    /// `Some(Err(why))` if the connection was reset or dropped.
    pub fn outcome(&self) -> Option<&Result<Instant, String>> {
        self.outcome.as_ref()
    }

    /// Sequence-space offset of the FIN.
    fn fin_offset(&self) -> u64 {
        1 + self.data.len() as u64
    }

    /// The timeout β·srtt clamped (no estimate: the floor).
    fn base_rto(&self) -> Duration {
        self.config
            .range(self.config.beta * self.srtt.unwrap_or(0.0))
    }

    /// The timeout armed when a segment goes out with none running, or
    /// after an ACK that leaves data outstanding.
    pub fn rto(&self) -> Duration {
        self.base_rto()
    }

    fn close(&mut self, outcome: Result<Instant, String>) {
        self.state = match outcome {
            Ok(_) => Bsd42State::FinWait2,
            Err(_) => Bsd42State::Closed,
        };
        if self.state == Bsd42State::Closed {
            self.rexmt_at = None;
        }
        self.outcome = Some(outcome);
    }

    /// Takes an IPv4 datagram; `false` if it is not for this connection
    /// (left for the host's stack), `true` if it was (even when unusable).
    pub fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) -> bool {
        let caps = ChecksumCapabilities::default();
        let Ok(packet) = Ipv4Packet::new_checked(datagram) else {
            return false;
        };
        let Ok(ip) = Ipv4Repr::parse(&packet, &caps) else {
            return false;
        };
        if ip.next_header != IpProtocol::Tcp
            || ip.src_addr != self.remote.addr
            || ip.dst_addr != self.local.addr
        {
            return false;
        }
        let Ok(segment) = TcpPacket::new_checked(packet.payload()) else {
            return false;
        };
        if segment.src_port() != self.remote.port || segment.dst_port() != self.local.port {
            return false;
        }
        let (src, dst) = (IpAddress::Ipv4(ip.src_addr), IpAddress::Ipv4(ip.dst_addr));
        if let Ok(tcp) = TcpRepr::parse(&segment, &src, &dst, &caps) {
            self.handle_segment(now, &tcp);
        }
        true
    }

    /// Sequence-space offset of an acknowledgement number.
    fn offset_of(&self, ack: TcpSeqNumber) -> u64 {
        u64::from((ack.0 as u32).wrapping_sub(self.iss))
    }

    fn handle_segment(&mut self, now: Instant, tcp: &TcpRepr) {
        if matches!(self.state, Bsd42State::Closed) {
            return;
        }
        if tcp.control == TcpControl::Rst {
            self.close(Err("reset by the peer".into()));
            return;
        }
        if self.state == Bsd42State::SynSent {
            if tcp.control != TcpControl::Syn || tcp.ack_number.is_none() {
                return;
            }
            self.rcv_nxt = Some(tcp.seq_number + 1);
            self.state = Bsd42State::Established;
            self.ack_pending = true;
        }
        if let Some(ack) = tcp.ack_number {
            let acked = self.offset_of(ack);
            if acked > self.snd_una && acked <= self.snd_max {
                self.acknowledge(now, acked);
            }
            if acked >= self.snd_una && acked <= self.snd_max {
                self.snd_wnd = u64::from(tcp.window_len);
            }
        }
        if tcp.control == TcpControl::Fin
            && self.rcv_nxt == Some(tcp.seq_number + tcp.payload.len())
        {
            self.rcv_nxt = Some(tcp.seq_number + tcp.payload.len() + 1);
            self.ack_pending = true;
        }
    }

    /// An ACK up to offset `acked` (tcp_input: RTT sample, timer, una).
    fn acknowledge(&mut self, now: Instant, acked: u64) {
        if let Some((sent, seq)) = self.timing {
            if acked > seq {
                let rtt = (now - sent).as_secs_f64();
                let a = self.config.alpha;
                self.srtt = Some(self.srtt.map_or(rtt, |s| a * s + (1.0 - a) * rtt));
                self.stats.rtt_samples += 1;
                self.timing = None;
            }
        }
        self.snd_una = acked;
        self.snd_nxt = self.snd_nxt.max(acked);
        if acked == self.snd_max {
            self.rexmt_at = None;
        } else {
            self.rexmt_at = Some(now + self.base_rto());
            self.rxt_shift = 0;
        }
        if acked > self.fin_offset() {
            self.close(Ok(now));
        }
    }

    /// A pure ACK if one is owed.
    fn pure_ack(&mut self) -> Option<Vec<u8>> {
        if !self.ack_pending || self.rcv_nxt.is_none() {
            return None;
        }
        self.ack_pending = false;
        self.stats.acks_sent += 1;
        let seq = self.snd_nxt;
        Some(self.emit(TcpControl::None, seq, &[]))
    }

    /// An IPv4 datagram carrying one segment at offset `seq`.
    fn emit(&self, control: TcpControl, seq: u64, payload: &[u8]) -> Vec<u8> {
        let window = u16::try_from(self.config.send_buffer).unwrap_or(u16::MAX);
        let tcp = TcpRepr {
            src_port: self.local.port,
            dst_port: self.remote.port,
            control,
            seq_number: TcpSeqNumber(self.iss.wrapping_add(seq as u32) as i32),
            ack_number: self.rcv_nxt,
            window_len: window,
            window_scale: None,
            max_seg_size: (control == TcpControl::Syn)
                .then(|| u16::try_from(self.config.mss).unwrap_or(u16::MAX)),
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: None,
            payload,
        };
        let ip = Ipv4Repr {
            src_addr: self.local.addr,
            dst_addr: self.remote.addr,
            next_header: IpProtocol::Tcp,
            payload_len: tcp.buffer_len(),
            hop_limit: 30,
        };
        let caps = ChecksumCapabilities::default();
        let mut octets = vec![0; ip.buffer_len() + tcp.buffer_len()];
        let mut packet = Ipv4Packet::new_unchecked(&mut octets[..]);
        ip.emit(&mut packet, &caps);
        let mut segment = TcpPacket::new_unchecked(packet.payload_mut());
        tcp.emit(
            &mut segment,
            &IpAddress::Ipv4(self.local.addr),
            &IpAddress::Ipv4(self.remote.addr),
            &caps,
        );
        octets
    }
}

impl Engine for Bsd42Sender {
    type Transmit = Vec<u8>;

    /// The next IPv4 datagram to send, if any (tcp_output): the SYN, data
    /// the windows allow from `snd_nxt` (the FIN on the last), or an ACK
    /// owed to the peer.
    fn poll_transmit(&mut self, now: Instant) -> Option<Self::Transmit> {
        let fin = self.fin_offset();
        let (control, start, len) = match self.state {
            Bsd42State::Closed | Bsd42State::FinWait2 => return self.pure_ack(),
            Bsd42State::SynSent if self.snd_nxt == 0 => (TcpControl::Syn, 0, 0),
            Bsd42State::SynSent => return None,
            Bsd42State::Established | Bsd42State::FinWait1 => {
                let window = self.snd_wnd.min(self.config.send_buffer as u64);
                let limit = (self.snd_una + window).min(fin);
                if self.snd_nxt > fin {
                    return self.pure_ack();
                }
                let len = limit
                    .saturating_sub(self.snd_nxt)
                    .min(self.config.mss as u64);
                let end = self.snd_nxt + len;
                if end == fin {
                    (TcpControl::Fin, self.snd_nxt, len)
                } else if len == 0 {
                    return self.pure_ack();
                } else {
                    (TcpControl::Psh, self.snd_nxt, len)
                }
            }
        };
        let end = start + len + u64::from(control != TcpControl::Psh);
        if start < self.snd_max {
            self.stats.retransmitted += 1;
        }
        self.stats.segments_sent += 1;
        if control == TcpControl::Fin {
            self.state = Bsd42State::FinWait1;
        }
        self.snd_nxt = end;
        if end > self.snd_max {
            if self.timing.is_none() {
                self.timing = Some((now, self.snd_max.max(start)));
            }
            self.snd_max = end;
        }
        if self.rexmt_at.is_none() && self.snd_nxt != self.snd_una {
            self.rexmt_at = Some(now + self.base_rto());
            self.rxt_shift = 0;
        }
        self.ack_pending = false;
        let payload = start
            .checked_sub(1)
            .map(|o| &self.data[o as usize..(o + len) as usize])
            .unwrap_or(&[]);
        Some(self.emit(control, start, payload))
    }

    /// When the retransmission timer expires, if it runs.
    fn poll_timeout(&self) -> Option<Instant> {
        self.rexmt_at
    }

    /// Runs the retransmission timer if due: backs off, or drops the
    /// connection after too many expiries, and goes back to the oldest
    /// unacknowledged octet.
    fn handle_timeout(&mut self, now: Instant) {
        if self.rexmt_at.is_none_or(|t| t > now) {
            return;
        }
        self.rexmt_at = None;
        self.stats.timeouts += 1;
        self.rxt_shift += 1;
        if self.rxt_shift > self.config.max_rxt_shift {
            self.close(Err(format!(
                "dropped after {} retransmission time-outs",
                self.config.max_rxt_shift
            )));
            return;
        }
        let srtt = self.config.range(self.srtt.unwrap_or(0.0)).as_secs_f64();
        let index = (self.rxt_shift as usize - 1).min(TCP_BACKOFF.len() - 1);
        self.rexmt_at = Some(now + self.config.range(srtt * TCP_BACKOFF[index]));
        self.snd_nxt = self.snd_una;
    }
}

/// Moves datagrams between `senders` and the device of a host's `link`:
/// datagrams in the device's receive queue that belong to a sender are
/// taken out and handed to it (the others go back, in order, for the
/// host's stack), and what the senders send is queued on the device as
/// the stack's own output would be (seen by its sniffer). Call before the
/// host's stack polls, so that it never sees the senders' segments.
/// Returns whether anything moved and how many datagrams found the
/// device's transmit queue full (dropped, as 4.2BSD's `IF_QFULL`).
pub fn exchange<L: IpLink>(
    senders: &mut [&mut Bsd42Sender],
    link: &mut L,
    now: Instant,
) -> (bool, u64) {
    let at = smol_instant(now);
    let device = link.device_mut();
    let mut busy = false;
    let mut others = Vec::new();
    while let Some((rx, _)) = device.receive(at) {
        let datagram = rx.consume(<[u8]>::to_vec);
        if senders
            .iter_mut()
            .any(|s| s.handle_datagram(now, &datagram))
        {
            busy = true;
        } else {
            others.push(datagram);
        }
    }
    for datagram in others {
        device.push_received(datagram);
    }
    let mut dropped = 0;
    for sender in senders.iter_mut() {
        while let Some(datagram) = sender.poll_transmit(now) {
            busy = true;
            match device.transmit(at) {
                Some(tx) => tx.consume(datagram.len(), |buf| buf.copy_from_slice(&datagram)),
                None => dropped += 1,
            }
        }
    }
    (busy, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_core::earliest;
    use linklab_ip::{link_instant, Ax25Device, CongestionControl, TcpConfig};
    use smoltcp::iface::{Config as IfaceConfig, Interface, SocketSet};
    use smoltcp::socket::tcp;
    use smoltcp::wire::{HardwareAddress, IpCidr};

    const A: Ipv4Address = Ipv4Address::new(10, 0, 0, 1);
    const B: Ipv4Address = Ipv4Address::new(10, 0, 0, 2);

    fn endpoints() -> (Bsd42Endpoint, Bsd42Endpoint) {
        (
            Bsd42Endpoint {
                addr: A,
                port: 1024,
            },
            Bsd42Endpoint { addr: B, port: 20 },
        )
    }

    fn sender(data: Vec<u8>) -> Bsd42Sender {
        let (local, remote) = endpoints();
        Bsd42Sender::connect(
            Bsd42Config::bsd42(),
            local,
            remote,
            0xffff_ff00,
            data,
            Instant::ZERO,
        )
    }

    /// A one-way delay in both directions and, if `drop_every` is not 0,
    /// the loss of every `drop_every`-th datagram in each direction.
    struct Pipe {
        delay: Duration,
        drop_every: u64,
        counts: [u64; 2],
        flying: Vec<(Instant, usize, Vec<u8>)>,
    }

    impl Pipe {
        fn send(&mut self, now: Instant, to: usize, datagram: Vec<u8>) {
            self.counts[to] += 1;
            if self.drop_every == 0 || !self.counts[to].is_multiple_of(self.drop_every) {
                self.flying.push((now + self.delay, to, datagram));
            }
        }
    }

    /// The sender to a smoltcp socket listening on B (window 2048, ACK
    /// delay 200 ms) over `pipe`; returns what the socket received and
    /// the sender.
    fn transfer(data: Vec<u8>, mut pipe: Pipe) -> (Vec<u8>, Bsd42Sender) {
        let mut s = sender(data);
        let mut device = Ax25Device::new(552, 64);
        let mut config = IfaceConfig::new(HardwareAddress::Ip);
        config.random_seed = 7;
        let mut iface = Interface::new(config, &mut device, smol_instant(Instant::ZERO));
        iface.update_ip_addrs(|a| a.push(IpCidr::new(IpAddress::Ipv4(B), 24)).unwrap());
        let mut sockets = SocketSet::new(Vec::new());
        let tcp = TcpConfig {
            window_octets: 2048,
            send_buffer_octets: 2048,
            congestion: CongestionControl::None,
            nagle: true,
            ack_delay_ms: Some(200),
            timeout: None,
        };
        let handle = sockets.add(tcp.socket());
        sockets.get_mut::<tcp::Socket>(handle).listen(20).unwrap();
        let mut received = Vec::new();
        let mut now = Instant::ZERO;
        for _ in 0..100_000 {
            while let Some(d) = s.poll_transmit(now) {
                pipe.send(now, 1, d);
            }
            iface.poll(smol_instant(now), &mut device, &mut sockets);
            let socket = sockets.get_mut::<tcp::Socket>(handle);
            while socket.can_recv() {
                socket
                    .recv(|b| (b.len(), received.extend_from_slice(b)))
                    .unwrap();
            }
            iface.poll(smol_instant(now), &mut device, &mut sockets);
            while let Some(d) = device.pop_transmitted() {
                pipe.send(now, 0, d);
            }
            if s.outcome().is_some() && pipe.flying.is_empty() {
                break;
            }
            let next = earliest([
                s.poll_timeout(),
                iface.poll_at(smol_instant(now), &sockets).map(link_instant),
                pipe.flying.iter().map(|f| f.0).min(),
            ])
            .expect("something is pending");
            now = next.max(now);
            s.handle_timeout(now);
            let (due, later): (Vec<_>, Vec<_>) =
                pipe.flying.drain(..).partition(|(at, _, _)| *at <= now);
            pipe.flying = later;
            for (_, to, d) in due {
                if to == 0 {
                    assert!(s.handle_datagram(now, &d));
                } else {
                    device.push_received(d);
                }
            }
        }
        (received, s)
    }

    fn file(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    #[test]
    fn a_lossless_pipe_delivers_the_data_with_no_retransmission() {
        let data = file(20_000);
        let pipe = Pipe {
            delay: Duration::from_millis(100),
            drop_every: 0,
            counts: [0; 2],
            flying: Vec::new(),
        };
        let (received, s) = transfer(data.clone(), pipe);
        assert_eq!(received, data);
        assert_eq!(s.state(), Bsd42State::FinWait2);
        assert!(matches!(s.outcome(), Some(Ok(_))));
        let stats = s.stats();
        assert_eq!(stats.retransmitted, 0);
        assert_eq!(stats.timeouts, 0);
        // SYN, 40 data segments (the FIN on the last).
        assert_eq!(stats.segments_sent, 41);
        assert!(stats.rtt_samples > 5);
        let srtt = s.srtt().unwrap().as_secs_f64();
        assert!((0.2..0.5).contains(&srtt), "{srtt}");
    }

    #[test]
    fn a_lossy_pipe_still_delivers_the_data_intact() {
        let data = file(20_000);
        let pipe = Pipe {
            delay: Duration::from_millis(100),
            drop_every: 7,
            counts: [0; 2],
            flying: Vec::new(),
        };
        let (received, s) = transfer(data.clone(), pipe);
        assert_eq!(received, data);
        assert!(matches!(s.outcome(), Some(Ok(_))));
        assert!(s.stats().timeouts > 0);
        assert!(s.stats().retransmitted >= s.stats().timeouts);
    }

    /// The sender past its handshake with a window of 2048 and srtt
    /// `srtt` seconds, four segments of 512 outstanding at `now`.
    fn flight(srtt: f64, now: Instant) -> Bsd42Sender {
        let mut s = sender(file(10_000));
        s.state = Bsd42State::Established;
        s.rcv_nxt = Some(TcpSeqNumber(5));
        s.snd_una = 1;
        s.snd_nxt = 1;
        s.snd_max = 1;
        s.snd_wnd = 2048;
        s.srtt = Some(srtt);
        let mut sent = Vec::new();
        while let Some(d) = s.poll_transmit(now) {
            sent.push(d);
        }
        assert_eq!(sent.len(), 4);
        s
    }

    #[test]
    fn the_timeout_is_twice_srtt_clamped_to_one_and_thirty_seconds() {
        let t0 = Instant::ZERO;
        for (srtt, rto) in [(0.2, 1.0), (3.0, 6.0), (14.0, 28.0), (20.0, 30.0)] {
            let s = flight(srtt, t0);
            assert_eq!(s.rto(), Duration::from_secs_f64(rto), "srtt {srtt}");
            assert_eq!(s.poll_timeout(), Some(t0 + Duration::from_secs_f64(rto)));
        }
        // No sample yet: the 1 s floor.
        let mut s = sender(Vec::new());
        assert!(s.poll_transmit(t0).is_some());
        assert_eq!(s.poll_timeout(), Some(t0 + Duration::from_secs(1)));
    }

    #[test]
    fn expiries_back_off_by_the_table_up_to_thirty_seconds_then_drop() {
        let mut now = Instant::ZERO;
        let mut s = flight(4.0, now);
        let mut waits = Vec::new();
        loop {
            now = s.poll_timeout().unwrap();
            s.handle_timeout(now);
            while s.poll_transmit(now).is_some() {}
            match s.poll_timeout() {
                Some(t) => waits.push((t - now).as_secs_f64()),
                None => break,
            }
        }
        // srtt 4 s times 1.0, 1.2, 1.4, 1.7, 2.0, 3.0, 5.0, ... clamped.
        let expected = [
            4.0, 4.8, 5.6, 6.8, 8.0, 12.0, 20.0, 30.0, 30.0, 30.0, 30.0, 30.0,
        ];
        assert_eq!(waits.len(), 12);
        for (w, e) in waits.iter().zip(expected) {
            assert!((w - e).abs() < 1e-6, "{waits:?}");
        }
        assert_eq!(s.state(), Bsd42State::Closed);
        assert_eq!(s.stats().timeouts, 13);
        assert!(s.outcome().unwrap().is_err());
    }

    #[test]
    fn an_expiry_resends_every_unacknowledged_segment_from_snd_una() {
        let t0 = Instant::ZERO;
        let mut s = flight(2.0, t0);
        let now = s.poll_timeout().unwrap();
        s.handle_timeout(now);
        let mut seqs = Vec::new();
        while let Some(d) = s.poll_transmit(now) {
            let ip = Ipv4Packet::new_checked(&d[..]).unwrap();
            let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
            seqs.push((
                tcp.seq_number() - TcpSeqNumber(0xffff_ff00_u32 as i32),
                tcp.payload().len(),
            ));
        }
        assert_eq!(seqs, [(1, 512), (513, 512), (1025, 512), (1537, 512)]);
        assert_eq!(s.stats().retransmitted, 4);
        assert_eq!(s.stats().segments_sent, 8);
    }

    #[test]
    fn an_ack_that_advances_restarts_the_timer_and_resets_the_backoff() {
        let t0 = Instant::ZERO;
        let mut s = flight(2.0, t0);
        let now = s.poll_timeout().unwrap();
        s.handle_timeout(now);
        assert_eq!(s.rxt_shift(), 1);
        let later = now + Duration::from_secs(1);
        s.acknowledge(later, 513);
        assert_eq!(s.rxt_shift(), 0);
        // The segment timed at t0 is still timed after the expiry: its
        // sample runs from its first transmission (no Karn's rule).
        let rtt = (later - t0).as_secs_f64();
        let srtt = 0.9 * 2.0 + 0.1 * rtt;
        assert!((s.srtt().unwrap().as_secs_f64() - srtt).abs() < 1e-9);
        assert_eq!(s.poll_timeout(), Some(later + s.rto()));
    }

    #[test]
    fn datagrams_for_other_connections_are_left_alone() {
        let mut s = sender(Vec::new());
        let d = s.poll_transmit(Instant::ZERO).unwrap();
        // Our own SYN is from A to B: not for us.
        assert!(!s.handle_datagram(Instant::ZERO, &d));
        assert!(!s.handle_datagram(Instant::ZERO, &[0x45, 0, 0]));
        assert!(!s.handle_datagram(Instant::ZERO, &[]));
    }
}
