//! The quantised fields of NORM (RFC 5740 section 4.1, "grtt", "gsize",
//! and section 4.2.3, "cc_rate" and "cc_loss").

/// Smallest RTT a quantised field can say (seconds).
pub const RTT_MIN: f64 = 1.0e-6;
/// Largest RTT a quantised field can say (seconds).
pub const RTT_MAX: f64 = 1000.0;

/// Quantises an RTT in seconds to 8 bits (RFC 5740 section 4.2.1, `grtt`):
/// linear in microseconds below 33 µs, logarithmic above, rounding up.
pub fn quantize_rtt(rtt: f64) -> u8 {
    let rtt = if rtt.is_nan() {
        RTT_MIN
    } else {
        rtt.clamp(RTT_MIN, RTT_MAX)
    };
    if rtt < 3.3e-5 {
        ((rtt / RTT_MIN) as u8).saturating_sub(1)
    } else {
        (255.0 - 13.0 * (RTT_MAX / rtt).ln())
            .ceil()
            .clamp(0.0, 255.0) as u8
    }
}

/// The RTT in seconds a quantised value stands for.
pub fn unquantize_rtt(q: u8) -> f64 {
    if q < 31 {
        f64::from(q + 1) * RTT_MIN
    } else {
        RTT_MAX / (f64::from(255 - q) / 13.0).exp()
    }
}

/// Quantises a group-size estimate to 4 bits (RFC 5740 section 4.2.1,
/// `gsize`): a mantissa of 1 or 5 (bit 3) times 10^(exponent + 1), the
/// smallest such value not below `gsize`.
pub fn quantize_gsize(gsize: f64) -> u8 {
    for exp in 0..8u8 {
        let decade = 10f64.powi(i32::from(exp) + 1);
        if gsize <= decade {
            return exp;
        }
        if gsize <= 5.0 * decade {
            return 0x08 | exp;
        }
    }
    0x0f
}

/// The group size a quantised value stands for.
pub fn unquantize_gsize(q: u8) -> f64 {
    let mantissa = if q & 0x08 != 0 { 5.0 } else { 1.0 };
    mantissa * 10f64.powi(i32::from(q & 0x07) + 1)
}

/// Quantises a rate in octets per second to 16 bits (RFC 5740 section
/// 4.2.3, `cc_rate`): a 12-bit mantissa scaled to [0, 10) and a 4-bit
/// decimal exponent.
pub fn quantize_rate(rate: f64) -> u16 {
    if rate.is_nan() || rate <= 0.0 {
        return 0x01;
    }
    let rate = rate.min(9.99e15);
    let exponent = rate.log10().floor().max(0.0);
    let mantissa = ((4096.0 / 10.0) * (rate / 10f64.powf(exponent)) + 0.5).min(4095.0);
    ((mantissa as u16) << 4) | exponent as u16
}

/// The rate in octets per second a quantised value stands for.
pub fn unquantize_rate(q: u16) -> f64 {
    f64::from(q >> 4) * (10.0 / 4096.0) * 10f64.powi(i32::from(q & 0x0f))
}

/// Quantises a loss fraction to 16 bits (RFC 5740 section 4.2.3, `cc_loss`).
pub fn quantize_loss(p: f64) -> u16 {
    if p.is_nan() {
        return 0;
    }
    (p.clamp(0.0, 1.0) * 65535.0 + 0.5) as u16
}

/// The loss fraction a quantised value stands for.
pub fn unquantize_loss(q: u16) -> f64 {
    f64::from(q) / 65535.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rtt_quantisation_rounds_up_and_inverts() {
        assert_eq!(quantize_rtt(1.0e-6), 0);
        assert_eq!(quantize_rtt(RTT_MAX), 255);
        assert_eq!(quantize_rtt(f64::NAN), 0);
        for q in 31..=255u8 {
            assert_eq!(quantize_rtt(unquantize_rtt(q) * (1.0 - 1e-9)), q, "q {q}");
        }
        assert_eq!(quantize_rtt(10.5e-6), 9);
        // 0.5 s (libnorm's initial GRTT) quantises to a value not below it.
        assert!(unquantize_rtt(quantize_rtt(0.5)) >= 0.5);
    }

    #[test]
    fn gsize_quantisation() {
        assert_eq!(quantize_gsize(1.0), 0x00);
        assert_eq!(unquantize_gsize(0x00), 10.0);
        assert_eq!(quantize_gsize(20.0), 0x08);
        assert_eq!(unquantize_gsize(0x08), 50.0);
        assert_eq!(quantize_gsize(1000.0), 0x02);
        assert_eq!(quantize_gsize(1e12), 0x0f);
    }

    #[test]
    fn rate_quantisation_keeps_three_digits() {
        for rate in [16_000.0, 10_500.0, 1.0, 123_456.0, 3.2e9] {
            let back = unquantize_rate(quantize_rate(rate));
            assert!((back - rate).abs() / rate < 2.5e-3, "{rate} -> {back}");
        }
        assert_eq!(quantize_rate(0.0), 0x01);
        assert_eq!(unquantize_loss(quantize_loss(0.25)), 16384.0 / 65535.0);
    }
}
