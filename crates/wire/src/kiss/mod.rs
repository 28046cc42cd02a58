//! The KISS TNC host protocol (M. Chepponis and P. Karn, "The KISS TNC: A
//! simple Host-to-TNC communications protocol", 6th ARRL Computer Networking
//! Conference, 1987) and the ACKMODE extension of the multi-drop (G8BPQ)
//! KISS variant.
//!
//! On the serial line a frame is `FEND type data FEND`. Every octet between
//! the two FENDs — the type octet included — is escaped: FEND becomes
//! `FESC TFEND` and FESC becomes `FESC TFESC` (spec section "Asynchronous
//! framing"). The type octet holds the port in its high nibble and the
//! command in its low nibble, except RETURN, which is the whole octet 0xFF.
//!
//! Three layers, smallest first:
//! - [`escape_into`] / [`unescape`]: the transparency mechanism alone.
//! - [`Frame::parse`] / [`Frame::emit`]: a frame's unescaped contents
//!   (type octet then data), as stored in pcap files of link type
//!   `LINKTYPE_AX25_KISS` (202).
//! - [`encode`] / [`encode_into`] and the streaming [`Decoder`]: frames on
//!   the serial line, with FENDs and escaping.
//!
//! Decoding is strict, so that every frame that decodes encodes back to the
//! same contents: a parameter command (TXDELAY, P, SLOTTIME, TXTAIL,
//! FULLDUP) must carry exactly one octet, RETURN none, ACKMODE at least its
//! two sequence octets; command nibbles this module does not know (7 to 11,
//! 13, 14, and 15 on a port other than 15) are errors naming the value.
//! The one exception is FULLDUP, whose octet is read as "zero or not" and
//! re-encoded as 0 or 1.

mod decoder;

pub use decoder::{Decoder, DecoderStats};

use std::time::Duration;

/// Frame End: delimits frames (KISS spec, "Asynchronous framing").
pub const FEND: u8 = 0xC0;
/// Frame Escape: introduces a transposed FEND or FESC.
pub const FESC: u8 = 0xDB;
/// Transposed Frame End: `FESC TFEND` stands for a data octet 0xC0.
pub const TFEND: u8 = 0xDC;
/// Transposed Frame Escape: `FESC TFESC` stands for a data octet 0xDB.
pub const TFESC: u8 = 0xDD;

/// Command nibble 0: data frame (an AX.25 frame without flags or FCS).
pub const CMD_DATA: u8 = 0x0;
/// Command nibble 1: TXDELAY, keyup delay in 10 ms units.
pub const CMD_TXDELAY: u8 = 0x1;
/// Command nibble 2: persistence parameter P, p = (P + 1) / 256.
pub const CMD_P: u8 = 0x2;
/// Command nibble 3: SLOTTIME, CSMA slot interval in 10 ms units.
pub const CMD_SLOTTIME: u8 = 0x3;
/// Command nibble 4: TXTAIL, time to hold the transmitter after the last
/// frame, in 10 ms units (obsolete in the spec, still sent by hosts).
pub const CMD_TXTAIL: u8 = 0x4;
/// Command nibble 5: FULLDUP, 0 for half duplex, anything else full duplex.
pub const CMD_FULLDUP: u8 = 0x5;
/// Command nibble 6: SETHARDWARE, TNC-specific.
pub const CMD_SETHARDWARE: u8 = 0x6;
/// Command nibble 0xC: ACKMODE data frame (G8BPQ multi-drop KISS): two
/// sequence octets, then the AX.25 frame. The TNC echoes the type and the
/// two sequence octets, alone, once the frame has been sent.
pub const CMD_ACKMODE: u8 = 0xC;
/// The type octet of RETURN (exit KISS mode), whatever the port.
pub const RETURN: u8 = 0xFF;

/// One KISS timing unit: TXDELAY, SLOTTIME and TXTAIL count 10 ms units.
pub const TIME_UNIT: Duration = Duration::from_millis(10);

/// The duration of `units` KISS timing units of 10 ms (0 to 2.55 s).
pub fn duration_from_units(units: u8) -> Duration {
    TIME_UNIT * u32::from(units)
}

/// The number of 10 ms KISS timing units nearest to `duration`, saturating
/// at 255 (2.55 s): 500 ms gives 50, 4 ms gives 0, 5 ms gives 1.
pub fn units_from_duration(duration: Duration) -> u8 {
    let units = duration.as_micros().saturating_add(5_000) / 10_000;
    u8::try_from(units).unwrap_or(u8::MAX)
}

/// The transmit probability p = (P + 1) / 256 of the persistence
/// parameter P (KISS spec, command 2): P = 63 gives p = 0.25.
pub fn p_from_persistence(persistence: u8) -> f64 {
    (f64::from(persistence) + 1.0) / 256.0
}

