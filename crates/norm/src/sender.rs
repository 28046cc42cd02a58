//! The NORM sender (RFC 5740 section 5.1 and 5.4, NORM-CC of 5.5), sans-IO.

use crate::fec::Rs8;
use crate::layout::Layout;
use crate::timer::{SenderTimer, SenderTimers};
use crate::wire::{
    self, cc_flags, object_flags, repair_flags, AckContent, CcNode, Cmd, Command, Data, Extension,
    Fti, Message, NodeId, Packet, PayloadId, RepairForm, RepairRequest, SenderFields, Timestamp,
};
use crate::{Rate, Transmit};
use core::time::Duration;
use linklab_core::{Engine, Instant, Stream};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;
use thiserror::Error;

/// Sender parameters.
#[derive(Debug, Clone)]
pub struct SenderConfig {
    /// This node's NormNodeId.
    pub node_id: NodeId,
    /// `instance_id` (RFC 5740 section 4.2.1): pick a new one per start.
    pub instance_id: u16,
    /// Where NORM_DATA and NORM_CMD go: the session address (a unicast
    /// receiver or a multicast group).
    pub destination: SocketAddr,
    /// Octets per segment (encoding symbol).
    pub segment_size: u16,
    /// Source symbols per block (k).
    pub block_len: u8,
    /// Parity symbols the sender can compute per block (k + p ≤ 255).
    pub num_parity: u8,
    /// Parity symbols sent proactively after each block (≤ `num_parity`).
    pub auto_parity: u8,
    /// Fixed rate or NORM-CC.
    pub rate: Rate,
    /// GRTT estimate before any measurement (libnorm: 0.25 s).
    pub initial_grtt: Duration,
    /// Upper bound on the GRTT (libnorm: 10 s).
    pub grtt_max: Duration,
    /// Backoff factor K (RFC 5740 section 5.3; 4 by default).
    pub backoff_factor: u8,
    /// Group size estimate (RFC 5740 section 5.3); raised to the number of
    /// receivers heard.
    pub group_size: f64,
    /// Whether the session address is multicast: NACKs are then
    /// aggregated for (K + 1)·GRTT before repairing (RFC 5740 section
    /// 5.4.2), otherwise repairs start at once, as libnorm does.
    pub multicast: bool,
    /// Times NORM_CMD(FLUSH) is repeated at the end of transmission
    /// (libnorm's robust factor, 20).
    pub robust_factor: u32,
    /// Objects kept for repair after they were sent.
    pub tx_cache_objects: usize,
    /// Seed of the sender's random stream.
    pub seed: u64,
}

impl SenderConfig {
    /// Defaults close to libnorm's, sending to `destination` at a fixed
    /// `bits_per_second`.
    pub fn new(node_id: NodeId, destination: SocketAddr, bits_per_second: f64) -> SenderConfig {
        SenderConfig {
            node_id,
            instance_id: 1,
            destination,
            segment_size: 1024,
            block_len: 64,
            num_parity: 16,
            auto_parity: 0,
            rate: Rate::Fixed { bits_per_second },
            initial_grtt: Duration::from_millis(250),
            grtt_max: Duration::from_secs(10),
            backoff_factor: 4,
            group_size: 1000.0,
            multicast: false,
            robust_factor: 20,
            tx_cache_objects: 256,
            seed: 1,
        }
    }
}

/// Why a configuration is refused.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ConfigError {
    /// Segment size zero or too large for a UDP datagram.
    #[error("segment size {0} must be 1..=8192 octets")]
    SegmentSize(u16),
    /// k = 0, k + p > 255 or auto parity above p.
    #[error("block of {k} source and {p} parity symbols (auto {auto}): need 1 ≤ k, k + p ≤ 255, auto ≤ p")]
    Block {
        /// Source symbols per block.
        k: u8,
        /// Parity symbols per block.
        p: u8,
        /// Proactive parity per block.
        auto: u8,
    },
    /// A rate that is not a positive finite number, or min above max.
    #[error("rate must be positive and finite (min ≤ max): {0:?}")]
    Rate(Rate),
    /// A robust factor of zero or an empty cache.
    #[error("robust factor and tx cache must be at least 1")]
    Robustness,
}

/// Why an object cannot be enqueued.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EnqueueError {
    /// Zero octets.
    #[error("an object must have at least one octet")]
    Empty,
    /// More blocks than 24 bits number, or above 48 bits of size.
    #[error(
        "object of {0} octets needs more than 2^24 source blocks at this segment and block size"
    )]
    TooLarge(u64),
    /// An object ID still in use (2^16 objects outstanding).
    #[error("no free object transport ID")]
    NoObjectId,
}

/// Whether an object is a file or a data object: only the FILE flag of
/// NORM_DATA differs (RFC 5740 section 4.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    /// NORM_OBJECT_DATA.
    Data,
    /// NORM_OBJECT_FILE.
    File,
}

