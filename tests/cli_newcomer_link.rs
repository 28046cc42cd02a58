//! What a newcomer meets in `listen`, `send`, `connect` and `probe`:
//! nothing received is overwritten or passed off as complete,
//! every stopping signal releases the link, a wait on a silent peer says
//! what it waits for, options that cannot work exit 2 naming the option
//! before the TNC is touched, and two operators can talk. All on the
//! loopback KISS hub of the `cli` test module, bounded in time, waiting on
//! the programs' own lines rather than on sleeps.

mod cli;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use cli::live::Live;
use cli::{finish, linklab, next_ax25_frame, tail, text, Hub, LIMIT};
use linklab_wire::ax25::{same_station, Address, AddressField, CommandResponse, Frame, Pid};
use linklab_wire::control::{Control, Modulus, Supervisory, Unnumbered};
use linklab_wire::kiss;

fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

fn partial(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".partial");
    name.into()
}

/// A TCP port that tells whether anyone connected to it.
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

/// Runs `args` against a TNC that must stay untouched; asserts exit 2
/// and a message that contains `says`.
fn refused(args: &[&str], says: &str) {
    let (tnc, kiss) = untouched_tnc();
    let args: Vec<&str> = args
        .iter()
        .map(|a| if *a == "KISS" { kiss.as_str() } else { a })
        .collect();
    let out = finish(linklab(&args), "linklab");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: {}",
        tail(&out.stderr)
    );
    let log = text(&out.stderr);
    assert!(log.contains(says), "{args:?}: {log}");
    assert_untouched(&tnc);
}

