//! Known answers captured from LinBPQ 6.0.25.23 (two nodes, `N0BPA`/`BPQA`
//! and `N0BPB`/`BPQB`, each with one application `-1`, on `linklab
//! channel`; the run is in docs/interop.md, "NET/ROM against LinBPQ").
//! Each vector is a whole AX.25 frame as the channel's pcap holds it
//! (address, control, PID, information; no FCS), decoded here with the
//! crate's NET/ROM decoders, and the tables built from the broadcasts are
//! checked against what LinBPQ's `NODES`, `N <alias>` and `ROUTES`
//! commands showed in the same run.

use linklab_core::time::Instant;
use linklab_netrom::routing::{NeighbourKey, RoutingConfig};
use linklab_netrom::wire::{
    Alias, CircuitId, ConnectRequest, Datagram, Flags, Message, NodesBroadcast, NodesEntry,
    TimeoutExtension,
};
use linklab_netrom::{Node, NodeConfig, NodeTable};
use linklab_wire::ax25::{Address, Frame, Pid};
use linklab_wire::control::Modulus;

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// The information field of a captured frame, which must carry PID 0xCF.
fn netrom_info(frame: &str) -> Vec<u8> {
    let frame = Frame::decode(&hex(frame), Modulus::Mod8).unwrap();
    assert_eq!(frame.pid(), Some(Pid::from(0xCF)));
    frame.into_info()
}

fn addr(text: &str) -> Address {
    text.parse().unwrap()
}

fn alias(text: &str) -> Alias {
    text.parse().unwrap()
}

fn entry(destination: &str, name: &str, neighbour: &str, quality: u8) -> NodesEntry {
    NodesEntry {
        destination: addr(destination),
        alias: alias(name),
        best_neighbour: addr(neighbour),
        quality,
    }
}

/// BPQA's first NODES broadcast (UI, N0BPA>NODES): only its own
/// application, advertised at its `APPL1QUAL` 200 with the node itself as
/// best neighbour.
const A_NODES_1: &str =
    "9c9e888aa640e09c6084a082406103cfff4250514120209c6084a08240624250514142209c6084a0824060c8";

/// BPQB's second NODES broadcast, after it had heard BPQA's: its
/// application, then the two destinations learned from N0BPA at 192
/// (the port quality) and 150. The entries it learned carry SSID octets
/// with the reserved bits clear (0x00), its own entry 0x60.
const B_NODES_2: &str = "9c9e888aa640e09c6084a084406103cfff4250514220209c6084a08440624250514242209c6084a0844060c89c6084a08240004250514120209c6084a0824000c09c6084a08240624250514142209c6084a082400096";

/// BPQA's second NODES broadcast, the mirror of [`B_NODES_2`].
const A_NODES_2: &str = "9c9e888aa640e09c6084a082406103cfff4250514120209c6084a08240624250514142209c6084a0824060c89c6084a08440004250514220209c6084a0844000c09c6084a08440624250514242209c6084a084400096";

/// LinBPQ's link keepalive once the AX.25 link to a neighbour is up: an
/// empty information message to `KEEPLI` with TTL 1 and every transport
/// octet 0 (LinBPQ `SendKeepAlive`).
const A_KEEPLI: &str = "9c6084a08440e09c6084a082406110cf9c6084a0824060968a8aa09892e0010000000005";

/// `C BPQB` typed at BPQA: the connect request, with LinBPQ's timeout
/// extension (`L4TIMEOUT=60`, 0x003C, low octet first).
const A_CONNECT_REQUEST: &str = "9c6084a08440e09c6084a082406132cf9c6084a08240609c6084a08440001901dd000001049c6084a08240609c6084a08240603c00";

/// BPQB's acceptance: its own circuit 0x00/0xDA, window 4, and one octet
/// after the window (its `L3TIMETOLIVE`, 25). The origin's SSID octet is
/// 0x01 (extension bit set, reserved bits clear).
const B_CONNECT_ACK: &str =
    "9c6084a08240e09c6084a084406152cf9c6084a08440019c6084a08240001901dd00da020419";

/// `NODES` typed over the circuit: BPQA's first information message.
const A_INFO_NODES: &str =
    "9c6084a08440e09c6084a082406154cf9c6084a08240609c6084a08440001900da0000054e4f4445530d";

/// BPQB's answer, N(S) 0, N(R) 1: the acknowledgement rides on the data,
/// no separate information acknowledgement was sent in the whole run.
const B_INFO_NODES: &str = "9c6084a08240e09c6084a084406174cf9c6084a08440609c6084a08240001901dd000105425051423a4e304250427d204e6f6465730d425051413a4e304250412020202020202020202042505141423a4e304250412d312020202020202042505142423a4e304250422d31202020202020200d";

/// `BYE` over the circuit: BPQB closes it ...
const B_DISCONNECT_REQUEST: &str =
    "9c6084a08240e09c6084a0844061b8cf9c6084a08440609c6084a08240001901dd000003";

/// ... and BPQA acknowledges.
const A_DISCONNECT_ACK: &str =
    "9c6084a08440e09c6084a0824061bacf9c6084a08240019c6084a08440001900da000004";

