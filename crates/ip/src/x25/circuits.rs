//! IP over X.25, sans-IO: the encapsulation of RFC 877 (1983) and RFC 1356
//! (1992) with the circuit management Korb (1987, section 1) describes for
//! the CSNET IP-to-X.25 interface: "open an X.25 virtual circuit to each
//! site for which outbound IP datagrams are queued", "closes them when
//! traffic to the site has stopped", and opens more circuits to the same
//! site "as necessary" (Comer and Korb, CSD-TR-473).
//!
//! [`IpOverX25`] wraps a [`Dte`]: the user hands it the X.25 packets that
//! arrive from the link layer ([`IpOverX25::handle_octets`]) and drains the
//! packets to send with [`IpOverX25::poll_transmit`], exactly as with the
//! bare [`Dte`]; datagrams go in with [`IpOverX25::send_datagram`] and come
//! out of [`IpOverX25::poll_datagram`]. Datagrams are opaque byte vectors:
//! no IP header is parsed, the caller names the next hop's IP address.
//!
//! - **Calls** carry call user data 0xCC, the protocol identifier of IP
//!   (RFC 877; the NLPID of IP in RFC 1356 section 3). Incoming calls with
//!   0xCC are accepted, others are cleared.
//! - **Datagrams** are sent each as one complete packet sequence (M bit,
//!   X.25 4.3.5; RFC 877, RFC 1356 section 3), so a datagram larger than
//!   the packet size P spans several data packets; Q = 0, D = 0.
//! - **MTU**: 576 octets for RFC 877, 1500 by default for RFC 1356
//!   (section 4); configurable.
//! - **Queue**: datagrams wait per destination in a bounded FIFO (the IP
//!   interface queue); one that does not fit is dropped and counted. A
//!   datagram leaves the queue for a circuit only when that circuit has no
//!   data packets waiting behind its window, so the backlog stays here,
//!   where it drives the opening of circuits.
//! - **Circuits**: the first datagram queued for a destination opens a
//!   call to its X.121 address (from the configured table). While the
//!   queue holds `queue_len` datagrams the destination wants
//!   `min(max_circuits, 1 + queue_len / open_threshold)` circuits (open
//!   or being called); more calls are made until it has them. A circuit
//!   with nothing sent or received for `idle_timeout`, and nothing
//!   outstanding, is cleared (cause 0, DTE originated).
//! - **Spreading**: each datagram goes to the open circuit with the fewest
//!   data packets outstanding (queued plus unacknowledged), ties broken
//!   round-robin. Korb and Comer do not say which rule the CSNET code
//!   used; least-queued is chosen because with a window of two packets and
//!   a long network delay the circuits drain at different times (a
//!   multi-packet datagram holds its circuit longer), and a plain
//!   round-robin would hand a datagram to a circuit still stalled on its
//!   window while another sits idle. With equal datagrams the rule
//!   reduces to round-robin.
//! - **Failures** are reported as [`IpEvent`]s with the X.25 clearing
//!   cause and diagnostic: a call cleared before it connected, a circuit
//!   cleared by the peer or the network, a reset. When the last call to a
//!   destination fails and no circuit to it is open, its queue is dropped
//!   (counted) rather than re-called in a loop.

use core::time::Duration;
use linklab_core::{Engine, Instant};
use std::collections::{BTreeMap, VecDeque};
use std::net::Ipv4Addr;

use thiserror::Error;

use linklab_x25::packet::cause::DTE_ORIGINATED;
use linklab_x25::{
    CallOptions, Config, ConfigError, Dte, DteAddress, Event, LayerState, Lci, Packet,
};

/// Call user data identifying IP: the first octet 0xCC (RFC 877; the IP
/// NLPID of ISO/TR 9577 in RFC 1356 section 3).
pub const IP_CALL_USER_DATA: u8 = 0xCC;

/// Which specification the encapsulation follows; they differ in the
/// default MTU (the call user data and the complete packet sequence per
/// datagram are the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Encapsulation {
    /// RFC 877 (1983): MTU 576 octets.
    Rfc877,
    /// RFC 1356 (1992) section 4: default MTU 1500 octets.
    #[default]
    Rfc1356,
}

