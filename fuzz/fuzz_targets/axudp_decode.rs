//! Fuzzes AXUDP datagram decoding: arbitrary octets never panic, a
//! datagram that decodes re-encodes to itself, and `next_hop` never
//! panics on what a peer may send.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linklab_wire::axudp::{self, AxudpError, MIN_DATAGRAM_LEN};

fuzz_target!(|datagram: &[u8]| {
    match axudp::decode(datagram) {
        Ok(frame) => {
            assert_eq!(axudp::encode(frame), datagram);
            let _ = axudp::next_hop(frame);
        }
        Err(AxudpError::TooShort { len }) => {
            assert!(len < MIN_DATAGRAM_LEN && len == datagram.len())
        }
        Err(AxudpError::BadFcs {
            received, computed, ..
        }) => assert_ne!(received, computed),
    }
});
