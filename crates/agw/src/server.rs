//! The AGWPE engine, sans-IO: clients' messages and TNCs' octets in,
//! answers, frames and log lines out, time passed in (ARCHITECTURE.md,
//! "the one rule"); the [`driver`](crate::driver) runs it on sockets.
//!
//! Who gets what:
//! - a callsign registered ('X') is one client's: incoming connections to
//!   it, on any port, go to that client; registering a callsign another
//!   client holds fails (answer 0);
//! - a link set up with 'C' belongs to the client that asked; its data,
//!   'Y' counts and the end of the link go to that client alone;
//! - a connection request to a callsign nobody registered is someone
//!   else's traffic and is ignored, unless the port answers for that
//!   callsign ([`PortConfig::answer_for`]): then the stack refuses it
//!   with DM, as a station whose application is not running;
//! - monitor ('m') and raw ('k') records go to every client that asked,
//!   for every port;
//! - a client that goes away has its callsigns unregistered and its links
//!   released (DISC).

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::time::{Duration, SystemTime};

use linklab_core::Instant;
use linklab_io::{StationError, StationEvent};
use linklab_link::{DisconnectReason, Event, FailureReason, State};
use linklab_wire::ax25::{Address, AddressField, Frame, Pid};
use linklab_wire::control::Modulus;

use crate::monitor::{self, HEARD_MAX};
use crate::port::{key, Arrival, Key, PortConfig, RadioPort};
use crate::wire::{printable, CallField, Decoder, Header, Message, CALL_LEN};

/// The version the 'R' answer gives: the AGWPE release Dire Wolf's
/// server reports too, late enough for every client that checks one
/// (UI-View32 wants 2000.15 or later).
pub const VERSION: (u32, u32) = (2005, 127);

/// I frames a link may hold queued (not yet sent) before its client's
/// input is no longer read: the client waits in its socket write until
/// the radio has taken some of them, so a fast client cannot fill memory.
/// At N1 = 256 this is 16 KiB a link, plus at most one message.
pub const LINK_QUEUE_LIMIT: usize = 64;

/// Lines logged about one client's messages of unknown kinds before they
/// are only counted.
const UNKNOWN_KIND_LINES: u32 = 10;

/// Lines logged about damaged KISS input on a port before only every
/// thousandth is.
const KISS_ERROR_LINES: u64 = 10;

/// Information octets shown per frame logged.
const FRAME_LOG: linklab_wire::monitor::MonitorOptions =
    linklab_wire::monitor::MonitorOptions { max_info: Some(32) };

/// A client of the server, numbered from 1 in order of arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClientId(pub u64);

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "client {}", self.0)
    }
}

/// A link's owner.
#[derive(Debug, Clone, Copy)]
struct Owner {
    client: ClientId,
    /// 'C' sent to the client (the link came up).
    announced: bool,
    /// The PID asked for with 'c', for data sent with PID 0.
    pid: Pid,
}

#[derive(Debug, Default)]
struct Client {
    decoder: Decoder,
    monitor: bool,
    raw: bool,
    out: Vec<u8>,
    unknown_kinds: u32,
}

/// The AGWPE engine: radio ports, clients and who owns what.
#[derive(Debug)]
pub struct Server {
    ports: Vec<RadioPort>,
    clients: BTreeMap<ClientId, Client>,
    next_client: u64,
    registry: BTreeMap<Key, ClientId>,
    /// Links by port, local and remote callsign.
    owners: BTreeMap<(usize, Key, Key), Owner>,
    wall_at_zero: SystemTime,
    log: VecDeque<String>,
    closing: VecDeque<ClientId>,
    log_frames: bool,
}

impl Server {
    /// A server with these radio ports, all down until
    /// [`Server::port_up`]; `wall_at_zero` is the wall clock at
    /// [`Instant::ZERO`], for the times in monitor records and the heard
    /// list.
    pub fn new(ports: Vec<PortConfig>, wall_at_zero: SystemTime) -> Server {
        Server {
            ports: ports.into_iter().map(RadioPort::new).collect(),
            clients: BTreeMap::new(),
            next_client: 1,
            registry: BTreeMap::new(),
            owners: BTreeMap::new(),
            wall_at_zero,
            log: VecDeque::new(),
            closing: VecDeque::new(),
            log_frames: false,
        }
    }

    /// Log every frame sent and received, in linklab's monitor format.
    pub fn set_log_frames(&mut self, on: bool) {
        self.log_frames = on;
    }

