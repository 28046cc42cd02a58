//! What the interop tests share: finding the real peers, and running an
//! `interop/*.sh` script against the linklab binary under test.

// Each test crate that includes this module uses a different part of it.
#![allow(dead_code)]

use std::process::Command;

/// Whether `tools` are installed and this runs as root (the scripts make
/// network namespaces with `unshare -n`). Without them the test says so and
/// passes, except under CI (`CI` set), where it fails: CI must run it.
pub fn peers_available(test: &str, tools: &[&str], install: &str) -> bool {
    let missing: Vec<_> = tools.iter().filter(|t| !have(t)).collect();
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    if missing.is_empty() && root {
        return true;
    }
    let why = format!("missing {missing:?}, root: {root}");
    assert!(
        std::env::var_os("CI").is_none(),
        "the {test} interop test must run under CI: {why}"
    );
    eprintln!("skipping the {test} interop test ({why}; apt-get install {install})");
    false
}

/// Whether the programs `tools` are installed (for tests that need no
/// root). Without them the test says so and passes, except under CI
/// (`CI` set), where it fails: CI must run it.
pub fn programs_available(test: &str, tools: &[&str], install: &str) -> bool {
    let missing: Vec<_> = tools.iter().filter(|t| !have(t)).collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "the {test} interop test must run under CI: missing {missing:?}"
    );
    eprintln!("skipping the {test} interop test (missing {missing:?}; apt-get install {install})");
    false
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs `interop/SCRIPT -l LINKLAB -o TMPDIR`, asserts it succeeded and
/// that each of `runs` printed a PASS line, and returns its report.
pub fn run_script(script: &str, runs: &[&str]) -> String {
    run_script_with(script, &[], runs)
}

/// [`run_script`] with further arguments `args`.
pub fn run_script_with(script: &str, args: &[&str], runs: &[&str]) -> String {
    let out = tempfile::tempdir().unwrap();
    let path = format!("{}/interop/{script}", env!("CARGO_MANIFEST_DIR"));
    let run = Command::new("bash")
        .arg(path)
        .args(args)
        .args(["-l", env!("CARGO_BIN_EXE_linklab"), "-o"])
        .arg(out.path())
        .output()
        .expect("bash runs");
    let report = String::from_utf8_lossy(&run.stdout).into_owned();
    let passed = |name: &&str| {
        report
            .lines()
            .any(|l| l.starts_with(name) && l.contains(" PASS "))
    };
    if !run.status.success() || !runs.iter().all(passed) {
        // The logs stay for whoever looks into it.
        let kept = out.keep();
        panic!(
            "{script} {args:?} failed (logs in {}):\n{report}{}",
            kept.display(),
            String::from_utf8_lossy(&run.stderr)
        );
    }
    report
}
