//! The reproduction of Zieliński 2013 for `linklab reproduce`: the model
//! checks (eq. 1-4), Figs. 4-6 and 10-13 (throughput against k) and the
//! real-window-size histograms (Figs. 7-9, 14-15), each a
//! [`Section`] built from the built-in experiment files ([`crate::builtin`]).

use core::time::Duration;

use super::experiment::{
    model, parse, FigureResult, Measured, Pair, RealWindowExperiment, ThroughputExperiment,
    WindowResult,
};
use super::published::{check, row, Quoted, Row, TOLERANCE};
use super::ZielinskiError;
use crate::builtin;
use crate::published::load;
use crate::report::{
    Basis, Check, Figure, Paper, Point, Progress, RunOptions, Section, Series, SeriesStyle, Table,
};
use linklab_channel::profile::{profile, profiles};

const PAPER: Paper = Paper::Zielinski2013;

/// What every section says about the set-up.
const SETUP_TEXT: &str = "Each TNC runs the real AX.25 engine (modulo 8, N1 = 256, no XID, \
fixed T1 of 10 s) inside a model of the controller: the host writes the file over the serial \
link at R_w (10 bits per character, eq. 5); the processor, at the clock of Table 1, spends \
a firmware's cycles per frame and per octet packetising host data, serving the HDLC \
controller and processing received frames (frame work before main-loop work); a frame \
buffer holds the data not yet acknowledged. The real window size and the turnaround are \
not set anywhere: they follow from these costs, the buffer and the firmware's policies (P \
on the last I frame or not, acknowledgement on channel clear or after T2 = 1.5 s, \
acknowledgement of a full window of 7 at once, keying up with the first frame or with a \
full window). The channel is Zieliński's wired link: perfect, half duplex, p-persistent \
CSMA with T_102 = 10 ms, p = 63, T_103 = 400 ms and no TXTAIL. T_103 is not given in the \
paper; 400 ms puts eq. 2 within 2.1% of both theoretical maxima it quotes (about 1000 bit/s \
at 1.2 kbit/s and 5900 at 9.6 kbit/s), where 300 ms would be 3.5% and 6.9% above them. \
Throughput is the file's bits over the time from the first character written by the \
sending host to the last delivered to the receiving host (section 3.2, T_CT to T_rc), \
as a mean over replications that differ in the CSMA draws and slot phases, with 95% \
confidence half-widths. Calibration: each firmware's costs and buffer were fitted to some \
of the very figures the checks compare with (the calibration table in the Figs. 4-6 \
section lists each profile, its fitted parameters and the figures it was fitted to; \
crates/channel/src/profile.rs documents each fit). A check against a figure its profile \
was fitted to only shows that the fit holds; it is marked 'Calibration fit' in its note. \
A check against any other figure is marked 'Prediction': the profile met that figure \
without having been tuned to it. The stronger results are the fits where one parameter \
set serves several figures (MFJ: Figs. 5 and 10 on two clocks; Spirit-2: Figs. 6 and 12; \
DLC7: Figs. 5 and 6) and the predictions (recipients in Figs. 11 and 13, Spirit-2 as a \
sender in Fig. 10, the real windows for short frames in Fig. 7 and on the TNC2H in Fig. 8).";

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

/// Seeds behind the spreads quoted in the notes: quick runs with seeds
/// 1-40, full runs with seeds 1-25 and the default seed.
const SEED_SWEEP: &str =
    "over quick runs with seeds 1-40 and full runs with seeds 1-25 and the default";

/// The note prefix of a check against a figure that `profile_name`'s
/// firmware was fitted to.
fn fit_note(profile_name: &str) -> Result<String, ZielinskiError> {
    let fw = profile(profile_name)?.firmware;
    Ok(format!(
        "Calibration fit: the {} costs were fitted to {}, this figure among them, so the \
         check shows how well the fit holds, not a prediction.",
        fw.title, fw.fitted_to
    ))
}

