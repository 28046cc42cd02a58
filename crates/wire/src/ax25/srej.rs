//! The information field of a multi-selective-reject SREJ: the further
//! N(R)s of an SREJ response when the "SREJ multiframe" HDLC optional
//! function (function 3B, bit 21 of the XID HDLC Optional Functions
//! parameter, AX.25 v2.2 fig. 4.5) is in use.
//!
//! AX.25 v2.2 (4.3.2.4: "Request Single or Multiple Frame Repeat") names
//! the function but defines no format; it comes from HDLC (ISO/IEC 13239,
//! multi-selective reject) as Dire Wolf 1.5+ implements it (ax25_link.c).
//! The control field's N(R) is the first frame asked for; each octet of the
//! information field names one more, in transmission order:
//!
//! ```text
//! modulo 8:    bits 5-7 N(R), bits 0-4 zero      (as in a modulo-8 control octet)
//! modulo 128:  bits 1-7 N(R), bit 0 span bit     (as in a modulo-128 control field's 2nd octet)
//! ```
//!
//! Modulo 128 only, two adjacent octets with the span bit set name a span:
//! the first and the last N(R) of a run of frames, inclusive, counted
//! modulo 128. Modulo 8 has no room for a span bit. Dire Wolf sends single
//! N(R)s only, and reads a span octet as a single N(R).

use thiserror::Error;

use crate::control::Modulus;

/// The span bit of a modulo-128 octet.
const SPAN_BIT: u8 = 0x01;
/// The bits of a modulo-8 octet that carry no N(R) and must be 0.
const MOD8_RESERVED: u8 = 0x1F;

/// Why a multi-SREJ information field cannot be decoded or encoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SrejInfoError {
    /// A modulo-8 octet with any of bits 0-4 set.
    #[error("SREJ information field octet {position} is 0x{octet:02X}; in modulo 8 its bits 0-4 must be 0")]
    ReservedBitsSet {
        /// Octet position, counting from 1.
        position: usize,
        /// The octet as received.
        octet: u8,
    },
    /// A modulo-128 octet with the span bit set that has no partner
    /// (the next octet is missing or is a single N(R)).
    #[error("SREJ information field octet {position} starts a span that has no last N(R)")]
    UnpairedSpan {
        /// Octet position, counting from 1.
        position: usize,
    },
    /// A span asked for in modulo 8, which cannot encode one.
    #[error("a span of N(R)s cannot be sent in modulo 8")]
    SpanInModulo8,
    /// An N(R) outside the modulus.
    #[error("N(R) {nr} is out of range for {modulus}")]
    SequenceOutOfRange {
        /// The N(R) given.
        nr: u8,
        /// The modulus in force.
        modulus: Modulus,
    },
}

/// One request of a multi-SREJ information field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SrejRequest {
    /// Retransmit the I frame with N(S) = this N(R).
    Single(u8),
    /// Retransmit the I frames with N(S) from `first` to `last` inclusive,
    /// counted modulo 128 (modulo 128 only).
    Span {
        /// The first N(R) of the span.
        first: u8,
        /// The last N(R) of the span.
        last: u8,
    },
}

/// The further N(R)s of a multi-SREJ response, after the one in its control
/// field (AX.25 v2.2 4.3.2.4 and fig. 4.5 function 3B; format as in the
/// module documentation). Empty for a plain SREJ.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct MultiSrejInfo {
    /// The requests in transmission order.
    pub requests: Vec<SrejRequest>,
}

impl MultiSrejInfo {
    /// Single N(R)s, in the order given.
    pub fn singles(nrs: impl IntoIterator<Item = u8>) -> Self {
        MultiSrejInfo {
            requests: nrs.into_iter().map(SrejRequest::Single).collect(),
        }
    }

