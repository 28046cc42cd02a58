//! HDLC framing of a raw bit stream: flags, zero-bit insertion, FCS, aborts
//! and NRZI (ISO/IEC 13239 clause 4; AX.25 v2.2 sections 3.1, 3.6 to 3.11).
//!
//! # Bit streams
//! HDLC sends each octet least-significant bit first (AX.25 v2.2 section 3.8).
//! A raw bit stream is therefore held as octets packed LSB-first: bit 0 of
//! octet 0 is the first bit on the air. [`BitStream`] adds an explicit bit
//! length for streams that do not end on an octet boundary, which is the
//! rule after zero-bit insertion.
//!
//! # Sending
//! [`Encoder`] turns frame bodies (address to information field, without FCS)
//! into line bits: it appends the FCS, inserts a 0 after five contiguous 1s,
//! delimits frames with flags (adjacent frames share one), can send preamble
//! flags and aborts, and optionally NRZI-codes the result ([`LineCode`]).
//!
//! # Receiving
//! [`Deframer`] is a sans-IO receiver: feed it raw line bits in chunks of any
//! size, take complete frames with a correct FCS out, and read
//! [`DeframerStats`] for what it dropped.
//!
//! Both directions are table-driven and work an octet at a time; the
//! [`reference`](mod@reference) module holds a bit-at-a-time version of each that serves as
//! test oracle and benchmark baseline.

mod bits;
mod deframer;
mod encoder;
mod nrzi;
#[doc(hidden)]
pub mod reference;

pub use bits::BitStream;
pub use deframer::{decode_all, Deframer, DeframerConfig, DeframerStats};
pub use encoder::{encode_frames, frame_bits, Encoder};
pub use nrzi::{NrziDecoder, NrziEncoder};

/// The flag sequence 01111110 that opens and closes every frame
/// (ISO/IEC 13239 clause 4; AX.25 v2.2 section 3.1). Symmetric, so its
/// LSB-first packing is the same octet.
pub const FLAG: u8 = 0x7E;

/// The number of contiguous 1s [`Encoder::abort_frame`] sends: AX.25 v2.2
/// section 3.10 asks for at least fifteen, which also satisfies the seven
/// of ISO/IEC 13239 clause 4
pub const ABORT_ONES: u32 = 15;

/// How bits are put on the line (AX.25 v2.2 section 3, physical layer
/// notes; ISO/IEC 13239 clause 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LineCode {
    /// Bits are sent as they are.
    #[default]
    Nrz,
    /// Non-return-to-zero inverted: a 0 is sent as a change of line level,
    /// a 1 as no change. Both ends start from line level 0.
    Nrzi,
}
