//! The half-duplex shared radio channel: N stations, p-persistent CSMA as
//! KISS TNCs do it, TXDELAY, TXTAIL, carrier detect with a detection delay,
//! collisions per receiver, and a bit-error process per receiver.
//!
//! # Channel access (KISS p-persistence)
//! Each station has a free-running slot clock ticking at
//! `slot_phase + k·slot_time` (the TNC's timer interrupt). While it has
//! frames queued and is not transmitting, at each tick: if it senses
//! carrier it does nothing (and resumes at the first tick after the carrier
//! drops); otherwise it draws a uniform integer r in 0..=255 and keys up if
//! r ≤ P (probability (P+1)/256), else waits for the next tick (KISS,
//! Chepponis & Karn 1987, PERSIST and SLOTTIME; Zielinski 2013 T_102 and
//! p). For a frame arriving at a random phase on a free channel the access
//! delay is U·T + G·T, U uniform on [0, 1), G geometric with
//! P(G = g) = (1 − q)^g·q, q = (P+1)/256, so its mean is T·(1/q − 1/2).
//! This agrees with Zielinski's eq. 1, T_CS = 256·T_102 / (2(P+1)) = T/(2q),
//! at P = 255 and exceeds it otherwise (eq. 1 omits the whole slots lost to
//! failed draws beyond a half slot each).
//!
//! A station may instead time its slots from the channel clearing
//! ([`SlotClock::AfterClear`], set with [`RadioChannel::set_slot_clock`]),
//! as Dire Wolf's transmit thread does (src/xmit.c,
//! `wait_for_clear_channel`): it waits until it senses no carrier, then a
//! whole slot time, then, if it still senses none, draws as above; a failed
//! draw waits another whole slot, and carrier at the end of a slot starts
//! the wait over. A frame queued on a clear channel is drawn for one slot
//! time after it was queued, not at the next tick of a clock. The access
//! delay on a free channel is then (1 + G)·T, mean T/q (400 ms for
//! T = 100 ms, P = 63, against 350 ms with the free-running clock). While
//! the channel is busy the station looks at its DCD every `carrier_poll`
//! (Dire Wolf: 10 ms) from the moment it began waiting, so it notices the
//! carrier drop at the first look after it.
//!
//! # A transmission
//! Key-up at t0 (carrier on air), TXDELAY of preamble, then one opening
//! flag and every queued frame back to back, each followed by its closing
//! flag (shared with the next frame's opening flag), exact stuffed lengths
//! from [`hdlc_bits`]. A frame queued while the station is keyed and not
//! yet in its tail joins the same transmission, so acknowledgements and I
//! frames ride together. After the last frame, TXTAIL, then the
//! transmitter drops.
//!
//! # Carrier detect and collisions
//! Station i senses station j's carrier (if i hears j) from key-up + δ to
//! unkey + δ, δ the DCD detection delay (the same on both edges). Frame f
//! from s, on the air over [a, b), is lost at receiver r if r was keyed at
//! any time in [a, b) ([`Outcome::ReceiverKeyed`]) or if any other
//! transmission r hears was keyed at any time in [a, b)
//! ([`Outcome::Collision`]; no capture effect). Otherwise r's error process
//! judges it. Propagation delay on the radio path is taken as zero.
//!
//! # Full-duplex radio
//! With [`Duplex::Full`] each station transmits on its own frequency
//! (Zielinski 2013, fig. 2: acknowledgements on a separate channel): no
//! carrier sense or persistence (a station keys as soon as it has a frame,
//! as KISS FULLDUP does), no collisions, and a station receives while it
//! transmits.

use core::cmp::Reverse;
use core::time::Duration;
use std::collections::{BinaryHeap, VecDeque};

use linklab_core::{Instant, Stream, Streams};
use linklab_sim::{Tally, TimeWeighted};

use crate::airtime::{bits_duration, hdlc_bits, FLAG_BITS};
use crate::errors::{ErrorModel, ErrorProcess};
use crate::medium::{Delivery, Medium, MediumEvent, Outcome, StationId};

