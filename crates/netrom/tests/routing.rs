//! The node table: learning from NODES broadcasts, the quality
//! arithmetic, obsolescence ageing, best-of-three order, locked routes,
//! loops and link failures.

use linklab_netrom::routing::{route_quality, NeighbourKey, NodeTable, RoutingConfig};
use linklab_netrom::wire::{Alias, NodesBroadcast, NodesEntry};
use linklab_wire::ax25::Address;

fn addr(text: &str) -> Address {
    text.parse().unwrap()
}

fn alias(text: &str) -> Alias {
    text.parse().unwrap()
}

fn entry(dest: &str, alias_text: &str, via: &str, quality: u8) -> NodesEntry {
    NodesEntry {
        destination: addr(dest),
        alias: alias(alias_text),
        best_neighbour: addr(via),
        quality,
    }
}

fn table() -> NodeTable {
    let mut t = NodeTable::new(addr("N0ME"), RoutingConfig::default());
    t.set_port_quality(0, 192);
    t
}

fn key(call: &str) -> NeighbourKey {
    NeighbourKey {
        port: 0,
        call: addr(call),
    }
}

#[test]
fn quality_is_rounded_as_the_nodes_compute_it() {
    // (q × n + 128) / 256.
    assert_eq!(route_quality(192, 192), 144);
    assert_eq!(route_quality(255, 255), 254);
    assert_eq!(route_quality(100, 200), 78); // 20128 / 256 = 78.6: truncated after the +128
    assert_eq!(route_quality(1, 128), 1); // 256 / 256
    assert_eq!(route_quality(1, 127), 0);
    assert_eq!(route_quality(0, 255), 0);
}

#[test]
fn learns_the_sender_and_its_entries() {
    let mut t = table();
    let heard = NodesBroadcast {
        alias: alias("BNODE"),
        entries: vec![
            entry("C1CCC", "CNODE", "C1CCC", 200),
            entry("D1DDD", "DNODE", "C1CCC", 150),
        ],
    };
    let learned = t.learn(0, addr("B1BBB"), &heard);
    assert_eq!(learned.taken, 2);
    let b = t.destination(&addr("B1BBB")).unwrap();
    assert_eq!(b.alias.to_string(), "BNODE");
    assert_eq!(b.routes[0].quality, 192);
    assert_eq!(b.routes[0].obsolescence, 6);
    let c = t.destination(&addr("C1CCC")).unwrap();
    assert_eq!(c.routes[0].quality, route_quality(200, 192));
    assert_eq!(c.routes[0].neighbour, key("B1BBB"));
    assert_eq!(t.find_alias(&alias("DNODE")).unwrap().call, addr("D1DDD"));
    assert_eq!(
        t.destination(&addr("D1DDD")).unwrap().routes[0].quality,
        113
    );
    // Our broadcast carries all three, through B1BBB.
    let ours = t.broadcast_entries();
    assert_eq!(ours.len(), 3);
    assert!(ours.iter().all(|e| e.best_neighbour == addr("B1BBB")));
}

#[test]
fn an_unconfigured_port_uses_the_default_path_quality() {
    let mut t = NodeTable::new(addr("N0ME"), RoutingConfig::default());
    let heard = NodesBroadcast {
        alias: alias("B"),
        entries: vec![entry("C1CCC", "C", "C1CCC", 255)],
    };
    t.learn(3, addr("B1BBB"), &heard);
    assert_eq!(t.destination(&addr("B1BBB")).unwrap().routes[0].quality, 10);
    assert_eq!(
        t.destination(&addr("C1CCC")).unwrap().routes[0].quality,
        route_quality(255, 10)
    );
}

