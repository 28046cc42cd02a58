//! Drives an AX.25 CL session with arbitrary octets in arbitrary pieces,
//! with bundles of its own and link losses in between: no input may panic,
//! everything the session sends must decode as AX.25 CL messages with good
//! CRCs, and every bundle queued must be reported exactly once.
//!
//! The first octet chooses whether a valid contact header opens the
//! stream (bit 0), the ack_window (bits 1-2) and the piece size (bits 3-7).
#![no_main]

use libfuzzer_sys::fuzz_target;
use linklab_ax25cl::wire::{ContactHeader, Decoded, Message};
use linklab_ax25cl::{Config, Event, Session, State};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    let mut config = Config::new("ipn:1.0").fit_frame(40).expect("fits");
    config.ack_window = 1 + u32::from((mode >> 1) & 3);
    config.max_bundle_in = 300;
    config.max_segment_in = 64;
    let mut session = Session::new(config).expect("valid config");
    session.link_up();
    let mut input = Vec::new();
    if mode & 1 != 0 {
        let header = ContactHeader {
            flags: 3,
            keepalive_interval: 0,
            local_eid: "ipn:2.0".into(),
        };
        input.extend(header.encode());
    }
    input.extend_from_slice(body);
    let mut out = Vec::new();
    let mut queued = 0u64;
    let mut reported = 0u64;
    for (i, piece) in input.chunks(1 + usize::from(mode >> 3)).enumerate() {
        session.handle_input(piece);
        if i % 4 == 3 && session.state() == State::Established {
            if session.send_bundle(queued, piece.repeat(7)).is_ok() {
                queued += 1;
            }
        }
        if piece[0] == 0xA5 {
            session.link_down();
            session.link_up();
        }
        while let Some(octets) = session.poll_transmit() {
            out.push(octets);
        }
        while let Some(event) = session.poll_event() {
            if matches!(
                event,
                Event::BundleSent { .. }
                    | Event::BundleRefused { .. }
                    | Event::TransferInterrupted { .. }
            ) {
                reported += 1;
            }
        }
    }
    session.link_down();
    while let Some(event) = session.poll_event() {
        if matches!(
            event,
            Event::BundleSent { .. } | Event::BundleRefused { .. } | Event::TransferInterrupted { .. }
        ) {
            reported += 1;
        }
    }
    assert_eq!(queued, reported, "every bundle is reported once");
    for octets in out {
        if octets.starts_with(b"dtn!") {
            assert!(matches!(
                ContactHeader::decode(&octets, 64),
                Ok(Decoded::Message { len, .. }) if len == octets.len()
            ));
            continue;
        }
        match Message::decode(&octets, u64::MAX) {
            Ok(Decoded::Message { len, .. }) if len == octets.len() => {}
            other => panic!("the session sent {octets:?}: {other:?}"),
        }
        assert!(octets.len() <= 40, "a message fits the frame");
    }
});
