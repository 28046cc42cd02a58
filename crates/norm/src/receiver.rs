//! The NORM receiver (RFC 5740 sections 5.2 and 5.3, the receiver side of
//! NORM-CC in 5.5), sans-IO.

use crate::cc::{tfrc_rate, LossEstimator};
use crate::fec::Rs8;
use crate::layout::Layout;
use crate::sender::ObjectKind;
use crate::timer::{RemoteTimer, RemoteTimers};
use crate::wire::{
    self, cc_flags, object_flags, repair_flags, Ack, AckContent, CcFeedback, Command, Data,
    Extension, Fti, Message, Nack, NodeId, Packet, PayloadId, RepairForm, RepairItem,
    RepairRequest, SenderFields, Timestamp,
};
use crate::Transmit;
use core::time::Duration;
use linklab_core::{Engine, Instant, Stream};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;

/// Where receiver feedback (NACK, ACK) goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feedback {
    /// To the address the sender's messages come from (unicast NACKs, as
    /// libnorm's `NormSetDefaultUnicastNack`).
    ToSender,
    /// To a fixed address, e.g. the multicast session address.
    To(SocketAddr),
}

/// Which objects a receiver tries to get when it first hears a sender
/// (libnorm's sync policies).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncPolicy {
    /// From the object being sent, if its first block is heard
    /// (NORM_SYNC_CURRENT, libnorm's default): a receiver that joins late
    /// or loses the start misses the objects before.
    Current,
    /// Also every older object the sender can still repair, up to
    /// [`ReceiverConfig::max_pending_objects`] back (NORM_SYNC_ALL); the
    /// sender squelches what it no longer has.
    All,
}

/// Receiver parameters.
#[derive(Debug, Clone)]
pub struct ReceiverConfig {
    /// This node's NormNodeId.
    pub node_id: NodeId,
    /// Where feedback goes.
    pub feedback: Feedback,
    /// Which objects to try for on first hearing a sender.
    pub sync: SyncPolicy,
    /// Largest object accepted; larger ones are aborted.
    pub max_object_size: u64,
    /// How many object IDs ahead of the oldest pending one are accepted.
    pub max_pending_objects: u16,
    /// Largest NACK payload in octets (libnorm bounds NACKs by a segment).
    pub max_nack_len: usize,
    /// Times the receiver asks again for what is missing after a sender
    /// falls silent, one activity interval (2 · robust factor · GRTT, at
    /// least a second) apart, as libnorm does.
    pub robust_factor: u32,
    /// Whether a completed object counts towards a watermark
    /// acknowledgement (RFC 5740 section 5.1.3) only once the application
    /// has [released](Receiver::release) it, e.g. after storing it, so
    /// that an ACK means the object is safe here. Off by default: an
    /// object counts as soon as it is complete.
    pub hold_acks: bool,
    /// Seed of the receiver's random stream (NACK backoff).
    pub seed: u64,
}

impl ReceiverConfig {
    /// Defaults: unicast feedback to the sender, objects up to 64 MiB.
    pub fn new(node_id: NodeId) -> ReceiverConfig {
        ReceiverConfig {
            node_id,
            feedback: Feedback::ToSender,
            sync: SyncPolicy::Current,
            max_object_size: 64 << 20,
            max_pending_objects: 256,
            max_nack_len: 1024,
            robust_factor: 20,
            hold_acks: false,
            seed: 2,
        }
    }
}

/// Why an object was given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AbortReason {
    /// The sender squelched it (can no longer repair it).
    Squelched,
    /// The sender restarted (new `instance_id`).
    SenderRestarted,
    /// Its size exceeds [`ReceiverConfig::max_object_size`] or its FEC
    /// parameters are unusable.
    Refused,
    /// It fell out of the pending window.
    OutOfWindow,
}

/// What the receiver tells its user.
#[derive(Debug, Clone, PartialEq)]
pub enum ReceiverEvent {
    /// A sender was heard for the first time (or with a new instance).
    SenderStarted {
        /// The sender.
        sender: NodeId,
        /// Its instance.
        instance_id: u16,
    },
    /// An object arrived complete.
    ObjectCompleted {
        /// The sender.
        sender: NodeId,
        /// The object.
        object_id: u16,
        /// Data or file.
        kind: ObjectKind,
        /// Its octets.
        data: Vec<u8>,
    },
    /// An object will not be completed.
    ObjectAborted {
        /// The sender.
        sender: NodeId,
        /// The object.
        object_id: u16,
        /// Why.
        reason: AbortReason,
    },
}

/// Counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// NORM_DATA received.
    pub data_received: u64,
    /// Blocks recovered with parity.
    pub blocks_decoded: u64,
    /// NACKs sent.
    pub nacks_sent: u64,
    /// ACKs sent.
    pub acks_sent: u64,
    /// NACKs cancelled by another receiver's (RFC 5740 section 5.3).
    pub nacks_suppressed: u64,
    /// Datagrams that did not decode or did not fit their object.
    pub malformed: u64,
}

