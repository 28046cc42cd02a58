//! Ronan, Long and Walsh on the AX.25 CL through a single repeater: the
//! paper reports that the layer works through one digipeater and gives no
//! times for it. Here the bundle of Tables V-VII goes over the same
//! calibrated link ([`MeasuredConfig::built_in`]) once directly and once
//! between two stations that do not hear each other, through a
//! digipeater between them (`TransferConfig::digipeater`: a TNC
//! repeating in firmware with Table I's channel access), so every frame
//! is on the air twice.

use linklab_channel::StationConfig;
use linklab_sim::{ConfidenceInterval, Metric, ReplicationOutput, Runner};

use super::cl::run_bundle_transfer;
use super::measured::MeasuredConfig;
use super::{bit_rates, interval, RonanError, TRANSFER_S};
use crate::report::{
    Check, Figure, Paper, Point, Progress, RunOptions, Section, Series, SeriesStyle, Table,
};
use crate::transfer::{TransferConfig, TransferError};
use crate::{check_note, section_text};

/// The AX.25 windows run.
const WINDOWS: [u8; 3] = [1, 4, 7];

/// Frames the two ends put on the air over the whole run.
const END_FRAMES: Metric = Metric::new("end_frames");
/// Frames the digipeater repeated.
const REPEATED: Metric = Metric::new("repeated");
/// Frames that reached the digipeater damaged (the ends are hidden from
/// each other, so they collide there).
const LOST: Metric = Metric::new("lost_at_digipeater");

/// One row: a window at a bit rate, direct or through the digipeater.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepeaterRow {
    /// Radio bit rate, bit/s.
    pub bit_rate: u32,
    /// Window k.
    pub window: u8,
    /// Through the digipeater.
    pub via: bool,
    /// Transfer time, s (95 %).
    pub transfer: ConfidenceInterval,
    /// Frames the ends sent, whole run (mean).
    pub end_frames: f64,
    /// Frames the digipeater repeated (mean).
    pub repeated: f64,
    /// Frames that reached the digipeater damaged (mean).
    pub lost: f64,
}

