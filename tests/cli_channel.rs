//! `linklab channel` as a process: clients over TCP and a pseudo-terminal,
//! the statistics and capture at SIGINT, a digipeater given on the command
//! line, and the faults a server must survive (a busy port, a bad file,
//! garbage, a client that never reads, clients that leave, 64 clients at
//! once). Every run is bounded in time.

mod cli;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use cli::channel::{Channel, LIMIT};

use linklab_wire::ax25::{Address, Frame, Pid};
use linklab_wire::kiss;
use linklab_wire::pcap::PcapReader;

fn ui(from: &str, text: &str) -> Vec<u8> {
    let src: Address = from.parse().unwrap();
    Frame::ui(
        "QST".parse().unwrap(),
        src,
        &[],
        Pid::NoLayer3,
        text.as_bytes().to_vec(),
    )
    .unwrap()
    .encode()
}

fn kiss_data(body: &[u8]) -> Vec<u8> {
    kiss::encode(&kiss::Frame::data(body.to_vec()))
}

/// Reads KISS frames from `stream` until `n` have arrived.
fn read_frames(stream: &mut impl Read, n: usize) -> Vec<kiss::Frame> {
    let mut decoder = kiss::Decoder::new(10_000);
    let mut frames = Vec::new();
    let mut buf = [0u8; 4096];
    while frames.len() < n {
        let got = stream.read(&mut buf).expect("frame within the time limit");
        assert!(got > 0, "closed after {} frames", frames.len());
        decoder.push(&buf[..got]);
        for f in decoder.by_ref() {
            frames.push(f.unwrap());
        }
    }
    frames
}

/// A fast channel: 100 Mbit/s, no TXDELAY or tail, P = 255.
const FAST: [&str; 10] = [
    "--bitrate",
    "100000000",
    "--txdelay-ms",
    "0",
    "--txtail-ms",
    "0",
    "--persist",
    "255",
    "--slot-ms",
    "10",
];

#[test]
fn frames_cross_the_channel_and_sigint_leaves_statistics_and_an_intact_capture() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("air.pcap");
    let stats = dir.path().join("stats.json");
    let ch = Channel::start(&[
        "--stations",
        "3",
        "--base-port",
        "0",
        "--bitrate",
        "9600",
        "--txdelay-ms",
        "50",
        "--monitor",
        "--capture",
        capture.to_str().unwrap(),
        "--stats-json",
        stats.to_str().unwrap(),
    ]);
    let mut a = ch.connect(0);
    let mut b = ch.connect(1);
    let mut c = ch.connect(2);
    std::thread::sleep(Duration::from_millis(100));
    let hello = ui("N0A", "hello");
    a.write_all(&kiss_data(&hello)).unwrap();
    assert_eq!(read_frames(&mut b, 1), [kiss::Frame::data(hello.clone())]);
    assert_eq!(read_frames(&mut c, 1), [kiss::Frame::data(hello.clone())]);
    let (status, out) = ch.interrupt();
    assert!(status.success(), "{status:?}");
    assert!(out.contains("s0: N0A>QST: <UI C> [F0] hello"), "{out}");
    assert!(
        out.contains("channel radio (9600 bit/s): 1 transmissions"),
        "{out}"
    );
    let bytes = std::fs::read(&capture).unwrap();
    let records: Vec<_> = PcapReader::new(&bytes)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].data, hello.as_slice());
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert_eq!(json["stations"][0]["frames_sent"], 1);
    assert_eq!(json["stations"][1]["delivered"], 1);
    assert_eq!(json["lateness"]["count"], 2);
}