struct RxBlock {
    have: Vec<bool>,
    parity: BTreeMap<u16, Vec<u8>>,
}

struct RxObject {
    id: u16,
    kind: ObjectKind,
    fti: Fti,
    layout: Layout,
    data: Vec<u8>,
    blocks: BTreeMap<u32, RxBlock>,
    complete: Vec<bool>,
    blocks_left: u32,
}

/// Position in a sender's transmission: object (relative to the sync
/// point), block, symbol.
type Position = (u16, u32, u16);

struct Remote {
    addr: SocketAddr,
    instance_id: u16,
    fields: SenderFields,
    synced: bool,
    base: u16,
    objects: BTreeMap<u16, RxObject>,
    /// Relative IDs of objects completed or given up.
    done: BTreeSet<u16>,
    /// Object IDs completed but not yet released (with
    /// [`ReceiverConfig::hold_acks`]).
    held: BTreeSet<u16>,
    /// The last watermark naming this receiver that it could not
    /// acknowledge yet: object and payload ID.
    watermark: Option<(u16, PayloadId)>,
    position: Option<Position>,
    /// Activity, NACK backoff and CC feedback (RFC 5740 sections 5.3,
    /// 5.5.2). Activity runs exactly while [`Remote::active`].
    timers: RemoteTimers,
    /// The end of the hold-off after a NACK was sent or suppressed: no
    /// new NACK backoff starts before (RFC 5740 section 5.3). Only looked
    /// at when data arrives, never woken for.
    holdoff_until: Instant,
    /// How many activity checks have found the sender silent.
    silent_checks: u32,
    cc_last: Option<(Timestamp, Instant, u16)>,
    cc_rtt: Option<f64>,
    cc_clr: bool,
    loss: LossEstimator,
    window_start: Instant,
    window_octets: u64,
    recv_rate: f64,
    codecs: BTreeMap<(u8, u8), Rs8>,
}

/// A NORM receiver: it follows any number of senders, repairs what is
/// missing with NACKs (RFC 5740 section 5.3) and delivers whole objects.
/// Like the [`crate::Sender`] it never does I/O and never reads a clock.
pub struct Receiver {
    config: ReceiverConfig,
    rng: Stream,
    sequence: u16,
    remotes: BTreeMap<NodeId, Remote>,
    transmits: VecDeque<Transmit>,
    events: VecDeque<ReceiverEvent>,
    stats: ReceiverStats,
}

/// RFC 5740 section 5.3: a random backoff over [0, `max`] seconds from a
/// truncated exponential distribution whose steepness grows with the
/// group size, so that in a large group few receivers NACK first.
fn exponential_backoff(rng: &mut Stream, max: f64, group_size: f64) -> f64 {
    if max <= 0.0 {
        return 0.0;
    }
    let lambda = group_size.max(1.0).ln() + 1.0;
    let e = lambda.exp() - 1.0;
    let x = rng.uniform() * (lambda / max) + lambda / (max * e);
    ((max / lambda) * (x * e * (max / lambda)).ln()).clamp(0.0, max)
}

impl Remote {
    fn sync(&mut self, policy: SyncPolicy, object_id: u16, window: u16) {
        self.synced = true;
        self.base = match policy {
            SyncPolicy::Current => object_id,
            SyncPolicy::All => object_id.wrapping_sub(window - 1),
        };
    }

    fn grtt(&self) -> f64 {
        wire::unquantize_rtt(self.fields.grtt)
    }

    /// Whether the activity timer runs: objects are pending and silent
    /// checks are left.
    fn active(&self, robust_factor: u32) -> bool {
        self.silent_checks < robust_factor && !self.objects.is_empty()
    }

    fn rel(&self, object_id: u16) -> u16 {
        object_id.wrapping_sub(self.base)
    }

    fn passed(&self, rel: u16, sbn: u32, block_len: u16) -> bool {
        match self.position {
            Some((r, s, e)) => (r, s) > (rel, sbn) || ((r, s) == (rel, sbn) && e + 1 >= block_len),
            None => false,
        }
    }

