//! A NORM CL session toward one peer: a NORM sender for our bundles, a
//! NORM receiver for the peer's, and the link state between them.

use core::time::Duration;
use linklab_core::{Engine, Instant};
use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;

use linklab_norm::wire::{Message, Packet};
use linklab_norm::{
    NodeId, ObjectKind, Receiver, ReceiverConfig, ReceiverEvent, Sender, SenderConfig, SenderEvent,
    SyncPolicy, Transmit,
};
use thiserror::Error;

use crate::config::{norm_node_id, Config, ConfigError};
use crate::header::BundleObject;

/// A bundle handed to [`Session::send_bundle`], named in its outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TransferId(pub u64);

/// A received bundle, named when the node has stored it
/// ([`Session::bundle_stored`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReceiptId(pub u64);

/// What the session tells the node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The link is up: bundles may be sent. A new session starts up.
    LinkUp,
    /// The link is down; every transfer not reported has failed.
    LinkDown {
        /// Why.
        why: String,
    },
    /// A whole bundle from the peer, new in this peer's NORM instance.
    /// The peer learns it arrived only after [`Session::bundle_stored`].
    BundleReceived {
        /// Name it in [`Session::bundle_stored`].
        receipt: ReceiptId,
        /// The encoded bundle.
        bundle: Vec<u8>,
    },
    /// An object from the peer that is not a bundle of the configured
    /// peer: it is not acknowledged, so the peer's transfers fail.
    ObjectRefused {
        /// Why.
        why: String,
    },
    /// The peer acknowledged the whole bundle.
    TransferSucceeded(TransferId),
    /// The bundle may not have reached the peer.
    TransferFailed {
        /// The transfer.
        id: TransferId,
        /// Why.
        why: String,
    },
}

/// Why a bundle is not taken.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SendError {
    /// The link is down.
    #[error("the NORM link is down")]
    LinkDown,
    /// Empty, or above [`Config::max_bundle_len`].
    #[error("a bundle of {0} octets does not fit this link")]
    Size(usize),
}

/// A bundle handed to NORM.
struct Flight {
    object_id: u16,
    transfer: TransferId,
}

/// The acknowledgement request for the newest object in flight.
struct Watermark {
    object_id: u16,
    /// The later of when the object's last symbol was first sent and when
    /// the peer last asked for repairs: the acknowledgement bound counts
    /// from there.
    progress: Option<Instant>,
}

/// A NORM convergence-layer session: see the crate documentation.
pub struct Session {
    config: Config,
    peer_id: NodeId,
    sender: Sender,
    receiver: Receiver,
    queue: VecDeque<(TransferId, Vec<u8>)>,
    flights: VecDeque<Flight>,
    watermark: Option<Watermark>,
    next_transfer: u64,
    up: bool,
    retry_at: Option<Instant>,
    closed: bool,
    unanswered: u32,
    /// Bundles handed to the node and not yet stored: their object IDs in
    /// the peer's current NORM instance.
    receipts: BTreeMap<ReceiptId, u16>,
    next_receipt: u64,
    events: VecDeque<Event>,
    refused: u64,
}