#[test]
fn a_station_given_on_the_command_line_digipeats() {
    let ch = Channel::start(
        &[
            ["--stations", "3", "--base-port", "0", "--monitor"].as_slice(),
            &["--digipeater", "s1=DIGI-1"],
            &FAST,
        ]
        .concat(),
    );
    let mut a = ch.connect(0);
    let mut c = ch.connect(2);
    std::thread::sleep(Duration::from_millis(100));
    let via = |h: bool| {
        let mut digi: Address = "DIGI-1".parse().unwrap();
        digi.set_c_or_h(h);
        Frame::ui(
            "QST".parse().unwrap(),
            "N0A".parse().unwrap(),
            &[digi],
            Pid::NoLayer3,
            b"relay".to_vec(),
        )
        .unwrap()
        .encode()
    };
    a.write_all(&kiss_data(&via(false))).unwrap();
    // c hears a, and then s1's repeat with DIGI-1's H bit set.
    assert_eq!(
        read_frames(&mut c, 2),
        [kiss::Frame::data(via(false)), kiss::Frame::data(via(true))]
    );
    let (status, out) = ch.interrupt();
    assert!(status.success(), "{status:?}");
    assert!(out.contains("s1: N0A>QST,DIGI-1*: <UI C>"), "{out}");
    assert!(
        out.contains("s1 repeated 1 frames as a digipeater"),
        "{out}"
    );

    for (option, why) in [
        (
            "s3=DIGI",
            "--digipeater s3=DIGI: no station named `s3` (the stations are s0, s1, s2)",
        ),
        ("s1", "\"s1\": use STATION=CALL, e.g. s1=DIGI-1"),
        ("s1=DIGI-16", "SSID 16 is out of range"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_linklab"))
            .args([
                "channel",
                "--stations",
                "3",
                "--base-port",
                "0",
                "--digipeater",
                option,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{option}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{option}: {err}");
    }
}

#[test]
fn a_busy_port_is_a_clear_error_at_start() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let out = Command::new(env!("CARGO_BIN_EXE_linklab"))
        .args([
            "channel",
            "--stations",
            "1",
            "--base-port",
            &port.to_string(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("station s0: cannot listen on 127.0.0.1:{port}: ")),
        "{err}"
    );
}

#[test]
fn a_fast_channel_says_at_start_what_its_kiss_timings_let_it_carry() {
    // 1 Mbit/s with the default KISS timings carried 5.6 kbit/s, and
    // nothing said why.
    let mut child = Command::new(env!("CARGO_BIN_EXE_linklab"))
        .args([
            "channel",
            "--stations",
            "1",
            "--base-port",
            "0",
            "--bitrate",
            "1000000",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stderr.take().unwrap()),
        &mut line,
    )
    .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    for want in [
        "TXDELAY 300 ms",
        "TXTAIL 100 ms",
        "750 ms per transmission",
        "at most about 5.4 kbit/s at 1000000 bit/s",
        "--txdelay-ms",
    ] {
        assert!(line.contains(want), "no {want:?} in {line:?}");
    }
}

#[test]
fn a_bad_channel_file_is_refused_with_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(
        &file,
        "[[channel]]\nname = \"vhf\"\nbitrate = 1200\n[[station]]\nname = \"a\"\npersistence = 300\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_linklab"))
        .arg("channel")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.toml: line 6, column 15: persistence: 300 is out of range 0-255"),
        "{err}"
    );
}

