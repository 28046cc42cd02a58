//! Property tests: every AX.25 frame kind, XID, FRMR and multi-SREJ field
//! round-trips,
//! and decoding arbitrary octets never panics and, when it succeeds,
//! re-encodes byte-exact; the digipeater repeats a frame once, as the next
//! hop of its path, and never panics either.

use linklab_wire::ax25::{
    digipeat, Address, AddressField, Callsign, ClassesOfProcedures, CommandResponse, Frame,
    FrmrInfo, HdlcOptionalFunctions, MultiSrejInfo, Pid, SegmentHeader, SrejRequest, XidNumber,
    XidParameter, XidParams,
};
use linklab_wire::control::{Control, Modulus, Supervisory, Unnumbered};
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

fn callsign() -> impl Strategy<Value = Callsign> {
    "[A-Z0-9]{1,6}".prop_map(|s| s.parse().unwrap())
}

fn address() -> impl Strategy<Value = Address> {
    (callsign(), 0u8..16, any::<bool>(), 0u8..4).prop_map(|(call, ssid, c, r)| {
        let mut a = Address::new(call, ssid).unwrap();
        a.set_c_or_h(c);
        a.set_reserved(r).unwrap();
        a
    })
}

fn command_response() -> impl Strategy<Value = CommandResponse> {
    prop_oneof![
        Just(CommandResponse::Command),
        Just(CommandResponse::Response),
        Just(CommandResponse::PreviousVersionZeros),
        Just(CommandResponse::PreviousVersionOnes),
    ]
}

fn address_field() -> impl Strategy<Value = AddressField> {
    (
        address(),
        address(),
        prop::collection::vec(address(), 0..=8),
        command_response(),
    )
        .prop_map(|(d, s, via, cr)| AddressField::new(d, s, &via, cr).unwrap())
}

/// U frames whose code decodes back to the same variant (SARM shares DM's).
fn unnumbered() -> impl Strategy<Value = Unnumbered> {
    prop::sample::select(
        Unnumbered::ALL
            .into_iter()
            .filter(|u| *u != Unnumbered::Sarm)
            .collect::<Vec<_>>(),
    )
}

fn control(m: Modulus) -> impl Strategy<Value = Control> {
    let n = m.value();
    prop_oneof![
        (0..n, 0..n, any::<bool>()).prop_map(|(ns, nr, pf)| Control::I { ns, nr, pf }),
        (
            prop::sample::select(Supervisory::ALL.to_vec()),
            0..n,
            any::<bool>()
        )
            .prop_map(|(kind, nr, pf)| Control::S { kind, nr, pf }),
        (unnumbered(), any::<bool>()).prop_map(|(kind, pf)| Control::U { kind, pf }),
    ]
}

/// Further N(R)s of a multi-SREJ: singles, and spans in modulo 128.
fn multi_srej(m: Modulus) -> impl Strategy<Value = MultiSrejInfo> {
    let n = m.value();
    let request = prop_oneof![
        (0..n).prop_map(SrejRequest::Single),
        (0..n, 0..n, Just(m == Modulus::Mod128)).prop_map(|(first, last, span)| if span {
            SrejRequest::Span { first, last }
        } else {
            SrejRequest::Single(first)
        }),
    ];
    prop::collection::vec(request, 0..64).prop_map(|requests| MultiSrejInfo { requests })
}

fn frame() -> impl Strategy<Value = Frame> {
    modulus()
        .prop_flat_map(|m| {
            (
                address_field(),
                Just(m),
                control(m),
                any::<u8>(),
                prop::collection::vec(any::<u8>(), 0..=2048),
                multi_srej(m),
            )
        })
        .prop_map(|(address, m, control, pid, info, further)| {
            if let Control::S {
                kind: Supervisory::Srej,
                nr,
                pf,
            } = control
            {
                return Frame::srej(address, m, nr, pf, &further).unwrap();
            }
            let has_pid = matches!(
                control,
                Control::I { .. }
                    | Control::U {
                        kind: Unnumbered::Ui,
                        ..
                    }
            );
            let allows_info = has_pid
                || matches!(
                    control,
                    Control::U {
                        kind: Unnumbered::Xid | Unnumbered::Test | Unnumbered::Frmr,
                        ..
                    }
                );
            let pid = has_pid.then(|| Pid::from(pid));
            let info = if allows_info { info } else { Vec::new() };
            Frame::new(address, m, control, pid, info).unwrap()
        })
}

