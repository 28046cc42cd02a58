//! The station's NET/ROM node: what the kernel's `nr0` device with
//! `netromd` did. A [`Node`] (NODES broadcasts, the node table,
//! datagrams and circuits) on the ports of `[netrom]`, with an AX.25
//! [`Station`] of the node's callsign on each of them for the links to
//! its neighbours (datagrams travel in I frames with PID 0xCF, AX.25 v2.2
//! 3.4; NODES in UI frames to `NODES`). The station reserves the node's
//! callsign, feeds it every frame heard on its ports and sends what it
//! gives back; circuits from far users become the station's sessions
//! ([`crate::core`]). A station that links to the node's callsign and
//! sends text instead of datagrams is a user at the node's command line
//! ([`console`]), from where it can connect onwards to any node the table
//! knows.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use linklab_core::{Engine, Instant};
use linklab_io::{Station, StationEvent};
use linklab_link::{Config, Event, State};
use linklab_netrom::l3::NODES_DESTINATION;
use linklab_netrom::routing::NeighbourKey;
use linklab_netrom::{CircuitEvent, CircuitHandle, CloseReason, Node, Transmit};
use linklab_wire::ax25::{same_station, Address, AddressField, Frame, Pid};
use linklab_wire::control::Modulus;

use crate::config::NetromSpec;
use crate::status::{
    CircuitStatus, DatagramCounts, DestinationStatus, NeighbourStatus, NetromStatus, RouteStatus,
};
use console::Command;

mod agw;
mod console;

/// PID 0xCF: NET/ROM (AX.25 v2.2 3.4, table 3.2).
const PID_NETROM: u8 = 0xCF;

/// Octets of console text in one I frame: within the default N1 (256)
/// of a version 2.0 link, which does not segment.
const CONSOLE_CHUNK: usize = 236;

/// A user at the node's command line, over an AX.25 link to the node's
/// callsign.
#[derive(Debug)]
struct ConsoleUser {
    port: usize,
    user: Address,
    /// A line being typed.
    line: Vec<u8>,
    /// The circuit the user connected onwards, and to what node.
    circuit: Option<(CircuitHandle, String)>,
}

/// Octets a circuit's session may have waiting for the transport's window
/// before the session is held back (as a link's queue limit holds back a
/// connected-mode session).
const PENDING_LIMIT: usize = 4096;

/// The node and its neighbour links.
#[derive(Debug)]
pub(crate) struct NetromService {
    pub spec: NetromSpec,
    node: Node,
    /// The node's AX.25 side on each of its ports.
    stations: BTreeMap<usize, Station>,
    /// Datagrams for neighbours whose link is being set up.
    waiting: Vec<(NeighbourKey, Vec<u8>)>,
    /// A stop asked for every link to be released.
    releasing: bool,
    /// Neighbours whose link is being released with datagrams waiting:
    /// set up again once it is down.
    after_release: Vec<NeighbourKey>,
    /// Octets for each circuit the transport's window has not taken yet.
    pending: BTreeMap<CircuitHandle, VecDeque<u8>>,
    /// Circuits to disconnect once their pending octets are taken.
    closing: BTreeSet<CircuitHandle>,
    /// Users at the command line.
    consoles: Vec<ConsoleUser>,
    /// Circuits AGWPE clients opened on the node's port.
    clients: Vec<agw::ClientCircuit>,
    /// Messages for AGWPE clients.
    pub to_clients: Vec<(linklab_agw::ClientId, linklab_agw::wire::Message)>,
    /// Lines for the station's log.
    pub log: Vec<String>,
}

impl NetromService {
    /// The node of `spec`, its first NODES broadcast due at
    /// `first_broadcast`, its links set up as `link_config` gives for each
    /// port.
    pub fn new(
        first_broadcast: Instant,
        spec: NetromSpec,
        link_config: impl Fn(usize) -> Option<Config>,
    ) -> Result<NetromService, String> {
        let mut node = Node::new(spec.node.clone(), first_broadcast);
        for &(port, quality) in &spec.ports {
            node.table_mut().set_port_quality(port, quality);
        }
        for &(key, quality, locked) in &spec.neighbours {
            node.table_mut().set_neighbour(key, quality, locked);
        }
        for &(destination, alias, neighbour, quality) in &spec.routes {
            node.table_mut()
                .lock_route(destination, alias, neighbour, quality);
        }
        let mut stations = BTreeMap::new();
        for &(port, _) in &spec.ports {
            let config = link_config(port).ok_or(format!("port {} does not exist", port + 1))?;
            let mut station = Station::new(spec.node.call, config)
                .map_err(|e| format!("the node's AX.25 links on port {}: {e}", port + 1))?;
            station.set_listening(true);
            stations.insert(port, station);
        }
        Ok(NetromService {
            spec,
            node,
            stations,
            waiting: Vec::new(),
            after_release: Vec::new(),
            releasing: false,
            pending: BTreeMap::new(),
            closing: BTreeSet::new(),
            consoles: Vec::new(),
            clients: Vec::new(),
            to_clients: Vec::new(),
            log: Vec::new(),
        })
    }

