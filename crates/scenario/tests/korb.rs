//! Korb and Wills (1987): smoltcp hosts over IP over X.25 on the
//! simulated ACCUNET (`linklab_scenario::korb`), seeded.

use std::time::Duration;

use linklab_channel::x25net::Delay;
use linklab_channel::{ErrorModel, StationId};
use linklab_core::Streams;
use linklab_ip::apps::{Ping, PingConfig};
use linklab_scenario::experiment::Experiment;
use linklab_scenario::korb::bsd42::Bsd42Config;
use linklab_scenario::korb::run::{median, ping_sequence, transfers, Direction};
use linklab_scenario::korb::testbed::{ip_address, Testbed, TestbedConfig, IPV4};
use linklab_scenario::report::{NoProgress, Paper, RunOptions};
use linklab_scenario::workload::FileTransfer;

/// The testbed with a short call set-up, for tests that are not about it.
fn quick_setup(circuits: usize) -> TestbedConfig {
    let mut config = TestbedConfig::korb1987(circuits);
    config.net.call_setup = Delay::Constant(Duration::from_secs(2));
    config
}

#[test]
fn ping_crosses_the_network_after_the_circuit_is_set_up() {
    let config = TestbedConfig::korb1987(1);
    let outcome = ping_sequence(&config, &Streams::new(7), 60).unwrap();
    assert!(
        outcome.small.iter().all(Option::is_some),
        "every 64-octet ping answered"
    );
    assert!(
        outcome.large.iter().all(Option::is_some),
        "every 512-octet ping answered"
    );
    // The first ping waited for the call: 20-30 s of set-up.
    let first = outcome.small[0].unwrap();
    assert!(
        (20_000.0..31_000.0).contains(&first),
        "first ping {first} ms"
    );
    // Once the circuit is open, round trips are the network's: two
    // transits of about 107 ms plus the lines, a few hundred ms.
    let settled: Vec<f64> = outcome.small[40..].iter().flatten().copied().collect();
    let m = median(&settled).unwrap();
    assert!((250.0..450.0).contains(&m), "64-octet median {m} ms");
    let large: Vec<f64> = outcome.large.iter().flatten().copied().collect();
    let m512 = median(&large).unwrap();
    assert!(
        m512 > m + 300.0,
        "512 octets take longer: {m512} against {m} ms"
    );
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let config = quick_setup(2);
    let a = transfers(&config, &Streams::new(3), Direction::Put, 2, 20_000).unwrap();
    let b = transfers(&config, &Streams::new(3), Direction::Put, 2, 20_000).unwrap();
    assert_eq!(a, b);
    let c = transfers(&config, &Streams::new(4), Direction::Put, 2, 20_000).unwrap();
    assert_ne!(
        a.max_time_s, c.max_time_s,
        "another seed draws other delays"
    );
}

#[test]
fn a_file_arrives_intact_both_ways() {
    let config = quick_setup(1);
    for direction in [Direction::Put, Direction::Get] {
        let t = transfers(&config, &Streams::new(11), direction, 1, 30_000).unwrap();
        assert_eq!(t.completed, 1, "{direction:?}");
        assert_eq!(
            t.sent.payload_octets, 30_000,
            "{direction:?}: no re-sent data"
        );
        // One circuit: its throughput class, 6,902 bit/s of datagrams,
        // about 6,400 of file data (less the start of the transfer).
        let class = config.net.per_call.unwrap().rate_bps * 512.0 / 552.0;
        assert!(
            (0.8 * class..=1.02 * class).contains(&t.rate_bps),
            "{direction:?}: {} bit/s, class {class:.0}",
            t.rate_bps
        );
    }
}

