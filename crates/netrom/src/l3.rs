//! One NET/ROM node (layer 3): NODES broadcasts sent every interval and
//! taken in, the node table, datagrams for us handed to the transport and
//! others forwarded to the best neighbour with their TTL decremented, as
//! the kernel (`nr_route_frame`) and LinBPQ (`L3Code.c`) do.
//!
//! The node owns no AX.25 link. What it sends leaves as a [`Transmit`]:
//! a NODES broadcast for a port (the driver sends it as a UI frame to
//! `NODES` with PID 0xCF) or a datagram for a neighbour (the driver sends
//! it in I frames with PID 0xCF on the AX.25 link to that neighbour,
//! opening the link first if need be). What comes in is handed over by
//! [`Node::handle_nodes`] and [`Node::handle_datagram`]; a link that fails
//! is reported by [`Node::handle_link_failure`].

use std::collections::VecDeque;

use linklab_core::{Duration, Engine, Instant};
use linklab_wire::ax25::{same_station, Address};

use crate::l4::{CircuitHandle, ConnectError, Transport, TransportConfig};
use crate::routing::{Learned, NeighbourKey, NodeTable, RoutingConfig};
use crate::wire::{station, Alias, Datagram, DecodeError, NodesBroadcast};

/// The destination callsign of NODES broadcasts (LinBPQ's `NODECALL`,
/// `L2Code.c`, the destination of `SENDNODES`).
pub const NODES_DESTINATION: &str = "NODES";

/// The destination of LinBPQ's link keepalive: an empty information
/// message with TTL 1 that LinBPQ sends to a neighbour when the AX.25 link
/// to it comes up and while it idles (`BPQINP3.c` `SendKeepAlive`). It is
/// for no node; it only keeps the link in use.
pub const KEEPALIVE_DESTINATION: &str = "KEEPLI";

/// A node's identity and parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeConfig {
    /// The node's callsign (LinBPQ `NODECALL`; kernel `nrports` call).
    pub call: Address,
    /// The node's alias (LinBPQ `NODEALIAS`; kernel `nrports` alias).
    pub alias: Alias,
    /// Time between NODES broadcasts, and the unit of obsolescence
    /// ageing: LinBPQ `NODESINTERVAL` (minutes, 30 by default in
    /// `config.c`; many sysops set 60); netromd's `-t` (the kernel has no
    /// broadcast of its own). 30 minutes here, as LinBPQ.
    pub nodes_interval: Duration,
    /// Whether datagrams for other nodes are forwarded:
    /// `routing_control` 1 (kernel `NR_DEFAULT_ROUTING`); when off, the
    /// node is an end node and drops them.
    pub routing_control: bool,
    /// The ports NODES broadcasts go out on (LinBPQ's per-port
    /// `NODESINTERVAL`/`QUALITY` 0 turns a port off; the kernel's
    /// `nrbroadcast` lists ports).
    pub broadcast_ports: Vec<usize>,
    /// The routing parameters.
    pub routing: RoutingConfig,
    /// The transport parameters.
    pub transport: TransportConfig,
}

impl NodeConfig {
    /// A node with the usual defaults, broadcasting on `broadcast_ports`.
    pub fn new(call: Address, alias: Alias, broadcast_ports: Vec<usize>) -> NodeConfig {
        NodeConfig {
            call,
            alias,
            nodes_interval: Duration::from_secs(30 * 60),
            routing_control: true,
            broadcast_ports,
            routing: RoutingConfig::default(),
            transport: TransportConfig::default(),
        }
    }
}

/// What a node hands to its driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transmit {
    /// A NODES broadcast: send `info` as a UI frame to `NODES` with PID
    /// 0xCF on `port`.
    Nodes {
        /// The port.
        port: usize,
        /// The information field.
        info: Vec<u8>,
    },
    /// A datagram for a neighbour: send `info` with PID 0xCF over the
    /// AX.25 link to it.
    Datagram {
        /// The neighbour (port and callsign).
        neighbour: NeighbourKey,
        /// The information field.
        info: Vec<u8>,
    },
}

/// Datagrams counted by what became of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    /// For us, handed to the transport.
    pub delivered: u64,
    /// Sent on to a neighbour.
    pub forwarded: u64,
    /// Dropped: the TTL ran out.
    pub ttl_expired: u64,
    /// Dropped: no route to the destination.
    pub no_route: u64,
    /// Dropped: for another node while `routing_control` is off.
    pub not_routing: u64,
    /// Dropped: the octets were not a datagram or NODES broadcast.
    pub malformed: u64,
    /// Dropped: a neighbour's link keepalive (to
    /// [`KEEPALIVE_DESTINATION`]), which needs no answer.
    pub keepalives: u64,
}

/// One NET/ROM node: its node table, its transport and its broadcasts.
#[derive(Debug, Clone)]
pub struct Node {
    config: NodeConfig,
    table: NodeTable,
    transport: Transport,
    next_broadcast: Instant,
    out: VecDeque<Transmit>,
    counters: Counters,
}

impl Node {
    /// A node whose first NODES broadcast is due at `first_broadcast`
    /// (a driver may spread nodes' phases; LinBPQ broadcasts soon after
    /// start).
    pub fn new(config: NodeConfig, first_broadcast: Instant) -> Node {
        let call = station(&config.call);
        Node {
            table: NodeTable::new(call, config.routing),
            transport: Transport::new(call, config.transport),
            config: NodeConfig { call, ..config },
            next_broadcast: first_broadcast,
            out: VecDeque::new(),
            counters: Counters::default(),
        }
    }