/// Half or full duplex operation of the radio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Duplex {
    /// One shared frequency: CSMA, collisions, a keyed station is deaf.
    #[default]
    Half,
    /// One frequency per station: no contention (Zielinski 2013, fig. 2).
    Full,
}

/// When a station's p-persistence draws fall (the module documentation,
/// "Channel access").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SlotClock {
    /// At the ticks of a free-running clock, `slot_phase + k·slot_time`
    /// (a KISS TNC's timer interrupt; Chepponis & Karn 1987).
    #[default]
    FreeRunning,
    /// One whole slot time after the channel was last seen clear: after
    /// the carrier drops (looked for every `carrier_poll` while it is up;
    /// zero looks continuously), after the frame is queued on a clear
    /// channel, after the station's own transmission, after a failed
    /// draw. Carrier at the end of a slot starts the wait over (Dire Wolf,
    /// src/xmit.c, `wait_for_clear_channel`).
    AfterClear {
        /// How often the station looks at its DCD while the channel is
        /// busy.
        carrier_poll: Duration,
    },
}

/// Channel-wide parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RadioConfig {
    /// Radio bit rate R_wl, bit/s.
    pub bit_rate: u32,
    /// Half or full duplex.
    pub duplex: Duplex,
    /// Carrier-detect delay δ: how long after a transmitter keys (or
    /// drops) the other stations' DCD follows.
    pub dcd_delay: Duration,
    /// Bit errors, judged separately at each receiver.
    pub errors: ErrorModel,
}

impl RadioConfig {
    /// A perfect half-duplex channel at `bit_rate` with instant DCD.
    pub fn new(bit_rate: u32) -> Self {
        RadioConfig {
            bit_rate,
            duplex: Duplex::Half,
            dcd_delay: Duration::ZERO,
            errors: ErrorModel::Perfect,
        }
    }
}

/// One station's KISS parameters (KISS TXDELAY, P, SLOTTIME, TXTAIL;
/// Zielinski T_103, p, T_102).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StationConfig {
    /// Persistence P, 0..=255: transmit in a slot with probability
    /// (P + 1)/256.
    pub persistence: u8,
    /// Slot time T_102.
    pub slot_time: Duration,
    /// Transmitter start-up before the first bit, T_103 / TXDELAY.
    pub txdelay: Duration,
    /// Time the transmitter stays keyed after the last bit.
    pub txtail: Duration,
    /// Offset of this station's slot clock (ticks at phase + k·slot_time;
    /// [`SlotClock::FreeRunning`] only).
    pub slot_phase: Duration,
}

impl StationConfig {
    /// Ronan's radio link, Table I: slot 20 ms, TXDELAY 150 ms, TXTAIL
    /// 20 ms, p = 0.25 (P = 63). Use with a 1200 bit/s channel.
    pub fn ronan_table_1() -> Self {
        StationConfig {
            persistence: 63,
            slot_time: Duration::from_millis(20),
            txdelay: Duration::from_millis(150),
            txtail: Duration::from_millis(20),
            slot_phase: Duration::ZERO,
        }
    }

    /// Probability (P + 1)/256 of transmitting in a free slot.
    pub fn transmit_probability(&self) -> f64 {
        (f64::from(self.persistence) + 1.0) / 256.0
    }
}

/// Counters and time averages of a radio channel.
#[derive(Debug, Clone, PartialEq)]
pub struct RadioStats {
    /// Times a transmitter was keyed.
    pub transmissions: u64,
    /// Key-ups that overlapped another station's transmission (half
    /// duplex): each such event is one collision.
    pub collisions: u64,
    /// Frames sent (each counted once, whatever became of it).
    pub frames_sent: u64,
    /// Frame receptions by outcome.
    pub received_intact: u64,
    /// Receptions lost to bit errors.
    pub lost_to_errors: u64,
    /// Receptions lost to collisions.
    pub lost_to_collisions: u64,
    /// Receptions lost because the receiver was transmitting.
    pub lost_receiver_keyed: u64,
    /// Access delay: from the moment a station had a frame to send and was
    /// idle to its key-up, in seconds.
    pub access_delay: Tally,
    /// 1 while at least one transmitter is keyed, else 0: its time average
    /// is the channel utilisation (busy fraction).
    pub busy: TimeWeighted,
}

