//! Running tshark on a pcap the test wrote.
//!
//! tshark is not a build dependency: without it a test says so and passes,
//! except under CI (`CI` set), where a missing tshark is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether tshark can be run. Without it, prints that the `oracle` tshark
/// oracle (e.g. "AX.25") is skipped and returns false; under CI (`CI` set)
/// a missing tshark is a failure instead.
pub fn available(oracle: &str) -> bool {
    let found = Command::new("tshark").arg("--version").output().is_ok();
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "tshark is required under CI (apt-get install tshark)"
        );
        eprintln!(
            "tshark not installed: skipping the {oracle} tshark oracle (apt-get install tshark)"
        );
    }
    found
}

/// A fresh directory for the pcaps of the `name` oracle, under the system's
/// temporary directory and unique to this process. The test removes it when
/// it passes; a failing test leaves it for a look with Wireshark.
pub fn pcap_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("linklab-{name}-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `tshark -n -r PCAP ARGS...`: its standard output, which must be UTF-8;
/// panics with its standard error if it fails.
pub fn run(pcap: &Path, args: &[&str]) -> String {
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(pcap)
        .args(args)
        .output()
        .expect("tshark runs");
    assert!(
        out.status.success(),
        "tshark {args:?} on {}: {}",
        pcap.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 from tshark")
}

/// The values of `fields` in every packet of `pcap`, one row per packet
/// (`tshark -T fields`), after the options `args`; a field that occurs
/// several times in a packet has its values joined by commas, one absent
/// is empty.
pub fn fields(pcap: &Path, args: &[&str], fields: &[&str]) -> Vec<Vec<String>> {
    let mut all = args.to_vec();
    all.extend(["-T", "fields", "-E", "separator=|"]);
    for field in fields {
        all.extend(["-e", field]);
    }
    run(pcap, &all)
        .lines()
        .map(|line| line.split('|').map(str::to_owned).collect())
        .collect()
}
