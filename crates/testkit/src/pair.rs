//! One deterministic harness for two sans-IO engines, in the manner of
//! quinn-proto's test `Pair`: virtual time steps to the next wake-up of
//! either engine or of a unit in flight, due units are delivered, due
//! timers fire, and every engine's output is drained onto the channel to
//! its peer, until a condition holds or nothing is left to do.
//!
//! The two engines are of one type (a test that pairs different engines,
//! such as a NORM sender and receiver, wraps them in one enum). Each
//! direction is an [`Impaired`] channel, so loss, duplication, corruption,
//! reordering and bursts are the same everywhere; how a unit enters an
//! engine differs by protocol, so the pair is given a `deliver` function.

use crate::impair::{Impaired, Impairment};
use linklab_core::{earliest, Duration, Engine, Instant, Streams};

/// Two engines, `engines[0]` and `engines[1]`, joined by one channel each
/// way: `to[i]` carries what the other engine sends to `engines[i]`.
pub struct Pair<E: Engine> {
    /// The two engines.
    pub engines: [E; 2],
    /// Virtual time.
    pub now: Instant,
    /// `to[i]`: the channel into `engines[i]`.
    pub to: [Impaired<E::Transmit>; 2],
    /// Every unit sent, with when and by which engine, in order.
    pub log: Vec<(Instant, usize, E::Transmit)>,
    /// Units sent, deliveries and wake-ups allowed before the pair is declared stuck
    /// (a livelock guard; the default is ten million).
    pub max_steps: u64,
    steps: u64,
    deliver: fn(&mut E, Instant, E::Transmit),
}

