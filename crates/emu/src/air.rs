//! The channel server's sans-IO core: the radio channels of a [`Plan`],
//! each a [`RadioChannel`] (the simulator's own model of the medium), the
//! stations' radios on them, optional TNC models between host and radio,
//! and the KISS protocol each station's clients speak (KISS spec,
//! Chepponis and Karn 1987; ACKMODE as G8BPQ defined it).
//!
//! Time is passed in, as everywhere in linklab: [`Air::handle_input`]
//! takes the octets a client wrote and `now`, [`Air::poll_timeout`] says
//! when the model next needs [`Air::handle_timeout`], and everything that
//! leaves the model is drained with [`Air::poll_output`]: KISS octets for
//! a client (a frame its station received intact, or the ACKMODE answer
//! for a frame its station has sent) and a record of every frame that left
//! the air, with what became of it at each station in range. Nothing here
//! reads a clock or touches a socket; the driver (`crate::server`) does.
//!
//! # A frame's way
//! Host → (TNC model: serial link, processor, carrier hold) → the radio's
//! transmit queue → p-persistent CSMA → TXDELAY → on the air → at the end
//! of its closing flag, judged at every radio in range (collision, own
//! transmitter keyed, bit errors) → intact: (TNC model) → every client of
//! that station, as a KISS data frame on the port of that radio.
//!
//! # Digipeaters
//! A station with a digipeater call repeats, as a TNC with DIGIPEAT ON
//! does, every frame it receives intact whose next repeater is that call
//! ([`linklab_wire::ax25::digipeat`], AX.25 v2.2 3.12.5): the frame, with
//! that repeater's H bit set, goes into the transmit queue of the radio it
//! was heard on, at the time it was received, and from there on the air
//! as any frame of that station (CSMA, TXDELAY, its KISS parameters; with
//! a TNC model, after the carrier hold, without crossing the serial link:
//! the TNC's firmware repeats it). Its clients still get the frame as
//! received.

use core::time::Duration;
use std::collections::{BTreeMap, VecDeque};

use linklab_channel::{
    bits_duration, hdlc_bits, Delivery, Medium, MediumEvent, Outcome, RadioChannel, RadioConfig,
    StationConfig, StationId, StationStats, Tnc,
};
use linklab_core::{earliest, Engine, Instant, Streams};
use linklab_wire::ax25::{digipeat, Address};
use linklab_wire::kiss::{self, Command, Port};

use crate::config::Plan;
use crate::report::{ChannelReport, Report, StationReport};

/// Longest KISS frame a client may send (unescaped contents): AX.25 N1 of
/// 2048 octets with headers fits many times over.
pub const MAX_KISS_FRAME: usize = 8192;

/// Bad-input notices printed per station before the rest are only
/// counted.
const NOTICES_PER_STATION: u32 = 10;

/// A client connection, numbered by the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClientId(pub u64);

/// What leaves the model.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// KISS octets for one client, due at model time `due`.
    ToClient {
        /// The client.
        client: ClientId,
        /// Its station.
        station: usize,
        /// A whole KISS frame, FEND to FEND.
        octets: Vec<u8>,
        /// When the model delivered it.
        due: Instant,
    },
    /// A frame left the air.
    OnAir(AirFrame),
    /// Something about a station's input worth a line in the log.
    Notice {
        /// The station.
        station: usize,
        /// What happened.
        text: String,
    },
}

/// One frame on one channel, from its first to its last bit, and what
/// became of it at each station in range.
#[derive(Debug, Clone, PartialEq)]
pub struct AirFrame {
    /// The channel.
    pub channel: usize,
    /// The sending station.
    pub from: usize,
    /// First bit of the frame (after TXDELAY and any earlier frames of the
    /// same transmission).
    pub start: Instant,
    /// End of its closing flag: when receivers have it.
    pub end: Instant,
    /// The frame, address through information field.
    pub body: Vec<u8>,
    /// Each station in range and what it got.
    pub outcomes: Vec<(usize, Outcome)>,
}

