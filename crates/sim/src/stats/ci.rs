//! Confidence intervals for a mean from independent observations, as used
//! with the method of independent replications (Law & Kelton, *Simulation
//! Modeling and Analysis*, "replication/deletion approach").

use core::fmt;

use super::student_t::t_critical;
use super::tally::Tally;

/// A two-sided Student-t confidence interval mean ± half-width, computed
/// from `n` independent, identically distributed estimates (one per
/// replication, after warm-up deletion). Following Bux et al. (1982), a
/// simulation figure is always reported together with its interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ConfidenceInterval {
    /// The sample mean of the `n` estimates.
    pub mean: f64,
    /// t(1 − α/2; n − 1) · s / √n.
    pub half_width: f64,
    /// `half_width / |mean|`: the relative precision γ of Law & Kelton
    /// (∞ when the mean is 0).
    pub relative_precision: f64,
    /// Number of estimates (replications).
    pub n: u64,
    /// Confidence level 1 − α, e.g. 0.95.
    pub level: f64,
}

impl ConfidenceInterval {
    /// The interval at `level` (e.g. 0.95) from independent estimates;
    /// `None` with fewer than two estimates or a level outside (0, 1).
    pub fn from_samples(samples: &[f64], level: f64) -> Option<Self> {
        let tally: Tally = samples.iter().copied().collect();
        Self::from_tally(&tally, level)
    }

    /// The interval at `level` from a [`Tally`] of independent estimates;
    /// `None` with fewer than two estimates or a level outside (0, 1).
    pub fn from_tally(tally: &Tally, level: f64) -> Option<Self> {
        if !(level > 0.0 && level < 1.0) {
            return None;
        }
        let n = tally.count();
        let mean = tally.mean()?;
        let s = tally.std_dev()?;
        let half_width = t_critical(level, n - 1) * s / (n as f64).sqrt();
        let relative_precision = if mean == 0.0 {
            f64::INFINITY
        } else {
            half_width / mean.abs()
        };
        Some(ConfidenceInterval {
            mean,
            half_width,
            relative_precision,
            n,
            level,
        })
    }

    /// Lower end, mean − half-width.
    pub fn lower(&self) -> f64 {
        self.mean - self.half_width
    }

    /// Upper end, mean + half-width.
    pub fn upper(&self) -> f64 {
        self.mean + self.half_width
    }

    /// Whether `x` lies in the closed interval.
    pub fn contains(&self, x: f64) -> bool {
        self.lower() <= x && x <= self.upper()
    }
}

impl fmt::Display for ConfidenceInterval {
    /// E.g. `4.02 ± 0.131 (95% CI, n = 20, relative precision 3.3%)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:.4} ± {:.4} ({}% CI, n = {}, relative precision {:.1}%)",
            self.mean,
            self.half_width,
            self.level * 100.0,
            self.n,
            self.relative_precision * 100.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_interval() {
        // Ten estimates with mean 5.5 and s² = 55/6: half-width
        // t(0.975; 9) · s/√10 = 2.262157 · 0.957427 = 2.165858.
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        let ci = ConfidenceInterval::from_samples(&xs, 0.95).unwrap();
        assert_eq!(ci.mean, 5.5);
        assert_eq!(ci.n, 10);
        assert!(
            (ci.half_width - 2.165_858).abs() < 1e-5,
            "{}",
            ci.half_width
        );
        assert!((ci.relative_precision - 2.165_858 / 5.5).abs() < 1e-5);
        assert!(ci.contains(4.0) && !ci.contains(7.7));
        assert_eq!(
            ci.to_string(),
            "5.5000 ± 2.1659 (95% CI, n = 10, relative precision 39.4%)"
        );
    }

    #[test]
    fn degenerate_inputs() {
        assert!(ConfidenceInterval::from_samples(&[], 0.95).is_none());
        assert!(ConfidenceInterval::from_samples(&[1.0], 0.95).is_none());
        assert!(ConfidenceInterval::from_samples(&[1.0, 2.0], 1.0).is_none());
        assert!(ConfidenceInterval::from_samples(&[1.0, 2.0], f64::NAN).is_none());
        let zero = ConfidenceInterval::from_samples(&[-1.0, 1.0], 0.9).unwrap();
        assert_eq!(zero.relative_precision, f64::INFINITY);
        let flat = ConfidenceInterval::from_samples(&[3.0, 3.0, 3.0], 0.99).unwrap();
        assert_eq!((flat.half_width, flat.relative_precision), (0.0, 0.0));
    }
}
