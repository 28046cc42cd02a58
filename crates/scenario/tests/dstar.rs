//! The D-STAR DD testbed: every protocol run gets through a clean channel,
//! and the quick report sections explain every check.

use core::time::Duration;

use linklab_channel::DdConfig;
use linklab_scenario::dstar::normcl::dtn_norm_transfer;
use linklab_scenario::dstar::testbed::{linux_tcp, tcp_bulk};
use linklab_scenario::dstar::{table_1_with, table_2_with, Table1Config, Table2Config};
use linklab_scenario::report::{NoProgress, RunOptions};

#[test]
fn tcp_over_ipv4_and_ipv6_moves_data_on_a_clean_channel() {
    for ipv6 in [false, true] {
        let run = tcp_bulk(
            DdConfig::id1(),
            ipv6,
            &linux_tcp(None),
            Duration::from_secs(20),
            7,
        )
        .unwrap();
        assert!(!run.timed_out);
        // At least a quarter of the air rate's octets arrive (slow start).
        assert!(run.received > 20 * 4_000, "{ipv6}: {}", run.received);
    }
}

#[test]
fn dtn_over_norm_delivers_the_bundle_and_its_report_back() {
    for rate in [84e3, 128e3] {
        let run = dtn_norm_transfer(
            DdConfig::id1(),
            rate,
            vec![3; 600_000],
            Duration::from_secs(600),
            11,
        )
        .unwrap();
        let t = run.completed.expect("completed");
        // No faster than the configured rate allows.
        assert!(t.as_secs_f64() > 600_000.0 * 8.0 / rate, "{t:?}");
        assert_eq!(run.radio[0].overrun_drops > 0, rate > 100e3, "{run:?}");
    }
}

#[test]
fn short_sections_have_notes_and_tables() {
    let opts = RunOptions {
        quick: true,
        ..RunOptions::default()
    };
    // The paper's sections on a small file and short runs (the full ones
    // take seconds in release, minutes here).
    let one = Table1Config {
        iperf_seconds: 30,
        file_octets: 100_000,
        quick_runs: 1,
        ..Table1Config::paper()
    };
    let two = Table2Config {
        iperf_seconds: 30,
        file_octets: 100_000,
        horizon_s: 300,
        quick_runs: 1,
        ..Table2Config::paper()
    };
    for section in [
        table_1_with(&one, &opts, &NoProgress).unwrap(),
        table_2_with(&two, &opts, &NoProgress).unwrap(),
    ] {
        assert_eq!(section.tables[0].rows.len(), 5);
        assert!(!section.checks.is_empty());
        assert!(
            section.checks.iter().all(|c| !c.note.is_empty()),
            "{section:?}"
        );
    }
}
