//! `linklab listen`, `send` and `connect` end to end, through the KISS
//! reflector of the `cli` test module: a TCP server on 127.0.0.1 that
//! relays every chunk of bytes from one client to all the others, as a
//! shared radio channel with perfect reception would; and, where the
//! test is about losses and their recovery, through `linklab channel`
//! with bit errors.

mod cli;

use linklab_core::Engine;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use cli::channel::Channel;
use cli::{
    assert_both_succeeded, finish, interrupt, linklab, linklab_with_input, listen_once, tail, text,
    Hub,
};

use linklab_io::Station;
use linklab_link::Config;
use linklab_wire::kiss;

fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + i / 256) as u8).collect()
}

/// Sends 20 KB from N0CALL-1 to N0CALL-2 with `extra` options on both
/// sides and checks the copy byte for byte; returns the outputs.
fn transfer(dir: &Path, extra: &[&str], send_only: &[&str]) -> (Output, Output) {
    transfer_of(dir, 20 * 1024, extra, send_only)
}

/// As [`transfer`], of `len` octets.
fn transfer_of(dir: &Path, len: usize, extra: &[&str], send_only: &[&str]) -> (Output, Output) {
    let hub = Hub::start();
    let kiss = hub.address();
    transfer_over(
        dir,
        len,
        [&kiss, &kiss],
        || hub.wait_for_clients(1),
        extra,
        send_only,
    )
}

/// As [`transfer_of`], the sender on TNC `kiss[0]` and the listener on
/// `kiss[1]`; `ready` returns once the listener is on its TNC.
fn transfer_over(
    dir: &Path,
    len: usize,
    kiss: [&str; 2],
    ready: impl FnOnce(),
    extra: &[&str],
    send_only: &[&str],
) -> (Output, Output) {
    let input = dir.join("input.bin");
    let output = dir.join("output.bin");
    let data = payload(len);
    std::fs::write(&input, &data).unwrap();
    let mut args = vec![
        "listen", "--kiss", kiss[1], "--mycall", "N0CALL-2", "--once",
    ];
    let out_arg = output.to_str().unwrap();
    args.extend(["--out", out_arg]);
    args.extend(extra);
    let listener = linklab(&args);
    ready();
    let mut args = vec![
        "send", "--kiss", kiss[0], "--mycall", "N0CALL-1", "--to", "N0CALL-2",
    ];
    args.extend(extra);
    args.extend(send_only);
    args.push(input.to_str().unwrap());
    let sender = finish(linklab(&args), "send");
    let listener = finish(listener, "listen");
    assert_both_succeeded(&sender, &listener);
    let received = std::fs::read(&output).unwrap();
    assert_eq!(received.len(), data.len());
    assert!(received == data, "received data differ");
    let report = text(&sender.stdout);
    assert!(
        report.starts_with(&format!("sent {len} bytes to N0CALL-2 in "))
            && report.contains(" bit/s "),
        "{report}"
    );
    (sender, listener)
}

/// Waits (bounded) until `path` exists with at least `len` octets.
fn wait_for_file(path: &Path, len: u64) {
    let end = Instant::now() + cli::LIMIT;
    while std::fs::metadata(path).map_or(0, |m| m.len()) < len {
        assert!(
            Instant::now() < end,
            "{} never grew to {len}",
            path.display()
        );
        thread::sleep(Duration::from_millis(20));
    }
}

/// A transfer under way in a directory and on a hub of its own, slow
/// enough (the spec's T2 at the receiver, no poll by the sender) for a
/// test to act in its middle.
struct SlowTransfer {
    /// Holds the directory of the files below.
    _dir: tempfile::TempDir,
    /// Holds the hub the two run on.
    _hub: Hub,
    /// Where the listener writes.
    output: std::path::PathBuf,
    /// What the sender sends.
    data: Vec<u8>,
    listener: cli::Running,
    sender: cli::Running,
}

