//! Bad-input reports kept readable: a burst of garbage on the KISS port
//! (a wrong baud rate, a TNC not in KISS mode) would otherwise print a
//! line for every octet run and damaged frame. The first
//! [`BAD_INPUT_BURST`] bad inputs are reported one by one; after that they
//! are counted, and the count is reported as a [`BadInputCount`] once per
//! [`BAD_INPUT_INTERVAL`], when good input resumes, and at exit. Nothing
//! is lost from the count. Sans-IO: time comes in as arguments.

use core::fmt;
use core::time::Duration;

use linklab_core::Instant;

/// Bad inputs reported one by one before the rest are only counted.
pub const BAD_INPUT_BURST: usize = 10;

/// How often the count of bad inputs not reported one by one is reported;
/// after this long without bad input, they are reported one by one again.
pub const BAD_INPUT_INTERVAL: Duration = Duration::from_secs(10);

/// Bad inputs dropped without a report of their own, from `since` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadInputCount {
    /// How many.
    pub count: u64,
    /// The octets they dropped, where known
    /// ([`InputError::octets`](crate::InputError::octets)).
    pub octets: u64,
    /// When the first of them came in.
    pub since: Instant,
}

impl fmt::Display for BadInputCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} more bad {} ignored and not shown since {:.3} s ({} {} dropped)",
            self.count,
            if self.count == 1 { "input" } else { "inputs" },
            (self.since - Instant::ZERO).as_secs_f64(),
            self.octets,
            if self.octets == 1 { "octet" } else { "octets" },
        )
    }
}

/// Decides which bad inputs are reported one by one, and counts the rest.
#[derive(Debug, Clone, Default)]
pub(crate) struct BadInputLimiter {
    /// Bad inputs reported one by one since the limiter was last re-armed.
    shown: usize,
    /// When the last bad input came in.
    last: Option<Instant>,
    /// Bad inputs counted and not yet reported.
    pending: Option<BadInputCount>,
}

impl BadInputLimiter {
    /// A bad input of `octets` at `now`. Returns the count due before it
    /// (its interval is over), if any, and whether to report this one on
    /// its own; if not, it is counted.
    pub(crate) fn bad(&mut self, now: Instant, octets: u64) -> (Option<BadInputCount>, bool) {
        let due = self.handle_timeout(now);
        let quiet = self.last.is_some_and(|t| now >= t + BAD_INPUT_INTERVAL);
        if quiet && self.pending.is_none() {
            self.shown = 0;
        }
        self.last = Some(now);
        if self.shown < BAD_INPUT_BURST && self.pending.is_none() {
            self.shown += 1;
            return (due, true);
        }
        let pending = self.pending.get_or_insert(BadInputCount {
            count: 0,
            octets: 0,
            since: now,
        });
        pending.count += 1;
        pending.octets = pending.octets.saturating_add(octets);
        (due, false)
    }

    /// Good input came in: the count so far, if any, is reported now.
    pub(crate) fn resume(&mut self) -> Option<BadInputCount> {
        self.pending.take()
    }

    /// When the count pending is due.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        self.pending.map(|p| p.since + BAD_INPUT_INTERVAL)
    }

    /// The count pending if it is due at `now`.
    pub(crate) fn handle_timeout(&mut self, now: Instant) -> Option<BadInputCount> {
        if self.poll_timeout().is_some_and(|t| t <= now) {
            self.pending.take()
        } else {
            None
        }
    }

    /// The count pending, whenever it started (at exit).
    pub(crate) fn flush(&mut self) -> Option<BadInputCount> {
        self.pending.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::from_micros(ms * 1000)
    }

    #[test]
    fn a_burst_then_one_count_per_interval_and_nothing_lost() {
        let mut limiter = BadInputLimiter::default();
        let mut shown = 0;
        let mut counts = Vec::new();
        // 10,000 bad inputs of 3 octets, one per millisecond, for 10 s.
        for n in 0..10_000u64 {
            let now = at(n);
            if let Some(t) = limiter.poll_timeout().filter(|t| *t <= now) {
                counts.extend(limiter.handle_timeout(t));
            }
            let (due, show) = limiter.bad(now, 3);
            counts.extend(due);
            shown += usize::from(show);
        }
        counts.extend(limiter.flush());
        assert_eq!(shown, BAD_INPUT_BURST);
        assert_eq!(
            counts,
            [BadInputCount {
                count: 9_990,
                octets: 29_970,
                since: at(10),
            },]
        );
        assert_eq!(limiter.flush(), None);
        assert_eq!(limiter.poll_timeout(), None);
    }

    #[test]
    fn the_count_is_due_at_the_end_of_its_interval() {
        let mut limiter = BadInputLimiter::default();
        for n in 0..12 {
            limiter.bad(at(n), 1);
        }
        assert_eq!(limiter.poll_timeout(), Some(at(10) + BAD_INPUT_INTERVAL));
        assert_eq!(limiter.handle_timeout(at(10_009)), None);
        let due = limiter.handle_timeout(at(10_010)).unwrap();
        assert_eq!((due.count, due.octets), (2, 2));
        assert_eq!(
            due.to_string(),
            "2 more bad inputs ignored and not shown since 0.010 s (2 octets dropped)"
        );
        // Still bursting (the last one came 10 s ago at most): counted.
        assert_eq!(limiter.bad(at(10_010), 1), (None, false));
        assert_eq!(limiter.bad(at(15_000), 1), (None, false));
        // After 10 s without bad input, the count comes out first, and
        // the burst starts again.
        let (due, show) = limiter.bad(at(25_000), 1);
        assert_eq!(due.map(|d| (d.count, d.since)), Some((2, at(10_010))));
        assert!(show);
    }

    #[test]
    fn good_input_brings_the_count_out_and_quiet_rearms() {
        let mut limiter = BadInputLimiter::default();
        for n in 0..11 {
            limiter.bad(at(n), 5);
        }
        assert_eq!(limiter.resume().map(|c| (c.count, c.octets)), Some((1, 5)));
        assert_eq!(limiter.resume(), None);
        // After an interval without bad input, they are shown again.
        assert_eq!(limiter.bad(at(10_010), 1), (None, true));
    }
}