/// The note prefix of a check against a figure that `profile_name`'s
/// firmware was not fitted to.
fn prediction_note(profile_name: &str) -> Result<String, ZielinskiError> {
    let fw = profile(profile_name)?.firmware;
    Ok(format!(
        "Prediction: the {} costs were fitted to {} only; this figure was not used.",
        fw.title, fw.fitted_to
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
            .with_note(format!(
                "Calibration fit of one parameter: the paper states none of T_102, p and \
                 T_103 behind its curves. T_102 = 10 ms and p = 63 (the KISS default \
                 persistence) are assumed; T_103 (TXDELAY) was chosen as 400 ms, the round value that puts \
                 eq. 2 within 2.1% of both theoretical maxima the paper quotes (about 1000 \
                 bit/s at 1.2 kbit/s, about 5900 at 9.6 kbit/s) at once, so these two checks \
                 test that one T_103 fits both, not eq. 2 itself. With 400 ms eq. 2 gives \
                 {imm:.0} bit/s ({:+.1}%); with the 300 ms used before it gives {at_300:.0} \
                 bit/s ({:+.1}%), which {} the 10% tolerance. This check passes \
                 for {band} (10 ms steps). The same 400 ms is every simulated TNC's TXDELAY, so \
                 it shifts all simulated throughputs too.",
                (imm / r.quoted.value() - 1.0) * 100.0,
                (at_300 / r.quoted.value() - 1.0) * 100.0,
                if r.quoted.agrees(at_300) {
                    "would also pass"
                } else {
                    "would fail"
                }
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

fn slug(label: &str) -> String {
    let mut s = String::new();
    for c in label.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    s.trim_end_matches('-').to_string()
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

    let fig5 = figure(&results, "fig5")?;
    let mut fig5_dlc7 = 0.0;
    for (what, label, id, name, more) in [
        (
            "TNC2D measured max",
            "TNC2D (MFJ)",
            "tnc2d",
            "tnc2d-mfj",
            "The same MFJ costs, on half the clock and as a sender to a TNC3, also meet \
             Fig. 10 (750-900 bit/s at 1.2 kbit/s): one cost set for two figures.",
        ),
        (
            "DLC7 measured max",
            "DLC7",
            "dlc7",
            "dlc7",
            "The same DLC7 costs also meet Fig. 6 (about 11000 bit/s at 38.4 kbit/s): one \
             cost set for two figures. The margin is mostly the T2 wait and the serial links.",
        ),
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
            .with_note(format!(
                "{} Reached at k = {k}. {more}",
                basis_note(name, 5)?
            ))
            .with_basis(basis(name, 5)?),
        );
    }
    let fig6 = figure(&results, "fig6")?;
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
        let more = match label {
            "PK-96" => format!(
                "The paper's PK-96 ran unstably at 38.4 kbit/s (footnote 1); the figure \
                        is the one it groups with Spirit-2 and KPC-9612+, and the TimeWave \
                        costs were fitted to nothing else. Near the upper bound (5500): \
                        5309-5476 bit/s in quick runs, 5363-5428 in full runs \
                        ({SEED_SWEEP})."
            ),
            "Spirit-2 Std." => format!(
                "The paper does not say which Spirit-2 it ran at 38.4 kbit/s; \
                                the Standard (9.8304 MHz) is simulated; the High Speed with \
                                the same costs gives about 6400 bit/s, above the quoted \
                                figure. One Spirit-2 cost set serves this figure and Fig. 12 \
                                (about 4000 bit/s at 9.6 kbit/s) and lands near opposite \
                                edges of both: here near the upper bound, 5500, in Fig. 12 \
                                near the lower, 3600: the fit is stretched between the two. \
                                Seed-sensitive in quick runs: 5358-5507 bit/s, failing with \
                                seeds 19 and 28; full runs 5397-5447 ({SEED_SWEEP})."
            ),
            "KPC-9612+" => "The slow start (window opened gradually) that the paper reports for \
                            Kantronics is not modelled."
                .to_string(),
            "TNC3" => "The TNC3 is then the unfitted partner TNC in every result of Figs. \
                       10-15, whose checks are predictions as far as the TNC3 goes."
                .to_string(),
            "TNC7" => format!(
                "Seed-sensitive in quick runs: 10508-11019 bit/s, just over the upper \
                       bound (11000) with seed 19; full runs 10684-10831 ({SEED_SWEEP})."
            ),
            _ => format!(
                "The same DLC7 costs give {fig5_dlc7:.0} bit/s at 9.6 kbit/s (Fig. 5, almost \
                 5500): one cost set for two figures."
            ),
        };
        checks.push(
            check(
                format!("zielinski2013/fig6/{}/k7", slug(label)),
                &r,
                format!("Fig. 6, {label}: throughput at k = 7, 38.4 kbit/s"),
                ours,
            )
            .with_note(format!(
                "{} {ours:.0} bit/s at k = 7 ({k6:.0} at k = 6) against the paper's {}. \
                 {more}",
                basis_note(name, 6)?,
                r.text
            ))
            .with_basis(basis(name, 6)?),
        );
    }

    // Qualitative statements of section 3.1.
    let fig4 = figure(&results, "fig4")?;
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
        .with_note(
            "Prediction from a fitted parameter: the MFJ frame buffer (1100 octets) was fitted \
             to the real window of 4 at N1 = 256 (Figs. 7 and 14), not to Fig. 4; holding four \
             256-octet frames, it keeps the real window at 4 whatever k is, so the curves are \
             flat above k = 4 (limit: k = 7 at most 5% above k = 4). The paper shows the same \
             for the TNC2 and TNC2D; it also says the KPC-9612+ behaves so, which ours does not \
             (see the text).",
        ),
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
        .with_note(
            "Prediction: the TNC3 costs were fitted to Fig. 6 (38.4 kbit/s) only; the \
             behaviour comes from its policies as section 3.1 describes them (no P on the last \
             I frame, T2 = 1.5 s, an assumed value). Gap: our TNC3 overtakes the Z80 TNCs from \
             about k = 4, not only at k = 7: with T2 = 1.5 s the wait costs less than the \
             Z80s' slow turnaround at mid-size windows.",
        ),
    );
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
    checks.push(
        Check::qualitative(
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
        .with_note(format!(
            "Prediction of a policy, not of a fitted number: the step follows from the \
             recipient acknowledging at once when seven I frames are unacknowledged and \
             otherwise only after T2 = 1.5 s (assumed; the paper gives no T2), the behaviour \
             section 3.1 describes. The TNC3 and TNC7 costs were fitted at 38.4 kbit/s (Fig. \
             6) and the DLC7's also to its Fig. 5 maximum (which is the k = 7 point), so no \
             k = 6 value at 9.6 kbit/s was fitted. 'Visible' is taken as k = 7 more than 20% \
             above k = 6; ours: {}. The paper quotes no numbers for the step, so its size is \
             not checked; the step is this large in every seed swept ({SEED_SWEEP}).",
            steps.join(", ")
        )),
    );

    let mut tables = vec![calibration_table()];
    tables.extend(out.tables);
    let text = format!(
        "{SETUP_TEXT}\n\nCalibration, profile by profile (the first table): the Z80 \
         firmwares' costs are in cycles, so one set serves every clock the firmware ran on. \
         MFJ was fitted to Fig. 5 (TNC2D pair, 9.6 kbit/s) and Fig. 10 (TNC2 and TNC2D to \
         a TNC3, 1.2 kbit/s), its buffer to the real window of 4 in Figs. 7 and 14. Spirit-2 \
         was fitted to Fig. 12 (both clocks, 9.6 kbit/s) and Fig. 6 (Standard pair, 38.4 \
         kbit/s) and lands near opposite edges of both, just above the lower bound of Fig. 12 \
         and just below the upper bound of Fig. 6: the one cost set is stretched between \
         them. TF 2.1, 2.3 and \
         2.7 were fitted to the real windows of Figs. 14-15 (TF 2.1 also to being the \
         slowest sender of Fig. 10, and its receive cost to Fig. 11); none of their quoted \
         throughputs as a recipient at 9.6 kbit/s (Fig. 13) was used. The KPC-9612+, PK-96, \
         TNC3 and TNC7 were each fitted to their one quoted figure in Fig. 6 (and the KPC \
         buffer to Fig. 9), so their Fig. 6 checks are fits with one figure per profile, the \
         weakest kind; the DLC7 cost set serves both Fig. 5 and Fig. 6. Predictions in this \
         section: the flat Z80 curves above k = 4 (Fig. 4), the TNC3's T2 wait (Fig. 4) and \
         the step from k = 6 to 7 (Fig. 5).\n\nControllers without a profile: Tables 1 and \
         2 also list the KAM-XL (Kantronics), DSP-232 (Timewave), PTC-II (SCS), TNC31S (Symek) \
         and TNC4e (HBTron), with processor, clock, memory and port speeds only. No figure and \
         no sentence of the paper gives a throughput, a real window or a turnaround measured \
         with them, so there is nothing to fit a profile's costs to and nothing to predict: \
         they have no profile rather than a made-up one. Likewise the Kantronics firmware's \
         window that opens gradually at the start of a transmission (section 3.2) is \
         described without a rate or a measurement, so it is not modelled; the KPC-9612+ \
         profile sends full windows from the start.\n\nFigs. 4-6 pair identical TNCs. The paper gives R_w = 19.2 kbit/s for \
         Fig. 4 only and no file size for section 3.1; each controller's highest R_w from \
         Table 2 and the 8 KB file of section 3.2 are used. The 'AX.25 T2' curve is eq. 2 \
         with T_2 = 1.5 s, the T2 of the TF-family profiles (the paper gives no value). \
         Known gaps: the paper says the KPC-9612+ behaves like the Z80 TNCs at 1.2 kbit/s \
         (no gain above k = 4), yet Fig. 9 shows it using k = 7 at 9.6 kbit/s; our profile \
         follows Fig. 9 (large buffer) and so keeps gaining up to k = 7 in Fig. 4. The \
         Kantronics slow start (window opened gradually) the summary mentions is not \
         modelled."
    );
    Ok(Section {
        heading: "Figs. 4-6: effective throughput against k, identical TNC pairs".to_string(),
        text,
        tables,
        figures: out.figures,
        checks,
    })
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
        let (ours, k) = best(curve(fig10, label)?, ks);
        checks.push(
            check(
                format!("zielinski2013/fig10/{}/max", slug(label)),
                &r,
                format!("Fig. 10, {label} sending to a TNC3: highest throughput over k"),
                ours,
            )
            .with_note(format!(
                "{} Reached at k = {k}. The paper's range spans both clocks (750-800 bit/s on \
                 the TNC2, 800-900 on the TNC2D); the check takes the whole range, 675-990 \
                 with the 10% tolerance, for each.",
                basis_note(&pair(fig10, label)?.sender, 10)?
            ))
            .with_basis(basis(&pair(fig10, label)?.sender, 10)?),
        );
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
            let (ours, k) = best(curve(f, label)?, ks);
            let fig_no = if fig == "fig11" { 11 } else { 13 };
            checks.push(
                check(
                    format!("zielinski2013/{fig}/{}/max", slug(label)),
                    &r,
                    format!(
                        "{} {label} receiving from a TNC3: highest throughput over k",
                        if fig == "fig11" {
                            "Fig. 11,"
                        } else {
                            "Fig. 13,"
                        }
                    ),
                    ours,
                )
                .with_note(format!(
                    "{} Reached at k = {k}, with the TNC3 (fitted to Fig. 6 only) sending. \
                     The quoted range covers every recipient the paper tested, so a recipient \
                     is checked against the whole range ({:.0}-{:.0} bit/s with the 10% \
                     tolerance), not against its own curve.",
                    basis_note(&pair(f, label)?.recipient, fig_no)?,
                    lo_bound(&r),
                    hi_bound(&r)
                ))
                .with_basis(basis(&pair(f, label)?.recipient, fig_no)?),
            );
        }
    }
    let fig12 = figure(&results, "fig12")?;
    let r = row(9.6, "Spirit-2 sender")?;
    for label in [
        "Spirit-2 Std. 10 MHz, Spirit-2 5.0",
        "Spirit-2 H.S. 20 MHz, Spirit-2 5.0",
    ] {
        let (ours, k) = best(curve(fig12, label)?, ks);
        let spread = if label.starts_with("Spirit-2 Std.") {
            format!(
                " Seed-sensitive: just above the lower bound (3600); 3594-3660 bit/s in quick \
                 runs, failing with seed 9, and 3610-3636 in full runs ({SEED_SWEEP}). The \
                 Spirit-2 costs also serve Fig. 6, where the Standard pair lands near the upper \
                 bound: the fit is stretched between the two figures."
            )
        } else {
            String::new()
        };
        checks.push(
            check(
                format!("zielinski2013/fig12/{}/max", slug(label)),
                &r,
                format!("Fig. 12, {label} sending to a TNC3: highest throughput over k"),
                ours,
            )
            .with_note(format!(
                "{} Reached at k = {k}. The paper's 'theory about 6000' is eq. 2 for a full \
                 window; ours at k = 7 is {:.0} bit/s.{spread}",
                basis_note(&pair(fig12, label)?.sender, 12)?,
                model(9600, 256, Duration::ZERO).row(7).throughput_bps
            ))
            .with_basis(basis(&pair(fig12, label)?.sender, 12)?),
        );
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
        .with_note(
            "Calibration fit: TF 2.1's costs were fitted to being the slowest sender here and \
             to its real window of 1-2 (Fig. 14). Our TF 2.1 packetises a 256-octet block in \
             about 4 s on the TNC2, longer than a frame's 1.9 s on the air, so the TNC3 acknowledges after T2 nearly every frame. \
             Its curve still rises from k = 1 to 2-3 (a second frame sometimes catches the \
             transmission), which the paper does not show.",
        ),
    );

    let text = format!(
        "{SETUP_TEXT}\n\nSection 3.2 pairs each Z80 TNC with a TNC3 (the paper used a TNC3 or \
         a TNC7). MFJ and Spirit-2 (TAPR family) set P on the last I frame, acknowledge as \
         soon as the channel clears and key up with a full window; TF sets no P, waits T2 and \
         keys up with its first frame. Known gaps: our TF 2.7 beats MFJ and Spirit by more \
         than the paper's 'not significantly' (it uses k = 7 and its costs were fitted to the \
         real window sizes of Figs. 14-15, not to a throughput); MFJ on Spirit-2 hardware as \
         a recipient at 9.6 kbit/s reaches about 3800 bit/s, just inside the range; and the \
         TAPR senders lose a little from k = 3 to 4, because with a full frame buffer the \
         next window can only be packetised after the acknowledgement.\n\nCalibration: \
         MFJ's costs were fitted to Fig. 10 (and Fig. 5), Spirit-2's to Fig. 12 (and Fig. 6), \
         TF 2.1's receive cost to Fig. 11 and the TNC3 partner's costs to Fig. 6 only. So the \
         MFJ checks of Fig. 10, the Spirit-2 checks of Fig. 12 and the TF 2.1 checks of Fig. \
         11 are calibration fits; the Spirit-2 checks of Fig. 10 and every other recipient \
         check of Figs. 11 and 13 are predictions. The recipient checks are weak predictions \
         at 1.2 kbit/s, where the radio, not the recipient, sets the pace and the quoted range \
         is wide; at 9.6 kbit/s (Fig. 13) the recipient's processor matters and MFJ on the \
         10 MHz Spirit-2 lands near the lower bound."
    );
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

fn window_case<'a>(
    results: &'a [WindowResult],
    fig: &str,
    label: &str,
) -> Result<&'a Measured, ZielinskiError> {
    results
        .iter()
        .find(|r| r.spec.id == fig)
        .and_then(|r| r.case(label))
        .ok_or_else(|| ZielinskiError::Parameter(format!("no case \"{label}\" in \"{fig}\"")))
}

