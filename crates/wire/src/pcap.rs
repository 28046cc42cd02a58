//! Classic libpcap capture files (draft-ietf-opsawg-pcap, "PCAP Capture
//! File Format"), with the AX.25 link types of the tcpdump.org link-layer
//! header types list.
//!
//! A file is a 24-octet global header, then records of a 16-octet header
//! and the captured octets. Both byte orders and both timestamp resolutions
//! (microseconds, magic 0xA1B2C3D4; nanoseconds, magic 0xA1B23C4D) are
//! read; the writer produces either.
//!
//! Like smoltcp's `PcapSink`, the writer emits into any [`std::io::Write`]
//! the caller provides (a `Vec<u8>` included); this module does no I/O of
//! its own. The reader parses a byte slice and borrows packets from it, so
//! a corrupt length field can never make it allocate.

use std::io::{self, Write};
use std::time::Duration;

/// Magic number of files with microsecond timestamps.
pub const MAGIC_MICROS: u32 = 0xA1B2_C3D4;
/// Magic number of files with nanosecond timestamps.
pub const MAGIC_NANOS: u32 = 0xA1B2_3C4D;
/// Major version written and accepted.
pub const VERSION_MAJOR: u16 = 2;
/// Minor version written (any minor version is read).
pub const VERSION_MINOR: u16 = 4;
/// Length of the global header.
pub const HEADER_LEN: usize = 24;
/// Length of a record header.
pub const RECORD_HEADER_LEN: usize = 16;
/// The largest captured length accepted from a record header, and the
/// snapshot length written by default (libpcap's MAXIMUM_SNAPLEN).
pub const MAX_SNAPLEN: u32 = 262_144;

/// Magic number of pcapng files, recognised only to say so in an error.
const PCAPNG_MAGIC: u32 = 0x0A0D_0D0A;

/// The link-layer header type of a file's packets (tcpdump.org
/// link-layer header types list; the low 16 bits of the header's
/// "LinkType and additional information" field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkType {
    /// LINKTYPE_AX25 (3): an AX.25 frame starting with the address field,
    /// without flags or FCS.
    Ax25,
    /// LINKTYPE_AX25_KISS (202): a one-octet KISS type indicator, then the
    /// AX.25 frame; no FENDs and no escaping (see [`crate::kiss::Frame`]).
    Ax25Kiss,
    /// Any other link type, by number. Build values with `From<u16>`, which
    /// never wraps 3 or 202 in `Other`.
    Other(u16),
}

impl LinkType {
    /// The link type's number.
    pub fn code(self) -> u16 {
        match self {
            LinkType::Ax25 => 3,
            LinkType::Ax25Kiss => 202,
            LinkType::Other(code) => code,
        }
    }
}

impl From<u16> for LinkType {
    fn from(code: u16) -> LinkType {
        match code {
            3 => LinkType::Ax25,
            202 => LinkType::Ax25Kiss,
            _ => LinkType::Other(code),
        }
    }
}

/// Byte order of a file's header fields, given by how the magic number
/// reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endian {
    /// Little-endian (written by x86 and most ARM hosts).
    Little,
    /// Big-endian.
    Big,
}

impl Endian {
    fn u32(self, octets: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(octets),
            Endian::Big => u32::from_be_bytes(octets),
        }
    }

    fn u16(self, octets: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(octets),
            Endian::Big => u16::from_be_bytes(octets),
        }
    }

    fn u32_bytes(self, value: u32) -> [u8; 4] {
        match self {
            Endian::Little => value.to_le_bytes(),
            Endian::Big => value.to_be_bytes(),
        }
    }

    fn u16_bytes(self, value: u16) -> [u8; 2] {
        match self {
            Endian::Little => value.to_le_bytes(),
            Endian::Big => value.to_be_bytes(),
        }
    }
}

/// Resolution of record timestamps' fractional part, given by the magic
/// number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resolution {
    /// Microseconds (magic 0xA1B2C3D4).
    Micros,
    /// Nanoseconds (magic 0xA1B23C4D).
    Nanos,
}

