//! Fuzzes the AGWPE server's core (`linklab_agw::Server`) as bad clients
//! and a bad TNC would: two AGWPE clients and a KISS client writing
//! arbitrary octets in arbitrary chunks (absurd lengths, unknown kinds,
//! valid requests with broken callsigns), the TNC sending arbitrary
//! octets and well-formed frames to registered callsigns, clients
//! leaving, the TNC going away and coming back, time advancing.
//!
//! Input: steps of one op octet (low 3 bits: what; bits 3-4: which
//! client; high 3 bits: time to advance, in 50 ms units) and its
//! operands (a length octet, then that many octets).
//!
//! Invariants: no panic; what goes to a client is whole AGWPE messages
//! within the length limit; what goes to the TNC is whole KISS frames;
//! the server's timer never lies in the past once handled.
#![no_main]

use core::time::Duration;
use std::time::SystemTime;

use libfuzzer_sys::fuzz_target;
use linklab_agw::wire::{CallField, Decoder, Header, Message};
use linklab_agw::{ClientId, PortConfig, Server};
use linklab_core::Instant;
use linklab_io::{AckMode, KissParams};
use linklab_link::Config;
use linklab_wire::ax25::{Address, Frame, Pid};
use linklab_wire::control::Modulus;
use linklab_wire::kiss;

const MAX_STEPS: usize = 1024;

fn server() -> Server {
    let port = PortConfig {
        description: "fuzz".into(),
        kiss: KissParams::default(),
        link: Config {
            modulus: Modulus::Mod8,
            ..Config::default()
        },
        answer_for: vec!["N0CALL-9".parse().unwrap()],
        max_links: 8,
        bit_rate: None,
        // Asked: the TNC's answers (and forged ones) reach the clock.
        ackmode: AckMode::Auto,
    };
    let mut server = Server::new(vec![port], SystemTime::UNIX_EPOCH);
    server.port_up(Instant::ZERO, 0);
    server
}

fn request(kind: u8, from: &str, to: &str, data: &[u8]) -> Vec<u8> {
    let mut header = Header::new(0, kind);
    header.call_from = CallField::from_text(from);
    header.call_to = CallField::from_text(to);
    let mut out = Vec::new();
    Message::new(header, data.to_vec()).encode_into(&mut out);
    out
}

fn check_outputs(server: &mut Server, clients: &[(ClientId, bool)], decoders: &mut [Decoder]) {
    for ((id, kiss_client), decoder) in clients.iter().zip(decoders.iter_mut()) {
        let out = server.take_output(*id);
        if *kiss_client {
            let mut d = kiss::Decoder::new(1 << 16);
            d.push(&out);
            for item in d.by_ref() {
                assert!(item.is_ok());
            }
        } else {
            decoder.push(&out);
            while let Some(item) = decoder.poll_message() {
                assert!(item.is_ok(), "the server sent a message no client can read");
            }
        }
    }
    let tx = server.take_tx(0);
    let mut d = kiss::Decoder::new(1 << 16);
    d.push(&tx);
    for item in d.by_ref() {
        assert!(item.is_ok());
    }
    while server.poll_log().is_some() {}
    while server.poll_close().is_some() {}
}

fuzz_target!(|data: &[u8]| {
    let mut server = server();
    let mut clients = vec![
        (server.client_connected(), false),
        (server.client_connected(), false),
        (server.kiss_client_connected(), true),
    ];
    let mut decoders = vec![Decoder::new(), Decoder::new(), Decoder::new()];
    let mut now = Instant::ZERO;
    let mut input = data.iter().copied();
    let peer: Address = "N0CALL-2".parse().unwrap();
    for _ in 0..MAX_STEPS {
        let Some(op) = input.next() else { break };
        now = now + Duration::from_millis(50 * u64::from(op >> 5));
        let who = usize::from((op >> 3) & 0x03) % clients.len();
        let len = usize::from(input.next().unwrap_or(0));
        let operand: Vec<u8> = input.by_ref().take(len).collect();
        let (id, _) = clients[who];
        match op & 0x07 {
            0 => server.handle_client_bytes(now, id, &operand),
            1 => server.handle_kiss_bytes(now, 0, &operand),
            2 => {
                let kind = operand.first().copied().unwrap_or(b'R');
                let bytes = request(kind, "N0CALL-1", "N0CALL-2", operand.get(1..).unwrap_or_default());
                server.handle_client_bytes(now, id, &bytes);
            }
            3 => {
                // A frame from the peer to a registered or answered call.
                let dest = if operand.first().is_some_and(|b| b & 1 == 1) { "N0CALL-1" } else { "N0CALL-9" };
                let info = operand.get(1..).unwrap_or_default().to_vec();
                if let Ok(frame) = Frame::ui(dest.parse().unwrap(), peer, &[], Pid::NoLayer3, info.clone()) {
                    let mut bytes = frame.encode();
                    // Let the fuzzer choose the control field.
                    if let (Some(c), Some(&o)) = (bytes.get_mut(14), operand.first()) {
                        *c = o;
                    }
                    server.handle_kiss_bytes(now, 0, &kiss::encode(&kiss::Frame::data(bytes)));
                }
            }
            4 => {
                server.client_closed(now, id);
                clients[who].0 = if clients[who].1 {
                    server.kiss_client_connected()
                } else {
                    server.client_connected()
                };
                decoders[who] = Decoder::new();
            }
            5 => {
                if server.port_is_up(0) {
                    server.port_down(now, 0, "fuzz");
                } else {
                    server.port_up(now, 0);
                }
            }
            6 => {
                let bytes = request(b'X', "N0CALL-1", "", &[]);
                server.handle_client_bytes(now, id, &bytes);
                let bytes = request(b'C', "N0CALL-1", "N0CALL-2", &[]);
                server.handle_client_bytes(now, id, &bytes);
            }
            _ => {
                if let Some(at) = server.poll_timeout() {
                    now = now.max(at);
                    server.handle_timeout(now);
                    assert!(server.poll_timeout().is_none_or(|t| t > now), "a timer due at once after handle_timeout");
                }
            }
        }
        check_outputs(&mut server, &clients, &mut decoders);
    }
});