/// A frame on its way to the air, kept until it has been sent.
#[derive(Debug)]
struct Sent {
    body: Vec<u8>,
    ack: Option<(ClientId, u16)>,
    /// Repeated as a digipeater, not written by the host: it never was in
    /// the TNC model's transmit buffer.
    repeated: bool,
}

/// The TNC model of one radio and its carrier hold (see
/// `linklab_scenario::transfer::KissPath`).
#[derive(Debug)]
struct TncPath {
    tnc: Tnc,
    carrier_hold: Duration,
    /// Transmitters this radio hears that are keyed now.
    others_keyed: usize,
    /// End of the hold after the last of them dropped.
    clear_at: Instant,
    /// The host's frames in the TNC (serial link, processor), in order.
    inside: VecDeque<Sent>,
    /// Frames out of the TNC's processor (and frames it repeats) waiting
    /// for the hold to end.
    held: VecDeque<Sent>,
}

#[derive(Debug)]
struct Radio {
    channel: usize,
    /// Its number on the channel's [`RadioChannel`].
    member: usize,
    tnc: Option<TncPath>,
    /// Frames in the radio's transmit queue, in order.
    sent: VecDeque<Sent>,
}

#[derive(Debug)]
struct Station {
    name: String,
    /// The call it repeats frames for, as a digipeater.
    digipeater: Option<Address>,
    /// Frames it repeated.
    digipeated: u64,
    radios: Vec<Radio>,
    clients: Vec<ClientId>,
    garbage_octets: u64,
    bad_frames: u64,
    unknown_port: u64,
    commands: u64,
    delivered: u64,
    dropped_no_client: u64,
    dropped_slow_client: u64,
    notices: u32,
}

#[derive(Debug)]
struct Channel {
    name: String,
    radio: RadioChannel,
    /// Member i of `radio`: (station, KISS port).
    members: Vec<(usize, usize)>,
    /// `hears[r][t]`, by member.
    hears: Vec<Vec<bool>>,
}

#[derive(Debug)]
struct Client {
    station: usize,
    decoder: kiss::Decoder,
    garbage_seen: u64,
}

/// The emulated air (see the module documentation).
#[derive(Debug)]
pub struct Air {
    channels: Vec<Channel>,
    stations: Vec<Station>,
    clients: BTreeMap<ClientId, Client>,
    /// Frames sent in this pass whose receptions are still being counted.
    on_air: Vec<AirFrame>,
    outputs: VecDeque<Output>,
}

