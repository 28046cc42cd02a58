//! `--shard I/N` and `linklab merge`: the parts of a run put together are
//! the whole run, byte for byte, whatever the number of parts and the
//! order they are given in; parts missing, given twice or of another run
//! are refused with a message naming the part.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn linklab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_linklab"))
        .args(args)
        .output()
        .expect("linklab runs")
}

fn ok(args: &[&str]) -> String {
    let out = linklab(args);
    assert!(
        out.status.success(),
        "linklab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The error message of a run that must fail.
fn refused(args: &[&str]) -> String {
    let out = linklab(args);
    assert!(!out.status.success(), "linklab {args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn experiment(name: &str) -> String {
    format!(
        "{}/crates/scenario/experiments/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}

/// Every file of `a` is in `b` with the same bytes, and no other.
fn same_files(a: &Path, b: &Path, except: &[&str]) {
    let names = |d: &Path| {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| !except.iter().any(|x| p.ends_with(x)))
            .collect();
        v.sort();
        v.into_iter()
            .map(|p| p.file_name().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let files = names(a);
    assert_eq!(files, names(b));
    assert!(!files.is_empty());
    for f in files {
        assert!(
            std::fs::read(a.join(&f)).unwrap() == std::fs::read(b.join(&f)).unwrap(),
            "{f:?} differs"
        );
    }
}

#[test]
fn sim_parts_merge_into_the_whole_run_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Bux: points shared between figures and found by walking them;
    // Zieliński: 133 set-ups; Ronan: one point per (bit rate, window).
    for (file, parts) in [
        ("bux-throughput-one-way.toml", 3),
        ("zielinski-figs-7-9.toml", 4),
        ("ronan-tables-2-3.toml", 5),
    ] {
        let file = experiment(file);
        let whole = path(d, "whole");
        ok(&["sim", &file, "--quick", "--seed", "7", "--out", &whole]);
        let mut dirs = Vec::new();
        for i in 0..parts {
            let part = path(d, &format!("part{i}"));
            let said = ok(&[
                "sim",
                &file,
                "--quick",
                "--seed",
                "7",
                "--shard",
                &format!("{i}/{parts}"),
                "--out",
                &part,
            ]);
            assert!(said.contains(&format!("part {i}/{parts}")), "{said}");
            dirs.push(part);
        }
        // In any order.
        dirs.reverse();
        let merged = path(d, "merged");
        let mut args = vec!["merge"];
        args.extend(dirs.iter().map(String::as_str));
        args.extend(["--out", &merged]);
        ok(&args);
        same_files(Path::new(&whole), Path::new(&merged), &[]);
        for p in dirs.iter().chain([&whole, &merged]) {
            std::fs::remove_dir_all(p).unwrap();
        }
    }
}

#[test]
fn a_one_point_kind_is_one_part_and_the_others_are_empty() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = experiment("korb-table-1.toml");
    let zero = ok(&[
        "sim",
        &file,
        "--quick",
        "--shard",
        "0/2",
        "--out",
        &path(d, "a"),
    ]);
    assert!(zero.contains("1 of 1 points"), "{zero}");
    let one = ok(&[
        "sim",
        &file,
        "--quick",
        "--shard",
        "1/2",
        "--out",
        &path(d, "b"),
    ]);
    assert!(one.contains("0 of 1 points"), "{one}");
    ok(&[
        "merge",
        &path(d, "a"),
        &path(d, "b"),
        "--out",
        &path(d, "m"),
    ]);
    ok(&["sim", &file, "--quick", "--out", &path(d, "w")]);
    same_files(&d.join("w"), &d.join("m"), &[]);
}

#[test]
fn parts_missing_twice_or_of_another_run_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ronan = experiment("ronan-tables-2-3.toml");
    let part = |name: &str, file: &str, shard: &str, extra: &[&str]| {
        let out = path(d, name);
        let mut args = vec!["sim", file, "--quick", "--shard", shard, "--out", &out];
        args.extend(extra);
        ok(&args);
        out
    };
    let p0 = part("p0", &ronan, "0/3", &[]);
    let p1 = part("p1", &ronan, "1/3", &[]);
    let p2 = part("p2", &ronan, "2/3", &[]);
    let out = path(d, "out");

    let err = refused(&["merge", &p0, &p2, "--out", &out]);
    assert!(err.contains("part 1/3") && err.contains("missing"), "{err}");
    let err = refused(&["merge", &p0, &p1, &p1, &p2, "--out", &out]);
    assert!(err.contains("both part 1/3") && err.contains("p1"), "{err}");

    let seed = part("seed", &ronan, "1/3", &["--seed", "5"]);
    let err = refused(&["merge", &p0, &seed, &p2, "--out", &out]);
    assert!(err.contains("seed") && err.contains("seed 5"), "{err}");
    let full = {
        // A full part of a lighter variant would still be another file;
        // a full part of the same file is another run.
        let out = path(d, "full");
        ok(&["sim", &ronan, "--shard", "1/3", "--out", &out]);
        out
    };
    let err = refused(&["merge", &p0, &full, &p2, "--out", &out]);
    assert!(err.contains("full") && err.contains("full run"), "{err}");
    let cut = part("cut", &ronan, "1/4", &[]);
    let err = refused(&["merge", &p0, &cut, &p2, "--out", &out]);
    assert!(err.contains("cut") && err.contains("4 parts"), "{err}");

    let edited = d.join("edited.toml");
    let text = std::fs::read_to_string(&ronan)
        .unwrap()
        .replace("replications = 20", "replications = 19");
    std::fs::write(&edited, text).unwrap();
    let other = part("other", edited.to_str().unwrap(), "1/3", &[]);
    let err = refused(&["merge", &p0, &other, &p2, "--out", &out]);
    assert!(err.contains("other") && err.contains("ran"), "{err}");

    let err = refused(&["merge", &p0, d.to_str().unwrap(), "--out", &out]);
    assert!(err.contains("not a part"), "{err}");
    std::fs::write(d.join("p1/part.cbor"), b"not cbor at all").unwrap();
    let err = refused(&["merge", &p0, &p1, &p2, "--out", &out]);
    assert!(
        err.contains("p1/part.cbor") && err.contains("not a linklab part"),
        "{err}"
    );
    assert!(
        !Path::new(&out).exists(),
        "nothing written for refused parts"
    );

    for bad in ["3/3", "1/0", "x/2", "2"] {
        let err = refused(&["sim", &ronan, "--shard", bad, "--out", &out]);
        assert!(err.contains(bad), "{err}");
    }
}

#[test]
fn reproduce_parts_merge_into_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let common = ["--quick", "--paper", "zielinski2013"];
    let whole = path(d, "whole");
    let mut args = vec!["reproduce", "--out", &whole];
    args.extend(common);
    ok(&args);
    let mut dirs = Vec::new();
    for i in 0..2 {
        let out = path(d, &format!("r{i}"));
        let shard = format!("{i}/2");
        let mut args = vec!["reproduce", "--shard", &shard, "--out", &out];
        args.extend(common);
        ok(&args);
        dirs.push(out);
    }
    let merged = path(d, "merged");
    let said = ok(&["merge", &dirs[1], &dirs[0], "--out", &merged]);
    assert!(said.contains("checks pass"), "{said}");
    // Everything but the times: each CSV and SVG, and the checks.
    same_files(
        Path::new(&whole),
        Path::new(&merged),
        &["summary.json", "report.html"],
    );
    let checks = |dir: &str| {
        let text = std::fs::read_to_string(Path::new(dir).join("summary.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["checks"].clone()
    };
    assert_eq!(checks(&whole), checks(&merged));
    assert!(checks(&whole).as_array().is_some_and(|c| !c.is_empty()));

    // A part of another paper's reproduction is another run.
    let ronan = path(d, "ronan");
    ok(&[
        "reproduce",
        "--quick",
        "--paper",
        "ronan-ax25",
        "--shard",
        "1/2",
        "--out",
        &ronan,
    ]);
    let err = refused(&["merge", &dirs[0], &ronan, "--out", &path(d, "x")]);
    assert!(err.contains("ronan-ax25"), "{err}");
}
