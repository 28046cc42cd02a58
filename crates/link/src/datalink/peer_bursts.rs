//! The peer's send window as its transmissions show it, for
//! [`AckPolicy::WindowOrT2`](crate::AckPolicy::WindowOrT2).
//!
//! A station that never sets P on an I frame (Dire Wolf's engine, the
//! SDL's default) sends up to its window and then waits for an
//! acknowledgement. Dire Wolf's receiver answers once the sender's
//! carrier drops; a KISS port does not say when that is, so this policy
//! answers a full window at once and otherwise T2 after the last frame.
//! But the window that fills is the sender's, and nothing tells the
//! receiver its size: XID notifies only what each end receives (AX.25
//! v2.2 6.3.2), and a modulo-8 v2.0 link has no XID. Our own k is only an
//! upper bound (7 against Dire Wolf's MAXFRAME 4 at modulo 8), so every
//! window of such a peer waited T2: 0.35 s of each 1.1 s window at 9600
//! bit/s, 11% of a transfer from Dire Wolf's engine.
//!
//! Learnt here instead from what the peer sent: a burst is a run of
//! in-sequence I frames each heard within its own air time (and a
//! quarter more for the TNC's timing) of the one before; a peer that has
//! heard our answer and sends again also waits for both turnarounds
//! (TXDELAY at each end). Without the port's bit rate, a silence longer
//! than T2 ends a burst. Once a
//! burst has ended, a later one that reaches as many frames as the
//! longest so far has filled the peer's window and is answered at once.
//! A peer whose window is larger than it has shown gets one answer early
//! (an RR for part of its burst; the rest is acknowledged T2 after the
//! burst, as before) and its longer burst is learnt.

use core::time::Duration;

use linklab_core::Instant;

/// The bursts of in-sequence I frames heard from the peer.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct PeerBursts {
    /// In-sequence I frames of the burst being heard.
    frames: u8,
    /// When the last of them arrived.
    last: Option<Instant>,
    /// The most frames a burst that has ended carried: the peer's window
    /// as far as it has shown it (0 until a burst has ended).
    most: u8,
}

impl PeerBursts {
    /// An in-sequence I frame arrived at `now`; a silence longer than
    /// `gap` before it ended the burst before ([`same_transmission`]).
    /// True if this burst now holds as many frames as the longest one:
    /// the peer's window is full and nothing more will come before it
    /// hears from us.
    pub(super) fn in_sequence_frame(&mut self, now: Instant, gap: Duration) -> bool {
        if self.last.is_some_and(|last| now - last > gap) {
            self.most = self.most.max(self.frames);
            self.frames = 0;
        }
        self.frames = self.frames.saturating_add(1);
        self.last = Some(now);
        self.frames == self.most
    }
}

/// The transmissions of the peer that frames come in, told apart as
/// [`PeerBursts`] tells bursts (a frame heard within its own air time and
/// a quarter of the one before belongs to the same transmission); known
/// only with the port's bit rate. A half-duplex peer composed every frame
/// of one transmission before it could hear anything we sent after the
/// transmission began.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct PeerTransmissions {
    count: u32,
    last: Option<Instant>,
}

impl PeerTransmissions {
    /// A frame carrying `len` octets of information arrived at `now`: the
    /// number of the transmission it came in, or `None` without the bit
    /// rate (then no two frames are known to share one).
    pub(super) fn heard(&mut self, now: Instant, bit_rate: Option<u32>, len: usize) -> Option<u32> {
        let rate = bit_rate?;
        let gap = same_transmission(Some(rate), Duration::ZERO, len);
        if self.last.is_none_or(|last| now - last > gap) {
            self.count = self.count.wrapping_add(1);
        }
        self.last = Some(now);
        Some(self.count)
    }
}

/// The longest time between the arrivals of two I frames of one
/// transmission of the peer, the second carrying `len` octets of
/// information: its air time at `bit_rate` (address, control and PID 21
/// octets more) and a quarter more; `t2` when the bit rate is not known.
pub(super) fn same_transmission(bit_rate: Option<u32>, t2: Duration, len: usize) -> Duration {
    match bit_rate {
        Some(rate) => crate::air::frame_air_time(rate, len + 21) * 5 / 4,
        None => t2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T2: Duration = Duration::from_millis(350);

    fn at(ms: u64) -> Instant {
        Instant::from_micros(ms * 1000)
    }

    /// Frames `0..n` of a burst starting at `start` ms, 230 ms apart
    /// (256-octet frames at 9600 bit/s): which of them filled the window.
    fn burst(b: &mut PeerBursts, start: u64, n: u64) -> Vec<u64> {
        (0..n)
            .filter(|i| b.in_sequence_frame(at(start + i * 230), T2))
            .collect()
    }

    #[test]
    fn the_first_burst_is_learnt_and_later_ones_answered_at_its_length() {
        let mut b = PeerBursts::default();
        assert_eq!(burst(&mut b, 0, 4), Vec::<u64>::new());
        assert_eq!(b.most, 0, "not known until the burst has ended");
        assert_eq!(burst(&mut b, 2000, 4), vec![3]);
        assert_eq!(b.most, 4);
        assert_eq!(burst(&mut b, 4000, 4), vec![3]);
    }

    #[test]
    fn a_longer_burst_answered_early_once_is_learnt() {
        let mut b = PeerBursts::default();
        burst(&mut b, 0, 4);
        assert_eq!(burst(&mut b, 2000, 7), vec![3], "one early answer");
        assert_eq!(burst(&mut b, 5000, 7), vec![6]);
        assert_eq!(b.most, 7);
    }

    #[test]
    fn a_shorter_burst_is_not_answered_early_and_does_not_shrink_the_window() {
        let mut b = PeerBursts::default();
        burst(&mut b, 0, 4);
        assert_eq!(burst(&mut b, 2000, 2), Vec::<u64>::new());
        assert_eq!(burst(&mut b, 4000, 4), vec![3]);
        assert_eq!(b.most, 4);
    }

    #[test]
    fn a_frame_s_air_time_and_a_quarter_is_one_transmission() {
        // 256 octets at 9600 bit/s: 0.237 s on the air; 40 octets 0.056 s.
        let gap = |len| same_transmission(Some(9600), T2, len).as_millis();
        assert_eq!(gap(256), 296);
        assert_eq!(gap(40), 67);
        assert_eq!(same_transmission(None, T2, 256), T2);
    }

    #[test]
    fn frames_back_to_back_are_one_transmission_and_a_silence_starts_the_next() {
        let mut t = PeerTransmissions::default();
        // S frames at 1200 bit/s: 0.128 s on the air, 0.16 s allowed.
        let first = t.heard(at(1000), Some(1200), 0);
        assert_eq!(t.heard(at(1125), Some(1200), 0), first);
        assert_eq!(t.heard(at(1250), Some(1200), 0), first);
        let next = t.heard(at(1500), Some(1200), 0);
        assert_ne!(next, first);
        assert!(first.is_some() && next.is_some());
        assert_eq!(t.heard(at(1501), None, 0), None, "no bit rate, no claim");
    }

    #[test]
    fn frames_within_t2_of_each_other_are_one_burst() {
        let mut b = PeerBursts::default();
        burst(&mut b, 0, 3);
        // 350 ms after the last: still the same burst (more than T2 ends it).
        assert!(!b.in_sequence_frame(at(460 + 350), T2));
        assert!(!b.in_sequence_frame(at(3000), T2));
        assert_eq!(b.most, 4);
    }
}
