//! NET/ROM transport (layer 4): the circuits of one node, as the kernel
//! (`nr_in.c`, `nr_out.c`, `nr_timer.c`) and LinBPQ (`L4Code.c`) run
//! them.
//!
//! A circuit is opened by a connect request and its acknowledgement, each
//! end naming it by its own index and ID. Information messages carry a TX
//! and an RX sequence number modulo 256; up to `window` messages may be
//! unacknowledged. The receiver holds messages that arrive out of order
//! within its window, asks for the missing one with an information
//! acknowledgement with NAK set, acknowledges after the acknowledge delay
//! or at once when its window fills, and sets choke while its reader is
//! behind. The sender resends everything unacknowledged when the
//! transport timeout runs out, the one message a NAK names at once, and
//! gives up after the maximum tries. A disconnect request is answered
//! by a disconnect acknowledgement.
//!
//! [`Transport`] never does I/O: datagrams come in by
//! [`Transport::handle_datagram`] and leave by [`Transport::poll_transmit`],
//! time by `now`.

use std::collections::{BTreeMap, VecDeque};

use linklab_core::{Duration, Engine, Instant, TimerKind, TimerTable};
use linklab_wire::ax25::Address;
use thiserror::Error;

use crate::wire::{
    station, CircuitId, ConnectRequest, Datagram, Flags, Message, TimeoutExtension, MAX_INFO_LEN,
};

/// The transport parameters, named as the kernel's netrom sysctls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransportConfig {
    /// T1, how long a message waits for its acknowledgement before it is
    /// sent again: `transport_timeout` 120 s (kernel `NR_DEFAULT_T1`;
    /// LinBPQ `L4TIMEOUT` 60 s). A peer that sends LinBPQ's timeout
    /// extension with a shorter value gets that.
    pub transport_timeout: Duration,
    /// Transmissions of a message before the circuit is given up:
    /// `transport_maximum_tries` 3 (kernel `NR_DEFAULT_N2`; LinBPQ
    /// `L4RETRIES` 3). The kernel sends one more than this, since it
    /// counts retries after the first.
    pub transport_maximum_tries: u8,
    /// T2, how long a receiver may hold back an acknowledgement:
    /// `transport_acknowledge_delay` 5 s (kernel `NR_DEFAULT_T2`, 5000 ms
    /// in `include/net/netrom.h`; LinBPQ `L4DELAY` 10 s).
    pub transport_acknowledge_delay: Duration,
    /// T4, how long a choked sender waits before trying again:
    /// `transport_busy_delay` 180 s (kernel `NR_DEFAULT_T4`).
    pub transport_busy_delay: Duration,
    /// The window proposed in a connect request and the most accepted in
    /// an answer: `transport_requested_window_size` 4 (kernel
    /// `NR_DEFAULT_WINDOW`; LinBPQ `L4WINDOW` 4). At most 127, half the
    /// sequence space.
    pub transport_requested_window_size: u8,
    /// The TTL our datagrams start with: `network_ttl_initialiser` 16
    /// (kernel `NR_DEFAULT_TTL`; LinBPQ `L3TIMETOLIVE` 25).
    pub network_ttl_initialiser: u8,
    /// Most data octets in one information message (the kernel's
    /// `NR_MAX_PACKET_SIZE`, 236; LinBPQ's `PACLEN` may be smaller).
    pub maximum_info_len: usize,
    /// Unread octets a circuit holds before it chokes its peer.
    pub receive_buffer: usize,
    /// Octets a circuit accepts from its user before [`Transport::send`]
    /// takes fewer.
    pub send_buffer: usize,
    /// How long an open circuit may go without receiving anything before
    /// it is disconnected: `transport_no_activity_timeout`, 0 (none) in
    /// the kernel (`NR_DEFAULT_IDLE`); LinBPQ's `IDLETIME` is 900 s.
    pub transport_no_activity_timeout: Option<Duration>,
    /// Whether connect requests are accepted (else refused with choke).
    pub accept_incoming: bool,
    /// Most circuits at once, open or closed and not yet released
    /// (LinBPQ `MAXCIRCUITS`, 128): connect requests past it are refused.
    pub maximum_circuits: usize,
}

