//! Decodes arbitrary octets as an X.25 packet: no input may panic, and
//! whatever decodes must encode, and decode again to the same packet.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linklab_x25::Packet;

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = Packet::decode(data) {
        let octets = packet.encode().expect("a decoded packet encodes");
        assert_eq!(Packet::decode(&octets).as_ref(), Ok(&packet));
    }
});
