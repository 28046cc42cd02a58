//! The messages of an established session: those of TCPCL version 3 (RFC
//! 7242 section 5), each followed by a CRC-32 over its octets.
//!
//! ```text
//! header octet: message type (high 4 bits) | flags (low 4 bits)
//! DATA_SEGMENT  0x1  flags S = 0x2 (start), E = 0x1 (end) | length (SDNV) | data
//! ACK_SEGMENT   0x2  acknowledged length (SDNV)
//! REFUSE_BUNDLE 0x3  flags: reason code
//! KEEPALIVE     0x4
//! SHUTDOWN      0x5  flags R = 0x2 (reason octet follows), D = 0x1 (delay SDNV follows)
//! every message: ... | CRC-32 (4 octets, big-endian, over the octets before it)
//! ```
//!
//! RFC 7242's LENGTH message (0x6) is not used by this convergence layer:
//! it is refused like any other unknown type.

use super::sdnv::{self, Sdnv};
use super::{check_crc, DecodeError, Decoded, CRC_LEN};
use linklab_wire::fcs32::fcs32;

/// DATA_SEGMENT flag E: the last segment of a bundle (RFC 7242 5.2).
pub const END: u8 = 0x01;
/// DATA_SEGMENT flag S: the first segment of a bundle.
pub const START: u8 = 0x02;
/// SHUTDOWN flag D: a reconnection delay follows (RFC 7242 5.6).
pub const DELAY: u8 = 0x01;
/// SHUTDOWN flag R: a reason code follows.
pub const REASON: u8 = 0x02;

/// Message types, RFC 7242 section 5.1, Table 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MessageType {
    /// A segment of a bundle (5.2).
    DataSegment = 0x1,
    /// Acknowledgement of the data received so far (5.3).
    AckSegment = 0x2,
    /// Refusal of the bundle being received (5.4).
    RefuseBundle = 0x3,
    /// Keeps an idle session alive (5.5).
    Keepalive = 0x4,
    /// End of the session (5.6).
    Shutdown = 0x5,
}

impl MessageType {
    /// The type for a type code, if this convergence layer uses it.
    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0x1 => MessageType::DataSegment,
            0x2 => MessageType::AckSegment,
            0x3 => MessageType::RefuseBundle,
            0x4 => MessageType::Keepalive,
            0x5 => MessageType::Shutdown,
            _ => return None,
        })
    }

    /// The protocol's name for it.
    pub fn name(self) -> &'static str {
        match self {
            MessageType::DataSegment => "DATA_SEGMENT",
            MessageType::AckSegment => "ACK_SEGMENT",
            MessageType::RefuseBundle => "REFUSE_BUNDLE",
            MessageType::Keepalive => "KEEPALIVE",
            MessageType::Shutdown => "SHUTDOWN",
        }
    }
}

/// REFUSE_BUNDLE reason codes, RFC 7242 section 5.4, Table 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefuseReason {
    /// Reason for refusal is unknown or not specified.
    Unknown,
    /// The receiver already has the complete bundle.
    Completed,
    /// The receiver's resources are exhausted.
    NoResources,
    /// The receiver has encountered a problem that requires the bundle to
    /// be retransmitted in its entirety.
    Retransmit,
    /// An unassigned code (4 bits).
    Other(u8),
}

impl RefuseReason {
    /// The reason for a 4-bit code.
    pub fn from_code(code: u8) -> Self {
        match code & 0x0F {
            0x0 => RefuseReason::Unknown,
            0x1 => RefuseReason::Completed,
            0x2 => RefuseReason::NoResources,
            0x3 => RefuseReason::Retransmit,
            other => RefuseReason::Other(other),
        }
    }

    /// The 4-bit code.
    pub fn code(self) -> u8 {
        match self {
            RefuseReason::Unknown => 0x0,
            RefuseReason::Completed => 0x1,
            RefuseReason::NoResources => 0x2,
            RefuseReason::Retransmit => 0x3,
            RefuseReason::Other(code) => code & 0x0F,
        }
    }
}

/// SHUTDOWN reason codes, RFC 7242 section 5.6, Table 5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShutdownReason {
    /// Idle timeout.
    IdleTimeout,
    /// Version mismatch.
    VersionMismatch,
    /// Busy.
    Busy,
    /// An unassigned code.
    Other(u8),
}

