//! Golden monitor lines for every frame kind, the digipeater star rule,
//! escaping, XID and FRMR decoding, previous-version C bits, truncation and
//! undecodable input (format of `linklab_wire::monitor`).

use linklab_wire::ax25::{
    Address, AddressField, ClassesOfProcedures, CommandResponse, Frame, FrmrInfo,
    HdlcOptionalFunction, HdlcOptionalFunctions, MultiSrejInfo, Pid, ProcedureClass, SrejRequest,
    XidNumber, XidParameter, XidParams,
};
use linklab_wire::control::{Control, Modulus, Supervisory, Unnumbered};
use linklab_wire::monitor::{self, format, format_raw, format_raw_with, Monitor, MonitorOptions};

fn addr(text: &str) -> Address {
    text.parse().unwrap()
}

fn repeated(text: &str) -> Address {
    let mut a = addr(text);
    a.set_c_or_h(true);
    a
}

/// Destination NJ7P, source N7LEM, no digipeaters.
fn link(cr: CommandResponse) -> AddressField {
    AddressField::new(addr("NJ7P"), addr("N7LEM"), &[], cr).unwrap()
}

/// Destination N7LEM, source NJ7P: the other direction of [`link`].
fn reply(cr: CommandResponse) -> AddressField {
    AddressField::new(addr("N7LEM"), addr("NJ7P"), &[], cr).unwrap()
}

/// Formats `frame`, and checks that its encoding formats the same way
/// through `format_raw`.
fn line(frame: &Frame) -> String {
    let text = format(frame);
    assert_eq!(format_raw(&frame.encode(), frame.modulus()), text);
    assert_eq!(Monitor::new(frame).to_string(), text);
    text
}

fn u(cr: CommandResponse, kind: Unnumbered, pf: bool, info: &[u8]) -> Frame {
    Frame::u(link(cr), Modulus::Mod8, kind, pf, info.to_vec()).unwrap()
}

fn aprs_via(via: &[Address]) -> String {
    let frame = Frame::ui(
        addr("APRS"),
        addr("N0CALL-1"),
        via,
        Pid::NoLayer3,
        b"x".to_vec(),
    )
    .unwrap();
    line(&frame)
}

#[test]
fn ui_frame_tnc2_line() {
    let frame = Frame::ui(
        addr("APRS"),
        addr("N0CALL-1"),
        &[repeated("WIDE1-1"), addr("WIDE2-1")],
        Pid::NoLayer3,
        b"!4903.50N/07201.75W-Test\r".to_vec(),
    )
    .unwrap();
    assert_eq!(
        line(&frame),
        "N0CALL-1>APRS,WIDE1-1*,WIDE2-1: <UI C> [F0] !4903.50N/07201.75W-Test<CR>"
    );
}

#[test]
fn star_goes_after_last_repeated_digipeater_only() {
    assert_eq!(aprs_via(&[]), "N0CALL-1>APRS: <UI C> [F0] x");
    assert_eq!(
        aprs_via(&[addr("WIDE1-1"), addr("WIDE2-2")]),
        "N0CALL-1>APRS,WIDE1-1,WIDE2-2: <UI C> [F0] x"
    );
    assert_eq!(
        aprs_via(&[repeated("RELAY"), repeated("WIDE2-2"), addr("WIDE3")]),
        "N0CALL-1>APRS,RELAY,WIDE2-2*,WIDE3: <UI C> [F0] x"
    );
    // H bits out of order (not by the rules, but seen on air): still only
    // the last repeated one is starred.
    assert_eq!(
        aprs_via(&[addr("A"), repeated("B-15"), addr("C")]),
        "N0CALL-1>APRS,A,B-15*,C: <UI C> [F0] x"
    );
    let all: Vec<Address> = (1..=8).map(|n| repeated(&format!("D{n}"))).collect();
    assert_eq!(
        aprs_via(&all),
        "N0CALL-1>APRS,D1,D2,D3,D4,D5,D6,D7,D8*: <UI C> [F0] x"
    );
}

