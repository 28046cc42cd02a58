//! Korb and Wills, section 3.5 as a report section: one transfer with
//! larger TCP segments or window.

use linklab_channel::x25net::X25NetConfig;

use super::super::experiment::{FtpExperiment, FtpRow};
use super::super::testbed::addresses;
use super::super::KorbError;
use super::{model_text, TOLERANCE, TUNED_MIN_RTO_S};
use crate::builtin;
use crate::report::{
    Check, Figure, Paper, Point, Progress, RunOptions, Section, Series, SeriesStyle,
};
use crate::{check_note, section_text};

/// The segment sizes and windows of [`larger_segments`]: 4.2BSD's and
/// larger.
const SEGMENTS: [usize; 2] = [512, 1024];
const WINDOWS: [usize; 4] = [2048, 4096, 8192, 16384];
/// Replications per row of [`larger_segments`] in a full run (the
/// intervals are within 10% of the rate at 4, most within 3%).
const REPLICATIONS: u64 = 4;
/// The file of [`larger_segments`]: the 500,000 octets Table 4's estimate
/// of the capacity rests on (five files of 100,000), as one file.
const FILE_OCTETS: usize = 500_000;

/// The rate with up to ten circuits at each window, segments of
/// `segment` octets, and the segments resent, in words.
fn trend(rows: &[(usize, usize, FtpRow)], segment: usize) -> String {
    let cells: Vec<String> = rows
        .iter()
        .filter(|(s, _, r)| *s == segment && r.circuits > 1)
        .map(|(_, window, r)| {
            format!(
                "{:.0} bit/s at window {window} ({:.0} resent)",
                r.rate.mean, r.retransmitted
            )
        })
        .collect();
    format!("segments of {segment} octets, {}", cells.join(", "))
}

