//! The octets of the AX.25 convergence layer, apart from any session
//! logic.
//!
//! The formats are those of the TCP convergence layer version 3 (RFC 7242,
//! the published form of draft-irtf-dtnrg-tcp-clayer, which Ronan et al.
//! cite as the base of their AX.25 CM-CL), with the one change the paper
//! describes (section II): a 32-bit CRC appended to each message. The
//! [`ContactHeader`] opens the stream in each direction; [`Message`] is
//! every message after it. Lengths are SDNVs ([`sdnv`], RFC 6256).
//! Decoding is strict and total: a truncated buffer is
//! [`Decoded::Incomplete`], anything that cannot be a message is a
//! [`DecodeError`] naming what is wrong, and no input panics.

mod contact;
mod message;
pub mod sdnv;

pub use contact::{
    ContactHeader, BUNDLE_REFUSAL, MAGIC, REACTIVE_FRAGMENTATION, REQUEST_ACK, VERSION,
};
pub use message::{Message, MessageType, RefuseReason, ShutdownReason, DELAY, END, REASON, START};

use linklab_wire::fcs32::fcs32;
use thiserror::Error;

/// Octets of the CRC-32 after every message.
pub const CRC_LEN: usize = 4;

/// What a decoder found at the start of a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded<T> {
    /// The buffer ends inside the item: wait for more octets.
    Incomplete,
    /// A whole item of `len` octets, its CRC-32 checked.
    Message {
        /// The item.
        message: T,
        /// Its length on the wire, CRC-32 included.
        len: usize,
    },
}

/// Why octets are not a message of this convergence layer.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// The CRC-32 after a message does not match its octets: the frame was
    /// corrupted on its way (Ronan et al., section II).
    #[error(
        "CRC-32 mismatch: the message says {received:#010x}, its octets give {computed:#010x}"
    )]
    BadCrc {
        /// The CRC-32 that came with the message.
        received: u32,
        /// The CRC-32 of the octets that came.
        computed: u32,
    },
    /// The stream does not open with `dtn!`.
    #[error("the contact header does not start with \"dtn!\"")]
    BadMagic,
    /// A contact header of another version.
    #[error("contact header version {0}, this convergence layer speaks version 3")]
    BadVersion(u8),
    /// A message type this convergence layer does not use.
    #[error("unknown message type in header octet {0:#04x}")]
    UnknownType(u8),
    /// A DATA_SEGMENT longer than the receiver accepts.
    #[error("DATA_SEGMENT of {length} octets, over the limit of {limit}")]
    SegmentTooLong {
        /// Its declared length.
        length: u64,
        /// The limit.
        limit: u64,
    },
    /// A contact header's EID longer than the receiver accepts.
    #[error("contact header EID of {length} octets, over the limit of {limit}")]
    EidTooLong {
        /// Its declared length.
        length: u64,
        /// The limit.
        limit: usize,
    },
    /// A contact header's EID that is not UTF-8.
    #[error("contact header EID is not UTF-8")]
    EidNotUtf8,
    /// An SDNV too long for 64 bits.
    #[error("SDNV does not fit in 64 bits")]
    SdnvOverflow,
}

/// Checks the CRC-32 `crc` (4 octets, big-endian) of `body`.
fn check_crc(body: &[u8], crc: &[u8]) -> Result<(), DecodeError> {
    let received = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
    let computed = fcs32(body);
    if received == computed {
        Ok(())
    } else {
        Err(DecodeError::BadCrc { received, computed })
    }
}
