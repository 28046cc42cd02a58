//! Two bundle agents (`linklab-dtn`, in-memory stores) over the NORM CL
//! on a simulated datagram link in virtual time: 128 kbit/s (paper 003's
//! D-STAR rate), 30 ms each way, at several loss rates; prints when the
//! last bundle was delivered.
//!
//! `cargo run --release -p linklab-normcl --example dtn_over_norm`

use core::time::Duration;
use std::collections::BTreeMap;
use std::net::SocketAddr;

use linklab_dtn::{Agent, Config as AgentConfig, EidPattern, LinkId, MemoryStore, SendRequest};
use linklab_normcl::sim::{End, Loss, Pair};
use linklab_normcl::{Config, Instant, Session};

const BUNDLES: usize = 10;
const PAYLOAD: usize = 10_000;

fn agent(node: &str) -> Agent<MemoryStore> {
    let mut config = AgentConfig::new(node.parse().unwrap());
    config.retry_after = Duration::from_secs(5);
    Agent::open(config, MemoryStore::new()).unwrap()
}

/// Virtual seconds until all bundles were delivered at ipn:2.1, and the
/// transfers that failed on the way.
fn run(loss: Loss, seed: u64) -> (f64, usize) {
    let a_addr = SocketAddr::from(([10, 0, 0, 1], 4560));
    let b_addr = SocketAddr::from(([10, 0, 0, 2], 4560));
    let session = |me: &str, peer: &str, to| {
        let c = Config::new(me, peer, to, 128_000.0);
        Session::new(c, Instant::ZERO).unwrap()
    };
    let mut p = Pair::new(
        End::new(session("ipn:1.0", "ipn:2.0", b_addr), a_addr),
        End::new(session("ipn:2.0", "ipn:1.0", a_addr), b_addr),
        Duration::from_millis(30),
        loss,
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
    a.link_up(link, Some(p.ends[0].session.max_bundle_len()));
    let mut b = agent("ipn:2.0");
    b.register("ipn:2.1".parse().unwrap()).unwrap();
    for i in 0..BUNDLES {
        let request = SendRequest::new(
            "ipn:1.1".parse().unwrap(),
            "ipn:2.1".parse().unwrap(),
            vec![i as u8; PAYLOAD],
        );
        a.send(Instant::ZERO, &request).unwrap();
    }
    let mut flights = BTreeMap::new();
    let (mut delivered, mut failed, mut taken) = (0, 0, 0);
    let limit = Instant::from_micros(3_600_000_000);
    while delivered < BUNDLES {
        let now = p.now;
        while let Some(t) = a.poll_transmit(now).unwrap() {
            match p.send(0, &t.octets) {
                Ok(id) => {
                    flights.insert(id, t.id);
                }
                Err(_) => a.transfer_failed(now, t.id),
            }
        }
        for (id, (_, outcome)) in std::mem::take(&mut p.ends[0].outcomes) {
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
        for (_, bundle) in &p.ends[1].stored[taken..] {
            b.handle_bundle(now, bundle).unwrap();
        }
        taken = p.ends[1].stored.len();
        while let Some(d) = b.poll_delivery() {
            delivered += 1;
            b.delivery_done(now, d.id).unwrap();
        }
        a.handle_timeout(now).unwrap();
        let wake = a.poll_timeout();
        let stored = p.ends[1].stored.len();
        let target = wake.map_or(limit, |w| w.max(now + Duration::from_micros(1)));
        let progressed = p.run_until(target.min(limit), |p| {
            !p.ends[0].outcomes.is_empty() || p.ends[1].stored.len() > stored
        });
        if !progressed && p.now >= limit {
            panic!("not delivered within an hour");
        }
        if !progressed {
            p.now = target;
        }
    }
    (p.now.as_micros() as f64 / 1e6, failed)
}

fn main() {
    let ideal = (BUNDLES * PAYLOAD * 8) as f64 / 128_000.0;
    println!("{BUNDLES} bundles of {PAYLOAD} octets at 128 kbit/s (payload alone: {ideal:.1} s)");
    for (name, loss) in [
        ("no loss", Loss::Independent(0.0)),
        ("5 % loss", Loss::Independent(0.05)),
        ("20 % loss", Loss::Independent(0.20)),
        (
            "bursts",
            Loss::Burst {
                to_bad: 0.02,
                to_good: 0.1,
                loss_bad: 0.9,
            },
        ),
    ] {
        let (t, failed) = run(loss, 1);
        println!("{name:>10}: all delivered after {t:.2} s ({failed} transfers failed)");
    }
}
