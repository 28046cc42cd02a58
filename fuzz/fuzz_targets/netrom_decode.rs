//! Fuzzes the NET/ROM decoders (`linklab_netrom::wire`): NODES
//! broadcasts, network datagrams and transport messages from arbitrary
//! octets.
//!
//! Invariants: no panic; whatever decodes encodes to octets that decode
//! to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linklab_netrom::wire::{Datagram, Message, NodesBroadcast};

fuzz_target!(|data: &[u8]| {
    if let Ok(b) = NodesBroadcast::decode(data) {
        assert_eq!(NodesBroadcast::decode(&b.encode()).as_ref(), Ok(&b));
    }
    if let Ok(d) = Datagram::decode(data) {
        assert_eq!(Datagram::decode(&d.encode()).as_ref(), Ok(&d));
    }
    if let Ok(m) = Message::decode(data) {
        let mut again = Vec::new();
        m.encode_into(&mut again);
        assert_eq!(Message::decode(&again).as_ref(), Ok(&m));
    }
});
