//! Tables V-VII as a report section: the simulated transfers against the
//! published AX.25 CM-CL column, and T1 = 10 s against section V.A.

use linklab_models::ronan::Params;

use super::super::reference::{published_row, Published};
use super::super::{bit_rates, RonanError};
use super::{MeasuredConfig, MeasuredRow, DEFAULT_T1, TOLERANCE};
use crate::published::load;
use crate::report::{
    Basis, Check, Figure, Paper, Point, Progress, RunOptions, Section, Series, SeriesStyle, Table,
};
use crate::{check_note, section_text};

/// Table V (1200 bit/s), Table VII (9600 bit/s) and Table VI (the
/// difference from the model per TX/RX swap): the simulated transfer
/// through host and KISS TNC with the calibrated parameters against the
/// published AX.25 CM-CL column; and T1 = 10 s (the kernel's default)
/// against the paper's report that it was too short for windows of 4 and
/// more.
pub fn tables_5_7(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, RonanError> {
    let config = MeasuredConfig::built_in()?;
    let reference = load::<Published>()?;
    let primary = config.ack_windows.first().copied().unwrap_or_default();
    let t1_study = MeasuredConfig {
        bit_rates_bps: vec![1200],
        ack_windows: vec![primary],
        t1_s: DEFAULT_T1.as_secs_f64(),
        ..config.clone()
    };
    let rows = config.simulate(opts, progress)?;
    let t1_rows = t1_study.simulate(opts, progress)?;

    let mut section = Section {
        heading: "Tables V-VII: measured AX.25 CM-CL transfer times, the real bundle agent and \
                  AX.25 CL over the host and KISS TNC model"
            .into(),
        text: text(&config),
        ..Section::default()
    };
    let mut table = Table {
        id: "ronan-tables-5-7".into(),
        title: "Tables V-VII: AX.25 CM-CL transfer of 7182 octets, published and simulated \
                (one BPv7 bundle over the AX.25 CL, through host and KISS TNC); simulated_s \
                from the file offered to the end of the last ACK_SEGMENT's transmission, \
                sabm_to_final_ua_s from the first SABM's key-up to the end of the UA \
                answering the sender's DISC"
            .into(),
        columns: [
            "ack_window",
            "bit_rate_bps",
            "window",
            "model_s",
            "paper_ax25_cl_s",
            "simulated_s",
            "ci95_s",
            "gap_%",
            "sabm_to_final_ua_s",
            "sabm_to_final_ua_gap_%",
            "swaps",
            "paper_excess_per_swap_s",
            "simulated_excess_per_swap_s",
            "i_frames",
            "receiver_frames",
            "transmissions",
            "longest_ack_wait_s",
        ]
        .map(String::from)
        .into(),
        rows: Vec::new(),
    };
    for row in &rows {
        let Some(p) = published_row(&reference, row.bit_rate, row.window) else {
            continue;
        };
        let swaps = swaps(&config, row.window);
        let paper_per_swap = (p.ax25_cm_cl_s - p.model_s) / f64::from(swaps);
        let ours_per_swap = (row.transfer.mean - p.model_s) / f64::from(swaps);
        table.rows.push(vec![
            row.ack_window.to_string(),
            row.bit_rate.to_string(),
            row.window.to_string(),
            format!("{:.1}", p.model_s),
            format!("{:.2}", p.ax25_cm_cl_s),
            format!("{:.2}", row.transfer.mean),
            format!("{:.2}", row.transfer.half_width),
            format!("{:+.1}", 100.0 * (row.transfer.mean / p.ax25_cm_cl_s - 1.0)),
            format!("{:.2}", row.session.mean),
            format!("{:+.1}", 100.0 * (row.session.mean / p.ax25_cm_cl_s - 1.0)),
            swaps.to_string(),
            format!("{paper_per_swap:.2}"),
            format!("{ours_per_swap:.2}"),
            format!("{:.1}", row.sender_frames),
            format!("{:.1}", row.receiver_frames),
            format!("{:.1}", row.transmissions),
            format!("{:.2}", row.ack_wait_max_s),
        ]);
        let name = if row.bit_rate == 1200 { "V" } else { "VII" };
        // The first ack_window keeps the check ids of the tables; the others
        // are named by their ack_window.
        let variant = if row.ack_window == primary {
            String::new()
        } else {
            format!("/ack_window{}", row.ack_window)
        };
        section.checks.push(
            Check::relative(
                format!("ronan-ax25/table{name}{variant}/window{}", row.window),
                Paper::RonanAx25,
                format!(
                    "Table {name}: AX.25 CM-CL transfer of 7182 octets at {} bit/s, window {}, \
                     ack_window {}",
                    row.bit_rate, row.window, row.ack_window
                ),
                p.ax25_cm_cl_s,
                row.transfer.mean,
                "s",
                TOLERANCE,
            )
            .with_basis(basis_at(row.ack_window))
            .with_note(check_note!(
                "ronan-ax25/table*/window*",
                transfer = transfer_note(row, &config),
                session = format!("{:.2}", row.session.mean),
                session_gap = format!("{:+.1}", 100.0 * (row.session.mean / p.ax25_cm_cl_s - 1.0)),
            )),
        );
        if let (Some(per_cycle), true) = (p.error_per_cycle_s, row.ack_window == primary) {
            section.checks.push(
                Check::relative(
                    format!("ronan-ax25/tableVI/window{}", row.window),
                    Paper::RonanAx25,
                    format!(
                        "Table VI: AX.25 CM-CL time beyond the model per TX/RX swap, 1200 bit/s, \
                         window {} ({swaps} swaps)",
                        row.window
                    ),
                    per_cycle,
                    ours_per_swap,
                    "s",
                    TOLERANCE,
                )
                .with_basis(basis_at(row.ack_window))
                .with_note(swap_note(row, &config)),
            );
        }
    }
    section.text.push_str(&clock_text(&rows));
    section.tables.push(table);
    section.tables.push(t1_table(&t1_rows));
    section.checks.push(t1_check(&t1_rows));
    for rate in &config.bit_rates_bps {
        section
            .figures
            .push(figure(*rate, &config.ack_windows, &rows, &reference));
    }
    Ok(section)
}

/// The ack_window of the column the TNC processing and the carrier hold
/// were fitted on (example `ronan_calibrate`).
const CALIBRATION_ACK_WINDOW: u32 = 8;

/// The basis of a check at `ack_window`: a fit on the calibration column,
/// a prediction on another.
fn basis_at(ack_window: u32) -> Basis {
    if ack_window == CALIBRATION_ACK_WINDOW {
        Basis::Fit
    } else {
        Basis::Prediction
    }
}

/// TX/RX swaps the paper counts: one per window of data, `ceil(frames/k)`.
pub(super) fn swaps(config: &MeasuredConfig, window: u8) -> u32 {
    let frames = config.message_octets.div_ceil(config.n1_octets.max(1));
    u32::try_from(frames.div_ceil(usize::from(window.max(1)))).unwrap_or(u32::MAX)
}

/// Data windows in which the receiver's T2 (started by the first frame)
/// expires before the window's last frame has arrived.
fn t2_fires_mid_window(config: &MeasuredConfig, row: &MeasuredRow) -> bool {
    let params = Params {
        bitrate_bps: f64::from(row.bit_rate),
        n1: u32::try_from(config.n1_octets).unwrap_or(u32::MAX),
        ..Params::default()
    };
    params.t_frame() * f64::from(row.window.saturating_sub(1)) > config.t2_s
}

fn transfer_note(row: &MeasuredRow, config: &MeasuredConfig) -> String {
    let mut note = check_note!(
        "ronan-ax25/table*/window*/transfer",
        ack_window = row.ack_window,
        sender_frames = format!("{:.0}", row.sender_frames),
        receiver_frames = format!("{:.0}", row.receiver_frames),
        host_latency_ms = config.host_latency_ms,
        serial_rate_bps = config.serial_rate_bps,
        tnc_per_frame_ms = config.tnc_per_frame_ms,
        carrier_hold_ms = config.carrier_hold_ms,
        calibration_ack_window = config.ack_windows.first().copied().unwrap_or_default(),
        transmissions = format!("{:.1}", row.transmissions),
    );
    if t2_fires_mid_window(config, row) {
        note.push_str(&format!(
            " {}",
            check_note!("ronan-ax25/table*/window*/t2-mid-window", t2 = config.t2_s)
        ));
    }
    note
}

/// What the other clock ([`Clock::Session`]) does to the rows.
fn clock_text(rows: &[MeasuredRow]) -> String {
    let mut spans = String::new();
    for (i, rate) in bit_rates(rows.iter().map(|r| r.bit_rate))
        .iter()
        .enumerate()
    {
        let (mut lo, mut hi, mut lo_pct, mut hi_pct) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for r in rows.iter().filter(|r| r.bit_rate == *rate) {
            let extra = r.session.mean - r.transfer.mean;
            let pct = 100.0 * extra / r.transfer.mean;
            (lo, hi) = (lo.min(extra), hi.max(extra));
            (lo_pct, hi_pct) = (lo_pct.min(pct), hi_pct.max(pct));
        }
        spans.push_str(&format!(
            "{} {lo:.1}-{hi:.1} s ({lo_pct:.0}-{hi_pct:.0} %) at {rate} bit/s",
            if i == 0 { "" } else { " and" }
        ));
    }
    section_text!("ronan-ax25/tables-5-7/clock", spans = spans)
}

fn swap_note(row: &MeasuredRow, config: &MeasuredConfig) -> String {
    check_note!(
        "ronan-ax25/tableVI/window*",
        ack_window = row.ack_window,
        sender_frames = format!("{:.0}", row.sender_frames),
        transmissions = format!("{:.1}", row.transmissions),
        swaps = swaps(config, row.window),
    )
}

fn t1_table(rows: &[MeasuredRow]) -> Table {
    Table {
        id: "ronan-t1-default".into(),
        title: "T1 = 10 s (the kernel default) at 1200 bit/s: longest wait for an \
                acknowledgement and T1 expiries per transfer"
            .into(),
        columns: ["window", "longest_ack_wait_s", "t1_expiries", "transfer_s"]
            .map(String::from)
            .into(),
        rows: rows.iter().map(t1_row).collect(),
    }
}

/// One row of [`t1_table`].
fn t1_row(r: &MeasuredRow) -> Vec<String> {
    vec![
        r.window.to_string(),
        format!("{:.2}", r.ack_wait_max_s),
        format!("{:.2}", r.t1_expiries),
        format!("{:.2}", r.transfer.mean),
    ]
}

/// Section V.A: with T1 = 10 s the windows of 4 and more ran into T1.
fn t1_check(rows: &[MeasuredRow]) -> Check {
    let expiring: Vec<String> = rows
        .iter()
        .filter(|r| r.t1_expiries > 0.0)
        .map(|r| r.window.to_string())
        .collect();
    let small_clean = rows
        .iter()
        .filter(|r| r.window < 4)
        .all(|r| r.t1_expiries == 0.0);
    let wait4 = rows
        .iter()
        .find(|r| r.window == 4)
        .map_or(f64::NAN, |r| r.ack_wait_max_s);
    let large_expire = rows.iter().any(|r| r.window >= 4 && r.t1_expiries > 0.0);
    Check::qualitative(
        "ronan-ax25/sectionV.A/t1-default",
        Paper::RonanAx25,
        "Section V.A: the kernel's default T1 of 10 s is too short for windows of 4 or more \
         at 1200 bit/s",
        "T1 had to be raised from 10 s for windows of 4 or more; at window 4 an \
         acknowledgement took almost exactly 10 s",
        format!(
            "with T1 = 10 s, T1 expires at windows {}; none below 4; the longest wait for an \
             acknowledgement at window 4 is {wait4:.1} s",
            if expiring.is_empty() {
                "none".to_string()
            } else {
                expiring.join(", ")
            }
        ),
        small_clean && large_expire,
    )
    .with_note(check_note!("ronan-ax25/sectionV.A/t1-default"))
}

fn figure(rate: u32, ack_windows: &[u32], rows: &[MeasuredRow], reference: &[Published]) -> Figure {
    let paper: Vec<&Published> = reference.iter().filter(|p| p.bit_rate == rate).collect();
    let point = |x: u8, y: f64, half_width| Point {
        x: f64::from(x),
        y,
        half_width,
    };
    let name = if rate == 1200 { "V" } else { "VII" };
    Figure {
        id: format!("ronan-table-{}", name.to_lowercase()),
        title: format!("Table {name}: AX.25 CM-CL transfer of 7182 octets at {rate} bit/s"),
        x_label: "window k".into(),
        y_label: "transfer time, s".into(),
        log_x: false,
        log_y: false,
        series: [
            Series {
                label: format!("Table {name}, AX.25 CM-CL"),
                style: SeriesStyle::Published,
                points: paper
                    .iter()
                    .map(|p| point(p.window, p.ax25_cm_cl_s, None))
                    .collect(),
            },
            Series {
                label: format!("Table {name}, model"),
                style: SeriesStyle::Model,
                points: paper
                    .iter()
                    .map(|p| point(p.window, p.model_s, None))
                    .collect(),
            },
        ]
        .into_iter()
        .chain(ack_windows.iter().map(|&ack| {
            Series {
                label: format!("simulated, AX.25 CL ack_window {ack}, host + KISS TNC"),
                style: SeriesStyle::Simulated,
                points: rows
                    .iter()
                    .filter(|r| r.bit_rate == rate && r.ack_window == ack)
                    .map(|r| point(r.window, r.transfer.mean, Some(r.transfer.half_width)))
                    .collect(),
            }
        }))
        .collect(),
    }
}

fn text(config: &MeasuredConfig) -> String {
    section_text!(
        "ronan-ax25/tables-5-7",
        t2 = config.t2_s,
        t1 = config.t1_s,
        lat = config.host_latency_ms,
        serial = config.serial_rate_bps,
        pf = config.tnc_per_frame_ms,
        po = config.tnc_per_octet_us,
        hold = config.carrier_hold_ms,
    )
}
