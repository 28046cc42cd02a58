//! Decodes arbitrary octets as an HDLC/LAPB frame with a one-octet address
//! (the first octet picks the modulus); whatever decodes must re-encode to
//! exactly the same octets, and an FRMR's field must re-encode exactly
//! when it decodes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linklab_wire::control::Modulus;
use linklab_wire::lapb::Frame;

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
        assert_eq!(Frame::decode(&frame.encode(), modulus).as_ref(), Ok(&frame));
        if let Ok(info) = frame.frmr_info() {
            assert_eq!(info.encode(modulus).as_deref(), Ok(frame.info()));
        }
    }
});
