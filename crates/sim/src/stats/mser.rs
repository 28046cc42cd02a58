//! Warm-up (initial-transient) detection by the MSER-5 rule.
//!
//! MSER, the Marginal Standard Error Rule (White, "An effective truncation
//! heuristic for bias reduction in simulation output", *Simulation* 69(6),
//! 1997), picks the truncation point d that minimises
//!
//! ```text
//! MSER(d) = 1/(m − d)² · Σ_{j=d+1..m} (Z_j − Z̄(d))²
//! ```
//!
//! the squared standard error of the mean of what is kept, so it trades the
//! bias of keeping early, unrepresentative data against the variance of
//! keeping too little. MSER-5 (White, Cobb & Spratt, WSC 2000) applies the
//! rule to the means Z_j of non-overlapping batches of 5 observations, which
//! smooths the statistic, and searches d over the first half of the batches
//! only: a minimum beyond that is not trusted.

use super::tally::Tally;

/// The result of an MSER search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MserCut {
    /// Observations to delete from the start of the series (a multiple of
    /// the batch size).
    pub cut: usize,
    /// Number of whole batches the series was divided into (a trailing
    /// partial batch is not used by the statistic).
    pub batches: usize,
    /// Whether the minimum lay at the end of the searched range (half of
    /// the batches). The transient may then be longer than the run can
    /// show: White et al. advise a longer run before trusting the cut.
    pub at_limit: bool,
}

/// MSER with batches of `batch_size` observations (at least 1). Series too
/// short for two batches get a cut of 0.
pub fn mser(series: &[f64], batch_size: usize) -> MserCut {
    let batch_size = batch_size.max(1);
    let batch_means: Vec<f64> = series
        .chunks_exact(batch_size)
        .map(|c| c.iter().sum::<f64>() / batch_size as f64)
        .collect();
    let b = batch_means.len();
    // Search d ≤ b/2, and keep at least two batches so the variance exists.
    let max_d = (b / 2).min(b.saturating_sub(2));
    // Accumulate from the end: after adding batch d, the tally holds the
    // suffix Z_{d+1..b} of the MSER formula (in 1-based terms).
    let mut suffix = Tally::new();
    let mut best: Option<(f64, usize)> = None;
    for (d, &z) in batch_means.iter().enumerate().rev() {
        suffix.add(z);
        if d > max_d {
            continue;
        }
        let kept = suffix.count() as f64;
        let sum_sq = suffix.variance().unwrap_or(0.0) * (kept - 1.0);
        let statistic = sum_sq / (kept * kept);
        // `<=` while walking d downwards: ties go to the smaller cut.
        if best.is_none_or(|(s, _)| statistic <= s) {
            best = Some((statistic, d));
        }
    }
    let d_star = best.map_or(0, |(_, d)| d);
    MserCut {
        cut: d_star * batch_size,
        batches: b,
        at_limit: d_star == max_d && max_d > 0,
    }
}

/// MSER-5: [`mser`] with batches of five observations, the variant White,
/// Cobb & Spratt (2000) recommend.
pub fn mser5(series: &[f64]) -> MserCut {
    mser(series, 5)
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_core::rng::Stream;

    /// Unit-variance iid noise: uniform on [−√3, √3).
    fn noise(stream: &mut Stream) -> f64 {
        (stream.uniform() - 0.5) * 12f64.sqrt()
    }

    #[test]
    fn cut_lands_after_an_exponential_transient() {
        for seed in 0..10 {
            let mut s = Stream::from_seed(seed);
            // Bias 10·e^(−i/100): below one noise σ from i = 230 on.
            let xs: Vec<f64> = (0..5000)
                .map(|i| 10.0 * (-f64::from(i) / 100.0).exp() + noise(&mut s))
                .collect();
            let m = mser5(&xs);
            assert!(
                (230..=2500).contains(&m.cut),
                "seed {seed}: cut {} not after the transient",
                m.cut
            );
            assert!(!m.at_limit, "seed {seed}");
            let kept: Tally = xs[m.cut..].iter().copied().collect();
            assert!(kept.mean().unwrap().abs() < 0.1, "seed {seed}");
        }
    }

    #[test]
    fn stationary_series_is_barely_cut() {
        for seed in 100..110 {
            let mut s = Stream::from_seed(seed);
            let xs: Vec<f64> = (0..5000).map(|_| 3.0 + noise(&mut s)).collect();
            let m = mser5(&xs);
            assert!(m.cut <= 250, "seed {seed}: cut {}", m.cut);
        }
    }

    #[test]
    fn step_transient_is_cut_exactly() {
        // Two batches of 10 then 40 zero batches with a little structure.
        let mut xs = vec![10.0; 10];
        xs.extend((0..200).map(|i| f64::from(i % 5) - 2.0));
        let m = mser5(&xs);
        assert_eq!(
            m,
            MserCut {
                cut: 10,
                batches: 42,
                at_limit: false
            }
        );
    }

    #[test]
    fn short_series_and_limits() {
        assert_eq!(mser5(&[]).cut, 0);
        assert_eq!(
            mser5(&[1.0; 9]),
            MserCut {
                cut: 0,
                batches: 1,
                at_limit: false
            }
        );
        // A steady climb never settles: the minimum sits at the limit.
        let ramp: Vec<f64> = (0..100).map(f64::from).collect();
        let m = mser(&ramp, 1);
        assert_eq!((m.cut, m.at_limit), (50, true));
        assert_eq!(mser(&ramp, 0), m, "batch size 0 is treated as 1");
    }
}
