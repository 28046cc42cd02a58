//! The reproduction of Bux, Kümmerle and Truong (1982) as report
//! sections: Figs. 2-11 from the built-in experiment files, with checks
//! of the paper's statements.

use super::arm::arm_like_abm;
use super::replicate::Estimate;
use super::rnr::rnr_recovery;
use super::throughput::{CaseCurves, ThroughputExperiment};
use super::BuxError;
use crate::builtin;
use crate::report::{Check, Output, Paper, Progress, RunOptions, Section};
use crate::{check_note, section_text};

mod delay;

pub use delay::{transfer_time, transfer_time_vs_t_p};

const PAPER: Paper = Paper::Bux1982;

/// Every section of the reproduction, in the paper's order.
pub fn sections(opts: &RunOptions, progress: &dyn Progress) -> Result<Vec<Section>, BuxError> {
    Ok(vec![
        throughput_one_way(opts, progress)?,
        throughput_two_way(opts, progress)?,
        transfer_time(opts, progress)?,
        transfer_time_vs_t_p(opts, progress)?,
    ])
}

/// A above B: A's interval lies wholly above B's.
fn above(a: Estimate, b: Estimate) -> bool {
    a.lower() > b.upper()
}

/// A not below B: A's interval reaches B's, or the two means agree to
/// 0.5% (error-free points are deterministic: zero-width intervals).
fn not_below(a: Estimate, b: Estimate) -> bool {
    a.upper() >= b.lower() || a.mean >= b.mean * (1.0 - EQUAL)
}

/// Means this close (relative) count as equal.
const EQUAL: f64 = 0.005;

fn cases<'a>(
    figures: &'a std::collections::BTreeMap<String, Vec<CaseCurves>>,
    id: &str,
) -> Result<&'a [CaseCurves], BuxError> {
    figures
        .get(id)
        .map(Vec::as_slice)
        .ok_or(BuxError::NoEstimate {
            what: "figure of the built-in experiment",
        })
}

/// The length at which a curve peaks.
fn peak(curve: &[(u32, Estimate)]) -> u32 {
    curve
        .iter()
        .max_by(|a, b| a.1.mean.total_cmp(&b.1.mean))
        .map_or(0, |(l, _)| *l)
}

/// Points where NRM (the given curves) lies above ABM beyond its interval.
fn nrm_above_abm(
    c: &CaseCurves,
    curves: &[&[(u32, Estimate)]],
    skip: impl Fn(u32) -> bool,
) -> Vec<String> {
    let mut out = Vec::new();
    for curve in curves {
        for &(l, nrm) in curve.iter() {
            if skip(l) {
                continue;
            }
            if let Some(abm) = CaseCurves::at(&c.abm, l) {
                if !not_below(abm, nrm) {
                    out.push(format!("l = {l}: ABM {} < NRM {}", abm.show(), nrm.show()));
                }
            }
        }
    }
    out
}

/// The smallest ratio ABM/NRM over the compared points, shown.
fn least_margin(pairs: impl Iterator<Item = (u32, Estimate, Estimate)>) -> String {
    pairs
        .map(|(l, abm, nrm)| (abm.mean / nrm.mean, l))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map_or("no points".into(), |(r, l)| {
            format!("smallest ABM/NRM ratio {r:.3} at l = {l} bit")
        })
}

/// The precision sentence of a section: widest interval and the points
/// the sequential procedure left wider than ±2%.
fn widest(curves: impl Iterator<Item = Estimate>) -> String {
    let relative: Vec<f64> = curves.map(Estimate::relative).collect();
    let wide = relative.iter().copied().fold(0.0, f64::max);
    let over = relative.iter().filter(|r| **r > PRECISION).count();
    section_text!(
        "bux1982/precision",
        widest = format!("{:.1}", 100.0 * wide),
        over = over,
        points = relative.len(),
    )
}

/// The precision sentence of a throughput section, over every point of
/// every curve of `cases`.
fn precision<'a>(cases: impl Iterator<Item = &'a CaseCurves>) -> String {
    widest(cases.flat_map(|c| estimates([&c.nrm_primary, &c.nrm_secondary, &c.abm])))
}

