//! A network of NET/ROM nodes in virtual time: each link joins one port
//! of one node to one port of another, carries NODES broadcasts and
//! datagrams after a fixed delay, may lose them (seeded), and can be cut
//! and restored; and two users moving data over a circuit. Shared by the
//! convergence example and the tests that run it small
//! (`tests/network.rs`).

use std::collections::BTreeMap;

use linklab_core::{earliest, Duration, Engine, Instant, Stream};
use linklab_netrom::l3::{Node, NodeConfig, Transmit};
use linklab_netrom::l4::{CircuitEvent, CircuitHandle, CloseReason, ConnectError};
use linklab_netrom::routing::NeighbourKey;
use linklab_netrom::wire::Alias;
use linklab_wire::ax25::Address;

/// How the nodes are joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topology {
    /// Node i to node i + 1.
    Line,
    /// A grid of two rows: node i to its right and lower neighbours.
    Grid,
}

/// One end of a link: a node and its port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct End {
    /// The node's index.
    pub node: usize,
    /// The port on it.
    pub port: usize,
}

/// A link between two ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// The two ends.
    pub ends: [End; 2],
    /// Whether it carries anything.
    pub up: bool,
}

/// What arrives at a node.
#[derive(Debug, Clone)]
enum Delivery {
    Nodes {
        port: usize,
        from: Address,
        info: Vec<u8>,
    },
    Datagram {
        port: usize,
        from: Address,
        info: Vec<u8>,
    },
}

/// The network.
pub struct Net {
    /// Virtual time.
    pub now: Instant,
    /// The nodes, node i called `call(i)`.
    pub nodes: Vec<Node>,
    /// The links.
    pub links: Vec<Link>,
    /// One-way delay of every link.
    pub delay: Duration,
    /// Probability that a unit is lost on a link.
    pub loss: f64,
    in_flight: BTreeMap<(Instant, u64), (usize, Delivery)>,
    sent: u64,
    rng: Stream,
}

/// The callsign of node `i`.
pub fn call(i: usize) -> Address {
    format!("ND{i:02}").parse().expect("a valid callsign")
}

impl Net {
    /// `n` nodes joined as `topology`, each link of quality `quality` at
    /// both ends, first broadcasts spread uniformly over one interval
    /// (seeded), every node built from `config(i)`.
    pub fn new(
        n: usize,
        topology: Topology,
        quality: u8,
        seed: u64,
        config: impl Fn(usize) -> NodeConfig,
    ) -> Net {
        let mut pairs = Vec::new();
        match topology {
            Topology::Line => pairs.extend((1..n).map(|i| (i - 1, i))),
            Topology::Grid => {
                let cols = n.div_ceil(2);
                for i in 0..n {
                    if (i + 1) % cols != 0 && i + 1 < n {
                        pairs.push((i, i + 1));
                    }
                    if i + cols < n {
                        pairs.push((i, i + cols));
                    }
                }
            }
        }
        let mut ports = vec![0usize; n];
        let mut links = Vec::new();
        for (a, b) in pairs {
            let ends = [
                End {
                    node: a,
                    port: ports[a],
                },
                End {
                    node: b,
                    port: ports[b],
                },
            ];
            ports[a] += 1;
            ports[b] += 1;
            links.push(Link { ends, up: true });
        }
        let mut rng = Stream::from_seed(seed);
        let nodes = (0..n)
            .map(|i| {
                let mut cfg = config(i);
                cfg.broadcast_ports = (0..ports[i]).collect();
                let interval = cfg.nodes_interval.as_micros() as u64;
                let first = Instant::from_micros(rng.below(interval.max(1)));
                let mut node = Node::new(cfg, first);
                for port in 0..ports[i] {
                    node.table_mut().set_port_quality(port, quality);
                }
                node
            })
            .collect();
        Net {
            now: Instant::ZERO,
            nodes,
            links,
            delay: Duration::from_millis(100),
            loss: 0.0,
            in_flight: BTreeMap::new(),
            sent: 0,
            rng,
        }
    }

    /// The usual node configuration for node `i`.
    pub fn node_config(i: usize) -> NodeConfig {
        let alias: Alias = format!("A{i}").parse().expect("a valid alias");
        NodeConfig::new(call(i), alias, Vec::new())
    }

