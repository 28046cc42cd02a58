//! The reproduction of Zieliński 2013 for `linklab reproduce`: the model
//! checks (eq. 1-4), Figs. 4-6 and 10-13 (throughput against k) and the
//! real-window-size histograms (Figs. 7-9, 14-15), each a
//! [`Section`] built from the built-in experiment files ([`crate::builtin`]).

use core::time::Duration;

use super::experiment::{model, parse, FigureResult, Measured, Pair, ThroughputExperiment};
use super::published::{check, row, Quoted, Row, TOLERANCE};
use super::ZielinskiError;
use crate::builtin;
use crate::published::load;
use crate::report::{
    Basis, Check, Figure, Paper, Point, Progress, RunOptions, Section, Series, SeriesStyle, Table,
};
use crate::{check_note, section_text};
use linklab_channel::profile::{profile, profiles};

mod windows;

pub use windows::real_window_figures;

const PAPER: Paper = Paper::Zielinski2013;

/// What every section says about the set-up.
fn setup_text() -> String {
    section_text!("zielinski2013/setup")
}

/// Draws on each throughput figure the values the paper's text quotes for
/// its radio rate at one window k (section 3.1: "about 1000 bit/s" at
/// 1.2 kbit/s, k = 7, and so on), as the paper's own hollow markers beside
/// the simulated curves. A quote over a span of windows ("1-7", a maximum)
/// has no one point and stays in the checks only.
fn quoted_points(figures: &mut [Figure], results: &[FigureResult]) -> Result<(), ZielinskiError> {
    let quotes = load::<Row>()?;
    for result in results {
        let spec = &result.spec;
        let points: Vec<Point> = quotes
            .iter()
            .filter(|r| (r.radio_kbps * 1000.0).round() as u32 == spec.radio_bps)
            .filter_map(|r| {
                let k: u32 = r.k.parse().ok()?;
                Some(Point {
                    x: f64::from(k),
                    y: r.quoted.value(),
                    half_width: None,
                })
            })
            .collect();
        let id = format!("zielinski-{}", spec.id);
        if let (false, Some(figure)) = (points.is_empty(), figures.iter_mut().find(|f| f.id == id))
        {
            figure.series.push(Series {
                label: "the paper (values quoted in its text)".into(),
                style: SeriesStyle::Published,
                points,
            });
        }
    }
    Ok(())
}

/// The note prefix of a check against a figure that `profile_name`'s
/// firmware was fitted to.
fn fit_note(profile_name: &str) -> Result<String, ZielinskiError> {
    let fw = profile(profile_name)?.firmware;
    Ok(check_note!(
        "zielinski2013/basis/fit",
        firmware = fw.title,
        fitted_to = fw.fitted_to,
    ))
}

/// The note prefix of a check against a figure that `profile_name`'s
/// firmware was not fitted to.
fn prediction_note(profile_name: &str) -> Result<String, ZielinskiError> {
    let fw = profile(profile_name)?.firmware;
    Ok(check_note!(
        "zielinski2013/basis/prediction",
        firmware = fw.title,
        fitted_to = fw.fitted_to,
    ))
}

/// Whether `profile_name`'s firmware was fitted to the paper's Fig. `fig`
/// (its `fitted_to` names that figure).
fn basis(profile_name: &str, fig: u32) -> Result<Basis, ZielinskiError> {
    let fw = profile(profile_name)?.firmware;
    Ok(if fw.fitted_to.contains(&format!("Fig. {fig} (")) {
        Basis::Fit
    } else {
        Basis::Prediction
    })
}

/// The note prefix of a check of `profile_name` against the paper's
/// Fig. `fig`: a calibration fit or a prediction ([`basis`]).
fn basis_note(profile_name: &str, fig: u32) -> Result<String, ZielinskiError> {
    match basis(profile_name, fig)? {
        Basis::Fit => fit_note(profile_name),
        Basis::Prediction => prediction_note(profile_name),
    }
}