impl Air {
    /// The channels and stations of `plan`, idle at time zero. Random
    /// streams come from `Streams::new(plan.seed)`: channel `name`'s member
    /// i (stations in order, each radio on that channel) draws CSMA numbers
    /// from `"{name}/{i}/csma"` and bit errors from `"{name}/{i}/errors"`
    /// (link errors from `"{name}/{to}/{from}/errors"`), and each radio
    /// without a fixed slot phase draws one from `"slot-phase"`, stations
    /// in order: the streams `linklab_scenario`'s transfer bench uses, so
    /// an emulated run can be set beside the simulated replication with
    /// the same seed.
    pub fn new(plan: &Plan) -> Air {
        let streams = Streams::new(plan.seed);
        let mut phases = streams.stream("slot-phase");
        let mut members: Vec<Vec<(usize, usize)>> = vec![Vec::new(); plan.channels.len()];
        let mut configs: Vec<Vec<StationConfig>> = vec![Vec::new(); plan.channels.len()];
        let mut stations = Vec::new();
        for (s, sp) in plan.stations.iter().enumerate() {
            let mut radios = Vec::new();
            for (port, rp) in sp.radios.iter().enumerate() {
                let slot = u64::try_from(rp.kiss.slot_time.as_micros().max(1)).unwrap_or(u64::MAX);
                let phase = rp
                    .slot_phase
                    .unwrap_or_else(|| Duration::from_micros(phases.below(slot)));
                radios.push(Radio {
                    channel: rp.channel,
                    member: members[rp.channel].len(),
                    tnc: sp.tnc.map(|t| TncPath {
                        tnc: Tnc::new(t.tnc),
                        carrier_hold: t.carrier_hold,
                        others_keyed: 0,
                        clear_at: Instant::ZERO,
                        inside: VecDeque::new(),
                        held: VecDeque::new(),
                    }),
                    sent: VecDeque::new(),
                });
                members[rp.channel].push((s, port));
                configs[rp.channel].push(StationConfig {
                    slot_phase: phase,
                    ..rp.kiss
                });
            }
            stations.push(Station {
                name: sp.name.clone(),
                digipeater: sp.digipeater,
                digipeated: 0,
                radios,
                clients: Vec::new(),
                garbage_octets: 0,
                bad_frames: 0,
                unknown_port: 0,
                commands: 0,
                delivered: 0,
                dropped_no_client: 0,
                dropped_slow_client: 0,
                notices: 0,
            });
        }
        let channels = plan
            .channels
            .iter()
            .enumerate()
            .map(|(c, cp)| {
                let config = RadioConfig {
                    dcd_delay: cp.dcd_delay,
                    errors: cp.errors,
                    ..RadioConfig::new(cp.bit_rate)
                };
                let mut radio = RadioChannel::new(config, &configs[c], &streams, &cp.name);
                let members = std::mem::take(&mut members[c]);
                let n = members.len();
                let mut hears = vec![vec![true; n]; n];
                let member_of = |station: usize| members.iter().position(|m| m.0 == station);
                for &(a, b) in &cp.hidden {
                    if let (Some(a), Some(b)) = (member_of(a), member_of(b)) {
                        for (r, t) in [(a, b), (b, a)] {
                            hears[r][t] = false;
                            radio.set_hears(StationId(r), StationId(t), false);
                        }
                    }
                }
                for link in &cp.links {
                    if let (Some(t), Some(r)) = (member_of(link.from), member_of(link.to)) {
                        let stream = streams.stream(&format!("{}/{r}/{t}/errors", cp.name));
                        radio.set_link_errors(StationId(r), StationId(t), link.errors, stream);
                    }
                }
                Channel {
                    name: cp.name.clone(),
                    radio,
                    members,
                    hears,
                }
            })
            .collect();
        let mut air = Air {
            channels,
            stations,
            clients: BTreeMap::new(),
            on_air: Vec::new(),
            outputs: VecDeque::new(),
        };
        for (s, sp) in plan.stations.iter().enumerate() {
            for (port, rp) in sp.radios.iter().enumerate() {
                if rp.full_duplex {
                    air.set_full_duplex(s, port, true, Instant::ZERO);
                }
            }
        }
        air
    }

    /// Number of stations.
    pub fn stations(&self) -> usize {
        self.stations.len()
    }

    /// Station `station`'s name.
    pub fn station_name(&self, station: usize) -> &str {
        self.stations.get(station).map_or("?", |s| s.name.as_str())
    }

    /// A client connected to `station`'s KISS port: from now on it gets
    /// every frame the station receives.
    pub fn attach(&mut self, client: ClientId, station: usize) {
        if let Some(st) = self.stations.get_mut(station) {
            st.clients.push(client);
            self.clients.insert(
                client,
                Client {
                    station,
                    decoder: kiss::Decoder::new(MAX_KISS_FRAME),
                    garbage_seen: 0,
                },
            );
        }
    }

    /// A client went away. Frames it gave its station stay queued and go
    /// on the air (a TNC keeps what its host wrote); a transmission under
    /// way finishes.
    pub fn detach(&mut self, client: ClientId) {
        if let Some(c) = self.clients.remove(&client) {
            if let Some(st) = self.stations.get_mut(c.station) {
                st.clients.retain(|&x| x != client);
            }
        }
    }

