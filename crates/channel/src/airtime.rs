//! How long a frame occupies the medium.
//!
//! Frame lengths are exact, not estimated: [`hdlc_bits`] counts the frame
//! body as the wire crate's HDLC encoder sends it (FCS-16 appended, a 0
//! inserted after every five contiguous 1s, AX.25 v2.2 sections 3.6 and
//! 3.7; [`linklab_wire::hdlc::frame_bits`], the encoder's own count without
//! the bits), so the bit count is the stuffed length the real line
//! carries, not the 63/62 average factor of Zielinski (2013) eq. 3.

use core::time::Duration;

/// Line bits one frame adds to a transmission: its body (address through
/// information field, without FCS) and FCS after zero-bit insertion, plus
/// one closing flag (AX.25 v2.2 section 3.1). Frames sent back to back
/// share flags, so a transmission of frames f1..fn costs
/// [`FLAG_BITS`] + Σ `hdlc_bits(fi)`: one opening flag, then each frame and
/// its closing flag.
pub fn hdlc_bits(body: &[u8]) -> u64 {
    linklab_wire::hdlc::frame_bits(body)
}

/// Bits in one HDLC flag (AX.25 v2.2 section 3.1).
pub const FLAG_BITS: u64 = 8;

/// The time `bits` take at `bit_rate` bit/s, rounded to the nearest
/// microsecond (the resolution of [`linklab_core::Instant`]). Callers time
/// a run of frames from the cumulative bit count, so rounding never
/// accumulates. A rate of 0 is treated as 1 bit/s.
pub fn bits_duration(bits: u64, bit_rate: u32) -> Duration {
    let rate = u128::from(bit_rate.max(1));
    let micros = (u128::from(bits) * 1_000_000 + rate / 2) / rate;
    Duration::from_micros(u64::try_from(micros).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stuffing_is_counted_exactly() {
        // Two zero octets and their FCS: no 1-runs of five in the body.
        let plain = hdlc_bits(&[0, 0]);
        assert!((8 * 4 + 8..=8 * 4 + 8 + 3).contains(&plain), "{plain}");
        // 0xFF octets force one stuffed 0 per five 1s: 80 ones → 16 zeros.
        let ones = hdlc_bits(&[0xFF; 10]);
        assert!(ones >= 80 + 16 + 16 + 8, "{ones}");
        assert_eq!(bits_duration(1200, 1200), Duration::from_secs(1));
        assert_eq!(bits_duration(1, 1200), Duration::from_micros(833));
        assert_eq!(bits_duration(2, 1200), Duration::from_micros(1667));
    }
}
