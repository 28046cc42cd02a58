//! The I frame queue (fig. C4.4a, "push on I frame queue"): information
//! not yet sent once, with its octets and lengths counted as it comes and
//! goes, so that the link tells how much waits without walking the queue
//! (a sender keeps thousands of data units queued; the station asks after
//! every frame).

use std::collections::{BTreeMap, VecDeque};

use super::Payload;
use crate::segment::segment_count;

/// A first-in first-out queue of payloads that knows its total octets and
/// how many information fields it takes with a given N1.
#[derive(Debug, Clone, Default)]
pub(super) struct IQueue {
    items: VecDeque<Payload>,
    /// Sum of the information fields' lengths.
    octets: usize,
    /// How many queued items have each length: only the lengths over N1
    /// take more than one information field (6.6), and a sender's queue
    /// has few distinct lengths.
    lengths: BTreeMap<usize, usize>,
}

impl IQueue {
    pub(super) fn push_back(&mut self, payload: Payload) {
        let len = payload.1.len();
        self.octets += len;
        *self.lengths.entry(len).or_default() += 1;
        self.items.push_back(payload);
    }

    pub(super) fn pop_front(&mut self) -> Option<Payload> {
        let payload = self.items.pop_front()?;
        let len = payload.1.len();
        self.octets -= len;
        if let Some(count) = self.lengths.get_mut(&len) {
            *count -= 1;
            if *count == 0 {
                self.lengths.remove(&len);
            }
        }
        Some(payload)
    }

    pub(super) fn clear(&mut self) {
        self.items.clear();
        self.octets = 0;
        self.lengths.clear();
    }

    pub(super) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Number of payloads queued.
    pub(super) fn len(&self) -> usize {
        self.items.len()
    }

    /// Octets of information queued.
    pub(super) fn octets(&self) -> usize {
        self.octets
    }

    /// Information fields the queued data units take with fields of `n1`
    /// octets: one each, and a data unit longer than N1 as many as its
    /// segments (6.6). Walks only the distinct lengths over `n1`.
    pub(super) fn fields(&self, n1: usize) -> usize {
        let extra: usize = self
            .lengths
            .range(n1.saturating_add(1)..)
            .map(|(&len, &count)| count * (segment_count(len, n1) - 1))
            .sum();
        self.items.len() + extra
    }
}

impl Extend<Payload> for IQueue {
    fn extend<I: IntoIterator<Item = Payload>>(&mut self, payloads: I) {
        for payload in payloads {
            self.push_back(payload);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_wire::ax25::Pid;

    fn unit(len: usize) -> Payload {
        (Pid::NoLayer3, vec![0; len])
    }

    /// The kept counts agree with a walk of the queue as it fills and
    /// drains, whatever N1 is asked about.
    #[test]
    fn counts_match_a_walk_of_the_queue() {
        let lengths = [256, 256, 1000, 10, 256, 3000, 1000, 0];
        let mut queue = IQueue::default();
        let walk = |queue: &IQueue, n1: usize| -> (usize, usize) {
            let octets = queue.items.iter().map(|(_, d)| d.len()).sum();
            let fields = queue
                .items
                .iter()
                .map(|(_, d)| segment_count(d.len(), n1))
                .sum();
            (octets, fields)
        };
        for &len in &lengths {
            queue.push_back(unit(len));
            for n1 in [1, 2, 3, 64, 256, 2048] {
                assert_eq!((queue.octets(), queue.fields(n1)), walk(&queue, n1));
            }
        }
        while queue.pop_front().is_some() {
            for n1 in [1, 2, 3, 64, 256, 2048] {
                assert_eq!((queue.octets(), queue.fields(n1)), walk(&queue, n1));
            }
        }
        assert!(queue.lengths.is_empty() && queue.octets() == 0);
    }
}