    /// The node's tables and circuits as the status shows them.
    pub fn status(&self, now: Instant) -> NetromStatus {
        let table = self.node.table();
        let destinations: Vec<DestinationStatus> = table
            .destinations()
            .map(|d| DestinationStatus {
                callsign: d.call.to_string(),
                alias: d.alias.text(),
                routes: d
                    .routes
                    .iter()
                    .map(|r| RouteStatus {
                        port: r.neighbour.port + 1,
                        neighbour: r.neighbour.call.to_string(),
                        quality: r.quality,
                        obsolescence: r.obsolescence,
                        locked: r.locked,
                    })
                    .collect(),
            })
            .collect();
        let neighbours = table
            .neighbours()
            .map(|n| NeighbourStatus {
                port: n.key.port + 1,
                callsign: n.key.call.to_string(),
                quality: n.quality,
                locked: n.locked,
                failures: n.failures,
                destinations: table
                    .destinations()
                    .filter(|d| {
                        table
                            .best_route(&d.call)
                            .is_some_and(|r| same_neighbour(&r.neighbour, &n.key))
                    })
                    .count(),
            })
            .collect();
        let transport = self.node.transport();
        let circuits = transport
            .circuits()
            .map(|(c, state)| {
                let (node, user) = transport
                    .peer(c)
                    .map_or((String::new(), String::new()), |(n, u)| {
                        (n.to_string(), u.to_string())
                    });
                CircuitStatus {
                    user,
                    node,
                    state: format!("{state:?}").to_lowercase(),
                    unacknowledged: transport.unacknowledged(c),
                }
            })
            .collect();
        let c = self.node.counters();
        NetromStatus {
            callsign: self.spec.node.call.to_string(),
            alias: self.spec.node.alias.text(),
            ports: self.spec.ports.iter().map(|p| p.0 + 1).collect(),
            next_broadcast_in_s: (self.node.next_broadcast() - now).as_secs_f64(),
            neighbours,
            destinations,
            circuits,
            datagrams: DatagramCounts {
                delivered: c.delivered,
                forwarded: c.forwarded,
                ttl_expired: c.ttl_expired,
                no_route: c.no_route,
                malformed: c.malformed,
            },
        }
    }

    /// A frame heard on `port`: a NODES broadcast, or a frame of a link
    /// to the node's callsign.
    pub fn heard(&mut self, now: Instant, port: usize, octets: &[u8]) {
        let Some(station) = self.stations.get_mut(&port) else {
            return;
        };
        let Ok((field, _)) = AddressField::decode(octets) else {
            return;
        };
        if field.dest().callsign().as_str() == NODES_DESTINATION {
            let Ok(frame) = Frame::decode(octets, Modulus::Mod8) else {
                return;
            };
            if frame.pid() == Some(Pid::from(PID_NETROM)) {
                let from = *field.source();
                let before: Vec<Address> =
                    self.node.table().destinations().map(|d| d.call).collect();
                match self.node.handle_nodes(port, from, frame.info()) {
                    Ok(_) => {
                        let new: Vec<String> = self
                            .node
                            .table()
                            .destinations()
                            .filter(|d| !before.iter().any(|b| same_station(b, &d.call)))
                            .map(|d| console::node_name(&d.alias, &d.call))
                            .collect();
                        if !new.is_empty() {
                            self.log.push(format!(
                                "NET/ROM: NODES from {from} on port {}: new {}",
                                port + 1,
                                new.join(" ")
                            ));
                        }
                    }
                    Err(e) => self.log.push(format!(
                        "NET/ROM: NODES broadcast from {from} on port {} ignored: {e}",
                        port + 1
                    )),
                }
            }
            return;
        }
        station.handle_kiss_frame(now, octets);
    }

