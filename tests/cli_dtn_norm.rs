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

/// A UDP relay between two NORM nodes on loopback: `a` is told `b` is at
/// `to_b`, `b` that `a` is at `to_a`; each datagram goes on unchanged from
/// the other socket, so each node hears its peer at the address it was
/// given. It keeps a copy of what each side sent.
struct UdpRelay {
    to_b: UdpSocket,
    to_a: UdpSocket,
}

/// What went through a [`UdpRelay`]: the datagrams from a, from b.
type Seen = std::sync::Arc<std::sync::Mutex<[Vec<Vec<u8>>; 2]>>;

impl UdpRelay {
    fn bind() -> UdpRelay {
        UdpRelay {
            to_b: UdpSocket::bind("127.0.0.1:0").unwrap(),
            to_a: UdpSocket::bind("127.0.0.1:0").unwrap(),
        }
    }

    fn port(socket: &UdpSocket) -> u16 {
        socket.local_addr().unwrap().port()
    }

    /// Relays between `a` and `b` from now on (threads that end with the
    /// test process).
    fn run(self, a: u16, b: u16) -> Seen {
        let seen = Seen::default();
        let (to_b, to_a) = (self.to_b, self.to_a);
        for (from, out, peer, side) in [
            (to_b.try_clone().unwrap(), to_a.try_clone().unwrap(), b, 0),
            (to_a, to_b, a, 1),
        ] {
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 65_536];
                while let Ok(n) = from.recv(&mut buf) {
                    seen.lock().unwrap()[side].push(buf[..n].to_vec());
                    out.send_to(&buf[..n], ("127.0.0.1", peer)).ok();
                }
            });
        }
        seen
    }
}

/// NORM_CMD(CC) (RFC 5740 4.2.3: message type 3, flavor 4 in octet 12).
fn is_cmd_cc(datagram: &[u8]) -> bool {
    datagram.len() > 12 && datagram[0] & 0x0f == 3 && datagram[12] == 4
}

/// NORM_ACK(CC) (RFC 5740 4.3.2: message type 5, ack_type 1 in octet
/// 14), a receiver's congestion feedback.
fn is_ack_cc(datagram: &[u8]) -> bool {
    datagram.len() > 14 && datagram[0] & 0x0f == 5 && datagram[14] == 1
}

#[test]
fn two_nodes_over_norm_cc_carry_a_file_with_congestion_feedback() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (pa, pb) = (free_port(), free_port());
    let relay = UdpRelay::bind();
    let (to_a, to_b) = (UdpRelay::port(&relay.to_a), UdpRelay::port(&relay.to_b));
    let seen = relay.run(pa, pb);
    let node = |name, eid, port: u16, peer: String| {
        let bind = format!("127.0.0.1:{port}");
        Node::start(
            d,
            name,
            eid,
            &[
                "--norm-bind",
                &bind,
                "--norm-peer",
                &peer,
                "--norm-rate",
                "cc",
            ],
        )
    };
    let a = node("a", "ipn:1.0", pa, format!("ipn:2.0=127.0.0.1:{to_b}"));
    let b = node("b", "ipn:2.0", pb, format!("ipn:1.0=127.0.0.1:{to_a}"));
    assert!(a.log().contains("with NORM-CC from 128000"), "{}", a.log());

    let file = d.join("file");
    let content = payload(3, 200_000);
    fs::write(&file, &content).unwrap();
    let out = d.join("got");
    let sent = send_and_receive(&a, &b, "ipn:2.1", &file, &out);
    let report = text(&sent);
    assert!(
        sent.status.success() && report.contains("delivered"),
        "{report}\n{}\n{}",
        a.log(),
        b.log()
    );
    assert_eq!(fs::read(&out).unwrap(), content, "byte-exact");
    // a probed for congestion and b answered as its only receiver.
    let seen = seen.lock().unwrap();
    let probes = seen[0].iter().filter(|d| is_cmd_cc(d)).count();
    let feedback = seen[1].iter().filter(|d| is_ack_cc(d)).count();
    assert!(
        probes > 0 && feedback > 0,
        "{probes} NORM_CMD(CC), {feedback} NORM_ACK(CC)"
    );
    eprintln!("{probes} NORM_CMD(CC) from a, {feedback} NORM_ACK(CC) from b");
}
