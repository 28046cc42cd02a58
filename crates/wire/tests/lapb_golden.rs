//! Hand-assembled LAPB and HDLC frames (no flags, no FCS), built from the
//! bit layouts of X.25 2.3 and ISO 13239 clause 5, checked against the
//! encoder and decoder.

use linklab_wire::control::{Control, ControlError, Modulus, Supervisory, Unnumbered};
use linklab_wire::lapb::{
    lapb_address, Address, CommandResponse, Frame, FrmrError, FrmrInfo, LapbError, LinkProcedure,
    Role,
};

use CommandResponse::{Command, Response};

/// The single-link LAPB address a station with role `sender` puts on a frame.
fn lapb(sender: Role, frame: CommandResponse) -> Address {
    lapb_address(sender, frame, LinkProcedure::SingleLink)
}

fn check(frame: &Frame, bytes: &[u8]) {
    assert_eq!(frame.encode(), bytes, "encoding of {frame:?}");
    assert_eq!(frame.encoded_len(), bytes.len());
    assert_eq!(&Frame::decode(bytes, frame.modulus()).unwrap(), frame);
}

fn u(address: Address, kind: Unnumbered, pf: bool) -> Frame {
    Frame::u(address, Modulus::Mod8, kind, pf, Vec::new()).unwrap()
}

#[test]
fn sabm_command_from_dte() {
    // B, SABM 001P1111 with P = 1.
    check(
        &u(lapb(Role::Dte, Command), Unnumbered::Sabm, true),
        &[0x01, 0x3F],
    );
}

#[test]
fn ua_response_from_dce() {
    // B, UA 011F0011 with F = 1.
    check(
        &u(lapb(Role::Dce, Response), Unnumbered::Ua, true),
        &[0x01, 0x73],
    );
}

#[test]
fn sabme_command_from_dce() {
    // A, SABME 011P1111 with P = 1.
    check(
        &u(lapb(Role::Dce, Command), Unnumbered::Sabme, true),
        &[0x03, 0x7F],
    );
}

#[test]
fn dm_response_from_dte() {
    // A, DM 000F1111 with F = 1.
    check(
        &u(lapb(Role::Dte, Response), Unnumbered::Dm, true),
        &[0x03, 0x1F],
    );
}

#[test]
fn disc_command_from_dte() {
    // B, DISC 010P0011 with P = 1.
    check(
        &u(lapb(Role::Dte, Command), Unnumbered::Disc, true),
        &[0x01, 0x53],
    );
}

#[test]
fn i_frame_modulo_8() {
    // B; N(R) = 5, P = 0, N(S) = 2, 0: 101 0 010 0 = 0xA4.
    let frame = Frame::i(
        lapb(Role::Dte, Command),
        Modulus::Mod8,
        2,
        5,
        false,
        b"hi".to_vec(),
    )
    .unwrap();
    check(&frame, &[0x01, 0xA4, b'h', b'i']);
    assert_eq!(frame.control().ns(), Some(2));
    assert_eq!(frame.control().nr(), Some(5));
    assert_eq!(frame.info(), b"hi");
}

#[test]
fn i_frame_modulo_128() {
    // A; first octet N(S) = 100, 0: 1100100 0 = 0xC8;
    // second octet N(R) = 37, P = 1: 0100101 1 = 0x4B.
    let frame = Frame::i(
        lapb(Role::Dce, Command),
        Modulus::Mod128,
        100,
        37,
        true,
        vec![0x10, 0x00],
    )
    .unwrap();
    check(&frame, &[0x03, 0xC8, 0x4B, 0x10, 0x00]);
}