impl Resolution {
    fn magic(self) -> u32 {
        match self {
            Resolution::Micros => MAGIC_MICROS,
            Resolution::Nanos => MAGIC_NANOS,
        }
    }

    fn nanos_per_unit(self) -> u32 {
        match self {
            Resolution::Micros => 1_000,
            Resolution::Nanos => 1,
        }
    }
}

/// The global header (draft-ietf-opsawg-pcap section 4). The reserved
/// fields (historically thiszone and sigfigs) are written as 0 and ignored
/// on reading, as are the FCS bits in the upper 16 bits of the link type
/// field; the version is 2.4 on writing and 2.x on reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header {
    /// Byte order of all header fields.
    pub endian: Endian,
    /// Timestamp resolution.
    pub resolution: Resolution,
    /// Snapshot length: the most octets captured of any packet.
    pub snaplen: u32,
    /// Link type of every packet.
    pub linktype: LinkType,
}

impl Header {
    /// A little-endian, microsecond header with a snapshot length of
    /// [`MAX_SNAPLEN`].
    pub fn new(linktype: LinkType) -> Header {
        Header {
            endian: Endian::Little,
            resolution: Resolution::Micros,
            snaplen: MAX_SNAPLEN,
            linktype,
        }
    }

    /// Parses the global header at the start of `bytes`.
    pub fn parse(bytes: &[u8]) -> Result<Header, PcapError> {
        let field =
            |offset: usize| -> Option<[u8; 4]> { bytes.get(offset..offset + 4)?.try_into().ok() };
        let (Some(magic), Some(version), Some(snaplen), Some(linktype)) =
            (field(0), field(4), field(16), field(20))
        else {
            return Err(PcapError::TooShort { len: bytes.len() });
        };
        let (endian, resolution) = match (u32::from_le_bytes(magic), u32::from_be_bytes(magic)) {
            (MAGIC_MICROS, _) => (Endian::Little, Resolution::Micros),
            (MAGIC_NANOS, _) => (Endian::Little, Resolution::Nanos),
            (_, MAGIC_MICROS) => (Endian::Big, Resolution::Micros),
            (_, MAGIC_NANOS) => (Endian::Big, Resolution::Nanos),
            (_, PCAPNG_MAGIC) => return Err(PcapError::Pcapng),
            (_, magic) => return Err(PcapError::BadMagic { magic }),
        };
        let [major0, major1, minor0, minor1] = version;
        let major = endian.u16([major0, major1]);
        let minor = endian.u16([minor0, minor1]);
        if major != VERSION_MAJOR {
            return Err(PcapError::UnsupportedVersion { major, minor });
        }
        let [code0, code1, ..] = endian.u32(linktype).to_le_bytes();
        Ok(Header {
            endian,
            resolution,
            snaplen: endian.u32(snaplen),
            linktype: LinkType::from(u16::from_le_bytes([code0, code1])),
        })
    }

    /// The 24 octets of the global header.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let e = self.endian;
        let mut out = [0; HEADER_LEN];
        let fields: [(usize, &[u8]); 5] = [
            (0, &e.u32_bytes(self.resolution.magic())),
            (4, &e.u16_bytes(VERSION_MAJOR)),
            (6, &e.u16_bytes(VERSION_MINOR)),
            (16, &e.u32_bytes(self.snaplen)),
            (20, &e.u32_bytes(u32::from(self.linktype.code()))),
        ];
        for (offset, octets) in fields {
            for (slot, &octet) in out.iter_mut().skip(offset).zip(octets) {
                *slot = octet;
            }
        }
        out
    }
}

