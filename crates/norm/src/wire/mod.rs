//! NORM message formats (RFC 5740 section 4) for FEC Encoding ID 5
//! (RFC 5510 section 5: Reed-Solomon over GF(2^8)), apart from any
//! protocol logic. [`Packet::decode`] is strict (every length, form and
//! `fec_id` is checked) and never panics; [`Packet::encode`] computes
//! `hdr_len` and refuses what would not decode.

mod ext;
mod quantize;
mod repair;

pub use ext::{cc_flags, CcFeedback, Extension, Fti, HET_CC, HET_FTI, HET_RATE, MAX_OBJECT_SIZE};
pub use quantize::{
    quantize_gsize, quantize_loss, quantize_rate, quantize_rtt, unquantize_gsize, unquantize_loss,
    unquantize_rate, unquantize_rtt,
};
pub use repair::{repair_flags, RepairForm, RepairItem, RepairRequest, ITEM_LEN};

use thiserror::Error;

/// The NORM protocol version of RFC 5740.
pub const VERSION: u8 = 1;
/// FEC Encoding ID 5: fully specified Reed-Solomon over GF(2^8)
/// (RFC 5510 section 5).
pub const FEC_ID_RS8: u8 = 5;

/// A NormNodeId (RFC 5740 section 4.1).
pub type NodeId = u32;
/// NORM_NODE_ANY: the wildcard node identifier.
pub const NODE_ANY: NodeId = 0xffff_ffff;

/// Why octets are not a NORM message this crate accepts.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// Fewer octets than the message's fixed header.
    #[error("message truncated: {0} octets")]
    Truncated(usize),
    /// The version field is not 1.
    #[error("unsupported NORM version {0}")]
    BadVersion(u8),
    /// A message type this crate does not know (NORM_REPORT included).
    #[error("unsupported message type {0}")]
    BadType(u8),
    /// A NORM_CMD flavor that RFC 5740 does not define.
    #[error("unknown NORM_CMD flavor {0}")]
    BadFlavor(u8),
    /// `hdr_len` is shorter than the fixed header or beyond the message.
    #[error("header length {0} octets does not fit the message")]
    BadHeaderLength(usize),
    /// An FEC Encoding ID other than 5.
    #[error("unsupported FEC encoding ID {0} (only 5, RFC 5510 Reed-Solomon, is implemented)")]
    UnsupportedFecId(u8),
    /// A header extension overruns the header or has HEL 0.
    #[error("malformed header extension (HET {0})")]
    BadExtension(u8),
    /// A repair request is malformed.
    #[error("malformed repair request")]
    BadRepairRequest,
    /// A list (node IDs, object IDs, CC nodes) with a trailing partial entry,
    /// or a payload where the message has none.
    #[error("malformed payload")]
    BadPayload,
}

/// Why a message cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EncodeError {
    /// The header with its extensions exceeds 1020 octets.
    #[error("header too long: {0} octets")]
    HeaderTooLong(usize),
    /// An extension's content length is not allowed by its HET.
    #[error("malformed header extension (HET {0})")]
    BadExtension(u8),
    /// A source block number beyond 24 bits.
    #[error("source block number {0} exceeds 24 bits")]
    BlockNumberTooLarge(u32),
    /// An object size beyond 48 bits.
    #[error("object size {0} exceeds 48 bits")]
    ObjectTooLarge(u64),
    /// An empty repair request, an odd number of range items, or too many.
    #[error("malformed repair request")]
    BadRepairRequest,
    /// [`AckContent::Other`] with the type of a defined ACK.
    #[error("ACK type {0} has its own content variant")]
    BadAckType(u8),
    /// The message exceeds 65535 octets.
    #[error("message too long: {0} octets")]
    TooLong(usize),
}

/// The FEC Payload ID of FEC Encoding ID 5 (RFC 5510 section 5.1): a
/// 24-bit source block number and an 8-bit encoding symbol ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PayloadId {
    /// Source Block Number (24 bits).
    pub sbn: u32,
    /// Encoding Symbol ID: source symbols first, then parity.
    pub esi: u8,
}

