//! `linklab listen`, `send` and `connect` end to end, through the KISS
//! reflector of the `cli` test module: a TCP server on 127.0.0.1 that
//! relays every chunk of bytes from one client to all the others, as a
//! shared radio channel with perfect reception would.

mod cli;

use linklab_core::Engine;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use cli::{finish, linklab, linklab_with_input, tail, text, Hub};

use linklab_io::Station;
use linklab_link::Config;
use linklab_wire::kiss;

fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + i / 256) as u8).collect()
}

/// Sends 20 KB from N0CALL-1 to N0CALL-2 with `extra` options on both
/// sides and checks the copy byte for byte; returns the outputs.
fn transfer(dir: &Path, extra: &[&str], send_only: &[&str]) -> (Output, Output) {
    let hub = Hub::start();
    let kiss = hub.address();
    let input = dir.join("input.bin");
    let output = dir.join("output.bin");
    let data = payload(20 * 1024);
    std::fs::write(&input, &data).unwrap();
    let mut args = vec!["listen", "--kiss", &kiss, "--mycall", "N0CALL-2", "--once"];
    let out_arg = output.to_str().unwrap();
    args.extend(["--out", out_arg]);
    args.extend(extra);
    let listener = linklab(&args);
    hub.wait_for_clients(1);
    let mut args = vec![
        "send", "--kiss", &kiss, "--mycall", "N0CALL-1", "--to", "N0CALL-2",
    ];
    args.extend(extra);
    args.extend(send_only);
    args.push(input.to_str().unwrap());
    let sender = finish(linklab(&args), "send");
    let listener = finish(listener, "listen");
    assert!(
        sender.status.success(),
        "send failed:\n{}\nlisten:\n{}",
        tail(&sender.stderr),
        tail(&listener.stderr)
    );
    assert!(
        listener.status.success(),
        "listen failed:\n{}",
        tail(&listener.stderr)
    );
    let received = std::fs::read(&output).unwrap();
    assert_eq!(received.len(), data.len());
    assert!(received == data, "received data differ");
    let report = text(&sender.stdout);
    assert!(
        report.starts_with("sent 20480 bytes to N0CALL-2 in ") && report.contains(" bytes/s "),
        "{report}"
    );
    (sender, listener)
}

#[test]
fn transfer_20k_modulo_8() {
    let dir = tempfile::tempdir().unwrap();
    let (sender, listener) = transfer(dir.path(), &["--t2-ms", "100", "--monitor"], &[]);
    let log = text(&sender.stderr);
    assert!(
        log.contains("linklab: connected to N0CALL-2 (AX.25 v2.0, modulo 8)"),
        "{log}"
    );
    assert!(log.contains(" N0CALL-1>N0CALL-2: <SABM C P>"), "{log}");
    let log = text(&listener.stderr);
    assert!(
        log.contains("linklab: connected from N0CALL-1 (AX.25 v2.0, modulo 8)"),
        "{log}"
    );
    assert!(
        log.contains("linklab: disconnected from N0CALL-1: released by the peer (DISC)"),
        "{log}"
    );
    assert!(log.contains("RX "), "{log}");
}

#[test]
fn transfer_20k_modulo_128_srej_polling() {
    let dir = tempfile::tempdir().unwrap();
    let (sender, _) = transfer(
        dir.path(),
        &[
            "--srej",
            "--poll-last",
            "--window",
            "32",
            "--txdelay-ms",
            "300",
            "--persist",
            "63",
        ],
        &["--mod128"],
    );
    let log = text(&sender.stderr);
    assert!(log.contains("(AX.25 v2.2, modulo 128)"), "{log}");
}

#[test]
fn send_to_nobody_fails_clearly() {
    let hub = Hub::start();
    let kiss = hub.address();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.bin");
    std::fs::write(&input, b"hello").unwrap();
    let args = [
        "send",
        "--kiss",
        &kiss,
        "--mycall",
        "N0CALL-1",
        "--to",
        "N0CALL-9",
        "--t1-ms",
        "100",
        "--n2",
        "3",
        input.to_str().unwrap(),
    ];
    let started = Instant::now();
    let out = finish(linklab(&args), "send");
    assert!(!out.status.success());
    let log = text(&out.stderr);
    assert!(
        log.contains(
            "linklab: error: the link with N0CALL-9 failed: no answer to N2 connection requests"
        ),
        "{log}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn refusal_by_dm_fails_clearly() {
    let hub = Hub::start();
    // A station that does not listen, run in a thread on the hub.
    let mut tnc = TcpStream::connect(("127.0.0.1", hub.port)).unwrap();
    let mut station = Station::new("N0CALL-2".parse().unwrap(), Config::default()).unwrap();
    thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let now = linklab_core::Instant::ZERO;
        while let Ok(n) = tnc.read(&mut buf) {
            if n == 0 {
                break;
            }
            station.handle_kiss_bytes(now, &buf[..n]);
            while let Some(frame) = station.poll_transmit(now) {
                let bytes = kiss::encode(&kiss::Frame::data(frame.encode()));
                tnc.write_all(&bytes).ok();
            }
        }
    });
    hub.wait_for_clients(1);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.bin");
    std::fs::write(&input, b"hello").unwrap();
    let kiss = hub.address();
    let args = [
        "send",
        "--kiss",
        &kiss,
        "--mycall",
        "N0CALL-1",
        "--to",
        "N0CALL-2",
        "--mod128",
        input.to_str().unwrap(),
    ];
    let out = finish(linklab(&args), "send");
    assert!(!out.status.success());
    let log = text(&out.stderr);
    assert!(
        log.contains("linklab: error: N0CALL-2 refused the connection (DM)"),
        "{log}"
    );
}

