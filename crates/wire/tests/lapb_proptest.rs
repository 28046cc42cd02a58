//! Property tests: every HDLC/LAPB frame kind round-trips in modulo 8 and
//! 128, FRMR information fields round-trip through frames, and decoding
//! arbitrary octets never panics and, when it succeeds, re-encodes
//! byte-exact.

use linklab_wire::control::{Control, Modulus, Supervisory, Unnumbered};
use linklab_wire::lapb::{Address, Frame, FrmrInfo};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: RngSeed::Fixed(0x4c494e4b),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn modulus() -> impl Strategy<Value = Modulus> {
    prop_oneof![Just(Modulus::Mod8), Just(Modulus::Mod128)]
}

/// The frame `decode` gives back for `frame`: the SARM code point decodes
/// as DM (the two share it).
fn as_decoded(frame: &Frame) -> Frame {
    match frame.control() {
        Control::U {
            kind: Unnumbered::Sarm,
            pf,
        } => Frame::new(
            frame.address(),
            frame.modulus(),
            Control::U {
                kind: Unnumbered::Dm,
                pf,
            },
            frame.info().to_vec(),
        )
        .unwrap(),
        _ => frame.clone(),
    }
}

fn round_trip(frame: &Frame) {
    let bytes = frame.encode();
    assert_eq!(bytes.len(), frame.encoded_len());
    assert_eq!(bytes.first(), Some(&frame.address().octet()));
    let back = Frame::decode(&bytes, frame.modulus()).unwrap();
    assert_eq!(back, as_decoded(frame));
    assert_eq!(back.encode(), bytes);
    let mut appended = vec![0x7E];
    frame.encode_into(&mut appended);
    assert_eq!(appended.get(1..), Some(bytes.as_slice()));
}

fn frmr(m: Modulus) -> impl Strategy<Value = FrmrInfo> {
    let max = m.value();
    let control = match m {
        Modulus::Mod8 => (0u16..=0xFF).boxed(),
        Modulus::Mod128 => any::<u16>().boxed(),
    };
    (control, 0..max, 0..max, any::<[bool; 6]>()).prop_map(
        |(rejected_control, vs, vr, [cr, w, x, y, z, v])| FrmrInfo {
            rejected_control,
            vs,
            vr,
            rejected_was_response: cr,
            w,
            x,
            y,
            z,
            v,
        },
    )
}

/// Mutations of a valid encoding: any octet replaced, truncated, extended.
fn mutated_frame() -> impl Strategy<Value = (Vec<u8>, Modulus)> {
    (
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        prop::collection::vec(any::<u8>(), 0..8),
        modulus(),
    )
        .prop_map(|(address, ns, nr, tail, m)| {
            let frame = Frame::i(
                Address(address),
                m,
                ns % m.value(),
                nr % m.value(),
                ns & 0x80 != 0,
                tail,
            )
            .unwrap();
            (frame.encode(), m)
        })
        .prop_flat_map(|(bytes, m)| {
            let len = bytes.len();
            (Just(bytes), 0..len, any::<u8>(), 0..=len + 2, Just(m))
        })
        .prop_map(|(mut bytes, at, value, cut, m)| {
            if let Some(b) = bytes.get_mut(at) {
                *b = value;
            }
            bytes.resize(cut, value);
            (bytes, m)
        })
}

proptest! {
    #![proptest_config(config(1000))]

    /// Every frame kind, in both moduli, from the same random parts: each
    /// of the 1000 cases builds and round-trips all 17 kinds twice.
    #[test]
    fn every_frame_kind_round_trips(
        address in any::<u8>(),
        ns in any::<u8>(),
        nr in any::<u8>(),
        pf in any::<bool>(),
        info in prop::collection::vec(any::<u8>(), 0..40),
    ) {
        for m in [Modulus::Mod8, Modulus::Mod128] {
            let address = Address(address);
            let (ns, nr) = (ns % m.value(), nr % m.value());
            round_trip(&Frame::i(address, m, ns, nr, pf, info.clone()).unwrap());
            for kind in Supervisory::ALL {
                round_trip(&Frame::s(address, m, kind, nr, pf).unwrap());
            }
            for kind in Unnumbered::ALL {
                let carries = matches!(
                    kind,
                    Unnumbered::Ui | Unnumbered::Xid | Unnumbered::Test | Unnumbered::Frmr
                );
                let field = if carries { info.clone() } else { Vec::new() };
                round_trip(&Frame::u(address, m, kind, pf, field).unwrap());
                if !carries && !info.is_empty() {
                    prop_assert!(Frame::u(address, m, kind, pf, info.clone()).is_err());
                }
            }
        }
    }

    #[test]
    fn frmr_round_trips_through_frames(
        (m, info) in modulus().prop_flat_map(|m| (Just(m), frmr(m))),
        address in any::<u8>(),
        f in any::<bool>(),
    ) {
        let frame = Frame::frmr(Address(address), m, f, &info).unwrap();
        round_trip(&frame);
        prop_assert_eq!(frame.info().len(), FrmrInfo::encoded_len(m));
        prop_assert_eq!(frame.frmr_info(), Ok(info));
    }

    #[test]
    fn arbitrary_octets_never_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..48),
        m in modulus(),
    ) {
        if let Ok(frame) = Frame::decode(&bytes, m) {
            prop_assert_eq!(frame.encode(), bytes.clone());
            prop_assert_eq!(frame.encoded_len(), bytes.len());
            let _ = frame.frmr_info();
        }
    }

    #[test]
    fn mutated_frames_decode_exactly_or_fail((bytes, m) in mutated_frame()) {
        if let Ok(frame) = Frame::decode(&bytes, m) {
            prop_assert_eq!(frame.encode(), bytes);
        }
    }
}

/// Every two-octet input under both moduli: decodes exactly or fails.
#[test]
fn every_two_octet_frame_decodes_exactly_or_fails() {
    let mut decoded = 0;
    for m in [Modulus::Mod8, Modulus::Mod128] {
        for address in [0x00, 0x01, 0x03, 0x07, 0x0F, 0xFF] {
            for control in 0..=255u8 {
                let bytes = [address, control];
                if let Ok(frame) = Frame::decode(&bytes, m) {
                    assert_eq!(frame.encode(), bytes);
                    decoded += 1;
                }
            }
        }
    }
    // Per address, modulo 8: 128 I octets (bit 0 = 0), 64 S octets (bits
    // 0-1 = 01), 12 U codes x 2 P/F values; modulo 128: only the 24 U
    // frames fit in two octets.
    assert_eq!(decoded, 6 * ((128 + 64 + 24) + 24));
}