    /// The number of radio ports.
    pub fn port_count(&self) -> usize {
        self.ports.len()
    }

    /// Whether port `port` has its TNC.
    pub fn port_is_up(&self, port: usize) -> bool {
        self.ports.get(port).is_some_and(|p| p.up)
    }

    /// The clients connected.
    pub fn clients(&self) -> impl Iterator<Item = ClientId> + '_ {
        self.clients.keys().copied()
    }

    // ---- clients ----

    /// A new client connected.
    pub fn client_connected(&mut self) -> ClientId {
        let id = ClientId(self.next_client);
        self.next_client += 1;
        self.clients.insert(id, Client::default());
        id
    }

    /// Octets read from client `id`.
    pub fn handle_client_bytes(&mut self, now: Instant, id: ClientId, bytes: &[u8]) {
        let Some(client) = self.clients.get_mut(&id) else {
            return;
        };
        client.decoder.push(bytes);
        while let Some(item) = self
            .clients
            .get_mut(&id)
            .and_then(|c| c.decoder.poll_message())
        {
            match item {
                Ok(message) => self.handle_message(now, id, message),
                Err(error) => {
                    self.note(format!("{id}: {error}; disconnecting it"));
                    self.close(id);
                    break;
                }
            }
        }
        self.pump(now);
    }

    /// Client `id` went away (or was closed by [`Server::poll_close`]):
    /// its callsigns are unregistered and its links released with DISC.
    pub fn client_closed(&mut self, now: Instant, id: ClientId) {
        if self.clients.remove(&id).is_none() {
            return;
        }
        self.registry.retain(|_, owner| *owner != id);
        for port in &mut self.ports {
            for station in port.stations.values_mut() {
                if !self.registry.contains_key(&key(&station.mycall())) {
                    station.set_listening(false);
                }
            }
        }
        let owned: Vec<(usize, Key, Key)> = self
            .owners
            .iter()
            .filter(|(_, o)| o.client == id)
            .map(|(k, _)| *k)
            .collect();
        for (p, local, remote) in owned {
            self.owners.remove(&(p, local, remote));
            let Some(port) = self.ports.get_mut(p) else {
                continue;
            };
            let Some(station) = port.stations.get_mut(&local) else {
                continue;
            };
            let remote_address = station
                .links()
                .map(|l| l.remote())
                .find(|r| key(r) == remote);
            if let Some(remote_address) = remote_address {
                if station
                    .link(&remote_address)
                    .is_some_and(|l| l.state() != State::Disconnected)
                {
                    let _ = station.disconnect(now, &remote_address);
                    self.log.push_back(format!(
                        "port {}: {} went away: releasing its link {} <-> {}",
                        p + 1,
                        id,
                        station.mycall(),
                        remote_address
                    ));
                }
            }
        }
        self.pump(now);
    }

    /// Whether the server takes more input from client `id` now: not while
    /// one of its links holds [`LINK_QUEUE_LIMIT`] I frames or more
    /// waiting for the radio.
    pub fn accepts_input(&self, id: ClientId) -> bool {
        !self.owners.iter().any(|((p, local, remote), owner)| {
            owner.client == id
                && self
                    .ports
                    .get(*p)
                    .and_then(|port| port.stations.get(local))
                    .and_then(|s| s.links().find(|l| key(&l.remote()) == *remote))
                    .is_some_and(|l| l.queued() >= LINK_QUEUE_LIMIT)
        })
    }

    /// Octets to write to client `id`, taken.
    pub fn take_output(&mut self, id: ClientId) -> Vec<u8> {
        self.clients
            .get_mut(&id)
            .map(|c| std::mem::take(&mut c.out))
            .unwrap_or_default()
    }

    /// A client the server has given up on (it broke the framing); the
    /// driver closes its socket and calls [`Server::client_closed`].
    pub fn poll_close(&mut self) -> Option<ClientId> {
        self.closing.pop_front()
    }

    /// The next line for the log.
    pub fn poll_log(&mut self) -> Option<String> {
        self.log.pop_front()
    }

    /// Releases every link (DISC), as at a stop.
    pub fn release_all(&mut self, now: Instant) {
        for port in &mut self.ports {
            for station in port.stations.values_mut() {
                station.disconnect_all(now);
            }
        }
        self.pump(now);
    }

    /// Links on every port, in any state.
    pub fn link_count(&self) -> usize {
        self.ports
            .iter()
            .flat_map(|p| p.stations.values())
            .map(|s| s.links().count())
            .sum()
    }

    // ---- TNCs ----

    /// Port `port`'s TNC is connected: its KISS parameters are queued.
    pub fn port_up(&mut self, now: Instant, port: usize) {
        if let Some(p) = self.ports.get_mut(port) {
            p.come_up();
        }
        self.pump(now);
    }

    /// Port `port`'s TNC went away (`why`): every link on it ends, each
    /// client with one is told ('d'), and the port refuses new links
    /// until it is up again.
    pub fn port_down(&mut self, now: Instant, port: usize, why: &str) {
        let Some(p) = self.ports.get_mut(port) else {
            return;
        };
        if !p.up {
            return;
        }
        p.go_down();
        let links: Vec<(Address, Address)> = p
            .stations
            .values()
            .flat_map(|s| s.links().map(move |l| (s.mycall(), l.remote())))
            .collect();
        p.stations.clear();
        let ended = match links.len() {
            1 => "1 link ended".to_string(),
            n => format!("{n} links ended"),
        };
        self.note(format!("port {}: {why}; {ended}", port + 1));
        for (local, remote) in links {
            if let Some(owner) = self.owners.remove(&(port, key(&local), key(&remote))) {
                let text = format!("*** DISCONNECTED From Station {remote}\r");
                self.send_link_message(
                    owner.client,
                    port,
                    b'd',
                    &remote,
                    &local,
                    text.into_bytes(),
                );
            }
        }
        self.pump(now);
    }

    /// Octets from port `port`'s TNC.
    pub fn handle_kiss_bytes(&mut self, now: Instant, port: usize, bytes: &[u8]) {
        let wall = self.wall(now);
        let Some(p) = self.ports.get_mut(port) else {
            return;
        };
        let before = p.kiss_errors;
        let (arrivals, errors) = p.receive(now, wall, bytes);
        for (n, error) in (before + 1..).zip(errors) {
            if n <= KISS_ERROR_LINES || n % 1000 == 0 {
                self.note(format!(
                    "port {}: damaged KISS input dropped ({n} so far): {error}",
                    port + 1
                ));
            }
        }
        for arrival in arrivals {
            self.arrive(now, port, arrival);
        }
        self.pump(now);
    }

    /// KISS octets to write to port `port`'s TNC, taken.
    pub fn take_tx(&mut self, port: usize) -> Vec<u8> {
        self.ports
            .get_mut(port)
            .map(RadioPort::take_tx)
            .unwrap_or_default()
    }

    // ---- time ----

    /// When [`Server::handle_timeout`] must next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.ports.iter().filter_map(RadioPort::poll_timeout).min()
    }

    /// Runs the link timers due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        for port in &mut self.ports {
            port.handle_timeout(now);
        }
        self.pump(now);
    }

    // ---- internals ----

    fn wall(&self, now: Instant) -> SystemTime {
        monitor::wall_at(self.wall_at_zero, Duration::from_micros(now.as_micros()))
    }

    fn note(&mut self, line: String) {
        self.log.push_back(line);
    }

    fn log_frame(&mut self, port: usize, direction: &str, arrival: &Arrival) {
        if self.log_frames {
            let text =
                linklab_wire::monitor::format_raw_with(&arrival.bytes, arrival.modulus, FRAME_LOG);
            self.note(format!("port {} {direction} {text}", port + 1));
        }
    }

    fn send(&mut self, id: ClientId, message: &Message) {
        if let Some(client) = self.clients.get_mut(&id) {
            message.encode_into(&mut client.out);
        }
    }

    /// Sends a message about the link `local` <-> `remote`: CallFrom the
    /// remote station, CallTo ours, as AGWPE does for 'C', 'D' and 'd'.
    fn send_link_message(
        &mut self,
        id: ClientId,
        port: usize,
        kind: u8,
        remote: &Address,
        local: &Address,
        data: Vec<u8>,
    ) {
        let mut header = Header::new(port_octet(port), kind);
        header.call_from = CallField::from_address(remote);
        header.call_to = CallField::from_address(local);
        self.send(id, &Message::new(header, data));
    }

    fn close(&mut self, id: ClientId) {
        if !self.closing.contains(&id) {
            self.closing.push_back(id);
        }
    }

    /// A frame off the air: monitor records, then to the station it is for.
    fn arrive(&mut self, now: Instant, port: usize, arrival: Arrival) {
        let wall = self.wall(now);
        self.log_frame(port, "RX", &arrival);
        let kiss_port = self.ports.get(port).map_or(0, |p| p.config.kiss.port.get());
        let record = monitor::record(
            port_octet(port),
            &arrival.bytes,
            arrival.modulus,
            false,
            wall,
        );
        let raw = monitor::raw_record(port_octet(port), kiss_port, &arrival.bytes);
        for client in self.clients.values_mut() {
            if client.monitor {
                if let Some(record) = &record {
                    record.encode_into(&mut client.out);
                }
            }
            if client.raw {
                raw.encode_into(&mut client.out);
            }
        }
        let Ok((field, _)) = AddressField::decode(&arrival.bytes) else {
            return;
        };
        // 6.1 / 3.12.5: ours once every digipeater has repeated it.
        if !field.digipeaters().iter().all(Address::c_or_h) {
            return;
        }
        let dest =
            Address::new(field.dest().callsign(), field.dest().ssid()).unwrap_or(*field.dest());
        let registered = self.registry.contains_key(&key(&dest));
        let Some(p) = self.ports.get_mut(port) else {
            return;
        };
        let answers = p.config.answer_for.iter().any(|a| key(a) == key(&dest));
        if !(registered || answers || p.stations.contains_key(&key(&dest))) {
            return;
        }
        if let Some(station) = p.station(&dest, registered) {
            station.handle_kiss_frame(now, &arrival.bytes);
        }
    }

    /// Runs the stations' output to the TNCs and their events to the
    /// clients, until nothing moves.
    fn pump(&mut self, now: Instant) {
        let wall = self.wall(now);
        for index in 0..self.ports.len() {
            while let Some(port) = self.ports.get_mut(index) {
                let events = port.drain_stations(now);
                let sent: Vec<Arrival> = port.sent.drain(..).collect();
                if events.is_empty() && sent.is_empty() {
                    break;
                }
                for arrival in sent {
                    self.log_frame(index, "TX", &arrival);
                    let record = monitor::record(
                        port_octet(index),
                        &arrival.bytes,
                        arrival.modulus,
                        true,
                        wall,
                    );
                    if let Some(record) = record {
                        for client in self.clients.values_mut().filter(|c| c.monitor) {
                            record.encode_into(&mut client.out);
                        }
                    }
                }
                for (local, event) in events {
                    self.station_event(now, index, local, event);
                }
            }
            let registry = &self.registry;
            if let Some(port) = self.ports.get_mut(index) {
                port.prune(|k| registry.contains_key(k));
            }
        }
    }

    fn station_event(&mut self, now: Instant, port: usize, local: Address, event: StationEvent) {
        match event {
            StationEvent::Link { remote, event } => {
                self.link_event(now, port, local, remote, event)
            }
            StationEvent::BadInput(error) => self.note(format!("port {}: {error}", port + 1)),
            StationEvent::BadInputCount(count) => self.note(format!("port {}: {count}", port + 1)),
            StationEvent::Outstanding { .. } | StationEvent::Monitor { .. } => {}
        }
    }

    fn link_event(
        &mut self,
        now: Instant,
        port: usize,
        local: Address,
        remote: Address,
        event: Event,
    ) {
        let k = (port, key(&local), key(&remote));
        if let Event::Connected { incoming: true, .. } = event {
            if !self.owners.contains_key(&k) {
                if let Some(client) = self.registry.get(&key(&local)).copied() {
                    self.owners.insert(
                        k,
                        Owner {
                            client,
                            announced: false,
                            pid: Pid::NoLayer3,
                        },
                    );
                }
            }
        }
        let Some(owner) = self.owners.get(&k).copied() else {
            if let Event::Connected { .. } | Event::Data { .. } = event {
                self.note(format!(
                    "port {}: {local} <-> {remote}: no client holds this link; releasing it",
                    port + 1
                ));
                if let Some(station) = self
                    .ports
                    .get_mut(port)
                    .and_then(|p| p.stations.get_mut(&key(&local)))
                {
                    let _ = station.disconnect(now, &remote);
                }
            }
            return;
        };
        match event {
            Event::Connected { incoming, .. } => {
                if owner.announced {
                    self.note(format!(
                        "port {}: {local} <-> {remote}: link reset; data in flight may be lost",
                        port + 1
                    ));
                    return;
                }
                if let Some(o) = self.owners.get_mut(&k) {
                    o.announced = true;
                }
                let text = if incoming {
                    format!("*** CONNECTED To Station {remote}\r")
                } else {
                    format!("*** CONNECTED With Station {remote}\r")
                };
                self.send_link_message(
                    owner.client,
                    port,
                    b'C',
                    &remote,
                    &local,
                    text.into_bytes(),
                );
            }
            Event::Data { pid, data } => {
                let mut header = Header::new(port_octet(port), b'D');
                header.pid = u8::from(pid);
                header.call_from = CallField::from_address(&remote);
                header.call_to = CallField::from_address(&local);
                self.send(owner.client, &Message::new(header, data));
            }
            Event::Disconnected { reason } => {
                self.owners.remove(&k);
                let text = match reason {
                    DisconnectReason::ReleaseTimeout => {
                        format!("*** DISCONNECTED RETRYOUT With {remote}\r")
                    }
                    _ => format!("*** DISCONNECTED From Station {remote}\r"),
                };
                self.send_link_message(
                    owner.client,
                    port,
                    b'd',
                    &remote,
                    &local,
                    text.into_bytes(),
                );
            }
            Event::LinkFailure { reason } => {
                self.owners.remove(&k);
                let text = match reason {
                    FailureReason::ConnectTimeout
                    | FailureReason::UnacknowledgedData
                    | FailureReason::NoResponseToEnquiry => {
                        format!("*** DISCONNECTED RETRYOUT With {remote}\r")
                    }
                    FailureReason::PeerBusy => format!("*** DISCONNECTED From Station {remote}\r"),
                };
                self.note(format!(
                    "port {}: {local} <-> {remote}: link failed: {reason:?}",
                    port + 1
                ));
                self.send_link_message(
                    owner.client,
                    port,
                    b'd',
                    &remote,
                    &local,
                    text.into_bytes(),
                );
            }
            Event::Error(error) => {
                self.note(format!("port {}: {local} <-> {remote}: {error}", port + 1))
            }
            Event::Negotiated { .. } | Event::UnitData { .. } => {}
        }
    }

    // ---- client messages ----

    fn handle_message(&mut self, now: Instant, id: ClientId, message: Message) {
        let header = message.header;
        match header.kind {
            b'R' => {
                let mut data = VERSION.0.to_le_bytes().to_vec();
                data.extend_from_slice(&VERSION.1.to_le_bytes());
                self.send(id, &Message::new(Header::new(0, b'R'), data));
            }
            b'G' => {
                let mut text = format!("{};", self.ports.len());
                for (i, port) in self.ports.iter().enumerate() {
                    text.push_str(&format!(
                        "Port{} {};",
                        i + 1,
                        port.config.description.replace(';', ",")
                    ));
                }
                let mut data = text.into_bytes();
                data.push(0);
                self.send(id, &Message::new(Header::new(0, b'G'), data));
            }
            b'g' => self.port_caps(now, id, header),
            b'H' => self.heard(id, header),
            b'X' => self.register(id, header),
            b'x' => self.unregister(id, header),
            b'm' => {
                if let Some(c) = self.clients.get_mut(&id) {
                    c.monitor = !c.monitor;
                }
            }
            b'k' => {
                if let Some(c) = self.clients.get_mut(&id) {
                    c.raw = !c.raw;
                }
            }
            b'y' => {
                let count = self
                    .ports
                    .get(usize::from(header.port))
                    .map_or(0, RadioPort::outstanding);
                let reply = Message::new(Header::new(header.port, b'y'), u32_data(count));
                self.send(id, &reply);
            }
            b'Y' => self.outstanding(id, header),
            b'C' | b'c' | b'v' => self.connect(now, id, &message),
            b'D' => self.data(id, message),
            b'd' => self.disconnect(now, id, header),
            b'M' | b'V' => self.unproto(now, id, &message),
            b'K' => self.raw_frame(now, id, &message),
            // Login: this server has no accounts; the socket is the
            // boundary (it listens on loopback unless told otherwise).
            b'P' => {}
            kind => {
                let Some(client) = self.clients.get_mut(&id) else {
                    return;
                };
                client.unknown_kinds += 1;
                let n = client.unknown_kinds;
                if n <= UNKNOWN_KIND_LINES {
                    self.note(format!(
                        "{id}: message of unknown kind '{}' ({} octets of data) ignored{}",
                        printable(kind),
                        message.data.len(),
                        if n == UNKNOWN_KIND_LINES {
                            "; further ones are not logged"
                        } else {
                            ""
                        }
                    ));
                }
            }
        }
    }

    /// The port a request names, or a log line saying why not.
    fn port_of(&mut self, id: ClientId, header: &Header, up: bool) -> Option<usize> {
        let port = usize::from(header.port);
        match self.ports.get(port) {
            None => {
                self.note(format!(
                    "{id}: '{}' names port {}, but this server has {} (numbered from 0 in the header)",
                    printable(header.kind),
                    port,
                    self.ports.len()
                ));
                None
            }
            Some(p) if up && !p.up => {
                self.note(format!(
                    "{id}: '{}' on port {}: its TNC is not connected",
                    printable(header.kind),
                    port + 1
                ));
                None
            }
            Some(_) => Some(port),
        }
    }

    /// The two callsigns of a link request, or a log line.
    fn calls(&mut self, id: ClientId, header: &Header) -> Option<(Address, Address)> {
        match (header.call_from.address(), header.call_to.address()) {
            (Ok(local), Ok(remote)) => Some((local, remote)),
            (Err(e), _) => {
                self.note(format!(
                    "{id}: '{}': CallFrom {:?}: {e}",
                    printable(header.kind),
                    header.call_from.text()
                ));
                None
            }
            (_, Err(e)) => {
                self.note(format!(
                    "{id}: '{}': CallTo {:?}: {e}",
                    printable(header.kind),
                    header.call_to.text()
                ));
                None
            }
        }
    }

    fn register(&mut self, id: ClientId, header: Header) {
        let ok = match header.call_from.address() {
            Err(e) => {
                self.note(format!(
                    "{id}: cannot register {:?}: {e}",
                    header.call_from.text()
                ));
                false
            }
            Ok(call) => match self.registry.get(&key(&call)) {
                Some(holder) if *holder != id => {
                    self.note(format!("{id}: cannot register {call}: {holder} holds it"));
                    false
                }
                _ => {
                    self.registry.insert(key(&call), id);
                    for port in &mut self.ports {
                        if let Some(station) = port.stations.get_mut(&key(&call)) {
                            station.set_listening(true);
                        }
                    }
                    true
                }
            },
        };
        let mut reply = Header::new(header.port, b'X');
        reply.call_from = header.call_from;
        self.send(id, &Message::new(reply, vec![u8::from(ok)]));
    }

    fn unregister(&mut self, id: ClientId, header: Header) {
        let Ok(call) = header.call_from.address() else {
            return;
        };
        if self.registry.get(&key(&call)) == Some(&id) {
            self.registry.remove(&key(&call));
            for port in &mut self.ports {
                if let Some(station) = port.stations.get_mut(&key(&call)) {
                    station.set_listening(false);
                }
            }
        }
    }

    fn port_caps(&mut self, now: Instant, id: ClientId, header: Header) {
        let Some(index) = self.port_of(id, &header, false) else {
            return;
        };
        let Some(port) = self.ports.get_mut(index) else {
            return;
        };
        let units = |d: Option<Duration>| d.map_or(0, linklab_wire::kiss::units_from_duration);
        let kiss = port.config.kiss;
        let window = match port.config.link.modulus {
            Modulus::Mod8 => port.config.link.window_mod8,
            Modulus::Mod128 => port.config.link.window_mod128,
        };
        let baud = match port.config.bit_rate {
            Some(2400) => 1,
            Some(4800) => 2,
            Some(9600) => 3,
            Some(19200) => 4,
            Some(38400) => 5,
            Some(57600) => 6,
            Some(115_200) => 7,
            _ => 0,
        };
        let mut data = vec![
            baud,
            0xFF,
            units(kiss.txdelay),
            units(kiss.txtail),
            kiss.persistence.unwrap_or(0),
            units(kiss.slot_time),
            window,
            u8::try_from(port.connections()).unwrap_or(u8::MAX),
        ];
        data.extend_from_slice(&u32_data(port.recent_octets(now)));
        self.send(id, &Message::new(Header::new(header.port, b'g'), data));
    }

    fn heard(&mut self, id: ClientId, header: Header) {
        let Some(index) = self.port_of(id, &header, false) else {
            return;
        };
        let heard: Vec<_> = self
            .ports
            .get(index)
            .map(|p| p.heard().to_vec())
            .unwrap_or_default();
        for i in 0..HEARD_MAX {
            let record = monitor::heard_record(header.port, heard.get(i));
            self.send(id, &record);
        }
    }

    fn outstanding(&mut self, id: ClientId, header: Header) {
        let port = usize::from(header.port);
        let count = match (header.call_from.address(), header.call_to.address()) {
            (Ok(a), Ok(b)) => self.ports.get(port).map_or(0, |p| {
                // The AGWPE texts disagree on the order of the two calls;
                // take the link either way round.
                let find = |local: &Address, remote: &Address| {
                    p.stations
                        .get(&key(local))
                        .and_then(|s| s.link(remote))
                        .map(|l| l.unacked() + l.queued())
                };
                find(&a, &b).or_else(|| find(&b, &a)).unwrap_or(0)
            }),
            _ => 0,
        };
        let mut reply = Header::new(header.port, b'Y');
        reply.call_from = header.call_from;
        reply.call_to = header.call_to;
        self.send(id, &Message::new(reply, u32_data(count)));
    }

    fn connect(&mut self, now: Instant, id: ClientId, message: &Message) {
        let header = message.header;
        let refuse = |server: &mut Server, why: String| {
            server.note(format!(
                "{id}: connect {} -> {} refused: {why}",
                header.call_from.text(),
                header.call_to.text()
            ));
            let mut reply = Header::new(header.port, b'd');
            reply.call_from = header.call_to;
            reply.call_to = header.call_from;
            let text = format!("*** DISCONNECTED From Station {}\r", header.call_to.text());
            server.send(id, &Message::new(reply, text.into_bytes()));
        };
        let Some(port) = self.port_of(id, &header, true) else {
            return refuse(self, "no such port, or its TNC is not connected".into());
        };
        let Some((local, remote)) = self.calls(id, &header) else {
            return refuse(self, "a callsign does not parse".into());
        };
        if key(&local) == key(&remote) {
            return refuse(self, "a station cannot connect to itself".into());
        }
        let via = if header.kind == b'v' {
            match via_list(&message.data) {
                Ok((via, _)) => via,
                Err(why) => return refuse(self, why),
            }
        } else {
            Vec::new()
        };
        let pid = if header.kind == b'c' {
            Pid::from(header.pid)
        } else {
            Pid::NoLayer3
        };
        let registered = self.registry.contains_key(&key(&local));
        let k = (port, key(&local), key(&remote));
        if let Some(owner) = self.owners.get(&k) {
            if owner.client != id {
                return refuse(
                    self,
                    format!("{} holds the link {local} <-> {remote}", owner.client),
                );
            }
        }
        let Some(station) = self
            .ports
            .get_mut(port)
            .and_then(|p| p.station(&local, registered))
        else {
            return refuse(self, "the link settings were refused".into());
        };
        match station.connect(now, remote, &via) {
            Ok(()) => {
                self.owners.insert(
                    k,
                    Owner {
                        client: id,
                        announced: false,
                        pid,
                    },
                );
            }
            Err(StationError::AlreadyLinked { state, .. }) => {
                self.note(format!("{id}: connect {local} -> {remote}: the link is already {state:?}; request ignored"));
            }
            Err(error) => refuse(self, error.to_string()),
        }
        self.pump(now);
    }

    fn data(&mut self, id: ClientId, message: Message) {
        let header = message.header;
        let Some(port) = self.port_of(id, &header, true) else {
            return;
        };
        let Some((local, remote)) = self.calls(id, &header) else {
            return;
        };
        let k = (port, key(&local), key(&remote));
        let owner = match self.owners.get(&k) {
            Some(owner) if owner.client == id => *owner,
            Some(owner) => {
                let holder = owner.client;
                return self.note(format!(
                    "{id}: {} octets for {local} -> {remote} dropped: {holder} holds that link",
                    message.data.len()
                ));
            }
            None => {
                return self.note(format!(
                    "{id}: {} octets for {local} -> {remote} dropped: no such link",
                    message.data.len()
                ))
            }
        };
        let pid = if header.pid == 0 {
            owner.pid
        } else {
            Pid::from(header.pid)
        };
        let Some(station) = self
            .ports
            .get_mut(port)
            .and_then(|p| p.stations.get_mut(&key(&local)))
        else {
            return;
        };
        // One I frame per N1 octets: AGWPE data is a byte stream, and a
        // peer without segmentation (AX.25 v2.0, most TNCs) cannot take
        // more in one frame.
        let n1 = station
            .link(&remote)
            .map_or(256, |l| l.params().n1_tx)
            .max(1);
        let mut error = None;
        for chunk in message.data.chunks(n1) {
            if let Err(e) = station.send_with_pid(&remote, pid, chunk.to_vec()) {
                error = Some(e);
                break;
            }
        }
        if let Some(e) = error {
            self.note(format!("{id}: data for {local} -> {remote} not sent: {e}"));
        }
    }

    fn disconnect(&mut self, now: Instant, id: ClientId, header: Header) {
        let Some((local, remote)) = self.calls(id, &header) else {
            return;
        };
        let port = usize::from(header.port);
        let k = (port, key(&local), key(&remote));
        let held_by_other = self.owners.get(&k).is_some_and(|o| o.client != id);
        let station = self
            .ports
            .get_mut(port)
            .and_then(|p| p.stations.get_mut(&key(&local)));
        let live = station
            .as_ref()
            .and_then(|s| s.link(&remote))
            .is_some_and(|l| l.state() != State::Disconnected);
        match station {
            Some(station) if live && !held_by_other => {
                let _ = station.disconnect(now, &remote);
                self.pump(now);
            }
            _ if held_by_other => {
                self.note(format!(
                    "{id}: disconnect {local} -> {remote} ignored: another client holds that link"
                ));
            }
            _ => {
                // No such link: say it is down, so the client stops waiting.
                let text = format!("*** DISCONNECTED From Station {remote}\r");
                self.send_link_message(id, port, b'd', &remote, &local, text.into_bytes());
            }
        }
    }

    fn unproto(&mut self, now: Instant, id: ClientId, message: &Message) {
        let header = message.header;
        let Some(port) = self.port_of(id, &header, true) else {
            return;
        };
        let Some((source, dest)) = self.calls(id, &header) else {
            return;
        };
        let (via, info) = if header.kind == b'V' {
            match via_list(&message.data) {
                Ok((via, used)) => (via, message.data.get(used..).unwrap_or_default().to_vec()),
                Err(why) => return self.note(format!("{id}: 'V' dropped: {why}")),
            }
        } else {
            (Vec::new(), message.data.clone())
        };
        // The AGWPE text says PID 0x00 or 0xF0 for plain AX.25; 0 is not
        // a PID AX.25 defines, so it is sent as 0xF0.
        let pid = if header.pid == 0 {
            Pid::NoLayer3
        } else {
            Pid::from(header.pid)
        };
        match Frame::ui(dest, source, &via, pid, info) {
            Ok(frame) => self.transmit(now, port, frame.encode()),
            Err(e) => self.note(format!("{id}: '{}' dropped: {e}", printable(header.kind))),
        }
    }

    fn raw_frame(&mut self, now: Instant, id: ClientId, message: &Message) {
        let Some(port) = self.port_of(id, &message.header, true) else {
            return;
        };
        // The first octet is the KISS type octet; the port comes from the
        // header.
        let frame = message.data.get(1..).unwrap_or_default();
        match AddressField::decode(frame) {
            Ok((_, used)) if frame.len() > used => self.transmit(now, port, frame.to_vec()),
            Ok(_) => self.note(format!(
                "{id}: 'K' dropped: no control field after the addresses"
            )),
            Err(e) => self.note(format!(
                "{id}: 'K' dropped: its address field does not decode: {e}"
            )),
        }
    }

    fn transmit(&mut self, now: Instant, port: usize, bytes: Vec<u8>) {
        if let Some(p) = self.ports.get_mut(port) {
            p.transmit(bytes);
        }
        // Its 'T' records.
        self.pump(now);
    }
}

