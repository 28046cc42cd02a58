//! Header extensions (RFC 5740 section 4.1): EXT_FTI, EXT_CC, EXT_RATE and
//! any other extension carried through unchanged.

use super::{DecodeError, EncodeError};

/// Header Extension Type of EXT_FTI, the FEC Object Transmission
/// Information (RFC 5740 section 4.2.1, RFC 5052 section 5.2).
pub const HET_FTI: u8 = 64;
/// Header Extension Type of EXT_CC, congestion-control feedback
/// (RFC 5740 section 4.2.3, appended to NORM_NACK and NORM_ACK).
pub const HET_CC: u8 = 3;
/// Header Extension Type of EXT_RATE, the sender's current rate
/// (RFC 5740 section 4.2.3, appended to NORM_CMD(CC)).
pub const HET_RATE: u8 = 128;

/// The FEC Object Transmission Information of FEC Encoding ID 5
/// (RFC 5510 section 4.2.3 as NORM carries it in EXT_FTI, HEL = 3).
///
/// libnorm puts the number of parity symbols per block in the last octet,
/// where RFC 5510 names the maximum number of encoding symbols; this crate
/// follows libnorm so the two interoperate (see the crate documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fti {
    /// Transfer length of the object in octets (48 bits).
    pub object_size: u64,
    /// Encoding symbol (segment) length in octets.
    pub segment_size: u16,
    /// Maximum source block length (source symbols per block).
    pub max_block_len: u8,
    /// Parity symbols per block the sender can produce.
    pub num_parity: u8,
}

/// Largest object size an EXT_FTI can carry (48 bits).
pub const MAX_OBJECT_SIZE: u64 = (1 << 48) - 1;

/// The content of EXT_CC (RFC 5740 section 4.2.3, "NORM-CC Feedback
/// Header Extension"), with libnorm's extra 16 bits of loss precision in
/// the otherwise reserved last field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CcFeedback {
    /// The `cc_sequence` of the NORM_CMD(CC) this answers.
    pub cc_sequence: u16,
    /// CC flags ([`cc_flags`]).
    pub flags: u8,
    /// The receiver's quantised RTT estimate.
    pub rtt: u8,
    /// Loss event fraction, quantised to 16 bits (`p * 65535`).
    pub loss: u16,
    /// The receiver's calculated rate, quantised ([`super::quantize_rate`]).
    pub rate: u16,
    /// Low 16 bits of a 32-bit loss fraction (libnorm; zero otherwise).
    pub loss_ex: u16,
}

/// The `cc_flags` bits of EXT_CC and of NORM_CMD(CC) node entries
/// (RFC 5740 section 4.2.3).
pub mod cc_flags {
    /// The receiver is the current limiting receiver.
    pub const CLR: u8 = 0x01;
    /// The receiver is a potential limiting receiver.
    pub const PLR: u8 = 0x02;
    /// The RTT value is a measurement, not an initial guess.
    pub const RTT: u8 = 0x04;
    /// The sender (or receiver) is in slow start.
    pub const START: u8 = 0x08;
    /// The receiver is leaving the group.
    pub const LEAVE: u8 = 0x10;
}

/// One header extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Extension {
    /// EXT_FTI for FEC Encoding ID 5.
    Fti(Fti),
    /// EXT_CC, receiver congestion-control feedback.
    Cc(CcFeedback),
    /// EXT_RATE: the sender's current rate, quantised.
    Rate {
        /// The quantised send rate ([`super::quantize_rate`]).
        send_rate: u16,
    },
    /// Any other extension, kept as octets after the HET (and HEL).
    Other {
        /// Header Extension Type.
        het: u8,
        /// Content: 3 octets for HET ≥ 128, otherwise 4·HEL − 2.
        content: Vec<u8>,
    },
}

impl Extension {
    /// Encoded length in octets.
    pub fn len(&self) -> usize {
        match self {
            Extension::Fti(_) | Extension::Cc(_) => 12,
            Extension::Rate { .. } => 4,
            Extension::Other { het, content } if *het >= 128 => 1 + content.len(),
            Extension::Other { content, .. } => 2 + content.len(),
        }
    }

    /// Whether the encoding is empty (never: every extension has a HET).
    pub fn is_empty(&self) -> bool {
        false
    }

    pub(crate) fn encode(&self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        match self {
            Extension::Fti(f) => {
                if f.object_size > MAX_OBJECT_SIZE {
                    return Err(EncodeError::ObjectTooLarge(f.object_size));
                }
                out.extend_from_slice(&[HET_FTI, 3]);
                out.extend_from_slice(&f.object_size.to_be_bytes()[2..]);
                out.extend_from_slice(&f.segment_size.to_be_bytes());
                out.extend_from_slice(&[f.max_block_len, f.num_parity]);
            }
            Extension::Cc(c) => {
                out.extend_from_slice(&[HET_CC, 3]);
                out.extend_from_slice(&c.cc_sequence.to_be_bytes());
                out.extend_from_slice(&[c.flags, c.rtt]);
                out.extend_from_slice(&c.loss.to_be_bytes());
                out.extend_from_slice(&c.rate.to_be_bytes());
                out.extend_from_slice(&c.loss_ex.to_be_bytes());
            }
            Extension::Rate { send_rate } => {
                out.extend_from_slice(&[HET_RATE, 0]);
                out.extend_from_slice(&send_rate.to_be_bytes());
            }
            Extension::Other { het, content } => {
                if *het >= 128 {
                    if content.len() != 3 {
                        return Err(EncodeError::BadExtension(*het));
                    }
                    out.push(*het);
                } else {
                    let total = content.len() + 2;
                    if !total.is_multiple_of(4) || total / 4 > 255 {
                        return Err(EncodeError::BadExtension(*het));
                    }
                    out.extend_from_slice(&[*het, (total / 4) as u8]);
                }
                out.extend_from_slice(content);
            }
        }
        Ok(())
    }

    /// Decodes the extensions that fill `bytes` (the header between the
    /// base header and `hdr_len`).
    pub(crate) fn decode_all(mut bytes: &[u8]) -> Result<Vec<Extension>, DecodeError> {
        let mut exts = Vec::new();
        while let Some(&het) = bytes.first() {
            let len = if het >= 128 {
                4
            } else {
                let hel = *bytes.get(1).ok_or(DecodeError::BadExtension(het))?;
                usize::from(hel) * 4
            };
            if len == 0 || len > bytes.len() {
                return Err(DecodeError::BadExtension(het));
            }
            let (this, rest) = bytes.split_at(len);
            exts.push(Extension::decode(this));
            bytes = rest;
        }
        Ok(exts)
    }

    fn decode(b: &[u8]) -> Extension {
        let be16 = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
        match (b[0], b.len()) {
            (HET_FTI, 12) => Extension::Fti(Fti {
                object_size: u64::from_be_bytes([0, 0, b[2], b[3], b[4], b[5], b[6], b[7]]),
                segment_size: be16(8),
                max_block_len: b[10],
                num_parity: b[11],
            }),
            (HET_CC, 12) => Extension::Cc(CcFeedback {
                cc_sequence: be16(2),
                flags: b[4],
                rtt: b[5],
                loss: be16(6),
                rate: be16(8),
                loss_ex: be16(10),
            }),
            (HET_RATE, 4) => Extension::Rate { send_rate: be16(2) },
            (het, _) if het >= 128 => Extension::Other {
                het,
                content: b[1..].to_vec(),
            },
            (het, _) => Extension::Other {
                het,
                content: b[2..].to_vec(),
            },
        }
    }
}