/// What the sender tells its user.
#[derive(Debug, Clone, PartialEq)]
pub enum SenderEvent {
    /// Every symbol of the object has been sent once.
    ObjectSent {
        /// The object.
        object_id: u16,
    },
    /// Nothing new to send; repairs and flushes continue.
    QueueEmpty,
    /// The end-of-transmission flushes are done (no watermark pending).
    FlushCompleted,
    /// A watermark (positive acknowledgement request) has ended.
    WatermarkCompleted {
        /// The object of the watermark.
        object_id: u16,
        /// Nodes that acknowledged.
        acked: Vec<NodeId>,
        /// Nodes that did not acknowledge within the robust factor.
        missing: Vec<NodeId>,
    },
    /// NORM-CC changed the transmit rate.
    RateChanged {
        /// The new rate in bits per second.
        bits_per_second: f64,
    },
    /// An object left the repair cache.
    ObjectPurged {
        /// The object.
        object_id: u16,
    },
}

/// Counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// NORM_DATA sent for the first time (source and proactive parity).
    pub data_sent: u64,
    /// NORM_DATA sent as repairs.
    pub repairs_sent: u64,
    /// NORM_CMD sent.
    pub commands_sent: u64,
    /// NACKs received.
    pub nacks_received: u64,
    /// ACKs received.
    pub acks_received: u64,
    /// Datagrams that did not decode.
    pub malformed: u64,
    /// Octets of NORM messages sent.
    pub octets_sent: u64,
}

struct TxObject {
    ordinal: u64,
    id: u16,
    kind: ObjectKind,
    data: Vec<u8>,
    fti: Fti,
    layout: Layout,
    /// Parity computed so far, by block.
    parity: BTreeMap<u32, Vec<Vec<u8>>>,
}

/// A symbol to repair: object ordinal, block, ESI.
type SymbolKey = (u64, u32, u16);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cursor {
    ordinal: u64,
    sbn: u32,
    /// Next symbol of the block: source symbols, then auto parity.
    symbol: u16,
}

struct Watermark {
    object_id: u16,
    payload_id: PayloadId,
    pending: BTreeSet<NodeId>,
    acked: Vec<NodeId>,
}

struct Receiver {
    rtt: Option<f64>,
    rate: Option<f64>,
    slow_start: bool,
    heard: Instant,
}

/// A NORM sender. It never does I/O and never reads a clock: datagrams come
/// in through [`Sender::handle_datagram`], objects through
/// [`Sender::enqueue`], and what it wants sent is drained with
/// [`Sender::poll_transmit`], paced at the configured or NORM-CC rate.
pub struct Sender {
    config: SenderConfig,
    codec: Option<Rs8>,
    rng: Stream,
    sequence: u16,
    objects: VecDeque<TxObject>,
    next_ordinal: u64,
    next_object_id: u16,
    cursor: Option<Cursor>,
    /// Repairs requested, waiting for the aggregation timer.
    pending_repairs: BTreeSet<SymbolKey>,
    /// NORM_REPAIR, the repair aggregation timer (RFC 5740 section 5.4.2).
    timers: SenderTimers,
    /// Repairs due for transmission.
    repairs: BTreeSet<SymbolKey>,
    /// When each symbol was last repaired (NACKs for it are ignored for a
    /// GRTT afterwards, RFC 5740 section 5.4.2).
    repaired_at: BTreeMap<SymbolKey, Instant>,
    /// Object IDs to squelch (no longer repairable).
    squelch: BTreeSet<u16>,
    grtt_measured: f64,
    grtt_q: u8,
    rate: f64,
    /// The pacer: the earliest instant the next message may go at the
    /// transmit rate. It and the two instants below are not timers: they
    /// never fire, they only hold back what [`Sender::poll_transmit`]
    /// picks while there is something of that kind to send, and they
    /// keep their values across idle times.
    next_tx: Instant,
    flushes_left: u32,
    /// The earliest next NORM_CMD(FLUSH), one every 2·GRTT (RFC 5740
    /// section 5.1.3) while flushes are left.
    flush_due: Instant,
    flush_announced: bool,
    watermark: Option<Watermark>,
    /// The earliest next NORM_CMD(CC) GRTT probe (RFC 5740 section 5.5.1)
    /// while probing.
    probe_due: Instant,
    cc_sequence: u16,
    receivers: BTreeMap<NodeId, Receiver>,
    clr: Option<NodeId>,
    last_cc_feedback: Option<Instant>,
    events: VecDeque<SenderEvent>,
    stats: SenderStats,
}

/// Nominal IP and UDP header octets added to a NORM message when pacing
/// and when bounding the GRTT by one packet time (as libnorm does).
const PACKET_OVERHEAD: f64 = 44.0;