#[test]
fn supervisory_frames() {
    let s = |address, modulus, kind, nr, pf| Frame::s(address, modulus, kind, nr, pf).unwrap();
    // RR response from DTE: A; N(R) = 3, F = 1: 011 1 00 01 = 0x71.
    check(
        &s(
            lapb(Role::Dte, Response),
            Modulus::Mod8,
            Supervisory::Rr,
            3,
            true,
        ),
        &[0x03, 0x71],
    );
    // RNR command from DCE: A; N(R) = 7, P = 1: 111 1 01 01 = 0xF5.
    check(
        &s(
            lapb(Role::Dce, Command),
            Modulus::Mod8,
            Supervisory::Rnr,
            7,
            true,
        ),
        &[0x03, 0xF5],
    );
    // REJ response from DCE, modulo 128: B; 0000 10 01 = 0x09;
    // N(R) = 127, F = 0: 1111111 0 = 0xFE.
    check(
        &s(
            lapb(Role::Dce, Response),
            Modulus::Mod128,
            Supervisory::Rej,
            127,
            false,
        ),
        &[0x01, 0x09, 0xFE],
    );
    // SREJ response from DTE, modulo 128: A; 0000 11 01 = 0x0D;
    // N(R) = 64, F = 1: 1000000 1 = 0x81.
    check(
        &s(
            lapb(Role::Dte, Response),
            Modulus::Mod128,
            Supervisory::Srej,
            64,
            true,
        ),
        &[0x03, 0x0D, 0x81],
    );
}

#[test]
fn frmr_modulo_8() {
    // B (DCE response), FRMR 100F0111 with F = 0 = 0x87. Rejected control
    // 0x2E; then 0, V(S) = 3, C/R = 0, V(R) = 6: 110 0 011 0 = 0xC6;
    // then W X Y Z = 0 0 1 0 and four 0 bits: 0x04.
    let info = FrmrInfo {
        rejected_control: 0x2E,
        vs: 3,
        vr: 6,
        y: true,
        ..FrmrInfo::default()
    };
    let frame = Frame::frmr(lapb(Role::Dce, Response), Modulus::Mod8, false, &info).unwrap();
    check(&frame, &[0x01, 0x87, 0x2E, 0xC6, 0x04]);
    assert_eq!(frame.frmr_info(), Ok(info));
}

#[test]
fn frmr_modulo_128() {
    // A (DTE response), FRMR with F = 1 = 0x97. Rejected control 0x0A 0x15;
    // 0, V(S) = 45: 0101101 0 = 0x5A; C/R = 1, V(R) = 100: 1100100 1 = 0xC9;
    // W X Y Z = 0 0 0 1: 0x08.
    let info = FrmrInfo {
        rejected_control: 0x150A,
        vs: 45,
        vr: 100,
        rejected_was_response: true,
        z: true,
        ..FrmrInfo::default()
    };
    let frame = Frame::frmr(lapb(Role::Dte, Response), Modulus::Mod128, true, &info).unwrap();
    check(&frame, &[0x03, 0x97, 0x0A, 0x15, 0x5A, 0xC9, 0x08]);
    assert_eq!(frame.frmr_info(), Ok(info));
}

#[test]
fn nrm_snrm_to_secondary_and_rr_response_with_f() {
    // Primary to secondary 0x05: SNRM 100P0011 with P = 1 = 0x93.
    check(&u(Address(0x05), Unnumbered::Snrm, true), &[0x05, 0x93]);
    // Secondary 0x05 answers UA, then RR N(R) = 0 with F = 1: 000 1 00 01.
    check(&u(Address(0x05), Unnumbered::Ua, true), &[0x05, 0x73]);
    let rr = Frame::s(Address(0x05), Modulus::Mod8, Supervisory::Rr, 0, true).unwrap();
    check(&rr, &[0x05, 0x11]);
}

#[test]
fn extended_mode_setting_commands() {
    // SNRME 110P1111 and SARME 010P1111 with P = 1.
    check(&u(Address(0x22), Unnumbered::Snrme, true), &[0x22, 0xDF]);
    check(&u(Address(0x22), Unnumbered::Sarme, true), &[0x22, 0x5F]);
}

#[test]
fn sarm_shares_the_dm_code() {
    // SARM to every secondary: all-station address, 000P1111 with P = 0.
    let sarm = u(Address::ALL_STATIONS, Unnumbered::Sarm, false);
    assert_eq!(sarm.encode(), [0xFF, 0x0F]);
    let back = Frame::decode(&[0xFF, 0x0F], Modulus::Mod8).unwrap();
    assert_eq!(back.encode(), [0xFF, 0x0F]);
    let Control::U { kind, pf } = back.control() else {
        panic!("not a U frame: {back:?}");
    };
    assert_eq!((kind, pf), (Unnumbered::Dm, false));
    assert_eq!(kind.as_command(), Unnumbered::Sarm);
}

