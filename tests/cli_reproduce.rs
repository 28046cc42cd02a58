//! `linklab reproduce` writes the report: summary.json in the shape the
//! issues give (the checks, and the time of the run and of each section), report.html with every check and the figures, the CSV and
//! SVG files; and its exit status says whether every check passed.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn reproduce(out: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_linklab"))
        .arg("reproduce")
        .args(extra)
        .arg("--out")
        .arg(out)
        .output()
        .expect("linklab runs")
}

fn summary(dir: &Path) -> Vec<Value> {
    let summary: Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let object = summary.as_object().unwrap();
    let keys: Vec<&String> = object.keys().collect();
    assert_eq!(keys, ["checks", "timing"], "{summary}");
    // The time of the run and of each section.
    let timing = &summary["timing"];
    assert!(timing["wall_s"].as_f64().unwrap() > 0.0, "{timing}");
    assert!(timing["cpu_s"].as_f64().unwrap() > 0.0, "{timing}");
    let case = &timing["standard_case"];
    assert!(case["frames"].as_u64().unwrap() > 0, "{case}");
    assert!(case["frames_per_s"].as_f64().unwrap() > 0.0, "{case}");
    for section in timing["sections"].as_array().unwrap() {
        assert!(
            section["paper"].is_string() && section["section"].is_string(),
            "{section}"
        );
        assert!(section["wall_s"].as_f64().unwrap() >= 0.0, "{section}");
        assert!(section["cpu_s"].as_f64().unwrap() >= 0.0, "{section}");
    }
    summary["checks"].as_array().unwrap().clone()
}

/// The check ids `crates/scenario/experiments/gaps.toml` declares known not to reproduce.
fn declared_gaps() -> Vec<&'static str> {
    linklab_scenario::builtin::GAPS
        .lines()
        .filter_map(|l| l.strip_prefix("check = \""))
        .filter_map(|l| l.strip_suffix('"'))
        .collect()
}

