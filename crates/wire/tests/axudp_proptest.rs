//! Property tests of AXUDP datagrams: every frame of at least 15 octets
//! round-trips; decoding arbitrary octets never panics, and what it
//! accepts re-encodes to the same datagram; a single flipped bit is
//! always caught; `next_hop` never panics.

use linklab_wire::axudp::{self, AxudpError, MIN_DATAGRAM_LEN, MIN_FRAME_LEN};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: RngSeed::Fixed(0x41585544),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(2000))]

    #[test]
    fn frames_round_trip(frame in proptest::collection::vec(any::<u8>(), MIN_FRAME_LEN..400)) {
        let datagram = axudp::encode(&frame);
        prop_assert_eq!(datagram.len(), frame.len() + axudp::FCS_LEN);
        prop_assert_eq!(axudp::decode(&datagram), Ok(frame.as_slice()));
    }

    #[test]
    fn decoding_anything_never_panics(datagram in proptest::collection::vec(any::<u8>(), 0..300)) {
        match axudp::decode(&datagram) {
            Ok(frame) => {
                prop_assert!(frame.len() >= MIN_FRAME_LEN);
                prop_assert_eq!(axudp::encode(frame), datagram.clone());
            }
            Err(AxudpError::TooShort { len }) => {
                prop_assert_eq!(len, datagram.len());
                prop_assert!(len < MIN_DATAGRAM_LEN);
            }
            Err(AxudpError::BadFcs { len, received, computed }) => {
                prop_assert_eq!(len, datagram.len());
                prop_assert_ne!(received, computed);
            }
        }
        let _ = axudp::next_hop(&datagram);
    }

    #[test]
    fn one_flipped_bit_is_caught(
        frame in proptest::collection::vec(any::<u8>(), MIN_FRAME_LEN..300),
        bit in any::<prop::sample::Index>(),
    ) {
        let mut datagram = axudp::encode(&frame);
        let bit = bit.index(datagram.len() * 8);
        datagram[bit / 8] ^= 1 << (bit % 8);
        let is_bad_fcs = matches!(axudp::decode(&datagram), Err(AxudpError::BadFcs { .. }));
        prop_assert!(is_bad_fcs);
    }
}
