//! `linklab decode` and `linklab encode`: AX.25 frames to and from hex,
//! KISS and pcap, shown in the monitor format of [`linklab_wire::monitor`].

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context};

use crate::usage::usage;
use clap::{ArgGroup, Args, ValueEnum};
use linklab_wire::ax25::{Address, AddressField, CommandResponse, Frame, Pid};
use linklab_wire::control::{Modulus, Supervisory, Unnumbered};
use linklab_wire::hdlc::{self, Deframer, DeframerConfig, LineCode};
use linklab_wire::pcap::{LinkType, PcapReader, PcapWriter};
use linklab_wire::{kiss, monitor};

/// Longest KISS frame the decoder accepts: an AX.25 frame with the largest
/// v2.2 N1 (2048), a full address field and a two-octet control field.
const KISS_MAX_FRAME: usize = 2048 + 72 + 4;

/// Flags sent ahead of a frame in `encode --format hdlc`.
const HDLC_PREAMBLE_FLAGS: usize = 4;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// Classic pcap with link type 3 (AX.25) or 202 (AX.25 with KISS header).
    Pcap,
    /// A KISS byte stream, as from a TNC's serial port.
    Kiss,
    /// One frame per line in hexadecimal (spaces and colons allowed, `#` comments).
    Hex,
    /// A raw HDLC bit stream as from a modem: flags, stuffed bits and FCS,
    /// NRZI-coded unless --nrz, packed first bit in the low-order bit.
    /// Never detected: name it.
    Hdlc,
}

#[derive(Args)]
pub struct DecodeArgs {
    /// Input file; standard input when absent or `-`.
    file: Option<PathBuf>,
    /// Input format; detected from the content when absent.
    #[arg(long, value_enum)]
    format: Option<InputFormat>,
    /// Decode I and S control fields as modulo 128 (SABME links).
    #[arg(long)]
    mod128: bool,
    /// With --format hdlc: the bits are not NRZI-coded.
    #[arg(long)]
    nrz: bool,
}

pub fn decode(args: DecodeArgs) -> anyhow::Result<()> {
    let (mut input, name) =
        crate::input::open(args.file.as_deref()).map_err(crate::usage::input_file)?;
    let modulus = crate::modulus(args.mod128);
    let read_err = || format!("cannot read {name}");
    // Enough of the start to tell the format, without waiting for the end
    // of a live KISS stream.
    let mut head = vec![0; 4096];
    let mut len = 0;
    while len < head.len() {
        match input.read(&mut head[len..]).with_context(read_err)? {
            0 => break,
            n => len += n,
        }
        if args.format.is_some() || len >= 4 {
            break;
        }
    }
    head.truncate(len);
    if head.is_empty() {
        eprintln!("linklab: {name} is empty: no frames to decode");
        return Ok(());
    }
    let format = match args.format {
        Some(f) => f,
        None => detect(&head).map_err(|e| usage(format!("{name}: {e}")))?,
    };
    let mut out = crate::stdout::stdout();
    if format == InputFormat::Kiss {
        return decode_kiss(head, input, &name, modulus, &mut out);
    }
    let mut whole = head;
    input.read_to_end(&mut whole).with_context(read_err)?;
    match format {
        InputFormat::Pcap => decode_pcap(&whole, &name, modulus, &mut out),
        InputFormat::Hdlc => decode_hdlc(&whole, line_code(args.nrz), modulus, &mut out),
        _ => decode_hex(&whole, &name, modulus, &mut out),
    }
}

/// pcap by its magic number, KISS by a leading FEND, hex by its alphabet.
/// `input` is the start of the stream, possibly cut anywhere (inside a
/// line, a hex pair or a UTF-8 character); it is not empty.
fn detect(input: &[u8]) -> anyhow::Result<InputFormat> {
    const PCAP_MAGICS: [[u8; 4]; 4] = [
        [0xd4, 0xc3, 0xb2, 0xa1],
        [0xa1, 0xb2, 0xc3, 0xd4],
        [0x4d, 0x3c, 0xb2, 0xa1],
        [0xa1, 0xb2, 0x3c, 0x4d],
    ];
    if input
        .get(..4)
        .is_some_and(|m| PCAP_MAGICS.iter().any(|p| p == m))
    {
        return Ok(InputFormat::Pcap);
    }
    if input.first() == Some(&kiss::FEND) {
        return Ok(InputFormat::Kiss);
    }
    // The first line only: a bad line further on is [`hex_lines`]'s to
    // name, not a reason to call the whole input something else.
    let first_line = input.split(|&b| b == b'\n').next().unwrap_or(input);
    if hex_alphabet(first_line) {
        return Ok(InputFormat::Hex);
    }
    bail!(
        "cannot tell the input format: no pcap magic number, no leading KISS FEND (0xC0), \
         and not hexadecimal text; name it with --format pcap|kiss|hex"
    )
}

