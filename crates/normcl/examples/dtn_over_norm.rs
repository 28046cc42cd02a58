//! Two bundle agents (`linklab-dtn`, in-memory stores) over the NORM CL
//! on a simulated datagram link in virtual time, 30 ms each way; prints
//! when the last bundle was delivered:
//!
//! - ten 10 000-octet bundles at 128 kbit/s (paper 003's D-STAR rate) at
//!   several loss rates;
//! - one 6 MB bundle, as paper 003 sent with dtnsend, at the two NORM
//!   rates of its Table I, as octets per second. The link here is ideal:
//!   what the D-STAR channel adds (half duplex, its transmit buffer
//!   overrunning at 128 kbit/s) is the scenario's, not this example's.
//!
//! `cargo run --release -p linklab-normcl --example dtn_over_norm`

use core::time::Duration;
use std::collections::BTreeMap;
use std::net::SocketAddr;

use linklab_core::Instant;
use linklab_dtn::{Agent, Config as AgentConfig, EidPattern, LinkId, MemoryStore, SendRequest};
use linklab_testkit::Impairment;
use support::{new_pair, send, End};

#[path = "../tests/support/mod.rs"]
mod support;
use linklab_normcl::{Config, Session};

fn agent(node: &str) -> Agent<MemoryStore> {
    let mut config = AgentConfig::new(node.parse().unwrap());
    config.retry_after = Duration::from_secs(5);
    Agent::open(config, MemoryStore::new()).unwrap()
}

/// Virtual seconds until `count` bundles of `size` octets sent at
/// `bits_per_second` were delivered at ipn:2.1, and the transfers that
/// failed on the way.
fn run(
    bits_per_second: f64,
    count: usize,
    size: usize,
    impairment: Impairment,
    seed: u64,
) -> (f64, usize) {
    let a_addr = SocketAddr::from(([10, 0, 0, 1], 4560));
    let b_addr = SocketAddr::from(([10, 0, 0, 2], 4560));
    let session = |me: &str, peer: &str, to| {
        let c = Config::new(me, peer, to, bits_per_second);
        Session::new(c, Instant::ZERO).unwrap()
    };
    let mut p = new_pair(
        End::new(session("ipn:1.0", "ipn:2.0", b_addr), a_addr),
        End::new(session("ipn:2.0", "ipn:1.0", a_addr), b_addr),
        impairment,
        seed,
    );
    let link = LinkId(1);
    let mut a = agent("ipn:1.0");
    a.add_route(
        EidPattern::Node(
            "ipn:2.0"
                .parse::<linklab_dtn::Eid>()
                .unwrap()
                .to_node_id()
                .unwrap(),
        ),
        link,
    );
    a.link_up(link, Some(p.engines[0].session.max_bundle_len()));
    let mut b = agent("ipn:2.0");
    b.register("ipn:2.1".parse().unwrap()).unwrap();
    for i in 0..count {
        let request = SendRequest::new(
            "ipn:1.1".parse().unwrap(),
            "ipn:2.1".parse().unwrap(),
            vec![i as u8; size],
        );
        a.send(Instant::ZERO, &request).unwrap();
    }
    let mut flights = BTreeMap::new();
    let (mut delivered, mut failed, mut taken) = (0, 0, 0);
    let limit = Instant::from_micros(3_600_000_000);
    while delivered < count {
        let now = p.now;
        while let Some(t) = a.poll_transmit(now).unwrap() {
            match send(&mut p, 0, &t.octets) {
                Ok(id) => {
                    flights.insert(id, t.id);
                }
                Err(_) => a.transfer_failed(now, t.id),
            }
        }
        for (id, (_, outcome)) in std::mem::take(&mut p.engines[0].outcomes) {
            let Some(t) = flights.remove(&id) else {
                continue;
            };
            match outcome {
                Ok(()) => a.transfer_succeeded(now, t).unwrap(),
                Err(_) => {
                    failed += 1;
                    a.transfer_failed(now, t)
                }
            }
        }
        for (_, bundle) in &p.engines[1].stored[taken..] {
            b.handle_bundle(now, bundle).unwrap();
        }
        taken = p.engines[1].stored.len();
        while let Some(d) = b.poll_delivery() {
            delivered += 1;
            b.delivery_done(now, d.id).unwrap();
        }
        a.handle_timeout(now).unwrap();
        let wake = a.poll_timeout();
        let stored = p.engines[1].stored.len();
        let target = wake.map_or(limit, |w| w.max(now + Duration::from_micros(1)));
        let progressed = p.run_until(target.min(limit), |p| {
            !p.engines[0].outcomes.is_empty() || p.engines[1].stored.len() > stored
        });
        if !progressed && p.now >= limit {
            panic!("not delivered within an hour");
        }
        if !progressed {
            p.now = target;
        }
    }
    (p.now.as_secs_f64(), failed)
}

fn main() {
    let (count, size) = (10, 10_000);
    let ideal = (count * size * 8) as f64 / 128_000.0;
    println!("{count} bundles of {size} octets at 128 kbit/s (payload alone: {ideal:.1} s)");
    let delay = Duration::from_millis(30);
    for (name, impairment) in [
        ("no loss", support::lossy(delay, 0.0)),
        ("5 % loss", support::lossy(delay, 0.05)),
        ("20 % loss", support::lossy(delay, 0.20)),
        ("bursts", support::bursts(delay)),
    ] {
        let (t, failed) = run(128_000.0, count, size, impairment, 1);
        println!("{name:>10}: all delivered after {t:.2} s ({failed} transfers failed)");
    }
    let size = 6_000_000;
    println!("one bundle of {size} octets, no loss (paper 003 Table I, control: 8107 B/s at 128k, 9877 B/s at 84k)");
    for rate in [128_000.0, 84_000.0] {
        let (t, _) = run(
            rate,
            1,
            size,
            Impairment::delay(Duration::from_millis(30)),
            1,
        );
        println!(
            "{:>7} bit/s: delivered after {t:.1} s, {:.0} B/s",
            rate,
            size as f64 / t
        );
    }
}
