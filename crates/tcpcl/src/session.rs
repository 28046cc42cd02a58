//! The TCPCLv4 session engine: one TCP connection, from contact header to
//! SESS_TERM (RFC 9174 sections 3 to 6), without I/O and without a clock.

use linklab_core::{Engine, Instant};
use std::collections::VecDeque;

use thiserror::Error;

use crate::config::{is_uri, Config, ConfigError, Role};
use crate::event::{Cause, Event, SessionParams, Side, Termination, TransferId};
use crate::wire::{
    ContactError, ContactHeader, DecodeError, Decoded, ExtensionItem, Limits, Message, MessageType,
    MsgReject, RefuseReason, RejectReason, SessInit, SessTerm, SessTermReason, XferAck, XferRefuse,
    XferSegment, END, REPLY, START, TRANSFER_LENGTH, VERSION,
};

/// Where a session is (RFC 9174 section 3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Waiting for the peer's contact header.
    Contact,
    /// Contact headers exchanged, waiting for the peer's SESS_INIT.
    Negotiating,
    /// Transfers may flow both ways.
    Established,
    /// A SESS_TERM was sent: transfers in progress may finish, no new ones
    /// start (section 6.1).
    Ending,
    /// Over: flush [`Session::poll_transmit`] and close the connection.
    Closed,
}

/// Where a session is, with what holds only there: the negotiated
/// parameters exist from the SESS_INIT exchange on (RFC 9174 section 4.7),
/// the Ending state's start only once a SESS_TERM was sent (section 6.1).
/// [`State`] is its public summary.
#[derive(Debug)]
enum Phase {
    /// Waiting for the peer's contact header (section 4.2).
    Contact,
    /// Contact headers exchanged, waiting for the peer's SESS_INIT.
    Negotiating,
    /// Transfers may flow both ways.
    Established(Established),
    /// A SESS_TERM was sent: transfers in progress may finish.
    Ending {
        /// The session as it was established.
        established: Established,
        /// When the Ending state began, for its timer (section 6.1).
        since: Instant,
    },
    /// Over; the parameters it had if it was ever established.
    Closed(Option<Established>),
}

/// What the SESS_INIT exchange settled (RFC 9174 section 4.7).
#[derive(Debug)]
struct Established {
    params: SessionParams,
}

impl Established {
    /// The Session Keepalive, `None` when negotiated to 0: no KEEPALIVEs
    /// (section 5.1.1).
    fn keepalive(&self) -> Option<core::time::Duration> {
        Some(core::time::Duration::from_secs(
            self.params.keepalive_interval.into(),
        ))
        .filter(|k| !k.is_zero())
    }
}

impl Phase {
    fn state(&self) -> State {
        match self {
            Phase::Contact => State::Contact,
            Phase::Negotiating => State::Negotiating,
            Phase::Established(_) => State::Established,
            Phase::Ending { .. } => State::Ending,
            Phase::Closed(_) => State::Closed,
        }
    }

    /// The session's parameters, once it was established.
    fn established(&self) -> Option<&Established> {
        match self {
            Phase::Established(established)
            | Phase::Ending { established, .. }
            | Phase::Closed(Some(established)) => Some(established),
            Phase::Contact | Phase::Negotiating | Phase::Closed(None) => None,
        }
    }
}

/// Why [`Session::send_transfer`] did not queue a transfer.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SendError {
    /// The session is not established yet.
    #[error("the TCPCL session is not established yet")]
    NotEstablished,
    /// A SESS_TERM was exchanged: no new transfers (RFC 9174 section 6.1).
    #[error("the TCPCL session is ending: no new transfers")]
    Ending,
    /// The session is closed.
    #[error("the TCPCL session is closed")]
    Closed,
    /// The transfer is longer than the peer's Transfer MRU (section 4.7).
    #[error("a transfer of {length} octets exceeds the peer's transfer MRU of {transfer_mtu}")]
    TooLarge {
        /// The transfer's length.
        length: u64,
        /// The peer's Transfer MRU.
        transfer_mtu: u64,
    },
    /// Every Transfer ID is used; the session is being terminated with
    /// "Resource Exhaustion" (section 5.2.1).
    #[error("all transfer IDs of the session are used")]
    TransferIdsExhausted,
}

/// Why [`Session::refuse_transfer`] did nothing.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("no incoming transfer {0} in progress to refuse")]
pub struct RefuseError(pub TransferId);

