//! What a program that embeds the server (`linklab station`) uses beyond
//! the AGWPE API: frames heard and sent by the program itself (a
//! digipeater, beacons), the ports' counters and heard lists, and the
//! links with their state, for a status report.

use linklab_core::Instant;
use linklab_link::{State, Stats};
use linklab_wire::ax25::Address;
use linklab_wire::control::Modulus;

use crate::monitor::Heard;
use crate::port::{key, Arrival, PortConfig, PortCounters};
use crate::server::{ClientId, Server};
use crate::wire::Message;

/// One link on a port, as a status report shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkSummary {
    /// The radio port, counted from 0.
    pub port: usize,
    /// Our callsign on the link.
    pub local: Address,
    /// The other station.
    pub remote: Address,
    /// The link's state (AX.25 v2.2 C4.3).
    pub state: State,
    /// Its modulus.
    pub modulus: Modulus,
    /// I frames sent and not yet acknowledged.
    pub unacked: usize,
    /// I frames waiting to be sent.
    pub queued: usize,
    /// V(S), V(R), V(A).
    pub sequence: (u8, u8, u8),
    /// The current T1 in milliseconds.
    pub t1_ms: u64,
    /// The client that holds it, if one does.
    pub owner: Option<ClientId>,
    /// Its counters.
    pub stats: Stats,
}

/// A frame on the air of a port, sent or received
/// ([`Server::poll_air`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AirFrame {
    /// The radio port, counted from 0.
    pub port: usize,
    /// Sent by this server (false: received).
    pub sent: bool,
    /// The AX.25 frame (no FCS).
    pub bytes: Vec<u8>,
    /// The modulus its link uses, to show its control field with.
    pub modulus: Modulus,
}

impl Server {
    /// Keep every frame received on any port for [`Server::poll_tapped`]
    /// (the program must drain it after each call that feeds the server).
    pub fn set_tap(&mut self, on: bool) {
        self.tap = on.then(Default::default);
    }

    /// The next frame received, with its port, if tapped.
    pub fn poll_tapped(&mut self) -> Option<(usize, Vec<u8>)> {
        self.tap.as_mut()?.pop_front()
    }

    /// Keep every frame sent and received on any port for
    /// [`Server::poll_air`] (the program must drain it after each call
    /// that feeds the server or runs its timers).
    pub fn set_air_tap(&mut self, on: bool) {
        self.air = on.then(Default::default);
    }

    /// The next frame sent or received, if the air is tapped.
    pub fn poll_air(&mut self) -> Option<AirFrame> {
        self.air.as_mut()?.pop_front()
    }

    pub(crate) fn air_tap(&mut self, port: usize, sent: bool, arrival: &Arrival) {
        if let Some(air) = &mut self.air {
            air.push_back(AirFrame {
                port,
                sent,
                bytes: arrival.bytes.clone(),
                modulus: arrival.modulus,
            });
        }
    }

    /// Sends the AX.25 frame `bytes` (no FCS) on `port`, as a 'K' message
    /// would; false if the port does not exist or its TNC is down.
    pub fn transmit_frame(&mut self, now: Instant, port: usize, bytes: Vec<u8>) -> bool {
        let Some(p) = self.ports.get_mut(port) else {
            return false;
        };
        if !p.up {
            return false;
        }
        p.transmit(bytes, None);
        self.pump(now);
        true
    }

    /// `call` is answered by another stack of the embedding program (an
    /// IP interface with its own links): no client may register it.
    pub fn reserve(&mut self, call: &Address) {
        self.reserved.insert(key(call));
    }

    /// A client inside the embedding program (its services), numbered 0
    /// so that the socket clients are numbered from 1 as in `linklab
    /// agw`; its messages are taken with [`Server::take_output`] like any
    /// client's.
    pub fn internal_client(&mut self) -> ClientId {
        let id = ClientId(0);
        self.clients.entry(id).or_default();
        id
    }

    /// A port the embedding program serves itself (the station's NET/ROM
    /// node), listed to clients after the radio ports; returns its index.
    /// Clients' link requests on it ('C', 'c', 'v', 'D', 'd', 'Y', 'g')
    /// are not answered here but kept for
    /// [`Server::poll_program_request`]; the program answers with
    /// [`Server::send_to_client`].
    pub fn add_program_port(&mut self, description: &str) -> usize {
        self.program_ports.push(description.to_string());
        self.ports.len() + self.program_ports.len() - 1
    }

