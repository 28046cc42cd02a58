//! `linklab station` as a process on `linklab channel`, with callers that
//! are other `linklab` processes on other stations of the channel, an
//! AGWPE client and a KISS client of the station, and a TCP service the
//! test runs: everything at once on one port, reload while a transfer
//! runs, a bad file on reload, faults, and the stop. Every wait is on a
//! log line, a process's output or a file, bounded in time.

mod cli;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use cli::caller::Caller;
use cli::channel::Channel;
use cli::station::{status, Station};
use cli::{finish_within, interrupt, linklab, text};
use linklab_wire::ax25::{Address, AddressField, CommandResponse, Frame, Pid};
use linklab_wire::control::{Control, Modulus, Unnumbered};
use linklab_wire::kiss;

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

const TRANSFER_LIMIT: Duration = Duration::from_secs(180);

fn call(text: &str) -> Address {
    text.parse().unwrap()
}

/// The `[[port]]` of a station on `kiss`, with the fast channel's link
/// settings.
fn port(kiss: &str) -> String {
    format!(
        r#"
[[port]]
name = "vhf"
kiss = "{kiss}"
callsigns = ["N0CALL-1"]
aliases = ["RELAY"]
digipeat = true
txdelay-ms = 20
txtail-ms = 10
slot-ms = 10
t1-ms = 2000
"#
    )
}

fn head(dir: &Path) -> String {
    format!(
        r#"
[station]
callsign = "N0CALL"
control = "{}"

[agw]
listen = "127.0.0.1:0"

[kiss-server]
listen = "127.0.0.1:0"
"#,
        dir.join("station.sock").display()
    )
}

/// A TCP service on loopback: greets, then sends each line back in
/// capitals, until the peer closes.
fn capitals_service() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            thread::spawn(move || {
                let mut out = stream.try_clone().unwrap();
                out.write_all(b"capitals service ready\n").unwrap();
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if out
                        .write_all(format!("{}\n", line.to_uppercase()).as_bytes())
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    port
}

/// Collects the AX.25 frames a KISS client of the station gets.
fn kiss_frames(port: u16) -> mpsc::Receiver<Vec<u8>> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut decoder = kiss::Decoder::new(4096);
        let mut buf = [0u8; 4096];
        while let Ok(n) = stream.read(&mut buf) {
            if n == 0 {
                return;
            }
            decoder.push(&buf[..n]);
            while let Some(Ok(frame)) = decoder.next() {
                if let kiss::Command::Data(data) = frame.command {
                    if tx.send(data).is_err() {
                        return;
                    }
                }
            }
        }
    });
    rx
}

fn kiss_data(frame: Vec<u8>) -> Vec<u8> {
    let mut out = Vec::new();
    kiss::encode_into(
        &kiss::Frame {
            port: kiss::Port::default(),
            command: kiss::Command::Data(frame),
        },
        &mut out,
    );
    out
}

/// A file-drop service, N0CALL-5, into `dir/drop` (made here): the
/// directory and the `[[service]]` table.
fn drop_service(dir: &Path) -> (PathBuf, String) {
    let drop_dir = dir.join("drop");
    std::fs::create_dir(&drop_dir).unwrap();
    let table = format!(
        "\n[[service]]\ncallsign = \"N0CALL-5\"\nbuiltin = \"drop\"\ndirectory = \"{}\"\n",
        drop_dir.display()
    );
    (drop_dir, table)
}

/// The files in directory `dir`.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}

/// A SABM from N0CALL-7 to the station's echo service N0CALL-4, as a
/// KISS data frame.
fn sabm_to_echo() -> Vec<u8> {
    let address = AddressField::new(
        call("N0CALL-4"),
        call("N0CALL-7"),
        &[],
        CommandResponse::Command,
    )
    .unwrap();
    let sabm = Frame::new(
        address,
        Modulus::Mod8,
        Control::U {
            kind: Unnumbered::Sabm,
            pf: true,
        },
        None,
        Vec::new(),
    )
    .unwrap();
    kiss_data(sabm.encode())
}