/// Why [`Session::accept_transfer`] did nothing.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("no received transfer {0} is waiting for its last XFER_ACK")]
pub struct AcceptError(pub TransferId);

/// One message (or segment) waiting for [`Session::poll_transmit`].
#[derive(Debug)]
struct Chunk {
    octets: Vec<u8>,
    /// The outgoing transfer this segment belongs to.
    transfer: Option<TransferId>,
}

/// An outgoing transfer not yet fully acknowledged.
#[derive(Debug)]
struct Outgoing {
    id: TransferId,
    total: u64,
    acked: u64,
    /// Whether a segment of it has left through `poll_transmit`.
    started: bool,
}

/// The incoming transfer in progress (no interleaving: section 5.2.2).
#[derive(Debug)]
struct Incoming {
    id: TransferId,
    data: Vec<u8>,
    declared: Option<u64>,
    /// Refused: its remaining segments are dropped unacknowledged.
    refused: bool,
}

/// The session's timers, each a deadline computed from the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timer {
    /// Contact headers and SESS_INITs must be exchanged by then.
    Establishment,
    /// Send KEEPALIVE when nothing was sent for the Session Keepalive
    /// (RFC 9174 section 5.1.1).
    KeepaliveSend,
    /// SESS_TERM "Idle timeout" when nothing came for twice the Session
    /// Keepalive (section 5.1.1).
    KeepaliveReceive,
    /// SESS_TERM "Idle timeout" when nothing but KEEPALIVE came for the
    /// configured idle time (section 6.2).
    Idle,
    /// Close this long after sending SESS_TERM (section 6.1).
    Ending,
}

const TIMERS: [Timer; 5] = [
    Timer::Establishment,
    Timer::KeepaliveSend,
    Timer::KeepaliveReceive,
    Timer::Idle,
    Timer::Ending,
];

/// A TCPCLv4 session over one TCP connection.
///
/// Feed it the connection's octets with [`handle_input`](Self::handle_input)
/// (and [`handle_eof`](Self::handle_eof) when the peer closes), write out
/// what [`poll_transmit`](Self::poll_transmit) gives, act on
/// [`poll_event`](Self::poll_event), and call
/// [`handle_timeout`](Self::handle_timeout) at
/// [`poll_timeout`](Self::poll_timeout). When [`is_closed`](Self::is_closed),
/// drain `poll_transmit` and close the connection.
#[derive(Debug)]
pub struct Session {
    config: Config,
    role: Role,
    phase: Phase,
    /// Received octets not yet decoded.
    rx: Vec<u8>,
    /// Octets of a rejected oversized segment still to skip.
    discard: u64,
    tx: VecDeque<Chunk>,
    events: VecDeque<Event>,
    peer_contact: Option<ContactHeader>,
    started_at: Instant,
    last_sent: Instant,
    last_received: Instant,
    /// When the last message other than KEEPALIVE came.
    last_activity: Instant,
    next_transfer_id: Option<TransferId>,
    outgoing: VecDeque<Outgoing>,
    incoming: Option<Incoming>,
    /// Received transfers whose last XFER_ACK waits for
    /// [`Session::accept_transfer`] (with `hold_final_ack`), that XFER_ACK
    /// encoded, and the octets the XFER_ACKs before it acknowledge.
    held: Vec<(TransferId, Vec<u8>, u64)>,
    term_sent: Option<SessTermReason>,
    term_received: Option<SessTermReason>,
    /// The first cause of the end, once there is one.
    cause: Option<Cause>,
}

impl Session {
    /// A session at the start of a TCP connection. An active entity's
    /// contact header is queued at once (RFC 9174 section 4.1); a passive
    /// one waits for the peer's. The contact header never has CAN_TLS:
    /// sessions are plain TCP.
    pub fn new(role: Role, config: Config, now: Instant) -> Result<Session, ConfigError> {
        config.validate()?;
        let mut session = Session {
            config,
            role,
            phase: Phase::Contact,
            rx: Vec::new(),
            discard: 0,
            tx: VecDeque::new(),
            events: VecDeque::new(),
            peer_contact: None,
            started_at: now,
            last_sent: now,
            last_received: now,
            last_activity: now,
            next_transfer_id: Some(0),
            outgoing: VecDeque::new(),
            incoming: None,
            held: Vec::new(),
            term_sent: None,
            term_received: None,
            cause: None,
        };
        if role == Role::Active {
            session.queue_octets(now, ContactHeader::new(false).encode().to_vec());
        }
        Ok(session)
    }

