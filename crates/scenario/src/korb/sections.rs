//! The sections of the Korb reproduction: Table 1 (ping), Tables 2 and 3
//! (one FTP transfer over one or more circuits), Table 4 (five puts at
//! once) and the count of needless retransmissions.

use linklab_channel::x25net::X25NetConfig;

use crate::builtin;
use crate::korb::bsd42::Bsd42Config;

use super::bench::{addresses, tcp_4_2bsd, BenchConfig, IFQ_MAXLEN};
use super::experiment::{FtpExperiment, FtpRow, PingExperiment};
use super::reference::{FtpExperiment as Published, FtpRow as PublishedFtp, PingRow};
use super::run::Direction;
use super::KorbError;
use crate::published::load;
use crate::report::{
    Basis, Check, Figure, Paper, Point, Progress, RunOptions, Section, Series, SeriesStyle, Table,
};

/// Relative tolerance of every numeric check.
const TOLERANCE: f64 = 0.20;

/// The "tuned" 4.2BSD timer of section 4, s: the floor of the time-out
/// raised from `TCPTV_MIN` (1 s) to the ceiling `TCPTV_MAX` (30 s), so
/// that the time-out is 30 s whatever the estimate. Not fitted: it is the
/// longest time-out 4.2BSD's timer already allowed, and longer than any
/// round trip of the saturated network (five windows, 20 datagrams, drain
/// through ten circuits in a few seconds).
const TUNED_MIN_RTO_S: f64 = 30.0;

/// What every section says about the model.
fn model_text() -> String {
    let net = X25NetConfig::korb1987(addresses());
    let tcp = tcp_4_2bsd();
    let bsd = Bsd42Config::bsd42();
    format!(
        "Two hosts, each smoltcp 0.14 over an RFC 877 interface (IP MTU 576, call user data \
         0xCC, circuits opened on demand and as the queue grows, cleared after 90 s idle) on \
         the real X.25 packet layer (window 2, packets of 128 octets) and LAPB, on the two \
         {} bit/s access lines of the simulated ACCUNET: transit {:?} plus {:.4} ms per \
         octet (fitted to Table 1 only), call set-up {:?}, flow control at {:.1}% of the \
         line (fitted by simulation to section 3.5's saturated level, 35,000 bit/s of file \
         data with ten circuits), and a throughput class per circuit of {:.0} bit/s of user \
         data (a token bucket one {}-octet datagram deep; fitted by simulation to Table 3's \
         two-circuit row; the example korb_fit). The files are sent by 4.2BSD's TCP \
         (linklab_scenario::korb::bsd42, from the CSRG sources): window {} octets (4.2BSD's 1024*2 \
         socket buffers), {}-octet segments, no congestion window, a time-out of {} times \
         a smoothed round trip (gain {:.1}, the first sample as it is) between {} and {} s, \
         on expiry srtt times 1.0, 1.2, 1.4, 1.7, 2, 3, 5, 8, 16, 32 and every \
         unacknowledged segment re-sent (go-back-N), the connection dropped after {} \
         expiries in a row, an interface queue of {} datagrams (IFQ_MAXLEN); they are \
         received by smoltcp 0.14 sockets (delayed ACK {} ms, but at once when more than \
         a full segment is unacknowledged: about every second segment).",
        net.access_line.bit_rate,
        net.transit,
        net.per_octet.as_secs_f64() * 1e3,
        net.call_setup,
        net.share * 100.0,
        net.per_call.map_or(0.0, |c| c.rate_bps),
        net.per_call.map_or(0, |c| c.burst_octets),
        tcp.window_octets,
        bsd.mss,
        bsd.beta,
        bsd.alpha,
        bsd.min_rto.as_secs(),
        bsd.max_rto.as_secs(),
        bsd.max_rxt_shift,
        IFQ_MAXLEN,
        tcp.ack_delay_ms.unwrap_or(0),
    )
}

fn gap(ours: f64, paper: f64) -> String {
    format!("{:+.1}", 100.0 * (ours / paper - 1.0))
}