impl Encapsulation {
    /// The default MTU, octets.
    pub fn default_mtu(self) -> usize {
        match self {
            Encapsulation::Rfc877 => 576,
            Encapsulation::Rfc1356 => 1500,
        }
    }
}

/// How datagrams are spread over the open circuits to one destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Spreading {
    /// The circuit with the fewest data packets outstanding (queued plus
    /// unacknowledged), ties broken round-robin (the default; see the
    /// module documentation for why).
    #[default]
    LeastQueued,
    /// Strict rotation over the circuits that can take a datagram.
    RoundRobin,
}

/// One entry of the IP-to-X.121 address table (RFC 1356 section 4 leaves
/// the mapping to configuration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The neighbour's IP address.
    pub ip: Ipv4Addr,
    /// Its X.121 DTE address.
    pub address: DteAddress,
}

/// Configuration of an [`IpOverX25`] interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpConfig {
    /// The packet layer's configuration (this DTE's address, channels,
    /// default packet size and window).
    pub dte: Config,
    /// RFC 877 or RFC 1356.
    pub encapsulation: Encapsulation,
    /// Largest datagram accepted for sending or receiving, octets.
    pub mtu: usize,
    /// The IP-to-X.121 address table.
    pub routes: Vec<Route>,
    /// A circuit with no datagram sent or received for this long, and
    /// nothing outstanding, is cleared.
    pub idle_timeout: Duration,
    /// Queued datagrams per extra circuit: a destination wants
    /// `1 + queue_len / open_threshold` circuits (at least 1).
    pub open_threshold: usize,
    /// Most circuits to one destination that this side calls for (Korb,
    /// Table 3: 2 and 4; Table 4: 1 to 10). Circuits the peer opens count
    /// towards it but incoming IP calls are always accepted.
    pub max_circuits: usize,
    /// Most datagrams queued per destination; more are dropped.
    pub queue_limit: usize,
    /// Packet size asked for in calls (`None`: the DTE's default, no
    /// facility).
    pub packet_size: Option<usize>,
    /// Window asked for in calls (`None`: the DTE's default).
    pub window: Option<u8>,
    /// How datagrams are spread over circuits.
    pub spreading: Spreading,
}

impl IpConfig {
    /// A configuration with the defaults of `encapsulation`: its MTU, an
    /// idle time-out of 90 s, a second circuit per 8 queued datagrams, at
    /// most 4 circuits per destination, 64 datagrams queued.
    pub fn new(dte: Config, encapsulation: Encapsulation, routes: Vec<Route>) -> IpConfig {
        IpConfig {
            dte,
            encapsulation,
            mtu: encapsulation.default_mtu(),
            routes,
            idle_timeout: Duration::from_secs(90),
            open_threshold: 8,
            max_circuits: 4,
            queue_limit: 64,
            packet_size: None,
            window: None,
            spreading: Spreading::LeastQueued,
        }
    }

    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), IpConfigError> {
        self.dte.validate()?;
        if !(68..=65_535).contains(&self.mtu) {
            return Err(IpConfigError::Mtu(self.mtu));
        }
        for (name, value) in [
            ("open_threshold", self.open_threshold),
            ("max_circuits", self.max_circuits),
            ("queue_limit", self.queue_limit),
        ] {
            if value == 0 {
                return Err(IpConfigError::Zero(name));
            }
        }
        if self.idle_timeout.is_zero() {
            return Err(IpConfigError::Zero("idle_timeout"));
        }
        for (i, route) in self.routes.iter().enumerate() {
            if self.routes[..i].iter().any(|r| r.ip == route.ip) {
                return Err(IpConfigError::DuplicateRoute(route.ip));
            }
        }
        Ok(())
    }
}