#[test]
fn i_frames_modulo_8_and_128() {
    let frame = Frame::i(
        link(CommandResponse::Command),
        Modulus::Mod8,
        7,
        1,
        true,
        Pid::NoLayer3,
        b"hello".to_vec(),
    )
    .unwrap();
    assert_eq!(line(&frame), "N7LEM>NJ7P: <I C P S7 R1> [F0] hello");
    let frame = Frame::i(
        link(CommandResponse::Command),
        Modulus::Mod128,
        100,
        127,
        false,
        Pid::Ip,
        vec![],
    )
    .unwrap();
    assert_eq!(line(&frame), "N7LEM>NJ7P: <I C S100 R127> [CC]");
    let frame = Frame::i(
        link(CommandResponse::Response),
        Modulus::Mod8,
        0,
        0,
        true,
        Pid::from(0x00),
        b"a".to_vec(),
    )
    .unwrap();
    assert_eq!(line(&frame), "N7LEM>NJ7P: <I R F S0 R0> [00] a");
}

#[test]
fn supervisory_frames() {
    let cases = [
        (
            Supervisory::Rr,
            CommandResponse::Response,
            true,
            3,
            "<RR R F R3>",
        ),
        (
            Supervisory::Rr,
            CommandResponse::Command,
            true,
            0,
            "<RR C P R0>",
        ),
        (
            Supervisory::Rnr,
            CommandResponse::Command,
            false,
            2,
            "<RNR C R2>",
        ),
        (
            Supervisory::Rej,
            CommandResponse::Response,
            false,
            7,
            "<REJ R R7>",
        ),
        (
            Supervisory::Srej,
            CommandResponse::Response,
            true,
            5,
            "<SREJ R F R5>",
        ),
    ];
    for (kind, cr, pf, nr, expected) in cases {
        let frame = Frame::s(link(cr), Modulus::Mod8, kind, nr, pf).unwrap();
        assert_eq!(line(&frame), format!("N7LEM>NJ7P: {expected}"));
    }
    let frame = Frame::s(
        link(CommandResponse::Response),
        Modulus::Mod128,
        Supervisory::Srej,
        100,
        false,
    )
    .unwrap();
    assert_eq!(line(&frame), "N7LEM>NJ7P: <SREJ R R100>");
}

#[test]
fn unnumbered_frames() {
    use CommandResponse::{Command as C, Response as R};
    let cases = [
        (C, Unnumbered::Sabm, true, "<SABM C P>"),
        (C, Unnumbered::Sabme, true, "<SABME C P>"),
        (C, Unnumbered::Disc, true, "<DISC C P>"),
        (R, Unnumbered::Dm, true, "<DM R F>"),
        (R, Unnumbered::Dm, false, "<DM R>"),
        (R, Unnumbered::Ua, true, "<UA R F>"),
        (C, Unnumbered::Xid, false, "<XID C>"),
        (R, Unnumbered::Frmr, false, "<FRMR R>"),
        (C, Unnumbered::Test, true, "<TEST C P>"),
        (C, Unnumbered::Snrm, true, "<SNRM C P>"),
        (C, Unnumbered::Snrme, false, "<SNRME C>"),
        (C, Unnumbered::Sarme, true, "<SARME C P>"),
    ];
    for (cr, kind, pf, expected) in cases {
        assert_eq!(
            line(&u(cr, kind, pf, &[])),
            format!("N7LEM>NJ7P: {expected}")
        );
    }
    // SARM shares the DM code: a built frame says SARM, its decoding DM.
    let sarm = u(C, Unnumbered::Sarm, true, &[]);
    assert_eq!(format(&sarm), "N7LEM>NJ7P: <SARM C P>");
    assert_eq!(
        format_raw(&sarm.encode(), Modulus::Mod8),
        "N7LEM>NJ7P: <DM C P>"
    );
    let ui = Frame::new(
        link(R),
        Modulus::Mod8,
        Control::U {
            kind: Unnumbered::Ui,
            pf: true,
        },
        Some(Pid::NetRom),
        b"\xFFNODE".to_vec(),
    )
    .unwrap();
    assert_eq!(line(&ui), "N7LEM>NJ7P: <UI R F> [CF] <0xFF>NODE");
    let test = u(C, Unnumbered::Test, true, b"ping 1\r\n");
    assert_eq!(line(&test), "N7LEM>NJ7P: <TEST C P> ping 1<CR><LF>");
}

