//! `linklab dtn node`, `send` and `recv` as a user runs them: real node
//! processes on loopback TCPCLv4 (and AX.25 over the KISS hub of [`cli`],
//! and through a digipeater on `linklab channel`) with their stores on
//! disk.

mod cli;

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const LINKLAB: &str = env!("CARGO_BIN_EXE_linklab");

/// A node process; killed (SIGKILL) when dropped.
struct Node {
    child: Child,
    log: PathBuf,
    socket: PathBuf,
    tcpcl: Option<String>,
}

impl Node {
    /// Starts `linklab dtn node` in `dir` (store `dir/NAME`, socket
    /// `dir/NAME.sock`, log `dir/NAME.log`) and waits until it is ready.
    fn start<S: AsRef<std::ffi::OsStr>>(dir: &Path, name: &str, eid: &str, extra: &[S]) -> Node {
        let log = dir.join(format!("{name}.log"));
        let socket = dir.join(format!("{name}.sock"));
        let mut command = Command::new(LINKLAB);
        command
            .args(["dtn", "node", "--eid", eid, "--store"])
            .arg(dir.join(name))
            .arg("--app-socket")
            .arg(&socket)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(fs::File::create(&log).unwrap());
        let child = command.spawn().expect("linklab runs");
        let mut node = Node {
            child,
            log,
            socket,
            tcpcl: None,
        };
        // A bound against a hang, not a timing: with both cores and the
        // disk busy (a `.ci/run` beside fuzzers, builds and audio-modem
        // runs) two nodes started at once wrote nothing for 20 s.
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            let text = node.log();
            if let Some(line) = text.lines().find(|l| l.contains("applications on")) {
                node.tcpcl = line
                    .split(", ")
                    .find_map(|part| part.strip_prefix("tcpcl on "))
                    .map(str::to_string);
                return node;
            }
            if let Some(status) = node.child.try_wait().unwrap() {
                panic!("node {name} exited ({status}):\n{text}");
            }
            assert!(Instant::now() < until, "node {name} did not start:\n{text}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn port(&self) -> &str {
        self.tcpcl
            .as_deref()
            .expect("listening")
            .rsplit(':')
            .next()
            .unwrap()
    }

    /// SIGTERM, and the exit status.
    fn terminate(self) -> std::process::ExitStatus {
        self.signal("-TERM");
        self.exit_status()
    }

    /// Sends `signal` (`-INT`, `-TERM`) to the node.
    fn signal(&self, signal: &str) {
        let pid = self.child.id().to_string();
        Command::new("kill").args([signal, &pid]).status().unwrap();
    }

    /// Waits (at most 10 s) until the node exits; its exit status.
    fn exit_status(mut self) -> std::process::ExitStatus {
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < until, "node did not stop:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn linklab(args: &[&str]) -> Output {
    Command::new(LINKLAB)
        .args(args)
        .output()
        .expect("linklab runs")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Deterministic payloads: `len` octets from `seed`.
fn payload(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

/// The bundle ID `send` printed ("... as bundle ID").
fn sent_id(output: &Output) -> Option<String> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.split_once(" as bundle ").map(|(_, id)| id.to_string()))
}

/// Sends `file` from node `from` to `endpoint` on node `to` with
/// `linklab dtn send --report --wait WAIT_S`, while `linklab dtn recv`
/// takes one bundle for `endpoint` on `to` into `out`; the two outputs (the
/// receiver is stopped if the send fails).
fn send_with_report(
    from: &Node,
    to: &Node,
    endpoint: &str,
    file: &Path,
    out: &Path,
    wait_s: &str,
) -> (Output, Output) {
    let mut recv = Command::new(LINKLAB)
        .args([
            "dtn",
            "recv",
            "--endpoint",
            endpoint,
            "--count",
            "1",
            "--node",
        ])
        .arg(&to.socket)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sent = linklab(&[
        "dtn",
        "send",
        file.to_str().unwrap(),
        endpoint,
        "--report",
        "--wait",
        wait_s,
        "--node",
        from.socket.to_str().unwrap(),
    ]);
    if !sent.status.success() {
        // Nothing will arrive: stop the receiver so the caller's
        // assertions on `sent` report the failure.
        let _ = recv.kill();
    }
    (sent, recv.wait_with_output().unwrap())
}

#[test]
fn two_nodes_carry_files_both_ways_byte_exact_with_delivery_reports() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let b = Node::start(d, "b", "ipn:2.0", &["--tcpcl-listen", "127.0.0.1:0"]);
    let peer = format!("tcpcl:127.0.0.1:{}=ipn:2.*", b.port());
    let a = Node::start(d, "a", "ipn:1.0", &["--peer", &peer]);

    // a -> b: over the session a opened.
    let file = d.join("to-b");
    fs::write(&file, payload(1, 150_000)).unwrap();
    let out = d.join("got-b");
    let (sent, recv) = send_with_report(&a, &b, "ipn:2.1", &file, &out, "20");
    let report = text(&sent);
    assert!(sent.status.success(), "{report}\n{}", a.log());
    assert!(
        report.contains("byte report from [ipn:2.0]: time=") && report.contains("delivered"),
        "{report}"
    );
    assert!(recv.status.success(), "{}", text(&recv));
    assert_eq!(fs::read(&out).unwrap(), fs::read(&file).unwrap());
    let id = sent_id(&sent).expect("send names the bundle");
    assert!(text(&recv).contains(&id), "{}", text(&recv));

    // b -> a: over the same session, opened by a; b routes to a by its
    // node ID.
    fs::write(&file, payload(2, 70_000)).unwrap();
    let out_dir = d.join("got-a");
    fs::create_dir(&out_dir).unwrap();
    let (sent, recv) = send_with_report(&b, &a, "ipn:1.7", &file, &out_dir, "20");
    assert!(sent.status.success(), "{}\n{}", text(&sent), b.log());
    assert!(text(&sent).contains("byte report from [ipn:1.0]"));
    assert!(recv.status.success(), "{}", text(&recv));
    let files: Vec<_> = fs::read_dir(&out_dir).unwrap().collect();
    assert_eq!(files.len(), 1);
    let got = fs::read(files[0].as_ref().unwrap().path()).unwrap();
    assert_eq!(got, fs::read(&file).unwrap());

    let socket = a.socket.clone();
    let logs = [a.log.clone(), b.log.clone()];
    assert!(a.terminate().success());
    assert!(
        !socket.exists(),
        "the application socket is removed at exit"
    );
    assert!(b.terminate().success());
    // The stop ends the session with nothing reported failed.
    for log in logs {
        let log = fs::read_to_string(log).unwrap();
        assert!(log.contains("linklab dtn node: stopping"), "{log}");
        assert!(!log.contains("transfer failed"), "{log}");
    }
}

#[test]
fn two_nodes_carry_a_file_over_ax25_on_a_kiss_hub_with_a_delivery_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let hub = cli::Hub::start();
    let kiss = hub.address();
    // b shows its frames as `linklab listen --monitor` does; a sets up a
    // modulo-128 link with multi-SREJ, as `linklab send --mod128 --srej`.
    let b = Node::start(
        d,
        "b",
        "ipn:2.0",
        &["--kiss", &kiss, "--mycall", "N0DTN-2", "--monitor"],
    );
    let a = Node::start(
        d,
        "a",
        "ipn:1.0",
        &[
            "--kiss",
            &kiss,
            "--mycall",
            "N0DTN-1",
            "--mod128",
            "--srej",
            "--ax25-peer",
            "N0DTN-2=ipn:2.*",
            "--ack-window",
            "4",
        ],
    );
    hub.wait_for_clients(2);

