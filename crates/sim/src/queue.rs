//! The future-event list: a 4-ary min-heap of pending events keyed by
//! (time, insertion sequence).
//!
//! Events due at the same instant leave in the order they were scheduled
//! (FIFO), so the order of a run depends only on what the model did, never
//! on heap internals: the same model with the same seed replays the same
//! event sequence bit for bit (docs/architecture.md, "virtual time jumps from
//! event to event ... bit-for-bit repeatable from a seed").
//!
//! Time never goes backwards: [`EventQueue::schedule`] refuses an instant
//! earlier than [`EventQueue::now`] with [`ScheduleError::InPast`] rather
//! than silently clamping, because an event in the past is a model bug. A
//! caller that legitimately holds a deadline which may already have passed
//! (an engine's `poll_timeout` after a long step, say) states the intent
//! with `queue.schedule(deadline.max(queue.now()), ev)`.
//!
//! Implementation (docs/performance.md has the measurements): the heap is
//! 4-ary, which halves its depth against a binary heap and keeps the four
//! children of a node in one or two cache lines (LaMarca & Ladner, "The
//! influence of caches on the performance of heaps", ACM JEA 1996). The key
//! (time, sequence) is compared as one 128-bit integer, and the smallest of
//! four children is chosen by a loop the compiler makes branch-free, which
//! pays for heaps that fit in cache (the kernel's usual case: a handful of
//! stations and timers) but costs some speed on heaps of 10^5 events and
//! more, where a branch lets the processor fetch the next level early.
//! Whether an event is
//! still pending is recorded in a slot table indexed by a slot number
//! carried in both the heap entry and the [`EventId`], so scheduling,
//! popping and cancelling touch no hash table.

use core::time::Duration;

use linklab_core::Instant;

/// Names one scheduled event, for [`EventQueue::cancel`]. Ids are never
/// reused within one queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId {
    /// The event's insertion sequence number, unique within the queue.
    seq: u64,
    /// The slot recording whether the event is pending.
    slot: u32,
}

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

/// Children per heap node.
const ARITY: usize = 4;

/// A slot whose event was popped or cancelled. Sequence numbers never reach
/// it (2^64 − 1 events would take centuries at 10^9 per second).
const VACANT: u64 = u64::MAX;

/// One heap entry: the key, the payload, and the slot that says whether the
/// entry is still pending or a cancelled leftover.
#[derive(Debug)]
struct Entry<E> {
    at: Instant,
    seq: u64,
    slot: u32,
    event: E,
}

impl<E> Entry<E> {
    /// (time, sequence) packed so that one integer comparison orders them.
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.at.as_micros()) << 64) | u128::from(self.seq)
    }
}