#[test]
fn previous_version_c_bits() {
    use CommandResponse::{PreviousVersionOnes, PreviousVersionZeros};
    assert_eq!(
        line(&u(PreviousVersionZeros, Unnumbered::Dm, false, &[])),
        "N7LEM>NJ7P: <DM v1>"
    );
    assert_eq!(
        line(&u(PreviousVersionOnes, Unnumbered::Sabm, true, &[])),
        "N7LEM>NJ7P: <SABM v1 P/F>"
    );
    let rr = Frame::s(
        link(PreviousVersionZeros),
        Modulus::Mod8,
        Supervisory::Rr,
        4,
        true,
    )
    .unwrap();
    assert_eq!(line(&rr), "N7LEM>NJ7P: <RR v1 P/F R4>");
    let i = Frame::i(
        link(PreviousVersionOnes),
        Modulus::Mod8,
        1,
        2,
        false,
        Pid::NoLayer3,
        b"v1".to_vec(),
    )
    .unwrap();
    assert_eq!(line(&i), "N7LEM>NJ7P: <I v1 S1 R2> [F0] v1");
}

#[test]
fn non_printable_octets_are_escaped() {
    let info = vec![
        0x00, b'\r', b'\n', 0x1F, b' ', b'~', 0x7F, 0x80, 0xFF, b'<', b'>',
    ];
    let frame = Frame::ui(addr("CQ"), addr("N0CALL"), &[], Pid::NoLayer3, info).unwrap();
    assert_eq!(
        line(&frame),
        "N0CALL>CQ: <UI C> [F0] <0x00><CR><LF><0x1F> ~<0x7F><0x80><0xFF><>"
    );
    let all: Vec<u8> = (0..=255).collect();
    let frame = Frame::ui(addr("CQ"), addr("N0CALL"), &[], Pid::NoLayer3, all).unwrap();
    let text = line(&frame);
    assert!(!text.contains('\n') && !text.contains('\r'), "{text}");
    assert!(text.is_ascii());
}

#[test]
fn segment_headers() {
    let segment = |info: &[u8]| {
        let f = Frame::ui(
            addr("CQ"),
            addr("N0CALL"),
            &[],
            Pid::Segmentation,
            info.to_vec(),
        );
        line(&f.unwrap())
    };
    assert_eq!(
        segment(&[0x83, 0xF0, b'a', b'b']),
        "N0CALL>CQ: <UI C> [08 seg first rem=3 pid=F0] ab"
    );
    assert_eq!(
        segment(&[0x02, b'c', b'd']),
        "N0CALL>CQ: <UI C> [08 seg rem=2] cd"
    );
    assert_eq!(segment(&[0x00]), "N0CALL>CQ: <UI C> [08 seg rem=0]");
    assert_eq!(
        segment(&[]),
        "N0CALL>CQ: <UI C> [08 seg <undecodable: segment has no header octet>]"
    );
    assert_eq!(
        segment(&[0x85]),
        "N0CALL>CQ: <UI C> [08 seg <undecodable: first segment ends after its header octet; \
         the original PID is missing>] <0x85>"
    );
    let i = Frame::i(
        link(CommandResponse::Command),
        Modulus::Mod128,
        100,
        27,
        false,
        Pid::Segmentation,
        vec![0x83, 0xCC, 0x45, 0x00],
    )
    .unwrap();
    assert_eq!(
        line(&i),
        "N7LEM>NJ7P: <I C S100 R27> [08 seg first rem=3 pid=CC] E<0x00>"
    );
}

fn xid_frame(info: Vec<u8>) -> Frame {
    Frame::u(
        link(CommandResponse::Command),
        Modulus::Mod8,
        Unnumbered::Xid,
        true,
        info,
    )
    .unwrap()
}

