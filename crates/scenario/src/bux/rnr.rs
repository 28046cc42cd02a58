//! Section 3.1.3 of Bux, Kümmerle and Truong: the recovery alternative
//! they discuss and did not run. With modulo 128 a failed REJ recovery is
//! slow under NRM because the primary must wait for the secondary's F = 1,
//! which a secondary with much to send sets only at its own window limit.
//! The paper's primary stops acknowledging at its window limit
//! ([`WindowLimit::Withhold`]); the alternative is an RNR
//! ([`WindowLimit::ReceiverNotReady`]), which stops the secondary at once.
//! The paper expects it to recover sooner but to cut the throughput from
//! secondary to primary drastically wherever the primary is often at its
//! window limit. Here the alternative runs on the two-way links of Figs. 4
//! and 6 beside the paper's choice.

use std::collections::BTreeMap;

use linklab_link::WindowLimit;

use super::replicate::{run_all, BuxPoint, Estimate};
use super::simulate::{Procedure, Traffic};
use super::throughput::{CaseCurves, ThroughputCase, ThroughputExperiment};
use super::BuxError;
use crate::check_note;
use crate::report::{
    Check, Figure, Paper, Point, Progress, RunOptions, Series, SeriesStyle, Table,
};

/// The cases run: where the paper's choice collapses (Fig. 4, modulo 128),
/// where the primary is at its window limit most of the time (Fig. 6,
/// modulo 8: seven frames are sent long before the first acknowledgement
/// can come back over the satellite) and the terrestrial modulo-8 link
/// between them.
const CASES: [(&str, u32); 3] = [("bux-fig4", 128), ("bux-fig4", 8), ("bux-fig6", 8)];

/// One point: the case, the length, the paper's choice (from the figure's
/// run) and the RNR alternative, by direction (P→S, S→P).
struct Compared<'a> {
    figure: &'a str,
    case: &'a ThroughputCase,
    bits: u32,
    withhold: [Estimate; 2],
    rnr: [Estimate; 2],
}

/// The section's table, figures and checks.
pub struct RnrResults {
    /// Both strategies side by side.
    pub table: Table,
    /// Throughput against message length, one figure per case.
    pub figures: Vec<Figure>,
    /// The directions of both effects the paper expects.
    pub checks: Vec<Check>,
}

