//! The station's NET/ROM node against a neighbour node in virtual time:
//! the core's KISS octets go to the neighbour (a `linklab_netrom::Node`
//! with an AX.25 [`Station`] of its own callsign) and the neighbour's
//! frames come back, time jumping to the next timer when nothing moves.
//! NODES are learned both ways, a circuit from a user at the neighbour
//! reaches the station's `[netrom] service`, the status shows the node
//! table, and a user linked to the node's callsign uses its command line
//! to connect onwards to the neighbour (which echoes what its circuits
//! from elsewhere bring).

use std::path::Path;
use std::time::{Duration, SystemTime};

use linklab_core::{Engine, Instant};
use linklab_io::{Station, StationEvent};
use linklab_link::{Config, Event, State};
use linklab_netrom::l3::NODES_DESTINATION;
use linklab_netrom::routing::NeighbourKey;
use linklab_netrom::{CircuitEvent, CircuitHandle, CloseReason, Node, NodeConfig, Transmit};
use linklab_station::config;
use linklab_station::{Core, Output};
use linklab_wire::ax25::{Address, AddressField, Frame, Pid};
use linklab_wire::control::Modulus;
use linklab_wire::kiss;

const PID_NETROM: u8 = 0xCF;

fn call(text: &str) -> Address {
    text.parse().unwrap()
}

/// The neighbour node: NET/ROM over its own AX.25 links, written here
/// apart from the station's so that the two are not one code path.
struct Neighbour {
    node: Node,
    l2: Station,
    waiting: Vec<Vec<u8>>,
    events: Vec<CircuitEvent>,
    received: Vec<u8>,
    /// Circuits opened from elsewhere: what they bring is sent back.
    echoing: Vec<CircuitHandle>,
}

impl Neighbour {
    fn new() -> Neighbour {
        let mut config = NodeConfig::new(call("N0NBR"), "NBR".parse().unwrap(), vec![0]);
        config.nodes_interval = Duration::from_secs(600);
        let mut node = Node::new(config, Instant::ZERO);
        node.table_mut().set_port_quality(0, 200);
        let mut l2 = Station::new(call("N0NBR"), Config::default()).unwrap();
        l2.set_listening(true);
        Neighbour {
            node,
            l2,
            waiting: Vec::new(),
            events: Vec::new(),
            received: Vec::new(),
            echoing: Vec::new(),
        }
    }

    fn heard(&mut self, now: Instant, octets: &[u8]) {
        let (field, _) = AddressField::decode(octets).unwrap();
        if field.dest().callsign().as_str() == NODES_DESTINATION {
            let frame = Frame::decode(octets, Modulus::Mod8).unwrap();
            self.node
                .handle_nodes(0, *field.source(), frame.info())
                .unwrap();
        } else {
            self.l2.handle_kiss_frame(now, octets);
        }
    }