    /// The repair requests for everything the sender has passed and this
    /// receiver lacks (RFC 5740 section 5.3), at most `max_len` octets.
    fn repair_requests(&self, max_len: usize) -> Vec<RepairRequest> {
        let Some((pos_rel, _, _)) = self.position else {
            return Vec::new();
        };
        let mut requests: Vec<RepairRequest> = Vec::new();
        let mut len = 0;
        let mut push = |r: RepairRequest, requests: &mut Vec<RepairRequest>| {
            if len + r.len() <= max_len {
                len += r.len();
                requests.push(r);
            }
        };
        // Runs of never-heard objects become one OBJECT range each.
        let mut unheard: Option<(u16, u16)> = None;
        let flush_unheard =
            |run: Option<(u16, u16)>,
             requests: &mut Vec<RepairRequest>,
             push: &mut dyn FnMut(RepairRequest, &mut Vec<RepairRequest>)| {
                if let Some((a, b)) = run {
                    let item = |rel: u16| RepairItem {
                        object_id: self.base.wrapping_add(rel),
                        payload_id: PayloadId { sbn: 0, esi: 0 },
                    };
                    let (form, items) = if a == b {
                        (RepairForm::Items, vec![item(a)])
                    } else {
                        (RepairForm::Ranges, vec![item(a), item(b)])
                    };
                    push(
                        RepairRequest {
                            form,
                            flags: repair_flags::OBJECT,
                            items,
                        },
                        requests,
                    );
                }
            };
        for rel in 0..=pos_rel {
            if self.done.contains(&rel) {
                continue;
            }
            let Some(o) = self.objects.get(&rel) else {
                unheard = match unheard {
                    Some((a, b)) if b + 1 == rel => Some((a, rel)),
                    run => {
                        flush_unheard(run, &mut requests, &mut push);
                        Some((rel, rel))
                    }
                };
                continue;
            };
            flush_unheard(unheard.take(), &mut requests, &mut push);
            for sbn in 0..o.layout.num_blocks() {
                if o.complete[sbn as usize] {
                    continue;
                }
                let block_len = o.layout.block_len(sbn);
                if !self.passed(rel, sbn, block_len) {
                    break;
                }
                for r in block_requests(o, sbn) {
                    push(r, &mut requests);
                }
            }
        }
        flush_unheard(unheard, &mut requests, &mut push);
        requests
    }
}

/// The ESIs to request for an incomplete block: as many parity symbols as
/// are missing if the code has that many, otherwise all parity and the
/// source symbols parity cannot cover (as libnorm asks).
fn block_requests(o: &RxObject, sbn: u32) -> Vec<RepairRequest> {
    let len = o.layout.block_len(sbn);
    let p = u16::from(o.fti.num_parity);
    let (missing, parity_have): (Vec<u16>, BTreeSet<u16>) = match o.blocks.get(&sbn) {
        Some(b) => (
            (0..len).filter(|&e| !b.have[usize::from(e)]).collect(),
            b.parity.keys().copied().collect(),
        ),
        None => ((0..len).collect(), BTreeSet::new()),
    };
    let need = missing.len().saturating_sub(parity_have.len());
    let parity_free: Vec<u16> = (len..len + p)
        .filter(|e| !parity_have.contains(e))
        .collect();
    let mut esis: Vec<u16> = if need <= parity_free.len() {
        parity_free[..need].to_vec()
    } else {
        let mut v = missing[parity_free.len() + parity_have.len()..].to_vec();
        v.extend(&parity_free);
        v
    };
    esis.sort_unstable();
    // Runs of consecutive ESIs become ranges, the rest items.
    let item = |esi: u16| RepairItem {
        object_id: o.id,
        payload_id: PayloadId {
            sbn,
            esi: esi as u8,
        },
    };
    let mut items = Vec::new();
    let mut ranges = Vec::new();
    let mut i = 0;
    while i < esis.len() {
        let mut j = i;
        while j + 1 < esis.len() && esis[j + 1] == esis[j] + 1 {
            j += 1;
        }
        if j > i {
            ranges.push(item(esis[i]));
            ranges.push(item(esis[j]));
        } else {
            items.push(item(esis[i]));
        }
        i = j + 1;
    }
    let mut out = Vec::new();
    if !items.is_empty() {
        out.push(RepairRequest {
            form: RepairForm::Items,
            flags: repair_flags::SEGMENT,
            items,
        });
    }
    if !ranges.is_empty() {
        out.push(RepairRequest {
            form: RepairForm::Ranges,
            flags: repair_flags::SEGMENT,
            items: ranges,
        });
    }
    out
}

/// The symbols a list of segment requests names (ranges within a block).
fn requested_symbols(requests: &[RepairRequest]) -> BTreeSet<(u16, u32, u16)> {
    let mut set = BTreeSet::new();
    for r in requests
        .iter()
        .filter(|r| r.flags & repair_flags::SEGMENT != 0)
    {
        let pairs: Vec<(RepairItem, RepairItem)> = match r.form {
            RepairForm::Ranges => r.items.chunks_exact(2).map(|c| (c[0], c[1])).collect(),
            RepairForm::Items => r.items.iter().map(|&i| (i, i)).collect(),
            RepairForm::Erasures => continue,
        };
        for (a, b) in pairs {
            if a.object_id == b.object_id && a.payload_id.sbn == b.payload_id.sbn {
                for esi in a.payload_id.esi..=b.payload_id.esi {
                    set.insert((a.object_id, a.payload_id.sbn, u16::from(esi)));
                }
            }
        }
    }
    set
}

