//! Hand-assembled AX.25 frames, built from the bit diagrams of AX.25 v2.2
//! (fig. 3.4-3.8, 4.1-4.6) and checked against the encoder and decoder.

use linklab_wire::ax25::{
    Address, AddressError, AddressField, Callsign, CallsignError, ClassesOfProcedures,
    CommandResponse, Frame, FrameError, FrmrInfo, HdlcOptionalFunction, HdlcOptionalFunctions, Pid,
    SegmentHeader, XidError, XidNumber, XidParams,
};
use linklab_wire::control::{Control, ControlError, Modulus, Supervisory, Unnumbered};

fn addr(text: &str) -> Address {
    text.parse().unwrap()
}

/// NJ7P (destination) and N7LEM (source), as in fig. 3.4.
fn nj7p_n7lem(cr: CommandResponse) -> AddressField {
    AddressField::new(addr("NJ7P"), addr("N7LEM"), &[], cr).unwrap()
}

const NJ7P: [u8; 6] = [0x9C, 0x94, 0x6E, 0xA0, 0x40, 0x40];
const N7LEM: [u8; 6] = [0x9C, 0x6E, 0x98, 0x8A, 0x9A, 0x40];

/// Destination NJ7P, source N7LEM, with the given SSID octets.
fn header(dest_ssid: u8, source_ssid: u8) -> Vec<u8> {
    let mut v = NJ7P.to_vec();
    v.push(dest_ssid);
    v.extend_from_slice(&N7LEM);
    v.push(source_ssid);
    v
}

/// Command: destination C = 1 (0xE0), source C = 0 and last (0x61).
fn cmd() -> Vec<u8> {
    header(0xE0, 0x61)
}

/// Response: destination C = 0 (0x60), source C = 1 and last (0xE1).
fn resp() -> Vec<u8> {
    header(0x60, 0xE1)
}

fn cat(a: Vec<u8>, b: &[u8]) -> Vec<u8> {
    let mut v = a;
    v.extend_from_slice(b);
    v
}

fn check(frame: &Frame, bytes: &[u8]) {
    assert_eq!(frame.encode(), bytes, "encoding of {frame:?}");
    assert_eq!(frame.encoded_len(), bytes.len());
    assert_eq!(&Frame::decode(bytes, frame.modulus()).unwrap(), frame);
}

#[test]
fn figure_3_4_i_frame() {
    // N(R) = 1, P = 1, N(S) = 7: 001 1 111 0 = 0x3E.
    let bytes = cat(cmd(), &[0x3E, 0xF0]);
    let frame = Frame::i(
        nj7p_n7lem(CommandResponse::Command),
        Modulus::Mod8,
        7,
        1,
        true,
        Pid::NoLayer3,
        vec![],
    )
    .unwrap();
    check(&frame, &bytes);
    assert!(frame.is_command());
    assert_eq!(frame.dest().to_string(), "NJ7P");
    assert_eq!(frame.source().to_string(), "N7LEM");
}

#[test]
fn figure_3_8_repeated_frame() {
    // Digipeater N7OO-1 with H = 1 and the extension bit: 1 11 0001 1 = 0xE3.
    let mut bytes = header(0xE0, 0x60);
    bytes.extend_from_slice(&[0x9C, 0x6E, 0x9E, 0x9E, 0x40, 0x40, 0xE3, 0x3E, 0xF0]);
    let mut digi = addr("N7OO-1");
    digi.set_c_or_h(true);
    let address = AddressField::new(
        addr("NJ7P"),
        addr("N7LEM"),
        &[digi],
        CommandResponse::Command,
    )
    .unwrap();
    let frame = Frame::i(address, Modulus::Mod8, 7, 1, true, Pid::NoLayer3, vec![]).unwrap();
    check(&frame, &bytes);
    assert!(frame.digipeaters()[0].c_or_h());
}

#[test]
fn ui_frame_with_two_digipeaters() {
    let bytes = [
        0x82, 0xA0, 0xA4, 0xA6, 0x40, 0x40, 0xE0, // APRS, C = 1
        0x9C, 0x60, 0x86, 0x82, 0x98, 0x98, 0x6E, // N0CALL-7, C = 0
        0xAE, 0x92, 0x88, 0x8A, 0x62, 0x40, 0xE2, // WIDE1-1, H = 1
        0xAE, 0x92, 0x88, 0x8A, 0x64, 0x40, 0x65, // WIDE2-2, H = 0, last
        0x03, 0xF0, b'H', b'i',
    ];
    let mut wide1 = addr("WIDE1-1");
    wide1.set_c_or_h(true);
    let frame = Frame::ui(
        addr("APRS"),
        addr("n0call-7"),
        &[wide1, addr("WIDE2-2")],
        Pid::NoLayer3,
        b"Hi".to_vec(),
    )
    .unwrap();
    check(&frame, &bytes);
    let names: Vec<String> = frame.digipeaters().iter().map(|d| d.to_string()).collect();
    assert_eq!(names, ["WIDE1-1", "WIDE2-2"]);
}

