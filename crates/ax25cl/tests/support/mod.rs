//! Two nodes, each a bundle agent over an AX.25 CL session over a real
//! AX.25 `DataLink`, joined by a wire (one `linklab_testkit::Impaired`
//! channel each way) that loses frames at a seeded rate and can be cut:
//! the integration a node does, in virtual time.

#![allow(dead_code)]

use linklab_core::{Engine, Instant, Streams};
use std::time::Duration;

use linklab_ax25cl::{Config as ClConfig, Event as ClEvent, Session, State as ClState};
use linklab_dtn::{
    Agent, Config as AgentConfig, Delivery, Eid, LinkId, MemoryStore, SendRequest, Transmit,
    TransmitId,
};
use linklab_link::{Config as LinkConfig, DataLink, Event as LinkEvent, State as LinkState};
use linklab_testkit::{Impaired, Impairment};
use linklab_wire::ax25::{Address, Frame};
use linklab_wire::control::Modulus;

/// The link both agents name their CL session by.
pub const LINK: LinkId = LinkId(0);
/// One-way delay of the wire.
const DELAY: Duration = Duration::from_millis(50);

/// One node.
pub struct Node {
    pub link: DataLink,
    pub cl: Session,
    pub agent: Agent<MemoryStore>,
    pub delivered: Vec<Delivery>,
    /// Every CL event, in order.
    pub cl_events: Vec<ClEvent>,
    /// Every bundle handed to the CL.
    pub transmits: Vec<Transmit>,
    /// CL messages sent (octets of each).
    pub sent_messages: Vec<Vec<u8>>,
    /// Octets the link delivered to the CL.
    pub received_octets: usize,
}

/// Two nodes on a wire.
pub struct Pair {
    pub nodes: [Node; 2],
    pub now: Instant,
    /// `wire[i]`: frames on their way to node `i`.
    wire: [Impaired<Vec<u8>>; 2],
    /// The wire carries nothing while set.
    pub cut: bool,
    /// Cut the wire once the receiver's CL has had this many octets; it
    /// is mended when both links are down.
    pub cut_at_octets: Option<usize>,
    /// How many times the wire was cut.
    pub cuts: usize,
}

fn eid(text: &str) -> Eid {
    text.parse().unwrap()
}

impl Pair {
    /// Node 0 (`ipn:1.0`) routes `ipn:2.*` over the link; node 1
    /// (`ipn:2.0`) listens. Both CLs use `ack_window`; the wire loses
    /// frames with probability `loss` (seeded by `seed`).
    pub fn new(ack_window: u32, loss: f64, seed: u64) -> Pair {
        let calls = ["N0SEND", "N0RECV"];
        let nodes = [0, 1].map(|i| {
            let link_config = LinkConfig {
                modulus: Modulus::Mod8,
                window_mod8: 4,
                n1: 255,
                n2: 4,
                xid: false,
                t1: Duration::from_secs(2),
                t1_adaptive: false,
                t3: Duration::from_secs(20),
                ..LinkConfig::default()
            };
            let local: Address = calls[i].parse().unwrap();
            let remote: Address = calls[1 - i].parse().unwrap();
            let mut link = DataLink::new(link_config, local, remote, &[]).unwrap();
            link.set_accept_incoming(i == 1);
            let node = format!("ipn:{}.0", i + 1);
            let mut cl_config = ClConfig::new(node.clone()).fit_frame(255).unwrap();
            cl_config.ack_window = ack_window;
            let mut agent_config = AgentConfig::new(eid(&node));
            agent_config.dtn_time_at_zero = 800_000_000_000;
            agent_config.retry_after = Duration::from_secs(1);
            let mut agent = Agent::open(agent_config, MemoryStore::new()).unwrap();
            agent.register(eid(&format!("ipn:{}.1", i + 1))).unwrap();
            agent.add_route(format!("ipn:{}.*", 2 - i).parse().unwrap(), LINK);
            Node {
                link,
                cl: Session::new(cl_config).unwrap(),
                agent,
                delivered: Vec::new(),
                cl_events: Vec::new(),
                transmits: Vec::new(),
                sent_messages: Vec::new(),
                received_octets: 0,
            }
        });
        let streams = Streams::new(seed);
        let impairment = Impairment {
            delay: DELAY,
            loss,
            ..Impairment::default()
        };
        Pair {
            nodes,
            now: Instant::ZERO,
            wire: [0, 1].map(|i| Impaired::bytes(impairment, streams.stream_index(i).next_u64())),
            cut: false,
            cut_at_octets: None,
            cuts: 0,
        }
    }

    /// Node 0's application sends `payload` to `ipn:2.1`.
    pub fn send(&mut self, payload: Vec<u8>) {
        let request = SendRequest::new(eid("ipn:1.1"), eid("ipn:2.1"), payload);
        self.nodes[0].agent.send(self.now, &request).unwrap();
    }