/// Which checks each firmware's profile meets without having been fitted
/// to them (firmware name as in `linklab_channel::profile`).
fn predictions(firmware: &str) -> &'static str {
    match firmware {
        "mfj" => {
            "Figs. 11 and 13 as a recipient (4 checks); Fig. 4 no gain above k = 4; Fig. 7 \
                  larger real windows for N1 < 256; Fig. 8 real window on the TNC2H"
        }
        "spirit" => {
            "Fig. 10 as a sender on the TNC2 and TNC2D (2 checks); Figs. 11 and 13 as a \
                     recipient (4 checks)"
        }
        "tf21" => "Fig. 13 as a recipient at 9.6 kbit/s (2 checks)",
        "tf23" | "tf27" => "Figs. 11 and 13 as a recipient (4 checks)",
        "tnc3" => {
            "every result of Figs. 10-15, where it is the partner TNC; Fig. 4 T2 wait; Fig. \
                   5 step from k = 6 to 7"
        }
        "tnc7" | "dlc7" => "Fig. 5 step from k = 6 to 7",
        _ => "none checked",
    }
}

/// Every firmware once: the controllers it was simulated on, its fitted
/// costs and buffer, the figures it was fitted to and the checks it
/// predicts.
pub fn calibration_table() -> Table {
    let all = profiles();
    let mut rows = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for p in &all {
        let fw = p.firmware;
        if seen.contains(&fw.name) {
            continue;
        }
        seen.push(fw.name);
        let clocks: Vec<String> = all
            .iter()
            .filter(|q| q.firmware.name == fw.name)
            .map(|q| {
                format!(
                    "{} {} MHz",
                    q.hardware.model,
                    q.hardware.clock_hz as f64 / 1e6
                )
            })
            .collect();
        rows.push(vec![
            fw.title.to_string(),
            clocks.join(", "),
            fw.costs.frame_cycles.to_string(),
            fw.costs.radio_octet_cycles.to_string(),
            fw.costs.serial_octet_cycles.to_string(),
            fw.costs.buffer_octets.to_string(),
            fw.fitted_to.to_string(),
            predictions(fw.name).to_string(),
        ]);
    }
    Table {
        id: "zielinski-profile-calibration".to_string(),
        title: "Firmware profiles: fitted parameters (processor cycles, octets), the figures \
                each was fitted to, and the checks it predicts"
            .to_string(),
        columns: [
            "firmware",
            "controllers",
            "cycles per frame",
            "cycles per radio octet",
            "cycles per serial octet",
            "buffer, octets",
            "fitted to",
            "predicts (not fitted)",
        ]
        .iter()
        .map(|c| c.to_string())
        .collect(),
        rows,
    }
}

/// The model checks of eq. 1-4 ("AX.25 imm", T_2 = 0) against the
/// theoretical maxima the paper quotes; ids `zielinski2013/theory/...`.
pub fn theory() -> Result<Vec<Check>, ZielinskiError> {
    let mut checks = Vec::new();
    for r in load::<Row>()?
        .into_iter()
        .filter(|r| r.what.starts_with("theoretical"))
    {
        let k: u32 =
            r.k.parse()
                .map_err(|_| ZielinskiError::Published(r.k.clone()))?;
        let radio_bps = (r.radio_kbps * 1000.0).round() as u32;
        let imm = model(radio_bps, 256, Duration::ZERO).row(k).throughput_bps;
        let with_t103 = |ms: u32| {
            linklab_models::zielinski::Params {
                t103_s: f64::from(ms) / 1000.0,
                ..model(radio_bps, 256, Duration::ZERO)
            }
            .row(k)
            .throughput_bps
        };
        let at_300 = with_t103(300);
        let passing: Vec<u32> = (0..=100)
            .map(|i| i * 10)
            .filter(|&ms| r.quoted.agrees(with_t103(ms)))
            .collect();
        let band = match (passing.first(), passing.last()) {
            (Some(0), Some(1000)) => "every T_103 from 0 to 1000 ms".to_string(),
            (Some(lo), Some(hi)) => format!("T_103 from {lo} to {hi} ms"),
            _ => "no T_103 from 0 to 1000 ms".to_string(),
        };
        checks.push(
            check(
                format!("zielinski2013/theory/{}kbps/k{k}", r.radio_kbps),
                &r,
                format!(
                    "{} at {} kbit/s, N1 = 256, k = {k}: eq. 2 with T_2 = 0",
                    r.what, r.radio_kbps
                ),
                imm,
            )
            .with_note(check_note!(
                "zielinski2013/theory/*",
                imm = format!("{imm:.0}"),
                imm_gap = format!("{:+.1}", (imm / r.quoted.value() - 1.0) * 100.0),
                at_300 = format!("{at_300:.0}"),
                at_300_gap = format!("{:+.1}", (at_300 / r.quoted.value() - 1.0) * 100.0),
                verdict = if r.quoted.agrees(at_300) {
                    "would also pass"
                } else {
                    "would fail"
                },
                band = band,
            )),
        );
    }
    Ok(checks)
}