#[test]
fn unnumbered_frames() {
    let cases = [
        (Unnumbered::Sabm, true, CommandResponse::Command, 0x3F),
        (Unnumbered::Sabme, true, CommandResponse::Command, 0x7F),
        (Unnumbered::Disc, true, CommandResponse::Command, 0x53),
        (Unnumbered::Ua, true, CommandResponse::Response, 0x73),
        (Unnumbered::Dm, true, CommandResponse::Response, 0x1F),
        (Unnumbered::Dm, false, CommandResponse::Response, 0x0F),
        (Unnumbered::Test, false, CommandResponse::Command, 0xE3),
        (Unnumbered::Snrm, true, CommandResponse::Command, 0x93),
        (Unnumbered::Snrme, false, CommandResponse::Command, 0xCF),
        (Unnumbered::Sarme, false, CommandResponse::Command, 0x4F),
    ];
    for (kind, pf, cr, octet) in cases {
        let head = if cr == CommandResponse::Command {
            cmd()
        } else {
            resp()
        };
        let frame = Frame::u(nj7p_n7lem(cr), Modulus::Mod8, kind, pf, vec![]).unwrap();
        check(&frame, &cat(head.clone(), &[octet]));
        // U frames are one octet in modulo 128 too.
        let frame = Frame::u(nj7p_n7lem(cr), Modulus::Mod128, kind, pf, vec![]).unwrap();
        check(&frame, &cat(head, &[octet]));
    }
}

#[test]
fn supervisory_frames_modulo_8_and_128() {
    type Case = (Supervisory, u8, bool, &'static [u8], &'static [u8]);
    let cases: [Case; 4] = [
        // N(R) P/F S S 0 1, and 0000 SS01 / N(R) P/F.
        (Supervisory::Rr, 5, true, &[0xB1], &[0x01, 0x0B]),
        (Supervisory::Rnr, 2, false, &[0x45], &[0x05, 0x04]),
        (Supervisory::Rej, 7, true, &[0xF9], &[0x09, 0x0F]),
        (Supervisory::Srej, 3, false, &[0x6D], &[0x0D, 0x06]),
    ];
    for (kind, nr, pf, mod8, mod128) in cases {
        let f8 = Frame::s(
            nj7p_n7lem(CommandResponse::Response),
            Modulus::Mod8,
            kind,
            nr,
            pf,
        );
        check(&f8.unwrap(), &cat(resp(), mod8));
        let f128 = Frame::s(
            nj7p_n7lem(CommandResponse::Response),
            Modulus::Mod128,
            kind,
            nr,
            pf,
        );
        check(&f128.unwrap(), &cat(resp(), mod128));
    }
    let big = [
        (Supervisory::Rr, 100, true, [0x01, 0xC9]),
        (Supervisory::Rej, 127, true, [0x09, 0xFF]),
        (Supervisory::Srej, 64, false, [0x0D, 0x80]),
    ];
    for (kind, nr, pf, octets) in big {
        let f = Frame::s(
            nj7p_n7lem(CommandResponse::Command),
            Modulus::Mod128,
            kind,
            nr,
            pf,
        );
        check(&f.unwrap(), &cat(cmd(), &octets));
    }
}

#[test]
fn i_frame_modulo_128() {
    // N(S) = 100 -> 1100100 0 = 0xC8; N(R) = 27, P = 0 -> 0011011 0 = 0x36.
    let frame = Frame::i(
        nj7p_n7lem(CommandResponse::Command),
        Modulus::Mod128,
        100,
        27,
        false,
        Pid::Ip,
        vec![0x45, 0x00],
    )
    .unwrap();
    check(&frame, &cat(cmd(), &[0xC8, 0x36, 0xCC, 0x45, 0x00]));
    // N(S) = 127, N(R) = 127, P = 1.
    let frame = Frame::i(
        nj7p_n7lem(CommandResponse::Command),
        Modulus::Mod128,
        127,
        127,
        true,
        Pid::Segmentation,
        vec![0x81, 0xCC],
    )
    .unwrap();
    check(&frame, &cat(cmd(), &[0xFE, 0xFF, 0x08, 0x81, 0xCC]));
}

