//! The README's tour, run as a user would type it, so that its commands
//! and the output it quotes cannot drift from the program: in order (the
//! channel before the commands that use it as their TNC), in an empty
//! directory (every file a command reads made by the tour's own lines), each
//! a command `linklab --help` lists. The commands that talk to a TNC run
//! against the in-test KISS hub in place of the README's addresses, and
//! against the tour's own emulated channel.

mod cli;

use std::path::Path;
use std::time::{Duration, Instant};

use cli::agw::Agw;
use cli::channel::Channel;
use cli::{finish, linklab_in, tail, text, Hub};

/// The TNC address the README's examples use, station 1's of the tour's
/// channel, and what every station's address starts with.
const README_TNC: &str = "tcp:127.0.0.1:8001";
const README_TNC_PREFIX: &str = "tcp:127.0.0.1:";

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

/// The tour's `sh` block, continuation lines joined.
fn tour_block() -> String {
    let text = readme();
    let block = after(after(&text, "## A short tour", "\n## "), "```sh\n", "```");
    block.replace("\\\n", " ")
}

/// The tour's commands: the `linklab` lines of its `sh` block, without a
/// trailing `&`.
fn tour() -> Vec<String> {
    let commands: Vec<String> = tour_block()
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("linklab "))
        .map(|l| l.trim_end_matches('&').trim_end().to_string())
        .collect();
    assert_eq!(
        commands.len(),
        10,
        "the tour has ten commands: {commands:?}"
    );
    commands
}

/// The tour's command of subcommand `name` (the first words after
/// `linklab`).
fn command(name: &str) -> String {
    tour()
        .into_iter()
        .find(|c| c.starts_with(&format!("linklab {name} ")))
        .unwrap_or_else(|| panic!("the tour has no `linklab {name}`"))
}

/// Runs the tour's lines that are not `linklab` commands nor comments
/// (the files it makes) with `sh` in `dir`, as a user following it would.
fn make_the_tour_s_files(dir: &Path) {
    let block = tour_block();
    let script: Vec<&str> = block
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#') && !l.starts_with("linklab "))
        .collect();
    let script = script.join("\n") + "\n";
    let out = std::process::Command::new("sh")
        .args(["-e", "-c", &script])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{script}\n{}", tail(&out.stderr));
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

/// The arguments of a `linklab ...` command, each of the README's TNC
/// addresses (`tcp:127.0.0.1:8001`, `8002`, ...) replaced by `tnc` of its
/// station (0 for 8001).
fn args_on(command: &str, tnc: &dyn Fn(usize) -> String) -> Vec<String> {
    let words = words(command);
    assert_eq!(words[0], "linklab");
    words[1..]
        .iter()
        .map(|w| match w.strip_prefix(README_TNC_PREFIX) {
            Some(port) => {
                let port: usize = port.parse().expect("a port");
                tnc(port - 8001)
            }
            None => w.clone(),
        })
        .collect()
}

/// The arguments of a `linklab ...` command, every TNC address `tnc`.
fn args(command: &str, tnc: &str) -> Vec<String> {
    args_on(command, &|_| tnc.to_string())
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
fn the_channel_starts_before_every_command_that_uses_it_as_a_tnc() {
    let tour = tour();
    let channel = tour
        .iter()
        .position(|c| c.starts_with("linklab channel "))
        .expect("the tour starts a channel");
    let stations: usize = words(&tour[channel])
        .windows(2)
        .find(|w| w[0] == "--stations")
        .map(|w| w[1].parse().unwrap())
        .expect("--stations");
    for (i, command) in tour.iter().enumerate() {
        for word in words(command) {
            let Some(port) = word.strip_prefix(README_TNC_PREFIX) else {
                continue;
            };
            assert!(
                i > channel,
                "command {} runs before the channel: {command}",
                i + 1
            );
            let port: usize = port.parse().unwrap();
            assert!(
                (8001..8001 + stations).contains(&port),
                "the channel has no port {port}: {command}"
            );
        }
    }
}

#[test]
fn every_file_the_tour_reads_is_made_by_the_tour_in_an_empty_directory() {
    let dir = tempfile::tempdir().unwrap();
    make_the_tour_s_files(dir.path());
    let sim = args(&command("sim"), README_TNC);
    let send = args(&command("send"), README_TNC);
    for file in [&sim[1], send.last().unwrap()] {
        assert!(
            dir.path().join(file).is_file(),
            "the tour reads {file} but does not make it"
        );
    }
}

#[test]
fn every_tour_command_is_one_linklab_help_lists() {
    let dir = tempfile::tempdir().unwrap();
    let help = text(&run_in(dir.path(), &["--help".to_string()], None).stdout);
    let listed: Vec<&str> = after(&help, "Commands:\n", "\n\n")
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for command in tour() {
        for part in command.split(" | ") {
            let subcommand = &words(part)[1];
            assert!(
                listed.contains(&subcommand.as_str()),
                "`linklab --help` lists no {subcommand:?}: {listed:?}"
            );
        }
    }
}

#[test]
fn the_model_prints_the_table_the_readme_quotes() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &args(&command("model"), README_TNC), None);
    let text = readme();
    let quoted = after(&text, "The first prints\n\n```\n", "```");
    assert_eq!(cli::text(&out.stdout), quoted);
}