/// `C BPQAB` typed at BPQB, to BPQA's application, which was not running.
const B_CONNECT_REQUEST_APPL: &str = "9c6084a08240e09c6084a0844061dacf9c6084a08440609c6084a08240621901dc000001049c6084a08440609c6084a08440603c00";

/// BPQA's refusal ("Busy from BPQAB:N0BPA-1" at BPQB): choke set, window
/// 0, and the request's user, node and timeout echoed after the window.
/// It comes from the application's callsign, N0BPA-1.
const A_CONNECT_REFUSED: &str = "9c6084a08440e09c6084a0824061dccf9c6084a08240039c6084a08440001901dc000082009c6084a08440609c6084a08440603c00";

#[test]
fn nodes_broadcasts_decode_as_linbpq_sent_them() {
    let a1 = NodesBroadcast::decode(&netrom_info(A_NODES_1)).unwrap();
    assert_eq!(a1.alias, alias("BPQA"));
    assert_eq!(a1.entries, [entry("N0BPA-1", "BPQAB", "N0BPA", 200)]);

    let b2 = NodesBroadcast::decode(&netrom_info(B_NODES_2)).unwrap();
    assert_eq!(b2.alias, alias("BPQB"));
    assert_eq!(
        b2.entries,
        [
            entry("N0BPB-1", "BPQBB", "N0BPB", 200),
            entry("N0BPA", "BPQA", "N0BPA", 192),
            entry("N0BPA-1", "BPQAB", "N0BPA", 150),
        ]
    );

    let a2 = NodesBroadcast::decode(&netrom_info(A_NODES_2)).unwrap();
    assert_eq!(
        a2.entries,
        [
            entry("N0BPA-1", "BPQAB", "N0BPA", 200),
            entry("N0BPB", "BPQB", "N0BPB", 192),
            entry("N0BPB-1", "BPQBB", "N0BPB", 150),
        ]
    );
}

/// The re-encoding is equal in meaning but not in octets: LinBPQ writes
/// the SSID octets of learned entries with the reserved bits clear, the
/// crate always sets them (AX.25 v2.2 3.12.2). Both read either.
#[test]
fn nodes_broadcast_reencodes_with_reserved_bits_set() {
    let captured = netrom_info(B_NODES_2);
    let decoded = NodesBroadcast::decode(&captured).unwrap();
    let ours = decoded.encode();
    assert_eq!(ours.len(), captured.len());
    let differ: Vec<usize> = (0..ours.len())
        .filter(|&i| ours[i] != captured[i])
        .collect();
    // The SSID octets of the 2nd and 3rd entries' destination and best
    // neighbour: 0x00 from LinBPQ, 0x60 from us.
    assert_eq!(differ, [7 + 21 + 6, 7 + 21 + 19, 7 + 42 + 19]);
    for i in differ {
        assert_eq!((captured[i], ours[i]), (0x00, 0x60));
    }
    assert_eq!(NodesBroadcast::decode(&ours).unwrap(), decoded);
}

