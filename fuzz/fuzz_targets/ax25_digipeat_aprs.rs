//! Fuzzes the APRS station digipeater's rules
//! (`linklab_wire::ax25::DigipeatRules::apply`) and `dedupe_key` with
//! arbitrary octets as a received frame.
//!
//! Input: one octet of settings (bit 0: trace the n-N aliases; bits 1-3:
//! the most hops, 0-7; bits 4-7: which repeater of the frame's own path,
//! if any, is this station's call, so that frames are repeated by that
//! rule too), then the frame.
//!
//! Invariants: no panic; a repeated frame's address field decodes with at
//! most 8 repeaters; everything after the address field is the received
//! octets; the dedupe key is the received one; and a repeat that carries
//! this station's call with H set is not repeated again by it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linklab_wire::ax25::{
    dedupe_key, Address, AddressField, DigipeatRules, NnAlias, MAX_DIGIPEATERS,
};

fuzz_target!(|data: &[u8]| {
    let Some((&settings, frame)) = data.split_first() else {
        return;
    };
    let trace = settings & 1 == 1;
    let stranger: Address = "N0NE-9".parse().expect("a valid address");
    let received = AddressField::decode(frame).ok();
    let me = received
        .as_ref()
        .and_then(|(field, _)| field.digipeaters().get(usize::from(settings >> 4)).copied())
        .and_then(|d| Address::new(d.callsign(), d.ssid()).ok())
        .unwrap_or(stranger);
    let mut rules = DigipeatRules::new(me);
    rules.aliases = vec![
        "RELAY".parse().expect("valid"),
        "WIDE1-1".parse().expect("valid"),
    ];
    rules.nn = ["WIDE", "TRACE", "SS"]
        .iter()
        .map(|p| NnAlias {
            prefix: p.parse().expect("valid"),
            trace,
        })
        .collect();
    rules.max_hops = (settings >> 1) & 7;
    let key = dedupe_key(frame);
    let Some(out) = rules.apply(frame) else {
        return;
    };
    let (field, used) = AddressField::decode(&out).expect("a repeat's addresses decode");
    let (_, used_before) = received.expect("only decoded frames are repeated");
    assert!(field.digipeaters().len() <= MAX_DIGIPEATERS);
    assert_eq!(&out[used..], &frame[used_before..]);
    assert_eq!(dedupe_key(&out), key);
    let mine = field
        .digipeaters()
        .iter()
        .any(|d| d.c_or_h() && d.callsign() == me.callsign() && d.ssid() == me.ssid());
    if mine {
        assert_eq!(rules.apply(&out), None);
    }
});