impl Receiver {
    /// A receiver.
    pub fn new(config: ReceiverConfig) -> Receiver {
        Receiver {
            rng: Stream::from_seed(config.seed),
            config,
            sequence: 0,
            remotes: BTreeMap::new(),
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            stats: ReceiverStats::default(),
        }
    }

    /// Counters.
    pub fn stats(&self) -> ReceiverStats {
        self.stats
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<ReceiverEvent> {
        self.events.pop_front()
    }

    /// Takes in one datagram from `from`.
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, bytes: &[u8]) {
        let Ok(packet) = Packet::decode(bytes) else {
            self.stats.malformed += 1;
            return;
        };
        let sender = packet.source_id;
        if sender == self.config.node_id {
            return;
        }
        match packet.message {
            Message::Data(d) => {
                if self.remote(now, sender, from, &d.sender, packet.sequence, bytes.len()) {
                    self.on_data(sender, d);
                }
            }
            Message::Info(i) => {
                self.remote(now, sender, from, &i.sender, packet.sequence, bytes.len());
            }
            Message::Cmd(c) => {
                if self.remote(now, sender, from, &c.sender, packet.sequence, bytes.len()) {
                    self.on_command(now, sender, c.command, &c.extensions);
                }
            }
            Message::Nack(n) => self.on_other_nack(now, n),
            Message::Ack(_) => {}
        }
        let robust = self.config.robust_factor;
        if let Some(r) = self.remotes.get_mut(&sender) {
            if !r.active(robust) {
                r.timers.stop(RemoteTimer::Activity, now);
            }
        }
        self.arm_nack(now);
    }

    /// Finds or creates the state for a sender; false if its messages are
    /// to be ignored.
    fn remote(
        &mut self,
        now: Instant,
        sender: NodeId,
        from: SocketAddr,
        fields: &SenderFields,
        sequence: u16,
        len: usize,
    ) -> bool {
        let restarted = self
            .remotes
            .get(&sender)
            .is_some_and(|r| r.instance_id != fields.instance_id);
        if restarted {
            if let Some(old) = self.remotes.remove(&sender) {
                for o in old.objects.values() {
                    self.events.push_back(ReceiverEvent::ObjectAborted {
                        sender,
                        object_id: o.id,
                        reason: AbortReason::SenderRestarted,
                    });
                }
            }
        }
        let r = self.remotes.entry(sender).or_insert_with(|| {
            self.events.push_back(ReceiverEvent::SenderStarted {
                sender,
                instance_id: fields.instance_id,
            });
            Remote {
                addr: from,
                instance_id: fields.instance_id,
                fields: *fields,
                synced: false,
                base: 0,
                objects: BTreeMap::new(),
                done: BTreeSet::new(),
                held: BTreeSet::new(),
                watermark: None,
                position: None,
                timers: RemoteTimers::default(),
                holdoff_until: now,
                silent_checks: 0,
                cc_last: None,
                cc_rtt: None,
                cc_clr: false,
                loss: LossEstimator::default(),
                window_start: now,
                window_octets: 0,
                recv_rate: 0.0,
                codecs: BTreeMap::new(),
            }
        });
        r.addr = from;
        r.fields = *fields;
        r.silent_checks = 0;
        // Stopped again once the datagram is handled if no object is
        // pending then.
        let interval = activity_interval(r, self.config.robust_factor);
        r.timers.start(RemoteTimer::Activity, now, interval);
        let rtt = Duration::from_secs_f64(r.cc_rtt.unwrap_or(r.grtt()));
        r.loss.on_message(now, sequence, rtt);
        r.window_octets += len as u64;
        true
    }

