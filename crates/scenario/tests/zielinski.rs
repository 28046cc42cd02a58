//! Zieliński 2013 reproduction: profiles, the firmware TNC's emergent
//! real window size, and quick checks against the paper's figures.

use core::time::Duration;

use linklab_channel::profile::{profile, profile_names};
use linklab_channel::ErrorModel;
use linklab_core::Streams;
use linklab_scenario::builtin::{
    ZIELINSKI_FIGS_10_13 as FIGS_10_13_TOML, ZIELINSKI_FIGS_14_15 as FIGS_14_15_TOML,
    ZIELINSKI_FIGS_4_6 as FIGS_4_6_TOML, ZIELINSKI_FIGS_7_9 as FIGS_7_9_TOML,
};
use linklab_scenario::report::{NoProgress, RunOptions};
use linklab_scenario::zielinski::experiment::{parse, ThroughputExperiment};
use linklab_scenario::zielinski::published::{check, row};
use linklab_scenario::zielinski::station::LinkSetup;
use linklab_scenario::zielinski::testbed::{run_transfer, station_config, TransferSetup};
use linklab_scenario::zielinski::{theory, RealWindowExperiment};

fn transfer(sender: &str, recipient: &str, radio_bps: u32, serial_bps: u32, k: u8) -> (f64, f64) {
    let setup = TransferSetup {
        sender: profile(sender).unwrap(),
        recipient: profile(recipient).unwrap(),
        radio_bps,
        link: LinkSetup {
            window: k,
            n1: 256,
            serial_bps,
            t1: Duration::from_secs(10),
        },
        file_octets: 8192,
        station: station_config(),
        errors: ErrorModel::Perfect,
    };
    let r = run_transfer(&setup, &Streams::new(7).replication(0)).unwrap();
    let mean_window = f64::from(r.real_windows.iter().sum::<u32>()) / r.real_windows.len() as f64;
    (r.throughput_bps, mean_window)
}

#[test]
fn every_profile_in_the_experiment_files_exists_and_the_files_parse() {
    let names = profile_names();
    for text in [FIGS_4_6_TOML, FIGS_10_13_TOML] {
        let exp: ThroughputExperiment = parse(text).unwrap();
        for pair in exp.figures.iter().flat_map(|f| &f.pairs) {
            assert!(names.contains(&pair.sender), "{}", pair.sender);
            assert!(names.contains(&pair.recipient), "{}", pair.recipient);
        }
    }
    for text in [FIGS_7_9_TOML, FIGS_14_15_TOML] {
        let exp: RealWindowExperiment = parse(text).unwrap();
        assert_eq!(exp.window, 7);
        assert!(exp.figures.iter().all(|f| !f.cases.is_empty()));
    }
}

#[test]
fn bad_experiment_files_get_precise_errors() {
    let typo = FIGS_4_6_TOML.replace("n1_octets", "n1");
    let err = parse::<ThroughputExperiment>(&typo)
        .unwrap_err()
        .to_string();
    assert!(err.contains("n1"), "{err}");
    let unknown = FIGS_4_6_TOML.replacen("tnc2-mfj", "tnc99", 1);
    let err = parse::<ThroughputExperiment>(&unknown)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("line 22, column 36: figures[0].pairs[0].sender: ") && err.contains("tnc99"),
        "{err}"
    );
    let err =
        parse::<ThroughputExperiment>(&FIGS_4_6_TOML.replace("windows = [1,", "windows = [0,"))
            .unwrap_err()
            .to_string();
    assert!(
        err.contains("line 11, column 11: windows: 0 is out of range 1-7"),
        "{err}"
    );
    let err = parse::<RealWindowExperiment>(&FIGS_7_9_TOML.replacen(
        "n1_octets = 64",
        "n1_octets = 300",
        1,
    ))
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(
            "line 17, column 121: figures[0].cases[1].n1_octets: 300 is out of range 1-256"
        ),
        "{err}"
    );
    let err = parse::<RealWindowExperiment>(&FIGS_7_9_TOML.replace("window = 7", "window = 8"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("line 6, column 10: window: 8 is out of range 1-7"),
        "{err}"
    );
    // A valid file of the other kind is refused with both kinds named.
    let err = parse::<ThroughputExperiment>(FIGS_7_9_TOML)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("zielinski-real-window") && err.contains("zielinski-throughput"),
        "{err}"
    );
}

#[test]
fn a_z80_tnc_cannot_fill_a_window_of_seven_a_fast_one_can() {
    let (_, z80) = transfer("tnc2d-mfj", "tnc2d-mfj", 1200, 19200, 7);
    // 32 frames at k = 7 are 7 + 7 + 7 + 7 + 4: a full-window sender
    // averages 6.4 frames per transmission.
    let (_, fast) = transfer("tnc7", "tnc7", 9600, 115200, 7);
    assert!(z80 <= 4.5, "Z80 real window {z80}");
    assert!(fast >= 6.4, "TNC7 real window {fast}");
}

#[test]
fn faster_controllers_are_faster_at_38_4_kbit_s() {
    let thr: Vec<f64> = [
        ("spirit2-std-spirit", 57600),
        ("tnc3", 115200),
        ("tnc7", 115200),
        ("dlc7", 115200),
    ]
    .iter()
    .map(|&(p, serial)| transfer(p, p, 38400, serial, 7).0)
    .collect();
    assert!(thr.windows(2).all(|w| w[0] < w[1]), "{thr:?}");
}

#[test]
fn the_model_checks_pass() {
    let checks = theory().unwrap();
    assert_eq!(checks.len(), 2);
    assert!(checks.iter().all(|c| c.pass), "{checks:#?}");
    assert!(checks
        .iter()
        .any(|c| c.id == "zielinski2013/theory/9.6kbps/k7"));
}

#[test]
fn quick_runs_reproduce_the_fast_controllers_at_38_4_kbit_s() {
    let mut exp: ThroughputExperiment = parse(FIGS_4_6_TOML).unwrap();
    exp.windows = vec![7];
    exp.figures.retain(|f| f.id == "fig6");
    exp.figures[0]
        .pairs
        .retain(|p| p.label == "TNC3" || p.label == "DLC7");
    let opts = RunOptions {
        quick: true,
        ..RunOptions::default()
    };
    let results = exp.simulate(&opts, &NoProgress).unwrap();
    for (label, what) in [("TNC3", "TNC3 measured"), ("DLC7", "DLC7 measured")] {
        let ours = results[0].curve(label).unwrap()[0].throughput.mean;
        let c = check(
            format!("test/{label}"),
            &row(38.4, what).unwrap(),
            String::new(),
            ours,
        );
        assert!(c.pass, "{label}: {ours} against {}", c.paper_value);
    }
    let out = exp.output(&results);
    assert_eq!(
        out.figures[0].series.len(),
        4,
        "two model curves and two pairs"
    );
}

#[test]
fn the_calibration_table_names_what_each_firmware_was_fitted_to() {
    let table = linklab_scenario::zielinski::reproduce::calibration_table();
    let fitted = table.columns.iter().position(|c| c == "fitted to").unwrap();
    assert_eq!(table.rows.len(), 10, "one row per firmware");
    for row in &table.rows {
        assert_eq!(row.len(), table.columns.len());
        assert!(row[fitted].contains("Fig"), "{row:?}");
    }
}

#[test]
fn the_theory_checks_say_how_t103_was_chosen() {
    for c in theory().unwrap() {
        assert!(
            c.note.contains("400 ms") && c.note.contains("300 ms"),
            "{}",
            c.note
        );
    }
}