/// BPQA's table after BPQB's second broadcast, as LinBPQ showed it:
/// `ROUTES` "> 1 N0BPB 192 2", `N BPQB` "192 6 1 N0BPB", `N BPQBB`
/// "150 6 1 N0BPB" (quality, obsolescence, port, neighbour). The entries
/// for BPQA itself and for BPQAB through N0BPA are not taken.
#[test]
fn table_from_linbpq_broadcast_matches_its_nodes_command() {
    let config = RoutingConfig {
        minimum_quality: 10,
        broadcast_minimum_obsolescence: 4,
        ..RoutingConfig::default()
    };
    let mut table = NodeTable::new(addr("N0BPA"), config);
    table.set_port_quality(1, 192);
    let b2 = NodesBroadcast::decode(&netrom_info(B_NODES_2)).unwrap();
    let learned = table.learn(1, addr("N0BPB"), &b2);
    assert_eq!(learned.taken, 1, "BPQBB; BPQB itself is the sender");
    assert_eq!(learned.ignored + learned.loops, 2);

    let n0bpb = NeighbourKey {
        port: 1,
        call: addr("N0BPB"),
    };
    let shown: Vec<(String, String, u8, u8, NeighbourKey)> = table
        .destinations()
        .map(|d| {
            let r = d.routes[0];
            (
                d.alias.text(),
                d.call.to_string(),
                r.quality,
                r.obsolescence,
                r.neighbour,
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("BPQB".into(), "N0BPB".into(), 192, 6, n0bpb),
            ("BPQBB".into(), "N0BPB-1".into(), 150, 6, n0bpb),
        ]
    );
    // BPQA advertises what it learned the way LinBPQ did in its second
    // broadcast (less its own application, which the crate has no
    // notion of).
    assert_eq!(
        table.broadcast_entries(),
        NodesBroadcast::decode(&netrom_info(A_NODES_2))
            .unwrap()
            .entries[1..]
    );
}

#[test]
fn keepalive_decodes_and_is_not_forwarded() {
    let info = netrom_info(A_KEEPLI);
    let datagram = Datagram::decode(&info).unwrap();
    assert_eq!(datagram.origin, addr("N0BPA"));
    assert_eq!(datagram.destination, addr("KEEPLI"));
    assert_eq!(datagram.ttl, 1);
    assert_eq!(
        datagram.message,
        Message::Information {
            your: CircuitId { index: 0, id: 0 },
            tx_sequence: 0,
            rx_sequence: 0,
            flags: Flags::default(),
            data: Vec::new(),
        }
    );

    let mut node = Node::new(
        NodeConfig::new(addr("N0BPB"), alias("BPQB"), vec![1]),
        Instant::from_micros(1_000_000_000),
    );
    let from = NeighbourKey {
        port: 1,
        call: addr("N0BPA"),
    };
    node.handle_datagram(Instant::from_micros(0), from, &info)
        .unwrap();
    assert_eq!(node.counters().keepalives, 1);
    assert_eq!(node.counters().ttl_expired, 0);
    assert_eq!(node.counters().forwarded, 0);
}

#[test]
fn circuit_messages_decode_as_linbpq_sent_them() {
    let request = Datagram::decode(&netrom_info(A_CONNECT_REQUEST)).unwrap();
    assert_eq!(
        (request.origin, request.destination, request.ttl),
        (addr("N0BPA"), addr("N0BPB"), 25)
    );
    let Message::ConnectRequest(r) = &request.message else {
        panic!("not a connect request: {:?}", request.message);
    };
    assert_eq!(
        *r,
        ConnectRequest {
            circuit: CircuitId {
                index: 0x01,
                id: 0xDD
            },
            window: 4,
            user: addr("N0BPA"),
            originating_node: addr("N0BPA"),
            timeout: Some(TimeoutExtension(60)),
            trailer: Vec::new(),
        }
    );
    assert_eq!(r.timeout_secs(), Some(60));

    let ack = Datagram::decode(&netrom_info(B_CONNECT_ACK)).unwrap();
    assert_eq!(
        (ack.origin, ack.destination, ack.ttl),
        (addr("N0BPB"), addr("N0BPA"), 25)
    );
    assert_eq!(
        ack.message,
        Message::ConnectAck {
            your: CircuitId {
                index: 0x01,
                id: 0xDD
            },
            my: CircuitId {
                index: 0x00,
                id: 0xDA
            },
            window: 4,
            refused: false,
            trailer: vec![25],
        }
    );

    let a_info = Datagram::decode(&netrom_info(A_INFO_NODES)).unwrap();
    assert_eq!(
        a_info.message,
        Message::Information {
            your: CircuitId {
                index: 0x00,
                id: 0xDA
            },
            tx_sequence: 0,
            rx_sequence: 0,
            flags: Flags::default(),
            data: b"NODES\r".to_vec(),
        }
    );
    let b_info = Datagram::decode(&netrom_info(B_INFO_NODES)).unwrap();
    let Message::Information {
        your,
        tx_sequence,
        rx_sequence,
        flags,
        data,
    } = b_info.message
    else {
        panic!("not information: {:?}", b_info.message);
    };
    assert_eq!(
        (your, tx_sequence, rx_sequence, flags),
        (
            CircuitId {
                index: 0x01,
                id: 0xDD
            },
            0,
            1,
            Flags::default()
        )
    );
    assert_eq!(
        data,
        b"BPQB:N0BPB} Nodes\rBPQA:N0BPA          BPQAB:N0BPA-1       BPQBB:N0BPB-1       \r"
    );

    let dreq = Datagram::decode(&netrom_info(B_DISCONNECT_REQUEST)).unwrap();
    assert_eq!(
        dreq.message,
        Message::DisconnectRequest {
            your: CircuitId {
                index: 0x01,
                id: 0xDD
            }
        }
    );
    let dack = Datagram::decode(&netrom_info(A_DISCONNECT_ACK)).unwrap();
    assert_eq!(dack.origin, addr("N0BPA"));
    assert_eq!(
        dack.message,
        Message::DisconnectAck {
            your: CircuitId {
                index: 0x00,
                id: 0xDA
            }
        }
    );
}

#[test]
fn refused_connect_echoes_the_request() {
    let request = Datagram::decode(&netrom_info(B_CONNECT_REQUEST_APPL)).unwrap();
    assert_eq!(request.destination, addr("N0BPA-1"));
    let refused = Datagram::decode(&netrom_info(A_CONNECT_REFUSED)).unwrap();
    assert_eq!(
        (refused.origin, refused.destination),
        (addr("N0BPA-1"), addr("N0BPB"))
    );
    let mut echoed = addr("N0BPB").encode(false).to_vec();
    echoed.extend_from_slice(&addr("N0BPB").encode(false));
    echoed.extend_from_slice(&[0x3C, 0x00]);
    assert_eq!(
        refused.message,
        Message::ConnectAck {
            your: CircuitId {
                index: 0x01,
                id: 0xDC
            },
            my: CircuitId { index: 0, id: 0 },
            window: 0,
            refused: true,
            trailer: echoed,
        }
    );
}
