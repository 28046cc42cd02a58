//! Feeds arbitrary octets to a bundle agent as a convergence layer would:
//! as a whole received bundle, or as what arrived of a broken-off transfer
//! (reactive fragmentation), then runs the agent: forwarding over a link
//! with a small MTU, delivery, lifetime expiry.
//!
//! Input: one control octet (bit 0: partial transfer; bits 1-7: the
//! link's MTU in 8-octet units, 0 for none), then the octets.
//!
//! Invariants: no panic; octets our own CRC check refuses are never
//! accepted; every bundle the agent sends decodes again, passes the CRC
//! check and fits the link's MTU.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linklab_dtn::{bundle, crc, Agent, Config, Eid, LinkId, MemoryStore, Reception};
use linklab_core::Instant;

fuzz_target!(|data: &[u8]| {
    let Some((&control, octets)) = data.split_first() else {
        return;
    };
    let node: Eid = "ipn:2.0".parse().unwrap();
    let mut config = Config::new(node);
    config.dtn_time_at_zero = 800_000_000_000;
    let mut agent = Agent::open(config, MemoryStore::new()).unwrap();
    agent.register("ipn:2.1".parse().unwrap()).unwrap();
    agent.add_route("*".parse().unwrap(), LinkId(0));
    let mtu = usize::from(control >> 1) * 8;
    agent.link_up(LinkId(0), (mtu > 0).then_some(mtu));
    let now = Instant::ZERO;
    let reception = if control & 1 == 0 {
        let result = agent.handle_bundle(now, octets);
        if crc::verify_bundle(octets).is_err() {
            assert!(result.is_err(), "accepted octets that fail the CRC check");
        }
        result.ok()
    } else {
        agent.handle_partial_bundle(now, octets).ok().flatten()
    };
    if !matches!(reception, Some(Reception::Accepted(_))) {
        return;
    }
    for step in 0..2u64 {
        let now = Instant::from_micros(step * 90_000_000_000);
        while let Ok(Some(transmit)) = agent.poll_transmit(now) {
            assert!(mtu == 0 || transmit.octets.len() <= mtu);
            crc::verify_bundle(&transmit.octets).expect("a sent bundle passes the CRC check");
            bundle::decode(&transmit.octets).expect("a sent bundle decodes");
            agent.transfer_succeeded(now, transmit.id).unwrap();
        }
        while let Some(delivery) = agent.poll_delivery() {
            agent.delivery_done(now, delivery.id).unwrap();
        }
        while agent.poll_event().is_some() {}
        agent.handle_timeout(now).unwrap();
    }
});
