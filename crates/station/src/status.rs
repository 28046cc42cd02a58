//! The station's status report: what `linklab status` prints, read from
//! the control socket as one JSON document.

use serde::{Deserialize, Serialize};

pub use crate::traffic::{MonitorLine, PortAir};
pub use linklab_link::Stats;

/// The whole station at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusReport {
    /// Seconds since the station started.
    pub uptime_s: f64,
    /// The configuration file in force.
    pub config: String,
    /// Where AGWPE clients connect, if anywhere.
    pub agw: Option<String>,
    /// Where KISS clients connect, if anywhere.
    pub kiss_server: Option<String>,
    /// AGWPE and KISS clients connected.
    pub clients: usize,
    /// The radio ports.
    pub ports: Vec<PortStatus>,
    /// Every link on every port.
    pub links: Vec<LinkStatus>,
    /// The inbound-connection services.
    pub services: Vec<ServiceStatus>,
    /// The beacons.
    pub beacons: Vec<BeaconStatus>,
    /// The TUN devices.
    pub tuns: Vec<TunStatus>,
    /// The DTN node, if configured.
    pub dtn: Option<DtnStatus>,
    /// The NET/ROM node, if configured.
    #[serde(default)]
    pub netrom: Option<NetromStatus>,
}

/// The DTN node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DtnStatus {
    /// Its node ID.
    pub eid: String,
    /// Its AX.25 callsign.
    pub callsign: String,
    /// The port's number (from 1).
    pub port: usize,
    /// Whether it runs (it stops on its own if its store cannot be
    /// opened; the log says why).
    pub running: bool,
    /// Bundles in its store.
    #[serde(default)]
    pub stored: usize,
    /// Neighbours with a session now.
    #[serde(default)]
    pub contacts: Vec<String>,
    /// Bundles forwarded to a neighbour since the start.
    #[serde(default)]
    pub forwarded: u64,
    /// Bundles delivered to local applications since the start.
    #[serde(default)]
    pub delivered: u64,
}

/// A TUN device and its AX.25 side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TunStatus {
    /// The device.
    pub name: String,
    /// The port's number (from 1).
    pub port: usize,
    /// Its AX.25 callsign.
    pub callsign: String,
    /// Its addresses.
    pub addresses: Vec<String>,
    /// "vc" or "datagram" (the default for neighbours not named).
    pub mode: String,
    /// Datagrams from the kernel sent on.
    pub from_kernel: u64,
    /// Datagrams handed to the kernel.
    pub to_kernel: u64,
    /// Datagrams from the kernel dropped.
    pub dropped: u64,
    /// VC links up.
    pub links: usize,
}

/// A radio port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortStatus {
    /// Its number as AGWPE clients see it (from 1).
    pub number: usize,
    /// Its name.
    pub name: String,
    /// Where its TNC is.
    pub tnc: String,
    /// Whether the TNC is connected.
    pub up: bool,
    /// The callsigns it answers for.
    pub callsigns: Vec<String>,
    /// Whether it digipeats.
    pub digipeat: bool,
    /// Frames received.
    pub frames_received: u64,
    /// Octets received.
    pub octets_received: u64,
    /// Frames sent.
    pub frames_sent: u64,
    /// Octets sent.
    pub octets_sent: u64,
    /// Frames digipeated.
    pub digipeated: u64,
    /// Damaged KISS input met.
    pub kiss_errors: u64,
    /// Times the TNC went away.
    pub tnc_losses: u64,
    /// Stations heard, the most recent first.
    pub heard: Vec<String>,
    /// Its air: busy time, the last frames, its links' counters.
    #[serde(default)]
    pub air: PortAir,
}