#[test]
fn ourselves_and_loops_are_not_taken() {
    let mut t = table();
    let first = NodesBroadcast {
        alias: alias("B"),
        entries: vec![entry("C1CCC", "C", "C1CCC", 200)],
    };
    t.learn(0, addr("B1BBB"), &first);
    assert!(t.destination(&addr("C1CCC")).is_some());
    // B now routes to C through us, and lists us: the route via B is a
    // loop and goes; our own entry is ignored.
    let looped = NodesBroadcast {
        alias: alias("B"),
        entries: vec![
            entry("C1CCC", "C", "N0ME", 200),
            entry("N0ME", "ME", "N0ME", 255),
        ],
    };
    let learned = t.learn(0, addr("B1BBB"), &looped);
    assert_eq!((learned.taken, learned.loops, learned.ignored), (0, 1, 1));
    assert!(t.destination(&addr("C1CCC")).is_none());
    assert!(t.destination(&addr("N0ME")).is_none());
}

#[test]
fn below_minimum_quality_is_ignored() {
    let mut t = NodeTable::new(
        addr("N0ME"),
        RoutingConfig {
            minimum_quality: 150,
            ..RoutingConfig::default()
        },
    );
    t.set_port_quality(0, 200);
    let heard = NodesBroadcast {
        alias: alias("B"),
        entries: vec![
            entry("C1CCC", "C", "C1CCC", 255),
            entry("D1DDD", "D", "C1CCC", 180),
        ],
    };
    let learned = t.learn(0, addr("B1BBB"), &heard);
    // 255 × 200 → 199 taken; 180 × 200 → 141 ignored.
    assert_eq!((learned.taken, learned.ignored), (1, 1));
    assert!(t.destination(&addr("D1DDD")).is_none());
}

#[test]
fn routes_age_out_after_the_obsolescence_count() {
    let mut t = table();
    let heard = NodesBroadcast {
        alias: alias("B"),
        entries: vec![entry("C1CCC", "C", "C1CCC", 200)],
    };
    t.learn(0, addr("B1BBB"), &heard);
    // Fresh enough to advertise while obsolescence >= 5 (LinBPQ OBSMIN).
    t.age();
    assert_eq!(t.broadcast_entries().len(), 2);
    t.age();
    assert!(t.broadcast_entries().is_empty());
    for _ in 0..3 {
        t.age();
    }
    assert_eq!(
        t.destination(&addr("C1CCC")).unwrap().routes[0].obsolescence,
        1
    );
    // Heard again: refreshed to 6.
    t.learn(0, addr("B1BBB"), &heard);
    assert_eq!(
        t.destination(&addr("C1CCC")).unwrap().routes[0].obsolescence,
        6
    );
    for _ in 0..6 {
        t.age();
    }
    assert_eq!(t.destinations().count(), 0);
    assert_eq!(t.neighbours().count(), 0);
}

#[test]
fn keeps_the_best_three_in_order() {
    let mut t = table();
    for (i, (neighbour, quality)) in [
        ("B1AAA", 100),
        ("B1BBB", 220),
        ("B1CCC", 160),
        ("B1DDD", 40),
        ("B1EEE", 200),
    ]
    .into_iter()
    .enumerate()
    {
        let heard = NodesBroadcast {
            alias: alias("X"),
            entries: vec![entry("Z1ZZZ", "Z", neighbour, quality)],
        };
        let learned = t.learn(0, addr(neighbour), &heard);
        // The fourth (40) is worse than the three kept.
        assert_eq!(learned.taken, usize::from(i != 3), "{neighbour}");
    }
    let z = t.destination(&addr("Z1ZZZ")).unwrap();
    let order: Vec<(String, u8)> = z
        .routes
        .iter()
        .map(|r| (r.neighbour.call.to_string(), r.quality))
        .collect();
    assert_eq!(
        order,
        [
            ("B1BBB".to_string(), route_quality(220, 192)),
            ("B1EEE".to_string(), route_quality(200, 192)),
            ("B1CCC".to_string(), route_quality(160, 192)),
        ]
    );
    assert_eq!(
        t.best_route(&addr("Z1ZZZ")).unwrap().neighbour,
        key("B1BBB")
    );
}

