//! Property tests of `linklab_wire::monitor`: any octets render, without
//! panicking, as exactly one line of printable ASCII.

use linklab_wire::ax25::Frame;
use linklab_wire::control::Modulus;
use linklab_wire::monitor::{format, format_raw, format_raw_with, MonitorOptions};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: RngSeed::Fixed(0x4c49_4e4b),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn modulus() -> impl Strategy<Value = Modulus> {
    prop_oneof![Just(Modulus::Mod8), Just(Modulus::Mod128)]
}

fn options() -> impl Strategy<Value = MonitorOptions> {
    prop::option::of(0usize..24).prop_map(|max_info| MonitorOptions { max_info })
}

/// One address subfield: a valid callsign, any SSID octet but the extension
/// bit, which `last` sets.
fn subfield(last: bool) -> impl Strategy<Value = Vec<u8>> {
    ("[A-Z0-9]{1,6}", any::<u8>()).prop_map(move |(call, ssid)| {
        let mut octets: Vec<u8> = format!("{call:<6}").bytes().map(|b| b << 1).collect();
        octets.push((ssid & 0xFE) | u8::from(last));
        octets
    })
}

/// A valid address field with 0-8 digipeaters.
fn address_field() -> impl Strategy<Value = Vec<u8>> {
    (0usize..=8).prop_flat_map(|digis| {
        let count = digis + 2;
        (0..count)
            .map(|i| subfield(i + 1 == count))
            .collect::<Vec<_>>()
            .prop_map(|parts| parts.concat())
    })
}

/// An XID information field with parameters in ascending PI order, so that
/// it often decodes.
fn xid_info() -> impl Strategy<Value = Vec<u8>> {
    let parameter = (0u8..16, prop::collection::vec(any::<u8>(), 0..5));
    prop::collection::vec(parameter, 0..8).prop_map(|mut parameters| {
        parameters.sort_by_key(|(pi, _)| *pi);
        parameters.dedup_by_key(|(pi, _)| *pi);
        let mut group = Vec::new();
        for (pi, pv) in parameters {
            group.push(pi);
            group.push(pv.len() as u8);
            group.extend(pv);
        }
        let mut info = vec![0x82, 0x80, 0x00, group.len() as u8];
        info.extend(group);
        info
    })
}

/// A modulo-8 FRMR information field with its reserved bits clear.
fn frmr_info() -> impl Strategy<Value = Vec<u8>> {
    (any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(c, s, f)| vec![c, s & 0xFE, f & 0x1F])
}

/// Octets likely to decode: a valid address field, then a control octet
/// drawn mostly from the defined codes, then arbitrary octets or an XID or
/// FRMR information field.
fn plausible_frame() -> impl Strategy<Value = Vec<u8>> {
    let control = prop_oneof![
        any::<u8>(),
        prop::sample::select(vec![0x03u8, 0x13, 0xAF, 0xBF, 0x87, 0x97, 0xE3, 0x00, 0x01]),
    ];
    let tail = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..40),
        xid_info(),
        frmr_info()
    ];
    (address_field(), control, tail).prop_map(|(mut bytes, control, tail)| {
        bytes.push(control);
        bytes.extend(tail);
        bytes
    })
}

/// One line of printable ASCII: no CR, LF or other control character.
fn assert_one_line(text: &str) -> Result<(), TestCaseError> {
    prop_assert!(
        text.bytes().all(|b| (0x20..=0x7E).contains(&b)),
        "not one printable line: {:?}",
        text
    );
    prop_assert!(!text.is_empty());
    Ok(())
}

proptest! {
    #![proptest_config(config(1000))]

    #[test]
    fn format_raw_never_panics_and_is_one_line(
        bytes in prop::collection::vec(any::<u8>(), 0..96),
        m in modulus(),
        opts in options(),
    ) {
        assert_one_line(&format_raw(&bytes, m))?;
        assert_one_line(&format_raw_with(&bytes, m, opts))?;
    }

    #[test]
    fn decodable_frames_render_as_their_decoding(
        bytes in plausible_frame(),
        m in modulus(),
        opts in options(),
    ) {
        let full = format_raw(&bytes, m);
        assert_one_line(&full)?;
        let cut = format_raw_with(&bytes, m, opts);
        assert_one_line(&cut)?;
        match Frame::decode(&bytes, m) {
            Ok(frame) => {
                prop_assert_eq!(&full, &format(&frame));
                let head = format!("{}>{}", frame.source(), frame.dest());
                prop_assert!(full.starts_with(&head), "{} vs {}", full, head);
                let control = format!(": <{} ", frame.control().name());
                prop_assert!(full.contains(&control), "{} lacks {}", full, control);
                // Cutting never makes a line longer, except by the "...".
                prop_assert!(cut.len() <= full.len() + 3, "{} vs {}", cut, full);
            }
            Err(_) => prop_assert!(full.starts_with("<undecodable: ")),
        }
    }
}