impl PayloadId {
    /// The largest source block number.
    pub const MAX_SBN: u32 = 0x00ff_ffff;

    fn decode(b: [u8; 4]) -> PayloadId {
        PayloadId {
            sbn: u32::from_be_bytes([0, b[0], b[1], b[2]]),
            esi: b[3],
        }
    }

    fn encode(&self) -> Result<[u8; 4], EncodeError> {
        if self.sbn > Self::MAX_SBN {
            return Err(EncodeError::BlockNumberTooLarge(self.sbn));
        }
        Ok(((self.sbn << 8) | u32::from(self.esi)).to_be_bytes())
    }
}

/// A time as NORM carries it (`send_time`, `grtt_response`): seconds and
/// microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timestamp {
    /// Seconds.
    pub sec: u32,
    /// Microseconds.
    pub usec: u32,
}

impl Timestamp {
    /// The timestamp of `micros` microseconds (seconds wrap at 2^32).
    pub fn from_micros(micros: u64) -> Timestamp {
        Timestamp {
            sec: (micros / 1_000_000) as u32,
            usec: (micros % 1_000_000) as u32,
        }
    }

    /// Microseconds this timestamp stands for.
    pub fn as_micros(&self) -> u64 {
        u64::from(self.sec) * 1_000_000 + u64::from(self.usec)
    }

    /// Whether this is the all-zero timestamp ("no value").
    pub fn is_zero(&self) -> bool {
        self.sec == 0 && self.usec == 0
    }

    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.sec.to_be_bytes());
        out.extend_from_slice(&self.usec.to_be_bytes());
    }

    fn get(b: &[u8]) -> Timestamp {
        Timestamp {
            sec: be32(&b[0..4]),
            usec: be32(&b[4..8]),
        }
    }
}

/// The fields every sender message carries after the common header
/// (RFC 5740 sections 4.2): instance, quantised GRTT, backoff factor and
/// quantised group size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SenderFields {
    /// `instance_id`: changes when the sender restarts.
    pub instance_id: u16,
    /// `grtt`: the sender's quantised GRTT ([`quantize_rtt`]).
    pub grtt: u8,
    /// `backoff`: the NACK backoff factor K (4 bits).
    pub backoff: u8,
    /// `gsize`: the quantised group-size estimate (4 bits).
    pub gsize: u8,
}

/// The `flags` of NORM_DATA and NORM_INFO (RFC 5740 section 4.2.1).
pub mod object_flags {
    /// The message is a repair transmission.
    pub const REPAIR: u8 = 0x01;
    /// (Reserved in RFC 5740.)
    pub const EXPLICIT: u8 = 0x02;
    /// The object has NORM_INFO.
    pub const INFO: u8 = 0x04;
    /// The object is not repaired.
    pub const UNRELIABLE: u8 = 0x08;
    /// The object is a file.
    pub const FILE: u8 = 0x10;
    /// The object is a stream.
    pub const STREAM: u8 = 0x20;
}

/// NORM_DATA (RFC 5740 section 4.2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data {
    /// Sender fields.
    pub sender: SenderFields,
    /// [`object_flags`] bits.
    pub flags: u8,
    /// The object's NormTransportId.
    pub object_id: u16,
    /// Which symbol this is.
    pub payload_id: PayloadId,
    /// Header extensions (EXT_FTI usually).
    pub extensions: Vec<Extension>,
    /// The encoding symbol.
    pub payload: Vec<u8>,
}

/// NORM_INFO (RFC 5740 section 4.2.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Info {
    /// Sender fields.
    pub sender: SenderFields,
    /// [`object_flags`] bits.
    pub flags: u8,
    /// The object's NormTransportId.
    pub object_id: u16,
    /// Header extensions.
    pub extensions: Vec<Extension>,
    /// The application's information about the object.
    pub info: Vec<u8>,
}

/// An entry of a NORM_CMD(CC) node list (RFC 5740 section 4.2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CcNode {
    /// The receiver.
    pub node_id: NodeId,
    /// [`cc_flags`] bits.
    pub flags: u8,
    /// Quantised RTT the sender measured for it.
    pub rtt: u8,
    /// Quantised rate it reported.
    pub rate: u16,
}