/// The persistence parameter P whose probability (P + 1) / 256 is nearest
/// to `p`, clamped to 0..=255 (so p = 0 gives P = 0, i.e. p = 1/256);
/// NaN gives 0.
pub fn persistence_from_p(p: f64) -> u8 {
    let persistence = (p * 256.0 - 1.0).round();
    if persistence.is_nan() || persistence <= 0.0 {
        0
    } else if persistence >= 255.0 {
        u8::MAX
    } else {
        // In 1.0..=254.0 and integral, so the conversion is exact.
        persistence as u8
    }
}

/// Errors of KISS decoding; each names what was wrong and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KissError {
    /// A port number outside the 4-bit range of the type octet.
    #[error("KISS port {port} out of range; ports are 0 to 15")]
    PortOutOfRange {
        /// The rejected port number.
        port: u8,
    },
    /// Frame contents without even a type octet.
    #[error("KISS frame is empty; a type octet is needed")]
    Empty,
    /// FESC followed by an octet other than TFEND or TFESC.
    #[error(
        "bad KISS escape: FESC (0xDB) followed by 0x{octet:02X}; only TFEND (0xDC) or TFESC (0xDD) may follow"
    )]
    BadEscape {
        /// The octet that followed FESC (0xC0 if a FEND ended the frame).
        octet: u8,
    },
    /// Escaped data ending with a lone FESC.
    #[error(
        "KISS data ends with FESC (0xDB); an escape needs TFEND (0xDC) or TFESC (0xDD) after it"
    )]
    EscapeAtEnd,
    /// A FEND inside data given to [`unescape`].
    #[error("FEND (0xC0) at offset {offset} inside escaped KISS data; FEND only delimits frames")]
    FendInData {
        /// Offset of the FEND in the escaped data.
        offset: usize,
    },
    /// A frame longer than the decoder's limit.
    #[error(
        "KISS frame longer than {max} octets after the type octet; dropped up to the next FEND"
    )]
    FrameTooLong {
        /// The decoder's `max_frame_len`.
        max: usize,
    },
    /// A command nibble this module does not know.
    #[error("unknown KISS command 0x{command:X} on port {port} (type octet 0x{type_octet:02X})")]
    UnknownCommand {
        /// The port nibble.
        port: u8,
        /// The command nibble.
        command: u8,
        /// The whole type octet.
        type_octet: u8,
    },
    /// A parameter command or RETURN with the wrong number of octets.
    #[error("KISS {command} frame carries {len} octets after the type octet; exactly {expected} expected")]
    BadLength {
        /// The command's name as in the spec (e.g. "TXDELAY").
        command: &'static str,
        /// Octets found after the type octet.
        len: usize,
        /// Octets the command takes.
        expected: usize,
    },
    /// An ACKMODE frame too short for its two sequence octets.
    #[error("KISS ACKMODE frame carries {len} octets after the type octet; at least the 2 sequence octets expected")]
    AckModeTooShort {
        /// Octets found after the type octet.
        len: usize,
    },
}

/// A KISS port (the spec's word; Dire Wolf says "channel"): the high nibble
/// of the type octet, 0 to 15.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Port(u8);

impl Port {
    /// Port 0, the only port of a single-port TNC.
    pub const ZERO: Port = Port(0);
    /// Port 15, the port nibble of the RETURN octet 0xFF.
    pub const MAX: Port = Port(15);

    /// The port numbered `port`, if it is in 0..=15.
    pub fn new(port: u8) -> Result<Port, KissError> {
        if port <= Port::MAX.0 {
            Ok(Port(port))
        } else {
            Err(KissError::PortOutOfRange { port })
        }
    }

    /// The port number, 0 to 15.
    pub const fn get(self) -> u8 {
        self.0
    }
}

