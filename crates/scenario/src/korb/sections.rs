//! The sections of the Korb reproduction: Table 1 (ping), Tables 2 and 3
//! (one FTP transfer over one or more circuits), Table 4 (five puts at
//! once) and the count of needless retransmissions.

use linklab_channel::x25net::X25NetConfig;

use super::bench::{addresses, tcp_4_2bsd, BenchConfig};
use super::experiment::{Congestion, FtpExperiment, FtpRow, PingExperiment};
use super::reference::{ftp_rows, ping_rows, FtpExperiment as Published};
use super::run::Direction;
use super::KorbError;
use crate::report::{
    Check, Figure, Paper, Point, Progress, RunOptions, Section, Series, SeriesStyle, Table,
};

/// Relative tolerance of every numeric check.
const TOLERANCE: f64 = 0.20;

const TABLE_1: &str = include_str!("../../../../experiments/korb-table-1.toml");
const TABLE_2: &str = include_str!("../../../../experiments/korb-table-2.toml");
const TABLE_3: &str = include_str!("../../../../experiments/korb-table-3.toml");
const TABLE_4: &str = include_str!("../../../../experiments/korb-table-4.toml");

/// What every section says about the model.
fn model_text() -> String {
    let net = X25NetConfig::korb1987(addresses());
    let tcp = tcp_4_2bsd();
    format!(
        "Two hosts, each smoltcp 0.14 over an RFC 877 interface (IP MTU 576, call user data \
         0xCC, circuits opened on demand and as the queue grows, cleared after 90 s idle) on \
         the real X.25 packet layer (window 2, packets of 128 octets) and LAPB, on the two \
         {} bit/s access lines of the simulated ACCUNET: transit {:?} plus {:.4} ms per \
         octet (fitted to Table 1 only), call set-up {:?}, flow control at {:.0}% of the \
         line. TCP as 4.2BSD's as far as smoltcp allows: window {} octets (4.2BSD's \
         1024*2 socket buffers), 512-octet segments, no congestion window, delayed ACK {} \
         ms; the retransmission timer is smoltcp's RFC 6298 one, which cannot be set.",
        net.access_line.bit_rate,
        net.transit,
        net.per_octet.as_secs_f64() * 1e3,
        net.call_setup,
        net.share * 100.0,
        tcp.window_octets,
        tcp.ack_delay_ms.unwrap_or(0),
    )
}

fn gap(ours: f64, paper: f64) -> String {
    format!("{:+.1}", 100.0 * (ours / paper - 1.0))
}

