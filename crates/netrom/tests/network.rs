//! Nodes in a line in virtual time (the convergence example's network,
//! run small): NODES learned hop by hop with the qualities the nodes
//! compute, a circuit through the middle node carrying 20 KB each way
//! byte-exact under loss, and the middle link cut and restored: the
//! circuit fails with a clear reason, the routes age out and come back.

#[allow(dead_code)]
#[path = "../examples/convergence/net.rs"]
mod net;

use linklab_core::{Duration, Instant};
use linklab_netrom::l4::CloseReason;
use linklab_netrom::routing::route_quality;
use net::{call, pattern, Net, Topology, Transfer};

fn interval() -> Duration {
    Net::node_config(0).nodes_interval
}

#[test]
fn a_line_learns_hop_by_hop_with_the_nodes_qualities() {
    let mut net = Net::new(4, Topology::Line, 192, 1, Net::node_config);
    let limit = net.now + interval() * 5;
    let t = net
        .run_until(limit, |net| net.converged())
        .expect("converged");
    // One hop per interval at worst, after each node's first broadcast.
    assert!(t <= Instant::ZERO + interval() * 4, "took {t:?}");
    let table = net.nodes[0].table();
    let q1 = table.best_route(&call(1)).unwrap().quality;
    let q2 = table.best_route(&call(2)).unwrap().quality;
    let q3 = table.best_route(&call(3)).unwrap().quality;
    assert_eq!(
        (q1, q2, q3),
        (
            192,
            route_quality(192, 192),
            route_quality(route_quality(192, 192), 192)
        )
    );
    assert_eq!((q2, q3), (144, 108));
    assert_eq!(table.destination(&call(3)).unwrap().alias.to_string(), "A3");
    // Node 0 reaches node 3 through node 1.
    assert_eq!(table.best_route(&call(3)).unwrap().neighbour.call, call(1));
    assert!(net.all_reachable());
}

#[test]
fn the_same_seed_converges_at_the_same_instant() {
    let times: Vec<_> = (0..2)
        .map(|_| {
            let mut net = Net::new(6, Topology::Grid, 200, 42, Net::node_config);
            net.run_until(net.now + interval() * 10, |net| net.all_reachable())
        })
        .collect();
    assert!(times[0].is_some());
    assert_eq!(times[0], times[1]);
}

/// Why side 0's circuit closed, if it did.
fn near_closed(u: &Transfer) -> Option<CloseReason> {
    u.closed
        .iter()
        .find(|(side, _)| *side == 0)
        .map(|(_, r)| *r)
}

#[test]
fn a_circuit_through_the_middle_node_then_the_middle_link_cut_and_restored() {
    let mut net = Net::new(3, Topology::Line, 192, 3, Net::node_config);
    net.delay = Duration::from_millis(150);
    let limit = net.now + interval() * 4;
    assert!(net.run_until(limit, |net| net.converged()).is_some());

    // A circuit from a user at node 0 to node 2, through node 1.
    net.loss = 0.05;
    let mut u = Transfer::start(&mut net, 0, 2, 20_000).unwrap();
    let near = u.circuits[0].unwrap();
    let limit = net.now + Duration::from_secs(6 * 3600);
    let done = net.run_until(limit, |net| {
        u.act(net);
        u.done()
    });
    assert!(
        done.is_some(),
        "received {} and {}",
        u.received[0].len(),
        u.received[1].len()
    );
    assert_eq!(u.received[1], u.outgoing[0]);
    assert_eq!(u.received[0], u.outgoing[1]);
    assert!(u.closed.is_empty());
    assert!(net.nodes[1].counters().forwarded > 100);
    assert_eq!(net.nodes[1].counters().ttl_expired, 0);

    // The middle link (node 1 - node 2) is cut while data flows.
    net.loss = 0.0;
    u.outgoing[0].extend(pattern(2_000, 3));
    net.set_link(1, 2, false);
    let cut = net.now;
    let failed = net.run_until(cut + Duration::from_secs(3600), |net| {
        u.act(net);
        near_closed(&u).is_some()
    });
    assert!(failed.is_some());
    let reason = near_closed(&u).unwrap();
    assert_eq!(reason, CloseReason::TimedOut { tries: 3 });
    assert_eq!(
        reason.to_string(),
        "no answer from the far node after 3 tries (transport timeout)"
    );
    // The data not acknowledged is there to report.
    assert!(net.nodes[0].transport().unacknowledged(near) > 0);

    // The routes across the cut age out: obsolescence 6 at one per
    // interval, then one more for the node behind.
    let gone = net
        .run_until(cut + interval() * 9, |net| !net.any_route_across(2))
        .expect("routes aged out");
    assert!(gone > cut + interval() * 5, "gone after {:?}", gone - cut);
    assert!(net.nodes[0]
        .connect(net.now, "G1USR".parse().unwrap(), call(2))
        .is_err());

    // Restored: the routes come back within a few intervals.
    net.set_link(1, 2, true);
    let restored = net.now;
    let back = net.run_until(restored + interval() * 3, |net| net.all_reachable());
    assert!(back.is_some());
}