/// Errors of reading a pcap file; records are numbered from 1, as
/// Wireshark numbers packets, and offsets count octets from the file's
/// start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PcapError {
    /// Input shorter than the global header.
    #[error("pcap file is {len} octets; the global header needs 24")]
    TooShort {
        /// The input's length.
        len: usize,
    },
    /// A pcapng file, which this reader does not read.
    #[error(
        "this is a pcapng file; only classic pcap files (magic 0xA1B2C3D4 or 0xA1B23C4D) are read"
    )]
    Pcapng,
    /// An unknown magic number.
    #[error("not a pcap file: magic number 0x{magic:08X} (read big-endian); expected 0xA1B2C3D4 or 0xA1B23C4D in either byte order")]
    BadMagic {
        /// The first four octets, read big-endian.
        magic: u32,
    },
    /// A major version other than 2.
    #[error("pcap version {major}.{minor} not supported; version 2.x expected")]
    UnsupportedVersion {
        /// Major version found.
        major: u16,
        /// Minor version found.
        minor: u16,
    },
    /// A record header cut short by the end of the input.
    #[error("pcap record {number} at offset {offset}: need {need} octets for the record header, have {have}")]
    TruncatedRecordHeader {
        /// Record number, from 1.
        number: u64,
        /// Offset of the record header.
        offset: usize,
        /// Octets needed (16).
        need: usize,
        /// Octets left in the input.
        have: usize,
    },
    /// Record data cut short by the end of the input.
    #[error(
        "pcap record {number} at offset {offset}: need {need} octets of packet data, have {have}"
    )]
    TruncatedRecordData {
        /// Record number, from 1.
        number: u64,
        /// Offset of the record header.
        offset: usize,
        /// Captured length from the record header.
        need: usize,
        /// Octets left in the input after the record header.
        have: usize,
    },
    /// A captured length beyond any sane snapshot length.
    #[error("pcap record {number} at offset {offset}: captured length {caplen} exceeds the maximum of {max}")]
    CaplenTooLarge {
        /// Record number, from 1.
        number: u64,
        /// Offset of the record header.
        offset: usize,
        /// Captured length from the record header.
        caplen: u32,
        /// The limit, [`MAX_SNAPLEN`].
        max: u32,
    },
}

/// Errors of writing a pcap file.
#[derive(Debug, thiserror::Error)]
pub enum PcapWriteError {
    /// The sink failed.
    #[error("writing pcap data failed: {0}")]
    Io(#[from] io::Error),
    /// A timestamp past what 32-bit seconds can hold (year 2106).
    #[error("timestamp of {secs} s since 1970 does not fit the 32-bit seconds field of pcap")]
    TimestampOutOfRange {
        /// Whole seconds of the rejected timestamp.
        secs: u64,
    },
    /// A packet whose length does not fit the 32-bit length field.
    #[error("packet of {len} octets does not fit the 32-bit length field of pcap")]
    PacketTooLong {
        /// The packet's length.
        len: usize,
    },
}

/// One record: a packet and when it was captured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Record<'a> {
    /// Time since 1970-01-01 00:00:00 UTC, at the file's resolution.
    pub timestamp: Duration,
    /// The packet's length on the link (at least `data.len()`).
    pub orig_len: u32,
    /// The captured octets.
    pub data: &'a [u8],
}

/// Reads records from a pcap file held in a byte slice.
///
/// An iterator of `Result<Record, PcapError>`: after the first error
/// (a truncated record or an absurd captured length, beyond which no later
/// record can be found) it returns `None`.
#[derive(Debug, Clone)]
pub struct PcapReader<'a> {
    header: Header,
    bytes: &'a [u8],
    offset: usize,
    number: u64,
    failed: bool,
}

