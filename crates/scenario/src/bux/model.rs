//! Closed forms the simulation is set against (Bux et al. 1982, sections
//! 3.1.1 and 3.2).
//!
//! Frame lengths are those of the simulated line
//! ([`frame_overhead_bits`](super::simulate::frame_overhead_bits): 40 bits
//! of address, control, FCS and one shared flag with modulo 8).

/// Mean transfer time of an M/D/1 queue plus the delay t_p (section 3.2:
/// "the queueing delay for the ABM link ... is that of a simple M/D/1
/// queue"): service S = (l + overhead)/v, arrival rate λ = Y_u v / l for
/// the useful load Y_u, utilisation ρ = λS, and
/// T = S + ρS / (2(1 − ρ)) + t_p. `None` at or beyond saturation.
pub fn md1_transfer_s(
    useful_load: f64,
    l_bits: f64,
    overhead_bits: f64,
    v_bps: f64,
    t_p_s: f64,
) -> Option<f64> {
    let s = (l_bits + overhead_bits) / v_bps;
    let rho = useful_load * v_bps / l_bits * s;
    (rho < 1.0).then(|| s + rho * s / (2.0 * (1.0 - rho)) + t_p_s)
}

/// The M/G/1 (Pollaczek-Khinchine) transfer time for exponentially
/// distributed message lengths with mean l (Fig. 8): S = (L + overhead)/v
/// with `E[S²]` = (2l² + 2l·overhead + overhead²)/v², and
/// T = `E[S]` + λ`E[S²]` / (2(1 − ρ)) + t_p.
pub fn mg1_exponential_transfer_s(
    useful_load: f64,
    l_bits: f64,
    overhead_bits: f64,
    v_bps: f64,
    t_p_s: f64,
) -> Option<f64> {
    let mean_s = (l_bits + overhead_bits) / v_bps;
    let second = (2.0 * l_bits * l_bits + 2.0 * l_bits * overhead_bits + overhead_bits.powi(2))
        / (v_bps * v_bps);
    let lambda = useful_load * v_bps / l_bits;
    let rho = lambda * mean_s;
    (rho < 1.0).then(|| mean_s + lambda * second / (2.0 * (1.0 - rho)) + t_p_s)
}

/// The paper's modified M/D/1 for the NRM secondary-to-primary direction
/// (section 3.2): when the server falls idle, service resumes only after
/// an interval τ, which adds τ/2 to the mean queueing time; τ is the time
/// from the secondary's F = 1 to the next P = 1, 2 t_p plus two
/// supervisory frames.
pub fn nrm_secondary_transfer_s(
    useful_load: f64,
    l_bits: f64,
    overhead_bits: f64,
    v_bps: f64,
    t_p_s: f64,
) -> Option<f64> {
    let tau = 2.0 * t_p_s + 2.0 * overhead_bits / v_bps;
    md1_transfer_s(useful_load, l_bits, overhead_bits, v_bps, t_p_s).map(|t| t + tau / 2.0)
}

/// The bound of section 3.1.1 for one direction with information always
/// ready and the reverse channel free: the I-field share l / (l +
/// overhead), times the share of error-free I frames (1 − p_bit)^(l +
/// overhead), times the share of time the modulus rule lets the sender
/// send: k frames per cycle of one I frame, 2 t_p and an acknowledging
/// supervisory frame, if that is less than 1.
pub fn one_way_bound(
    l_bits: f64,
    overhead_bits: f64,
    p_bit: f64,
    window: f64,
    v_bps: f64,
    t_p_s: f64,
) -> f64 {
    let frame = l_bits + overhead_bits;
    let cycle = frame / v_bps + 2.0 * t_p_s + overhead_bits / v_bps;
    let window_share = (window * frame / v_bps / cycle).min(1.0);
    l_bits / frame * (1.0 - p_bit).powf(frame) * window_share
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md1_matches_its_textbook_values() {
        // S = 1 s, ρ = 0.5: W = 0.5 s, T = 1.5 s (+ t_p).
        let t = md1_transfer_s(0.5, 100.0, 0.0, 100.0, 0.25).unwrap();
        assert!((t - 1.75).abs() < 1e-12);
        assert_eq!(md1_transfer_s(1.0, 100.0, 0.0, 100.0, 0.0), None);
        // Exponential service: twice the M/D/1 queueing time.
        let t = mg1_exponential_transfer_s(0.5, 100.0, 0.0, 100.0, 0.0).unwrap();
        assert!((t - 2.0).abs() < 1e-12);
        let nrm = nrm_secondary_transfer_s(0.5, 100.0, 0.0, 100.0, 0.25).unwrap();
        assert!((nrm - 2.0).abs() < 1e-12);
    }

    #[test]
    fn one_way_bound_is_window_limited_on_long_delays() {
        // 1000-bit frames at 1000 bit/s: cycle 1 + 10 + 0 s, 7 frames.
        let b = one_way_bound(1000.0, 0.0, 0.0, 7.0, 1000.0, 5.0);
        assert!((b - 7.0 / 11.0).abs() < 1e-12);
        assert_eq!(one_way_bound(1000.0, 0.0, 0.0, 127.0, 1000.0, 5.0), 1.0);
    }
}