/// Figs. 7-9 and 14-15: real window sizes at k = 7 from the simulated
/// transfers, with the checks that the Z80 controllers cannot use k above
/// about 4.
pub fn real_window_figures(
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<Section, ZielinskiError> {
    let hardware: RealWindowExperiment = parse(builtin::ZIELINSKI_FIGS_7_9)?;
    let software: RealWindowExperiment = parse(builtin::ZIELINSKI_FIGS_14_15)?;
    let hw = hardware.simulate(opts, progress)?;
    let sw = software.simulate(opts, progress)?;
    let mut out = hardware.output(&hw);
    let more = software.output(&sw);
    out.tables.extend(more.tables);
    out.figures.extend(more.figures);
    let mut checks = Vec::new();

    let tnc2d = window_case(&hw, "fig7", "N1 = 256")?;
    let tnc2h = window_case(&hw, "fig8", "N1 = 256")?;
    let kpc = window_case(&hw, "fig9", "N1 = 256")?;
    let z80_limited = tnc2d.mean_window() <= 5.0 && tnc2h.mean_window() <= 5.0;
    checks.push(
        Check::qualitative(
            "zielinski2013/fig7-9/z80-real-window-limit",
            PAPER,
            "Figs. 7-9: at k = 7 and N1 = 256 the Z80 TNC2D (1.2 kbit/s) and TNC2H (9.6 \
             kbit/s) send at most about 4-5 frames per transmission, the KPC-9612+ mostly 7",
            "Z80 controllers cannot use the maximum window; for the KPC-9612+ k = 7 dominates",
            format!(
                "mean real window: TNC2D {:.2}, TNC2H {:.2}, KPC-9612+ {:.2} (most frequent \
                 {})",
                tnc2d.mean_window(),
                tnc2h.mean_window(),
                kpc.mean_window(),
                kpc.mode()
            ),
            z80_limited && kpc.mode() == 7,
        )
        .with_note(
            "Calibration fit for the TNC2D and the KPC-9612+, prediction for the TNC2H: the \
             MFJ frame buffer (1100 octets) was fitted to this real window of 4 (Figs. 7 and \
             14) and holds four 256-octet frames, and the KPC-9612+ buffer (8192 octets) was \
             made large for its k = 7 here (Fig. 9); the TNC2H (9.8304 MHz), a clock MFJ was \
             not fitted on, comes out at 4 as well, limited by the same buffer. Limits: mean \
             at most 5 for the Z80s, most frequent 7 for the KPC-9612+. Gap: ours is exactly 4 \
             in every transmission (the 64 KB file is 256 frames, a multiple of 4), where the \
             paper's histograms spread over smaller sizes too.",
        ),
    );
    let small = window_case(&hw, "fig7", "N1 = 32")?;
    checks.push(
        Check::qualitative(
            "zielinski2013/fig7/smaller-frames-larger-window",
            PAPER,
            "Fig. 7: with shorter I frames the TNC2D's real window grows",
            "with decreasing I frame length, real window sizes increase",
            format!(
                "mean real window {:.2} at N1 = 32, {:.2} at N1 = 256",
                small.mean_window(),
                tnc2d.mean_window()
            ),
            small.mean_window() > tnc2d.mean_window() + 1.0,
        )
        .with_note(
            "Prediction from a fitted parameter: the MFJ buffer was fitted in octets to the \
             real window at N1 = 256 only (1100 octets, four frames); at N1 = 32 it would \
             hold far more than seven frames, so k = 7 becomes the limit. Limit: the mean at \
             N1 = 32 more than one frame above that at N1 = 256. The paper states the trend \
             only in words (its histogram values are not transcribed), so the sizes at N1 = \
             64 and 128 (in the table) are not checked. Identical in every seed swept.",
        ),
    );

    let taps: Vec<(&str, &Measured)> = [
        ("fig14", "TNC2 2.5 MHz, MFJ 1.1.9"),
        ("fig14", "TNC2D 4.9 MHz, Spirit-2 5.0"),
        ("fig15", "Spirit-2 Std. 10 MHz, Spirit-2 5.0"),
        ("fig15", "Spirit-2 H.S. 20 MHz, MFJ 1.1.9"),
    ]
    .iter()
    .map(|&(f, l)| window_case(&sw, f, l).map(|m| (l, m)))
    .collect::<Result<_, _>>()?;
    checks.push(
        Check::qualitative(
            "zielinski2013/fig14-15/tapr-window-about-4",
            PAPER,
            "Figs. 14-15: MFJ and Spirit-2 firmware send about 4 frames per transmission at \
             k = 7",
            "real window size oscillates around 4 (never above 5)",
            taps.iter()
                .map(|(l, m)| format!("{l}: mean {:.2}", m.mean_window()))
                .collect::<Vec<_>>()
                .join("; "),
            taps.iter().all(|(_, m)| {
                m.mean_window() <= 5.0 && m.real_windows[5..].iter().all(|&c| c == 0)
            }),
        )
        .with_note(
            "Calibration fit: the 1100-octet buffer of MFJ and Spirit-2 was fitted to this \
             real window of about 4 (Figs. 7 and 14-15). Limit: mean at most 5 and no \
             transmission of 6 or 7 frames, for MFJ and Spirit-2 on four of the controllers. \
             Gaps: ours is exactly 4 in every transmission (the 8 KB file is 32 frames), while \
             the paper sees 3 and 5 interleaving in some versions and, in the faster (9.6 \
             kbit/s) configuration, more windows smaller than 4; our buffer limit does not \
             depend on the processor, which the paper's smaller windows suggest it does. \
             Identical in every seed swept.",
        ),
    );
    let tf21 = window_case(&sw, "fig14", "TNC2 2.5 MHz, TF 2.1d")?;
    let tf27 = window_case(&sw, "fig15", "Spirit-2 H.S. 20 MHz, TF 2.7b")?;
    checks.push(
        Check::qualitative(
            "zielinski2013/fig14-15/tf-window-by-clock",
            PAPER,
            "Figs. 14-15: TF 2.1 on a 2.5 MHz TNC2 sends 1-2 frames per transmission; TF 2.7 \
             on a 20 MHz Spirit-2 still uses 7",
            "TF 2.1 always 1 or 2 at 2.5 MHz; TF 2.7 window of 7 at 20 MHz",
            format!(
                "TF 2.1 on TNC2: mean {:.2}; TF 2.7 on Spirit-2 H.S.: mean {:.2} (most \
                 frequent {})",
                tf21.mean_window(),
                tf27.mean_window(),
                tf27.mode()
            ),
            tf21.mean_window() <= 2.0 && tf27.mode() == 7,
        )
        .with_note(format!(
            "Calibration fit: the TF 2.1 and TF 2.7 costs were fitted to these real windows \
             ({}; {}). Limits: TF 2.1 mean at most 2, TF 2.7 most frequent 7. The 8 KB file \
             is 32 frames, so the last window of a k = 7 transfer has 4 frames: a sender that \
             always fills its window averages 6.4, not 7. The TF 2.1 mean varies with the \
             seed, 1.00-1.28 ({SEED_SWEEP}); TF 2.7 is 6.40 in every seed.",
            profile("tnc2-tf21")?.firmware.fitted_to,
            profile("tnc2-tf27")?.firmware.fitted_to
        )),
    );

    let text = format!(
        "{SETUP_TEXT}\n\nThe real window size is counted as the paper read it from the \
         monitor log: the I frames of each transmission of the sender. Figs. 7-9 send a 64 KB \
         file at k = 7 between two identical TNCs for several N1; Figs. 14-15 use the 8 KB \
         transfers of section 3.2 at k = 7. The Z80 TAPR-family limit comes out of the frame \
         buffer (four 256-octet frames): with shorter frames more fit, as in Fig. 7. The TF \
         figures come out of the processor: TF keys up with its first frame, and how many \
         more join depends on how fast the next ones are packetised.\n\nCalibration: the \
         MFJ and Spirit-2 buffer was fitted to the real window of 4 at N1 = 256 (Figs. 7, \
         14-15), the KPC-9612+ buffer to its k = 7 in Fig. 9, and the TF costs to the TF \
         real windows of Figs. 14-15, so those checks are calibration fits. Predictions: the \
         larger windows for short frames (Fig. 7, the buffer was fitted at N1 = 256 only) \
         and the TNC2H's window of 4 at 9.6 kbit/s (Fig. 8, a clock MFJ was not fitted on). \
         The TF 2.3 windows were fitted too (paper: 1 or 2 on the TNC2, about 6 on the TNC2D \
         at 1.2 kbit/s; ours a mean of about 2.2, with a quarter of the transmissions at 4, \
         and 6.4) and appear in the tables but are not a check."
    );
    Ok(Section {
        heading: "Figs. 7-9, 14-15: real window size".to_string(),
        text,
        tables: out.tables,
        figures: out.figures,
        checks,
    })
}

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