impl Default for TransportConfig {
    fn default() -> TransportConfig {
        TransportConfig {
            transport_timeout: Duration::from_secs(120),
            transport_maximum_tries: 3,
            transport_acknowledge_delay: Duration::from_secs(5),
            transport_busy_delay: Duration::from_secs(180),
            transport_requested_window_size: 4,
            network_ttl_initialiser: 16,
            maximum_info_len: MAX_INFO_LEN,
            receive_buffer: 4096,
            send_buffer: 16384,
            transport_no_activity_timeout: None,
            accept_incoming: true,
            maximum_circuits: 128,
        }
    }
}

/// A circuit as its user names it: our own index and ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CircuitHandle(pub CircuitId);

/// Why a circuit ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum CloseReason {
    /// Our user disconnected and the peer acknowledged (or stopped
    /// answering the disconnect request).
    #[error("disconnected")]
    Local,
    /// The peer sent a disconnect request.
    #[error("disconnected by the remote end")]
    Remote,
    /// The far node answered the connect request with choke set.
    #[error("connection refused by the far node")]
    Refused,
    /// Nothing was received for the no-activity timeout, and we
    /// disconnected.
    #[error("disconnected after no activity for the idle timeout")]
    Idle,
    /// A message went unacknowledged after the maximum tries.
    #[error("no answer from the far node after {tries} tries (transport timeout)")]
    TimedOut {
        /// Transmissions made.
        tries: u8,
    },
}

/// What a circuit tells its user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CircuitEvent {
    /// A far user connected to us.
    Incoming {
        /// The new circuit.
        circuit: CircuitHandle,
        /// The user on whose behalf it was opened.
        user: Address,
        /// The node where that user entered the network.
        originating_node: Address,
        /// The far node.
        node: Address,
    },
    /// Our connect request was accepted.
    Connected {
        /// The circuit.
        circuit: CircuitHandle,
    },
    /// Data arrived where there was none unread.
    Readable {
        /// The circuit.
        circuit: CircuitHandle,
    },
    /// The circuit ended; unread data can still be read.
    Closed {
        /// The circuit.
        circuit: CircuitHandle,
        /// Why.
        reason: CloseReason,
    },
}

impl CircuitEvent {
    /// The circuit it is about.
    pub fn circuit(&self) -> CircuitHandle {
        match *self {
            CircuitEvent::Incoming { circuit, .. }
            | CircuitEvent::Connected { circuit }
            | CircuitEvent::Readable { circuit }
            | CircuitEvent::Closed { circuit, .. } => circuit,
        }
    }
}

/// Why a circuit could not be started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ConnectError {
    /// The node table has no usable route to the destination.
    #[error("no NET/ROM route to {0}")]
    NoRoute(Address),
    /// As many circuits as [`TransportConfig::maximum_circuits`] exist.
    #[error(
        "too many NET/ROM circuits open (at most {0}); release closed ones or raise the limit"
    )]
    TooManyCircuits(usize),
}

/// Why [`Transport::send`] took nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum SendError {
    /// No such circuit (never opened, or released).
    #[error("no such NET/ROM circuit")]
    UnknownCircuit,
    /// The circuit is closing or closed.
    #[error("the NET/ROM circuit is closing or closed")]
    Closing,
}

/// The circuit timers (kernel `nr_timer.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    /// T1: the transport timeout.
    T1,
    /// T2: the acknowledge delay.
    T2,
    /// T4: the busy delay.
    T4,
    /// The no-activity timer (kernel `idletimer`).
    Idle,
}

impl TimerKind for Timer {
    const ALL: &'static [Timer] = &[Timer::T1, Timer::T2, Timer::T4, Timer::Idle];

    fn index(self) -> usize {
        self as usize
    }
}

/// Where a circuit stands (kernel `NR_STATE_1` ... `NR_STATE_3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Connect request sent, waiting for its acknowledgement.
    Connecting,
    /// Open.
    Connected,
    /// Disconnect request sent, waiting for its acknowledgement.
    Disconnecting,
    /// Ended.
    Closed,
}

/// One fragment of user data: an information message's data and its
/// more-follows flag.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Segment {
    data: Vec<u8>,
    more_follows: bool,
}

