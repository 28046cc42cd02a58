//! Property tests of the APRS station digipeater's rules
//! (`DigipeatRules::apply`, `dedupe_key`): no panic on any octets; a
//! repeated frame decodes, keeps everything but its path, keeps its
//! dedupe key and at most 8 repeaters; and no station repeats a frame
//! twice: with traced n-N aliases the repeat is refused by the same
//! rules, untraced ones are caught by the dedupe key.

use linklab_wire::ax25::{
    dedupe_key, Address, AddressField, CommandResponse, DigipeatRules, Frame, NnAlias, Pid,
    MAX_DIGIPEATERS,
};
use linklab_wire::control::Modulus;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: RngSeed::Fixed(0x4449_4749),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Path entries a digipeater meets: its own call, its aliases, n-N
/// aliases valid or not, strangers; each with H set or not.
fn hop() -> impl Strategy<Value = Address> {
    let call = prop_oneof![
        Just("DIGI".to_string()),
        Just("RELAY".to_string()),
        Just("OTHER".to_string()),
        (0u8..10).prop_map(|n| format!("WIDE{n}")),
        Just("WIDE".to_string()),
        (0u8..10).prop_map(|n| format!("SS{n}")),
        "[A-Z0-9]{1,6}",
    ];
    (call, 0u8..16, any::<bool>()).prop_map(|(call, ssid, h)| {
        let mut a = Address::new(call.parse().unwrap(), ssid).unwrap();
        a.set_c_or_h(h);
        a
    })
}

fn frame() -> impl Strategy<Value = Vec<u8>> {
    let source = prop_oneof![Just("DIGI-9"), Just("W1ABC"), Just("N0CALL-7")];
    (
        source,
        prop::collection::vec(hop(), 0..=8),
        prop::collection::vec(any::<u8>(), 0..40),
        any::<bool>(),
    )
        .prop_map(|(source, via, info, command)| {
            let cr = if command {
                CommandResponse::Command
            } else {
                CommandResponse::Response
            };
            let field =
                AddressField::new("APRS".parse().unwrap(), source.parse().unwrap(), &via, cr)
                    .unwrap();
            let mut frame = Frame::ui(
                *field.dest(),
                *field.source(),
                field.digipeaters(),
                Pid::NoLayer3,
                info,
            )
            .unwrap()
            .encode();
            // Keep the C bits chosen.
            let mut head = Vec::new();
            field.encode_into(&mut head);
            frame.splice(..head.len(), head);
            frame
        })
}

fn rules(trace: bool, max_hops: u8) -> DigipeatRules {
    let mut rules = DigipeatRules::new("DIGI-9".parse().unwrap());
    rules.aliases = vec!["RELAY".parse().unwrap(), "WIDE1-1".parse().unwrap()];
    rules.nn = vec![
        NnAlias {
            prefix: "WIDE".parse().unwrap(),
            trace,
        },
        NnAlias {
            prefix: "SS".parse().unwrap(),
            trace,
        },
    ];
    rules.max_hops = max_hops;
    rules
}

proptest! {
    #![proptest_config(config(4000))]

    #[test]
    fn arbitrary_octets_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..120), trace: bool, max in 0u8..9) {
        let _ = rules(trace, max).apply(&bytes);
        let _ = dedupe_key(&bytes);
    }

    #[test]
    fn a_repeat_keeps_all_but_the_path_and_is_not_repeated_again(
        frame in frame(), trace: bool, max in 1u8..8,
    ) {
        let r = rules(trace, max);
        let received = Frame::decode(&frame, Modulus::Mod8).unwrap();
        if let Some(out) = r.apply(&frame) {
            let repeated = Frame::decode(&out, Modulus::Mod8).expect("a repeat decodes");
            prop_assert_eq!(repeated.encode(), out.clone());
            prop_assert_eq!(repeated.info(), received.info());
            prop_assert_eq!(repeated.control(), received.control());
            prop_assert_eq!(repeated.command_response(), received.command_response());
            prop_assert!(repeated.digipeaters().len() <= MAX_DIGIPEATERS);
            prop_assert_eq!(dedupe_key(&out), dedupe_key(&frame));
            prop_assert!(dedupe_key(&out).is_some());
            // One more repeater has H set than before, or the same count
            // with an alias counted down.
            let h = |f: &Frame| f.digipeaters().iter().filter(|d| d.c_or_h()).count();
            prop_assert!(h(&repeated) >= h(&received));
            let again = r.apply(&out);
            let mine = repeated
                .digipeaters()
                .iter()
                .any(|d| d.c_or_h() && d.callsign() == r.mycall.callsign() && d.ssid() == r.mycall.ssid());
            if mine {
                // Its call with H set is in the path: never again.
                prop_assert_eq!(again, None);
            } else {
                // An untraced n-N alias counted down, or a traced one on
                // a full path (no room for the trace): the dedupe history
                // is what stops a second repeat.
                prop_assert!(!trace || received.digipeaters().len() == MAX_DIGIPEATERS);
            }
        }
    }
}