    /// The identity and parameters.
    pub fn config(&self) -> &NodeConfig {
        &self.config
    }

    /// The node table.
    pub fn table(&self) -> &NodeTable {
        &self.table
    }

    /// The node table, to configure neighbours, port qualities and
    /// locked routes.
    pub fn table_mut(&mut self) -> &mut NodeTable {
        &mut self.table
    }

    /// The circuits.
    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    /// The circuits, to send, read, disconnect and poll events.
    pub fn transport_mut(&mut self) -> &mut Transport {
        &mut self.transport
    }

    /// When the next NODES broadcast is due.
    pub fn next_broadcast(&self) -> Instant {
        self.next_broadcast
    }

    /// What became of the datagrams seen.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Opens a circuit for `user` to the node `destination`.
    pub fn connect(
        &mut self,
        now: Instant,
        user: Address,
        destination: Address,
    ) -> Result<CircuitHandle, ConnectError> {
        if self.table.best_route(&destination).is_none() {
            return Err(ConnectError::NoRoute(destination));
        }
        self.transport.connect(now, user, destination)
    }

    /// Takes the information field of a UI frame with PID 0xCF to
    /// `NODES` heard from `from` on `port`.
    pub fn handle_nodes(
        &mut self,
        port: usize,
        from: Address,
        info: &[u8],
    ) -> Result<Learned, DecodeError> {
        match NodesBroadcast::decode(info) {
            Ok(broadcast) => Ok(self.table.learn(port, from, &broadcast)),
            Err(e) => {
                self.counters.malformed += 1;
                Err(e)
            }
        }
    }

    /// Takes the information field of an I frame with PID 0xCF from
    /// `neighbour`: a datagram for us goes to the transport, any other is
    /// forwarded with its TTL one less (kernel `nr_route_frame`: dropped
    /// when the TTL reaches 0). An origin the table has no route to gets
    /// one back through `neighbour` ([`NodeTable::learn_origin`]).
    pub fn handle_datagram(
        &mut self,
        now: Instant,
        neighbour: NeighbourKey,
        info: &[u8],
    ) -> Result<(), DecodeError> {
        let datagram = match Datagram::decode(info) {
            Ok(d) => d,
            Err(e) => {
                self.counters.malformed += 1;
                return Err(e);
            }
        };
        if datagram.destination.callsign().as_str() == KEEPALIVE_DESTINATION {
            self.counters.keepalives += 1;
            return Ok(());
        }
        self.table.learn_origin(datagram.origin, neighbour);
        if same_station(&datagram.destination, &self.config.call) {
            self.counters.delivered += 1;
            self.transport.handle_datagram(now, datagram);
            return Ok(());
        }
        if !self.config.routing_control {
            self.counters.not_routing += 1;
            return Ok(());
        }
        let ttl = datagram.ttl.saturating_sub(1);
        if ttl == 0 {
            self.counters.ttl_expired += 1;
            return Ok(());
        }
        let mut octets = info.to_vec();
        // The TTL is the fifteenth octet; the rest goes on unchanged.
        if let Some(t) = octets.get_mut(14) {
            *t = ttl;
        }
        self.route(&datagram.destination, octets, true);
        Ok(())
    }

    /// The layer-2 link to `neighbour` failed (kernel `nr_link_failed`).
    pub fn handle_link_failure(&mut self, neighbour: NeighbourKey) {
        self.table.link_failed(neighbour);
    }

    /// Queues `octets` for the best neighbour towards `destination`.
    fn route(&mut self, destination: &Address, octets: Vec<u8>, forwarding: bool) {
        match self.table.best_route(destination) {
            Some(route) => {
                if forwarding {
                    self.counters.forwarded += 1;
                }
                self.out.push_back(Transmit::Datagram {
                    neighbour: route.neighbour,
                    info: octets,
                });
            }
            None => self.counters.no_route += 1,
        }
    }

    /// Ages the table and queues our NODES broadcast on every
    /// broadcasting port.
    fn broadcast(&mut self) {
        self.table.age();
        let entries = self.table.broadcast_entries();
        for port in self.config.broadcast_ports.clone() {
            for frame in NodesBroadcast::split(self.config.alias, &entries) {
                self.out.push_back(Transmit::Nodes {
                    port,
                    info: frame.encode(),
                });
            }
        }
    }
}

impl Engine for Node {
    type Transmit = Transmit;

    fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        loop {
            if let Some(t) = self.out.pop_front() {
                return Some(t);
            }
            let datagram = self.transport.poll_transmit(now)?;
            if same_station(&datagram.destination, &self.config.call) {
                // A circuit to ourselves.
                self.transport.handle_datagram(now, datagram);
                continue;
            }
            let destination = datagram.destination;
            self.route(&destination, datagram.encode(), false);
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        linklab_core::earliest([Some(self.next_broadcast), self.transport.poll_timeout()])
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.next_broadcast <= now {
            self.broadcast();
            while self.next_broadcast <= now {
                self.next_broadcast =
                    self.next_broadcast + self.config.nodes_interval.max(Duration::from_secs(1));
            }
        }
        self.transport.handle_timeout(now);
    }
}