/// One circuit's state.
#[derive(Debug, Clone)]
struct Circuit {
    my: CircuitId,
    your: CircuitId,
    node: Address,
    user: Address,
    state: State,
    window: u8,
    t1: Duration,
    /// V(S): the next TX sequence number to send.
    vs: u8,
    /// V(A): the oldest unacknowledged TX sequence number.
    va: u8,
    /// The highest V(S) reached since V(A) (V(S) falls back to V(A) on
    /// T1 expiry; acknowledgements up to this are still valid).
    vs_high: u8,
    /// V(R): the next RX sequence number expected.
    vr: u8,
    /// The V(R) last sent to the peer.
    vl: u8,
    /// Segments from V(A) on: sent and unacknowledged, then unsent.
    outstanding: VecDeque<Segment>,
    outstanding_octets: usize,
    /// Received messages held out of order or while choked, by sequence.
    resequence: BTreeMap<u8, Segment>,
    received: VecDeque<u8>,
    own_busy: bool,
    peer_busy: bool,
    ack_now: bool,
    /// The V(R) a NAK was last sent for, so a gap is NAKed once.
    naked: Option<u8>,
    /// A NAK from the peer asks for this message again.
    resend: Option<u8>,
    tries: u8,
    closing: bool,
    /// What follows the window in our connect acknowledgement.
    ack_trailer: Vec<u8>,
    control: VecDeque<Message>,
    /// The reason given when the disconnect under way completes.
    ending: CloseReason,
    timers: TimerTable<Timer, 4>,
}

impl Circuit {
    fn new(
        my: CircuitId,
        node: Address,
        user: Address,
        state: State,
        window: u8,
        t1: Duration,
    ) -> Circuit {
        Circuit {
            my,
            your: CircuitId { index: 0, id: 0 },
            node,
            user,
            state,
            window,
            t1,
            vs: 0,
            va: 0,
            vs_high: 0,
            vr: 0,
            vl: 0,
            outstanding: VecDeque::new(),
            outstanding_octets: 0,
            resequence: BTreeMap::new(),
            received: VecDeque::new(),
            own_busy: false,
            peer_busy: false,
            ack_now: false,
            naked: None,
            resend: None,
            tries: 0,
            closing: false,
            ack_trailer: Vec::new(),
            control: VecDeque::new(),
            ending: CloseReason::Local,
            timers: TimerTable::default(),
        }
    }

    /// Something arrived on the open circuit: the no-activity timer starts
    /// again.
    fn heard(&mut self, now: Instant, idle: Option<Duration>) {
        if let Some(idle) = idle {
            self.timers.start(Timer::Idle, now, idle);
        }
    }

    fn in_flight(&self) -> u8 {
        self.vs.wrapping_sub(self.va)
    }

    /// Takes an acknowledgement of everything before `nr` (the kernel's
    /// `nr_validate_nr` then `nr_frames_acked`); an N(R) outside V(A) to
    /// the highest V(S) is ignored.
    fn acknowledge(&mut self, now: Instant, nr: u8) {
        let acked = nr.wrapping_sub(self.va);
        if acked == 0 || acked > self.vs_high.wrapping_sub(self.va) {
            return;
        }
        for _ in 0..acked {
            if let Some(s) = self.outstanding.pop_front() {
                self.outstanding_octets -= s.data.len();
            }
        }
        self.va = nr;
        if self.vs.wrapping_sub(self.va) > self.vs_high.wrapping_sub(self.va) {
            // V(S) had fallen back behind N(R): carry on from N(R).
            self.vs = self.va;
        }
        if self.in_flight() == 0 {
            self.timers.stop(Timer::T1, now);
            self.tries = 0;
        } else if self.peer_busy {
            // T4, not T1, bounds the wait for a choked peer.
            self.tries = 1;
        } else {
            self.timers.start(Timer::T1, now, self.t1);
            self.tries = 1;
        }
        if self
            .resend
            .is_some_and(|s| s.wrapping_sub(self.va) >= self.vs_high.wrapping_sub(self.va))
        {
            self.resend = None;
        }
    }

    /// The peer's choke flag (kernel state 3: choke starts T4, its absence
    /// stops it). While choked, T1 does not run: the peer is alive.
    fn peer_choke(&mut self, now: Instant, choke: bool, busy_delay: Duration) {
        if choke {
            self.peer_busy = true;
            if !self.timers.is_running(Timer::T4) {
                self.timers.start(Timer::T4, now, busy_delay);
            }
            self.timers.stop(Timer::T1, now);
        } else if self.peer_busy {
            self.peer_busy = false;
            self.timers.stop(Timer::T4, now);
            self.go_back(now);
        }
    }

    /// Falls back to resend everything unacknowledged.
    fn go_back(&mut self, now: Instant) {
        self.vs = self.va;
        if !self.outstanding.is_empty() {
            self.timers.start(Timer::T1, now, self.t1);
        }
    }