/// A listener writing to `output.bin` (leaving after one connection if
/// `once`), and a sender of `len` octets to it.
fn slow_transfer(len: usize, once: bool) -> SlowTransfer {
    let dir = tempfile::tempdir().unwrap();
    let hub = Hub::start();
    let input = dir.path().join("input.bin");
    let output = dir.path().join("output.bin");
    let data = payload(len);
    std::fs::write(&input, &data).unwrap();
    let kiss = hub.address();
    let mut args = vec![
        "listen",
        "--kiss",
        &kiss,
        "--mycall",
        "N0CALL-2",
        "--ack-policy",
        "t2",
        "--t2-ms",
        "200",
        "--out",
        output.to_str().unwrap(),
    ];
    if once {
        args.push("--once");
    }
    let listener = linklab(&args);
    hub.wait_for_clients(1);
    let sender = linklab(&[
        "send",
        "--kiss",
        &kiss,
        "--mycall",
        "N0CALL-1",
        "--to",
        "N0CALL-2",
        "--n1",
        "64",
        // No poll at the end of each burst: every window waits for the
        // receiver's T2, which is what makes the transfer slow.
        "--poll-last=false",
        input.to_str().unwrap(),
    ]);
    SlowTransfer {
        _dir: dir,
        _hub: hub,
        output,
        data,
        listener,
        sender,
    }
}

fn partial(path: &Path) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".partial");
    name.into()
}

/// Silent data loss: a sender interrupted mid-transfer must not leave a
/// file under the final name; the listener keeps `NAME.partial`, says how
/// many octets came and that the link was cut, and exits 1.
#[test]
fn interrupted_sender_leaves_only_a_partial_file_and_a_cut_log_line() {
    let SlowTransfer {
        _dir,
        _hub,
        output,
        data,
        listener,
        sender,
    } = slow_transfer(64 * 1024, true);
    wait_for_file(&partial(&output), 1024);
    assert!(!output.exists(), "a final name during the transfer");
    interrupt(&sender);
    let sender = finish(sender, "send");
    let listener = finish(listener, "listen");
    assert_eq!(sender.status.code(), Some(130), "{}", tail(&sender.stderr));
    let log = text(&sender.stderr);
    assert!(
        log.contains("linklab: interrupted: N0CALL-2 acknowledged ")
            && log.contains(" of 65536 octets; link ended with DM"),
        "{log}"
    );
    assert_eq!(
        listener.status.code(),
        Some(1),
        "{}",
        tail(&listener.stderr)
    );
    assert!(!output.exists(), "a cut transfer under the final name");
    let got = std::fs::read(partial(&output)).unwrap();
    assert!(!got.is_empty() && got.len() < data.len() && data.starts_with(&got));
    let log = text(&listener.stderr);
    let line = format!(
        "linklab: the link with N0CALL-1 was cut after {} octets (the peer sent DM); \
         incomplete data in {}",
        got.len(),
        partial(&output).display()
    );
    assert!(log.contains(&line), "{log}");
}

/// A listener whose peer has vanished says that it waits for the
/// release and how long; a second SIGINT quits at once with status 130.
#[test]
fn second_sigint_quits_at_once_with_130() {
    let SlowTransfer {
        _dir,
        _hub,
        output,
        listener,
        mut sender,
        ..
    } = slow_transfer(64 * 1024, false);
    wait_for_file(&partial(&output), 1024);
    // The peer disappears without a word.
    sender.child.kill().unwrap();
    sender.child.wait().unwrap();
    interrupt(&listener);
    thread::sleep(Duration::from_millis(500));
    interrupt(&listener);
    let listener = finish(listener, "listen");
    assert_eq!(
        listener.status.code(),
        Some(130),
        "{}",
        tail(&listener.stderr)
    );
    let log = text(&listener.stderr);
    assert!(
        log.contains(
            "linklab: releasing the link with N0CALL-1 (DISC): waiting up to 15 s for an answer; \
             Ctrl-C again to quit at once"
        ),
        "{log}"
    );
    assert!(
        log.contains("linklab: interrupted again; quitting at once"),
        "{log}"
    );
    assert!(!output.exists() && partial(&output).exists());
}