    // a connects to b as soon as the bundle is routed there (not after the
    // 30 s --retry-after, longer than the wait for the report); b sends
    // the report back over the same AX.25 link, to a by its node ID.
    let file = d.join("to-b");
    fs::write(&file, payload(3, 20_000)).unwrap();
    let out = d.join("got-b");
    let (sent, recv) = send_with_report(&a, &b, "ipn:2.1", &file, &out, "20");
    let report = text(&sent);
    assert!(sent.status.success(), "{report}\n{}\n{}", a.log(), b.log());
    assert!(
        report.contains("byte report from [ipn:2.0]: time=") && report.contains("delivered"),
        "{report}"
    );
    assert!(recv.status.success(), "{}", text(&recv));
    assert_eq!(fs::read(&out).unwrap(), fs::read(&file).unwrap());
    assert!(a.log().contains("(ax25 N0DTN-2) up"), "{}", a.log());
    assert!(b.log().contains("(ax25 N0DTN-1) up"), "{}", b.log());
    assert!(
        b.log().contains("RX N0DTN-1>N0DTN-2: <SABME"),
        "{}",
        b.log()
    );
    assert!(b.log().contains("TX N0DTN-2>N0DTN-1: <UA"), "{}", b.log());
    assert!(
        !a.log().contains("<SABME"),
        "a prints no frames:\n{}",
        a.log()
    );
    assert!(a.terminate().success());
    assert!(b.terminate().success());
}

#[test]
fn two_ax25_nodes_stopped_after_a_delivery_fail_nothing_and_dial_no_one() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let hub = cli::Hub::start();
    let kiss = hub.address();
    // Each has the other as a peer, so each could dial the other; both
    // print their frames.
    let node = |name: &str, eid: &str, call: &str, peer: &str| {
        let args = [
            "--kiss",
            &kiss,
            "--mycall",
            call,
            "--monitor",
            "--ax25-peer",
            peer,
        ];
        Node::start(d, name, eid, &args)
    };
    let b = node("b", "ipn:2.0", "N0DTN-2", "N0DTN-1=ipn:1.*");
    let a = node("a", "ipn:1.0", "N0DTN-1", "N0DTN-2=ipn:2.*");
    hub.wait_for_clients(2);
    let file = d.join("to-b");
    fs::write(&file, payload(4, 6_000)).unwrap();
    let out = d.join("got-b");
    let (sent, recv) = send_with_report(&a, &b, "ipn:2.1", &file, &out, "20");
    let report = text(&sent);
    assert!(sent.status.success(), "{report}\n{}\n{}", a.log(), b.log());
    assert!(report.contains("delivered"), "{report}");
    assert!(recv.status.success(), "{}", text(&recv));
    assert_eq!(fs::read(&out).unwrap(), fs::read(&file).unwrap());

    // Stopped at once after the report reached a: b's report bundle may
    // still wait for a's acknowledgement.
    a.signal("-INT");
    b.signal("-INT");
    let (a_log, b_log) = (a.log.clone(), b.log.clone());
    assert!(a.exit_status().success());
    assert!(b.exit_status().success());
    for (name, log) in [("a", a_log), ("b", b_log)] {
        let log = fs::read_to_string(log).unwrap();
        assert!(!log.contains("transfer failed"), "{name}:\n{log}");
        // The link is released (DISC, UA; by b before its own stop if
        // a's SHUTDOWN came first), and no new one is asked for from then.
        let stop = log.find("linklab dtn node: stopping").expect("stopping");
        let disc = log.find("<DISC C P>").expect("a DISC");
        let after = &log[stop.min(disc)..];
        assert!(after.contains("<UA R F>"), "{name}:\n{after}");
        assert!(after.contains(") down: "), "{name}:\n{after}");
        assert!(
            !after.contains("<SABM"),
            "{name} dialled at the stop:\n{after}"
        );
    }
}

/// `linklab channel` with three stations at 38400 bit/s: a and c do not
/// hear each other, b between them digipeats for DIGI.
const DIGIPEATED_CHANNEL: &str = r#"
seed = 5
[defaults]
txdelay_ms = 20
persistence = 63
slot_ms = 10
txtail_ms = 0
[[channel]]
name = "radio"
bitrate = 38400
hidden = [["a", "c"]]
[[station]]
name = "a"
[[station]]
name = "b"
digipeater = "DIGI"
[[station]]
name = "c"
"#;