#[test]
fn unnumbered_frames_with_information() {
    let with = |kind, pf, info: &[u8]| {
        Frame::u(
            Address::ALL_STATIONS,
            Modulus::Mod8,
            kind,
            pf,
            info.to_vec(),
        )
        .unwrap()
    };
    check(&with(Unnumbered::Ui, false, b"x"), &[0xFF, 0x03, b'x']);
    check(
        &with(Unnumbered::Xid, true, &[0x82, 0x80, 0x00, 0x00]),
        &[0xFF, 0xBF, 0x82, 0x80, 0x00, 0x00],
    );
    let test = Frame::u(
        Address::NO_STATION,
        Modulus::Mod128,
        Unnumbered::Test,
        true,
        b"ping".to_vec(),
    )
    .unwrap();
    check(&test, &[0x00, 0xF3, b'p', b'i', b'n', b'g']);
}

#[test]
fn decode_errors_are_precise() {
    assert_eq!(Frame::decode(&[], Modulus::Mod8), Err(LapbError::Empty));
    assert_eq!(
        Frame::decode(&[0x01], Modulus::Mod8),
        Err(LapbError::Control(ControlError::Missing))
    );
    assert_eq!(
        Frame::decode(&[0x01, 0x00], Modulus::Mod128),
        Err(LapbError::Control(ControlError::TooShort { format: "I" }))
    );
    assert_eq!(
        Frame::decode(&[0x01, 0x11, 0x00], Modulus::Mod128),
        Err(LapbError::Control(ControlError::ReservedSupervisoryBits {
            kind: "RR",
            octet: 0x11
        }))
    );
    assert!(matches!(
        Frame::decode(&[0x01, 0x07], Modulus::Mod8),
        Err(LapbError::Control(ControlError::UnknownUnnumbered {
            octet: 0x07,
            ..
        }))
    ));
    let err = Frame::decode(&[0x03, 0x71, 0xAA, 0xBB], Modulus::Mod8).unwrap_err();
    assert_eq!(
        err,
        LapbError::InfoNotAllowed {
            frame: "RR",
            len: 2
        }
    );
    assert_eq!(
        err.to_string(),
        "RR frame carries 2 octets of information; only I, UI, XID, TEST and FRMR frames may"
    );
    let err = Frame::decode(&[0x01, 0x3F, 0x00], Modulus::Mod8).unwrap_err();
    assert_eq!(
        err,
        LapbError::InfoNotAllowed {
            frame: "SABM",
            len: 1
        }
    );
    assert_eq!(
        Frame::decode(&[], Modulus::Mod8).unwrap_err().to_string(),
        "frame is empty: the address octet is missing"
    );
}

#[test]
fn construction_errors_are_precise() {
    assert_eq!(
        Frame::i(Address::A, Modulus::Mod8, 8, 0, false, Vec::new()),
        Err(LapbError::Control(ControlError::SequenceOutOfRange {
            field: "N(S)",
            value: 8,
            modulus: Modulus::Mod8,
            max: 7
        }))
    );
    assert_eq!(
        Frame::u(Address::B, Modulus::Mod8, Unnumbered::Disc, true, vec![1]),
        Err(LapbError::InfoNotAllowed {
            frame: "DISC",
            len: 1
        })
    );
    assert_eq!(
        Frame::frmr(
            Address::B,
            Modulus::Mod8,
            false,
            &FrmrInfo {
                vr: 8,
                ..FrmrInfo::default()
            }
        ),
        Err(LapbError::Frmr(FrmrError::SequenceOutOfRange {
            field: "V(R)",
            value: 8,
            modulus: Modulus::Mod8
        }))
    );
}

#[test]
fn frmr_info_of_other_frames_and_bad_fields() {
    let ua = u(Address::B, Unnumbered::Ua, true);
    assert_eq!(ua.frmr_info(), Err(LapbError::NotFrmr { frame: "UA" }));
    assert_eq!(
        ua.frmr_info().unwrap_err().to_string(),
        "UA frame has no FRMR information field"
    );
    // An FRMR whose field has the modulo-128 length under modulo 8 still
    // decodes as a frame; its field does not.
    let frame = Frame::decode(&[0x01, 0x87, 0, 0, 0, 0, 0], Modulus::Mod8).unwrap();
    assert_eq!(
        frame.frmr_info(),
        Err(LapbError::Frmr(FrmrError::WrongLength {
            len: 5,
            expected: 3,
            modulus: Modulus::Mod8
        }))
    );
}