/// Runs the RNR alternative at the experiment's quick lengths on the
/// links of [`CASES`] and sets it beside the NRM curves of `curves`.
pub fn rnr_recovery(
    experiment: &ThroughputExperiment,
    curves: &BTreeMap<String, Vec<CaseCurves>>,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<RnrResults, BuxError> {
    let (plan, frame_times) = experiment.plan(opts);
    let mut cases = Vec::new();
    for (figure_id, modulus) in CASES {
        let Some((figure, figure_curves)) = experiment
            .figure
            .iter()
            .find(|f| f.id == figure_id)
            .zip(curves.get(figure_id))
        else {
            continue;
        };
        for (case, c) in figure.case.iter().zip(figure_curves) {
            if case.modulus != modulus {
                continue;
            }
            for &bits in &experiment.quick_message_lengths_bits {
                if let (Some(p), Some(s)) = (
                    CaseCurves::at(&c.nrm_primary, bits),
                    CaseCurves::at(&c.nrm_secondary, bits),
                ) {
                    cases.push((figure.id.as_str(), case, bits, [p, s]));
                }
            }
        }
    }
    let points = cases
        .iter()
        .map(|&(_, case, bits, _)| {
            let mut run = experiment.link_run(
                case,
                bits,
                Procedure::Nrm,
                [Traffic::Saturated; 2],
                frame_times,
            )?;
            run.window_limit = WindowLimit::ReceiverNotReady;
            Ok(BuxPoint {
                run,
                replications: plan,
                what: format!("Bux 3.1.3: NRM with RNR at the window limit, l = {bits} bit"),
            })
        })
        .collect::<Result<Vec<_>, BuxError>>()?;
    let measured = run_all(&points, opts, progress)?;
    let compared = cases
        .iter()
        .zip(&measured)
        .map(|(&(figure, case, bits, withhold), directions)| {
            let (Some(p), Some(s)) = (directions[0].throughput, directions[1].throughput) else {
                return Err(BuxError::NoEstimate {
                    what: "NRM throughput with RNR",
                });
            };
            Ok(Compared {
                figure,
                case,
                bits,
                withhold,
                rnr: [p, s],
            })
        })
        .collect::<Result<Vec<_>, BuxError>>()?;
    Ok(RnrResults {
        table: table(&compared),
        figures: figures(&compared),
        checks: vec![recovers_sooner(&compared), starves_secondary(&compared)],
    })
}

fn table(compared: &[Compared]) -> Table {
    Table {
        id: "bux-rnr-recovery".into(),
        title: "Section 3.1.3: NRM primary at its window limit, withholding acknowledgements (the paper's runs) or sending RNR, two-way flow, constant lengths (95% intervals)".into(),
        columns: [
            "figure",
            "case",
            "l (bit)",
            "withhold P→S",
            "withhold S→P",
            "RNR P→S",
            "RNR S→P",
            "RNR / withhold P→S",
            "RNR / withhold S→P",
        ]
        .map(String::from)
        .to_vec(),
        rows: compared
            .iter()
            .map(|c| {
                vec![
                    c.figure.to_string(),
                    c.case.label.clone(),
                    c.bits.to_string(),
                    c.withhold[0].show(),
                    c.withhold[1].show(),
                    c.rnr[0].show(),
                    c.rnr[1].show(),
                    format!("{:.3}", c.rnr[0].mean / c.withhold[0].mean),
                    format!("{:.3}", c.rnr[1].mean / c.withhold[1].mean),
                ]
            })
            .collect(),
    }
}

fn figures(compared: &[Compared]) -> Vec<Figure> {
    CASES
        .iter()
        .filter_map(|&(figure, modulus)| {
            let points: Vec<&Compared> = compared
                .iter()
                .filter(|c| c.figure == figure && c.case.modulus == modulus)
                .collect();
            let first = points.first()?;
            let series = |label: &str, pick: &dyn Fn(&Compared) -> Estimate| Series {
                label: label.into(),
                style: SeriesStyle::Simulated,
                points: points
                    .iter()
                    .map(|c| {
                        let e = pick(c);
                        Point {
                            x: f64::from(c.bits),
                            y: e.mean,
                            half_width: Some(e.half_width),
                        }
                    })
                    .collect(),
            };
            Some(Figure {
                id: format!("bux-rnr-{}-modulo-{modulus}", figure.trim_start_matches("bux-")),
                title: format!(
                    "Section 3.1.3 on the link of {} ({}): withholding acknowledgements or RNR at the primary's window limit",
                    figure.trim_start_matches("bux-").replace("fig", "Fig. "),
                    first.case.label
                ),
                x_label: "message length l (bit)".into(),
                y_label: "throughput (fraction of v)".into(),
                log_x: true,
                log_y: false,
                series: vec![
                    series("withhold, P→S", &|c| c.withhold[0]),
                    series("withhold, S→P", &|c| c.withhold[1]),
                    series("RNR, P→S", &|c| c.rnr[0]),
                    series("RNR, S→P", &|c| c.rnr[1]),
                ],
            })
        })
        .collect()
}

/// What a check shows: every point, or the points that fail.
fn verdict(
    points: &[&Compared],
    failures: &[String],
    each: impl Fn(&Compared) -> String,
) -> String {
    if failures.is_empty() {
        points
            .iter()
            .map(|c| each(c))
            .collect::<Vec<_>>()
            .join("; ")
    } else {
        failures.join("; ")
    }
}

/// The paper's expectation for the collapse: with RNR the checkpoint comes
/// at once, so the modulo-128 terrestrial link recovers sooner from the
/// primary to the secondary, at the lengths where the paper's choice
/// collapses (above 1000 bits; Fig. 4).
fn recovers_sooner(compared: &[Compared]) -> Check {
    let points: Vec<&Compared> = compared
        .iter()
        .filter(|c| c.figure == "bux-fig4" && c.case.modulus == 128 && c.bits > 1000)
        .collect();
    let failures: Vec<String> = points
        .iter()
        .filter(|c| {
            c.rnr[0].lower() <= c.withhold[0].upper() && c.rnr[0].mean < 1.2 * c.withhold[0].mean
        })
        .map(|c| {
            format!(
                "l = {}: RNR {} not above withhold {}",
                c.bits,
                c.rnr[0].show(),
                c.withhold[0].show()
            )
        })
        .collect();
    let ours = verdict(&points, &failures, |c| {
        format!(
            "l = {}: {:.3} → {:.3}",
            c.bits, c.withhold[0].mean, c.rnr[0].mean
        )
    });
    Check::qualitative(
        "bux1982/3.1.3/rnr-recovers-sooner",
        Paper::Bux1982,
        "Section 3.1.3: with RNR at the primary's window limit, the modulo-128 terrestrial link (Fig. 4) carries more from primary to secondary than with acknowledgements withheld, above 1000 bits (beyond both 95% intervals, or by more than 20%)",
        "the primary through sending an RNR forces the secondary to stop transmitting I-frames and to set the F-bit so that P/F-bit recovery would occur much earlier",
        ours,
        failures.is_empty() && !points.is_empty(),
    )
    .with_note(check_note!("bux1982/3.1.3/rnr-recovers-sooner"))
}

/// The paper's objection: where the primary is often at its window limit,
/// RNR drastically reduces the throughput from secondary to primary. On
/// the satellite link with modulo 8 (Fig. 6) the primary's seven frames
/// go out long before an acknowledgement can return.
fn starves_secondary(compared: &[Compared]) -> Check {
    let points: Vec<&Compared> = compared
        .iter()
        .filter(|c| c.figure == "bux-fig6" && c.case.modulus == 8)
        .collect();
    let ratio = |c: &Compared| c.rnr[1].mean / c.withhold[1].mean;
    let failures: Vec<String> = points
        .iter()
        .filter(|c| c.rnr[1].upper() >= c.withhold[1].lower())
        .map(|c| {
            format!(
                "l = {}: S→P RNR {} against withhold {} ({:.2})",
                c.bits,
                c.rnr[1].show(),
                c.withhold[1].show(),
                ratio(c)
            )
        })
        .collect();
    let ours = verdict(&points, &failures, |c| {
        format!(
            "l = {}: S→P {:.3} → {:.3} ({:.2})",
            c.bits,
            c.withhold[1].mean,
            c.rnr[1].mean,
            ratio(c)
        )
    });
    Check::qualitative(
        "bux1982/3.1.3/rnr-starves-secondary",
        Paper::Bux1982,
        "Section 3.1.3: on the satellite link with modulo 8 (Fig. 6), where the primary's window is full most of the time, RNR at its window limit lowers the throughput from secondary to primary at every length, beyond both 95% intervals",
        "if the primary frequently has M-1 unacknowledged I-frames outstanding, the throughput from secondary to primary will be drastically reduced",
        ours,
        failures.is_empty() && !points.is_empty(),
    )
    .with_note(starvation_note(compared, &points))
}

/// What the starvation check's numbers say, from the run.
fn starvation_note(compared: &[Compared], satellite: &[&Compared]) -> String {
    let range = |ratios: &mut dyn Iterator<Item = f64>| {
        ratios.fold((f64::INFINITY, 0.0f64), |(lo, hi), r| {
            (lo.min(r), hi.max(r))
        })
    };
    let (lo, hi) = range(&mut satellite.iter().map(|c| c.rnr[1].mean / c.withhold[1].mean));
    let (_, gain) = range(&mut satellite.iter().map(|c| c.rnr[0].mean / c.withhold[0].mean));
    let terrestrial = compared
        .iter()
        .filter(|c| c.figure == "bux-fig4" && c.case.modulus == 8)
        .min_by_key(|c| c.bits)
        .map(|c| {
            format!(
                " {}",
                check_note!(
                    "bux1982/3.1.3/rnr-starves-secondary/terrestrial",
                    fall = format!("{:.2}", c.rnr[1].mean / c.withhold[1].mean),
                    bits = c.bits,
                )
            )
        })
        .unwrap_or_default();
    check_note!(
        "bux1982/3.1.3/rnr-starves-secondary",
        lo = format!("{lo:.2}"),
        hi = format!("{hi:.2}"),
        terrestrial = terrestrial,
        gain = format!("{:+.0}", (gain - 1.0) * 100.0),
    )
}
