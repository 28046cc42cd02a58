//! The AGWPE engine, sans-IO: clients' messages and TNCs' octets in,
//! answers, frames and log lines out, time passed in (docs/architecture.md,
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
use std::time::SystemTime;

use linklab_core::Instant;
use linklab_io::StationEvent;
use linklab_link::{DisconnectReason, Event, FailureReason, State};
use linklab_wire::ax25::{Address, AddressField, Pid};

use crate::monitor;
use crate::port::{key, Arrival, Key, PortConfig, RadioPort};
use crate::wire::{text_data, CallField, Decoder, Header, Message};
use linklab_wire::kiss;

/// I frames a link may hold queued (not yet sent), or data messages
/// before it is up, before its client's
/// input is no longer read: the client waits in its socket write until
/// the radio has taken some of them, so a fast client cannot fill memory.
/// At N1 = 256 this is 16 KiB a link, plus at most one message.
pub const LINK_QUEUE_LIMIT: usize = 64;

/// Lines logged about one client's messages of unknown kinds before they
/// are only counted.
pub(crate) const UNKNOWN_KIND_LINES: u32 = 10;

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
#[derive(Debug, Clone)]
pub(crate) struct Owner {
    pub client: ClientId,
    /// 'C' sent to the client (the link came up).
    pub announced: bool,
    /// The PID asked for with 'c', for data sent with PID 0.
    pub pid: Pid,
    /// Data given before the link came up, sent when it does (a DL-DATA
    /// request while awaiting connection is queued, AX.25 v2.2 C4.3
    /// state 1).
    pub pending: Vec<(Pid, Vec<u8>)>,
    /// 'd' asked for the link's release once its data is delivered.
    pub releasing: bool,
}

