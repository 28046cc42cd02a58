//! The README's tour, run as a user would type it, so that its commands
//! and the output it quotes cannot drift from the program. The commands
//! that talk to a TNC run against the in-test KISS hub in place of the
//! README's Dire Wolf address, and against the tour's own emulated
//! channel.

mod cli;

use std::path::Path;
use std::time::{Duration, Instant};

use cli::agw::Agw;
use cli::channel::Channel;
use cli::{finish, linklab_in, listen_once, tail, text, Hub};

/// The TNC address the README's examples use.
const README_TNC: &str = "tcp:127.0.0.1:8001";

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap()
}

/// The text after `marker` in the README, up to `end`.
fn after<'a>(text: &'a str, marker: &str, end: &str) -> &'a str {
    let start = text
        .find(marker)
        .unwrap_or_else(|| panic!("README: no {marker:?}"))
        + marker.len();
    let rest = &text[start..];
    &rest[..rest
        .find(end)
        .unwrap_or_else(|| panic!("README: no {end:?} after {marker:?}"))]
}

/// The tour's commands: the `linklab` lines of its first `sh` block, with
/// continuation lines joined.
fn tour() -> Vec<String> {
    let text = readme();
    let block = after(after(&text, "## A short tour", "\n## "), "```sh\n", "```");
    let joined = block.replace("\\\n", " ");
    let commands: Vec<String> = joined
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("linklab "))
        .map(String::from)
        .collect();
    assert_eq!(
        commands.len(),
        9,
        "the tour has nine commands: {commands:?}"
    );
    commands
}

/// Splits a command line as a POSIX shell would for these examples:
/// blanks separate words, single quotes keep blanks and stars.
fn words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    assert!(!quoted, "unbalanced quote in {line:?}");
    if any {
        words.push(word);
    }
    words
}

/// The arguments of a `linklab ...` command, the TNC address replaced.
fn args(command: &str, tnc: &str) -> Vec<String> {
    let words = words(command);
    assert_eq!(words[0], "linklab");
    words[1..]
        .iter()
        .map(|w| w.replace(README_TNC, tnc))
        .collect()
}

fn run_in(dir: &Path, args: &[String], input: Option<Vec<u8>>) -> std::process::Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = finish(linklab_in(dir, &args, input), &args.join(" "));
    assert!(
        out.status.success(),
        "linklab {} failed:\n{}",
        args.join(" "),
        tail(&out.stderr)
    );
    out
}

#[test]
fn the_model_prints_the_table_the_readme_quotes() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &args(&tour()[0], README_TNC), None);
    let text = readme();
    let quoted = after(&text, "The first prints\n\n```\n", "```");
    assert_eq!(cli::text(&out.stdout), quoted);
}

#[test]
fn the_scenario_file_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = args(&tour()[1], README_TNC);
    // The README's path is relative to the repository root.
    args[1] = format!("{}/{}", env!("CARGO_MANIFEST_DIR"), args[1]);
    let out = run_in(dir.path(), &args, None);
    assert!(
        dir.path().join("linklab-sim").is_dir(),
        "{}",
        tail(&out.stderr)
    );
}

#[test]
fn encode_then_decode_prints_the_monitor_line_the_readme_quotes() {
    let dir = tempfile::tempdir().unwrap();
    let pipeline = tour()[2].clone();
    let (encode, decode) = pipeline.split_once(" | ").expect("a pipeline");
    let frame = run_in(dir.path(), &args(encode, README_TNC), None).stdout;
    let shown = run_in(dir.path(), &args(decode, README_TNC), Some(frame)).stdout;
    let text = readme();
    let quoted = after(&text, "and the third `", "`");
    assert_eq!(cli::text(&shown).trim_end(), quoted);
}

#[test]
fn the_file_sent_arrives_byte_exact_at_the_listener_the_readme_names() {
    let hub = Hub::start();
    let dir = tempfile::tempdir().unwrap();
    let notes: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(dir.path().join("notes.txt"), &notes).unwrap();
    let received = dir.path().join("received.txt");
    let listener = listen_once(&hub.address(), &received);
    hub.wait_for_clients(1);
    run_in(dir.path(), &args(&tour()[3], &hub.address()), None);
    let listener = finish(listener, "listen");
    assert!(listener.status.success(), "{}", tail(&listener.stderr));
    assert_eq!(std::fs::read(&received).unwrap(), notes);
}