/// Counters of one station, as its own radio saw them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StationStats {
    /// Times its transmitter was keyed.
    pub transmissions: u64,
    /// Frames it put on the air.
    pub frames_sent: u64,
    /// Octets of those frames (address through information field).
    pub octets_sent: u64,
    /// Frames from others it received intact.
    pub received_intact: u64,
    /// Frames from others lost to bit errors at this receiver.
    pub lost_to_errors: u64,
    /// Frames from others lost to collisions at this receiver.
    pub lost_to_collisions: u64,
    /// Frames from others lost because this station was transmitting.
    pub lost_receiver_keyed: u64,
    /// Queue delay: from [`Medium::transmit`] to the frame's first bit on
    /// the air, in seconds.
    pub queue_delay: Tally,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TxState {
    Idle,
    /// Keyed, in TXDELAY.
    KeyUp,
    /// Sending frames.
    Sending,
    /// After the last frame, in TXTAIL.
    Tail,
}

#[derive(Debug, Clone)]
struct CurrentFrame {
    body: Vec<u8>,
    bits: u64,
    start: Instant,
    end: Instant,
}

/// A station's transceiver: its queue, its channel access and what its
/// DCD shows.
#[derive(Debug)]
struct Transceiver {
    config: StationConfig,
    /// KISS FULLDUP: key up as soon as a frame waits, without carrier
    /// sense or persistence.
    full_duplex: bool,
    /// Frames waiting, with the time each was handed to the radio.
    queue: VecDeque<(Vec<u8>, Instant)>,
    state: TxState,
    /// Carrier from others as this station's DCD shows it.
    carrier: bool,
    /// Last busy hint reported.
    hint: bool,
    tick_pending: bool,
    slot_clock: SlotClock,
    /// When the station, with frames to send, began waiting for the
    /// carrier to drop ([`SlotClock::AfterClear`]: its DCD looks count
    /// from here).
    carrier_wait_since: Option<Instant>,
    /// When the station began waiting for the channel.
    waiting_since: Option<Instant>,
    data_start: Instant,
    bits_sent: u64,
    frame: Option<CurrentFrame>,
    csma: Stream,
    rx: ErrorProcess,
    /// Error processes of single links into this receiver, by
    /// transmitter, overriding `rx` (see [`RadioChannel::set_link_errors`]).
    link_rx: Vec<(usize, ErrorProcess)>,
    stats: StationStats,
}

/// One keyed period of one station.
#[derive(Debug, Clone, Copy)]
struct Keying {
    station: usize,
    keyed: Instant,
    unkeyed: Option<Instant>,
}