/// Reads what the station sends its TNC `tnc` (the test) until the UA
/// to N0CALL-7 (at most 60 s).
fn wait_for_ua(tnc: &mut TcpStream) {
    tnc.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut decoder = kiss::Decoder::new(4096);
    let mut buf = [0u8; 4096];
    loop {
        let n = tnc.read(&mut buf).expect("the station answers");
        assert!(n > 0, "the station closed the TNC");
        decoder.push(&buf[..n]);
        for item in decoder.by_ref() {
            if let Ok(kiss::Frame {
                command: kiss::Command::Data(frame),
                ..
            }) = item
            {
                let (field, used) = AddressField::decode(&frame).unwrap();
                if field.dest().callsign() == call("N0CALL-7").callsign()
                    && frame[used] & !0x10 == 0x63
                {
                    return;
                }
            }
        }
    }
}

#[test]
fn every_service_at_once_on_one_port() {
    let ch = Channel::fast(6, 11);
    let dir = tempfile::tempdir().unwrap();
    let drop_dir = dir.path().join("drop");
    std::fs::create_dir(&drop_dir).unwrap();
    let script = dir.path().join("hello.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho \"hello $LINKLAB_CALLER, this is $LINKLAB_CALLED ($1)\"\n\
         while read line; do echo \"got: $line\"; [ \"$line\" = bye ] && exit 0; done\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x", script.to_str().unwrap()])
        .status()
        .unwrap();
    let tcp = capitals_service();
    let config = format!(
        r#"{}{}
[[service]]
callsign = "N0CALL-2"
program = ["{}", "%U"]

[[service]]
callsign = "N0CALL-5"
builtin = "drop"
directory = "{}"

[[service]]
callsign = "N0CALL-6"
tcp = "127.0.0.1:{tcp}"

[[beacon]]
port = "vhf"
via = ["WIDE1-1"]
text = "linklab test station"
every-s = 10

[dtn]
port = "vhf"
eid = "ipn:1.0"
callsign = "N0CALL-12"
store = "{}"
app-socket = "{}"
ax25-peers = ["N0CALL-13=ipn:2.*"]
"#,
        head(dir.path()),
        port(&ch.kiss(0)),
        script.display(),
        drop_dir.display(),
        dir.path().join("dtn-store").display(),
        dir.path().join("dtn.sock").display(),
    );
    let station = Station::start(dir.path(), &config);
    let heard = kiss_frames(station.kiss.unwrap());

    // 1. 50 KB into the file drop, from station s1.
    let to_drop = pattern(50_000, 1);
    let drop_file = dir.path().join("to-drop.bin");
    std::fs::write(&drop_file, &to_drop).unwrap();
    let drop_send = linklab(&[
        "send",
        "--kiss",
        &ch.kiss(1),
        "--mycall",
        "N0CALL-7",
        "--to",
        "N0CALL-5",
        "--t1-ms",
        "2000",
        drop_file.to_str().unwrap(),
    ]);
    // 2. 50 KB from an AGWPE program on the station to `listen` on s2.
    let via_agw = pattern(50_000, 2);
    let agw_file = dir.path().join("via-agw.bin");
    std::fs::write(&agw_file, &via_agw).unwrap();
    let got_agw = dir.path().join("got-agw.bin");
    let listener = linklab(&[
        "listen",
        "--kiss",
        &ch.kiss(2),
        "--mycall",
        "N0CALL-8",
        "--once",
        "--out",
        got_agw.to_str().unwrap(),
    ]);
    let agw = station.agw_address();
    let agw_send = linklab(&[
        "send",
        "--station",
        &agw,
        "--mycall",
        "N0CALL-11",
        "--to",
        "N0CALL-8",
        agw_file.to_str().unwrap(),
    ]);
    // 3. A DTN bundle from the station's node to a node on s5, with its
    //    delivery report.
    station.wait_for("the DTN node", |l| l.contains("applications on"));
    let peer_store = dir.path().join("peer-store");
    let peer_socket = dir.path().join("peer.sock");
    let peer = linklab(&[
        "dtn",
        "node",
        "--eid",
        "ipn:2.0",
        "--store",
        peer_store.to_str().unwrap(),
        "--app-socket",
        peer_socket.to_str().unwrap(),
        "--kiss",
        &ch.kiss(5),
        "--mycall",
        "N0CALL-13",
        "--t1-ms",
        "2000",
        "--ax25-peer",
        "N0CALL-12=ipn:1.*",
    ]);
    let bundle = pattern(20_000, 4);
    let bundle_file = dir.path().join("bundle.bin");
    std::fs::write(&bundle_file, &bundle).unwrap();
    let got_bundle = dir.path().join("got-bundle.bin");
    let until = Instant::now() + Duration::from_secs(30);
    while !peer_socket.exists() {
        assert!(Instant::now() < until, "the peer node did not start");
        thread::sleep(Duration::from_millis(50));
    }
    let recv = linklab(&[
        "dtn",
        "recv",
        "--endpoint",
        "ipn:2.1",
        "--count",
        "1",
        "--node",
        peer_socket.to_str().unwrap(),
        "--out",
        got_bundle.to_str().unwrap(),
    ]);
    let dtn_send = linklab(&[
        "dtn",
        "send",
        bundle_file.to_str().unwrap(),
        "ipn:2.1",
        "--report",
        "--wait",
        "150",
        "--node",
        dir.path().join("dtn.sock").to_str().unwrap(),
    ]);
    // 4. A shell script answering a call from s3.
    let mut script_call = Caller::kiss(&ch.kiss(3), "N0CALL-9", "N0CALL-2");
    script_call.expect("hello N0CALL-9, this is N0CALL-2 (N0CALL)");
    script_call.say("one");
    script_call.expect("got: one");
    // 5. A call from s4 forwarded to the TCP service.
    let mut tcp_call = Caller::kiss(&ch.kiss(4), "N0CALL-10", "N0CALL-6");
    tcp_call.expect("capitals service ready");
    tcp_call.say("packet radio");
    tcp_call.expect("PACKET RADIO");
    // 6. A frame for the alias RELAY from s3's TNC, repeated by the
    //    station with its own call in the path, H set.
    let mut s3 = ch.connect(3);
    let ui = Frame::ui(
        call("APRS"),
        call("N0CALL-9"),
        &[call("RELAY")],
        Pid::NoLayer3,
        b"!digipeat me".to_vec(),
    )
    .unwrap()
    .encode();
    s3.write_all(&kiss_data(ui)).unwrap();

    script_call.say("bye");
    script_call.expect("got: bye");
    // The program's end releases the link.
    script_call.expect("released by the peer (DISC)");
    script_call.finish();
    let seen = tcp_call.finish();
    assert!(seen.iter().any(|l| l.contains("PACKET RADIO")));

    let out = finish_within(drop_send, "send to the drop", TRANSFER_LIMIT);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = finish_within(agw_send, "send through AGWPE", TRANSFER_LIMIT);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = finish_within(listener, "listen", TRANSFER_LIMIT);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&got_agw).unwrap(), via_agw, "AGWPE transfer");
    let out = finish_within(dtn_send, "dtn send", TRANSFER_LIMIT);
    let report = text(&out.stdout) + &text(&out.stderr);
    assert!(out.status.success(), "{report}");
    assert!(
        report.contains("report from [ipn:2.0]") && report.contains("delivered"),
        "{report}"
    );
    let out = finish_within(recv, "dtn recv", TRANSFER_LIMIT);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&got_bundle).unwrap(), bundle, "DTN bundle");
    station.wait_for("the drop stored", |l| l.contains(": stored "));
    let stored = files_in(&drop_dir);
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert!(stored[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("N0CALL-7-"));
    assert_eq!(std::fs::read(&stored[0]).unwrap(), to_drop, "file drop");

    // Beacons at their interval, and the digipeated frame, as the
    // station's KISS clients see them.
    let end = Instant::now() + Duration::from_secs(60);
    let (mut beacons, mut digipeated) = (0, false);
    while beacons < 2 || !digipeated {
        let left = end.saturating_duration_since(Instant::now());
        let frame = heard
            .recv_timeout(left)
            .expect("two beacons and the digipeated frame within 60 s");
        let (field, _) = AddressField::decode(&frame).unwrap();
        if frame.ends_with(b"linklab test station") {
            assert_eq!(field.source(), &call("N0CALL"));
            beacons += 1;
        }
        if frame.ends_with(b"!digipeat me") && field.digipeaters()[0].c_or_h() {
            assert_eq!(
                field.digipeaters()[0].callsign(),
                call("N0CALL-1").callsign()
            );
            digipeated = true;
        }
    }

    let report = status(&station.control);
    let port = &report["ports"][0];
    assert_eq!(port["up"], true);
    assert_eq!(port["digipeated"], 1);
    let heard: Vec<&str> = port["heard"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    assert_eq!(report["dtn"]["running"], true);
    for station in ["N0CALL-7", "N0CALL-8", "N0CALL-9", "N0CALL-10", "N0CALL-13"] {
        assert!(heard.contains(&station), "{station} not in {heard:?}");
    }
    let served: Vec<u64> = report["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["served"].as_u64().unwrap())
        .collect();
    assert_eq!(served, [1, 1, 1]);
    interrupt(&peer);
    finish_within(peer, "the peer node", TRANSFER_LIMIT);
    let (exit, log) = station.stop();
    assert!(exit.success(), "{log}");
}

#[test]
fn a_reload_adds_a_service_and_removes_a_beacon_while_a_transfer_runs() {
    let ch = Channel::fast(3, 11);
    let dir = tempfile::tempdir().unwrap();
    let (drop_dir, drop_table) = drop_service(dir.path());
    let base = format!("{}{}{drop_table}", head(dir.path()), port(&ch.kiss(0)));
    let beacon = "\n[[beacon]]\nport = \"vhf\"\ntext = \"going away\"\nevery-s = 10\n";
    let station = Station::start(dir.path(), &format!("{base}{beacon}"));
    let data = pattern(50_000, 3);
    let file = dir.path().join("data.bin");
    std::fs::write(&file, &data).unwrap();
    let send = linklab(&[
        "send",
        "--kiss",
        &ch.kiss(1),
        "--mycall",
        "N0CALL-7",
        "--to",
        "N0CALL-5",
        "--t1-ms",
        "2000",
        file.to_str().unwrap(),
    ]);
    station.wait_for("the transfer", |l| l.contains("receiving into"));

    // A greeting added, the beacon gone.
    let greeting =
        "\n[[service]]\ncallsign = \"N0CALL-3\"\nbuiltin = \"greeting\"\ntext = \"Hello %u\"\n";
    std::fs::write(&station.file, format!("{base}{greeting}")).unwrap();
    let from = station.line_count();
    station.signal("HUP");
    station.wait_for_from(from, "the service added", |l| {
        l == "station: reload: service N0CALL-3: added"
    });
    station.wait_for_from(from, "the beacon removed", |l| {
        l.starts_with("station: reload: beacon N0CALL>ID on port 1: removed")
    });
    let mut caller = Caller::kiss(&ch.kiss(2), "N0CALL-9", "N0CALL-3");
    caller.expect("Hello N0CALL-9");
    caller.expect("released by the peer (DISC)");
    caller.finish();

    // A bad file: refused and named, the running configuration kept.
    let bad = format!("{base}{greeting}").replace("t1-ms = 2000", "t1-ms = 2000\nwindow = 9");
    let line = 1 + bad.lines().position(|l| l == "window = 9").unwrap();
    std::fs::write(&station.file, &bad).unwrap();
    let from = station.line_count();
    station.signal("HUP");
    let refused = station.wait_for_from(from, "the refusal", |l| l.contains("reload refused"));
    let file_name = station.file.display().to_string();
    assert!(
        refused.contains(&format!("{file_name}:{line}:10: port[1].window:")),
        "{refused}"
    );
    let report = status(&station.control);
    assert_eq!(report["services"].as_array().unwrap().len(), 2);
    assert!(report["beacons"].as_array().unwrap().is_empty());

    let out = finish_within(send, "the transfer", TRANSFER_LIMIT);
    assert!(out.status.success(), "{}", text(&out.stderr));
    station.wait_for("the drop stored", |l| l.contains(": stored "));
    let stored = files_in(&drop_dir);
    assert_eq!(
        std::fs::read(&stored[0]).unwrap(),
        data,
        "untouched by the reloads"
    );
    let (exit, log) = station.stop();
    assert!(exit.success(), "{log}");
}

#[test]
fn a_stop_releases_every_link_with_disc() {
    let ch = Channel::fast(2, 11);
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "{}{}\n[[service]]\ncallsign = \"N0CALL-4\"\nbuiltin = \"echo\"\n",
        head(dir.path()),
        port(&ch.kiss(0))
    );
    let station = Station::start(dir.path(), &config);
    let mut caller = Caller::kiss(&ch.kiss(1), "N0CALL-9", "N0CALL-4");
    caller.expect("connected to N0CALL-4");
    caller.say("are you there");
    caller.expect("are you there");
    assert_eq!(
        status(&station.control)["links"].as_array().unwrap().len(),
        1
    );
    let control = station.control.clone();
    let (exit, log) = station.stop();
    assert!(exit.success(), "{log}");
    assert!(log.contains("stopping: releasing every link"), "{log}");
    caller.expect("released by the peer (DISC)");
    caller.finish();
    assert!(!control.exists(), "the control socket is removed");
}

#[test]
fn programs_that_exit_at_once_hang_or_flood_are_dealt_with() {
    let ch = Channel::fast(2, 11);
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        r#"{}{}
[[service]]
callsign = "N0CALL-2"
program = ["true"]

[[service]]
callsign = "N0CALL-3"
program = ["sleep", "1000"]

[[service]]
callsign = "N0CALL-4"
program = ["yes", "flood"]
"#,
        head(dir.path()),
        port(&ch.kiss(0))
    );
    let station = Station::start(dir.path(), &config);
    // Exits at once: the link is released.
    let mut caller = Caller::kiss(&ch.kiss(1), "N0CALL-9", "N0CALL-2");
    caller.expect("released by the peer (DISC)");
    caller.finish();
    // Hangs: the caller leaves, the program gets SIGTERM.
    let mut caller = Caller::kiss(&ch.kiss(1), "N0CALL-9", "N0CALL-3");
    caller.expect("connected to N0CALL-3");
    caller.finish();
    station.wait_for("the hanging program ended", |l| {
        l.contains("the program ended") && l.contains("SIGTERM")
    });
    // Floods: its output waits for the link; the caller leaves after
    // some of it, and the program is ended.
    let mut caller = Caller::kiss(&ch.kiss(1), "N0CALL-9", "N0CALL-4");
    caller.expect("flood");
    let report = status(&station.control);
    let queued = report["links"][0]["queued"].as_u64().unwrap();
    assert!(
        queued <= 64,
        "the flood waits for the radio: {queued} frames queued"
    );
    caller.finish();
    station.wait_for("the flooding program ended", |l| {
        l.contains("the program ended") && l.contains("SIGTERM")
    });
    let (exit, log) = station.stop();
    assert!(exit.success(), "{log}");
}

