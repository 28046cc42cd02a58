//! NORM-CC building blocks (RFC 5740 section 5.5): the TCP-friendly rate
//! equation and the receiver's loss event fraction, both from TFRC
//! (RFC 5348 sections 3.1 and 5).

use core::time::Duration;
use linklab_core::Instant;

/// The TCP throughput equation (RFC 5348 section 3.1, as RFC 5740 section
/// 5.5.2 uses it): octets per second for segment size `s` octets, round
/// trip `rtt` seconds and loss event fraction `p`, with b = 1 and
/// t_RTO = 4·RTT.
pub fn tfrc_rate(s: f64, rtt: f64, p: f64) -> f64 {
    let rtt = rtt.max(1e-6);
    if p <= 0.0 {
        return f64::INFINITY;
    }
    let denom = rtt * (2.0 * p / 3.0).sqrt()
        + 4.0 * rtt * (3.0 * (3.0 * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p);
    s / denom
}

/// Weights of the loss-interval history (RFC 5348 section 5.4).
const WEIGHTS: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];

/// A receiver's loss event fraction from one sender's message sequence
/// numbers (RFC 5740 section 5.5.2; RFC 5348 section 5): losses closer
/// together than one RTT are one loss event; the fraction is the inverse
/// of the weighted mean of the last eight loss intervals.
#[derive(Debug, Clone, Default)]
pub struct LossEstimator {
    next_sequence: Option<u16>,
    current: u32,
    history: Vec<u32>,
    last_event: Option<Instant>,
}

impl LossEstimator {
    /// Accounts for message `sequence` received at `now`, with `rtt` the
    /// receiver's current RTT estimate.
    pub fn on_message(&mut self, now: Instant, sequence: u16, rtt: Duration) {
        if let Some(expected) = self.next_sequence {
            let gap = sequence.wrapping_sub(expected);
            if gap >= 0x8000 {
                return; // late or duplicated: not a new message
            }
            if gap > 0 {
                let new_event = self.last_event.is_none_or(|t| now - t > rtt);
                if new_event {
                    self.history.insert(0, self.current);
                    self.history.truncate(WEIGHTS.len());
                    self.current = 0;
                    self.last_event = Some(now);
                }
            }
        }
        self.current = self.current.saturating_add(1);
        self.next_sequence = Some(sequence.wrapping_add(1));
    }

    /// Whether any loss event has been seen.
    pub fn has_loss(&self) -> bool {
        !self.history.is_empty()
    }

    /// The loss event fraction p (0 before the first loss).
    pub fn loss_fraction(&self) -> f64 {
        if self.history.is_empty() {
            return 0.0;
        }
        let mean = |intervals: &[u32]| {
            let (sum, w) = intervals
                .iter()
                .zip(WEIGHTS)
                .fold((0.0, 0.0), |(s, ws), (&i, w)| {
                    (s + w * f64::from(i), ws + w)
                });
            sum / w
        };
        let with_current: Vec<u32> = core::iter::once(self.current)
            .chain(self.history.iter().copied())
            .take(WEIGHTS.len())
            .collect();
        let closed = mean(&self.history);
        let open = mean(&with_current);
        1.0 / closed.max(open).max(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_equation_falls_with_loss_and_rtt() {
        let r1 = tfrc_rate(1000.0, 0.1, 0.01);
        // About 1.2 s / (rtt · sqrt(p)) for small p: ~109 kB/s.
        assert!((90_000.0..130_000.0).contains(&r1), "{r1}");
        assert!(tfrc_rate(1000.0, 0.2, 0.01) < r1);
        assert!(tfrc_rate(1000.0, 0.1, 0.1) < r1);
        assert!(tfrc_rate(1000.0, 0.1, 0.0).is_infinite());
    }

    #[test]
    fn one_loss_in_a_hundred_gives_one_percent() {
        let mut e = LossEstimator::default();
        let rtt = Duration::from_millis(100);
        let mut seq = 0u16;
        let mut t = 0;
        for _ in 0..20 {
            for _ in 0..99 {
                e.on_message(Instant::from_micros(t), seq, rtt);
                seq = seq.wrapping_add(1);
                t += 10_000;
            }
            seq = seq.wrapping_add(1); // one lost
        }
        let p = e.loss_fraction();
        assert!((0.0095..0.0105).contains(&p), "{p}");
        // A late duplicate changes nothing.
        e.on_message(Instant::from_micros(t), seq.wrapping_sub(5), rtt);
        assert_eq!(e.loss_fraction(), p);
    }
}