#[test]
fn the_dtn_node_starts_on_the_tnc_and_stops_on_sigterm() {
    let hub = Hub::start();
    let dir = tempfile::tempdir().unwrap();
    let args = args(&tour()[4], &hub.address());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut node = linklab_in(dir.path(), &args, None);
    let socket = dir.path().join("node.sock");
    let until = Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        if let Some(status) = node.child.try_wait().unwrap() {
            panic!(
                "the node exited ({status}):\n{}",
                text(&node.stderr.join().unwrap())
            );
        }
        assert!(Instant::now() < until, "the node never opened node.sock");
        std::thread::sleep(Duration::from_millis(20));
    }
    hub.wait_for_clients(1);
    std::process::Command::new("kill")
        .args(["-TERM", &node.child.id().to_string()])
        .status()
        .unwrap();
    let out = finish(node, "dtn node");
    assert!(out.status.success(), "{}", tail(&out.stderr));
}

#[test]
fn the_tour_s_transfer_crosses_the_tour_s_emulated_channel() {
    let dir = tempfile::tempdir().unwrap();
    // Any free ports rather than the README's 8001-8003.
    let mut channel_args = args(&tour()[5], README_TNC);
    assert_eq!(channel_args[0], "channel");
    channel_args.extend(["--base-port".into(), "0".into()]);
    let channel_args: Vec<&str> = channel_args[1..].iter().map(String::as_str).collect();
    let channel = Channel::start(&channel_args);
    assert_eq!(channel.ports.len(), 3);
    let notes: Vec<u8> = (0..600u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(dir.path().join("notes.txt"), &notes).unwrap();
    let received = dir.path().join("received.txt");
    let listener = listen_once(&channel.kiss(1), &received);
    std::thread::sleep(Duration::from_millis(300));
    run_in(dir.path(), &args(&tour()[3], &channel.kiss(0)), None);
    let listener = finish(listener, "listen");
    assert!(listener.status.success(), "{}", tail(&listener.stderr));
    assert_eq!(std::fs::read(&received).unwrap(), notes);
    let (status, rest) = channel.interrupt();
    assert!(status.success());
    assert!(rest.contains("N0CALL-1>N0CALL-2: <SABM C P>"), "{rest}");
    assert!(rest.contains("channel radio (1200 bit/s)"), "{rest}");
}

#[test]
fn the_tour_s_agwpe_server_answers_a_client_on_the_tour_s_channel() {
    let channel = Channel::start(&["--stations", "1", "--base-port", "0"]);
    let agw_args = args(&tour()[6], &channel.kiss(0));
    assert_eq!(agw_args[0], "agw");
    // The tour's TNC replaced by the channel's; any free port rather than
    // the README's 8000 (Agw::start adds --listen 127.0.0.1:0).
    let extra: Vec<&str> = agw_args[1..].iter().map(String::as_str).collect();
    let agw = Agw::start(&[], &extra);
    let mut client = agw.client();
    client.send(b'G', "", "", &[]);
    let ports = client.wait(b'G').unwrap();
    assert!(ports.data.starts_with(b"1;Port1 "), "{}", text(&ports.data));
    let log = agw.stop();
    assert!(log.contains("stopping: releasing every link"), "{log}");
}

#[test]
fn the_tour_s_advice_names_the_settings_and_the_defaults_beside_them() {
    let dir = tempfile::tempdir().unwrap();
    let advise = args(&tour()[7], README_TNC);
    assert_eq!(advise[0], "advise");
    let out = run_in(dir.path(), &advise, None);
    let stdout = cli::text(&out.stdout);
    for want in [
        "Link: 1200 bit/s half duplex",
        "Best settings: k ",
        "Linux kernel defaults",
        "Dire Wolf defaults",
        "window k (MAXFRAME)",
    ] {
        assert!(stdout.contains(want), "no {want:?} in\n{stdout}");
    }
}

#[test]
fn the_tour_s_station_serves_on_the_tour_s_channel_and_stops_on_sigterm() {
    let channel = Channel::start(&["--stations", "1", "--base-port", "0"]);
    let station_args = args(&tour()[8], README_TNC);
    assert_eq!(station_args[..2], ["station", "--config"]);
    // The tour's file, with the channel's TNC, a control socket in the
    // test's directory and any free ports rather than 8000 and 8100.
    let dir = tempfile::tempdir().unwrap();
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(&station_args[2]);
    let text = std::fs::read_to_string(file)
        .unwrap()
        .replace(README_TNC, &channel.kiss(0))
        .replace(
            "/run/linklab/station.sock",
            dir.path().join("station.sock").to_str().unwrap(),
        )
        .replace("127.0.0.1:8000", "127.0.0.1:0")
        .replace("127.0.0.1:8100", "127.0.0.1:0");
    let station = cli::station::Station::start(dir.path(), &text);
    let report = cli::station::status(&station.control);
    assert_eq!(report["ports"][0]["up"], true);
    assert_eq!(report["services"].as_array().unwrap().len(), 2);
    let (exit, log) = station.stop();
    assert!(exit.success(), "{log}");
}
