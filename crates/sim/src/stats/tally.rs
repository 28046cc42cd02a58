//! Per-run accumulators: observation tallies (e.g. message transfer times)
//! and time-weighted averages (e.g. queue length, buffer occupancy).

use linklab_core::Instant;

/// Running count, mean, variance, minimum and maximum of a sequence of
/// observations, updated in O(1) per observation with Welford's method
/// (Welford 1962, *Technometrics* 4(3)), which stays accurate where the
/// textbook sum-of-squares formula cancels catastrophically.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    n: u64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
}

impl Tally {
    /// An empty tally.
    pub fn new() -> Self {
        Tally::default()
    }

    /// Records one observation.
    pub fn add(&mut self, x: f64) {
        self.n += 1;
        if self.n == 1 {
            self.min = x;
            self.max = x;
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }

    /// Number of observations.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// Sample mean; `None` before the first observation.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then_some(self.mean)
    }

    /// Unbiased sample variance (divisor n − 1); `None` below two
    /// observations.
    pub fn variance(&self) -> Option<f64> {
        (self.n > 1).then(|| self.m2 / (self.n - 1) as f64)
    }

    /// Sample standard deviation; `None` below two observations.
    pub fn std_dev(&self) -> Option<f64> {
        self.variance().map(f64::sqrt)
    }

    /// Smallest observation; `None` before the first.
    pub fn min(&self) -> Option<f64> {
        (self.n > 0).then_some(self.min)
    }

    /// Largest observation; `None` before the first.
    pub fn max(&self) -> Option<f64> {
        (self.n > 0).then_some(self.max)
    }
}

impl FromIterator<f64> for Tally {
    fn from_iter<I: IntoIterator<Item = f64>>(iter: I) -> Self {
        let mut t = Tally::new();
        iter.into_iter().for_each(|x| t.add(x));
        t
    }
}

/// The time average of a piecewise-constant quantity, such as the number of
/// frames waiting in a queue: (1/T)·∫ v(t) dt over the observation window
/// (Law & Kelton, "time-average number in queue").
#[derive(Debug, Clone, PartialEq)]
pub struct TimeWeighted {
    start: Instant,
    last: Instant,
    value: f64,
    /// ∫ v dt over [start, last], in value·µs.
    area: f64,
    max: f64,
}

impl TimeWeighted {
    /// Starts observing at `start` with the quantity at `initial`.
    pub fn new(start: Instant, initial: f64) -> Self {
        TimeWeighted {
            start,
            last: start,
            value: initial,
            area: 0.0,
            max: initial,
        }
    }

    /// Records that the quantity changed to `value` at `now`. An update
    /// earlier than the previous one is treated as simultaneous with it.
    pub fn set(&mut self, now: Instant, value: f64) {
        self.advance(now);
        self.value = value;
        self.max = self.max.max(value);
    }

    /// Adds `delta` to the quantity at `now` (e.g. +1 on arrival).
    pub fn add(&mut self, now: Instant, delta: f64) {
        self.set(now, self.value + delta);
    }

    fn advance(&mut self, now: Instant) {
        let span = (now - self.last).as_micros() as f64;
        self.area += self.value * span;
        self.last = self.last.max(now);
    }

    /// Restarts the window at `now`, keeping the current value: deletes
    /// everything observed so far, as at the end of a warm-up period.
    pub fn reset(&mut self, now: Instant) {
        *self = TimeWeighted::new(now.max(self.last), self.value);
    }

    /// The current value of the quantity.
    pub fn current(&self) -> f64 {
        self.value
    }

    /// Largest value held since the window started.
    pub fn max(&self) -> f64 {
        self.max
    }

    /// Time average over [start, `now`]; `None` for an empty window.
    pub fn mean(&self, now: Instant) -> Option<f64> {
        let mut end = self.clone();
        end.advance(now);
        let span = (end.last - end.start).as_micros() as f64;
        (span > 0.0).then(|| end.area / span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_matches_two_pass_formulas() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let t: Tally = xs.iter().copied().collect();
        assert_eq!(t.count(), 8);
        assert_eq!(t.mean(), Some(5.0));
        // Sum of squared deviations 32, n − 1 = 7.
        assert!((t.variance().unwrap() - 32.0 / 7.0).abs() < 1e-12);
        assert_eq!(t.min(), Some(2.0));
        assert_eq!(t.max(), Some(9.0));
    }

    #[test]
    fn tally_empty_and_single() {
        let mut t = Tally::new();
        assert_eq!(
            (t.mean(), t.variance(), t.min(), t.max()),
            (None, None, None, None)
        );
        t.add(-3.0);
        assert_eq!(t.mean(), Some(-3.0));
        assert_eq!(t.variance(), None);
        assert_eq!(t.min(), Some(-3.0));
    }

    #[test]
    fn tally_is_stable_with_a_large_offset() {
        // Naive Σx² − n·x̄² loses every digit here.
        let t: Tally = (0..1000).map(|i| 1e9 + f64::from(i % 2)).collect();
        assert!((t.variance().unwrap() - 0.25 * 1000.0 / 999.0).abs() < 1e-6);
    }

    #[test]
    fn time_weighted_average_of_a_step_function() {
        let t = Instant::from_micros;
        let mut q = TimeWeighted::new(t(0), 0.0);
        q.add(t(10), 1.0); // 0 over [0, 10)
        q.add(t(20), 1.0); // 1 over [10, 20)
        q.set(t(30), 0.0); // 2 over [20, 30)
        assert_eq!(q.mean(t(40)), Some((10.0 + 20.0) / 40.0));
        assert_eq!(q.max(), 2.0);
        assert_eq!(q.current(), 0.0);
        q.reset(t(40));
        q.set(t(40), 3.0);
        assert_eq!(q.mean(t(40)), None);
        assert_eq!(q.mean(t(50)), Some(3.0));
        assert_eq!(q.max(), 3.0);
    }
}