impl std::fmt::Display for Port {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A KISS command with its data (KISS spec, "Frame types" table).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Command {
    /// 0: a data frame, an AX.25 frame without flags or FCS.
    Data(Vec<u8>),
    /// 1: TXDELAY, transmitter keyup delay in 10 ms units (see
    /// [`duration_from_units`]); the spec's default is 50 (500 ms).
    TxDelay(u8),
    /// 2: persistence parameter P, 0 to 255, p = (P + 1) / 256 (see
    /// [`p_from_persistence`]); the spec's default is 63 (p = 0.25).
    Persistence(u8),
    /// 3: SLOTTIME in 10 ms units; the spec's default is 10 (100 ms).
    SlotTime(u8),
    /// 4: TXTAIL in 10 ms units (obsolete in the spec).
    TxTail(u8),
    /// 5: FULLDUP; `true` for full duplex. Any nonzero octet decodes as
    /// `true`, which encodes as 1.
    FullDuplex(bool),
    /// 6: SETHARDWARE, TNC-specific octets.
    SetHardware(Vec<u8>),
    /// 0xC: ACKMODE (G8BPQ multi-drop KISS). From the host: `seq` then the
    /// AX.25 frame in `data`; from the TNC, once that frame has been sent:
    /// the same `seq` with empty `data`. The two sequence octets are opaque
    /// to the TNC; `seq` holds them big-endian (first octet high).
    AckMode {
        /// The two sequence octets, first octet in the high byte.
        seq: u16,
        /// The AX.25 frame (empty in the TNC's acknowledgement).
        data: Vec<u8>,
    },
    /// 0xFF: RETURN, exit KISS mode. Its type octet is 0xFF whatever the
    /// frame's port; decoding reports port 15.
    Return,
}

impl Command {
    /// The command nibble (0xF for RETURN).
    pub fn code(&self) -> u8 {
        match self {
            Command::Data(_) => CMD_DATA,
            Command::TxDelay(_) => CMD_TXDELAY,
            Command::Persistence(_) => CMD_P,
            Command::SlotTime(_) => CMD_SLOTTIME,
            Command::TxTail(_) => CMD_TXTAIL,
            Command::FullDuplex(_) => CMD_FULLDUP,
            Command::SetHardware(_) => CMD_SETHARDWARE,
            Command::AckMode { .. } => CMD_ACKMODE,
            Command::Return => RETURN & 0x0F,
        }
    }
}

/// A KISS frame: the port it is for or from, and its command.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Frame {
    /// The port nibble (ignored by RETURN, which is always 0xFF).
    pub port: Port,
    /// The command and its data.
    pub command: Command,
}

impl Frame {
    /// A data frame carrying the AX.25 frame `data` on port 0.
    pub fn data(data: Vec<u8>) -> Frame {
        Frame {
            port: Port::ZERO,
            command: Command::Data(data),
        }
    }

    /// The type octet: port in the high nibble, command in the low nibble;
    /// 0xFF for RETURN.
    pub fn type_octet(&self) -> u8 {
        match self.command {
            Command::Return => RETURN,
            _ => (self.port.get() << 4) | self.command.code(),
        }
    }

    /// Parses a frame's unescaped contents: the type octet, then the data.
    pub fn parse(contents: &[u8]) -> Result<Frame, KissError> {
        let (&type_octet, data) = contents.split_first().ok_or(KissError::Empty)?;
        if type_octet == RETURN {
            exact_len("RETURN", data, 0)?;
            return Ok(Frame {
                port: Port::MAX,
                command: Command::Return,
            });
        }
        let port = Port(type_octet >> 4);
        let command = match type_octet & 0x0F {
            CMD_DATA => Command::Data(data.to_vec()),
            CMD_TXDELAY => Command::TxDelay(parameter("TXDELAY", data)?),
            CMD_P => Command::Persistence(parameter("P", data)?),
            CMD_SLOTTIME => Command::SlotTime(parameter("SLOTTIME", data)?),
            CMD_TXTAIL => Command::TxTail(parameter("TXTAIL", data)?),
            CMD_FULLDUP => Command::FullDuplex(parameter("FULLDUP", data)? != 0),
            CMD_SETHARDWARE => Command::SetHardware(data.to_vec()),
            CMD_ACKMODE => match data {
                [high, low, frame @ ..] => Command::AckMode {
                    seq: u16::from_be_bytes([*high, *low]),
                    data: frame.to_vec(),
                },
                _ => return Err(KissError::AckModeTooShort { len: data.len() }),
            },
            command => {
                return Err(KissError::UnknownCommand {
                    port: port.get(),
                    command,
                    type_octet,
                })
            }
        };
        Ok(Frame { port, command })
    }

    /// Appends the frame's unescaped contents (type octet, then data) to
    /// `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let (head, body) = self.parts();
        out.extend_from_slice(head.as_slice());
        out.extend_from_slice(body);
    }

    /// The length of the unescaped contents, type octet included.
    pub fn contents_len(&self) -> usize {
        let (head, body) = self.parts();
        head.as_slice().len().saturating_add(body.len())
    }

    /// The contents in two pieces: the type octet with any parameter or
    /// sequence octets, then the variable-length data.
    fn parts(&self) -> (Head, &[u8]) {
        let type_octet = self.type_octet();
        match &self.command {
            Command::Data(data) | Command::SetHardware(data) => (Head::new(&[type_octet]), data),
            Command::TxDelay(value)
            | Command::Persistence(value)
            | Command::SlotTime(value)
            | Command::TxTail(value) => (Head::new(&[type_octet, *value]), &[]),
            Command::FullDuplex(full) => (Head::new(&[type_octet, u8::from(*full)]), &[]),
            Command::AckMode { seq, data } => {
                let [high, low] = seq.to_be_bytes();
                (Head::new(&[type_octet, high, low]), data)
            }
            Command::Return => (Head::new(&[type_octet]), &[]),
        }
    }
}