    /// Where the session is.
    pub fn state(&self) -> State {
        self.phase.state()
    }

    /// Whether the session is over (the connection should be closed once
    /// `poll_transmit` is drained).
    pub fn is_closed(&self) -> bool {
        matches!(self.phase, Phase::Closed(_))
    }

    /// The negotiated parameters, once established.
    pub fn params(&self) -> Option<&SessionParams> {
        self.phase.established().map(|e| &e.params)
    }

    /// Octets received from the TCP connection.
    pub fn handle_input(&mut self, now: Instant, octets: &[u8]) {
        if self.is_closed() {
            return;
        }
        self.last_received = now;
        self.rx.extend_from_slice(octets);
        let mut pos = 0;
        while !self.is_closed() {
            if self.discard > 0 {
                let skip = self.discard.min((self.rx.len() - pos) as u64);
                pos += skip as usize;
                self.discard -= skip;
                if self.discard > 0 {
                    break;
                }
                continue;
            }
            let rest = &self.rx[pos..];
            if matches!(self.phase, Phase::Contact) {
                match ContactHeader::decode(rest) {
                    Ok(None) => break,
                    Ok(Some(header)) => {
                        pos += ContactHeader::LEN;
                        self.on_contact(now, header);
                    }
                    Err(ContactError::BadMagic(octets)) => self.close(Cause::NotTcpcl(octets)),
                }
                continue;
            }
            let limits = Limits {
                segment_data: self.config.segment_mru,
                extension_items: self.config.max_extension_items,
            };
            match Message::decode(rest, &limits) {
                Ok(Decoded::Incomplete) => break,
                Ok(Decoded::Message { message, len }) => {
                    pos += len;
                    self.on_message(now, message);
                }
                Err(error) => pos += self.on_decode_error(now, error),
            }
        }
        if self.is_closed() {
            self.rx = Vec::new();
        } else {
            self.rx.drain(..pos);
        }
    }

    /// The incoming transfer in progress and its octets so far: every
    /// segment's once its XFER_ACK is queued (RFC 9174 5.2.3). A caller
    /// that makes these durable before it writes out what
    /// [`poll_transmit`](Self::poll_transmit) gives acknowledges only
    /// octets it keeps, and can keep the prefix of a transfer cut off for
    /// reactive fragmentation (RFC 9171 5.8). `None` between transfers and
    /// while a refused one is skipped.
    pub fn incoming(&self) -> Option<(TransferId, &[u8])> {
        self.incoming
            .as_ref()
            .filter(|incoming| !incoming.refused)
            .map(|incoming| (incoming.id, incoming.data.as_slice()))
    }