#[test]
fn frmr_frames() {
    // Rejected SABME (0x6F), V(S) = 2, C/R = 0, V(R) = 5, W: 0xA4, 0x01.
    let info = FrmrInfo {
        rejected_control: 0x6F,
        vs: 2,
        vr: 5,
        w: true,
        ..FrmrInfo::default()
    };
    let field = info.encode(Modulus::Mod8).unwrap();
    assert_eq!(field, [0x6F, 0xA4, 0x01]);
    assert_eq!(FrmrInfo::decode(&field, Modulus::Mod8).unwrap(), info);
    let frame = Frame::u(
        nj7p_n7lem(CommandResponse::Response),
        Modulus::Mod8,
        Unnumbered::Frmr,
        true,
        field,
    )
    .unwrap();
    check(&frame, &cat(resp(), &[0x97, 0x6F, 0xA4, 0x01]));

    // Modulo 128: rejected I frame C8 36 (response), V(S) = 100, V(R) = 27, Z.
    let info = FrmrInfo {
        rejected_control: 0x36C8,
        vs: 100,
        vr: 27,
        rejected_was_response: true,
        z: true,
        ..FrmrInfo::default()
    };
    let field = info.encode(Modulus::Mod128).unwrap();
    assert_eq!(field, [0xC8, 0x36, 0xC8, 0x37, 0x08]);
    assert_eq!(FrmrInfo::decode(&field, Modulus::Mod128).unwrap(), info);
}

/// Fig. 4.6 with the Classes of Procedures erratum corrected (21 00, not
/// 22 00: bit 0, Balanced ABM, is always 1).
const FIG_4_6_INFO: [u8; 27] = [
    0x82, 0x80, 0x00, 0x17, // FI, GI, GL = 23
    0x02, 0x02, 0x21, 0x00, // Classes of Procedures: ABM, half duplex
    0x03, 0x03, 0x82, 0xA8, 0x22, // HDLC Optional Functions
    0x06, 0x02, 0x04, 0x00, // I Field Length Rx: 1024 bits
    0x08, 0x01, 0x02, // Window Size Rx: 2
    0x09, 0x02, 0x10, 0x00, // T1: 4096 ms
    0x0A, 0x01, 0x03, // Retries: 3
];

#[test]
fn xid_figure_4_6() {
    use HdlcOptionalFunction::*;
    let functions = [
        Rej,
        ExtendedAddress,
        Modulo128,
        Test,
        Fcs16,
        SynchronousTx,
        MultiSrej,
    ]
    .into_iter()
    .fold(HdlcOptionalFunctions::default(), |f, bit| f.with(bit));
    let params = XidParams {
        classes_of_procedures: Some(ClassesOfProcedures::ax25(false)),
        hdlc_optional_functions: Some(functions),
        i_field_length_rx: Some(XidNumber::new(1024)),
        window_size_rx: Some(XidNumber::new(2)),
        ack_timer: Some(XidNumber::new(4096)),
        retries: Some(XidNumber::new(3)),
        ..XidParams::default()
    };
    assert_eq!(params.encode().unwrap(), FIG_4_6_INFO);
    assert_eq!(XidParams::decode(&FIG_4_6_INFO).unwrap(), params);
    assert!(functions.contains(MultiSrej) && !functions.contains(Srej));
    assert_eq!(
        HdlcOptionalFunctions::AX25_MANDATORY.bits() & functions.bits(),
        HdlcOptionalFunctions::AX25_MANDATORY.bits()
    );

    // The whole frame: XID command 0xAF from fig. 4.6.
    let frame = Frame::u(
        nj7p_n7lem(CommandResponse::Command),
        Modulus::Mod8,
        Unnumbered::Xid,
        false,
        FIG_4_6_INFO.to_vec(),
    )
    .unwrap();
    check(&frame, &cat(cat(cmd(), &[0xAF]), &FIG_4_6_INFO));
}

