//! The contact header each entity sends when the AX.25 link comes up: the
//! TCPCL version 3 contact header (RFC 7242 section 4.1) followed, as every
//! message of this convergence layer, by a CRC-32.
//!
//! ```text
//! "dtn!" | version (0x03) | flags | keepalive interval (u16, s) |
//! local EID length (SDNV) | local EID | CRC-32
//! ```

use super::sdnv::{self, Sdnv};
use super::{DecodeError, Decoded, CRC_LEN};
use linklab_wire::fcs32::fcs32;

/// The magic that opens a contact header (RFC 7242 section 4.1).
pub const MAGIC: [u8; 4] = *b"dtn!";
/// The protocol version: TCPCL version 3, from which the AX.25 CL derives.
pub const VERSION: u8 = 0x03;
/// Contact header flag: request acknowledgement of bundle segments
/// (RFC 7242 section 4.1, Table 2).
pub const REQUEST_ACK: u8 = 0x01;
/// Contact header flag: request enabling of reactive fragmentation.
pub const REACTIVE_FRAGMENTATION: u8 = 0x02;
/// Contact header flag: support bundle refusal.
pub const BUNDLE_REFUSAL: u8 = 0x04;

/// A contact header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContactHeader {
    /// The flags ([`REQUEST_ACK`], [`REACTIVE_FRAGMENTATION`],
    /// [`BUNDLE_REFUSAL`]; others reserved).
    pub flags: u8,
    /// Keepalive interval, seconds; 0: no keepalives.
    pub keepalive_interval: u16,
    /// The sender's endpoint ID (its node ID), UTF-8.
    pub local_eid: String,
}

impl ContactHeader {
    /// Decodes the contact header at the start of `buf`; `max_eid` bounds
    /// the EID length accepted before buffering it.
    pub fn decode(buf: &[u8], max_eid: usize) -> Result<Decoded<ContactHeader>, DecodeError> {
        let fixed = MAGIC.len() + 4;
        let head = &buf[..buf.len().min(fixed)];
        if head[..head.len().min(4)] != MAGIC[..head.len().min(4)] {
            return Err(DecodeError::BadMagic);
        }
        if let Some(&version) = head.get(4) {
            if version != VERSION {
                return Err(DecodeError::BadVersion(version));
            }
        }
        if buf.len() < fixed {
            return Ok(Decoded::Incomplete);
        }
        let flags = buf[5];
        let keepalive_interval = u16::from_be_bytes([buf[6], buf[7]]);
        let (eid_len, n) = match sdnv::decode(&buf[fixed..]) {
            Sdnv::Incomplete => return Ok(Decoded::Incomplete),
            Sdnv::Overflow => return Err(DecodeError::SdnvOverflow),
            Sdnv::Value(value, n) => (value, n),
        };
        let eid_len = usize::try_from(eid_len)
            .ok()
            .filter(|&l| l <= max_eid)
            .ok_or(DecodeError::EidTooLong {
                length: eid_len,
                limit: max_eid,
            })?;
        let body = fixed + n + eid_len;
        let Some(crc) = buf.get(body..body + CRC_LEN) else {
            return Ok(Decoded::Incomplete);
        };
        super::check_crc(&buf[..body], crc)?;
        let local_eid = String::from_utf8(buf[fixed + n..body].to_vec())
            .map_err(|_| DecodeError::EidNotUtf8)?;
        Ok(Decoded::Message {
            message: ContactHeader {
                flags,
                keepalive_interval,
                local_eid,
            },
            len: body + CRC_LEN,
        })
    }

    /// The header's octets, CRC-32 included.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.push(VERSION);
        out.push(self.flags);
        out.extend(self.keepalive_interval.to_be_bytes());
        sdnv::encode(self.local_eid.len() as u64, &mut out);
        out.extend(self.local_eid.as_bytes());
        out.extend(fcs32(&out).to_be_bytes());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_and_round_trip() {
        let header = ContactHeader {
            flags: REQUEST_ACK | REACTIVE_FRAGMENTATION,
            keepalive_interval: 0,
            local_eid: "ipn:1.0".into(),
        };
        let octets = header.encode();
        assert_eq!(&octets[..10], b"dtn!\x03\x03\x00\x00\x07i");
        assert_eq!(octets.len(), 4 + 1 + 1 + 2 + 1 + 7 + 4);
        let decoded = ContactHeader::decode(&octets, 64).unwrap();
        assert_eq!(
            decoded,
            Decoded::Message {
                message: header,
                len: octets.len()
            }
        );
        for cut in 0..octets.len() {
            assert_eq!(
                ContactHeader::decode(&octets[..cut], 64),
                Ok(Decoded::Incomplete)
            );
        }
    }

    #[test]
    fn refusals() {
        assert_eq!(
            ContactHeader::decode(b"dtx", 64),
            Err(DecodeError::BadMagic)
        );
        assert_eq!(
            ContactHeader::decode(b"dtn!\x04", 64),
            Err(DecodeError::BadVersion(4))
        );
        let mut octets = ContactHeader {
            flags: 0,
            keepalive_interval: 0,
            local_eid: "ipn:1.0".into(),
        }
        .encode();
        assert!(matches!(
            ContactHeader::decode(&octets, 3),
            Err(DecodeError::EidTooLong {
                length: 7,
                limit: 3
            })
        ));
        octets[10] ^= 1;
        assert!(matches!(
            ContactHeader::decode(&octets, 64),
            Err(DecodeError::BadCrc { .. })
        ));
    }
}