    /// The peer closed its side of the TCP connection.
    pub fn handle_eof(&mut self, _now: Instant) {
        let cause = match self.term_received {
            _ if self.phase.established().is_none() && self.peer_can_tls() => Cause::TlsRequired,
            Some(reason) => Cause::PeerTerminated(reason),
            None => Cause::ConnectionLost,
        };
        self.close(cause);
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Queues `data` as one transfer (one bundle), segmented to the peer's
    /// Segment MRU and this entity's `max_segment` (RFC 9174 section
    /// 5.2.2), the first segment with the Transfer Length extension
    /// (section 5.2.5.1) unless configured otherwise. Transfers go out one
    /// after the other, never interleaved.
    pub fn send_transfer(&mut self, now: Instant, data: &[u8]) -> Result<TransferId, SendError> {
        let params = match &self.phase {
            Phase::Established(established) => &established.params,
            Phase::Ending { .. } => return Err(SendError::Ending),
            Phase::Closed(_) => return Err(SendError::Closed),
            Phase::Contact | Phase::Negotiating => return Err(SendError::NotEstablished),
        };
        let length = data.len() as u64;
        if length > params.transfer_mtu {
            return Err(SendError::TooLarge {
                length,
                transfer_mtu: params.transfer_mtu,
            });
        }
        let segment = params.segment_mtu.min(self.config.max_segment);
        let segment = usize::try_from(segment).unwrap_or(usize::MAX);
        let Some(id) = self.next_transfer_id else {
            self.terminate_with(
                now,
                SessTermReason::ResourceExhaustion,
                Cause::TransferIdsExhausted,
            );
            return Err(SendError::TransferIdsExhausted);
        };
        self.next_transfer_id = id.checked_add(1);
        let parts: Vec<&[u8]> = if data.is_empty() {
            vec![data]
        } else {
            data.chunks(segment).collect()
        };
        let last = parts.len() - 1;
        for (i, part) in parts.into_iter().enumerate() {
            let mut flags = 0;
            let mut extensions = Vec::new();
            if i == 0 {
                flags |= START;
                if self.config.send_transfer_length {
                    extensions.push(ExtensionItem::transfer_length(length));
                }
            }
            if i == last {
                flags |= END;
            }
            let segment = Message::XferSegment(XferSegment {
                flags,
                transfer_id: id,
                extensions,
                data: part.to_vec(),
            });
            let octets = segment.to_vec().expect("segment fields fit");
            self.tx.push_back(Chunk {
                octets,
                transfer: Some(id),
            });
        }
        self.last_sent = now;
        self.outgoing.push_back(Outgoing {
            id,
            total: length,
            acked: 0,
            started: false,
        });
        Ok(id)
    }

    /// Refuses the incoming transfer `id` in progress with XFER_REFUSE
    /// (RFC 9174 section 5.2.4), for instance with
    /// [`RefuseReason::Completed`] when the bundle is already stored. Its
    /// remaining segments are dropped unacknowledged.
    pub fn refuse_transfer(
        &mut self,
        now: Instant,
        id: TransferId,
        reason: RefuseReason,
    ) -> Result<(), RefuseError> {
        match &self.incoming {
            Some(incoming) if incoming.id == id && !incoming.refused => {
                self.refuse(now, id, reason, false);
                Ok(())
            }
            _ => Err(RefuseError(id)),
        }
    }

    /// The octets of the received transfer `id` that its XFER_ACKs queued
    /// so far acknowledge, while its last XFER_ACK is held
    /// (`hold_final_ack`): what a caller that keeps acknowledged octets
    /// durable (see [`incoming`](Self::incoming)) must keep of it until it
    /// has kept the whole transfer. `None` once accepted or if not held.
    pub fn acknowledged(&self, id: TransferId) -> Option<u64> {
        self.held
            .iter()
            .find(|(held, _, _)| *held == id)
            .map(|(_, _, acknowledged)| *acknowledged)
    }

    /// Sends the last XFER_ACK of the received transfer `id`, held by
    /// `hold_final_ack` since its [`Event::TransferReceived`]: the user
    /// has kept it, and the segment is now "fully processed" (RFC 9174
    /// 5.2.3). A session ending waits for the held XFER_ACKs, up to its
    /// ending timeout (section 6.1).
    pub fn accept_transfer(&mut self, now: Instant, id: TransferId) -> Result<(), AcceptError> {
        let index = self
            .held
            .iter()
            .position(|(held, _, _)| *held == id)
            .ok_or(AcceptError(id))?;
        let (_, ack, _) = self.held.remove(index);
        self.queue_octets(now, ack);
        self.check_ended();
        Ok(())
    }

    /// Ends the session with SESS_TERM `reason` (RFC 9174 section 6.1):
    /// transfers already on the wire may finish, queued ones are aborted.
    /// Before the contact headers are exchanged, the connection is just
    /// closed.
    pub fn terminate(&mut self, now: Instant, reason: SessTermReason) {
        self.terminate_with(now, reason, Cause::Requested);
    }

    fn peer_can_tls(&self) -> bool {
        self.peer_contact.is_some_and(|c| c.can_tls())
    }

    fn deadline(&self, timer: Timer) -> Option<Instant> {
        match (timer, &self.phase) {
            (Timer::Establishment, Phase::Contact | Phase::Negotiating) => {
                Some(self.started_at + self.config.establishment_timeout)
            }
            (
                Timer::KeepaliveSend,
                Phase::Established(established) | Phase::Ending { established, .. },
            ) => established.keepalive().map(|k| self.last_sent + k),
            (Timer::KeepaliveReceive, Phase::Established(established)) => {
                established.keepalive().map(|k| self.last_received + 2 * k)
            }
            (Timer::Idle, Phase::Established(_)) => self
                .config
                .idle_timeout
                .map(|idle| self.last_activity + idle),
            (Timer::Ending, Phase::Ending { since, .. }) => {
                Some(*since + self.config.ending_timeout)
            }
            _ => None,
        }
    }

    fn queue_octets(&mut self, now: Instant, octets: Vec<u8>) {
        self.tx.push_back(Chunk {
            octets,
            transfer: None,
        });
        self.last_sent = now;
    }

    fn queue(&mut self, now: Instant, message: &Message) {
        let octets = message.to_vec().expect("locally built messages fit");
        self.queue_octets(now, octets);
    }

    fn local_sess_init(&self) -> Message {
        Message::SessInit(SessInit {
            keepalive_interval: self.config.keepalive_interval,
            segment_mru: self.config.segment_mru,
            transfer_mru: self.config.transfer_mru,
            node_id: self.config.node_id.clone(),
            extensions: Vec::new(),
        })
    }

    /// RFC 9174 section 4.3: a passive entity answers with its own contact
    /// header, even to a version it does not speak, and then ends the
    /// session with "Version mismatch"; an active entity just closes.
    fn on_contact(&mut self, now: Instant, header: ContactHeader) {
        self.peer_contact = Some(header);
        if self.role == Role::Passive {
            self.queue_octets(now, ContactHeader::new(false).encode().to_vec());
        }
        if header.version != VERSION {
            if self.role == Role::Passive {
                self.send_sess_term(now, SessTermReason::VersionMismatch);
            }
            self.close(Cause::VersionMismatch(header.version));
            return;
        }
        self.phase = Phase::Negotiating;
        if self.role == Role::Active {
            let init = self.local_sess_init();
            self.queue(now, &init);
        }
    }

    fn on_message(&mut self, now: Instant, message: Message) {
        if message != Message::Keepalive {
            self.last_activity = now;
        }
        let kind = message.message_type();
        let negotiating = matches!(self.phase, Phase::Negotiating);
        match message {
            Message::SessTerm(term) => self.on_sess_term(now, term),
            Message::MsgReject(reject) => self.events.push_back(Event::MessageRejected {
                reason: reject.reason,
                rejected_header: reject.rejected_header,
            }),
            Message::SessInit(init) if negotiating => self.on_sess_init(now, init),
            _ if negotiating => self.reject(now, RejectReason::MessageUnexpected, kind as u8),
            Message::SessInit(_) => self.reject(now, RejectReason::MessageUnexpected, kind as u8),
            Message::Keepalive => {}
            Message::XferSegment(segment) => self.on_segment(now, segment),
            Message::XferAck(ack) => self.on_ack(now, ack),
            Message::XferRefuse(refuse) => self.on_refuse(now, refuse),
        }
    }

    /// RFC 9174 sections 4.6 to 4.8: check the peer's parameters, answer
    /// with ours if passive, negotiate.
    fn on_sess_init(&mut self, now: Instant, init: SessInit) {
        let problem = if !is_uri(&init.node_id) {
            Some(format!("Node ID {:?} is not a URI", init.node_id))
        } else if init.segment_mru == 0 || init.transfer_mru == 0 {
            Some(format!(
                "Segment MRU {} and Transfer MRU {} leave nothing to send",
                init.segment_mru, init.transfer_mru
            ))
        } else {
            init.extensions
                .iter()
                .find(|item| item.is_critical())
                .map(|item| {
                    format!(
                        "critical session extension item type 0x{:04x} is unknown",
                        item.item_type
                    )
                })
        };
        if let Some(problem) = problem {
            self.terminate_with(
                now,
                SessTermReason::ContactFailure,
                Cause::Unacceptable(problem),
            );
            return;
        }
        if self.role == Role::Passive {
            let ours = self.local_sess_init();
            self.queue(now, &ours);
        }
        let params = SessionParams {
            peer_node_id: init.node_id,
            keepalive_interval: init.keepalive_interval.min(self.config.keepalive_interval),
            segment_mtu: init.segment_mru,
            transfer_mtu: init.transfer_mru,
            segment_mru: self.config.segment_mru,
            transfer_mru: self.config.transfer_mru,
            peer_can_tls: self.peer_can_tls(),
            peer_extensions: init.extensions,
        };
        self.phase = Phase::Established(Established {
            params: params.clone(),
        });
        self.last_received = now;
        self.events.push_back(Event::SessionEstablished(params));
    }

    /// RFC 9174 section 5.2.2: segments of one transfer at a time, START
    /// first, END last; each acknowledged with the cumulative length
    /// (5.2.3); unknown critical transfer extensions, transfers over the
    /// Transfer MRU or their own Transfer Length are refused (5.2.4,
    /// 5.2.5).
    fn on_segment(&mut self, now: Instant, segment: XferSegment) {
        let id = segment.transfer_id;
        let unexpected = |s: &mut Self| {
            s.reject(
                now,
                RejectReason::MessageUnexpected,
                MessageType::XferSegment as u8,
            )
        };
        if segment.is_start() {
            if self.incoming.as_ref().is_some_and(|i| !i.refused) {
                // The transfer in progress has not ended: no interleaving.
                return unexpected(self);
            }
            self.incoming = None;
            let mut declared = None;
            let mut refusal = None;
            for item in &segment.extensions {
                if item.item_type == TRANSFER_LENGTH {
                    match item.as_transfer_length() {
                        Some(length) => declared = declared.or(Some(length)),
                        None => refusal = Some(RefuseReason::NotAcceptable),
                    }
                } else if item.is_critical() {
                    refusal = Some(RefuseReason::ExtensionFailure);
                }
            }
            if matches!(self.phase, Phase::Ending { .. }) {
                refusal = Some(RefuseReason::SessionTerminating);
            } else if declared.is_some_and(|d| d > self.config.transfer_mru) {
                refusal = refusal.or(Some(RefuseReason::NoResources));
            }
            self.incoming = Some(Incoming {
                id,
                data: Vec::new(),
                declared,
                refused: false,
            });
            if let Some(reason) = refusal {
                return self.refuse(now, id, reason, segment.is_end());
            }
            self.events.push_back(Event::TransferStarted {
                id,
                length: declared,
            });
        } else {
            match &self.incoming {
                Some(incoming) if incoming.id == id => {
                    if incoming.refused {
                        if segment.is_end() {
                            self.incoming = None;
                        }
                        return;
                    }
                }
                _ => return unexpected(self),
            }
        }
        let incoming = self.incoming.as_mut().expect("transfer in progress");
        let total = (incoming.data.len() + segment.data.len()) as u64;
        let refusal = if total > self.config.transfer_mru {
            Some(RefuseReason::NoResources)
        } else if incoming
            .declared
            .is_some_and(|d| total > d || (segment.is_end() && total != d))
        {
            Some(RefuseReason::NotAcceptable)
        } else {
            None
        };
        if let Some(reason) = refusal {
            return self.refuse(now, id, reason, segment.is_end());
        }
        incoming.data.extend_from_slice(&segment.data);
        let ack = Message::XferAck(XferAck {
            flags: segment.flags,
            transfer_id: id,
            acknowledged_length: total,
        });
        if segment.is_end() && self.config.hold_final_ack {
            let octets = ack.to_vec().expect("locally built messages fit");
            let before = total - segment.data.len() as u64;
            self.held.push((id, octets, before));
        } else {
            self.queue(now, &ack);
        }
        if segment.is_end() {
            let incoming = self.incoming.take().expect("transfer in progress");
            self.events.push_back(Event::TransferReceived {
                id,
                data: incoming.data,
            });
            self.check_ended();
        }
    }

    /// RFC 9174 section 5.2.3: cumulative acknowledgements of our transfer.
    fn on_ack(&mut self, now: Instant, ack: XferAck) {
        let id = ack.transfer_id;
        let Some(index) = self.outgoing.iter().position(|t| t.id == id) else {
            return self.reject(
                now,
                RejectReason::MessageUnexpected,
                MessageType::XferAck as u8,
            );
        };
        let transfer = &mut self.outgoing[index];
        let octets = ack.acknowledged_length;
        if octets > transfer.total || octets < transfer.acked {
            return self.reject(
                now,
                RejectReason::MessageUnexpected,
                MessageType::XferAck as u8,
            );
        }
        transfer.acked = octets;
        let total = transfer.total;
        self.events
            .push_back(Event::TransferAcked { id, octets, total });
        if octets == total {
            self.outgoing.remove(index);
            self.events.push_back(Event::TransferSucceeded { id });
            self.check_ended();
        }
    }

    /// RFC 9174 section 5.2.4: the peer refuses one of our transfers; send
    /// nothing more of it.
    fn on_refuse(&mut self, now: Instant, refuse: XferRefuse) {
        let id = refuse.transfer_id;
        if let Some(index) = self.outgoing.iter().position(|t| t.id == id) {
            self.outgoing.remove(index);
            self.tx.retain(|c| c.transfer != Some(id));
            self.events.push_back(Event::TransferRefused {
                id,
                reason: refuse.reason,
            });
            self.check_ended();
        } else if self.next_transfer_id.is_some_and(|next| id >= next) {
            // Not a transfer of ours at all (one already finished may
            // cross its last XFER_ACK and is ignored).
            self.reject(
                now,
                RejectReason::MessageUnexpected,
                MessageType::XferRefuse as u8,
            );
        }
    }

    /// RFC 9174 section 6.1: answer a SESS_TERM with the same reason and
    /// REPLY set, unless ours crossed it.
    fn on_sess_term(&mut self, now: Instant, term: SessTerm) {
        self.term_received = Some(term.reason);
        if self.term_sent.is_none() {
            let cause = if self.phase.established().is_none() && self.peer_can_tls() {
                Cause::TlsRequired
            } else {
                Cause::PeerTerminated(term.reason)
            };
            self.cause.get_or_insert(cause);
            self.queue(
                now,
                &Message::SessTerm(SessTerm {
                    flags: REPLY,
                    reason: term.reason,
                }),
            );
            self.term_sent = Some(term.reason);
            self.enter_ending(now, term.reason, Side::Peer);
        }
        self.check_ended();
    }

    fn on_decode_error(&mut self, now: Instant, error: DecodeError) -> usize {
        match error {
            // RFC 9174 section 5.1.2: reject and close, the length of an
            // unknown message being unknown.
            DecodeError::UnknownType(code) => {
                self.reject(now, RejectReason::MessageTypeUnknown, code);
                self.close(Cause::Malformed(error));
                0
            }
            // Over our Segment MRU: a message the negotiated parameters do
            // not allow (section 5.1.2, "Message Unsupported"). Its length
            // is known, so skip it and refuse its transfer.
            DecodeError::SegmentTooLong {
                flags,
                transfer_id,
                header_len,
                data_length,
                ..
            } => {
                self.discard = data_length;
                self.reject(
                    now,
                    RejectReason::MessageUnsupported,
                    MessageType::XferSegment as u8,
                );
                let live = matches!(self.phase, Phase::Established(_) | Phase::Ending { .. });
                let current = self.incoming.as_ref().is_some_and(|i| i.id == transfer_id);
                if live && (flags & START != 0 || current) {
                    self.incoming = Some(Incoming {
                        id: transfer_id,
                        data: Vec::new(),
                        declared: None,
                        refused: false,
                    });
                    self.refuse(
                        now,
                        transfer_id,
                        RefuseReason::NoResources,
                        flags & END != 0,
                    );
                }
                header_len
            }
            // The rest of the stream cannot be trusted: SESS_TERM and close.
            DecodeError::ExtensionsTooLong { .. }
            | DecodeError::ExtensionsMisframed { .. }
            | DecodeError::NodeIdNotUtf8 => {
                let reason = match (&error, &self.phase) {
                    (_, Phase::Negotiating) => SessTermReason::ContactFailure,
                    (DecodeError::ExtensionsTooLong { .. }, _) => {
                        SessTermReason::ResourceExhaustion
                    }
                    _ => SessTermReason::Unknown,
                };
                if self.term_sent.is_none() {
                    self.send_sess_term(now, reason);
                }
                self.close(Cause::Malformed(error));
                0
            }
        }
    }

    fn reject(&mut self, now: Instant, reason: RejectReason, rejected_header: u8) {
        self.queue(
            now,
            &Message::MsgReject(MsgReject {
                reason,
                rejected_header,
            }),
        );
    }

    /// Sends XFER_REFUSE for the incoming transfer `id` and drops what came
    /// of it; it stays marked refused until its END segment.
    fn refuse(&mut self, now: Instant, id: TransferId, reason: RefuseReason, ended: bool) {
        self.queue(
            now,
            &Message::XferRefuse(XferRefuse {
                reason,
                transfer_id: id,
            }),
        );
        if ended {
            self.incoming = None;
        } else if let Some(incoming) = self.incoming.as_mut().filter(|i| i.id == id) {
            incoming.refused = true;
            incoming.data = Vec::new();
        }
        self.check_ended();
    }

    fn send_sess_term(&mut self, now: Instant, reason: SessTermReason) {
        self.queue(now, &Message::SessTerm(SessTerm { flags: 0, reason }));
        self.term_sent = Some(reason);
    }

    /// Starts ending the session from this side (RFC 9174 section 6.1).
    fn terminate_with(&mut self, now: Instant, reason: SessTermReason, cause: Cause) {
        match self.phase {
            Phase::Closed(_) | Phase::Ending { .. } => {}
            // No SESS_TERM before the contact headers are exchanged.
            Phase::Contact => self.close(cause),
            Phase::Negotiating => {
                self.send_sess_term(now, reason);
                self.close(cause);
            }
            Phase::Established(_) => {
                self.cause.get_or_insert(cause);
                self.send_sess_term(now, reason);
                self.enter_ending(now, reason, Side::Local);
                self.check_ended();
            }
        }
    }

    /// The Ending state: transfers not yet on the wire are aborted.
    fn enter_ending(&mut self, now: Instant, reason: SessTermReason, initiator: Side) {
        let established = match std::mem::replace(&mut self.phase, Phase::Negotiating) {
            Phase::Established(established) => established,
            other => {
                // Nothing to finish before the session is established.
                self.phase = other;
                let cause = self.cause.take().unwrap_or(Cause::PeerTerminated(reason));
                return self.close(cause);
            }
        };
        self.phase = Phase::Ending {
            established,
            since: now,
        };
        let unstarted: Vec<TransferId> = self
            .outgoing
            .iter()
            .filter(|t| !t.started)
            .map(|t| t.id)
            .collect();
        self.outgoing.retain(|t| t.started);
        self.tx
            .retain(|c| c.transfer.is_none_or(|id| !unstarted.contains(&id)));
        self.events
            .push_back(Event::SessionEnding { reason, initiator });
        for id in unstarted {
            self.events.push_back(Event::TransferAborted { id });
        }
    }

    /// Closes once both SESS_TERMs are exchanged and no transfer is left
    /// half done (a held XFER_ACK is half done).
    fn check_ended(&mut self) {
        let idle = self.outgoing.is_empty()
            && self.incoming.as_ref().is_none_or(|i| i.refused)
            && self.held.is_empty();
        if matches!(self.phase, Phase::Ending { .. })
            && self.term_sent.is_some()
            && self.term_received.is_some()
            && idle
        {
            let cause = self.cause.clone().unwrap_or(Cause::Requested);
            self.close(cause);
        }
    }

    fn close(&mut self, cause: Cause) {
        if self.is_closed() {
            return;
        }
        let established = match std::mem::replace(&mut self.phase, Phase::Closed(None)) {
            Phase::Established(established) | Phase::Ending { established, .. } => {
                Some(established)
            }
            Phase::Contact | Phase::Negotiating | Phase::Closed(_) => None,
        };
        self.phase = Phase::Closed(established);
        self.tx.retain(|c| c.transfer.is_none());
        for transfer in std::mem::take(&mut self.outgoing) {
            self.events
                .push_back(Event::TransferAborted { id: transfer.id });
        }
        self.incoming = None;
        self.held.clear();
        let cause = self.cause.take().unwrap_or(cause);
        self.events.push_back(Event::SessionTerminated(Termination {
            cause,
            sent: self.term_sent,
            received: self.term_received,
        }));
    }
}

impl Engine for Session {
    type Transmit = Vec<u8>;

