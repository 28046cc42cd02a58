//! The `linklab model` command forms are a contract other tools rely on.

use std::process::{Command, Stdio};

use serde_json::Value;

fn linklab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_linklab"))
        .args(args)
        .output()
        .expect("linklab runs")
}

fn json(args: &[&str]) -> Vec<Value> {
    let out = linklab(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout)
        .expect("JSON on stdout")
        .as_array()
        .expect("a JSON array")
        .clone()
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<_> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort();
    k
}

#[test]
fn ronan_json_is_table_ii_by_default() {
    let rows = json(&[
        "model",
        "ronan",
        "--bitrate",
        "1200",
        "--n1",
        "255",
        "--json",
    ]);
    assert_eq!(rows.len(), 7);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(keys(row), ["frames", "transfer_s", "window", "windows"]);
        assert_eq!(row["window"], i as u64 + 1);
        assert_eq!(row["frames"], 29);
    }
    assert_eq!(rows[0]["windows"], 29);
    assert_eq!(rows[6]["windows"], 5);
    let t1 = rows[0]["transfer_s"].as_f64().unwrap();
    assert!((t1 - 68.0).abs() < 0.15, "Table II, window 1: {t1}");
}

#[test]
fn ronan_options_change_the_answer() {
    let rows = json(&[
        "model",
        "ronan",
        "--bitrate",
        "9600",
        "--size",
        "1000",
        "--n1",
        "100",
        "--txdelay-ms",
        "100",
        "--txtail-ms",
        "10",
        "--slot-ms",
        "10",
        "--persist",
        "127",
        "--window",
        "2",
        "--json",
    ]);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["frames"], 10);
    assert_eq!(rows[0]["windows"], 5);
    // 10 frames of 63/62 (800+160)/9600 s + 5 windows of (0.1+0.01+0.005) + T_ack
    let t_frame = 63.0 / 62.0 * 960.0 / 9600.0;
    let t_ack = 0.1 + 63.0 / 62.0 * 160.0 / 9600.0 + 0.01 + 0.005;
    let expected = 10.0 * t_frame + 5.0 * (0.115 + t_ack);
    assert!((rows[0]["transfer_s"].as_f64().unwrap() - expected).abs() < 1e-9);
}

#[test]
fn zielinski_json_contract() {
    let rows = json(&[
        "model",
        "zielinski",
        "--bitrate",
        "9600",
        "--n1",
        "256",
        "--window",
        "1..7",
        "--slot-ms",
        "10",
        "--persist",
        "63",
        "--txdelay-ms",
        "300",
        "--t2-ms",
        "0",
        "--json",
    ]);
    assert_eq!(rows.len(), 7);
    for row in &rows {
        assert_eq!(keys(row), ["cycle_s", "throughput_bps", "window"]);
    }
    // Eq. 2 for k = 7: T_CS 20 ms + 600 ms + 7 T_I + T_RR.
    let t_i = 63.0 / 62.0 * (160.0 + 2048.0) / 9600.0;
    let cycle = 0.02 + 0.6 + 7.0 * t_i + 63.0 / 62.0 * 160.0 / 9600.0;
    assert!((rows[6]["cycle_s"].as_f64().unwrap() - cycle).abs() < 1e-9);
    assert!((rows[6]["throughput_bps"].as_f64().unwrap() - 7.0 * 2048.0 / cycle).abs() < 1e-6);
}

#[test]
fn zielinski_full_duplex_and_serial_overhead() {
    let full = json(&[
        "model",
        "zielinski",
        "--full-duplex",
        "--window",
        "1,7",
        "--json",
    ]);
    assert_eq!(full[0]["throughput_bps"], full[1]["throughput_bps"]);
    let tnc = json(&[
        "model",
        "zielinski",
        "--serial-bps",
        "19200",
        "--size",
        "8192",
        "--window",
        "7",
        "--json",
    ]);
    assert!(tnc[0]["transfer_s"].as_f64().unwrap() > 0.0);
    let bare = json(&[
        "model",
        "zielinski",
        "--size",
        "8192",
        "--window",
        "7",
        "--json",
    ]);
    let extra = tnc[0]["transfer_s"].as_f64().unwrap() - bare[0]["transfer_s"].as_f64().unwrap();
    assert!((extra - 2.0 * 10.0 * 256.0 / 19200.0).abs() < 1e-9);
}

#[test]
fn tables_without_json_are_aligned() {
    let out = linklab(&["model", "ronan", "--window", "1..2"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<_> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with("window"));
    assert!(lines.iter().all(|l| l.len() == lines[0].len()), "{text}");
}

#[test]
fn user_errors_are_explained() {
    let out = linklab(&["model", "ronan", "--window", "9..3"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("runs backwards"));
    let out = linklab(&["model", "zielinski", "--bitrate", "0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--bitrate must be positive"));
    let out = linklab(&["model", "zielinski", "--serial-bps", "9600"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--size"));
}

#[test]
fn a_closed_stdout_ends_model_quietly() {
    for args in [["model", "ronan"], ["model", "zielinski"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_linklab"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("linklab runs");
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