    fn on_data(&mut self, sender: NodeId, d: Data) {
        self.stats.data_received += 1;
        let max_size = self.config.max_object_size;
        let window = self.config.max_pending_objects.clamp(1, 0x7fff);
        let policy = self.config.sync;
        let Some(r) = self.remotes.get_mut(&sender) else {
            return;
        };
        let repair = d.flags & object_flags::REPAIR != 0;
        if !r.synced {
            // NORM_SYNC_CURRENT synchronises on the first block of an
            // object, never on a repair.
            if policy == SyncPolicy::Current && (repair || d.payload_id.sbn != 0) {
                return;
            }
            r.sync(policy, d.object_id, window);
            r.position = Some((r.rel(d.object_id), d.payload_id.sbn, 0));
        }
        let mut rel = r.rel(d.object_id);
        if rel >= 0x8000 {
            return; // before the sync point
        }
        if rel >= window {
            // Slide the window: what falls out is given up.
            let shift = rel - window + 1;
            let mut aborted = Vec::new();
            for old in 0..shift {
                if let Some(o) = r.objects.remove(&old) {
                    aborted.push(o.id);
                }
            }
            r.base = r.base.wrapping_add(shift);
            r.objects = std::mem::take(&mut r.objects)
                .into_iter()
                .map(|(k, v)| (k - shift, v))
                .collect();
            r.done = r
                .done
                .iter()
                .filter(|&&k| k >= shift)
                .map(|k| k - shift)
                .collect();
            r.position = r.position.map(|(pr, s, e)| {
                if pr >= shift {
                    (pr - shift, s, e)
                } else {
                    (0, 0, 0)
                }
            });
            rel -= shift;
            for object_id in aborted {
                self.events.push_back(ReceiverEvent::ObjectAborted {
                    sender,
                    object_id,
                    reason: AbortReason::OutOfWindow,
                });
            }
        }
        if !repair {
            let at = (rel, d.payload_id.sbn, u16::from(d.payload_id.esi));
            if r.position.is_none_or(|p| at > p) {
                r.position = Some(at);
            }
        }
        if r.done.contains(&rel) {
            return;
        }
        if !r.objects.contains_key(&rel) {
            let fti = d.extensions.iter().find_map(|e| match e {
                Extension::Fti(f) => Some(*f),
                _ => None,
            });
            let Some(fti) = fti else {
                return; // no FTI yet: wait for a message that has it
            };
            let layout = Layout::new(&fti);
            let usable = u16::from(fti.max_block_len) + u16::from(fti.num_parity) <= 255
                && fti.object_size <= max_size;
            let (Some(layout), true) = (layout, usable) else {
                r.done.insert(rel);
                self.events.push_back(ReceiverEvent::ObjectAborted {
                    sender,
                    object_id: d.object_id,
                    reason: AbortReason::Refused,
                });
                return;
            };
            r.objects.insert(
                rel,
                RxObject {
                    id: d.object_id,
                    kind: if d.flags & object_flags::FILE != 0 {
                        ObjectKind::File
                    } else {
                        ObjectKind::Data
                    },
                    fti,
                    layout,
                    data: vec![0; fti.object_size as usize],
                    blocks: BTreeMap::new(),
                    complete: vec![false; layout.num_blocks() as usize],
                    blocks_left: layout.num_blocks(),
                },
            );
        }
        let Some(o) = r.objects.get_mut(&rel) else {
            return;
        };
        let sbn = d.payload_id.sbn;
        let esi = u16::from(d.payload_id.esi);
        if sbn >= o.layout.num_blocks() || o.complete[sbn as usize] {
            return;
        }
        let len = o.layout.block_len(sbn);
        let seg = usize::from(o.layout.segment_size());
        let fits = if esi < len {
            d.payload.len() == o.layout.segment_len(sbn, esi)
        } else {
            esi - len < u16::from(o.fti.num_parity) && d.payload.len() <= seg
        };
        if !fits {
            self.stats.malformed += 1;
            return;
        }
        let block = o.blocks.entry(sbn).or_insert_with(|| RxBlock {
            have: vec![false; usize::from(len)],
            parity: BTreeMap::new(),
        });
        if esi < len {
            if !block.have[usize::from(esi)] {
                let off = o.layout.offset(sbn, esi) as usize;
                o.data[off..off + d.payload.len()].copy_from_slice(&d.payload);
                block.have[usize::from(esi)] = true;
            }
        } else {
            block.parity.entry(esi).or_insert(d.payload);
        }
        let sources = block.have.iter().filter(|&&h| h).count();
        if sources + block.parity.len() < usize::from(len) {
            return;
        }
        if sources < usize::from(len) {
            let key = (o.fti.max_block_len, o.fti.num_parity);
            if let std::collections::btree_map::Entry::Vacant(slot) = r.codecs.entry(key) {
                match Rs8::new(usize::from(key.0), usize::from(key.1)) {
                    Ok(c) => {
                        slot.insert(c);
                    }
                    Err(_) => return,
                }
            }
            let codec = &r.codecs[&key];
            let mut symbols: Vec<(usize, &[u8])> = Vec::new();
            for e in 0..len {
                if block.have[usize::from(e)] {
                    let off = o.layout.offset(sbn, e) as usize;
                    symbols.push((
                        usize::from(e),
                        &o.data[off..off + o.layout.segment_len(sbn, e)],
                    ));
                }
            }
            symbols.extend(
                block
                    .parity
                    .iter()
                    .map(|(&e, p)| (usize::from(e), p.as_slice())),
            );
            let Ok(decoded) = codec.decode(usize::from(len), &symbols, seg) else {
                return;
            };
            for e in 0..len {
                if !block.have[usize::from(e)] {
                    let off = o.layout.offset(sbn, e) as usize;
                    let n = o.layout.segment_len(sbn, e);
                    o.data[off..off + n].copy_from_slice(&decoded[usize::from(e)][..n]);
                }
            }
            self.stats.blocks_decoded += 1;
        }
        o.blocks.remove(&sbn);
        o.complete[sbn as usize] = true;
        o.blocks_left -= 1;
        if o.blocks_left == 0 {
            if let Some(o) = r.objects.remove(&rel) {
                r.done.insert(rel);
                if self.config.hold_acks {
                    r.held.insert(o.id);
                }
                self.events.push_back(ReceiverEvent::ObjectCompleted {
                    sender,
                    object_id: o.id,
                    kind: o.kind,
                    data: o.data,
                });
            }
        }
    }