#[test]
fn a_4_2bsd_sender_delivers_the_file_to_smoltcp_both_ways() {
    let mut config = TestbedConfig::korb1987_bsd42(1, Bsd42Config::bsd42());
    config.net.call_setup = Delay::Constant(Duration::from_secs(2));
    for direction in [Direction::Put, Direction::Get] {
        let t = transfers(&config, &Streams::new(11), direction, 1, 30_000).unwrap();
        assert_eq!(t.completed, 1, "{direction:?}");
        // One transfer on an open circuit: the round trip stays under the
        // 2 x srtt timeout, so nothing is sent twice.
        assert_eq!(t.sent.payload_octets, 30_000, "{direction:?}");
        assert_eq!(t.timeouts, 0, "{direction:?}");
        let class = config.net.per_call.unwrap().rate_bps * 512.0 / 552.0;
        assert!(
            (0.8 * class..=1.02 * class).contains(&t.rate_bps),
            "{direction:?}: {} bit/s, class {class:.0}",
            t.rate_bps
        );
    }
    let again = transfers(&config, &Streams::new(11), Direction::Put, 1, 30_000).unwrap();
    let first = transfers(&config, &Streams::new(11), Direction::Put, 1, 30_000).unwrap();
    assert_eq!(again, first);
}

#[test]
fn more_circuits_are_opened_as_the_queue_grows() {
    let config = quick_setup(4);
    let t = transfers(&config, &Streams::new(5), Direction::Put, 5, 20_000).unwrap();
    assert_eq!(t.completed, 5);
    assert!(t.circuits >= 2, "{} circuits", t.circuits);
    assert!(t.circuits <= 4, "at most the configured 4: {}", t.circuits);
}

