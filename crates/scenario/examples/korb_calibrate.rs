//! The fit of the X.25 network's transit delay to Korb (1987) Table 1:
//! runs the simulated ping sequence (100 pings of 64 octets, then 100 of
//! 512) over many seeds with a given median transit T and per-octet time
//! c, compares the medians of sequences 50-100 with the paper's 330 and
//! 880 ms, and corrects T and c from the two one-way residuals (one
//! linear equation per ping size: d(one way) = dT + octets * dc, with the
//! IP datagrams of 84 and 532 octets). Prints each step; the result is
//! what `X25NetConfig::korb1987` uses.
//!
//! `cargo run --release -p linklab-scenario --example korb_calibrate [T_ms c_ms_per_octet]`
//! (without arguments: from the preset's values, which it then checks).

use std::time::Duration;

use linklab_channel::x25net::Delay;
use linklab_core::Streams;
use linklab_scenario::korb::run::{median, ping_sequence, SETTLED_FROM};
use linklab_scenario::korb::testbed::TestbedConfig;

const SEEDS: u64 = 40;

fn medians(t_ms: f64, c_ms: f64) -> (f64, f64) {
    let mut config = TestbedConfig::korb1987(1);
    let Delay::LogNormal { sigma, .. } = config.net.transit else {
        panic!("the Korb preset's transit delay is log-normal");
    };
    config.net.transit = Delay::LogNormal {
        median: Duration::from_secs_f64(t_ms / 1e3),
        sigma,
    };
    config.net.per_octet = Duration::from_secs_f64(c_ms / 1e3);
    let master = Streams::new(0x4b4f_5242);
    let (mut small, mut large) = (0.0, 0.0);
    for r in 0..SEEDS {
        let outcome = ping_sequence(&config, &master.replication(r), 100).expect("ping runs");
        let settled = |rtts: &[Option<f64>]| -> f64 {
            let v: Vec<f64> = rtts
                .iter()
                .skip(SETTLED_FROM - 1)
                .flatten()
                .copied()
                .collect();
            median(&v).expect("replies came back")
        };
        small += settled(&outcome.small);
        large += settled(&outcome.large);
    }
    (small / SEEDS as f64, large / SEEDS as f64)
}

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: T in ms, c in ms per octet"))
        .collect();
    let (mut t, mut c) = match args[..] {
        [t, c] => (t, c),
        _ => {
            let net = TestbedConfig::korb1987(1).net;
            (
                net.transit.median().as_secs_f64() * 1e3,
                net.per_octet.as_secs_f64() * 1e3,
            )
        }
    };
    for step in 0..3 {
        let (m64, m512) = medians(t, c);
        println!(
            "step {step}: T = {t:.2} ms, c = {c:.5} ms/octet: medians 50-100 {m64:.1} ms (paper 330), {m512:.1} ms (paper 880)"
        );
        // One-way residuals, datagrams of 84 and 532 octets.
        let (e64, e512) = ((330.0 - m64) / 2.0, (880.0 - m512) / 2.0);
        let dc = (e512 - e64) / (532.0 - 84.0);
        let dt = e64 - 84.0 * dc;
        t += dt;
        c += dc;
    }
}
