//! One AGWPE radio port: a KISS TNC, the AX.25 stations (one per local
//! callsign in use) that run their links over it, and what it has heard.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, SystemTime};

use linklab_core::{Engine, Instant};
use linklab_io::{AckMode, AirClock, AirSettings, KissParams, Station, KISS_MAX_FRAME};
use linklab_link::{Config, Stats};
use linklab_wire::ax25::{Address, AddressField, Callsign, Frame};
use linklab_wire::control::Modulus;
use linklab_wire::kiss::{self, Command, KissError};
use linklab_wire::monitor::LinkModuli;

use crate::monitor::{Heard, HEARD_MAX};
use crate::server::ClientId;

/// A station as a map key: callsign and SSID.
pub(crate) type Key = (Callsign, u8);

/// The key of `address`.
pub(crate) fn key(address: &Address) -> Key {
    (address.callsign(), address.ssid())
}

/// How long received octets count towards the 'g' answer's traffic
/// figure ("bytes received in the last two minutes").
const TRAFFIC_WINDOW: Duration = Duration::from_secs(120);

/// What a radio port is, as configured.
#[derive(Debug, Clone, PartialEq)]
pub struct PortConfig {
    /// Shown to clients in the 'G' answer (no ';').
    pub description: String,
    /// The TNC's KISS port and the parameters sent to it when it comes up.
    pub kiss: KissParams,
    /// The AX.25 link settings of every link on this port; its modulus is
    /// the one outgoing connections ask for (SABME for modulo 128).
    pub link: Config,
    /// Callsigns this port answers for when no client has registered
    /// them: a connection request to one is refused with DM. Frames to
    /// any other unregistered callsign are someone else's traffic.
    pub answer_for: Vec<Address>,
    /// The most links a local callsign keeps on this port.
    pub max_links: usize,
    /// The on-air bit rate, for the 'g' answer and the transmit clock's
    /// estimate, if known.
    pub bit_rate: Option<u32>,
    /// ACKMODE with the TNC ([`AirClock`]).
    pub ackmode: AckMode,
}

impl PortConfig {
    /// What the port's transmit clock knows of its transmitter.
    pub fn air(&self) -> AirSettings {
        AirSettings::for_port(self.ackmode, self.bit_rate, &self.kiss)
    }
}

/// A frame that arrived on a port, for the server to route.
#[derive(Debug, Clone)]
pub(crate) struct Arrival {
    /// The AX.25 frame (no FCS).
    pub bytes: Vec<u8>,
    /// The modulus to show it with.
    pub modulus: Modulus,
    /// The KISS client that sent it, for a frame sent.
    pub origin: Option<ClientId>,
}

/// A radio port's state.
#[derive(Debug)]
pub(crate) struct RadioPort {
    pub config: PortConfig,
    /// The TNC is connected.
    pub up: bool,
    decoder: kiss::Decoder,
    moduli: LinkModuli,
    /// One station per local callsign in use.
    pub stations: BTreeMap<Key, Station>,
    /// KISS octets ready for the TNC.
    tx: Vec<u8>,
    /// Frames handed over since the last [`RadioPort::flush_air`].
    to_air: Vec<Vec<u8>>,
    /// When our frames leave the air; T1 is held while they have not.
    air: AirClock,
    /// The channel-busy hint given to the stations.
    pub(crate) busy: bool,
    /// Frames sent, for the 'T' records.
    pub sent: VecDeque<Arrival>,
    heard: Vec<Heard>,
    received: VecDeque<(Instant, usize)>,
    /// KISS input dropped, counted for the log.
    pub kiss_errors: u64,
    /// Frames and octets through the port since it was made.
    pub counters: PortCounters,
    /// The link counters of the stations forgotten.
    pub ended: Stats,
}

/// What went through a radio port since the server started, for a
/// station's status report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// AX.25 frames received on the port's KISS port.
    pub frames_received: u64,
    /// Their octets (address field onward, no FCS).
    pub octets_received: u64,
    /// AX.25 frames handed to the TNC.
    pub frames_sent: u64,
    /// Their octets.
    pub octets_sent: u64,
    /// Damaged KISS input met.
    pub kiss_errors: u64,
    /// Times the TNC went away.
    pub tnc_losses: u64,
}

