//! Channel occupancy of an HDLC/AX.25 frame.

/// Average growth of a bit stream through HDLC zero insertion: one stuffed
/// bit per 62 data bits on random data (J.S. Ma, IEEE Trans. Commun. 30(2),
/// 1982), the factor 63/62 used by both Zieliński (eq. 3, 4) and Ronan
/// (section III.B).
pub const STUFFING_FACTOR: f64 = 63.0 / 62.0;

/// Bits of an AX.25 frame besides its information field: opening flag,
/// destination and source addresses (14 octets), control, PID, FCS and
/// closing flag, 20 octets in all. Both papers count a control frame such as
/// RR as this size too.
pub const FRAME_OVERHEAD_BITS: f64 = 160.0;

/// Time in seconds that a frame carrying `info_octets` of information
/// occupies a channel of `bitrate_bps`, with the bit-stuffing allowance
/// applied to the whole frame (Zieliński eq. 3; Ronan's T_frame).
pub fn frame_airtime(info_octets: f64, bitrate_bps: f64) -> f64 {
    STUFFING_FACTOR * (FRAME_OVERHEAD_BITS + 8.0 * info_octets) / bitrate_bps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ronan_worked_example() {
        // Ronan section III.B: 255-octet frame at 1200 bit/s is about 1.8629 s.
        assert!((frame_airtime(255.0, 1200.0) - 1.8629).abs() < 5e-5);
        // An RR at 1200 bit/s: 63/62 * 160/1200.
        assert!((frame_airtime(0.0, 1200.0) - 0.135_484).abs() < 1e-6);
    }
}
