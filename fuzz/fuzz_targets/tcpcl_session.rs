//! Drives a TCPCLv4 session with arbitrary octets in arbitrary pieces,
//! with timers and transfers of its own in between: no input may panic,
//! everything the session sends must decode as TCPCLv4, and the end of
//! the stream must close it.
//!
//! The first octet chooses the role (bit 0), whether a valid contact
//! header and SESS_INIT open the stream (bit 1, CAN_TLS with bit 2), the
//! piece size (bits 3 to 6) and whether the last XFER_ACK of a received
//! transfer is held until the transfer is accepted, two pieces later
//! (`hold_final_ack`, bit 7).
#![no_main]

use linklab_core::{Engine, Instant};
use libfuzzer_sys::fuzz_target;
use linklab_tcpcl::wire::{ContactHeader, Decoded, Limits, Message, SessInit};
use linklab_tcpcl::{Config, Event, Role, Session, State};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    let role = if mode & 1 == 0 { Role::Passive } else { Role::Active };
    let mut config = Config::new("dtn://fuzz/");
    config.keepalive_interval = 1;
    config.segment_mru = 64;
    config.transfer_mru = 256;
    config.max_segment = 16;
    config.hold_final_ack = mode & 0x80 != 0;
    let mut session = Session::new(role, config, Instant::ZERO).expect("valid config");
    let mut input = Vec::new();
    if mode & 2 != 0 {
        input.extend(ContactHeader::new(mode & 4 != 0).encode());
        let init = Message::SessInit(SessInit {
            keepalive_interval: 2,
            segment_mru: 32,
            transfer_mru: 128,
            node_id: "dtn://peer/".into(),
            extensions: vec![],
        });
        init.encode(&mut input).expect("encodes");
    }
    input.extend_from_slice(body);
    let mut out = Vec::new();
    let mut micros = 0u64;
    // Received transfers waiting to be accepted: (id, piece index).
    let mut held = Vec::new();
    for (i, piece) in input.chunks(1 + usize::from((mode >> 3) & 0x0f)).enumerate() {
        micros += 300_000 * u64::from(piece[0] & 7);
        let now = Instant::from_micros(micros);
        session.handle_input(now, piece);
        if i % 3 == 2 {
            session.handle_timeout(now);
        }
        if i % 5 == 4 && session.state() == State::Established {
            let _ = session.send_transfer(now, piece);
        }
        while let Some(octets) = session.poll_transmit(now) {
            out.extend(octets);
        }
        while let Some(event) = session.poll_event() {
            if let Event::TransferReceived { id, .. } = event {
                held.push((id, i));
            }
        }
        // Accepting a transfer the session does not hold must be refused,
        // not panic; one it holds sends its XFER_ACK.
        held.retain(|&(id, at)| {
            let due = i >= at + 2;
            if due {
                let _ = session.accept_transfer(now, id);
            }
            !due
        });
        while let Some(octets) = session.poll_transmit(now) {
            out.extend(octets);
        }
    }
    session.handle_eof(Instant::from_micros(micros));
    assert!(session.is_closed());
    let mut rest = out.strip_prefix(b"dtn!".as_slice()).map_or(&out[..], |r| &r[2..]);
    while !rest.is_empty() {
        match Message::decode(rest, &Limits::NONE) {
            Ok(Decoded::Message { len, .. }) => rest = &rest[len..],
            other => panic!("the session sent undecodable octets: {other:?}"),
        }
    }
});