    fn on_command(&mut self, now: Instant, sender: NodeId, command: Command, exts: &[Extension]) {
        let me = self.config.node_id;
        let Some(r) = self.remotes.get_mut(&sender) else {
            return;
        };
        match command {
            Command::Flush {
                object_id,
                payload_id,
                acking_nodes,
            } => {
                let window = self.config.max_pending_objects.clamp(1, 0x7fff);
                if !r.synced {
                    if self.config.sync == SyncPolicy::Current {
                        return;
                    }
                    r.sync(SyncPolicy::All, object_id, window);
                }
                let rel = r.rel(object_id);
                if rel >= 0x8000 || rel >= window {
                    return;
                }
                let at = (rel, payload_id.sbn, u16::from(payload_id.esi));
                if r.position.is_none_or(|p| at > p) {
                    r.position = Some(at);
                }
                if acking_nodes.contains(&me) {
                    r.watermark = Some((object_id, payload_id));
                    self.ack_watermark(now, sender);
                }
            }
            Command::Squelch {
                object_id,
                invalid_objects,
                ..
            } => {
                let oldest = r.rel(object_id);
                let mut gone: Vec<u16> = invalid_objects.iter().map(|&o| r.rel(o)).collect();
                if oldest < 0x8000 {
                    gone.extend(0..oldest);
                }
                for rel in gone {
                    if rel >= 0x8000 || r.done.contains(&rel) {
                        continue;
                    }
                    if r.position.is_some_and(|p| rel <= p.0) {
                        r.done.insert(rel);
                        // Only objects this receiver had begun are reported.
                        if let Some(o) = r.objects.remove(&rel) {
                            self.events.push_back(ReceiverEvent::ObjectAborted {
                                sender,
                                object_id: o.id,
                                reason: AbortReason::Squelched,
                            });
                        }
                    }
                }
            }
            Command::Cc {
                cc_sequence,
                send_time,
                nodes,
            } => {
                r.cc_last = Some((send_time, now, cc_sequence));
                let listed = nodes.iter().find(|n| n.node_id == me);
                r.cc_clr = listed.is_some_and(|n| n.flags & cc_flags::CLR != 0);
                if let Some(n) = listed.filter(|n| n.flags & cc_flags::RTT != 0) {
                    r.cc_rtt = Some(wire::unquantize_rtt(n.rtt));
                }
                let cc_session = exts.iter().any(|e| matches!(e, Extension::Rate { .. }));
                // The CLR answers at once; others after a random backoff
                // (RFC 5740 section 5.5.2), in NORM-CC sessions only if
                // their rate is below the sender's or the sender has no
                // CLR yet: a receiver in slow start reports twice what it
                // receives, never below the rate it is sent at, so a
                // sender that has not heard it would never hear it (as
                // libnorm, which arms the backoff for every probe).
                let delay = if listed.is_some() {
                    0.0
                } else {
                    let k = f64::from(r.fields.backoff);
                    let gsize = wire::unquantize_gsize(r.fields.gsize);
                    exponential_backoff(&mut self.rng, k * r.grtt(), gsize)
                };
                let sender_rate = exts.iter().find_map(|e| match e {
                    Extension::Rate { send_rate } => Some(wire::unquantize_rate(*send_rate)),
                    _ => None,
                });
                let has_clr = nodes.iter().any(|n| n.flags & cc_flags::CLR != 0);
                let below = match (cc_session, sender_rate) {
                    (true, Some(rate)) => listed.is_some() || !has_clr || self_rate(r, now) < rate,
                    _ => true,
                };
                if below && !r.timers.is_running(RemoteTimer::CcFeedback) {
                    r.timers
                        .start(RemoteTimer::CcFeedback, now, Duration::from_secs_f64(delay));
                }
            }
            _ => {}
        }
    }