/// Why an [`IpConfig`] is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IpConfigError {
    /// The packet layer's configuration is refused.
    #[error("packet layer: {0}")]
    Dte(#[from] ConfigError),
    /// The MTU is outside 68..=65535 (RFC 791 minimum, IPv4 maximum).
    #[error("mtu = {0} octets: IPv4 needs 68 to 65535")]
    Mtu(usize),
    /// A count or time that must be positive is zero.
    #[error("{0} must be positive")]
    Zero(&'static str),
    /// Two routes for one IP address.
    #[error("two routes for {0}")]
    DuplicateRoute(Ipv4Addr),
}

/// Why [`IpOverX25::send_datagram`] refused a datagram (each also
/// counted in [`IpStats`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SendError {
    /// The address table has no X.121 address for the destination.
    #[error("no X.121 address for {0}")]
    NoRoute(Ipv4Addr),
    /// The datagram is larger than the MTU.
    #[error("{len}-octet datagram exceeds the MTU of {mtu}")]
    TooBig {
        /// Its length.
        len: usize,
        /// The MTU.
        mtu: usize,
    },
    /// An empty datagram.
    #[error("empty datagram")]
    Empty,
    /// The destination's queue is full: the datagram was dropped.
    #[error("queue for {destination} full ({limit} datagrams): dropped")]
    QueueFull {
        /// The destination.
        destination: Ipv4Addr,
        /// The queue limit.
        limit: usize,
    },
}

/// A datagram received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Datagram {
    /// The IP address of the calling or called DTE of its circuit, if the
    /// address table knows it.
    pub from: Option<Ipv4Addr>,
    /// The circuit's logical channel.
    pub lci: Lci,
    /// The datagram.
    pub bytes: Vec<u8>,
}

/// What the interface reports besides datagrams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IpEvent {
    /// A circuit entered data transfer.
    CircuitOpened {
        /// Its logical channel.
        lci: Lci,
        /// The neighbour, if known.
        destination: Option<Ipv4Addr>,
        /// True if we called.
        outgoing: bool,
    },
    /// An open circuit was cleared.
    CircuitClosed {
        /// Its logical channel.
        lci: Lci,
        /// The neighbour, if known.
        destination: Option<Ipv4Addr>,
        /// Clearing cause (X.25 Table 5-5; 0 if we cleared).
        cause: u8,
        /// Diagnostic code.
        diagnostic: Option<u8>,
        /// True if the peer or the network cleared it.
        by_peer: bool,
        /// True if we cleared it for idleness.
        idle: bool,
    },
    /// A call we made was cleared before it connected.
    CallFailed {
        /// The destination.
        destination: Ipv4Addr,
        /// Clearing cause.
        cause: u8,
        /// Diagnostic code.
        diagnostic: Option<u8>,
    },
    /// The last call to `destination` failed with none open: its queued
    /// datagrams were dropped.
    Unreachable {
        /// The destination.
        destination: Ipv4Addr,
        /// Datagrams dropped.
        dropped: usize,
    },
    /// A circuit was reset: datagrams in transit on it may be lost.
    Reset {
        /// Its logical channel.
        lci: Lci,
        /// Resetting cause (Table 5-6).
        cause: u8,
        /// Diagnostic code.
        diagnostic: Option<u8>,
    },
    /// An incoming call without the IP call user data was cleared.
    RefusedCall {
        /// Its logical channel.
        lci: Lci,
        /// Its call user data.
        user_data: Vec<u8>,
    },
    /// The packet layer's restart went unanswered (T20, R20): the
    /// interface is down until [`IpOverX25::start`].
    RestartFailed,
}

/// The life of one circuit, for [`IpStats::circuits`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CircuitRecord {
    /// Its logical channel (reused by later circuits).
    pub lci: Lci,
    /// The neighbour, if known.
    pub destination: Option<Ipv4Addr>,
    /// True if we called.
    pub outgoing: bool,
    /// When it entered data transfer.
    pub opened_at: Instant,
    /// When it was cleared, if it was.
    pub closed_at: Option<Instant>,
    /// Datagrams handed to it.
    pub datagrams_sent: u64,
    /// Datagrams received on it.
    pub datagrams_received: u64,
}