/// Table 1: ping round trips, 64 and 512 octets, sequences 1-100 and
/// 50-100.
pub fn table_1(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, KorbError> {
    let experiment = PingExperiment::from_toml(builtin::KORB_TABLE_1)?;
    let published = load::<PingRow>()?;
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
        id: "korb-table-1".into(),
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
        let Some(ci) = super::experiment::ping_metric(row.size, row.median, row.settled)
            .and_then(|metric| stats.get(metric))
        else {
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
        let note = match (row.size, row.median, row.settled) {
            (64, false, false) => format!(
                "Not reproduced (a declared gap). The average over 1-100 is dominated by the \
                 pings sent while the circuit is set up. The model draws the set-up uniformly \
                 from 20-30 s, what the paper calls its longest ('as much as 20-30 seconds'); \
                 the paper's 1992 ms, 1431 ms above its settled average, means about 143 s \
                 of waiting in all, a set-up near 17 s in a typical test. The typical set-up \
                 is not published; fitting it to this average would make the check a fit. \
                 Ours {:.0} ± {:.0} ms.",
                ci.mean, ci.half_width
            ),
            (size, false, _) => format!(
                "Not reproduced (a declared gap). The paper warns that 'a few packets with \
                 extremely long delays can severely affect the computation of the average': \
                 its settled average is {:.2} times its median for {size}-octet pings. The \
                 model's transit delay is log-normal with a spread (sigma 0.35) set by hand, \
                 not fitted, whose mean is 1.06 times its median; the tail of rare \
                 multi-second delays is not published (only Figs. 1-4, per day), so it is not \
                 modelled. Ours {:.0} ± {:.0} ms.",
                published
                    .iter()
                    .find(|r| r.size == size && r.median && r.settled)
                    .map_or(f64::NAN, |m| {
                        published
                            .iter()
                            .find(|r| r.size == size && !r.median && r.settled)
                            .map_or(f64::NAN, |a| a.rtt_ms / m.rtt_ms)
                    }),
                ci.mean,
                ci.half_width
            ),
            (64, true, false) => format!(
                "Includes the first pings, queued while the circuit is set up (20-30 s): \
                 about a quarter of the 100 wait, so the median moves to a higher \
                 quantile of the settled delays, as in the paper (340 against 330 ms). Ours \
                 {:.0} ± {:.0} ms.",
                ci.mean, ci.half_width
            ),
            (64, true, true) => format!(
                "One of the two medians the transit delay was fitted to (with the per-octet \
                 time from the 512-octet one): agreement here checks the fit's arithmetic \
                 (two log-normal draws, access lines, hosts), not a prediction. Ours {:.0} ± \
                 {:.0} ms.",
                ci.mean, ci.half_width
            ),
            (512, true, false) => format!(
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
            .with_basis(if row.median && row.settled {
                Basis::Fit
            } else {
                Basis::Prediction
            })
            .with_note(note),
        );
    }
    section.tables.push(table);
    Ok(section)
}

/// The published rate of a row of Tables 2-4.
fn published_rate(kind: Published, channels: usize, put: bool) -> Result<Option<f64>, KorbError> {
    Ok(load::<PublishedFtp>()?
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
/// one circuit or with the multi-circuit code active, put over at most
/// two and four.
pub fn tables_2_3(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, KorbError> {
    let table_2 = FtpExperiment::from_toml(builtin::KORB_TABLE_2)?;
    let table_3 = FtpExperiment::from_toml(builtin::KORB_TABLE_3)?;
    let rows_2 = table_2.simulate(opts, progress)?;
    let rows_3 = table_3.simulate(opts, progress)?;
    let most = table_2.circuits.iter().copied().max().unwrap_or(1);
    let window_4096 = FtpExperiment {
        directions: vec![super::experiment::FileDirection::Put],
        circuits: vec![most],
        window_octets: 4096,
        ..table_2.clone()
    };
    let rows_4096 = window_4096.simulate(opts, progress)?;
    let per_call = X25NetConfig::korb1987(addresses())
        .per_call
        .map_or(0.0, |c| c.rate_bps);
    let find = |rows: &[FtpRow], direction: Direction, circuits: usize| {
        rows.iter()
            .find(|r| r.direction == direction && r.circuits == circuits)
            .cloned()
    };
    let (put_2, get_2) = (
        find(&rows_2, Direction::Put, 2),
        find(&rows_2, Direction::Get, 2),
    );
    let mut section = Section {
        heading: "Tables 2 and 3: one FTP transfer, one or more circuits".into(),
        text: format!(
            "{} One FTP data connection carries the 175,426-octet file after the control \
             connection has opened the first circuit (modelled by one echo exchange), so the \
             reported rate, like FTP's, leaves the first call set-up out; extra circuits are \
             called while the transfer runs (one more per datagram waiting in the \
             interface's queue, up to the most allowed) and take 20-30 s each. One circuit \
             carries at most its throughput class, {per_call:.0} bit/s of datagrams (about \
             {:.0} bit/s of file data), so one transfer gains from a second circuit (Table 3, \
             2 circuits) and from a third, until the 2048-octet TCP window over the round \
             trip limits it (Table 3, 4 circuits: the fourth circuit adds little). Table 2 is read two ways. The paper ran it \"at a time when the code \
             that automatically opens multiple channels as load increases was not working \
             properly\", so how many circuits it had is not known; the reference data's \
             \"one channel\" is one reading. Under a per-circuit limit that reading \
             contradicts the paper's own Table 3: the same put is faster in Table 2 \
             (15,012 bit/s) than with two circuits in Table 3 (12,604), which no single \
             circuit of a network that gives two circuits 12,604 can do. The data support \
             the other reading, the multi-circuit code opening circuits (Table 2's put and \
             get, 15,012 and 19,997 bit/s, lie at Table 3's four-circuit 19,254 and between \
             it and the two-circuit row), so Table 2 is checked against the run with at most \
             {most} circuits (Table 3's highest setting, not fitted) and the single-circuit \
             rows are shown unchecked. The paper found get \"consistently faster\" (put \
             15,012, get 19,997 bit/s) and gives no reason; the two hosts ran the same \
             4.2BSD on equal 56 kbit/s lines. The model finds one, in the opening of \
             circuits, at Table 3's lowest setting (at most 2 circuits): get {get_2:.0}, put \
             {put_2:.0} bit/s. The FTP client at Purdue opens the circuits: the control \
             connection's first datagram waits through the call set-up, and by the rule of \
             one more circuit per datagram waiting the client calls a second. A host counts \
             the circuits it knows of, its own calls still being set up among them. In a put the data sender is that client, which knows \
             of both its calls and stays at its limit. In a get the sender is the server at \
             CSNET, which cannot see the client's second call until it arrives (set-up takes \
             20-30 s), so when the file starts sooner it calls one of its own, and the \
             transfer runs on three circuits (the sender saw {get_2_circuits:.1} circuits \
             opened on average in a get, {put_2_circuits:.1} in a put). With at most {most} the 2048-octet \
             window binds from the third circuit on and hides it; the paper's own Table 3, \
             19,254 bit/s with four circuits where the model reaches {put_4:.0}, shows its \
             window binding later. A last row shows what the 4096-octet window of 4.3BSD would do with \
             {most} circuits.",
            model_text(),
            per_call * 512.0 / 552.0,
            put_2 = put_2.as_ref().map_or(f64::NAN, |r| r.rate.mean),
            get_2 = get_2.as_ref().map_or(f64::NAN, |r| r.rate.mean),
            put_2_circuits = put_2.as_ref().map_or(f64::NAN, |r| r.circuits_opened),
            get_2_circuits = get_2.as_ref().map_or(f64::NAN, |r| r.circuits_opened),
            put_4 = find(&rows_3, Direction::Put, most).map_or(f64::NAN, |r| r.rate.mean),
        ),
        ..Section::default()
    };
    let mut table = table_2.table(
        "korb-tables-2-3",
        "Tables 2 and 3: FTP of 175,426 octets (TCP window 2048 octets; last row 4096)",
        &[rows_2.clone(), rows_3.clone()].concat(),
    );
    let extra = window_4096.table("x", "x", &rows_4096);
    table.rows.extend(extra.rows.into_iter().map(|mut r| {
        r[0] = format!("{} (window 4096)", r[0]);
        r
    }));
    table.columns.insert(0, "table".into());
    table.columns.push("paper_bps".into());
    let labels = rows_2
        .iter()
        .map(|_| "2")
        .chain(rows_3.iter().map(|_| "3"))
        .chain(rows_4096.iter().map(|_| "-"));
    for ((row, r), label) in table
        .rows
        .iter_mut()
        .zip(rows_2.iter().chain(&rows_3).chain(&rows_4096))
        .zip(labels)
    {
        row.insert(0, label.into());
        let paper = if label == "2" {
            published_rate(Published::Single, 1, r.direction == Direction::Put)?
        } else if label == "3" {
            published_rate(Published::MultiChannel, r.circuits, true)?
        } else {
            None
        };
        row.push(paper.map_or(String::new(), |p| format!("{p:.0}")));
    }
    section.tables.push(table);

    for direction in [Direction::Put, Direction::Get] {
        let (Some(paper), Some(multi), Some(single)) = (
            published_rate(Published::Single, 1, direction == Direction::Put)?,
            find(&rows_2, direction, most),
            find(&rows_2, direction, 1),
        ) else {
            continue;
        };
        section.checks.push(
            Check::relative(
                format!("korb1987/table2/{}", direction.name()),
                Paper::Korb1987,
                format!(
                    "Table 2: FTP {} of 175,426 octets (circuits not known; checked with the \
                     multi-circuit code active, at most {most})",
                    direction.name()
                ),
                paper,
                multi.rate.mean,
                "bit/s",
                TOLERANCE,
            )
            .with_note(format!(
                "With at most {most} circuits: {}. Over exactly one circuit it would be \
                 {:.0} ± {:.0} bit/s ({}% against the paper), the circuit's throughput \
                 class: that \
                 reading is not checked, because the paper's Table 3 gives two circuits only \
                 12,604 bit/s for the same put (see the section text). The paper's put is \
                 25% slower than its get, for no reason it gives; the model, symmetric, has \
                 both at the same rate within sampling.",
                row_text(&multi),
                single.rate.mean,
                single.rate.half_width,
                gap(single.rate.mean, paper),
            )),
        );
    }
    for r in &rows_3 {
        let Some(paper) = published_rate(Published::MultiChannel, r.circuits, true)? else {
            continue;
        };
        let note = if r.circuits == 2 {
            format!(
                "{}. Two circuits at the throughput class, {per_call:.0} bit/s of datagrams \
                 each: the TCP window (four 512-octet segments) keeps both busy. The class \
                 was fitted to this row by simulation (the example korb_fit), so the check \
                 confirms the fit, not a prediction.",
                row_text(r)
            )
        } else {
            format!(
                "{}. The interface opens circuits while segments wait, but with at most \
                 four 512-octet segments out (the 2048-octet window) the rate is the window \
                 over the round trip, not the circuits' sum (4 × {:.0}); the paper's rate, \
                 19,254 bit/s, is about the window per second.",
                row_text(r),
                per_call * 512.0 / 552.0,
            )
        };
        section.checks.push(
            Check::relative(
                format!("korb1987/table3/{}-circuits", r.circuits),
                Paper::Korb1987,
                format!(
                    "Table 3: FTP put of 175,426 octets with at most {} circuits",
                    r.circuits
                ),
                paper,
                r.rate.mean,
                "bit/s",
                TOLERANCE,
            )
            .with_basis(if r.circuits == 2 {
                Basis::Fit
            } else {
                Basis::Prediction
            })
            .with_note(note),
        );
    }
    Ok(section)
}

/// Whether the simulation fails a transfer where the paper's Table 4 did
/// (rows 2, 4 and 10 lost one of five), in a sentence.
fn failures_text(rows: &[FtpRow], files: usize) -> String {
    let short: Vec<String> = rows
        .iter()
        .filter(|r| r.completed < files as f64)
        .map(|r| {
            format!(
                "{} circuits ({:.2} of {files} on average)",
                r.circuits, r.completed
            )
        })
        .collect();
    if short.is_empty() {
        format!(
            "Does the simulation fail one too? No: in every replication of every row all \
             {files} transfers complete. The 4.2BSD sender drops a connection only after 12 \
             expiries without progress (TCP_MAXRXTSHIFT, modelled), which no transfer here \
             reaches; what ended the paper's failed transfers (a call cleared by the \
             network, the FTP programs) is not published, so nothing here ends one."
        )
    } else {
        format!(
            "Transfers that did not complete here: {}.",
            short.join(", ")
        )
    }
}

/// Table 4: five simultaneous puts of 100,000 octets with 1 to 10
/// circuits.
pub fn table_4(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, KorbError> {
    let experiment = FtpExperiment::from_toml(builtin::KORB_TABLE_4)?;
    let rows = experiment.simulate(opts, progress)?;
    let published: Vec<_> = load::<PublishedFtp>()?
        .into_iter()
        .filter(|r| r.experiment == Published::MultiPut)
        .collect();
    let mut section = Section {
        heading: "Table 4: five simultaneous puts, 1 to 10 circuits".into(),
        text: format!(
            "{} Five FTP puts of 100,000 octets start together once the control connections \
             have opened a circuit; the rate is 5 × 100,000 × 8 bits over the longest \
             transfer, as the paper estimates it. Each circuit carries at most its \
             throughput class ({:.0} bit/s of datagrams), so the rate rises about one class \
             per circuit until the network's flow control ({:.1}% of the 56 kbit/s line) \
             binds instead, from seven circuits on. Both were fitted by simulation, once: the \
             class to Table 3's two-circuit row (one transfer), the share to the paper's \
             saturated level (35,000 bit/s) with ten circuits, a row the paper gives no rate \
             for; rows 1 to 9 here are predictions. The simulated runs fall short of the \
             classes' sum because 4.2BSD's timer, whose first estimate is the SYN's short \
             round trip on the open circuit, fires while five windows queue behind the \
             classes (the section 4 counts) and copies overflow the interface queue, extra \
             circuits \
             take 20-30 s to set up, and the rate is taken over the longest of five \
             transfers. The paper's rows 2, 4 and 10 (one transfer of five failed) have no \
             rate and are not checked. {}",
            model_text(),
            X25NetConfig::korb1987(addresses())
                .per_call
                .map_or(0.0, |c| c.rate_bps),
            X25NetConfig::korb1987(addresses()).share * 100.0,
            failures_text(&rows, experiment.files),
        ),
        ..Section::default()
    };
    let mut table = experiment.table(
        "korb-table-4",
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
    section.figures.push(Figure {
        id: "korb-table-4-rate".into(),
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
        let net = X25NetConfig::korb1987(addresses());
        let per_call = net.per_call.map_or(0.0, |c| c.rate_bps);
        let class = per_call * 512.0 / 552.0;
        let note = if p.channels == 1 {
            format!(
                "{}, {:.1} datagrams dropped from the interface queue per run. The paper's \
                 3645 s for 500 KB over one circuit is a sixth of what one circuit carries \
                 in Table 3 (12,604 bit/s for two). In the model five 2048-octet windows \
                 (20 datagrams) queue behind one circuit's class ({class:.0} bit/s of file \
                 data, a datagram every {:.2} s), with 4.2BSD's timers (simulated, \
                 linklab_scenario::korb::bsd42). Their first estimate is the SYN's round trip on the \
                 circuit the control connection opened, a fraction of a second, so the 1 s \
                 floor expires again and again at the start, every expiry re-sends the \
                 window (go-back-N) and copies overflow the {IFQ_MAXLEN}-datagram interface \
                 queue. But 4.2BSD times a segment from its first transmission and keeps \
                 timing it through expiries (no Karn's rule), so its samples carry the whole \
                 queueing delay: srtt climbs to the round trip of ten-odd seconds, twice it \
                 stays under the 30 s ceiling, and the transfers settle near the class. The \
                 collapse argued from the ceiling (a full queue of 50 waits {:.0} s, longer \
                 than 30 s, so every segment would time out) does not happen: five windows \
                 keep only 20 datagrams queued once the copies stop. What made the paper's \
                 run a sixth of the class (the CSNET X.25 driver's queueing, not published, \
                 or the network's behaviour with one saturated circuit) is not in the model; \
                 a declared gap.",
                row_text(r),
                r.dropped,
                552.0 * 8.0 / per_call,
                50.0 * 552.0 * 8.0 / per_call,
            )
        } else if p.channels as f64 * per_call < net.share * 56_000.0 {
            format!(
                "{}. Circuit-limited: at most {} × {class:.0} bit/s of file data (the class \
                 per circuit), less what needless retransmissions and the slowest of five \
                 transfers cost.",
                row_text(r),
                p.channels
            )
        } else {
            format!(
                "{}. The circuits' classes add up to more than the flow control, {:.0}% of \
                 56 kbit/s of IP datagrams ({:.0} bit/s of file data), which binds here; \
                 the rest is needless retransmissions and the slowest of five transfers. \
                 The paper's estimate counts the same file octets over the longest time.",
                row_text(r),
                net.share * 100.0,
                net.share * 56_000.0 * 512.0 / 552.0
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
                "Each circuit carries at most its throughput class, so the rate rises with \
                 the circuits until the network's flow control binds (seven and more). The \
                 class was fitted to Table 3's two-circuit row (one transfer) and the share to \
                 the saturated level with ten circuits; both rows here are predictions, the \
                 one-circuit row far above the paper's (see its note).",
            ),
        );
    }
    let share = X25NetConfig::korb1987(addresses()).share;
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
            .fitted()
            .with_note(format!(
                "Highest simulated rate with 6 or more circuits, {level:.0} bit/s: the \
                 network's GCRA flow control at {:.1}% of the line ({:.0} bit/s of IP \
                 datagrams, {:.0} of file data after 40 octets of headers in every 552), \
                 less the needless retransmissions of five saturated transfers, the 20-30 s \
                 set-up of the extra circuits and the slowest of five. The share was fitted \
                 by simulation to this level with ten circuits (the example korb_fit), so \
                 this check confirms the fit; the rows with 6 to 9 circuits are predictions. \
                 The paper's 35,000 (its \"63%\") is an estimate from the longest of five \
                 times, the model's the same estimate; the share the network must accept to \
                 give it is higher.",
                share * 100.0,
                share * 56_000.0,
                share * 56_000.0 * 512.0 / 552.0
            )),
        );
    }
    Ok(section)
}

/// The paper's lesson: needless TCP retransmissions when the network is
/// saturated, with 4.2BSD's timers and with them tuned (a longer floor).
pub fn retransmissions(opts: &RunOptions, progress: &dyn Progress) -> Result<Section, KorbError> {
    let single = FtpExperiment {
        directions: vec![super::experiment::FileDirection::Put],
        circuits: vec![1],
        ..FtpExperiment::from_toml(builtin::KORB_TABLE_2)?
    };
    let saturated = FtpExperiment {
        circuits: vec![1, 10],
        ..FtpExperiment::from_toml(builtin::KORB_TABLE_4)?
    };
    let tuned = FtpExperiment {
        min_rto_s: Some(TUNED_MIN_RTO_S),
        ..saturated.clone()
    };
    let rows_single = single.simulate(opts, progress)?;
    let rows_sat = saturated.simulate(opts, progress)?;
    let rows_tuned = tuned.simulate(opts, progress)?;
    let mut section = Section {
        heading: "Section 4: needless TCP retransmissions".into(),
        text: format!(
            "{} The paper: \"the long delay present when the network was saturated ... \
             appeared to cause many — unnecessary — TCP retransmissions\", so \"the TCP \
             timeout period must be carefully adjusted for X.25 carriers\". Counted here by \
             the TCP sniffers on the hosts' devices: retransmitted segments at the sender, \
             and segments whose sequence space the receiver already had (spurious). The \
             model's network loses nothing; the sender's interface queue ({IFQ_MAXLEN} \
             datagrams) may overflow, and those datagrams are counted apart. Compared: a \
             single transfer (no saturation), five at once with 4.2BSD's timers, and five \
             at once with the timers tuned: the floor of the time-out raised from 1 s to \
             the {TUNED_MIN_RTO_S:.0} s ceiling (a fixed {TUNED_MIN_RTO_S:.0} s time-out). \
             The checks use ten circuits, where the network's flow control binds (the \
             network saturated, the paper's case); with one circuit only that circuit's \
             throughput class is saturated (shown, not checked).",
            model_text()
        ),
        ..Section::default()
    };
    let mut table = single.table(
        "korb-retransmissions",
        "Retransmissions: one put, five puts (4.2BSD timers), five puts (tuned timers)",
        &rows_single,
    );
    for (experiment, rows) in [(&saturated, &rows_sat), (&tuned, &rows_tuned)] {
        table.rows.extend(experiment.table("x", "x", rows).rows);
    }
    table.columns.insert(0, "case".into());
    let cases = ["one put"]
        .into_iter()
        .chain(rows_sat.iter().map(|_| "five puts, 4.2BSD"))
        .chain(rows_tuned.iter().map(|_| "five puts, tuned"));
    for (row, case) in table.rows.iter_mut().zip(cases) {
        row.insert(0, case.into());
    }
    section.tables.push(table);
    let one = rows_single.first();
    // The network is saturated (its flow control binds) with ten
    // circuits; one circuit saturates only itself (its throughput class).
    let sat = rows_sat.iter().find(|r| r.circuits == 10);
    let sat_tuned = rows_tuned.iter().find(|r| r.circuits == 10);
    let circuit = rows_sat.iter().find(|r| r.circuits == 1);
    let circuit_tuned = rows_tuned.iter().find(|r| r.circuits == 1);
    let one_circuit = match (circuit, circuit_tuned) {
        (Some(c), Some(r)) => format!(
            " With one circuit (only the circuit saturated): {:.1} retransmitted, {:.1} \
             spurious, {:.1} interface queue drops with 4.2BSD's timers; {:.1} spurious \
             with them tuned, rate {:.0} and {:.0} bit/s.",
            c.retransmitted, c.spurious, c.dropped, r.spurious, c.rate.mean, r.rate.mean
        ),
        _ => String::new(),
    };
    if let (Some(one), Some(sat), Some(sat_tuned)) = (one, sat, sat_tuned) {
        // The network loses nothing; the sender's interface queue may drop
        // a datagram now and then, and only those need re-sending.
        let all_needless = sat.retransmitted - sat.spurious <= sat.dropped + 0.5;
        let many = sat.spurious >= 5.0 * one.spurious.max(1.0);
        section.checks.push(
            Check::qualitative(
                "korb1987/section4/needless-retransmissions",
                Paper::Korb1987,
                "Saturating the network causes many needless TCP retransmissions",
                "many unnecessary retransmissions when the network was saturated; \
                 datagrams rarely lost",
                format!(
                    "five puts, 10 circuits: {:.1} retransmitted, {:.1} spurious of {:.0} \
                     segments, {:.1} datagrams dropped by the sender's interface queue; one \
                     put: {:.1} spurious",
                    sat.retransmitted, sat.spurious, sat.segments, sat.dropped, one.spurious
                ),
                all_needless && many,
            )
            .with_note(format!(
                "Five 2 KB windows queue behind the flow control at the ingress (RNR) and in \
                 the interface, so the round trips take seconds, while 4.2BSD's timer starts \
                 from the SYN's round trip on the open circuit (a fraction of a second, so \
                 the 1 s floor) and adapts slowly (gain 0.1); each expiry re-sends the whole \
                 window (go-back-N), and copies overflow the interface queue. The receiver already had every re-sent segment but those \
                 repairing a datagram the sender's own interface queue dropped (the check: \
                 retransmitted less spurious at most the drops). A single \
                 transfer (one circuit) never saturates anything and re-sends nothing.\
                 {one_circuit}"
            )),
        );
        section.checks.push(
            Check::qualitative(
                "korb1987/section4/tuned",
                Paper::Korb1987,
                "Adjusting TCP for the long delay removes needless retransmissions",
                "the timeout must be carefully adjusted for X.25 carriers",
                format!(
                    "five puts, 10 circuits: {:.1} spurious with 4.2BSD's timers, {:.1} with \
                     them tuned; rate {:.0} and {:.0} bit/s",
                    sat.spurious, sat_tuned.spurious, sat.rate.mean, sat_tuned.rate.mean
                ),
                sat_tuned.spurious < sat.spurious && sat_tuned.rate.mean >= 0.95 * sat.rate.mean,
            )
            .with_note(format!(
                "The paper's adjustment, on 4.2BSD's own timer: the floor of the time-out \
                 (TCPTV_MIN) raised from 1 s to {TUNED_MIN_RTO_S:.0} s, the ceiling the timer \
                 already had, so the time-out no longer starts from the SYN's sub-second \
                 round trip. Not fitted: floors of 5 and 10 s were also tried by hand (they \
                 leave fewer needless retransmissions than 1 s, 30 s leaves none); 30 s is \
                 used as the ceiling 4.2BSD already had, and the check asks only for fewer \
                 needless retransmissions at no loss of rate.{one_circuit}"
            )),
        );
    }
    Ok(section)
}

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
                directions: vec![super::experiment::FileDirection::Put],
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
            directions: vec![super::experiment::FileDirection::Put],
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
        text: format!(
            "{} The paper estimates the network's capacity at about 35,000 bit/s from five \
             simultaneous transfers (Table 4) and says a single transfer should reach it \
             \"by modifying TCP/FTP to use larger TCP segments so that more data can be \
             presented to the ACCUNET interface\", and in its conclusions \"a larger segment \
             size and/or sending window\". Here one put of {} octets runs with 4.2BSD's \
             sender and segments of 512 or 1024 octets (the interface's MTU raised from RFC \
             877's 576 to 1064 for the latter, by agreement between the hosts) and windows \
             of 2048 (4.2BSD) to 16384 octets, over one circuit and with the multi-circuit \
             code free to open up to ten. Over one circuit the call's throughput class \
             ({per_call:.0} bit/s of datagrams) caps every setting; only more circuits, \
             which the interface opens while datagrams wait, carry more, and how many wait \
             is the window over the segment size: a larger window helps, a larger segment \
             with the same window halves the datagrams in flight.",
            model_text(),
            FILE_OCTETS,
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
                    "segments of {} octets, time-out floor {TUNED_MIN_RTO_S:.0} s, up to 10 circuits",
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
            .with_note(format!(
                "Best single transfer: segments of {segment} octets, window {window}, {:.0} ± \
                 {:.0} bit/s with {:.1} circuits opened. Over one circuit no setting exceeds \
                 {one_circuit_best:.0} bit/s (the call's throughput class). With circuits free \
                 to open, the window is what helps: {}. Larger segments do not: {}; each \
                 1064-octet datagram takes about {:.1} s of the call's class, beyond 4.2BSD's \
                 1 s floor of the retransmission timer, so segments are resent needlessly and, \
                 at larger windows, overflow the interface queue. With the timer adjusted as \
                 well (section 4: segment sizes \"and transmission timers\"; the floor raised \
                 to {TUNED_MIN_RTO_S:.0} s as in Table 4's tuned rows), 1024-octet segments \
                 give {tuned_trend}: nothing is resent, but without the needless resends \
                 fewer datagrams wait, so fewer circuits open at small windows; {tuned_best}. \
                 So of the paper's \"larger segment size and/or sending window\" the window \
                 does most, and larger segments add to it only with the timer adjusted.",
                r.rate.mean,
                r.rate.half_width,
                r.circuits_opened,
                trend(&rows, SEGMENTS[0]),
                trend(&rows, SEGMENTS[1]),
                1064.0 * 8.0 / per_call,
            )),
        );
    }
    Ok(section)
}