    /// Acknowledges the watermark a sender asked this receiver for, if
    /// every object up to it is complete (and released, with
    /// [`ReceiverConfig::hold_acks`]): RFC 5740 section 5.1.3.
    fn ack_watermark(&mut self, now: Instant, sender: NodeId) {
        let Some(r) = self.remotes.get_mut(&sender) else {
            return;
        };
        let Some((object_id, payload_id)) = r.watermark else {
            return;
        };
        let rel = r.rel(object_id);
        let complete = rel < 0x8000
            && (0..=rel).all(|x| {
                r.done.contains(&x)
                    && !r.objects.contains_key(&x)
                    && !r.held.contains(&r.base.wrapping_add(x))
            });
        if complete {
            r.watermark = None;
            self.send_ack(
                now,
                sender,
                AckContent::Flush {
                    object_id,
                    payload_id,
                },
                0,
            );
        }
    }

    /// The application has taken object `object_id` of `sender` (stored
    /// it): with [`ReceiverConfig::hold_acks`] it now counts towards
    /// watermark acknowledgements, and a watermark that waited only for
    /// it is acknowledged at once.
    pub fn release(&mut self, now: Instant, sender: NodeId, object_id: u16) {
        let Some(r) = self.remotes.get_mut(&sender) else {
            return;
        };
        if r.held.remove(&object_id) {
            self.ack_watermark(now, sender);
        }
    }

    /// Another receiver's NACK: if it asks for everything this receiver
    /// would, this receiver's NACK is suppressed (RFC 5740 section 5.3).
    fn on_other_nack(&mut self, now: Instant, n: Nack) {
        let max = self.config.max_nack_len;
        let Some(r) = self.remotes.get_mut(&n.server_id) else {
            return;
        };
        if !r.timers.is_running(RemoteTimer::NackBackoff) || n.instance_id != r.instance_id {
            return;
        }
        let ours = requested_symbols(&r.repair_requests(max));
        let theirs = requested_symbols(&n.requests);
        if !ours.is_empty() && ours.is_subset(&theirs) {
            r.timers.stop(RemoteTimer::NackBackoff, now);
            let k = f64::from(r.fields.backoff);
            r.holdoff_until = now + Duration::from_secs_f64((k + 2.0) * r.grtt());
            self.stats.nacks_suppressed += 1;
        }
    }

    /// Starts a NACK backoff for each sender with something passed and
    /// missing, unless one runs or the hold-off after the last NACK lasts.
    fn arm_nack(&mut self, now: Instant) {
        let max = self.config.max_nack_len;
        for r in self.remotes.values_mut() {
            if r.timers.is_running(RemoteTimer::NackBackoff) || now < r.holdoff_until {
                continue;
            }
            if r.repair_requests(max).is_empty() {
                continue;
            }
            let k = f64::from(r.fields.backoff);
            let gsize = wire::unquantize_gsize(r.fields.gsize);
            let backoff = exponential_backoff(&mut self.rng, k * r.grtt(), gsize);
            r.timers.start(
                RemoteTimer::NackBackoff,
                now,
                Duration::from_secs_f64(backoff),
            );
        }
    }

    fn destination(&self, r: &Remote) -> SocketAddr {
        match self.config.feedback {
            Feedback::ToSender => r.addr,
            Feedback::To(a) => a,
        }
    }

    fn send_nack(&mut self, now: Instant, sender: NodeId) {
        let max = self.config.max_nack_len;
        let Some(r) = self.remotes.get_mut(&sender) else {
            return;
        };
        let requests = r.repair_requests(max);
        if requests.is_empty() {
            return;
        }
        let k = f64::from(r.fields.backoff);
        r.holdoff_until = now + Duration::from_secs_f64((k + 2.0) * r.grtt());
        let extensions = cc_extension(r, now).into_iter().collect();
        r.timers.stop(RemoteTimer::CcFeedback, now);
        let nack = Nack {
            server_id: sender,
            instance_id: r.instance_id,
            grtt_response: grtt_response(r, now),
            extensions,
            requests,
        };
        let dest = self.destination(&self.remotes[&sender]);
        self.stats.nacks_sent += 1;
        self.queue(dest, Message::Nack(nack));
    }

    fn send_ack(&mut self, now: Instant, sender: NodeId, content: AckContent, ack_id: u8) {
        let Some(r) = self.remotes.get_mut(&sender) else {
            return;
        };
        r.timers.stop(RemoteTimer::CcFeedback, now);
        let ack = Ack {
            server_id: sender,
            instance_id: r.instance_id,
            ack_id,
            grtt_response: grtt_response(r, now),
            extensions: cc_extension(r, now).into_iter().collect(),
            content,
        };
        let dest = self.destination(&self.remotes[&sender]);
        self.stats.acks_sent += 1;
        self.queue(dest, Message::Ack(ack));
    }

