//! Quantiles of Student's t and of the standard normal distribution, for
//! confidence intervals at any level and any number of degrees of freedom.
//!
//! Instead of a printed table, small degrees of freedom (ν ≤ 200) use the
//! exact closed forms of the two-sided t distribution function for integer ν
//! (Abramowitz & Stegun, *Handbook of Mathematical Functions*, 26.7.3 for odd
//! and 26.7.4 for even ν), inverted by bisection to full double precision.
//! Larger ν use the Cornish-Fisher expansion of t about the normal quantile
//! (A&S 26.7.5, terms to ν⁻⁴), whose truncation error there is below 10⁻⁹.

use core::f64::consts::{FRAC_2_PI, FRAC_PI_2};

/// Above this many degrees of freedom the Cornish-Fisher expansion is used.
const EXACT_MAX_DF: u64 = 200;

/// The two-sided probability A(t | ν) = P(|T| ≤ t) as a function of
/// θ = atan(t / √ν) (A&S 26.7.3 for odd ν, 26.7.4 for even ν).
fn two_sided_cdf(theta: f64, df: u64) -> f64 {
    let (sin, cos) = theta.sin_cos();
    let c2 = cos * cos;
    if df % 2 == 1 {
        // (2/π)·(θ + sin θ·(cos θ + (2/3)cos³θ + … + (2·4…(ν−3))/(1·3…(ν−2)) cos^(ν−2) θ))
        let mut term = cos;
        let mut sum = 0.0;
        for k in 1..=(df - 1) / 2 {
            if k > 1 {
                term *= c2 * (2 * (k - 1)) as f64 / (2 * k - 1) as f64;
            }
            sum += term;
        }
        FRAC_2_PI * (theta + sin * sum)
    } else {
        // sin θ·(1 + (1/2)cos²θ + (1·3)/(2·4)cos⁴θ + … + (1·3…(ν−3))/(2·4…(ν−2)) cos^(ν−2) θ)
        let mut term = 1.0;
        let mut sum = 1.0;
        for k in 1..=(df - 2) / 2 {
            term *= c2 * (2 * k - 1) as f64 / (2 * k) as f64;
            sum += term;
        }
        sin * sum
    }
}

/// The upper-tail probability Q(z) = P(Z > z) of the standard normal, for
/// z ≥ 0: the power series of the integral (A&S 26.2.10) below 3, the
/// continued fraction for Mills' ratio (A&S 26.2.14) above.
fn normal_upper_tail(z: f64) -> f64 {
    let density = (-0.5 * z * z).exp() / (2.0 * core::f64::consts::PI).sqrt();
    if z < 3.0 {
        let (mut term, mut sum, mut k) = (z, z, 0u32);
        while term > 1e-17 * sum {
            term *= z * z / f64::from(2 * k + 3);
            sum += term;
            k += 1;
        }
        0.5 - density * sum
    } else {
        // Q(z) = φ(z) / (z + 1/(z + 2/(z + 3/(z + …)))), evaluated backwards.
        let tail = (1..=300).rev().fold(z, |acc, k| z + f64::from(k) / acc);
        density / tail
    }
}

/// The standard normal quantile z(p), so that P(Z ≤ z(p)) = p. NaN outside
/// [0, 1]; ±∞ at the ends. Accurate to about 10⁻¹⁴ (Newton iteration on the
/// distribution function from the A&S 26.2.23 starting value).
pub fn normal_quantile(p: f64) -> f64 {
    symmetric_quantile(p, |q| {
        let s = (-2.0 * q.ln()).sqrt();
        let mut z = s
            - (2.515_517 + 0.802_853 * s + 0.010_328 * s * s)
                / (1.0 + 1.432_788 * s + 0.189_269 * s * s + 0.001_308 * s * s * s);
        for _ in 0..50 {
            let density = (-0.5 * z * z).exp() / (2.0 * core::f64::consts::PI).sqrt();
            let step = (normal_upper_tail(z) - q) / density;
            z += step;
            if step.abs() <= 1e-15 * z.abs() {
                break;
            }
        }
        z
    })
}

/// The quantile at `p` of a distribution symmetric about 0: NaN outside
/// [0, 1], 0 at ½, ±∞ at the ends, otherwise `upper(q)` for the smaller tail
/// probability q = min(p, 1 − p) in (0, ½), negated below the median.
fn symmetric_quantile(p: f64, upper: impl FnOnce(f64) -> f64) -> f64 {
    if !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.5 {
        return 0.0;
    }
    let q = p.min(1.0 - p);
    let x = if q == 0.0 { f64::INFINITY } else { upper(q) };
    if p < 0.5 {
        -x
    } else {
        x
    }
}