impl RadioPort {
    pub fn new(config: PortConfig) -> RadioPort {
        let air = AirClock::new(config.air(), config.kiss.port);
        RadioPort {
            config,
            up: false,
            decoder: kiss::Decoder::new(KISS_MAX_FRAME),
            moduli: LinkModuli::new(),
            stations: BTreeMap::new(),
            tx: Vec::new(),
            to_air: Vec::new(),
            air,
            busy: false,
            sent: VecDeque::new(),
            heard: Vec::new(),
            received: VecDeque::new(),
            kiss_errors: 0,
            counters: PortCounters::default(),
            ended: Stats::default(),
        }
    }

    /// Every link's counters on this port, links ended included.
    pub fn link_stats(&self) -> Stats {
        let mut total = self.ended;
        for station in self.stations.values() {
            total.add(station.ended_stats());
            for link in station.links() {
                total.add(link.stats());
            }
        }
        total
    }

    /// Forgets the `stations` `keep` refuses, adding their links' counts
    /// to `ended`.
    pub fn retain_stations(
        stations: &mut BTreeMap<Key, Station>,
        ended: &mut Stats,
        keep: impl Fn(&Key, &Station) -> bool,
    ) {
        stations.retain(|k, s| {
            let kept = keep(k, s);
            if !kept {
                ended.add(s.ended_stats());
                for link in s.links() {
                    ended.add(link.stats());
                }
            }
            kept
        });
    }

    /// The TNC is connected: the KISS parameters go first, and whether it
    /// answers ACKMODE is asked again.
    pub fn come_up(&mut self) {
        self.up = true;
        self.decoder = kiss::Decoder::new(KISS_MAX_FRAME);
        self.tx = self.config.kiss.encode();
        self.air = AirClock::new(self.config.air(), self.config.kiss.port);
    }

    /// The TNC is gone: its octets in flight are dropped.
    pub fn go_down(&mut self) {
        self.counters.tnc_losses += 1;
        self.up = false;
        self.tx.clear();
        self.to_air.clear();
    }

    /// The station of `local`, made if new (listening if `registered`).
    pub fn station(&mut self, local: &Address, registered: bool) -> Option<&mut Station> {
        let k = key(local);
        if !self.stations.contains_key(&k) {
            let mut station = Station::new(*local, self.config.link.clone()).ok()?;
            // No link yet, so no timer to pause: only the hint is set.
            station.set_channel_busy(Instant::ZERO, self.busy);
            station.set_kiss_port(self.config.kiss.port);
            station.set_max_links(self.config.max_links);
            station.set_listening(registered);
            self.stations.insert(k, station);
        }
        self.stations.get_mut(&k)
    }

    /// Octets from the TNC: the AX.25 frames of data frames on our KISS
    /// port, each noted in the heard list; the errors met, for the log.
    pub fn receive(
        &mut self,
        now: Instant,
        wall: SystemTime,
        bytes: &[u8],
    ) -> (Vec<Arrival>, Vec<KissError>) {
        self.decoder.push(bytes);
        let mut arrivals = Vec::new();
        let mut errors = Vec::new();
        while let Some(item) = self.decoder.next() {
            match item {
                Ok(kiss::Frame {
                    port,
                    command: Command::AckMode { seq, data },
                }) if port == self.config.kiss.port && data.is_empty() => {
                    self.air.answered(now, seq)
                }
                // Data, or another host's ACKMODE frame reflected by a KISS
                // hub.
                Ok(kiss::Frame {
                    port,
                    command: Command::Data(data) | Command::AckMode { data, .. },
                }) if port == self.config.kiss.port => {
                    self.air.heard(now, data.len());
                    let modulus = self.moduli.observe(&data);
                    if let Ok((field, _)) = AddressField::decode(&data) {
                        self.hear(wall, field.source());
                    }
                    self.received.push_back((now, data.len()));
                    self.counters.frames_received += 1;
                    self.counters.octets_received += data.len() as u64;
                    arrivals.push(Arrival {
                        bytes: data,
                        modulus,
                        origin: None,
                    });
                }
                Ok(_) => {}
                Err(error) => {
                    self.kiss_errors += 1;
                    self.counters.kiss_errors += 1;
                    errors.push(error);
                }
            }
        }
        (arrivals, errors)
    }

