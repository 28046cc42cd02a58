//! The full-duplex point-to-point line (Bux et al. 1982) and the bit-error
//! processes measured on it.

use core::time::Duration;

use linklab_channel::{
    bits_duration, hdlc_bits, Delivery, ErrorModel, GilbertElliott, LineConfig, Medium, Outcome,
    PointToPointLine, StationId,
};
use linklab_core::{Instant, Streams};
use linklab_sim::{ConfidenceInterval, Tally};

fn drain(line: &mut PointToPointLine) -> Vec<Delivery> {
    let mut out = Vec::new();
    while let Some(t) = line.poll_timeout() {
        line.handle_timeout(t);
        out.extend(std::iter::from_fn(|| line.poll_delivery()));
    }
    out
}

#[test]
fn delivery_is_t_p_plus_bits_over_rate_in_fifo_order_both_ways() {
    for config in [
        LineConfig::bux_terrestrial_4800(),
        LineConfig::bux_terrestrial_48k(),
        LineConfig::bux_satellite_48k(),
    ] {
        let mut line = PointToPointLine::new(config, &Streams::new(1), "line");
        let frames: Vec<Vec<u8>> = (1..=5u8).map(|i| vec![i; 20 * usize::from(i)]).collect();
        for f in &frames {
            line.transmit(Instant::ZERO, StationId(0), f.clone());
        }
        line.transmit(Instant::ZERO, StationId(1), b"RR".to_vec());
        assert_eq!(line.queued(StationId(0)), 4);
        let deliveries = drain(&mut line);
        let forward: Vec<&Delivery> = deliveries.iter().filter(|d| d.from.0 == 0).collect();
        let mut sent = Duration::ZERO;
        for (d, f) in forward.iter().zip(&frames) {
            sent += bits_duration(hdlc_bits(f), config.bit_rate);
            assert_eq!(&d.frame, f, "FIFO order");
            assert_eq!(d.to, StationId(1));
            assert_eq!(d.at, Instant::ZERO + sent + config.delay);
            assert_eq!(d.outcome, Outcome::Intact);
        }
        assert_eq!(forward.len(), 5);
        let back = deliveries.iter().find(|d| d.from.0 == 1).unwrap();
        assert_eq!(
            back.at,
            Instant::ZERO + bits_duration(hdlc_bits(b"RR"), config.bit_rate) + config.delay
        );
        let stats = line.stats(StationId(0)).unwrap();
        assert_eq!(stats.frames_sent, 5);
        let end = Instant::ZERO + sent;
        assert!((stats.busy.mean(end).unwrap() - 1.0).abs() < 1e-12);
    }
    assert_eq!(
        LineConfig::bux_satellite_48k().delay,
        Duration::from_millis(350)
    );
    assert_eq!(LineConfig::bux_terrestrial_4800().bit_rate, 4_800);
}

/// Per-frame loss indicators of `n` identical frames sent back to back.
fn losses(errors: ErrorModel, streams: &Streams, n: usize, body: &[u8]) -> Vec<f64> {
    let config = LineConfig::bux_terrestrial_48k().with_errors(errors);
    let mut line = PointToPointLine::new(config, streams, "line");
    for _ in 0..n {
        line.transmit(Instant::ZERO, StationId(0), body.to_vec());
    }
    drain(&mut line)
        .iter()
        .map(|d| if d.is_intact() { 0.0 } else { 1.0 })
        .collect()
}

#[test]
fn independent_bit_errors_lose_frames_at_1_minus_1_minus_p_to_the_n() {
    let body = [0x55u8; 30];
    let bits = hdlc_bits(&body);
    let errors = ErrorModel::Independent { ber: 1e-3 };
    let want = 1.0 - (1.0f64 - 1e-3).powf(bits as f64);
    // Losses are iid Bernoulli: a t-interval on their mean is valid.
    let xs = losses(errors, &Streams::new(3), 20_000, &body);
    let ci = ConfidenceInterval::from_samples(&xs, 0.99).unwrap();
    assert!(ci.contains(want), "{ci} vs {want}");
    assert!((errors.frame_loss_probability(bits) - want).abs() < 1e-12);
}

#[test]
fn gilbert_elliott_long_run_frame_loss_matches_the_stationary_formula() {
    // Mean burst 100 bits, 1% of the time in Bad: bursts span frames, so
    // consecutive losses are correlated. Independent replications give iid
    // per-replication loss fractions for the interval.
    let ge = GilbertElliott {
        p_good_to_bad: 1e-4,
        p_bad_to_good: 1e-2,
        ber_good: 1e-5,
        ber_bad: 0.05,
    };
    let body = [0x55u8; 30];
    let bits = hdlc_bits(&body);
    let want = ge.frame_loss_probability(bits);
    let master = Streams::new(4);
    let per_replication: Tally = (0..20)
        .map(|r| {
            let xs = losses(
                ErrorModel::GilbertElliott(ge),
                &master.replication(r),
                2_000,
                &body,
            );
            xs.iter().sum::<f64>() / xs.len() as f64
        })
        .collect();
    let ci = ConfidenceInterval::from_tally(&per_replication, 0.99).unwrap();
    assert!(ci.contains(want), "{ci} vs {want}");
    // The burst model loses fewer frames than independent errors at the
    // same mean BER (errors cluster in few frames).
    let flat = ErrorModel::Independent { ber: ge.mean_ber() };
    assert!(want < flat.frame_loss_probability(bits));
}