#[test]
fn xid_parameters() {
    let params = XidParams {
        classes_of_procedures: Some(ClassesOfProcedures::ax25(false)),
        hdlc_optional_functions: Some(
            HdlcOptionalFunctions::AX25_MANDATORY
                .with(HdlcOptionalFunction::Rej)
                .with(HdlcOptionalFunction::Srej)
                .with(HdlcOptionalFunction::Modulo128),
        ),
        i_field_length_rx: Some(XidNumber::new(2048)),
        window_size_rx: Some(XidNumber::new(7)),
        ack_timer: Some(XidNumber::new(3000)),
        retries: Some(XidNumber::new(10)),
        ..XidParams::default()
    };
    assert_eq!(
        line(&xid_frame(params.encode().unwrap())),
        "N7LEM>NJ7P: <XID C P> XID: class=ABM,half-duplex \
         opt=REJ,SREJ,ext-addr,mod128,TEST,FCS16,sync-tx n1rx=256 krx=7 t1=3000ms n2=10"
    );

    let every = XidParams {
        classes_of_procedures: Some(
            ClassesOfProcedures::ax25(true).with(ProcedureClass::NrmPrimary),
        ),
        hdlc_optional_functions: HdlcOptionalFunctions::from_bits(0x00C0_0001),
        i_field_length_tx: Some(XidNumber::new(2049)),
        i_field_length_rx: Some(XidNumber::new(8)),
        window_size_tx: Some(XidNumber::new(127)),
        window_size_rx: Some(XidNumber::new(4)),
        ack_timer: Some(XidNumber::with_octets(300, 4).unwrap()),
        retries: Some(XidNumber::new(0)),
        unknown: vec![
            XidParameter {
                pi: 12,
                pv: vec![0x0A, 0x0B],
            },
            XidParameter {
                pi: 200,
                pv: vec![],
            },
        ],
    };
    assert_eq!(
        line(&xid_frame(every.encode().unwrap())),
        "N7LEM>NJ7P: <XID C P> XID: class=ABM,NRM-pri,full-duplex opt=bit0,segmenter,bit23 \
         n1tx=2049bits n1rx=1 ktx=127 krx=4 t1=300ms n2=0 pi12=0A0B pi200="
    );

    // Classes of Procedures with no bit, and with only an unassigned one.
    assert_eq!(
        line(&xid_frame(vec![
            0x82, 0x80, 0x00, 0x04, 0x02, 0x02, 0x00, 0x00
        ])),
        "N7LEM>NJ7P: <XID C P> XID: class=none"
    );
    assert_eq!(
        line(&xid_frame(vec![
            0x82, 0x80, 0x00, 0x04, 0x02, 0x02, 0x00, 0x80
        ])),
        "N7LEM>NJ7P: <XID C P> XID: class=bit15"
    );
    assert_eq!(
        line(&xid_frame(vec![
            0x82, 0x80, 0x00, 0x05, 0x03, 0x03, 0x00, 0x00, 0x00
        ])),
        "N7LEM>NJ7P: <XID C P> XID: opt=none"
    );

    assert_eq!(
        line(&xid_frame(vec![0x82, 0x80, 0x00, 0x00])),
        "N7LEM>NJ7P: <XID C P> XID: no parameters"
    );
}

#[test]
fn undecodable_xid_falls_back_to_hex() {
    assert_eq!(
        line(&xid_frame(vec![0x82, 0x80, 0x00, 0x05, 0x02])),
        "N7LEM>NJ7P: <XID C P> XID: <undecodable: XID group length is 5 octets \
         but 1 octets follow it> 82 80 00 05 02"
    );
    assert_eq!(
        line(&xid_frame(vec![0x01])),
        "N7LEM>NJ7P: <XID C P> XID: <undecodable: XID information field is 1 octets; \
         format indicator, group identifier and group length need 4> 01"
    );
    let bad_fi = xid_frame(vec![0x81, 1, 2, 3, 4, 5]);
    let cut = Monitor::with_options(&bad_fi, MonitorOptions { max_info: Some(3) });
    assert_eq!(
        cut.to_string(),
        "N7LEM>NJ7P: <XID C P> XID: <undecodable: XID format indicator is 0x81; \
         only 0x82 (general purpose) is defined> 81 01 02 ..."
    );
}

fn frmr_frame(modulus: Modulus, info: Vec<u8>) -> Frame {
    Frame::u(
        reply(CommandResponse::Response),
        modulus,
        Unnumbered::Frmr,
        true,
        info,
    )
    .unwrap()
}