/// A deterministic future-event list over payloads of type `E`.
///
/// Cancellation is lazy: [`cancel`](EventQueue::cancel) only marks the
/// event's slot vacant, and the stale heap entry is discarded when it reaches
/// the top (or when stale entries outnumber live ones, in one compaction
/// pass), so cancelling costs O(1) and memory stays bounded by twice the
/// number of live events.
#[derive(Debug)]
pub struct EventQueue<E> {
    /// A 4-ary min-heap on [`Entry::key`]: the children of node i are
    /// 4i + 1 ..= 4i + 4.
    heap: Vec<Entry<E>>,
    /// For each slot, the sequence number of the pending event it records,
    /// or [`VACANT`].
    slots: Vec<u64>,
    /// Vacant slots, reused last-in first-out.
    free: Vec<u32>,
    /// Events scheduled and neither popped nor cancelled.
    pending: usize,
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
            heap: Vec::new(),
            slots: Vec::new(),
            free: Vec::new(),
            pending: 0,
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
        self.pending
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.pending == 0
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
        Ok(self.insert(at, event))
    }

    /// Schedules `event` a span `delay` after [`now`](Self::now) (saturating
    /// at the end of time); never fails.
    pub fn schedule_after(&mut self, delay: Duration, event: E) -> EventId {
        self.insert(self.now + delay, event)
    }

    /// Keeps one pending wake-up at `want` (a component's `poll_timeout`,
    /// brought up to `now`): `wake` is left as it is if it is already there,
    /// else cancelled and, if `want` is some time, `event` scheduled then.
    pub fn keep_wake(
        &mut self,
        wake: &mut Option<(Instant, EventId)>,
        want: Option<Instant>,
        now: Instant,
        event: E,
    ) {
        let want = want.map(|t| t.max(now));
        if wake.map(|(t, _)| t) == want {
            return;
        }
        if let Some((_, id)) = wake.take() {
            self.cancel(id);
        }
        if let Some(at) = want {
            *wake = Some((at, self.schedule_after(at - now, event)));
        }
    }

    /// Records a new pending event at `at` (not before `now`).
    fn insert(&mut self, at: Instant, event: E) -> EventId {
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = seq;
                slot
            }
            None => {
                // Each pending event holds a heap entry of at least 24
                // bytes, so memory runs out long before 2^32 slots.
                let slot = u32::try_from(self.slots.len())
                    .expect("an event queue holds fewer than 2^32 pending events");
                self.slots.push(seq);
                slot
            }
        };
        self.pending += 1;
        self.heap.push(Entry {
            at,
            seq,
            slot,
            event,
        });
        self.sift_up(self.heap.len() - 1);
        EventId { seq, slot }
    }

    /// Cancels a pending event. Returns `true` if it was pending, `false` if
    /// it had already been popped or cancelled.
    pub fn cancel(&mut self, id: EventId) -> bool {
        match self.slots.get_mut(id.slot as usize) {
            Some(slot) if *slot == id.seq => *slot = VACANT,
            _ => return false,
        }
        self.free.push(id.slot);
        self.pending -= 1;
        if self.heap.len() > 2 * self.pending + 16 {
            self.compact();
        }
        true
    }

    /// Whether a heap entry is still pending (not cancelled).
    #[inline]
    fn is_live(&self, entry: &Entry<E>) -> bool {
        self.slots[entry.slot as usize] == entry.seq
    }

    /// Drops every cancelled entry and rebuilds the heap bottom-up (Floyd's
    /// heap construction, O(n)).
    fn compact(&mut self) {
        let slots = &self.slots;
        self.heap.retain(|e| slots[e.slot as usize] == e.seq);
        for i in (0..self.heap.len() / ARITY + 1).rev() {
            self.sift_down(i);
        }
    }

    /// Drops cancelled entries from the top of the heap.
    fn discard_stale(&mut self) {
        while let Some(top) = self.heap.first() {
            if self.is_live(top) {
                return;
            }
            self.remove_top();
        }
    }

    /// The instant of the next pending event, if any. Takes `&mut self`
    /// because it discards cancelled entries on the way.
    pub fn peek_time(&mut self) -> Option<Instant> {
        self.discard_stale();
        self.heap.first().map(|e| e.at)
    }

    /// Removes the next pending event, advances [`now`](Self::now) to its
    /// instant and returns it.
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        loop {
            let entry = self.remove_top()?;
            let slot = entry.slot as usize;
            if self.slots[slot] == entry.seq {
                self.slots[slot] = VACANT;
                self.free.push(entry.slot);
                self.pending -= 1;
                self.now = entry.at;
                return Some((entry.at, entry.event));
            }
        }
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

    /// Removes and returns the heap's root, live or not.
    fn remove_top(&mut self) -> Option<Entry<E>> {
        if self.heap.is_empty() {
            return None;
        }
        let top = self.heap.swap_remove(0);
        self.sift_down(0);
        Some(top)
    }

    /// Moves the entry at `i` up until its parent's key is smaller.
    fn sift_up(&mut self, mut i: usize) {
        let key = self.heap[i].key();
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key() <= key {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    /// Moves the entry at `i` down until no child's key is smaller.
    fn sift_down(&mut self, mut i: usize) {
        let len = self.heap.len();
        let Some(key) = self.heap.get(i).map(Entry::key) else {
            return;
        };
        loop {
            let first = ARITY * i + 1;
            if first >= len {
                return;
            }
            let children = &self.heap[first..len.min(first + ARITY)];
            let mut best = 0;
            let mut best_key = children[0].key();
            for (offset, child) in children.iter().enumerate().skip(1) {
                let child_key = child.key();
                if child_key < best_key {
                    best = offset;
                    best_key = child_key;
                }
            }
            let best = first + best;
            if key <= best_key {
                return;
            }
            self.heap.swap(i, best);
            i = best;
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
    fn random_schedule_cancel_pop_matches_a_sorted_reference() {
        use std::collections::BTreeMap;
        let mut rng = linklab_core::Streams::new(0x4c49_4e4b).stream("queue-test");
        let mut q = EventQueue::new();
        // The reference: pending events by (time, scheduling order).
        let mut reference: BTreeMap<(Instant, u64), EventId> = BTreeMap::new();
        let mut ids: Vec<(EventId, (Instant, u64))> = Vec::new();
        for step in 0..20_000u64 {
            match rng.below(10) {
                0..=4 => {
                    // Few distinct instants, so that ties are common.
                    let at = t(q.now().as_micros() + rng.below(50));
                    let id = q.schedule(at, step).unwrap();
                    reference.insert((at, step), id);
                    ids.push((id, (at, step)));
                }
                5 | 6 if !ids.is_empty() => {
                    let (id, key) = ids.swap_remove(rng.below(ids.len() as u64) as usize);
                    assert_eq!(q.cancel(id), reference.remove(&key).is_some());
                    assert!(!q.cancel(id));
                }
                _ => {
                    let expected = reference.pop_first();
                    assert_eq!(q.peek_time(), expected.map(|((at, _), _)| at));
                    let got = q.pop();
                    assert_eq!(got, expected.map(|((at, step), _)| (at, step)));
                }
            }
            assert_eq!(q.len(), reference.len());
            assert!(q.heap.len() <= 2 * q.len() + 16);
        }
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