/// The flavors of NORM_CMD (RFC 5740 section 4.2.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// NORM_CMD(FLUSH): the sender's position, optionally a watermark
    /// with the nodes that must acknowledge it.
    Flush {
        /// Object of the position.
        object_id: u16,
        /// Block and symbol of the position.
        payload_id: PayloadId,
        /// Nodes asked for a NORM_ACK(FLUSH) (empty: none).
        acking_nodes: Vec<NodeId>,
    },
    /// NORM_CMD(EOT): the sender is done.
    Eot,
    /// NORM_CMD(SQUELCH): what the sender can no longer repair.
    Squelch {
        /// The oldest object still repairable.
        object_id: u16,
        /// The oldest block and symbol still repairable.
        payload_id: PayloadId,
        /// Further objects no longer repairable.
        invalid_objects: Vec<u16>,
    },
    /// NORM_CMD(CC): GRTT and congestion-control probe.
    Cc {
        /// Sequence number echoed in EXT_CC.
        cc_sequence: u16,
        /// When the sender sent it.
        send_time: Timestamp,
        /// Receivers addressed (CLR, PLRs).
        nodes: Vec<CcNode>,
    },
    /// NORM_CMD(REPAIR_ADV): repairs the sender is about to send.
    RepairAdv {
        /// Flags (0x01: NORM_REPAIR_ADV_FLAG_LIMIT).
        flags: u8,
        /// What will be repaired.
        requests: Vec<RepairRequest>,
    },
    /// NORM_CMD(ACK_REQ): a request for application-defined ACKs.
    AckReq {
        /// ACK type asked for.
        ack_type: u8,
        /// Identifier echoed in the NORM_ACK.
        ack_id: u8,
        /// Nodes asked.
        acking_nodes: Vec<NodeId>,
    },
    /// NORM_CMD(APPLICATION): application content.
    Application {
        /// The content.
        content: Vec<u8>,
    },
}

/// NORM_CMD (RFC 5740 section 4.2.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cmd {
    /// Sender fields.
    pub sender: SenderFields,
    /// Header extensions (EXT_RATE on NORM_CMD(CC)).
    pub extensions: Vec<Extension>,
    /// Flavor and its fields.
    pub command: Command,
}

/// NORM_NACK (RFC 5740 section 4.3.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nack {
    /// The sender whose data is missing.
    pub server_id: NodeId,
    /// That sender's instance.
    pub instance_id: u16,
    /// The last NORM_CMD(CC) `send_time`, advanced by how long it was held.
    pub grtt_response: Timestamp,
    /// Header extensions (EXT_CC in congestion-controlled sessions).
    pub extensions: Vec<Extension>,
    /// What is missing.
    pub requests: Vec<RepairRequest>,
}

/// ACK types (RFC 5740 section 4.3.2).
pub mod ack_type {
    /// Answer to NORM_CMD(CC).
    pub const CC: u8 = 1;
    /// Answer to a NORM_CMD(FLUSH) watermark.
    pub const FLUSH: u8 = 2;
}

/// What a NORM_ACK acknowledges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AckContent {
    /// NORM_ACK(CC): feedback to a NORM_CMD(CC); no payload.
    Cc,
    /// NORM_ACK(FLUSH): the watermark reached.
    Flush {
        /// Object of the watermark.
        object_id: u16,
        /// Block and symbol of the watermark.
        payload_id: PayloadId,
    },
    /// Any other type, with its payload.
    Other {
        /// The ACK type.
        ack_type: u8,
        /// The payload.
        payload: Vec<u8>,
    },
}

/// NORM_ACK (RFC 5740 section 4.3.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    /// The sender acknowledged.
    pub server_id: NodeId,
    /// That sender's instance.
    pub instance_id: u16,
    /// Identifier of the request answered.
    pub ack_id: u8,
    /// As in [`Nack::grtt_response`].
    pub grtt_response: Timestamp,
    /// Header extensions (EXT_CC).
    pub extensions: Vec<Extension>,
    /// Type and content.
    pub content: AckContent,
}