#[test]
fn xid_keeps_width_and_unknown_parameters() {
    // Window Size Rx sent in 2 octets, T1 200 ms in 2 octets (as Dire Wolf
    // does), an unknown PI 4 kept as is.
    let info = [
        0x82, 0x80, 0x00, 0x0B, 0x04, 0x01, 0x55, 0x08, 0x02, 0x00, 0x07, 0x09, 0x02, 0x00, 0xC8,
        0x00,
    ];
    // GL counts 11 octets, but 12 follow (trailing 0x00).
    assert_eq!(
        XidParams::decode(&info).unwrap_err(),
        XidError::GroupLengthMismatch {
            group_len: 11,
            available: 12
        }
    );
    let info = &info[..info.len() - 1];
    let params = XidParams::decode(info).unwrap();
    assert_eq!(params.window_size_rx.unwrap().value(), 7);
    assert_eq!(params.window_size_rx.unwrap().octets(), 2);
    assert_eq!(params.ack_timer.unwrap().value(), 200);
    assert_eq!(params.unknown.len(), 1);
    assert_eq!(params.encode().unwrap(), info);
}

#[test]
fn xid_errors() {
    let cases: [(&[u8], &str); 6] = [
        (&[0x82, 0x80, 0x00], "XID information field is 3 octets; format indicator, group identifier and group length need 4"),
        (&[0x81, 0x80, 0x00, 0x00], "XID format indicator is 0x81; only 0x82 (general purpose) is defined"),
        (&[0x82, 0x80, 0x00, 0x03, 0x08, 0x02, 0x01], "XID parameter 8 (Window Size Receive) is truncated: needs 3 more octets, 2 remain in the group"),
        (&[0x82, 0x80, 0x00, 0x06, 0x08, 0x01, 0x01, 0x03, 0x01, 0x00], "XID parameter 3 follows parameter 8; parameters must be in ascending order, each at most once"),
        (&[0x82, 0x80, 0x00, 0x03, 0x02, 0x01, 0x21], "XID parameter 2 (Classes of Procedures) has a 1-octet value; expected 2"),
        (&[0x82, 0x80, 0x00, 0x02, 0x09, 0x00], "XID parameter 9 (Acknowledge Timer) has a 0-octet value; expected 1 to 4"),
    ];
    for (bytes, message) in cases {
        assert_eq!(XidParams::decode(bytes).unwrap_err().to_string(), message);
    }
    assert!(XidNumber::with_octets(256, 1).is_err());
}

#[test]
fn segment_headers() {
    let first = SegmentHeader::first(2, Pid::Ip).unwrap();
    let mut out = Vec::new();
    first.encode_into(&mut out);
    assert_eq!(out, [0x82, 0xCC]);
    assert_eq!(
        SegmentHeader::decode(&[0x82, 0xCC, 1, 2]).unwrap(),
        (first, &[1u8, 2][..])
    );
    let later = SegmentHeader::subsequent(0).unwrap();
    assert_eq!(
        SegmentHeader::decode(&[0x00, 9]).unwrap(),
        (later, &[9u8][..])
    );
    assert!(SegmentHeader::subsequent(128).is_err());
    assert_eq!(
        SegmentHeader::decode(&[0x85]).unwrap_err().to_string(),
        "first segment ends after its header octet; the original PID is missing"
    );
}

#[test]
fn callsign_and_address_errors() {
    let err = |t: &str| t.parse::<Address>().unwrap_err().to_string();
    assert_eq!(
        err("N0CALLXX"),
        "callsign \"N0CALLXX\" is 8 characters; at most 6 allowed"
    );
    assert_eq!(err(""), "callsign is empty");
    assert_eq!(err("-3"), "callsign is empty");
    assert_eq!(
        err("N0/CA"),
        "callsign \"N0/CA\" has '/' at position 3; only letters A-Z and digits 0-9 are allowed"
    );
    assert_eq!(err("N0CALL-16"), "SSID 16 is out of range; it must be 0-15");
    assert_eq!(
        err("N0CALL-"),
        "SSID \"\" in \"N0CALL-\" is not a number 0-15"
    );
    assert_eq!(
        err("N0CALL-+1"),
        "SSID \"+1\" in \"N0CALL-+1\" is not a number 0-15"
    );
    assert_eq!(
        err("N0CALL-x"),
        "SSID \"x\" in \"N0CALL-x\" is not a number 0-15"
    );
    assert_eq!(
        "ÄB".parse::<Callsign>().unwrap_err(),
        CallsignError::BadChar {
            text: "ÄB".into(),
            ch: 'Ä',
            position: 1
        }
    );
    let a = addr("n0call-15");
    assert_eq!(a.to_string(), "N0CALL-15");
    assert_eq!(addr("N0CALL-0").to_string(), "N0CALL");
    assert_eq!(a.reserved(), 3);
}