#[test]
fn a_bundle_goes_through_a_digipeater_between_hidden_nodes_on_linklab_channel() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let plan = d.join("channel.toml");
    fs::write(&plan, DIGIPEATED_CHANNEL).unwrap();
    let capture = d.join("air.pcap");
    let stats = d.join("stats.json");
    let channel = cli::channel::Channel::start(&[
        plan.to_str().unwrap(),
        "--capture",
        capture.to_str().unwrap(),
        "--stats-json",
        stats.to_str().unwrap(),
    ]);
    // A short T1, scaled by 3 for the one digipeater, so that a frame lost
    // to a collision at b costs seconds, not the default 45.
    let link = ["--t1-ms", "2000", "--t2-ms", "100"];
    let b = Node::start(
        d,
        "b",
        "ipn:2.0",
        &[
            [
                "--kiss",
                &channel.kiss(2),
                "--mycall",
                "N0DTN-2",
                "--monitor",
            ]
            .as_slice(),
            &link,
        ]
        .concat(),
    );
    let a = Node::start(
        d,
        "a",
        "ipn:1.0",
        &[
            [
                "--kiss",
                &channel.kiss(0),
                "--mycall",
                "N0DTN-1",
                "--ax25-peer",
                "N0DTN-2=ipn:2.*",
                "--via",
                "N0DTN-2=DIGI",
            ]
            .as_slice(),
            &link,
        ]
        .concat(),
    );

    // The bundle goes a -> DIGI -> b, the report back b -> DIGI -> a over
    // the same link: b answers through the reversed path.
    let file = d.join("to-b");
    fs::write(&file, payload(19, 4_000)).unwrap();
    let out = d.join("got-b");
    let (sent, recv) = send_with_report(&a, &b, "ipn:2.1", &file, &out, "30");
    let report = text(&sent);
    assert!(sent.status.success(), "{report}\n{}\n{}", a.log(), b.log());
    assert!(report.contains("byte report from [ipn:2.0]"), "{report}");
    assert!(recv.status.success(), "{}", text(&recv));
    assert_eq!(fs::read(&out).unwrap(), fs::read(&file).unwrap());
    let log = b.log();
    assert!(log.contains("RX N0DTN-1>N0DTN-2,DIGI*: <SABM"), "{log}");
    assert!(log.contains("TX N0DTN-2>N0DTN-1,DIGI: <UA"), "{log}");
    assert!(a.terminate().success());
    assert!(b.terminate().success());
    let (status, _) = channel.interrupt();
    assert!(status.success());

    // Every frame between the nodes is on the air twice: sent through DIGI
    // (H bit 0), then by b with the H bit set; a frame b lost (a collision
    // of the hidden nodes' transmissions) is sent once.
    let pcap = fs::read(&capture).unwrap();
    let frames: Vec<Vec<u8>> = linklab_wire::pcap::PcapReader::new(&pcap)
        .unwrap()
        .map(|r| r.unwrap().data.to_vec())
        .collect();
    let (mut originals, mut repeats) = (Vec::new(), Vec::new());
    for body in &frames {
        let (field, _) = linklab_wire::ax25::AddressField::decode(body).unwrap();
        // Each node's identification (CALL>ID), sent once with its first
        // frame to ask the channel for ACKMODE, is no traffic between them.
        if field.dest().to_string() == "ID" {
            continue;
        }
        let digis = field.digipeaters();
        assert_eq!(digis.len(), 1, "every frame goes through DIGI");
        assert_eq!(digis[0].to_string(), "DIGI");
        if digis[0].c_or_h() {
            let mut original = body.clone();
            original[3 * linklab_wire::ax25::ADDRESS_LEN - 1] &= !0x80;
            repeats.push(original);
        } else {
            originals.push(body.clone());
        }
    }
    let mut unrepeated = originals.iter();
    for repeat in &repeats {
        assert!(
            unrepeated.any(|o| o == repeat),
            "b repeats only frames sent to it, in order"
        );
    }
    let json: serde_json::Value = serde_json::from_slice(&fs::read(&stats).unwrap()).unwrap();
    let at_b = &json["stations"][1];
    let lost_at_b = [
        "lost_to_collisions",
        "lost_to_errors",
        "lost_while_transmitting",
    ]
    .iter()
    .map(|k| at_b[k].as_u64().unwrap())
    .sum::<u64>();
    assert_eq!(at_b["digipeated"].as_u64(), Some(repeats.len() as u64));
    assert_eq!(at_b["frames_sent"].as_u64(), Some(repeats.len() as u64));
    assert_eq!(
        originals.len() as u64 - repeats.len() as u64,
        lost_at_b,
        "{} frames sent, {} repeated",
        originals.len(),
        repeats.len()
    );
    assert!(
        repeats.len() >= 20,
        "a handshake, the bundle and the report"
    );
}

#[test]
fn bad_clients_peers_and_command_lines_do_not_take_a_node_down() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let node = Node::start(d, "n", "dtn://n/", &["--tcpcl-listen", "127.0.0.1:0"]);

    // An application that speaks nonsense, one that announces a huge
    // payload and vanishes, and a TCPCL "peer" that is not one.
    let mut garbage = UnixStream::connect(&node.socket).unwrap();
    garbage
        .write_all(b"HELLO there\nsend x\n\xff\xfe\n")
        .unwrap();
    let mut truncated = UnixStream::connect(&node.socket).unwrap();
    truncated
        .write_all(b"SEND dest=dtn://x/y length=1000\nabc")
        .unwrap();
    drop(truncated);
    let mut tcp = std::net::TcpStream::connect(node.tcpcl.as_deref().unwrap()).unwrap();
    tcp.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    let mut half = std::net::TcpStream::connect(node.tcpcl.as_deref().unwrap()).unwrap();
    half.write_all(b"dtn!\x04\x00\x07\xff\xff").unwrap();
    drop(half);
    std::thread::sleep(Duration::from_millis(200));

    // Requests the node refuses, with its reason.
    let file = d.join("f");
    fs::write(&file, b"hello").unwrap();
    let socket = node.socket.to_str().unwrap();
    let refused = linklab(&[
        "dtn",
        "send",
        file.to_str().unwrap(),
        "dtn://n/x",
        "--source",
        "dtn://other/",
        "--node",
        socket,
    ]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(
        text(&refused).contains("not an endpoint of this node"),
        "{}",
        text(&refused)
    );
    let busy = Command::new(LINKLAB)
        .args([
            "dtn",
            "recv",
            "--endpoint",
            "dtn://n/in",
            "--count",
            "1",
            "--out",
        ])
        .arg(d.join("in"))
        .args(["--node", socket])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let second = linklab(&[
        "dtn",
        "recv",
        "--endpoint",
        "dtn://n/in",
        "--out",
        d.join("in2").to_str().unwrap(),
        "--node",
        socket,
    ]);
    assert_eq!(second.status.code(), Some(1));
    assert!(
        text(&second).contains("registered by another application"),
        "{}",
        text(&second)
    );

    // The node still works: a bundle to itself.
    let sent = linklab(&[
        "dtn",
        "send",
        file.to_str().unwrap(),
        "dtn://n/in",
        "--node",
        socket,
    ]);
    assert!(sent.status.success(), "{}\n{}", text(&sent), node.log());
    let busy = busy.wait_with_output().unwrap();
    assert!(busy.status.success());
    assert_eq!(fs::read(d.join("in")).unwrap(), b"hello");
    drop(garbage);
    drop(tcp);

    // Usage errors (2) and runtime errors (1), each with its reason.
    for (args, code, why) in [
        (
            vec![
                "dtn",
                "node",
                "--eid",
                "ipn:1.1",
                "--store",
                "s",
                "--tcpcl-listen",
                "127.0.0.1:0",
                "--app-socket",
                "x.sock",
            ],
            2,
            "not a node ID",
        ),
        (
            vec![
                "dtn",
                "node",
                "--eid",
                "ipn:1.0",
                "--store",
                "s",
                "--app-socket",
                "x.sock",
            ],
            2,
            "--tcpcl-listen, --kiss or at least one --peer",
        ),
        (
            vec![
                "dtn",
                "node",
                "--eid",
                "ipn:1.0",
                "--store",
                "s",
                "--kiss",
                "tcp:127.0.0.1:1",
                "--mycall",
                "N0DTN-1",
                "--ax25-peer",
                "N0DTN-2",
                "--app-socket",
                "x.sock",
            ],
            2,
            "use CALL=PATTERN",
        ),
        (
            vec![
                "dtn",
                "node",
                "--eid",
                "ipn:1.0",
                "--store",
                "s",
                "--kiss",
                "tcp:127.0.0.1:1",
                "--mycall",
                "N0DTN-1",
                "--window",
                "9",
                "--app-socket",
                "x.sock",
            ],
            2,
            "--window: window k = 9 is out of range for modulo 8: 1-7 allowed",
        ),
        (
            vec![
                "dtn",
                "node",
                "--eid",
                "ipn:1.0",
                "--store",
                "s",
                "--kiss",
                "tcp:127.0.0.1:1",
                "--mycall",
                "N0DTN-1",
                "--n1",
                "6",
                "--app-socket",
                "x.sock",
            ],
            2,
            "--n1: an information field of 6 octets cannot hold a DATA_SEGMENT",
        ),
        (
            vec![
                "dtn",
                "node",
                "--eid",
                "ipn:1.0",
                "--store",
                "s",
                "--tcpcl-listen",
                "127.0.0.1:0",
                "--window",
                "4",
                "--app-socket",
                "x.sock",
            ],
            2,
            "--kiss <ADDRESS>",
        ),
        (
            vec![
                "dtn",
                "node",
                "--eid",
                "ipn:1.0",
                "--store",
                "s",
                "--peer",
                "127.0.0.1:1",
                "--app-socket",
                "x.sock",
            ],
            2,
            "use tcpcl:HOST:PORT",
        ),
        (
            vec![
                "dtn",
                "node",
                "--eid",
                "ipn:1.0",
                "--store",
                "s",
                "--tcpcl-listen",
                "127.0.0.1:0",
                "--app-socket",
                socket,
            ],
            2,
            "another node answers",
        ),
        (
            vec![
                "dtn",
                "send",
                "/nonexistent/file",
                "ipn:2.1",
                "--node",
                socket,
            ],
            2,
            "cannot read /nonexistent/file",
        ),
        (
            vec![
                "dtn",
                "send",
                file.to_str().unwrap(),
                "not an eid",
                "--node",
                socket,
            ],
            2,
            "is not an endpoint ID",
        ),
        (
            vec![
                "dtn",
                "send",
                file.to_str().unwrap(),
                "ipn:2.1",
                "--node",
                "/nonexistent/sock",
            ],
            1,
            "cannot connect to the node at /nonexistent/sock",
        ),
        (
            vec![
                "dtn",
                "recv",
                "--endpoint",
                "ipn:2.1",
                "--out",
                "/nonexistent/dir/f",
                "--node",
                socket,
            ],
            2,
            "is not a directory",
        ),
    ] {
        let run = Command::new(LINKLAB)
            .args(&args)
            .current_dir(d)
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(code), "{args:?}: {}", text(&run));
        assert!(text(&run).contains(why), "{args:?}: {}", text(&run));
    }
    assert!(node.terminate().success());
}