    /// Moves everything the engines have to say until nothing moves: the
    /// frames to send, with their ports, and the circuits' events.
    pub fn poll(&mut self, now: Instant) -> (Vec<(usize, Vec<u8>)>, Vec<CircuitEvent>) {
        let mut frames = Vec::new();
        let mut events = Vec::new();
        loop {
            let mut moved = self.link_events(now);
            self.flush_pending();
            while let Some(t) = self.node.poll_transmit(now) {
                moved = true;
                self.transmit(now, t, &mut frames);
            }
            if std::mem::take(&mut self.releasing) {
                moved = true;
                self.release_links(now);
            }
            while let Some(event) = self.node.transport_mut().poll_event() {
                moved = true;
                if !self.console_circuit_event(now, event) && !self.client_circuit_event(now, event)
                {
                    events.push(event);
                }
            }
            for (&port, station) in &mut self.stations {
                while let Some(frame) = station.poll_transmit(now) {
                    moved = true;
                    frames.push((port, frame.encode()));
                }
            }
            if !moved {
                return (frames, events);
            }
        }
    }

    /// Frames of ours on `port` are still to leave the air, or have left
    /// it (the links' checkpointing and T1 depend on it).
    pub fn set_channel_busy(&mut self, now: Instant, port: usize, busy: bool) {
        if let Some(station) = self.stations.get_mut(&port) {
            station.set_channel_busy(now, busy);
        }
    }