/// Whether every line of `text` holds only hex digits and the separators
/// [`hex_lines`] ignores before any `#` comment. Whether the digits pair
/// up is left to [`hex_lines`], whose message names the line: a prefix
/// may end inside a pair.
fn hex_alphabet(text: &[u8]) -> bool {
    text.split(|&b| b == b'\n').all(|line| {
        line.iter()
            .take_while(|&&b| b != b'#')
            .all(|&b| b.is_ascii_hexdigit() || is_hex_separator(b))
    })
}

/// The octets between hex digits that [`hex_lines`] ignores.
fn is_hex_separator(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b':' | b'-' | b'\r')
}

fn decode_pcap(
    input: &[u8],
    name: &str,
    modulus: Modulus,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let reader = PcapReader::new(input)
        .map_err(|e| usage(format!("{name} is not a readable pcap file: {e}")))?;
    let linktype = reader.header().linktype;
    if !matches!(linktype, LinkType::Ax25 | LinkType::Ax25Kiss) {
        return Err(usage(format!(
            "{name}: pcap link type {} is not AX.25 (3) or AX.25 with KISS header (202)",
            linktype.code()
        )));
    }
    for record in reader {
        let record = record.map_err(|e| usage(format!("{name}: {e}")))?;
        match linktype {
            LinkType::Ax25Kiss => kiss_line(kiss::Frame::parse(record.data), modulus, out)?,
            _ => writeln!(out, "{}", monitor::format_raw(record.data, modulus))?,
        }
    }
    Ok(())
}

/// Decodes a KISS stream as it arrives, a line per frame, so that a live
/// TNC connection can be watched (`nc localhost 8001 | linklab decode`).
fn decode_kiss(
    head: Vec<u8>,
    mut input: impl Read,
    name: &str,
    modulus: Modulus,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let mut decoder = kiss::Decoder::new(KISS_MAX_FRAME);
    let mut chunk = head;
    loop {
        decoder.push(&chunk);
        for frame in decoder.by_ref() {
            kiss_line(frame, modulus, out)?;
        }
        out.flush()?;
        chunk.resize(4096, 0);
        match input
            .read(&mut chunk)
            .with_context(|| format!("cannot read {name}"))?
        {
            0 => break,
            n => chunk.truncate(n),
        }
    }
    let stats = decoder.stats();
    if stats.garbage_bytes > 0 {
        eprintln!(
            "linklab: skipped {} octets outside KISS frames",
            stats.garbage_bytes
        );
    }
    Ok(())
}

/// A monitor line for a KISS data frame, or a note for a KISS command.
fn kiss_line(
    frame: Result<kiss::Frame, kiss::KissError>,
    modulus: Modulus,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let frame = match frame {
        Ok(f) => f,
        Err(e) => {
            writeln!(out, "<bad KISS frame: {e}>")?;
            return Ok(());
        }
    };
    let port = frame.port.get();
    let prefix = if port == 0 {
        String::new()
    } else {
        format!("[port {port}] ")
    };
    let ms = |units: u8| kiss::duration_from_units(units).as_millis();
    match frame.command {
        kiss::Command::Data(data) => {
            writeln!(out, "{prefix}{}", monitor::format_raw(&data, modulus))?
        }
        kiss::Command::AckMode { seq, data } => writeln!(
            out,
            "{prefix}[ackmode {seq:04X}] {}",
            monitor::format_raw(&data, modulus)
        )?,
        kiss::Command::TxDelay(u) => writeln!(out, "{prefix}KISS TXDELAY {u} ({} ms)", ms(u))?,
        kiss::Command::Persistence(p) => writeln!(
            out,
            "{prefix}KISS P {p} (p = {:.3})",
            kiss::p_from_persistence(p)
        )?,
        kiss::Command::SlotTime(u) => writeln!(out, "{prefix}KISS SLOTTIME {u} ({} ms)", ms(u))?,
        kiss::Command::TxTail(u) => writeln!(out, "{prefix}KISS TXTAIL {u} ({} ms)", ms(u))?,
        kiss::Command::FullDuplex(on) => writeln!(
            out,
            "{prefix}KISS FULLDUP {}",
            if on { "on" } else { "off" }
        )?,
        kiss::Command::SetHardware(data) => writeln!(out, "{prefix}KISS SETHW {}", hex(&data))?,
        kiss::Command::Return => writeln!(out, "KISS RETURN")?,
    }
    Ok(())
}