#[test]
fn a_transfer_over_a_lossy_access_line_is_intact_or_fails_clearly() {
    // One bit in 20,000 lost on both access lines: about one LAPB frame in
    // 14 of a full data packet. LAPB re-sends (T1, REJ); TCP sees delay.
    let mut config = quick_setup(1);
    config.net.access_line.errors = ErrorModel::Independent { ber: 5e-5 };
    let mut testbed = Testbed::new(&config, &Streams::new(21)).unwrap();
    let data: Vec<u8> = (0..40_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let now = testbed.now();
    let mut ftp =
        FileTransfer::start(testbed.hosts_mut(), ip_address(1), &config.tcp, data, now).unwrap();
    let result = testbed.run(&mut [&mut ftp], Duration::from_secs(3600));
    let report = ftp.report();
    match (result, ftp.failure()) {
        (Ok(()), None) => {
            assert!(report.byte_exact, "delivered but not intact: {report:?}");
            assert_eq!(report.received_octets, 40_000);
        }
        (result, failure) => panic!("the transfer failed: {result:?}, {failure:?}"),
    }
    let corrupted: u64 = (0..2)
        .flat_map(|i| {
            let line = testbed.net().access_line(i).unwrap();
            [0, 1].map(|s| line.stats(StationId(s)).unwrap().lost_to_errors)
        })
        .sum();
    assert!(corrupted > 0, "the error model hit some frames");
}

#[test]
fn a_transfer_to_an_address_without_a_route_fails_clearly() {
    let config = quick_setup(1);
    let mut testbed = Testbed::new(&config, &Streams::new(2)).unwrap();
    let now = testbed.now();
    let nowhere = smoltcp::wire::IpAddress::v4(128, 10, 0, 99);
    let mut ftp = FileTransfer::start(
        testbed.hosts_mut(),
        nowhere,
        &config.tcp,
        vec![1; 1000],
        now,
    )
    .unwrap();
    let result = testbed.run(&mut [&mut ftp], Duration::from_secs(30));
    assert!(result.is_err(), "nothing can arrive");
    assert_eq!(ftp.report().received_octets, 0);
    let refused = testbed.hosts()[0].link().stats().dropped_refused;
    assert!(
        refused > 0,
        "the interface refused the datagrams (no X.121 route)"
    );
    assert_eq!(
        testbed.hosts()[0].link().ip_stats().dropped_no_route,
        refused
    );
}

#[test]
fn a_ping_to_the_other_host_is_answered_by_its_stack() {
    let config = quick_setup(1);
    let mut testbed = Testbed::new(&config, &Streams::new(9)).unwrap();
    let now = testbed.now();
    let ping_config = PingConfig {
        target: IPV4[1],
        ident: 1,
        count: 5,
        payload_octets: 56,
        interval: Duration::from_secs(1),
        wait: Duration::from_secs(10),
    };
    let mut ping = Ping::start(testbed.hosts_mut(), &ping_config, now).unwrap();
    testbed
        .run(&mut [&mut ping], Duration::from_secs(60))
        .unwrap();
    assert_eq!(ping.report().received, 5);
    // Both interfaces saw one circuit, opened by host 0.
    assert_eq!(testbed.hosts()[0].link().ip_stats().calls_made, 1);
    assert_eq!(testbed.hosts()[1].link().ip_stats().circuits_opened, 1);
}

#[test]
fn the_built_in_files_parse_and_bad_values_are_refused() {
    for file in [
        "korb-table-1.toml",
        "korb-table-2.toml",
        "korb-table-3.toml",
        "korb-table-4.toml",
    ] {
        let path = format!("{}/experiments/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let e = Experiment::from_toml(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(e.kind().starts_with("korb-"));
    }
    let bad = "kind = \"korb-ftp\"\ndirections = [\"put\"]\ncircuits = [0]\nfiles = 1\n\
               file_octets = 1000\nwindow_octets = 2048\ncongestion = \"none\"\n\
               replications = 2\nmax_replications = 2\nquick_replications = 2\n";
    let error = Experiment::from_toml(bad).unwrap_err().to_string();
    assert!(
        error.contains("circuits") && error.contains("1-16"),
        "{error}"
    );
    let sideways = bad.replace("\"put\"", "\"sideways\"");
    assert!(Experiment::from_toml(&sideways).is_err());
    // 4.2BSD has no congestion window, and only its sender takes a floor.
    let good = bad.replace("[0]", "[1]");
    let reno = good.replace("\"none\"", "\"reno\"") + "tcp = \"bsd42\"\n";
    let error = Experiment::from_toml(&reno).unwrap_err().to_string();
    assert!(error.contains("congestion"), "{error}");
    let floor = good.clone() + "min_rto_s = 5.0\n";
    assert!(Experiment::from_toml(&floor).is_err());
    assert!(Experiment::from_toml(&(floor + "tcp = \"bsd42\"\n")).is_ok());
    // A segment is at most the window, and a sane size.
    for (segment, what) in [("4096", "more than the window"), ("32", "64-8192")] {
        let text = good.clone() + &format!("segment_octets = {segment}\n");
        let error = Experiment::from_toml(&text).unwrap_err().to_string();
        assert!(
            error.contains("segment_octets") && error.contains(what),
            "{error}"
        );
    }
    assert!(Experiment::from_toml(&(good + "segment_octets = 1024\n")).is_ok());
}

#[test]
fn quick_reproduction_gives_every_section_with_notes() {
    let opts = RunOptions {
        quick: true,
        ..RunOptions::default()
    };
    let section = linklab_scenario::korb::table_1(&opts, &NoProgress).unwrap();
    assert_eq!(
        section.checks.len(),
        8,
        "the four medians and four averages of Table 1"
    );
    for check in &section.checks {
        assert_eq!(check.paper, Paper::Korb1987);
        assert!(!check.note.is_empty(), "{}", check.id);
        // The medians reproduce; the averages are declared gaps (a tail
        // and a set-up time the paper does not publish), and say so.
        if check.id.contains("median") {
            assert!(
                check.pass,
                "{}: {} against {}",
                check.id, check.ours, check.paper_value
            );
        } else {
            assert!(
                !check.pass,
                "{} now passes: take it out of gaps.toml",
                check.id
            );
            assert!(check.note.starts_with("Not reproduced"), "{}", check.id);
        }
    }
    let section = linklab_scenario::korb::retransmissions(&opts, &NoProgress).unwrap();
    assert!(section.checks.iter().all(|c| !c.note.is_empty()));
    assert!(
        section
            .checks
            .iter()
            .any(|c| c.id == "korb1987/section4/needless-retransmissions" && c.pass),
        "saturation causes spurious retransmissions"
    );
}
