//! The reproduction of Bux, Kümmerle and Truong (1982) as report
//! sections: Figs. 2-11 from the built-in experiment files, with checks
//! of the paper's statements.

use super::arm::arm_like_abm;
use super::delay::{Curve, DelayCurves, TransferTimeExperiment};
use super::model::{md1_transfer_s, nrm_secondary_transfer_s};
use super::replicate::Estimate;
use super::rnr::rnr_recovery;
use super::throughput::{CaseCurves, ThroughputExperiment};
use super::BuxError;
use crate::builtin;
use crate::report::{Check, Paper, Progress, RunOptions, Section};
use crate::{check_note, section_text};

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
    let wide = widest(fig2.iter().chain(fig3).flat_map(|c| {
        c.nrm_primary
            .iter()
            .chain(&c.nrm_secondary)
            .chain(&c.abm)
            .map(|p| p.1)
    }));
    Ok(Section {
        heading: "Figs. 2-3: maximum throughput, one-way flow".into(),
        text: section_text!(
            "bux1982/figs-2-3",
            precision = wide,
            reps = if opts.quick {
                experiment.quick_replications
            } else {
                experiment.replications
            },
        ),
        tables: results.output.tables,
        figures: results.output.figures,
        checks,
    })
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
    let wide = widest(fig4.iter().chain(fig5).chain(fig6).flat_map(|c| {
        c.nrm_primary
            .iter()
            .chain(&c.nrm_secondary)
            .chain(&c.abm)
            .map(|p| p.1)
    }));
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

fn delay_fig<'a>(
    figures: &'a std::collections::BTreeMap<String, Vec<DelayCurves>>,
    id: &str,
    p_bit: f64,
) -> Result<&'a DelayCurves, BuxError> {
    figures
        .get(id)
        .and_then(|v| v.iter().find(|c| c.p_bit == p_bit))
        .ok_or(BuxError::NoEstimate {
            what: "figure of the built-in experiment",
        })
}

fn at_x(curve: &Curve, x: f64) -> Option<Estimate> {
    curve
        .iter()
        .find(|(px, _)| (px - x).abs() < 1e-9)
        .map(|(_, e)| *e)
}

