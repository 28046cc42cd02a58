//! Fuzzes the emulated channel's core (`linklab_emu::Air`) as bad clients
//! would: three stations on a noisy channel (s1 a digipeater for DIGI, so
//! that frames through DIGI are repeated), clients attaching, leaving
//! and writing arbitrary octets in arbitrary chunks (garbage, damaged and
//! valid KISS frames, parameter commands, ACKMODE), time advancing.
//!
//! Input: steps of one op octet (low 2 bits: what; bits 2-3: which
//! client; high 4 bits: time to advance, in 10 ms units) and its
//! operands.
//!
//! Invariants: no panic; time never runs backwards in what comes out;
//! every octet string for a client is one whole KISS frame that decodes;
//! every frame on the air ends after it starts; the counters add up
//! (a station never receives more frames than were sent by others).
#![no_main]

use core::time::Duration;

use libfuzzer_sys::fuzz_target;
use linklab_channel::{ErrorModel, StationConfig};
use linklab_core::Instant;
use linklab_emu::{Air, ClientId, Output, Plan};
use linklab_wire::kiss;

const MAX_STEPS: usize = 2048;

fn plan() -> Plan {
    let kiss = StationConfig {
        persistence: 127,
        slot_time: Duration::from_millis(10),
        txdelay: Duration::from_millis(20),
        txtail: Duration::from_millis(10),
        slot_phase: Duration::ZERO,
    };
    let mut plan =
        Plan::simple(3, 0, 9600, kiss, ErrorModel::Independent { ber: 1e-4 }).expect("valid plan");
    plan.set_digipeater("s1", "DIGI".parse().expect("a valid call"))
        .expect("a station s1");
    plan
}

fn check(air: &mut Air, last: &mut Instant) {
    while let Some(output) = air.poll_output() {
        match output {
            Output::ToClient { octets, due, .. } => {
                assert!(due >= *last, "{due:?} before {last:?}");
                let mut decoder = kiss::Decoder::new(1 << 16);
                decoder.push(&octets);
                assert!(matches!(decoder.next(), Some(Ok(_))), "{octets:?}");
                assert!(decoder.next().is_none());
            }
            Output::OnAir(frame) => {
                assert!(frame.start <= frame.end);
                assert!(!frame.body.is_empty());
            }
            Output::Notice { text, .. } => assert!(!text.is_empty()),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut air = Air::new(&plan());
    let mut attached = [false; 4];
    let mut now = Instant::ZERO;
    let mut last = Instant::ZERO;
    let mut input = data;
    for _ in 0..MAX_STEPS {
        let Some((&op, rest)) = input.split_first() else {
            break;
        };
        input = rest;
        let client = usize::from((op >> 2) & 3);
        now = now + Duration::from_millis(10 * u64::from(op >> 4));
        while let Some(t) = air.poll_timeout().filter(|&t| t <= now) {
            air.handle_timeout(t);
            check(&mut air, &mut last);
            last = t;
        }
        match op & 3 {
            0 => {
                if !attached[client] {
                    air.attach(ClientId(client as u64), client % 3);
                    attached[client] = true;
                }
            }
            1 => {
                air.detach(ClientId(client as u64));
                attached[client] = false;
            }
            _ => {
                let len = usize::from(input.first().copied().unwrap_or(0));
                let (chunk, rest) = input.get(1..).unwrap_or(&[]).split_at(len.min(input.len().saturating_sub(1)));
                input = rest;
                air.handle_input(now, ClientId(client as u64), chunk);
            }
        }
        check(&mut air, &mut last);
        last = now;
    }
    // Let everything queued leave the air.
    for _ in 0..10_000 {
        let Some(t) = air.poll_timeout() else { break };
        air.handle_timeout(t);
        check(&mut air, &mut last);
        last = t;
    }
    let report = air.report(last);
    let sent: u64 = report.stations.iter().map(|s| s.frames_sent).sum();
    for s in &report.stations {
        assert!(s.received + s.lost_to_collisions + s.lost_to_errors + s.lost_while_transmitting <= sent);
    }
});
