//! Fuzzes a `linklab_io::Station` as a bad client on its KISS port would:
//! arbitrary octets in arbitrary chunks, arbitrary AX.25 frames wrapped in
//! KISS, time advancing per step, timers running, and a well-behaved peer
//! station (optional) with a link to it, whose traffic may be lost.
//!
//! Input: one flags octet (modulus, recovery, listening, monitor, peer),
//! then steps of one op octet (low 3 bits: what; high 5 bits: time to
//! advance, in 25 ms units) and its operands.
//!
//! Invariants: no panic; the number of links stays within the station's
//! limit (plus the links its own user set up); every frame either station
//! transmits decodes again with the wire crate to itself, through KISS
//! too; every event's message is non-empty.
#![no_main]

use core::time::Duration;
use linklab_core::{Engine, Instant};

mod input;

use input::Input;
use libfuzzer_sys::fuzz_target;
use linklab_io::{Station, StationEvent, KISS_MAX_FRAME};
use linklab_link::{Config, RecoveryMode};
use linklab_wire::ax25::{Address, Frame};
use linklab_wire::control::Modulus;
use linklab_wire::{kiss, monitor};

/// A small link limit, so that the fuzzer reaches it.
const MAX_LINKS: usize = 4;

/// Steps per input at most, and timer runs after the input ends.
const MAX_STEPS: usize = 4096;
const SETTLE_STEPS: usize = 64;

fn addr(text: &str) -> Address {
    text.parse().expect("valid test callsign")
}

/// Drains `station`'s frames into `wire` (as KISS octets), checking that
/// each decodes again to itself, and its events, checking their text.
fn drain(station: &mut Station, now: Instant, wire: &mut Vec<u8>) {
    while let Some(frame) = station.poll_transmit(now) {
        let bytes = frame.encode();
        assert_eq!(
            Frame::decode(&bytes, frame.modulus()).as_ref(),
            Ok(&frame),
            "{bytes:02x?}"
        );
        let encoded = kiss::encode(&kiss::Frame::data(bytes.clone()));
        let mut decoder = kiss::Decoder::new(KISS_MAX_FRAME);
        decoder.push(&encoded);
        let items: Vec<_> = decoder.collect();
        assert_eq!(items, vec![Ok(kiss::Frame::data(bytes))]);
        wire.extend_from_slice(&encoded);
    }
    while let Some(event) = station.poll_event() {
        match event {
            StationEvent::BadInput(error) => assert!(!error.to_string().is_empty()),
            StationEvent::Link { remote, event } => {
                assert!(!remote.to_string().is_empty());
                if let linklab_link::Event::Error(error) = event {
                    assert!(!error.to_string().is_empty());
                }
            }
            StationEvent::Monitor { bytes, modulus, .. } => {
                assert!(!monitor::format_raw(&bytes, modulus).is_empty());
            }
            StationEvent::Outstanding { .. } | StationEvent::Unsent { .. } => {}
            StationEvent::BadInputCount(count) => {
                assert!(count.count > 0, "a count of nothing: {count:?}")
            }
            StationEvent::LateFinals { count, .. } => assert!(count > 0, "a count of nothing"),
        }
    }
}

