//! Tables II and III of Ronan, Long and Walsh: the model's minimum transfer
//! times of 7182 octets at 1200 and 9600 bit/s, checked two ways: the
//! closed form against the published values, and the real engine on the
//! simulated Table I channel against the model with the simulated
//! access wait and the short last frame (within 1 %).

use linklab_models::ronan::Params;

use super::reference::Published;
use super::{compare_with_progress, Comparison, RonanError};
use crate::published::load;
use crate::report::{
    Check, Figure, Paper, Point, Progress, RunOptions, Section, Series, SeriesStyle, Table,
};
use crate::transfer::TransferConfig;
use crate::{check_note, section_text};

/// Largest gap, in seconds, allowed between the closed-form model and each
/// value of Tables II and III (the paper prints one decimal).
const CLOSED_FORM_TOLERANCE_S: f64 = 0.15;

/// Largest relative gap allowed between the simulated transfer and the
/// model with its two inputs corrected ([`Comparison::corrected_s`]):
/// nothing else separates them, so they should agree closely.
const SIMULATION_TOLERANCE: f64 = 0.01;

/// Replications per window and bit rate.
const REPLICATIONS: u64 = 20;
/// The same under `--quick`.
const QUICK_REPLICATIONS: u64 = 5;

/// The two tables: name and bit rate.
const TABLES: [(&str, u32); 2] = [("II", 1200), ("III", 9600)];