/// Every estimate of three curves (NRM primary to secondary, secondary to
/// primary, ABM).
fn estimates<'a, X: 'a>(curves: [&'a [(X, Estimate)]; 3]) -> impl Iterator<Item = Estimate> + 'a {
    curves.into_iter().flatten().map(|p| p.1)
}

/// A section of `output`'s tables and figures.
fn section(heading: &str, text: String, output: Output, checks: Vec<Check>) -> Section {
    Section {
        heading: heading.into(),
        text,
        tables: output.tables,
        figures: output.figures,
        checks,
    }
}

/// `quick` in a quick run, `full` otherwise.
fn quick_or<T>(opts: &RunOptions, quick: T, full: T) -> T {
    if opts.quick {
        quick
    } else {
        full
    }
}

/// The relative precision sought for every interval.
const PRECISION: f64 = 0.02;

fn verdict(failures: &[String]) -> String {
    if failures.is_empty() {
        "holds at every point".into()
    } else {
        failures.join("; ")
    }
}

/// Figs. 2 and 3: maximum throughput in one-way flow.
pub fn throughput_one_way(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, BuxError> {
    let experiment = ThroughputExperiment::from_toml(builtin::BUX_THROUGHPUT_ONE_WAY)?;
    let results = experiment.measure(opts, progress)?;
    let fig2 = cases(&results.figures, "bux-fig2")?;
    let fig3 = cases(&results.figures, "bux-fig3")?;
    let mut checks = Vec::new();

    // ABM at least NRM: everywhere for S→P, and left of the optimum for
    // P→S (the paper's own Fig. 2 text has P→S above ABM to the right).
    let mut failures = Vec::new();
    for c in fig2.iter().chain(fig3) {
        let top = peak(&c.abm);
        failures.extend(nrm_above_abm(c, &[&c.nrm_secondary], |_| false));
        failures.extend(nrm_above_abm(c, &[&c.nrm_primary], |l| l > top));
    }
    checks.push(
        Check::qualitative(
            "bux1982/fig2-3/abm-at-least-nrm",
            PAPER,
            "One-way flow: ABM throughput at least NRM's within the 95% interval (secondary to \
                primary everywhere; primary to secondary up to the optimum)",
            "ABM performs better than, or at least as well as NRM (conclusion 1); right of the \
                optimum the primary-to-secondary direction is above ABM (3.1.2)",
            verdict(&failures),
            failures.is_empty(),
        )
        .with_note(check_note!("bux1982/fig2-3/abm-at-least-nrm")),
    );

    // Right of the maximum (48 kbit/s, modulo 8).
    let c = &fig2[1];
    let longest = c.abm.last().map_or(0, |(l, _)| *l);
    let at = |curve: &[(u32, Estimate)]| CaseCurves::at(curve, longest);
    if let (Some(p), Some(s), Some(a)) = (at(&c.nrm_primary), at(&c.nrm_secondary), at(&c.abm)) {
        let pass = above(p, s) && (a.mean / s.mean - 1.0).abs() <= 0.06;
        checks.push(
            Check::qualitative(
                "bux1982/fig2/right-of-maximum",
                PAPER,
                format!(
                    "Fig. 2, v = 48 kbit/s, longest message ({longest} bit): \
                primary-to-secondary above secondary-to-primary, ABM about equal to \
                secondary-to-primary"
                ),
                "right of the maximum the direction primary to secondary shows higher throughput \
                than the reverse direction; ABM almost equal to NRM secondary to primary",
                format!("P→S {}, S→P {}, ABM {}", p.show(), s.show(), a.show()),
                pass,
            )
            .with_note(check_note!("bux1982/fig2/right-of-maximum")),
        );
    }

    // Left of the maximum (48 kbit/s, modulo 8): S→P ≥ P→S, ABM ≥ both.
    let top = peak(&c.abm);
    let mut failures = Vec::new();
    for &(l, s) in c.nrm_secondary.iter().filter(|(l, _)| *l < top) {
        let p = CaseCurves::at(&c.nrm_primary, l);
        let a = CaseCurves::at(&c.abm, l);
        if let (Some(p), Some(a)) = (p, a) {
            if !not_below(s, p) || !not_below(a, s) {
                failures.push(format!(
                    "l = {l}: P→S {}, S→P {}, ABM {}",
                    p.show(),
                    s.show(),
                    a.show()
                ));
            }
        }
    }
    let compared = c
        .nrm_secondary
        .iter()
        .filter(|(l, _)| *l < top)
        .filter_map(|&(l, s)| {
            Some(format!(
                "l = {l}: P→S {:.4}, S→P {:.4}, ABM {:.4}",
                CaseCurves::at(&c.nrm_primary, l)?.mean,
                s.mean,
                CaseCurves::at(&c.abm, l)?.mean
            ))
        })
        .collect::<Vec<_>>()
        .join("; ");
    checks.push(
        Check::qualitative(
            "bux1982/fig2/left-of-maximum",
            PAPER,
            format!(
                "Fig. 2, v = 48 kbit/s, messages shorter than the optimum ({top} bit): \
            secondary-to-primary at least primary-to-secondary, ABM at least both"
            ),
            "to the left of the maximum the throughput from secondary to primary is constantly \
            higher; ABM equal or superior to both directions of NRM",
            verdict(&failures),
            failures.is_empty(),
        )
        .with_note(check_note!(
            "bux1982/fig2/left-of-maximum",
            top = top,
            compared = compared,
        )),
    );

    // The transmission rate (modulus rule): 4.8 kbit/s more efficient for
    // short messages.
    if let (Some(slow), Some(fast)) = (fig2[0].abm.first(), fig2[1].abm.first()) {
        checks.push(Check::qualitative(
            "bux1982/fig2/transmission-rate",
            PAPER,
            format!("Fig. 2, shortest message ({} bit): ABM throughput at 4.8 kbit/s above 48 \
                kbit/s", slow.0),
            "the 48 kbit/s link reaches the limit of 7 unacknowledged I frames more often: lower \
                efficiency for short messages",
            format!("4.8 kbit/s {}, 48 kbit/s {}", slow.1.show(), fast.1.show()),
            above(slow.1, fast.1),
        ).with_note(check_note!(
            "bux1982/fig2/transmission-rate",
            frame_bits = slow.0 + 40,
            bound_slow = format!("{:.3}", fig2[0].bound.first().map_or(f64::NAN, |b| b.1)),
            bound_fast = format!("{:.3}", fig2[1].bound.first().map_or(f64::NAN, |b| b.1)),
        )));
    }

    // Fig. 3: the modulo-128 collapse of NRM secondary to primary.
    let (m8, m128) = (&fig3[0], &fig3[1]);
    let mut failures = Vec::new();
    for &(l, s128) in &m128.nrm_secondary {
        if let Some(s8) = CaseCurves::at(&m8.nrm_secondary, l) {
            let collapsed = above(s8, s128) && s128.mean < 0.95 * s8.mean;
            if (l > 3000) != collapsed {
                failures.push(format!(
                    "l = {l}: modulo 128 {}, modulo 8 {}",
                    s128.show(),
                    s8.show()
                ));
            }
        }
        if let (Some(a8), Some(a128)) = (CaseCurves::at(&m8.abm, l), CaseCurves::at(&m128.abm, l)) {
            if l > 3000 && !not_below(a128, a8) {
                failures.push(format!(
                    "l = {l}: ABM modulo 128 {} below modulo 8 {}",
                    a128.show(),
                    a8.show()
                ));
            }
        }
    }
    checks.push(
        Check::qualitative(
            "bux1982/fig3/nrm-modulo-128-collapse",
            PAPER,
            "Fig. 3: NRM secondary-to-primary throughput with modulo 128 falls clearly (more \
                than 5%, beyond the intervals) below modulo 8 exactly for messages above about \
                3000 bits; ABM does not",
            "for message lengths greater than 3000 bits the throughput from secondary to primary \
                shows a dramatic degradation for the modulo-128 case; ABM does not show this \
                effect",
            verdict(&failures),
            failures.is_empty(),
        )
        .with_note(check_note!("bux1982/fig3/nrm-modulo-128-collapse")),
    );
    if let (Some(a8), Some(a128)) = (m8.abm.first(), m128.abm.first()) {
        checks.push(Check::qualitative(
            "bux1982/fig3/modulo-128-short-messages",
            PAPER,
            format!("Fig. 3, shortest message ({} bit): modulo 128 at least doubles ABM \
                throughput", a8.0),
            "for short message lengths, throughput efficiency can be significantly improved by \
                modulo 128",
            format!("modulo 8 {}, modulo 128 {}", a8.1.show(), a128.1.show()),
            a128.1.lower() > 2.0 * a8.1.upper(),
        ).with_note(check_note!(
            "bux1982/fig3/modulo-128-short-messages",
            ratio = format!("{:.2}", a128.1.mean / a8.1.mean),
            bound_8 = format!("{:.3}", m8.bound.first().map_or(f64::NAN, |b| b.1)),
            bound_128 = format!("{:.3}", m128.bound.first().map_or(f64::NAN, |b| b.1)),
        )));
    }
    let wide = precision(fig2.iter().chain(fig3));
    let reps = quick_or(opts, experiment.quick_replications, experiment.replications);
    let text = section_text!("bux1982/figs-2-3", precision = wide, reps = reps);
    Ok(section(
        "Figs. 2-3: maximum throughput, one-way flow",
        text,
        results.output,
        checks,
    ))
}

/// Figs. 4-6: maximum throughput in two-way flow.
pub fn throughput_two_way(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, BuxError> {
    let two_way = ThroughputExperiment::from_toml(builtin::BUX_THROUGHPUT_TWO_WAY)?;
    let constant = two_way.measure(opts, progress)?;
    let exponential = ThroughputExperiment::from_toml(builtin::BUX_THROUGHPUT_EXPONENTIAL)?
        .measure(opts, progress)?;
    let fig4 = cases(&constant.figures, "bux-fig4")?;
    let fig6 = cases(&constant.figures, "bux-fig6")?;
    let fig5 = cases(&exponential.figures, "bux-fig5")?;
    let mut checks = Vec::new();
    let mut failures = Vec::new();
    for c in fig4.iter().chain(fig5).chain(fig6) {
        failures.extend(nrm_above_abm(
            c,
            &[&c.nrm_primary, &c.nrm_secondary],
            |_| false,
        ));
    }
    let margin = least_margin(fig4.iter().chain(fig5).chain(fig6).flat_map(|c| {
        c.nrm_primary
            .iter()
            .chain(&c.nrm_secondary)
            .filter_map(move |&(l, n)| Some((l, CaseCurves::at(&c.abm, l)?, n)))
    }));
    checks.push(
        Check::qualitative(
            "bux1982/fig4-6/abm-at-least-nrm",
            PAPER,
            "Two-way flow (Figs. 4-6): ABM throughput at least NRM's, both directions, within the \
            95% interval",
            "ABM performs better than, or at least as well as NRM (conclusion 1)",
            verdict(&failures),
            failures.is_empty(),
        )
        .with_note(check_note!(
            "bux1982/fig4-6/abm-at-least-nrm",
            margin = margin,
        )),
    );
    let (m8, m128) = (&fig4[0], &fig4[1]);
    let mut failures = Vec::new();
    for &(l, a8) in m8.abm.iter().filter(|(l, _)| *l > 3000) {
        for (name, c8, c128) in [
            ("P→S", &m8.nrm_primary, &m128.nrm_primary),
            ("S→P", &m8.nrm_secondary, &m128.nrm_secondary),
        ] {
            if let (Some(x8), Some(x128)) = (CaseCurves::at(c8, l), CaseCurves::at(c128, l)) {
                if !(above(x8, x128) || x128.mean < 0.8 * x8.mean) {
                    failures.push(format!(
                        "l = {l} {name}: modulo 128 {} vs modulo 8 {}",
                        x128.show(),
                        x8.show()
                    ));
                }
            }
        }
        let _ = a8;
    }
    let longest = m128.abm.last().map_or(0, |(l, _)| *l);
    if let (Some(p), Some(s)) = (
        CaseCurves::at(&m128.nrm_primary, longest),
        CaseCurves::at(&m128.nrm_secondary, longest),
    ) {
        if p.mean > s.mean {
            failures.push(format!(
                "l = {longest}: P→S {} not below S→P {}",
                p.show(),
                s.show()
            ));
        }
    }
    checks.push(
        Check::qualitative(
            "bux1982/fig4/nrm-modulo-128-collapse",
            PAPER,
            "Fig. 4: with modulo 128, both NRM directions fall below modulo 8 for messages above \
            3000 bits (beyond the intervals, or by more than 20%), primary to secondary the \
            lower at the longest message",
            "the direction secondary to primary exhibits rapid throughput degradation for longer \
            messages with modulo 128; the direction from primary to secondary exhibits an even \
            worse behavior",
            verdict(&failures),
            failures.is_empty(),
        )
        .with_note(check_note!("bux1982/fig4/nrm-modulo-128-collapse")),
    );
    let short = m8.abm.first().map_or(0, |(l, _)| *l);
    if let (Some(p), Some(s), Some(a)) = (
        CaseCurves::at(&m8.nrm_primary, short),
        CaseCurves::at(&m8.nrm_secondary, short),
        CaseCurves::at(&m8.abm, short),
    ) {
        checks.push(Check::qualitative(
            "bux1982/fig4/modulo-8-short-messages",
            PAPER,
            format!("Fig. 4, modulo 8, {short}-bit messages: both NRM directions within 10% of \
                each other, ABM above both"),
            "left of the maximum both directions under NRM are almost equivalent; with modulus 8 \
                there is still a difference between ABM and NRM",
            format!("P→S {}, S→P {}, ABM {}", p.show(), s.show(), a.show()),
            (p.mean / s.mean - 1.0).abs() <= 0.10 && above(a, p) && above(a, s),
        ).with_note(check_note!(
            "bux1982/fig4/modulo-8-short-messages",
            p_over_s = format!("{:.3}", p.mean / s.mean),
            abm_over_p = format!("{:.3}", a.mean / p.mean),
            abm_over_s = format!("{:.3}", a.mean / s.mean),
        )));
    }
    let mut failures = Vec::new();
    for (c, e) in fig4.iter().zip(fig5) {
        let l = 2048;
        if let (Some(k), Some(x)) = (CaseCurves::at(&c.abm, l), CaseCurves::at(&e.abm, l)) {
            if !above(k, x) {
                failures.push(format!(
                    "l = {l}: exponential {} vs constant {}",
                    x.show(),
                    k.show()
                ));
            }
        }
    }
    let comparison = fig4
        .iter()
        .zip(fig5)
        .filter_map(|(c, e)| {
            Some(format!(
                "Constant {:.4}, exponential {:.4} (ratio {:.3}).",
                CaseCurves::at(&c.abm, 2048)?.mean,
                CaseCurves::at(&e.abm, 2048)?.mean,
                CaseCurves::at(&e.abm, 2048)?.mean / CaseCurves::at(&c.abm, 2048)?.mean
            ))
        })
        .collect::<Vec<_>>()
        .join(" ");
    checks.push(
        Check::qualitative(
            "bux1982/fig5/exponential-lengths-lower",
            PAPER,
            "Fig. 5 against Fig. 4: ABM throughput with exponentially distributed lengths below \
            constant lengths at l = 2048 bits (near the optimum, where errors and the modulus \
            both act), both moduli",
            "both effects, modulus value and transmission errors, lead to stronger degradation if \
            message lengths are not constant",
            verdict(&failures),
            failures.is_empty(),
        )
        .with_note(check_note!(
            "bux1982/fig5/exponential-lengths-lower",
            comparison = comparison,
        )),
    );
    if let (Some(a8), Some(a128)) = (fig6[0].abm.first(), fig6[1].abm.first()) {
        checks.push(
            Check::qualitative(
                "bux1982/fig6/modulo-128-satellite",
                PAPER,
                format!(
                    "Fig. 6, satellite link, {}-bit messages: modulo 128 at least doubles ABM \
                throughput",
                    a8.0
                ),
                "the use of a modulo-128 numbering scheme drastically improves the throughput \
                efficiency for short I frames",
                format!("modulo 8 {}, modulo 128 {}", a8.1.show(), a128.1.show()),
                a128.1.lower() > 2.0 * a8.1.upper(),
            )
            .with_note(check_note!(
                "bux1982/fig6/modulo-128-satellite",
                ratio = format!("{:.2}", a128.1.mean / a8.1.mean),
                bound_8 = format!("{:.3}", fig6[0].bound.first().map_or(f64::NAN, |b| b.1)),
                bound_128 = format!("{:.3}", fig6[1].bound.first().map_or(f64::NAN, |b| b.1)),
            )),
        );
    }
    let wide = precision(fig4.iter().chain(fig5).chain(fig6));
    let (arm_table, arm_check) = arm_like_abm(&two_way, &constant.figures, opts, progress)?;
    checks.push(arm_check);
    let rnr = rnr_recovery(&two_way, &constant.figures, opts, progress)?;
    checks.extend(rnr.checks);
    let mut tables = constant.output.tables;
    tables.extend(exponential.output.tables);
    tables.push(arm_table);
    tables.push(rnr.table);
    let mut figures = constant.output.figures;
    figures.extend(exponential.output.figures);
    figures.extend(rnr.figures);
    figures.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(Section {
        heading: "Figs. 4-6: maximum throughput, two-way flow".into(),
        text: section_text!("bux1982/figs-4-6", precision = wide),
        tables,
        figures,
        checks,
    })
}