    /// Takes a received information message (kernel `nr_state3_machine`,
    /// `NR_INFO`).
    fn receive(&mut self, tx_sequence: u8, segment: Segment) {
        let offset = tx_sequence.wrapping_sub(self.vr);
        if offset < self.window {
            self.resequence.entry(tx_sequence).or_insert(segment);
        } else {
            // Already taken: our acknowledgement was lost; send it again.
            self.ack_now = true;
        }
    }

    /// Moves in-sequence held messages to the reader while it keeps up.
    /// Returns whether the reader had nothing and now has data.
    fn deliver(&mut self, receive_buffer: usize) -> bool {
        let was_empty = self.received.is_empty();
        while !self.own_busy {
            let Some(segment) = self.resequence.remove(&self.vr) else {
                break;
            };
            self.received.extend(segment.data);
            self.vr = self.vr.wrapping_add(1);
            self.own_busy = self.received.len() >= receive_buffer;
        }
        // Messages outside the window after V(R) moved are stale.
        let (vr, window) = (self.vr, self.window);
        self.resequence.retain(|&s, _| s.wrapping_sub(vr) < window);
        was_empty && !self.received.is_empty()
    }

    /// Decides how to acknowledge after receiving: at once when the
    /// window is full, a gap needs a NAK or the choke state must be told;
    /// else after T2.
    fn schedule_ack(&mut self, now: Instant, acknowledge_delay: Duration) {
        let gap = !self.own_busy && !self.resequence.is_empty();
        if gap && self.naked != Some(self.vr) {
            self.ack_now = true;
        }
        if self.vr.wrapping_sub(self.vl) >= self.window || self.own_busy {
            self.ack_now = true;
        }
        if self.vr != self.vl && !self.timers.is_running(Timer::T2) {
            self.timers.start(Timer::T2, now, acknowledge_delay);
        }
    }

    fn our_flags(&self) -> Flags {
        Flags {
            choke: self.own_busy,
            ..Flags::default()
        }
    }

    /// The next message this circuit sends, if any.
    fn poll_message(&mut self, now: Instant) -> Option<Message> {
        if let Some(m) = self.control.pop_front() {
            return Some(m);
        }
        if self.state != State::Connected {
            return None;
        }
        if let Some(seq) = self.resend.take() {
            let index = usize::from(seq.wrapping_sub(self.va));
            if index < usize::from(self.in_flight()) {
                if let Some(segment) = self.outstanding.get(index).cloned() {
                    return Some(self.information(now, seq, segment));
                }
            }
        }
        let sendable = !self.peer_busy
            && self.in_flight() < self.window
            && usize::from(self.in_flight()) < self.outstanding.len();
        if sendable {
            let seq = self.vs;
            let segment = self
                .outstanding
                .get(usize::from(self.in_flight()))
                .cloned()?;
            self.vs = self.vs.wrapping_add(1);
            if self.vs.wrapping_sub(self.va) > self.vs_high.wrapping_sub(self.va) {
                self.vs_high = self.vs;
            }
            if !self.timers.is_running(Timer::T1) {
                self.timers.start(Timer::T1, now, self.t1);
                self.tries = self.tries.max(1);
            }
            return Some(self.information(now, seq, segment));
        }
        if self.ack_now {
            let nak = !self.own_busy && !self.resequence.is_empty();
            if nak {
                self.naked = Some(self.vr);
            }
            self.acked(now);
            return Some(Message::InformationAck {
                your: self.your,
                rx_sequence: self.vr,
                flags: Flags {
                    nak,
                    ..self.our_flags()
                },
            });
        }
        if self.closing && self.outstanding.is_empty() {
            self.closing = false;
            self.state = State::Disconnecting;
            self.tries = 1;
            self.timers.start(Timer::T1, now, self.t1);
            return Some(Message::DisconnectRequest { your: self.your });
        }
        None
    }

    fn information(&mut self, now: Instant, seq: u8, segment: Segment) -> Message {
        self.acked(now);
        Message::Information {
            your: self.your,
            tx_sequence: seq,
            rx_sequence: self.vr,
            flags: Flags {
                more_follows: segment.more_follows,
                ..self.our_flags()
            },
            data: segment.data,
        }
    }

    /// An acknowledgement of V(R) goes out (alone or with information).
    fn acked(&mut self, now: Instant) {
        self.vl = self.vr;
        self.ack_now = false;
        self.timers.stop(Timer::T2, now);
    }