/// A NORM message by type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// NORM_INFO.
    Info(Info),
    /// NORM_DATA.
    Data(Data),
    /// NORM_CMD.
    Cmd(Cmd),
    /// NORM_NACK.
    Nack(Nack),
    /// NORM_ACK.
    Ack(Ack),
}

/// A NORM message with its common header (RFC 5740 section 4.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// `sequence`: per-sender message sequence number (loss estimation).
    pub sequence: u16,
    /// `source_id`: the originating node.
    pub source_id: NodeId,
    /// The message.
    pub message: Message,
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn payload_id_at(b: &[u8]) -> PayloadId {
    PayloadId::decode([b[0], b[1], b[2], b[3]])
}

fn node_list(b: &[u8]) -> Result<Vec<NodeId>, DecodeError> {
    if !b.len().is_multiple_of(4) {
        return Err(DecodeError::BadPayload);
    }
    Ok(b.chunks_exact(4).map(be32).collect())
}

fn fec_id(id: u8) -> Result<(), DecodeError> {
    if id == FEC_ID_RS8 {
        Ok(())
    } else {
        Err(DecodeError::UnsupportedFecId(id))
    }
}

fn sender_fields(b: &[u8]) -> SenderFields {
    SenderFields {
        instance_id: be16(&b[8..10]),
        grtt: b[10],
        backoff: b[11] >> 4,
        gsize: b[11] & 0x0f,
    }
}

impl Packet {
    /// The NORM message type code (RFC 5740 section 4.1).
    pub fn type_code(&self) -> u8 {
        match self.message {
            Message::Info(_) => 1,
            Message::Data(_) => 2,
            Message::Cmd(_) => 3,
            Message::Nack(_) => 4,
            Message::Ack(_) => 5,
        }
    }

    /// Decodes one datagram.
    pub fn decode(b: &[u8]) -> Result<Packet, DecodeError> {
        if b.len() < 8 {
            return Err(DecodeError::Truncated(b.len()));
        }
        if b[0] >> 4 != VERSION {
            return Err(DecodeError::BadVersion(b[0] >> 4));
        }
        let msg_type = b[0] & 0x0f;
        let hdr_len = usize::from(b[1]) * 4;
        // The fixed ("base") header length by type and flavor.
        let base = match msg_type {
            1 => 16,
            2 => 20,
            3 => {
                let flavor = *b.get(12).ok_or(DecodeError::Truncated(b.len()))?;
                match flavor {
                    1 | 3 => 20,
                    2 | 5 | 6 | 7 => 16,
                    4 => 24,
                    f => return Err(DecodeError::BadFlavor(f)),
                }
            }
            4 | 5 => 24,
            t => return Err(DecodeError::BadType(t)),
        };
        if b.len() < base {
            return Err(DecodeError::Truncated(b.len()));
        }
        if hdr_len < base || hdr_len > b.len() {
            return Err(DecodeError::BadHeaderLength(hdr_len));
        }
        let extensions = Extension::decode_all(&b[base..hdr_len])?;
        let payload = &b[hdr_len..];
        let message = match msg_type {
            1 | 2 => {
                fec_id(b[13])?;
                let sender = sender_fields(b);
                let flags = b[12];
                let object_id = be16(&b[14..16]);
                if msg_type == 1 {
                    Message::Info(Info {
                        sender,
                        flags,
                        object_id,
                        extensions,
                        info: payload.to_vec(),
                    })
                } else {
                    Message::Data(Data {
                        sender,
                        flags,
                        object_id,
                        payload_id: payload_id_at(&b[16..20]),
                        extensions,
                        payload: payload.to_vec(),
                    })
                }
            }
            3 => Message::Cmd(Cmd {
                sender: sender_fields(b),
                extensions,
                command: Self::decode_command(b, payload)?,
            }),
            4 => Message::Nack(Nack {
                server_id: be32(&b[8..12]),
                instance_id: be16(&b[12..14]),
                grtt_response: Timestamp::get(&b[16..24]),
                extensions,
                requests: RepairRequest::decode_all(payload)?,
            }),
            _ => {
                let content = match b[14] {
                    ack_type::CC if payload.is_empty() => AckContent::Cc,
                    ack_type::CC => return Err(DecodeError::BadPayload),
                    ack_type::FLUSH => {
                        if payload.len() != 8 {
                            return Err(DecodeError::BadPayload);
                        }
                        fec_id(payload[0])?;
                        AckContent::Flush {
                            object_id: be16(&payload[2..4]),
                            payload_id: payload_id_at(&payload[4..8]),
                        }
                    }
                    t => AckContent::Other {
                        ack_type: t,
                        payload: payload.to_vec(),
                    },
                };
                Message::Ack(Ack {
                    server_id: be32(&b[8..12]),
                    instance_id: be16(&b[12..14]),
                    ack_id: b[15],
                    grtt_response: Timestamp::get(&b[16..24]),
                    extensions,
                    content,
                })
            }
        };
        Ok(Packet {
            sequence: be16(&b[2..4]),
            source_id: be32(&b[4..8]),
            message,
        })
    }