/// The lowest value that agrees with `r` within the tolerance.
fn lo_bound(r: &Row) -> f64 {
    match r.quoted {
        Quoted::About(x) | Quoted::Range(x, _) => (1.0 - TOLERANCE) * x,
    }
}

/// The highest value that agrees with `r` within the tolerance.
fn hi_bound(r: &Row) -> f64 {
    match r.quoted {
        Quoted::About(x) | Quoted::Range(_, x) => (1.0 + TOLERANCE) * x,
    }
}

fn figure<'a>(results: &'a [FigureResult], id: &str) -> Result<&'a FigureResult, ZielinskiError> {
    results.iter().find(|f| f.spec.id == id).ok_or_else(|| {
        ZielinskiError::Parameter(format!("the experiment file has no figure \"{id}\""))
    })
}

fn pair<'a>(fig: &'a FigureResult, label: &str) -> Result<&'a Pair, ZielinskiError> {
    fig.spec
        .pairs
        .iter()
        .find(|p| p.label == label)
        .ok_or_else(|| {
            ZielinskiError::Parameter(format!(
                "figure \"{}\" has no pair \"{label}\"",
                fig.spec.id
            ))
        })
}

fn curve<'a>(fig: &'a FigureResult, label: &str) -> Result<&'a [Measured], ZielinskiError> {
    fig.curve(label).ok_or_else(|| {
        ZielinskiError::Parameter(format!(
            "figure \"{}\" has no curve \"{label}\"",
            fig.spec.id
        ))
    })
}

/// The best throughput of a curve over k, and the k it was reached at.
fn best(curve: &[Measured], windows: &[u8]) -> (f64, u8) {
    curve
        .iter()
        .zip(windows)
        .map(|(m, &k)| (m.throughput.mean, k))
        .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a })
}

/// Throughput at window `k`.
fn at(curve: &[Measured], windows: &[u8], k: u8) -> f64 {
    windows
        .iter()
        .position(|&w| w == k)
        .and_then(|i| curve.get(i))
        .map_or(0.0, |m| m.throughput.mean)
}

