//! A seeded, impaired one-way channel for the units two sans-IO engines
//! exchange, in the manner of smoltcp's `phy::FaultInjector`: each unit
//! sent may be lost, duplicated, corrupted or held back (and so overtaken
//! by later units), and losses may come in bursts from a Gilbert-Elliott
//! two-state channel (E. N. Gilbert, "Capacity of a burst-noise channel",
//! BSTJ 39, 1960; E. O. Elliott, "Estimates of error rates for codes on
//! burst-noise channels", BSTJ 42, 1963).
//!
//! Every draw comes from one [`Stream`] seeded at construction, in a fixed
//! order per unit, so the same seed and the same traffic give the same
//! fates on every platform.

use linklab_core::{Duration, Instant, Stream};
use std::collections::BTreeMap;

/// Gilbert-Elliott bursts: a good and a bad state, each with its own loss
/// probability; before each unit the state turns bad with `to_bad` or good
/// again with `to_good`. The mean burst lasts `1 / to_good` units and the
/// long-run fraction of units sent in the bad state is
/// `to_bad / (to_bad + to_good)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GilbertElliott {
    /// Good to bad, per unit.
    pub to_bad: f64,
    /// Bad to good, per unit.
    pub to_good: f64,
    /// Loss probability in the good state.
    pub loss_good: f64,
    /// Loss probability in the bad state.
    pub loss_bad: f64,
}

impl GilbertElliott {
    /// The long-run loss probability: the two states' losses weighted by
    /// the stationary probabilities of the two-state Markov chain.
    pub fn mean_loss(&self) -> f64 {
        let bad = self.to_bad / (self.to_bad + self.to_good);
        (1.0 - bad) * self.loss_good + bad * self.loss_bad
    }
}

/// What a channel does to the units sent over it. The default is a
/// perfect channel without delay.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Impairment {
    /// Fixed one-way delay of every unit.
    pub delay: Duration,
    /// Probability that a unit is lost (independent losses; ignored when
    /// [`Impairment::burst`] is set).
    pub loss: f64,
    /// Losses from a Gilbert-Elliott channel instead of independent ones.
    pub burst: Option<GilbertElliott>,
    /// Probability that a unit that survives arrives twice.
    pub duplicate: f64,
    /// Probability that a copy arrives with one bit flipped (see
    /// [`Impaired::bytes`] and [`Impaired::with_corrupter`]).
    pub corrupt: f64,
    /// Probability that a copy is held back by an extra delay drawn
    /// uniformly from `[0, reorder_delay]`, so that later units may
    /// overtake it.
    pub reorder: f64,
    /// The longest extra delay of a held-back copy.
    pub reorder_delay: Duration,
}

impl Impairment {
    /// A perfect channel with one-way `delay`.
    pub fn delay(delay: Duration) -> Impairment {
        Impairment {
            delay,
            ..Impairment::default()
        }
    }

    /// Independent loss with probability `loss`, otherwise perfect.
    pub fn loss(loss: f64) -> Impairment {
        Impairment {
            loss,
            ..Impairment::default()
        }
    }
}

/// What happened to one unit sent, in the order sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fate {
    /// When it was sent.
    pub sent: Instant,
    /// When each copy arrives (none: lost; two: duplicated).
    pub arrivals: Vec<Instant>,
    /// Whether a copy was corrupted.
    pub corrupted: bool,
}

/// Counts of what the channel did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Units sent.
    pub sent: u64,
    /// Units lost.
    pub lost: u64,
    /// Units duplicated.
    pub duplicated: u64,
    /// Copies corrupted.
    pub corrupted: u64,
    /// Copies held back.
    pub reordered: u64,
}

/// Flips one bit, chosen uniformly, of `octets` (nothing if empty).
pub fn flip_one_bit(octets: &mut [u8], rng: &mut Stream) {
    if octets.is_empty() {
        return;
    }
    let bit = rng.below(octets.len() as u64 * 8);
    octets[(bit / 8) as usize] ^= 1 << (bit % 8);
}

/// One direction of a link: units go in with [`Impaired::send`] and come
/// out, at their arrival times and in arrival order (ties in sending
/// order), with [`Impaired::recv`].
#[derive(Debug, Clone)]
pub struct Impaired<T> {
    /// What the channel does; may be changed between units.
    pub impairment: Impairment,
    /// While set, nothing arrives: units stay in flight (a stalled
    /// direction); they arrive once it is cleared.
    pub hold: bool,
    /// While set, units sent are lost outright (a cut wire), without a
    /// random draw.
    pub cut: bool,
    /// The fate of every unit sent, in order.
    pub fates: Vec<Fate>,
    /// Totals.
    pub counts: Counts,
    rng: Stream,
    bad: bool,
    corrupter: Option<fn(&mut T, &mut Stream)>,
    /// (arrival, sequence) → unit.
    in_flight: BTreeMap<(Instant, u64), T>,
    seq: u64,
}

