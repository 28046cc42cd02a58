//! The NET/ROM formats: known octets built from the published layout (and
//! checked against what the kernel's `nr_write_internal` and
//! `nr_transmit_buffer` write), round trips of arbitrary values, and
//! decoders that never panic.

use linklab_netrom::wire::{
    Alias, CircuitId, ConnectRequest, Datagram, DecodeError, Flags, Message, NodesBroadcast,
    NodesEntry, TimeoutExtension, MAX_NODES_ENTRIES,
};
use linklab_wire::ax25::{Address, Callsign};
use proptest::prelude::*;

fn addr(text: &str) -> Address {
    text.parse().unwrap()
}

/// `K1XYZ-1` as a NET/ROM callsign field: characters shifted left one
/// bit, space padded, SSID octet 0x60 | SSID << 1 (reserved bits set,
/// C and extension clear).
const K1XYZ_1: [u8; 7] = [0x96, 0x62, 0xB0, 0xB2, 0xB4, 0x40, 0x62];
/// `N0DEF`.
const N0DEF: [u8; 7] = [0x9C, 0x60, 0x88, 0x8A, 0x8C, 0x40, 0x60];
/// `G8ABC-7`.
const G8ABC_7: [u8; 7] = [0x8E, 0x70, 0x82, 0x84, 0x86, 0x40, 0x6E];

/// The layout LinBPQ's `SENDNODES` writes: 0xFF, the alias, then per
/// destination its callsign and alias (13 octets), the best neighbour (7)
/// and the quality (1).
#[test]
fn nodes_broadcast_known_octets() {
    let broadcast = NodesBroadcast {
        alias: "DEF".parse().unwrap(),
        entries: vec![NodesEntry {
            destination: addr("K1XYZ-1"),
            alias: "XYZ".parse().unwrap(),
            best_neighbour: addr("N0DEF"),
            quality: 192,
        }],
    };
    let mut expected = vec![0xFF, b'D', b'E', b'F', b' ', b' ', b' '];
    expected.extend_from_slice(&K1XYZ_1);
    expected.extend_from_slice(b"XYZ   ");
    expected.extend_from_slice(&N0DEF);
    expected.push(192);
    assert_eq!(broadcast.encode(), expected);
    assert_eq!(NodesBroadcast::decode(&expected).unwrap(), broadcast);
}

#[test]
fn nodes_broadcast_tolerates_a_short_tail_and_rejects_a_bad_callsign() {
    let mut octets = NodesBroadcast {
        alias: Alias::BLANK,
        entries: Vec::new(),
    }
    .encode();
    assert_eq!(octets, [0xFF, b' ', b' ', b' ', b' ', b' ', b' ']);
    // LinBPQ ignores fewer than 21 octets after the last entry.
    octets.extend_from_slice(&[1, 2, 3]);
    assert!(NodesBroadcast::decode(&octets).unwrap().entries.is_empty());
    let mut bad = vec![0xFF, b'A', b'B', b'C', b' ', b' ', b' '];
    bad.extend_from_slice(&[0x01; 21]);
    assert!(matches!(
        NodesBroadcast::decode(&bad),
        Err(DecodeError::Address { .. })
    ));
    assert_eq!(
        NodesBroadcast::decode(&[0x00, 1]),
        Err(DecodeError::NotNodes(0))
    );
    assert!(matches!(
        NodesBroadcast::decode(&[0xFF, b'A']),
        Err(DecodeError::Truncated { .. })
    ));
}

#[test]
fn nodes_broadcasts_split_at_eleven_entries() {
    let entry = NodesEntry {
        destination: addr("K1XYZ-1"),
        alias: "XYZ".parse().unwrap(),
        best_neighbour: addr("N0DEF"),
        quality: 100,
    };
    let frames = NodesBroadcast::split(Alias::BLANK, &vec![entry; 23]);
    assert_eq!(
        frames.iter().map(|f| f.entries.len()).collect::<Vec<_>>(),
        [11, 11, 1]
    );
    // 1 + 6 + 11 × 21 = 238 octets: within the 256-octet information field.
    assert_eq!(frames[0].encode().len(), 238);
    assert_eq!(MAX_NODES_ENTRIES, 11);
}