/// A transfer is under `NAME.partial` while it runs and gets its final
/// name only once the peer has released the link.
#[test]
fn normal_transfer_is_renamed_to_its_final_name_after_release() {
    let SlowTransfer {
        _dir,
        _hub,
        output,
        data,
        listener,
        sender,
    } = slow_transfer(8 * 1024, true);
    wait_for_file(&partial(&output), 64);
    assert!(!output.exists(), "a final name before the release");
    let sender = finish(sender, "send");
    let listener = finish(listener, "listen");
    assert!(sender.status.success(), "{}", tail(&sender.stderr));
    assert!(listener.status.success(), "{}", tail(&listener.stderr));
    assert!(
        std::fs::read(&output).unwrap() == data,
        "received data differ"
    );
    assert!(!partial(&output).exists());
    let log = text(&listener.stderr);
    let line = format!(
        "linklab: received 8192 octets from N0CALL-1, released by the peer (DISC) -> {}",
        output.display()
    );
    assert!(log.contains(&line), "{log}");
}

/// Sends `data` from `mycall` to a listener already on `hub`.
fn send_file(hub: &Hub, dir: &Path, mycall: &str, data: &[u8]) {
    let input = dir.join(format!("{mycall}.bin"));
    std::fs::write(&input, data).unwrap();
    let kiss = hub.address();
    let out = finish(
        linklab(&[
            "send",
            "--kiss",
            &kiss,
            "--mycall",
            mycall,
            "--to",
            "N0CALL-2",
            input.to_str().unwrap(),
        ]),
        "send",
    );
    assert!(out.status.success(), "{}", tail(&out.stderr));
}

/// One file per connection: FILE, then FILE.2; in a directory,
/// transfer-N-CALL. A listener stopped with nothing cut exits 0.
#[test]
fn each_connection_gets_its_own_file() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (payload(3000), payload(5000));
    for into_dir in [false, true] {
        let hub = Hub::start();
        let kiss = hub.address();
        let out = if into_dir {
            let d = dir.path().join("received");
            std::fs::create_dir(&d).unwrap();
            d
        } else {
            dir.path().join("got.bin")
        };
        let listener = linklab(&[
            "listen",
            "--kiss",
            &kiss,
            "--mycall",
            "N0CALL-2",
            "--out",
            out.to_str().unwrap(),
        ]);
        hub.wait_for_clients(1);
        send_file(&hub, dir.path(), "N0CALL-1", &first);
        send_file(&hub, dir.path(), "N0CALL-3", &second);
        let names = if into_dir {
            [
                out.join("transfer-1-N0CALL-1"),
                out.join("transfer-2-N0CALL-3"),
            ]
        } else {
            [out.clone(), dir.path().join("got.bin.2")]
        };
        wait_for_file(&names[1], second.len() as u64);
        interrupt(&listener);
        let listener = finish(listener, "listen");
        assert!(listener.status.success(), "{}", tail(&listener.stderr));
        assert!(std::fs::read(&names[0]).unwrap() == first);
        assert!(std::fs::read(&names[1]).unwrap() == second);
    }
}

/// A TCP port that counts nothing but whether anyone connected to it.
fn untouched_tnc() -> (TcpListener, String) {
    let tnc = TcpListener::bind("127.0.0.1:0").unwrap();
    tnc.set_nonblocking(true).unwrap();
    let address = format!("tcp:{}", tnc.local_addr().unwrap());
    (tnc, address)
}

