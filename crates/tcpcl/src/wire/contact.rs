//! The contact header, RFC 9174 section 4.2.

use thiserror::Error;

/// The magic string "dtn!" that opens every contact header.
pub const MAGIC: [u8; 4] = *b"dtn!";

/// The protocol version of this specification.
pub const VERSION: u8 = 4;

/// Contact header flag CAN_TLS (RFC 9174 section 4.2, Table 1): the
/// sender is able to use TLS. The other bits are reserved: sent as 0,
/// ignored on receipt.
pub const CAN_TLS: u8 = 0x01;

/// The contact header each entity sends once, first thing on the TCP
/// connection (RFC 9174 section 4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContactHeader {
    /// The sender's protocol version (4 for RFC 9174).
    pub version: u8,
    /// The Contact Header Flags octet, reserved bits included.
    pub flags: u8,
}

/// Why octets are not a contact header.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ContactError {
    /// The first four octets are not "dtn!": the peer does not speak
    /// TCPCL, and RFC 9174 section 4.3 has the connection closed.
    #[error("the peer's first octets {0:02x?} are not the TCPCL magic \"dtn!\"")]
    BadMagic(Vec<u8>),
}

impl ContactHeader {
    /// Its length on the wire.
    pub const LEN: usize = 6;

    /// A version-4 contact header; CAN_TLS as given.
    pub fn new(can_tls: bool) -> Self {
        ContactHeader {
            version: VERSION,
            flags: if can_tls { CAN_TLS } else { 0 },
        }
    }

    /// Whether the sender can use TLS.
    pub fn can_tls(&self) -> bool {
        self.flags & CAN_TLS != 0
    }

    /// Decodes a contact header from the start of `buf`: `Ok(None)` while
    /// fewer than six octets have come, but a wrong magic is an error as
    /// soon as its first wrong octet is there.
    pub fn decode(buf: &[u8]) -> Result<Option<ContactHeader>, ContactError> {
        let seen = buf.len().min(MAGIC.len());
        if buf[..seen] != MAGIC[..seen] {
            return Err(ContactError::BadMagic(buf[..seen].to_vec()));
        }
        Ok(match buf {
            [_, _, _, _, version, flags, ..] => Some(ContactHeader {
                version: *version,
                flags: *flags,
            }),
            _ => None,
        })
    }

    /// The six octets on the wire.
    pub fn encode(&self) -> [u8; Self::LEN] {
        let [a, b, c, d] = MAGIC;
        [a, b, c, d, self.version, self.flags]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_partial() {
        let header = ContactHeader::new(true);
        let octets = header.encode();
        assert_eq!(octets, [0x64, 0x74, 0x6e, 0x21, 0x04, 0x01]);
        assert_eq!(ContactHeader::decode(&octets), Ok(Some(header)));
        assert_eq!(ContactHeader::decode(&octets[..5]), Ok(None));
        assert!(header.can_tls());
        assert!(!ContactHeader::new(false).can_tls());
    }

    #[test]
    fn wrong_magic_is_seen_early() {
        assert_eq!(
            ContactHeader::decode(b"GE"),
            Err(ContactError::BadMagic(b"GE".to_vec()))
        );
        assert_eq!(ContactHeader::decode(b"dt"), Ok(None));
    }
}
