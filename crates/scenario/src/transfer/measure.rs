//! What a transfer counts and times, kept apart from the loop that moves
//! its frames ([`super::testbed`]): the loop reports what happened on the
//! channel and at the sender, [`Measurement`] keeps the account, and
//! [`Measurement::outcome`] turns it into a [`TransferOutcome`] (the span
//! of the paper's `T_message`, see the [module documentation](super)).

use core::time::Duration;

use linklab_channel::RadioStats;
use linklab_core::Instant;

use super::config::Clock;
use super::{RECEIVER, SENDER};

/// A transmission whose end is waited for: the one that brought the
/// sender the last acknowledgement, or the final UA (the receiver's, or
/// the digipeater's repeating it).
#[derive(Debug, Clone, Copy, Default)]
struct Awaited {
    /// Its tag: the transmitting station and its key-up count then.
    tag: Option<Tag>,
    /// When it ended.
    end: Option<Instant>,
}

/// A transmission: its station (the top octet) and that station's key-up
/// count when it was keyed; what [`super::HostAndTnc`] carries beside
/// each frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Tag(pub(super) u64);

impl Tag {
    pub(super) fn new(station: usize, count: u64) -> Tag {
        Tag(((station as u64) << 56) | (count & ((1 << 56) - 1)))
    }

    fn station(self) -> usize {
        (self.0 >> 56) as usize
    }

    fn count(self) -> u64 {
        self.0 & ((1 << 56) - 1)
    }
}

impl Awaited {
    /// The frame just handed over came in transmission `tag`, which may
    /// already have ended (`unkeys`: each station's unkey times by count).
    fn mark(&mut self, tag: Tag, unkeys: &[Vec<Instant>]) {
        if self.tag.is_none() {
            self.tag = Some(tag);
            self.end = usize::try_from(tag.count())
                .ok()
                .and_then(|t| t.checked_sub(1))
                .and_then(|t| unkeys.get(tag.station())?.get(t).copied());
        }
    }

    /// Transmission `tag` ended at `at`.
    fn unkeyed(&mut self, tag: Tag, at: Instant) {
        if self.end.is_none() && self.tag == Some(tag) {
            self.end = Some(at);
        }
    }
}

/// The account of one transfer: every key-up and unkey, every frame sent,
/// the sender's waits for acknowledgements and its T1 expiries, and the
/// transmissions that end the span.
#[derive(Debug, Default)]
pub(super) struct Measurement {
    /// Key-ups so far of the two ends and the digipeater (the tag of each
    /// one's current transmission).
    keyups: [u64; 3],
    /// Unkey times of the two ends and the digipeater, by key-up count.
    unkeys: [Vec<Instant>; 3],
    /// What the digipeater repeated and lost.
    relayed: Relayed,
    /// When the message was offered: the measurement starts.
    offered: Option<Instant>,
    /// The transmission that carried the last acknowledgement.
    final_ack: Awaited,
    /// The transmission that carried the UA answering the sender's DISC.
    final_ua: Awaited,
    /// The first key-up of the run (the SABM's).
    first_keyup: Option<Instant>,
    /// Key-up and unkey times of every transmission after the offer.
    keyings: Vec<(usize, Instant, Option<Instant>)>,
    /// Each frame put on the air after the offer: its station, when.
    frames_sent: Vec<(usize, Instant)>,
    /// When the sender's T1 (as Linux runs it) last started.
    t1_started: Option<Instant>,
    /// Each wait from T1's start to the acknowledgement of new frames.
    ack_waits: Vec<Duration>,
    /// T1 expiries at the sender.
    t1_expiries: u64,
    /// The sender's engine handled a timeout with frames outstanding.
    t1_pending: bool,
}

impl Measurement {
    /// The message was offered at `at`.
    pub(super) fn offer(&mut self, at: Instant) {
        self.offered = Some(at);
    }

    /// Whether the message has been offered.
    pub(super) fn is_offered(&self) -> bool {
        self.offered.is_some()
    }