    /// The driver could not queue a frame for `client` (it reads too
    /// slowly): counted for its station.
    pub fn client_overflow(&mut self, client: ClientId) {
        if let Some(st) = self
            .clients
            .get(&client)
            .and_then(|c| self.stations.get_mut(c.station))
        {
            st.dropped_slow_client += 1;
        }
    }

    /// Octets a client wrote at `now`: KISS frames for its station. Data
    /// frames go to the radio of their KISS port, parameter commands set
    /// that radio's TXDELAY, P, SLOTTIME, TXTAIL or FULLDUP, ACKMODE
    /// frames are sent and answered once sent; octets outside frames and
    /// damaged frames are skipped and counted.
    pub fn handle_input(&mut self, now: Instant, client: ClientId, octets: &[u8]) {
        let Some(c) = self.clients.get_mut(&client) else {
            return;
        };
        c.decoder.push(octets);
        let station = c.station;
        loop {
            let Some(c) = self.clients.get_mut(&client) else {
                return;
            };
            let Some(item) = c.decoder.next() else {
                break;
            };
            let garbage = c.decoder.stats().garbage_bytes;
            let new_garbage = garbage - c.garbage_seen;
            c.garbage_seen = garbage;
            if new_garbage > 0 {
                self.stations[station].garbage_octets += new_garbage;
            }
            match item {
                Ok(frame) => self.handle_kiss(now, client, station, frame),
                Err(error) => {
                    self.stations[station].bad_frames += 1;
                    self.notice(station, format!("skipped a damaged KISS frame: {error}"));
                }
            }
        }
        self.settle(now);
    }

    fn handle_kiss(&mut self, now: Instant, client: ClientId, station: usize, frame: kiss::Frame) {
        let port = usize::from(frame.port.get());
        if self.stations[station].radios.get(port).is_none() && frame.command != Command::Return {
            self.stations[station].unknown_port += 1;
            let radios = self.stations[station].radios.len();
            self.notice(
                station,
                format!(
                    "KISS port {port} has no radio (this station has port{} 0{}); frame dropped",
                    if radios > 1 { "s" } else { "" },
                    if radios > 1 {
                        format!("-{}", radios - 1)
                    } else {
                        String::new()
                    }
                ),
            );
            return;
        }
        match frame.command {
            Command::Data(body) => self.submit(now, station, port, body, None),
            Command::AckMode { seq, data } => {
                self.submit(now, station, port, data, Some((client, seq)));
            }
            Command::TxDelay(units) => self.set_kiss(station, port, |c| {
                c.txdelay = kiss::duration_from_units(units);
            }),
            Command::Persistence(p) => self.set_kiss(station, port, |c| c.persistence = p),
            Command::SlotTime(units) => self.set_kiss(station, port, |c| {
                c.slot_time = kiss::duration_from_units(units);
            }),
            Command::TxTail(units) => self.set_kiss(station, port, |c| {
                c.txtail = kiss::duration_from_units(units);
            }),
            Command::FullDuplex(on) => {
                self.stations[station].commands += 1;
                self.set_full_duplex(station, port, on, now);
            }
            // Hardware settings mean nothing to an emulated radio, and
            // RETURN (leave KISS mode) has no other mode to go to.
            Command::SetHardware(_) | Command::Return => self.stations[station].commands += 1,
        }
    }

    fn set_kiss(&mut self, station: usize, port: usize, change: impl FnOnce(&mut StationConfig)) {
        self.stations[station].commands += 1;
        let radio = &self.stations[station].radios[port];
        let channel = &mut self.channels[radio.channel].radio;
        let id = StationId(radio.member);
        if let Some(mut config) = channel.station_config(id).copied() {
            change(&mut config);
            channel.set_station_config(id, config);
        }
    }

