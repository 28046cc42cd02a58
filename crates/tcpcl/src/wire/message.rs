//! The messages of an established TCPCLv4 connection, RFC 9174 sections
//! 4.5 to 6.1: a one-octet Message Type Code, then fixed-width fields.

use super::extension::{decode_list, encode_list};
use super::{length_field, DecodeError, EncodeError, ExtensionItem, Reader};
use super::{RefuseReason, RejectReason, SessTermReason};

/// XFER_SEGMENT / XFER_ACK flag END: the last segment of a transfer
/// (RFC 9174 section 5.2.2, Table 7).
pub const END: u8 = 0x01;
/// XFER_SEGMENT / XFER_ACK flag START: the first segment of a transfer.
pub const START: u8 = 0x02;
/// SESS_TERM flag REPLY: this SESS_TERM acknowledges the peer's (RFC 9174
/// section 6.1, Table 10).
pub const REPLY: u8 = 0x01;

/// Message Type Codes, RFC 9174 section 4.5, Table 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MessageType {
    /// A segment of a transfer (section 5.2.2).
    XferSegment = 0x01,
    /// Acknowledgement of a segment (section 5.2.3).
    XferAck = 0x02,
    /// Refusal of a transfer (section 5.2.4).
    XferRefuse = 0x03,
    /// Keeps an idle session alive (section 5.1.1).
    Keepalive = 0x04,
    /// Session termination (section 6.1).
    SessTerm = 0x05,
    /// Rejection of a message (section 5.1.2).
    MsgReject = 0x06,
    /// Session initialisation (section 4.6).
    SessInit = 0x07,
}

impl MessageType {
    /// The type for a Message Type Code, if assigned.
    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0x01 => MessageType::XferSegment,
            0x02 => MessageType::XferAck,
            0x03 => MessageType::XferRefuse,
            0x04 => MessageType::Keepalive,
            0x05 => MessageType::SessTerm,
            0x06 => MessageType::MsgReject,
            0x07 => MessageType::SessInit,
            _ => return None,
        })
    }

    /// The protocol's name for it.
    pub fn name(self) -> &'static str {
        match self {
            MessageType::XferSegment => "XFER_SEGMENT",
            MessageType::XferAck => "XFER_ACK",
            MessageType::XferRefuse => "XFER_REFUSE",
            MessageType::Keepalive => "KEEPALIVE",
            MessageType::SessTerm => "SESS_TERM",
            MessageType::MsgReject => "MSG_REJECT",
            MessageType::SessInit => "SESS_INIT",
        }
    }
}

/// SESS_INIT, RFC 9174 section 4.6: one entity's session parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessInit {
    /// Keepalive Interval in seconds; 0 asks for no KEEPALIVEs.
    pub keepalive_interval: u16,
    /// Segment MRU: the largest segment data this entity receives.
    pub segment_mru: u64,
    /// Transfer MRU: the largest whole transfer this entity receives.
    pub transfer_mru: u64,
    /// Node ID, a UTF-8 URI (at most 65535 octets).
    pub node_id: String,
    /// Session Extension Items (section 4.8).
    pub extensions: Vec<ExtensionItem>,
}

/// SESS_TERM, RFC 9174 section 6.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessTerm {
    /// Message Flags, reserved bits included ([`REPLY`]).
    pub flags: u8,
    /// Reason Code.
    pub reason: SessTermReason,
}

impl SessTerm {
    /// Whether this acknowledges a SESS_TERM from the peer.
    pub fn is_reply(&self) -> bool {
        self.flags & REPLY != 0
    }
}

/// XFER_SEGMENT, RFC 9174 section 5.2.2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XferSegment {
    /// Message Flags, reserved bits included ([`START`], [`END`]).
    pub flags: u8,
    /// Transfer ID.
    pub transfer_id: u64,
    /// Transfer Extension Items; present on the wire only with START.
    pub extensions: Vec<ExtensionItem>,
    /// Data contents.
    pub data: Vec<u8>,
}

impl XferSegment {
    /// Whether this is the first segment of its transfer.
    pub fn is_start(&self) -> bool {
        self.flags & START != 0
    }

