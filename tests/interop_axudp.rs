//! AXUDP (AX.25 over UDP, RFC 1226 as ax25ipd sends it) against a real
//! peer: ax25ipd from Debian's ax25-apps, in `tnc` mode, bridging a
//! pseudo-terminal that speaks KISS to a UDP socket on 127.0.0.1. No
//! kernel AX.25 and no root are needed.
//!
//! - `linklab send` on the pseudo-terminal (`--kiss serial:...`), ax25ipd,
//!   then `linklab listen --kiss axudp:...`: 8 KB, byte-exact;
//! - the other way round, `linklab send --kiss axudp:...` to a listener
//!   on ax25ipd's pseudo-terminal;
//! - and two linklab ends talking AXUDP to each other directly;
//! - and ax25ipd's datagrams octet by octet: a KISS frame written on its
//!   terminal comes out as the frame and its FCS low octet first, and a
//!   datagram with a bad FCS never reaches the terminal.
//!
//! Every frame crosses ax25ipd's FCS check (crc.c, `ok_crc`) or linklab's
//! (`linklab_wire::axudp::decode`), so a transfer that completes shows
//! the two agree on the FCS and its octet order. Each run is bounded by
//! the `cli` module's limit (60 s); it takes well under a second.
//!
//! Without ax25ipd the ax25ipd tests say so and pass, except under CI
//! (`CI` set), where they fail.

mod cli;
mod interop;

use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use cli::{assert_both_succeeded, finish, linklab, tail, text, LIMIT};
use linklab_wire::{axudp, fcs, kiss};

fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 37 + i / 251) as u8).collect()
}

/// Two different UDP ports on 127.0.0.1 that were free a moment ago.
fn free_ports() -> (u16, u16) {
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    let b = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = |s: &UdpSocket| s.local_addr().unwrap().port();
    (port(&a), port(&b))
}

/// Waits (bounded) until something is bound to UDP `port` on 127.0.0.1 or
/// on every address, as the kernel lists it in /proc/net/udp.
fn wait_for_udp_bind(port: u16) {
    let wanted = [
        format!("0100007F:{port:04X}"),
        format!("00000000:{port:04X}"),
    ];
    let end = Instant::now() + LIMIT;
    loop {
        let table = std::fs::read_to_string("/proc/net/udp").unwrap_or_default();
        let bound = table.lines().skip(1).any(|line| {
            line.split_whitespace()
                .nth(1)
                .is_some_and(|local| wanted.iter().any(|w| w == local))
        });
        if bound {
            return;
        }
        assert!(Instant::now() < end, "nothing ever bound UDP port {port}");
        thread::sleep(Duration::from_millis(10));
    }
}

/// Waits (bounded) until process `pid` has `path` open.
fn wait_for_open(pid: u32, path: &Path) {
    let end = Instant::now() + LIMIT;
    loop {
        let open = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == path));
        if open {
            return;
        }
        assert!(
            Instant::now() < end,
            "process {pid} never opened {}",
            path.display()
        );
        thread::sleep(Duration::from_millis(10));
    }
}

/// ax25ipd running on a pseudo-terminal of its own, killed when dropped.
struct Ax25ipd {
    child: Child,
    /// The KISS side: the pseudo-terminal's slave.
    tty: PathBuf,
}

impl Ax25ipd {
    /// Starts ax25ipd in `tnc` mode on UDP `port`, every frame from the
    /// KISS side routed to 127.0.0.1:`peer_port` (a default route), with
    /// its configuration file in `dir`.
    fn start(dir: &Path, port: u16, peer_port: u16) -> Ax25ipd {
        let config = dir.join("ax25ipd.conf");
        // ax25ipd.conf(5): "socket udp PORT" binds the port; "device
        // /dev/ptmx" makes a Unix98 pseudo-terminal and prints the name of
        // its slave; "route CALL HOST udp PORT d" is a default route.
        std::fs::write(
            &config,
            format!(
                "socket udp {port}\nmode tnc\ndevice /dev/ptmx\nspeed 9600\nloglevel 0\n\
                 route N0CALL 127.0.0.1 udp {peer_port} d\n"
            ),
        )
        .unwrap();
        let mut child = Command::new("ax25ipd")
            .arg("-c")
            .arg(&config)
            .arg("-f")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("ax25ipd runs");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.starts_with("/dev/") {
                    tx.send(line).ok();
                }
            }
        });
        // ax25ipd binds its UDP socket before it opens the terminal, and
        // prints the slave's name once both are done (io.c, io_open).
        let tty = rx
            .recv_timeout(LIMIT)
            .expect("ax25ipd printed no pseudo-terminal name");
        Ax25ipd {
            child,
            tty: PathBuf::from(tty),
        }
    }

    fn kiss(&self) -> String {
        format!("serial:{}:9600", self.tty.display())
    }
}

