//! `linklab agw` as a process: an AGWPE client (a plain socket speaking
//! the protocol through `linklab_agw::wire`) connects out to `linklab
//! listen` and takes a connection from `linklab send` over `linklab
//! channel`; 32 clients at once with one that breaks the framing; a TNC
//! that goes away and comes back; the refusals at start. Every run is
//! bounded in time.

mod cli;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use cli::agw::{Agw, Client, LIMIT};
use cli::channel::Channel;
use cli::{finish, linklab, listen_once, tail, text};
use linklab_agw::wire::{CallField, Header};
use linklab_wire::ax25::{Address, Frame, Pid};
use linklab_wire::kiss;

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(37).wrapping_add(seed))
        .collect()
}

#[test]
fn connect_out_to_listen_and_accept_from_send() {
    let channel = Channel::fast(2, 3);
    let agw = Agw::start(&[channel.kiss(0)], &["--mycall", "N0CALL-9"]);
    let dir = tempfile::tempdir().unwrap();
    let mut c = agw.client();
    c.send(b'X', "N0CALL-1", "", &[]);
    assert_eq!(c.wait(b'X').unwrap().data, [1]);

    // Out: to `linklab listen`, 20 KB, paced by 'Y'.
    let got = dir.path().join("got.bin");
    let listen = listen_once(&channel.kiss(1), &got);
    thread::sleep(Duration::from_millis(300));
    c.send(b'C', "N0CALL-1", "N0CALL-2", &[]);
    assert_eq!(
        c.wait(b'C').unwrap().data,
        b"*** CONNECTED With Station N0CALL-2\r\0"
    );
    let out = pattern(20 * 1024, 1);
    let mut counts = Vec::new();
    for chunk in out.chunks(1024) {
        c.send(b'D', "N0CALL-1", "N0CALL-2", chunk);
        counts.push(c.outstanding("N0CALL-1", "N0CALL-2"));
    }
    let end = Instant::now() + LIMIT;
    while c.outstanding("N0CALL-1", "N0CALL-2") > 0 {
        assert!(Instant::now() < end, "Y never fell to zero");
        thread::sleep(Duration::from_millis(100));
    }
    assert!(counts.iter().any(|&n| n > 0), "{counts:?}");
    c.send(b'd', "N0CALL-1", "N0CALL-2", &[]);
    assert_eq!(
        c.wait(b'd').unwrap().data,
        b"*** DISCONNECTED From Station N0CALL-2\r\0"
    );
    let listened = finish(listen, "linklab listen");
    assert!(listened.status.success(), "{}", tail(&listened.stderr));
    assert_eq!(std::fs::read(&got).unwrap(), out);

    // In: from `linklab send` to the registered N0CALL-1.
    let back = pattern(20 * 1024, 2);
    let file = dir.path().join("back.bin");
    std::fs::write(&file, &back).unwrap();
    let send = linklab(&[
        "send",
        "--kiss",
        &channel.kiss(1),
        "--mycall",
        "N0CALL-2",
        "--to",
        "N0CALL-1",
        file.to_str().unwrap(),
    ]);
    assert_eq!(
        c.wait(b'C').unwrap().data,
        b"*** CONNECTED To Station N0CALL-2\r\0"
    );
    let d = c.wait(b'd').unwrap();
    assert_eq!(d.data, b"*** DISCONNECTED From Station N0CALL-2\r\0");
    let received: Vec<u8> = c
        .seen
        .iter()
        .filter(|m| m.header.kind == b'D')
        .flat_map(|m| m.data.clone())
        .collect();
    assert_eq!(received.len(), back.len());
    assert!(received == back, "data differs");
    let sent = finish(send, "linklab send");
    assert!(sent.status.success(), "{}", tail(&sent.stderr));
    let log = agw.stop();
    assert!(log.contains("client 1 connected"), "{log}");
}

#[test]
fn thirty_two_clients_and_one_that_breaks_the_framing() {
    let channel = Channel::fast(1, 3);
    let agw = Agw::start(&[channel.kiss(0)], &[]);
    let mut clients: Vec<Client> = (0..32).map(|_| agw.client()).collect();
    let mut bad = agw.client();
    let mut header = Header::new(0, b'D');
    header.data_len = 0x7FFF_FFFF;
    bad.stream.write_all(&header.encode()).unwrap();
    assert!(bad.wait(b'R').is_none(), "the server closes the connection");
    for c in &mut clients {
        c.send(b'R', "", "", &[]);
        c.send(b'G', "", "", &[]);
    }
    for c in &mut clients {
        assert_eq!(c.wait(b'R').unwrap().data.len(), 8);
        assert!(c.wait(b'G').unwrap().data.starts_with(b"1;Port1 "));
    }
    drop(clients);
    let log = agw.stop();
    assert!(
        log.contains("client 33: a 'D' header announces 2147483647 octets"),
        "{log}"
    );
}

