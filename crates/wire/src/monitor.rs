//! A one-line, TNC-style rendering of an AX.25 frame, as printed by
//! `linklab decode` and by `--monitor` in the real-time tools.
//!
//! The layout follows the "TNC2" monitor convention of packet radio TNCs
//! and Dire Wolf, extended with the control-field details of AX.25 v2.2
//! 4.3 (frame name, command/response, P/F, sequence numbers).
//!
//! # Format
//!
//! The format is a contract: scripts may parse it. One frame is always one
//! line, never containing `\n` or `\r`:
//!
//! ```text
//! SRC>DEST[,DIGI[*]]...: <NAME CR[ PF][ S<ns>][ R<nr>]>[ [PID]][ INFO]
//! ```
//!
//! 1. **Addresses** (AX.25 v2.2 3.12): the source, `>`, the destination,
//!    then `,` and each digipeater in path order. An address is `CALL` for
//!    SSID 0, else `CALL-SSID`. A `*` follows the *last* digipeater whose H
//!    (has-been-repeated) bit is set (3.12.4), and no other; no `*` if no H
//!    bit is set.
//! 2. `: ` then the **control field** in angle brackets, fields separated by
//!    one space:
//!    - the frame name: `I`, `RR`, `RNR`, `REJ`, `SREJ`, `SABM`, `SABME`,
//!      `DISC`, `DM`, `UA`, `FRMR`, `UI`, `XID`, `TEST`, `SNRM`, `SNRME`,
//!      `SARM`, `SARME` ([`Control::name`]; a decoded frame never shows
//!      `SARM`, as [`Frame::decode`] reads code 0x0F as `DM`);
//!    - the command/response state from the two C bits (6.1.2): `C`
//!      (command), `R` (response), or `v1` for either previous-version
//!      combination (both 0 or both 1);
//!    - only if the P/F bit is set: `P` on a command, `F` on a response, and
//!      `P/F` on a `v1` frame, whose C bits cannot say which;
//!    - I frames: `S<N(S)> R<N(R)>` in decimal; S frames: `R<N(R)>`;
//!    - a multi-SREJ (an SREJ with an information field, 4.3.2.4): after
//!      the N(R) of its control field, the further N(R)s its information
//!      field asks for, in the frame's order, each after a comma, a span
//!      (modulo 128 only) as `<first>-<last>`: `<SREJ R F R50,51,58>`,
//!      `<SREJ R R2,4-9>`. The information field is not shown otherwise
//!      (a frame whose field does not decode is undecodable, below).
//!
//!    The modulus (8 or 128) is not printed; sequence numbers simply run to
//!    127 on a modulo-128 link.
//! 3. **PID**, for I and UI frames only (3.4): ` [XX]`, two upper-case hex
//!    digits. PID 0x08 (segment, 6.6) also shows the segment header:
//!    ` [08 seg first rem=3 pid=F0]` for a first segment (`pid=` is the
//!    original PID), ` [08 seg rem=2]` for a later one, and
//!    ` [08 seg <undecodable: ERROR>]` if the header is missing; the segment
//!    data after the header is then the information shown.
//! 4. **Information**, only if the field is not empty: a space, then
//!    - XID frames (4.3.3.7): `XID: ` and the decoded parameters in PI
//!      order, separated by spaces: `class=` (Classes of Procedures: `ABM`,
//!      `NRM-pri`, `NRM-sec`, `ARM-pri`, `ARM-sec`, `half-duplex`,
//!      `full-duplex`, unassigned bits as `bitN`; `none` if no bit is set),
//!      `opt=` (HDLC Optional Functions: `REJ`, `SREJ`, `UI`, `SIM/RIM`,
//!      `UP`, `basic-addr`, `ext-addr`, `del-I-rsp`, `del-I-cmd`, `mod8`,
//!      `mod128`, `RSET`, `TEST`, `RD`, `FCS16`, `FCS32`, `sync-tx`,
//!      `start-stop-tx`, `start-stop-flow`, `start-stop-transp`,
//!      `multi-SREJ`, `segmenter`, unassigned bits as `bitN`; `none` if no
//!      bit is set), `n1tx=` and `n1rx=` (I field lengths in octets, or
//!      `<bits>bits` if the value in bits is not a multiple of 8), `ktx=`,
//!      `krx=` (window sizes), `t1=<ms>ms`, `n2=`, and any other parameter
//!      as `pi<PI>=<PV in hex, no spaces>`. A parameter field with no
//!      parameters shows `XID: no parameters`;
//!    - FRMR frames (4.3.3.9): `FRMR: ctl=0x<rejected control field, its
//!      octets in transmission order> V(S)=<n> V(R)=<n>` followed by `C/R`,
//!      `W`, `X`, `Y`, `Z`, `V` for each of those bits that is set. The
//!      field is read by its length, 3 octets as modulo 8 and 5 as modulo
//!      128, whatever the modulus in force: a modulo-8 station answers a
//!      SABME with a 3-octet FRMR;
//!    - if XID or FRMR decoding fails: `XID: ` or `FRMR: `, then
//!      `<undecodable: ERROR> ` and the octets in hex as below;
//!    - any other frame (I, UI, TEST): the octets as text. 0x20-0x7E are
//!      printed as themselves, CR as `<CR>`, LF as `<LF>`, every other octet
//!      as `<0xNN>`.
//!
//! Hex is upper case, two digits an octet, octets separated by one space.
//! With [`MonitorOptions::max_info`] set to `Some(n)`, text and hex
//! renderings of information (and of undecodable frames) show at most `n`
//! octets, followed by `...` if octets were left out; decoded XID and FRMR
//! renderings are always complete.
//!
//! [`format_raw`] renders octets that do not decode as a frame as
//! `<undecodable: ERROR> ` followed by all octets in hex (just
//! `<undecodable: ERROR>` if there are none). Control characters in error
//! messages are written as `<0xNN>`, so the result stays on one line.
//!
//! # Examples
//!
//! ```text
//! N0CALL-1>APRS,WIDE1-1*,WIDE2-1: <UI C> [F0] !4903.50N/07201.75W-Test<CR>
//! N7LEM>NJ7P: <I C P S7 R1> [F0] hello
//! NJ7P>N7LEM: <RR R F R3>
//! NJ7P>N7LEM: <SREJ R F R50,51,58>
//! N7LEM>NJ7P: <SABME C P>
//! NJ7P>N7LEM: <UA R F>
//! N7LEM>NJ7P: <I C S100 R27> [08 seg first rem=3 pid=CC] E<0x00>
//! N7LEM>NJ7P: <XID C P> XID: class=ABM,half-duplex opt=REJ,SREJ,ext-addr,mod128,TEST,FCS16,sync-tx n1rx=256 krx=7 t1=3000ms n2=10
//! NJ7P>N7LEM: <FRMR R F> FRMR: ctl=0x3E V(S)=2 V(R)=5 C/R W X
//! N7LEM>NJ7P: <DM v1>
//! <undecodable: address field ends after the destination address; a source address is required> 9C 94 6E A0 40 40 E1 3F
//! ```
//!
//! ```
//! use linklab_wire::ax25::{Frame, Pid};
//! use linklab_wire::monitor::{self, Monitor, MonitorOptions};
//!
//! let frame = Frame::ui(
//!     "APRS".parse().unwrap(),
//!     "N0CALL-1".parse().unwrap(),
//!     &[],
//!     Pid::NoLayer3,
//!     b"hello\r".to_vec(),
//! )
//! .unwrap();
//! assert_eq!(monitor::format(&frame), "N0CALL-1>APRS: <UI C> [F0] hello<CR>");
//! let short = Monitor::with_options(&frame, MonitorOptions { max_info: Some(2) });
//! assert_eq!(short.to_string(), "N0CALL-1>APRS: <UI C> [F0] he...");
//! ```