    fn decode_command(b: &[u8], payload: &[u8]) -> Result<Command, DecodeError> {
        Ok(match b[12] {
            1 | 3 => {
                fec_id(b[13])?;
                let object_id = be16(&b[14..16]);
                let payload_id = payload_id_at(&b[16..20]);
                if b[12] == 1 {
                    Command::Flush {
                        object_id,
                        payload_id,
                        acking_nodes: node_list(payload)?,
                    }
                } else {
                    if !payload.len().is_multiple_of(2) {
                        return Err(DecodeError::BadPayload);
                    }
                    Command::Squelch {
                        object_id,
                        payload_id,
                        invalid_objects: payload.chunks_exact(2).map(be16).collect(),
                    }
                }
            }
            2 if payload.is_empty() => Command::Eot,
            4 => {
                if !payload.len().is_multiple_of(8) {
                    return Err(DecodeError::BadPayload);
                }
                Command::Cc {
                    cc_sequence: be16(&b[14..16]),
                    send_time: Timestamp::get(&b[16..24]),
                    nodes: payload
                        .chunks_exact(8)
                        .map(|n| CcNode {
                            node_id: be32(&n[0..4]),
                            flags: n[4],
                            rtt: n[5],
                            rate: be16(&n[6..8]),
                        })
                        .collect(),
                }
            }
            5 => Command::RepairAdv {
                flags: b[13],
                requests: RepairRequest::decode_all(payload)?,
            },
            6 => Command::AckReq {
                ack_type: b[14],
                ack_id: b[15],
                acking_nodes: node_list(payload)?,
            },
            7 => Command::Application {
                content: payload.to_vec(),
            },
            _ => return Err(DecodeError::BadPayload),
        })
    }