    /// Frames to send.
    fn poll(&mut self, now: Instant) -> Vec<Vec<u8>> {
        let mut frames = Vec::new();
        loop {
            let mut moved = false;
            while let Some(StationEvent::Link { remote, event }) = self.l2.poll_event() {
                moved = true;
                match event {
                    Event::Data { data, .. } => {
                        let from = NeighbourKey {
                            port: 0,
                            call: remote,
                        };
                        self.node.handle_datagram(now, from, &data).unwrap();
                    }
                    Event::Connected { .. } => {
                        for info in self.waiting.drain(..) {
                            self.l2
                                .send_with_pid(&remote, Pid::from(PID_NETROM), info)
                                .unwrap();
                        }
                    }
                    _ => {}
                }
            }
            while let Some(t) = self.node.poll_transmit(now) {
                moved = true;
                match t {
                    Transmit::Nodes { info, .. } => {
                        let nodes = call(NODES_DESTINATION);
                        let frame =
                            Frame::ui(nodes, call("N0NBR"), &[], Pid::from(PID_NETROM), info)
                                .unwrap();
                        frames.push(frame.encode());
                    }
                    Transmit::Datagram { neighbour, info } => {
                        let up = self.l2.link(&neighbour.call).is_some_and(|l| {
                            matches!(l.state(), State::Connected | State::TimerRecovery)
                        });
                        if up {
                            self.l2
                                .send_with_pid(&neighbour.call, Pid::from(PID_NETROM), info)
                                .unwrap();
                        } else {
                            if self.waiting.is_empty() {
                                self.l2.connect(now, neighbour.call, &[]).unwrap();
                            }
                            self.waiting.push(info);
                        }
                    }
                }
            }
            while let Some(event) = self.node.transport_mut().poll_event() {
                moved = true;
                if let CircuitEvent::Incoming { circuit, .. } = event {
                    self.echoing.push(circuit);
                }
                if let CircuitEvent::Readable { circuit } = event {
                    let transport = self.node.transport_mut();
                    let mut buf = vec![0; transport.readable(circuit)];
                    let n = transport.recv(now, circuit, &mut buf);
                    if self.echoing.contains(&circuit) {
                        transport.send(circuit, &buf[..n]).unwrap();
                    } else {
                        self.received.extend_from_slice(&buf[..n]);
                    }
                }
                self.events.push(event);
            }
            while let Some(frame) = self.l2.poll_transmit(now) {
                moved = true;
                frames.push(frame.encode());
            }
            if !moved {
                return frames;
            }
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        [self.node.poll_timeout(), self.l2.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.node.poll_timeout().is_some_and(|t| t <= now) {
            self.node.handle_timeout(now);
        }
        if self.l2.poll_timeout().is_some_and(|t| t <= now) {
            self.l2.handle_timeout(now);
        }
    }
}

/// The station's core and its neighbour on one channel.
struct Pair {
    now: Instant,
    core: Core,
    neighbour: Neighbour,
    /// A user's AX.25 station on the same channel.
    user: Station,
    user_heard: Vec<u8>,
    decoder: kiss::Decoder,
    outputs: Vec<Output>,
}

impl Pair {
    fn new(file: &str) -> Pair {
        let config = config::parse(Path::new("test.toml"), file).expect("the file is good");
        let mut core = Core::new(config, SystemTime::UNIX_EPOCH);
        core.port_up(Instant::ZERO, 0);
        Pair {
            now: Instant::ZERO,
            core,
            neighbour: Neighbour::new(),
            user: Station::new(call("N0USR-1"), Config::default()).unwrap(),
            user_heard: Vec::new(),
            decoder: kiss::Decoder::new(4096),
            outputs: Vec::new(),
        }
    }

    fn exchange(&mut self) {
        loop {
            let mut moved = false;
            let octets = self.core.server().take_tx(0);
            if !octets.is_empty() {
                moved = true;
                self.decoder.push(&octets);
                while let Some(Ok(frame)) = self.decoder.next() {
                    if let kiss::Command::Data(data) = frame.command {
                        self.neighbour.heard(self.now, &data);
                        self.user.handle_kiss_frame(self.now, &data);
                    }
                }
            }
            let mut users = Vec::new();
            while let Some(frame) = self.user.poll_transmit(self.now) {
                users.push(frame.encode());
            }
            for frame in users {
                moved = true;
                self.neighbour.heard(self.now, &frame);
                let mut octets = Vec::new();
                kiss::encode_into(&kiss::Frame::data(frame), &mut octets);
                self.core.handle_kiss_bytes(self.now, 0, &octets);
            }
            while let Some(event) = self.user.poll_event() {
                if let StationEvent::Link {
                    event: Event::Data { data, .. },
                    ..
                } = event
                {
                    self.user_heard.extend_from_slice(&data);
                }
            }
            for frame in self.neighbour.poll(self.now) {
                moved = true;
                self.user.handle_kiss_frame(self.now, &frame);
                let mut octets = Vec::new();
                kiss::encode_into(&kiss::Frame::data(frame), &mut octets);
                self.core.handle_kiss_bytes(self.now, 0, &octets);
            }
            while let Some(output) = self.core.poll_output() {
                moved = true;
                // The driver's part for an echo service.
                if let Output::Data { session, data } = &output {
                    self.core.session_send(self.now, *session, data);
                }
                self.outputs.push(output);
            }
            if !moved {
                return;
            }
        }
    }

    fn run_for(&mut self, seconds: u64) {
        let until = self.now + Duration::from_secs(seconds);
        loop {
            self.exchange();
            let next = [
                self.core.poll_timeout(),
                self.neighbour.poll_timeout(),
                self.user.poll_timeout(),
            ]
            .into_iter()
            .flatten()
            .min();
            match next {
                Some(t) if t <= until => {
                    self.now = self.now.max(t);
                    self.core.handle_timeout(self.now);
                    self.neighbour.handle_timeout(self.now);
                    if self.user.poll_timeout().is_some_and(|t| t <= self.now) {
                        self.user.handle_timeout(self.now);
                    }
                }
                _ => {
                    self.now = until;
                    return;
                }
            }
        }
    }

    fn connect_from_neighbour(&mut self) -> CircuitHandle {
        let circuit = self
            .neighbour
            .node
            .connect(self.now, call("N0USR"), call("N0STA-2"))
            .expect("the neighbour has a route to the station's node");
        self.run_for(30);
        circuit
    }
}

/// The station's file, `netrom` added to its `[netrom]` table.
fn file(netrom: &str) -> String {
    FILE.replace("alias = \"STA\"\n", &format!("alias = \"STA\"\n{netrom}"))
}

const FILE: &str = r#"
[[port]]
name = "vhf"
kiss = "tcp:127.0.0.1:8001"
callsigns = ["N0STA"]

[[service]]
callsign = "N0STA-5"
builtin = "echo"

[netrom]
callsign = "N0STA-2"
alias = "STA"
[[netrom.port]]
name = "vhf"
quality = 192
"#;

#[test]
fn nodes_are_learned_both_ways_with_the_ports_quality() {
    let mut pair = Pair::new(FILE);
    pair.run_for(10);
    let status = pair.core.status(pair.now, "test.toml");
    let netrom = status.netrom.expect("the station runs a node");
    assert_eq!(
        (netrom.alias.as_str(), netrom.callsign.as_str()),
        ("STA", "N0STA-2")
    );
    let nbr = netrom
        .destinations
        .iter()
        .find(|d| d.callsign == "N0NBR")
        .expect("the neighbour's NODES taught the station its node");
    assert_eq!(nbr.alias, "NBR");
    assert_eq!(
        nbr.routes[0].quality, 192,
        "a neighbour gets its port's quality"
    );
    assert_eq!(netrom.neighbours.len(), 1);
    assert_eq!(netrom.neighbours[0].destinations, 1);
    // And the station's broadcast (2 s after the start) reached the
    // neighbour, which scores it at its own port quality.
    let station = pair
        .neighbour
        .node
        .table()
        .destination(&call("N0STA-2"))
        .expect("the station's NODES reached the neighbour");
    assert_eq!(station.alias.text(), "STA");
    assert_eq!(station.routes[0].quality, 200);
}

#[test]
fn a_circuit_from_a_far_user_reaches_the_service_and_ends_when_the_user_leaves() {
    let mut pair = Pair::new(&file("service = \"N0STA-5\"\n"));
    pair.run_for(10);
    let circuit = pair.connect_from_neighbour();
    assert!(pair
        .neighbour
        .events
        .iter()
        .any(|e| matches!(e, CircuitEvent::Connected { .. })));
    let answered = pair.outputs.iter().find_map(|o| match o {
        Output::Answer { caller, called, .. } => Some((*caller, *called)),
        _ => None,
    });
    assert_eq!(answered, Some((call("N0USR"), call("N0STA-5"))));
    let text: Vec<u8> = (0..2000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let taken = pair
        .neighbour
        .node
        .transport_mut()
        .send(circuit, &text)
        .unwrap();
    assert_eq!(taken, text.len());
    pair.run_for(300);
    assert_eq!(pair.neighbour.received, text, "the echo comes back whole");
    let status = pair.core.status(pair.now, "test.toml");
    let sessions = &status.services[0].sessions;
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].caller, "N0USR");
    assert_eq!(sessions[0].octets_in, 2000);
    pair.neighbour.node.transport_mut().disconnect(circuit);
    pair.run_for(60);
    assert!(pair
        .outputs
        .iter()
        .any(|o| matches!(o, Output::Ended { released: true, .. })));
    assert!(pair.core.status(pair.now, "t").services[0]
        .sessions
        .is_empty());
}

#[test]
fn without_a_service_a_circuit_is_refused() {
    let mut pair = Pair::new(FILE);
    pair.run_for(10);
    pair.connect_from_neighbour();
    assert!(pair.neighbour.events.iter().any(|e| matches!(
        e,
        CircuitEvent::Closed {
            reason: CloseReason::Refused,
            ..
        }
    )));
    assert!(!pair
        .outputs
        .iter()
        .any(|o| matches!(o, Output::Answer { .. })));
}

#[test]
fn the_file_is_checked() {
    let refused = |extra: &str, base: &str| {
        config::parse(Path::new("t.toml"), &format!("{base}{extra}"))
            .expect_err("refused")
            .to_string()
    };
    let same_call = FILE.replace("callsign = \"N0STA-2\"", "callsign = \"N0STA\"");
    assert!(refused("", &same_call).contains("needs a callsign of its own"));
    assert!(
        refused("", &file("service = \"N0STA-9\"\n")).contains("no [[service]] answers N0STA-9")
    );
    let long_alias = FILE.replace("alias = \"STA\"", "alias = \"TOOLONG\"");
    assert!(refused("", &long_alias).contains("longer than 6"));
    let no_port = FILE.replace(
        "name = \"vhf\"\nquality = 192\n",
        "name = \"uhf\"\nquality = 192\n",
    );
    assert!(refused("", &no_port).contains("no port named \"uhf\""));
}

/// What the user heard since the last call, as text.
fn heard(pair: &mut Pair) -> String {
    String::from_utf8_lossy(&std::mem::take(&mut pair.user_heard)).into_owned()
}

#[test]
fn a_user_at_the_nodes_command_line_lists_the_nodes_and_connects_onwards() {
    let mut pair = Pair::new(FILE);
    pair.run_for(10);
    let node = call("N0STA-2");
    pair.user.connect(pair.now, node, &[]).unwrap();
    pair.run_for(10);
    pair.user.send(&node, b"n\r".to_vec()).unwrap();
    pair.run_for(10);
    let text = heard(&mut pair);
    assert!(text.starts_with("STA:N0STA-2} Nodes:\r"), "{text:?}");
    assert!(text.contains("NBR:N0NBR"), "{text:?}");
    pair.user.send(&node, b"R\rnodes nbr\r".to_vec()).unwrap();
    pair.run_for(10);
    let text = heard(&mut pair);
    assert!(text.contains("Routes:\r1 N0NBR 192 1\r"), "{text:?}");
    // Learned at 6, aged once by the station's own broadcast at 2 s.
    assert!(
        text.contains("Routes to NBR:N0NBR\r> 192 5 1 N0NBR\r"),
        "{text:?}"
    );
    pair.user.send(&node, b"C NOWHERE\r".to_vec()).unwrap();
    pair.run_for(10);
    assert!(heard(&mut pair).contains("NOWHERE: not in the node table"));
    pair.user.send(&node, b"c nbr\r".to_vec()).unwrap();
    pair.run_for(30);
    assert_eq!(heard(&mut pair), "STA:N0STA-2} Connected to NBR:N0NBR\r");
    assert!(pair.neighbour.events.iter().any(|e| matches!(
        e,
        CircuitEvent::Incoming { user, .. } if *user == call("N0USR-1")
    )));
    let text: Vec<u8> = (0..1500u32).map(|i| b'A' + (i % 26) as u8).collect();
    pair.user.send(&node, text.clone()).unwrap();
    pair.run_for(300);
    assert_eq!(
        pair.user_heard, text,
        "the far node's echo comes back whole"
    );
    pair.user_heard.clear();
    // The far end leaves: the user is back at the node's command line.
    let far = pair.neighbour.echoing[0];
    pair.neighbour.node.transport_mut().disconnect(far);
    pair.run_for(60);
    assert_eq!(heard(&mut pair), "Reconnected to STA:N0STA-2\r");
    pair.user.send(&node, b"bye\r".to_vec()).unwrap();
    pair.run_for(30);
    assert_eq!(
        pair.core.link_count(),
        1,
        "only the neighbour's link is left"
    );
}

/// Every message the core sent AGWPE client `id` since the last call.
fn client_messages(
    pair: &mut Pair,
    id: linklab_agw::ClientId,
    decoder: &mut linklab_agw::wire::Decoder,
) -> Vec<linklab_agw::wire::Message> {
    decoder.push(&pair.core.server().take_output(id));
    std::iter::from_fn(|| decoder.poll_message())
        .map(|m| m.expect("the core's messages decode"))
        .collect()
}

fn request(pair: &mut Pair, id: linklab_agw::ClientId, kind: u8, port: u8, to: &str, data: &[u8]) {
    use linklab_agw::wire::{CallField, Header, Message};
    let mut header = Header::new(port, kind);
    header.call_from = CallField::from_address(&call("N0APP"));
    header.call_to = CallField::from_address(&call(to));
    let mut octets = Vec::new();
    Message::new(header, data.to_vec()).encode_into(&mut octets);
    pair.core.handle_client_bytes(pair.now, id, &octets);
}

#[test]
fn an_agwpe_client_reaches_a_node_through_the_nodes_port() {
    let mut pair = Pair::new(FILE);
    pair.run_for(10);
    let id = pair.core.server().client_connected();
    let mut decoder = linklab_agw::wire::Decoder::new();
    // The port list names the node's port after the radio port.
    request(&mut pair, id, b'G', 0, "N0APP", &[]);
    let ports = client_messages(&mut pair, id, &mut decoder);
    let list = String::from_utf8_lossy(&ports[0].data).into_owned();
    assert!(
        list.starts_with("2;Port1 ") && list.contains(";Port2 NET/ROM node STA:N0STA-2;"),
        "{list:?}"
    );
    // A node the table does not know is refused at once.
    request(&mut pair, id, b'C', 1, "N0FAR", &[]);
    let refused = client_messages(&mut pair, id, &mut decoder);
    assert_eq!(refused[0].header.kind, b'd');
    // The neighbour, by its alias.
    request(&mut pair, id, b'C', 1, "NBR", &[]);
    pair.run_for(30);
    let up = client_messages(&mut pair, id, &mut decoder);
    assert_eq!(up[0].header.kind, b'C');
    assert_eq!(up[0].header.call_from.text(), "NBR");
    assert!(String::from_utf8_lossy(&up[0].data).contains("CONNECTED With Station NBR"));
    let text: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
    request(&mut pair, id, b'D', 1, "NBR", &text);
    pair.run_for(600);
    let echoed: Vec<u8> = client_messages(&mut pair, id, &mut decoder)
        .into_iter()
        .filter(|m| m.header.kind == b'D')
        .flat_map(|m| m.data)
        .collect();
    assert_eq!(echoed, text, "the far node's echo comes back whole");
    request(&mut pair, id, b'd', 1, "NBR", &[]);
    pair.run_for(60);
    let down = client_messages(&mut pair, id, &mut decoder);
    assert!(down.iter().any(|m| m.header.kind == b'd'), "{down:?}");
    assert!(pair
        .neighbour
        .events
        .iter()
        .any(|e| matches!(e, CircuitEvent::Closed { .. })));
}

#[test]
fn a_stop_disconnects_the_circuits_before_it_releases_the_links() {
    let mut pair = Pair::new(&file("service = \"N0STA-5\"\n"));
    pair.run_for(10);
    pair.connect_from_neighbour();
    assert_eq!(
        pair.core.status(pair.now, "t").services[0].sessions.len(),
        1
    );
    pair.core.release_all(pair.now);
    pair.run_for(60);
    assert!(
        pair.neighbour.events.iter().any(|e| matches!(
            e,
            CircuitEvent::Closed {
                reason: CloseReason::Remote,
                ..
            }
        )),
        "the neighbour heard the disconnect request: {:?}",
        pair.neighbour.events
    );
    assert_eq!(pair.core.link_count(), 0, "and the link is released");
}

#[test]
fn circuits_idle_for_fifteen_minutes_are_ended_unless_the_file_says() {
    let idle = |text: &str| {
        let config = config::parse(Path::new("t.toml"), text).unwrap();
        config
            .netrom
            .unwrap()
            .node
            .transport
            .transport_no_activity_timeout
    };
    assert_eq!(idle(FILE), Some(Duration::from_secs(900)));
    assert_eq!(idle(&file("idle-timeout-s = 0\n")), None);
    assert_eq!(
        idle(&file("idle-timeout-s = 60\n")),
        Some(Duration::from_secs(60))
    );
}