    /// Queues `frame` for the TNC and for the 'T' records; `origin` is
    /// the KISS client that sent it, if one did.
    pub fn transmit(&mut self, bytes: Vec<u8>, origin: Option<ClientId>) {
        if !self.up {
            return;
        }
        let modulus = self.moduli.observe(&bytes);
        self.counters.frames_sent += 1;
        self.counters.octets_sent += bytes.len() as u64;
        self.to_air.push(bytes.clone());
        self.sent.push_back(Arrival {
            bytes,
            modulus,
            origin,
        });
    }

    /// Runs every station's output into the TNC queue; returns the events.
    pub fn drain_stations(&mut self, now: Instant) -> Vec<(Address, linklab_io::StationEvent)> {
        let mut frames: Vec<Frame> = Vec::new();
        let mut events = Vec::new();
        for station in self.stations.values_mut() {
            while let Some(frame) = station.poll_transmit(now) {
                frames.push(frame);
            }
            while let Some(event) = station.poll_event() {
                events.push((station.mycall(), event));
            }
        }
        for frame in frames {
            self.transmit(frame.encode(), None);
        }
        events
    }

    /// Hands the frames transmitted since the last call to the TNC through
    /// the transmit clock (ACKMODE or data), and tells every station
    /// whether frames of ours are still to leave the air.
    pub fn flush_air(&mut self, now: Instant) {
        for frame in self.to_air.drain(..) {
            self.air.transmit(now, frame);
        }
        self.tx.append(&mut self.air.take_octets());
        let busy = self.air.busy(now);
        if busy != self.busy {
            self.busy = busy;
            for station in self.stations.values_mut() {
                station.set_channel_busy(now, busy);
            }
        }
    }

    /// A KISS command other than data from a client sharing the TNC,
    /// passed on to it on its KISS port.
    pub fn pass_command(&mut self, command: Command) {
        if self.up {
            kiss::encode_into(
                &kiss::Frame {
                    port: self.config.kiss.port,
                    command,
                },
                &mut self.tx,
            );
        }
    }

    /// KISS octets for the TNC, taken.
    pub fn take_tx(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.tx)
    }

    /// I frames queued or unacknowledged on every link of the port.
    pub fn outstanding(&self) -> usize {
        self.stations
            .values()
            .flat_map(|s| s.links())
            .map(|l| l.unacked() + l.queued())
            .sum()
    }

    /// Links in the connected states.
    pub fn connections(&self) -> usize {
        self.stations
            .values()
            .flat_map(|s| s.links())
            .filter(|l| {
                matches!(
                    l.state(),
                    linklab_link::State::Connected | linklab_link::State::TimerRecovery
                )
            })
            .count()
    }

    /// Octets received in the last two minutes.
    pub fn recent_octets(&mut self, now: Instant) -> usize {
        while self
            .received
            .front()
            .is_some_and(|(t, _)| now - *t > TRAFFIC_WINDOW)
        {
            self.received.pop_front();
        }
        self.received.iter().map(|(_, n)| n).sum()
    }

    /// The heard list, the most recent first.
    pub fn heard(&self) -> &[Heard] {
        &self.heard
    }

    fn hear(&mut self, wall: SystemTime, source: &Address) {
        let k = key(source);
        let first = match self.heard.iter().position(|h| key(&h.station) == k) {
            Some(i) => self.heard.remove(i).first,
            None => wall,
        };
        let station = Address::new(source.callsign(), source.ssid()).unwrap_or(*source);
        self.heard.insert(
            0,
            Heard {
                station,
                first,
                last: wall,
            },
        );
        self.heard.truncate(HEARD_MAX);
    }

    /// Forgets the stations with no links that nobody registered and the
    /// port does not answer for.
    pub fn prune(&mut self, registered: impl Fn(&Key) -> bool) {
        let answer_for = &self.config.answer_for;
        RadioPort::retain_stations(&mut self.stations, &mut self.ended, |k, s| {
            s.links().next().is_some() || registered(k) || answer_for.iter().any(|a| key(a) == *k)
        });
    }

    /// When a station's timer or the transmit clock runs next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.stations
            .values()
            .filter_map(Engine::poll_timeout)
            .chain(self.air.poll_timeout())
            .min()
    }

    /// Runs the transmit clock and the stations' timers due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.air.handle_timeout(now);
        self.flush_air(now);
        for station in self.stations.values_mut() {
            if station.poll_timeout().is_some_and(|t| t <= now) {
                station.handle_timeout(now);
            }
        }
    }
}