/// A user request on `station` for `remote`, chosen by `what`.
fn user(station: &mut Station, now: Instant, remote: Address, what: u8, input: &mut Input) {
    // Errors (no link, not connected) are fine: they are the answer.
    let _ = match what % 5 {
        0 => station.connect(now, remote, &[]),
        1 | 2 => {
            let len = usize::from(input.byte().unwrap_or(0)) * 4;
            station.send(&remote, (0..len).map(|i| i as u8).collect())
        }
        3 => station.release(now, &remote),
        _ => station.disconnect(now, &remote),
    };
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input(data);
    let Some(flags) = input.byte() else {
        return;
    };
    let config = Config {
        modulus: if flags & 1 == 0 {
            Modulus::Mod8
        } else {
            Modulus::Mod128
        },
        recovery: if flags & 2 == 0 {
            RecoveryMode::Rej
        } else {
            RecoveryMode::Srej
        },
        n1: 128,
        ..Config::default()
    };
    let me = addr("N0CALL-2");
    let peer_addr = addr("N0CALL-1");
    let other = addr("N0CALL-3");
    let mut station = Station::new(me, config.clone()).expect("valid config");
    station.set_listening(flags & 4 != 0);
    station.set_monitor(flags & 8 != 0);
    station.set_max_links(MAX_LINKS);
    let mut peer = (flags & 16 != 0).then(|| {
        let mut peer = Station::new(peer_addr, config).expect("valid config");
        peer.set_listening(true);
        peer
    });
    let mut now = Instant::ZERO;
    // KISS octets in flight: peer to station, station to peer.
    let mut to_station = Vec::new();
    let mut to_peer = Vec::new();

    let mut steps = 0;
    while let Some(op) = input.byte() {
        steps += 1;
        if steps > MAX_STEPS {
            break;
        }
        now = now + Duration::from_millis(u64::from(op >> 3) * 25);
        match op & 7 {
            // Raw octets, any chunk of the stream.
            0 | 1 => {
                let len = usize::from(input.byte().unwrap_or(0));
                station.handle_kiss_bytes(now, input.take(len));
            }
            // An arbitrary AX.25 frame, in a well-formed KISS frame.
            2 => {
                let len = usize::from(input.byte().unwrap_or(0));
                let frame = kiss::Frame::data(input.take(len).to_vec());
                station.handle_kiss_bytes(now, &kiss::encode(&frame));
            }
            // Time passes to the next timer.
            3 => {
                let next = [
                    station.poll_timeout(),
                    peer.as_ref().and_then(Station::poll_timeout),
                ]
                .into_iter()
                .flatten()
                .min();
                if let Some(t) = next {
                    now = now.max(t);
                }
            }
            // The channel delivers what is in flight, both ways.
            4 => {
                station.handle_kiss_bytes(now, &to_station);
                if let Some(peer) = &mut peer {
                    peer.handle_kiss_bytes(now, &to_peer);
                }
                to_station.clear();
                to_peer.clear();
            }
            // The peer's user.
            5 => {
                let what = input.byte().unwrap_or(0);
                if let Some(peer) = &mut peer {
                    user(peer, now, me, what, &mut input);
                }
            }
            // The station's user, with the peer or another station.
            6 => {
                let what = input.byte().unwrap_or(0);
                let remote = if what & 0x80 == 0 { peer_addr } else { other };
                user(&mut station, now, remote, what, &mut input);
            }
            // What is in flight to the station is lost (a bad FCS).
            _ => to_station.clear(),
        }
        station.handle_timeout(now);
        drain(&mut station, now, &mut to_peer);
        if let Some(peer) = &mut peer {
            peer.handle_timeout(now);
            drain(peer, now, &mut to_station);
        } else {
            to_peer.clear();
        }
        // The user set up at most two links: with the peer and `other`.
        assert!(station.links().count() <= MAX_LINKS + 2);
    }

    // Let the timers and the channel run out their course for a while.
    for _ in 0..SETTLE_STEPS {
        let next = [
            station.poll_timeout(),
            peer.as_ref().and_then(Station::poll_timeout),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(t) = next else { break };
        now = now.max(t);
        station.handle_kiss_bytes(now, &to_station);
        to_station.clear();
        station.handle_timeout(now);
        drain(&mut station, now, &mut to_peer);
        if let Some(peer) = &mut peer {
            peer.handle_kiss_bytes(now, &to_peer);
            peer.handle_timeout(now);
            drain(peer, now, &mut to_station);
        }
        to_peer.clear();
        assert!(station.links().count() <= MAX_LINKS + 2);
    }
});