    /// Whether this is the last segment of its transfer.
    pub fn is_end(&self) -> bool {
        self.flags & END != 0
    }
}

/// XFER_ACK, RFC 9174 section 5.2.3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XferAck {
    /// Message Flags, copied from the segment acknowledged.
    pub flags: u8,
    /// Transfer ID.
    pub transfer_id: u64,
    /// Acknowledged Length: all data received so far in the transfer.
    pub acknowledged_length: u64,
}

/// XFER_REFUSE, RFC 9174 section 5.2.4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XferRefuse {
    /// Reason Code.
    pub reason: RefuseReason,
    /// Transfer ID.
    pub transfer_id: u64,
}

/// MSG_REJECT, RFC 9174 section 5.1.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsgReject {
    /// Reason Code.
    pub reason: RejectReason,
    /// The Message Header (type code) of the rejected message.
    pub rejected_header: u8,
}

/// A TCPCLv4 message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// SESS_INIT (0x07).
    SessInit(SessInit),
    /// SESS_TERM (0x05).
    SessTerm(SessTerm),
    /// XFER_SEGMENT (0x01).
    XferSegment(XferSegment),
    /// XFER_ACK (0x02).
    XferAck(XferAck),
    /// XFER_REFUSE (0x03).
    XferRefuse(XferRefuse),
    /// KEEPALIVE (0x04), a bare message header.
    Keepalive,
    /// MSG_REJECT (0x06).
    MsgReject(MsgReject),
}

/// How much a receiver accepts before buffering it: a declared length
/// over a limit is an error at once, not a wait for more octets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest XFER_SEGMENT data (the local Segment MRU).
    pub segment_data: u64,
    /// Largest Session or Transfer Extension Items Length.
    pub extension_items: u32,
}

impl Limits {
    /// No limit beyond the fields' widths.
    pub const NONE: Limits = Limits {
        segment_data: u64::MAX,
        extension_items: u32::MAX,
    };
}