/// Up to three leading octets of a frame's contents.
struct Head {
    octets: [u8; 3],
    len: usize,
}

impl Head {
    fn new(octets: &[u8]) -> Head {
        let mut head = Head {
            octets: [0; 3],
            len: 0,
        };
        for (slot, &octet) in head.octets.iter_mut().zip(octets) {
            *slot = octet;
            head.len += 1;
        }
        head
    }

    fn as_slice(&self) -> &[u8] {
        self.octets.get(..self.len).unwrap_or(&[])
    }
}

fn exact_len(command: &'static str, data: &[u8], expected: usize) -> Result<(), KissError> {
    if data.len() == expected {
        Ok(())
    } else {
        Err(KissError::BadLength {
            command,
            len: data.len(),
            expected,
        })
    }
}

fn parameter(command: &'static str, data: &[u8]) -> Result<u8, KissError> {
    match data {
        [value] => Ok(*value),
        _ => Err(KissError::BadLength {
            command,
            len: data.len(),
            expected: 1,
        }),
    }
}

/// Appends `data` to `out` with FEND and FESC transposed (KISS spec,
/// "Asynchronous framing").
pub fn escape_into(data: &[u8], out: &mut Vec<u8>) {
    for &octet in data {
        match octet {
            FEND => out.extend_from_slice(&[FESC, TFEND]),
            FESC => out.extend_from_slice(&[FESC, TFESC]),
            _ => out.push(octet),
        }
    }
}

/// Undoes [`escape_into`] on the octets found between two FENDs.
pub fn unescape(escaped: &[u8]) -> Result<Vec<u8>, KissError> {
    let mut out = Vec::with_capacity(escaped.len());
    let mut octets = escaped.iter().enumerate();
    while let Some((offset, &octet)) = octets.next() {
        match octet {
            FEND => return Err(KissError::FendInData { offset }),
            FESC => match octets.next() {
                Some((_, &TFEND)) => out.push(FEND),
                Some((_, &TFESC)) => out.push(FESC),
                Some((_, &octet)) => return Err(KissError::BadEscape { octet }),
                None => return Err(KissError::EscapeAtEnd),
            },
            _ => out.push(octet),
        }
    }
    Ok(out)
}

/// Encodes `frame` for the serial line: FEND, escaped contents, FEND.
pub fn encode(frame: &Frame) -> Vec<u8> {
    let mut out = Vec::with_capacity(frame.contents_len().saturating_add(2));
    encode_into(frame, &mut out);
    out
}

/// Appends the serial-line encoding of `frame` (FEND, escaped contents,
/// FEND) to `out`.
pub fn encode_into(frame: &Frame, out: &mut Vec<u8>) {
    let (head, body) = frame.parts();
    out.push(FEND);
    escape_into(head.as_slice(), out);
    escape_into(body, out);
    out.push(FEND);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(duration_from_units(50), Duration::from_millis(500));
        assert_eq!(units_from_duration(Duration::from_millis(500)), 50);
        assert_eq!(units_from_duration(Duration::from_millis(4)), 0);
        assert_eq!(units_from_duration(Duration::from_millis(5)), 1);
        assert_eq!(units_from_duration(Duration::from_secs(10)), 255);
        assert_eq!(units_from_duration(Duration::MAX), 255);
        for units in 0..=255 {
            assert_eq!(units_from_duration(duration_from_units(units)), units);
        }
    }

    #[test]
    fn persistence() {
        assert_eq!(p_from_persistence(63), 0.25);
        assert_eq!(p_from_persistence(255), 1.0);
        assert_eq!(persistence_from_p(0.25), 63);
        assert_eq!(persistence_from_p(0.0), 0);
        assert_eq!(persistence_from_p(2.0), 255);
        assert_eq!(persistence_from_p(f64::NAN), 0);
        for persistence in 0..=255 {
            assert_eq!(
                persistence_from_p(p_from_persistence(persistence)),
                persistence
            );
        }
    }

    #[test]
    fn port_range() {
        assert_eq!(Port::new(15).map(Port::get), Ok(15));
        assert_eq!(Port::new(16), Err(KissError::PortOutOfRange { port: 16 }));
    }
}