impl Owner {
    /// The owner of a link `client` asked for or registered.
    pub fn new(client: ClientId, pid: Pid) -> Owner {
        Owner {
            client,
            announced: false,
            pid,
            pending: Vec::new(),
            releasing: false,
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Client {
    pub(crate) decoder: Decoder,
    pub(crate) monitor: bool,
    pub(crate) raw: bool,
    pub(crate) out: Vec<u8>,
    pub(crate) bad_lines: u32,
    /// For a client of the shared KISS port: its KISS decoder.
    pub(crate) kiss: Option<kiss::Decoder>,
}

/// The AGWPE engine: radio ports, clients and who owns what.
#[derive(Debug)]
pub struct Server {
    pub(crate) ports: Vec<RadioPort>,
    pub(crate) clients: BTreeMap<ClientId, Client>,
    pub(crate) next_client: u64,
    pub(crate) registry: BTreeMap<Key, ClientId>,
    /// Links by port, local and remote callsign.
    pub(crate) owners: BTreeMap<(usize, Key, Key), Owner>,
    pub(crate) wall_at_zero: SystemTime,
    pub(crate) log: VecDeque<String>,
    pub(crate) closing: VecDeque<ClientId>,
    pub(crate) log_frames: bool,
    /// Frames received, for the program embedding the server
    /// ([`Server::set_tap`]).
    pub(crate) tap: Option<VecDeque<(usize, Vec<u8>)>>,
    /// Every frame sent and received, for the embedding program's
    /// monitor and air-time count ([`Server::set_air_tap`]).
    pub(crate) air: Option<VecDeque<crate::embed::AirFrame>>,
    /// Ports the embedding program serves itself, listed after the radio
    /// ports ([`Server::add_program_port`]), and the clients' link
    /// requests on them.
    pub(crate) program_ports: Vec<String>,
    pub(crate) program_requests: VecDeque<(ClientId, Message)>,
    /// Callsigns another stack in the embedding program answers
    /// ([`Server::reserve`]): no client may register them.
    pub(crate) reserved: std::collections::BTreeSet<Key>,
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
            tap: None,
            air: None,
            program_ports: Vec::new(),
            program_requests: VecDeque::new(),
            reserved: Default::default(),
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
        if client.kiss.is_some() {
            self.handle_shared_kiss(id, bytes);
            return self.pump(now);
        }
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
    /// A link that is up is released as 'd' releases it: the data the
    /// client gave before it went is delivered first (a BBS that sends
    /// its last line, 'd', and closes its socket at once loses nothing),
    /// since a DL-DISCONNECT request would discard it (AX.25 v2.2 fig.
    /// C4.4a). A link still being set up is ended at once.
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
            let owner = self.owners.remove(&(p, local, remote));
            let up = owner.as_ref().is_some_and(|o| o.announced);
            let unsent: usize = owner
                .iter()
                .flat_map(|o| &o.pending)
                .map(|(_, data)| data.len())
                .sum();
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
                    let what = if up {
                        let _ = station.release(now, &remote_address);
                        "releasing its link once the data it gave is delivered".to_string()
                    } else {
                        let _ = station.disconnect(now, &remote_address);
                        format!("ending its link, not yet up ({unsent} octets it gave not sent)")
                    };
                    self.log.push_back(format!(
                        "port {}: {} went away: {what}: {} <-> {}",
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
        let full = |(p, local, remote): &(usize, Key, Key), owner: &Owner| {
            owner.pending.len() >= LINK_QUEUE_LIMIT
                || self
                    .ports
                    .get(*p)
                    .and_then(|port| port.stations.get(local))
                    .and_then(|s| s.links().find(|l| key(&l.remote()) == *remote))
                    .is_some_and(|l| l.queued() >= LINK_QUEUE_LIMIT)
        };
        !self
            .owners
            .iter()
            .any(|(k, owner)| owner.client == id && full(k, owner))
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
                self.send_link_message(owner.client, port, b'd', &remote, &local, &text);
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
            if n <= KISS_ERROR_LINES || n.is_multiple_of(1000) {
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

    pub(crate) fn wall(&self, now: Instant) -> SystemTime {
        monitor::wall_at(self.wall_at_zero, now - Instant::ZERO)
    }

    pub(crate) fn note(&mut self, line: String) {
        self.log.push_back(line);
    }

    fn log_frame(&mut self, port: usize, direction: &str, arrival: &Arrival) {
        if self.log_frames {
            let text =
                linklab_wire::monitor::format_raw_with(&arrival.bytes, arrival.modulus, FRAME_LOG);
            self.note(format!("port {} {direction} {text}", port + 1));
        }
    }

    pub(crate) fn send(&mut self, id: ClientId, message: &Message) {
        if let Some(client) = self.clients.get_mut(&id) {
            message.encode_into(&mut client.out);
        }
    }

    /// Sends a message about the link `local` <-> `remote`: CallFrom the
    /// remote station, CallTo ours, as AGWPE does for 'C', 'D' and 'd'.
    pub(crate) fn send_link_message(
        &mut self,
        id: ClientId,
        port: usize,
        kind: u8,
        remote: &Address,
        local: &Address,
        text: &str,
    ) {
        let mut header = Header::new(port_octet(port), kind);
        header.call_from = CallField::from_address(remote);
        header.call_to = CallField::from_address(local);
        self.send(id, &Message::new(header, text_data(text)));
    }

    pub(crate) fn close(&mut self, id: ClientId) {
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
        self.share(port, &arrival);
        self.air_tap(port, false, &arrival);
        if let Some(tap) = &mut self.tap {
            tap.push_back((port, arrival.bytes.clone()));
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
    pub(crate) fn pump(&mut self, now: Instant) {
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
                    self.share(index, &arrival);
                    self.air_tap(index, true, &arrival);
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
                port.flush_air(now);
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
            StationEvent::LateFinals { remote, count } => self.note(format!(
                "port {}: {local} <-> {remote}: {count} more late answers (F=1 with no poll \
                 outstanding, protocol error A)",
                port + 1
            )),
            StationEvent::Outstanding { .. }
            | StationEvent::Unsent { .. }
            | StationEvent::Monitor { .. } => {}
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
                    self.owners.insert(k, Owner::new(client, Pid::NoLayer3));
                }
            }
        }
        let Some(owner) = self.owners.get(&k).cloned() else {
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
                let pending = match self.owners.get_mut(&k) {
                    Some(o) => {
                        o.announced = true;
                        std::mem::take(&mut o.pending)
                    }
                    None => Vec::new(),
                };
                let text = if incoming {
                    format!("*** CONNECTED To Station {remote}\r")
                } else {
                    format!("*** CONNECTED With Station {remote}\r")
                };
                self.send_link_message(owner.client, port, b'C', &remote, &local, &text);
                for (pid, data) in pending {
                    if let Err(e) = self.send_data(port, &local, &remote, pid, data) {
                        self.note(format!(
                            "{}: data for {local} -> {remote} not sent: {e}",
                            owner.client
                        ));
                    }
                }
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
                self.send_link_message(owner.client, port, b'd', &remote, &local, &text);
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
                self.send_link_message(owner.client, port, b'd', &remote, &local, &text);
            }
            Event::Error(error) => {
                self.note(format!("port {}: {local} <-> {remote}: {error}", port + 1))
            }
            Event::Negotiated { .. } | Event::UnitData { .. } => {}
        }
    }
}

/// The port number in a header.
pub(crate) fn port_octet(port: usize) -> u8 {
    u8::try_from(port).unwrap_or(u8::MAX)
}