impl ShutdownReason {
    /// The reason for a code.
    pub fn from_code(code: u8) -> Self {
        match code {
            0x00 => ShutdownReason::IdleTimeout,
            0x01 => ShutdownReason::VersionMismatch,
            0x02 => ShutdownReason::Busy,
            other => ShutdownReason::Other(other),
        }
    }

    /// The code.
    pub fn code(self) -> u8 {
        match self {
            ShutdownReason::IdleTimeout => 0x00,
            ShutdownReason::VersionMismatch => 0x01,
            ShutdownReason::Busy => 0x02,
            ShutdownReason::Other(code) => code,
        }
    }
}

/// A message of an established session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// DATA_SEGMENT.
    DataSegment {
        /// The flags ([`START`], [`END`]; the others reserved, kept as sent).
        flags: u8,
        /// The segment's data.
        data: Vec<u8>,
    },
    /// ACK_SEGMENT.
    AckSegment {
        /// Octets of the bundle being received that have arrived so far.
        acknowledged_length: u64,
    },
    /// REFUSE_BUNDLE.
    RefuseBundle {
        /// Why.
        reason: RefuseReason,
    },
    /// KEEPALIVE.
    Keepalive,
    /// SHUTDOWN.
    Shutdown {
        /// Why, if said.
        reason: Option<ShutdownReason>,
        /// Seconds before the peer should reconnect, if said.
        reconnection_delay: Option<u64>,
    },
}

/// Returns `Ok(Decoded::Incomplete)` when a read runs out of octets.
macro_rules! need {
    ($read:expr) => {
        match $read {
            Some(value) => value,
            None => return Ok(Decoded::Incomplete),
        }
    };
}

/// Reads an SDNV at `*at`, moving past it.
fn read_sdnv(buf: &[u8], at: &mut usize) -> Result<Option<u64>, DecodeError> {
    match sdnv::decode(&buf[*at..]) {
        Sdnv::Incomplete => Ok(None),
        Sdnv::Overflow => Err(DecodeError::SdnvOverflow),
        Sdnv::Value(value, n) => {
            *at += n;
            Ok(Some(value))
        }
    }
}

impl Message {
    /// The message's type.
    pub fn message_type(&self) -> MessageType {
        match self {
            Message::DataSegment { .. } => MessageType::DataSegment,
            Message::AckSegment { .. } => MessageType::AckSegment,
            Message::RefuseBundle { .. } => MessageType::RefuseBundle,
            Message::Keepalive => MessageType::Keepalive,
            Message::Shutdown { .. } => MessageType::Shutdown,
        }
    }

    /// Decodes the message at the start of `buf`. A DATA_SEGMENT whose
    /// length is over `max_segment` is an error at once, before its data is
    /// waited for; the CRC-32 is checked before anything is returned.
    pub fn decode(buf: &[u8], max_segment: u64) -> Result<Decoded<Message>, DecodeError> {
        let header = *need!(buf.first());
        let kind = MessageType::from_code(header >> 4).ok_or(DecodeError::UnknownType(header))?;
        let flags = header & 0x0F;
        let mut at = 1;
        let message = match kind {
            MessageType::DataSegment => {
                let length = need!(read_sdnv(buf, &mut at)?);
                if length > max_segment {
                    return Err(DecodeError::SegmentTooLong {
                        length,
                        limit: max_segment,
                    });
                }
                let end = at + need!(usize::try_from(length).ok());
                let data = need!(buf.get(at..end)).to_vec();
                at = end;
                Message::DataSegment { flags, data }
            }
            MessageType::AckSegment => Message::AckSegment {
                acknowledged_length: need!(read_sdnv(buf, &mut at)?),
            },
            MessageType::RefuseBundle => Message::RefuseBundle {
                reason: RefuseReason::from_code(flags),
            },
            MessageType::Keepalive => Message::Keepalive,
            MessageType::Shutdown => {
                let reason = if flags & REASON != 0 {
                    let code = *need!(buf.get(at));
                    at += 1;
                    Some(ShutdownReason::from_code(code))
                } else {
                    None
                };
                let reconnection_delay = if flags & DELAY != 0 {
                    Some(need!(read_sdnv(buf, &mut at)?))
                } else {
                    None
                };
                Message::Shutdown {
                    reason,
                    reconnection_delay,
                }
            }
        };
        let crc = need!(buf.get(at..at + CRC_LEN));
        check_crc(&buf[..at], crc)?;
        Ok(Decoded::Message {
            message,
            len: at + CRC_LEN,
        })
    }