impl Drop for Ax25ipd {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

fn ax25ipd_available() -> bool {
    interop::programs_available("ax25ipd", &["ax25ipd"], "ax25-apps")
}

/// Sends `len` octets from N0CALL-1 on TNC `send_kiss` to a listener,
/// N0CALL-2 on TNC `listen_kiss`, started and then waited for with
/// `ready(pid)`; checks the copy byte for byte.
fn transfer(dir: &Path, len: usize, send_kiss: &str, listen_kiss: &str, ready: impl FnOnce(u32)) {
    let input = dir.join("input.bin");
    let output = dir.join("output.bin");
    let data = payload(len);
    std::fs::write(&input, &data).unwrap();
    let listener = linklab(&[
        "listen",
        "--kiss",
        listen_kiss,
        "--mycall",
        "N0CALL-2",
        "--once",
        "--out",
        output.to_str().unwrap(),
    ]);
    ready(listener.child.id());
    let sender = finish(
        linklab(&[
            "send",
            "--kiss",
            send_kiss,
            "--mycall",
            "N0CALL-1",
            "--to",
            "N0CALL-2",
            input.to_str().unwrap(),
        ]),
        "send",
    );
    let listener = finish(listener, "listen");
    assert_both_succeeded(&sender, &listener);
    assert!(
        text(&sender.stdout).starts_with(&format!("sent {len} bytes to N0CALL-2 in ")),
        "{}",
        text(&sender.stdout)
    );
    let received = std::fs::read(&output).unwrap();
    assert_eq!(received.len(), data.len());
    assert!(received == data, "received data differ");
}

#[test]
fn two_linklab_ends_talk_axudp() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = free_ports();
    let sender = format!("axudp:127.0.0.1:{a}@127.0.0.1:{b}");
    let listener = format!("axudp:127.0.0.1:{b}@N0CALL-1=127.0.0.1:{a}");
    transfer(dir.path(), 8 * 1024, &sender, &listener, |_| {
        wait_for_udp_bind(b)
    });
}

#[test]
fn from_a_tnc_behind_ax25ipd_to_linklab_on_axudp() {
    if !ax25ipd_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (ours, theirs) = free_ports();
    let ax25ipd = Ax25ipd::start(dir.path(), theirs, ours);
    let listener = format!("axudp:127.0.0.1:{ours}@127.0.0.1:{theirs}");
    transfer(dir.path(), 8 * 1024, &ax25ipd.kiss(), &listener, |_| {
        wait_for_udp_bind(ours)
    });
}

#[test]
fn from_linklab_on_axudp_to_a_tnc_behind_ax25ipd() {
    if !ax25ipd_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (ours, theirs) = free_ports();
    let ax25ipd = Ax25ipd::start(dir.path(), theirs, ours);
    let sender = format!("axudp:127.0.0.1:{ours}@N0CALL-2=127.0.0.1:{theirs}");
    let tty = ax25ipd.tty.clone();
    transfer(dir.path(), 8 * 1024, &sender, &ax25ipd.kiss(), |pid| {
        wait_for_open(pid, &tty)
    });
}

/// A UI frame from N0CALL-1 to `dest` with PID 0xF0 and `info`.
fn ui_frame(dest: &str, info: &[u8]) -> Vec<u8> {
    use linklab_wire::ax25::{AddressField, CommandResponse};
    let field = AddressField::new(
        dest.parse().unwrap(),
        "N0CALL-1".parse().unwrap(),
        &[],
        CommandResponse::Command,
    )
    .unwrap();
    let mut frame = Vec::new();
    field.encode_into(&mut frame);
    frame.extend_from_slice(&[0x03, 0xF0]);
    frame.extend_from_slice(info);
    frame
}