/// A link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkStatus {
    /// The port's number (from 1).
    pub port: usize,
    /// Our callsign.
    pub local: String,
    /// The other station.
    pub remote: String,
    /// The state (AX.25 v2.2 C4.3).
    pub state: String,
    /// Modulo 8 or 128.
    pub modulus: u8,
    /// I frames sent, not yet acknowledged.
    pub unacked: usize,
    /// I frames waiting to be sent.
    pub queued: usize,
    /// V(S), V(R), V(A).
    pub vs_vr_va: (u8, u8, u8),
    /// The current T1 in milliseconds.
    pub t1_ms: u64,
    /// Who holds it: a service, an AGWPE client, or nobody.
    pub held_by: String,
    /// What it has done.
    #[serde(default)]
    pub counters: Stats,
}

/// An inbound-connection service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceStatus {
    /// The callsign it answers.
    pub callsign: String,
    /// What answers: program, tcp, greeting, echo, drop.
    pub kind: String,
    /// Whether the station holds its callsign (an AGWPE client may have
    /// taken it first).
    pub registered: bool,
    /// Connections served now.
    pub sessions: Vec<SessionStatus>,
    /// Connections served since start.
    pub served: u64,
}

/// A connection being served.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionStatus {
    /// The port's number (from 1).
    pub port: usize,
    /// The caller.
    pub caller: String,
    /// Seconds since it connected.
    pub age_s: f64,
    /// Octets from the caller.
    pub octets_in: u64,
    /// Octets to the caller.
    pub octets_out: u64,
}

/// A beacon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BeaconStatus {
    /// The port's number (from 1).
    pub port: usize,
    /// Source and destination and path, as a monitor shows them.
    pub header: String,
    /// Its interval.
    pub every_s: u64,
    /// Seconds until the next one.
    pub next_in_s: f64,
    /// Times sent.
    pub sent: u64,
}

/// The NET/ROM node: what LinBPQ's NODES and ROUTES commands show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetromStatus {
    /// Its callsign.
    pub callsign: String,
    /// Its alias.
    pub alias: String,
    /// The ports it runs on (from 1).
    pub ports: Vec<usize>,
    /// Seconds until its next NODES broadcast.
    pub next_broadcast_in_s: f64,
    /// The neighbours (ROUTES).
    pub neighbours: Vec<NeighbourStatus>,
    /// The destinations it knows (NODES), each with its routes, best
    /// first.
    pub destinations: Vec<DestinationStatus>,
    /// The circuits.
    pub circuits: Vec<CircuitStatus>,
    /// Datagrams delivered to us, forwarded, and dropped for each reason.
    pub datagrams: DatagramCounts,
}

/// A neighbour node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeighbourStatus {
    /// The port it is heard on (from 1).
    pub port: usize,
    /// Its callsign.
    pub callsign: String,
    /// The quality given to routes through it.
    pub quality: u8,
    /// Configured by hand.
    pub locked: bool,
    /// Link failures since it was last heard.
    pub failures: u8,
    /// Destinations whose best route goes through it.
    pub destinations: usize,
}

/// A destination node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DestinationStatus {
    /// Its callsign.
    pub callsign: String,
    /// Its alias.
    pub alias: String,
    /// Its routes, best first.
    pub routes: Vec<RouteStatus>,
}

/// One route to a destination.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteStatus {
    /// The neighbour's port (from 1).
    pub port: usize,
    /// The neighbour.
    pub neighbour: String,
    /// The route's quality.
    pub quality: u8,
    /// Broadcast intervals left before it goes.
    pub obsolescence: u8,
    /// Configured by hand.
    pub locked: bool,
}

/// A NET/ROM circuit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CircuitStatus {
    /// The far user.
    pub user: String,
    /// The far node.
    pub node: String,
    /// Connecting, connected, disconnecting or closed.
    pub state: String,
    /// Octets sent and not yet acknowledged.
    pub unacknowledged: usize,
}

/// What became of the datagrams the node saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatagramCounts {
    /// For us.
    pub delivered: u64,
    /// Sent on to a neighbour.
    pub forwarded: u64,
    /// Dropped: TTL ran out.
    pub ttl_expired: u64,
    /// Dropped: no route.
    pub no_route: u64,
    /// Dropped: not a datagram or NODES broadcast.
    pub malformed: u64,
}