fn xid_number() -> impl Strategy<Value = XidNumber> {
    prop_oneof![
        any::<u32>().prop_map(XidNumber::new),
        (1u8..=4, any::<u32>()).prop_map(|(octets, v)| {
            let v = if octets == 4 {
                v
            } else {
                v & ((1 << (8 * u32::from(octets))) - 1)
            };
            XidNumber::with_octets(v, octets).unwrap()
        }),
    ]
}

fn xid_params() -> impl Strategy<Value = XidParams> {
    let unknown = prop::collection::btree_map(
        prop_oneof![Just(0u8), Just(1u8), Just(4u8), 11u8..=255],
        prop::collection::vec(any::<u8>(), 0..20),
        0..5,
    );
    (
        prop::option::of(any::<u16>().prop_map(ClassesOfProcedures::from_bits)),
        prop::option::of(
            (0u32..1 << 24).prop_map(|b| HdlcOptionalFunctions::from_bits(b).unwrap()),
        ),
        prop::collection::vec(prop::option::of(xid_number()), 6),
        unknown,
    )
        .prop_map(|(classes, functions, n, unknown)| XidParams {
            classes_of_procedures: classes,
            hdlc_optional_functions: functions,
            i_field_length_tx: n[0],
            i_field_length_rx: n[1],
            window_size_tx: n[2],
            window_size_rx: n[3],
            ack_timer: n[4],
            retries: n[5],
            unknown: unknown
                .into_iter()
                .map(|(pi, pv)| XidParameter { pi, pv })
                .collect(),
        })
}

fn frmr(m: Modulus) -> impl Strategy<Value = FrmrInfo> {
    let n = m.value();
    let control_max: u16 = if m == Modulus::Mod8 { 0xFF } else { 0xFFFF };
    (
        0..=control_max,
        0..n,
        0..n,
        prop::array::uniform6(any::<bool>()),
    )
        .prop_map(|(rejected_control, vs, vr, b)| FrmrInfo {
            rejected_control,
            vs,
            vr,
            rejected_was_response: b[0],
            w: b[1],
            x: b[2],
            y: b[3],
            z: b[4],
            v: b[5],
        })
}

/// Octets that decode as often as not: a valid frame with a few octets
/// overwritten, truncated or extended.
fn mutated_frame() -> impl Strategy<Value = (Vec<u8>, Modulus)> {
    (
        frame(),
        prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
        any::<prop::sample::Index>(),
        modulus(),
    )
        .prop_map(|(f, edits, cut, m)| {
            let mut bytes = f.encode();
            for (i, b) in edits {
                let i = i.index(bytes.len());
                bytes[i] = b;
            }
            if cut.index(4) == 0 {
                bytes.truncate(cut.index(bytes.len() + 1));
            }
            (bytes, m)
        })
}

