//! Fuzzes the NORM receiver (and the sender's feedback handling) with
//! arbitrary datagrams between the traffic of a real `linklab_norm::Sender`,
//! which may be delivered, lost or corrupted.
//!
//! Input: steps of one op octet (low 2 bits: what; high 6 bits: time to
//! advance, in 10 ms units) and its operands:
//! - 0: a datagram (u8 length, octets) to the receiver, from the sender;
//! - 1: a datagram (u8 length, octets) to the sender, from the receiver;
//! - 2: the sender's next datagram to the receiver, one octet flipped
//!   (u8 position, u8 mask; mask 0 delivers it intact);
//! - 3: the receiver's queued feedback to the sender.
//!
//! Invariants: no panic; every datagram either engine sends decodes and
//! re-encodes to the same octets; what completes has the octets the
//! sender enqueued, unless the traffic was corrupted.
#![no_main]

use linklab_core::{Engine, Instant};
use core::time::Duration;
use libfuzzer_sys::fuzz_target;
use linklab_norm::wire::Packet;
use linklab_norm::{ObjectKind, Receiver, ReceiverConfig, ReceiverEvent, Sender, SenderConfig, SyncPolicy, Transmit};
use std::net::SocketAddr;

const MAX_STEPS: usize = 2048;

fn checked(t: &Transmit) {
    let p = Packet::decode(&t.payload).expect("an engine's datagram decodes");
    assert_eq!(p.encode().expect("and encodes"), t.payload);
}

fuzz_target!(|data: &[u8]| {
    let s_addr: SocketAddr = "10.0.0.1:6003".parse().unwrap();
    let r_addr: SocketAddr = "10.0.0.2:6003".parse().unwrap();
    let mut sc = SenderConfig::new(1, r_addr, 1_000_000.0);
    sc.segment_size = 64;
    sc.block_len = 8;
    sc.num_parity = 4;
    sc.auto_parity = 1;
    let mut sender = Sender::new(sc, Instant::ZERO).unwrap();
    let object: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
    sender.enqueue(Instant::ZERO, object.clone(), ObjectKind::Data).unwrap();
    let mut rc = ReceiverConfig::new(2);
    rc.max_object_size = 1 << 16;
    rc.max_pending_objects = 16;
    rc.sync = if data.first().is_some_and(|b| b & 1 == 1) { SyncPolicy::All } else { SyncPolicy::Current };
    let mut receiver = Receiver::new(rc);
    let mut now = Instant::ZERO;
    let mut corrupted = false;
    let mut input = data.iter().copied();
    let mut to_sender: Vec<Transmit> = Vec::new();
    for _ in 0..MAX_STEPS {
        let Some(op) = input.next() else { break };
        now = now + Duration::from_millis(10 * u64::from(op >> 2));
        match op & 3 {
            0 | 1 => {
                let len = usize::from(input.next().unwrap_or(0));
                let bytes: Vec<u8> = input.by_ref().take(len).collect();
                if op & 3 == 0 {
                    corrupted = true;
                    receiver.handle_datagram(now, s_addr, &bytes);
                } else {
                    sender.handle_datagram(now, r_addr, &bytes);
                }
            }
            2 => {
                let pos = usize::from(input.next().unwrap_or(0));
                let mask = input.next().unwrap_or(0);
                if let Some(mut t) = sender.poll_transmit(now) {
                    checked(&t);
                    if mask != 0 && !t.payload.is_empty() {
                        let i = pos % t.payload.len();
                        t.payload[i] ^= mask;
                        corrupted = true;
                    }
                    receiver.handle_datagram(now, s_addr, &t.payload);
                }
            }
            _ => {
                for t in to_sender.drain(..) {
                    sender.handle_datagram(now, r_addr, &t.payload);
                }
            }
        }
        sender.handle_timeout(now);
        receiver.handle_timeout(now);
        while let Some(t) = receiver.poll_transmit(now) {
            checked(&t);
            to_sender.push(t);
        }
        to_sender.truncate(64);
        while sender.poll_event().is_some() {}
        while let Some(e) = receiver.poll_event() {
            if let ReceiverEvent::ObjectCompleted { data, .. } = e {
                assert!(corrupted || data == object, "an intact transfer completes intact");
            }
        }
    }
});