    fn connect_request(&self, window: u8, my_node: Address) -> Message {
        Message::ConnectRequest(ConnectRequest {
            circuit: self.my,
            window,
            user: self.user,
            originating_node: my_node,
            timeout: Some(TimeoutExtension(
                u16::try_from(self.t1.as_secs()).unwrap_or(u16::MAX) & 0x3FFF,
            )),
            trailer: Vec::new(),
        })
    }
}

/// The transport layer of one node: all its circuits.
#[derive(Debug, Clone)]
pub struct Transport {
    my_node: Address,
    config: TransportConfig,
    circuits: BTreeMap<CircuitId, Circuit>,
    /// Answers not tied to a circuit of ours (refusals, disconnect
    /// acknowledgements for circuits we no longer have).
    orphans: VecDeque<Datagram>,
    events: VecDeque<CircuitEvent>,
    next_circuit: u16,
}

impl Transport {
    /// The transport of the node `my_node`.
    pub fn new(my_node: Address, config: TransportConfig) -> Transport {
        Transport {
            my_node: station(&my_node),
            config,
            circuits: BTreeMap::new(),
            orphans: VecDeque::new(),
            events: VecDeque::new(),
            next_circuit: 1,
        }
    }

    /// The parameters.
    pub fn config(&self) -> &TransportConfig {
        &self.config
    }

    /// Opens a circuit for `user` to the node `node`: sends a connect
    /// request and waits for [`CircuitEvent::Connected`] or
    /// [`CircuitEvent::Closed`].
    pub fn connect(
        &mut self,
        now: Instant,
        user: Address,
        node: Address,
    ) -> Result<CircuitHandle, ConnectError> {
        let my = self
            .allocate()
            .ok_or(ConnectError::TooManyCircuits(self.config.maximum_circuits))?;
        let window = self.window();
        let mut circuit = Circuit::new(
            my,
            station(&node),
            station(&user),
            State::Connecting,
            window,
            self.config.transport_timeout,
        );
        circuit
            .control
            .push_back(circuit.connect_request(window, self.my_node));
        circuit.tries = 1;
        circuit.timers.start(Timer::T1, now, circuit.t1);
        self.circuits.insert(my, circuit);
        Ok(CircuitHandle(my))
    }

    /// Queues user data; returns how many octets were taken (fewer than
    /// given when the send buffer is full). The data goes in information
    /// messages of at most `maximum_info_len` octets, more-follows set on
    /// all but the last.
    pub fn send(&mut self, circuit: CircuitHandle, data: &[u8]) -> Result<usize, SendError> {
        let config = self.config;
        let c = self
            .circuits
            .get_mut(&circuit.0)
            .ok_or(SendError::UnknownCircuit)?;
        if c.closing || matches!(c.state, State::Disconnecting | State::Closed) {
            return Err(SendError::Closing);
        }
        let room = config.send_buffer.saturating_sub(c.outstanding_octets);
        let taken = &data[..data.len().min(room)];
        let mut chunks = taken.chunks(config.maximum_info_len.max(1)).peekable();
        while let Some(chunk) = chunks.next() {
            c.outstanding_octets += chunk.len();
            c.outstanding.push_back(Segment {
                data: chunk.to_vec(),
                more_follows: chunks.peek().is_some(),
            });
        }
        Ok(taken.len())
    }

    /// Reads received data into `buf`; returns the octets read. Reading
    /// may lift our choke, which is then told to the peer.
    pub fn recv(&mut self, now: Instant, circuit: CircuitHandle, buf: &mut [u8]) -> usize {
        let config = self.config;
        let Some(c) = self.circuits.get_mut(&circuit.0) else {
            return 0;
        };
        let n = buf.len().min(c.received.len());
        for (slot, octet) in buf.iter_mut().zip(c.received.drain(..n)) {
            *slot = octet;
        }
        if c.own_busy && c.received.len() <= config.receive_buffer / 2 {
            c.own_busy = false;
            c.deliver(config.receive_buffer);
            // Tell the peer at once that the choke is lifted.
            c.ack_now = c.state == State::Connected;
            c.schedule_ack(now, config.transport_acknowledge_delay);
        }
        n
    }

    /// Octets received and not yet read.
    pub fn readable(&self, circuit: CircuitHandle) -> usize {
        self.circuits
            .get(&circuit.0)
            .map_or(0, |c| c.received.len())
    }

    /// Octets taken by [`Transport::send`] and not yet acknowledged.
    pub fn unacknowledged(&self, circuit: CircuitHandle) -> usize {
        self.circuits
            .get(&circuit.0)
            .map_or(0, |c| c.outstanding_octets)
    }

