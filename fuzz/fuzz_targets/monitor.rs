//! Renders arbitrary octets as a monitor line (the first octet picks the
//! modulus and the `max_info` cut): never panics, always one line of
//! printable ASCII, and a frame that decodes renders as its decoding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linklab_wire::ax25::Frame;
use linklab_wire::control::Modulus;
use linklab_wire::monitor::{format, format_raw, format_raw_with, MonitorOptions};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let modulus = if selector & 1 == 0 {
        Modulus::Mod8
    } else {
        Modulus::Mod128
    };
    let options = MonitorOptions {
        max_info: (selector & 0x80 != 0).then_some(usize::from(selector >> 1 & 0x3F)),
    };
    let full = format_raw(bytes, modulus);
    let cut = format_raw_with(bytes, modulus, options);
    for line in [&full, &cut] {
        assert!(!line.is_empty());
        assert!(line.bytes().all(|b| (0x20..=0x7E).contains(&b)), "{line:?}");
    }
    match Frame::decode(bytes, modulus) {
        Ok(frame) => assert_eq!(full, format(&frame)),
        Err(_) => assert!(full.starts_with("<undecodable: ")),
    }
});
