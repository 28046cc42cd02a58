//! The kernel against a closed form with deterministic service: the M/D/1
//! mean wait in queue Wq = ρ·D / (2(1 − ρ)) (Pollaczek-Khinchine; e.g.
//! Kleinrock, *Queueing Systems* vol. 1, §5.6), on the same model the
//! `kernel` benchmark times (`examples/md1/model.rs`).

#[path = "../examples/md1/model.rs"]
mod model;

use linklab_core::Streams;
use linklab_sim::{Metric, ReplicationOutput, Runner};
use model::{simulate, Md1};

/// Customers per replication: enough that the empty-start bias (a few
/// hundred service times of relaxation at ρ = 0.8) stays well under 1%.
const CUSTOMERS: u64 = 50_000;

/// The mean wait in queue of one replication, µs.
const WAIT_US: Metric = Metric::new("wait_us");

#[test]
fn md1_mean_wait_matches_pollaczek_khinchine() {
    let model = Md1::rho_0_8(CUSTOMERS);
    assert!((model.rho() - 0.8).abs() < 1e-12);
    let expected = model.pollaczek_khinchine_wait_us();
    assert!((expected - 2_000.0).abs() < 1e-9, "{expected}");

    let report = Runner::new(0x4c49_4e4b, 10).run_parallel(
        std::num::NonZeroUsize::new(2).unwrap(),
        |streams| {
            let outcome = simulate(&model, streams);
            assert_eq!(
                outcome.events,
                2 * CUSTOMERS,
                "one arrival, one departure each"
            );
            assert_eq!(outcome.waits_us.count(), CUSTOMERS);
            let mut out = ReplicationOutput::new();
            out.value(WAIT_US, outcome.waits_us.mean().unwrap_or(f64::NAN));
            out
        },
    );
    let ci = report
        .ci(WAIT_US)
        .expect("10 replications give an interval");
    println!("M/D/1 ρ = 0.8, D = 1 ms: Wq Pollaczek-Khinchine {expected} µs, simulated {ci}");
    assert!(ci.contains(expected), "{ci} misses {expected}");
    assert!(ci.relative_precision < 0.05, "{ci}");
}

#[test]
fn md1_is_reproducible_from_the_seed() {
    let model = Md1::rho_0_8(2_000);
    let a = simulate(&model, Streams::new(7));
    let b = simulate(&model, Streams::new(7));
    assert_eq!(a, b);
    assert_ne!(a, simulate(&model, Streams::new(8)));
    // Some customers find the server idle and wait nothing.
    assert_eq!(a.waits_us.min(), Some(0.0));
    assert_eq!(simulate(&Md1::rho_0_8(0), Streams::new(7)).events, 0);
}