    /// Encodes the message, computing `hdr_len`.
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(&[(VERSION << 4) | self.type_code(), 0]);
        out.extend_from_slice(&self.sequence.to_be_bytes());
        out.extend_from_slice(&self.source_id.to_be_bytes());
        let put_sender = |out: &mut Vec<u8>, s: &SenderFields| {
            out.extend_from_slice(&s.instance_id.to_be_bytes());
            out.push(s.grtt);
            out.push((s.backoff << 4) | (s.gsize & 0x0f));
        };
        let (extensions, payload): (&[Extension], Vec<u8>) = match &self.message {
            Message::Info(i) => {
                put_sender(&mut out, &i.sender);
                out.extend_from_slice(&[i.flags, FEC_ID_RS8]);
                out.extend_from_slice(&i.object_id.to_be_bytes());
                (&i.extensions, i.info.clone())
            }
            Message::Data(d) => {
                put_sender(&mut out, &d.sender);
                out.extend_from_slice(&[d.flags, FEC_ID_RS8]);
                out.extend_from_slice(&d.object_id.to_be_bytes());
                out.extend_from_slice(&d.payload_id.encode()?);
                (&d.extensions, d.payload.clone())
            }
            Message::Cmd(c) => {
                put_sender(&mut out, &c.sender);
                let payload = Self::encode_command(&c.command, &mut out)?;
                (&c.extensions, payload)
            }
            Message::Nack(n) => {
                out.extend_from_slice(&n.server_id.to_be_bytes());
                out.extend_from_slice(&n.instance_id.to_be_bytes());
                out.extend_from_slice(&[0, 0]);
                n.grtt_response.put(&mut out);
                let mut payload = Vec::new();
                for r in &n.requests {
                    r.encode(&mut payload)?;
                }
                (&n.extensions, payload)
            }
            Message::Ack(a) => {
                out.extend_from_slice(&a.server_id.to_be_bytes());
                out.extend_from_slice(&a.instance_id.to_be_bytes());
                let (t, payload) = match &a.content {
                    AckContent::Cc => (ack_type::CC, Vec::new()),
                    AckContent::Flush {
                        object_id,
                        payload_id,
                    } => {
                        let mut p = vec![FEC_ID_RS8, 0];
                        p.extend_from_slice(&object_id.to_be_bytes());
                        p.extend_from_slice(&payload_id.encode()?);
                        (ack_type::FLUSH, p)
                    }
                    AckContent::Other { ack_type, payload } => {
                        if matches!(*ack_type, ack_type::CC | ack_type::FLUSH) {
                            return Err(EncodeError::BadAckType(*ack_type));
                        }
                        (*ack_type, payload.clone())
                    }
                };
                out.extend_from_slice(&[t, a.ack_id]);
                a.grtt_response.put(&mut out);
                (&a.extensions, payload)
            }
        };
        for e in extensions {
            e.encode(&mut out)?;
        }
        let hdr_len = out.len();
        if hdr_len > 255 * 4 {
            return Err(EncodeError::HeaderTooLong(hdr_len));
        }
        out[1] = (hdr_len / 4) as u8;
        out.extend_from_slice(&payload);
        if out.len() > usize::from(u16::MAX) {
            return Err(EncodeError::TooLong(out.len()));
        }
        Ok(out)
    }

    /// Writes the flavor-specific header of a NORM_CMD after the sender
    /// fields and returns its payload.
    fn encode_command(c: &Command, out: &mut Vec<u8>) -> Result<Vec<u8>, EncodeError> {
        let nodes = |list: &[NodeId]| list.iter().flat_map(|n| n.to_be_bytes()).collect();
        Ok(match c {
            Command::Flush {
                object_id,
                payload_id,
                acking_nodes,
            } => {
                out.extend_from_slice(&[1, FEC_ID_RS8]);
                out.extend_from_slice(&object_id.to_be_bytes());
                out.extend_from_slice(&payload_id.encode()?);
                nodes(acking_nodes)
            }
            Command::Eot => {
                out.extend_from_slice(&[2, 0, 0, 0]);
                Vec::new()
            }
            Command::Squelch {
                object_id,
                payload_id,
                invalid_objects,
            } => {
                out.extend_from_slice(&[3, FEC_ID_RS8]);
                out.extend_from_slice(&object_id.to_be_bytes());
                out.extend_from_slice(&payload_id.encode()?);
                invalid_objects
                    .iter()
                    .flat_map(|o| o.to_be_bytes())
                    .collect()
            }
            Command::Cc {
                cc_sequence,
                send_time,
                nodes,
            } => {
                out.extend_from_slice(&[4, 0]);
                out.extend_from_slice(&cc_sequence.to_be_bytes());
                send_time.put(out);
                let mut p = Vec::with_capacity(8 * nodes.len());
                for n in nodes {
                    p.extend_from_slice(&n.node_id.to_be_bytes());
                    p.extend_from_slice(&[n.flags, n.rtt]);
                    p.extend_from_slice(&n.rate.to_be_bytes());
                }
                p
            }
            Command::RepairAdv { flags, requests } => {
                out.extend_from_slice(&[5, *flags, 0, 0]);
                let mut p = Vec::new();
                for r in requests {
                    r.encode(&mut p)?;
                }
                p
            }
            Command::AckReq {
                ack_type,
                ack_id,
                acking_nodes,
            } => {
                out.extend_from_slice(&[6, 0, *ack_type, *ack_id]);
                nodes(acking_nodes)
            }
            Command::Application { content } => {
                out.extend_from_slice(&[7, 0, 0, 0]);
                content.clone()
            }
        })
    }
}

#[cfg(test)]
mod tests;
