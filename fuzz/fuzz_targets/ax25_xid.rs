//! Decodes arbitrary octets as an XID information field and, for the first
//! octet's modulus, as an FRMR information field; whatever decodes must
//! re-encode to exactly the same octets.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linklab_wire::ax25::{FrmrInfo, XidParams};
use linklab_wire::control::Modulus;

fuzz_target!(|data: &[u8]| {
    if let Ok(params) = XidParams::decode(data) {
        assert_eq!(params.encode().as_deref(), Ok(data));
    }
    for modulus in [Modulus::Mod8, Modulus::Mod128] {
        if let Ok(info) = FrmrInfo::decode(data, modulus) {
            assert_eq!(info.encode(modulus).as_deref(), Ok(data));
        }
    }
});
