//! Fuzzes `linklab probe`'s station (`linklab_advise::probe::Prober`) as
//! a hostile or broken peer would meet it: arbitrary frames from the
//! peer's address (arbitrary control fields, N(R)s, P/F bits), arbitrary
//! octets, time advancing, Ctrl-C at any point; then fits whatever
//! samples it gathered.
//!
//! Input: steps of one op octet (low 2 bits: what; high 6 bits: time to
//! advance, in 50 ms units) and its operands.
//!
//! Invariants: no panic; the probe ends (it is stopped at the end and
//! its timers run out within N2 tries); every frame it sends decodes
//! again; the fit of any samples returns a value or a reason.
#![no_main]

use core::time::Duration;

use libfuzzer_sys::fuzz_target;
use linklab_advise::probe::{fit, local_station, plan, Known, ProbeConfig, Prober};
use linklab_core::Instant;
use linklab_wire::ax25::{Address, AddressField, CommandResponse, Frame};
use linklab_wire::control::Modulus;

const MAX_STEPS: usize = 2048;

fuzz_target!(|data: &[u8]| {
    let local: Address = "N0CALL-1".parse().unwrap();
    let remote: Address = "N0CALL-2".parse().unwrap();
    let config = ProbeConfig {
        local,
        remote,
        via: Vec::new(),
        plan: plan(64, 2, 2),
        response_time: Duration::from_millis(500),
        tries: 3,
        pause: Duration::from_millis(100),
    };
    let mut now = Instant::ZERO;
    let mut prober = Prober::new(config.clone(), now);
    let mut samples = Vec::new();
    let mut input = data;
    for _ in 0..MAX_STEPS {
        let Some((&op, rest)) = input.split_first() else {
            break;
        };
        input = rest;
        now = now + Duration::from_millis(50 * u64::from(op >> 2));
        match op & 3 {
            // A frame from the peer: control octet(s) and a little info.
            0 | 1 => {
                let len = usize::from(input.first().copied().unwrap_or(0) % 8);
                let body = input.get(1..1 + len).unwrap_or_default();
                input = input.get(1 + len..).unwrap_or_default();
                let cr = if op & 1 == 0 {
                    CommandResponse::Response
                } else {
                    CommandResponse::Command
                };
                let mut bytes = Vec::new();
                AddressField::new(local, remote, &[], cr)
                    .unwrap()
                    .encode_into(&mut bytes);
                bytes.extend_from_slice(body);
                prober.handle_frame(now, &bytes);
            }
            // Raw octets.
            2 => {
                let len = usize::from(input.first().copied().unwrap_or(0) % 32);
                let body = input.get(1..1 + len).unwrap_or_default();
                input = input.get(1 + len..).unwrap_or_default();
                prober.handle_frame(now, body);
            }
            // Ctrl-C.
            _ => prober.stop(now),
        }
        prober.handle_timeout(now);
        while let Some(frame) = prober.poll_transmit() {
            let bytes = frame.encode();
            assert_eq!(Frame::decode(&bytes, Modulus::Mod8).unwrap(), frame);
        }
        while let Some(event) = prober.poll_event() {
            if let linklab_advise::probe::ProbeEvent::Sample(s) = event {
                samples.push(s);
            }
        }
    }
    prober.stop(now);
    for _ in 0..64 {
        let Some(t) = prober.poll_timeout() else { break };
        now = now.max(t);
        prober.handle_timeout(now);
        while prober.poll_transmit().is_some() {}
        while let Some(event) = prober.poll_event() {
            if let linklab_advise::probe::ProbeEvent::Sample(s) = event {
                samples.push(s);
            }
        }
    }
    assert!(prober.is_done(), "the probe did not end");
    if samples.len() <= 8 {
        let station = local_station(Duration::from_millis(10));
        let known = Known {
            bit_rate: 9600,
            serial_bps: 9600,
            local: station,
            peer: station,
            per_octet: Duration::ZERO,
            buffer_octets: 8192,
            carrier_hold: Duration::ZERO,
            peer_latency: Duration::ZERO,
            peer_window: 4,
        };
        let _ = fit(&known, &config, &samples);
    }
});