    /// The transmission of `station` on the air now (or its last one).
    pub(super) fn current_transmission(&self, station: usize) -> Tag {
        Tag::new(station, self.keyups.get(station).copied().unwrap_or(0))
    }

    /// The sender's engine handled a timeout with frames outstanding: a
    /// timer that makes it transmit then is T1 (it receives no I frames,
    /// so neither T2 nor, with frames outstanding, T3 runs there).
    pub(super) fn sender_timer_fired(&mut self) {
        if self.is_offered() {
            self.t1_pending = true;
        }
    }

    /// Everything due at one instant has been handled.
    pub(super) fn settled(&mut self) {
        self.t1_pending = false;
    }

    /// The sender's engine emitted a frame at `now`: after a T1 timeout it
    /// is the expiry's poll or retransmission; with nothing outstanding
    /// before, T1 starts.
    pub(super) fn sender_emitted(&mut self, now: Instant) {
        if std::mem::take(&mut self.t1_pending) {
            self.t1_expiries += 1;
        }
        if self.is_offered() && self.t1_started.is_none() {
            self.t1_started = Some(now);
        }
    }

    /// A frame reached the sender at `now`, and its engine then had
    /// `after` frames unacknowledged of `before`: an acknowledgement of
    /// new frames ends the wait T1 timed, and with frames still
    /// outstanding T1 starts again (Linux `ax25_frames_acked`).
    pub(super) fn sender_acknowledged(&mut self, now: Instant, before: usize, after: usize) {
        if after < before {
            if let Some(started) = self.t1_started.take() {
                self.ack_waits.push(now - started);
            }
            if after > 0 {
                self.t1_started = Some(now);
            }
        }
    }

    /// Transmission `tag` brought the sender its last acknowledgement.
    pub(super) fn final_ack_in(&mut self, tag: Tag) {
        self.final_ack.mark(tag, &self.unkeys);
    }

    /// Transmission `tag` brought the sender the UA answering its DISC.
    pub(super) fn final_ua_in(&mut self, tag: Tag) {
        self.final_ua.mark(tag, &self.unkeys);
    }

    /// Whether the transmission with the last acknowledgement has ended.
    pub(super) fn final_ack_ended(&self) -> bool {
        self.final_ack.end.is_some()
    }

    /// Whether the transmission with the final UA has ended.
    pub(super) fn final_ua_ended(&self) -> bool {
        self.final_ua.end.is_some()
    }

    /// `station` keyed up at `at`.
    pub(super) fn keyed(&mut self, station: usize, at: Instant) {
        self.first_keyup.get_or_insert(at);
        if let Some(n) = self.keyups.get_mut(station) {
            *n += 1;
        }
        if self.is_offered() && station <= RECEIVER {
            self.keyings.push((station, at, None));
        }
    }

    /// `station` put a frame on the air, its last bit at `at`.
    pub(super) fn frame_sent(&mut self, station: usize, at: Instant) {
        if self.is_offered() {
            self.frames_sent.push((station, at));
        }
    }

    /// `station`'s transmission ended at `at`.
    pub(super) fn unkeyed(&mut self, station: usize, at: Instant) {
        if let Some(k) = self
            .keyings
            .iter_mut()
            .rev()
            .find(|(s, _, end)| *s == station && end.is_none())
        {
            k.2 = Some(at);
        }
        if let Some(unkeys) = self.unkeys.get_mut(station) {
            unkeys.push(at);
            let tag = Tag::new(station, unkeys.len() as u64);
            self.final_ack.unkeyed(tag, at);
            self.final_ua.unkeyed(tag, at);
        }
    }

    /// The digipeater repeated a frame.
    pub(super) fn repeated(&mut self) {
        self.relayed.repeated += 1;
    }

    /// A frame reached the digipeater damaged.
    pub(super) fn lost_at_digipeater(&mut self) {
        self.relayed.lost += 1;
    }