#[test]
fn a_tnc_that_sends_garbage_and_goes_away_is_survived() {
    let fake = TcpListener::bind("127.0.0.1:0").unwrap();
    let kiss = format!("tcp:{}", fake.local_addr().unwrap());
    let accepting = thread::spawn(move || {
        let (first, _) = fake.accept().unwrap();
        (fake, first)
    });
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "{}{}\n[[service]]\ncallsign = \"N0CALL-4\"\nbuiltin = \"echo\"\n",
        head(dir.path()),
        port(&kiss)
    );
    let station = Station::start(dir.path(), &config);
    let (fake, mut tnc) = accepting.join().unwrap();
    // 1 MB of garbage, some of it KISS-framed, then a real SABM.
    let mut garbage = pattern(1_000_000, 9);
    for chunk in garbage.chunks_mut(997) {
        chunk[0] = 0xC0;
    }
    tnc.write_all(&garbage).unwrap();
    tnc.write_all(&[0xC0]).unwrap();
    tnc.write_all(&sabm_to_echo()).unwrap();
    wait_for_ua(&mut tnc);
    // The TNC goes away with a link up, and comes back.
    drop(tnc);
    station.wait_for("the loss", |l| l.contains("; 1 link ended"));
    // Counted before the station can be back: its line comes after.
    let from = station.line_count();
    let (_again, _) = fake.accept().unwrap();
    station.wait_for_from(from, "the reconnection", |l| {
        l.starts_with("station: port 1: TNC tcp:") && l.ends_with(" connected")
    });
    let report = status(&station.control);
    let port = &report["ports"][0];
    assert_eq!(port["up"], true);
    assert_eq!(port["tnc_losses"], 1);
    assert!(port["kiss_errors"].as_u64().unwrap() > 0);
    let (exit, log) = station.stop();
    assert!(exit.success(), "{log}");
}

