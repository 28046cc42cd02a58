//! Decodes arbitrary octets as an AX.25 frame (the first octet picks the
//! modulus); whatever decodes must re-encode to exactly the same octets,
//! and an SREJ's further N(R)s (multi-SREJ) likewise.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linklab_wire::ax25::{Frame, MultiSrejInfo};
use linklab_wire::control::Modulus;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let modulus = if selector & 1 == 0 {
        Modulus::Mod8
    } else {
        Modulus::Mod128
    };
    if let Ok(frame) = Frame::decode(bytes, modulus) {
        assert_eq!(frame.encode(), bytes);
        assert_eq!(frame.encoded_len(), bytes.len());
        if let Some(further) = frame.multi_srej() {
            assert_eq!(further.encode(modulus).unwrap(), frame.info());
            assert_eq!(MultiSrejInfo::decode(frame.info(), modulus), Ok(further));
        }
    }
});
