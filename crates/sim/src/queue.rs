//! The future-event list: a binary heap of pending events keyed by
//! (time, insertion sequence).
//!
//! Events due at the same instant leave in the order they were scheduled
//! (FIFO), so the order of a run depends only on what the model did, never
//! on heap internals: the same model with the same seed replays the same
//! event sequence bit for bit (ARCHITECTURE.md, "virtual time jumps from
//! event to event ... bit-for-bit repeatable from a seed").
//!
//! Time never goes backwards: [`EventQueue::schedule`] refuses an instant
//! earlier than [`EventQueue::now`] with [`ScheduleError::InPast`] rather
//! than silently clamping, because an event in the past is a model bug. A
//! caller that legitimately holds a deadline which may already have passed
//! (an engine's `poll_timeout` after a long step, say) states the intent
//! with `queue.schedule(deadline.max(queue.now()), ev)`.

use core::cmp::Ordering;
use core::time::Duration;
use std::collections::{BinaryHeap, HashSet};

use linklab_link::Instant;

/// Names one scheduled event, for [`EventQueue::cancel`]. Ids are never
/// reused within one queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId(u64);

/// Why an event could not be scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The requested instant lies before the queue's current time.
    #[error(
        "cannot schedule an event at t = {at_us} µs: virtual time is already at t = {now_us} µs"
    )]
    InPast {
        /// The requested instant, in µs.
        at_us: u64,
        /// The queue's current time, in µs.
        now_us: u64,
    },
}

