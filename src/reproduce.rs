//! `linklab reproduce`: the papers' tables beside linklab's figures.
//!
//! At this stage the reproductions are the closed-form ones: Ronan et al.'s
//! Tables II and III and Zieliński's model curves (eq. 1-4) with the
//! theoretical throughputs his text quotes. Each comparison becomes a check
//! in `summary.json`; the published figures come from the copy of
//! `../shared/reference` kept in `experiments/reference` and compiled in.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, ValueEnum};
use linklab_models::{ronan, zielinski};
use serde::Serialize;
use serde_json::Value;

use crate::model::zielinski_table;
use crate::table::Table;

const RONAN_TRANSFER: &str = include_str!("../experiments/reference/ronan_ax25_transfer.csv");
const ZIELINSKI_TEXT: &str = include_str!("../experiments/reference/zielinski_text.csv");

/// Largest gap, in seconds, allowed between the Ronan model and each value
/// of Tables II and III (the papers print one decimal).
const RONAN_TOLERANCE_S: f64 = 0.15;

/// Relative tolerance for a throughput the paper quotes as "about" a value.
const ABOUT_TOLERANCE: f64 = 0.10;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Paper {
    /// Zieliński 2013, effective throughput of AX.25.
    #[value(name = "zielinski2013")]
    Zielinski2013,
    /// Ronan, Long and Walsh, DTN over AX.25.
    #[value(name = "ronan-ax25")]
    RonanAx25,
}

#[derive(Args)]
pub struct ReproduceArgs {
    /// Reproduce only this paper.
    #[arg(long)]
    paper: Option<Paper>,
    /// Directory for summary.json and the CSV files.
    #[arg(long, default_value = "linklab-report")]
    out: PathBuf,
}

/// One comparison with a published figure, as written to `summary.json`.
#[derive(Serialize)]
struct Check {
    id: String,
    paper: &'static str,
    what: String,
    paper_value: Value,
    ours: Value,
    unit: &'static str,
    /// Relative tolerance (0.10 is 10%); `None` for a qualitative check.
    tolerance: Option<f64>,
    pass: bool,
    /// Why ours differs from the paper, or what the comparison assumes.
    note: String,
}

#[derive(Serialize)]
struct Summary {
    checks: Vec<Check>,
}

pub fn run(args: ReproduceArgs) -> anyhow::Result<()> {
    let wanted = |p| args.paper.is_none_or(|w| w == p);
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create output directory {}", args.out.display()))?;
    let mut checks = Vec::new();
    if wanted(Paper::RonanAx25) {
        checks.extend(ronan_tables(&args.out)?);
    }
    if wanted(Paper::Zielinski2013) {
        checks.extend(zielinski_curves(&args.out)?);
    }
    let (passed, total) = (checks.iter().filter(|c| c.pass).count(), checks.len());
    let summary = args.out.join("summary.json");
    std::fs::write(&summary, serde_json::to_string_pretty(&Summary { checks })?)
        .with_context(|| format!("cannot write {}", summary.display()))?;
    println!(
        "{passed} of {total} checks pass; results in {}",
        args.out.display()
    );
    Ok(())
}

fn write_csv(dir: &Path, name: &str, text: &str) -> anyhow::Result<()> {
    let path = dir.join(name);
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Ronan Tables II (1200 bit/s) and III (9600 bit/s): the model with Table
/// I's parameters against the published model times.
fn ronan_tables(out: &Path) -> anyhow::Result<Vec<Check>> {
    let mut checks = Vec::new();
    let mut csv = String::from("bitrate_bps,window,frames,windows,ours_s,paper_s,diff_s\n");
    for (table, bitrate) in [("II", 1200.0), ("III", 9600.0)] {
        let params = ronan::Params {
            bitrate_bps: bitrate,
            ..ronan::Params::default()
        };
        let mut t = Table::new(["window", "frames", "windows", "ours_s", "paper_s", "diff_s"]);
        for (window, published) in reference_rows(RONAN_TRANSFER, "bitrate_bps", bitrate)? {
            let row = params.transfer(window);
            let diff = row.transfer_s - published;
            t.row(vec![
                window.to_string(),
                row.frames.to_string(),
                row.windows.to_string(),
                format!("{:.2}", row.transfer_s),
                format!("{published:.1}"),
                format!("{diff:+.2}"),
            ]);
            let _ = writeln!(
                csv,
                "{bitrate},{window},{},{},{:.4},{published},{diff:.4}",
                row.frames, row.windows, row.transfer_s
            );
            checks.push(Check {
                id: format!("ronan-ax25/table{table}/window{window}"),
                paper: "ronan-ax25",
                what: format!(
                    "Table {table}: model transfer time of 7182 octets at {bitrate} bit/s, window {window}"
                ),
                paper_value: published.into(),
                ours: round(row.transfer_s, 3).into(),
                unit: "s",
                tolerance: Some(round(RONAN_TOLERANCE_S / published, 4)),
                pass: diff.abs() <= RONAN_TOLERANCE_S,
                note: "T_ack includes T_txtail as the paper's formula is printed; its worked \
                       example leaves the tail out and would miss by up to 0.59 s \
                       (see models::ronan)."
                    .into(),
            });
        }
        println!("Ronan et al., Table {table}: minimum transfer time at {bitrate} bit/s (Table I parameters)");
        println!("{t}");
    }
    write_csv(out, "ronan_tables.csv", &csv)?;
    Ok(checks)
}

/// (window, model_s) rows of the Ronan reference file for one bit rate.
fn reference_rows(text: &str, rate_col: &str, rate: f64) -> anyhow::Result<Vec<(u32, f64)>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers()?.clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .with_context(|| format!("reference file has no column {name}"))
    };
    let (rate_i, window_i, model_i) = (col(rate_col)?, col("window")?, col("model_s")?);
    let mut rows = Vec::new();
    for record in reader.records() {
        let r = record?;
        if r[rate_i].parse::<f64>()? == rate {
            rows.push((r[window_i].parse()?, r[model_i].parse()?));
        }
    }
    Ok(rows)
}

