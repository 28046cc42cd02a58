//! `linklab sim FILE.toml`: a scenario file runs into CSV, SVG and JSON
//! files; a faulty file gives one line naming the place and the field,
//! and exit status 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const RONAN: &str = include_str!("../crates/scenario/experiments/ronan-tables-2-3.toml");

fn sim(file: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_linklab"))
        .arg("sim")
        .arg(file)
        .args(extra)
        .output()
        .expect("linklab runs")
}

/// The shipped Ronan file with each `from` replaced by its `to`.
fn variant(replacements: &[(&str, &str)]) -> String {
    replacements
        .iter()
        .fold(RONAN.to_string(), |text, (from, to)| {
            assert!(text.contains(from), "{from}");
            text.replace(from, to)
        })
}

/// Writes `text` to `dir/name`.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_ronan_file_runs_into_csv_svg_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "scenario.toml",
        &variant(&[
            ("window = [1, 2, 3, 4, 5, 6, 7]", "window = 4"),
            ("replications = 20", "replications = 3"),
        ]),
    );
    let out_dir = dir.path().join("out");
    let out = sim(&file, &["--out", out_dir.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("simulated_s"), "{stdout}");

    let table = std::fs::read_to_string(out_dir.join("transfer-time.csv")).unwrap();
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), 3, "a header and one row per bit rate: {table}");
    assert!(rows[1].starts_with("1200,4,") && rows[2].starts_with("9600,4,"));
    for rate in [1200, 9600] {
        let figure = out_dir.join(format!("transfer-time-{rate}bps"));
        let csv = std::fs::read_to_string(figure.with_extension("csv")).unwrap();
        assert!(csv.starts_with("series,x,y,half_width\n"), "{csv}");
        let simulated = csv.lines().nth(1).unwrap();
        let half_width: f64 = simulated.rsplit(',').next().unwrap().parse().unwrap();
        assert!(half_width > 0.0, "simulated points carry a CI: {simulated}");
        let svg = std::fs::read_to_string(figure.with_extension("svg")).unwrap();
        assert!(svg.starts_with("<svg"));
    }
    let output: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("output.json")).unwrap()).unwrap();
    assert_eq!(output["tables"][0]["id"], "transfer-time");
    // output.json keeps numbers as numbers: the bit rate and window.
    let first = &output["tables"][0]["rows"][0];
    assert_eq!(first[0], 1200, "{first}");
    assert_eq!(first[1], 4, "{first}");
    assert!(
        first.as_array().unwrap()[2..].iter().any(Value::is_f64),
        "{first}"
    );
    assert_eq!(output["figures"].as_array().unwrap().len(), 2);
}

#[test]
fn the_default_out_dir_is_named_after_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "one-point.toml",
        &variant(&[
            ("bit_rate_bps = [1200, 9600]", "bit_rate_bps = 9600"),
            ("window = [1, 2, 3, 4, 5, 6, 7]", "window = 7"),
            ("replications = 20", "replications = 2"),
        ]),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_linklab"))
        .current_dir(dir.path())
        .args(["sim", "one-point.toml"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir
        .path()
        .join("linklab-sim/one-point/transfer-time.csv")
        .exists());
}

/// Runs `sim` on a faulty file and returns its one-line message.
fn refused(file: &Path) -> String {
    let out = sim(file, &["--out", "/nonexistent/never-written"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn faulty_files_are_refused_with_place_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            ("window = [1, 2, 3, 4, 5, 6, 7]", "window = 9"),
            "column 10: window: 9 is out of range 1-7 (AX.25 modulo 8)",
        ),
        (
            ("replications = 20", "replications = 0"),
            "column 16: replications: 0 is too few",
        ),
        (
            ("kind = \"ronan-transfer\"", "kind = \"ronan-tranfser\""),
            "column 8: unknown kind `ronan-tranfser`, expected one of `ronan-transfer`",
        ),
        (
            ("persistence = 63", "persistance = 63"),
            "column 1: unknown field `persistance`, expected one of",
        ),
        (
            ("slot_ms = 20", "slot_ms = \"20 ms\""),
            "column 11: invalid type: string \"20 ms\", expected f64",
        ),
        (
            ("n1_octets = 255", "n1_octets = 25 5"),
            "column 16: expected newline",
        ),
    ];
    for (i, (replacement, expected)) in cases.into_iter().enumerate() {
        let path = write(
            dir.path(),
            &format!("case{i}.toml"),
            &variant(&[replacement]),
        );
        let message = refused(&path);
        let line = RONAN[..RONAN.find(replacement.0).unwrap()].lines().count() + 1;
        let expected = format!(
            "linklab: error: {}: line {line}, {expected}",
            path.display()
        );
        assert!(
            message.starts_with(&expected),
            "got {message}expected {expected}"
        );
    }
}

#[test]
fn a_missing_file_is_refused() {
    let message = refused(Path::new("/nonexistent/scenario.toml"));
    assert!(
        message
            .starts_with("linklab: error: cannot read scenario file /nonexistent/scenario.toml: "),
        "{message}"
    );
}

#[test]
fn a_scenario_is_read_from_standard_input_for_dash() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let text = variant(&[
        ("bit_rate_bps = [1200, 9600]", "bit_rate_bps = 9600"),
        ("window = [1, 2, 3, 4, 5, 6, 7]", "window = 7"),
        ("replications = 20", "replications = 2"),
    ]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_linklab"))
        .current_dir(dir.path())
        .args(["sim", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir
        .path()
        .join("linklab-sim/experiment/output.json")
        .is_file());
}