impl Sender {
    /// A sender that starts at `now`.
    pub fn new(config: SenderConfig, now: Instant) -> Result<Sender, ConfigError> {
        if config.segment_size == 0 || config.segment_size > 8192 {
            return Err(ConfigError::SegmentSize(config.segment_size));
        }
        let (k, p, auto) = (config.block_len, config.num_parity, config.auto_parity);
        if k == 0 || u16::from(k) + u16::from(p) > 255 || auto > p {
            return Err(ConfigError::Block { k, p, auto });
        }
        let rate = config
            .rate
            .initial_bytes_per_second()
            .ok_or(ConfigError::Rate(config.rate))?;
        if config.robust_factor == 0 || config.tx_cache_objects == 0 {
            return Err(ConfigError::Robustness);
        }
        let codec = if p > 0 {
            Some(
                Rs8::new(usize::from(k), usize::from(p)).map_err(|_| ConfigError::Block {
                    k,
                    p,
                    auto,
                })?,
            )
        } else {
            None
        };
        let grtt = config.initial_grtt.as_secs_f64();
        let mut sender = Sender {
            rng: Stream::from_seed(config.seed),
            codec,
            sequence: 0,
            objects: VecDeque::new(),
            next_ordinal: 0,
            next_object_id: 0,
            cursor: None,
            pending_repairs: BTreeSet::new(),
            timers: SenderTimers::default(),
            repairs: BTreeSet::new(),
            repaired_at: BTreeMap::new(),
            squelch: BTreeSet::new(),
            grtt_measured: grtt,
            grtt_q: 0,
            rate,
            next_tx: now,
            flushes_left: 0,
            flush_due: now,
            flush_announced: true,
            watermark: None,
            probe_due: now,
            cc_sequence: 0,
            receivers: BTreeMap::new(),
            clr: None,
            last_cc_feedback: None,
            events: VecDeque::new(),
            stats: SenderStats::default(),
            config,
        };
        sender.next_object_id = sender.rng.below(1 << 16) as u16;
        sender.update_grtt_advertised();
        Ok(sender)
    }

    /// The configuration.
    pub fn config(&self) -> &SenderConfig {
        &self.config
    }

    /// Counters.
    pub fn stats(&self) -> SenderStats {
        self.stats
    }

    /// The GRTT the sender advertises.
    pub fn grtt(&self) -> Duration {
        Duration::from_secs_f64(wire::unquantize_rtt(self.grtt_q))
    }

    /// The current transmit rate in bits per second.
    pub fn rate_bps(&self) -> f64 {
        self.rate * 8.0
    }

    /// The current limiting receiver (NORM-CC).
    pub fn clr(&self) -> Option<NodeId> {
        self.clr
    }

    /// Queues an object for transmission and returns its transport ID.
    pub fn enqueue(
        &mut self,
        now: Instant,
        data: Vec<u8>,
        kind: ObjectKind,
    ) -> Result<u16, EnqueueError> {
        if data.is_empty() {
            return Err(EnqueueError::Empty);
        }
        let fti = Fti {
            object_size: data.len() as u64,
            segment_size: self.config.segment_size,
            max_block_len: self.config.block_len,
            num_parity: self.config.num_parity,
        };
        let layout = Layout::new(&fti).ok_or(EnqueueError::TooLarge(fti.object_size))?;
        let id = self.next_object_id;
        if self.objects.iter().any(|o| o.id == id) {
            return Err(EnqueueError::NoObjectId);
        }
        self.next_object_id = id.wrapping_add(1);
        let ordinal = self.next_ordinal;
        self.next_ordinal += 1;
        self.objects.push_back(TxObject {
            ordinal,
            id,
            kind,
            data,
            fti,
            layout,
            parity: BTreeMap::new(),
        });
        if self.cursor.is_none() {
            self.cursor = Some(Cursor {
                ordinal,
                sbn: 0,
                symbol: 0,
            });
        }
        self.flushes_left = 0;
        self.flush_announced = false;
        if self.next_tx < now {
            self.next_tx = now;
        }
        self.trim_cache();
        Ok(id)
    }