#[test]
fn garbage_a_stalled_reader_and_a_client_that_leaves_disturb_no_one_else() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("stats.json");
    let mut args = vec!["--stations", "4", "--base-port", "0", "--stats-json"];
    args.push(stats.to_str().unwrap());
    args.extend(FAST);
    let ch = Channel::start(&args);
    let mut sender = ch.connect(0);
    let mut reader = ch.connect(1);
    let _stalled = ch.connect(2); // never read
                                  // The reader is attached once a frame reaches it; station 3 has no
                                  // client yet, so this one is dropped there.
    let hello = ui("N0A", "hello");
    sender.write_all(&kiss_data(&hello)).unwrap();
    assert_eq!(read_frames(&mut reader, 1), [kiss::Frame::data(hello)]);
    let mut leaver = ch.connect(3);
    leaver.write_all(b"\x01\x02 not KISS at all \r\n").unwrap();
    // A frame, then gone: the frame still goes on the air.
    let parting = ui("N0D", "bye");
    leaver.write_all(&kiss_data(&parting)).unwrap();
    drop(leaver);
    assert_eq!(read_frames(&mut reader, 1), [kiss::Frame::data(parting)]);
    // Far more than a stalled client's queue and the socket buffers (up
    // to 4 MB to send and as much to receive on Linux) hold. The sender
    // keeps at most AHEAD frames beyond what the reader has: the channel
    // holds 256 frames for a client that reads slowly, and on a loaded
    // machine a reader kept off the CPU for a moment must not be taken
    // for one.
    const AHEAD: usize = 64;
    let big = ui("N0A", &"x".repeat(1000));
    let expected = kiss::Frame::data(big.clone());
    let n = 12_000;
    let (progress, read_so_far) = std::sync::mpsc::channel::<usize>();
    let writer = std::thread::spawn(move || {
        let mut read = 0;
        for sent in 0..n {
            while sent - read >= AHEAD {
                read = read_so_far.recv().expect("the reader reports");
            }
            sender.write_all(&kiss_data(&big)).unwrap();
        }
        sender
    });
    let mut decoder = kiss::Decoder::new(10_000);
    let mut buf = [0u8; 65_536];
    let mut got = 0;
    while got < n {
        let len = reader.read(&mut buf).expect("frames within the time limit");
        assert!(len > 0, "closed after {got} frames");
        decoder.push(&buf[..len]);
        for frame in decoder.by_ref() {
            assert_eq!(frame.unwrap(), expected);
            got += 1;
        }
        // The writer is gone once it has sent the last frame.
        let _ = progress.send(got);
    }
    assert_eq!(got, n, "the reading client gets every frame");
    let _sender = writer.join().unwrap();
    let (status, _) = ch.interrupt();
    assert!(status.success());
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    let s = &json["stations"];
    assert_eq!(s[3]["garbage_octets"], 21);
    assert_eq!(s[1]["delivered"], n + 2);
    assert_eq!(s[1]["dropped_slow_client"], 0);
    assert!(s[2]["dropped_slow_client"].as_u64().unwrap() > 0, "{json}");
    assert_eq!(s[3]["dropped_no_client"], n + 1, "{json}");
}

#[test]
fn sixty_four_clients_at_once() {
    let mut args = vec!["--stations", "4", "--base-port", "0"];
    args.extend(FAST);
    let ch = Channel::start(&args);
    let mut clients: Vec<(usize, TcpStream)> =
        (0..64).map(|i| (i % 4, ch.connect(i % 4))).collect();
    std::thread::sleep(Duration::from_millis(200));
    let frame = ui("N0A", "to all");
    clients[0].1.write_all(&kiss_data(&frame)).unwrap();
    for (station, client) in clients.iter_mut().skip(1) {
        if *station != 0 {
            assert_eq!(read_frames(client, 1), [kiss::Frame::data(frame.clone())]);
        }
    }
    let (status, out) = ch.interrupt();
    assert!(status.success());
    assert!(out.contains("1 frames"), "{out}");
}

#[test]
fn a_pseudo_terminal_is_a_station_too() {
    let mut args = vec!["--stations", "2", "--base-port", "0", "--pty"];
    args.extend(FAST);
    let ch = Channel::start(&args);
    assert_eq!(ch.ptys.len(), 2);
    let mut tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&ch.ptys[0])
        .unwrap();
    let mut tcp = ch.connect(1);
    std::thread::sleep(Duration::from_millis(100));
    let from_tty = ui("N0A", "over the serial line");
    tty.write_all(&kiss_data(&from_tty)).unwrap();
    assert_eq!(read_frames(&mut tcp, 1), [kiss::Frame::data(from_tty)]);
    let to_tty = ui("N0B", "and back");
    tcp.write_all(&kiss_data(&to_tty)).unwrap();
    let reader = std::thread::spawn(move || read_frames(&mut tty, 1));
    let start = Instant::now();
    while !reader.is_finished() {
        assert!(start.elapsed() < LIMIT, "nothing came out of the pty");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(reader.join().unwrap(), [kiss::Frame::data(to_tty)]);
}
