//! Self-Delimiting Numeric Values (RFC 6256), the variable-length
//! integers of TCPCL version 3 (RFC 7242 section 2.1): seven bits per
//! octet, most significant first, the high bit set on every octet but the
//! last.

/// Largest SDNV accepted: enough octets for a `u64` (ten).
pub const MAX_LEN: usize = 10;

/// What [`decode`] found at the start of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sdnv {
    /// The buffer ends inside the value.
    Incomplete,
    /// The value and its length in octets.
    Value(u64, usize),
    /// More than [`MAX_LEN`] octets, or a value that does not fit a `u64`.
    Overflow,
}

/// Decodes the SDNV at the start of `buf`.
pub fn decode(buf: &[u8]) -> Sdnv {
    let mut value: u64 = 0;
    for (i, &octet) in buf.iter().enumerate() {
        if i == MAX_LEN || value >> 57 != 0 {
            return Sdnv::Overflow;
        }
        value = (value << 7) | u64::from(octet & 0x7F);
        if octet & 0x80 == 0 {
            return Sdnv::Value(value, i + 1);
        }
    }
    if buf.len() >= MAX_LEN {
        Sdnv::Overflow
    } else {
        Sdnv::Incomplete
    }
}

/// Octets of the SDNV of `value`.
pub fn len(value: u64) -> usize {
    let bits = 64 - value.leading_zeros() as usize;
    bits.div_ceil(7).max(1)
}

/// Appends the SDNV of `value` (shortest form) to `out`.
pub fn encode(value: u64, out: &mut Vec<u8>) {
    let n = len(value);
    for i in (0..n).rev() {
        let group = ((value >> (7 * i)) & 0x7F) as u8;
        out.push(if i == 0 { group } else { group | 0x80 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_6256_examples() {
        // RFC 6256 section 2.1: 0xABC is 0x95 0x3C, 0x1234 is 0xA4 0x34,
        // 0x4234 is 0x81 0x84 0x34, 0x7F is 0x7F.
        for (value, octets) in [
            (0xABCu64, &[0x95, 0x3C][..]),
            (0x1234, &[0xA4, 0x34]),
            (0x4234, &[0x81, 0x84, 0x34]),
            (0x7F, &[0x7F]),
            (0, &[0x00]),
        ] {
            let mut out = Vec::new();
            encode(value, &mut out);
            assert_eq!(out, octets);
            assert_eq!(decode(octets), Sdnv::Value(value, octets.len()));
        }
    }

    #[test]
    fn limits() {
        let mut max = Vec::new();
        encode(u64::MAX, &mut max);
        assert_eq!(max.len(), MAX_LEN);
        assert_eq!(decode(&max), Sdnv::Value(u64::MAX, MAX_LEN));
        assert_eq!(decode(&[0x80, 0x80]), Sdnv::Incomplete);
        assert_eq!(decode(&[0xFF; 11]), Sdnv::Overflow);
        // 2^64 does not fit.
        assert_eq!(
            decode(&[0x82, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]),
            Sdnv::Overflow
        );
    }
}