    /// The other end of the link at `from`, if it is up.
    fn across(&self, from: End) -> Option<End> {
        self.links
            .iter()
            .filter(|l| l.up)
            .find_map(|l| match l.ends {
                [a, b] if a == from => Some(b),
                [a, b] if b == from => Some(a),
                _ => None,
            })
    }

    /// Sets the link between nodes `a` and `b` up or down; a link going
    /// down loses what is on it.
    pub fn set_link(&mut self, a: usize, b: usize, up: bool) {
        for l in &mut self.links {
            let nodes = [l.ends[0].node, l.ends[1].node];
            if nodes == [a, b] || nodes == [b, a] {
                l.up = up;
            }
        }
        if !up {
            // Whatever was on the air between them is lost.
            let on_link: Vec<_> = self
                .in_flight
                .iter()
                .filter(|(_, (to, d))| {
                    let from = match d {
                        Delivery::Nodes { from, .. } | Delivery::Datagram { from, .. } => *from,
                    };
                    (*to == a && from == call(b)) || (*to == b && from == call(a))
                })
                .map(|(k, _)| *k)
                .collect();
            for k in on_link {
                self.in_flight.remove(&k);
            }
        }
    }

    fn drain(&mut self) {
        for i in 0..self.nodes.len() {
            while let Some(t) = self.nodes[i].poll_transmit(self.now) {
                match t {
                    Transmit::Nodes { port, info } => {
                        if let Some(end) = self.across(End { node: i, port }) {
                            self.schedule(
                                end.node,
                                Delivery::Nodes {
                                    port: end.port,
                                    from: call(i),
                                    info,
                                },
                            );
                        }
                    }
                    Transmit::Datagram { neighbour, info } => match self.across(End {
                        node: i,
                        port: neighbour.port,
                    }) {
                        Some(end) if call(end.node) == neighbour.call => {
                            self.schedule(
                                end.node,
                                Delivery::Datagram {
                                    port: end.port,
                                    from: call(i),
                                    info,
                                },
                            );
                        }
                        // The layer-2 link to the neighbour fails (at
                        // once here; a station reports it after its N2
                        // retries).
                        _ => self.nodes[i].handle_link_failure(neighbour),
                    },
                }
            }
        }
    }

    fn schedule(&mut self, to: usize, delivery: Delivery) {
        if self.loss > 0.0 && self.rng.bernoulli(self.loss) {
            return;
        }
        self.sent += 1;
        self.in_flight
            .insert((self.now + self.delay, self.sent), (to, delivery));
    }

    /// The next instant anything happens.
    pub fn next_wakeup(&self) -> Option<Instant> {
        earliest(
            self.nodes.iter().map(Engine::poll_timeout).chain([self
                .in_flight
                .keys()
                .next()
                .map(|k| k.0)]),
        )
    }

    /// Moves to the next wake-up no later than `limit` and handles
    /// everything due then; false (time set to `limit`) if there is none.
    pub fn step(&mut self, limit: Instant) -> bool {
        self.drain();
        match self.next_wakeup() {
            Some(t) if t <= limit => self.now = self.now.max(t),
            _ => {
                self.now = self.now.max(limit);
                return false;
            }
        }
        while let Some(entry) = self.in_flight.first_entry() {
            if entry.key().0 > self.now {
                break;
            }
            let (to, delivery) = entry.remove();
            match delivery {
                Delivery::Nodes { port, from, info } => {
                    // A corrupt broadcast is counted by the node and dropped.
                    let _ = self.nodes[to].handle_nodes(port, from, &info);
                }
                Delivery::Datagram { port, from, info } => {
                    let neighbour = NeighbourKey { port, call: from };
                    let _ = self.nodes[to].handle_datagram(self.now, neighbour, &info);
                }
            }
        }
        for node in &mut self.nodes {
            if node.poll_timeout().is_some_and(|t| t <= self.now) {
                node.handle_timeout(self.now);
            }
        }
        self.drain();
        true
    }

    /// Whether every node has a usable route to every other.
    pub fn converged(&self) -> bool {
        self.nodes.iter().enumerate().all(|(i, node)| {
            (0..self.nodes.len()).all(|j| j == i || node.table().best_route(&call(j)).is_some())
        })
    }

