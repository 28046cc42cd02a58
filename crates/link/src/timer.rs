//! The data link's timers in a fixed table (AX.25 v2.2 6.7.1, C4.3).

use core::time::Duration;

use crate::time::Instant;

/// The timers of a data link (AX.25 v2.2 6.7.1.1-6.7.1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Timer {
    /// T1, acknowledgement timer: outstanding I frame or P bit.
    T1,
    /// T2, response delay timer: delayed acknowledgement.
    T2,
    /// T3, inactive link timer: idle supervision.
    T3,
    /// TM201, the management retry timer: XID command outstanding
    /// (Appendix C5.3). Runs for T1V, like Dire Wolf's.
    Tm201,
}

impl Timer {
    /// All timers, in table order.
    pub const ALL: [Timer; 4] = [Timer::T1, Timer::T2, Timer::T3, Timer::Tm201];

    const fn index(self) -> usize {
        match self {
            Timer::T1 => 0,
            Timer::T2 => 1,
            Timer::T3 => 2,
            Timer::Tm201 => 3,
        }
    }
}

/// One timer's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Slot {
    /// Not running.
    #[default]
    Stopped,
    /// Runs until the deadline.
    Running(Instant),
    /// Running but frozen with this much time left (channel busy).
    Paused(Duration),
}

/// The timer table: each timer is stopped, running to a deadline, or
/// paused with some time left (Dire Wolf pauses T1 while the channel is
/// busy, so that others' traffic does not count against the peer).
#[derive(Debug, Clone, Default)]
pub(crate) struct Timers {
    slots: [Slot; 4],
}

impl Timers {
    /// Starts (or restarts) `timer` to expire `span` after `now`, paused
    /// at once if `frozen`.
    pub(crate) fn start(&mut self, timer: Timer, now: Instant, span: Duration, frozen: bool) {
        self.slots[timer.index()] = if frozen {
            Slot::Paused(span)
        } else {
            Slot::Running(now + span)
        };
    }

    /// Stops `timer`; returns the time it had left if it was running.
    pub(crate) fn stop(&mut self, timer: Timer, now: Instant) -> Option<Duration> {
        let left = self.remaining(timer, now);
        self.slots[timer.index()] = Slot::Stopped;
        left
    }

    /// The time `timer` has left, if running or paused.
    pub(crate) fn remaining(&self, timer: Timer, now: Instant) -> Option<Duration> {
        match self.slots[timer.index()] {
            Slot::Stopped => None,
            Slot::Running(at) => Some(at.saturating_duration_since(now)),
            Slot::Paused(left) => Some(left),
        }
    }

    /// True if `timer` is running or paused.
    pub(crate) fn is_running(&self, timer: Timer) -> bool {
        self.slots[timer.index()] != Slot::Stopped
    }

    /// Freezes a running `timer`.
    pub(crate) fn pause(&mut self, timer: Timer, now: Instant) {
        if let Slot::Running(at) = self.slots[timer.index()] {
            self.slots[timer.index()] = Slot::Paused(at.saturating_duration_since(now));
        }
    }

    /// Lets a paused `timer` run on from `now`.
    pub(crate) fn resume(&mut self, timer: Timer, now: Instant) {
        if let Slot::Paused(left) = self.slots[timer.index()] {
            self.slots[timer.index()] = Slot::Running(now + left);
        }
    }

    /// The earliest deadline of any running timer.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.slots
            .iter()
            .filter_map(|slot| match slot {
                Slot::Running(at) => Some(*at),
                _ => None,
            })
            .min()
    }

    /// Stops and returns the first timer (in table order) due at `now`.
    pub(crate) fn take_expired(&mut self, now: Instant) -> Option<Timer> {
        let timer = Timer::ALL
            .into_iter()
            .find(|t| matches!(self.slots[t.index()], Slot::Running(at) if at <= now))?;
        self.slots[timer.index()] = Slot::Stopped;
        Some(timer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_freezes_the_remaining_time() {
        let mut timers = Timers::default();
        let t0 = Instant::ZERO;
        timers.start(Timer::T1, t0, Duration::from_secs(3), false);
        timers.start(Timer::T3, t0, Duration::from_secs(300), false);
        timers.pause(Timer::T1, t0 + Duration::from_secs(1));
        assert_eq!(timers.next_deadline(), Some(t0 + Duration::from_secs(300)));
        let later = t0 + Duration::from_secs(10);
        timers.resume(Timer::T1, later);
        assert_eq!(timers.next_deadline(), Some(later + Duration::from_secs(2)));
        assert_eq!(timers.take_expired(later), None);
        assert_eq!(
            timers.take_expired(later + Duration::from_secs(2)),
            Some(Timer::T1)
        );
        assert!(!timers.is_running(Timer::T1));
        assert_eq!(
            timers.stop(Timer::T3, later),
            Some(Duration::from_secs(290))
        );
    }
}