impl<T: Clone> Impaired<T> {
    /// A channel with `impairment`, its draws seeded by `seed`. Units of a
    /// type that cannot be corrupted this way need [`Impaired::with_corrupter`]
    /// before [`Impairment::corrupt`] is set.
    pub fn new(impairment: Impairment, seed: u64) -> Impaired<T> {
        Impaired {
            impairment,
            hold: false,
            cut: false,
            fates: Vec::new(),
            counts: Counts::default(),
            rng: Stream::from_seed(seed),
            bad: false,
            corrupter: None,
            in_flight: BTreeMap::new(),
            seq: 0,
        }
    }

    /// The same channel, corrupting units with `corrupter`.
    pub fn with_corrupter(mut self, corrupter: fn(&mut T, &mut Stream)) -> Impaired<T> {
        self.corrupter = Some(corrupter);
        self
    }

    /// Whether the next unit is lost: one draw for the independent model;
    /// for Gilbert-Elliott a state-change draw, then a loss draw.
    fn lose(&mut self) -> bool {
        match self.impairment.burst {
            None => self.rng.bernoulli(self.impairment.loss),
            Some(ge) => {
                let flip = if self.bad { ge.to_good } else { ge.to_bad };
                if self.rng.bernoulli(flip) {
                    self.bad = !self.bad;
                }
                let loss = if self.bad { ge.loss_bad } else { ge.loss_good };
                self.rng.bernoulli(loss)
            }
        }
    }

    /// Sends `unit` at `now`.
    ///
    /// # Panics
    /// If corruption is asked for without a corrupter.
    pub fn send(&mut self, now: Instant, unit: T) {
        self.counts.sent += 1;
        let mut fate = Fate {
            sent: now,
            arrivals: Vec::new(),
            corrupted: false,
        };
        if self.cut || self.lose() {
            self.counts.lost += 1;
            self.fates.push(fate);
            return;
        }
        let imp = self.impairment;
        let copies = if self.rng.bernoulli(imp.duplicate) {
            self.counts.duplicated += 1;
            2
        } else {
            1
        };
        for _ in 0..copies {
            let mut copy = unit.clone();
            if self.rng.bernoulli(imp.corrupt) {
                let corrupt = self
                    .corrupter
                    .expect("Impairment::corrupt needs Impaired::with_corrupter");
                corrupt(&mut copy, &mut self.rng);
                self.counts.corrupted += 1;
                fate.corrupted = true;
            }
            let mut at = now + imp.delay;
            if self.rng.bernoulli(imp.reorder) {
                self.counts.reordered += 1;
                let extra = self.rng.below(imp.reorder_delay.as_micros() as u64 + 1);
                at = at + Duration::from_micros(extra);
            }
            self.seq += 1;
            self.in_flight.insert((at, self.seq), copy);
            fate.arrivals.push(at);
        }
        self.fates.push(fate);
    }

    /// When the next unit arrives, unless the channel is held.
    pub fn next_arrival(&self) -> Option<Instant> {
        if self.hold {
            return None;
        }
        self.in_flight.keys().next().map(|&(at, _)| at)
    }

    /// The next unit that has arrived by `now`, if any (none while held).
    pub fn recv(&mut self, now: Instant) -> Option<T> {
        if self.next_arrival()? > now {
            return None;
        }
        self.in_flight.pop_first().map(|(_, unit)| unit)
    }

    /// Loses every unit in flight (a link torn down under them).
    pub fn drop_in_flight(&mut self) {
        self.counts.lost += self.in_flight.len() as u64;
        self.in_flight.clear();
    }

    /// Units in flight (held or not).
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }
}

