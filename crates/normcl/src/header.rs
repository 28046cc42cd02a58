//! The bundle object header: what this convergence layer puts in front of
//! each bundle inside its NORM object.
//!
//! NORM carries the object's size in EXT_FTI (RFC 5740 section 4.2.1,
//! RFC 5510 section 4.2.4.1 "Transfer-Length"), so the bundle needs no
//! length of its own: its length is the object size minus this header.
//! The header names the sending node, as TCPCLv4's SESS_INIT does (RFC
//! 9174 section 4.6), so that a receiver can tell a misconfigured peer
//! from the one it expects:
//!
//! ```text
//! octet 0        version, 1
//! octets 1..3    length n of the node ID, big-endian
//! octets 3..3+n  the sender's node ID, UTF-8
//! octets 3+n..   the bundle (at least one octet)
//! ```

use thiserror::Error;

/// The header version this crate writes and reads.
pub const VERSION: u8 = 1;

/// Octets before the node ID.
const FIXED_LEN: usize = 3;

/// Why an object is not a bundle object.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HeaderError {
    /// Shorter than its header says.
    #[error("object of {0} octets is shorter than its header")]
    Truncated(usize),
    /// A version this crate does not know.
    #[error("bundle object header version {0} (this node speaks 1)")]
    Version(u8),
    /// The node ID is not UTF-8.
    #[error("the sender's node ID is not UTF-8")]
    NodeId,
    /// No bundle after the header.
    #[error("no bundle after the header")]
    Empty,
}

/// A bundle object, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleObject<'a> {
    /// The sending node's ID.
    pub node_id: &'a str,
    /// The encoded bundle.
    pub bundle: &'a [u8],
}

impl<'a> BundleObject<'a> {
    /// Octets of the header for `node_id`.
    pub fn header_len(node_id: &str) -> usize {
        FIXED_LEN + node_id.len()
    }

    /// The object: header, then the bundle. Node IDs longer than 65 535
    /// octets are refused by [`crate::Config::validate`].
    pub fn encode(&self) -> Vec<u8> {
        let id = self.node_id.as_bytes();
        let mut out = Vec::with_capacity(FIXED_LEN + id.len() + self.bundle.len());
        out.push(VERSION);
        out.extend_from_slice(&(id.len() as u16).to_be_bytes());
        out.extend_from_slice(id);
        out.extend_from_slice(self.bundle);
        out
    }

    /// Reads an object.
    pub fn decode(object: &'a [u8]) -> Result<BundleObject<'a>, HeaderError> {
        let truncated = HeaderError::Truncated(object.len());
        let (&version, rest) = object.split_first().ok_or(truncated.clone())?;
        if version != VERSION {
            return Err(HeaderError::Version(version));
        }
        let (len, rest) = rest.split_first_chunk::<2>().ok_or(truncated.clone())?;
        let len = usize::from(u16::from_be_bytes(*len));
        if rest.len() < len {
            return Err(truncated);
        }
        let (id, bundle) = rest.split_at(len);
        let node_id = core::str::from_utf8(id).map_err(|_| HeaderError::NodeId)?;
        if bundle.is_empty() {
            return Err(HeaderError::Empty);
        }
        Ok(BundleObject { node_id, bundle })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let o = BundleObject {
            node_id: "ipn:2.0",
            bundle: &[0x9f, 1, 2, 0xff],
        };
        let bytes = o.encode();
        assert_eq!(bytes.len(), BundleObject::header_len("ipn:2.0") + 4);
        assert_eq!(&bytes[..3], &[1, 0, 7]);
        assert_eq!(BundleObject::decode(&bytes), Ok(o));
    }

    #[test]
    fn malformed_objects_are_refused() {
        assert_eq!(BundleObject::decode(&[]), Err(HeaderError::Truncated(0)));
        assert_eq!(
            BundleObject::decode(&[2, 0, 0, 1]),
            Err(HeaderError::Version(2))
        );
        assert_eq!(
            BundleObject::decode(&[1, 0, 5, b'a']),
            Err(HeaderError::Truncated(4))
        );
        assert_eq!(
            BundleObject::decode(&[1, 0, 1, 0xff, 1]),
            Err(HeaderError::NodeId)
        );
        assert_eq!(
            BundleObject::decode(&[1, 0, 1, b'a']),
            Err(HeaderError::Empty)
        );
    }
}
