//! The method of non-overlapping batch means: a confidence interval from a
//! single long run (Law & Kelton, *Simulation Modeling and Analysis*,
//! "batch means"), the alternative to independent replications when a
//! warm-up is expensive to repeat.

use super::ci::ConfidenceInterval;

/// Splits `series` (already stripped of its warm-up, e.g. by
/// [`mser5`](super::mser5)) into `batches` consecutive batches of equal
/// size, dropping the last `len % batches` observations, and builds the
/// Student-t interval at `level` from the batch means, with `batches − 1`
/// degrees of freedom. With batches long compared with the series'
/// correlation time the batch means are nearly independent; 10 to 30
/// batches is the usual choice. `None` for fewer than two batches or a
/// series shorter than `batches`.
pub fn batch_means(series: &[f64], batches: usize, level: f64) -> Option<ConfidenceInterval> {
    let size = series.len().checked_div(batches)?;
    if batches < 2 || size == 0 {
        return None;
    }
    let means: Vec<f64> = series
        .chunks_exact(size)
        .take(batches)
        .map(|b| b.iter().sum::<f64>() / size as f64)
        .collect();
    ConfidenceInterval::from_samples(&means, level)
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_core::rng::Stream;

    /// AR(1) series x_t = φ·x_{t−1} + e_t around mean 5, strongly correlated.
    fn ar1(seed: u64, phi: f64, n: usize) -> Vec<f64> {
        let mut s = Stream::from_seed(seed);
        let mut x = 0.0;
        (0..n)
            .map(|_| {
                x = phi * x + (s.uniform() - 0.5) * 12f64.sqrt();
                5.0 + x
            })
            .collect()
    }

    #[test]
    fn batch_means_widen_the_interval_for_correlated_data() {
        let xs = ar1(11, 0.95, 40_000);
        let naive = ConfidenceInterval::from_samples(&xs, 0.95).unwrap();
        let bm = batch_means(&xs, 20, 0.95).unwrap();
        assert_eq!(bm.n, 20);
        assert!(bm.contains(5.0), "{bm}");
        // Var of the mean is (1 + φ)/(1 − φ) = 39 times the iid value.
        assert!(bm.half_width > 3.0 * naive.half_width, "{bm} vs {naive}");
    }

    #[test]
    fn degenerate_batching() {
        assert!(batch_means(&[1.0, 2.0, 3.0], 0, 0.95).is_none());
        assert!(batch_means(&[1.0, 2.0, 3.0], 1, 0.95).is_none());
        assert!(batch_means(&[1.0, 2.0, 3.0], 4, 0.95).is_none());
        let ci = batch_means(&[1.0, 3.0, 5.0, 7.0, 100.0], 2, 0.95).unwrap();
        assert_eq!((ci.mean, ci.n), (4.0, 2));
    }
}