    /// Runs until node 1 has `deliveries` deliveries and everything is
    /// quiet, or `limit` of virtual time passes.
    pub fn run(&mut self, deliveries: usize, limit: Duration) {
        let end = Instant::ZERO + limit;
        loop {
            self.settle();
            if self.nodes[1].delivered.len() >= deliveries
                && self.nodes[0].agent.stored() == 0
                && self.wire.iter().all(|w| w.in_flight() == 0)
            {
                return;
            }
            let next = self
                .wire
                .iter()
                .filter_map(Impaired::next_arrival)
                .chain(self.nodes.iter().filter_map(|n| n.link.poll_timeout()))
                .chain(
                    // A retry already due waits for the link to come up.
                    self.nodes
                        .iter()
                        .filter_map(|n| n.agent.poll_timeout().filter(|&t| t > self.now)),
                )
                .min();
            let Some(next) = next.filter(|&t| t <= end) else {
                return;
            };
            self.now = next.max(self.now);
            let now = self.now;
            for (node, wire) in self.nodes.iter_mut().zip(&mut self.wire) {
                while let Some(octets) = wire.recv(now) {
                    if let Ok(frame) = Frame::decode(&octets, node.link.modulus()) {
                        node.link.handle_frame(now, &frame);
                    }
                }
            }
            for node in &mut self.nodes {
                if node.link.poll_timeout().is_some_and(|t| t <= now) {
                    node.link.handle_timeout(now);
                }
                if node.agent.poll_timeout().is_some_and(|t| t <= now) {
                    node.agent.handle_timeout(now).unwrap();
                }
            }
        }
    }

    /// Moves everything that can move at `now`.
    fn settle(&mut self) {
        let now = self.now;
        loop {
            let mut busy = false;
            if self.cut
                && self
                    .nodes
                    .iter()
                    .all(|n| n.link.state() == LinkState::Disconnected)
            {
                self.cut = false;
            }
            if !self.cut
                && self.nodes[0].link.state() == LinkState::Disconnected
                && self.nodes[0].cl.state() == ClState::Down
            {
                self.nodes[0].link.connect(now).unwrap();
                busy = true;
            }
            for i in 0..2 {
                busy |= self.drive(i);
            }
            for i in 0..2 {
                while let Some(frame) = self.nodes[i].link.poll_transmit(now) {
                    busy = true;
                    if !self.cut {
                        self.wire[1 - i].send(now, frame.encode());
                    }
                }
            }
            if !busy {
                return;
            }
        }
    }

    /// One node's agent, CL and link events; `true` if anything moved.
    fn drive(&mut self, i: usize) -> bool {
        let now = self.now;
        let mut busy = false;
        let node = &mut self.nodes[i];
        while let Some(event) = node.link.poll_event() {
            busy = true;
            match event {
                LinkEvent::Connected { .. } => node.cl.link_up(),
                LinkEvent::Data { data, .. } => {
                    node.received_octets += data.len();
                    node.cl.handle_input(&data);
                }
                LinkEvent::Disconnected { .. } | LinkEvent::LinkFailure { .. } => {
                    node.cl.link_down()
                }
                _ => {}
            }
        }
        if i == 1
            && !self.cut
            && self
                .cut_at_octets
                .is_some_and(|at| node.received_octets >= at)
        {
            // Frames on their way are lost with the link.
            self.cut = true;
            self.wire.iter_mut().for_each(Impaired::drop_in_flight);
            self.cuts += 1;
            self.cut_at_octets = None;
        }
        while let Some(event) = node.cl.poll_event() {
            busy = true;
            node.cl_events.push(event.clone());
            match event {
                ClEvent::Established { .. } => node.agent.link_up(LINK, None),
                ClEvent::BundleReceived { data } => {
                    node.agent.handle_bundle(now, &data).unwrap();
                }
                ClEvent::PartialReceived { data } => {
                    node.agent.handle_partial_bundle(now, &data).unwrap();
                }
                ClEvent::BundleSent { id } => {
                    node.agent.transfer_succeeded(now, TransmitId(id)).unwrap()
                }
                ClEvent::BundleRefused { id, .. } => {
                    node.agent.transfer_failed(now, TransmitId(id))
                }
                ClEvent::TransferInterrupted { id, acknowledged } => node
                    .agent
                    .transfer_partial(now, TransmitId(id), acknowledged as usize)
                    .unwrap(),
                ClEvent::SessionEnded { cause } => {
                    node.agent.link_down(LINK);
                    if cause.release_link() {
                        node.link.disconnect(now).unwrap();
                    }
                }
            }
        }
        if node.cl.state() == ClState::Established {
            while let Some(transmit) = node.agent.poll_transmit(now).unwrap() {
                busy = true;
                node.cl
                    .send_bundle(transmit.id.0, transmit.octets.clone())
                    .unwrap();
                node.transmits.push(transmit);
            }
        }
        while let Some(message) = node.cl.poll_transmit() {
            busy = true;
            node.sent_messages.push(message.clone());
            // Each message fits one information field (fit_frame). A link
            // being released takes no more data; what the CL sent then is
            // lost with the session, as on a real socket.
            let _ = node.link.send(message);
        }
        while let Some(delivery) = node.agent.poll_delivery() {
            busy = true;
            node.agent.delivery_done(now, delivery.id).unwrap();
            node.delivered.push(delivery);
        }
        busy
    }
}

/// `len` octets that differ from position to position.
pub fn payload(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ (i >> 8) as u8 ^ seed)
        .collect()
}
