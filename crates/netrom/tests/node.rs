//! One node on its own: NODES broadcasts every interval on each
//! broadcasting port, datagrams for us to the transport, others forwarded
//! with the TTL one less, dropped at TTL 0 or without a route, garbage
//! counted and reported.

use linklab_core::{Duration, Engine, Instant};
use linklab_netrom::routing::NeighbourKey;
use linklab_netrom::wire::{CircuitId, Datagram, Message, NodesBroadcast, NodesEntry};
use linklab_netrom::{Node, NodeConfig, Transmit};
use linklab_wire::ax25::Address;

fn addr(text: &str) -> Address {
    text.parse().unwrap()
}

fn node() -> Node {
    let config = NodeConfig::new(addr("N0ME"), "ME".parse().unwrap(), vec![0, 2]);
    let mut node = Node::new(config, Instant::ZERO);
    node.table_mut().set_port_quality(0, 192);
    node
}

fn drain(node: &mut Node, now: Instant) -> Vec<Transmit> {
    std::iter::from_fn(|| node.poll_transmit(now)).collect()
}

fn datagram(to: &str, ttl: u8) -> Vec<u8> {
    Datagram {
        origin: addr("K1FAR"),
        destination: addr(to),
        ttl,
        message: Message::InformationAck {
            your: CircuitId { index: 1, id: 1 },
            rx_sequence: 0,
            flags: Default::default(),
        },
    }
    .encode()
}

