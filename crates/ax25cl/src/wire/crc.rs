//! The CRC-32 each message of the AX.25 CL carries (Ronan et al., section
//! II: "a 32-bit CRC appended to each TCP-CL Protocol segment").
//!
//! The paper does not name the polynomial; this crate uses the CRC-32 of
//! IEEE 802.3 and ISO/IEC 13239 (HDLC), catalogued as CRC-32/ISO-HDLC:
//! polynomial 0x04C11DB7 (processed bit-reversed, 0xEDB88320), initial
//! value and final XOR 0xFFFFFFFF, check value 0xCBF43926 for `123456789`.
//! It is sent big-endian (network order) after the message it covers.

/// The table of the reflected polynomial, one entry per octet value.
const TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// CRC-32/ISO-HDLC of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    !data.iter().fold(!0u32, |crc, &octet| {
        (crc >> 8) ^ TABLE[usize::from((crc as u8) ^ octet)]
    })
}

#[cfg(test)]
mod tests {
    use super::crc32;

    #[test]
    fn check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }
}