use std::fmt;

use crate::ax25::{
    ClassesOfProcedures, CommandResponse, Frame, FrmrInfo, HdlcOptionalFunction,
    HdlcOptionalFunctions, MultiSrejInfo, Pid, ProcedureClass, SegmentHeader, SrejRequest,
    XidNumber, XidParams,
};
use crate::control::{Control, Modulus, Unnumbered};

/// Options of the monitor rendering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MonitorOptions {
    /// Most information-field octets shown as text or hex; `...` marks the
    /// cut. `None` (the default) shows everything.
    pub max_info: Option<usize>,
}

/// A frame with rendering options; its [`Display`](fmt::Display) is the
/// one-line monitor format described in the [module documentation](self).
#[derive(Debug, Clone, Copy)]
pub struct Monitor<'a> {
    frame: &'a Frame,
    options: MonitorOptions,
}

impl<'a> Monitor<'a> {
    /// Renders `frame` with the default options (nothing cut).
    pub fn new(frame: &'a Frame) -> Self {
        Self::with_options(frame, MonitorOptions::default())
    }

    /// Renders `frame` with `options`.
    pub fn with_options(frame: &'a Frame, options: MonitorOptions) -> Self {
        Monitor { frame, options }
    }
}

/// The monitor line of `frame`, with nothing cut.
pub fn format(frame: &Frame) -> String {
    Monitor::new(frame).to_string()
}