#[test]
fn bad_kiss_address_is_explained() {
    let out = finish(
        linklab(&[
            "send",
            "--kiss",
            "localhost:8001",
            "--mycall",
            "N0CALL",
            "--to",
            "N0CALL-2",
            "x",
        ]),
        "send",
    );
    assert!(!out.status.success());
    let log = text(&out.stderr);
    assert!(
        log.contains("has no known scheme: write tcp:HOST:PORT or serial:DEVICE:BAUD"),
        "{log}"
    );
}

#[test]
fn connect_sends_lines_with_cr_and_releases_at_end_of_input() {
    let hub = Hub::start();
    let kiss = hub.address();
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("session.txt");
    let listener = linklab(&[
        "listen",
        "--kiss",
        &kiss,
        "--mycall",
        "N0CALL-2",
        "--once",
        "--out",
        output.to_str().unwrap(),
    ]);
    hub.wait_for_clients(1);
    let caller = linklab_with_input(
        &[
            "connect",
            "--kiss",
            &kiss,
            "--mycall",
            "N0CALL-1",
            "--poll-last",
            "N0CALL-2",
        ],
        Some(b"hello\nworld\n"),
    );
    let caller = finish(caller, "connect");
    let listener = finish(listener, "listen");
    assert!(caller.status.success(), "{}", tail(&caller.stderr));
    assert!(listener.status.success(), "{}", tail(&listener.stderr));
    assert_eq!(std::fs::read(&output).unwrap(), b"hello\rworld\r");
    let log = text(&caller.stderr);
    assert!(
        log.contains("linklab: disconnected from N0CALL-2: released at our request"),
        "{log}"
    );
}

#[test]
fn tnc_closing_the_connection_is_a_clear_error() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        // Accept, wait a little, hang up.
        if let Ok((stream, _)) = listener.accept() {
            thread::sleep(Duration::from_millis(200));
            drop(stream);
        }
    });
    let kiss = format!("tcp:127.0.0.1:{port}");
    let out = finish(
        linklab(&["listen", "--kiss", &kiss, "--mycall", "N0CALL-2"]),
        "listen",
    );
    assert!(!out.status.success());
    let log = text(&out.stderr);
    assert!(
        log.contains("linklab: error: the KISS TNC closed the connection"),
        "{log}"
    );
}

/// `socat` available, or (outside CI) a note that the serial test is skipped.
fn socat_available() -> bool {
    let found = Command::new("socat").arg("-V").output().is_ok();
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "socat is required under CI (apt-get install socat)"
        );
        eprintln!("socat not installed: skipping the serial-port test");
    }
    found
}

/// The serial path (`--kiss serial:DEVICE:BAUD`, tokio-serial) against a
/// pseudo-terminal that socat joins to the KISS hub: the sender talks to a
/// "TNC on a serial port", the listener to the hub over TCP.
#[test]
fn transfer_over_a_serial_port() {
    if !socat_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let hub = Hub::start();
    let tty = dir.path().join("tnc0");
    let mut bridge = Command::new("socat")
        .arg(format!("pty,raw,echo=0,link={}", tty.display()))
        .arg(format!("tcp:127.0.0.1:{}", hub.port))
        .stderr(Stdio::null())
        .spawn()
        .expect("socat runs");
    hub.wait_for_clients(1);
    let input = dir.path().join("input.bin");
    let output = dir.path().join("output.bin");
    let data = payload(4 * 1024);
    std::fs::write(&input, &data).unwrap();
    let kiss = hub.address();
    let listener = linklab(&[
        "listen",
        "--kiss",
        &kiss,
        "--mycall",
        "N0CALL-2",
        "--once",
        "--out",
        output.to_str().unwrap(),
    ]);
    hub.wait_for_clients(2);
    let serial = format!("serial:{}:9600", tty.display());
    let sender = finish(
        linklab(&[
            "send",
            "--kiss",
            &serial,
            "--mycall",
            "N0CALL-1",
            "--to",
            "N0CALL-2",
            input.to_str().unwrap(),
        ]),
        "send",
    );
    let listener = finish(listener, "listen");
    bridge.kill().ok();
    bridge.wait().ok();
    assert!(
        sender.status.success(),
        "send failed:\n{}",
        tail(&sender.stderr)
    );
    assert!(
        listener.status.success(),
        "listen failed:\n{}",
        tail(&listener.stderr)
    );
    assert!(
        std::fs::read(&output).unwrap() == data,
        "received data differ"
    );
}