#[test]
fn address_field_errors() {
    // Destination with the extension bit set: no source.
    let only_dest = header(0xE1, 0x61);
    assert_eq!(
        Frame::decode(&only_dest, Modulus::Mod8).unwrap_err(),
        FrameError::Address(AddressError::NoSource)
    );
    // Lower-case letter in the source callsign.
    let mut bad = cat(cmd(), &[0x3F]);
    bad[9] = b'e' << 1;
    assert_eq!(
        Frame::decode(&bad, Modulus::Mod8).unwrap_err().to_string(),
        "source address: callsign octet 3 is 0xCA, not an upper-case letter, digit or space shifted left one bit"
    );
    // A space inside the callsign.
    let mut bad = cat(cmd(), &[0x3F]);
    bad[1] = 0x40;
    assert_eq!(
        Frame::decode(&bad, Modulus::Mod8).unwrap_err().to_string(),
        "destination address: callsign \"N 7P  \" is not 1-6 characters followed by space padding"
    );
    // Truncated source.
    assert_eq!(
        Frame::decode(&cmd()[..12], Modulus::Mod8)
            .unwrap_err()
            .to_string(),
        "address field truncated: source address needs 7 octets but only 5 remain"
    );
    // Nine digipeaters.
    let mut many = header(0xE0, 0x60);
    for i in 0..9 {
        many.extend_from_slice(&[
            0x9C,
            0x6E,
            0x9E,
            0x9E,
            0x40,
            0x40,
            if i == 8 { 0x61 } else { 0x60 },
        ]);
    }
    many.push(0x3F);
    assert_eq!(
        Frame::decode(&many, Modulus::Mod8).unwrap_err().to_string(),
        "address field has more than 8 digipeater addresses"
    );
    let d = addr("N7OO");
    assert!(AddressField::new(d, d, &[d; 9], CommandResponse::Command).is_err());
}

#[test]
fn frame_errors() {
    let e = |bytes: Vec<u8>, m| Frame::decode(&bytes, m).unwrap_err().to_string();
    assert_eq!(
        e(cmd(), Modulus::Mod8),
        "control field missing: the frame ends where the control field should start"
    );
    assert_eq!(
        e(cat(cmd(), &[0x3E]), Modulus::Mod8),
        "I frame ends after the control field; the PID octet is missing"
    );
    assert_eq!(
        e(cat(cmd(), &[0x03]), Modulus::Mod8),
        "UI frame ends after the control field; the PID octet is missing"
    );
    assert_eq!(
        e(cat(cmd(), &[0x3E]), Modulus::Mod128),
        "modulo-128 I frame control field needs 2 octets; only 1 present"
    );
    assert_eq!(
        e(cat(cmd(), &[0x53, 1, 2]), Modulus::Mod8),
        "DISC frame carries 2 octets of information; only I, UI, XID, TEST and FRMR frames may"
    );
    assert_eq!(
        e(cat(cmd(), &[0x01, 0x00, 0x00]), Modulus::Mod128),
        "RR frame carries 1 octets of information; only I, UI, XID, TEST and FRMR frames may"
    );
    assert_eq!(
        e(cat(cmd(), &[0x07]), Modulus::Mod8),
        "unknown U frame control field 0x07 (modifier bits 00001)"
    );
    assert_eq!(
        e(cat(cmd(), &[0x21, 0x00]), Modulus::Mod128),
        "modulo-128 RR control field 0x21 has reserved bits 4-7 set; they must be 0"
    );
    let address = nj7p_n7lem(CommandResponse::Command);
    assert_eq!(
        Frame::i(
            address.clone(),
            Modulus::Mod8,
            8,
            0,
            false,
            Pid::NoLayer3,
            vec![]
        )
        .unwrap_err()
        .to_string(),
        "N(S) = 8 is out of range for modulo 8 (0-7)"
    );
    assert_eq!(
        Frame::s(
            address.clone(),
            Modulus::Mod128,
            Supervisory::Rr,
            128,
            false
        )
        .unwrap_err(),
        FrameError::Control(ControlError::SequenceOutOfRange {
            field: "N(R)",
            value: 128,
            modulus: Modulus::Mod128,
            max: 127
        })
    );
    assert_eq!(
        Frame::u(
            address.clone(),
            Modulus::Mod8,
            Unnumbered::Ui,
            false,
            vec![]
        )
        .unwrap_err()
        .to_string(),
        "UI frame ends after the control field; the PID octet is missing"
    );
    assert_eq!(
        Frame::new(
            address.clone(),
            Modulus::Mod8,
            Control::U {
                kind: Unnumbered::Ua,
                pf: false
            },
            Some(Pid::Ip),
            vec![]
        )
        .unwrap_err()
        .to_string(),
        "UA frames have no PID field; only I and UI frames do"
    );
    assert_eq!(
        Frame::u(address, Modulus::Mod8, Unnumbered::Sabm, true, vec![1])
            .unwrap_err()
            .to_string(),
        "SABM frame carries 1 octets of information; only I, UI, XID, TEST and FRMR frames may"
    );
}