#[test]
fn a_lost_tnc_is_reported_and_reconnected_while_the_other_port_serves() {
    let channel = Channel::fast(1, 3);
    let fake = TcpListener::bind("127.0.0.1:0").unwrap();
    let fake_kiss = format!("tcp:{}", fake.local_addr().unwrap());
    let accepting = thread::spawn(move || {
        let (first, _) = fake.accept().unwrap();
        (fake, first)
    });
    let agw = Agw::start(&[channel.kiss(0), fake_kiss], &[]);
    let (fake, first) = accepting.join().unwrap();
    let mut c = agw.client();
    c.send(b'X', "N0CALL-1", "", &[]);
    c.wait(b'X').unwrap();
    // A link on port 2 in progress (nobody answers there).
    let mut header = Header::new(1, b'C');
    header.call_from = CallField::from_text("N0CALL-1");
    header.call_to = CallField::from_text("N0CALL-7");
    c.stream.write_all(&header.encode()).unwrap();
    thread::sleep(Duration::from_millis(300));
    drop(first);
    let d = c.wait(b'd').unwrap();
    assert_eq!(d.header.port, 1);
    assert_eq!(d.data, b"*** DISCONNECTED From Station N0CALL-7\r\0");
    // Port 1 still serves.
    c.send(b'G', "", "", &[]);
    assert!(c.wait(b'G').unwrap().data.starts_with(b"2;Port1 "));
    // The TNC is tried again (every 5 s) and found.
    fake.set_nonblocking(false).unwrap();
    let (_second, _) = fake.accept().unwrap();
    thread::sleep(Duration::from_millis(300));
    let log = agw.stop();
    assert!(
        log.contains("port 2: ") && log.contains("; 1 link ended"),
        "{log}"
    );
    assert!(log.contains("port 2: TNC tcp:"), "{log}");
}

#[test]
fn refusals_at_start_are_clear() {
    // No TNC answering.
    let unused = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("tcp:{}", unused.local_addr().unwrap());
    drop(unused);
    let out = finish(
        linklab(&["agw", "--kiss", &addr, "--listen", "127.0.0.1:0"]),
        "agw",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("port 1: "),
        "{}",
        text(&out.stderr)
    );
    // A busy listening port.
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let listen = busy.local_addr().unwrap().to_string();
    let out = finish(
        linklab(&["agw", "--kiss", &addr, "--listen", &listen]),
        "agw",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains(&format!("cannot listen on {listen} for AGWPE clients")),
        "{}",
        text(&out.stderr)
    );
    // No TNC at all, and a bad link setting: usage errors.
    let out = finish(linklab(&["agw"]), "agw");
    assert_eq!(out.status.code(), Some(2));
    let out = finish(linklab(&["agw", "--kiss", &addr, "--window", "9"]), "agw");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--window"),
        "{}",
        text(&out.stderr)
    );
}

fn ui(from: &str, to: &str, text: &str) -> Vec<u8> {
    let (from, to): (Address, Address) = (from.parse().unwrap(), to.parse().unwrap());
    Frame::ui(to, from, &[], Pid::NoLayer3, text.as_bytes().to_vec())
        .unwrap()
        .encode()
}

/// Reads KISS data frames from `stream` until one carries `body`.
fn wait_for_kiss(stream: &mut TcpStream, body: &[u8]) {
    let mut decoder = kiss::Decoder::new(4096);
    let end = Instant::now() + LIMIT;
    let mut buf = [0u8; 4096];
    loop {
        while let Some(Ok(frame)) = decoder.next() {
            if frame.command == kiss::Command::Data(body.to_vec()) {
                return;
            }
        }
        assert!(Instant::now() < end, "frame never arrived");
        match stream.read(&mut buf) {
            Ok(0) => panic!("connection closed"),
            Ok(n) => decoder.push(&buf[..n]),
            Err(_) => {}
        }
    }
}

