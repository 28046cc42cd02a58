//! A fixed table of timers indexed by an engine's own timer enum, in the
//! manner of quinn-proto's `TimerTable`.
//!
//! Each timer is stopped, running to a deadline, or paused with some time
//! left: AX.25 implementations such as Dire Wolf freeze T1 while the channel
//! is busy, so that other stations' traffic does not count against the peer
//! (AX.25 v2.2 6.7.1.1 leaves this to the implementation).

use core::marker::PhantomData;
use core::time::Duration;

use crate::Instant;

/// An engine's set of timers: a small enum whose variants index the table.
pub trait TimerKind: Copy + Eq + core::fmt::Debug + 'static {
    /// Every timer, in table order: `ALL[t.index()] == t`. When several are
    /// due at once they fire in this order.
    const ALL: &'static [Self];

    /// The timer's slot in the table, below `ALL.len()`.
    fn index(self) -> usize;
}

/// One timer's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Not running.
    Stopped,
    /// Runs until the deadline.
    Running(Instant),
    /// Running but frozen with this much time left.
    Paused(Duration),
}

/// The timers of one engine, `N` of kind `T` (`N == T::ALL.len()`).
#[derive(Debug, Clone)]
pub struct TimerTable<T: TimerKind, const N: usize> {
    slots: [Slot; N],
    kind: PhantomData<T>,
}

impl<T: TimerKind, const N: usize> Default for TimerTable<T, N> {
    fn default() -> Self {
        debug_assert_eq!(T::ALL.len(), N, "TimerTable size must match TimerKind::ALL");
        TimerTable {
            slots: [Slot::Stopped; N],
            kind: PhantomData,
        }
    }
}

impl<T: TimerKind, const N: usize> TimerTable<T, N> {
    /// Starts (or restarts) `timer` to expire `span` after `now`.
    pub fn start(&mut self, timer: T, now: Instant, span: Duration) {
        self.slots[timer.index()] = Slot::Running(now + span);
    }

    /// Starts (or restarts) `timer` to expire at `deadline`.
    pub fn start_at(&mut self, timer: T, deadline: Instant) {
        self.slots[timer.index()] = Slot::Running(deadline);
    }

    /// Starts `timer` frozen, with `span` left once resumed.
    pub fn start_paused(&mut self, timer: T, span: Duration) {
        self.slots[timer.index()] = Slot::Paused(span);
    }

    /// Stops `timer`; returns the time it had left if it was running or
    /// paused.
    pub fn stop(&mut self, timer: T, now: Instant) -> Option<Duration> {
        let left = self.remaining(timer, now);
        self.slots[timer.index()] = Slot::Stopped;
        left
    }

    /// The time `timer` has left, if running or paused.
    pub fn remaining(&self, timer: T, now: Instant) -> Option<Duration> {
        match self.slots[timer.index()] {
            Slot::Stopped => None,
            Slot::Running(at) => Some(at - now),
            Slot::Paused(left) => Some(left),
        }
    }

    /// The deadline of a running (not paused) `timer`.
    pub fn deadline(&self, timer: T) -> Option<Instant> {
        match self.slots[timer.index()] {
            Slot::Running(at) => Some(at),
            _ => None,
        }
    }

    /// True if `timer` is running or paused.
    pub fn is_running(&self, timer: T) -> bool {
        self.slots[timer.index()] != Slot::Stopped
    }

    /// Freezes a running `timer`.
    pub fn pause(&mut self, timer: T, now: Instant) {
        if let Slot::Running(at) = self.slots[timer.index()] {
            self.slots[timer.index()] = Slot::Paused(at - now);
        }
    }

    /// Lets a paused `timer` run on from `now`.
    pub fn resume(&mut self, timer: T, now: Instant) {
        if let Slot::Paused(left) = self.slots[timer.index()] {
            self.slots[timer.index()] = Slot::Running(now + left);
        }
    }

    /// The earliest deadline of any running timer.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.slots
            .iter()
            .filter_map(|slot| match slot {
                Slot::Running(at) => Some(*at),
                _ => None,
            })
            .min()
    }

    /// Stops and returns the first timer (in table order) due at `now`.
    pub fn take_expired(&mut self, now: Instant) -> Option<T> {
        let timer = T::ALL
            .iter()
            .copied()
            .find(|t| matches!(self.slots[t.index()], Slot::Running(at) if at <= now))?;
        self.slots[timer.index()] = Slot::Stopped;
        Some(timer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum T {
        A,
        B,
    }

    impl TimerKind for T {
        const ALL: &'static [T] = &[T::A, T::B];
        fn index(self) -> usize {
            self as usize
        }
    }

    #[test]
    fn pause_freezes_the_remaining_time() {
        let mut timers = TimerTable::<T, 2>::default();
        let t0 = Instant::ZERO;
        timers.start(T::A, t0, Duration::from_secs(3));
        timers.start(T::B, t0, Duration::from_secs(300));
        timers.pause(T::A, t0 + Duration::from_secs(1));
        assert_eq!(timers.next_deadline(), Some(t0 + Duration::from_secs(300)));
        assert_eq!(timers.deadline(T::A), None);
        let later = t0 + Duration::from_secs(10);
        timers.resume(T::A, later);
        assert_eq!(timers.next_deadline(), Some(later + Duration::from_secs(2)));
        assert_eq!(timers.take_expired(later), None);
        assert_eq!(
            timers.take_expired(later + Duration::from_secs(2)),
            Some(T::A)
        );
        assert!(!timers.is_running(T::A));
        assert_eq!(timers.stop(T::B, later), Some(Duration::from_secs(290)));
    }

    #[test]
    fn simultaneous_expiries_fire_in_table_order() {
        let mut timers = TimerTable::<T, 2>::default();
        let at = Instant::from_micros(5);
        timers.start_at(T::B, at);
        timers.start_at(T::A, at);
        assert_eq!(timers.take_expired(at), Some(T::A));
        assert_eq!(timers.take_expired(at), Some(T::B));
        assert_eq!(timers.take_expired(at), None);
    }
}
