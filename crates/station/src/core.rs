//! The station, sans-IO: the ports' engine (an embedded AGWPE
//! [`Server`]: one [`linklab_io::Station`] per local callsign per port,
//! the AGWPE and KISS clients, who holds which callsign and link), and
//! what the station itself runs on it: the inbound-connection services,
//! the beacons and the digipeater. TNC octets, client octets, answerers'
//! octets and the time go in; KISS octets, client octets, answerers'
//! orders ([`Output`]) and log lines come out (docs/architecture.md, "the one
//! rule"); the [`driver`](crate::driver) runs it on sockets, serial
//! ports and processes.
//!
//! The services are a client of the engine like any AGWPE program (the
//! *desk*): it registers their callsigns, so an inbound link to one is
//! the desk's, and an AGWPE client cannot take a service's callsign (nor
//! a service one an AGWPE client holds: the station says so). Every
//! arbitration between programs on one port is the engine's, in one
//! place.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::time::{Duration, SystemTime};

use linklab_agw::wire::{CallField, Decoder, Header, Message};
use linklab_agw::{ClientId, LinkSummary, Server, LINK_QUEUE_LIMIT};
use linklab_core::Instant;
use linklab_netrom::{CircuitEvent, CircuitHandle, CloseReason};
use linklab_wire::ax25::{same_station, Address, Frame, Pid};
use linklab_wire::control::Modulus;

use crate::config::{Answer, BeaconSpec, ServiceSpec, StationConfig};
use crate::digipeater::Digipeater;
use crate::ip::IpService;
use crate::lines::Converter;
use crate::netrom::NetromService;
use crate::status::{
    BeaconStatus, DtnStatus, LinkStatus, PortStatus, ServiceStatus, SessionStatus, StatusReport,
    TunStatus,
};
use crate::traffic::Traffic;

/// How long after the start the first beacons go, so that the TNCs are
/// connected.
pub const FIRST_BEACON_AFTER: Duration = Duration::from_secs(2);

/// A connection being served, numbered from 1 in order of arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(pub u64);

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "session {}", self.0)
    }
}

/// An order for the driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Start `answer` for a new connection.
    Answer {
        /// The session.
        session: SessionId,
        /// What answers.
        answer: Answer,
        /// The caller.
        caller: Address,
        /// The callsign called.
        called: Address,
        /// The port's name.
        port: String,
    },
    /// Octets from the caller for the answer (line ends converted).
    Data {
        /// The session.
        session: SessionId,
        /// The octets.
        data: Vec<u8>,
    },
    /// A datagram for the kernel, to write to TUN device `tun`.
    Datagram {
        /// The device, by its index in the configuration.
        tun: usize,
        /// The IP datagram.
        data: Vec<u8>,
    },
    /// The link is gone: stop the answer.
    Ended {
        /// The session.
        session: SessionId,
        /// Whether the caller released it with DISC (a file drop keeps
        /// its file only then).
        released: bool,
    },
}

#[derive(Debug, Clone)]
struct Session {
    port: usize,
    local: Address,
    remote: Address,
    service: Address,
    started: Instant,
    to_program: Converter,
    to_link: Converter,
    octets_in: u64,
    octets_out: u64,
    closing: bool,
    /// The NET/ROM circuit it came in on; `None` for an AX.25 link.
    circuit: Option<CircuitHandle>,
}

#[derive(Debug, Clone)]
struct Service {
    spec: ServiceSpec,
    registered: bool,
    served: u64,
    /// Still in the configuration (a removed service's sessions run on).
    current: bool,
}

#[derive(Debug, Clone)]
struct Beacon {
    spec: BeaconSpec,
    next: Instant,
    sent: u64,
}

/// What a reload asks of the driver.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reload {
    /// Ports whose TNC address changed: reconnect them.
    pub reconnect: Vec<usize>,
    /// Ports added at the end: connect them.
    pub added: Vec<usize>,
    /// What changed, for the log.
    pub notes: Vec<String>,
}

/// The station's sans-IO core.
#[derive(Debug)]
pub struct Core {
    server: Server,
    config: StationConfig,
    desk: ClientId,
    desk_input: Decoder,
    services: Vec<Service>,
    sessions: BTreeMap<SessionId, Session>,
    next_session: u64,
    digipeaters: Vec<Digipeater>,
    beacons: Vec<Beacon>,
    ip: Vec<IpService>,
    dtn_running: bool,
    netrom: Option<NetromService>,
    /// Each port's busy state as last told to the engines outside the
    /// server (the TUN devices' and the NET/ROM node's links).
    port_busy: Vec<bool>,
    out: VecDeque<Output>,
    log: VecDeque<String>,
    traffic: Traffic,
}