#[test]
fn an_agwpe_client_that_never_reads_is_let_go_and_the_rest_serve_on() {
    // The TNC is the test: what it sends costs no air time.
    let fake = TcpListener::bind("127.0.0.1:0").unwrap();
    let kiss = format!("tcp:{}", fake.local_addr().unwrap());
    let accepting = thread::spawn(move || fake.accept().unwrap().0);
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "{}{}\n[[service]]\ncallsign = \"N0CALL-4\"\nbuiltin = \"echo\"\n",
        head(dir.path()),
        port(&kiss)
    );
    let station = Station::start(dir.path(), &config);
    let mut tnc = accepting.join().unwrap();
    // A client that asks for every frame ('m' and 'k') and never reads.
    let mut deaf = TcpStream::connect(("127.0.0.1", station.agw.unwrap())).unwrap();
    for kind in [b'm', b'k'] {
        let header = linklab_agw::wire::Header::new(0, kind);
        deaf.write_all(&header.encode()).unwrap();
    }
    // The radio hears a flood of UI frames: each is two records for the
    // deaf client.
    let frame = kiss_data(
        Frame::ui(
            call("ID"),
            call("N0CALL-9"),
            &[],
            Pid::NoLayer3,
            vec![b'x'; 200],
        )
        .unwrap()
        .encode(),
    );
    let flood: Vec<u8> = frame
        .iter()
        .copied()
        .cycle()
        .take(frame.len() * 2000)
        .collect();
    let from = station.line_count();
    let mut writer = tnc.try_clone().unwrap();
    let feeder = thread::spawn(move || {
        for _ in 0..40 {
            if writer.write_all(&flood).is_err() {
                return;
            }
        }
    });
    station.wait_for_from(from, "the deaf client let go", |l| {
        l.contains("does not read what it is sent")
    });
    feeder.join().unwrap();
    // The station serves on: its echo service answers a SABM with UA.
    tnc.write_all(&sabm_to_echo()).unwrap();
    wait_for_ua(&mut tnc);
    drop(deaf);
    let (exit, log) = station.stop();
    assert!(exit.success(), "{log}");
}