/// The quantile t(p; ν) of Student's t distribution with `df` degrees of
/// freedom: P(T ≤ t) = p. NaN for `df == 0` or `p` outside [0, 1]; ±∞ at
/// the ends. For example `t_quantile(0.975, 10)` ≈ 2.228.
pub fn t_quantile(p: f64, df: u64) -> f64 {
    if df == 0 {
        return f64::NAN;
    }
    symmetric_quantile(p, |q| {
        if df <= EXACT_MAX_DF {
            exact_upper(q, df)
        } else {
            cornish_fisher_upper(q, df)
        }
    })
}

/// t > 0 with P(T > t) = q, by bisection of A(θ | ν) = 1 − 2q over θ.
fn exact_upper(q: f64, df: u64) -> f64 {
    let target = 1.0 - 2.0 * q;
    let (mut lo, mut hi) = (0.0, FRAC_PI_2);
    loop {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if two_sided_cdf(mid, df) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (df as f64).sqrt() * (0.5 * (lo + hi)).tan()
}

/// t > 0 with P(T > t) = q by the Cornish-Fisher expansion (A&S 26.7.5).
fn cornish_fisher_upper(q: f64, df: u64) -> f64 {
    let z = normal_quantile(1.0 - q);
    let nu = df as f64;
    let z2 = z * z;
    let g1 = z * (z2 + 1.0) / 4.0;
    let g2 = z * ((5.0 * z2 + 16.0) * z2 + 3.0) / 96.0;
    let g3 = z * (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / 384.0;
    let g4 = z * ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) / 92160.0;
    z + (g1 + (g2 + (g3 + g4 / nu) / nu) / nu) / nu
}

/// The critical value of a two-sided interval at confidence `level` (e.g.
/// 0.95) with `df` degrees of freedom: t(1 − (1 − level)/2; ν).
pub fn t_critical(level: f64, df: u64) -> f64 {
    t_quantile(0.5 + 0.5 * level, df)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round3(x: f64) -> f64 {
        (x * 1000.0).round() / 1000.0
    }

    #[test]
    fn t_975_matches_the_tables() {
        for (df, t) in [
            (1, 12.706),
            (2, 4.303),
            (3, 3.182),
            (4, 2.776),
            (5, 2.571),
            (10, 2.228),
            (19, 2.093),
            (20, 2.086),
            (30, 2.042),
            (60, 2.000),
            (120, 1.980),
            (1000, 1.962),
        ] {
            assert_eq!(round3(t_critical(0.95, df)), t, "df = {df}");
        }
        assert_eq!(round3(normal_quantile(0.975)), 1.960);
        assert_eq!(round3(t_critical(0.95, u64::MAX)), 1.960);
    }

    #[test]
    fn t_90_and_99_match_the_tables() {
        for (df, t90, t99) in [
            (1, 6.314, 63.657),
            (2, 2.920, 9.925),
            (5, 2.015, 4.032),
            (10, 1.812, 3.169),
            (30, 1.697, 2.750),
            (120, 1.658, 2.617),
        ] {
            assert_eq!(round3(t_critical(0.90, df)), t90, "90%, df = {df}");
            assert_eq!(round3(t_critical(0.99, df)), t99, "99%, df = {df}");
        }
        assert_eq!(round3(normal_quantile(0.95)), 1.645);
        assert_eq!(round3(normal_quantile(0.995)), 2.576);
    }

    #[test]
    fn closed_forms_for_one_and_two_degrees_of_freedom() {
        // ν = 1 is Cauchy: t = tan(π(p − 1/2)); ν = 2: t = (2p − 1)/√(2p(1 − p)).
        for p in [0.6, 0.9, 0.975, 0.999] {
            let cauchy = (core::f64::consts::PI * (p - 0.5)).tan();
            assert!((t_quantile(p, 1) - cauchy).abs() < 1e-9 * cauchy);
            let two = (2.0 * p - 1.0) / (2.0 * p * (1.0 - p)).sqrt();
            assert!((t_quantile(p, 2) - two).abs() < 1e-9 * two);
        }
    }

    #[test]
    fn expansion_joins_the_exact_inversion_seamlessly() {
        for df in [200, 201, 400, 1000] {
            for p in [0.95, 0.975, 0.995, 0.9995] {
                let exact = exact_upper(1.0 - p, df);
                let cf = cornish_fisher_upper(1.0 - p, df);
                assert!((exact - cf).abs() < 1e-9, "df {df} p {p}: {exact} vs {cf}");
            }
        }
    }

    #[test]
    fn symmetry_and_edges() {
        assert_eq!(t_quantile(0.025, 7), -t_quantile(0.975, 7));
        assert_eq!(t_quantile(0.5, 3), 0.0);
        assert!(t_quantile(0.9, 0).is_nan());
        assert!(t_quantile(1.5, 3).is_nan());
        assert_eq!(t_quantile(1.0, 3), f64::INFINITY);
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
        assert!((normal_quantile(1e-10) + 6.361_340_902_404_056).abs() < 1e-9);
        assert!((normal_quantile(0.3) + 0.524_400_512_708_041).abs() < 1e-12);
    }
}