impl Core {
    /// The station of `config`, every port down until
    /// [`Core::port_up`]; `wall_at_zero` is the wall clock at
    /// [`Instant::ZERO`].
    pub fn new(config: StationConfig, wall_at_zero: SystemTime) -> Core {
        let mut server = Server::new(
            config.ports.iter().map(|p| p.agw.clone()).collect(),
            wall_at_zero,
        );
        server.set_log_frames(config.log_frames);
        server.set_tap(true);
        server.set_air_tap(true);
        let desk = server.internal_client();
        let mut core = Core {
            digipeaters: vec![Digipeater::new(); config.ports.len()],
            beacons: config
                .beacons
                .iter()
                .map(|spec| Beacon {
                    spec: spec.clone(),
                    next: Instant::ZERO + FIRST_BEACON_AFTER,
                    sent: 0,
                })
                .collect(),
            server,
            desk,
            desk_input: Decoder::new(),
            services: Vec::new(),
            sessions: BTreeMap::new(),
            next_session: 1,
            ip: Vec::new(),
            dtn_running: false,
            netrom: None,
            port_busy: Vec::new(),
            out: VecDeque::new(),
            log: VecDeque::new(),
            traffic: Traffic::new(config.ports.iter().map(port_air)),
            config,
        };
        if let Some(ax25) = core.config.dtn.as_ref().and_then(|d| d.node.ax25.as_ref()) {
            core.server.reserve(&ax25.mycall);
        }
        for spec in core.config.tuns.clone() {
            core.server.reserve(&spec.ax25.local);
            match IpService::new(spec) {
                Ok(service) => core.ip.push(service),
                // The file's check built the same interface.
                Err(e) => core
                    .log
                    .push_back(format!("a TUN device's AX.25 side cannot start: {e}")),
            }
        }
        if let Some(spec) = core.config.netrom.clone() {
            core.server.reserve(&spec.node.call);
            let server = &core.server;
            // The first NODES once the TNCs are connected, as beacons.
            let first = Instant::ZERO + FIRST_BEACON_AFTER;
            match NetromService::new(first, spec, |port| {
                server.port_config(port).map(|c| c.link.clone())
            }) {
                Ok(node) => {
                    core.server.add_program_port(&node.port_description());
                    core.netrom = Some(node);
                }
                Err(e) => core
                    .log
                    .push_back(format!("the NET/ROM node cannot start: {e}")),
            }
        }
        for spec in core.config.services.clone() {
            core.add_service(Instant::ZERO, spec);
        }
        core.process(Instant::ZERO);
        core
    }

    /// The configuration in force.
    pub fn config(&self) -> &StationConfig {
        &self.config
    }

    /// The engine, for the AGWPE and KISS clients' traffic
    /// ([`Core::handle_client_bytes`] and [`Core::client_closed`] must
    /// be used for what moves frames).
    pub fn server(&mut self) -> &mut Server {
        &mut self.server
    }

    // ---- input ----

    /// Octets from AGWPE or KISS client `id`.
    pub fn handle_client_bytes(&mut self, now: Instant, id: ClientId, bytes: &[u8]) {
        self.server.handle_client_bytes(now, id, bytes);
        self.process(now);
    }

    /// Client `id` went away.
    pub fn client_closed(&mut self, now: Instant, id: ClientId) {
        self.server.client_closed(now, id);
        if let Some(netrom) = &mut self.netrom {
            netrom.client_gone(id);
        }
        self.process(now);
    }

    /// Port `port`'s TNC is connected.
    pub fn port_up(&mut self, now: Instant, port: usize) {
        self.server.port_up(now, port);
        self.process(now);
    }

    /// Port `port`'s TNC went away.
    pub fn port_down(&mut self, now: Instant, port: usize, why: &str) {
        self.server.port_down(now, port, why);
        self.process(now);
    }

    /// Octets from port `port`'s TNC.
    pub fn handle_kiss_bytes(&mut self, now: Instant, port: usize, bytes: &[u8]) {
        self.server.handle_kiss_bytes(now, port, bytes);
        self.process(now);
    }