    /// When the node's or its links' timers run next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let links = self.stations.values().filter_map(Station::poll_timeout);
        links.chain(self.node.poll_timeout()).min()
    }

    /// Runs the timers due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.node.poll_timeout().is_some_and(|t| t <= now) {
            self.node.handle_timeout(now);
        }
        for station in self.stations.values_mut() {
            if station.poll_timeout().is_some_and(|t| t <= now) {
                station.handle_timeout(now);
            }
        }
    }

    /// Queues `data` for `circuit`.
    pub fn send(&mut self, circuit: CircuitHandle, data: &[u8]) {
        self.pending.entry(circuit).or_default().extend(data);
        self.flush_pending();
    }

    /// Whether `circuit` takes more data now.
    pub fn accepts(&self, circuit: CircuitHandle) -> bool {
        self.pending.get(&circuit).map_or(0, VecDeque::len) < PENDING_LIMIT
    }

    /// What arrived on `circuit`.
    pub fn read(&mut self, now: Instant, circuit: CircuitHandle) -> Vec<u8> {
        let transport = self.node.transport_mut();
        let mut buf = vec![0; transport.readable(circuit)];
        let n = transport.recv(now, circuit, &mut buf);
        buf.truncate(n);
        buf
    }

    /// Disconnects `circuit` once what was queued for it is taken.
    pub fn close(&mut self, circuit: CircuitHandle) {
        self.closing.insert(circuit);
        self.flush_pending();
    }

    /// Forgets `circuit`, closed.
    pub fn release(&mut self, circuit: CircuitHandle) {
        self.pending.remove(&circuit);
        self.closing.remove(&circuit);
        self.node.transport_mut().release(circuit);
    }

    /// Disconnects every circuit and releases every neighbour link, as
    /// at a stop: the links go once the disconnect requests are on them
    /// and acknowledged ([`NetromService::poll`]).
    pub fn release_all(&mut self) {
        let circuits: Vec<CircuitHandle> =
            self.node.transport().circuits().map(|(c, _)| c).collect();
        for circuit in circuits {
            self.node.transport_mut().disconnect(circuit);
        }
        self.releasing = true;
    }

    /// Neighbour links not yet disconnected.
    pub fn live_links(&self) -> usize {
        self.stations
            .values()
            .flat_map(Station::links)
            .filter(|l| l.state() != State::Disconnected)
            .count()
    }

    /// Releases every link once what was given to it is acknowledged
    /// (DL-DISCONNECT after the I frames, [`Station::release`]).
    fn release_links(&mut self, now: Instant) {
        self.waiting.clear();
        self.after_release.clear();
        for station in self.stations.values_mut() {
            let remotes: Vec<Address> = station.links().map(|l| l.remote()).collect();
            for remote in remotes {
                let _ = station.release(now, &remote);
            }
        }
    }

    /// The neighbour links' events into the node; whether there were any.
    fn link_events(&mut self, now: Instant) -> bool {
        let mut moved = false;
        let ports: Vec<usize> = self.stations.keys().copied().collect();
        for port in ports {
            while let Some(event) = self.stations.get_mut(&port).and_then(Station::poll_event) {
                moved = true;
                let StationEvent::Link { remote, event } = event else {
                    continue;
                };
                let neighbour = NeighbourKey { port, call: remote };
                match event {
                    Event::Data { pid, data } if pid == Pid::from(PID_NETROM) => {
                        if let Err(e) = self.node.handle_datagram(now, neighbour, &data) {
                            self.log.push(format!(
                                "NET/ROM: a datagram from {remote} on port {} dropped: {e}",
                                port + 1
                            ));
                        }
                    }
                    Event::Data { data, .. } => self.console_input(now, port, remote, &data),
                    Event::Connected { .. } => self.send_waiting(neighbour),
                    Event::LinkFailure { reason } => {
                        self.console_gone(port, remote);
                        self.log.push(format!(
                            "NET/ROM: the link to neighbour {remote} on port {} failed: {reason:?}",
                            port + 1
                        ));
                        self.node.handle_link_failure(neighbour);
                        self.after_release
                            .retain(|k| !same_neighbour(k, &neighbour));
                        self.drop_waiting(neighbour);
                    }
                    Event::Disconnected { .. } => {
                        self.console_gone(port, remote);
                        self.connect_after_release(now, neighbour);
                    }
                    _ => {}
                }
            }
        }
        moved
    }

    /// A node's output: NODES as a UI frame on its port, a datagram over
    /// the link to its neighbour (set up first if there is none).
    fn transmit(&mut self, now: Instant, t: Transmit, frames: &mut Vec<(usize, Vec<u8>)>) {
        match t {
            Transmit::Nodes { port, info } => {
                let Ok(nodes) = NODES_DESTINATION.parse::<Address>() else {
                    return;
                };
                let call = self.spec.node.call;
                match Frame::ui(nodes, call, &[], Pid::from(PID_NETROM), info) {
                    Ok(frame) => frames.push((port, frame.encode())),
                    Err(e) => self.log.push(format!("NET/ROM: NODES not sent: {e}")),
                }
            }
            Transmit::Datagram { neighbour, info } => {
                let Some(station) = self.stations.get_mut(&neighbour.port) else {
                    return;
                };
                let state = station.link(&neighbour.call).map(|l| l.state());
                match state {
                    Some(State::Connected | State::TimerRecovery) => {
                        self.log.extend(send_datagram(station, &neighbour, info));
                    }
                    // Held until the link is up (AX.25 v2.2 6.3.1).
                    Some(State::AwaitingConnection | State::AwaitingConnection2_2) => {
                        self.waiting.push((neighbour, info))
                    }
                    // Held until the link being released is down, then
                    // set up again.
                    Some(State::AwaitingRelease) => {
                        if !self
                            .after_release
                            .iter()
                            .any(|k| same_neighbour(k, &neighbour))
                        {
                            self.after_release.push(neighbour);
                        }
                        self.waiting.push((neighbour, info))
                    }
                    _ => match station.connect(now, neighbour.call, &[]) {
                        Ok(()) => self.waiting.push((neighbour, info)),
                        Err(e) => self.log.push(format!(
                            "NET/ROM: no link to neighbour {}: {e}",
                            neighbour.call
                        )),
                    },
                }
            }
        }
    }

    fn send_waiting(&mut self, neighbour: NeighbourKey) {
        let (ready, rest) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(k, _)| same_neighbour(k, &neighbour));
        self.waiting = rest;
        let Some(station) = self.stations.get_mut(&neighbour.port) else {
            return;
        };
        for (_, info) in ready {
            self.log.extend(send_datagram(station, &neighbour, info));
        }
    }

    /// The link to `neighbour` is down: if datagrams waited for its
    /// release to end, it is set up again for them; otherwise it ended
    /// before it came up, and they go.
    fn connect_after_release(&mut self, now: Instant, neighbour: NeighbourKey) {
        let before = self.after_release.len();
        self.after_release
            .retain(|k| !same_neighbour(k, &neighbour));
        let reconnect = self.after_release.len() < before;
        let connected = reconnect
            && self
                .stations
                .get_mut(&neighbour.port)
                .is_some_and(|s| s.connect(now, neighbour.call, &[]).is_ok());
        if !connected {
            self.drop_waiting(neighbour);
        }
    }

    /// The link to `neighbour` ended before it came up: its datagrams go
    /// (the circuits' own timers send them again over another route).
    fn drop_waiting(&mut self, neighbour: NeighbourKey) {
        let before = self.waiting.len();
        self.waiting.retain(|(k, _)| !same_neighbour(k, &neighbour));
        let lost = before - self.waiting.len();
        if lost > 0 {
            self.log.push(format!(
                "NET/ROM: {lost} datagram(s) for {} dropped: the link did not come up",
                neighbour.call
            ));
        }
    }

    /// Hands each circuit's queued octets to the transport as its window
    /// allows; a closing circuit with nothing left is disconnected.
    fn flush_pending(&mut self) {
        let transport = self.node.transport_mut();
        let log = &mut self.log;
        for (&circuit, queue) in &mut self.pending {
            while !queue.is_empty() {
                let (front, _) = queue.as_slices();
                match transport.send(circuit, front) {
                    Ok(0) => break,
                    Ok(n) => {
                        queue.drain(..n);
                    }
                    Err(e) => {
                        // The circuit is gone; its Closed event ends the
                        // session and says why.
                        log.push(format!(
                            "NET/ROM: {} octets for a circuit not sent: {e}",
                            queue.len()
                        ));
                        queue.clear();
                    }
                }
            }
        }
        self.pending.retain(|_, q| !q.is_empty());
        let done: Vec<CircuitHandle> = self
            .closing
            .iter()
            .filter(|c| !self.pending.contains_key(c))
            .copied()
            .collect();
        for circuit in done {
            self.closing.remove(&circuit);
            self.node.transport_mut().disconnect(circuit);
        }
    }
}