proptest! {
    #![proptest_config(config(1000))]

    #[test]
    fn frame_round_trips(f in frame()) {
        let bytes = f.encode();
        prop_assert_eq!(bytes.len(), f.encoded_len());
        prop_assert_eq!(Frame::decode(&bytes, f.modulus()).unwrap(), f);
    }

    #[test]
    fn address_text_round_trips(a in address()) {
        let text = a.to_string();
        let back: Address = text.parse().unwrap();
        prop_assert_eq!(back.callsign(), a.callsign());
        prop_assert_eq!(back.ssid(), a.ssid());
        prop_assert_eq!(text.parse::<Address>().unwrap().to_string(), text);
    }

    #[test]
    fn mutated_frames_decode_exactly_or_fail((bytes, m) in mutated_frame()) {
        if let Ok(f) = Frame::decode(&bytes, m) {
            prop_assert_eq!(f.encode(), bytes);
        }
    }

    #[test]
    fn arbitrary_octets_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64), m in modulus()) {
        if let Ok(f) = Frame::decode(&bytes, m) {
            prop_assert_eq!(f.encode(), bytes);
        }
    }

    #[test]
    fn digipeating_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..96), me in address()) {
        if let Some(repeated) = digipeat(&bytes, &me) {
            prop_assert_eq!(repeated.len(), bytes.len());
            prop_assert_eq!(digipeat(&repeated, &me), None);
        }
    }

    #[test]
    fn a_repeated_damaged_frame_is_not_repeated_again(
        (bytes, _) in mutated_frame(),
        pick in any::<usize>(),
    ) {
        // One of the frame's own repeaters, so that some are repeated.
        let Ok((field, _)) = AddressField::decode(&bytes) else {
            return Ok(());
        };
        let Some(me) = field.digipeaters().get(pick % field.digipeaters().len().max(1)) else {
            return Ok(());
        };
        if let Some(repeated) = digipeat(&bytes, me) {
            prop_assert_eq!(repeated.len(), bytes.len());
            let diff: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] != repeated[i]).collect();
            prop_assert_eq!(diff.len(), 1);
            prop_assert_eq!(digipeat(&repeated, me), None);
        }
    }

    #[test]
    fn a_frame_goes_through_its_path_in_order_once(f in frame(), stranger in address()) {
        // Sent with every H bit 0, the frame is repeated by each repeater of
        // its path in turn (its own H bit set, nothing else changed), by no
        // other station, and by nobody once the path is done or names a
        // repeater that has repeated it already.
        let mut f = f;
        for d in f.address_mut().digipeaters_mut() {
            d.set_c_or_h(false);
        }
        let same = |a: &Address, b: &Address| a.callsign() == b.callsign() && a.ssid() == b.ssid();
        let path = f.digipeaters().to_vec();
        let mut bytes = f.encode();
        for (i, hop) in path.iter().enumerate() {
            if !same(&stranger, hop) {
                prop_assert_eq!(digipeat(&bytes, &stranger), None);
            }
            if path[..i].iter().any(|d| same(d, hop)) {
                break;
            }
            let repeated = digipeat(&bytes, hop).expect("the next hop repeats");
            let mut expected = f.clone();
            expected.address_mut().digipeaters_mut()[i].set_c_or_h(true);
            prop_assert_eq!(&repeated, &expected.encode());
            f = expected;
            bytes = repeated;
        }
        for hop in path.iter().chain([&stranger]) {
            prop_assert_eq!(digipeat(&bytes, hop), None);
        }
    }

    #[test]
    fn a_path_naming_a_repeater_twice_is_repeated_by_it_once(
        f in frame(),
        at in any::<prop::sample::Index>(),
    ) {
        // The path with one of its repeaters named again right after it.
        let mut path: Vec<Address> = f.digipeaters().to_vec();
        if path.is_empty() || path.len() == 8 {
            return Ok(());
        }
        for d in &mut path {
            d.set_c_or_h(true);
        }
        let i = at.index(path.len());
        path.truncate(i + 1);
        path[i].set_c_or_h(false);
        path.push(path[i]);
        let me = path[i];
        if path[..i].iter().any(|d| d.callsign() == me.callsign() && d.ssid() == me.ssid()) {
            return Ok(()); // it has repeated the frame already
        }
        let field = AddressField::new(*f.dest(), *f.source(), &path, f.command_response()).unwrap();
        let mut frame = f.clone();
        *frame.address_mut() = field;
        let once = digipeat(&frame.encode(), &me).expect("its turn");
        prop_assert_eq!(digipeat(&once, &me), None);
    }

    #[test]
    fn multi_srej_round_trips(
        (m, info) in modulus().prop_flat_map(|m| (Just(m), multi_srej(m))),
    ) {
        let bytes = info.encode(m).unwrap();
        prop_assert_eq!(&MultiSrejInfo::decode(&bytes, m).unwrap(), &info);
        let frame = Frame::decode(&srej_frame_octets(m, &bytes), m).unwrap();
        prop_assert_eq!(frame.multi_srej(), Some(info));
    }

    #[test]
    fn multi_srej_arbitrary_octets_decode_exactly_or_fail(
        bytes in prop::collection::vec(any::<u8>(), 0..16),
        m in modulus(),
    ) {
        if let Ok(info) = MultiSrejInfo::decode(&bytes, m) {
            prop_assert_eq!(info.encode(m).unwrap(), bytes.clone());
        }
        let octets = srej_frame_octets(m, &bytes);
        prop_assert_eq!(
            Frame::decode(&octets, m).is_ok(),
            MultiSrejInfo::decode(&bytes, m).is_ok()
        );
    }

    #[test]
    fn xid_round_trips(p in xid_params()) {
        let bytes = p.encode().unwrap();
        prop_assert_eq!(XidParams::decode(&bytes).unwrap(), p);
    }

    #[test]
    fn xid_arbitrary_octets_decode_exactly_or_fail(
        tail in prop::collection::vec(any::<u8>(), 0..40),
        raw in prop::collection::vec(any::<u8>(), 0..8),
        fix_length in any::<bool>(),
    ) {
        // With FI, GI and a right group length half of the time.
        let bytes = if fix_length {
            let mut b = vec![0x82, 0x80, 0, tail.len() as u8];
            b.extend_from_slice(&tail);
            b
        } else {
            raw.into_iter().chain(tail).collect()
        };
        if let Ok(p) = XidParams::decode(&bytes) {
            prop_assert_eq!(p.encode().unwrap(), bytes);
        }
    }

    #[test]
    fn frmr_round_trips(
        (m, info) in modulus().prop_flat_map(|m| (Just(m), frmr(m))),
    ) {
        let bytes = info.encode(m).unwrap();
        prop_assert_eq!(bytes.len(), FrmrInfo::encoded_len(m));
        prop_assert_eq!(FrmrInfo::decode(&bytes, m).unwrap(), info);
    }

    #[test]
    fn frmr_arbitrary_octets_decode_exactly_or_fail(
        bytes in prop::collection::vec(any::<u8>(), 2..7),
        m in modulus(),
    ) {
        if let Ok(info) = FrmrInfo::decode(&bytes, m) {
            prop_assert_eq!(info.encode(m).unwrap(), bytes);
        }
    }

    #[test]
    fn segment_header_round_trips(
        bytes in prop::collection::vec(any::<u8>(), 0..4),
    ) {
        if let Ok((header, data)) = SegmentHeader::decode(&bytes) {
            let mut out = Vec::new();
            header.encode_into(&mut out);
            prop_assert_eq!(out.len(), header.encoded_len());
            out.extend_from_slice(data);
            prop_assert_eq!(out, bytes);
        }
    }
}

/// An SREJ response N0AAA>N0BBB, N(R) 5, with information field `info`.
fn srej_frame_octets(m: Modulus, info: &[u8]) -> Vec<u8> {
    let address = AddressField::new(
        "N0BBB".parse().unwrap(),
        "N0AAA".parse().unwrap(),
        &[],
        CommandResponse::Response,
    )
    .unwrap();
    let mut octets = Frame::s(address, m, Supervisory::Srej, 5, false)
        .unwrap()
        .encode();
    octets.extend_from_slice(info);
    octets
}

#[test]
fn every_control_field_round_trips() {
    for m in [Modulus::Mod8, Modulus::Mod128] {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                if let Ok(c) = Control::decode(&[a, b], m) {
                    let len = c.len(m);
                    assert_eq!(c.encode(m).unwrap(), [a, b][..len]);
                }
            }
        }
    }
}