impl Impaired<Vec<u8>> {
    /// A channel of octet strings, corrupted by [`flip_one_bit`].
    pub fn bytes(impairment: Impairment, seed: u64) -> Impaired<Vec<u8>> {
        Impaired::new(impairment, seed).with_corrupter(|octets, rng| flip_one_bit(octets, rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fates(imp: Impairment, seed: u64, n: u32) -> Vec<Fate> {
        let mut ch = Impaired::bytes(imp, seed);
        for i in 0..n {
            ch.send(Instant::from_micros(u64::from(i)), vec![i as u8; 4]);
        }
        ch.fates
    }

    #[test]
    fn same_seed_same_fates_other_seed_other_fates() {
        let imp = Impairment {
            loss: 0.2,
            duplicate: 0.1,
            corrupt: 0.1,
            reorder: 0.1,
            reorder_delay: Duration::from_millis(5),
            ..Impairment::default()
        };
        assert_eq!(fates(imp, 7, 500), fates(imp, 7, 500));
        assert_ne!(fates(imp, 7, 500), fates(imp, 8, 500));
    }

    #[test]
    fn perfect_channel_delivers_everything_in_order_after_the_delay() {
        let mut ch = Impaired::bytes(Impairment::delay(Duration::from_millis(3)), 1);
        for i in 0..10u8 {
            ch.send(Instant::ZERO, vec![i]);
        }
        assert_eq!(ch.next_arrival(), Some(Instant::from_micros(3000)));
        assert_eq!(ch.recv(Instant::from_micros(2999)), None);
        let got: Vec<_> = std::iter::from_fn(|| ch.recv(Instant::from_micros(3000))).collect();
        assert_eq!(got, (0..10u8).map(|i| vec![i]).collect::<Vec<_>>());
        assert_eq!(ch.counts.lost, 0);
    }

    #[test]
    fn loss_rate_is_within_bounds() {
        // 20 000 trials at p = 0.1: standard deviation 42 losses.
        let lost = fates(Impairment::loss(0.1), 3, 20_000)
            .iter()
            .filter(|f| f.arrivals.is_empty())
            .count();
        assert!((1_850..2_150).contains(&lost), "{lost}");
    }

    #[test]
    fn duplication_corruption_and_reordering_happen_at_their_rates() {
        let imp = Impairment {
            duplicate: 0.1,
            corrupt: 0.05,
            reorder: 0.2,
            reorder_delay: Duration::from_millis(10),
            ..Impairment::default()
        };
        let mut ch = Impaired::bytes(imp, 11);
        for i in 0..10_000u32 {
            ch.send(
                Instant::from_micros(u64::from(i) * 100),
                i.to_be_bytes().to_vec(),
            );
        }
        let c = ch.counts;
        assert!((900..1_100).contains(&c.duplicated), "{c:?}");
        assert!((450..650).contains(&c.corrupted), "{c:?}");
        assert!((2_000..2_400).contains(&c.reordered), "{c:?}");
        // Every copy arrives; some out of order, some with one bit flipped.
        let mut out = Vec::new();
        while let Some(at) = ch.next_arrival() {
            out.push(ch.recv(at).unwrap());
        }
        assert_eq!(out.len() as u64, c.sent + c.duplicated);
        let keys: Vec<u32> = out
            .iter()
            .map(|o| u32::from_be_bytes(o[..4].try_into().unwrap()))
            .collect();
        assert!(keys.windows(2).any(|w| w[0] > w[1]));
        let flipped = keys.iter().filter(|&&k| k >= 10_000).count();
        assert!(flipped > 0);
    }

    #[test]
    fn gilbert_elliott_losses_come_in_bursts() {
        let ge = GilbertElliott {
            to_bad: 0.01,
            to_good: 0.2,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let imp = Impairment {
            burst: Some(ge),
            ..Impairment::default()
        };
        let lost: Vec<bool> = fates(imp, 5, 50_000)
            .iter()
            .map(|f| f.arrivals.is_empty())
            .collect();
        let rate = lost.iter().filter(|&&l| l).count() as f64 / lost.len() as f64;
        assert!((rate - ge.mean_loss()).abs() < 0.01, "{rate}");
        // Runs of losses average 1 / to_good = 5 units; independent losses
        // at this rate would average barely more than 1.
        let runs = lost.windows(2).filter(|w| !w[0] && w[1]).count();
        let mean_run = lost.iter().filter(|&&l| l).count() as f64 / runs as f64;
        assert!((4.0..6.0).contains(&mean_run), "{mean_run}");
    }

    #[test]
    fn hold_keeps_units_in_flight_and_cut_and_drop_lose_them() {
        let mut ch = Impaired::bytes(Impairment::default(), 1);
        ch.hold = true;
        ch.send(Instant::ZERO, vec![1]);
        assert_eq!(ch.recv(Instant::ZERO), None);
        assert_eq!(ch.in_flight(), 1);
        ch.hold = false;
        assert_eq!(ch.recv(Instant::ZERO), Some(vec![1]));
        ch.cut = true;
        ch.send(Instant::ZERO, vec![2]);
        assert_eq!(ch.recv(Instant::ZERO), None);
        assert_eq!(ch.counts.lost, 1);
        ch.cut = false;
        ch.send(Instant::ZERO, vec![3]);
        ch.drop_in_flight();
        assert_eq!((ch.in_flight(), ch.counts.lost), (0, 2));
    }

    #[test]
    #[should_panic(expected = "with_corrupter")]
    fn corruption_without_a_corrupter_is_refused() {
        let mut ch: Impaired<u8> = Impaired::new(
            Impairment {
                corrupt: 1.0,
                ..Impairment::default()
            },
            1,
        );
        ch.send(Instant::ZERO, 1);
    }
}