#[test]
fn a_station_killed_mid_transfer_leaves_the_drop_partial() {
    let ch = Channel::fast(2, 11);
    let dir = tempfile::tempdir().unwrap();
    let (drop_dir, drop_table) = drop_service(dir.path());
    let config = format!("{}{}{drop_table}", head(dir.path()), port(&ch.kiss(0)));
    let station = Station::start(dir.path(), &config);
    let file = dir.path().join("data.bin");
    std::fs::write(&file, pattern(200_000, 5)).unwrap();
    let send = linklab(&[
        "send",
        "--kiss",
        &ch.kiss(1),
        "--mycall",
        "N0CALL-7",
        "--to",
        "N0CALL-5",
        "--t1-ms",
        "1000",
        "--n2",
        "3",
        file.to_str().unwrap(),
    ]);
    station.wait_for("the transfer", |l| l.contains("receiving into"));
    station.signal("KILL");
    let out = finish_within(send, "the cut transfer", TRANSFER_LIMIT);
    assert!(!out.status.success(), "a cut transfer is reported as cut");
    let names: Vec<String> = files_in(&drop_dir)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].ends_with(".partial"), "{names:?}");
}

/// The status report's `dtn` once `done` holds for it.
fn dtn_status_until(
    station: &Station,
    what: &str,
    done: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let end = Instant::now() + TRANSFER_LIMIT;
    loop {
        let dtn = status(&station.control)["dtn"].clone();
        if done(&dtn) {
            return dtn;
        }
        assert!(
            Instant::now() < end,
            "the status never showed {what}: {dtn}"
        );
        thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_bundle_stored_by_the_station_s_dtn_node_survives_a_kill_and_is_delivered() {
    let ch = Channel::fast(2, 11);
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        r#"{}{}
[dtn]
port = "vhf"
eid = "ipn:1.0"
callsign = "N0CALL-12"
store = "{}"
app-socket = "{}"
ax25-peers = ["N0CALL-13=ipn:2.*"]
retry-after-s = 2
"#,
        head(dir.path()),
        port(&ch.kiss(0)),
        dir.path().join("dtn-store").display(),
        dir.path().join("dtn.sock").display(),
    );
    let station = Station::start(dir.path(), &config);
    station.wait_for("the DTN node", |l| l.contains("applications on"));
    let peer_socket = dir.path().join("peer.sock");
    let peer = linklab(&[
        "dtn",
        "node",
        "--eid",
        "ipn:2.0",
        "--store",
        dir.path().join("peer-store").to_str().unwrap(),
        "--app-socket",
        peer_socket.to_str().unwrap(),
        "--kiss",
        &ch.kiss(1),
        "--mycall",
        "N0CALL-13",
        "--t1-ms",
        "2000",
        "--ax25-peer",
        "N0CALL-12=ipn:1.*",
    ]);
    let until = Instant::now() + Duration::from_secs(30);
    while !peer_socket.exists() {
        assert!(Instant::now() < until, "the peer node did not start");
        thread::sleep(Duration::from_millis(50));
    }
    let bundle = pattern(60_000, 6);
    let file = dir.path().join("bundle.bin");
    std::fs::write(&file, &bundle).unwrap();
    let got = dir.path().join("got.bin");
    let recv = linklab(&[
        "dtn",
        "recv",
        "--endpoint",
        "ipn:2.1",
        "--count",
        "1",
        "--node",
        peer_socket.to_str().unwrap(),
        "--out",
        got.to_str().unwrap(),
    ]);
    // Accepted into the station's store, then the station is killed
    // while the bundle crosses.
    let out = finish_within(
        linklab(&[
            "dtn",
            "send",
            file.to_str().unwrap(),
            "ipn:2.1",
            "--node",
            dir.path().join("dtn.sock").to_str().unwrap(),
        ]),
        "dtn send",
        TRANSFER_LIMIT,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    station.wait_for("the AX.25 session", |l| {
        l.contains("session with") && l.contains(" up")
    });
    // The status report shows the bundle stored and the neighbour.
    let seen = dtn_status_until(&station, "the bundle stored", |d| d["stored"] == 1);
    assert_eq!(seen["contacts"].as_array().map(Vec::len), Some(1), "{seen}");
    station.signal("KILL");
    drop(station);
    // The same station again: its node finds the bundle in its store.
    let station = Station::start(dir.path(), &config);
    let out = finish_within(recv, "dtn recv", TRANSFER_LIMIT);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&got).unwrap(), bundle, "the bundle, whole");
    dtn_status_until(&station, "the bundle forwarded", |d| {
        d["forwarded"] == 1 && d["stored"] == 0
    });
    interrupt(&peer);
    finish_within(peer, "the peer node", TRANSFER_LIMIT);
    let (exit, log) = station.stop();
    assert!(exit.success(), "{log}");
}