    /// Asks `nodes` to acknowledge receipt of everything up to the end of
    /// object `object_id` (RFC 5740 section 5.1.3, positive
    /// acknowledgement with NORM_CMD(FLUSH)); ends with
    /// [`SenderEvent::WatermarkCompleted`]. The flushes start once
    /// everything queued is sent, or at once if it already is (a watermark
    /// set again after an unanswered one). Returns false for an unknown
    /// object.
    pub fn set_watermark(&mut self, object_id: u16, nodes: &[NodeId]) -> bool {
        let Some(o) = self.objects.iter().find(|o| o.id == object_id) else {
            return false;
        };
        let sbn = o.layout.num_blocks() - 1;
        let esi = o.layout.block_len(sbn) - 1;
        self.watermark = Some(Watermark {
            object_id,
            payload_id: PayloadId {
                sbn,
                esi: esi as u8,
            },
            pending: nodes.iter().copied().collect(),
            acked: Vec::new(),
        });
        self.flushes_left = if self.has_work_to_send() {
            0
        } else {
            self.config.robust_factor
        };
        self.flush_announced = false;
        true
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<SenderEvent> {
        self.events.pop_front()
    }

    fn grtt_secs(&self) -> f64 {
        wire::unquantize_rtt(self.grtt_q)
    }

    fn update_grtt_advertised(&mut self) {
        let pkt = (PACKET_OVERHEAD + f64::from(self.config.segment_size)) / self.rate;
        let grtt = self
            .grtt_measured
            .max(pkt)
            .min(self.config.grtt_max.as_secs_f64());
        self.grtt_q = wire::quantize_rtt(grtt);
    }

    fn sender_fields(&self) -> SenderFields {
        let heard = self.receivers.len() as f64;
        SenderFields {
            instance_id: self.config.instance_id,
            grtt: self.grtt_q,
            backoff: self.config.backoff_factor.min(15),
            gsize: wire::quantize_gsize(self.config.group_size.max(heard)),
        }
    }

    fn probe_interval(&self) -> Duration {
        match self.config.rate {
            // NORM-CC probes once per RTT (RFC 5740 section 5.5.1).
            Rate::Cc { .. } => {
                // Never more often than the advertised GRTT, which is at
                // least one packet time: probes must not eat the rate.
                let rtt = self
                    .clr
                    .and_then(|c| self.receivers.get(&c))
                    .and_then(|r| r.rtt)
                    .unwrap_or(0.0)
                    .max(self.grtt_secs());
                Duration::from_secs_f64(rtt.clamp(0.01, 10.0))
            }
            // Fixed rate: GRTT probing once a second, as libnorm.
            Rate::Fixed { .. } => Duration::from_secs(1),
        }
    }

    fn probing(&self) -> bool {
        matches!(self.config.rate, Rate::Cc { .. })
            || self.cursor.is_some()
            || !self.repairs.is_empty()
            || self.flushes_left > 0
    }

    fn has_work_to_send(&self) -> bool {
        !self.repairs.is_empty() || !self.squelch.is_empty() || self.cursor.is_some()
    }

    /// NORM-CC: without feedback for four probe intervals the rate halves
    /// (the TFRC no-feedback rule, RFC 5348 section 4.4).
    fn cc_no_feedback(&mut self, now: Instant) {
        let Rate::Cc { min_bps, .. } = self.config.rate else {
            return;
        };
        let Some(last) = self.last_cc_feedback else {
            return;
        };
        let limit = self
            .probe_interval()
            .mul_f64(4.0)
            .max(Duration::from_secs(1));
        if now - last > limit {
            self.last_cc_feedback = Some(now);
            self.set_rate((self.rate / 2.0).max(min_bps / 8.0));
        }
    }

    fn set_rate(&mut self, bytes_per_second: f64) {
        if (bytes_per_second - self.rate).abs() > 1e-9 * self.rate {
            self.rate = bytes_per_second;
            self.update_grtt_advertised();
            self.events.push_back(SenderEvent::RateChanged {
                bits_per_second: bytes_per_second * 8.0,
            });
        }
    }

    fn cc_command(&mut self, now: Instant) -> Message {
        self.cc_sequence = self.cc_sequence.wrapping_add(1);
        let mut nodes = Vec::new();
        let mut extensions = Vec::new();
        if let Rate::Cc { .. } = self.config.rate {
            extensions.push(Extension::Rate {
                send_rate: wire::quantize_rate(self.rate),
            });
            if let Some((&id, r)) = self.clr.and_then(|c| self.receivers.get_key_value(&c)) {
                let mut flags = cc_flags::CLR;
                if r.rtt.is_some() {
                    flags |= cc_flags::RTT;
                }
                if r.slow_start {
                    flags |= cc_flags::START;
                }
                nodes.push(CcNode {
                    node_id: id,
                    flags,
                    rtt: wire::quantize_rtt(r.rtt.unwrap_or(self.grtt_secs())),
                    rate: wire::quantize_rate(r.rate.unwrap_or(self.rate)),
                });
            }
        }
        Message::Cmd(Cmd {
            sender: self.sender_fields(),
            extensions,
            command: Command::Cc {
                cc_sequence: self.cc_sequence,
                send_time: Timestamp::from_micros(now.as_micros()),
                nodes,
            },
        })
    }

    fn next_squelch(&mut self) -> Option<Message> {
        let first = *self.squelch.iter().next()?;
        let invalid: Vec<u16> = self.squelch.iter().copied().take(256).collect();
        self.squelch.clear();
        self.flushes_left = self.config.robust_factor;
        self.flush_announced = false;
        let (object_id, payload_id) = match self.objects.front() {
            Some(o) => (o.id, PayloadId { sbn: 0, esi: 0 }),
            None => (first.wrapping_add(1), PayloadId { sbn: 0, esi: 0 }),
        };
        Some(Message::Cmd(Cmd {
            sender: self.sender_fields(),
            extensions: Vec::new(),
            command: Command::Squelch {
                object_id,
                payload_id,
                invalid_objects: invalid,
            },
        }))
    }

    fn next_repair(&mut self, now: Instant) -> Option<Message> {
        while let Some(key) = self.repairs.pop_first() {
            let Some(msg) = self.data_message(key, true) else {
                continue;
            };
            self.repaired_at.insert(key, now);
            self.stats.repairs_sent += 1;
            // Receivers are prompted again once the repairs are out.
            self.flushes_left = self.config.robust_factor;
            self.flush_due = now;
            self.flush_announced = false;
            return Some(msg);
        }
        None
    }

    fn next_new_data(&mut self) -> Option<Message> {
        loop {
            let c = self.cursor?;
            let Some(o) = self.objects.iter().find(|o| o.ordinal == c.ordinal) else {
                self.advance_object(c.ordinal);
                continue;
            };
            let len = o.layout.block_len(c.sbn);
            let total = len + u16::from(self.config.auto_parity);
            if c.symbol >= total {
                if c.sbn + 1 < o.layout.num_blocks() {
                    self.cursor = Some(Cursor {
                        sbn: c.sbn + 1,
                        symbol: 0,
                        ..c
                    });
                } else {
                    let id = o.id;
                    self.events
                        .push_back(SenderEvent::ObjectSent { object_id: id });
                    self.advance_object(c.ordinal);
                }
                continue;
            }
            self.cursor = Some(Cursor {
                symbol: c.symbol + 1,
                ..c
            });
            let msg = self.data_message((c.ordinal, c.sbn, c.symbol), false);
            if msg.is_some() {
                self.stats.data_sent += 1;
            }
            return msg;
        }
    }

    fn advance_object(&mut self, ordinal: u64) {
        let next = self
            .objects
            .iter()
            .map(|o| o.ordinal)
            .find(|&o| o > ordinal);
        self.cursor = next.map(|ordinal| Cursor {
            ordinal,
            sbn: 0,
            symbol: 0,
        });
        if self.cursor.is_none() {
            self.events.push_back(SenderEvent::QueueEmpty);
            self.flushes_left = self.config.robust_factor;
            self.flush_announced = false;
        }
        self.trim_cache();
    }

    /// Drops the oldest sent objects beyond the cache size.
    fn trim_cache(&mut self) {
        while self.objects.len() > self.config.tx_cache_objects {
            let front = self.objects.front().map(|o| o.ordinal);
            if self.cursor.is_some_and(|c| Some(c.ordinal) == front) {
                break;
            }
            if let Some(o) = self.objects.pop_front() {
                self.events
                    .push_back(SenderEvent::ObjectPurged { object_id: o.id });
            }
        }
    }

    /// Builds NORM_DATA for a symbol (source, or parity computed on demand).
    fn data_message(&mut self, (ordinal, sbn, esi): SymbolKey, repair: bool) -> Option<Message> {
        let fields = self.sender_fields();
        let codec = self.codec.as_ref();
        let o = self.objects.iter_mut().find(|o| o.ordinal == ordinal)?;
        if sbn >= o.layout.num_blocks() {
            return None;
        }
        let len = o.layout.block_len(sbn);
        let payload = if esi < len {
            let off = o.layout.offset(sbn, esi) as usize;
            o.data[off..off + o.layout.segment_len(sbn, esi)].to_vec()
        } else {
            let codec = codec?;
            let index = usize::from(esi - len);
            if index >= codec.p() {
                return None;
            }
            let layout = o.layout;
            let data = &o.data;
            let parity = o.parity.entry(sbn).or_insert_with(|| {
                let sources: Vec<&[u8]> = (0..len)
                    .map(|e| {
                        let off = layout.offset(sbn, e) as usize;
                        &data[off..off + layout.segment_len(sbn, e)]
                    })
                    .collect();
                // Parity covers the longest source symbol of the block.
                let sym_len = sources.iter().map(|s| s.len()).max().unwrap_or(0);
                (0..codec.p())
                    .map(|i| codec.parity(&sources, i, sym_len))
                    .collect()
            });
            parity[index].clone()
        };
        let mut flags = if repair { object_flags::REPAIR } else { 0 };
        if o.kind == ObjectKind::File {
            flags |= object_flags::FILE;
        }
        Some(Message::Data(Data {
            sender: fields,
            flags,
            object_id: o.id,
            payload_id: PayloadId {
                sbn,
                esi: esi as u8,
            },
            extensions: vec![Extension::Fti(o.fti)],
            payload,
        }))
    }

    fn next_flush(&mut self, now: Instant) -> Option<Message> {
        let (object_id, payload_id, acking_nodes) = match &self.watermark {
            Some(w) => (
                w.object_id,
                w.payload_id,
                w.pending.iter().copied().collect(),
            ),
            None => {
                let o = self.objects.back()?;
                let sbn = o.layout.num_blocks() - 1;
                let esi = o.layout.block_len(sbn) - 1;
                (
                    o.id,
                    PayloadId {
                        sbn,
                        esi: esi as u8,
                    },
                    Vec::new(),
                )
            }
        };
        self.flushes_left -= 1;
        self.flush_due = now + Duration::from_secs_f64(2.0 * self.grtt_secs());
        if self.flushes_left == 0 {
            self.end_flush();
        }
        Some(Message::Cmd(Cmd {
            sender: self.sender_fields(),
            extensions: Vec::new(),
            command: Command::Flush {
                object_id,
                payload_id,
                acking_nodes,
            },
        }))
    }

    fn end_flush(&mut self) {
        if let Some(w) = self.watermark.take() {
            self.events.push_back(SenderEvent::WatermarkCompleted {
                object_id: w.object_id,
                acked: w.acked,
                missing: w.pending.into_iter().collect(),
            });
        } else if !self.flush_announced {
            self.flush_announced = true;
            self.events.push_back(SenderEvent::FlushCompleted);
        }
    }

    /// Takes in one datagram from `from`.
    pub fn handle_datagram(&mut self, now: Instant, _from: SocketAddr, bytes: &[u8]) {
        let packet = match Packet::decode(bytes) {
            Ok(p) => p,
            Err(_) => {
                self.stats.malformed += 1;
                return;
            }
        };
        if packet.source_id == self.config.node_id {
            return;
        }
        let node = packet.source_id;
        match packet.message {
            Message::Nack(n) => {
                if n.server_id != self.config.node_id || n.instance_id != self.config.instance_id {
                    return;
                }
                self.stats.nacks_received += 1;
                self.feedback(now, node, n.grtt_response, &n.extensions);
                for r in &n.requests {
                    self.handle_repair_request(now, r);
                }
            }
            Message::Ack(a) => {
                if a.server_id != self.config.node_id || a.instance_id != self.config.instance_id {
                    return;
                }
                self.stats.acks_received += 1;
                self.feedback(now, node, a.grtt_response, &a.extensions);
                if let AckContent::Flush {
                    object_id,
                    payload_id,
                } = a.content
                {
                    self.watermark_ack(node, object_id, payload_id);
                }
            }
            _ => {}
        }
    }

    fn watermark_ack(&mut self, node: NodeId, object_id: u16, payload_id: PayloadId) {
        let Some(w) = &mut self.watermark else {
            return;
        };
        if w.object_id == object_id && w.payload_id == payload_id && w.pending.remove(&node) {
            w.acked.push(node);
            if w.pending.is_empty() {
                self.flushes_left = 0;
                self.end_flush();
            }
        }
    }

    /// GRTT and NORM-CC feedback from a NACK or ACK.
    fn feedback(
        &mut self,
        now: Instant,
        node: NodeId,
        grtt_response: Timestamp,
        exts: &[Extension],
    ) {
        let rtt = (!grtt_response.is_zero()).then(|| {
            // `send_time` carries the low 32 bits of seconds: compare modulo.
            let now_ts = Timestamp::from_micros(now.as_micros());
            let d_sec = now_ts.sec.wrapping_sub(grtt_response.sec);
            let micros = i64::from(d_sec) * 1_000_000 + i64::from(now_ts.usec)
                - i64::from(grtt_response.usec);
            (micros.max(1) as f64) / 1e6
        });
        let rtt = rtt.filter(|&r| r < 1000.0);
        let entry = self.receivers.entry(node).or_insert(Receiver {
            rtt: None,
            rate: None,
            slow_start: true,
            heard: now,
        });
        entry.heard = now;
        if let Some(r) = rtt {
            entry.rtt = Some(entry.rtt.map_or(r, |old| 0.5 * old + 0.5 * r));
        }
        let mut cc_feedback = false;
        for e in exts {
            if let Extension::Cc(fb) = e {
                entry.rate = Some(wire::unquantize_rate(fb.rate));
                entry.slow_start = fb.flags & cc_flags::START != 0;
                cc_feedback = true;
            }
        }
        if let Some(r) = rtt {
            // RFC 5740 section 5.1.2: larger RTTs are taken quickly, smaller
            // ones slowly (libnorm's 0.25/0.75 up; 0.9/0.1 down here).
            self.grtt_measured = if r > self.grtt_measured || !self.config.multicast {
                0.25 * self.grtt_measured + 0.75 * r
            } else {
                0.9 * self.grtt_measured + 0.1 * r
            };
            self.update_grtt_advertised();
        }
        if cc_feedback {
            self.cc_update(now);
        }
    }

    /// NORM-CC rate control (RFC 5740 section 5.5.3): the receiver with
    /// the lowest calculated rate is the CLR and the sender follows its
    /// rate; in slow start (no loss reported yet) the rate at most doubles
    /// per feedback.
    fn cc_update(&mut self, now: Instant) {
        let Rate::Cc {
            min_bps, max_bps, ..
        } = self.config.rate
        else {
            return;
        };
        self.last_cc_feedback = Some(now);
        let Some((&clr, r)) = self
            .receivers
            .iter()
            .filter(|(_, r)| r.rate.is_some())
            .min_by(|a, b| {
                a.1.rate
                    .partial_cmp(&b.1.rate)
                    .unwrap_or(core::cmp::Ordering::Equal)
            })
        else {
            return;
        };
        self.clr = Some(clr);
        let reported = r.rate.unwrap_or(self.rate);
        // In slow start the receiver reports twice what it receives; an
        // application-limited sender must not read a lull as congestion,
        // so slow start only ever raises the rate.
        let target = if r.slow_start {
            reported.min(2.0 * self.rate).max(self.rate)
        } else {
            reported
        };
        self.set_rate(target.clamp(min_bps / 8.0, max_bps / 8.0));
    }

    fn handle_repair_request(&mut self, now: Instant, r: &RepairRequest) {
        let pairs: Vec<(wire::RepairItem, wire::RepairItem)> = match r.form {
            RepairForm::Ranges => r.items.chunks_exact(2).map(|c| (c[0], c[1])).collect(),
            _ => r.items.iter().map(|&i| (i, i)).collect(),
        };
        let mut keys = Vec::new();
        for (first, last) in pairs {
            if r.flags & repair_flags::OBJECT != 0 {
                // A range of whole objects (at most half the ID space).
                let count = last.object_id.wrapping_sub(first.object_id).min(0x7fff);
                for i in 0..=count {
                    let id = first.object_id.wrapping_add(i);
                    if let Some((ordinal, layout)) = self.cached(id) {
                        for sbn in 0..layout.num_blocks() {
                            self.block_keys(ordinal, &layout, sbn, &mut keys);
                        }
                    }
                }
                continue;
            }
            let Some((ordinal, layout)) = self.cached(first.object_id) else {
                continue;
            };
            let sbn = first.payload_id.sbn;
            if sbn >= layout.num_blocks() {
                continue;
            }
            if r.flags & repair_flags::BLOCK != 0 {
                let last_sbn = last.payload_id.sbn.min(layout.num_blocks() - 1);
                for sbn in sbn..=last_sbn {
                    self.block_keys(ordinal, &layout, sbn, &mut keys);
                }
            } else if r.form == RepairForm::Erasures {
                let len = layout.block_len(sbn);
                let count = u16::from(first.payload_id.esi).min(len);
                let parity = u16::from(self.config.num_parity).min(count);
                keys.extend((0..parity).map(|i| (ordinal, sbn, len + i)));
                keys.extend((0..count - parity).map(|e| (ordinal, sbn, e)));
            } else if last.payload_id.sbn == sbn {
                let max = layout.block_len(sbn) + u16::from(self.config.num_parity);
                let lo = u16::from(first.payload_id.esi);
                let hi = u16::from(last.payload_id.esi).min(max.saturating_sub(1));
                keys.extend((lo..=hi).map(|e| (ordinal, sbn, e)));
            }
        }
        for key in keys {
            self.request_repair(now, key);
        }
        if !self.pending_repairs.is_empty() && !self.timers.is_running(SenderTimer::Repair) {
            let k = f64::from(self.config.backoff_factor);
            let wait = if self.config.multicast {
                (k + 1.0) * self.grtt_secs()
            } else {
                0.0
            };
            self.timers
                .start(SenderTimer::Repair, now, Duration::from_secs_f64(wait));
        }
    }

    /// The ordinal and layout of a cached object; an object issued before
    /// but no longer cached is queued for NORM_CMD(SQUELCH).
    fn cached(&mut self, object_id: u16) -> Option<(u64, Layout)> {
        if let Some(o) = self.objects.iter().find(|o| o.id == object_id) {
            return Some((o.ordinal, o.layout));
        }
        let age = self.next_object_id.wrapping_sub(object_id);
        if age != 0 && age < 0x8000 {
            self.squelch.insert(object_id);
        }
        None
    }

    /// The symbols that repair a whole block: parity first, then the
    /// source symbols parity cannot stand in for.
    fn block_keys(&self, ordinal: u64, layout: &Layout, sbn: u32, keys: &mut Vec<SymbolKey>) {
        let len = layout.block_len(sbn);
        let parity = u16::from(self.config.num_parity).min(len);
        keys.extend((0..parity).map(|i| (ordinal, sbn, len + i)));
        keys.extend((parity..len).map(|e| (ordinal, sbn, e)));
    }

    fn request_repair(&mut self, now: Instant, key: SymbolKey) {
        // Not yet sent: it will go out anyway.
        if let Some(c) = self.cursor {
            if (key.0, key.1, key.2) >= (c.ordinal, c.sbn, c.symbol) {
                return;
            }
        }
        // Just repaired: the NACK crossed the repair (RFC 5740 5.4.2 hold-off).
        let holdoff = Duration::from_secs_f64(self.grtt_secs());
        if self
            .repaired_at
            .get(&key)
            .is_some_and(|&t| now - t < holdoff)
        {
            return;
        }
        if !self.repairs.contains(&key) {
            self.pending_repairs.insert(key);
        }
        // Forget old hold-off marks.
        self.repaired_at.retain(|_, &mut t| now - t < holdoff);
    }
}

impl Engine for Sender {
    type Transmit = Transmit;