/// Decodes `bytes` (an AX.25 frame without flags and FCS) under `modulus`
/// and renders it; if it does not decode, `<undecodable: ERROR>` and the
/// octets in hex. Never panics; the result is always one line.
pub fn format_raw(bytes: &[u8], modulus: Modulus) -> String {
    format_raw_with(bytes, modulus, MonitorOptions::default())
}

/// The modulus of each link seen in a stream of frames, for a monitor
/// that is not a party to the links (a channel, a capture): SABME
/// between two stations makes their frames modulo 128, SABM makes them
/// modulo 8 again (AX.25 v2.2 4.3.3.1 and 4.3.3.2); links never seen set
/// up are taken as modulo 8. The control octet of a U frame is one octet
/// in both moduli, so the set-up frames themselves always decode.
#[derive(Debug, Clone, Default)]
pub struct LinkModuli {
    /// Station pairs (by callsign and SSID, lower first) on modulo 128.
    mod128: std::collections::BTreeSet<([u8; 7], [u8; 7])>,
}

impl LinkModuli {
    /// No links known.
    pub fn new() -> LinkModuli {
        LinkModuli::default()
    }

    /// Learns from `bytes` (a frame without flags or FCS) and returns the
    /// modulus to decode it with.
    pub fn observe(&mut self, bytes: &[u8]) -> Modulus {
        let Ok((field, len)) = crate::ax25::AddressField::decode(bytes) else {
            return Modulus::Mod8;
        };
        let key = |a: &crate::ax25::Address| {
            let mut k = [0u8; 7];
            let callsign = a.callsign();
            let call = callsign.as_str().as_bytes();
            let n = call.len().min(6);
            k[..n].copy_from_slice(&call[..n]);
            k[6] = a.ssid();
            k
        };
        let (a, b) = (key(field.source()), key(field.dest()));
        let pair = if a <= b { (a, b) } else { (b, a) };
        let control = bytes.get(len).copied().unwrap_or(0);
        if control & 0x03 == 0x03 {
            match control & !0x10 {
                0x6F => {
                    self.mod128.insert(pair);
                }
                0x2F => {
                    self.mod128.remove(&pair);
                }
                _ => {}
            }
        }
        if self.mod128.contains(&pair) {
            Modulus::Mod128
        } else {
            Modulus::Mod8
        }
    }
}

/// [`format_raw`] with `options`; `max_info` also limits the hex dump of
/// an undecodable frame.
pub fn format_raw_with(bytes: &[u8], modulus: Modulus, options: MonitorOptions) -> String {
    match Frame::decode(bytes, modulus) {
        Ok(frame) => Monitor::with_options(&frame, options).to_string(),
        Err(error) => Undecodable {
            error: &error,
            bytes,
            max: options.max_info,
        }
        .to_string(),
    }
}

impl fmt::Display for Monitor<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let frame = self.frame;
        write_addresses(f, frame)?;
        f.write_str(": ")?;
        // A decoded SREJ's information field is a valid multi-SREJ one.
        let further = frame.multi_srej();
        write_control(
            f,
            frame.control(),
            frame.command_response(),
            further.as_ref(),
        )?;
        if further.is_some() {
            return Ok(());
        }
        let mut info = frame.info();
        if let Some(pid) = frame.pid() {
            info = write_pid(f, pid, info)?;
        }
        if info.is_empty() {
            return Ok(());
        }
        f.write_str(" ")?;
        let max = self.options.max_info;
        match frame.control() {
            Control::U {
                kind: Unnumbered::Xid,
                ..
            } => {
                f.write_str("XID: ")?;
                match XidParams::decode(info) {
                    Ok(params) => write_xid(f, &params),
                    Err(error) => write_undecodable(f, &error, info, max),
                }
            }
            Control::U {
                kind: Unnumbered::Frmr,
                ..
            } => {
                f.write_str("FRMR: ")?;
                let modulus = frmr_modulus(info.len()).unwrap_or(frame.modulus());
                match FrmrInfo::decode(info, modulus) {
                    Ok(frmr) => write!(f, "{}", frmr.display(modulus)),
                    Err(error) => write_undecodable(f, &error, info, max),
                }
            }
            _ => write_text(f, info, max),
        }
    }
}