    /// Whether a datagram from node `i` to node `j` gets there by the
    /// nodes' best routes over the links that are up (no dead end, no
    /// loop).
    pub fn reaches(&self, i: usize, j: usize) -> bool {
        let mut at = i;
        for _ in 0..self.nodes.len() {
            if at == j {
                return true;
            }
            let Some(route) = self.nodes[at].table().best_route(&call(j)) else {
                return false;
            };
            match self.across(End {
                node: at,
                port: route.neighbour.port,
            }) {
                Some(end) if call(end.node) == route.neighbour.call => at = end.node,
                _ => return false,
            }
        }
        at == j
    }

    /// Whether every node reaches every other.
    pub fn all_reachable(&self) -> bool {
        let n = self.nodes.len();
        (0..n).all(|i| (0..n).all(|j| self.reaches(i, j)))
    }

    /// Whether any node on `side` (nodes `< split` or `>= split`) still
    /// has a route to a node on the other side.
    pub fn any_route_across(&self, split: usize) -> bool {
        let n = self.nodes.len();
        (0..n).any(|i| {
            (0..n).any(|j| {
                (i < split) != (j < split) && self.nodes[i].table().best_route(&call(j)).is_some()
            })
        })
    }

    /// Steps until `done` holds (the time it first held) or `limit`.
    pub fn run_until(
        &mut self,
        limit: Instant,
        mut done: impl FnMut(&mut Net) -> bool,
    ) -> Option<Instant> {
        loop {
            if done(self) {
                return Some(self.now);
            }
            if !self.step(limit) {
                return done(self).then_some(self.now);
            }
        }
    }
}

/// A test pattern of `len` octets.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(17).wrapping_add(seed) ^ (i >> 7) as u8)
        .collect()
}

/// Two users moving data both ways over one circuit between two nodes:
/// side 0 at `nodes[0]` connects, side 1 at `nodes[1]` answers.
pub struct Transfer {
    /// The two nodes.
    pub nodes: [usize; 2],
    /// Each side's circuit, once it has one.
    pub circuits: [Option<CircuitHandle>; 2],
    /// What each side sends.
    pub outgoing: [Vec<u8>; 2],
    /// How much of it the transport has taken.
    pub offered: [usize; 2],
    /// What each side has read.
    pub received: [Vec<u8>; 2],
    /// Circuits closed: side and reason.
    pub closed: Vec<(usize, CloseReason)>,
}

impl Transfer {
    /// Connects a user at node `from` to node `to`, each to send `len`
    /// octets.
    pub fn start(
        net: &mut Net,
        from: usize,
        to: usize,
        len: usize,
    ) -> Result<Transfer, ConnectError> {
        let user: Address = "G1USR".parse().expect("a valid callsign");
        let near = net.nodes[from].connect(net.now, user, call(to))?;
        Ok(Transfer {
            nodes: [from, to],
            circuits: [Some(near), None],
            outgoing: [pattern(len, 1), pattern(len, 2)],
            offered: [0; 2],
            received: [Vec::new(), Vec::new()],
            closed: Vec::new(),
        })
    }

    /// What the users do: take events, offer data, read.
    pub fn act(&mut self, net: &mut Net) {
        let now = net.now;
        for side in 0..2 {
            let t = net.nodes[self.nodes[side]].transport_mut();
            while let Some(e) = t.poll_event() {
                match e {
                    CircuitEvent::Incoming { circuit, .. } if side == 1 => {
                        self.circuits[1] = Some(circuit)
                    }
                    CircuitEvent::Closed { reason, .. } => self.closed.push((side, reason)),
                    _ => {}
                }
            }
            let Some(c) = self.circuits[side] else {
                continue;
            };
            if self.offered[side] < self.outgoing[side].len() {
                if let Ok(n) = t.send(c, &self.outgoing[side][self.offered[side]..]) {
                    self.offered[side] += n;
                }
            }
            let mut buf = [0u8; 600];
            loop {
                let n = t.recv(now, c, &mut buf);
                if n == 0 {
                    break;
                }
                self.received[side].extend_from_slice(&buf[..n]);
            }
        }
    }

    /// Whether both sides have read everything the other sent.
    pub fn done(&self) -> bool {
        self.received[0].len() == self.outgoing[1].len()
            && self.received[1].len() == self.outgoing[0].len()
    }
}