    fn set_full_duplex(&mut self, station: usize, port: usize, on: bool, now: Instant) {
        let radio = &self.stations[station].radios[port];
        self.channels[radio.channel]
            .radio
            .set_full_duplex(StationId(radio.member), on, now);
    }

    /// A frame from the host for `station`'s radio on `port`.
    fn submit(
        &mut self,
        now: Instant,
        station: usize,
        port: usize,
        body: Vec<u8>,
        ack: Option<(ClientId, u16)>,
    ) {
        if body.is_empty() {
            self.stations[station].bad_frames += 1;
            self.notice(station, "skipped an empty KISS data frame".into());
            return;
        }
        let sent = Sent {
            body: body.clone(),
            ack,
            repeated: false,
        };
        let radio = &mut self.stations[station].radios[port];
        match radio.tnc.as_mut() {
            Some(path) => {
                path.inside.push_back(sent);
                path.tnc.host_send(now, body);
            }
            None => self.transmit(now, station, port, sent),
        }
    }

    /// `sent` into the transmit queue of `station`'s radio on `port`.
    fn transmit(&mut self, now: Instant, station: usize, port: usize, sent: Sent) {
        let radio = &mut self.stations[station].radios[port];
        let body = sent.body.clone();
        radio.sent.push_back(sent);
        let id = StationId(radio.member);
        self.channels[radio.channel].radio.transmit(now, id, body);
    }

    /// DIGIPEAT ON: `station` repeats `body`, a frame it received intact
    /// at `at` on `port` with its digipeater call next in the path, on the
    /// same radio (see the module documentation).
    fn repeat(&mut self, at: Instant, station: usize, port: usize, body: Vec<u8>) {
        let st = &mut self.stations[station];
        st.digipeated += 1;
        let sent = Sent {
            body,
            ack: None,
            repeated: true,
        };
        match st.radios[port].tnc.as_mut() {
            Some(path) => path.held.push_back(sent),
            None => self.transmit(at, station, port, sent),
        }
    }

    fn notice(&mut self, station: usize, text: String) {
        let st = &mut self.stations[station];
        st.notices += 1;
        match st.notices {
            n if n < NOTICES_PER_STATION => {
                self.outputs.push_back(Output::Notice { station, text })
            }
            NOTICES_PER_STATION => self.outputs.push_back(Output::Notice {
                station,
                text: format!("{text} (further bad input from this station is only counted)"),
            }),
            _ => {}
        }
    }

