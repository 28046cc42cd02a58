//! The 32-bit frame check sequence, FCS-32.
//!
//! FCS-32 is the 32-bit CRC of ISO/IEC 13239 clause 4 (the HDLC option for
//! links that want more than FCS-16) and of IEEE 802.3: generator
//! polynomial 0x04C11DB7, register preset to all ones, remainder
//! complemented. In CRC catalogue terms it is CRC-32/ISO-HDLC (reflected
//! polynomial 0xEDB88320, init and xorout 0xFFFFFFFF, check value
//! 0xCBF43926 over `b"123456789"`). The AX.25 convergence layer of Ronan et
//! al. appends it to every message.

/// The generator polynomial 0x04C11DB7 in reflected form (ISO/IEC 13239
/// clause 4).
const POLY_REFLECTED: u32 = 0xEDB8_8320;

/// One register step per octet value.
static TABLE: [u32; 256] = crate::fcs::reflected_table(POLY_REFLECTED);

/// The FCS-32 (CRC-32/ISO-HDLC) of `data`.
///
/// ```
/// assert_eq!(linklab_wire::fcs32::fcs32(b"123456789"), 0xCBF4_3926);
/// ```
pub fn fcs32(data: &[u8]) -> u32 {
    !data.iter().fold(!0u32, |crc, &octet| {
        (crc >> 8) ^ TABLE[usize::from((crc as u8) ^ octet)]
    })
}

#[cfg(test)]
mod tests {
    use super::fcs32;

    #[test]
    fn check_value() {
        assert_eq!(fcs32(b"123456789"), 0xCBF4_3926);
        assert_eq!(fcs32(b""), 0);
    }
}