    /// What the transfer measured, its span as `clock` says; `digipeater`:
    /// whether there was one, `radio`: the channel's counters. `Err`
    /// names the phase whose end was never seen (`"transfer"` or
    /// `"release"`).
    pub(super) fn outcome(
        &self,
        clock: Clock,
        digipeater: bool,
        radio: RadioStats,
    ) -> Result<TransferOutcome, &'static str> {
        let (Some(start), Some(end)) = (self.offered, self.final_ack.end) else {
            return Err("transfer");
        };
        let span = match clock {
            Clock::Offer => Some((start, end)),
            Clock::Session => self.first_keyup.zip(self.final_ua.end),
        };
        let Some((clock_start, clock_end)) = span else {
            return Err("release");
        };
        let in_span: Vec<_> = self.keyings.iter().filter(|(_, k, _)| *k < end).collect();
        let keyed = in_span
            .iter()
            .map(|(_, k, u)| u.unwrap_or(end).min(end) - *k)
            .sum();
        let frames = |station| {
            self.frames_sent
                .iter()
                .filter(|(s, at)| *s == station && *at <= end)
                .count() as u64
        };
        let waits = &self.ack_waits;
        let ack_wait = match u32::try_from(waits.len()) {
            Ok(n) if n > 0 => waits.iter().sum::<Duration>() / n,
            _ => Duration::ZERO,
        };
        Ok(TransferOutcome {
            transfer: clock_end - clock_start,
            transmissions: in_span.len() as u64,
            keyed,
            sender_frames: frames(SENDER),
            receiver_frames: frames(RECEIVER),
            ack_wait,
            ack_wait_max: waits.iter().copied().max().unwrap_or_default(),
            t1_expiries: self.t1_expiries,
            digipeater: digipeater.then_some(self.relayed),
            radio,
        })
    }
}

/// What one transfer measured.
#[derive(Debug, Clone, PartialEq)]
pub struct TransferOutcome {
    /// The paper's `T_message`: message offered to end of the last
    /// acknowledgement's TXTAIL (see the [module documentation](super)).
    pub transfer: Duration,
    /// Key-ups in that span (data transmissions plus acknowledgements).
    pub transmissions: u64,
    /// Total time a transmitter was keyed in that span.
    pub keyed: Duration,
    /// Frames the sender put on the air in the span (I frames only when
    /// nothing was lost).
    pub sender_frames: u64,
    /// Frames the receiver put on the air in the span (its RRs).
    pub receiver_frames: u64,
    /// Mean wait for an acknowledgement as the sender's T1 sees it (Linux
    /// `ax25_kick` and `ax25_frames_acked`): from T1's start (an I frame
    /// sent with nothing outstanding, or an acknowledgement that left
    /// frames outstanding) to the next acknowledgement of new frames.
    pub ack_wait: Duration,
    /// The longest such wait.
    pub ack_wait_max: Duration,
    /// T1 expiries at the sender (polls or retransmissions it caused).
    pub t1_expiries: u64,
    /// What the digipeater did over the whole run, when there is one.
    pub digipeater: Option<Relayed>,
    /// The channel's counters over the whole run, connection included.
    pub radio: RadioStats,
}

impl TransferOutcome {
    /// Mean wait per transmission in the span: idle time over key-ups
    /// (the model's `p T_slot`; with a TNC it includes the host and TNC
    /// turnaround).
    pub fn mean_access_wait(&self) -> Duration {
        let idle = self.transfer.saturating_sub(self.keyed);
        match u32::try_from(self.transmissions) {
            Ok(n) if n > 0 => idle / n,
            _ => Duration::ZERO,
        }
    }
}

/// A digipeater's frames over a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Relayed {
    /// Frames it repeated.
    pub repeated: u64,
    /// Frames that reached it damaged (collisions, bit errors, or its own
    /// transmitter keyed), so were not repeated.
    pub lost: u64,
}
