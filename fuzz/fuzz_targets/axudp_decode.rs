//! Fuzzes AXUDP: decoding arbitrary datagrams never panics, a datagram
//! that decodes re-encodes to itself, and an AXUDP router fed the same
//! octets as a received datagram and as a frame to send never panics,
//! agrees with the decoder and keeps its counts straight.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linklab_io::axudp::{AxudpConfig, AxudpRouter};
use linklab_wire::axudp::{self, AxudpError, MIN_DATAGRAM_LEN};

fuzz_target!(|datagram: &[u8]| {
    let decoded = axudp::decode(datagram);
    match decoded {
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

    let config: AxudpConfig =
        "127.0.0.1:10093@N0CALL=127.0.0.2:10093/b,N0CALL-7=127.0.0.3:10093,127.0.0.4:10093;broadcast=QST,NODES"
            .parse()
            .expect("the configuration parses");
    let mut router = AxudpRouter::new(config);
    assert_eq!(router.receive(datagram), decoded);
    let routed = router.route(datagram);
    let counters = router.counters();
    assert_eq!(counters.datagrams_in, 1);
    assert_eq!(
        counters.too_short + counters.bad_fcs,
        u64::from(decoded.is_err())
    );
    match routed {
        Ok(out) => {
            // Every decodable frame has a default route; broadcasts add at
            // most the one other /b peer.
            assert!(!out.peers.is_empty() && out.peers.len() <= 2);
            assert_eq!(counters.datagrams_out, out.peers.len() as u64);
            assert_eq!(axudp::decode(&out.datagram), Ok(datagram));
        }
        Err(_) => assert_eq!((counters.unroutable, counters.datagrams_out), (1, 0)),
    }
});
