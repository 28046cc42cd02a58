//! What a newcomer meets: a user's file is never deleted, an
//! absurd value is an input error rather than an abort, an output path
//! that cannot work is refused before any work, and messages say what is
//! wrong in words.

mod cli;

use cli::{finish_within, linklab_in, text};

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long a command that must be refused at once may take.
const LIMIT: Duration = Duration::from_secs(120);

/// Runs `linklab ARGS` in `dir` with `stdin` as its input; its exit status
/// and standard error (a run still going at [`LIMIT`] is killed and fails
/// the test).
fn run(dir: &Path, args: &[&str], stdin: &[u8]) -> (Option<i32>, String) {
    let out = finish_within(linklab_in(dir, args, Some(stdin.to_vec())), args[0], LIMIT);
    (out.status.code(), text(&out.stderr))
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("linklab-newcomer-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn an_app_socket_path_holding_a_users_file_is_refused_and_the_file_kept() {
    let dir = temp_dir("app-socket");
    std::fs::write(dir.join("notes.txt"), "my notes\n").unwrap();
    let (status, stderr) = run(
        &dir,
        &[
            "dtn",
            "node",
            "--eid",
            "ipn:1.0",
            "--store",
            "store",
            "--tcpcl-listen",
            "127.0.0.1:0",
            "--app-socket",
            "notes.txt",
        ],
        b"",
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt"))
            .ok()
            .as_deref(),
        Some("my notes\n"),
        "the user's file is kept"
    );
    assert_eq!(status, Some(2), "{stderr}");
    assert!(
        stderr.contains("--app-socket notes.txt") && stderr.contains("not a socket"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_absurd_message_length_in_a_scenario_is_an_input_error_not_an_abort() {
    let dir = temp_dir("message-octets");
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scenario =
        std::fs::read_to_string(top.join("crates/scenario/experiments/ronan-tables-2-3.toml"))
            .unwrap();
    let absurd: String = scenario
        .lines()
        .map(|l| {
            if l.starts_with("message_octets") {
                "message_octets = 100000000000".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(absurd, scenario);
    let (status, stderr) = run(&dir, &["sim", "-", "--out", "out"], absurd.as_bytes());
    assert_eq!(status, Some(2), "{stderr}");
    assert!(
        stderr.contains("message_octets") && stderr.contains("16777216"),
        "{stderr}"
    );
    assert!(!stderr.contains("memory allocation"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn channel_stats_json_that_cannot_be_written_is_refused_before_the_channel_starts() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (status, stderr) = run(
        top,
        &[
            "channel",
            "--base-port",
            "0",
            "--bind",
            "127.0.0.1",
            "--stats-json",
            "/nonexistent/s.json",
        ],
        b"",
    );
    assert_eq!(status, Some(2), "{stderr}");
    assert!(
        stderr.contains("--stats-json /nonexistent/s.json"),
        "{stderr}"
    );
    assert!(!stderr.contains("channel ready"), "{stderr}");
}

#[test]
fn reproduce_out_that_cannot_be_made_is_refused_before_any_work() {
    let dir = temp_dir("reproduce-out");
    let (status, stderr) = run(
        &dir,
        &["reproduce", "--paper", "bux1982", "--out", "/proc/rep"],
        b"",
    );
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("--out /proc/rep"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn advise_on_a_link_no_setting_can_carry_says_so_and_exits_non_zero() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (status, stderr) = run(top, &["advise", "--bitrate", "1"], b"");
    assert_eq!(status, Some(1), "{stderr}");
    assert!(
        stderr.contains("no setting carries the message"),
        "{stderr}"
    );
    // Said in seconds or words, never as a count of microseconds.
    assert!(!stderr.contains(" us "), "{stderr}");
}

#[test]
fn a_truncated_part_is_named_in_words_not_in_rust_debug_form() {
    let dir = temp_dir("truncated-part");
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scenario = top.join("crates/scenario/experiments/ronan-tables-2-3.toml");
    let scenario = scenario.to_str().unwrap();
    let (status, stderr) = run(
        &dir,
        &["sim", scenario, "--quick", "--shard", "0/2", "--out", "p0"],
        b"",
    );
    assert_eq!(status, Some(0), "{stderr}");
    let part = std::fs::read(dir.join("p0/part.cbor")).unwrap();
    std::fs::create_dir_all(dir.join("cut")).unwrap();
    std::fs::write(dir.join("cut/part.cbor"), &part[..part.len() / 2]).unwrap();
    let (status, stderr) = run(&dir, &["merge", "cut", "--out", "merged"], b"");
    assert_eq!(status, Some(2), "{stderr}");
    assert!(
        stderr.contains("cut/part.cbor") && stderr.contains("truncated"),
        "{stderr}"
    );
    assert!(!stderr.contains("Error {"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_bad_line_in_a_hex_file_is_named_without_format_hex() {
    let dir = temp_dir("hex-line");
    let good = "9c 94 6e a0 40 40 e0 9c 60 86 82 98 98 61 03 f0 68 69\n";
    let text = format!("{good}{good}zz not hex\n{good}");
    std::fs::write(dir.join("frames.hex"), text).unwrap();
    let (status, stderr) = run(&dir, &["decode", "frames.hex"], b"");
    assert_eq!(status, Some(2), "{stderr}");
    assert!(
        stderr.contains("frames.hex") && stderr.contains("line 3"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_file_that_received_data_would_overwrite_is_refused_before_the_tnc_is_touched() {
    let dir = temp_dir("no-overwrite");
    std::fs::write(dir.join("mine.bin"), "kept\n").unwrap();
    for args in [
        &[
            "ip",
            "serve",
            "--kiss",
            "tcp:127.0.0.1:1",
            "--mycall",
            "N0CALL-2",
            "--addr",
            "44.0.0.2/24",
            "--port",
            "7",
            "--out",
            "mine.bin",
        ][..],
        &[
            "dtn",
            "recv",
            "--endpoint",
            "ipn:2.1",
            "--out",
            "mine.bin",
            "--node",
            "node.sock",
        ][..],
    ] {
        let (status, stderr) = run(&dir, args, b"");
        assert_eq!(status, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("--out mine.bin"), "{stderr}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("mine.bin")).unwrap(),
        "kept\n"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn ip_send_ends_on_sigterm_saying_what_it_had_sent_instead_of_dying() {
    let channel = cli::channel::Channel::start(&["--base-port", "0", "--bind", "127.0.0.1"]);
    let dir = temp_dir("ip-sigterm");
    std::fs::write(dir.join("small.txt"), "hello\n").unwrap();
    // Nobody at 44.0.0.2: the connection request goes unanswered.
    let mut child = Command::new(env!("CARGO_BIN_EXE_linklab"))
        .args(["ip", "--kiss", &channel.kiss(0), "--mycall", "N0CALL-1"])
        .args([
            "--addr",
            "44.0.0.1/24",
            "--monitor",
            "send",
            "small.txt",
            "44.0.0.2:5001",
        ])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    // The first frame sent (an ARP request): the run has started.
    while !(said.contains("waiting up to") && said.contains("\nTX ")) {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "{said}");
        said += &line;
    }
    let pid = child.id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let status = cli::channel::wait_bounded(&mut child);
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert_eq!(
        status.code(),
        Some(1),
        "ended by the signal itself: {said}{rest}"
    );
    assert!(rest.contains("interrupted after 0 of 6 bytes"), "{rest}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn channel_statistics_are_printed_even_when_stats_json_cannot_be_written_at_exit() {
    let dir = temp_dir("stats-at-exit");
    let gone = dir.join("gone");
    std::fs::create_dir(&gone).unwrap();
    let stats = gone.join("stats.json");
    let channel = cli::channel::Channel::start(&[
        "--base-port",
        "0",
        "--bind",
        "127.0.0.1",
        "--stats-json",
        stats.to_str().unwrap(),
    ]);
    // The directory goes away while the channel runs.
    std::fs::remove_dir(&gone).unwrap();
    let (status, out) = channel.interrupt();
    assert_eq!(status.code(), Some(1));
    assert!(out.contains("channel radio (1200 bit/s)"), "{out}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_dtn_node_that_fails_to_start_leaves_no_socket_behind() {
    let dir = temp_dir("node-start-fails");
    let taken = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let norm = taken.local_addr().unwrap().to_string();
    let (status, stderr) = run(
        &dir,
        &[
            "dtn",
            "node",
            "--eid",
            "ipn:1.0",
            "--store",
            "store",
            "--app-socket",
            "node.sock",
            "--norm-bind",
            &norm,
        ],
        b"",
    );
    assert_eq!(status, Some(1), "{stderr}");
    assert!(stderr.contains("cannot bind NORM"), "{stderr}");
    assert!(!dir.join("node.sock").exists(), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}