/// One heap entry. Ordered by (time, sequence) only, reversed so that
/// `BinaryHeap` (a max-heap) yields the earliest entry first.
#[derive(Debug)]
struct Entry<E> {
    at: Instant,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    fn key(&self) -> (Instant, u64) {
        (self.at, self.seq)
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// A deterministic future-event list over payloads of type `E`.
///
/// Cancellation is lazy: [`cancel`](EventQueue::cancel) only forgets the id,
/// and the stale heap entry is discarded when it reaches the top (or when
/// stale entries outnumber live ones, in one compaction pass), so cancelling
/// costs O(1) and memory stays bounded by twice the number of live events.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    /// Sequence numbers of events scheduled and neither popped nor cancelled.
    live: HashSet<u64>,
    next_seq: u64,
    now: Instant,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue at virtual time [`Instant::ZERO`].
    pub fn new() -> Self {
        EventQueue::starting_at(Instant::ZERO)
    }

    /// An empty queue whose clock starts at `now`.
    pub fn starting_at(now: Instant) -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            live: HashSet::new(),
            next_seq: 0,
            now,
        }
    }

    /// The current virtual time: the instant of the last popped event (or
    /// the start time before the first pop).
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Number of pending (scheduled, not cancelled, not popped) events.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Schedules `event` at instant `at`. Events at equal instants pop in
    /// the order they were scheduled.
    ///
    /// # Errors
    /// [`ScheduleError::InPast`] if `at` is before [`now`](Self::now);
    /// `at == now` is allowed.
    pub fn schedule(&mut self, at: Instant, event: E) -> Result<EventId, ScheduleError> {
        if at < self.now {
            return Err(ScheduleError::InPast {
                at_us: at.as_micros(),
                now_us: self.now.as_micros(),
            });
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { at, seq, event });
        self.live.insert(seq);
        Ok(EventId(seq))
    }

    /// Schedules `event` a span `delay` after [`now`](Self::now) (saturating
    /// at the end of time); never fails.
    pub fn schedule_after(&mut self, delay: Duration, event: E) -> EventId {
        let at = self.now + delay;
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { at, seq, event });
        self.live.insert(seq);
        EventId(seq)
    }

    /// Cancels a pending event. Returns `true` if it was pending, `false` if
    /// it had already been popped or cancelled.
    pub fn cancel(&mut self, id: EventId) -> bool {
        let was_live = self.live.remove(&id.0);
        if was_live && self.heap.len() > 2 * self.live.len() + 16 {
            let live = &self.live;
            self.heap.retain(|e| live.contains(&e.seq));
        }
        was_live
    }

    /// Drops cancelled entries from the top of the heap.
    fn discard_stale(&mut self) {
        while let Some(top) = self.heap.peek() {
            if self.live.contains(&top.seq) {
                return;
            }
            self.heap.pop();
        }
    }

    /// The instant of the next pending event, if any. Takes `&mut self`
    /// because it discards cancelled entries on the way.
    pub fn peek_time(&mut self) -> Option<Instant> {
        self.discard_stale();
        self.heap.peek().map(|e| e.at)
    }

    /// Removes the next pending event, advances [`now`](Self::now) to its
    /// instant and returns it.
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        self.discard_stale();
        let entry = self.heap.pop()?;
        self.live.remove(&entry.seq);
        self.now = entry.at;
        Some((entry.at, entry.event))
    }

    /// Like [`pop`](Self::pop), but only if the next event is due at or
    /// before `horizon`; otherwise leaves it pending and advances the clock
    /// to `horizon` (if that is later than now), as at the end of a run.
    pub fn pop_until(&mut self, horizon: Instant) -> Option<(Instant, E)> {
        match self.peek_time() {
            Some(t) if t <= horizon => self.pop(),
            _ => {
                self.now = self.now.max(horizon);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(us: u64) -> Instant {
        Instant::from_micros(us)
    }

    #[test]
    fn pops_in_time_order_and_advances_clock() {
        let mut q = EventQueue::new();
        q.schedule(t(30), 'c').unwrap();
        q.schedule(t(10), 'a').unwrap();
        q.schedule(t(20), 'b').unwrap();
        assert_eq!(q.len(), 3);
        assert_eq!(q.peek_time(), Some(t(10)));
        assert_eq!(q.pop(), Some((t(10), 'a')));
        assert_eq!(q.now(), t(10));
        assert_eq!(q.pop(), Some((t(20), 'b')));
        assert_eq!(q.pop(), Some((t(30), 'c')));
        assert_eq!(q.pop(), None);
        assert!(q.is_empty());
        assert_eq!(q.now(), t(30));
    }

    #[test]
    fn simultaneous_events_pop_fifo() {
        let mut q = EventQueue::new();
        for i in 0..100u32 {
            // Interleave two instants so heap order alone would not be FIFO.
            q.schedule(t(u64::from(i % 2) * 5 + 7), i).unwrap();
        }
        let order: Vec<u32> = core::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        let evens: Vec<u32> = (0..100).filter(|i| i % 2 == 0).collect();
        let odds: Vec<u32> = (0..100).filter(|i| i % 2 == 1).collect();
        assert_eq!(order, [evens, odds].concat());
    }

    #[test]
    fn event_scheduled_now_during_processing_runs_after_earlier_ties() {
        let mut q = EventQueue::new();
        q.schedule(t(5), "first").unwrap();
        q.schedule(t(5), "second").unwrap();
        assert_eq!(q.pop(), Some((t(5), "first")));
        q.schedule(q.now(), "third").unwrap();
        assert_eq!(q.pop(), Some((t(5), "second")));
        assert_eq!(q.pop(), Some((t(5), "third")));
    }

    #[test]
    fn scheduling_in_the_past_is_refused() {
        let mut q = EventQueue::new();
        q.schedule(t(100), ()).unwrap();
        q.pop();
        let err = q.schedule(t(99), ()).unwrap_err();
        assert_eq!(
            err,
            ScheduleError::InPast {
                at_us: 99,
                now_us: 100
            }
        );
        assert_eq!(
            err.to_string(),
            "cannot schedule an event at t = 99 µs: virtual time is already at t = 100 µs"
        );
        assert!(q.is_empty());
        // The documented idiom for a deadline that may have passed.
        q.schedule(t(99).max(q.now()), ()).unwrap();
        assert_eq!(q.pop(), Some((t(100), ())));
    }

    #[test]
    fn cancellation_removes_exactly_the_cancelled_events() {
        let mut q = EventQueue::new();
        let ids: Vec<EventId> = (0..10u64)
            .map(|i| q.schedule(t(i / 3), i).unwrap())
            .collect();
        assert!(q.cancel(ids[0]));
        assert!(q.cancel(ids[4]));
        assert!(q.cancel(ids[5]));
        assert!(!q.cancel(ids[4]), "second cancel of the same id");
        assert_eq!(q.len(), 7);
        assert_eq!(q.peek_time(), Some(t(0)));
        let order: Vec<u64> = core::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, [1, 2, 3, 6, 7, 8, 9]);
        assert!(!q.cancel(ids[9]), "already popped");
    }

    #[test]
    fn cancelling_the_head_moves_peek_time() {
        let mut q = EventQueue::new();
        let a = q.schedule(t(1), 'a').unwrap();
        q.schedule(t(2), 'b').unwrap();
        assert!(q.cancel(a));
        assert_eq!(q.peek_time(), Some(t(2)));
        assert_eq!(q.pop(), Some((t(2), 'b')));
    }

    #[test]
    fn mass_cancellation_compacts_the_heap() {
        let mut q = EventQueue::new();
        let ids: Vec<EventId> = (0..1000u64).map(|i| q.schedule(t(i), i).unwrap()).collect();
        for id in &ids[..990] {
            assert!(q.cancel(*id));
        }
        assert_eq!(q.len(), 10);
        assert!(q.heap.len() <= 2 * q.len() + 16);
        let order: Vec<u64> = core::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, (990..1000).collect::<Vec<_>>());
    }

    #[test]
    fn schedule_after_and_pop_until() {
        let mut q = EventQueue::starting_at(t(1_000));
        q.schedule_after(Duration::from_millis(2), "late");
        q.schedule_after(Duration::ZERO, "now");
        assert_eq!(q.pop_until(t(2_000)), Some((t(1_000), "now")));
        assert_eq!(q.pop_until(t(2_000)), None);
        assert_eq!(q.now(), t(2_000));
        assert_eq!(q.len(), 1);
        assert_eq!(q.pop_until(t(3_000)), Some((t(3_000), "late")));
    }
}