/// Counters of an [`IpOverX25`] interface.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IpStats {
    /// Calls made.
    pub calls_made: u64,
    /// Calls cleared before connecting.
    pub calls_failed: u64,
    /// Circuits that entered data transfer (both directions).
    pub circuits_opened: u64,
    /// Open circuits cleared (by anyone).
    pub circuits_closed: u64,
    /// Of those, cleared by us for idleness.
    pub idle_closes: u64,
    /// Incoming calls refused (no 0xCC).
    pub calls_refused: u64,
    /// Resets on IP circuits.
    pub resets: u64,
    /// Datagrams handed to circuits.
    pub datagrams_sent: u64,
    /// Datagrams received.
    pub datagrams_received: u64,
    /// Datagrams refused: no route.
    pub dropped_no_route: u64,
    /// Datagrams refused: larger than the MTU (sent or received).
    pub dropped_too_big: u64,
    /// Datagrams dropped: queue full.
    pub dropped_queue_full: u64,
    /// Datagrams dropped: destination unreachable.
    pub dropped_unreachable: u64,
    /// Received messages with Q = 1 (not IP; ignored).
    pub dropped_qualified: u64,
    /// Every circuit, oldest first.
    pub circuits: Vec<CircuitRecord>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CircuitState {
    Calling,
    Open,
    Closing { idle: bool },
}

#[derive(Debug, Clone)]
struct Circuit {
    destination: Option<Ipv4Addr>,
    state: CircuitState,
    outgoing: bool,
    last_used: Instant,
    /// Index into `IpStats::circuits` once open.
    record: Option<usize>,
}

#[derive(Debug, Clone, Default)]
struct Destination {
    queue: VecDeque<Vec<u8>>,
    /// Round-robin cursor: the LCI that last got a datagram.
    last: Option<Lci>,
}

/// IP over X.25: a [`Dte`] with the circuit management of RFC 877/1356
/// and Korb (1987). See the module documentation.
#[derive(Debug, Clone)]
pub struct IpOverX25 {
    config: IpConfig,
    dte: Dte,
    now: Instant,
    circuits: BTreeMap<Lci, Circuit>,
    destinations: BTreeMap<Ipv4Addr, Destination>,
    received: VecDeque<Datagram>,
    events: VecDeque<IpEvent>,
    stats: IpStats,
}

