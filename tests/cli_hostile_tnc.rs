//! `linklab send` against a hostile peer behind a KISS TNC with no air
//! time at all: a TNC emulator on 127.0.0.1 that is the far station
//! itself, accepts the link and then answers every I frame and every poll
//! with REJ N(R) = 0, or every poll with RR F = 1 and the same stale N(R).
//! Before the link engine bounded its retransmissions
//! (`crates/link/tests/hostile_peers.rs`), the first peer drew 8.17
//! million I frames in 190 s and the second was still polled after 190 s.
//! Now `send` gives up with the named error, having sent at most
//! (N2 + 1) x (2k + 2) frames (N2 = 10, k = 7 on the modulo-8 link).

mod cli;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;

use cli::{finish, linklab, next_ax25_frame, text};
use linklab_wire::ax25::{AddressField, CommandResponse, Frame};
use linklab_wire::control::{Control, Modulus, Supervisory, Unnumbered};
use linklab_wire::kiss;

/// How the far station answers once the link is up.
#[derive(Clone, Copy)]
enum Peer {
    /// REJ N(R) = 0 to every I frame and every poll.
    RejectForever,
    /// RR F = 1, N(R) = 0 to every poll, nothing else.
    StaleAnswers,
}

/// The TNC emulator: accepts one client on `listener` and answers as
/// `peer` until the client goes or sends DM; returns the frames it got.
fn tnc(listener: TcpListener, peer: Peer) -> usize {
    let (mut client, _) = listener.accept().unwrap();
    let mut decoder = kiss::Decoder::new(4096);
    let (mut frames, mut buf) = (0, [0u8; 4096]);
    loop {
        let n = match client.read(&mut buf) {
            Ok(0) | Err(_) => return frames,
            Ok(n) => n,
        };
        decoder.push(&buf[..n]);
        while let Some(frame) = next_ax25_frame(&mut decoder) {
            frames += 1;
            match answer(&frame, peer) {
                Answer::Frame(reply) => {
                    let bytes = kiss::encode(&kiss::Frame::data(reply.encode()));
                    if client.write_all(&bytes).is_err() {
                        return frames;
                    }
                }
                Answer::Nothing => {}
                Answer::Gone => return frames,
            }
        }
    }
}

enum Answer {
    Frame(Frame),
    Nothing,
    /// The client gave the link up (DM).
    Gone,
}

fn answer(frame: &Frame, peer: Peer) -> Answer {
    let command = frame.command_response() == CommandResponse::Command;
    let reply = AddressField::new(
        *frame.source(),
        *frame.dest(),
        &[],
        CommandResponse::Response,
    )
    .unwrap();
    let u = |kind, pf| Frame::u(reply.clone(), Modulus::Mod8, kind, pf, Vec::new()).unwrap();
    let s = |kind, pf| Frame::s(reply.clone(), Modulus::Mod8, kind, 0, pf).unwrap();
    match (frame.control(), peer) {
        (
            Control::U {
                kind: Unnumbered::Sabm | Unnumbered::Disc,
                pf,
            },
            _,
        ) => Answer::Frame(u(Unnumbered::Ua, pf)),
        (
            Control::U {
                kind: Unnumbered::Dm,
                ..
            },
            _,
        ) => Answer::Gone,
        (Control::I { pf, .. }, Peer::RejectForever) => Answer::Frame(s(Supervisory::Rej, pf)),
        (Control::S { pf: true, .. }, Peer::RejectForever) if command => {
            Answer::Frame(s(Supervisory::Rej, true))
        }
        (Control::I { pf: true, .. } | Control::S { pf: true, .. }, Peer::StaleAnswers)
            if command =>
        {
            Answer::Frame(s(Supervisory::Rr, true))
        }
        _ => Answer::Nothing,
    }
}

/// Runs `linklab send` of 20,000 octets against `peer`; returns its
/// standard error and the frames the peer got.
fn send_to(peer: Peer) -> (String, usize) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (done, got) = mpsc::channel();
    thread::spawn(move || done.send(tnc(listener, peer)).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.bin");
    std::fs::write(&input, vec![0x5a; 20_000]).unwrap();
    let kiss = format!("tcp:127.0.0.1:{port}");
    let out = finish(
        linklab(&[
            "send",
            "--kiss",
            &kiss,
            "--mycall",
            "N0CALL-1",
            "--to",
            "N0CALL-2",
            input.to_str().unwrap(),
        ]),
        "send",
    );
    assert!(
        !out.status.success(),
        "send succeeded against a hostile peer"
    );
    // Had `send` never connected, this ends the emulator's wait for it
    // (the emulator's own connection closed with the process).
    drop(TcpStream::connect(("127.0.0.1", port)));
    (text(&out.stderr), got.recv().unwrap())
}

/// (N2 + 1) x (2k + 2) with the defaults of a modulo-8 link.
const BOUND: usize = 11 * 16;

#[test]
fn send_gives_up_on_a_peer_that_rejects_for_ever() {
    let (log, frames) = send_to(Peer::RejectForever);
    assert!(
        log.contains("the link with N0CALL-2 failed: data unacknowledged after N2 tries"),
        "{log}"
    );
    assert!(frames <= BOUND, "{frames} frames against REJ for ever");
    eprintln!("REJ for ever: {frames} frames, then: {log}");
}

#[test]
fn send_gives_up_on_a_peer_whose_answers_are_stale() {
    let (log, frames) = send_to(Peer::StaleAnswers);
    assert!(
        log.contains("the link with N0CALL-2 failed: data unacknowledged after N2 tries"),
        "{log}"
    );
    assert!(frames <= BOUND, "{frames} frames against stale answers");
    eprintln!("stale answers: {frames} frames, then: {log}");
}