    /// Where a circuit stands, if we have it.
    pub fn state(&self, circuit: CircuitHandle) -> Option<State> {
        self.circuits.get(&circuit.0).map(|c| c.state)
    }

    /// The far node and far user of a circuit.
    pub fn peer(&self, circuit: CircuitHandle) -> Option<(Address, Address)> {
        self.circuits.get(&circuit.0).map(|c| (c.node, c.user))
    }

    /// Closes a circuit: once everything sent is acknowledged, a
    /// disconnect request goes out (a circuit still connecting first
    /// connects and delivers what was queued).
    pub fn disconnect(&mut self, circuit: CircuitHandle) {
        if let Some(c) = self.circuits.get_mut(&circuit.0) {
            if matches!(c.state, State::Connecting | State::Connected) {
                c.closing = true;
            }
        }
    }

    /// Forgets a closed circuit and any data left unread or unacknowledged
    /// in it. Closed circuits stay until released, so that their user can
    /// read what arrived and learn what was not acknowledged.
    pub fn release(&mut self, circuit: CircuitHandle) {
        if self
            .circuits
            .get(&circuit.0)
            .is_some_and(|c| c.state == State::Closed)
        {
            self.circuits.remove(&circuit.0);
        }
    }

    /// The next event for the user.
    pub fn poll_event(&mut self) -> Option<CircuitEvent> {
        self.events.pop_front()
    }