fn assert_untouched(tnc: &TcpListener) {
    assert!(
        matches!(tnc.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the TNC was touched"
    );
}

#[test]
fn sending_to_own_callsign_exits_2_before_touching_the_tnc() {
    let (tnc, kiss) = untouched_tnc();
    let out = finish(
        linklab(&[
            "send", "--kiss", &kiss, "--mycall", "N0CALL-1", "--to", "n0call-1", "x",
        ]),
        "send",
    );
    assert_eq!(out.status.code(), Some(2), "{}", tail(&out.stderr));
    let log = text(&out.stderr);
    assert!(
        log.contains("linklab: error: N0CALL-1 is this station's own callsign (--mycall)"),
        "{log}"
    );
    assert_untouched(&tnc);
}

#[test]
fn bad_window_n1_t1_path_or_kiss_time_exits_2_naming_the_flag() {
    let (tnc, kiss) = untouched_tnc();
    let nine = "D1,D2,D3,D4,D5,D6,D7,D8,D9";
    for (bad, flag) in [
        (&["--window", "8"][..], "--window: "),
        (&["--window", "100", "--mod128", "--srej"][..], "--window: "),
        (&["--n1", "0"][..], "--n1: "),
        (&["--n1", "4096"][..], "--n1: "),
        (&["--t1-ms", "0"][..], "--t1-ms: "),
        (&["--t3-ms", "0"][..], "--t3-ms: "),
        (&["--via", nine][..], "--via: "),
        (&["--via", "N0CALL-2"][..], "--via: "),
        // KISS sends them as one octet of 10 ms units: at most 2550 ms.
        (&["--txdelay-ms", "2560"][..], "--txdelay-ms: "),
        (&["--slot-ms", "3000"][..], "--slot-ms: "),
        (&["--txtail-ms", "2551"][..], "--txtail-ms: "),
    ] {
        let mut args = vec![
            "send", "--kiss", &kiss, "--mycall", "N0CALL-1", "--to", "N0CALL-2",
        ];
        args.extend(bad);
        args.push("x");
        let out = finish(linklab(&args), "send");
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", tail(&out.stderr));
        let log = text(&out.stderr);
        assert!(
            log.contains(&format!("linklab: error: {flag}")),
            "{bad:?}: {log}"
        );
    }
    assert_untouched(&tnc);
}

/// 100 KB with every option at its default: the acknowledgement policy
/// and window the command line chooses must deliver it byte for byte.
/// The sender's report (time and rate) is printed, never asserted.
#[test]
fn transfer_100k_with_default_settings() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (sender, _) = transfer_of(dir.path(), 100 * 1024 + 100, &[], &[]);
    eprintln!(
        "100 KB with defaults: {} (wall {:.3} s)",
        text(&sender.stdout).trim(),
        started.elapsed().as_secs_f64()
    );
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

/// 20 KB over `linklab channel` at 38400 bit/s with bit errors (seeded),
/// `extra` on both sides: the copy is byte-exact, and frames were lost on
/// the way, so the recovery procedures did their work.
fn transfer_over_a_lossy_channel(extra: &[&str], send_only: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("stats.json");
    let channel = Channel::fast_with(
        2,
        7,
        &["--ber", "3e-5", "--stats-json", stats.to_str().unwrap()],
    );
    let (a, b) = (channel.kiss(0), channel.kiss(1));
    let ready = || thread::sleep(Duration::from_millis(300));
    transfer_over(dir.path(), 20 * 1024, [&a, &b], ready, extra, send_only);
    let (status, _) = channel.interrupt();
    assert!(status.success());
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    let lost: u64 = (0..2)
        .map(|i| json["stations"][i]["lost_to_errors"].as_u64().unwrap())
        .sum();
    assert!(lost > 0, "no frame was lost: {json}");
}

#[test]
fn transfer_20k_modulo_8_rej_recovers_from_bit_errors_on_the_emulated_channel() {
    transfer_over_a_lossy_channel(&[], &[]);
}

#[test]
fn transfer_20k_modulo_128_srej_recovers_from_bit_errors_on_the_emulated_channel() {
    transfer_over_a_lossy_channel(&["--srej", "--window", "16"], &["--mod128"]);
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
        log.contains(
            "has no known scheme: write tcp:HOST:PORT, serial:DEVICE:BAUD or axudp:BIND@PEER"
        ),
        "{log}"
    );
}

#[test]
fn connect_sends_lines_with_cr_and_releases_at_end_of_input() {
    let hub = Hub::start();
    let kiss = hub.address();
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("session.txt");
    let listener = listen_once(&kiss, &output);
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
    let listener = listen_once(&kiss, &output);
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