    /// When [`Air::handle_timeout`] is next due.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let radios = self.channels.iter().map(|c| c.radio.poll_timeout());
        let tncs = self
            .stations
            .iter()
            .flat_map(|s| &s.radios)
            .filter_map(|r| r.tnc.as_ref())
            .map(|p| {
                let release = (!p.held.is_empty() && p.others_keyed == 0).then_some(p.clear_at);
                earliest([p.tnc.poll_timeout(), release])
            });
        earliest(radios.chain(tncs))
    }

    /// Runs the model up to `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.settle(now);
    }

    /// The next output.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// Moves frames between TNCs, radios and clients until nothing more
    /// happens at `now`.
    fn settle(&mut self, now: Instant) {
        loop {
            let mut busy = false;
            for c in 0..self.channels.len() {
                self.channels[c].radio.handle_timeout(now);
                while let Some(event) = self.channels[c].radio.poll_event() {
                    busy = true;
                    self.on_event(now, c, event);
                }
                while let Some(delivery) = self.channels[c].radio.poll_delivery() {
                    busy = true;
                    self.on_delivery(c, delivery);
                }
            }
            busy |= self.shuttle_tncs(now);
            for frame in self.on_air.drain(..) {
                self.outputs.push_back(Output::OnAir(frame));
            }
            let due = self.poll_timeout().is_some_and(|t| t <= now);
            if !busy && !due {
                break;
            }
        }
    }

    fn shuttle_tncs(&mut self, now: Instant) -> bool {
        let mut busy = false;
        for s in 0..self.stations.len() {
            for port in 0..self.stations[s].radios.len() {
                let radio = &mut self.stations[s].radios[port];
                let Some(path) = radio.tnc.as_mut() else {
                    continue;
                };
                path.tnc.handle_timeout(now);
                while let Some(body) = path.tnc.poll_transmit(now) {
                    // The TNC sends the host's frames in the order written.
                    let sent = path.inside.pop_front().unwrap_or(Sent {
                        body,
                        ack: None,
                        repeated: false,
                    });
                    path.held.push_back(sent);
                    busy = true;
                }
                if path.others_keyed == 0 && now >= path.clear_at {
                    let id = StationId(radio.member);
                    while let Some(sent) = path.held.pop_front() {
                        let body = sent.body.clone();
                        radio.sent.push_back(sent);
                        self.channels[radio.channel].radio.transmit(now, id, body);
                        busy = true;
                    }
                }
                let mut up = Vec::new();
                while let Some(frame) = path.tnc.poll_host_delivery() {
                    up.push(frame);
                }
                for frame in up {
                    busy = true;
                    self.deliver_to_clients(now, s, port, frame);
                }
            }
        }
        busy
    }

    fn on_event(&mut self, now: Instant, c: usize, event: MediumEvent) {
        match event {
            MediumEvent::TransmitterKeyed { station, .. } => {
                self.each_hearing_tnc(c, station.0, |p| p.others_keyed += 1);
            }
            MediumEvent::TransmissionEnded { station, at } => {
                self.each_hearing_tnc(c, station.0, |p| {
                    p.others_keyed = p.others_keyed.saturating_sub(1);
                    p.clear_at = p.clear_at.max(at + p.carrier_hold);
                });
            }
            MediumEvent::FrameSent {
                station,
                octets,
                at,
            } => {
                let (s, port) = self.channels[c].members[station.0];
                let bit_rate = self.channels[c].radio.config().bit_rate;
                let radio = &mut self.stations[s].radios[port];
                let Some(sent) = radio.sent.pop_front() else {
                    return;
                };
                if let (Some(path), false) = (radio.tnc.as_mut(), sent.repeated) {
                    path.tnc.handle_frame_sent(now, octets);
                }
                if let Some((client, seq)) = sent.ack {
                    if self.clients.contains_key(&client) {
                        let answer = kiss::Frame {
                            port: Port::new(port as u8).unwrap_or_default(),
                            command: Command::AckMode {
                                seq,
                                data: Vec::new(),
                            },
                        };
                        self.outputs.push_back(Output::ToClient {
                            client,
                            station: s,
                            octets: kiss::encode(&answer),
                            due: at,
                        });
                    }
                }
                let airtime = bits_duration(hdlc_bits(&sent.body), bit_rate);
                self.on_air.push(AirFrame {
                    channel: c,
                    from: s,
                    start: Instant::from_micros(
                        at.as_micros()
                            .saturating_sub(u64::try_from(airtime.as_micros()).unwrap_or(0)),
                    ),
                    end: at,
                    body: sent.body,
                    outcomes: Vec::new(),
                });
            }
            MediumEvent::ChannelBusy { .. } | MediumEvent::TransmissionStarted { .. } => {}
        }
    }

    /// Applies `f` to the TNC path of every radio on channel `c` that
    /// hears member `transmitter`.
    fn each_hearing_tnc(&mut self, c: usize, transmitter: usize, mut f: impl FnMut(&mut TncPath)) {
        let channel = &self.channels[c];
        for (r, &(s, port)) in channel.members.iter().enumerate() {
            if r != transmitter && channel.hears[r][transmitter] {
                if let Some(path) = self.stations[s].radios[port].tnc.as_mut() {
                    f(path);
                }
            }
        }
    }

    fn on_delivery(&mut self, c: usize, d: Delivery) {
        let (from, _) = self.channels[c].members[d.from.0];
        let (to, port) = self.channels[c].members[d.to.0];
        if let Some(frame) = self
            .on_air
            .iter_mut()
            .rev()
            .find(|f| f.channel == c && f.from == from && f.end == d.at)
        {
            frame.outcomes.push((to, d.outcome));
        }
        if !d.is_intact() {
            return;
        }
        let repeated = self.stations[to]
            .digipeater
            .and_then(|call| digipeat(&d.frame, &call));
        let radio = &mut self.stations[to].radios[port];
        match radio.tnc.as_mut() {
            Some(path) => path.tnc.handle_radio_frame(d.at, d.frame),
            None => self.deliver_to_clients(d.at, to, port, d.frame),
        }
        if let Some(body) = repeated {
            self.repeat(d.at, to, port, body);
        }
    }

    /// A frame `station` received on `port`, for each of its clients.
    fn deliver_to_clients(&mut self, due: Instant, station: usize, port: usize, body: Vec<u8>) {
        let st = &mut self.stations[station];
        if st.clients.is_empty() {
            st.dropped_no_client += 1;
            return;
        }
        st.delivered += 1;
        let octets = kiss::encode(&kiss::Frame {
            port: Port::new(port as u8).unwrap_or_default(),
            command: Command::Data(body),
        });
        for &client in &st.clients {
            self.outputs.push_back(Output::ToClient {
                client,
                station,
                octets: octets.clone(),
                due,
            });
        }
    }

    /// Counters of every channel and station at `now`.
    pub fn report(&self, now: Instant) -> Report {
        let channels = self
            .channels
            .iter()
            .map(|c| {
                let s = c.radio.stats();
                ChannelReport {
                    name: c.name.clone(),
                    bit_rate: c.radio.config().bit_rate,
                    transmissions: s.transmissions,
                    collisions: s.collisions,
                    frames_sent: s.frames_sent,
                    utilisation: s.busy.mean(now).unwrap_or(0.0),
                }
            })
            .collect();
        let stations = self
            .stations
            .iter()
            .map(|st| {
                let mut r = StationReport {
                    name: st.name.clone(),
                    clients: st.clients.len(),
                    garbage_octets: st.garbage_octets,
                    bad_frames: st.bad_frames,
                    unknown_port: st.unknown_port,
                    kiss_commands: st.commands,
                    delivered: st.delivered,
                    dropped_no_client: st.dropped_no_client,
                    dropped_slow_client: st.dropped_slow_client,
                    digipeated: st.digipeated,
                    ..StationReport::default()
                };
                let (mut sum, mut count, mut max) = (0.0, 0u64, 0.0f64);
                for radio in &st.radios {
                    let Some(s) = self.channels[radio.channel]
                        .radio
                        .station_stats(StationId(radio.member))
                    else {
                        continue;
                    };
                    r.add_radio(s);
                    let d = &s.queue_delay;
                    sum += d.mean().unwrap_or(0.0) * d.count() as f64;
                    count += d.count();
                    max = max.max(d.max().unwrap_or(0.0));
                }
                if count > 0 {
                    r.queue_delay_mean_ms = sum / count as f64 * 1e3;
                }
                r.queue_delay_max_ms = max * 1e3;
                r
            })
            .collect();
        Report {
            elapsed_s: now.as_secs_f64(),
            channels,
            stations,
            lateness: None,
        }
    }
}

impl StationReport {
    fn add_radio(&mut self, s: &StationStats) {
        self.transmissions += s.transmissions;
        self.frames_sent += s.frames_sent;
        self.octets_sent += s.octets_sent;
        self.received += s.received_intact;
        self.lost_to_collisions += s.lost_to_collisions;
        self.lost_to_errors += s.lost_to_errors;
        self.lost_while_transmitting += s.lost_receiver_keyed;
    }
}