    /// The next datagram to send, if the rate allows one at `now`.
    fn poll_transmit(&mut self, now: Instant) -> Option<Self::Transmit> {
        self.handle_timeout(now);
        if now < self.next_tx {
            return None;
        }
        let message = if self.probing() && now >= self.probe_due {
            self.probe_due = now + self.probe_interval();
            self.cc_command(now)
        } else if let Some(m) = self.next_squelch() {
            m
        } else if let Some(m) = self.next_repair(now) {
            m
        } else if let Some(m) = self.next_new_data() {
            m
        } else if self.flushes_left > 0 && now >= self.flush_due {
            self.next_flush(now)?
        } else {
            return None;
        };
        let packet = Packet {
            sequence: self.sequence,
            source_id: self.config.node_id,
            message,
        };
        let payload = packet.encode().ok()?;
        self.sequence = self.sequence.wrapping_add(1);
        if let Message::Cmd(_) = packet.message {
            self.stats.commands_sent += 1;
        }
        self.stats.octets_sent += payload.len() as u64;
        let cost = (payload.len() as f64 + PACKET_OVERHEAD) / self.rate;
        self.next_tx = now.max(self.next_tx) + Duration::from_secs_f64(cost);
        Some(Transmit {
            destination: self.config.destination,
            payload,
        })
    }