#[test]
fn the_tnc_is_shared_with_kiss_clients_each_side_hearing_the_other() {
    let channel = Channel::fast(2, 3);
    let agw = Agw::start(&[channel.kiss(0)], &["--kiss-server", "127.0.0.1:0"]);
    let mut shared = TcpStream::connect(("127.0.0.1", agw.kiss_port.unwrap())).unwrap();
    shared
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut air = channel.connect(1);
    air.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut c = agw.client();
    c.send(b'm', "", "", &[]);
    c.send(b'R', "", "", &[]);
    c.wait(b'R').unwrap();
    thread::sleep(Duration::from_millis(200));

    // KISS client -> the air, and the AGWPE monitor sees it as sent.
    let from_kiss = ui("N0CALL-5", "APRS", "from the kiss client");
    shared
        .write_all(&kiss::encode(&kiss::Frame::data(from_kiss.clone())))
        .unwrap();
    wait_for_kiss(&mut air, &from_kiss);
    let t = c.wait(b'T').unwrap();
    assert!(
        t.data.ends_with(b"\rfrom the kiss client\r\0"),
        "{:?}",
        text(&t.data)
    );

    // AGWPE client -> the air and the KISS client.
    c.send(b'M', "N0CALL-1", "CQ", b"from the agw client");
    let from_agw = ui("N0CALL-1", "CQ", "from the agw client");
    wait_for_kiss(&mut air, &from_agw);
    wait_for_kiss(&mut shared, &from_agw);

    // The air -> both.
    let from_air = ui("N0CALL-2", "APRS", "from the air");
    air.write_all(&kiss::encode(&kiss::Frame::data(from_air.clone())))
        .unwrap();
    wait_for_kiss(&mut shared, &from_air);
    let u = c.wait(b'U').unwrap();
    assert!(u.data.ends_with(b"\rfrom the air\r\0"));
    let log = agw.stop();
    assert!(log.contains("(KISS) connected"), "{log}");
}

#[test]
fn ports_from_a_file_have_settings_of_their_own() {
    let channel = Channel::fast(2, 3);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("agw.toml");
    std::fs::write(
        &file,
        format!(
            "[[port]]\nkiss = \"{}\"\nwindow = 2\n\n[[port]]\nkiss = \"{}\"\nmod128 = true\nsrej = true\nwindow = 32\nbitrate = 9600\n",
            channel.kiss(0),
            channel.kiss(1)
        ),
    )
    .unwrap();
    let agw = Agw::start(&[], &["--config", file.to_str().unwrap()]);
    let mut c = agw.client();
    c.send(b'G', "", "", &[]);
    assert!(c.wait(b'G').unwrap().data.starts_with(b"2;Port1 "));
    for (port, window, rate) in [(0u8, 2u8, 0u8), (1, 32, 3)] {
        let mut header = Header::new(port, b'g');
        header.call_from = CallField::EMPTY;
        c.stream.write_all(&header.encode()).unwrap();
        let caps = c.wait(b'g').unwrap();
        assert_eq!(caps.header.port, port);
        assert_eq!((caps.data[6], caps.data[0]), (window, rate));
    }
    drop(agw);

    // Mistakes name the file, the table and the option.
    for (body, expect) in [
        (
            "[[port]]\nkiss = \"tcp:127.0.0.1:1\"\nwindow = 9\n",
            "port table 1: --window",
        ),
        (
            "[[port]]\nkiss = \"tcp:127.0.0.1:1\"\nspeed = 9\n",
            "port table 1: unexpected argument '--speed'",
        ),
        (
            "[[port]]\nwindow = 2\n",
            "port table 1: the following required arguments",
        ),
        ("port = 3\n", "`port` must be an array of tables"),
        ("listen = 3\n", "unknown key `listen`"),
        ("[[port]\n", "agw.toml: TOML parse error at line 1"),
    ] {
        std::fs::write(&file, body).unwrap();
        let out = finish(linklab(&["agw", "--config", file.to_str().unwrap()]), "agw");
        assert_eq!(out.status.code(), Some(2), "{body}");
        let err = text(&out.stderr);
        assert!(err.contains(expect), "{body}: {err}");
    }
}

#[test]
fn a_stop_releases_every_link_with_disc_before_the_process_ends() {
    let channel = Channel::fast(2, 3);
    let agw = Agw::start(&[channel.kiss(0)], &[]);
    let dir = tempfile::tempdir().unwrap();
    let got = dir.path().join("got.bin");
    let listen = listen_once(&channel.kiss(1), &got);
    thread::sleep(Duration::from_millis(300));
    let mut c = agw.client();
    c.send(b'X', "N0CALL-1", "", &[]);
    c.send(b'C', "N0CALL-1", "N0CALL-2", &[]);
    c.wait(b'C').unwrap();
    c.send(b'D', "N0CALL-1", "N0CALL-2", b"hello");
    while c.outstanding("N0CALL-1", "N0CALL-2") > 0 {
        thread::sleep(Duration::from_millis(50));
    }
    // SIGINT with the link up: its DISC must reach the peer.
    let log = agw.stop();
    assert!(log.contains("stopping: releasing every link"), "{log}");
    let listened = finish(listen, "linklab listen");
    assert!(listened.status.success(), "{}", tail(&listened.stderr));
    assert!(
        text(&listened.stderr).contains("released by the peer (DISC)"),
        "{}",
        text(&listened.stderr)
    );
    assert_eq!(std::fs::read(&got).unwrap(), b"hello");
}