/// The modulus an FRMR information field of `len` octets is encoded in,
/// if any.
fn frmr_modulus(len: usize) -> Option<Modulus> {
    [Modulus::Mod8, Modulus::Mod128]
        .into_iter()
        .find(|&m| FrmrInfo::encoded_len(m) == len)
}

/// `SRC>DEST,DIGI,...` with a `*` after the last repeated digipeater
/// (AX.25 v2.2 3.12.4).
fn write_addresses(f: &mut fmt::Formatter<'_>, frame: &Frame) -> fmt::Result {
    write!(f, "{}>{}", frame.source(), frame.dest())?;
    let digipeaters = frame.digipeaters();
    let starred = digipeaters.iter().rposition(|d| d.c_or_h());
    for (i, digi) in digipeaters.iter().enumerate() {
        write!(f, ",{digi}")?;
        if starred == Some(i) {
            f.write_str("*")?;
        }
    }
    Ok(())
}

/// `<NAME CR [P|F|P/F] [S<ns>] [R<nr>[,<nr>|,<first>-<last>]...]>`
/// (AX.25 v2.2 4.3, 6.1.2), with the `further` N(R)s of a multi-SREJ
/// (4.3.2.4).
fn write_control(
    f: &mut fmt::Formatter<'_>,
    control: Control,
    cr: CommandResponse,
    further: Option<&MultiSrejInfo>,
) -> fmt::Result {
    let (cr, pf) = match cr {
        CommandResponse::Command => ("C", "P"),
        CommandResponse::Response => ("R", "F"),
        CommandResponse::PreviousVersionZeros | CommandResponse::PreviousVersionOnes => {
            ("v1", "P/F")
        }
    };
    write!(f, "<{} {cr}", control.name())?;
    if control.pf() {
        write!(f, " {pf}")?;
    }
    if let Some(ns) = control.ns() {
        write!(f, " S{ns}")?;
    }
    if let Some(nr) = control.nr() {
        write!(f, " R{nr}")?;
    }
    for request in further.map_or(&[][..], |further| &further.requests) {
        match request {
            SrejRequest::Single(nr) => write!(f, ",{nr}")?,
            SrejRequest::Span { first, last } => write!(f, ",{first}-{last}")?,
        }
    }
    f.write_str(">")
}

/// ` [XX]`, or the segment header for PID 0x08 (AX.25 v2.2 3.4, 6.6);
/// returns the information still to show.
fn write_pid<'i>(
    f: &mut fmt::Formatter<'_>,
    pid: Pid,
    info: &'i [u8],
) -> Result<&'i [u8], fmt::Error> {
    write!(f, " [{:02X}", u8::from(pid))?;
    let rest = if pid == Pid::Segmentation {
        f.write_str(" seg")?;
        match SegmentHeader::decode(info) {
            Ok((header, data)) => {
                if header.is_first() {
                    f.write_str(" first")?;
                }
                write!(f, " rem={}", header.remaining())?;
                if let Some(original) = header.original_pid() {
                    write!(f, " pid={:02X}", u8::from(original))?;
                }
                data
            }
            Err(error) => {
                f.write_str(" <undecodable: ")?;
                write_one_line(f, &error.to_string())?;
                f.write_str(">")?;
                info
            }
        }
    } else {
        info
    };
    f.write_str("]")?;
    Ok(rest)
}

/// The first `max` octets of `bytes` (all if `None`) and whether some were
/// left out.
fn limited(bytes: &[u8], max: Option<usize>) -> (&[u8], bool) {
    match max.and_then(|n| bytes.get(..n)) {
        Some(shown) if shown.len() < bytes.len() => (shown, true),
        _ => (bytes, false),
    }
}

