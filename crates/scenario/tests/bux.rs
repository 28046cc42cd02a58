//! The Bux et al. (1982) runner: seeded, short runs of the real engine on
//! the full-duplex line.

use std::time::Duration;

use linklab_core::Streams;
use linklab_link::WindowLimit;
use linklab_scenario::bux::model::one_way_bound;
use linklab_scenario::bux::simulate::frame_overhead_bits;
use linklab_scenario::bux::{
    simulate, LinkRun, MessageLength, Procedure, ThroughputExperiment, Traffic,
    TransferTimeExperiment,
};
use linklab_wire::control::Modulus;

fn link(
    procedure: Procedure,
    modulus: Modulus,
    bits: u32,
    p_bit: f64,
    traffic: [Traffic; 2],
) -> LinkRun {
    let t_p = Duration::from_millis(50);
    let length = MessageLength::Constant { bits };
    LinkRun {
        procedure,
        modulus,
        bit_rate_bps: 48_000,
        t_p,
        p_bit,
        length,
        traffic,
        t1: LinkRun::default_t1(48_000, t_p, length),
        measured: Duration::from_secs(20),
        slices: 10,
        window_limit: WindowLimit::Withhold,
    }
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Error-free, one-way ABM with modulo 8 and 512-bit messages is window
/// limited: 7 frames per cycle of one frame, 2 t_p and an RR.
#[test]
fn error_free_abm_one_way_reaches_the_window_limited_throughput() {
    let run = link(
        Procedure::Abm,
        Modulus::Mod8,
        512,
        0.0,
        [Traffic::Saturated, Traffic::Silent],
    );
    let measured = simulate(&run, &Streams::new(1)).unwrap();
    let ours = mean(&measured.directions[0].throughput);
    let bound = one_way_bound(
        512.0,
        frame_overhead_bits(Modulus::Mod8) as f64,
        0.0,
        7.0,
        48_000.0,
        0.05,
    );
    assert!((ours / bound - 1.0).abs() < 0.02, "{ours} vs {bound}");
    assert_eq!(measured.directions[1].delivered, 0);
}

/// Two-way flow, modulo 8, 1024-bit messages: NRM's polling leaves both
/// directions below ABM (Fig. 4, left of the optimum).
#[test]
fn nrm_stays_below_abm_in_two_way_flow() {
    let both = [Traffic::Saturated; 2];
    let streams = Streams::new(2);
    let nrm = simulate(
        &link(Procedure::Nrm, Modulus::Mod8, 1024, 0.0, both),
        &streams,
    )
    .unwrap();
    let abm = simulate(
        &link(Procedure::Abm, Modulus::Mod8, 1024, 0.0, both),
        &streams,
    )
    .unwrap();
    for i in 0..2 {
        let (n, a) = (
            mean(&nrm.directions[i].throughput),
            mean(&abm.directions[i].throughput),
        );
        assert!(n < 0.9 * a, "direction {i}: NRM {n}, ABM {a}");
    }
}

/// With p_bit = 1e-5 every message is delivered exactly once and in order
/// (the runner checks each delivery against the sender's record and fails
/// otherwise), in both modes and with both moduli, while frames are lost.
#[test]
fn every_message_is_delivered_once_in_order_despite_bit_errors() {
    for procedure in [Procedure::Nrm, Procedure::Abm] {
        for modulus in [Modulus::Mod8, Modulus::Mod128] {
            let run = LinkRun {
                measured: Duration::from_secs(30),
                ..link(procedure, modulus, 4096, 1e-5, [Traffic::Saturated; 2])
            };
            let measured = simulate(&run, &Streams::new(3)).unwrap();
            for d in &measured.directions {
                assert!(
                    d.delivered > 100 && d.lost > 0,
                    "{procedure:?} {modulus:?}: {d:?}"
                );
            }
        }
    }
}

/// Poisson traffic: transfer and buffer-holding times are measured, the
/// latter never shorter, and the same seed gives the same run.
#[test]
fn transfer_times_are_measured_and_repeatable() {
    let rate = 0.3 * 48_000.0 / 800.0;
    let run = link(
        Procedure::Nrm,
        Modulus::Mod8,
        800,
        1e-5,
        [Traffic::Poisson {
            messages_per_s: rate,
        }; 2],
    );
    let a = simulate(&run, &Streams::new(4)).unwrap();
    assert_eq!(a, simulate(&run, &Streams::new(4)).unwrap());
    for d in &a.directions {
        assert!(d.transfer_s.len() > 300, "{}", d.transfer_s.len());
        assert!(mean(&d.holding_s) > mean(&d.transfer_s));
        // At least t_p and one I frame.
        assert!(d
            .transfer_s
            .iter()
            .all(|&t| t >= 0.05 + 840.0 / 48_000.0 - 1e-6));
    }
}

#[test]
fn built_in_experiments_parse_and_bad_ones_are_refused_clearly() {
    for file in [
        "bux-throughput-one-way",
        "bux-throughput-two-way",
        "bux-throughput-exponential",
    ] {
        let text = std::fs::read_to_string(format!("experiments/{file}.toml")).unwrap();
        ThroughputExperiment::from_toml(&text).unwrap();
    }
    for file in ["bux-transfer-time", "bux-transfer-time-tp"] {
        let text = std::fs::read_to_string(format!("experiments/{file}.toml")).unwrap();
        TransferTimeExperiment::from_toml(&text).unwrap();
    }
    let text = std::fs::read_to_string("experiments/bux-transfer-time.toml").unwrap();
    let err = ThroughputExperiment::from_toml(&text).unwrap_err();
    assert_eq!(
        err.to_string(),
        "experiment kind \"bux-transfer-time\" given to the bux-throughput runner"
    );
    let wrong_kind = text.replace("kind = \"bux-transfer-time\"", "kind = \"bux-throughput\"");
    let err = TransferTimeExperiment::from_toml(&wrong_kind).unwrap_err();
    assert!(
        err.to_string()
            .contains("line 14, column 1: unknown field `messages_per_replication`"),
        "{err}"
    );
    let bad = link(
        Procedure::Abm,
        Modulus::Mod8,
        800,
        1.5,
        [Traffic::Silent; 2],
    );
    let err = simulate(&bad, &Streams::new(1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "bit-error probability p_bit = 1.5 is outside [0, 1)"
    );
}

#[test]
fn bad_values_are_refused_with_field_and_place() {
    let one_way = std::fs::read_to_string("experiments/bux-throughput-one-way.toml").unwrap();
    let bad = one_way.replacen("p_bit = 1e-5", "p_bit = 1.5", 2);
    let err = ThroughputExperiment::from_toml(&bad)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "experiment file: line 26, column 9: figure[0].case[0].p_bit: 1.5 is out of range: \
         from 0 up to, not including, 1"
    );
    let bad = one_way.replace("relative_precision = 0.02", "relative_precision = 0");
    let err = ThroughputExperiment::from_toml(&bad)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("line 12, column 22: relative_precision: 0 is out of range"),
        "{err}"
    );
    let bad = one_way.replacen("modulus = 8", "modulus = 16", 1);
    let err = ThroughputExperiment::from_toml(&bad)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("line 27, column 11: figure[0].case[0].modulus: modulus 16"),
        "{err}"
    );

    let delay = std::fs::read_to_string("experiments/bux-transfer-time.toml").unwrap();
    let bad = delay.replace("quick_loads = [0.3]", "quick_loads = [1.3]");
    let err = TransferTimeExperiment::from_toml(&bad)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "experiment file: line 41, column 15: figure[1].quick_loads: 1.3: a useful load must \
         lie strictly between 0 and 1"
    );
    let bad = delay.replace(
        "messages_per_replication = 6000",
        "messages_per_replication = 0",
    );
    let err = TransferTimeExperiment::from_toml(&bad)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("line 14, column 28: messages_per_replication: 0 is out of range"),
        "{err}"
    );
}