#[test]
fn the_scenario_file_the_tour_writes_runs() {
    let dir = tempfile::tempdir().unwrap();
    make_the_tour_s_files(dir.path());
    let out = run_in(dir.path(), &args(&command("sim"), README_TNC), None);
    assert!(
        dir.path()
            .join("linklab-sim/ronan/transfer-time.csv")
            .is_file(),
        "{}",
        tail(&out.stderr)
    );
}

#[test]
fn encode_then_decode_prints_the_monitor_line_the_readme_quotes() {
    let dir = tempfile::tempdir().unwrap();
    let pipeline = command("encode");
    let (encode, decode) = pipeline.split_once(" | ").expect("a pipeline");
    let frame = run_in(dir.path(), &args(encode, README_TNC), None).stdout;
    let shown = run_in(dir.path(), &args(decode, README_TNC), Some(frame)).stdout;
    let text = readme();
    let quoted = after(&text, "and the third `", "`");
    assert_eq!(cli::text(&shown).trim_end(), quoted);
}

/// The tour's listener and sender, on TNC addresses `tnc`, in `dir`: the
/// file the sender sent, as the listener saved it.
fn the_tour_s_transfer(dir: &Path, tnc: &dyn Fn(usize) -> String, wait: impl FnOnce()) {
    make_the_tour_s_files(dir);
    let listen = args_on(&command("listen"), tnc);
    let listen: Vec<&str> = listen.iter().map(String::as_str).collect();
    let listener = linklab_in(dir, &listen, None);
    wait();
    let send = args_on(&command("send"), tnc);
    run_in(dir, &send, None);
    let listener = finish(listener, "listen");
    assert!(listener.status.success(), "{}", tail(&listener.stderr));
    let sent = std::fs::read(dir.join(send.last().unwrap())).unwrap();
    let received = dir.join(listen.last().unwrap());
    assert_eq!(std::fs::read(&received).unwrap(), sent);
}

#[test]
fn the_file_sent_arrives_byte_exact_at_the_tour_s_listener() {
    let hub = Hub::start();
    let dir = tempfile::tempdir().unwrap();
    the_tour_s_transfer(dir.path(), &|_| hub.address(), || hub.wait_for_clients(1));
}

#[test]
fn the_dtn_node_starts_on_the_tnc_and_stops_on_sigterm() {
    let hub = Hub::start();
    let dir = tempfile::tempdir().unwrap();
    let args = args(&command("dtn"), &hub.address());
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
    let mut channel_args = args(&command("channel"), README_TNC);
    channel_args.extend(["--base-port".into(), "0".into()]);
    let channel_args: Vec<&str> = channel_args[1..].iter().map(String::as_str).collect();
    let channel = Channel::start(&channel_args);
    assert_eq!(channel.ports.len(), 3);
    the_tour_s_transfer(dir.path(), &|station| channel.kiss(station), || {
        std::thread::sleep(Duration::from_millis(300))
    });
    let (status, rest) = channel.interrupt();
    assert!(status.success());
    assert!(rest.contains("N0CALL-1>N0CALL-2: <SABM C P>"), "{rest}");
    assert!(rest.contains("channel radio (1200 bit/s)"), "{rest}");
}

#[test]
fn the_tour_s_agwpe_server_answers_a_client_on_the_tour_s_channel() {
    let channel = Channel::start(&["--stations", "1", "--base-port", "0"]);
    let agw_args = args(&command("agw"), &channel.kiss(0));
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
    let advise = args(&command("advise"), README_TNC);
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
    let station_args = args(&command("station"), README_TNC);
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