    /// The next octets to write to the TCP connection.
    fn poll_transmit(&mut self, _now: Instant) -> Option<Self::Transmit> {
        let chunk = self.tx.pop_front()?;
        if let Some(id) = chunk.transfer {
            if let Some(transfer) = self.outgoing.iter_mut().find(|t| t.id == id) {
                transfer.started = true;
            }
        }
        Some(chunk.octets)
    }

    /// When [`handle_timeout`](Self::handle_timeout) is next due.
    fn poll_timeout(&self) -> Option<Instant> {
        TIMERS.iter().filter_map(|&t| self.deadline(t)).min()
    }

    /// Runs the timers due at `now`.
    fn handle_timeout(&mut self, now: Instant) {
        for timer in TIMERS {
            if self.deadline(timer).is_none_or(|at| at > now) {
                continue;
            }
            match timer {
                Timer::Establishment => self.terminate_with(
                    now,
                    SessTermReason::ContactFailure,
                    Cause::EstablishmentTimeout,
                ),
                Timer::KeepaliveSend => self.queue(now, &Message::Keepalive),
                Timer::KeepaliveReceive => {
                    self.terminate_with(now, SessTermReason::IdleTimeout, Cause::KeepaliveTimeout)
                }
                Timer::Idle => {
                    self.terminate_with(now, SessTermReason::IdleTimeout, Cause::IdleTimeout)
                }
                Timer::Ending => self.close(Cause::EndingTimeout),
            }
        }
    }
}