impl NetromService {
    /// Text from `user`'s link to the node: a command, or data for the
    /// circuit the user connected onwards.
    fn console_input(&mut self, now: Instant, port: usize, user: Address, data: &[u8]) {
        let i = match self
            .consoles
            .iter()
            .position(|c| c.port == port && same_station(&c.user, &user))
        {
            Some(i) => i,
            None => {
                self.log.push(format!(
                    "NET/ROM: {user} on port {} at the node's command line",
                    port + 1
                ));
                self.consoles.push(ConsoleUser {
                    port,
                    user,
                    line: Vec::new(),
                    circuit: None,
                });
                self.consoles.len() - 1
            }
        };
        if let Some((circuit, _)) = self.consoles[i].circuit {
            self.send(circuit, data);
            return;
        }
        self.consoles[i].line.extend_from_slice(data);
        while let Some(end) = self.consoles[i]
            .line
            .iter()
            .position(|&b| b == b'\r' || b == b'\n')
        {
            let line: Vec<u8> = self.consoles[i].line.drain(..=end).collect();
            let text = String::from_utf8_lossy(&line[..end]).into_owned();
            self.console_command(now, i, &text);
            let Some(c) = self.consoles.get_mut(i) else {
                return; // BYE
            };
            if let Some((circuit, _)) = c.circuit {
                // What followed the CONNECT is the circuit's.
                let rest = std::mem::take(&mut c.line);
                if !rest.is_empty() {
                    self.send(circuit, &rest);
                }
                return;
            }
        }
        // A line that never ends is not kept without bound.
        if self.consoles[i].line.len() > CONSOLE_CHUNK {
            self.consoles[i].line.clear();
        }
    }