impl<'a> PcapReader<'a> {
    /// Parses the global header of `bytes`; records follow from iteration.
    pub fn new(bytes: &'a [u8]) -> Result<PcapReader<'a>, PcapError> {
        Ok(PcapReader {
            header: Header::parse(bytes)?,
            bytes,
            offset: HEADER_LEN,
            number: 0,
            failed: false,
        })
    }

    /// The file's global header.
    pub fn header(&self) -> Header {
        self.header
    }

    fn record(&mut self) -> Result<Record<'a>, PcapError> {
        let offset = self.offset;
        let number = self.number;
        let rest = self.bytes.get(offset..).unwrap_or(&[]);
        let (Some(head), Some(body)) =
            (rest.get(..RECORD_HEADER_LEN), rest.get(RECORD_HEADER_LEN..))
        else {
            return Err(PcapError::TruncatedRecordHeader {
                number,
                offset,
                need: RECORD_HEADER_LEN,
                have: rest.len(),
            });
        };
        let e = self.header.endian;
        let field = |at: usize| {
            let mut octets = [0; 4];
            for (slot, &octet) in octets.iter_mut().zip(head.iter().skip(at)) {
                *slot = octet;
            }
            e.u32(octets)
        };
        let (secs, frac, caplen, orig_len) = (field(0), field(4), field(8), field(12));
        if caplen > MAX_SNAPLEN {
            return Err(PcapError::CaplenTooLarge {
                number,
                offset,
                caplen,
                max: MAX_SNAPLEN,
            });
        }
        // caplen <= MAX_SNAPLEN, so it fits usize.
        let need = caplen as usize;
        let data = body.get(..need).ok_or(PcapError::TruncatedRecordData {
            number,
            offset,
            need,
            have: body.len(),
        })?;
        self.offset = offset
            .saturating_add(RECORD_HEADER_LEN)
            .saturating_add(need);
        let nanos = u64::from(frac) * u64::from(self.header.resolution.nanos_per_unit());
        Ok(Record {
            timestamp: Duration::from_secs(u64::from(secs)) + Duration::from_nanos(nanos),
            orig_len,
            data,
        })
    }
}

impl<'a> Iterator for PcapReader<'a> {
    type Item = Result<Record<'a>, PcapError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.offset >= self.bytes.len() {
            return None;
        }
        self.number = self.number.saturating_add(1);
        let item = self.record();
        self.failed = item.is_err();
        Some(item)
    }
}

/// Writes a pcap file into a caller-provided sink.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    header: Header,
    sink: W,
}

impl<W: Write> PcapWriter<W> {
    /// Writes a little-endian, microsecond global header for `linktype`
    /// (snapshot length [`MAX_SNAPLEN`]) to `sink`.
    pub fn new(sink: W, linktype: LinkType) -> Result<PcapWriter<W>, PcapWriteError> {
        PcapWriter::with_header(sink, Header::new(linktype))
    }

    /// Writes `header` to `sink`; records will follow its byte order and
    /// resolution.
    pub fn with_header(mut sink: W, header: Header) -> Result<PcapWriter<W>, PcapWriteError> {
        sink.write_all(&header.to_bytes())?;
        Ok(PcapWriter { header, sink })
    }

    /// The header written.
    pub fn header(&self) -> Header {
        self.header
    }

    /// Writes one record of `packet` captured at `timestamp` (since
    /// 1970-01-01 00:00:00 UTC, truncated to the file's resolution). A
    /// packet longer than the snapshot length is cut to it, its original
    /// length still recorded.
    pub fn write_packet(
        &mut self,
        timestamp: Duration,
        packet: &[u8],
    ) -> Result<(), PcapWriteError> {
        let secs = u32::try_from(timestamp.as_secs()).map_err(|_| {
            PcapWriteError::TimestampOutOfRange {
                secs: timestamp.as_secs(),
            }
        })?;
        let frac = timestamp.subsec_nanos() / self.header.resolution.nanos_per_unit();
        let orig_len = u32::try_from(packet.len())
            .map_err(|_| PcapWriteError::PacketTooLong { len: packet.len() })?;
        let caplen = orig_len.min(self.header.snaplen);
        let data = packet.get(..caplen as usize).unwrap_or(packet);
        let e = self.header.endian;
        let mut head = [0; RECORD_HEADER_LEN];
        let fields = [secs, frac, caplen, orig_len].map(|value| e.u32_bytes(value));
        for (slot, &octet) in head.iter_mut().zip(fields.iter().flatten()) {
            *slot = octet;
        }
        self.sink.write_all(&head)?;
        self.sink.write_all(data)?;
        Ok(())
    }

    /// Flushes the sink.
    pub fn flush(&mut self) -> Result<(), PcapWriteError> {
        Ok(self.sink.flush()?)
    }

    /// The sink, giving back e.g. the `Vec<u8>` written into.
    pub fn into_inner(self) -> W {
        self.sink
    }
}