/// What [`Message::decode`] found at the start of a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    /// The buffer ends inside a message: wait for more octets.
    Incomplete,
    /// A whole message of `len` octets.
    Message {
        /// The message.
        message: Message,
        /// Its length on the wire.
        len: usize,
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

impl Message {
    /// The message's type.
    pub fn message_type(&self) -> MessageType {
        match self {
            Message::SessInit(_) => MessageType::SessInit,
            Message::SessTerm(_) => MessageType::SessTerm,
            Message::XferSegment(_) => MessageType::XferSegment,
            Message::XferAck(_) => MessageType::XferAck,
            Message::XferRefuse(_) => MessageType::XferRefuse,
            Message::Keepalive => MessageType::Keepalive,
            Message::MsgReject(_) => MessageType::MsgReject,
        }
    }

    /// Decodes the message at the start of `buf`.
    pub fn decode(buf: &[u8], limits: &Limits) -> Result<Decoded, DecodeError> {
        let mut r = Reader::new(buf);
        let code = need!(r.u8());
        let kind = MessageType::from_code(code).ok_or(DecodeError::UnknownType(code))?;
        let message = match kind {
            MessageType::SessInit => {
                let keepalive_interval = need!(r.u16());
                let segment_mru = need!(r.u64());
                let transfer_mru = need!(r.u64());
                let node_id_length = need!(r.u16());
                let node_id = need!(r.bytes(node_id_length.into()));
                let node_id =
                    String::from_utf8(node_id.to_vec()).map_err(|_| DecodeError::NodeIdNotUtf8)?;
                let extensions = need!(extensions(&mut r, "SESS_INIT", limits)?);
                Message::SessInit(SessInit {
                    keepalive_interval,
                    segment_mru,
                    transfer_mru,
                    node_id,
                    extensions,
                })
            }
            MessageType::SessTerm => Message::SessTerm(SessTerm {
                flags: need!(r.u8()),
                reason: SessTermReason::from_code(need!(r.u8())),
            }),
            MessageType::XferSegment => {
                let flags = need!(r.u8());
                let transfer_id = need!(r.u64());
                let extensions = if flags & START != 0 {
                    need!(extensions(&mut r, "XFER_SEGMENT", limits)?)
                } else {
                    Vec::new()
                };
                let data_length = need!(r.u64());
                if data_length > limits.segment_data {
                    return Err(DecodeError::SegmentTooLong {
                        flags,
                        transfer_id,
                        header_len: r.pos,
                        data_length,
                        limit: limits.segment_data,
                    });
                }
                let data_length = need!(usize::try_from(data_length).ok());
                let data = need!(r.bytes(data_length)).to_vec();
                Message::XferSegment(XferSegment {
                    flags,
                    transfer_id,
                    extensions,
                    data,
                })
            }
            MessageType::XferAck => Message::XferAck(XferAck {
                flags: need!(r.u8()),
                transfer_id: need!(r.u64()),
                acknowledged_length: need!(r.u64()),
            }),
            MessageType::XferRefuse => Message::XferRefuse(XferRefuse {
                reason: RefuseReason::from_code(need!(r.u8())),
                transfer_id: need!(r.u64()),
            }),
            MessageType::Keepalive => Message::Keepalive,
            MessageType::MsgReject => Message::MsgReject(MsgReject {
                reason: RejectReason::from_code(need!(r.u8())),
                rejected_header: need!(r.u8()),
            }),
        };
        Ok(Decoded::Message {
            message,
            len: r.pos,
        })
    }

    /// Appends the message's octets to `out`; on error `out` may hold part
    /// of the message.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        out.push(self.message_type() as u8);
        match self {
            Message::SessInit(m) => {
                out.extend(m.keepalive_interval.to_be_bytes());
                out.extend(m.segment_mru.to_be_bytes());
                out.extend(m.transfer_mru.to_be_bytes());
                let length: u16 = length_field("Node ID", m.node_id.len())?;
                out.extend(length.to_be_bytes());
                out.extend(m.node_id.as_bytes());
                encode_list("Session Extension Items", &m.extensions, out)?;
            }
            Message::SessTerm(m) => out.extend([m.flags, m.reason.code()]),
            Message::XferSegment(m) => {
                out.push(m.flags);
                out.extend(m.transfer_id.to_be_bytes());
                if m.is_start() {
                    encode_list("Transfer Extension Items", &m.extensions, out)?;
                } else if !m.extensions.is_empty() {
                    // Only a START segment has the extension fields.
                    return Err(EncodeError {
                        field: "Transfer Extension Items without START",
                        length: m.extensions.len(),
                        bits: 0,
                    });
                }
                out.extend((m.data.len() as u64).to_be_bytes());
                out.extend(&m.data);
            }
            Message::XferAck(m) => {
                out.push(m.flags);
                out.extend(m.transfer_id.to_be_bytes());
                out.extend(m.acknowledged_length.to_be_bytes());
            }
            Message::XferRefuse(m) => {
                out.push(m.reason.code());
                out.extend(m.transfer_id.to_be_bytes());
            }
            Message::Keepalive => {}
            Message::MsgReject(m) => out.extend([m.reason.code(), m.rejected_header]),
        }
        Ok(())
    }

    /// The message's octets.
    pub fn to_vec(&self) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::new();
        self.encode(&mut out)?;
        Ok(out)
    }
}