    fn console_command(&mut self, now: Instant, i: usize, text: &str) {
        let (alias, call) = (self.spec.node.alias, self.spec.node.call);
        let head = console::prompt(&alias, &call);
        let (port, user) = (self.consoles[i].port, self.consoles[i].user);
        let answer = match Command::parse(text) {
            Command::Nodes(None) => console::nodes(self.node.table(), &head),
            Command::Nodes(Some(name)) => console::routes_to(self.node.table(), &head, &name),
            Command::Routes => console::routes(self.node.table(), &head),
            Command::Info => format!(
                "{head}linklab NET/ROM node {} on port {}\r",
                console::node_name(&alias, &call),
                self.spec
                    .ports
                    .iter()
                    .map(|p| (p.0 + 1).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Command::Empty => head.trim_end().to_string() + "\r",
            Command::Help(why) => console::help(&head, why.as_deref()),
            Command::Bye => {
                if let Some(station) = self.stations.get_mut(&port) {
                    let _ = station.release(now, &user);
                }
                self.consoles.remove(i);
                return;
            }
            Command::Connect(name) => self.console_connect(now, i, &name),
        };
        self.console_say(port, user, &answer);
    }

    /// `CONNECT name`: a circuit on the user's behalf, if the table has a
    /// route.
    fn console_connect(&mut self, now: Instant, i: usize, name: &str) -> String {
        let head = console::prompt(&self.spec.node.alias, &self.spec.node.call);
        let Some(d) = self.node.table().resolve(name) else {
            return format!("{head}{name}: not in the node table (NODES lists it)\r");
        };
        let (target, to) = (d.call, console::node_name(&d.alias, &d.call));
        let user = self.consoles[i].user;
        match self.node.connect(now, user, target) {
            Ok(circuit) => {
                self.log
                    .push(format!("NET/ROM: {user} connects from the node to {to}"));
                self.consoles[i].circuit = Some((circuit, to));
                String::new()
            }
            Err(e) => format!("{head}Failure with {to}: {e}\r"),
        }
    }

    /// A console circuit's event; false if the circuit is not one.
    fn console_circuit_event(&mut self, now: Instant, event: CircuitEvent) -> bool {
        let circuit = event.circuit();
        let Some(i) = self
            .consoles
            .iter()
            .position(|c| c.circuit.as_ref().is_some_and(|(x, _)| *x == circuit))
        else {
            return false;
        };
        let (port, user) = (self.consoles[i].port, self.consoles[i].user);
        let to = self.consoles[i]
            .circuit
            .as_ref()
            .map(|(_, to)| to.clone())
            .unwrap_or_default();
        let head = console::prompt(&self.spec.node.alias, &self.spec.node.call);
        match event {
            CircuitEvent::Connected { .. } => {
                self.console_say(port, user, &format!("{head}Connected to {to}\r"));
            }
            CircuitEvent::Readable { .. } => {
                let data = self.read(now, circuit);
                self.console_send(port, user, &data);
            }
            CircuitEvent::Closed { reason, .. } => {
                let data = self.read(now, circuit);
                self.console_send(port, user, &data);
                self.release(circuit);
                self.consoles[i].circuit = None;
                let text = match reason {
                    CloseReason::Refused => format!("{head}Busy from {to}\r"),
                    CloseReason::TimedOut { .. } => format!("{head}Failure with {to}\r"),
                    _ => format!(
                        "Reconnected to {}\r",
                        console::node_name(&self.spec.node.alias, &self.spec.node.call)
                    ),
                };
                self.console_say(port, user, &text);
            }
            CircuitEvent::Incoming { .. } => {}
        }
        true
    }

    /// The user's link ended: so does the circuit it had.
    fn console_gone(&mut self, port: usize, user: Address) {
        let gone: Vec<ConsoleUser> = {
            let (gone, kept) = std::mem::take(&mut self.consoles)
                .into_iter()
                .partition(|c| c.port == port && same_station(&c.user, &user));
            self.consoles = kept;
            gone
        };
        for c in gone {
            if let Some((circuit, _)) = c.circuit {
                self.close(circuit);
            }
        }
    }

    fn console_say(&mut self, port: usize, user: Address, text: &str) {
        self.console_send(port, user, text.as_bytes());
    }

    /// Octets to a user at the command line, in I frames of at most
    /// [`CONSOLE_CHUNK`] octets.
    fn console_send(&mut self, port: usize, user: Address, data: &[u8]) {
        let Some(station) = self.stations.get_mut(&port) else {
            return;
        };
        for chunk in data.chunks(CONSOLE_CHUNK) {
            if let Err(e) = station.send_with_pid(&user, Pid::NoLayer3, chunk.to_vec()) {
                self.log.push(format!(
                    "NET/ROM: {} octets for {user} at the command line not sent: {e}",
                    chunk.len()
                ));
                return;
            }
        }
    }
}

/// Queues a datagram on the link to `neighbour` (I frames with PID
/// 0xCF); the log line if it could not be.
fn send_datagram(station: &mut Station, neighbour: &NeighbourKey, info: Vec<u8>) -> Option<String> {
    let sent = station.send_with_pid(&neighbour.call, Pid::from(PID_NETROM), info);
    sent.err()
        .map(|e| format!("NET/ROM: a datagram for {} not sent: {e}", neighbour.call))
}

fn same_neighbour(a: &NeighbourKey, b: &NeighbourKey) -> bool {
    a.port == b.port && same_station(&a.call, &b.call)
}