#[test]
fn frmr_information() {
    let info = FrmrInfo {
        rejected_control: 0x3E,
        vs: 2,
        vr: 5,
        rejected_was_response: true,
        w: true,
        x: true,
        ..FrmrInfo::default()
    };
    let frame = frmr_frame(Modulus::Mod8, info.encode(Modulus::Mod8).unwrap());
    assert_eq!(
        line(&frame),
        "NJ7P>N7LEM: <FRMR R F> FRMR: ctl=0x3E V(S)=2 V(R)=5 C/R W X"
    );
    let info = FrmrInfo {
        rejected_control: 0x0B01,
        vs: 100,
        vr: 127,
        y: true,
        z: true,
        v: true,
        ..FrmrInfo::default()
    };
    let frame = frmr_frame(Modulus::Mod128, info.encode(Modulus::Mod128).unwrap());
    assert_eq!(
        line(&frame),
        "NJ7P>N7LEM: <FRMR R F> FRMR: ctl=0x010B V(S)=100 V(R)=127 Y Z V"
    );
    let plain = frmr_frame(Modulus::Mod8, vec![0x53, 0x00, 0x00]);
    assert_eq!(
        line(&plain),
        "NJ7P>N7LEM: <FRMR R F> FRMR: ctl=0x53 V(S)=0 V(R)=0"
    );
}

#[test]
fn undecodable_frmr_falls_back_to_hex() {
    assert_eq!(
        line(&frmr_frame(Modulus::Mod8, vec![0x3E, 0x01, 0xE0])),
        "NJ7P>N7LEM: <FRMR R F> FRMR: <undecodable: FRMR information field octet 2 is 0x01; \
         its reserved bits (mask 0x01) must be 0> 3E 01 E0"
    );
    assert_eq!(
        line(&frmr_frame(Modulus::Mod128, vec![0x3E, 0x00, 0x00, 0x00])),
        "NJ7P>N7LEM: <FRMR R F> FRMR: <undecodable: FRMR information field is 4 octets; \
         modulo 128 needs 5> 3E 00 00 00"
    );
}

#[test]
fn frmr_is_decoded_by_its_length_whatever_the_modulus() {
    // A modulo-8 station's FRMR (3 octets) in answer to a SABME, shown
    // while the link is modulo 128: SABME (0x6F) rejected, W.
    let mod8 = FrmrInfo {
        rejected_control: 0x6F,
        w: true,
        ..FrmrInfo::default()
    };
    let frame = frmr_frame(Modulus::Mod128, mod8.encode(Modulus::Mod8).unwrap());
    let expected = "NJ7P>N7LEM: <FRMR R F> FRMR: ctl=0x6F V(S)=0 V(R)=0 W";
    assert_eq!(line(&frame), expected);
    assert_eq!(format_raw(&frame.encode(), Modulus::Mod128), expected);
    // And a 5-octet field read while modulo 8 is in force.
    let mod128 = FrmrInfo {
        rejected_control: 0x0B01,
        vs: 100,
        vr: 127,
        ..FrmrInfo::default()
    };
    let frame = frmr_frame(Modulus::Mod8, mod128.encode(Modulus::Mod128).unwrap());
    assert_eq!(
        format_raw(&frame.encode(), Modulus::Mod8),
        "NJ7P>N7LEM: <FRMR R F> FRMR: ctl=0x010B V(S)=100 V(R)=127"
    );
}

#[test]
fn max_info_cuts_long_fields() {
    let frame = Frame::ui(
        addr("CQ"),
        addr("N0CALL"),
        &[],
        Pid::NoLayer3,
        b"abc\rdef".to_vec(),
    )
    .unwrap();
    let with = |max| Monitor::with_options(&frame, MonitorOptions { max_info: max }).to_string();
    assert_eq!(with(None), "N0CALL>CQ: <UI C> [F0] abc<CR>def");
    assert_eq!(with(Some(7)), "N0CALL>CQ: <UI C> [F0] abc<CR>def");
    assert_eq!(with(Some(100)), "N0CALL>CQ: <UI C> [F0] abc<CR>def");
    assert_eq!(with(Some(4)), "N0CALL>CQ: <UI C> [F0] abc<CR>...");
    assert_eq!(with(Some(0)), "N0CALL>CQ: <UI C> [F0] ...");
    assert_eq!(MonitorOptions::default().max_info, None);
}