/// Table 1: ping round trips, 64 and 512 octets, sequences 1-100 and
/// 50-100.
pub fn table_1(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, KorbError> {
    let experiment = PingExperiment::from_toml(TABLE_1)?;
    let published = ping_rows()?;
    let stats = experiment.simulate(&BenchConfig::korb1987(1), opts, progress)?;
    let mut section = Section {
        heading: "Table 1: ping round trips over ACCUNET".into(),
        text: format!(
            "{} Each replication sends {} pings of 64 octets then {} of 512, one a second, \
             from Purdue to CSNET, starting with no circuit open, as the paper's tests every \
             30 minutes did; {} replications. The transit delay was fitted to this table's \
             two medians for sequences 50-100 (see linklab_channel::x25net, \
             X25NetConfig::korb1987, for the fit and its check by this simulated ping); no \
             later table refits it. The averages are shown but not checked: the paper's \
             include network outages and extreme delays (\"the network was unavailable 45 \
             hours\", 19% of the test period), which the model has none of, and its 1-100 \
             average for 64 octets includes a 20-30 s circuit set-up that the queued pings \
             wait out, which ours includes too.",
            model_text(),
            experiment.pings,
            experiment.pings,
            stats.replications
        ),
        ..Section::default()
    };
    let mut table = Table {
        id: "korb_table_1".into(),
        title: "Table 1: round-trip times, ms, published and simulated".into(),
        columns: [
            "size_octets",
            "statistic",
            "sequence",
            "paper_ms",
            "simulated_ms",
            "ci95_ms",
            "gap_%",
        ]
        .map(String::from)
        .into(),
        rows: Vec::new(),
    };
    for row in &published {
        let key = super::experiment::ping_key(row.size, row.median, row.settled);
        let Some(ci) = stats.get(&key) else {
            continue;
        };
        let statistic = if row.median { "median" } else { "average" };
        let sequence = if row.settled { "50-100" } else { "1-100" };
        table.rows.push(vec![
            row.size.to_string(),
            statistic.into(),
            sequence.into(),
            format!("{:.0}", row.rtt_ms),
            format!("{:.0}", ci.mean),
            format!("{:.0}", ci.half_width),
            gap(ci.mean, row.rtt_ms),
        ]);
        if !row.median {
            continue;
        }
        let note = match (row.size, row.settled) {
            (64, false) => format!(
                "Includes the first pings, queued while the circuit is set up (20-30 s): \
                 about a quarter of the 100 wait, so the median moves to a higher \
                 quantile of the settled delays, as in the paper (340 against 330 ms). Ours \
                 {:.0} ± {:.0} ms.",
                ci.mean, ci.half_width
            ),
            (64, true) => format!(
                "One of the two medians the transit delay was fitted to (with the per-octet \
                 time from the 512-octet one): agreement here checks the fit's arithmetic \
                 (two log-normal draws, access lines, hosts), not a prediction. Ours {:.0} ± \
                 {:.0} ms.",
                ci.mean, ci.half_width
            ),
            (512, false) => format!(
                "The 512-octet pings follow the 64-octet ones on the open circuit, so \
                 sequences 1-100 and 50-100 differ only by sampling, as in the paper (880 \
                 both). Ours {:.0} ± {:.0} ms.",
                ci.mean, ci.half_width
            ),
            _ => format!(
                "The second median of the fit (fixes the per-octet transit time). A 532-octet \
                 datagram is 5 packets of at most 128 octets on each access line (81.7 ms at \
                 56 kbit/s each way). Ours {:.0} ± {:.0} ms.",
                ci.mean, ci.half_width
            ),
        };
        section.checks.push(
            Check::relative(
                format!("korb1987/table1/{}-{statistic}-{sequence}", row.size),
                Paper::Korb1987,
                format!(
                    "Table 1: {statistic} ping round trip, {} octets, sequence {sequence}",
                    row.size
                ),
                row.rtt_ms,
                ci.mean,
                "ms",
                TOLERANCE,
            )
            .with_note(note),
        );
    }
    section.tables.push(table);
    Ok(section)
}

/// The published rate of a row of Tables 2-4.
fn published_rate(kind: Published, channels: usize, put: bool) -> Result<Option<f64>, KorbError> {
    Ok(ftp_rows()?
        .into_iter()
        .find(|r| r.experiment == kind && r.channels == channels && r.put == put)
        .and_then(|r| r.rate_bps))
}

fn row_text(r: &FtpRow) -> String {
    format!(
        "ours {:.0} ± {:.0} bit/s over {} replications ({:.1} circuits opened, {:.1} \
         retransmitted segments)",
        r.rate.mean, r.rate.half_width, r.replications, r.circuits_opened, r.retransmitted
    )
}

/// Tables 2 and 3: one FTP transfer of 175,426 octets, put and get over
/// one circuit, put over at most two and four.
pub fn tables_2_3(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, KorbError> {
    let table_2 = FtpExperiment::from_toml(TABLE_2)?;
    let table_3 = FtpExperiment::from_toml(TABLE_3)?;
    let rows_2 = table_2.simulate(opts, progress)?;
    let rows_3 = table_3.simulate(opts, progress)?;
    let window_4096 = FtpExperiment {
        directions: vec![super::experiment::FileDirection::Put],
        window_octets: 4096,
        ..table_2.clone()
    };
    let rows_4096 = window_4096.simulate(opts, progress)?;
    let mut section = Section {
        heading: "Tables 2 and 3: one FTP transfer, one or more circuits".into(),
        text: format!(
            "{} One FTP data connection carries the 175,426-octet file after the control \
             connection has opened the first circuit (modelled by one echo exchange), so the \
             reported rate, like FTP's, leaves the first call set-up out; extra circuits \
             (Table 3) are called while the transfer runs and take 20-30 s each. The model is \
             symmetric: put (Purdue to CSNET) and get (CSNET to Purdue) differ only in their \
             random draws. The paper found get \"consistently faster\" and gives no reason; \
             nothing in the model (the same network, hosts and TCP both ways) makes one \
             direction faster, so the difference stays unexplained and the model sits between \
             the two. With one 2048-octet window in flight, the transfer is limited by the \
             window over the round trip (about 0.8 s for a full window: two crossings of \
             the network and the 200 ms delayed ACK), not by the network's 63% flow control. \
             A third row shows what the 4096-octet window of 4.3BSD would do: it reaches the \
             flow control.",
            model_text()
        ),
        ..Section::default()
    };
    let mut table = table_2.table(
        "korb_tables_2_3",
        "Tables 2 and 3: FTP of 175,426 octets (TCP window 2048 octets; last row 4096)",
        &[rows_2.clone(), rows_3.clone()].concat(),
    );
    let extra = window_4096.table("x", "x", &rows_4096);
    table.rows.extend(extra.rows.into_iter().map(|mut r| {
        r[0] = format!("{} (window 4096)", r[0]);
        r
    }));
    table.columns.push("paper_bps".into());
    for (row, r) in table
        .rows
        .iter_mut()
        .zip(rows_2.iter().chain(&rows_3).chain(&rows_4096))
    {
        let kind = if r.circuits == 1 {
            Published::Single
        } else {
            Published::MultiChannel
        };
        let paper = published_rate(kind, r.circuits, r.direction == Direction::Put)?;
        row.push(paper.map_or(String::new(), |p| format!("{p:.0}")));
    }
    section.tables.push(table);

    let put = rows_2.iter().find(|r| r.direction == Direction::Put);
    let get = rows_2.iter().find(|r| r.direction == Direction::Get);
    for r in rows_2.iter().chain(&rows_3) {
        let put_dir = r.direction == Direction::Put;
        let kind = if r.circuits == 1 {
            Published::Single
        } else {
            Published::MultiChannel
        };
        let Some(paper) = published_rate(kind, r.circuits, put_dir)? else {
            continue;
        };
        let (id, what, note) = if r.circuits == 1 {
            let other = if put_dir { get } else { put };
            (
                format!("korb1987/table2/{}", r.direction.name()),
                format!(
                    "Table 2: FTP {} of 175,426 octets over one circuit",
                    r.direction.name()
                ),
                format!(
                    "{}; the other direction {:.0} bit/s. The paper's put is 25% slower than \
                     its get, for no reason it gives; the model, symmetric by construction, \
                     has both at the same rate within sampling, so at most one of the two \
                     can sit close. The rate is the 2048-octet window over the round trip of \
                     a full window (4.2BSD's buffers); with 4096 octets it would be {:.0} \
                     bit/s.",
                    row_text(r),
                    other.map_or(0.0, |o| o.rate.mean),
                    rows_4096.first().map_or(0.0, |o| o.rate.mean)
                ),
            )
        } else {
            (
                format!("korb1987/table3/{}-circuits", r.circuits),
                format!(
                    "Table 3: FTP put of 175,426 octets with at most {} circuits",
                    r.circuits
                ),
                format!(
                    "{}. In the model the network acknowledges each access line's packets \
                     locally (P(R) of local significance), so a circuit's 2-packet window \
                     never waits for the far end and one circuit already carries what TCP's \
                     window offers; more circuits add nothing to one transfer (the paper's \
                     Table 3 has 2 circuits slower than Table 2's one, 4 faster). A window \
                     acknowledged end to end would make circuits matter, but then a \
                     5-packet datagram would need two more round trips each way and the \
                     512-octet ping of Table 1 (880 ms) could not be matched with the same \
                     transit delay.",
                    row_text(r)
                ),
            )
        };
        section.checks.push(
            Check::relative(
                id,
                Paper::Korb1987,
                what,
                paper,
                r.rate.mean,
                "bit/s",
                TOLERANCE,
            )
            .with_note(note),
        );
    }
    Ok(section)
}

/// Table 4: five simultaneous puts of 100,000 octets with 1 to 10
/// circuits.
pub fn table_4(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, KorbError> {
    let experiment = FtpExperiment::from_toml(TABLE_4)?;
    let rows = experiment.simulate(opts, progress)?;
    let published: Vec<_> = ftp_rows()?
        .into_iter()
        .filter(|r| r.experiment == Published::MultiPut)
        .collect();
    let mut section = Section {
        heading: "Table 4: five simultaneous puts, 1 to 10 circuits".into(),
        text: format!(
            "{} Five FTP puts of 100,000 octets start together once the control connections \
             have opened a circuit; the rate is 5 × 100,000 × 8 bits over the longest \
             transfer, as the paper estimates it. Five 2048-octet windows (10 KB) are more \
             than the network's bandwidth-delay product (about 35 kbit/s × 1 s), so the \
             network's flow control, not TCP, sets the rate: about 63% of the 56 kbit/s line \
             less the TCP/IP headers. The paper's rate rises with the circuits and levels \
             off from six at about 35 kbit/s; in the model it is at that level with one \
             circuit already, because the network acknowledges packets on each access line \
             locally and a circuit's window of 2 never waits for the far end (see the Table \
             3 notes for why an end-to-end window is not consistent with Table 1). The \
             paper's rows 2, 4 and 10 (one transfer of five failed) have no rate and are \
             not checked.",
            model_text()
        ),
        ..Section::default()
    };
    let mut table = experiment.table(
        "korb_table_4",
        "Table 4: five puts of 100,000 octets at once",
        &rows,
    );
    table.columns.push("paper_longest_s".into());
    table.columns.push("paper_rate_bps".into());
    for (cells, r) in table.rows.iter_mut().zip(&rows) {
        let p = published.iter().find(|p| p.channels == r.circuits);
        cells.push(
            p.and_then(|p| p.max_time_s)
                .map_or(String::new(), |t| format!("{t:.0}")),
        );
        cells.push(
            p.and_then(|p| p.rate_bps)
                .map_or(String::new(), |b| format!("{b:.0}")),
        );
    }
    section.tables.push(table);
    // Sensitivity: a per-circuit limit of the window's worth per round
    // trip (not part of the calibrated model, no checks).
    let net = X25NetConfig::korb1987(addresses());
    let rtt_s = ping_rows()?
        .iter()
        .find(|r| r.size == 64 && r.median && r.settled)
        .map_or(0.330, |r| r.rtt_ms / 1e3);
    let limit =
        f64::from(net.packet_layer.window) * net.packet_layer.packet_size as f64 * 8.0 / rtt_s;
    let sensitivity = FtpExperiment {
        per_call_limit_bps: Some(limit),
        circuits: if opts.quick {
            vec![1, 5, 10]
        } else {
            experiment.circuits.clone()
        },
        ..experiment.clone()
    };
    let rows_limited = sensitivity.simulate(opts, progress)?;
    section.text.push_str(&format!(
        " A second table, not checked, is a sensitivity study of the paper's own explanation \
         (\"the X.25 window size is so small and the delays large enough that only a few \
         packets can be outstanding\"): the same runs with the network accepting from each \
         circuit at most its window of {} packets of {} octets per round trip of a small \
         ping (Table 1's {:.0} ms), {limit:.0} bit/s, in bursts of one 576-octet datagram so \
         that Table 1's pings pass as before. There the rate does rise with the circuits, \
         but the saturated circuits' long queues make smoltcp time out again and again \
         (a hundred to several hundred needless retransmissions per run, and drops from the interface queue), the \
         runs differ widely, and one transfer over one circuit (Table 2) would fall to \
         about {limit:.0} bit/s, far below the paper's 15,012 and 19,997; so this limit is \
         not in the calibrated model.",
        net.packet_layer.window,
        net.packet_layer.packet_size,
        rtt_s * 1e3
    ));
    section.tables.push(sensitivity.table(
        "korb_table_4_per_circuit_limit",
        &format!(
            "Table 4, sensitivity (not checked): five puts with a per-circuit limit of \
             {limit:.0} bit/s"
        ),
        &rows_limited,
    ));
    section.figures.push(Figure {
        id: "korb_table_4_rate".into(),
        title: "Table 4: aggregate rate of five simultaneous puts against circuits".into(),
        x_label: "most circuits".into(),
        y_label: "rate, bit/s".into(),
        log_x: false,
        log_y: false,
        series: vec![
            Series {
                label: "simulated".into(),
                style: SeriesStyle::Simulated,
                points: rows
                    .iter()
                    .map(|r| Point {
                        x: r.circuits as f64,
                        y: r.rate.mean,
                        half_width: Some(r.rate.half_width),
                    })
                    .collect(),
            },
            Series {
                label: "simulated, per-circuit limit (sensitivity)".into(),
                style: SeriesStyle::Simulated,
                points: rows_limited
                    .iter()
                    .map(|r| Point {
                        x: r.circuits as f64,
                        y: r.rate.mean,
                        half_width: Some(r.rate.half_width),
                    })
                    .collect(),
            },
            Series {
                label: "Korb 1987".into(),
                style: SeriesStyle::Published,
                points: published
                    .iter()
                    .filter_map(|p| {
                        p.rate_bps.map(|y| Point {
                            x: p.channels as f64,
                            y,
                            half_width: None,
                        })
                    })
                    .collect(),
            },
        ],
    });
    for p in &published {
        let (Some(paper), Some(r)) = (p.rate_bps, rows.iter().find(|r| r.circuits == p.channels))
        else {
            continue;
        };
        let note = if p.channels == 1 {
            format!(
                "{}. The paper's 3645 s for 500 KB over one circuit is 30 times slower than \
                 the flow control allows; the model's single circuit is not a bottleneck \
                 (local acknowledgement) and its TCP, whose RFC 6298 timer adapts, does not \
                 collapse into retransmissions; what made one circuit so slow on ACCUNET is \
                 not in the paper.",
                row_text(r)
            )
        } else if p.channels <= 4 {
            format!(
                "{}. The model reaches the flow-control level with any number of circuits; \
                 the paper's rate is still rising here (see the section text).",
                row_text(r)
            )
        } else {
            format!(
                "{}. At the flow-control level: {:.0}% of 56 kbit/s of IP datagrams, less \
                 40 octets of TCP/IP headers per 552. The paper's estimate counts the same \
                 file octets over the longest time.",
                row_text(r),
                X25NetConfig::korb1987(addresses()).share * 100.0
            )
        };
        section.checks.push(
            Check::relative(
                format!("korb1987/table4/{}-circuits", p.channels),
                Paper::Korb1987,
                format!(
                    "Table 4: rate of five simultaneous 100,000-octet puts, at most {} circuits",
                    p.channels
                ),
                paper,
                r.rate.mean,
                "bit/s",
                TOLERANCE,
            )
            .with_note(note),
        );
    }
    let rate = |c: usize| rows.iter().find(|r| r.circuits == c).map(|r| r.rate.mean);
    if let (Some(one), Some(five)) = (rate(1), rate(5)) {
        let rises = five > 1.5 * one;
        section.checks.push(
            Check::qualitative(
                "korb1987/table4/rises-with-circuits",
                Paper::Korb1987,
                "Table 4: the aggregate rate rises with the number of circuits",
                "from 1,097 bit/s (1 circuit) to 31,496 (5)",
                format!("{one:.0} bit/s (1 circuit), {five:.0} (5)"),
                rises,
            )
            .with_note(
                "In the model the network acknowledges each access line's packets locally, \
                 so one circuit with its window of 2 already carries what the flow control \
                 admits; the rise the paper saw needs a per-circuit limit the model does not \
                 have (an end-to-end window would give one but contradicts Table 1's \
                 512-octet ping, see Table 3).",
            ),
        );
    }
    let level = rows
        .iter()
        .filter(|r| r.circuits >= 6)
        .map(|r| r.rate.mean)
        .fold(0.0, f64::max);
    if level > 0.0 {
        section.checks.push(
            Check::relative(
                "korb1987/table4/level",
                Paper::Korb1987,
                "Table 4: the rate levels off near the network's capacity",
                35_000.0,
                level,
                "bit/s",
                TOLERANCE,
            )
            .with_paper_text("about 35,000 (63% of 56 kbit/s)")
            .with_note(format!(
                "Highest simulated rate with 6 or more circuits, {level:.0} bit/s: the \
                 network's GCRA flow control at 63% of the line ({:.0} bit/s of IP \
                 datagrams) less 40 octets of headers in every 552. The paper's 35,000 is an \
                 estimate from the longest of five times, the model's the same estimate.",
                0.63 * 56_000.0
            )),
        );
    }
    Ok(section)
}

/// The paper's lesson: needless TCP retransmissions when the network is
/// saturated, with 4.2BSD-like TCP and with the one adjustment smoltcp
/// allows.
pub fn retransmissions(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, KorbError> {
    let single = FtpExperiment {
        directions: vec![super::experiment::FileDirection::Put],
        ..FtpExperiment::from_toml(TABLE_2)?
    };
    let saturated = FtpExperiment {
        circuits: vec![1, 10],
        ..FtpExperiment::from_toml(TABLE_4)?
    };
    let reno = FtpExperiment {
        congestion: Congestion::Reno,
        ..saturated.clone()
    };
    let rows_single = single.simulate(opts, progress)?;
    let rows_sat = saturated.simulate(opts, progress)?;
    let rows_reno = reno.simulate(opts, progress)?;
    let mut section = Section {
        heading: "Section 4: needless TCP retransmissions".into(),
        text: format!(
            "{} The paper: \"the long delay present when the network was saturated ... \
             appeared to cause many — unnecessary — TCP retransmissions\", so \"the TCP \
             timeout period must be carefully adjusted for X.25 carriers\". Counted here by \
             the TCP sniffers on the hosts' devices: retransmitted segments at the sender, \
             and segments whose sequence space the receiver already had (spurious). The \
             model's network loses nothing, so every retransmission is needless. smoltcp \
             0.14's RTO is fixed by constants (RFC 6298: initial 1 s, floor 1 s), so the \
             timer itself cannot be tuned; compared instead: a single transfer (no \
             saturation), five at once with no congestion window (4.2BSD), and five at once \
             with Reno, which after a time-out sends one segment instead of the whole \
             window again.",
            model_text()
        ),
        ..Section::default()
    };
    let mut table = single.table(
        "korb_retransmissions",
        "Retransmissions: one put, five puts (no congestion window), five puts (Reno)",
        &rows_single,
    );
    for (experiment, rows) in [(&saturated, &rows_sat), (&reno, &rows_reno)] {
        table.rows.extend(experiment.table("x", "x", rows).rows);
    }
    table.columns.insert(0, "case".into());
    let cases = ["one put"]
        .into_iter()
        .chain(rows_sat.iter().map(|_| "five puts, none"))
        .chain(rows_reno.iter().map(|_| "five puts, Reno"));
    for (row, case) in table.rows.iter_mut().zip(cases) {
        row.insert(0, case.into());
    }
    section.tables.push(table);
    let one = rows_single.first();
    let sat = rows_sat.iter().find(|r| r.circuits == 1);
    let sat_reno = rows_reno.iter().find(|r| r.circuits == 1);
    if let (Some(one), Some(sat), Some(sat_reno)) = (one, sat, sat_reno) {
        let all_needless = (sat.retransmitted - sat.spurious).abs() <= 0.5;
        let many = sat.spurious >= 5.0 * one.spurious.max(1.0);
        section.checks.push(
            Check::qualitative(
                "korb1987/section4/needless-retransmissions",
                Paper::Korb1987,
                "Saturating the network causes many needless TCP retransmissions",
                "many unnecessary retransmissions when the network was saturated; \
                 datagrams rarely lost",
                format!(
                    "five puts: {:.1} retransmitted, {:.1} spurious of {:.0} segments; one \
                     put: {:.1} spurious",
                    sat.retransmitted, sat.spurious, sat.segments, one.spurious
                ),
                all_needless && many,
            )
            .with_note(
                "Five 2 KB windows queue behind the flow control at the ingress (RNR) and in \
                 the interface, so the first round trips take seconds: longer than \
                 smoltcp's 1 s initial RTO, and each expiry re-sends the whole window \
                 (go-back-N). The receiver already had every re-sent segment. They all fall \
                 in that start: with files of 200,000 octets the count is the same (50). A \
                 single transfer never saturates the network and re-sends nothing.",
            ),
        );
        section.checks.push(
            Check::qualitative(
                "korb1987/section4/tuned",
                Paper::Korb1987,
                "Adjusting TCP for the long delay removes needless retransmissions",
                "the timeout must be carefully adjusted for X.25 carriers",
                format!(
                    "five puts, 1 circuit: {:.1} spurious with no congestion window, {:.1} \
                     with Reno; rate {:.0} and {:.0} bit/s",
                    sat.spurious, sat_reno.spurious, sat.rate.mean, sat_reno.rate.mean
                ),
                sat_reno.spurious < sat.spurious && sat_reno.rate.mean >= 0.95 * sat.rate.mean,
            )
            .with_note(
                "Not the paper's adjustment: smoltcp 0.14's retransmission timer cannot be \
                 set, so the comparison is between no congestion window (4.2BSD) and Reno \
                 (RFC 5681), whose slow start after a time-out re-sends one segment rather \
                 than the window. The time-outs themselves still happen (the initial 1 s \
                 RTO is shorter than the saturated round trip); a longer initial RTO, the \
                 paper's remedy, would avoid those too.",
            ),
        );
    }
    Ok(section)
}
