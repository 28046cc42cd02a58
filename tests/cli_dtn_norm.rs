//! `linklab dtn node` over the NORM convergence layer: two node processes
//! on loopback UDP, a file sent with `linklab dtn send --report` and taken
//! by `linklab dtn recv`, byte-exact, both ways.

use std::fs;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const LINKLAB: &str = env!("CARGO_BIN_EXE_linklab");

/// A node process; killed when dropped.
struct Node {
    child: Child,
    log: PathBuf,
    socket: PathBuf,
}

impl Node {
    fn start(dir: &Path, name: &str, eid: &str, extra: &[&str]) -> Node {
        let log = dir.join(format!("{name}.log"));
        let socket = dir.join(format!("{name}.sock"));
        let child = Command::new(LINKLAB)
            .args(["dtn", "node", "--eid", eid, "--store"])
            .arg(dir.join(name))
            .arg("--app-socket")
            .arg(&socket)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(fs::File::create(&log).unwrap())
            .spawn()
            .expect("linklab runs");
        let mut node = Node { child, log, socket };
        let until = Instant::now() + Duration::from_secs(20);
        while !node.log().contains("applications on") {
            if let Some(status) = node.child.try_wait().unwrap() {
                panic!("node {name} exited ({status}):\n{}", node.log());
            }
            assert!(Instant::now() < until, "node {name} did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        node
    }

    fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback UDP port free a moment ago.
fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn payload(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| {
            (i as u32)
                .wrapping_mul(2_654_435_761)
                .rotate_left(u32::from(seed)) as u8
        })
        .collect()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `recv --count 1` on `to` while `send --report` goes from `from`.
fn send_and_receive(from: &Node, to: &Node, endpoint: &str, file: &Path, out: &Path) -> Output {
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
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let sent = Command::new(LINKLAB)
        .args(["dtn", "send"])
        .arg(file)
        .args([endpoint, "--report", "--wait", "30", "--node"])
        .arg(&from.socket)
        .output()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(30);
    while recv.try_wait().unwrap().is_none() {
        if Instant::now() > until || !sent.status.success() {
            let _ = recv.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = recv.wait();
    sent
}

#[test]
fn two_nodes_over_norm_carry_files_both_ways_byte_exact() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (pa, pb) = (free_port(), free_port());
    let (bind_a, bind_b) = (format!("127.0.0.1:{pa}"), format!("127.0.0.1:{pb}"));
    let rate = "2000000";
    let a = Node::start(
        d,
        "a",
        "ipn:1.0",
        &[
            "--norm-bind",
            &bind_a,
            "--norm-peer",
            &format!("ipn:2.0={bind_b}"),
            "--norm-rate",
            rate,
        ],
    );
    let b = Node::start(
        d,
        "b",
        "ipn:2.0",
        &[
            "--norm-bind",
            &bind_b,
            "--norm-peer",
            &format!("ipn:1.0={bind_a}"),
            "--norm-rate",
            rate,
        ],
    );
    for (from, to, endpoint, seed, len) in [
        (&a, &b, "ipn:2.1", 1, 150_000),
        (&b, &a, "ipn:1.1", 2, 3_000),
    ] {
        let file = d.join(format!("file-{seed}"));
        let content = payload(seed, len);
        fs::write(&file, &content).unwrap();
        let out = d.join(format!("got-{seed}"));
        let sent = send_and_receive(from, to, endpoint, &file, &out);
        let report = text(&sent);
        assert!(
            sent.status.success() && report.contains("delivered"),
            "{report}\n{}\n{}",
            a.log(),
            b.log()
        );
        assert_eq!(fs::read(&out).unwrap(), content, "byte-exact");
    }
    assert!(a.log().contains("norm on 127.0.0.1"), "{}", a.log());
    assert!(
        b.log().contains("session with ipn:1.0 (norm to"),
        "{}",
        b.log()
    );
}