fn line_code(nrz: bool) -> LineCode {
    if nrz {
        LineCode::Nrz
    } else {
        LineCode::Nrzi
    }
}

/// Finds the frames in a raw bit stream with the HDLC deframer (AX.25
/// limits) and reports on standard error what it dropped.
fn decode_hdlc(
    bits: &[u8],
    code: LineCode,
    modulus: Modulus,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let mut deframer = Deframer::new(DeframerConfig::ax25(code));
    let mut result = Ok(());
    deframer.push_with(bits, |frame| {
        if result.is_ok() {
            result = writeln!(out, "{}", monitor::format_raw(frame, modulus));
        }
    });
    result?;
    let s = deframer.stats();
    let dropped = s.fcs_errors + s.aborts + s.too_short + s.too_long + s.not_octet_aligned;
    if dropped > 0 {
        eprintln!(
            "linklab: dropped {dropped} frames: {} bad FCS, {} aborted, {} too short, \
             {} too long, {} not a whole number of octets",
            s.fcs_errors, s.aborts, s.too_short, s.too_long, s.not_octet_aligned
        );
    }
    Ok(())
}

fn decode_hex(
    input: &[u8],
    name: &str,
    modulus: Modulus,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let frames = hex_lines(input).map_err(|e| usage(format!("{name}: {e:#}")))?;
    for frame in frames {
        writeln!(out, "{}", monitor::format_raw(&frame, modulus))?;
    }
    Ok(())
}

/// Each non-blank line (after removing a `#` comment) as the octets its hex
/// digits spell; separators ` `, `:` and `-` are ignored.
fn hex_lines(input: &[u8]) -> anyhow::Result<Vec<Vec<u8>>> {
    let text = std::str::from_utf8(input).context("hex input is not text")?;
    let mut frames = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let digits: Vec<u8> = line
            .split('#')
            .next()
            .unwrap_or("")
            .bytes()
            .filter(|&b| !is_hex_separator(b))
            .collect();
        if digits.is_empty() {
            continue;
        }
        let nibble = |d: u8| {
            (d as char)
                .to_digit(16)
                .map(|v| v as u8)
                .with_context(|| format!("line {}: '{}' is not a hex digit", n + 1, d as char))
        };
        if !digits.len().is_multiple_of(2) {
            bail!(
                "line {}: odd number of hex digits ({})",
                n + 1,
                digits.len()
            );
        }
        let frame = digits
            .chunks_exact(2)
            .map(|pair| Ok(nibble(pair[0])? << 4 | nibble(pair[1])?))
            .collect::<anyhow::Result<Vec<u8>>>()?;
        frames.push(frame);
    }
    Ok(frames)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Hexadecimal, one line.
    Hex,
    /// A KISS data frame, ready for a TNC.
    Kiss,
    /// pcap, link type 3 (AX.25).
    Pcap,
    /// pcap, link type 202 (AX.25 with KISS header).
    PcapKiss,
    /// A raw HDLC bit stream for a modem: preamble flags, the stuffed frame
    /// with its FCS, a closing flag; NRZI-coded unless --nrz.
    Hdlc,
}

/// An S frame by its name, any case (`rr`, `RNR`, ...).
fn supervisory(name: &str) -> Result<Supervisory, String> {
    Supervisory::ALL
        .into_iter()
        .find(|k| k.name().eq_ignore_ascii_case(name))
        .ok_or_else(|| format!("\"{name}\" is not an S frame: rr, rnr, rej or srej"))
}

