//! linklab against a real AX.25 peer: gensio's stack (`gensiot` and the
//! `greflector` KISS hub from Debian's gensio-bin), 20 KB each way, modulo 8
//! and 128, byte-exact, every captured frame decoded by linklab and tshark.
//! The script `interop/linklab-gensio.sh` does the work inside a network
//! namespace of its own (`unshare -n`, loopback only), bounded to 300 s.
//!
//! Needs root, gensio-bin, tshark and python3. Without them the test says
//! so and passes, except under CI (`CI` set), where it fails.

use std::process::Command;

fn peers_available() -> bool {
    let have = |tool: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let missing: Vec<_> = ["gensiot", "greflector", "tshark", "python3", "unshare"]
        .into_iter()
        .filter(|t| !have(t))
        .collect();
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
        "the gensio interop test must run under CI: {why}"
    );
    eprintln!("skipping the gensio interop test ({why}; apt-get install gensio-bin tshark)");
    false
}

#[test]
fn transfers_to_and_from_gensio_are_byte_exact() {
    if !peers_available() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/interop/linklab-gensio.sh");
    let run = Command::new("bash")
        .arg(script)
        .args(["-l", env!("CARGO_BIN_EXE_linklab"), "-o"])
        .arg(out.path())
        .output()
        .expect("bash runs");
    let report = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for name in [
        "mod8-to-gensio",
        "mod8-from-gensio",
        "mod128-to-gensio",
        "mod128-from-gensio",
    ] {
        assert!(
            report
                .lines()
                .any(|l| l.starts_with(name) && l.contains("PASS")),
            "{name} did not pass:\n{report}"
        );
    }
}