/// Figs. 4-6: throughput against k at 1.2, 9.6 and 38.4 kbit/s for
/// identical TNC pairs (section 3.1), with the model checks.
pub fn figures_4_to_6(
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<Section, ZielinskiError> {
    let exp: ThroughputExperiment = parse(builtin::ZIELINSKI_FIGS_4_6)?;
    let results = exp.simulate(opts, progress)?;
    let mut out = exp.output(&results);
    quoted_points(&mut out.figures, &results)?;
    let ks = &exp.windows;
    let mut checks = theory()?;

    let (fig5, fig5_dlc7) = fig5_maxima(&results, ks)?;
    checks.extend(fig5);
    checks.extend(fig6_at_k7(&results, ks, fig5_dlc7)?);
    checks.extend(fig4_statements(&results, ks)?);
    checks.push(fig5_step(&results, ks)?);

    let mut tables = vec![calibration_table()];
    tables.extend(out.tables);
    let text = section_text!("zielinski2013/figs-4-6", setup = setup_text());
    Ok(Section {
        heading: "Figs. 4-6: effective throughput against k, identical TNC pairs".to_string(),
        text,
        tables,
        figures: out.figures,
        checks,
    })
}

/// Fig. 5: the highest throughput over k of the TNC2D and DLC7 pairs at
/// 9.6 kbit/s, and the DLC7's (which Fig. 6's note quotes).
fn fig5_maxima(results: &[FigureResult], ks: &[u8]) -> Result<(Vec<Check>, f64), ZielinskiError> {
    let mut checks = Vec::new();
    let fig5 = figure(results, "fig5")?;
    let mut fig5_dlc7 = 0.0;
    for (what, label, id, name) in [
        ("TNC2D measured max", "TNC2D (MFJ)", "tnc2d", "tnc2d-mfj"),
        ("DLC7 measured max", "DLC7", "dlc7", "dlc7"),
    ] {
        let r = row(9.6, what)?;
        let (ours, k) = best(curve(fig5, label)?, ks);
        if id == "dlc7" {
            fig5_dlc7 = ours;
        }
        checks.push(
            check(
                format!("zielinski2013/fig5/{id}/max"),
                &r,
                format!("Fig. 5, {label}: highest throughput over k = 1-7 at 9.6 kbit/s"),
                ours,
            )
            .with_note(check_note!(
                "zielinski2013/fig5/*/max",
                basis = basis_note(name, 5)?,
                k = k,
                more = if id == "dlc7" {
                    check_note!("zielinski2013/fig5/dlc7/max")
                } else {
                    check_note!("zielinski2013/fig5/tnc2d/max")
                },
            ))
            .with_basis(basis(name, 5)?),
        );
    }
    Ok((checks, fig5_dlc7))
}

/// Fig. 6: each pair's throughput at k = 7, 38.4 kbit/s.
fn fig6_at_k7(
    results: &[FigureResult],
    ks: &[u8],
    fig5_dlc7: f64,
) -> Result<Vec<Check>, ZielinskiError> {
    let mut checks = Vec::new();
    let fig6 = figure(results, "fig6")?;
    for (what, label, name) in [
        (
            "Spirit-2/KPC-9612+/PK-96 measured",
            "Spirit-2 Std.",
            "spirit2-std-spirit",
        ),
        ("Spirit-2/KPC-9612+/PK-96 measured", "KPC-9612+", "kpc9612"),
        ("Spirit-2/KPC-9612+/PK-96 measured", "PK-96", "pk96"),
        ("TNC3 measured", "TNC3", "tnc3"),
        ("TNC7 measured", "TNC7", "tnc7"),
        ("DLC7 measured", "DLC7", "dlc7"),
    ] {
        let r = row(38.4, what)?;
        let c = curve(fig6, label)?;
        let ours = at(c, ks, 7);
        let k6 = at(c, ks, 6);
        checks.push(
            check(
                format!(
                    "zielinski2013/fig6/{}/k7",
                    crate::report::check_id_part(label)
                ),
                &r,
                format!("Fig. 6, {label}: throughput at k = 7, 38.4 kbit/s"),
                ours,
            )
            .with_note(check_note!(
                "zielinski2013/fig6/*/k7",
                basis = basis_note(name, 6)?,
                ours = format!("{ours:.0}"),
                k6 = format!("{k6:.0}"),
                paper = r.text,
                more = match label {
                    "PK-96" => check_note!("zielinski2013/fig6/pk-96/k7"),
                    "Spirit-2 Std." => check_note!("zielinski2013/fig6/spirit-2-std/k7"),
                    "KPC-9612+" => check_note!("zielinski2013/fig6/kpc-9612/k7"),
                    "TNC3" => check_note!("zielinski2013/fig6/tnc3/k7"),
                    "TNC7" => check_note!("zielinski2013/fig6/tnc7/k7"),
                    _ => check_note!(
                        "zielinski2013/fig6/dlc7/k7",
                        fig5_dlc7 = format!("{fig5_dlc7:.0}")
                    ),
                },
            ))
            .with_basis(basis(name, 6)?),
        );
    }

    Ok(checks)
}

/// Fig. 4: the qualitative statements of section 3.1 (the Z80 TNCs'
/// flat curves above k = 4, the TNC3's T2 wait).
fn fig4_statements(results: &[FigureResult], ks: &[u8]) -> Result<Vec<Check>, ZielinskiError> {
    let mut checks = Vec::new();
    let fig4 = figure(results, "fig4")?;
    let z80: Vec<(String, f64, f64)> = ["TNC2 (MFJ)", "TNC2D (MFJ)"]
        .iter()
        .map(|&l| {
            let c = curve(fig4, l)?;
            Ok((l.to_string(), at(c, ks, 4), at(c, ks, 7)))
        })
        .collect::<Result<_, ZielinskiError>>()?;
    let flat = z80.iter().all(|(_, k4, k7)| *k7 <= 1.05 * k4);
    checks.push(
        Check::qualitative(
            "zielinski2013/fig4/z80-no-gain-above-k4",
            PAPER,
            "Fig. 4: the Z80 TNC2 and TNC2D gain nothing from k above 4",
            "increasing k from 4 does not practically increase throughput",
            z80.iter()
                .map(|(l, k4, k7)| format!("{l}: {k4:.0} bit/s at k = 4, {k7:.0} at k = 7"))
                .collect::<Vec<_>>()
                .join("; "),
            flat,
        )
        .with_note(check_note!("zielinski2013/fig4/z80-no-gain-above-k4")),
    );
    let tnc3 = curve(fig4, "TNC3")?;
    let tnc2d = curve(fig4, "TNC2D (MFJ)")?;
    let worse_small = at(tnc3, ks, 1) < at(tnc2d, ks, 1);
    let better_k7 = at(tnc3, ks, 7) > at(tnc2d, ks, 7);
    checks.push(
        Check::qualitative(
            "zielinski2013/fig4/tnc3-t2-wait",
            PAPER,
            "Fig. 4: TNC3 (no P on the last I frame, recipient waits T2) is worse than the Z80 \
             TNCs at small k and better at k = 7",
            "worse for k < 7, close to the theory at k = 7",
            format!(
                "TNC3 {:.0} vs TNC2D {:.0} bit/s at k = 1; {:.0} vs {:.0} at k = 7",
                at(tnc3, ks, 1),
                at(tnc2d, ks, 1),
                at(tnc3, ks, 7),
                at(tnc2d, ks, 7)
            ),
            worse_small && better_k7,
        )
        .with_note(check_note!("zielinski2013/fig4/tnc3-t2-wait")),
    );
    Ok(checks)
}

/// Fig. 5: the step from k = 6 to k = 7 of TNC3, TNC7 and DLC7.
fn fig5_step(results: &[FigureResult], ks: &[u8]) -> Result<Check, ZielinskiError> {
    let fig5 = figure(results, "fig5")?;
    let jumps: Vec<(String, f64, f64)> = ["TNC3", "TNC7", "DLC7"]
        .iter()
        .map(|&l| {
            let c = curve(fig5, l)?;
            Ok((l.to_string(), at(c, ks, 6), at(c, ks, 7)))
        })
        .collect::<Result<_, ZielinskiError>>()?;
    let steps: Vec<String> = jumps
        .iter()
        .map(|(l, a, b)| format!("{l} +{:.0}%", (b / a - 1.0) * 100.0))
        .collect();
    Ok(Check::qualitative(
        "zielinski2013/fig5/k6-to-k7-step",
        PAPER,
        "Fig. 5: a visible step from k = 6 to k = 7 for TNC3, TNC7 and DLC7",
        "the difference between k = 6 and k = 7 is visible",
        jumps
            .iter()
            .map(|(l, a, b)| format!("{l}: {a:.0} -> {b:.0} bit/s"))
            .collect::<Vec<_>>()
            .join("; "),
        jumps.iter().all(|(_, a, b)| *b > 1.2 * a),
    )
    .with_note(check_note!(
        "zielinski2013/fig5/k6-to-k7-step",
        steps = steps.join(", ")
    )))
}

/// The check of `label`'s highest throughput over k in Fig. `fig_no`,
/// described by `what`, with its basis but not its note; the k it was
/// reached at and the basis sentence of the note, for the pair's
/// recipient's firmware or its sender's.
fn max_check(
    fig: &FigureResult,
    fig_no: u32,
    r: &Row,
    label: &str,
    ks: &[u8],
    what: String,
    recipient: bool,
) -> Result<(Check, u8, String), ZielinskiError> {
    let (ours, k) = best(curve(fig, label)?, ks);
    let pair = pair(fig, label)?;
    let firmware = if recipient {
        &pair.recipient
    } else {
        &pair.sender
    };
    let id = format!(
        "zielinski2013/fig{fig_no}/{}/max",
        crate::report::check_id_part(label)
    );
    let check = check(id, r, what, ours).with_basis(basis(firmware, fig_no)?);
    Ok((check, k, basis_note(firmware, fig_no)?))
}

/// Figs. 10-13: Z80 TNCs with MFJ, Spirit-2 and TF firmware as sender or
/// recipient with a TNC3 (section 3.2).
pub fn figures_10_to_13(
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<Section, ZielinskiError> {
    let exp: ThroughputExperiment = parse(builtin::ZIELINSKI_FIGS_10_13)?;
    let results = exp.simulate(opts, progress)?;
    let out = exp.output(&results);
    let ks = &exp.windows;
    let mut checks = Vec::new();

    let fig10 = figure(&results, "fig10")?;
    let r = row(1.2, "Z80 TNC2/TNC2D sender")?;
    for label in [
        "TNC2 2.5 MHz, MFJ 1.1.9",
        "TNC2 2.5 MHz, Spirit-2 5.0",
        "TNC2D 4.9 MHz, MFJ 1.1.9",
        "TNC2D 4.9 MHz, Spirit-2 5.0",
    ] {
        let what = format!("Fig. 10, {label} sending to a TNC3: highest throughput over k");
        let (c, k, basis) = max_check(fig10, 10, &r, label, ks, what, false)?;
        checks.push(c.with_note(check_note!(
            "zielinski2013/fig10/*/max",
            basis = basis,
            k = k
        )));
    }
    for (fig, kbps, what, labels) in [
        (
            "fig11",
            1.2,
            "recipient role (fast sender)",
            &FIG11_RECIPIENTS[..],
        ),
        (
            "fig13",
            9.6,
            "recipient role (measured)",
            &FIG13_RECIPIENTS[..],
        ),
    ] {
        let f = figure(&results, fig)?;
        let r = row(kbps, what)?;
        for &label in labels {
            let fig_no = if fig == "fig11" { 11 } else { 13 };
            let what =
                format!("Fig. {fig_no}, {label} receiving from a TNC3: highest throughput over k");
            let (c, k, basis) = max_check(f, fig_no, &r, label, ks, what, true)?;
            checks.push(c.with_note(check_note!(
                "zielinski2013/fig11-13/*/max",
                basis = basis,
                k = k,
                lo = format!("{:.0}", lo_bound(&r)),
                hi = format!("{:.0}", hi_bound(&r)),
            )));
        }
    }
    let fig12 = figure(&results, "fig12")?;
    let r = row(9.6, "Spirit-2 sender")?;
    for label in [
        "Spirit-2 Std. 10 MHz, Spirit-2 5.0",
        "Spirit-2 H.S. 20 MHz, Spirit-2 5.0",
    ] {
        let what = format!("Fig. 12, {label} sending to a TNC3: highest throughput over k");
        let (c, k, basis) = max_check(fig12, 12, &r, label, ks, what, false)?;
        checks.push(c.with_note(check_note!(
            "zielinski2013/fig12/*/max",
            basis = basis,
            k = k,
            theory = format!(
                "{:.0}",
                model(9600, 256, Duration::ZERO).row(7).throughput_bps
            ),
            spread = if label.starts_with("Spirit-2 Std.") {
                format!(
                    " {}",
                    check_note!("zielinski2013/fig12/spirit-2-std-10-mhz-spirit-2-5-0/max")
                )
            } else {
                String::new()
            },
        )));
    }

    // TF 2.1 is the slowest sender and does not gain from k (Fig. 10).
    let tf21 = curve(fig10, "TNC2 2.5 MHz, TF 2.1d")?;
    let others: Vec<f64> = exp.figures[0]
        .pairs
        .iter()
        .filter(|p| p.label.starts_with("TNC2 ") && !p.label.contains("TF 2.1"))
        .map(|p| curve(fig10, &p.label).map(|c| best(c, ks).0))
        .collect::<Result<_, _>>()?;
    let (tf21_best, _) = best(tf21, ks);
    let tf21_min = tf21
        .iter()
        .map(|m| m.throughput.mean)
        .fold(f64::INFINITY, f64::min);
    let slowest = others.iter().all(|&o| o > tf21_best);
    checks.push(
        Check::qualitative(
            "zielinski2013/fig10/tf21-slowest",
            PAPER,
            "Fig. 10: TF 2.1 on the TNC2 is the slowest sender and hardly gains from k",
            "the most ineffective sender; throughput independent of k",
            format!(
                "TF 2.1 best {tf21_best:.0} bit/s (lowest {tf21_min:.0}); other firmware on \
                 the TNC2 best {:.0}-{:.0} bit/s",
                others.iter().copied().fold(f64::INFINITY, f64::min),
                others.iter().copied().fold(0.0, f64::max)
            ),
            slowest,
        )
        .with_note(check_note!("zielinski2013/fig10/tf21-slowest")),
    );

    let text = section_text!("zielinski2013/figs-10-13", setup = setup_text());
    Ok(Section {
        heading: "Figs. 10-13: firmware on Z80 TNCs as sender and recipient".to_string(),
        text,
        tables: out.tables,
        figures: out.figures,
        checks,
    })
}

/// Recipients of Fig. 11 whose best throughput is checked.
const FIG11_RECIPIENTS: [&str; 10] = [
    "TNC2 2.5 MHz, Spirit-2 5.0",
    "TNC2 2.5 MHz, MFJ 1.1.9",
    "TNC2 2.5 MHz, TF 2.1d",
    "TNC2 2.5 MHz, TF 2.3b",
    "TNC2 2.5 MHz, TF 2.7b",
    "TNC2D 4.9 MHz, Spirit-2 5.0",
    "TNC2D 4.9 MHz, MFJ 1.1.9",
    "TNC2D 4.9 MHz, TF 2.1d",
    "TNC2D 4.9 MHz, TF 2.3b",
    "TNC2D 4.9 MHz, TF 2.7b",
];

/// Recipients of Fig. 13 whose best throughput is checked.
const FIG13_RECIPIENTS: [&str; 10] = [
    "Spirit-2 Std. 10 MHz, Spirit-2 5.0",
    "Spirit-2 Std. 10 MHz, MFJ 1.1.9",
    "Spirit-2 Std. 10 MHz, TF 2.1d",
    "Spirit-2 Std. 10 MHz, TF 2.3b",
    "Spirit-2 Std. 10 MHz, TF 2.7b",
    "Spirit-2 H.S. 20 MHz, Spirit-2 5.0",
    "Spirit-2 H.S. 20 MHz, MFJ 1.1.9",
    "Spirit-2 H.S. 20 MHz, TF 2.1d",
    "Spirit-2 H.S. 20 MHz, TF 2.3b",
    "Spirit-2 H.S. 20 MHz, TF 2.7b",
];

/// Every Zieliński section, in the paper's order.
pub fn sections(
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<Vec<Section>, ZielinskiError> {
    Ok(vec![
        figures_4_to_6(opts, progress)?,
        real_window_figures(opts, progress)?,
        figures_10_to_13(opts, progress)?,
    ])
}