impl IpOverX25 {
    /// An interface whose packet layer is down until [`IpOverX25::start`]
    /// or a restart from the peer.
    pub fn new(config: IpConfig) -> Result<IpOverX25, IpConfigError> {
        config.validate()?;
        let dte = Dte::new(config.dte.clone())?;
        Ok(IpOverX25 {
            config,
            dte,
            now: Instant::ZERO,
            circuits: BTreeMap::new(),
            destinations: BTreeMap::new(),
            received: VecDeque::new(),
            events: VecDeque::new(),
            stats: IpStats::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &IpConfig {
        &self.config
    }

    /// The packet layer inside, for inspection.
    pub fn dte(&self) -> &Dte {
        &self.dte
    }

    /// The counters.
    pub fn stats(&self) -> &IpStats {
        &self.stats
    }

    /// Open circuits (data transfer) to `destination`.
    pub fn open_circuits(&self, destination: Ipv4Addr) -> Vec<Lci> {
        self.circuits
            .iter()
            .filter(|(_, c)| c.destination == Some(destination) && c.state == CircuitState::Open)
            .map(|(&lci, _)| lci)
            .collect()
    }

    /// Datagrams queued for `destination`, not yet handed to a circuit.
    pub fn queued(&self, destination: Ipv4Addr) -> usize {
        self.destinations
            .get(&destination)
            .map_or(0, |d| d.queue.len())
    }

    /// Starts the packet layer (restart, X.25 3.3): call when the link
    /// layer comes up.
    pub fn start(&mut self, now: Instant) {
        self.now = now;
        self.dte.start(now);
        self.process_events();
    }

    /// Queues `bytes` for the neighbour `destination`; a call is made if
    /// needed when [`IpOverX25::poll_transmit`] runs.
    pub fn send_datagram(
        &mut self,
        now: Instant,
        destination: Ipv4Addr,
        bytes: Vec<u8>,
    ) -> Result<(), SendError> {
        self.now = now;
        if bytes.is_empty() {
            return Err(SendError::Empty);
        }
        if bytes.len() > self.config.mtu {
            self.stats.dropped_too_big += 1;
            return Err(SendError::TooBig {
                len: bytes.len(),
                mtu: self.config.mtu,
            });
        }
        if self.address_of(destination).is_none() {
            self.stats.dropped_no_route += 1;
            return Err(SendError::NoRoute(destination));
        }
        let limit = self.config.queue_limit;
        let dest = self.destinations.entry(destination).or_default();
        if dest.queue.len() >= limit {
            self.stats.dropped_queue_full += 1;
            return Err(SendError::QueueFull { destination, limit });
        }
        dest.queue.push_back(bytes);
        Ok(())
    }

    /// Processes received octets (an X.25 packet from the link layer).
    pub fn handle_octets(&mut self, now: Instant, octets: &[u8]) {
        self.now = now;
        self.dte.handle_octets(now, octets);
        self.process_events();
    }

    /// Processes a received packet.
    pub fn handle_packet(&mut self, now: Instant, packet: Packet) {
        self.now = now;
        self.dte.handle_packet(now, packet);
        self.process_events();
    }

    /// The next datagram received.
    pub fn poll_datagram(&mut self) -> Option<Datagram> {
        self.received.pop_front()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<IpEvent> {
        self.events.pop_front()
    }

    fn address_of(&self, ip: Ipv4Addr) -> Option<&DteAddress> {
        self.config
            .routes
            .iter()
            .find(|r| r.ip == ip)
            .map(|r| &r.address)
    }

    fn ip_of(&self, address: &DteAddress) -> Option<Ipv4Addr> {
        self.config
            .routes
            .iter()
            .find(|r| &r.address == address)
            .map(|r| r.ip)
    }

    /// Moves datagrams onto circuits and makes the calls the queues want.
    /// True if it gave the packet layer something to do.
    fn dispatch(&mut self) -> bool {
        let mut acted = false;
        let ready = self.dte.layer_state() == LayerState::Ready;
        let destinations: Vec<Ipv4Addr> = self
            .destinations
            .iter()
            .filter(|(_, d)| !d.queue.is_empty())
            .map(|(&ip, _)| ip)
            .collect();
        for ip in destinations {
            while let Some(lci) = self.pick_circuit(ip) {
                let dest = self.destinations.get_mut(&ip).expect("listed above");
                let Some(bytes) = dest.queue.pop_front() else {
                    break;
                };
                dest.last = Some(lci);
                if self.dte.send(lci, &bytes, false, false).is_err() {
                    // The circuit left data transfer under us (a reset in
                    // progress): keep the datagram for another.
                    self.destinations
                        .get_mut(&ip)
                        .expect("listed above")
                        .queue
                        .push_front(bytes);
                    break;
                }
                acted = true;
                self.stats.datagrams_sent += 1;
                let circuit = self.circuits.get_mut(&lci).expect("picked");
                circuit.last_used = self.now;
                if let Some(r) = circuit.record {
                    self.stats.circuits[r].datagrams_sent += 1;
                }
            }
            if ready && self.want_call(ip) {
                acted |= self.make_call(ip);
            }
        }
        acted
    }

    /// The circuit to `ip` that takes the next datagram, if any can: an
    /// open one with no data packets waiting behind its window.
    fn pick_circuit(&self, ip: Ipv4Addr) -> Option<Lci> {
        let dest = self.destinations.get(&ip)?;
        if dest.queue.is_empty() {
            return None;
        }
        let open: Vec<Lci> = self
            .circuits
            .iter()
            .filter(|(_, c)| c.destination == Some(ip) && c.state == CircuitState::Open)
            .map(|(&lci, _)| lci)
            .filter(|&lci| self.dte.queued(lci) == 0 && !self.dte.peer_busy(lci))
            .collect();
        // Rotation order: the circuits after the last one used first.
        let split = dest
            .last
            .map_or(0, |last| open.partition_point(|&l| l <= last));
        let mut rotated = open[split..].iter().chain(&open[..split]).copied();
        match self.config.spreading {
            Spreading::RoundRobin => rotated.next(),
            // min_by_key keeps the first of equals: the rotation breaks ties.
            Spreading::LeastQueued => rotated.min_by_key(|&lci| self.dte.unacknowledged(lci)),
        }
    }

    fn want_call(&self, ip: Ipv4Addr) -> bool {
        let Some(dest) = self.destinations.get(&ip) else {
            return false;
        };
        if dest.queue.is_empty() {
            return false;
        }
        let have = self
            .circuits
            .values()
            .filter(|c| {
                c.destination == Some(ip)
                    && matches!(c.state, CircuitState::Calling | CircuitState::Open)
            })
            .count();
        let want =
            (1 + dest.queue.len() / self.config.open_threshold).min(self.config.max_circuits);
        have < want
    }

    fn make_call(&mut self, ip: Ipv4Addr) -> bool {
        let Some(called) = self.address_of(ip).cloned() else {
            return false;
        };
        let options = CallOptions {
            called,
            packet_size: self.config.packet_size,
            window: self.config.window,
            user_data: vec![IP_CALL_USER_DATA],
            ..CallOptions::default()
        };
        match self.dte.call(self.now, options) {
            Ok(lci) => {
                self.stats.calls_made += 1;
                self.circuits.insert(
                    lci,
                    Circuit {
                        destination: Some(ip),
                        state: CircuitState::Calling,
                        outgoing: true,
                        last_used: self.now,
                        record: None,
                    },
                );
                true
            }
            // No free logical channel: the datagrams wait for one.
            Err(_) => false,
        }
    }

    fn process_events(&mut self) {
        while let Some(event) = self.dte.poll_event() {
            self.on_event(event);
        }
    }

    fn on_event(&mut self, event: Event) {
        let now = self.now;
        match event {
            Event::IncomingCall {
                lci,
                calling,
                user_data,
                ..
            } => {
                if user_data.first() == Some(&IP_CALL_USER_DATA) && self.dte.accept(lci).is_ok() {
                    self.circuits.insert(
                        lci,
                        Circuit {
                            destination: self.ip_of(&calling),
                            state: CircuitState::Calling,
                            outgoing: false,
                            last_used: now,
                            record: None,
                        },
                    );
                } else {
                    self.stats.calls_refused += 1;
                    // The call is in p3, so clearing cannot be refused.
                    let _ = self.dte.clear(now, lci, DTE_ORIGINATED, None);
                    self.events
                        .push_back(IpEvent::RefusedCall { lci, user_data });
                }
            }
            Event::Connected { lci, .. } => {
                let Some(circuit) = self.circuits.get_mut(&lci) else {
                    return;
                };
                circuit.state = CircuitState::Open;
                circuit.last_used = now;
                circuit.record = Some(self.stats.circuits.len());
                self.stats.circuits_opened += 1;
                self.stats.circuits.push(CircuitRecord {
                    lci,
                    destination: circuit.destination,
                    outgoing: circuit.outgoing,
                    opened_at: now,
                    closed_at: None,
                    datagrams_sent: 0,
                    datagrams_received: 0,
                });
                self.events.push_back(IpEvent::CircuitOpened {
                    lci,
                    destination: circuit.destination,
                    outgoing: circuit.outgoing,
                });
            }
            Event::Data { lci, q, data, .. } => self.on_data(lci, q, data),
            Event::Cleared {
                lci,
                cause,
                diagnostic,
                by_peer,
            } => self.on_cleared(lci, cause, diagnostic, by_peer),
            Event::Reset {
                lci,
                cause,
                diagnostic,
                ..
            } => {
                if self.circuits.contains_key(&lci) {
                    self.stats.resets += 1;
                    self.events.push_back(IpEvent::Reset {
                        lci,
                        cause,
                        diagnostic,
                    });
                }
            }
            Event::RestartFailed => self.events.push_back(IpEvent::RestartFailed),
            Event::Restarted { .. }
            | Event::Confirmed { .. }
            | Event::Interrupt { .. }
            | Event::InterruptConfirmed { .. }
            | Event::Diagnostic { .. }
            | Event::Undecodable(_) => {}
        }
    }

    fn on_data(&mut self, lci: Lci, q: bool, data: Vec<u8>) {
        let Some(circuit) = self.circuits.get_mut(&lci) else {
            return;
        };
        circuit.last_used = self.now;
        if q {
            self.stats.dropped_qualified += 1;
            return;
        }
        if data.len() > self.config.mtu {
            self.stats.dropped_too_big += 1;
            return;
        }
        self.stats.datagrams_received += 1;
        if let Some(r) = circuit.record {
            self.stats.circuits[r].datagrams_received += 1;
        }
        self.received.push_back(Datagram {
            from: circuit.destination,
            lci,
            bytes: data,
        });
    }

    fn on_cleared(&mut self, lci: Lci, cause: u8, diagnostic: Option<u8>, by_peer: bool) {
        let Some(circuit) = self.circuits.remove(&lci) else {
            return;
        };
        match circuit.state {
            CircuitState::Calling => {
                let Some(destination) = circuit.destination.filter(|_| circuit.outgoing) else {
                    return;
                };
                self.stats.calls_failed += 1;
                self.events.push_back(IpEvent::CallFailed {
                    destination,
                    cause,
                    diagnostic,
                });
                let others = self
                    .circuits
                    .values()
                    .any(|c| c.destination == Some(destination));
                if !others {
                    if let Some(dest) = self.destinations.get_mut(&destination) {
                        let dropped = dest.queue.len();
                        dest.queue.clear();
                        if dropped > 0 {
                            self.stats.dropped_unreachable += dropped as u64;
                            self.events.push_back(IpEvent::Unreachable {
                                destination,
                                dropped,
                            });
                        }
                    }
                }
            }
            CircuitState::Open | CircuitState::Closing { .. } => {
                let idle = matches!(circuit.state, CircuitState::Closing { idle: true });
                self.stats.circuits_closed += 1;
                self.stats.idle_closes += u64::from(idle);
                if let Some(r) = circuit.record {
                    self.stats.circuits[r].closed_at = Some(self.now);
                }
                self.events.push_back(IpEvent::CircuitClosed {
                    lci,
                    destination: circuit.destination,
                    cause,
                    diagnostic,
                    by_peer,
                    idle,
                });
            }
        }
    }
}

impl Engine for IpOverX25 {
    type Transmit = Packet;

    /// The next X.25 packet to send: the packet layer's own first, then
    /// datagrams moved from the queues onto circuits and calls made as
    /// the queues ask. Call after every input until it returns `None`.
    fn poll_transmit(&mut self, now: Instant) -> Option<Self::Transmit> {
        loop {
            if let Some(packet) = self.dte.poll_transmit(now) {
                return Some(packet);
            }
            if !self.dispatch() {
                return None;
            }
        }
    }

    /// When [`IpOverX25::handle_timeout`] must next be called: the packet
    /// layer's time-limits and the idle time-outs of open circuits.
    fn poll_timeout(&self) -> Option<Instant> {
        let idle = self
            .circuits
            .values()
            .filter(|c| c.state == CircuitState::Open)
            .map(|c| c.last_used + self.config.idle_timeout);
        idle.chain(self.dte.poll_timeout()).min()
    }

    /// Runs the time-limits due at `now`; clears circuits idle for
    /// `idle_timeout` with nothing outstanding (a busy one is given
    /// another `idle_timeout`).
    fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        self.dte.handle_timeout(now);
        self.process_events();
        let idle = self.config.idle_timeout;
        let due: Vec<Lci> = self
            .circuits
            .iter()
            .filter(|(_, c)| c.state == CircuitState::Open && c.last_used + idle <= now)
            .map(|(&lci, _)| lci)
            .collect();
        for lci in due {
            let busy = self.dte.queued(lci) + self.dte.unacknowledged(lci) > 0;
            let circuit = self.circuits.get_mut(&lci).expect("listed above");
            let wanted = circuit
                .destination
                .and_then(|d| self.destinations.get(&d))
                .is_some_and(|d| !d.queue.is_empty());
            if busy || wanted {
                circuit.last_used = now;
            } else if self.dte.clear(now, lci, DTE_ORIGINATED, None).is_ok() {
                circuit.state = CircuitState::Closing { idle: true };
            }
        }
        self.process_events();
    }
}