/// A U frame other than UI by its name, any case (`sabme`, `XID`, ...).
fn unnumbered(name: &str) -> Result<Unnumbered, String> {
    let names = || Unnumbered::ALL.into_iter().filter(|k| *k != Unnumbered::Ui);
    names()
        .find(|k| k.name().eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            let all: Vec<_> = names().map(|k| k.name().to_lowercase()).collect();
            format!(
                "\"{name}\" is not a U frame (UI frames are made with --ui): {}",
                all.join(", ")
            )
        })
}

#[derive(Args)]
#[command(group(ArgGroup::new("kind").required(true).args(["ui", "i", "s", "u"])))]
pub struct EncodeArgs {
    /// Source station, e.g. N0CALL-1.
    #[arg(long)]
    from: Address,
    /// Destination station, e.g. APRS.
    #[arg(long)]
    to: Address,
    /// Digipeaters, comma-separated, up to 8; a trailing `*` marks one as
    /// already repeated (H bit), e.g. WIDE1-1*,WIDE2-1.
    #[arg(long, value_delimiter = ',')]
    via: Vec<String>,
    /// A UI frame carrying this text.
    #[arg(long)]
    ui: Option<String>,
    /// An I frame carrying this text (with --ns and --nr).
    #[arg(long)]
    i: Option<String>,
    /// A supervisory frame, rr|rnr|rej|srej (with --nr).
    #[arg(long, value_parser = supervisory)]
    s: Option<Supervisory>,
    /// An unnumbered frame other than UI: sabm|sabme|disc|dm|ua|frmr|xid|test
    /// (or the HDLC snrm, snrme, sarm, sarme), information with --info or --info-hex.
    #[arg(long, value_parser = unnumbered)]
    u: Option<Unnumbered>,
    /// N(S) of an I frame.
    #[arg(long, default_value_t = 0)]
    ns: u8,
    /// N(R) of an I or S frame.
    #[arg(long, default_value_t = 0)]
    nr: u8,
    /// Set the P/F bit.
    #[arg(long)]
    pf: bool,
    /// Send as a response rather than a command (C bits 0/1).
    #[arg(long)]
    response: bool,
    /// Protocol identifier of an I or UI frame, in hex.
    #[arg(long, default_value = "F0", value_parser = hex_octet)]
    pid: u8,
    /// Information field of a U frame, as text.
    #[arg(long, conflicts_with_all = ["info_hex", "ui", "i", "s"])]
    info: Option<String>,
    /// Information field of a U frame, in hex (e.g. XID parameters).
    #[arg(long, conflicts_with_all = ["ui", "i", "s"])]
    info_hex: Option<String>,
    /// N1, the largest information field of a UI or I frame, in octets
    /// (AX.25 v2.2 6.7.2: 256 by default); a longer --ui or --i text is
    /// refused. Raise it to build an oversized frame on purpose.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=65535))]
    n1: u32,
    /// Use modulo-128 (two-octet) I and S control fields.
    #[arg(long)]
    mod128: bool,
    /// KISS port for --format kiss and pcap-kiss.
    #[arg(long, default_value_t = 0)]
    port: u8,
    /// With --format hdlc: do not NRZI-code the bits.
    #[arg(long)]
    nrz: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "hex")]
    format: OutputFormat,
    /// Write to this file instead of standard output (`--out`, as in the
    /// other commands).
    #[arg(long, short = 'o', value_name = "FILE")]
    out: Option<PathBuf>,
}

fn hex_octet(s: &str) -> Result<u8, String> {
    let digits = s.trim_start_matches("0x").trim_start_matches("0X");
    u8::from_str_radix(digits, 16).map_err(|_| format!("\"{s}\" is not an octet in hex, e.g. F0"))
}

/// A digipeater from `CALL-SSID`, with a trailing `*` for the H bit.
fn digipeater(text: &str) -> anyhow::Result<Address> {
    let (call, repeated) = match text.strip_suffix('*') {
        Some(call) => (call, true),
        None => (text, false),
    };
    let mut address: Address = call
        .parse()
        .map_err(|e| usage(format!("--via: bad digipeater \"{text}\": {e}")))?;
    address.set_c_or_h(repeated);
    Ok(address)
}

