//! Emulate equals simulate, one window of it: Ronan et al.'s Table I
//! transfer (9600 bit/s, window 7, 7182 octets) with `linklab send` and
//! `linklab listen` over `linklab channel` must take the same time as the
//! simulator's run of the same replication, within 2 %. About 10 s of
//! real time. `bench/emulate_ronan.py` does the work (and runs every
//! window and rate by hand; see docs/performance.md).
//!
//! The plan (the replication's seed, slot phases, simulated time, and the
//! mean over replications) is computed here with the very library calls
//! the example `ronan_emulation_plan` makes, and handed to the script with
//! `--plan`: the test builds nothing beyond the `linklab` binary under
//! test, starts no nested `cargo`, and cannot pick up a stale example
//! binary from an older build.
//!
//! Needs python3 (standard library only). Without it the test says so and
//! passes, except under CI (`CI` set), where it fails.

use std::num::NonZeroUsize;
use std::process::Command;

use linklab_core::Streams;
use linklab_scenario::report::RunOptions;
use linklab_scenario::transfer::{replication_stations, run_transfer, TransferConfig};

const RATE: u32 = 9600;
const WINDOW: u8 = 7;
const REPLICATIONS: u64 = 20;

/// The plan of replication 0, as the example `ronan_emulation_plan` prints
/// it (only the fields the script reads, and a few for the record).
fn plan() -> serde_json::Value {
    let config = TransferConfig::ronan_table_1(RATE, WINDOW);
    let master_seed = RunOptions::default().seed;
    let streams = Streams::new(master_seed).replication(0);
    let stations = replication_stations(&config, &streams);
    let outcome = run_transfer(&config, &streams).expect("the simulated transfer completes");
    let threads = std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
    let all = linklab_scenario::compare(&config, REPLICATIONS, master_seed, threads)
        .expect("the replications complete");
    let ms = |d: core::time::Duration| d.as_secs_f64() * 1e3;
    let station = config.station;
    serde_json::json!({
        "master_seed": master_seed,
        "replication": 0,
        "seed": streams.master_seed(),
        "slot_phase_us": stations.map(|s| s.slot_phase.as_micros() as u64),
        "simulated_s": outcome.transfer.as_secs_f64(),
        "simulated_us": outcome.transfer.as_micros() as u64,
        "replications": REPLICATIONS,
        "mean_s": all.simulated.mean,
        "ci95_s": all.simulated.half_width,
        "station": {
            "bit_rate": config.bit_rate,
            "txdelay_ms": ms(station.txdelay),
            "slot_ms": ms(station.slot_time),
            "txtail_ms": ms(station.txtail),
            "persistence": station.persistence,
            "n1": config.n1,
            "window": config.window,
            "message_octets": config.message_octets,
        },
    })
}

fn python_available() -> bool {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "the emulate-equals-simulate test must run under CI: no python3"
        );
        eprintln!("skipping the emulate-equals-simulate test: no python3");
    }
    ok
}

#[test]
fn emulated_transfer_takes_the_same_seed_simulated_time_within_two_percent() {
    if !python_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let plan_path = dir.path().join("plan.json");
    let rows_path = dir.path().join("rows.json");
    std::fs::write(&plan_path, plan().to_string()).unwrap();
    let script = format!("{}/bench/emulate_ronan.py", env!("CARGO_MANIFEST_DIR"));
    let run = Command::new("python3")
        .arg(script)
        .args([
            "--rates",
            &RATE.to_string(),
            "--windows",
            &WINDOW.to_string(),
        ])
        .args(["--linklab", env!("CARGO_BIN_EXE_linklab")])
        .arg("--plan")
        .arg(&plan_path)
        .arg("--keep")
        .arg(dir.path())
        .arg("--json")
        .arg(&rows_path)
        .output()
        .expect("python3 runs");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(run.status.success(), "{report}");
    let rows: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&rows_path).unwrap()).unwrap();
    let row = &rows[0];
    assert_eq!(row["intact"], true, "{report}");
    assert_eq!(row["retransmissions"], 0, "{report}");
    let ratio = row["ratio_sim"].as_f64().unwrap();
    assert!(
        (ratio - 1.0).abs() <= 0.02,
        "emulated/simulated {ratio}:\n{report}"
    );
    assert_eq!(row["pass"], true, "{report}");
}