/// Figs. 7-9 and 11: mean transfer and buffer-holding time against load.
pub fn transfer_time(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, BuxError> {
    let experiment = TransferTimeExperiment::from_toml(builtin::BUX_TRANSFER_TIME)?;
    let results = experiment.measure(opts, progress)?;
    let f = &results.figures;
    let (v, t_p) = (48_000.0, 0.05);
    let mut checks = Vec::new();

    // Error-free ABM against M/D/1 (Fig. 7; Fig. 9 up to 0.3).
    for (id, l, max_load) in [("bux-fig7", 5000.0, 1.0), ("bux-fig9", 800.0, 0.3)] {
        let c = delay_fig(f, id, 0.0)?;
        let i_frame = (l + 40.0) / v;
        let mut failures = Vec::new();
        for &(load, e) in c.abm.iter().filter(|(x, _)| *x <= max_load + 1e-9) {
            if let Some(model) = md1_transfer_s(load, l, 40.0, v, t_p) {
                let model = model / i_frame;
                if (e.mean - model).abs() > e.half_width {
                    failures.push(format!(
                        "Y_u = {load}: ABM {} vs M/D/1 {model:.4}",
                        e.show()
                    ));
                }
            }
        }
        checks.push(Check::qualitative(
            format!("bux1982/{}/abm-md1", id.trim_start_matches("bux-")),
            PAPER,
            format!(
                "{}: error-free ABM mean transfer time equals the M/D/1 formula within the \
                95% interval (loads up to {max_load})",
                if id == "bux-fig7" {
                    "Fig. 7, 5000 bits"
                } else {
                    "Fig. 9, 800 bits"
                }
            ),
            "the queueing delay for the ABM link is that of a simple M/D/1 queue (Fig. 9: up to \
                loads of about 0.4)",
            verdict(&failures),
            failures.is_empty(),
        ).with_note(check_note!("bux1982/*/abm-md1")));
    }

    // The NRM secondary-to-primary extra delay, light load.
    let c7 = delay_fig(f, "bux-fig7", 0.0)?;
    let i_frame7 = 5040.0 / v;
    if let (Some(s), Some(a)) = (c7.nrm_secondary.first(), c7.abm.first()) {
        let extra_ms = (s.1.mean - a.1.mean) * i_frame7 * 1e3;
        let extra_hw_ms = (s.1.half_width + a.1.half_width) * i_frame7 * 1e3;
        let t_p_ms = t_p * 1e3;
        let model_ms = nrm_secondary_transfer_s(s.0, 5000.0, 40.0, v, t_p)
            .zip(md1_transfer_s(s.0, 5000.0, 40.0, v, t_p))
            .map_or(f64::NAN, |(n, m)| (n - m) * 1e3);
        checks.push(
            Check::qualitative(
                "bux1982/fig7/nrm-secondary-extra-delay",
                PAPER,
                format!(
                    "Fig. 7, error-free, Y_u = {}: NRM secondary-to-primary transfer time \
                    minus ABM's is of the order of t_p, i.e. between t_p/2 and 2 t_p ({:.0} to \
                    {:.0} ms)",
                    s.0,
                    t_p_ms / 2.0,
                    2.0 * t_p_ms
                ),
                "the secondary-to-primary direction of NRM shows an additional delay in the \
                    order of the processing plus propagation delay (conclusion 5)",
                format!(
                    "{extra_ms:.1} ± {extra_hw_ms:.1} ms = {:.2} t_p",
                    extra_ms / t_p_ms
                ),
                extra_ms - extra_hw_ms >= t_p_ms / 2.0 && extra_ms + extra_hw_ms <= 2.0 * t_p_ms,
            )
            .with_note(check_note!(
                "bux1982/fig7/nrm-secondary-extra-delay",
                model_ms = format!("{model_ms:.1}"),
            )),
        );
    }
    let mut failures = Vec::new();
    for (&(x, p), &(_, a)) in c7.nrm_primary.iter().zip(&c7.abm) {
        if (p.mean - a.mean).abs() > p.half_width + a.half_width {
            failures.push(format!("Y_u = {x}: P→S {} vs ABM {}", p.show(), a.show()));
        }
    }
    let largest = format!(
        "{:.2}",
        100.0
            * c7.nrm_primary
                .iter()
                .zip(&c7.abm)
                .map(|(p, a)| (p.1.mean / a.1.mean - 1.0).abs())
                .fold(0.0, f64::max)
    );
    checks.push(Check::qualitative(
        "bux1982/fig7/nrm-primary-equals-abm",
        PAPER,
        "Fig. 7, error-free: NRM primary-to-secondary transfer time equals ABM's within the \
            intervals",
        "in the error-free case, ABM and the direction from primary to secondary of the NRM link \
            show the same delay values",
        verdict(&failures),
        failures.is_empty(),
    ).with_note(check_note!(
        "bux1982/fig7/nrm-primary-equals-abm",
        largest = largest,
    )));
    let e7 = delay_fig(f, "bux-fig7", 1e-5)?;
    let mut failures = Vec::new();
    for (&(x, p), &(_, a)) in e7
        .nrm_primary
        .iter()
        .zip(&e7.abm)
        .filter(|(p, _)| p.0 <= 0.3 + 1e-9)
    {
        if !above(a, p) {
            failures.push(format!("Y_u = {x}: P→S {} vs ABM {}", p.show(), a.show()));
        }
    }
    let ratios = e7
        .nrm_primary
        .iter()
        .zip(&e7.abm)
        .filter(|(p, _)| p.0 <= 0.3 + 1e-9)
        .map(|(p, a)| format!("{:.3} at {}", a.1.mean / p.1.mean, p.0))
        .collect::<Vec<_>>()
        .join(", ");
    checks.push(
        Check::qualitative(
            "bux1982/fig7/errors-nrm-primary-faster",
            PAPER,
            "Fig. 7, p_bit = 1e-5, light and medium loads (up to 0.3): NRM primary-to-secondary \
            transfer time below ABM's",
            "apart from very high loads, the direction from primary to secondary of the NRM link \
            performs slightly better than the ABM link",
            verdict(&failures),
            failures.is_empty(),
        )
        .with_note(check_note!(
            "bux1982/fig7/errors-nrm-primary-faster",
            ratios = ratios,
        )),
    );
    let c8 = delay_fig(f, "bux-fig8", 0.0)?;
    let mut failures = Vec::new();
    for &(x, e) in &c8.abm {
        if let Some(k) = at_x(&c7.abm, x) {
            if !(above(e, k) || x < 0.15) {
                failures.push(format!(
                    "Y_u = {x}: exponential {} vs constant {}",
                    e.show(),
                    k.show()
                ));
            }
        }
    }
    let ratios = c8
        .abm
        .iter()
        .filter_map(|&(x, e)| Some(format!("{:.3} at {x}", e.mean / at_x(&c7.abm, x)?.mean)))
        .collect::<Vec<_>>()
        .join(", ");
    checks.push(Check::qualitative(
        "bux1982/fig8/exponential-longer",
        PAPER,
        "Fig. 8 against Fig. 7, error-free ABM: exponential lengths give longer transfer times \
            than constant ones (loads from 0.2)",
        "this leads to longer transfer times because the queueing delay increases with the \
            variance of the transmission times",
        verdict(&failures),
        failures.is_empty(),
    ).with_note(check_note!(
        "bux1982/fig8/exponential-longer",
        ratios = ratios,
    )));
    let c9 = delay_fig(f, "bux-fig9", 0.0)?;
    let i9 = 840.0 / v;
    if let (Some(p), Some(a)) = (at_x(&c9.nrm_primary, 0.3), at_x(&c9.abm, 0.3)) {
        let model = md1_transfer_s(0.3, 800.0, 40.0, v, t_p).map_or(f64::NAN, |m| m / i9);
        checks.push(Check::qualitative(
            "bux1982/fig9/nrm-primary-leaves-md1",
            PAPER,
            "Fig. 9, error-free, Y_u = 0.3: NRM primary-to-secondary clearly above the M/D/1 \
                value while ABM is not",
            "for the direction primary to secondary the transfer delay deviates from the ideal \
                case already at a utilization of 0.2 and increases steeply beyond 0.3",
            format!("P→S {}, ABM {}, M/D/1 {model:.4}", p.show(), a.show()),
            p.lower() > model && (a.mean - model).abs() <= a.half_width.max(0.01 * model),
        ).with_note(check_note!(
            "bux1982/fig9/nrm-primary-leaves-md1",
            p_above = format!("{:.1}", 100.0 * (p.mean / model - 1.0)),
            abm_above = format!("{:+.1}", 100.0 * (a.mean / model - 1.0)),
        )));
    }
    let h = delay_fig(f, "bux-fig11", 0.0)?;
    let mut failures = Vec::new();
    for ((&(x, p), &(_, s)), &(_, a)) in h.nrm_primary.iter().zip(&h.nrm_secondary).zip(&h.abm) {
        if !(above(p, a) && above(s, a)) {
            failures.push(format!(
                "Y_u = {x}: P {} S {} ABM {}",
                p.show(),
                s.show(),
                a.show()
            ));
        }
    }
    let primary = h
        .nrm_primary
        .iter()
        .zip(&h.abm)
        .map(|(p, a)| format!("{:.2}", p.1.mean / a.1.mean))
        .collect::<Vec<_>>()
        .join(", ");
    let secondary = h
        .nrm_secondary
        .iter()
        .zip(&h.abm)
        .map(|(p, a)| format!("{:.2}", p.1.mean / a.1.mean))
        .collect::<Vec<_>>()
        .join(", ");
    checks.push(Check::qualitative(
        "bux1982/fig11/nrm-buffers-held-longer",
        PAPER,
        "Fig. 11, error-free: buffer-holding time of both NRM stations above ABM's at every load",
        "buffers have to be held considerably longer within primary and secondary stations than \
            within combined stations",
        verdict(&failures),
        failures.is_empty(),
    ).with_note(check_note!(
        "bux1982/fig11/nrm-buffers-held-longer",
        primary = primary,
        secondary = secondary,
    )));
    if let (Some(p), Some(s), Some(tp), Some(ts)) = (
        at_x(&h.nrm_primary, 0.2),
        at_x(&h.nrm_secondary, 0.2),
        at_x(&c9.nrm_primary, 0.2),
        at_x(&c9.nrm_secondary, 0.2),
    ) {
        checks.push(
            Check::relative(
                "bux1982/fig11/primary-equals-secondary",
                PAPER,
                "Fig. 11, error-free, Y_u = 0.2: NRM secondary's buffer-holding time over the \
                    primary's",
                1.0,
                s.mean / p.mean,
                "",
                0.10,
            )
            .with_paper_text("almost equal (conclusion 6)")
            .with_note(check_note!(
                "bux1982/fig11/primary-equals-secondary",
                factor = format!("{:.2}", ts.mean / tp.mean),
                p_to_s = tp.show(),
                s_to_p = ts.show(),
            )),
        );
    }
    let wide = widest(f.values().flatten().flat_map(|c| {
        c.nrm_primary
            .iter()
            .chain(&c.nrm_secondary)
            .chain(&c.abm)
            .map(|p| p.1)
    }));
    Ok(Section {
        heading: "Figs. 7-9 and 11: mean transfer and buffer-holding time vs load".into(),
        text: section_text!(
            "bux1982/figs-7-9-11",
            precision = wide,
            msgs = if opts.quick {
                experiment.quick_messages_per_replication
            } else {
                experiment.messages_per_replication
            },
        ),
        tables: results.output.tables,
        figures: results.output.figures,
        checks,
    })
}

/// Fig. 10: mean transfer time against t_p at Y_u = 0.5.
pub fn transfer_time_vs_t_p(
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<Section, BuxError> {
    let experiment = TransferTimeExperiment::from_toml(builtin::BUX_TRANSFER_TIME_TP)?;
    let results = experiment.measure(opts, progress)?;
    let c = delay_fig(&results.figures, "bux-fig10", 0.0)?;
    let (l, v) = (952.0, 48_000.0);
    let i_frame = (l + 40.0) / v;
    // Where each curve first leaves the linear (M/D/1 + t_p) growth by 5%.
    let departure = |curve: &Curve| {
        curve
            .iter()
            .find(|(x, e)| {
                md1_transfer_s(0.5, l, 40.0, v, x * i_frame)
                    .is_some_and(|m| e.lower() > 1.05 * (m / i_frame))
            })
            .map(|(x, _)| *x)
    };
    let abm_linear = c.abm.iter().take(4).all(|(x, e)| {
        md1_transfer_s(0.5, l, 40.0, v, x * i_frame)
            .is_some_and(|m| (e.mean - m / i_frame).abs() <= e.half_width)
    });
    let nrm = departure(&c.nrm_primary);
    let abm = departure(&c.abm);
    let show = |x: Option<f64>| {
        x.map_or("not within the sweep".to_string(), |x| {
            format!("t_p/T_I = {x:.2}")
        })
    };
    let differences = c
        .abm
        .iter()
        .take(4)
        .filter_map(|&(x, e)| {
            md1_transfer_s(0.5, l, 40.0, v, x * i_frame).map(|m| {
                format!(
                    "{:+.4} ± {:.4} at {x:.2}",
                    e.mean - m / i_frame,
                    e.half_width
                )
            })
        })
        .collect::<Vec<_>>()
        .join(", ");
    let checks =
        vec![
        Check::qualitative(
            "bux1982/fig10/linear-for-small-t-p",
            PAPER,
            "Fig. 10, error-free ABM: transfer time grows linearly with t_p for small t_p (equal \
                to M/D/1 + t_p within the interval at the four smallest t_p)",
            "for small values of the processing plus propagation delay, the mean transfer time \
                grows linearly",
            if abm_linear { "linear (M/D/1 + t_p)" } else { "departs from M/D/1 + t_p" },
            abm_linear,
        ).with_note(check_note!(
            "bux1982/fig10/linear-for-small-t-p",
            differences = differences,
        )),
        Check::qualitative(
            "bux1982/fig10/modulus-hits-nrm-first",
            PAPER,
            "Fig. 10, error-free: the modulus makes NRM primary to secondary leave linear growth \
                (its interval 5% above M/D/1 + t_p) at a smaller t_p than ABM",
            "the impact of the modulus is experienced in NRM at considerably smaller ratios of \
                t_p to I-frame transmission time than in ABM",
            format!("NRM P→S: {}; ABM: {}", show(nrm), show(abm)),
            match (nrm, abm) {
                (Some(n), Some(a)) => n < a,
                (Some(_), None) => true,
                _ => false,
            },
        ).with_note(check_note!("bux1982/fig10/modulus-hits-nrm-first")),
    ];
    let wide = widest(results.figures.values().flatten().flat_map(|c| {
        c.nrm_primary
            .iter()
            .chain(&c.nrm_secondary)
            .chain(&c.abm)
            .map(|p| p.1)
    }));
    Ok(Section {
        heading: "Fig. 10: mean transfer time vs processing plus propagation delay".into(),
        text: section_text!("bux1982/fig-10", precision = wide),
        tables: results.output.tables,
        figures: results.output.figures,
        checks,
    })
}