/// Runs every bit rate of the measured tables at `WINDOWS`, direct and
/// through the digipeater.
pub fn simulate(
    config: &MeasuredConfig,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<Vec<RepeaterRow>, RonanError> {
    let replications = config.replications(opts);
    let cells = 2 * WINDOWS.len() * config.bit_rates_bps.len();
    progress.add_work(replications * cells as u64);
    let mut rows = Vec::with_capacity(cells);
    for &rate in &config.bit_rates_bps {
        for window in WINDOWS {
            for via in [false, true] {
                let transfer = TransferConfig {
                    digipeater: via.then(StationConfig::ronan_table_1),
                    ..config.transfer_config(rate, window)
                };
                let ack_window = config.ack_windows.first().copied().unwrap_or(8);
                rows.push(replicate(
                    &transfer,
                    ack_window,
                    replications,
                    opts,
                    progress,
                )?);
            }
        }
    }
    Ok(rows)
}

fn replicate(
    config: &TransferConfig,
    ack_window: u32,
    replications: u64,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<RepeaterRow, RonanError> {
    let report = Runner::new(opts.seed, replications).try_run_parallel(opts.jobs, |streams| {
        let outcome = run_bundle_transfer(config, ack_window, &streams);
        progress.advance(1, "Ronan: the AX.25 CL through a digipeater");
        let o = outcome?.link;
        let relayed = o.digipeater.unwrap_or_default();
        let mut out = ReplicationOutput::new();
        out.value(TRANSFER_S, o.transfer.as_secs_f64())
            .value(END_FRAMES, (o.radio.frames_sent - relayed.repeated) as f64)
            .value(REPEATED, relayed.repeated as f64)
            .value(LOST, relayed.lost as f64);
        Ok::<_, TransferError>(out)
    })?;
    let ci = |metric| interval(&report, metric, replications);
    Ok(RepeaterRow {
        bit_rate: config.bit_rate,
        window: config.window,
        via: config.digipeater.is_some(),
        transfer: ci(TRANSFER_S)?,
        end_frames: ci(END_FRAMES)?.mean,
        repeated: ci(REPEATED)?.mean,
        lost: ci(LOST)?.mean,
    })
}

/// The section of `reproduce`.
pub fn section(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, RonanError> {
    let config = MeasuredConfig::built_in()?;
    let rows = simulate(&config, opts, progress)?;
    let pairs: Vec<(&RepeaterRow, &RepeaterRow)> = rows
        .iter()
        .filter(|r| !r.via)
        .filter_map(|d| {
            rows.iter()
                .find(|v| v.via && v.bit_rate == d.bit_rate && v.window == d.window)
                .map(|v| (d, v))
        })
        .collect();
    let mut section = Section {
        heading: "Section VI: the AX.25 CL through a single repeater".into(),
        text: text(&config),
        tables: vec![table(&pairs)],
        figures: vec![figure(&rows)],
        checks: Vec::new(),
    };
    for rate in &config.bit_rates_bps {
        let at: Vec<_> = pairs.iter().filter(|(d, _)| d.bit_rate == *rate).collect();
        section.checks.push(works_check(*rate, &at));
    }
    Ok(section)
}

/// The bundle arrives through the digipeater (every run verified byte for
/// byte by the receiver's agent) and the digipeater carries every frame:
/// what the ends sent is what it repeated, less what collided before it.
fn works_check(rate: u32, pairs: &[&(&RepeaterRow, &RepeaterRow)]) -> Check {
    let twice = pairs
        .iter()
        .all(|(_, v)| (v.repeated + v.lost - v.end_frames).abs() < 1e-6);
    let ratios: Vec<String> = pairs
        .iter()
        .map(|(d, v)| format!("k {}: {:.2}x", d.window, v.transfer.mean / d.transfer.mean))
        .collect();
    Check::qualitative(
        format!("ronan-ax25/sectionVI/single-repeater/{rate}"),
        Paper::RonanAx25,
        format!("The AX.25 CL works through a single repeater ({rate} bit/s)"),
        "the convergence layer works through a single repeater (no times given)",
        format!(
            "every transfer arrived intact through the digipeater, each frame on the air twice \
             but those that reached it damaged; time through it against direct: {}",
            ratios.join(", ")
        ),
        twice,
    )
    .with_note(check_note!("ronan-ax25/sectionVI/single-repeater/*"))
}

fn table(pairs: &[(&RepeaterRow, &RepeaterRow)]) -> Table {
    Table {
        id: "ronan-repeater".into(),
        title: "7182 octets as one bundle over the AX.25 CL (ack_window 8), direct and through \
                a digipeater, host and KISS TNC at each end; timed from the file offered to \
                the end of the transmission that brought the sender the last ACK_SEGMENT"
            .into(),
        columns: [
            "bit_rate_bps",
            "window",
            "direct_s",
            "direct_ci95_s",
            "via_digipeater_s",
            "via_ci95_s",
            "ratio",
            "end_frames",
            "repeated",
            "lost_at_digipeater",
        ]
        .map(String::from)
        .into(),
        rows: pairs
            .iter()
            .map(|(d, v)| {
                vec![
                    d.bit_rate.to_string(),
                    d.window.to_string(),
                    format!("{:.2}", d.transfer.mean),
                    format!("{:.2}", d.transfer.half_width),
                    format!("{:.2}", v.transfer.mean),
                    format!("{:.2}", v.transfer.half_width),
                    format!("{:.2}", v.transfer.mean / d.transfer.mean),
                    format!("{:.1}", v.end_frames),
                    format!("{:.1}", v.repeated),
                    format!("{:.2}", v.lost),
                ]
            })
            .collect(),
    }
}

fn figure(rows: &[RepeaterRow]) -> Figure {
    let mut series = Vec::new();
    for rate in bit_rates(rows.iter().map(|r| r.bit_rate)) {
        for (via, what) in [(false, "direct"), (true, "through a digipeater")] {
            series.push(Series {
                label: format!("{rate} bit/s, {what}"),
                style: SeriesStyle::Simulated,
                points: rows
                    .iter()
                    .filter(|r| r.bit_rate == rate && r.via == via)
                    .map(|r| Point {
                        x: f64::from(r.window),
                        y: r.transfer.mean,
                        half_width: Some(r.transfer.half_width),
                    })
                    .collect(),
            });
        }
    }
    Figure {
        id: "ronan-repeater-time".into(),
        title: "The AX.25 CL direct and through a single repeater: transfer of 7182 octets".into(),
        x_label: "window k".into(),
        y_label: "transfer time, s".into(),
        log_x: false,
        log_y: false,
        series,
    }
}

fn text(config: &MeasuredConfig) -> String {
    section_text!(
        "ronan-ax25/sectionVI",
        ack = config.ack_windows.first().copied().unwrap_or(8),
        t1 = config.t1_s,
    )
}
