//! Appendix A2 of Bux, Kümmerle and Truong: asynchronous response mode
//! (ARM), in which the secondary sends without waiting for a poll, should
//! behave like ABM. The paper gives no curve for it; here ARM runs on the
//! links of Figs. 4 and 6 with both stations saturated, at the length
//! where ABM peaks and at the longest, beside ABM's points.

use super::replicate::{run_all, BuxPoint, Estimate};
use super::simulate::{Procedure, Traffic};
use super::throughput::{CaseCurves, ThroughputCase, ThroughputExperiment};
use super::BuxError;
use crate::check_note;
use crate::report::{Check, Paper, Progress, RunOptions, Table};

/// ARM against ABM: the table of the points and the check.
pub fn arm_like_abm(
    experiment: &ThroughputExperiment,
    curves: &std::collections::BTreeMap<String, Vec<CaseCurves>>,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<(Table, Check), BuxError> {
    let (plan, frame_times) = experiment.plan(opts);
    let mut cases: Vec<(&str, &ThroughputCase, u32, Estimate)> = Vec::new();
    for figure in experiment
        .figure
        .iter()
        .filter(|f| ["bux-fig4", "bux-fig6"].contains(&f.id.as_str()))
    {
        let Some(figure_curves) = curves.get(&figure.id) else {
            continue;
        };
        for (case, c) in figure.case.iter().zip(figure_curves) {
            let peak = c
                .abm
                .iter()
                .max_by(|a, b| a.1.mean.total_cmp(&b.1.mean))
                .copied();
            for (l, abm) in peak.into_iter().chain(c.abm.last().copied()) {
                if !cases.iter().any(|(id, k, m, _)| {
                    *id == figure.id.as_str() && core::ptr::eq(*k, case) && *m == l
                }) {
                    cases.push((figure.id.as_str(), case, l, abm));
                }
            }
        }
    }
    let saturated = [Traffic::Saturated; 2];
    let points = cases
        .iter()
        .map(|&(_, case, l, _)| {
            Ok(BuxPoint {
                run: experiment.link_run(case, l, Procedure::Arm, saturated, frame_times)?,
                replications: plan,
                what: format!("Bux Appendix A2: ARM l = {l} bit"),
            })
        })
        .collect::<Result<Vec<_>, BuxError>>()?;
    let arm = run_all(&points, opts, progress)?;
    let mut table = Table {
        id: "bux-appendix-a2".into(),
        title: "Appendix A2: ARM against ABM, two-way flow, constant lengths (95% intervals)"
            .into(),
        columns: [
            "figure",
            "case",
            "l (bit)",
            "ABM",
            "ARM P→S",
            "ARM S→P",
            "ARM",
            "ARM / ABM",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    let mut unlike = Vec::new();
    let mut ratios = Vec::new();
    for ((figure, case, l, abm), directions) in cases.iter().zip(&arm) {
        let (Some(p), Some(s)) = (directions[0].throughput, directions[1].throughput) else {
            return Err(BuxError::NoEstimate {
                what: "ARM throughput",
            });
        };
        let both = Estimate {
            mean: (p.mean + s.mean) / 2.0,
            half_width: (p.half_width + s.half_width) / 2.0,
        };
        let ratio = both.mean / abm.mean;
        ratios.push(ratio);
        if !alike(both, *abm) {
            unlike.push(format!(
                "{figure} {} l = {l}: ARM {} vs ABM {}",
                case.label,
                both.show(),
                abm.show()
            ));
        }
        table.rows.push(vec![
            figure.to_string(),
            case.label.clone(),
            l.to_string(),
            abm.show(),
            p.show(),
            s.show(),
            both.show(),
            format!("{ratio:.3}"),
        ]);
    }
    let (lo, hi) = ratios.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), r| {
        (lo.min(*r), hi.max(*r))
    });
    let check = Check::qualitative(
        "bux1982/appendix-a2/arm-like-abm",
        Paper::Bux1982,
        "Appendix A2: ARM throughput like ABM's, two-way flow on the links of Figs. 4 and 6, at ABM's peak length and the longest",
        "ARM is expected to behave like ABM (Appendix A2)",
        if unlike.is_empty() {
            format!("alike at all {} points (ARM/ABM {lo:.3}-{hi:.3})", ratios.len())
        } else {
            unlike.join("; ")
        },
        unlike.is_empty(),
    )
    .with_note(check_note!("bux1982/appendix-a2/arm-like-abm"));
    Ok((table, check))
}

/// Two estimates alike: their intervals overlap, or their means agree
/// within 2%.
fn alike(a: Estimate, b: Estimate) -> bool {
    (a.upper() >= b.lower() && b.upper() >= a.lower()) || (a.mean / b.mean - 1.0).abs() <= 0.02
}