    fn queue(&mut self, destination: SocketAddr, message: Message) {
        let packet = Packet {
            sequence: self.sequence,
            source_id: self.config.node_id,
            message,
        };
        self.sequence = self.sequence.wrapping_add(1);
        if let Ok(payload) = packet.encode() {
            self.transmits.push_back(Transmit {
                destination,
                payload,
            });
        }
    }
}

impl Engine for Receiver {
    type Transmit = Transmit;

    /// The next datagram to send, if any.
    fn poll_transmit(&mut self, now: Instant) -> Option<Self::Transmit> {
        self.handle_timeout(now);
        self.transmits.pop_front()
    }

    /// When [`Receiver::handle_timeout`] next has work.
    fn poll_timeout(&self) -> Option<Instant> {
        self.remotes
            .values()
            .filter_map(|r| r.timers.next_deadline())
            .min()
    }

    /// Runs the timers due at `now`: sender by sender, each sender's in
    /// table order (activity, NACK back-off, CC feedback).
    fn handle_timeout(&mut self, now: Instant) {
        let ids: Vec<NodeId> = self.remotes.keys().copied().collect();
        let robust = self.config.robust_factor;
        for id in ids {
            while let Some(timer) = self
                .remotes
                .get_mut(&id)
                .and_then(|r| r.timers.take_expired(now))
            {
                match timer {
                    RemoteTimer::Activity => {
                        // The sender fell silent with objects pending: ask
                        // again.
                        let Some(r) = self.remotes.get_mut(&id) else {
                            continue;
                        };
                        r.silent_checks += 1;
                        if r.active(robust) {
                            let interval = activity_interval(r, robust);
                            r.timers.start(RemoteTimer::Activity, now, interval);
                        }
                        r.holdoff_until = now;
                        if !r.timers.is_running(RemoteTimer::NackBackoff) {
                            r.timers.start_at(RemoteTimer::NackBackoff, now);
                        }
                    }
                    RemoteTimer::NackBackoff => self.send_nack(now, id),
                    RemoteTimer::CcFeedback => self.send_ack(now, id, AckContent::Cc, 0),
                }
            }
        }
    }
}

/// How long a sender may stay silent before the receiver asks for repairs
/// again: 2 · robust factor · GRTT, at least a second (libnorm).
fn activity_interval(r: &Remote, robust_factor: u32) -> Duration {
    Duration::from_secs_f64((2.0 * f64::from(robust_factor) * r.grtt()).max(1.0))
}

/// `grtt_response`: the last NORM_CMD(CC) `send_time` advanced by the time
/// it was held here (RFC 5740 section 4.3.1); zero if none was heard.
fn grtt_response(r: &Remote, now: Instant) -> Timestamp {
    match r.cc_last {
        Some((sent, received, _)) => {
            let held = (now - received).as_micros() as u64;
            let micros = u64::from(sent.usec) + held;
            Timestamp {
                sec: sent.sec.wrapping_add((micros / 1_000_000) as u32),
                usec: (micros % 1_000_000) as u32,
            }
        }
        None => Timestamp::default(),
    }
}

/// The receiver's rate for NORM-CC: the TCP-friendly rate at its loss
/// event fraction, or twice the rate it receives at while no loss has
/// been seen (slow start, RFC 5740 section 5.5.2).
fn self_rate(r: &mut Remote, now: Instant) -> f64 {
    let elapsed = (now - r.window_start).as_secs_f64();
    if elapsed >= r.cc_rtt.unwrap_or(r.grtt()) && elapsed > 0.0 {
        r.recv_rate = r.window_octets as f64 / elapsed;
        r.window_start = now;
        r.window_octets = 0;
    }
    let rtt = r.cc_rtt.unwrap_or(r.grtt());
    if r.loss.has_loss() {
        let s = r
            .objects
            .values()
            .next()
            .map_or(1024.0, |o| f64::from(o.fti.segment_size));
        tfrc_rate(s, rtt, r.loss.loss_fraction())
    } else {
        2.0 * r.recv_rate.max(1.0)
    }
}

/// EXT_CC for feedback to a sender that has probed (NORM_CMD(CC) heard).
fn cc_extension(r: &mut Remote, now: Instant) -> Option<Extension> {
    let (_, _, cc_sequence) = r.cc_last?;
    let rate = self_rate(r, now);
    let mut flags = 0;
    if r.cc_clr {
        flags |= cc_flags::CLR;
    }
    if r.cc_rtt.is_some() {
        flags |= cc_flags::RTT;
    }
    if !r.loss.has_loss() {
        flags |= cc_flags::START;
    }
    Some(Extension::Cc(CcFeedback {
        cc_sequence,
        flags,
        rtt: wire::quantize_rtt(r.cc_rtt.unwrap_or(r.grtt())),
        loss: wire::quantize_loss(r.loss.loss_fraction()),
        rate: wire::quantize_rate(rate),
        loss_ex: 0,
    }))
}