    /// Decodes the information field `info` of an SREJ of `modulus`.
    pub fn decode(info: &[u8], modulus: Modulus) -> Result<Self, SrejInfoError> {
        let mut requests = Vec::with_capacity(info.len());
        let mut octets = info.iter().copied().enumerate();
        while let Some((index, octet)) = octets.next() {
            let position = index + 1;
            let request = match modulus {
                Modulus::Mod8 if octet & MOD8_RESERVED != 0 => {
                    return Err(SrejInfoError::ReservedBitsSet { position, octet })
                }
                Modulus::Mod8 => SrejRequest::Single(octet >> 5),
                Modulus::Mod128 if octet & SPAN_BIT == 0 => SrejRequest::Single(octet >> 1),
                Modulus::Mod128 => match octets.next() {
                    Some((_, last)) if last & SPAN_BIT != 0 => SrejRequest::Span {
                        first: octet >> 1,
                        last: last >> 1,
                    },
                    _ => return Err(SrejInfoError::UnpairedSpan { position }),
                },
            };
            requests.push(request);
        }
        Ok(MultiSrejInfo { requests })
    }

    /// Appends the encoded information field to `out`. Fails if an N(R) is
    /// out of range for `modulus`, or on a span in modulo 8.
    pub fn encode_into(&self, modulus: Modulus, out: &mut Vec<u8>) -> Result<(), SrejInfoError> {
        let octet = |nr: u8| match modulus {
            _ if nr >= modulus.value() => Err(SrejInfoError::SequenceOutOfRange { nr, modulus }),
            Modulus::Mod8 => Ok(nr << 5),
            Modulus::Mod128 => Ok(nr << 1),
        };
        for request in &self.requests {
            match *request {
                SrejRequest::Single(nr) => out.push(octet(nr)?),
                SrejRequest::Span { .. } if modulus == Modulus::Mod8 => {
                    return Err(SrejInfoError::SpanInModulo8)
                }
                SrejRequest::Span { first, last } => {
                    out.extend([octet(first)? | SPAN_BIT, octet(last)? | SPAN_BIT]);
                }
            }
        }
        Ok(())
    }

    /// The encoded information field.
    pub fn encode(&self, modulus: Modulus) -> Result<Vec<u8>, SrejInfoError> {
        let mut out = Vec::with_capacity(2 * self.requests.len());
        self.encode_into(modulus, &mut out)?;
        Ok(out)
    }

    /// Every N(R) asked for, in order, spans expanded (modulo 128); the
    /// numbers of a decoded field are always within `modulus`.
    pub fn sequence_numbers(&self, modulus: Modulus) -> impl Iterator<Item = u8> + '_ {
        let m = u16::from(modulus.value());
        self.requests.iter().flat_map(move |request| {
            let (first, last) = match *request {
                SrejRequest::Single(nr) => (nr, nr),
                SrejRequest::Span { first, last } => (first, last),
            };
            let count = (u16::from(last) + m - u16::from(first) % m) % m + 1;
            (0..count).map(move |n| ((u16::from(first) + n) % m) as u8)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_octet_pair_decodes_or_errs_and_reencodes() {
        for modulus in [Modulus::Mod8, Modulus::Mod128] {
            for a in 0..=255u8 {
                for b in 0..=255u8 {
                    if let Ok(info) = MultiSrejInfo::decode(&[a, b], modulus) {
                        assert_eq!(info.encode(modulus).unwrap(), vec![a, b]);
                        assert!(info.sequence_numbers(modulus).all(|n| n < modulus.value()));
                    }
                }
            }
        }
    }

    #[test]
    fn span_wraps_modulo_128() {
        let info = MultiSrejInfo::decode(&[0xFD, 0x03], Modulus::Mod128).unwrap();
        assert_eq!(
            info.requests,
            vec![SrejRequest::Span {
                first: 126,
                last: 1
            }]
        );
        assert_eq!(
            info.sequence_numbers(Modulus::Mod128).collect::<Vec<_>>(),
            vec![126, 127, 0, 1]
        );
    }
}