/// Octets as text: printable ASCII as is, `<CR>`, `<LF>`, else `<0xNN>`.
fn write_text(f: &mut fmt::Formatter<'_>, bytes: &[u8], max: Option<usize>) -> fmt::Result {
    let (shown, cut) = limited(bytes, max);
    for &octet in shown {
        match octet {
            0x20..=0x7E => fmt::Write::write_char(f, char::from(octet))?,
            b'\r' => f.write_str("<CR>")?,
            b'\n' => f.write_str("<LF>")?,
            other => write!(f, "<0x{other:02X}>")?,
        }
    }
    if cut {
        f.write_str("...")?;
    }
    Ok(())
}

/// Octets in upper-case hex separated by spaces.
fn write_hex(f: &mut fmt::Formatter<'_>, bytes: &[u8], max: Option<usize>) -> fmt::Result {
    let (shown, cut) = limited(bytes, max);
    for (i, octet) in shown.iter().enumerate() {
        if i > 0 {
            f.write_str(" ")?;
        }
        write!(f, "{octet:02X}")?;
    }
    if cut {
        f.write_str(if shown.is_empty() { "..." } else { " ..." })?;
    }
    Ok(())
}

/// `text` with control characters (which include CR and LF) as `<0xNN>`.
fn write_one_line(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    for ch in text.chars() {
        if ch.is_control() {
            write!(f, "<0x{:02X}>", u32::from(ch))?;
        } else {
            fmt::Write::write_char(f, ch)?;
        }
    }
    Ok(())
}

/// `<undecodable: ERROR>` then, if there are any, a space and the octets in hex.
fn write_undecodable(
    f: &mut fmt::Formatter<'_>,
    error: &dyn std::error::Error,
    bytes: &[u8],
    max: Option<usize>,
) -> fmt::Result {
    f.write_str("<undecodable: ")?;
    write_one_line(f, &error.to_string())?;
    f.write_str(">")?;
    if bytes.is_empty() {
        return Ok(());
    }
    f.write_str(" ")?;
    write_hex(f, bytes, max)
}

/// Octets that failed to decode as a frame, for [`format_raw_with`].
struct Undecodable<'a> {
    error: &'a dyn std::error::Error,
    bytes: &'a [u8],
    max: Option<usize>,
}

impl fmt::Display for Undecodable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_undecodable(f, self.error, self.bytes, self.max)
    }
}

/// Names of the Classes of Procedures bits (AX.25 v2.2 fig. 4.5).
const CLASS_NAMES: [(ProcedureClass, &str); 7] = [
    (ProcedureClass::BalancedAbm, "ABM"),
    (ProcedureClass::NrmPrimary, "NRM-pri"),
    (ProcedureClass::NrmSecondary, "NRM-sec"),
    (ProcedureClass::ArmPrimary, "ARM-pri"),
    (ProcedureClass::ArmSecondary, "ARM-sec"),
    (ProcedureClass::HalfDuplex, "half-duplex"),
    (ProcedureClass::FullDuplex, "full-duplex"),
];

/// Names of the HDLC Optional Functions bits (AX.25 v2.2 fig. 4.5).
const FUNCTION_NAMES: [(HdlcOptionalFunction, &str); 22] = [
    (HdlcOptionalFunction::Rej, "REJ"),
    (HdlcOptionalFunction::Srej, "SREJ"),
    (HdlcOptionalFunction::Ui, "UI"),
    (HdlcOptionalFunction::SimRim, "SIM/RIM"),
    (HdlcOptionalFunction::Up, "UP"),
    (HdlcOptionalFunction::BasicAddress, "basic-addr"),
    (HdlcOptionalFunction::ExtendedAddress, "ext-addr"),
    (HdlcOptionalFunction::DeleteIResponse, "del-I-rsp"),
    (HdlcOptionalFunction::DeleteICommand, "del-I-cmd"),
    (HdlcOptionalFunction::Modulo8, "mod8"),
    (HdlcOptionalFunction::Modulo128, "mod128"),
    (HdlcOptionalFunction::Rset, "RSET"),
    (HdlcOptionalFunction::Test, "TEST"),
    (HdlcOptionalFunction::Rd, "RD"),
    (HdlcOptionalFunction::Fcs16, "FCS16"),
    (HdlcOptionalFunction::Fcs32, "FCS32"),
    (HdlcOptionalFunction::SynchronousTx, "sync-tx"),
    (HdlcOptionalFunction::StartStopTx, "start-stop-tx"),
    (
        HdlcOptionalFunction::StartStopFlowControl,
        "start-stop-flow",
    ),
    (
        HdlcOptionalFunction::StartStopTransparency,
        "start-stop-transp",
    ),
    (HdlcOptionalFunction::MultiSrej, "multi-SREJ"),
    (HdlcOptionalFunction::Segmenter, "segmenter"),
];