/// The port number in a header.
fn port_octet(port: usize) -> u8 {
    u8::try_from(port).unwrap_or(u8::MAX)
}

/// A count as AGWPE sends it: 32 bits, little endian.
fn u32_data(count: usize) -> Vec<u8> {
    u32::try_from(count)
        .unwrap_or(u32::MAX)
        .to_le_bytes()
        .to_vec()
}

/// The digipeater list of a 'v' or 'V' message (a count, then ten octets
/// per callsign) and the octets it took.
fn via_list(data: &[u8]) -> Result<(Vec<Address>, usize), String> {
    let count = usize::from(data.first().copied().unwrap_or(0));
    if count == 0 || count > 8 {
        return Err(format!(
            "{count} digipeaters given; AX.25 allows 1 to 8 (3.12.5)"
        ));
    }
    let used = 1 + count * CALL_LEN;
    let fields = data.get(1..used).ok_or_else(|| {
        format!(
            "{count} digipeaters announced but only {} octets of data",
            data.len()
        )
    })?;
    let mut via = Vec::with_capacity(count);
    for chunk in fields.chunks_exact(CALL_LEN) {
        let text = CallField::from_text(&String::from_utf8_lossy(
            chunk.split(|&b| b == 0).next().unwrap_or_default(),
        ));
        via.push(
            text.address()
                .map_err(|e| format!("digipeater {:?}: {e}", text.text()))?,
        );
    }
    Ok((via, used))
}
