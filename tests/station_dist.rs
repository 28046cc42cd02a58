//! What `dist/` ships and docs/station.md shows: the systemd unit passes
//! `systemd-analyze verify` (skipped, saying so, where systemd-analyze is
//! missing), the example configuration and the converted kernel-era
//! station in the guide pass `linklab station --check`. Every run is
//! bounded in time (`cli::finish`, [`verify`]).

mod cli;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `linklab station --check PATH` with `path_dirs` before `PATH`.
fn check(path: &Path, path_dirs: &[&Path]) -> (Option<i32>, String, String) {
    let mut dirs: Vec<PathBuf> = path_dirs.iter().map(|d| d.to_path_buf()).collect();
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let mut command = Command::new(env!("CARGO_BIN_EXE_linklab"));
    command
        .args(["station", "--check", path.to_str().unwrap()])
        .env("PATH", std::env::join_paths(dirs).unwrap());
    bounded(&mut command, "linklab station --check")
}

/// Runs `command` to its end, at most a minute, its output in files (no
/// pipe to fill): exit code, stdout, stderr.
fn bounded(command: &mut Command, what: &str) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let mut child = command
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let end = Instant::now() + cli::LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > end {
            child.kill().ok();
            child.wait().ok();
            panic!("{what} still running after {:?}; killed", cli::LIMIT);
        }
        thread::sleep(Duration::from_millis(20));
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    (status.code(), read(&out), read(&err))
}

#[test]
fn example_configuration_checks() {
    let path = root().join("dist/station.toml");
    let (code, stdout, stderr) = check(&path, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stdout,
        format!(
            "{}: good: 1 port, 2 services, 1 beacon, 0 TUN devices\n",
            path.display()
        )
    );
}

/// The converted station in docs/station.md, between its markers, passes
/// the check; its BBS program `bbs` is looked up in PATH, so the test
/// puts one there.
#[test]
fn converted_kernel_station_in_the_guide_checks() {
    let guide = std::fs::read_to_string(root().join("docs/station.md")).unwrap();
    let begin = "<!-- converted station.toml begins -->\n```toml\n";
    let end = "```\n<!-- converted station.toml ends -->";
    let from = guide.find(begin).expect("the begin marker") + begin.len();
    let to = from + guide[from..].find(end).expect("the end marker");
    let toml = &guide[from..to];
    assert!(toml.contains("[[port]]") && toml.contains("[[beacon]]"));

    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let bbs = bin.join("bbs");
    std::fs::write(&bbs, "#!/bin/sh\nexec cat\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&bbs, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.path().join("station.toml");
    std::fs::write(&path, toml).unwrap();
    let (code, stdout, stderr) = check(&path, &[&bin]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stdout,
        format!(
            "{}: good: 2 ports, 3 services, 1 beacon, 0 TUN devices\n",
            path.display()
        )
    );
    // Without a `bbs` in PATH the check says so.
    let (code, _, stderr) = check(&path, &[]);
    if std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .all(|d| !d.join("bbs").exists())
    {
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains("service[1].program"), "{stderr}");
    }
}

/// The unit has what the station needs and nothing it should not have.
#[test]
fn unit_directives() {
    let unit = std::fs::read_to_string(root().join("dist/linklab-station.service")).unwrap();
    let active: Vec<&str> = unit
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    for line in [
        "Type=notify",
        "NotifyAccess=main",
        "WatchdogSec=30",
        "ExecStart=/usr/bin/linklab station --config /etc/linklab/station.toml",
        "ExecReload=/bin/kill -HUP $MAINPID",
        "Restart=on-failure",
        "User=linklab",
        "Group=linklab",
        "SupplementaryGroups=dialout",
        "RuntimeDirectory=linklab",
        "StateDirectory=linklab",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "ProtectHome=yes",
        "PrivateTmp=yes",
        "CapabilityBoundingSet=",
    ] {
        assert!(active.contains(&line), "no {line:?} in the unit");
    }
    // CAP_NET_ADMIN only in the commented drop-in.
    assert!(active.iter().all(|l| !l.contains("CAP_NET_ADMIN")));
    assert!(unit.contains("#   AmbientCapabilities=CAP_NET_ADMIN"));
    assert!(unit.contains("#   CapabilityBoundingSet=CAP_NET_ADMIN"));
}

/// Whether `systemd-analyze` can be run here.
fn systemd_analyze() -> bool {
    Command::new("systemd-analyze")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `systemd-analyze verify` on the unit, its ExecStart pointed at the
/// binary under test (verify refuses a unit whose program is missing).
#[test]
fn unit_verifies() {
    if !systemd_analyze() {
        eprintln!("SKIPPED unit_verifies: systemd-analyze is not installed (Debian: apt-get install systemd)");
        return;
    }
    let unit = std::fs::read_to_string(root().join("dist/linklab-station.service")).unwrap();
    let exec = "ExecStart=/usr/bin/linklab ";
    assert!(unit.contains(exec));
    let unit = unit.replace(
        exec,
        &format!("ExecStart={} ", env!("CARGO_BIN_EXE_linklab")),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("linklab-station.service");
    std::fs::write(&path, unit).unwrap();
    let (code, stdout, stderr) = bounded(
        Command::new("systemd-analyze")
            .args(["verify", "--man=no"])
            .arg(&path),
        "systemd-analyze verify",
    );
    let output = format!("{stdout}{stderr}");
    // Lines about the unit itself: `PATH:LINE: ...` or `NAME: ...`.
    let about_unit: Vec<&str> = output
        .lines()
        .filter(|l| l.contains("linklab-station.service"))
        .collect();
    assert!(about_unit.is_empty(), "verify: {about_unit:#?}");
    assert_eq!(code, Some(0), "verify: {output}");
}

/// A unit with mistakes is caught by the same test's method, so the one
/// above would see ours.
#[test]
fn verify_sees_a_bad_directive() {
    if !systemd_analyze() {
        eprintln!("SKIPPED verify_sees_a_bad_directive: systemd-analyze is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("linklab-station.service");
    std::fs::write(
        &path,
        format!(
            "[Service]\nType=notifyy\nWatchdogSecs=30\nExecStart={} station\n",
            env!("CARGO_BIN_EXE_linklab")
        ),
    )
    .unwrap();
    let (_, stdout, stderr) = bounded(
        Command::new("systemd-analyze")
            .args(["verify", "--man=no"])
            .arg(&path),
        "systemd-analyze verify",
    );
    let output = format!("{stdout}{stderr}");
    assert!(output.contains("linklab-station.service:2"), "{output}");
    assert!(output.contains("linklab-station.service:3"), "{output}");
}
