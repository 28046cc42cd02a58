//! The octets of TCPCLv4 (RFC 9174), apart from any session logic.
//!
//! Every field is fixed-width and big-endian (RFC 9174 section 4.1: no
//! SDNVs as in version 3). [`ContactHeader`] is the 6-octet preamble of
//! section 4.2; [`Message`] is every message of sections 4.5 to 6.1, with
//! the extension items of sections 4.8 and 5.2.5 in [`ExtensionItem`] and
//! the registered reason codes of sections 5.1.2, 5.2.4 and 6.1 in
//! [`reason`]. Decoding is strict and total: a truncated buffer is
//! [`Decoded::Incomplete`], anything that cannot be a TCPCLv4 message is a
//! [`DecodeError`] naming what is wrong, and no input panics. Every
//! message decodes to a value that encodes to the same octets.

mod contact;
mod extension;
mod message;
pub mod reason;

pub use contact::{ContactError, ContactHeader, CAN_TLS, MAGIC, VERSION};
pub use extension::{ExtensionItem, TRANSFER_LENGTH};
pub use message::{
    Decoded, Limits, Message, MessageType, MsgReject, SessInit, SessTerm, XferAck, XferRefuse,
    XferSegment, END, REPLY, START,
};
pub use reason::{RefuseReason, RejectReason, SessTermReason};

use thiserror::Error;

/// Why octets are not a TCPCLv4 message.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// The message type code is not one of RFC 9174 section 4.5, Table 2.
    /// Section 5.1.2: the receiver answers MSG_REJECT "Message Type
    /// Unknown" and closes the connection, since the length is unknown.
    #[error("unknown message type code 0x{0:02x}")]
    UnknownType(u8),
    /// An XFER_SEGMENT's data is longer than the receiver's limit (its
    /// Segment MRU, RFC 9174 section 4.6). The framing is still known, so
    /// the receiver can skip `header_len + data_length` octets.
    #[error(
        "XFER_SEGMENT of transfer {transfer_id} carries {data_length} octets, over the limit of {limit}"
    )]
    SegmentTooLong {
        /// The segment's message flags.
        flags: u8,
        /// The segment's Transfer ID.
        transfer_id: u64,
        /// Octets from the message header to the end of the Data Length.
        header_len: usize,
        /// The Data Length field.
        data_length: u64,
        /// The limit it exceeds.
        limit: u64,
    },
    /// An extension item list (session, RFC 9174 section 4.8, or
    /// transfer, section 5.2.5) is longer than the receiver accepts.
    #[error("{message} extension items length {length} is over the limit of {limit}")]
    ExtensionsTooLong {
        /// `"SESS_INIT"` or `"XFER_SEGMENT"`.
        message: &'static str,
        /// The declared Extension Items Length.
        length: u32,
        /// The limit it exceeds.
        limit: u32,
    },
    /// The extension items do not exactly fill their declared list length.
    #[error("{message} extension items do not fill their {length}-octet list")]
    ExtensionsMisframed {
        /// `"SESS_INIT"` or `"XFER_SEGMENT"`.
        message: &'static str,
        /// The declared Extension Items Length.
        length: u32,
    },
    /// A SESS_INIT's Node ID is not UTF-8 (RFC 9174 section 4.6).
    #[error("SESS_INIT Node ID is not UTF-8")]
    NodeIdNotUtf8,
}

/// Why a value cannot be encoded: a length does not fit its field.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{field} of {length} octets does not fit its {bits}-bit length field")]
pub struct EncodeError {
    /// The field that is too long.
    pub field: &'static str,
    /// Its length.
    pub length: usize,
    /// The width of its length field.
    pub bits: u8,
}

/// A cursor over received octets; every read is `None` when the buffer
/// ends first.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.bytes(N).map(|b| b.try_into().expect("N octets"))
    }

    fn u8(&mut self) -> Option<u8> {
        self.array::<1>().map(|[b]| b)
    }

    fn u16(&mut self) -> Option<u16> {
        self.array().map(u16::from_be_bytes)
    }

    fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_be_bytes)
    }

    fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_be_bytes)
    }
}

/// `length` as a field of `bits` bits, or the error naming `field`.
fn length_field<T: TryFrom<usize>>(field: &'static str, length: usize) -> Result<T, EncodeError> {
    T::try_from(length).map_err(|_| EncodeError {
        field,
        length,
        bits: (core::mem::size_of::<T>() * 8) as u8,
    })
}