#[test]
fn ax25ipd_sends_the_fcs_low_octet_first_and_drops_bad_ones() {
    if !ax25ipd_available() || !interop::programs_available("ax25ipd", &["stty"], "coreutils") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    peer.set_read_timeout(Some(LIMIT)).unwrap();
    let ours = peer.local_addr().unwrap().port();
    let theirs = {
        let probe = UdpSocket::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let ax25ipd = Ax25ipd::start(dir.path(), theirs, ours);
    // The terminal's own end, raw, as a TNC's host would set it. Open it
    // before stty does: ax25ipd exits when the last program holding it
    // closes it (io.c, io_error on reading the tty).
    let mut tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&ax25ipd.tty)
        .unwrap();
    let stty = Command::new("stty")
        .arg("-F")
        .arg(&ax25ipd.tty)
        .args(["raw", "-echo"])
        .status()
        .unwrap();
    assert!(stty.success());

    // KISS to UDP: the frame, then its FCS-16 low octet first.
    let frame = ui_frame("N0CALL-2", b"to the internet \xC0\xDB");
    std::io::Write::write_all(&mut tty, &kiss::encode(&kiss::Frame::data(frame.clone()))).unwrap();
    let mut buf = [0u8; 2048];
    let (n, from) = peer.recv_from(&mut buf).expect("a datagram from ax25ipd");
    assert_eq!(from.port(), theirs);
    let mut expected = frame.clone();
    expected.extend_from_slice(&fcs::fcs16(&frame).to_le_bytes());
    assert_eq!(&buf[..n], expected.as_slice());
    assert_eq!(axudp::decode(&buf[..n]), Ok(frame.as_slice()));

    // UDP to KISS: a bad FCS is dropped, the good frame after it passes.
    let back = ui_frame("N0CALL-1", b"from the internet");
    let mut bad = axudp::encode(&back);
    let last = bad.len() - 1;
    bad[last] ^= 0xFF;
    let target = format!("127.0.0.1:{theirs}");
    peer.send_to(&bad, &target).unwrap();
    peer.send_to(&axudp::encode(&back), &target).unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut decoder = kiss::Decoder::new(4096);
        let mut buf = [0u8; 512];
        while let Ok(n) = std::io::Read::read(&mut tty, &mut buf) {
            if n == 0 {
                break;
            }
            decoder.push(&buf[..n]);
            for frame in decoder.by_ref() {
                if tx.send(frame).is_err() {
                    return;
                }
            }
        }
    });
    let got = rx.recv_timeout(LIMIT).expect("a KISS frame from ax25ipd");
    assert_eq!(got, Ok(kiss::Frame::data(back)));
    drop(ax25ipd);
    // Nothing else came: the bad datagram was not passed on.
    assert!(
        rx.iter().all(|f| f.is_err()),
        "ax25ipd passed on a bad frame"
    );
}

/// A station whose port is AXUDP, with a file drop, takes a file from a
/// KISS TNC behind ax25ipd: the station's port is ax25ipd's default route
/// and ax25ipd is the station's.
#[test]
fn a_station_port_on_axudp_takes_a_file_from_behind_ax25ipd() {
    if !ax25ipd_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (ours, theirs) = free_ports();
    let ax25ipd = Ax25ipd::start(dir.path(), theirs, ours);
    let drop_dir = dir.path().join("drop");
    std::fs::create_dir(&drop_dir).unwrap();
    let config = format!(
        "[station]\ncontrol = \"{}\"\n\n[[port]]\nname = \"axip\"\n\
         kiss = \"axudp:127.0.0.1:{ours}@127.0.0.1:{theirs}\"\ncallsigns = [\"N0CALL-2\"]\n\n\
         [[service]]\ncallsign = \"N0CALL-5\"\nbuiltin = \"drop\"\ndirectory = \"{}\"\n",
        dir.path().join("station.sock").display(),
        drop_dir.display()
    );
    let station = cli::station::Station::start(dir.path(), &config);
    wait_for_udp_bind(ours);
    let data = payload(8 * 1024);
    let input = dir.path().join("input.bin");
    std::fs::write(&input, &data).unwrap();
    let sender = finish(
        linklab(&[
            "send",
            "--kiss",
            &ax25ipd.kiss(),
            "--mycall",
            "N0CALL-1",
            "--to",
            "N0CALL-5",
            input.to_str().unwrap(),
        ]),
        "send",
    );
    assert!(sender.status.success(), "{}", tail(&sender.stderr));
    station.wait_for("the drop stored", |l| l.contains(": stored "));
    let stored: Vec<_> = std::fs::read_dir(&drop_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(
        std::fs::read(&stored[0]).unwrap() == data,
        "received data differ"
    );
    let (exit, log) = station.stop();
    assert!(exit.success(), "{log}");
}