pub fn encode(args: EncodeArgs) -> anyhow::Result<()> {
    let frame = build_frame(&args)?;
    let bytes = frame.encode();
    let port = kiss::Port::new(args.port).map_err(|e| usage(format!("--port: {e}")))?;
    let kiss_frame = || kiss::Frame {
        port,
        command: kiss::Command::Data(bytes.clone()),
    };
    let out = match args.format {
        OutputFormat::Hex => format!("{}\n", hex(&bytes)).into_bytes(),
        OutputFormat::Kiss => kiss::encode(&kiss_frame()),
        OutputFormat::Hdlc => {
            // A few flags ahead, as a transmitter sends during TXDELAY.
            hdlc::encode_frames([bytes.as_slice()], HDLC_PREAMBLE_FLAGS, line_code(args.nrz))
                .into_octets()
        }
        OutputFormat::Pcap | OutputFormat::PcapKiss => {
            let (linktype, record) = match args.format {
                OutputFormat::Pcap => (LinkType::Ax25, bytes.clone()),
                _ => {
                    let mut r = Vec::new();
                    kiss_frame().emit(&mut r);
                    (LinkType::Ax25Kiss, r)
                }
            };
            let now = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or(Duration::ZERO);
            let mut w = PcapWriter::new(Vec::new(), linktype)?;
            w.write_packet(now, &record)?;
            w.into_inner()
        }
    };
    match &args.out {
        Some(path) => {
            std::fs::write(path, out).with_context(|| format!("cannot write {}", path.display()))
        }
        None => crate::stdout::stdout()
            .write_all(&out)
            .context("cannot write standard output"),
    }
}

fn build_frame(args: &EncodeArgs) -> anyhow::Result<Frame> {
    let via = args
        .via
        .iter()
        .map(|v| digipeater(v))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let cr = if args.response {
        CommandResponse::Response
    } else {
        CommandResponse::Command
    };
    let address = AddressField::new(args.to, args.from, &via, cr)
        .map_err(|e| usage(format!("--via: {e}")))?;
    let modulus = crate::modulus(args.mod128);
    let largest = modulus.value() - 1;
    for (option, field, n) in [("--ns", "N(S)", args.ns), ("--nr", "N(R)", args.nr)] {
        if n > largest {
            let other = if args.mod128 {
                ""
            } else {
                "; 0-127 with --mod128"
            };
            return Err(usage(format!(
                "{option} {n}: {field} = {n} is out of range for modulo {} (0-{largest}{other})",
                largest + 1
            )));
        }
    }
    for (option, text) in [("--ui", &args.ui), ("--i", &args.i)] {
        let len = text.as_ref().map_or(0, String::len);
        if len > args.n1 as usize {
            return Err(usage(format!(
                "{option}: {len} octets is longer than N1 = {} (AX.25 v2.2's default is 256; --n1 raises it)",
                args.n1
            )));
        }
    }
    let pid = Pid::from(args.pid);
    let info = match (&args.info, &args.info_hex) {
        (Some(text), _) => text.as_bytes().to_vec(),
        (None, Some(h)) => hex_lines(h.as_bytes())
            .map_err(|e| usage(format!("--info-hex: {e:#}")))?
            .concat(),
        (None, None) => Vec::new(),
    };
    let frame = if let Some(text) = &args.ui {
        let control = linklab_wire::control::Control::U {
            kind: Unnumbered::Ui,
            pf: args.pf,
        };
        Frame::new(
            address,
            modulus,
            control,
            Some(pid),
            text.as_bytes().to_vec(),
        )
    } else if let Some(text) = &args.i {
        Frame::i(
            address,
            modulus,
            args.ns,
            args.nr,
            args.pf,
            pid,
            text.as_bytes().to_vec(),
        )
    } else if let Some(kind) = args.s {
        Frame::s(address, modulus, kind, args.nr, args.pf)
    } else if let Some(kind) = args.u {
        Frame::u(address, modulus, kind, args.pf, info)
    } else {
        unreachable!("clap requires one of --ui, --i, --s, --u")
    };
    frame.map_err(|e| usage(e.to_string()))
}