/// Reads an Extension Items Length and the list, within `limits`;
/// `Ok(None)` when the buffer ends first.
fn extensions(
    r: &mut Reader<'_>,
    message: &'static str,
    limits: &Limits,
) -> Result<Option<Vec<ExtensionItem>>, DecodeError> {
    let Some(length) = r.u32() else {
        return Ok(None);
    };
    if length > limits.extension_items {
        return Err(DecodeError::ExtensionsTooLong {
            message,
            length,
            limit: limits.extension_items,
        });
    }
    let Some(list) = usize::try_from(length).ok().and_then(|n| r.bytes(n)) else {
        return Ok(None);
    };
    decode_list(message, list).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(octets: &[u8]) -> Message {
        match Message::decode(octets, &Limits::NONE) {
            Ok(Decoded::Message { message, len }) if len == octets.len() => message,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sess_init_layout() {
        let init = Message::SessInit(SessInit {
            keepalive_interval: 30,
            segment_mru: 0x1000,
            transfer_mru: 0x10_0000,
            node_id: "dtn://a/".into(),
            extensions: vec![],
        });
        let octets = init.to_vec().unwrap();
        let mut expected = vec![0x07, 0, 30];
        expected.extend(0x1000u64.to_be_bytes());
        expected.extend(0x10_0000u64.to_be_bytes());
        expected.extend([0, 8]);
        expected.extend(b"dtn://a/");
        expected.extend([0, 0, 0, 0]);
        assert_eq!(octets, expected);
        assert_eq!(decode_all(&octets), init);
        for cut in 0..octets.len() {
            assert_eq!(
                Message::decode(&octets[..cut], &Limits::NONE),
                Ok(Decoded::Incomplete)
            );
        }
    }

    #[test]
    fn segment_layout_and_limit() {
        let seg = Message::XferSegment(XferSegment {
            flags: START | END,
            transfer_id: 7,
            extensions: vec![ExtensionItem::transfer_length(3)],
            data: vec![1, 2, 3],
        });
        let octets = seg.to_vec().unwrap();
        assert_eq!(octets.len(), 1 + 1 + 8 + 4 + 13 + 8 + 3);
        assert_eq!(decode_all(&octets), seg);
        let limits = Limits {
            segment_data: 2,
            extension_items: 100,
        };
        assert_eq!(
            Message::decode(&octets[..octets.len() - 3], &limits),
            Err(DecodeError::SegmentTooLong {
                flags: START | END,
                transfer_id: 7,
                header_len: octets.len() - 3,
                data_length: 3,
                limit: 2
            })
        );
        let limits = Limits {
            segment_data: 100,
            extension_items: 12,
        };
        assert!(matches!(
            Message::decode(&octets, &limits),
            Err(DecodeError::ExtensionsTooLong { length: 13, .. })
        ));
    }

    #[test]
    fn a_middle_segment_has_no_extension_fields() {
        let seg = Message::XferSegment(XferSegment {
            flags: 0,
            transfer_id: 1,
            extensions: vec![],
            data: vec![9],
        });
        let octets = seg.to_vec().unwrap();
        assert_eq!(
            octets,
            [1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 9]
        );
        let bad = Message::XferSegment(XferSegment {
            extensions: vec![ExtensionItem::transfer_length(1)],
            ..match seg {
                Message::XferSegment(s) => s,
                _ => unreachable!(),
            }
        });
        assert!(bad.to_vec().is_err());
    }

    #[test]
    fn fixed_messages() {
        for (message, octets) in [
            (Message::Keepalive, vec![0x04]),
            (
                Message::SessTerm(SessTerm {
                    flags: REPLY,
                    reason: SessTermReason::IdleTimeout,
                }),
                vec![0x05, 0x01, 0x01],
            ),
            (
                Message::MsgReject(MsgReject {
                    reason: RejectReason::MessageTypeUnknown,
                    rejected_header: 0x42,
                }),
                vec![0x06, 0x01, 0x42],
            ),
            (
                Message::XferRefuse(XferRefuse {
                    reason: RefuseReason::Completed,
                    transfer_id: 2,
                }),
                vec![0x03, 0x01, 0, 0, 0, 0, 0, 0, 0, 2],
            ),
        ] {
            assert_eq!(message.to_vec().unwrap(), octets);
            assert_eq!(decode_all(&octets), message);
        }
    }

    #[test]
    fn unknown_type_and_bad_node_id() {
        assert_eq!(
            Message::decode(&[0x08], &Limits::NONE),
            Err(DecodeError::UnknownType(0x08))
        );
        assert_eq!(
            Message::decode(&[0x00], &Limits::NONE),
            Err(DecodeError::UnknownType(0x00))
        );
        let mut octets = vec![0x07, 0, 0];
        octets.extend([0; 16]);
        octets.extend([0, 1, 0xff, 0, 0, 0, 0]);
        assert_eq!(
            Message::decode(&octets, &Limits::NONE),
            Err(DecodeError::NodeIdNotUtf8)
        );
    }
}