    /// The index of the `n`th program port (from 0): after the radio
    /// ports, so it moves when a radio port is added.
    pub fn program_port(&self, n: usize) -> Option<usize> {
        (n < self.program_ports.len()).then(|| self.ports.len() + n)
    }

    pub(crate) fn is_program_port(&self, port: usize) -> bool {
        port >= self.ports.len() && port - self.ports.len() < self.program_ports.len()
    }

    /// The next link request a client made on a program port.
    pub fn poll_program_request(&mut self) -> Option<(ClientId, Message)> {
        self.program_requests.pop_front()
    }

    /// Sends `message` to client `id`, if it is still there.
    pub fn send_to_client(&mut self, id: ClientId, message: &Message) {
        self.send(id, message);
    }

    /// Port `port`'s configuration.
    pub fn port_config(&self, port: usize) -> Option<&PortConfig> {
        self.ports.get(port).map(|p| &p.config)
    }

    /// Port `port`'s link settings for links set up from now on; the
    /// links in progress keep theirs. KISS parameters that changed are
    /// sent to the TNC at once.
    pub fn set_port_config(&mut self, port: usize, config: PortConfig) {
        let Some(p) = self.ports.get_mut(port) else {
            return;
        };
        let kiss_changed = p.config.kiss != config.kiss;
        p.config = config;
        // A station with no link is made again with the new settings.
        crate::port::RadioPort::retain_stations(&mut p.stations, &mut p.ended, |_, s| {
            s.links().next().is_some()
        });
        if kiss_changed && p.up {
            for frame in p.config.kiss.frames() {
                p.pass_command(frame.command);
            }
        }
    }

    /// A new radio port at the end, down until [`Server::port_up`];
    /// returns its index.
    pub fn add_port(&mut self, config: PortConfig) -> usize {
        self.ports.push(crate::port::RadioPort::new(config));
        self.ports.len() - 1
    }

    /// Whether frames handed to port `port` are still to leave the air
    /// (its transmit clock, or the TNC's ACKMODE answers): an engine of
    /// the embedding program on that port is told so with
    /// `set_channel_busy`, as the port's own stations are.
    pub fn port_busy(&self, port: usize) -> bool {
        self.ports.get(port).is_some_and(|p| p.busy)
    }

    /// The counters of every link port `port` has had, those ended
    /// included, added up.
    pub fn port_link_stats(&self, port: usize) -> Option<Stats> {
        self.ports.get(port).map(crate::port::RadioPort::link_stats)
    }

    /// Port `port`'s counters.
    pub fn port_counters(&self, port: usize) -> Option<PortCounters> {
        self.ports.get(port).map(|p| p.counters)
    }

    /// Port `port`'s heard list, the most recent first.
    pub fn heard_list(&self, port: usize) -> &[Heard] {
        self.ports.get(port).map_or(&[], |p| p.heard())
    }

    /// I frames waiting to be sent on the link `local` <-> `remote` of
    /// `port`, if it exists.
    pub fn link_queued(&self, port: usize, local: &Address, remote: &Address) -> Option<usize> {
        self.ports
            .get(port)?
            .stations
            .get(&key(local))?
            .links()
            .find(|l| key(&l.remote()) == key(remote))
            .map(|l| l.queued())
    }

    /// Every link on every port.
    pub fn link_summaries(&self) -> Vec<LinkSummary> {
        let mut out = Vec::new();
        for (index, port) in self.ports.iter().enumerate() {
            for station in port.stations.values() {
                for link in station.links() {
                    let owner = self
                        .owners
                        .get(&(index, key(&station.mycall()), key(&link.remote())))
                        .map(|o| o.client);
                    out.push(LinkSummary {
                        port: index,
                        local: station.mycall(),
                        remote: link.remote(),
                        state: link.state(),
                        modulus: link.modulus(),
                        unacked: link.unacked(),
                        queued: link.queued(),
                        sequence: link.sequence_variables(),
                        t1_ms: u64::try_from(link.t1v().as_millis()).unwrap_or(u64::MAX),
                        owner,
                        stats: *link.stats(),
                    });
                }
            }
        }
        out
    }
}