#[test]
fn connect_request_known_octets_as_the_kernel_writes_them() {
    // Circuit 0x01/0x02, window 4, user G8ABC-7 at node K1XYZ-1, timeout
    // 120 s low octet first; from N0DEF to K1XYZ-1 with TTL 16.
    let datagram = Datagram {
        origin: addr("N0DEF"),
        destination: addr("K1XYZ-1"),
        ttl: 16,
        message: Message::ConnectRequest(ConnectRequest {
            circuit: CircuitId { index: 1, id: 2 },
            window: 4,
            user: addr("G8ABC-7"),
            originating_node: addr("N0DEF"),
            timeout: Some(TimeoutExtension(120)),
            trailer: Vec::new(),
        }),
    };
    let mut expected = Vec::new();
    expected.extend_from_slice(&N0DEF);
    // The destination's SSID octet has the extension bit set.
    let mut dest = K1XYZ_1;
    dest[6] |= 0x01;
    expected.extend_from_slice(&dest);
    expected.push(16);
    expected.extend_from_slice(&[0x01, 0x02, 0x00, 0x00, 0x01, 0x04]);
    expected.extend_from_slice(&G8ABC_7);
    expected.extend_from_slice(&N0DEF);
    expected.extend_from_slice(&[0x78, 0x00]);
    let octets = datagram.encode();
    assert_eq!(octets, expected);
    // 37 octets: the length at which the kernel reads the timeout.
    assert_eq!(octets.len(), 37);
    assert_eq!(Datagram::decode(&octets).unwrap(), datagram);
}

#[test]
fn linbpq_compression_bit_is_not_part_of_the_timeout() {
    let request = ConnectRequest {
        circuit: CircuitId { index: 0, id: 1 },
        window: 4,
        user: addr("G8ABC-7"),
        originating_node: addr("N0DEF"),
        timeout: Some(TimeoutExtension(0x4000 | 60)),
        trailer: vec![b'Z'],
    };
    assert_eq!(request.timeout_secs(), Some(60));
    let mut octets = Vec::new();
    Message::ConnectRequest(request.clone()).encode_into(&mut octets);
    assert_eq!(
        Message::decode(&octets).unwrap(),
        Message::ConnectRequest(request)
    );
}

#[test]
fn information_known_octets() {
    let message = Message::Information {
        your: CircuitId {
            index: 0x12,
            id: 0x34,
        },
        tx_sequence: 7,
        rx_sequence: 3,
        flags: Flags {
            choke: true,
            more_follows: true,
            ..Flags::default()
        },
        data: b"hi".to_vec(),
    };
    let mut octets = Vec::new();
    message.encode_into(&mut octets);
    assert_eq!(octets, [0x12, 0x34, 7, 3, 0x80 | 0x20 | 0x05, b'h', b'i']);
    assert_eq!(Message::decode(&octets).unwrap(), message);
    let ack = [0x12, 0x34, 0, 9, 0x40 | 0x06];
    assert_eq!(
        Message::decode(&ack).unwrap(),
        Message::InformationAck {
            your: CircuitId {
                index: 0x12,
                id: 0x34
            },
            rx_sequence: 9,
            flags: Flags {
                nak: true,
                ..Flags::default()
            },
        }
    );
}

#[test]
fn short_or_unknown_messages_decode_as_other() {
    // A connect request cut short, IP over NET/ROM, LinBPQ's reset.
    for octets in [
        &[1u8, 2, 0, 0, 1, 4][..],
        &[0x0C, 0x0C, 0, 0, 0, 0x45],
        &[1, 2, 3, 4, 7],
    ] {
        let message = Message::decode(octets).unwrap();
        assert!(matches!(message, Message::Other { .. }), "{message:?}");
        let mut again = Vec::new();
        message.encode_into(&mut again);
        assert_eq!(again, octets);
    }
    assert!(matches!(
        Message::decode(&[1, 2, 3]),
        Err(DecodeError::Truncated { .. })
    ));
}