fn round(v: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (v * f).round() / f
}

/// Zieliński's "AX.25 imm" model curves for N1 = 256 at the three radio
/// rates of Figs. 4-6, and the theoretical maxima his text quotes.
fn zielinski_curves(out: &Path) -> anyhow::Result<Vec<Check>> {
    let params = |kbps: f64| zielinski::Params {
        bitrate_bps: kbps * 1000.0,
        ..zielinski::Params::default()
    };
    let mut csv = String::from("radio_kbps,window,cycle_s,throughput_bps\n");
    for kbps in [1.2, 9.6, 38.4] {
        let rows: Vec<_> = (1..=7).map(|k| params(kbps).row(k)).collect();
        for r in &rows {
            let _ = writeln!(
                csv,
                "{kbps},{},{:.5},{:.1}",
                r.window, r.cycle_s, r.throughput_bps
            );
        }
        println!(
            "Zielinski eq. 2, \"AX.25 imm\": N1 = 256, {kbps} kbit/s, T_102 10 ms, p 63, T_103 300 ms, T_2 0"
        );
        println!("{}", zielinski_table(&rows));
    }
    write_csv(out, "zielinski_model.csv", &csv)?;

    let mut checks = Vec::new();
    let mut reader = csv::Reader::from_reader(ZIELINSKI_TEXT.as_bytes());
    for record in reader.records() {
        let r = record?;
        let (kbps, k, what, value) = (&r[0], &r[2], &r[3], &r[4]);
        if !what.starts_with("theoretical") {
            continue; // measured figures need the TNC simulator
        }
        let kbps: f64 = kbps.parse()?;
        let k: u32 = k.parse()?;
        let quoted: f64 = value
            .trim_start_matches("about ")
            .parse()
            .with_context(|| format!("cannot read \"{value}\" as a number"))?;
        let ours = params(kbps).row(k).throughput_bps;
        let gap = ours / quoted - 1.0;
        checks.push(Check {
            id: format!("zielinski2013/theory/{kbps}kbps/k{k}"),
            paper: "zielinski2013",
            what: format!("{what} at {kbps} kbit/s, N1 = 256, k = {k}"),
            paper_value: value.into(),
            ours: round(ours, 1).into(),
            unit: "bit/s",
            tolerance: Some(ABOUT_TOLERANCE),
            pass: gap.abs() <= ABOUT_TOLERANCE,
            note: format!(
                "The paper does not state the T_102, p and T_103 behind its curves; ours uses \
                 10 ms, 63 and 300 ms, and lands {:+.1}% from the quoted figure. {}",
                gap * 100.0,
                zielinski_gap_note(kbps)
            )
            .trim_end()
            .to_string(),
        });
    }
    Ok(checks)
}

/// What could account for the gap at one rate, computed with the model.
fn zielinski_gap_note(kbps: f64) -> String {
    if kbps < 2.0 {
        return String::new();
    }
    // The section 3.2 transfers were 8 KB files timed end to end through TNCs.
    let transfer = zielinski::Params {
        bitrate_bps: kbps * 1000.0,
        size_octets: Some(8192),
        serial_bps: Some(9600.0),
        ..zielinski::Params::default()
    }
    .row(7);
    format!(
        "Timing the 8 KB file of section 3.2 end to end, with eq. 5 for a 9.6 kbit/s serial \
         link, gives {:.0} bit/s instead; the paper does not say which it plotted.",
        transfer.throughput_bps
    )
}
