//! Property tests of the packet formats: every packet type round-trips
//! through encode and decode, and arbitrary octets never panic the
//! decoder and, when they decode, re-encode to a packet that decodes the
//! same.

use linklab_x25::packet::{AddressBlock, AddressFormat, Facility, FastSelect};
use linklab_x25::{Body, CallFields, DataFields, DteAddress, Lci, Modulus, Packet};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: RngSeed::Fixed(0x4c494e4b),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn address_block() -> impl Strategy<Value = AddressBlock> {
    prop_oneof![
        (
            prop::collection::vec(0u8..10, 0..=15),
            prop::collection::vec(0u8..10, 0..=15)
        )
            .prop_map(|(called, calling)| AddressBlock {
                format: AddressFormat::Basic,
                called: DteAddress::from_semi_octets(&called),
                calling: DteAddress::from_semi_octets(&calling),
            }),
        (
            prop::collection::vec(0u8..16, 0..40),
            prop::collection::vec(0u8..16, 0..40)
        )
            .prop_map(|(called, calling)| AddressBlock {
                format: AddressFormat::TypeOfAddress,
                called: DteAddress::from_semi_octets(&called),
                calling: DteAddress::from_semi_octets(&calling),
            }),
    ]
}

fn facility() -> impl Strategy<Value = Facility> {
    let fast_select = prop_oneof![
        Just(FastSelect::NotRequested),
        Just(FastSelect::Unrestricted),
        Just(FastSelect::Restricted)
    ];
    // Codes the decoder types are excluded from the raw ones.
    let other = any::<u8>()
        .prop_filter("typed code", |c| ![0x01, 0x02, 0x42, 0x43].contains(c))
        .prop_flat_map(|code| {
            let len = match code >> 6 {
                0 => 1..2,
                1 => 2..3,
                2 => 3..4,
                _ => 0..12,
            };
            prop::collection::vec(any::<u8>(), len)
                .prop_map(move |parameters| Facility::Other { code, parameters })
        });
    prop_oneof![
        (any::<bool>(), fast_select).prop_map(|(reverse_charging, fast_select)| {
            Facility::ReverseChargingFastSelect {
                reverse_charging,
                fast_select,
            }
        }),
        (0u8..16, 0u8..16).prop_map(|(from_calling, from_called)| Facility::ThroughputClass {
            from_calling,
            from_called
        }),
        (any::<u8>(), any::<u8>()).prop_map(|(from_called, from_calling)| Facility::PacketSize {
            from_called,
            from_calling
        }),
        (any::<u8>(), any::<u8>()).prop_map(|(from_called, from_calling)| Facility::WindowSize {
            from_called,
            from_calling
        }),
        other,
    ]
}

fn call_fields() -> impl Strategy<Value = CallFields> {
    (
        address_block(),
        prop::collection::vec(facility(), 0..8),
        prop::collection::vec(any::<u8>(), 0..20),
    )
        .prop_map(|(address, facilities, user_data)| CallFields {
            address,
            facilities,
            user_data,
        })
}

fn body(modulus: Modulus) -> impl Strategy<Value = Body> {
    let seq = 0..modulus.value();
    let bytes = || prop::collection::vec(any::<u8>(), 0..40);
    prop_oneof![
        (any::<bool>(), call_fields()).prop_map(|(d, fields)| Body::CallRequest { d, fields }),
        (any::<bool>(), prop::option::of(call_fields()))
            .prop_map(|(d, fields)| Body::CallAccepted { d, fields }),
        (
            any::<u8>(),
            prop::option::of(any::<u8>()),
            prop::option::of(call_fields())
        )
            .prop_map(|(cause, diagnostic, fields)| Body::ClearRequest {
                cause,
                fields: fields.filter(|_| diagnostic.is_some()),
                diagnostic,
            }),
        prop::option::of(call_fields()).prop_map(|fields| Body::ClearConfirmation { fields }),
        (
            any::<(bool, bool, bool)>(),
            seq.clone(),
            seq.clone(),
            bytes()
        )
            .prop_map(|((q, d, m), ps, pr, user_data)| Body::Data(DataFields {
                q,
                d,
                m,
                ps,
                pr,
                user_data
            })),
        bytes().prop_map(|user_data| Body::Interrupt { user_data }),
        Just(Body::InterruptConfirmation),
        seq.clone().prop_map(|pr| Body::ReceiveReady { pr }),
        seq.clone().prop_map(|pr| Body::ReceiveNotReady { pr }),
        seq.prop_map(|pr| Body::Reject { pr }),
        (any::<u8>(), prop::option::of(any::<u8>()))
            .prop_map(|(cause, diagnostic)| Body::ResetRequest { cause, diagnostic }),
        Just(Body::ResetConfirmation),
        (any::<u8>(), prop::option::of(any::<u8>()))
            .prop_map(|(cause, diagnostic)| Body::RestartRequest { cause, diagnostic }),
        Just(Body::RestartConfirmation),
        (any::<u8>(), bytes())
            .prop_map(|(code, explanation)| Body::Diagnostic { code, explanation }),
    ]
}

fn packet() -> impl Strategy<Value = Packet> {
    prop_oneof![Just(Modulus::Mod8), Just(Modulus::Mod128)].prop_flat_map(|modulus| {
        (0u16..4096, body(modulus)).prop_map(move |(lci, body)| {
            let lci = match body {
                Body::RestartRequest { .. }
                | Body::RestartConfirmation
                | Body::Diagnostic { .. } => Lci::ZERO,
                _ => Lci::new(lci),
            };
            Packet { modulus, lci, body }
        })
    })
}

proptest! {
    #![proptest_config(config(4000))]

    #[test]
    fn every_packet_round_trips(packet in packet()) {
        let octets = packet.encode().unwrap();
        prop_assert_eq!(Packet::decode(&octets), Ok(packet.clone()));
        // The GFI's modulus bits and the LCI sit where 5.1 puts them.
        let mod_bits = match packet.modulus { Modulus::Mod8 => 1, Modulus::Mod128 => 2 };
        prop_assert_eq!((octets[0] >> 4) & 3, mod_bits);
        prop_assert_eq!(u16::from(octets[0] & 0x0F) << 8 | u16::from(octets[1]), packet.lci.value());
    }

    #[test]
    fn arbitrary_octets_decode_without_panic_and_re_encode(
        octets in prop::collection::vec(any::<u8>(), 0..64)
    ) {
        if let Ok(packet) = Packet::decode(&octets) {
            let again = packet.encode().unwrap();
            prop_assert_eq!(Packet::decode(&again), Ok(packet));
        }
    }
}
