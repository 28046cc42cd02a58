//! Fuzzes the digipeater's rule (`linklab_wire::ax25::digipeat`) with
//! arbitrary octets as a received frame.
//!
//! Input: one octet choosing the repeater's address (the repeater subfield
//! of that number in the frame's own path, so that frames are repeated,
//! or a station in no path), then the frame.
//!
//! Invariants: no panic; a repeated frame has the same length and differs
//! from the received one in exactly one octet (a set H bit); it is not
//! repeated again by the same station; and a frame that decodes keeps
//! decoding, to the same frame but for that H bit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linklab_wire::ax25::{digipeat, Address, AddressField, Frame};
use linklab_wire::control::Modulus;

fuzz_target!(|data: &[u8]| {
    let Some((&choice, frame)) = data.split_first() else {
        return;
    };
    let stranger: Address = "N0NE-9".parse().expect("a valid address");
    let me = match AddressField::decode(frame) {
        Ok((field, _)) => field
            .digipeaters()
            .get(usize::from(choice) % 9)
            .copied()
            .unwrap_or(stranger),
        Err(_) => stranger,
    };
    let Some(repeated) = digipeat(frame, &me) else {
        return;
    };
    assert_eq!(repeated.len(), frame.len());
    let changed: Vec<usize> = (0..frame.len())
        .filter(|&i| frame[i] != repeated[i])
        .collect();
    assert_eq!(changed.len(), 1);
    assert_eq!(repeated[changed[0]], frame[changed[0]] | 0x80);
    assert_eq!(digipeat(&repeated, &me), None);
    for modulus in [Modulus::Mod8, Modulus::Mod128] {
        if let Ok(received) = Frame::decode(frame, modulus) {
            let again = Frame::decode(&repeated, modulus).expect("still decodes");
            assert_eq!(again.encode(), repeated);
            assert_eq!(again.info(), received.info());
            assert_eq!(again.control(), received.control());
        }
    }
});