#[test]
fn undecodable_input() {
    assert_eq!(
        format_raw(&[], Modulus::Mod8),
        "<undecodable: address field truncated: destination address needs 7 octets \
         but only 0 remain>"
    );
    let no_source = [0x9C, 0x94, 0x6E, 0xA0, 0x40, 0x40, 0xE1, 0x3F];
    assert_eq!(
        format_raw(&no_source, Modulus::Mod8),
        "<undecodable: address field ends after the destination address; \
         a source address is required> 9C 94 6E A0 40 40 E1 3F"
    );
    assert_eq!(
        format_raw_with(
            &no_source,
            Modulus::Mod8,
            MonitorOptions { max_info: Some(2) }
        ),
        "<undecodable: address field ends after the destination address; \
         a source address is required> 9C 94 ..."
    );
    // A valid address field, then a modulo-128 I frame cut after one octet.
    let mut bytes = link(CommandResponse::Command).dest().encode(false).to_vec();
    bytes.extend_from_slice(&link(CommandResponse::Command).source().encode(true));
    bytes.push(0x00);
    assert_eq!(
        format_raw(&bytes, Modulus::Mod128),
        format!(
            "<undecodable: modulo-128 I frame control field needs 2 octets; only 1 present> {}",
            hex(&bytes)
        )
    );
    // The same octets are a fine I frame... without PID in modulo 8.
    assert!(format_raw(&bytes, Modulus::Mod8)
        .starts_with("<undecodable: I frame ends after the control field"));
    // An RR carrying information.
    bytes.pop();
    bytes.extend_from_slice(&[0x01, b'x']);
    assert_eq!(
        format_raw(&bytes, Modulus::Mod8),
        format!(
            "<undecodable: RR frame carries 1 octets of information; only I, UI, XID, \
             TEST and FRMR frames may> {}",
            hex(&bytes)
        )
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn format_is_the_module_function() {
    let frame = u(CommandResponse::Response, Unnumbered::Ua, true, &[]);
    assert_eq!(monitor::format(&frame), "N7LEM>NJ7P: <UA R F>");
}

/// The example lines of the module documentation, in its order.
#[test]
fn module_doc_examples() {
    use CommandResponse::{Command, PreviousVersionZeros, Response};
    let rr = Frame::s(reply(Response), Modulus::Mod8, Supervisory::Rr, 3, true).unwrap();
    let sabme = Frame::u(
        link(Command),
        Modulus::Mod8,
        Unnumbered::Sabme,
        true,
        vec![],
    );
    let ua = Frame::u(reply(Response), Modulus::Mod8, Unnumbered::Ua, true, vec![]);
    let dm = Frame::u(
        link(PreviousVersionZeros),
        Modulus::Mod8,
        Unnumbered::Dm,
        false,
        vec![],
    );
    assert_eq!(line(&rr), "NJ7P>N7LEM: <RR R F R3>");
    assert_eq!(line(&sabme.unwrap()), "N7LEM>NJ7P: <SABME C P>");
    assert_eq!(line(&ua.unwrap()), "NJ7P>N7LEM: <UA R F>");
    assert_eq!(line(&dm.unwrap()), "N7LEM>NJ7P: <DM v1>");
    // The other examples are checked by the tests above: ui_frame_tnc2_line,
    // i_frames_modulo_8_and_128, segment_headers, xid_parameters,
    // frmr_information and undecodable_input.
}

/// A monitor that is not a party to the link learns its modulus from the
/// set-up frames: after SABME, I and S frames of both directions decode
/// modulo 128; after SABM, modulo 8 again; other pairs stay modulo 8.
#[test]
fn link_moduli_follow_sabme_and_sabm() {
    use CommandResponse::{Command, Response};
    let mut moduli = monitor::LinkModuli::new();
    let sabme = Frame::u(
        link(Command),
        Modulus::Mod8,
        Unnumbered::Sabme,
        true,
        vec![],
    )
    .unwrap();
    let i128 = Frame::i(
        link(Command),
        Modulus::Mod128,
        100,
        5,
        false,
        Pid::NoLayer3,
        b"x".to_vec(),
    )
    .unwrap();
    let rr128 = Frame::s(
        reply(Response),
        Modulus::Mod128,
        Supervisory::Rr,
        101,
        false,
    )
    .unwrap();
    assert_eq!(moduli.observe(&sabme.encode()), Modulus::Mod128);
    assert_eq!(moduli.observe(&i128.encode()), Modulus::Mod128);
    assert_eq!(moduli.observe(&rr128.encode()), Modulus::Mod128);
    let other = AddressField::new(addr("N0A"), addr("N0B"), &[], Command).unwrap();
    let rr8 = Frame::s(other, Modulus::Mod8, Supervisory::Rr, 3, false).unwrap();
    assert_eq!(moduli.observe(&rr8.encode()), Modulus::Mod8);
    let sabm = Frame::u(
        reply(Command),
        Modulus::Mod8,
        Unnumbered::Sabm,
        true,
        vec![],
    )
    .unwrap();
    assert_eq!(moduli.observe(&sabm.encode()), Modulus::Mod8);
    assert_eq!(moduli.observe(&rr128.encode()), Modulus::Mod8);
    assert_eq!(moduli.observe(b"\x01"), Modulus::Mod8, "garbage");
}

fn srej(modulus: Modulus, nr: u8, f: bool, info: Vec<u8>) -> Frame {
    let control = Control::S {
        kind: Supervisory::Srej,
        nr,
        pf: f,
    };
    Frame::new(
        reply(CommandResponse::Response),
        modulus,
        control,
        None,
        info,
    )
    .unwrap()
}

/// A multi-SREJ's information field is shown as the further N(R)s it asks
/// for, after the control field's (AX.25 v2.2 4.3.2.4), in both moduli.
#[test]
fn multi_srej_lists_every_nr() {
    use SrejRequest::{Single, Span};
    let further =
        |requests: Vec<SrejRequest>, modulus| MultiSrejInfo { requests }.encode(modulus).unwrap();
    // The frame of the issue: 51 and 58 are octets 0x66 0x74, once shown
    // as the text "ft".
    let info = further(vec![Single(51), Single(58)], Modulus::Mod128);
    assert_eq!(info, b"ft");
    assert_eq!(
        line(&srej(Modulus::Mod128, 50, true, info)),
        "NJ7P>N7LEM: <SREJ R F R50,51,58>"
    );
    let info = further(
        vec![Single(4), Span { first: 6, last: 9 }, Single(127)],
        Modulus::Mod128,
    );
    assert_eq!(
        line(&srej(Modulus::Mod128, 2, false, info)),
        "NJ7P>N7LEM: <SREJ R R2,4,6-9,127>"
    );
    let info = further(vec![Single(3), Single(5)], Modulus::Mod8);
    assert_eq!(
        line(&srej(Modulus::Mod8, 1, false, info)),
        "NJ7P>N7LEM: <SREJ R R1,3,5>"
    );
    // A plain SREJ is as before.
    assert_eq!(
        line(&srej(Modulus::Mod128, 2, false, vec![])),
        "NJ7P>N7LEM: <SREJ R R2>"
    );
}

/// An SREJ whose information field is not a multi-SREJ one does not
/// decode as a frame: it is shown undecodable, with its octets.
#[test]
fn undecodable_multi_srej_is_an_undecodable_frame() {
    // A span's first octet without its second; a modulo-8 octet with its
    // reserved bits set.
    let cases = [
        (Modulus::Mod128, vec![0x08, 0x0D]),
        (Modulus::Mod8, vec![0x61]),
    ];
    for (modulus, info) in cases {
        let mut bytes = srej(modulus, 2, false, vec![]).encode();
        bytes.extend(&info);
        let error = Frame::decode(&bytes, modulus).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("SREJ information field octet"),
            "{error}"
        );
        assert_eq!(
            format_raw(&bytes, modulus),
            format!("<undecodable: {error}> {}", hex(&bytes))
        );
    }
}