fn address() -> impl Strategy<Value = Address> {
    ("[A-Z0-9]{1,6}", 0u8..16)
        .prop_map(|(call, ssid)| Address::new(call.parse::<Callsign>().unwrap(), ssid).unwrap())
}

fn alias() -> impl Strategy<Value = Alias> {
    proptest::array::uniform6(any::<u8>()).prop_map(Alias::from)
}

fn circuit() -> impl Strategy<Value = CircuitId> {
    (any::<u8>(), any::<u8>()).prop_map(|(index, id)| CircuitId { index, id })
}

fn flags() -> impl Strategy<Value = Flags> {
    (0u8..16).prop_map(|bits| Flags::from_octet(bits << 4))
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        (
            circuit(),
            any::<u8>(),
            address(),
            address(),
            proptest::option::of(any::<u16>()),
            proptest::collection::vec(any::<u8>(), 0..4)
        )
            .prop_map(|(circuit, window, user, node, timeout, trailer)| {
                Message::ConnectRequest(ConnectRequest {
                    circuit,
                    window,
                    user,
                    originating_node: node,
                    timeout: timeout.map(TimeoutExtension),
                    trailer: if timeout.is_some() {
                        trailer
                    } else {
                        Vec::new()
                    },
                })
            }),
        (
            circuit(),
            circuit(),
            any::<u8>(),
            any::<bool>(),
            proptest::collection::vec(any::<u8>(), 0..2)
        )
            .prop_map(|(your, my, window, refused, trailer)| Message::ConnectAck {
                your,
                my,
                window,
                refused,
                trailer
            }),
        circuit().prop_map(|your| Message::DisconnectRequest { your }),
        circuit().prop_map(|your| Message::DisconnectAck { your }),
        (
            circuit(),
            any::<u8>(),
            any::<u8>(),
            flags(),
            proptest::collection::vec(any::<u8>(), 0..240)
        )
            .prop_map(|(your, tx_sequence, rx_sequence, flags, data)| {
                Message::Information {
                    your,
                    tx_sequence,
                    rx_sequence,
                    flags,
                    data,
                }
            }),
        (circuit(), any::<u8>(), flags()).prop_map(|(your, rx_sequence, flags)| {
            Message::InformationAck {
                your,
                rx_sequence,
                flags,
            }
        }),
    ]
}

proptest! {
    #[test]
    fn datagrams_round_trip(origin in address(), destination in address(), ttl in any::<u8>(), message in message()) {
        let datagram = Datagram { origin, destination, ttl, message };
        prop_assert_eq!(Datagram::decode(&datagram.encode()).unwrap(), datagram);
    }

    #[test]
    fn nodes_broadcasts_round_trip(
        alias in alias(),
        entries in proptest::collection::vec((address(), alias(), address(), any::<u8>()), 0..=MAX_NODES_ENTRIES),
    ) {
        let broadcast = NodesBroadcast {
            alias,
            entries: entries
                .into_iter()
                .map(|(destination, alias, best_neighbour, quality)| NodesEntry { destination, alias, best_neighbour, quality })
                .collect(),
        };
        prop_assert_eq!(NodesBroadcast::decode(&broadcast.encode()).unwrap(), broadcast);
    }

    #[test]
    fn decoders_are_total_and_stable(octets in proptest::collection::vec(any::<u8>(), 0..300)) {
        if let Ok(d) = Datagram::decode(&octets) {
            prop_assert_eq!(Datagram::decode(&d.encode()).unwrap(), d);
        }
        if let Ok(m) = Message::decode(&octets) {
            let mut again = Vec::new();
            m.encode_into(&mut again);
            prop_assert_eq!(Message::decode(&again).unwrap(), m);
        }
        if let Ok(b) = NodesBroadcast::decode(&octets) {
            prop_assert_eq!(NodesBroadcast::decode(&b.encode()).unwrap(), b);
        }
    }
}

#[test]
fn alias_text() {
    let alias: Alias = "bpqnod".parse().unwrap();
    assert_eq!(alias.to_string(), "BPQNOD");
    assert!("TOOLONG".parse::<Alias>().is_err());
    assert!("A B".parse::<Alias>().is_err());
    assert_eq!(Alias::from(*b"AB\0\0  ").text(), "AB");
}