#[test]
fn a_locked_route_keeps_its_quality_and_never_ages() {
    let mut t = table();
    t.lock_route(addr("Z1ZZZ"), alias("ZED"), key("B1BBB"), 50);
    let heard = NodesBroadcast {
        alias: alias("B"),
        entries: vec![entry("Z1ZZZ", "Z", "Z1ZZZ", 255)],
    };
    t.learn(0, addr("B1BBB"), &heard);
    let z = t.destination(&addr("Z1ZZZ")).unwrap();
    assert_eq!(z.routes.len(), 1);
    assert_eq!((z.routes[0].quality, z.routes[0].locked), (50, true));
    for _ in 0..20 {
        t.age();
    }
    assert_eq!(t.best_route(&addr("Z1ZZZ")).unwrap().quality, 50);
    // Advertised, locked routes being always fresh.
    assert!(t
        .broadcast_entries()
        .iter()
        .any(|e| e.destination == addr("Z1ZZZ")));
}

#[test]
fn link_failures_pass_over_a_neighbour_until_it_is_heard() {
    let mut t = table();
    let via = |n: &str, q| NodesBroadcast {
        alias: alias("X"),
        entries: vec![entry("Z1ZZZ", "Z", n, q)],
    };
    t.learn(0, addr("B1BBB"), &via("B1BBB", 220));
    t.learn(0, addr("B1CCC"), &via("B1CCC", 100));
    assert_eq!(
        t.best_route(&addr("Z1ZZZ")).unwrap().neighbour,
        key("B1BBB")
    );
    t.link_failed(key("B1BBB"));
    assert_eq!(
        t.best_route(&addr("Z1ZZZ")).unwrap().neighbour,
        key("B1BBB")
    );
    // link_fails_count 2.
    t.link_failed(key("B1BBB"));
    assert_eq!(
        t.best_route(&addr("Z1ZZZ")).unwrap().neighbour,
        key("B1CCC")
    );
    t.learn(0, addr("B1BBB"), &via("B1BBB", 220));
    assert_eq!(
        t.best_route(&addr("Z1ZZZ")).unwrap().neighbour,
        key("B1BBB")
    );
}

#[test]
fn a_broadcast_cannot_grow_the_table_past_its_limits() {
    let mut t = NodeTable::new(
        addr("N0ME"),
        RoutingConfig {
            maximum_destinations: 3,
            maximum_neighbours: 1,
            ..RoutingConfig::default()
        },
    );
    t.set_port_quality(0, 192);
    let heard = NodesBroadcast {
        alias: alias("B"),
        entries: vec![
            entry("C1CCC", "C", "C1CCC", 200),
            entry("D1DDD", "D", "C1CCC", 200),
            entry("E1EEE", "E", "C1CCC", 200),
        ],
    };
    let learned = t.learn(0, addr("B1BBB"), &heard);
    assert_eq!((learned.taken, learned.table_full), (2, 1));
    assert_eq!(t.destinations().count(), 3);
    // A second neighbour is one too many.
    let learned = t.learn(0, addr("F1FFF"), &heard);
    assert_eq!((learned.taken, learned.table_full), (0, 4));
    assert_eq!(t.neighbours().count(), 1);
    // Known destinations are still refreshed.
    t.age();
    let learned = t.learn(0, addr("B1BBB"), &heard);
    assert_eq!(learned.taken, 2);
    assert_eq!(
        t.destination(&addr("C1CCC")).unwrap().routes[0].obsolescence,
        6
    );
}

#[test]
fn quality_zero_shuts_a_port_out() {
    let mut t = table();
    t.set_port_quality(1, 0);
    let heard = NodesBroadcast {
        alias: alias("B"),
        entries: vec![entry("C1CCC", "C", "C1CCC", 255)],
    };
    let learned = t.learn(1, addr("B1BBB"), &heard);
    assert_eq!((learned.taken, learned.ignored), (0, 2));
    assert_eq!(t.destinations().count(), 0);
    assert_eq!(t.neighbours().count(), 0);
}