/// `linklab send` of `data` (written to `dir`) from `mycall` to N0CALL-2.
fn send_file(kiss: &str, dir: &Path, mycall: &str, data: &[u8]) {
    let input = dir.join(format!("{mycall}.bin"));
    std::fs::write(&input, data).unwrap();
    let out = finish(
        linklab(&[
            "send",
            "--kiss",
            kiss,
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

/// Waits (bounded) until `path` holds at least `len` octets.
fn wait_for_file(path: &Path, len: u64) {
    let end = Instant::now() + LIMIT;
    while std::fs::metadata(path).map_or(0, |m| m.len()) < len {
        assert!(
            Instant::now() < end,
            "{} never grew to {len}",
            path.display()
        );
        thread::sleep(Duration::from_millis(20));
    }
}

// Item 2: nothing received earlier is overwritten.

#[test]
fn listen_into_a_directory_numbers_after_the_transfers_already_there() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("received");
    std::fs::create_dir(&out).unwrap();
    // What an earlier listener left: a finished transfer and a cut one.
    let earlier = payload(51_200);
    std::fs::write(out.join("transfer-1-N0CALL-1"), &earlier).unwrap();
    std::fs::write(out.join("transfer-3-N0CALL-5.partial"), b"cut").unwrap();
    let hub = Hub::start();
    let kiss = hub.address();
    let mut listener = Live::start(&[
        "listen",
        "--kiss",
        &kiss,
        "--mycall",
        "N0CALL-2",
        "--once",
        "--out",
        out.to_str().unwrap(),
    ]);
    listener.wait_for("listening on");
    let now = payload(52);
    send_file(&kiss, dir.path(), "N0CALL-1", &now);
    let (status, log) = listener.exit();
    assert!(status.success(), "{log}");
    assert_eq!(
        std::fs::read(out.join("transfer-1-N0CALL-1")).unwrap(),
        earlier
    );
    assert_eq!(std::fs::read(out.join("transfer-4-N0CALL-1")).unwrap(), now);
    assert_eq!(
        std::fs::read(out.join("transfer-3-N0CALL-5.partial")).unwrap(),
        b"cut"
    );
}

#[test]
fn listen_out_file_that_exists_is_refused_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("got.bin");
    std::fs::write(&file, b"what I had").unwrap();
    refused(
        &[
            "listen",
            "--kiss",
            "KISS",
            "--mycall",
            "N0CALL-2",
            "--out",
            file.to_str().unwrap(),
        ],
        "linklab: error: --out: ",
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"what I had");
    // With --force it is replaced; the next connection takes got.bin.2,
    // or the next free name after it.
    std::fs::write(dir.path().join("got.bin.2"), b"also mine").unwrap();
    let hub = Hub::start();
    let kiss = hub.address();
    let mut listener = Live::start(&[
        "listen",
        "--kiss",
        &kiss,
        "--mycall",
        "N0CALL-2",
        "--force",
        "--out",
        file.to_str().unwrap(),
    ]);
    listener.wait_for("listening on");
    let (first, second) = (payload(300), payload(500));
    send_file(&kiss, dir.path(), "N0CALL-1", &first);
    send_file(&kiss, dir.path(), "N0CALL-3", &second);
    listener.wait_for("from N0CALL-3, released by the peer (DISC)");
    listener.signal("INT");
    let (status, log) = listener.exit();
    assert!(status.success(), "{log}");
    assert_eq!(std::fs::read(&file).unwrap(), first);
    assert_eq!(
        std::fs::read(dir.path().join("got.bin.2")).unwrap(),
        b"also mine"
    );
    assert_eq!(std::fs::read(dir.path().join("got.bin.3")).unwrap(), second);
}

// Item 3: data from a link that was reset is never complete.

/// A peer that speaks raw AX.25 frames on the hub, as N0CALL-1 to
/// N0CALL-2, so that a test can do what linklab's own sender never does.
struct RawPeer {
    tnc: TcpStream,
    decoder: kiss::Decoder,
    me: Address,
    them: Address,
}

impl RawPeer {
    fn attach(hub: &Hub) -> RawPeer {
        RawPeer::attach_as(hub, "N0CALL-1", "N0CALL-2")
    }

    /// A peer that is `me` and speaks to `them`.
    fn attach_as(hub: &Hub, me: &str, them: &str) -> RawPeer {
        let tnc = TcpStream::connect(("127.0.0.1", hub.port)).unwrap();
        tnc.set_read_timeout(Some(LIMIT)).unwrap();
        RawPeer {
            tnc,
            decoder: kiss::Decoder::new(4096),
            me: me.parse().unwrap(),
            them: them.parse().unwrap(),
        }
    }

    /// A U response with F = 1 (UA, DM).
    fn answer(&mut self, kind: Unnumbered) {
        let address =
            AddressField::new(self.them, self.me, &[], CommandResponse::Response).unwrap();
        let frame = Frame::u(address, Modulus::Mod8, kind, true, Vec::new()).unwrap();
        self.put(frame);
    }

    fn command(&self) -> AddressField {
        AddressField::new(self.them, self.me, &[], CommandResponse::Command).unwrap()
    }

    fn put(&mut self, frame: Frame) {
        let bytes = kiss::encode(&kiss::Frame::data(frame.encode()));
        self.tnc.write_all(&bytes).unwrap();
    }

    fn u(&mut self, kind: Unnumbered) {
        let frame = Frame::u(self.command(), Modulus::Mod8, kind, true, Vec::new()).unwrap();
        self.put(frame);
    }

    fn i(&mut self, ns: u8, data: &[u8]) {
        let frame = Frame::i(
            self.command(),
            Modulus::Mod8,
            ns,
            0,
            true,
            Pid::NoLayer3,
            data.to_vec(),
        )
        .unwrap();
        self.put(frame);
    }

    /// Waits (bounded by the read timeout) for a frame from N0CALL-2 to
    /// N0CALL-1 whose control field `wanted` accepts.
    fn expect(&mut self, what: &str, wanted: impl Fn(Control) -> bool) {
        let mut buf = [0u8; 4096];
        loop {
            while let Some(frame) = next_ax25_frame(&mut self.decoder) {
                if same_station(frame.dest(), &self.me) && wanted(frame.control()) {
                    return;
                }
            }
            let n = self
                .tnc
                .read(&mut buf)
                .unwrap_or_else(|e| panic!("no {what}: {e}"));
            assert!(n > 0, "the hub closed before {what}");
            self.decoder.push(&buf[..n]);
        }
    }
}

fn is_ua(c: Control) -> bool {
    matches!(
        c,
        Control::U {
            kind: Unnumbered::Ua,
            ..
        }
    )
}

#[test]
fn data_received_before_a_link_reset_is_never_saved_as_complete() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("got.bin");
    let hub = Hub::start();
    let mut listener = Live::start(&[
        "listen",
        "--kiss",
        &hub.address(),
        "--mycall",
        "N0CALL-2",
        "--once",
        "--out",
        output.to_str().unwrap(),
    ]);
    listener.wait_for("listening on");
    let mut peer = RawPeer::attach(&hub);
    peer.u(Unnumbered::Sabm);
    peer.expect("UA to SABM", is_ua);
    peer.i(0, b"the first half of a file");
    peer.expect("RR 1", |c| {
        matches!(
            c,
            Control::S {
                kind: Supervisory::Rr,
                nr: 1,
                ..
            }
        )
    });
    // A second SABM on the link already up resets it (6.3.4): whatever
    // the peer had in flight is gone. Then the peer ends with DISC.
    peer.u(Unnumbered::Sabm);
    peer.expect("UA to the second SABM", is_ua);
    peer.u(Unnumbered::Disc);
    peer.expect("UA to DISC", is_ua);
    let (status, log) = listener.exit();
    assert_eq!(status.code(), Some(1), "{log}");
    assert!(!output.exists(), "reset data under the final name:\n{log}");
    assert_eq!(
        std::fs::read(partial(&output)).unwrap(),
        b"the first half of a file"
    );
    assert!(
        log.contains("linklab: cut: 24 octets received from N0CALL-1 before the link was reset"),
        "{log}"
    );
}

#[test]
fn send_whose_link_is_reset_ends_it_with_dm_not_disc() {
    let dir = tempfile::tempdir().unwrap();
    let hub = Hub::start();
    let mut peer = RawPeer::attach_as(&hub, "N0CALL-2", "N0CALL-1");
    hub.wait_for_clients(1);
    let input = dir.path().join("input.bin");
    std::fs::write(&input, payload(2000)).unwrap();
    let sender = Live::start(&[
        "send",
        "--kiss",
        &hub.address(),
        "--mycall",
        "N0CALL-1",
        "--to",
        "N0CALL-2",
        "--n1",
        "64",
        input.to_str().unwrap(),
    ]);
    peer.expect("SABM", |c| {
        matches!(
            c,
            Control::U {
                kind: Unnumbered::Sabm,
                ..
            }
        )
    });
    peer.answer(Unnumbered::Ua);
    peer.expect("an I frame", |c| matches!(c, Control::I { .. }));
    // The peer resets the link with I frames unacknowledged: a DISC now
    // would pass what it got for the whole file.
    peer.u(Unnumbered::Sabm);
    peer.expect("DM", |c| {
        matches!(
            c,
            Control::U {
                kind: Unnumbered::Dm,
                ..
            }
        )
    });
    let (status, log) = sender.exit();
    assert_eq!(status.code(), Some(1), "{log}");
    assert!(
        log.contains("linklab: error: the link with N0CALL-2 was reset, so frames it had not acknowledged were lost; link ended with DM"),
        "{log}"
    );
}

// Item 4: --out is checked before any SABM is answered.

#[test]
fn listen_out_in_a_missing_directory_exits_2_before_answering_anyone() {
    refused(
        &[
            "listen",
            "--kiss",
            "KISS",
            "--mycall",
            "N0CALL-2",
            "--out",
            "/nonexistent/dir/file",
        ],
        "linklab: error: --out: the directory /nonexistent/dir does not exist",
    );
}

// Item 5: SIGTERM releases the link as SIGINT does.

/// A transfer slow enough to be in its middle when a signal comes: the
/// receiver's spec T2 and no poll from the sender.
fn slow_transfer(dir: &Path, hub: &Hub) -> (Live, Live, PathBuf) {
    let input = dir.join("input.bin");
    let output = dir.join("output.bin");
    std::fs::write(&input, payload(64 * 1024)).unwrap();
    let kiss = hub.address();
    let mut listener = Live::start(&[
        "listen",
        "--kiss",
        &kiss,
        "--mycall",
        "N0CALL-2",
        "--ack-policy",
        "t2",
        "--t2-ms",
        "200",
        "--once",
        "--out",
        output.to_str().unwrap(),
    ]);
    listener.wait_for("listening on");
    let mut sender = Live::start(&[
        "send",
        "--kiss",
        &kiss,
        "--mycall",
        "N0CALL-1",
        "--to",
        "N0CALL-2",
        "--n1",
        "64",
        "--poll-last=false",
        input.to_str().unwrap(),
    ]);
    sender.wait_for("linklab: connected to N0CALL-2");
    listener.wait_for("linklab: connected from N0CALL-1");
    (listener, sender, output)
}

#[test]
fn sigterm_to_send_ends_the_link_with_dm_and_exits_143() {
    let dir = tempfile::tempdir().unwrap();
    let hub = Hub::start();
    let (listener, sender, output) = slow_transfer(dir.path(), &hub);
    wait_for_file(&partial(&output), 1024);
    sender.signal("TERM");
    let (status, log) = sender.exit();
    assert_eq!(status.code(), Some(143), "{log}");
    assert!(log.contains("link ended with DM (SIGTERM)"), "{log}");
    // The listener hears the DM at once, not after its T3 and N2 polls.
    let (status, log) = listener.exit();
    assert_eq!(status.code(), Some(1), "{log}");
    assert!(
        log.contains("linklab: the link with N0CALL-1 was cut after ")
            && log.contains("(the peer sent DM)"),
        "{log}"
    );
    assert!(!output.exists());
}

#[test]
fn sigterm_to_listen_releases_the_link_with_disc() {
    let dir = tempfile::tempdir().unwrap();
    let hub = Hub::start();
    let (listener, sender, output) = slow_transfer(dir.path(), &hub);
    wait_for_file(&partial(&output), 1024);
    listener.signal("TERM");
    let (status, log) = listener.exit();
    assert_eq!(status.code(), Some(1), "{log}");
    assert!(log.contains("linklab: SIGTERM: releasing links"), "{log}");
    assert!(!output.exists() && partial(&output).exists(), "{log}");
    // The sender learns of the release from the DISC.
    let (status, log) = sender.exit();
    assert_eq!(status.code(), Some(1), "{log}");
    assert!(
        log.contains("linklab: disconnected from N0CALL-2: released by the peer (DISC)"),
        "{log}"
    );
}

#[test]
fn sigterm_to_connect_releases_the_link_with_disc_and_exits_143() {
    let hub = Hub::start();
    let kiss = hub.address();
    let mut answer = Live::start(&["listen", "--kiss", &kiss, "--mycall", "N0CALL-2", "--chat"]);
    answer.wait_for("waiting for a caller");
    let mut caller = Live::start(&[
        "connect", "--kiss", &kiss, "--mycall", "N0CALL-1", "N0CALL-2",
    ]);
    caller.wait_for("linklab: connected to N0CALL-2");
    answer.wait_for("N0CALL-1 is on");
    caller.signal("TERM");
    let (status, log) = caller.exit();
    assert_eq!(status.code(), Some(143), "{log}");
    assert!(
        log.contains("linklab: SIGTERM: releasing the link"),
        "{log}"
    );
    assert!(
        log.contains("linklab: disconnected from N0CALL-2: released at our request"),
        "{log}"
    );
    let (status, log) = answer.exit();
    assert!(status.success(), "{log}");
    assert!(
        log.contains("linklab: disconnected from N0CALL-1: released by the peer (DISC)"),
        "{log}"
    );
}

// Item 8: a wait on a silent peer says what it waits for.

#[test]
fn send_to_a_silent_station_says_what_it_waits_for_and_how_long() {
    let hub = Hub::start();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.bin");
    std::fs::write(&input, b"hello").unwrap();
    let mut sender = Live::start(&[
        "send",
        "--kiss",
        &hub.address(),
        "--mycall",
        "N0CALL-1",
        "--to",
        "N0CALL-9",
        "--t1-ms",
        "8000",
        "--n2",
        "2",
        input.to_str().unwrap(),
    ]);
    sender.wait_for("linklab: connecting to N0CALL-9: SABM 1 of 2, T1 8.0 s");
    // T1 is 8 s: a word comes in between.
    sender.wait_for("linklab: connecting to N0CALL-9: waiting for UA to SABM 1 of 2 (5 s so far)");
    sender.signal("TERM");
    let (status, log) = sender.exit();
    assert_eq!(status.code(), Some(143), "{log}");
}

#[test]
fn probe_to_a_silent_station_says_what_it_waits_for() {
    let hub = Hub::start();
    let mut probe = Live::start(&[
        "probe",
        "--kiss",
        &hub.address(),
        "--mycall",
        "N0CALL-1",
        "--to",
        "N0CALL-9",
        "--bitrate",
        "1200",
        "--response-ms",
        "8000",
    ]);
    probe.wait_for("connecting to N0CALL-9: SABM 1 of 5, waiting 8 s for UA");
    probe.wait_for("connecting to N0CALL-9: waiting for UA to SABM 1 of 5");
    probe.signal("INT");
    let (status, log) = probe.exit();
    assert!(!status.success(), "{log}");
    assert!(log.contains("Ctrl-C: releasing the link"), "{log}");
}

#[test]
fn probe_to_its_own_callsign_or_with_no_repeats_exits_2() {
    let base = [
        "probe",
        "--kiss",
        "KISS",
        "--mycall",
        "N0CALL-1",
        "--bitrate",
        "1200",
    ];
    let own = [&base[..], &["--to", "n0call-1"]].concat();
    refused(
        &own,
        "linklab: error: --to N0CALL-1 is this station's own callsign",
    );
    let none = [&base[..], &["--to", "N0CALL-2", "--repeat", "0"]].concat();
    refused(&none, "linklab: error: --repeat must be at least 1");
}

// Items 10 and 12: options and input that cannot work exit 2.

#[test]
fn link_options_that_cannot_work_exit_2_naming_the_option() {
    let send = [
        "send", "--kiss", "KISS", "--mycall", "N0CALL-1", "--to", "N0CALL-2",
    ];
    for (bad, says) in [
        (&["--srej"][..], "linklab: error: --srej: "),
        (&["--t2-ms", "99999999999"][..], "linklab: error: --t2-ms: "),
        (&["--t1-ms", "99999999999"][..], "linklab: error: --t1-ms: "),
        (&["--t3-ms", "99999999999"][..], "linklab: error: --t3-ms: "),
        // T2 longer than T1 (3 s by default).
        (
            &["--t2-ms", "5000"][..],
            "linklab: error: --t2-ms: T2 (5000 ms)",
        ),
        (
            &["--t1-ms", "500", "--t2-ms", "501"][..],
            "linklab: error: --t2-ms: T2 (501 ms) must not be longer than T1 (500 ms)",
        ),
        (&["--n2", "0"][..], "'--n2 <N>': 0 is not in 1..=255"),
        (&["--n2", "1000"][..], "'--n2 <N>': 1000 is not in 1..=255"),
    ] {
        let args = [&send[..], bad, &["x"]].concat();
        refused(&args, says);
    }
}

#[test]
fn send_of_a_missing_file_exits_2_before_touching_the_tnc() {
    refused(
        &[
            "send",
            "--kiss",
            "KISS",
            "--mycall",
            "N0CALL-1",
            "--to",
            "N0CALL-2",
            "/nonexistent/notes.txt",
        ],
        "linklab: error: cannot read /nonexistent/notes.txt: ",
    );
}

// Item 14: two operators can talk, and `connect` has `~` escapes.

#[test]
fn two_operators_chat_and_connect_sends_and_receives_files_with_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let hub = Hub::start();
    let kiss = hub.address();
    let mut answer = Live::start(&["listen", "--kiss", &kiss, "--mycall", "N0CALL-2", "--chat"]);
    answer.wait_for("waiting for a caller");
    let mut caller = Live::start(&[
        "connect", "--kiss", &kiss, "--mycall", "N0CALL-1", "N0CALL-2",
    ]);
    caller.wait_for("linklab: connected to N0CALL-2");
    answer.wait_for("N0CALL-1 is on");
    // Lines go with CR and are shown with a line end at the other side.
    caller.type_line("hello from the caller");
    assert_eq!(answer.wait_for("hello from"), "hello from the caller\n");
    answer.type_line("hello back");
    assert_eq!(caller.wait_for("hello back"), "hello back\n");
    // ~r FILE at the caller, ~s FILE at the answer: the file arrives
    // octet for octet, CRs and all.
    let file = dir.path().join("notes.bin");
    let data = [&b"line one\rline two\r"[..], &payload(3000)].concat();
    std::fs::write(&file, &data).unwrap();
    let got = dir.path().join("got.bin");
    caller.type_line(&format!("~r {}", got.display()));
    caller.wait_for("linklab: receiving into");
    answer.type_line(&format!("~s {}", file.display()));
    answer.wait_for("linklab: sending");
    wait_for_file(&got, data.len() as u64);
    caller.type_line("~r");
    caller.wait_for(&format!("linklab: received {} octets into", data.len()));
    assert_eq!(std::fs::read(&got).unwrap(), data);
    caller.type_line("~?");
    caller.wait_for("~. release the link and quit");
    caller.type_line("~.");
    let (status, log) = caller.exit();
    assert!(status.success(), "{log}");
    assert!(log.contains("released at our request"), "{log}");
    let (status, log) = answer.exit();
    assert!(status.success(), "{log}");
    assert!(log.contains("released by the peer (DISC)"), "{log}");
}