impl Keying {
    /// Whether the transmitter was keyed at some time in [a, b).
    fn overlaps(&self, a: Instant, b: Instant) -> bool {
        self.keyed < b && self.unkeyed.is_none_or(|u| u > a)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Timer {
    Slot(usize),
    CarrierEdge(usize),
    DataStart(usize),
    FrameEnd(usize),
    Unkey(usize),
}

/// The shared radio channel (see the module documentation for the model).
#[derive(Debug)]
pub struct RadioChannel {
    config: RadioConfig,
    stations: Vec<Transceiver>,
    /// `hears[r][s]`: receiver r is in range of transmitter s.
    hears: Vec<Vec<bool>>,
    keyings: Vec<Keying>,
    keyed_now: usize,
    timers: BinaryHeap<Reverse<(Instant, u64, Timer)>>,
    seq: u64,
    deliveries: VecDeque<Delivery>,
    events: VecDeque<MediumEvent>,
    stats: RadioStats,
}

impl RadioChannel {
    /// A channel with one station per entry of `stations`, all in range of
    /// each other. Station i draws its persistence numbers from stream
    /// `"{name}/{i}/csma"` and its reception errors from
    /// `"{name}/{i}/errors"` of `streams`.
    pub fn new(
        config: RadioConfig,
        stations: &[StationConfig],
        streams: &Streams,
        name: &str,
    ) -> Self {
        let n = stations.len();
        RadioChannel {
            config,
            stations: stations
                .iter()
                .enumerate()
                .map(|(i, &c)| Transceiver {
                    config: c,
                    full_duplex: false,
                    queue: VecDeque::new(),
                    state: TxState::Idle,
                    carrier: false,
                    hint: false,
                    tick_pending: false,
                    slot_clock: SlotClock::FreeRunning,
                    carrier_wait_since: None,
                    waiting_since: None,
                    data_start: Instant::ZERO,
                    bits_sent: 0,
                    frame: None,
                    csma: streams.stream(&format!("{name}/{i}/csma")),
                    rx: ErrorProcess::new(
                        config.errors,
                        streams.stream(&format!("{name}/{i}/errors")),
                    ),
                    link_rx: Vec::new(),
                    stats: StationStats::default(),
                })
                .collect(),
            hears: vec![vec![true; n]; n],
            keyings: Vec::new(),
            keyed_now: 0,
            timers: BinaryHeap::new(),
            seq: 0,
            deliveries: VecDeque::new(),
            events: VecDeque::new(),
            stats: RadioStats {
                transmissions: 0,
                collisions: 0,
                frames_sent: 0,
                received_intact: 0,
                lost_to_errors: 0,
                lost_to_collisions: 0,
                lost_receiver_keyed: 0,
                access_delay: Tally::new(),
                busy: TimeWeighted::new(Instant::ZERO, 0.0),
            },
        }
    }

    /// Sets whether `receiver` hears `transmitter` (carrier, frames and
    /// interference); every pair hears each other by default. Hidden
    /// stations are pairs that do not.
    pub fn set_hears(&mut self, receiver: StationId, transmitter: StationId, hears: bool) {
        if let Some(cell) = self
            .hears
            .get_mut(receiver.0)
            .and_then(|row| row.get_mut(transmitter.0))
        {
            *cell = hears;
        }
    }

    /// Whether `receiver` hears `transmitter` ([`RadioChannel::set_hears`]).
    pub fn hears(&self, receiver: StationId, transmitter: StationId) -> bool {
        self.hears
            .get(receiver.0)
            .and_then(|row| row.get(transmitter.0))
            .copied()
            .unwrap_or(false)
    }

    /// Replaces `station`'s KISS parameters (a KISS TXDELAY, P, SLOTTIME
    /// or TXTAIL command from its host). A transmission under way keeps
    /// the TXDELAY and TXTAIL it started with; the slot clock follows the
    /// new slot time from its next tick.
    pub fn set_station_config(&mut self, station: StationId, config: StationConfig) {
        if let Some(st) = self.stations.get_mut(station.0) {
            st.config = config;
        }
    }

    /// `station`'s KISS parameters.
    pub fn station_config(&self, station: StationId) -> Option<&StationConfig> {
        self.stations.get(station.0).map(|s| &s.config)
    }

    /// Sets when `station`'s p-persistence draws fall
    /// ([`SlotClock::FreeRunning`] unless set). A slot already scheduled
    /// keeps its time.
    pub fn set_slot_clock(&mut self, station: StationId, clock: SlotClock) {
        if let Some(st) = self.stations.get_mut(station.0) {
            st.slot_clock = clock;
        }
    }

    /// Sets KISS FULLDUP for `station`: with `true` it keys up as soon as
    /// it has a frame, ignoring carrier and persistence (KISS spec,
    /// command 5). Its radio stays half duplex on a half-duplex channel:
    /// it is deaf while it transmits and its frames collide as any other.
    pub fn set_full_duplex(&mut self, station: StationId, full_duplex: bool, now: Instant) {
        if let Some(st) = self.stations.get_mut(station.0) {
            st.full_duplex = full_duplex;
            self.begin_access(station.0, now);
        }
    }

    /// Judges frames from `transmitter` at `receiver` with their own error
    /// process (`errors`, drawing from `stream`) in place of the
    /// receiver's: a bad path between two stations of an otherwise good
    /// channel.
    pub fn set_link_errors(
        &mut self,
        receiver: StationId,
        transmitter: StationId,
        errors: ErrorModel,
        stream: Stream,
    ) {
        if let Some(st) = self.stations.get_mut(receiver.0) {
            st.link_rx.retain(|(t, _)| *t != transmitter.0);
            st.link_rx
                .push((transmitter.0, ErrorProcess::new(errors, stream)));
        }
    }

    /// `station`'s own counters.
    pub fn station_stats(&self, station: StationId) -> Option<&StationStats> {
        self.stations.get(station.0).map(|s| &s.stats)
    }

    /// The channel's parameters.
    pub fn config(&self) -> &RadioConfig {
        &self.config
    }

    /// Statistics so far.
    pub fn stats(&self) -> &RadioStats {
        &self.stats
    }

    /// Frames waiting at `station`, not counting one on the air.
    pub fn queued(&self, station: StationId) -> usize {
        self.stations.get(station.0).map_or(0, |s| s.queue.len())
    }

    /// Whether `station`'s transmitter is keyed.
    pub fn is_keyed(&self, station: StationId) -> bool {
        self.stations
            .get(station.0)
            .is_some_and(|s| s.state != TxState::Idle)
    }

    fn schedule(&mut self, at: Instant, timer: Timer) {
        self.seq += 1;
        self.timers.push(Reverse((at, self.seq, timer)));
    }

    /// The first tick of station `i`'s slot clock at or after `now`.
    fn next_tick(&self, i: usize, now: Instant) -> Instant {
        let c = &self.stations[i].config;
        let slot = c.slot_time.as_micros().max(1);
        let phase = c.slot_phase.as_micros() % slot;
        let t = u128::from(now.as_micros());
        let k = (t + slot - 1).saturating_sub(phase) / slot;
        let mut tick = k * slot + phase;
        if tick < t {
            tick += slot;
        }
        Instant::from_micros(u64::try_from(tick).unwrap_or(u64::MAX))
    }

    /// Station `i` has frames and is idle: start channel access.
    fn begin_access(&mut self, i: usize, now: Instant) {
        let st = &mut self.stations[i];
        if st.state != TxState::Idle || st.queue.is_empty() {
            return;
        }
        if st.waiting_since.is_none() {
            st.waiting_since = Some(now);
        }
        match (self.config.duplex, st.full_duplex) {
            (Duplex::Full, _) | (Duplex::Half, true) => self.key_up(i, now),
            (Duplex::Half, false) => {
                if st.tick_pending {
                    // The slot looks at the carrier when it ends.
                } else if st.carrier {
                    st.carrier_wait_since.get_or_insert(now);
                } else {
                    st.tick_pending = true;
                    let slot = match st.slot_clock {
                        SlotClock::FreeRunning => self.next_tick(i, now),
                        SlotClock::AfterClear { carrier_poll } => {
                            let seen = st
                                .carrier_wait_since
                                .map_or(now, |since| next_look(since, carrier_poll, now));
                            seen + st.config.slot_time
                        }
                    };
                    self.stations[i].carrier_wait_since = None;
                    self.schedule(slot, Timer::Slot(i));
                }
            }
        }
    }

    fn on_slot(&mut self, i: usize, now: Instant) {
        let st = &mut self.stations[i];
        st.tick_pending = false;
        if st.state != TxState::Idle || st.queue.is_empty() {
            return;
        }
        if st.carrier {
            // Access resumes when it drops (see `on_carrier_edge`).
            st.carrier_wait_since = Some(now);
            return;
        }
        let r = st.csma.below(256);
        if r <= u64::from(st.config.persistence) {
            self.key_up(i, now);
        } else {
            st.tick_pending = true;
            let next = now + st.config.slot_time.max(Duration::from_micros(1));
            self.schedule(next, Timer::Slot(i));
        }
    }

    fn key_up(&mut self, i: usize, now: Instant) {
        if self.config.duplex == Duplex::Half && self.keyed_now > 0 {
            self.stats.collisions += 1;
        }
        self.keyed_now += 1;
        self.stats.busy.set(now, 1.0);
        self.stats.transmissions += 1;
        let st = &mut self.stations[i];
        st.stats.transmissions += 1;
        st.state = TxState::KeyUp;
        st.carrier_wait_since = None;
        if let Some(since) = st.waiting_since.take() {
            self.stats.access_delay.add((now - since).as_secs_f64());
        }
        let txdelay = st.config.txdelay;
        self.keyings.push(Keying {
            station: i,
            keyed: now,
            unkeyed: None,
        });
        self.events.push_back(MediumEvent::TransmitterKeyed {
            station: StationId(i),
            at: now,
        });
        self.update_hint(i, now);
        self.schedule_carrier_edges(i, now);
        self.schedule(now + txdelay, Timer::DataStart(i));
    }

    fn schedule_carrier_edges(&mut self, transmitter: usize, now: Instant) {
        if self.config.duplex == Duplex::Full {
            return;
        }
        let at = now + self.config.dcd_delay;
        for r in 0..self.stations.len() {
            if r != transmitter && self.hears[r][transmitter] {
                self.schedule(at, Timer::CarrierEdge(r));
            }
        }
    }

    /// Whether station `i`'s DCD shows carrier at `now`.
    fn senses_carrier(&self, i: usize, now: Instant) -> bool {
        let d = self.config.dcd_delay;
        self.keyings.iter().any(|k| {
            k.station != i
                && self.hears[i][k.station]
                && k.keyed + d <= now
                && k.unkeyed.is_none_or(|u| u + d > now)
        })
    }

    fn on_carrier_edge(&mut self, i: usize, now: Instant) {
        let carrier = self.senses_carrier(i, now);
        self.stations[i].carrier = carrier;
        self.update_hint(i, now);
        if !carrier {
            self.begin_access(i, now);
        }
    }

    fn update_hint(&mut self, i: usize, now: Instant) {
        if self.config.duplex == Duplex::Full {
            return;
        }
        let st = &mut self.stations[i];
        let busy = st.carrier || st.state != TxState::Idle;
        if busy != st.hint {
            st.hint = busy;
            self.events.push_back(MediumEvent::ChannelBusy {
                station: StationId(i),
                busy,
                at: now,
            });
        }
    }

    fn on_data_start(&mut self, i: usize, now: Instant) {
        let st = &mut self.stations[i];
        st.state = TxState::Sending;
        st.data_start = now;
        st.bits_sent = FLAG_BITS;
        self.events.push_back(MediumEvent::TransmissionStarted {
            station: StationId(i),
            at: now,
        });
        self.next_frame(i, now);
    }

    /// Puts the next queued frame on the air, or starts the tail.
    fn next_frame(&mut self, i: usize, now: Instant) {
        let rate = self.config.bit_rate;
        let st = &mut self.stations[i];
        match st.queue.pop_front() {
            Some((body, queued)) => {
                st.stats.queue_delay.add((now - queued).as_secs_f64());
                // The frame occupies the air from the end of the previous
                // one (or the opening flag) to the end of its closing flag.
                let bits = hdlc_bits(&body);
                st.bits_sent += bits;
                let end = st.data_start + bits_duration(st.bits_sent, rate);
                st.frame = Some(CurrentFrame {
                    body,
                    bits,
                    start: now,
                    end,
                });
                self.schedule(end, Timer::FrameEnd(i));
            }
            None => {
                st.state = TxState::Tail;
                let tail = st.config.txtail;
                self.schedule(now + tail, Timer::Unkey(i));
            }
        }
    }

    fn on_frame_end(&mut self, i: usize, now: Instant) {
        let Some(frame) = self.stations[i].frame.take() else {
            return;
        };
        self.stats.frames_sent += 1;
        let sender = &mut self.stations[i].stats;
        sender.frames_sent += 1;
        sender.octets_sent += frame.body.len() as u64;
        self.events.push_back(MediumEvent::FrameSent {
            station: StationId(i),
            octets: frame.body.len(),
            at: now,
        });
        for r in 0..self.stations.len() {
            if r == i || !self.hears[r][i] {
                continue;
            }
            let outcome = self.judge(i, r, &frame);
            let own = &mut self.stations[r].stats;
            match outcome {
                Outcome::Intact => {
                    self.stats.received_intact += 1;
                    own.received_intact += 1;
                }
                Outcome::BitErrors => {
                    self.stats.lost_to_errors += 1;
                    own.lost_to_errors += 1;
                }
                Outcome::Collision => {
                    self.stats.lost_to_collisions += 1;
                    own.lost_to_collisions += 1;
                }
                Outcome::ReceiverKeyed => {
                    self.stats.lost_receiver_keyed += 1;
                    own.lost_receiver_keyed += 1;
                }
            }
            self.deliveries.push_back(Delivery {
                at: now,
                from: StationId(i),
                to: StationId(r),
                frame: frame.body.clone(),
                outcome,
            });
        }
        self.next_frame(i, now);
        self.prune_keyings(now);
    }

    fn judge(&mut self, from: usize, to: usize, frame: &CurrentFrame) -> Outcome {
        let (a, b) = (frame.start, frame.end);
        if self.config.duplex == Duplex::Half {
            if self
                .keyings
                .iter()
                .any(|k| k.station == to && k.overlaps(a, b))
            {
                return Outcome::ReceiverKeyed;
            }
            if self.keyings.iter().any(|k| {
                k.station != from
                    && k.station != to
                    && self.hears[to][k.station]
                    && k.overlaps(a, b)
            }) {
                return Outcome::Collision;
            }
        }
        let rate = self.config.bit_rate;
        let receiver = &mut self.stations[to];
        let process = match receiver.link_rx.iter_mut().find(|(t, _)| *t == from) {
            Some((_, link)) => link,
            None => &mut receiver.rx,
        };
        if process.frame_survives(a, b, frame.bits, rate) {
            Outcome::Intact
        } else {
            Outcome::BitErrors
        }
    }

    /// Forgets keyings that can no longer matter: ended before every frame
    /// still on the air began, and before every DCD edge still to come.
    fn prune_keyings(&mut self, now: Instant) {
        let oldest_frame = self
            .stations
            .iter()
            .filter_map(|s| s.frame.as_ref().map(|f| f.start))
            .min()
            .unwrap_or(now);
        let d = self.config.dcd_delay;
        self.keyings
            .retain(|k| k.unkeyed.is_none_or(|u| u > oldest_frame || u + d >= now));
    }

    fn on_unkey(&mut self, i: usize, now: Instant) {
        self.stations[i].state = TxState::Idle;
        self.keyed_now = self.keyed_now.saturating_sub(1);
        if self.keyed_now == 0 {
            self.stats.busy.set(now, 0.0);
        }
        if let Some(k) = self
            .keyings
            .iter_mut()
            .rev()
            .find(|k| k.station == i && k.unkeyed.is_none())
        {
            k.unkeyed = Some(now);
        }
        self.events.push_back(MediumEvent::TransmissionEnded {
            station: StationId(i),
            at: now,
        });
        self.update_hint(i, now);
        self.schedule_carrier_edges(i, now);
        self.begin_access(i, now);
    }
}

/// The first of the looks at `since + k·poll` (k ≥ 0) at or after `at`;
/// `at` itself for a zero `poll`.
fn next_look(since: Instant, poll: Duration, at: Instant) -> Instant {
    let poll = poll.as_micros();
    if poll == 0 {
        return at;
    }
    let waited = (at - since).as_micros();
    let looks = u64::try_from(waited.div_ceil(poll) * poll).unwrap_or(u64::MAX);
    since + Duration::from_micros(looks)
}

impl Medium for RadioChannel {
    fn stations(&self) -> usize {
        self.stations.len()
    }

    fn transmit(&mut self, now: Instant, from: StationId, frame: Vec<u8>) {
        let Some(st) = self.stations.get_mut(from.0) else {
            return;
        };
        st.queue.push_back((frame, now));
        self.begin_access(from.0, now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        while let Some(&Reverse((at, _, timer))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            match timer {
                Timer::Slot(i) => self.on_slot(i, at),
                Timer::CarrierEdge(i) => self.on_carrier_edge(i, at),
                Timer::DataStart(i) => self.on_data_start(i, at),
                Timer::FrameEnd(i) => self.on_frame_end(i, at),
                Timer::Unkey(i) => self.on_unkey(i, at),
            }
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timers.peek().map(|Reverse((at, _, _))| *at)
    }

    fn poll_delivery(&mut self) -> Option<Delivery> {
        self.deliveries.pop_front()
    }

    fn poll_event(&mut self) -> Option<MediumEvent> {
        self.events.pop_front()
    }
}