    /// The circuits, with their states.
    pub fn circuits(&self) -> impl Iterator<Item = (CircuitHandle, State)> + '_ {
        self.circuits
            .iter()
            .map(|(&id, c)| (CircuitHandle(id), c.state))
    }

    /// Takes a datagram addressed to our node.
    pub fn handle_datagram(&mut self, now: Instant, datagram: Datagram) {
        let origin = station(&datagram.origin);
        let config = self.config;
        match datagram.message {
            Message::ConnectRequest(request) => self.handle_connect_request(now, origin, request),
            Message::ConnectAck {
                your,
                my,
                window,
                refused,
                ..
            } => {
                let Some(c) = self.circuit_from(your, origin) else {
                    return;
                };
                if c.state != State::Connecting {
                    return;
                }
                c.timers.stop(Timer::T1, now);
                c.tries = 0;
                let handle = CircuitHandle(c.my);
                if refused {
                    c.state = State::Closed;
                    self.events.push_back(CircuitEvent::Closed {
                        circuit: handle,
                        reason: CloseReason::Refused,
                    });
                } else {
                    c.your = my;
                    c.window = c.window.min(window).max(1);
                    c.state = State::Connected;
                    c.heard(now, config.transport_no_activity_timeout);
                    self.events
                        .push_back(CircuitEvent::Connected { circuit: handle });
                }
            }
            Message::DisconnectRequest { your } => {
                let answer = Message::DisconnectAck {
                    your: self.your_of(your, origin),
                };
                match self.circuit_from(your, origin) {
                    Some(c) if c.state != State::Closed => {
                        let was_connecting = c.state == State::Connecting;
                        c.state = State::Closed;
                        c.timers = TimerTable::default();
                        c.control.clear();
                        c.control.push_back(answer);
                        let handle = CircuitHandle(c.my);
                        let reason = if was_connecting {
                            CloseReason::Refused
                        } else {
                            CloseReason::Remote
                        };
                        self.events.push_back(CircuitEvent::Closed {
                            circuit: handle,
                            reason,
                        });
                    }
                    _ => self.orphans.push_back(self.datagram_to(origin, answer)),
                }
            }
            Message::DisconnectAck { your } => {
                let Some(c) = self.circuit_from(your, origin) else {
                    return;
                };
                if c.state == State::Disconnecting {
                    c.state = State::Closed;
                    c.timers = TimerTable::default();
                    let handle = CircuitHandle(c.my);
                    let reason = c.ending;
                    self.events.push_back(CircuitEvent::Closed {
                        circuit: handle,
                        reason,
                    });
                }
            }
            Message::Information {
                your,
                tx_sequence,
                rx_sequence,
                flags,
                data,
            } => {
                let Some(c) = self.connected_peer_said(now, your, origin, rx_sequence, flags)
                else {
                    return;
                };
                c.receive(
                    tx_sequence,
                    Segment {
                        data,
                        more_follows: flags.more_follows,
                    },
                );
                let readable = c.deliver(config.receive_buffer);
                c.schedule_ack(now, config.transport_acknowledge_delay);
                if readable {
                    let circuit = CircuitHandle(c.my);
                    self.events.push_back(CircuitEvent::Readable { circuit });
                }
            }
            Message::InformationAck {
                your,
                rx_sequence,
                flags,
            } => {
                self.connected_peer_said(now, your, origin, rx_sequence, flags);
            }
            // Protocol extensions and unknown opcodes are not ours.
            Message::Other { .. } => {}
        }
    }

    /// A connect request (kernel `nr_rx_frame`): a repeat of one we took
    /// is answered again; a new one is accepted with the smaller window
    /// and transport timeout, or refused.
    fn handle_connect_request(&mut self, now: Instant, origin: Address, request: ConnectRequest) {
        let window = self.window();
        if let Some(c) = self.circuits.values_mut().find(|c| {
            c.node == origin
                && c.your == request.circuit
                && c.state != State::Closed
                && c.state != State::Connecting
        }) {
            if c.state == State::Connected {
                let ack = Message::ConnectAck {
                    your: c.your,
                    my: c.my,
                    window: c.window,
                    refused: false,
                    trailer: c.ack_trailer.clone(),
                };
                c.control.push_back(ack);
            }
            return;
        }
        let my = match self.allocate() {
            Some(my) if self.config.accept_incoming => my,
            _ => {
                let refusal = Message::ConnectAck {
                    your: request.circuit,
                    my: CircuitId { index: 0, id: 0 },
                    window: 0,
                    refused: true,
                    trailer: Vec::new(),
                };
                self.orphans.push_back(self.datagram_to(origin, refusal));
                return;
            }
        };
        let t1 = match request.timeout_secs() {
            Some(secs) if secs > 0 => self
                .config
                .transport_timeout
                .min(Duration::from_secs(u64::from(secs))),
            _ => self.config.transport_timeout,
        };
        let window = if request.window == 0 {
            window
        } else {
            window.min(request.window)
        };
        let user = station(&request.user);
        let mut circuit = Circuit::new(my, origin, user, State::Connected, window, t1);
        circuit.your = request.circuit;
        circuit.heard(now, self.config.transport_no_activity_timeout);
        // As the kernel does: a requester that sent LinBPQ's timeout gets
        // our network TTL initialiser after the window.
        if request.timeout.is_some() {
            circuit.ack_trailer = vec![self.config.network_ttl_initialiser];
        }
        circuit.control.push_back(Message::ConnectAck {
            your: request.circuit,
            my,
            window,
            refused: false,
            trailer: circuit.ack_trailer.clone(),
        });
        self.circuits.insert(my, circuit);
        self.events.push_back(CircuitEvent::Incoming {
            circuit: CircuitHandle(my),
            user,
            originating_node: station(&request.originating_node),
            node: origin,
        });
    }

    /// Our circuit `my`, if the datagram came from its far node.
    /// What an information message and an information acknowledgement
    /// both say to a connected circuit: the far end is alive, whether it
    /// chokes, what it has received (RX sequence) and, with NAK, which
    /// message to resend. The circuit, if it is ours and connected.
    fn connected_peer_said(
        &mut self,
        now: Instant,
        my: CircuitId,
        origin: Address,
        rx_sequence: u8,
        flags: Flags,
    ) -> Option<&mut Circuit> {
        let config = self.config;
        let c = self
            .circuit_from(my, origin)
            .filter(|c| c.state == State::Connected)?;
        c.heard(now, config.transport_no_activity_timeout);
        c.peer_choke(now, flags.choke, config.transport_busy_delay);
        c.acknowledge(now, rx_sequence);
        if flags.nak {
            c.resend = Some(rx_sequence);
        }
        Some(c)
    }

    fn circuit_from(&mut self, my: CircuitId, origin: Address) -> Option<&mut Circuit> {
        self.circuits.get_mut(&my).filter(|c| c.node == origin)
    }

    /// The far end's name for our circuit `my` (for answers to circuits we
    /// no longer know, the name as received).
    fn your_of(&self, my: CircuitId, origin: Address) -> CircuitId {
        self.circuits
            .get(&my)
            .filter(|c| c.node == origin)
            .map_or(my, |c| c.your)
    }

    fn datagram_to(&self, node: Address, message: Message) -> Datagram {
        Datagram {
            origin: self.my_node,
            destination: node,
            ttl: self.config.network_ttl_initialiser,
            message,
        }
    }

    fn window(&self) -> u8 {
        self.config.transport_requested_window_size.clamp(1, 127)
    }

    /// A fresh index and ID (the kernel's `nr_find_next_circuit`: a
    /// 16-bit counter, index the high octet, skipping those in use), or
    /// none at [`TransportConfig::maximum_circuits`].
    fn allocate(&mut self) -> Option<CircuitId> {
        if self.circuits.len() >= self.config.maximum_circuits.min(usize::from(u16::MAX)) {
            return None;
        }
        loop {
            let n = self.next_circuit;
            self.next_circuit = self.next_circuit.wrapping_add(1).max(1);
            let [index, id] = n.to_be_bytes();
            let candidate = CircuitId { index, id };
            if !self.circuits.contains_key(&candidate) {
                return Some(candidate);
            }
        }
    }

    fn on_timer(&mut self, now: Instant, my: CircuitId, timer: Timer) {
        let config = self.config;
        let my_node = self.my_node;
        let Some(c) = self.circuits.get_mut(&my) else {
            return;
        };
        let handle = CircuitHandle(my);
        match (timer, c.state) {
            (Timer::T1, State::Connecting) => {
                if c.tries >= config.transport_maximum_tries {
                    c.state = State::Closed;
                    let tries = c.tries;
                    self.events.push_back(CircuitEvent::Closed {
                        circuit: handle,
                        reason: CloseReason::TimedOut { tries },
                    });
                } else {
                    c.tries += 1;
                    let request = c.connect_request(c.window, my_node);
                    c.control.push_back(request);
                    c.timers.start(Timer::T1, now, c.t1);
                }
            }
            (Timer::T1, State::Connected) => {
                if c.tries >= config.transport_maximum_tries {
                    c.state = State::Closed;
                    c.timers = TimerTable::default();
                    c.control.clear();
                    let tries = c.tries;
                    self.events.push_back(CircuitEvent::Closed {
                        circuit: handle,
                        reason: CloseReason::TimedOut { tries },
                    });
                } else {
                    c.tries += 1;
                    c.go_back(now);
                }
            }
            (Timer::T1, State::Disconnecting) => {
                if c.tries >= config.transport_maximum_tries {
                    c.state = State::Closed;
                    let reason = c.ending;
                    self.events.push_back(CircuitEvent::Closed {
                        circuit: handle,
                        reason,
                    });
                } else {
                    c.tries += 1;
                    c.control
                        .push_back(Message::DisconnectRequest { your: c.your });
                    c.timers.start(Timer::T1, now, c.t1);
                }
            }
            (Timer::T2, State::Connected) => c.ack_now = true,
            (Timer::Idle, State::Connected) => {
                // Kernel `nr_idletimer_expiry`: a disconnect request at
                // once; what was not acknowledged stays counted.
                c.ending = CloseReason::Idle;
                c.state = State::Disconnecting;
                c.closing = false;
                c.tries = 1;
                c.timers = TimerTable::default();
                c.control
                    .push_back(Message::DisconnectRequest { your: c.your });
                c.timers.start(Timer::T1, now, c.t1);
            }
            (Timer::T4, State::Connected) => {
                // The busy delay is over: try again as if unchoked.
                c.peer_busy = false;
                c.go_back(now);
            }
            _ => {}
        }
    }
}

impl Engine for Transport {
    type Transmit = Datagram;

    fn poll_transmit(&mut self, now: Instant) -> Option<Datagram> {
        if let Some(d) = self.orphans.pop_front() {
            return Some(d);
        }
        let ttl = self.config.network_ttl_initialiser;
        let origin = self.my_node;
        self.circuits.values_mut().find_map(|c| {
            let message = c.poll_message(now)?;
            Some(Datagram {
                origin,
                destination: c.node,
                ttl,
                message,
            })
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.circuits
            .values()
            .filter_map(|c| c.timers.next_deadline())
            .min()
    }

    fn handle_timeout(&mut self, now: Instant) {
        let due: Vec<CircuitId> = self
            .circuits
            .iter()
            .filter(|(_, c)| c.timers.next_deadline().is_some_and(|t| t <= now))
            .map(|(&id, _)| id)
            .collect();
        for id in due {
            while let Some(timer) = self
                .circuits
                .get_mut(&id)
                .and_then(|c| c.timers.take_expired(now))
            {
                self.on_timer(now, id, timer);
            }
        }
    }
}