impl<E: Engine> Pair<E>
where
    E::Transmit: Clone,
{
    /// Two engines over perfect channels without delay; `deliver` hands a
    /// unit that arrives to an engine; `seed` seeds both channels'
    /// impairments (independent streams per direction).
    pub fn new(engines: [E; 2], deliver: fn(&mut E, Instant, E::Transmit), seed: u64) -> Pair<E> {
        let streams = Streams::new(seed);
        let channel = |i| Impaired::new(Impairment::default(), streams.stream_index(i).next_u64());
        Pair {
            engines,
            now: Instant::ZERO,
            to: [channel(0), channel(1)],
            log: Vec::new(),
            max_steps: 10_000_000,
            steps: 0,
            deliver,
        }
    }

    /// The same pair with `impairment` in both directions.
    pub fn with_impairment(mut self, impairment: Impairment) -> Pair<E> {
        for channel in &mut self.to {
            channel.impairment = impairment;
        }
        self
    }

    /// Counts one unit sent, delivery or wake-up against [`Pair::max_steps`].
    fn count_step(&mut self) {
        self.steps += 1;
        assert!(
            self.steps <= self.max_steps,
            "no quiescence after {} steps at {:?}",
            self.max_steps,
            self.now
        );
    }

    /// Drains both engines' output at `now` onto the channels.
    pub fn transmit(&mut self) {
        for i in 0..2 {
            while let Some(unit) = self.engines[i].poll_transmit(self.now) {
                self.count_step();
                self.log.push((self.now, i, unit.clone()));
                self.to[1 - i].send(self.now, unit);
            }
        }
    }

    /// Delivers every unit due at `now`; whether any was.
    fn deliver_due(&mut self) -> bool {
        let mut moved = false;
        for i in 0..2 {
            while let Some(unit) = self.to[i].recv(self.now) {
                self.count_step();
                (self.deliver)(&mut self.engines[i], self.now, unit);
                moved = true;
            }
        }
        moved
    }

    /// Fires the timers due at `now`; whether any was.
    fn fire_due(&mut self) -> bool {
        let mut fired = false;
        for i in 0..2 {
            if self.engines[i]
                .poll_timeout()
                .is_some_and(|t| t <= self.now)
            {
                self.count_step();
                self.engines[i].handle_timeout(self.now);
                fired = true;
            }
        }
        fired
    }

    /// Transmits, delivers the units and fires the timers due at `now`,
    /// until nothing more is due; time does not advance.
    pub fn settle(&mut self) {
        loop {
            self.transmit();
            let delivered = self.deliver_due();
            if !(self.fire_due() || delivered) {
                return;
            }
        }
    }

    /// The next instant at which a timer is due or a unit arrives.
    pub fn next_wakeup(&self) -> Option<Instant> {
        earliest(
            self.engines
                .iter()
                .map(Engine::poll_timeout)
                .chain(self.to.iter().map(Impaired::next_arrival)),
        )
    }

    /// Settles, then moves to the next wake-up (never backwards) and
    /// settles there. False if there was nothing to wake up for.
    pub fn step(&mut self) -> bool {
        self.settle();
        let Some(next) = self.next_wakeup() else {
            return false;
        };
        self.now = self.now.max(next);
        self.settle();
        true
    }

    /// One [`Pair::step`] if the next wake-up is at most `limit` after
    /// `now`; false (time unchanged) otherwise.
    pub fn advance(&mut self, limit: Duration) -> bool {
        self.settle();
        match self.next_wakeup() {
            Some(next) if next <= self.now + limit => self.step(),
            _ => false,
        }
    }

    /// Steps until `done` holds (true) or the next wake-up would pass
    /// `limit` or there is none (false). `done` is checked after every
    /// settle, first at `now`.
    pub fn run_until(&mut self, limit: Instant, mut done: impl FnMut(&Self) -> bool) -> bool {
        loop {
            self.settle();
            if done(self) {
                return true;
            }
            match self.next_wakeup() {
                Some(next) if next <= limit => {
                    self.step();
                }
                _ => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impair::GilbertElliott;

    /// A toy stop-and-wait protocol: the sender sends `[seq]` and resends
    /// it every 10 ms until the receiver's `[seq]` acknowledgement comes
    /// back; the receiver acknowledges and records in-order data.
    #[derive(Default)]
    struct StopAndWait {
        to_send: u8,
        next: u8,
        retransmit_at: Option<Instant>,
        pending: Vec<u8>,
        received: Vec<u8>,
    }

    impl Engine for StopAndWait {
        type Transmit = Vec<u8>;

        fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
            if !self.pending.is_empty() {
                return Some(self.pending.drain(..).collect());
            }
            if self.next < self.to_send && self.retransmit_at.is_none() {
                self.retransmit_at = Some(now + Duration::from_millis(10));
                return Some(vec![self.next]);
            }
            None
        }

        fn poll_timeout(&self) -> Option<Instant> {
            self.retransmit_at
        }

        fn handle_timeout(&mut self, now: Instant) {
            if self.retransmit_at.is_some_and(|t| t <= now) {
                self.retransmit_at = None;
            }
        }
    }

    fn deliver(e: &mut StopAndWait, _now: Instant, unit: Vec<u8>) {
        let [seq] = unit[..] else { return };
        if e.to_send > 0 {
            if seq == e.next {
                e.next += 1;
                e.retransmit_at = None;
            }
        } else {
            if usize::from(seq) == e.received.len() {
                e.received.push(seq);
            }
            e.pending.push(seq);
        }
    }

    fn run(impairment: Impairment, seed: u64) -> Pair<StopAndWait> {
        let sender = StopAndWait {
            to_send: 50,
            ..StopAndWait::default()
        };
        let mut pair =
            Pair::new([sender, StopAndWait::default()], deliver, seed).with_impairment(impairment);
        let done = pair.run_until(Instant::from_micros(60_000_000), |p| {
            p.engines[0].next == 50
        });
        assert!(done);
        pair
    }

    #[test]
    fn delivers_in_order_over_a_perfect_channel_without_waiting() {
        let pair = run(Impairment::delay(Duration::from_millis(1)), 1);
        assert_eq!(pair.engines[1].received, (0..50).collect::<Vec<_>>());
        // 50 round trips of 2 ms.
        assert_eq!(pair.now, Instant::from_micros(100_000));
        assert_eq!(pair.log.len(), 100);
    }

    #[test]
    fn recovers_from_bursts_and_is_repeatable() {
        let imp = Impairment {
            delay: Duration::from_millis(1),
            burst: Some(GilbertElliott {
                to_bad: 0.05,
                to_good: 0.3,
                loss_good: 0.01,
                loss_bad: 0.8,
            }),
            duplicate: 0.05,
            reorder: 0.05,
            reorder_delay: Duration::from_millis(5),
            ..Impairment::default()
        };
        let a = run(imp, 9);
        assert_eq!(a.engines[1].received, (0..50).collect::<Vec<_>>());
        assert!(a.to[1].counts.lost > 0 && a.log.len() > 100);
        let b = run(imp, 9);
        assert_eq!(a.log, b.log);
        assert_eq!(a.now, b.now);
    }

    #[test]
    fn advance_respects_its_limit() {
        let sender = StopAndWait {
            to_send: 1,
            ..StopAndWait::default()
        };
        let mut pair = Pair::new([sender, StopAndWait::default()], deliver, 1)
            .with_impairment(Impairment::loss(1.0));
        pair.settle();
        assert!(!pair.advance(Duration::from_millis(9)));
        assert_eq!(pair.now, Instant::ZERO);
        assert!(pair.advance(Duration::from_millis(10)));
        assert_eq!(pair.now, Instant::from_micros(10_000));
    }

    #[test]
    #[should_panic(expected = "no quiescence")]
    fn a_livelock_is_caught() {
        /// Answers every unit with one.
        struct Echo;
        impl Engine for Echo {
            type Transmit = u8;
            fn poll_transmit(&mut self, _: Instant) -> Option<u8> {
                Some(0)
            }
            fn poll_timeout(&self) -> Option<Instant> {
                None
            }
            fn handle_timeout(&mut self, _: Instant) {}
        }
        let mut pair = Pair::new([Echo, Echo], |_, _, _| {}, 0);
        pair.max_steps = 1_000;
        pair.step();
    }
}