/// Section 3.5's recommendation run as an experiment: one FTP transfer
/// with larger TCP segments and windows, over one circuit and with the
/// multi-circuit code free to open ten.
pub fn larger_segments(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, KorbError> {
    let base = FtpExperiment::from_toml(builtin::KORB_TABLE_2)?;
    let mut rows: Vec<(usize, usize, FtpRow)> = Vec::new();
    for segment in SEGMENTS {
        for window in WINDOWS {
            // One circuit caps every window at the call's class: its
            // smallest and largest suffice to show it.
            let ends = [WINDOWS[0], WINDOWS[WINDOWS.len() - 1]];
            let experiment = FtpExperiment {
                directions: vec![super::super::experiment::FileDirection::Put],
                circuits: if ends.contains(&window) {
                    vec![1, 10]
                } else {
                    vec![10]
                },
                window_octets: window,
                segment_octets: Some(segment),
                file_octets: FILE_OCTETS,
                replications: REPLICATIONS,
                max_replications: REPLICATIONS,
                ..base.clone()
            };
            for row in experiment.simulate(opts, progress)? {
                rows.push((segment, window, row));
            }
        }
    }
    // Section 4's other half: the timer adjusted too, for the larger
    // segments whose datagrams outlast 4.2BSD's 1 s floor.
    let mut tuned: Vec<(usize, FtpRow)> = Vec::new();
    for window in WINDOWS {
        let experiment = FtpExperiment {
            directions: vec![super::super::experiment::FileDirection::Put],
            circuits: vec![10],
            window_octets: window,
            segment_octets: Some(SEGMENTS[1]),
            file_octets: FILE_OCTETS,
            replications: REPLICATIONS,
            max_replications: REPLICATIONS,
            min_rto_s: Some(TUNED_MIN_RTO_S),
            ..base.clone()
        };
        for row in experiment.simulate(opts, progress)? {
            tuned.push((window, row));
        }
    }
    let best = rows
        .iter()
        .filter(|(_, _, r)| r.circuits > 1)
        .max_by(|a, b| a.2.rate.mean.total_cmp(&b.2.rate.mean));
    let one_circuit_best = rows
        .iter()
        .filter(|(_, _, r)| r.circuits == 1)
        .map(|(_, _, r)| r.rate.mean)
        .fold(0.0, f64::max);
    let per_call = X25NetConfig::korb1987(addresses())
        .per_call
        .map_or(0.0, |c| c.rate_bps);
    let mut section = Section {
        heading: "Section 3.5: one transfer with larger TCP segments or window".into(),
        text: section_text!(
            "korb1987/section-3.5",
            model = model_text(),
            file_octets = FILE_OCTETS,
            per_call = format!("{per_call:.0}"),
        ),
        ..Section::default()
    };
    let mut table = base.table(
        "korb-larger-segments",
        "One FTP put of 500,000 octets by 4.2BSD's sender: TCP segment size and window, one \
         circuit or up to ten",
        &rows
            .iter()
            .map(|(_, _, r)| r.clone())
            .chain(tuned.iter().map(|(_, r)| r.clone()))
            .collect::<Vec<_>>(),
    );
    table.columns.insert(0, "rto_floor_s".into());
    table.columns.insert(0, "window_octets".into());
    table.columns.insert(0, "segment_octets".into());
    let labels = rows
        .iter()
        .map(|(segment, window, _)| (*segment, *window, "1 (4.2BSD)".to_string()))
        .chain(
            tuned
                .iter()
                .map(|(window, _)| (SEGMENTS[1], *window, format!("{TUNED_MIN_RTO_S:.0}"))),
        );
    for (row, (segment, window, floor)) in table.rows.iter_mut().zip(labels) {
        row.insert(0, floor);
        row.insert(0, window.to_string());
        row.insert(0, segment.to_string());
    }
    section.tables.push(table);
    section.figures.push(Figure {
        id: "korb-larger-segments-rate".into(),
        title: "One FTP put with larger TCP segments or window (up to ten circuits)".into(),
        x_label: "TCP window, octets".into(),
        y_label: "rate, bit/s".into(),
        log_x: true,
        log_y: false,
        series: SEGMENTS
            .iter()
            .flat_map(|&segment| {
                [1usize, 10].map(|circuits| Series {
                    label: format!(
                        "segments of {segment} octets, {}",
                        if circuits == 1 {
                            "one circuit".to_string()
                        } else {
                            format!("up to {circuits} circuits")
                        }
                    ),
                    style: SeriesStyle::Simulated,
                    points: rows
                        .iter()
                        .filter(|(s, _, r)| *s == segment && r.circuits == circuits)
                        .map(|(_, window, r)| Point {
                            x: *window as f64,
                            y: r.rate.mean,
                            half_width: Some(r.rate.half_width),
                        })
                        .collect(),
                })
            })
            .chain([Series {
                label: format!(
                    "segments of {} octets, time-out floor {TUNED_MIN_RTO_S:.0} s, up to 10 \
                        circuits",
                    SEGMENTS[1]
                ),
                style: SeriesStyle::Simulated,
                points: tuned
                    .iter()
                    .map(|(window, r)| Point {
                        x: *window as f64,
                        y: r.rate.mean,
                        half_width: Some(r.rate.half_width),
                    })
                    .collect(),
            }])
            .collect(),
    });
    let tuned_trend = tuned
        .iter()
        .map(|(window, r)| {
            format!(
                "{:.0} bit/s at window {window} ({:.0} resent, {:.1} circuits)",
                r.rate.mean, r.retransmitted, r.circuits_opened
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let tuned_best = tuned
        .iter()
        .max_by(|a, b| a.1.rate.mean.total_cmp(&b.1.rate.mean))
        .map(|(window, r)| {
            let small = rows
                .iter()
                .find(|(s, w, r)| *s == SEGMENTS[0] && w == window && r.circuits > 1)
                .map_or(f64::NAN, |(_, _, r)| r.rate.mean);
            format!(
                "their best, {:.0} bit/s at window {window}, against {small:.0} with {}-octet \
                 segments at that window",
                r.rate.mean, SEGMENTS[0]
            )
        })
        .unwrap_or_default();
    if let Some((segment, window, r)) = best {
        section.checks.push(
            Check::relative(
                "korb1987/section3.5/single-transfer-at-capacity",
                Paper::Korb1987,
                "Section 3.5: one transfer with larger segments or window reaches the \
                 network's capacity (with circuits enough)",
                35_000.0,
                r.rate.mean,
                "bit/s",
                TOLERANCE,
            )
            .with_paper_text("about 35,000 \"should be achievable for a single file transfer\"")
            .with_note(check_note!(
                "korb1987/section3.5/single-transfer-at-capacity",
                segment = segment,
                window = window,
                ours = format!("{:.0} ± {:.0}", r.rate.mean, r.rate.half_width),
                circuits = format!("{:.1}", r.circuits_opened),
                one_circuit_best = format!("{one_circuit_best:.0}"),
                window_trend = trend(&rows, SEGMENTS[0]),
                segment_trend = trend(&rows, SEGMENTS[1]),
                datagram_s = format!("{:.1}", 1064.0 * 8.0 / per_call),
                floor = format!("{TUNED_MIN_RTO_S:.0}"),
                tuned_trend = tuned_trend,
                tuned_best = tuned_best,
            )),
        );
    }
    Ok(section)
}