impl Session {
    /// A session that starts at `now`, with its link up.
    pub fn new(config: Config, now: Instant) -> Result<Session, ConfigError> {
        config.validate()?;
        let local_id = norm_node_id(&config.node_id);
        let peer_id = norm_node_id(&config.peer_node_id);
        let mut sc = SenderConfig::new(local_id, config.peer, 1.0);
        sc.rate = config.rate;
        sc.instance_id = config.instance_id;
        sc.segment_size = config.segment_size;
        sc.block_len = config.block_len;
        sc.num_parity = config.num_parity;
        sc.auto_parity = config.auto_parity;
        sc.robust_factor = config.robust_factor;
        // One receiver: NACK backoff as for a group of one.
        sc.group_size = 1.0;
        sc.tx_cache_objects = 2 * config.window;
        sc.seed = config.seed;
        let sender = Sender::new(sc, now)?;
        let mut rc = ReceiverConfig::new(local_id);
        rc.sync = SyncPolicy::All;
        rc.hold_acks = true;
        rc.robust_factor = config.robust_factor;
        rc.max_object_size =
            (config.max_bundle_len + BundleObject::header_len(&config.peer_node_id)) as u64;
        rc.seed = config.seed ^ 0x6e6f_726d;
        Ok(Session {
            peer_id,
            sender,
            receiver: Receiver::new(rc),
            queue: VecDeque::new(),
            flights: VecDeque::new(),
            watermark: None,
            next_transfer: 0,
            up: true,
            retry_at: None,
            closed: false,
            unanswered: 0,
            receipts: BTreeMap::new(),
            next_receipt: 0,
            events: VecDeque::from([Event::LinkUp]),
            refused: 0,
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether bundles may be sent.
    pub fn is_up(&self) -> bool {
        self.up
    }

    /// The largest bundle taken.
    pub fn max_bundle_len(&self) -> usize {
        self.config.max_bundle_len
    }

    /// NORM sender counters.
    pub fn sender_stats(&self) -> linklab_norm::SenderStats {
        self.sender.stats()
    }

    /// NORM receiver counters.
    pub fn receiver_stats(&self) -> linklab_norm::ReceiverStats {
        self.receiver.stats()
    }

    /// Datagrams from another NormNodeId than the peer's, dropped.
    pub fn refused_datagrams(&self) -> u64 {
        self.refused
    }

    /// How long the peer has to acknowledge a bundle once it was sent (or
    /// last asked for repairs): robust factor × 2·GRTT, NORM's FLUSH
    /// schedule (RFC 5740 section 5.1.3), at least
    /// [`Config::min_ack_wait`].
    pub fn ack_bound(&self) -> Duration {
        (self.sender.grtt() * 2 * self.config.robust_factor).max(self.config.min_ack_wait)
    }

    /// Queues one bundle for the peer; its outcome comes as
    /// [`Event::TransferSucceeded`] or [`Event::TransferFailed`].
    pub fn send_bundle(&mut self, now: Instant, bundle: &[u8]) -> Result<TransferId, SendError> {
        if !self.up || self.closed {
            return Err(SendError::LinkDown);
        }
        if bundle.is_empty() || bundle.len() > self.config.max_bundle_len {
            return Err(SendError::Size(bundle.len()));
        }
        let id = TransferId(self.next_transfer);
        self.next_transfer += 1;
        let object = BundleObject {
            node_id: &self.config.node_id,
            bundle,
        }
        .encode();
        self.queue.push_back((id, object));
        self.fill_window(now);
        Ok(id)
    }

    /// The node has stored the bundle of `receipt`: the peer may now be
    /// told it arrived.
    pub fn bundle_stored(&mut self, now: Instant, receipt: ReceiptId) {
        if let Some(object_id) = self.receipts.remove(&receipt) {
            self.receiver.release(now, self.peer_id, object_id);
        }
    }

    /// Ends the session: queued and unacknowledged transfers fail and the
    /// link goes down for good.
    pub fn close(&mut self) {
        if !self.closed {
            self.closed = true;
            self.go_down("closed".into(), None);
        }
    }

    /// Takes in one datagram from the peer's address.
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, bytes: &[u8]) {
        // Only the configured peer's messages: senders' to the receiver,
        // receivers' feedback to the sender.
        let Ok(packet) = Packet::decode(bytes) else {
            self.refused += 1;
            return;
        };
        if packet.source_id != self.peer_id {
            self.refused += 1;
            return;
        }
        match packet.message {
            Message::Nack(n) => {
                if let Some(w) = &mut self.watermark {
                    if n.server_id == self.sender.config().node_id {
                        w.progress = Some(now);
                    }
                }
                self.sender.handle_datagram(now, from, bytes);
            }
            Message::Ack(_) => self.sender.handle_datagram(now, from, bytes),
            Message::Data(_) | Message::Info(_) | Message::Cmd(_) => {
                self.receiver.handle_datagram(now, from, bytes)
            }
        }
        if !self.up && !self.closed {
            self.come_up();
        }
        self.pump(now);
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    fn come_up(&mut self) {
        self.up = true;
        self.retry_at = None;
        self.unanswered = 0;
        self.events.push_back(Event::LinkUp);
    }

    fn go_down(&mut self, why: String, retry_at: Option<Instant>) {
        let failed: Vec<TransferId> = self
            .flights
            .drain(..)
            .map(|f| f.transfer)
            .chain(self.queue.drain(..).map(|(id, _)| id))
            .collect();
        self.watermark = None;
        for id in failed {
            self.events.push_back(Event::TransferFailed {
                id,
                why: format!("the NORM link went down ({why})"),
            });
        }
        if self.up {
            self.up = false;
            self.events.push_back(Event::LinkDown { why });
        }
        self.retry_at = retry_at;
    }

    /// Hands queued bundles to NORM while the window has room, and asks for
    /// acknowledgement of the newest.
    fn fill_window(&mut self, now: Instant) {
        let mut newest = None;
        while self.flights.len() < self.config.window {
            let Some((transfer, object)) = self.queue.pop_front() else {
                break;
            };
            match self.sender.enqueue(now, object, ObjectKind::Data) {
                Ok(object_id) => {
                    self.flights.push_back(Flight {
                        object_id,
                        transfer,
                    });
                    newest = Some(object_id);
                }
                Err(e) => self.events.push_back(Event::TransferFailed {
                    id: transfer,
                    why: e.to_string(),
                }),
            }
        }
        if let Some(object_id) = newest {
            // One watermark covers every object before it (RFC 5740
            // section 5.1.3): it replaces the previous request.
            self.sender.set_watermark(object_id, &[self.peer_id]);
            self.watermark = Some(Watermark {
                object_id,
                progress: None,
            });
        }
    }

    /// Drains the NORM engines' events into the session's.
    fn pump(&mut self, now: Instant) {
        while let Some(e) = self.sender.poll_event() {
            match e {
                SenderEvent::ObjectSent { object_id } => {
                    if let Some(w) = self.watermark.as_mut().filter(|w| w.object_id == object_id) {
                        w.progress = Some(now);
                    }
                }
                SenderEvent::WatermarkCompleted {
                    object_id,
                    acked,
                    missing: _,
                } => self.watermark_completed(now, object_id, acked.contains(&self.peer_id)),
                SenderEvent::QueueEmpty
                | SenderEvent::FlushCompleted
                | SenderEvent::RateChanged { .. }
                | SenderEvent::ObjectPurged { .. } => {}
            }
        }
        while let Some(e) = self.receiver.poll_event() {
            match e {
                ReceiverEvent::SenderStarted { sender, .. } if sender == self.peer_id => {
                    // A new instance: its object IDs start afresh, and the
                    // old instance's objects are no longer held.
                    self.receipts.clear();
                }
                ReceiverEvent::ObjectCompleted {
                    sender,
                    object_id,
                    data,
                    ..
                } if sender == self.peer_id => self.object_completed(object_id, &data),
                _ => {}
            }
        }
    }

    fn watermark_completed(&mut self, now: Instant, object_id: u16, acked: bool) {
        let Some(w) = self.watermark.as_ref().filter(|w| w.object_id == object_id) else {
            return;
        };
        if acked {
            self.watermark = None;
            self.unanswered = 0;
            while let Some(f) = self.flights.pop_front() {
                self.events.push_back(Event::TransferSucceeded(f.transfer));
                if f.object_id == object_id {
                    break;
                }
            }
            self.fill_window(now);
            return;
        }
        let bound = self.ack_bound();
        if w.progress.is_none_or(|p| now < p + bound) {
            // Within the bound: ask again.
            self.sender.set_watermark(object_id, &[self.peer_id]);
            return;
        }
        self.watermark = None;
        self.unanswered += 1;
        let why = format!(
            "the peer did not acknowledge within {:.1} s",
            bound.as_secs_f64()
        );
        if self.unanswered >= self.config.down_after {
            let retry = now + self.config.retry_after;
            self.go_down(
                format!("{} acknowledgement requests unanswered", self.unanswered),
                Some(retry),
            );
            return;
        }
        while let Some(f) = self.flights.pop_front() {
            self.events.push_back(Event::TransferFailed {
                id: f.transfer,
                why: why.clone(),
            });
            if f.object_id == object_id {
                break;
            }
        }
        self.fill_window(now);
    }

    /// A whole object from the peer. NORM's receiver completes each object
    /// transport ID of a sender instance once (it keeps the IDs done), so
    /// each bundle object is delivered once.
    fn object_completed(&mut self, object_id: u16, data: &[u8]) {
        match BundleObject::decode(data) {
            Ok(o) if o.node_id == self.config.peer_node_id => {
                let receipt = ReceiptId(self.next_receipt);
                self.next_receipt += 1;
                self.receipts.insert(receipt, object_id);
                self.events.push_back(Event::BundleReceived {
                    receipt,
                    bundle: o.bundle.to_vec(),
                });
            }
            // Not released: the peer's acknowledgement requests go
            // unanswered and its transfers fail, visibly.
            Ok(o) => self.events.push_back(Event::ObjectRefused {
                why: format!(
                    "the peer says it is {}, configured as {}",
                    o.node_id, self.config.peer_node_id
                ),
            }),
            Err(e) => self
                .events
                .push_back(Event::ObjectRefused { why: e.to_string() }),
        }
    }
}

impl Engine for Session {
    type Transmit = Transmit;

    /// The next datagram to send: the receiver's feedback first, then the
    /// sender's messages at its rate.
    fn poll_transmit(&mut self, now: Instant) -> Option<Self::Transmit> {
        let t = self
            .receiver
            .poll_transmit(now)
            .or_else(|| self.sender.poll_transmit(now));
        self.pump(now);
        t
    }

    /// When [`Session::handle_timeout`] next has work.
    fn poll_timeout(&self) -> Option<Instant> {
        [
            self.sender.poll_timeout(),
            self.receiver.poll_timeout(),
            self.retry_at,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Runs the timers due at `now`.
    fn handle_timeout(&mut self, now: Instant) {
        self.sender.handle_timeout(now);
        self.receiver.handle_timeout(now);
        if self.retry_at.is_some_and(|t| t <= now) {
            self.come_up();
        }
        self.pump(now);
    }
}