/// How many bundles a node found in its store at start.
fn stored_at_start(log: &str) -> usize {
    log.lines()
        .find_map(|l| {
            l.split_once(" (")?
                .1
                .split_once(" bundles)")?
                .0
                .parse()
                .ok()
        })
        .expect("the node says how many bundles it holds")
}

/// A small deterministic generator for the kill points.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

#[test]
fn a_node_killed_mid_transfer_delivers_every_accepted_bundle_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let b = Node::start(d, "b", "ipn:2.0", &["--tcpcl-listen", "127.0.0.1:0"]);
    let peer = format!("tcpcl:127.0.0.1:{}=ipn:2.*", b.port());
    let out = d.join("out");
    fs::create_dir(&out).unwrap();
    let recv_log = d.join("recv.log");
    let mut recv = Command::new(LINKLAB)
        .args(["dtn", "recv", "--endpoint", "ipn:2.1", "--node"])
        .arg(&b.socket)
        .arg("--out")
        .arg(&out)
        .stdout(fs::File::create(&recv_log).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    // Rounds: node a starts on its store, files go in through `send`
    // while earlier ones are on the wire, and a is killed with SIGKILL
    // after a seeded delay. A bundle is accepted when `send` printed its
    // ID (the node answers once the bundle is stored).
    let mut rng = Lcg(0x05EE_D0D7);
    let mut accepted: BTreeMap<String, u64> = BTreeMap::new();
    let mut next = 0u64;
    const ROUNDS: usize = 5;
    const SIZE: usize = 1 << 20;
    let mut held = Vec::new();
    for _ in 0..ROUNDS {
        let mut a = Node::start(d, "a", "ipn:1.0", &["--peer", &peer]);
        held.push(stored_at_start(&a.log()));
        let kill_after = Duration::from_millis(100 + rng.below(400));
        let started = Instant::now();
        while started.elapsed() < kill_after {
            let file = d.join(format!("in-{next}"));
            fs::write(&file, payload(100 + next, SIZE)).unwrap();
            let sent = linklab(&[
                "dtn",
                "send",
                file.to_str().unwrap(),
                "ipn:2.1",
                "--node",
                a.socket.to_str().unwrap(),
            ]);
            if let Some(id) = sent_id(&sent) {
                accepted.insert(id, next);
            }
            next += 1;
        }
        a.child.kill().unwrap();
        a.child.wait().unwrap();
    }
    assert!(
        accepted.len() >= ROUNDS,
        "too few bundles sent: {accepted:?}"
    );

    // The last start: everything accepted must arrive, once.
    let a = Node::start(d, "a", "ipn:1.0", &["--peer", &peer]);
    held.push(stored_at_start(&a.log()));
    let delivered = || -> (String, Vec<String>) {
        let log = fs::read_to_string(&recv_log).unwrap_or_default();
        let ids = log
            .lines()
            .filter_map(|l| {
                let rest = l.split_once("(bundle ")?.1;
                Some(rest.split(',').next()?.to_string())
            })
            .collect();
        (log, ids)
    };
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let (log, ids) = delivered();
        if accepted.keys().all(|id| ids.contains(id)) {
            break;
        }
        assert!(
            Instant::now() < until,
            "not every accepted bundle arrived: {} of {}\n{log}\n{}\n{}",
            ids.len(),
            accepted.len(),
            a.log(),
            b.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // A copy delivered twice would come soon after.
    std::thread::sleep(Duration::from_secs(1));
    let (_, delivered) = delivered();
    let mut seen = std::collections::BTreeSet::new();
    for id in &delivered {
        assert!(seen.insert(id), "{id} delivered twice: {delivered:?}");
    }
    // Byte-exact: each file is the payload sent under its ID.
    for (id, n) in &accepted {
        let file = fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                let (source, stamp) = id.split_once(' ').unwrap();
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                name.starts_with(stamp) && name.ends_with(&source.replace([':', '.'], "_"))
            })
            .unwrap_or_else(|| panic!("no file for {id}"));
        assert_eq!(fs::read(file).unwrap(), payload(100 + n, SIZE), "{id}");
    }
    eprintln!(
        "{ROUNDS} kills, {} bundles accepted, {} delivered; bundles in a's store at each start: {held:?}",
        accepted.len(),
        delivered.len()
    );
    // The kills caught bundles accepted and not yet forwarded.
    assert!(held.iter().any(|n| *n > 0), "{held:?}");
    drop(a);
    let _ = recv.kill();
    let _ = recv.wait();
}

/// A KISS relay between the stations on 127.0.0.1: each whole KISS frame
/// (FEND to FEND) one client sends goes to every other, like a radio
/// channel, until the channel is cut (a fade: frames are read and
/// dropped) and after it is restored. It counts the octets it relays.
struct Relay {
    port: u16,
    channel: Arc<Mutex<Channel>>,
}

#[derive(Default)]
struct Channel {
    clients: Vec<TcpStream>,
    cut: bool,
    /// Cut once this many octets are relayed.
    cut_after: Option<u64>,
    /// Octets relayed since the start or the last restore.
    relayed: u64,
}

