//! The fit of the X.25 network's two flow-control parameters to Korb
//! (1987), by simulation: the throughput class of one call
//! ([`PerCallLimit::rate_bps`]) and the share of the access line the
//! network accepts ([`X25NetConfig::share`]). Two targets, one each:
//!
//! - the class from Table 3's two-circuit row (one put of 175,426 octets
//!   with at most two circuits: 12,604 bit/s), the one row where a single
//!   transfer is held by the class of its circuits (its 2048-octet window
//!   keeps two circuits busy, four would need more);
//! - the share from the saturated level of Table 4 ("approximate maximum
//!   transfer rate 35,000 bps", section 3.5): five puts of 100,000 octets
//!   at once with at most ten circuits, where the circuits' classes add up
//!   to far more than the line's share, so the share alone binds.
//!
//! Each step runs both experiments over `SEEDS` seeds with the current
//! values and scales each parameter by target over measured (a rate
//! proportional to the parameter that binds it), then repeats. The class
//! hardly moves the saturated level and the share does not move the
//! two-circuit row (12.6 kbit/s is far below any share), so the two
//! corrections do not fight. Prints each step; the result is what
//! `X25NetConfig::korb1987` uses.
//!
//! `cargo run --release -p linklab-scenario --example korb_fit [rate_bps share]`
//! (without arguments: from the preset's values, which it then checks).

use linklab_channel::x25net::PerCallLimit;
use linklab_core::Streams;
use linklab_scenario::korb::run::{
    transfers, Direction, FTP_FILE_OCTETS, MULTI_FILES, MULTI_FILE_OCTETS,
};
use linklab_scenario::korb::testbed::TestbedConfig;

/// Seeds per experiment and step.
const SEEDS: u64 = 8;
/// Table 3, two circuits, bit/s.
const TWO_CIRCUITS: f64 = 12_604.0;
/// Section 3.5's saturated level, bit/s.
const SATURATED: f64 = 35_000.0;
/// The most circuits of the saturated runs.
const SATURATED_CIRCUITS: usize = 10;

fn config(circuits: usize, rate_bps: f64, share: f64) -> TestbedConfig {
    let mut config = TestbedConfig::korb1987(circuits);
    let burst_octets = config.net.per_call.map_or(576, |c| c.burst_octets);
    config.net.per_call = Some(PerCallLimit {
        rate_bps,
        burst_octets,
    });
    config.net.share = share;
    config
}

/// Mean rate over the seeds of `files` puts of `octets` with at most
/// `circuits` circuits.
fn mean_rate(config: &TestbedConfig, files: usize, octets: usize) -> f64 {
    let master = Streams::new(0x4b4f_5246);
    let rates: Vec<f64> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..SEEDS)
            .map(|r| {
                let streams = master.replication(r);
                scope.spawn(move || {
                    transfers(config, &streams, Direction::Put, files, octets)
                        .expect("transfer runs")
                        .rate_bps
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    rates.iter().sum::<f64>() / rates.len() as f64
}

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: rate in bit/s, share in (0, 1]"))
        .collect();
    let (mut rate, mut share) = match args[..] {
        [rate, share] => (rate, share),
        _ => {
            let net = TestbedConfig::korb1987(1).net;
            (net.per_call.map_or(6_791.0, |c| c.rate_bps), net.share)
        }
    };
    for step in 0..4 {
        let two = mean_rate(&config(2, rate, share), 1, FTP_FILE_OCTETS);
        let level = mean_rate(
            &config(SATURATED_CIRCUITS, rate, share),
            MULTI_FILES,
            MULTI_FILE_OCTETS,
        );
        println!(
            "step {step}: class {rate:.0} bit/s, share {share:.4}: two circuits {two:.0} bit/s \
             (paper {TWO_CIRCUITS:.0}), {SATURATED_CIRCUITS} circuits {level:.0} bit/s \
             (paper about {SATURATED:.0})"
        );
        rate *= TWO_CIRCUITS / two;
        share = (share * SATURATED / level).min(1.0);
    }
}