#[test]
fn broadcasts_every_interval_on_each_broadcasting_port() {
    let mut n = node();
    assert_eq!(n.poll_timeout(), Some(Instant::ZERO));
    n.handle_timeout(Instant::ZERO);
    let first = drain(&mut n, Instant::ZERO);
    // An empty table still announces the node: one frame per port.
    assert_eq!(first.len(), 2);
    for (t, port) in first.iter().zip([0, 2]) {
        let Transmit::Nodes { port: p, info } = t else {
            panic!("{t:?}")
        };
        assert_eq!(*p, port);
        let b = NodesBroadcast::decode(info).unwrap();
        assert_eq!(b.alias.to_string(), "ME");
        assert!(b.entries.is_empty());
    }
    // Thirteen destinations heard: two frames per port next time.
    let entries: Vec<NodesEntry> = (0..12)
        .map(|i| NodesEntry {
            destination: addr(&format!("D{i}XX")),
            alias: format!("D{i}").parse().unwrap(),
            best_neighbour: addr("B1BBB"),
            quality: 200,
        })
        .collect();
    let heard = NodesBroadcast {
        alias: "B".parse().unwrap(),
        entries,
    };
    n.handle_nodes(0, addr("B1BBB"), &heard.encode()).unwrap();
    let interval = n.config().nodes_interval;
    assert_eq!(interval, Duration::from_secs(1800));
    assert_eq!(n.poll_timeout(), Some(Instant::ZERO + interval));
    n.handle_timeout(Instant::ZERO + interval);
    let second = drain(&mut n, Instant::ZERO + interval);
    let counts: Vec<usize> = second
        .iter()
        .map(|t| match t {
            Transmit::Nodes { info, .. } => NodesBroadcast::decode(info).unwrap().entries.len(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(counts, [11, 2, 11, 2]);
}

#[test]
fn forwards_with_the_ttl_one_less() {
    let mut n = node();
    let neighbour = NeighbourKey {
        port: 0,
        call: addr("B1BBB"),
    };
    n.table_mut()
        .lock_route(addr("K1XYZ"), "XYZ".parse().unwrap(), neighbour, 100);
    let now = Instant::ZERO;
    n.handle_datagram(now, neighbour, &datagram("K1XYZ", 5))
        .unwrap();
    let out = drain(&mut n, now);
    let [Transmit::Datagram {
        neighbour: to,
        info,
    }] = &out[..]
    else {
        panic!("{out:?}")
    };
    assert_eq!(*to, neighbour);
    let d = Datagram::decode(info).unwrap();
    assert_eq!(d.ttl, 4);
    // Everything but the TTL goes on unchanged.
    let mut expected = datagram("K1XYZ", 5);
    expected[14] = 4;
    assert_eq!(*info, expected);
    assert_eq!(n.counters().forwarded, 1);

    n.handle_datagram(now, neighbour, &datagram("K1XYZ", 1))
        .unwrap();
    n.handle_datagram(now, neighbour, &datagram("K1NONE", 9))
        .unwrap();
    assert!(drain(&mut n, now).is_empty());
    assert_eq!((n.counters().ttl_expired, n.counters().no_route), (1, 1));

    assert!(n.handle_datagram(now, neighbour, &[1, 2, 3]).is_err());
    assert!(n.handle_nodes(0, addr("B1BBB"), &[0x00]).is_err());
    assert_eq!(n.counters().malformed, 2);
}

#[test]
fn a_datagram_for_us_reaches_the_transport() {
    let mut n = node();
    let neighbour = NeighbourKey {
        port: 0,
        call: addr("B1BBB"),
    };
    n.table_mut()
        .lock_route(addr("K1FAR"), "FAR".parse().unwrap(), neighbour, 100);
    let request = Datagram {
        origin: addr("K1FAR"),
        destination: addr("N0ME"),
        ttl: 3,
        message: Message::ConnectRequest(linklab_netrom::wire::ConnectRequest {
            circuit: CircuitId { index: 7, id: 9 },
            window: 2,
            user: addr("G1USR"),
            originating_node: addr("K1FAR"),
            timeout: None,
            trailer: Vec::new(),
        }),
    };
    n.handle_datagram(Instant::ZERO, neighbour, &request.encode())
        .unwrap();
    assert_eq!(n.counters().delivered, 1);
    let event = n.transport_mut().poll_event();
    assert!(
        matches!(event, Some(linklab_netrom::CircuitEvent::Incoming { user, .. }) if user == addr("G1USR")),
        "{event:?}"
    );
    // The acknowledgement goes back through the route to K1FAR, with the
    // smaller window and our TTL.
    let out = drain(&mut n, Instant::ZERO);
    let [Transmit::Datagram {
        neighbour: to,
        info,
    }] = &out[..]
    else {
        panic!("{out:?}")
    };
    assert_eq!(*to, neighbour);
    let d = Datagram::decode(info).unwrap();
    assert_eq!(
        (d.origin, d.destination, d.ttl),
        (addr("N0ME"), addr("K1FAR"), 16)
    );
    assert!(matches!(
        d.message,
        Message::ConnectAck {
            your: CircuitId { index: 7, id: 9 },
            window: 2,
            refused: false,
            ..
        }
    ));
}

#[test]
fn an_end_node_does_not_forward() {
    let mut config = NodeConfig::new(addr("N0ME"), "ME".parse().unwrap(), vec![0]);
    config.routing_control = false;
    let mut n = Node::new(config, Instant::ZERO);
    let neighbour = NeighbourKey {
        port: 0,
        call: addr("B1BBB"),
    };
    n.table_mut()
        .lock_route(addr("K1XYZ"), "XYZ".parse().unwrap(), neighbour, 100);
    n.handle_datagram(Instant::ZERO, neighbour, &datagram("K1XYZ", 5))
        .unwrap();
    assert!(drain(&mut n, Instant::ZERO).is_empty());
    assert_eq!(n.counters().not_routing, 1);
}

#[test]
fn destinations_are_named_by_alias_or_callsign() {
    let mut n = node();
    let neighbour = NeighbourKey {
        port: 0,
        call: addr("B1BBB"),
    };
    n.table_mut()
        .lock_route(addr("G8BPQ-2"), "BPQNOD".parse().unwrap(), neighbour, 100);
    let t = n.table();
    assert_eq!(t.resolve("bpqnod").unwrap().call, addr("G8BPQ-2"));
    assert_eq!(t.resolve("G8BPQ-2").unwrap().alias.to_string(), "BPQNOD");
    assert!(t.resolve("G8BPQ").is_none());
    assert!(t.resolve("NOSUCH").is_none());
}

#[test]
fn a_caller_not_in_the_table_is_answered_through_the_neighbour_it_came_from() {
    // LinBPQ interop (docs/interop.md section 12): a connect request from
    // a node whose NODES broadcast had not reached us went unanswered
    // until the caller retried 120 s later. As the kernel's
    // `nr_route_frame` does, the origin gets a route through the
    // neighbour at quality 0: used for the answer, never broadcast.
    let mut n = node();
    let neighbour = NeighbourKey {
        port: 0,
        call: addr("B1BBB"),
    };
    let request = Datagram {
        origin: addr("K1FAR"),
        destination: addr("N0ME"),
        ttl: 3,
        message: Message::ConnectRequest(linklab_netrom::wire::ConnectRequest {
            circuit: CircuitId { index: 7, id: 9 },
            window: 2,
            user: addr("G1USR"),
            originating_node: addr("K1FAR"),
            timeout: None,
            trailer: Vec::new(),
        }),
    };
    n.handle_datagram(Instant::ZERO, neighbour, &request.encode())
        .unwrap();
    let out = drain(&mut n, Instant::ZERO);
    let [Transmit::Datagram {
        neighbour: to,
        info,
    }] = &out[..]
    else {
        panic!("{out:?}")
    };
    assert_eq!(*to, neighbour);
    let d = Datagram::decode(info).unwrap();
    assert_eq!(d.destination, addr("K1FAR"));
    assert!(
        matches!(d.message, Message::ConnectAck { .. }),
        "{:?}",
        d.message
    );
    let route = n.table().best_route(&addr("K1FAR")).expect("a route back");
    assert_eq!((route.neighbour, route.quality), (neighbour, 0));
    assert!(n
        .table()
        .broadcast_entries()
        .iter()
        .all(|e| e.destination != addr("K1FAR")));
}