    /// Appends the message's octets, CRC-32 included, to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        let code = (self.message_type() as u8) << 4;
        match self {
            Message::DataSegment { flags, data } => {
                out.push(code | (flags & 0x0F));
                sdnv::encode(data.len() as u64, out);
                out.extend_from_slice(data);
            }
            Message::AckSegment {
                acknowledged_length,
            } => {
                out.push(code);
                sdnv::encode(*acknowledged_length, out);
            }
            Message::RefuseBundle { reason } => out.push(code | reason.code()),
            Message::Keepalive => out.push(code),
            Message::Shutdown {
                reason,
                reconnection_delay,
            } => {
                let flags = if reason.is_some() { REASON } else { 0 }
                    | if reconnection_delay.is_some() {
                        DELAY
                    } else {
                        0
                    };
                out.push(code | flags);
                if let Some(reason) = reason {
                    out.push(reason.code());
                }
                if let Some(delay) = reconnection_delay {
                    sdnv::encode(*delay, out);
                }
            }
        }
        let crc = fcs32(&out[start..]);
        out.extend(crc.to_be_bytes());
    }

    /// The message's octets.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }

    /// Octets a DATA_SEGMENT of `data` octets takes on the wire.
    pub fn data_segment_len(data: usize) -> usize {
        1 + sdnv::len(data as u64) + data + CRC_LEN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(message: Message) -> Vec<u8> {
        let octets = message.to_vec();
        assert_eq!(
            Message::decode(&octets, u64::MAX),
            Ok(Decoded::Message {
                message: message.clone(),
                len: octets.len()
            })
        );
        for cut in 0..octets.len() {
            assert_eq!(
                Message::decode(&octets[..cut], u64::MAX),
                Ok(Decoded::Incomplete),
                "{message:?} cut at {cut}"
            );
        }
        octets
    }

    #[test]
    fn data_segment_layout() {
        let octets = round_trip(Message::DataSegment {
            flags: START | END,
            data: vec![0xAA; 200],
        });
        assert_eq!(&octets[..3], &[0x13, 0x81, 0x48]);
        assert_eq!(octets.len(), Message::data_segment_len(200));
        assert_eq!(Message::data_segment_len(248), 255);
        let crc = fcs32(&octets[..octets.len() - 4]).to_be_bytes();
        assert_eq!(&octets[octets.len() - 4..], &crc);
    }

    #[test]
    fn every_message_round_trips() {
        assert_eq!(
            round_trip(Message::AckSegment {
                acknowledged_length: 1984
            })[..3],
            [0x20, 0x8F, 0x40]
        );
        assert_eq!(
            round_trip(Message::RefuseBundle {
                reason: RefuseReason::NoResources
            })[0],
            0x32
        );
        assert_eq!(round_trip(Message::Keepalive).len(), 5);
        round_trip(Message::Shutdown {
            reason: Some(ShutdownReason::Busy),
            reconnection_delay: Some(300),
        });
        assert_eq!(
            round_trip(Message::Shutdown {
                reason: None,
                reconnection_delay: None
            })[0],
            0x50
        );
    }

    #[test]
    fn errors() {
        assert_eq!(
            Message::decode(&[0x60], u64::MAX),
            Err(DecodeError::UnknownType(0x60))
        );
        assert_eq!(
            Message::decode(&[0x13, 0x81, 0x48], 100),
            Err(DecodeError::SegmentTooLong {
                length: 200,
                limit: 100
            })
        );
        let mut octets = Message::Keepalive.to_vec();
        octets[2] ^= 0x10;
        assert!(matches!(
            Message::decode(&octets, u64::MAX),
            Err(DecodeError::BadCrc { .. })
        ));
    }
}