    /// When [`Core::handle_timeout`] must next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let beacons = self.beacons.iter().map(|b| b.next);
        let ip = self.ip.iter().filter_map(IpService::poll_timeout);
        let netrom = self.netrom.as_ref().and_then(NetromService::poll_timeout);
        std::iter::once(self.server.poll_timeout())
            .flatten()
            .chain(beacons)
            .chain(ip)
            .chain(netrom)
            .min()
    }

    /// Runs the timers and beacons due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.server.handle_timeout(now);
        for ip in &mut self.ip {
            ip.handle_timeout(now);
        }
        if let Some(netrom) = &mut self.netrom {
            netrom.handle_timeout(now);
        }
        for i in 0..self.beacons.len() {
            if self.beacons.get(i).is_some_and(|b| b.next <= now) {
                self.send_beacon(now, i);
            }
        }
        self.process(now);
    }

    /// Octets from session `id`'s answer for the caller.
    pub fn session_send(&mut self, now: Instant, id: SessionId, data: &[u8]) {
        let Some(session) = self.sessions.get_mut(&id) else {
            return;
        };
        let data = session.to_link.convert(data);
        if data.is_empty() {
            return;
        }
        session.octets_out += data.len() as u64;
        if let Some(circuit) = session.circuit {
            if let Some(netrom) = &mut self.netrom {
                netrom.send(circuit, &data);
            }
            self.process(now);
            return;
        }
        let message = link_message(b'D', session, data);
        self.submit(now, &message);
    }

    /// Whether session `id`'s link takes more data now (its queue of I
    /// frames waiting for the radio is under [`LINK_QUEUE_LIMIT`]).
    pub fn session_accepts(&self, id: SessionId) -> bool {
        self.sessions.get(&id).is_some_and(|s| {
            if let Some(circuit) = s.circuit {
                return self.netrom.as_ref().is_some_and(|n| n.accepts(circuit));
            }
            self.server
                .link_queued(s.port, &s.local, &s.remote)
                .is_some_and(|q| q < LINK_QUEUE_LIMIT)
        })
    }

    /// Session `id`'s answer is done: the link is released once what it
    /// sent is delivered (a second call ends it at once).
    pub fn session_close(&mut self, now: Instant, id: SessionId) {
        let Some(session) = self.sessions.get_mut(&id) else {
            return;
        };
        session.closing = true;
        if let Some(circuit) = session.circuit {
            if let Some(netrom) = &mut self.netrom {
                netrom.close(circuit);
            }
            self.process(now);
            return;
        }
        let message = link_message(b'd', session, Vec::new());
        self.submit(now, &message);
    }

    /// A datagram the kernel wrote to TUN device `tun`.
    pub fn tun_datagram(&mut self, now: Instant, tun: usize, datagram: Vec<u8>) {
        let Some(ip) = self.ip.get_mut(tun) else {
            return;
        };
        if let Err(e) = ip.send_datagram(now, datagram) {
            // Counted; a line for the first few, then every thousandth.
            if ip.dropped <= 10 || ip.dropped.is_multiple_of(1000) {
                self.log.push_back(format!(
                    "{}: datagram from the kernel dropped ({} so far): {e}",
                    ip.spec.name, ip.dropped
                ));
            }
        }
        self.process(now);
    }

    /// Whether the DTN node runs, for the status.
    pub fn set_dtn_running(&mut self, running: bool) {
        self.dtn_running = running;
    }

    /// Releases every link (DISC), as at a stop.
    pub fn release_all(&mut self, now: Instant) {
        self.server.release_all(now);
        for ip in &mut self.ip {
            ip.release(now);
        }
        if let Some(netrom) = &mut self.netrom {
            netrom.release_all();
        }
        self.process(now);
    }

    // ---- output ----

    /// The next order for the driver.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// The next line for the log.
    pub fn poll_log(&mut self) -> Option<String> {
        self.log.pop_front().or_else(|| self.server.poll_log())
    }

    /// Links on every port, in any state.
    pub fn link_count(&self) -> usize {
        self.server.link_count()
            + self.ip.iter().map(IpService::live_links).sum::<usize>()
            + self.netrom.as_ref().map_or(0, NetromService::live_links)
    }

    // ---- reload ----

    /// Takes `config` in place of the one in force. Ports may be added
    /// at the end and changed in place (a changed TNC address is
    /// reconnected, other settings apply to links set up from now on);
    /// removing or reordering ports needs a restart and is refused, with
    /// nothing changed. Services and beacons follow the new file; links
    /// and sessions the change does not touch go on.
    pub fn reload(&mut self, now: Instant, config: StationConfig) -> Result<Reload, String> {
        let old = &self.config.ports;
        for (i, port) in old.iter().enumerate() {
            match config.ports.get(i) {
                Some(p) if p.name == port.name => {}
                Some(p) => {
                    return Err(format!(
                        "port {} is {:?} in the new file but {:?} now; renaming, removing or reordering ports needs a restart",
                        i + 1,
                        p.name,
                        port.name
                    ))
                }
                None => {
                    return Err(format!(
                        "port {:?} is not in the new file; removing a port needs a restart",
                        port.name
                    ))
                }
            }
        }
        let mut reload = Reload::default();
        if config.agw != self.config.agw || config.kiss_server != self.config.kiss_server {
            reload.notes.push(
                "new [agw] or [kiss-server] address: it takes effect at the next start".into(),
            );
        }
        for (i, new) in config.ports.iter().enumerate() {
            match self.config.ports.get(i) {
                Some(old) => {
                    if old.kiss != new.kiss {
                        reload.reconnect.push(i);
                        reload
                            .notes
                            .push(format!("port {:?}: TNC now {}", new.name, new.kiss));
                    }
                    if old.agw != new.agw {
                        self.server.set_port_config(i, new.agw.clone());
                        reload
                            .notes
                            .push(format!("port {:?}: settings changed", new.name));
                    }
                    if old.digipeat != new.digipeat || old.aliases != new.aliases {
                        reload
                            .notes
                            .push(format!("port {:?}: digipeater settings changed", new.name));
                    }
                }
                None => {
                    self.server.add_port(new.agw.clone());
                    self.digipeaters.push(Digipeater::new());
                    reload.added.push(i);
                    reload.notes.push(format!("port {:?} added", new.name));
                }
            }
        }
        // Services: removed ones stop answering (their sessions run on),
        // added ones start, changed ones answer the next caller anew.
        for service in &mut self.services {
            let kept = config
                .services
                .iter()
                .find(|s| same_station(&s.callsign, &service.spec.callsign));
            match kept {
                Some(spec) => {
                    if *spec != service.spec {
                        reload
                            .notes
                            .push(format!("service {}: changed", spec.callsign));
                        service.spec = spec.clone();
                    }
                    service.current = true;
                }
                None => service.current = false,
            }
        }
        let removed: Vec<Address> = self
            .services
            .iter()
            .filter(|s| !s.current)
            .map(|s| s.spec.callsign)
            .collect();
        for call in removed {
            reload.notes.push(format!("service {call}: removed"));
            let mut header = Header::new(0, b'x');
            header.call_from = CallField::from_address(&call);
            self.submit(now, &Message::new(header, Vec::new()));
            self.services
                .retain(|s| !same_station(&s.spec.callsign, &call));
        }
        for spec in &config.services {
            if !self
                .services
                .iter()
                .any(|s| same_station(&s.spec.callsign, &spec.callsign))
            {
                reload
                    .notes
                    .push(format!("service {}: added", spec.callsign));
                self.add_service(now, spec.clone());
            }
        }
        // Beacons: one unchanged keeps its schedule.
        let mut beacons = Vec::new();
        for spec in &config.beacons {
            let kept = self
                .beacons
                .iter()
                .position(|b| b.spec == *spec)
                .map(|i| self.beacons.remove(i));
            let beacon = kept.unwrap_or_else(|| {
                reload.notes.push(format!(
                    "beacon {} on port {}: added",
                    beacon_header(spec),
                    spec.port + 1
                ));
                Beacon {
                    spec: spec.clone(),
                    next: now,
                    sent: 0,
                }
            });
            beacons.push(beacon);
        }
        for gone in &self.beacons {
            reload.notes.push(format!(
                "beacon {} on port {}: removed",
                beacon_header(&gone.spec),
                gone.spec.port + 1
            ));
        }
        self.beacons = beacons;
        if config.dtn != self.config.dtn {
            reload.notes.push(
                "the [dtn] table changed: the node is started with the station; the change takes effect at the next start".into(),
            );
        }
        if config.tuns != self.config.tuns {
            reload.notes.push(
                "the [[tun]] tables changed: TUN devices are made at the start; the change takes effect at the next start".into(),
            );
        }
        self.server.set_log_frames(config.log_frames);
        self.traffic.set_ports(config.ports.iter().map(port_air));
        if config.status != self.config.status {
            reload
                .notes
                .push("new [status] address: it takes effect at the next start".into());
        }
        self.config = config;
        self.process(now);
        Ok(reload)
    }

    // ---- status ----

    /// The status report at `now`; `config` names the file in force.
    pub fn status(&mut self, now: Instant, config: &str) -> StatusReport {
        let ports = self
            .config
            .ports
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let c = self.server.port_counters(i).unwrap_or_default();
                PortStatus {
                    number: i + 1,
                    name: spec.name.clone(),
                    tnc: spec.kiss.to_string(),
                    up: self.server.port_is_up(i),
                    callsigns: spec.callsigns.iter().map(ToString::to_string).collect(),
                    digipeat: spec.digipeat,
                    frames_received: c.frames_received,
                    octets_received: c.octets_received,
                    frames_sent: c.frames_sent,
                    octets_sent: c.octets_sent,
                    digipeated: self.digipeaters.get(i).map_or(0, Digipeater::repeated),
                    kiss_errors: c.kiss_errors,
                    tnc_losses: c.tnc_losses,
                    heard: self
                        .server
                        .heard_list(i)
                        .iter()
                        .map(|h| h.station.to_string())
                        .collect(),
                    air: self.traffic.port(
                        now,
                        i,
                        &self.server.port_link_stats(i).unwrap_or_default(),
                    ),
                }
            })
            .collect();
        let links = self
            .server
            .link_summaries()
            .into_iter()
            .map(|l| self.link_status(l))
            .collect();
        let services = self
            .services
            .iter()
            .map(|s| ServiceStatus {
                callsign: s.spec.callsign.to_string(),
                kind: s.spec.answer.kind().to_string(),
                registered: s.registered,
                served: s.served,
                sessions: self
                    .sessions
                    .values()
                    .filter(|x| same_station(&x.service, &s.spec.callsign))
                    .map(|x| SessionStatus {
                        port: x.port + 1,
                        caller: x.remote.to_string(),
                        age_s: (now - x.started).as_secs_f64(),
                        octets_in: x.octets_in,
                        octets_out: x.octets_out,
                    })
                    .collect(),
            })
            .collect();
        let beacons = self
            .beacons
            .iter()
            .map(|b| BeaconStatus {
                port: b.spec.port + 1,
                header: beacon_header(&b.spec),
                every_s: b.spec.every.as_secs(),
                next_in_s: (b.next - now).as_secs_f64(),
                sent: b.sent,
            })
            .collect();
        let tuns = self
            .ip
            .iter()
            .map(|ip| TunStatus {
                name: ip.spec.name.clone(),
                port: ip.spec.port + 1,
                callsign: ip.spec.ax25.local.to_string(),
                addresses: ip
                    .spec
                    .addresses
                    .iter()
                    .map(|(a, l)| format!("{a}/{l}"))
                    .collect(),
                mode: match ip.spec.ax25.encapsulation {
                    linklab_ip::Encapsulation::VirtualCircuit => "vc".into(),
                    linklab_ip::Encapsulation::Datagram => "datagram".into(),
                },
                from_kernel: ip.from_kernel,
                to_kernel: ip.to_kernel,
                dropped: ip.dropped,
                links: ip.live_links(),
            })
            .collect();
        let dtn = self.config.dtn.as_ref().map(|d| DtnStatus {
            eid: d.node.node_id.to_string(),
            callsign: d
                .node
                .ax25
                .as_ref()
                .map(|a| a.mycall.to_string())
                .unwrap_or_default(),
            port: d.port + 1,
            running: self.dtn_running,
            stored: 0,
            contacts: Vec::new(),
            forwarded: 0,
            delivered: 0,
        });
        StatusReport {
            uptime_s: (now - Instant::ZERO).as_secs_f64(),
            config: config.to_string(),
            agw: self.config.agw.map(|a| a.to_string()),
            kiss_server: self.config.kiss_server.map(|a| a.to_string()),
            clients: self.server.clients().count().saturating_sub(1),
            ports,
            links,
            services,
            beacons,
            tuns,
            dtn,
            netrom: self.netrom.as_ref().map(|n| n.status(now)),
        }
    }

    fn link_status(&self, l: LinkSummary) -> LinkStatus {
        let held_by = match l.owner {
            Some(owner) if owner == self.desk => self
                .sessions
                .values()
                .find(|s| {
                    s.port == l.port
                        && same_station(&s.local, &l.local)
                        && same_station(&s.remote, &l.remote)
                })
                .and_then(|s| {
                    self.services
                        .iter()
                        .find(|x| same_station(&x.spec.callsign, &s.service))
                })
                .map_or("a service".to_string(), |s| {
                    format!("service {} ({})", s.spec.callsign, s.spec.answer.kind())
                }),
            Some(owner) => format!("AGWPE {owner}"),
            None => "nobody".to_string(),
        };
        LinkStatus {
            port: l.port + 1,
            local: l.local.to_string(),
            remote: l.remote.to_string(),
            state: format!("{:?}", l.state),
            modulus: match l.modulus {
                Modulus::Mod8 => 8,
                Modulus::Mod128 => 128,
            },
            unacked: l.unacked,
            queued: l.queued,
            vs_vr_va: l.sequence,
            t1_ms: l.t1_ms,
            held_by,
            counters: l.stats,
        }
    }

    // ---- internals ----

    fn add_service(&mut self, now: Instant, spec: ServiceSpec) {
        let mut header = Header::new(0, b'X');
        header.call_from = CallField::from_address(&spec.callsign);
        self.services.push(Service {
            spec,
            registered: false,
            served: 0,
            current: true,
        });
        self.submit(now, &Message::new(header, Vec::new()));
    }

    /// A message from the desk to the engine.
    fn submit(&mut self, now: Instant, message: &Message) {
        let mut octets = Vec::with_capacity(message.encoded_len());
        message.encode_into(&mut octets);
        self.server.handle_client_bytes(now, self.desk, &octets);
        self.process(now);
    }

    /// Runs what the engine told the desk and what the tap heard, until
    /// nothing moves.
    fn process(&mut self, now: Instant) {
        loop {
            self.tell_port_busy(now);
            let octets = self.server.take_output(self.desk);
            let mut tapped = Vec::new();
            while let Some(frame) = self.server.poll_tapped() {
                tapped.push(frame);
            }
            let ip_moved = self.serve_ip(now, &tapped);
            while let Some(frame) = self.server.poll_air() {
                self.traffic.air(now, &frame);
            }
            let netrom_moved = self.serve_netrom(now, &tapped);
            if octets.is_empty() && tapped.is_empty() && !ip_moved && !netrom_moved {
                return;
            }
            self.desk_input.push(&octets);
            while let Some(item) = self.desk_input.poll_message() {
                match item {
                    Ok(message) => self.desk_message(now, message),
                    Err(e) => self.log.push_back(format!(
                        "the engine's message to the services did not decode: {e}"
                    )),
                }
            }
            for (port, frame) in tapped {
                self.digipeat(now, port, &frame);
            }
        }
    }

    fn desk_message(&mut self, now: Instant, message: Message) {
        let header = message.header;
        let port = usize::from(header.port);
        let (Ok(remote), Ok(local)) = (header.call_from.address(), header.call_to.address()) else {
            if header.kind == b'X' {
                self.registered(header, &message.data);
            }
            return;
        };
        match header.kind {
            b'X' => self.registered(header, &message.data),
            b'C' => self.connected(now, port, local, remote, None),
            b'D' => {
                let found = self.sessions.iter().find(|(_, s)| {
                    s.circuit.is_none()
                        && s.port == port
                        && same_station(&s.local, &local)
                        && same_station(&s.remote, &remote)
                });
                if let Some((&id, _)) = found {
                    self.caller_said(id, &message.data);
                }
            }
            b'd' => {
                let found = self
                    .sessions
                    .iter()
                    .find(|(_, s)| {
                        s.circuit.is_none()
                            && s.port == port
                            && same_station(&s.local, &local)
                            && same_station(&s.remote, &remote)
                    })
                    .map(|(id, s)| (*id, s.closing));
                if let Some((id, closing)) = found {
                    self.sessions.remove(&id);
                    let text = String::from_utf8_lossy(&message.data);
                    // The engine says RETRYOUT for a link that failed.
                    let released = !text.contains("RETRYOUT");
                    self.log.push_back(format!(
                        "port {}: {local} <-> {remote}: {id} ended{}",
                        port + 1,
                        if closing {
                            ""
                        } else if released {
                            " (released by the caller)"
                        } else {
                            " (the link failed)"
                        }
                    ));
                    self.out.push_back(Output::Ended {
                        session: id,
                        released,
                    });
                }
            }
            _ => {}
        }
    }

    /// Tells the TUN devices' and the NET/ROM node's links on each port
    /// when the frames handed to it start and end on the air, as the
    /// server tells its own.
    fn tell_port_busy(&mut self, now: Instant) {
        let ports = self.server.port_count();
        self.port_busy.resize(ports, false);
        for port in 0..ports {
            let busy = self.server.port_busy(port);
            if self.port_busy.get(port) == Some(&busy) {
                continue;
            }
            self.port_busy[port] = busy;
            for ip in self.ip.iter_mut().filter(|ip| ip.spec.port == port) {
                ip.set_channel_busy(now, busy);
            }
            if let Some(netrom) = &mut self.netrom {
                netrom.set_channel_busy(now, port, busy);
            }
        }
    }

    /// Gives the IP interfaces the frames heard on their port and sends
    /// what they have; whether anything moved.
    fn serve_ip(&mut self, now: Instant, tapped: &[(usize, Vec<u8>)]) -> bool {
        let mut moved = false;
        for (index, ip) in self.ip.iter_mut().enumerate() {
            let port = ip.spec.port;
            for (_, frame) in tapped.iter().filter(|(p, _)| *p == port) {
                ip.heard(now, frame);
            }
            let errors = ip.link_errors().len();
            let (frames, datagrams) = ip.poll(now);
            for line in ip.link_errors().get(errors..).unwrap_or_default() {
                self.log.push_back(format!("{}: {line}", ip.spec.name));
            }
            moved |= !frames.is_empty() || !datagrams.is_empty();
            for frame in frames {
                self.server.transmit_frame(now, port, frame);
            }
            for data in datagrams {
                self.out.push_back(Output::Datagram { tun: index, data });
            }
        }
        moved
    }

    /// Gives the NET/ROM node the frames heard on its ports, sends what
    /// it has and serves its circuits' events; whether anything moved.
    fn serve_netrom(&mut self, now: Instant, tapped: &[(usize, Vec<u8>)]) -> bool {
        let Some(netrom) = &mut self.netrom else {
            return false;
        };
        for (port, frame) in tapped {
            netrom.heard(now, *port, frame);
        }
        let mut requests = false;
        while let Some((id, message)) = self.server.poll_program_request() {
            requests = true;
            netrom.client_request(now, id, message);
        }
        let (frames, events) = netrom.poll(now);
        self.log.extend(netrom.log.drain(..));
        for (id, message) in netrom.to_clients.drain(..) {
            self.server.send_to_client(id, &message);
        }
        let moved = requests || !frames.is_empty() || !events.is_empty();
        for (port, frame) in frames {
            self.server.transmit_frame(now, port, frame);
        }
        for event in events {
            self.circuit_event(now, event);
        }
        moved
    }

    /// A NET/ROM circuit's event: a far user's call reaches the service
    /// `[netrom]` names, as an AX.25 call reaches its service.
    fn circuit_event(&mut self, now: Instant, event: CircuitEvent) {
        let Some(netrom) = &mut self.netrom else {
            return;
        };
        let session = |sessions: &BTreeMap<SessionId, Session>, circuit| {
            sessions
                .iter()
                .find(|(_, s)| s.circuit == Some(circuit))
                .map(|(id, _)| *id)
        };
        match event {
            CircuitEvent::Incoming {
                circuit,
                user,
                originating_node,
                ..
            } => {
                let port = netrom.spec.ports.first().map_or(0, |p| p.0);
                let Some(service) = netrom.spec.service else {
                    return;
                };
                self.log.push_back(format!(
                    "NET/ROM: circuit from {user} at node {originating_node}"
                ));
                self.connected(now, port, service, user, Some(circuit));
            }
            CircuitEvent::Readable { circuit } => {
                let data = netrom.read(now, circuit);
                if let Some(id) = session(&self.sessions, circuit) {
                    self.caller_said(id, &data);
                }
            }
            CircuitEvent::Closed { circuit, reason } => {
                let unread = netrom.read(now, circuit);
                netrom.release(circuit);
                let Some(id) = session(&self.sessions, circuit) else {
                    return;
                };
                // What arrived before the end still goes to the answer.
                self.caller_said(id, &unread);
                let Some(s) = self.sessions.remove(&id) else {
                    return;
                };
                self.log.push_back(format!(
                    "NET/ROM: {} <-> {}: {id} ended ({reason})",
                    s.local, s.remote
                ));
                self.out.push_back(Output::Ended {
                    session: id,
                    released: matches!(reason, CloseReason::Local | CloseReason::Remote),
                });
            }
            CircuitEvent::Connected { .. } => {}
        }
    }

    /// Octets from session `id`'s caller, over its link or circuit:
    /// counted, line ends converted, and handed to its answer unless the
    /// session is closing.
    fn caller_said(&mut self, id: SessionId, data: &[u8]) {
        let Some(s) = self.sessions.get_mut(&id) else {
            return;
        };
        s.octets_in += data.len() as u64;
        let data = s.to_program.convert(data);
        if !data.is_empty() && !s.closing {
            self.out.push_back(Output::Data { session: id, data });
        }
    }

    fn registered(&mut self, header: Header, data: &[u8]) {
        let ok = data.first() == Some(&1);
        let Ok(call) = header.call_from.address() else {
            return;
        };
        if let Some(service) = self
            .services
            .iter_mut()
            .find(|s| same_station(&s.spec.callsign, &call))
        {
            service.registered = ok;
            if !ok {
                self.log.push_back(format!(
                    "service {call}: an AGWPE client holds that callsign; the service does not answer until the station is reloaded after it lets go"
                ));
            }
        }
    }

    /// `remote` called the service `local`, over an AX.25 link on `port`
    /// or over the NET/ROM `circuit`.
    fn connected(
        &mut self,
        now: Instant,
        port: usize,
        local: Address,
        remote: Address,
        circuit: Option<CircuitHandle>,
    ) {
        let Some(service) = self
            .services
            .iter_mut()
            .find(|s| same_station(&s.spec.callsign, &local))
        else {
            if let (Some(circuit), Some(netrom)) = (circuit, &mut self.netrom) {
                self.log.push_back(format!(
                    "NET/ROM: {remote} called the node: refused, no service {local}"
                ));
                netrom.close(circuit);
            }
            return;
        };
        let id = SessionId(self.next_session);
        self.next_session += 1;
        let busy = self
            .sessions
            .values()
            .filter(|s| same_station(&s.service, &local))
            .count()
            >= service.spec.max_sessions;
        let mode = service.spec.line_ends;
        let session = Session {
            port,
            local,
            remote,
            service: service.spec.callsign,
            started: now,
            to_program: Converter::to_program(mode),
            to_link: Converter::to_link(mode),
            octets_in: 0,
            octets_out: 0,
            closing: false,
            circuit,
        };
        let via = match circuit {
            Some(_) => "NET/ROM".to_string(),
            None => format!("port {}", port + 1),
        };
        let port_name = self
            .config
            .ports
            .get(port)
            .map_or_else(|| (port + 1).to_string(), |p| p.name.clone());
        if busy || !service.current {
            let why = if busy {
                format!(
                    "{} is busy: {} callers already. Try later.\r",
                    local, service.spec.max_sessions
                )
            } else {
                format!("{local} no longer answers here.\r")
            };
            self.log.push_back(format!(
                "{via}: {remote} called {local}: refused ({})",
                why.trim_end()
            ));
            self.sessions.insert(id, session);
            self.session_send(now, id, why.as_bytes());
            self.session_close(now, id);
            return;
        }
        service.served += 1;
        let answer = service.spec.answer.clone();
        self.log.push_back(format!(
            "{via}: {remote} called {local}: {id} ({})",
            answer.kind()
        ));
        self.sessions.insert(id, session);
        self.out.push_back(Output::Answer {
            session: id,
            answer,
            caller: remote,
            called: local,
            port: port_name,
        });
    }

    fn digipeat(&mut self, now: Instant, port: usize, frame: &[u8]) {
        let Some(spec) = self.config.ports.get(port) else {
            return;
        };
        if !spec.digipeat {
            return;
        }
        let Some(digipeater) = self.digipeaters.get_mut(port) else {
            return;
        };
        if let Some(out) = digipeater.repeat(now, frame, &spec.repeats) {
            self.server.transmit_frame(now, port, out);
        }
    }

    fn send_beacon(&mut self, now: Instant, i: usize) {
        let Some(beacon) = self.beacons.get_mut(i) else {
            return;
        };
        let spec = &beacon.spec;
        beacon.next = now + spec.every;
        let frame = Frame::ui(
            spec.to,
            spec.from,
            &spec.via,
            Pid::NoLayer3,
            spec.text.as_bytes().to_vec(),
        );
        match frame {
            Ok(frame) => {
                if self.server.transmit_frame(now, spec.port, frame.encode()) {
                    beacon.sent += 1;
                } else {
                    self.log.push_back(format!(
                        "beacon {} on port {}: not sent, the TNC is not connected",
                        beacon_header(spec),
                        spec.port + 1
                    ));
                }
            }
            Err(e) => self.log.push_back(format!(
                "beacon {}: cannot be built: {e}",
                beacon_header(spec)
            )),
        }
    }
}

/// A desk message about `session`'s link: CallFrom our callsign, CallTo
/// the caller.
fn link_message(kind: u8, session: &Session, data: Vec<u8>) -> Message {
    let mut header = Header::new(u8::try_from(session.port).unwrap_or(u8::MAX), kind);
    header.call_from = CallField::from_address(&session.local);
    header.call_to = CallField::from_address(&session.remote);
    Message::new(header, data)
}

/// A port's bit rate, if configured, and air settings, for its busy time.
fn port_air(spec: &crate::config::PortSpec) -> (Option<u32>, linklab_io::AirSettings) {
    (spec.agw.bit_rate, spec.agw.air())
}

/// `FROM>TO,VIA`.
fn beacon_header(spec: &BeaconSpec) -> String {
    let mut text = format!("{}>{}", spec.from, spec.to);
    for via in &spec.via {
        text.push(',');
        text.push_str(&via.to_string());
    }
    text
}
