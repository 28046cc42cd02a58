//! The virtual-time driver of the sans-IO benches: one loop that takes a
//! world of components (engines, hosts, channels, workloads) from instant
//! to instant (docs/architecture.md, "virtual time jumps from event to event").
//!
//! At each instant the world first *settles*: it moves frames, datagrams
//! and events among its components until nothing moves. If its goal is
//! then met the run ends; otherwise the driver asks for the next wake-up,
//! the earliest instant any component wants attention (an engine's
//! `poll_timeout`, smoltcp's `poll_at`, the head of an event queue), and
//! hands it out with [`World::advance`]. A run fails in one of three ways
//! ([`DriveError`]):
//!
//! - **stalled**: the goal is unmet and no component wants attention
//!   again, so nothing can ever change;
//! - **livelock**: the world asked to be woken at the instant it is
//!   already at more than [`MAX_STEPS_AT_ONE_INSTANT`] times in a row, so
//!   time would never pass;
//! - **horizon**: the next wake-up lies beyond the run's limit.
//!
//! A wake-up earlier than the current instant (a deadline that passed
//! while the world settled) is served at the current instant: time never
//! goes backwards.

use thiserror::Error;

use linklab_core::Instant;

/// Wake-ups at one instant after which a run is declared a livelock.
pub const MAX_STEPS_AT_ONE_INSTANT: u32 = 100_000;

/// A set of components the [`drive`] loop takes through virtual time.
pub trait World {
    /// Moves everything due at `now` among the components until nothing
    /// moves.
    fn settle(&mut self, now: Instant);

    /// Whether the run's goal is met (checked after each settle).
    fn done(&self) -> bool;

    /// The earliest instant any component wants attention, as seen at
    /// `now`; `None` if none ever will.
    fn next_wake(&mut self, now: Instant) -> Option<Instant>;

    /// Time moves to `to` (never earlier than the instant before): hand
    /// the components their timeouts due by then.
    fn advance(&mut self, to: Instant);
}

/// Why [`drive`] stopped before the world's goal was met.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum DriveError {
    /// Nothing was left to happen.
    #[error("nothing was left to happen at {} us", at.as_micros())]
    Stalled {
        /// The instant the world went quiet.
        at: Instant,
    },
    /// The world kept asking for attention without time passing.
    #[error("more than {MAX_STEPS_AT_ONE_INSTANT} wake-ups at {} us", at.as_micros())]
    Livelock {
        /// The instant time stopped passing at.
        at: Instant,
    },
    /// The next wake-up lay beyond the limit.
    #[error("the next wake-up at {} us lies beyond the limit", next.as_micros())]
    Horizon {
        /// The instant the run had reached.
        at: Instant,
        /// The wake-up beyond the limit.
        next: Instant,
    },
}

/// Runs `world` from `start` until its goal is met, waking it at no
/// instant later than `until`; returns the instant the goal was met at.
///
/// # Errors
/// [`DriveError`] when the world stalls, livelocks or would pass `until`.
pub fn drive(
    world: &mut impl World,
    start: Instant,
    until: Instant,
) -> Result<Instant, DriveError> {
    let mut now = start;
    let mut steps_here = 0u32;
    loop {
        world.settle(now);
        if world.done() {
            return Ok(now);
        }
        let next = world
            .next_wake(now)
            .ok_or(DriveError::Stalled { at: now })?
            .max(now);
        steps_here = if next == now { steps_here + 1 } else { 0 };
        if steps_here > MAX_STEPS_AT_ONE_INSTANT {
            return Err(DriveError::Livelock { at: now });
        }
        if next > until {
            return Err(DriveError::Horizon { at: now, next });
        }
        now = next;
        world.advance(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy world: a counter that a timer bumps every `period` until it
    /// reaches `goal`; `period` zero asks for attention without time
    /// passing, `None` never again.
    struct Ticker {
        period: Option<u64>,
        goal: u32,
        count: u32,
        due: Instant,
        /// Every instant settled at, in order.
        settled: Vec<Instant>,
    }

    impl Ticker {
        fn new(period: Option<u64>, goal: u32) -> Ticker {
            Ticker {
                period,
                goal,
                count: 0,
                due: Instant::ZERO,
                settled: Vec::new(),
            }
        }
    }

    impl World for Ticker {
        fn settle(&mut self, now: Instant) {
            self.settled.push(now);
        }

        fn done(&self) -> bool {
            self.count >= self.goal
        }

        fn next_wake(&mut self, _now: Instant) -> Option<Instant> {
            let period = self.period?;
            Some(self.due + core::time::Duration::from_micros(period))
        }

        fn advance(&mut self, to: Instant) {
            if self.next_wake(to).is_some_and(|t| t <= to) {
                self.count += 1;
                self.due = to;
            }
        }
    }

    fn at(us: u64) -> Instant {
        Instant::from_micros(us)
    }

    #[test]
    fn a_run_ends_at_the_instant_the_goal_is_met() {
        let mut world = Ticker::new(Some(10), 3);
        assert_eq!(drive(&mut world, Instant::ZERO, at(1_000)), Ok(at(30)));
        assert_eq!(world.count, 3);
        assert_eq!(world.settled, [at(0), at(10), at(20), at(30)]);
    }

    #[test]
    fn a_goal_met_at_the_start_needs_no_wake_up() {
        let mut world = Ticker::new(None, 0);
        assert_eq!(drive(&mut world, at(5), at(5)), Ok(at(5)));
        assert_eq!(world.settled, [at(5)]);
    }

    #[test]
    fn a_world_with_nothing_left_to_happen_stalls_where_it_is() {
        let mut world = Ticker::new(None, 1);
        assert_eq!(
            drive(&mut world, at(7), at(1_000)),
            Err(DriveError::Stalled { at: at(7) })
        );
    }

    #[test]
    fn wake_ups_without_time_passing_are_a_livelock() {
        let mut world = Ticker::new(Some(0), u32::MAX);
        assert_eq!(
            drive(&mut world, at(3), at(1_000)),
            Err(DriveError::Livelock { at: at(3) })
        );
        assert_eq!(world.count, MAX_STEPS_AT_ONE_INSTANT);
    }

    #[test]
    fn a_wake_up_past_the_limit_fails_and_one_at_it_does_not() {
        let mut world = Ticker::new(Some(10), 5);
        assert_eq!(
            drive(&mut world, Instant::ZERO, at(35)),
            Err(DriveError::Horizon {
                at: at(30),
                next: at(40)
            })
        );
        let mut world = Ticker::new(Some(10), 4);
        assert_eq!(drive(&mut world, Instant::ZERO, at(40)), Ok(at(40)));
    }

    #[test]
    fn a_deadline_already_past_is_served_now() {
        let mut world = Ticker::new(Some(10), 2);
        world.due = Instant::ZERO;
        // Starting late: the first wake-up (10 us) has passed.
        assert_eq!(drive(&mut world, at(25), at(1_000)), Ok(at(35)));
        assert_eq!(world.settled, [at(25), at(25), at(35)]);
    }
}
