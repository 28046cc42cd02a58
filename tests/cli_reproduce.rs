//! `linklab reproduce` writes summary.json in the shape the report tools read.

use std::process::Command;

use serde_json::Value;

#[test]
fn reproduce_writes_passing_checks_for_every_published_model_value() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_linklab"))
        .args(["reproduce", "--out"])
        .arg(dir.path())
        .output()
        .expect("linklab runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("Table II") && stdout.contains("Table III"));

    let summary: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    let checks = summary["checks"].as_array().unwrap();
    let ronan: Vec<_> = checks
        .iter()
        .filter(|c| c["paper"] == "ronan-ax25")
        .collect();
    assert_eq!(ronan.len(), 14, "seven windows at two bit rates");
    for c in checks {
        for key in [
            "id",
            "paper",
            "what",
            "paper_value",
            "ours",
            "unit",
            "tolerance",
            "pass",
        ] {
            assert!(c.get(key).is_some(), "check lacks {key}: {c}");
        }
        assert_eq!(c["pass"], true, "{c}");
    }
    assert!(checks.iter().any(|c| c["paper"] == "zielinski2013"));
    for csv in ["ronan_tables.csv", "zielinski_model.csv"] {
        let text = std::fs::read_to_string(dir.path().join(csv)).unwrap();
        assert!(text.lines().count() > 7, "{csv} is short");
    }
}

#[test]
fn reproduce_one_paper() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_linklab"))
        .args(["reproduce", "--paper", "zielinski2013", "--out"])
        .arg(dir.path())
        .output()
        .expect("linklab runs");
    assert!(out.status.success());
    let summary: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    let checks = summary["checks"].as_array().unwrap();
    assert!(!checks.is_empty());
    assert!(checks.iter().all(|c| c["paper"] == "zielinski2013"));
}