#[test]
fn quick_run_writes_the_whole_report_and_every_check_passes() {
    let dir = tempfile::tempdir().unwrap();
    let out = reproduce(dir.path(), &["--quick"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("Table II") && stdout.contains("Table III"));

    let checks = summary(dir.path());
    let fields = [
        "id",
        "paper",
        "what",
        "paper_value",
        "ours",
        "unit",
        "tolerance",
        "pass",
        "basis",
        "note",
    ];
    for c in &checks {
        let object = c.as_object().unwrap();
        assert_eq!(object.len(), fields.len(), "{c}");
        for key in fields {
            assert!(object.contains_key(key), "check lacks {key}: {c}");
        }
        assert!(
            [
                "zielinski2013",
                "ronan-ax25",
                "bux1982",
                "korb1987",
                "ronan-dstar"
            ]
            .contains(&c["paper"].as_str().unwrap()),
            "{c}"
        );
        assert!(c["tolerance"].is_null() || c["tolerance"].as_f64().unwrap() > 0.0);
        assert!(c["basis"] == "fit" || c["basis"] == "prediction", "{c}");
        assert!(!c["note"].as_str().unwrap().is_empty(), "no note: {c}");
        assert!(
            c["pass"] == true || declared_gaps().contains(&c["id"].as_str().unwrap()),
            "{c}"
        );
    }
    let ronan = checks.iter().filter(|c| c["paper"] == "ronan-ax25").count();
    assert!(ronan >= 14, "seven windows at two bit rates");
    assert!(checks.iter().any(|c| c["paper"] == "zielinski2013"));
    let last = stdout.lines().last().unwrap();
    let failing = checks.iter().filter(|c| c["pass"] == false).count();
    let declared = match failing {
        0 => String::new(),
        n => format!(", {n} fail as declared gaps"),
    };
    let of = |basis: &str| {
        let all: Vec<_> = checks.iter().filter(|c| c["basis"] == basis).collect();
        let pass = all.iter().filter(|c| c["pass"] == true).count();
        format!("{pass} of {}", all.len())
    };
    let expected = format!(
        "{} of {} checks pass (fits {}, predictions {}){declared}; report in {}",
        checks.len() - failing,
        checks.len(),
        of("fit"),
        of("prediction"),
        dir.path().join("report.html").display(),
    );
    assert_eq!(last, expected);
    // The calibrations the papers' reproductions declare are marked so.
    for fitted in [
        "ronan-ax25/tableV/window4",
        "korb1987/table3/2-circuits",
        "ronan-dstar/table-1/ipv4-tcp",
    ] {
        let c = checks.iter().find(|c| c["id"] == fitted).unwrap();
        assert_eq!(c["basis"], "fit", "{c}");
    }
    for predicted in [
        "ronan-ax25/tableV/ack_window32/window4",
        "bux1982/fig2/right-of-maximum",
    ] {
        let c = checks.iter().find(|c| c["id"] == predicted).unwrap();
        assert_eq!(c["basis"], "prediction", "{c}");
    }

    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<svg"), "figures are inline");
    // The parity figure at the top: every numeric check, fits apart.
    let parity = html.find("<figure id=\"parity\">").expect("parity figure");
    assert!(parity < html.find("<h2").unwrap(), "before the papers");
    assert!(html.contains("fit (") && html.contains("prediction ("));
    for c in &checks {
        assert!(html.contains(c["id"].as_str().unwrap()), "{c}");
    }

    let mut csvs = 0;
    let mut svgs = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        assert_one_naming_convention(&path);
        match path.extension().and_then(|e| e.to_str()) {
            Some("csv") => {
                csvs += 1;
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(text.lines().count() > 1, "{} is empty", path.display());
            }
            Some("svg") => {
                svgs += 1;
                // Every figure has its points beside it.
                assert!(path.with_extension("csv").exists(), "{}", path.display());
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(text.starts_with("<svg"), "{}", path.display());
            }
            _ => {}
        }
    }
    assert!(csvs > svgs, "tables too");
    // Figures the issue names, one per paper at least.
    for id in [
        "ronan-table-ii",
        "ronan-table-vii",
        "zielinski-fig5",
        "zielinski-fig7",
        "bux-fig2",
        "bux-fig7",
    ] {
        let figure = std::fs::read_to_string(dir.path().join(format!("{id}.csv"))).unwrap();
        assert!(figure.starts_with("series,x,y,half_width\n"), "{id}");
        assert!(dir.path().join(format!("{id}.svg")).exists(), "{id}");
    }
    assert!(svgs >= 20, "{svgs} figures");
    // Fig. 4 carries the paper's own value (section 3.1: about 1000 bit/s
    // at k = 7) as a series of its own, drawn as published values are.
    let fig4 = std::fs::read_to_string(dir.path().join("zielinski-fig4.csv")).unwrap();
    assert!(
        fig4.contains("\nthe paper (values quoted in its text),7,1000,\n"),
        "{fig4}"
    );
    // The declared gaps are shown apart from the failures, and a table of
    // contents leads to every paper.
    let gaps = checks.iter().filter(|c| c["pass"] == false).count();
    assert!(
        html.contains(&format!(
            "<span class=\"gap\">{gaps} are declared gaps</span>"
        )),
        "the verdict names {gaps} declared gaps"
    );
    assert_eq!(
        html.matches("<td class=\"result\">declared gap</td>")
            .count(),
        gaps
    );
    assert!(!html.contains("<td class=\"result\">fail"));
    let contents = html.find("<nav class=\"contents\"").expect("contents");
    for paper in [
        "zielinski2013",
        "ronan-ax25",
        "bux1982",
        "korb1987",
        "ronan-dstar",
    ] {
        assert!(
            html[contents..].contains(&format!("<a href=\"#{paper}\">")),
            "{paper}"
        );
    }
}

/// Every file of the report is named one way (there was `bux-fig2`
/// beside `korb_table_1`): lowercase words and numbers joined by hyphens,
/// and its extension.
fn assert_one_naming_convention(path: &Path) {
    let stem = path.file_stem().unwrap().to_str().unwrap();
    let kebab = stem.split('-').all(|w| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    });
    assert!(
        kebab,
        "{} is not named in lowercase-hyphen form",
        path.display()
    );
}

#[test]
fn reproduce_one_paper() {
    let dir = tempfile::tempdir().unwrap();
    let out = reproduce(dir.path(), &["--quick", "--paper", "zielinski2013"]);
    assert!(out.status.success());
    let checks = summary(dir.path());
    assert!(!checks.is_empty());
    assert!(checks.iter().all(|c| c["paper"] == "zielinski2013"));
}

#[test]
fn an_unknown_paper_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = reproduce(dir.path(), &["--paper", "shannon1948"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("ronan-ax25"), "{stderr}");
}
