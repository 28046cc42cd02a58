//! Fuzzes a NET/ROM node (`linklab_netrom::Node`: node table, forwarding
//! and the transport's circuits) as a bad neighbour and a bad far node
//! would drive it: arbitrary NODES broadcasts and datagrams, well-formed
//! datagrams carrying arbitrary transport messages (connect requests,
//! information out of window, acknowledgements of what was never sent,
//! choke and NAK at any time), link failures, a local user connecting,
//! sending, reading and disconnecting, and time advancing.
//!
//! Input: steps of one op octet (low 3 bits: what; high 5 bits: time to
//! advance, in seconds) and its operands (a length octet, then that many
//! octets).
//!
//! Invariants: no panic; every datagram the node sends decodes; every
//! NODES broadcast decodes and has at most 11 entries; no timer is due at
//! once after the node handled its timeouts.
#![no_main]

use core::time::Duration;

use libfuzzer_sys::fuzz_target;
use linklab_core::{Engine, Instant};
use linklab_netrom::routing::NeighbourKey;
use linklab_netrom::wire::{Datagram, Message, NodesBroadcast, MAX_NODES_ENTRIES};
use linklab_netrom::{CircuitHandle, Node, NodeConfig, Transmit};
use linklab_wire::ax25::Address;

mod input;
use input::Input;

const MAX_STEPS: usize = 512;

fuzz_target!(|data: &[u8]| {
    let me: Address = "ND00".parse().unwrap();
    let peer: Address = "ND02".parse().unwrap();
    let neighbour = NeighbourKey {
        port: 0,
        call: "ND01".parse().unwrap(),
    };
    let mut config = NodeConfig::new(me, "ME".parse().unwrap(), vec![0]);
    config.nodes_interval = Duration::from_secs(600);
    config.transport.transport_timeout = Duration::from_secs(20);
    config.transport.transport_acknowledge_delay = Duration::from_secs(2);
    config.transport.transport_busy_delay = Duration::from_secs(30);
    config.transport.receive_buffer = 600;
    config.transport.transport_no_activity_timeout = Some(Duration::from_secs(90));
    let mut node = Node::new(config, Instant::ZERO);
    node.table_mut().set_port_quality(0, 192);
    node.table_mut().lock_route(peer, "PEER".parse().unwrap(), neighbour, 150);
    let mut circuits: Vec<CircuitHandle> = Vec::new();
    let mut now = Instant::ZERO;
    let mut input = Input(data);
    for _ in 0..MAX_STEPS {
        let Some(op) = input.byte() else { break };
        now = now + Duration::from_secs(u64::from(op >> 3));
        let len = usize::from(input.byte().unwrap_or(0));
        let operand = input.take(len);
        let pick = operand.first().copied().unwrap_or(0);
        match op & 0x07 {
            0 => {
                let _ = node.handle_nodes(0, neighbour.call, operand);
            }
            1 => {
                let _ = node.handle_datagram(now, neighbour, operand);
            }
            2 | 3 => {
                // A well-formed datagram from the far node with whatever
                // transport message the fuzzer writes; op 3 aims it at
                // one of our circuits.
                let mut octets = operand.to_vec();
                if op & 0x07 == 3 {
                    if let (Some(c), Some(h)) = (circuits.get(usize::from(pick) % circuits.len().max(1)), octets.get_mut(..2)) {
                        h.copy_from_slice(&[c.0.index, c.0.id]);
                    }
                }
                if let Ok(message) = Message::decode(&octets) {
                    let d = Datagram {
                        origin: peer,
                        destination: me,
                        ttl: 10,
                        message,
                    };
                    let _ = node.handle_datagram(now, neighbour, &d.encode());
                }
            }
            4 => match pick % 4 {
                0 => {
                    if let Ok(c) = node.connect(now, "G1USR".parse().unwrap(), peer) {
                        circuits.push(c);
                    }
                }
                1 => {
                    if let Some(&c) = circuits.last() {
                        let _ = node.transport_mut().send(c, operand);
                    }
                }
                2 => {
                    if let Some(&c) = circuits.first() {
                        let mut buf = [0u8; 300];
                        let _ = node.transport_mut().recv(now, c, &mut buf);
                    }
                }
                _ => {
                    if let Some(c) = circuits.pop() {
                        node.transport_mut().disconnect(c);
                    }
                }
            },
            5 => node.handle_link_failure(neighbour),
            _ => {
                if let Some(at) = node.poll_timeout() {
                    now = now.max(at);
                    node.handle_timeout(now);
                    assert!(node.poll_timeout().is_none_or(|t| t > now), "a timer due at once after handle_timeout");
                }
            }
        }
        while let Some(e) = node.transport_mut().poll_event() {
            if let linklab_netrom::CircuitEvent::Incoming { circuit, .. } = e {
                circuits.push(circuit);
            }
        }
        while let Some(t) = node.poll_transmit(now) {
            match t {
                Transmit::Nodes { info, .. } => {
                    let b = NodesBroadcast::decode(&info).expect("our NODES broadcast decodes");
                    assert!(b.entries.len() <= MAX_NODES_ENTRIES);
                }
                Transmit::Datagram { info, .. } => {
                    Datagram::decode(&info).expect("our datagram decodes");
                }
            }
        }
    }
});