    /// When [`Sender::handle_timeout`] or [`Sender::poll_transmit`] next has
    /// work: the next timer, or the next message the pacer lets out.
    fn poll_timeout(&self) -> Option<Instant> {
        let mut t = self.timers.next_deadline();
        let mut at = |x: Instant| t = Some(t.map_or(x, |t| t.min(x)));
        if self.has_work_to_send() {
            at(self.next_tx);
        } else if self.flushes_left > 0 {
            at(self.flush_due.max(self.next_tx));
        }
        if self.probing() {
            at(self.probe_due.max(self.next_tx));
        }
        t
    }

    /// Runs the timers due at `now`, and NORM-CC's no-feedback check.
    fn handle_timeout(&mut self, now: Instant) {
        while let Some(timer) = self.timers.take_expired(now) {
            match timer {
                SenderTimer::Repair => {
                    let pending = std::mem::take(&mut self.pending_repairs);
                    self.repairs.extend(pending);
                }
            }
        }
        self.cc_no_feedback(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr() -> SocketAddr {
        "127.0.0.1:6003".parse().unwrap()
    }

    #[test]
    fn configuration_is_checked() {
        let mut c = SenderConfig::new(1, addr(), 128_000.0);
        c.segment_size = 0;
        assert!(Sender::new(c, Instant::ZERO).is_err());
        let mut c = SenderConfig::new(1, addr(), 128_000.0);
        c.block_len = 250;
        assert!(Sender::new(c, Instant::ZERO).is_err());
        let c = SenderConfig::new(1, addr(), -5.0);
        assert!(matches!(
            Sender::new(c, Instant::ZERO),
            Err(ConfigError::Rate(_))
        ));
    }

    #[test]
    fn a_watermark_set_after_the_data_was_sent_flushes_at_once() {
        let mut c = SenderConfig::new(1, addr(), 128_000.0);
        c.robust_factor = 3;
        let mut s = Sender::new(c, Instant::ZERO).unwrap();
        let id = s
            .enqueue(Instant::ZERO, vec![7; 2_000], ObjectKind::Data)
            .unwrap();
        let mut now = Instant::ZERO;
        // Send everything and let the plain flushes run out.
        while let Some(t) = s.poll_timeout() {
            now = t;
            while s.poll_transmit(now).is_some() {}
        }
        assert!(s.set_watermark(id, &[2]));
        let at = s.poll_timeout().expect("the watermark flushes");
        let flush = s.poll_transmit(at.max(now)).expect("a NORM_CMD(FLUSH)");
        let Ok(Packet {
            message:
                Message::Cmd(Cmd {
                    command: Command::Flush { acking_nodes, .. },
                    ..
                }),
            ..
        }) = Packet::decode(&flush.payload)
        else {
            panic!("not a flush: {flush:?}");
        };
        assert_eq!(acking_nodes, [2]);
    }

    #[test]
    fn fixed_rate_paces_datagrams() {
        let mut c = SenderConfig::new(1, addr(), 128_000.0);
        c.segment_size = 500;
        let mut s = Sender::new(c, Instant::ZERO).unwrap();
        s.enqueue(Instant::ZERO, vec![7; 100_000], ObjectKind::Data)
            .unwrap();
        let mut now = Instant::ZERO;
        let mut octets = 0;
        while now < Instant::from_micros(2_000_000) {
            while let Some(t) = s.poll_transmit(now) {
                octets += t.payload.len() + 44;
            }
            now = s.poll_timeout().unwrap_or(now + Duration::from_millis(10));
        }
        // 2 s at 128 kbit/s is 32 000 octets on the wire (± one packet).
        assert!((31_000..=33_000).contains(&octets), "{octets}");
    }
}
