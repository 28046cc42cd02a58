//! `linklab send`, `listen`, `monitor` and `heard` with `--station`: the
//! client commands through AGWPE servers (`linklab agw`, one on each of
//! two stations of `linklab channel`). A 20 KB file goes byte-exact from
//! `send` to `listen`; `monitor` shows its frames; `heard` lists the
//! other station; the options a server owns are refused; a server that
//! is not there is a clear error. Every run is bounded in time and waits
//! on the processes' own lines, not on sleeps.

mod cli;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use cli::agw::Agw;
use cli::channel::Channel;
use cli::{finish, linklab, tail, text, LIMIT};

fn pattern(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(53).wrapping_add(7))
        .collect()
}

/// A `linklab` whose standard error is read line by line as it comes.
struct Watched {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    stdout: thread::JoinHandle<Vec<u8>>,
}

impl Watched {
    fn start(args: &[&str]) -> Watched {
        let mut child = Command::new(env!("CARGO_BIN_EXE_linklab"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let err = BufReader::new(child.stderr.take().unwrap());
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in err.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut out = child.stdout.take().unwrap();
        let stdout = thread::spawn(move || {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut out, &mut bytes).ok();
            bytes
        });
        Watched {
            child,
            lines,
            seen: Vec::new(),
            stdout,
        }
    }

    /// Waits for a line of standard error containing `what`.
    fn wait_for(&mut self, what: &str) {
        let end = Instant::now() + LIMIT;
        while !self.seen.iter().any(|l| l.contains(what)) {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => panic!("no line with {what:?}; got:\n{}", self.seen.join("\n")),
            }
        }
    }

    /// Waits for the exit; its status, standard output and standard
    /// error.
    fn finish(mut self) -> (std::process::ExitStatus, Vec<u8>, String) {
        let end = Instant::now() + LIMIT;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > end {
                self.child.kill().ok();
                panic!("still running after {LIMIT:?}:\n{}", self.seen.join("\n"));
            }
            thread::sleep(Duration::from_millis(20));
        };
        self.seen.extend(self.lines.iter());
        (status, self.stdout.join().unwrap(), self.seen.join("\n"))
    }

    fn interrupt(&self) {
        self.signal("INT");
    }

    /// Sends signal `name` (as `kill -NAME`).
    fn signal(&self, name: &str) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args([&format!("-{name}"), &pid])
            .status()
            .unwrap()
            .success());
    }
}

#[test]
fn send_to_listen_through_two_servers_with_monitor_and_heard() {
    let channel = Channel::fast(2, 5);
    let a = Agw::start(&[channel.kiss(0)], &[]);
    let b = Agw::start(&[channel.kiss(1)], &[]);
    let station_a = format!("127.0.0.1:{}", a.port);
    let station_b = format!("127.0.0.1:{}", b.port);
    let dir = tempfile::tempdir().unwrap();
    let got = dir.path().join("got.bin");
    let file = dir.path().join("file.bin");
    let data = pattern(20 * 1024);
    std::fs::write(&file, &data).unwrap();

    let mut listen = Watched::start(&[
        "listen",
        "--station",
        &station_b,
        "--mycall",
        "N0CALL-2",
        "--once",
        "--out",
        got.to_str().unwrap(),
    ]);
    listen.wait_for("listening");
    // A second program cannot take the same callsign.
    let taken = finish(
        linklab(&["listen", "--station", &station_b, "--mycall", "N0CALL-2"]),
        "second listen",
    );
    assert_eq!(taken.status.code(), Some(1));
    assert!(
        text(&taken.stderr).contains("N0CALL-2 is registered by another program on that server"),
        "{}",
        text(&taken.stderr)
    );
    let mut monitor = Watched::start(&["monitor", "--station", &station_a]);
    monitor.wait_for("monitoring");
    let mut raw = Watched::start(&["monitor", "--station", &station_a, "--raw"]);
    raw.wait_for("monitoring");

    let send = finish(
        linklab(&[
            "send",
            "--station",
            &station_a,
            "--port",
            "1",
            "--mycall",
            "N0CALL-1",
            "--to",
            "N0CALL-2",
            file.to_str().unwrap(),
        ]),
        "linklab send",
    );
    assert!(send.status.success(), "{}", tail(&send.stderr));
    assert!(
        text(&send.stdout).starts_with("sent 20480 bytes to N0CALL-2"),
        "{}",
        text(&send.stdout)
    );
    let (status, _, log) = listen.finish();
    assert!(status.success(), "{log}");
    assert!(log.contains("received 20480 octets from N0CALL-1"), "{log}");
    assert!(std::fs::read(&got).unwrap() == data, "data differs");

    // The monitors saw the transfer: our I frames and the peer's answers.
    monitor.interrupt();
    let (status, out, log) = monitor.finish();
    assert!(status.success(), "{log}");
    let out = text(&out);
    assert!(
        out.contains("port 1 TX") && out.contains("Fm N0CALL-1 To N0CALL-2"),
        "{out}"
    );
    assert!(out.contains("Fm N0CALL-2 To N0CALL-1"), "{out}");
    raw.interrupt();
    let (status, out, log) = raw.finish();
    assert!(status.success(), "{log}");
    let out = text(&out);
    assert!(out.contains("port 1 N0CALL-2>N0CALL-1"), "{out}");

    // The heard list of server A has N0CALL-2.
    let heard = finish(linklab(&["heard", "--station", &station_a]), "heard");
    assert!(heard.status.success(), "{}", text(&heard.stderr));
    let table = text(&heard.stdout);
    assert!(table.starts_with("port  callsign"), "{table}");
    assert!(
        table.lines().any(|l| l.starts_with("   1  N0CALL-2")),
        "{table}"
    );
    let json = finish(
        linklab(&["heard", "--station", &station_a, "--port", "1", "--json"]),
        "heard --json",
    );
    assert!(json.status.success(), "{}", text(&json.stderr));
    let list: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(list[0]["station"], "N0CALL-2");
    assert_eq!(list[0]["port"], 1);
    assert!(list[0]["last_heard"].as_str().unwrap().ends_with('Z'));
    let no_port = finish(
        linklab(&["heard", "--station", &station_a, "--port", "3"]),
        "heard --port 3",
    );
    assert_eq!(no_port.status.code(), Some(2));
    assert!(text(&no_port.stderr).contains("--port 3: the server has 1 radio port"));
    drop(channel);
    a.stop();
    b.stop();
}