/// `script` (util-linux) available to give a program a terminal, or
/// (outside CI) a note that the terminal test is skipped.
fn script_available() -> bool {
    let found = Command::new("script").arg("--version").output().is_ok();
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "script (util-linux) is required under CI"
        );
        eprintln!("script not installed: skipping the terminal test");
    }
    found
}

#[test]
fn listen_on_a_terminal_shows_each_received_cr_as_a_line_end() {
    if !script_available() {
        return;
    }
    let hub = Hub::start();
    let kiss = hub.address();
    // `listen` with its output on a terminal (a pseudo-terminal that
    // `script` copies to its standard output, LF as CR LF).
    let listen = format!(
        "{} listen --kiss {kiss} --mycall N0CALL-2 --once",
        env!("CARGO_BIN_EXE_linklab")
    );
    let mut terminal = Live::spawn(Command::new("script").args(["-qec", &listen, "/dev/null"]));
    terminal.wait_for("listening on");
    let caller = finish(
        cli::linklab_with_input(
            &[
                "connect", "--kiss", &kiss, "--mycall", "N0CALL-1", "N0CALL-2",
            ],
            Some(b"hello\nworld\n"),
        ),
        "connect",
    );
    assert!(caller.status.success(), "{}", tail(&caller.stderr));
    let (status, shown) = terminal.exit();
    assert!(status.success(), "{shown}");
    assert!(shown.contains("hello\r\nworld\r\n"), "{shown:?}");
}