/// A comma-separated list of the names of the set bits of a bit-field
/// parameter in bit order, unnamed bits as `bitN`; `none` if no bit is set.
fn write_bit_names(
    f: &mut fmt::Formatter<'_>,
    bits: u32,
    name_of: impl Fn(u32) -> Option<&'static str>,
) -> fmt::Result {
    if bits == 0 {
        return f.write_str("none");
    }
    let set = (0..u32::BITS).filter(|bit| bits & (1 << bit) != 0);
    for (i, bit) in set.enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        match name_of(bit) {
            Some(name) => f.write_str(name)?,
            None => write!(f, "bit{bit}")?,
        }
    }
    Ok(())
}

/// The decoded XID parameters (AX.25 v2.2 4.3.3.7, fig. 4.5), PI order.
fn write_xid(f: &mut fmt::Formatter<'_>, params: &XidParams) -> fmt::Result {
    let mut fields = Fields::default();
    if let Some(classes) = params.classes_of_procedures {
        fields.next(f, "class=")?;
        write_classes(f, classes)?;
    }
    if let Some(functions) = params.hdlc_optional_functions {
        fields.next(f, "opt=")?;
        write_functions(f, functions)?;
    }
    let lengths = [
        ("n1tx=", params.i_field_length_tx),
        ("n1rx=", params.i_field_length_rx),
    ];
    for (label, bits) in lengths {
        if let Some(bits) = bits.map(XidNumber::value) {
            fields.next(f, label)?;
            if bits % 8 == 0 {
                write!(f, "{}", bits / 8)?;
            } else {
                write!(f, "{bits}bits")?;
            }
        }
    }
    let numbers = [
        ("ktx=", params.window_size_tx, ""),
        ("krx=", params.window_size_rx, ""),
        ("t1=", params.ack_timer, "ms"),
        ("n2=", params.retries, ""),
    ];
    for (label, number, unit) in numbers {
        if let Some(number) = number {
            fields.next(f, label)?;
            write!(f, "{}{unit}", number.value())?;
        }
    }
    for parameter in &params.unknown {
        fields.next(f, "pi")?;
        write!(f, "{}=", parameter.pi)?;
        for octet in &parameter.pv {
            write!(f, "{octet:02X}")?;
        }
    }
    if fields.written == 0 {
        f.write_str("no parameters")?;
    }
    Ok(())
}

/// The Classes of Procedures bits by name (fig. 4.5).
fn write_classes(f: &mut fmt::Formatter<'_>, classes: ClassesOfProcedures) -> fmt::Result {
    let name_of = |bit| {
        CLASS_NAMES
            .iter()
            .find(|&&(class, _)| class as u32 == bit)
            .map(|&(_, name)| name)
    };
    write_bit_names(f, u32::from(classes.bits()), name_of)
}

/// The HDLC Optional Functions bits by name (fig. 4.5).
fn write_functions(f: &mut fmt::Formatter<'_>, functions: HdlcOptionalFunctions) -> fmt::Result {
    let name_of = |bit| {
        FUNCTION_NAMES
            .iter()
            .find(|&&(function, _)| function as u32 == bit)
            .map(|&(_, name)| name)
    };
    write_bit_names(f, functions.bits(), name_of)
}

/// Space-separated `label=value` fields.
#[derive(Default)]
struct Fields {
    written: usize,
}

impl Fields {
    /// Writes the separator (if not the first field) and `label`.
    fn next(&mut self, f: &mut fmt::Formatter<'_>, label: &str) -> fmt::Result {
        if self.written > 0 {
            f.write_str(" ")?;
        }
        self.written += 1;
        f.write_str(label)
    }
}