#[test]
fn options_a_server_owns_are_refused_and_a_missing_server_is_clear() {
    for (option, value) in [
        ("--t1-ms", Some("2000")),
        ("--window", Some("7")),
        ("--n1", Some("128")),
        ("--srej", None),
        ("--ack-policy", Some("t2")),
        ("--kiss-port", Some("1")),
        ("--txdelay-ms", Some("300")),
        ("--persist", Some("63")),
        ("--mod128", None),
        ("--monitor", None),
    ] {
        let mut args = vec![
            "send",
            "--station",
            "127.0.0.1:8000",
            "--mycall",
            "N0CALL-1",
            "--to",
            "N0CALL-2",
            option,
        ];
        args.extend(value);
        args.push("no-such-file");
        let out = finish(linklab(&args), "send");
        assert_eq!(out.status.code(), Some(2), "{option}");
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!("{option} cannot be used with --station")),
            "{err}"
        );
    }
    let out = finish(
        linklab(&[
            "listen",
            "--kiss",
            "tcp:127.0.0.1:1",
            "--mycall",
            "N0CALL-1",
            "--port",
            "2",
        ]),
        "listen",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--port is the AGWPE radio port of --station"));
    let out = finish(
        linklab(&["connect", "--mycall", "N0CALL-1", "N0CALL-2"]),
        "connect",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--kiss <ADDRESS>|--station <ADDR:PORT>"));

    // Nobody on that port.
    let unused = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = unused.local_addr().unwrap().to_string();
    drop(unused);
    for args in [
        vec!["monitor", "--station", &address],
        vec!["heard", "--station", &address],
        vec!["listen", "--station", &address, "--mycall", "N0CALL-1"],
    ] {
        let out = finish(linklab(&args), args[0]);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!("cannot reach the AGWPE server at {address}")),
            "{err}"
        );
    }
}

#[test]
fn send_through_a_server_ends_on_sigterm_and_sighup_with_their_status() {
    // For the `--station` path: a service manager's
    // SIGTERM, or the terminal's SIGHUP, ends `send --station` as Ctrl-C
    // does (the link released through the server), with 128 + the signal.
    let channel = Channel::fast(2, 5);
    let a = Agw::start(&[channel.kiss(0)], &[]);
    let station = format!("127.0.0.1:{}", a.port);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file.bin");
    std::fs::write(&file, pattern(1024)).unwrap();
    for (name, status) in [("TERM", 143), ("HUP", 129)] {
        // Nobody answers N0CALL-9: send waits for its UA.
        let mut send = Watched::start(&[
            "send",
            "--station",
            &station,
            "--mycall",
            "N0CALL-1",
            "--to",
            "N0CALL-9",
            file.to_str().unwrap(),
        ]);
        send.wait_for("connecting to N0CALL-9");
        send.signal(name);
        let (exit, _, log) = send.finish();
        assert_eq!(exit.code(), Some(status), "SIG{name}: {log}");
        assert!(log.contains(&format!("SIG{name}")), "{log}");
    }
}