#[test]
fn lenient_reserved_bits_round_trip() {
    // gensio-style SSID octets with both R bits clear, Linux-style
    // modulo-128 source (bit 6 clear): accepted and kept.
    for (d, s) in [(0x80, 0x01), (0x80, 0x21), (0xA0, 0x41)] {
        let bytes = cat(header(d, s), &[0x3F]);
        let frame = Frame::decode(&bytes, Modulus::Mod8).unwrap();
        assert_eq!(frame.encode(), bytes);
        assert_eq!(frame.dest().reserved(), (d >> 5) & 3);
    }
    let v1 = Frame::decode(&cat(header(0x60, 0x61), &[0x3F]), Modulus::Mod8).unwrap();
    assert_eq!(v1.command_response(), CommandResponse::PreviousVersionZeros);
    assert!(!v1.is_command() && !v1.is_response());
}

/// Multi-SREJ (AX.25 v2.2 4.3.2.4, fig. 4.5 3B) as Dire Wolf 1.5+ sends
/// it: N(R) in the control field, each further N(R) one octet of the
/// information field, in the N(R) bits of a control octet of the modulus
/// (modulo 8: bits 5-7; modulo 128: bits 1-7, bit 0 the span bit).
#[test]
fn multi_srej_information_field() {
    use linklab_wire::ax25::{MultiSrejInfo, SrejInfoError, SrejRequest};
    let address = || {
        AddressField::new(
            "N0BBB".parse().unwrap(),
            "N0AAA".parse().unwrap(),
            &[],
            CommandResponse::Response,
        )
        .unwrap()
    };
    let further = MultiSrejInfo::singles([4, 6]);
    let mod128 = Frame::srej(address(), Modulus::Mod128, 2, true, &further).unwrap();
    // Control 0x0D | N(R) 2 << 1 | F.
    assert_eq!(mod128.encode()[14..], [0x0D, 0x05, 0x08, 0x0C]);
    let mod8 = Frame::srej(address(), Modulus::Mod8, 2, false, &further).unwrap();
    assert_eq!(mod8.encode()[14..], [0x4D, 0x80, 0xC0]);
    for (frame, m) in [(mod128, Modulus::Mod128), (mod8, Modulus::Mod8)] {
        let back = Frame::decode(&frame.encode(), m).unwrap();
        assert_eq!(back.multi_srej(), Some(further.clone()));
    }
    // A span 126..1 (modulo 128), both octets with the span bit.
    let span = MultiSrejInfo::decode(&[0xFD, 0x03], Modulus::Mod128).unwrap();
    assert_eq!(
        span.requests,
        [SrejRequest::Span {
            first: 126,
            last: 1
        }]
    );
    assert_eq!(
        span.sequence_numbers(Modulus::Mod128).collect::<Vec<_>>(),
        [126, 127, 0, 1]
    );
    // Malformed fields: the frame does not decode.
    let mut octets = Frame::s(address(), Modulus::Mod128, Supervisory::Srej, 2, false)
        .unwrap()
        .encode();
    octets.push(0x09);
    assert_eq!(
        Frame::decode(&octets, Modulus::Mod128),
        Err(FrameError::SrejInfo(SrejInfoError::UnpairedSpan {
            position: 1
        }))
    );
    assert_eq!(
        MultiSrejInfo::decode(&[0x81], Modulus::Mod8),
        Err(SrejInfoError::ReservedBitsSet {
            position: 1,
            octet: 0x81
        })
    );
    assert_eq!(
        span.encode(Modulus::Mod8),
        Err(SrejInfoError::SpanInModulo8)
    );
    // Other S frames still carry no information field.
    let mut rr = Frame::s(address(), Modulus::Mod128, Supervisory::Rr, 2, false)
        .unwrap()
        .encode();
    rr.push(0x08);
    assert!(matches!(
        Frame::decode(&rr, Modulus::Mod128),
        Err(FrameError::InfoNotAllowed { .. })
    ));
}