/// Tables II and III: the closed-form model against the published values
/// (ids `ronan-ax25/tableII/window1` ...) and the simulated transfer with
/// the real engine against the model (ids
/// `ronan-ax25/tableII/simulated/window1` ...).
pub fn tables_2_3(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, RonanError> {
    let reference = load::<Published>()?;
    let replications = if opts.quick {
        QUICK_REPLICATIONS
    } else {
        REPLICATIONS
    };
    let rows = |rate: u32| reference.iter().filter(move |r| r.bit_rate == rate);
    progress.add_work(replications * reference.len() as u64);

    let mut section = Section {
        heading: "Tables II and III: minimum transfer times, model and simulation".into(),
        text: section_text!("ronan-ax25/tables-2-3"),
        ..Section::default()
    };
    for (table, rate) in TABLES {
        // (a) The closed form against the published values.
        let params = Params {
            bitrate_bps: f64::from(rate),
            ..Params::default()
        };
        let mut closed = Table {
            id: format!("ronan-table-{}-model", table.to_lowercase()),
            title: format!(
                "Table {table}: model transfer time of 7182 octets at {rate} bit/s (Table I parameters)"
            ),
            columns: ["window", "frames", "windows", "ours_s", "paper_s", "diff_s"]
                .map(String::from)
                .into(),
            rows: Vec::new(),
        };
        for p in rows(rate) {
            let row = params.transfer(u32::from(p.window));
            let diff = row.transfer_s - p.model_s;
            closed.rows.push(vec![
                p.window.to_string(),
                row.frames.to_string(),
                row.windows.to_string(),
                format!("{:.2}", row.transfer_s),
                format!("{:.1}", p.model_s),
                format!("{diff:+.2}"),
            ]);
            let mut check = Check::relative(
                format!("ronan-ax25/table{table}/window{}", p.window),
                Paper::RonanAx25,
                format!(
                    "Table {table}: model transfer time of 7182 octets at {rate} bit/s, window {}",
                    p.window
                ),
                p.model_s,
                round(row.transfer_s, 3),
                "s",
                round(CLOSED_FORM_TOLERANCE_S / p.model_s, 4),
            )
            .with_note(check_note!("ronan-ax25/tableII-III/window*"));
            check.pass = diff.abs() <= CLOSED_FORM_TOLERANCE_S;
            section.checks.push(check);
        }
        section.tables.push(closed);

        // (b) The real engine on the simulated channel against the model.
        let mut simulated = Vec::new();
        for p in rows(rate) {
            let config = TransferConfig::ronan_table_1(rate, p.window);
            let c = compare_with_progress(&config, replications, opts.seed, opts.jobs, progress)?;
            section.checks.push(simulation_check(table, &c, p.model_s));
            simulated.push((p.model_s, c));
        }
        section
            .tables
            .push(simulation_table(table, rate, &simulated));
        section.figures.push(figure(table, rate, &simulated));
    }
    Ok(section)
}

fn simulation_check(table: &str, c: &Comparison, published_s: f64) -> Check {
    Check::relative(
        format!("ronan-ax25/table{table}/simulated/window{}", c.window),
        Paper::RonanAx25,
        format!(
            "Table {table}: simulated transfer of 7182 octets (real engine, Table I channel) \
             against the model, {} bit/s, window {}",
            c.bit_rate, c.window
        ),
        round(c.corrected_s, 3),
        c.simulated.mean,
        "s",
        SIMULATION_TOLERANCE,
    )
    .with_note(check_note!(
        "ronan-ax25/tableII-III/simulated/window*",
        access_wait_ms = format!("{:.1}", c.access_wait.mean * 1e3),
        model_s = format!("{:.2}", c.model_s),
        table = table,
        published_s = format!("{published_s:.1}"),
        gap = format!("{:+.2}", c.gap_percent()),
        extra_ms = format!("{:.0}", (c.access_wait.mean - 0.005) * 1e3),
    ))
}

fn simulation_table(table: &str, rate: u32, rows: &[Row]) -> Table {
    Table {
        id: format!("ronan-table-{}-simulated", table.to_lowercase()),
        title: format!(
            "Table {table}: simulated transfer (real engine on the Table I channel) against \
             the model, {rate} bit/s; timed as the model times it, from the message offered \
             to the end of the last acknowledgement's transmission"
        ),
        columns: [
            "window",
            "paper_s",
            "formula_s",
            "simulated_s",
            "ci95_s",
            "gap_to_formula_%",
            "access_wait_ms",
            "model_with_measured_wait_s",
            "gap_%",
        ]
        .map(String::from)
        .into(),
        rows: rows
            .iter()
            .map(|(paper, c)| {
                vec![
                    c.window.to_string(),
                    format!("{paper:.1}"),
                    format!("{:.2}", c.model_s),
                    format!("{:.3}", c.simulated.mean),
                    format!("{:.3}", c.simulated.half_width),
                    format!("{:+.2}", c.gap_percent()),
                    format!("{:.1}", c.access_wait.mean * 1e3),
                    format!("{:.3}", c.corrected_s),
                    format!("{:+.2}", c.corrected_gap_percent()),
                ]
            })
            .collect(),
    }
}

/// A published value and the simulated comparison for one window.
type Row = (f64, Comparison);

fn figure(table: &str, rate: u32, rows: &[Row]) -> Figure {
    let line = |label: &str, style, y: &dyn Fn(&Row) -> (f64, Option<f64>)| Series {
        label: label.into(),
        style,
        points: rows
            .iter()
            .map(|r| {
                let (y, half_width) = y(r);
                Point {
                    x: f64::from(r.1.window),
                    y,
                    half_width,
                }
            })
            .collect(),
    };
    Figure {
        id: format!("ronan-table-{}", table.to_lowercase()),
        title: format!("Table {table}: transfer time of 7182 octets at {rate} bit/s"),
        x_label: "window k".into(),
        y_label: "transfer time, s".into(),
        log_x: false,
        log_y: false,
        series: vec![
            line(&format!("Table {table}"), SeriesStyle::Published, &|r| {
                (r.0, None)
            }),
            line("model as printed", SeriesStyle::Model, &|r| {
                (r.1.model_s, None)
            }),
            line(
                "model with measured access wait",
                SeriesStyle::Model,
                &|r| (r.1.corrected_s, None),
            ),
            line("simulated (real engine)", SeriesStyle::Simulated, &|r| {
                (r.1.simulated.mean, Some(r.1.simulated.half_width))
            }),
        ],
    }
}

fn round(v: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (v * f).round() / f
}