impl Relay {
    fn start() -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let channel: Arc<Mutex<Channel>> = Arc::default();
        let all = channel.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let Ok(me) = stream.peer_addr() else { continue };
                all.lock()
                    .unwrap()
                    .clients
                    .push(stream.try_clone().unwrap());
                let all = all.clone();
                std::thread::spawn(move || {
                    let mut pending = Vec::new();
                    let mut buf = [0u8; 4096];
                    while let Ok(n) = stream.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        pending.extend_from_slice(&buf[..n]);
                        // Whole frames only: a cut never leaves half a
                        // frame on the channel.
                        while let Some(end) = pending.iter().skip(1).position(|&b| b == 0xC0) {
                            let frame: Vec<u8> = pending.drain(..end + 2).collect();
                            let frame = [&[0xC0], &frame[..], &[0xC0]].concat();
                            let mut channel = all.lock().unwrap();
                            if channel.cut {
                                continue;
                            }
                            for other in &mut channel.clients {
                                if other.peer_addr().ok() != Some(me) {
                                    other.write_all(&frame).ok();
                                }
                            }
                            channel.relayed += frame.len() as u64;
                            if channel.cut_after.is_some_and(|n| channel.relayed >= n) {
                                channel.cut = true;
                                channel.cut_after = None;
                            }
                        }
                    }
                });
            }
        });
        Relay { port, channel }
    }

    fn address(&self) -> String {
        format!("tcp:127.0.0.1:{}", self.port)
    }

    fn wait_for_clients(&self, n: usize) {
        let end = Instant::now() + Duration::from_secs(60);
        while self.channel.lock().unwrap().clients.len() < n {
            assert!(Instant::now() < end, "relay: {n} clients never attached");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Cuts the channel once `octets` more are relayed.
    fn cut_after(&self, octets: u64) {
        let mut channel = self.channel.lock().unwrap();
        channel.cut_after = Some(channel.relayed + octets);
    }

    /// Cuts the channel now.
    fn cut(&self) {
        self.channel.lock().unwrap().cut = true;
    }

    fn is_cut(&self) -> bool {
        self.channel.lock().unwrap().cut
    }

    /// Restores the channel and starts counting again.
    fn restore(&self) {
        let mut channel = self.channel.lock().unwrap();
        channel.cut = false;
        channel.relayed = 0;
    }

    fn relayed(&self) -> u64 {
        self.channel.lock().unwrap().relayed
    }
}

/// Waits (at most 30 s) until `node`'s log says `what`.
fn wait_for_log(node: &Node, what: &str) {
    let end = Instant::now() + Duration::from_secs(30);
    while !node.log().contains(what) {
        assert!(
            Instant::now() < end,
            "no {what:?} in the log:\n{}",
            node.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The command-line options of nodes b (ipn:2.0, N0DTN-2) and a (ipn:1.0,
/// N0DTN-1, routing ipn:2.* to b) on `relay`: short T1 and N2 so that a
/// cut is found in about a second; modulo 8 links (the default, SABM: no
/// SABME tried first) with a window of 7 frames keep the acknowledgements close
/// behind the data. The default 30 s `--retry-after` is left: the rest of
/// a bundle cut off asks for a connection at once and goes as soon as the
/// session is up.
fn ax25_pair_args(relay: &Relay) -> (Vec<String>, Vec<String>) {
    // The relay is a wire, not a radio: a frame is through as soon as it
    // is handed over (no ACKMODE, no air time, no key-up), so T1 runs
    // from the hand-over.
    let link = [
        "--t1-ms",
        "200",
        "--n2",
        "2",
        "--window",
        "7",
        "--ackmode",
        "off",
        "--bitrate",
        "4000000000",
        "--txdelay-ms",
        "0",
        "--persist",
        "255",
        "--kiss",
        &relay.address(),
    ];
    let owned = |extra: &[&str]| -> Vec<String> {
        link.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let b = owned(&["--mycall", "N0DTN-2"]);
    let a = owned(&[
        "--mycall",
        "N0DTN-1",
        "--ax25-peer",
        "N0DTN-2=ipn:2.*",
        "--ack-window",
        "4",
    ]);
    (b, a)
}

/// The first "broke off after N of M" in a sender's log: (N, M).
fn broke_off(log: &str) -> Option<(usize, usize)> {
    log.lines().find_map(|l| {
        let (_, rest) = l.split_once("broke off after ")?;
        let (acknowledged, rest) = rest.split_once(" of ")?;
        let (length, _) = rest.split_once(' ')?;
        Some((acknowledged.parse().ok()?, length.parse().ok()?))
    })
}

/// The "kept the first N" octets in a receiver's log.
fn kept_first(log: &str) -> Option<usize> {
    log.lines().find_map(|l| {
        l.split_once("kept the first ")?
            .1
            .split_once(' ')?
            .0
            .parse()
            .ok()
    })
}

/// Asserts that `a` sent one bundle on, a fragment with a later part of
/// the payload.
fn forwarded_only_a_rest(a: &Node, logs: &str) {
    let a_log = a.log();
    let forwarded: Vec<&str> = a_log
        .lines()
        .filter(|l| l.contains("forwarded ["))
        .collect();
    assert_eq!(forwarded.len(), 1, "{logs}");
    assert!(
        forwarded[0].contains(" fragment ") && !forwarded[0].contains(" fragment 0/"),
        "{logs}"
    );
}

#[test]
fn an_ax25_link_cut_mid_bundle_resends_only_the_unacknowledged_rest() {
    const LENGTH: usize = 30_000;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let relay = Relay::start();
    let (b_args, a_args) = ax25_pair_args(&relay);
    let b = Node::start(d, "b", "ipn:2.0", &b_args);
    let a = Node::start(d, "a", "ipn:1.0", &a_args);
    relay.wait_for_clients(2);
    // The channel fades about halfway through the bundle.
    relay.cut_after(LENGTH as u64 / 2);

    let file = d.join("to-b");
    fs::write(&file, payload(4, LENGTH)).unwrap();
    let out = d.join("got-b");
    let (sent, recv) = std::thread::scope(|scope| {
        let transfer = scope.spawn(|| send_with_report(&a, &b, "ipn:2.1", &file, &out, "60"));
        // The channel comes back once the sender has given the link up
        // and failed to connect again (it keeps trying, with a backoff).
        wait_for_log(&a, "broke off after");
        wait_for_log(&a, "no link with N0DTN-2 (ConnectTimeout); trying again");
        assert!(relay.is_cut());
        relay.restore();
        transfer.join().unwrap()
    });
    let logs = format!("a:\n{}\nb:\n{}", a.log(), b.log());
    assert!(sent.status.success(), "{}\n{logs}", text(&sent));
    assert!(text(&sent).contains("delivered"), "{}", text(&sent));
    assert!(recv.status.success(), "{}", text(&recv));
    assert_eq!(fs::read(&out).unwrap(), fs::read(&file).unwrap());

    // The sender saw part of the bundle acknowledged and sent on only a
    // fragment with the rest; the receiver kept what arrived.
    let (acknowledged, length) = broke_off(&a.log()).expect(&logs);
    assert!(0 < acknowledged && acknowledged < length, "{logs}");
    let kept = kept_first(&b.log()).expect(&logs);
    assert!(acknowledged <= kept && kept < length, "{logs}");
    forwarded_only_a_rest(&a, &logs);
    // After the cut the channel carried less than the bundle: a whole
    // resend would need all of it and more.
    let after = relay.relayed();
    assert!(
        after < LENGTH as u64,
        "{after} octets relayed after the cut\n{logs}"
    );
    eprintln!(
        "cut after {acknowledged} of {length} octets acknowledged, {kept} kept by the receiver; \
         {after} octets on the channel after it"
    );

    // Delivered once: nothing of the bundle is left in b's store.
    // b's delivery report has reached a; b's transfer of it ends too.
    wait_for_log(&b, "forwarded [");
    assert!(b.terminate().success());
    let before = format!(
        "a:\n{}\nb:\n{}",
        a.log(),
        fs::read_to_string(d.join("b.log")).unwrap()
    );
    let b = Node::start(d, "b", "ipn:2.0", &b_args);
    assert_eq!(stored_at_start(&b.log()), 0, "{before}\n{}", b.log());
    assert!(a.terminate().success());
}

/// After a receiver killed mid-bundle restarted with `kept` octets: the
/// send reported delivery, the file arrived byte-exact, and `a` resumed
/// after what the receiver had acknowledged, which it had kept, sending
/// only the rest.
fn assert_resumed_after_the_kept_prefix(
    a: &Node,
    sent: &Output,
    file: &Path,
    out: &Path,
    kept: usize,
    logs: &str,
) {
    assert!(sent.status.success(), "{}\n{logs}", text(sent));
    assert!(text(sent).contains("delivered"), "{}", text(sent));
    assert_eq!(fs::read(out).unwrap(), fs::read(file).unwrap());
    // a resumed after what b had acknowledged, which b had kept.
    let (acknowledged, length) = broke_off(&a.log()).expect(logs);
    assert!(
        0 < acknowledged && acknowledged <= kept && kept < length,
        "{logs}"
    );
    forwarded_only_a_rest(a, logs);
}

/// The size of a convergence layer's spool in a node's store (the file
/// whose name starts with `prefix`: "ax25-partial-", "tcpcl-partial-"),
/// if there is one.
fn spool_size(store: &Path, prefix: &str) -> Option<u64> {
    fs::read_dir(store).ok()?.find_map(|entry| {
        let entry = entry.ok()?;
        let ours = entry.file_name().to_str()?.starts_with(prefix);
        ours.then(|| entry.metadata().ok().map(|m| m.len()))?
    })
}

/// Starts `linklab dtn send FILE ENDPOINT --report --wait WAIT_S` through
/// `from`'s socket, output captured.
fn spawn_send_with_report(from: &Node, file: &Path, endpoint: &str, wait_s: &str) -> Child {
    Command::new(LINKLAB)
        .args(["dtn", "send"])
        .arg(file)
        .args([endpoint, "--report", "--wait", wait_s, "--node"])
        .arg(&from.socket)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_receiver_killed_mid_bundle_over_ax25_keeps_what_it_acknowledged() {
    const LENGTH: usize = 30_000;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let relay = Relay::start();
    let (b_args, a_args) = ax25_pair_args(&relay);
    let b = Node::start(d, "b", "ipn:2.0", &b_args);
    let a = Node::start(d, "a", "ipn:1.0", &a_args);
    relay.wait_for_clients(2);

    let file = d.join("to-b");
    fs::write(&file, payload(5, LENGTH)).unwrap();
    let send = spawn_send_with_report(&a, &file, "ipn:2.1", "60");
    // b is killed (SIGKILL) once it has acknowledged a third of the
    // bundle, which it spooled to disk first.
    let until = Instant::now() + Duration::from_secs(30);
    while spool_size(&d.join("b"), "ax25-partial-").is_none_or(|n| n < LENGTH as u64 / 3) {
        assert!(Instant::now() < until, "b spooled nothing:\n{}", b.log());
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(b);
    let b = Node::start(d, "b", "ipn:2.0", &b_args);
    let kept = kept_first(&b.log()).unwrap_or_else(|| panic!("b kept nothing:\n{}", b.log()));

    let out = d.join("got-b");
    let mut recv = Command::new(LINKLAB)
        .args([
            "dtn",
            "recv",
            "--endpoint",
            "ipn:2.1",
            "--count",
            "1",
            "--node",
        ])
        .arg(&b.socket)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    let received = loop {
        if let Some(status) = recv.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > until {
            recv.kill().unwrap();
            panic!("nothing delivered\na:\n{}\nb:\n{}", a.log(), b.log());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let sent = send.wait_with_output().unwrap();
    let logs = format!("a:\n{}\nb:\n{}", a.log(), b.log());
    assert!(received.success(), "{logs}");
    assert_resumed_after_the_kept_prefix(&a, &sent, &file, &out, kept, &logs);

    // b's delivery report has reached a; b's transfer of it ends too.
    wait_for_log(&b, "forwarded [");
    assert!(b.terminate().success());
    let b = Node::start(d, "b", "ipn:2.0", &b_args);
    assert_eq!(stored_at_start(&b.log()), 0, "{}", b.log());
    assert_eq!(spool_size(&d.join("b"), "ax25-partial-"), None);
    assert!(a.terminate().success());
}

/// A TCP relay on 127.0.0.1 to `target`, one connection on for each it
/// accepts. The first carries only `cut_at` octets from the client to the
/// target (the rest is read and dropped); with `close`, the target then
/// sees the stream end, and the client sees it end once everything the
/// target sent before closing has reached it. The later ones are relayed
/// whole. It counts the client's octets relayed on each connection.
struct TcpCut {
    port: u16,
    relayed: Arc<Mutex<Vec<u64>>>,
    returned: Arc<Mutex<Vec<u64>>>,
}

impl TcpCut {
    fn start(target: String, cut_at: u64, close: bool) -> TcpCut {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let relayed: Arc<Mutex<Vec<u64>>> = Arc::default();
        let returned: Arc<Mutex<Vec<u64>>> = Arc::default();
        let counts = relayed.clone();
        let back_counts = returned.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(mut client) = client else { return };
                let Ok(mut server) = TcpStream::connect(&target) else {
                    continue;
                };
                let connection = {
                    let mut counts = counts.lock().unwrap();
                    counts.push(0);
                    back_counts.lock().unwrap().push(0);
                    counts.len() - 1
                };
                let limit = if connection == 0 { cut_at } else { u64::MAX };
                let (mut from_server, mut to_client) =
                    (server.try_clone().unwrap(), client.try_clone().unwrap());
                let back_counts = back_counts.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    while let Ok(n) = from_server.read(&mut buf) {
                        if n == 0 || to_client.write_all(&buf[..n]).is_err() {
                            break;
                        }
                        back_counts.lock().unwrap()[connection] += n as u64;
                    }
                    to_client.shutdown(std::net::Shutdown::Write).ok();
                });
                let counts = counts.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    let mut forwarded = 0u64;
                    while let Ok(n) = client.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        let room = limit.saturating_sub(forwarded).min(n as u64) as usize;
                        if room > 0 {
                            server.write_all(&buf[..room]).ok();
                            forwarded += room as u64;
                            counts.lock().unwrap()[connection] = forwarded;
                            if forwarded == limit && close {
                                server.shutdown(std::net::Shutdown::Write).ok();
                            }
                        }
                    }
                    server.shutdown(std::net::Shutdown::Write).ok();
                });
            }
        });
        TcpCut {
            port,
            relayed,
            returned,
        }
    }

    /// The client's octets relayed on each connection so far.
    fn relayed(&self) -> Vec<u64> {
        self.relayed.lock().unwrap().clone()
    }

    /// The server's octets relayed back to the client on each connection
    /// so far.
    fn returned(&self) -> Vec<u64> {
        self.returned.lock().unwrap().clone()
    }
}

#[test]
fn a_tcpcl_session_cut_mid_bundle_resends_only_the_unacknowledged_rest() {
    const LENGTH: usize = 300_000;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let b = Node::start(d, "b", "ipn:2.0", &["--tcpcl-listen", "127.0.0.1:0"]);
    // The first session is cut about halfway through the bundle (whole
    // 64 KiB segments are acknowledged); a reconnects after 250 ms.
    let relay = TcpCut::start(format!("127.0.0.1:{}", b.port()), LENGTH as u64 / 2, true);
    let peer = format!("tcpcl:127.0.0.1:{}=ipn:2.*", relay.port);
    let a = Node::start(d, "a", "ipn:1.0", &["--peer", &peer]);
    wait_for_log(&a, "session with ipn:2.0");

    let file = d.join("to-b");
    fs::write(&file, payload(6, LENGTH)).unwrap();
    let out = d.join("got-b");
    let (sent, recv) = send_with_report(&a, &b, "ipn:2.1", &file, &out, "30");
    let logs = format!("a:\n{}\nb:\n{}", a.log(), b.log());
    assert!(sent.status.success(), "{}\n{logs}", text(&sent));
    assert!(text(&sent).contains("delivered"), "{}", text(&sent));
    assert!(recv.status.success(), "{}", text(&recv));
    assert_eq!(fs::read(&out).unwrap(), fs::read(&file).unwrap());

    // a saw whole segments acknowledged, b kept exactly those (its
    // XFER_ACKs went out once they were on disk), and only the rest went
    // again, on the second connection.
    let (acknowledged, length) = broke_off(&a.log()).expect(&logs);
    assert!(0 < acknowledged && acknowledged < length, "{logs}");
    assert_eq!(acknowledged % (64 * 1024), 0, "{logs}");
    assert_eq!(kept_first(&b.log()), Some(acknowledged), "{logs}");
    forwarded_only_a_rest(&a, &logs);
    let relayed = relay.relayed();
    assert_eq!(relayed.len(), 2, "{relayed:?}\n{logs}");
    assert!(relayed[1] < LENGTH as u64, "{relayed:?}\n{logs}");
    eprintln!(
        "cut after {acknowledged} of {length} octets acknowledged and kept; \
         {} octets from a on the second connection",
        relayed[1]
    );

    // Delivered once: nothing of the bundle is left in b's store, and no
    // spool.
    // b's delivery report has reached a; b's transfer of it ends too.
    wait_for_log(&b, "forwarded [");
    assert!(b.terminate().success());
    let names: Vec<String> = fs::read_dir(d.join("b"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains("-partial-")), "{names:?}");
    let b = Node::start(d, "b", "ipn:2.0", &["--tcpcl-listen", "127.0.0.1:0"]);
    assert_eq!(stored_at_start(&b.log()), 0, "{}", b.log());
    assert!(a.terminate().success());
}

#[test]
fn an_idle_ax25_receiver_notices_a_dead_link_after_t3() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let relay = Relay::start();
    // T3 of half a second: an idle link is polled, and given up after N2
    // unanswered tries of T1. (With the default T3, 300 s, b does not
    // notice within the 30 s this test waits.)
    let link = [
        "--t1-ms",
        "200",
        "--n2",
        "2",
        "--t3-ms",
        "500",
        "--kiss",
        &relay.address(),
    ];
    let b_args: Vec<&str> = link
        .iter()
        .copied()
        .chain(["--mycall", "N0DTN-2"])
        .collect();
    let a_args: Vec<&str> = link
        .iter()
        .copied()
        .chain(["--mycall", "N0DTN-1", "--ax25-peer", "N0DTN-2=ipn:2.*"])
        .collect();
    let b = Node::start(d, "b", "ipn:2.0", &b_args);
    let a = Node::start(d, "a", "ipn:1.0", &a_args);
    relay.wait_for_clients(2);

    let file = d.join("to-b");
    fs::write(&file, payload(7, 2_000)).unwrap();
    let out = d.join("got-b");
    let (sent, recv) = send_with_report(&a, &b, "ipn:2.1", &file, &out, "20");
    let logs = || format!("a:\n{}\nb:\n{}", a.log(), b.log());
    assert!(sent.status.success(), "{}\n{}", text(&sent), logs());
    assert!(recv.status.success(), "{}", text(&recv));
    wait_for_log(&b, "forwarded [");
    // Idle for several T3 periods, the polls answered: the link stays up.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!b.log().contains(") down"), "{}", logs());

    // The channel dies with nothing outstanding either way; b, which has
    // nothing to send, finds out by its T3 poll going unanswered.
    relay.cut();
    wait_for_log(&b, "session with ipn:1.0 (ax25 N0DTN-1) down");
    wait_for_log(&a, "session with ipn:2.0 (ax25 N0DTN-2) down");
    assert!(b.terminate().success());
    assert!(a.terminate().success());
}

#[test]
fn a_receiver_killed_mid_bundle_over_tcpcl_keeps_what_it_acknowledged() {
    const LENGTH: usize = 300_000;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let b = Node::start(d, "b", "ipn:2.0", &["--tcpcl-listen", "127.0.0.1:0"]);
    let listen = format!("127.0.0.1:{}", b.port());
    // The first connection stalls about halfway through the bundle.
    let relay = TcpCut::start(listen.clone(), LENGTH as u64 / 2, false);
    let peer = format!("tcpcl:127.0.0.1:{}=ipn:2.*", relay.port);
    let a = Node::start(d, "a", "ipn:1.0", &["--peer", &peer]);
    wait_for_log(&a, "session with ipn:2.0");
    // What b said before the transfer: contact header and SESS_INIT.
    let handshake = relay.returned()[0];

    let file = d.join("to-b");
    fs::write(&file, payload(8, LENGTH)).unwrap();
    let send = spawn_send_with_report(&a, &file, "ipn:2.1", "30");
    // b is killed (SIGKILL) once it has spooled two 64 KiB segments and
    // its two XFER_ACKs (18 octets each, RFC 9174 5.2.3) have reached a;
    // it starts again on its port.
    let until = Instant::now() + Duration::from_secs(30);
    while spool_size(&d.join("b"), "tcpcl-partial-").is_none_or(|n| n < 2 * 64 * 1024)
        || relay.returned()[0] < handshake + 2 * 18
    {
        assert!(
            Instant::now() < until,
            "b spooled or acknowledged too little:\n{}",
            b.log()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(b);
    let b = Node::start(d, "b", "ipn:2.0", &["--tcpcl-listen", &listen]);
    let kept = kept_first(&b.log()).unwrap_or_else(|| panic!("b kept nothing:\n{}", b.log()));
    assert_eq!(kept, 2 * 64 * 1024, "{}", b.log());

    let out = d.join("got-b");
    let recv = linklab(&[
        "dtn",
        "recv",
        "--endpoint",
        "ipn:2.1",
        "--count",
        "1",
        "--node",
        b.socket.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let sent = send.wait_with_output().unwrap();
    let logs = format!("a:\n{}\nb:\n{}", a.log(), b.log());
    assert!(recv.status.success(), "{}\n{logs}", text(&recv));
    assert_resumed_after_the_kept_prefix(&a, &sent, &file, &out, kept, &logs);

    wait_for_log(&b, "forwarded [");
    assert!(b.terminate().success());
    assert_eq!(spool_size(&d.join("b"), "tcpcl-partial-"), None);
    let b = Node::start(d, "b", "ipn:2.0", &["--tcpcl-listen", &listen]);
    assert_eq!(stored_at_start(&b.log()), 0, "{}", b.log());
    assert!(a.terminate().success());
}

/// How often `what` occurs in `text`: a message is said once.
fn occurrences(text: &str, what: &str) -> usize {
    text.matches(what).count()
}

#[test]
fn dtn_send_with_a_bad_eid_says_what_an_endpoint_id_is() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    fs::write(&file, b"x").unwrap();
    let run = linklab(&[
        "dtn",
        "send",
        file.to_str().unwrap(),
        "ipn:",
        "--node",
        "/x",
    ]);
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    let message = text(&run);
    assert!(
        message.contains("\"ipn:\" is not an endpoint ID"),
        "{message}"
    );
    assert!(message.contains("ipn:NODE.SERVICE"), "{message}");
    assert!(!message.contains("Parse error"), "{message}");
}

#[test]
fn dtn_send_to_a_node_that_is_not_running_asks_whether_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    fs::write(&file, b"x").unwrap();
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().to_string()
    };
    let missing = dir.path().join("no.sock");
    for node in [closed.as_str(), missing.to_str().unwrap()] {
        let run = linklab(&[
            "dtn",
            "send",
            file.to_str().unwrap(),
            "ipn:2.1",
            "--node",
            node,
        ]);
        assert_eq!(run.status.code(), Some(1), "{}", text(&run));
        let message = text(&run);
        assert!(message.contains("is the node running"), "{message}");
        assert_eq!(occurrences(&message, "(os error"), 1, "{message}");
    }
}

/// Runs a node (ipn:1.0, its store at `store`, TCPCL on `tcpcl`, the
/// application port on loopback) that is expected to stop at start.
fn node_that_stops_at_start(store: &Path, tcpcl: &str) -> Output {
    linklab(&[
        "dtn",
        "node",
        "--eid",
        "ipn:1.0",
        "--store",
        store.to_str().unwrap(),
        "--tcpcl-listen",
        tcpcl,
        "--app-socket",
        "127.0.0.1:0",
    ])
}

#[test]
fn a_node_failing_at_start_says_why_once_and_leaves_no_store() {
    let dir = tempfile::tempdir().unwrap();
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = busy.local_addr().unwrap().to_string();
    let store = dir.path().join("new/store");
    let run = node_that_stops_at_start(&store, &busy);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    let message = text(&run);
    assert_eq!(
        occurrences(&message, "Address already in use"),
        1,
        "{message}"
    );
    assert!(
        !dir.path().join("new").exists(),
        "the store was left behind"
    );

    // A store that was there already stays; the store's failure is said once.
    let store = dir.path().join("kept");
    fs::create_dir(&store).unwrap();
    fs::create_dir(store.join("bundles.redb")).unwrap();
    let run = node_that_stops_at_start(&store, "127.0.0.1:0");
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    let message = text(&run);
    assert_eq!(occurrences(&message, "bundle store"), 1, "{message}");
    assert!(store.join("bundles.redb").is_dir());
}

#[test]
fn a_node_store_naming_a_file_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    fs::write(&file, b"").unwrap();
    let run = node_that_stops_at_start(&file, "127.0.0.1:0");
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    let message = text(&run);
    assert!(message.contains("--store"), "{message}");
    assert!(message.contains("is not a directory"), "{message}");
    assert!(!message.contains("File exists"), "{message}");
}

#[test]
fn a_via_path_that_cannot_work_is_a_usage_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let node = |more: &[&str]| {
        let mut args = vec![
            "dtn",
            "node",
            "--eid",
            "ipn:1.0",
            "--store",
            store.to_str().unwrap(),
            "--app-socket",
            "x.sock",
            "--kiss",
            "tcp:127.0.0.1:1",
            "--mycall",
            "N0DTN-1",
        ];
        args.extend_from_slice(more);
        linklab(&args)
    };
    for (via, why) in [
        (
            ["N0DTN-3=DIGI"].as_slice(),
            "--via N0DTN-3=DIGI: N0DTN-3 is not an --ax25-peer",
        ),
        (
            &["N0DTN-2=DIGI,N0DTN-1"],
            "--via N0DTN-2=DIGI,N0DTN-1: N0DTN-1 is this station itself (--mycall)",
        ),
        (
            &["N0DTN-2=n0dtn-2"],
            "--via N0DTN-2=N0DTN-2: N0DTN-2 is the destination, not a digipeater",
        ),
        (
            &["N0DTN-2=D1,D2,D3,D4,D5,D6,D7,D8,D9"],
            "9 digipeaters given; AX.25 allows at most 8 (3.12.5)",
        ),
        (
            &["N0DTN-2=DIGI", "N0DTN-2=RELAY"],
            "--via N0DTN-2=RELAY: a second path for N0DTN-2; give one --via per neighbour",
        ),
        (
            &["N0DTN-2=DI_GI"],
            "digipeater \"DI_GI\": callsign \"DI_GI\" has '_' at position 3",
        ),
        (
            &["N0DTN-2=DIGI-16"],
            "SSID 16 is out of range; it must be 0-15",
        ),
        (&["N0DTN-2=DIGI,"], "digipeater \"\": callsign is empty"),
        (&["DIGI"], "use CALL=DIGI,..., e.g. N0CALL-2=DIGI-1"),
    ] {
        let mut args = vec!["--ax25-peer", "N0DTN-2=ipn:2.*"];
        for v in via {
            args.extend(["--via", v]);
        }
        let run = node(&args);
        let message = text(&run);
        assert_eq!(run.status.code(), Some(2), "{via:?}: {message}");
        assert!(message.contains(why), "{via:?}: {message}");
        assert!(!store.exists(), "{via:?}: no store is made");
    }
    // --via belongs to an --ax25-peer.
    let run = node(&["--via", "N0DTN-2=DIGI"]);
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    assert!(text(&run).contains("--ax25-peer"), "{}", text(&run));
}
