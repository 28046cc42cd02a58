//! The loop that moves a transfer's frames ([`Testbed`]): two AX.25
//! engines, their hosts and TNCs when there are, the radio channel, a
//! digipeater and background stations, driven in virtual time by
//! [`linklab_sim::drive`] from the wake-ups in an [`EventQueue`]. What it
//! counts and times it hands to its [`Measurement`].

use core::time::Duration;

use linklab_channel::{Medium, MediumEvent, RadioChannel, RadioConfig, StationConfig, StationId};
use linklab_core::{Engine, Instant, Streams};
use linklab_link::{DataLink, State};
use linklab_sim::{drive, DriveError, EventId, EventQueue, World};
use linklab_wire::ax25::{Address, Frame, ADDRESS_LEN};

use super::app::Application;
use super::config::{Background, Clock, LinkDrop, TransferConfig};
use super::host::{HostAndTnc, Tagged};
use super::measure::{Measurement, Tag, TransferOutcome};
use super::{TransferError, RECEIVER, SENDER};

mod others;
mod t1_hold;

use others::{digipeater_address, DropState};

/// What the event queue wakes up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wake {
    Radio,
    Engine(usize),
    Tnc(usize),
    Host(usize),
    /// Offer the message to the sender.
    Offer,
    /// A background station's next frame.
    Background(usize),
    /// The end of a link drop: the stations are in range again.
    BackInRange,
}

/// The digipeater's station on the channel, when there is one; other
/// stations follow.
const DIGIPEATER: usize = 2;
/// Virtual-time limit of one run: far beyond any transfer here.
pub(super) const HORIZON: Instant = Instant::from_micros(24 * 3_600_000_000);
/// Order of the pending wake-ups in [`Testbed::wakes`].
const WAKES: [Wake; 7] = [
    Wake::Radio,
    Wake::Engine(SENDER),
    Wake::Engine(RECEIVER),
    Wake::Tnc(SENDER),
    Wake::Tnc(RECEIVER),
    Wake::Host(SENDER),
    Wake::Host(RECEIVER),
];

/// Which part of a run [`Testbed`] is in, and so what ends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Until the link is up, the application ready and the channel quiet.
    Connect,
    /// Until the last acknowledgement's transmission has ended.
    Transfer,
    /// Until the UA answering the sender's DISC has been sent
    /// ([`Clock::Session`]).
    Release,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Connect => "connect",
            Phase::Transfer => "transfer",
            Phase::Release => "release",
        }
    }
}

/// The whole run of one transfer: its engines, the components between
/// them and the radio, what it is doing now and what it has measured.
pub(super) struct Testbed<'a> {
    queue: EventQueue<Wake>,
    radio: RadioChannel,
    links: [DataLink; 2],
    /// Each end's host and KISS TNC, when there are ([`KissPath`](super::KissPath)).
    hosts: Option<[HostAndTnc; 2]>,
    /// Other stations on the channel, with each one's arrival stream.
    background: Option<(Background, Vec<linklab_core::Stream>)>,
    /// The link drop, if any, and where the run is with it.
    link_drop: Option<(LinkDrop, DropState)>,
    /// The longest frame the sender sends without an information field:
    /// an S frame modulo 128 (its address field with the path, two
    /// control octets). Every longer frame it sends is an I frame.
    longest_without_information: usize,
    /// Pending wake-up of each component, in [`WAKES`] order.
    wakes: [Option<(Instant, EventId)>; 7],
    /// What offers the message, consumes what arrives and says when the
    /// sender knows it is through.
    app: &'a mut dyn Application,
    /// The part of the run under way.
    phase: Phase,
    /// The application failed or its engine refused a data unit: the
    /// current phase ends with this error.
    refused: Option<TransferError>,
    /// The digipeater's call, when there is one.
    digipeater: Option<Address>,
    /// What is counted and timed.
    measurement: Measurement,
    /// What the clock spans.
    clock: Clock,
    /// Frames each end handed to its TNC or modem that have not yet left
    /// the air, counted when `t1_held_until_sent`.
    unsent: [usize; 2],
    /// Whether each end's T1 is held now (what `set_channel_busy` was
    /// last told), when `t1_held_until_sent`.
    held: [bool; 2],
    /// See [`StackConfig::t1_held_until_sent`](super::StackConfig::t1_held_until_sent).
    t1_held_until_sent: bool,
    /// See [`StackConfig::ack_at_seize`](super::StackConfig::ack_at_seize).
    ack_at_seize: bool,
    /// The channel as each end sees it (on the radio directly): busy.
    channel_busy: [bool; 2],
}

impl<'a> Testbed<'a> {
    /// The testbed `config` describes, with the random streams `streams`
    /// and `app` above the engines, before the sender connects.
    pub(super) fn new(
        config: &TransferConfig,
        streams: &Streams,
        app: &'a mut dyn Application,
    ) -> Result<Testbed<'a>, TransferError> {
        let mut radio_stations = replication_stations(config, streams).to_vec();
        let digipeater = config.digipeater;
        if let Some(digi) = digipeater {
            let slot = u64::try_from(digi.slot_time.as_micros().max(1)).unwrap_or(1);
            radio_stations.push(StationConfig {
                slot_phase: Duration::from_micros(
                    streams.stream("digipeater/slot-phase").below(slot),
                ),
                ..digi
            });
        }
        let background = config.background.filter(|b| b.stations > 0 && b.load > 0.0);
        if let Some(b) = background {
            let mut phases = streams.stream("background/slot-phase");
            let slot = u64::try_from(b.station.slot_time.as_micros().max(1)).unwrap_or(1);
            radio_stations.extend((0..b.stations).map(|_| StationConfig {
                slot_phase: Duration::from_micros(phases.below(slot)),
                ..b.station
            }));
        }
        let mut radio = RadioChannel::new(
            RadioConfig {
                duplex: config.duplex,
                errors: config.errors,
                ..RadioConfig::new(config.bit_rate)
            },
            &radio_stations,
            streams,
            "radio",
        );
        for end in [SENDER, RECEIVER] {
            radio.set_slot_clock(StationId(end), config.slot_clock);
        }
        let link = config.link_config();
        if digipeater.is_some() {
            radio.set_hears(StationId(SENDER), StationId(RECEIVER), false);
            radio.set_hears(StationId(RECEIVER), StationId(SENDER), false);
        }
        let via: Vec<Address> = digipeater
            .map(|_| digipeater_address())
            .into_iter()
            .collect();
        let a: Address = "N0SEND".parse()?;
        let b: Address = "N0RECV".parse()?;
        let mut receiver = DataLink::new(link.clone(), b, a, &via)?;
        receiver.set_accept_incoming(true);
        let hosts = config
            .path
            .map(|path| [HostAndTnc::new(&path), HostAndTnc::new(&path)]);
        Ok(Testbed {
            queue: EventQueue::new(),
            radio,
            links: [DataLink::new(link, a, b, &via)?, receiver],
            hosts,
            wakes: [None; 7],
            app,
            phase: Phase::Connect,
            refused: None,
            digipeater: digipeater.map(|_| digipeater_address()),
            measurement: Measurement::default(),
            clock: config.clock,
            unsent: [0; 2],
            held: [false; 2],
            t1_held_until_sent: config.stack.t1_held_until_sent,
            ack_at_seize: config.stack.ack_at_seize && config.path.is_none(),
            channel_busy: [false; 2],
            longest_without_information: ADDRESS_LEN * (2 + via.len()) + 2,
            link_drop: config.link_drop.map(|d| {
                (
                    d,
                    DropState::Before {
                        frames_left: d.after_frames,
                    },
                )
            }),
            background: background.map(|b| {
                let arrivals = (0..b.stations)
                    .map(|i| streams.stream(&format!("background/{i}")))
                    .collect();
                (b, arrivals)
            }),
        })
    }

    /// Runs the transfer: the link set up, then (the model's clock) a
    /// quiet channel, the message offered and acknowledged, and with
    /// [`Clock::Session`] the link released.
    pub(super) fn run(mut self) -> Result<TransferOutcome, TransferError> {
        let _ = self.links[SENDER].connect(Instant::ZERO); // AX.25: combined, always honoured
        self.run_phase_or_cut(Phase::Connect)?;
        let settle = match self.clock {
            Clock::Offer => Duration::from_secs(1),
            Clock::Session => Duration::ZERO,
        };
        let offer = self.queue.now() + settle;
        self.queue
            .schedule(offer, Wake::Offer)
            .map_err(|_| self.stalled("offer"))?;

        self.run_phase_or_cut(Phase::Transfer)?;
        if self.clock == Clock::Session {
            let now = self.queue.now();
            let _ = self.links[SENDER].disconnect(now); // connected: always honoured
            self.run_phase(Phase::Release)?;
        }
        self.app.verify()?;
        self.measurement
            .outcome(
                self.clock,
                self.digipeater.is_some(),
                self.radio.stats().clone(),
            )
            .map_err(|phase| self.stalled(phase))
    }

    /// Runs `phase` from now until it ends; [`HORIZON`] is far beyond any
    /// transfer here, so a wake-up past it counts as running dry.
    fn run_phase(&mut self, phase: Phase) -> Result<(), TransferError> {
        self.phase = phase;
        let start = self.queue.now();
        drive(self, start, HORIZON).map_err(|e| match e {
            DriveError::Stalled { at } => TransferError::Stalled {
                phase: phase.name(),
                at_us: at.as_micros(),
            },
            DriveError::Horizon { .. } => TransferError::Unfinished {
                phase: phase.name(),
            },
            DriveError::Livelock { at } => TransferError::Livelock {
                phase: phase.name(),
                at_us: at.as_micros(),
            },
        })?;
        self.refused.take().map_or(Ok(()), Err)
    }

    /// [`Testbed::run_phase`], but a sender whose link went down and stayed
    /// down (N2 expiries) leaves nothing to happen: the transfer was cut
    /// ([`TransferError::LinkFailed`]), not stalled.
    fn run_phase_or_cut(&mut self, phase: Phase) -> Result<(), TransferError> {
        self.run_phase(phase)
            .map_err(|error| match (&error, self.links[SENDER].state()) {
                (TransferError::Stalled { .. }, State::Disconnected) => TransferError::LinkFailed {
                    reason: format!("the sender's link is down ({error})"),
                },
                _ => error,
            })
    }

    /// Moves frames and hints between engines, hosts, TNCs and channel
    /// until all is quiet at `now`, then re-arms the wake-ups.
    fn settle_components(&mut self, now: Instant) {
        loop {
            let mut busy = false;
            for i in [SENDER, RECEIVER] {
                while let Some(data) = self.app.poll_send(now, i) {
                    busy = true;
                    if let Err(error) = self.links[i].send(data) {
                        self.refused.get_or_insert(error.into());
                    }
                }
                while let Some(frame) = self.links[i].poll_transmit(now) {
                    busy = true;
                    if i == SENDER {
                        self.measurement.sender_emitted(now);
                    }
                    match self.hosts.as_mut() {
                        None => self.radio.transmit(now, StationId(i), frame.encode()),
                        Some(s) => s[i].send(now, frame.encode()),
                    }
                    self.handed_over(now, i);
                }
            }
            if let Some(hosts) = self.hosts.as_mut() {
                for (i, s) in hosts.iter_mut().enumerate() {
                    busy |= s.shuttle(now, StationId(i), &mut self.radio);
                }
            }
            while let Some(event) = self.radio.poll_event() {
                self.on_medium_event(now, event);
                busy = true;
            }
            while let Some(delivery) = self.radio.poll_delivery() {
                busy = true;
                let to = delivery.to.0;
                if !delivery.is_intact() {
                    if to == DIGIPEATER && self.digipeater.is_some() {
                        self.measurement.lost_at_digipeater();
                    }
                    continue;
                }
                if to == DIGIPEATER {
                    self.repeat(now, &delivery.frame);
                }
                if to > RECEIVER {
                    continue;
                }
                let from = delivery.from.0;
                let tag = self.measurement.current_transmission(from);
                match self.hosts.as_mut() {
                    None => self.hand_to_engine(delivery.at, to, &delivery.frame, tag),
                    Some(s) => s[to].receive(now, delivery.frame, tag.0),
                }
            }
            let arrived: Vec<(usize, Tagged)> = match self.hosts.as_mut() {
                None => Vec::new(),
                Some(hosts) => hosts
                    .iter_mut()
                    .enumerate()
                    .flat_map(|(i, s)| {
                        std::iter::from_fn(move || s.poll_delivery(now).map(|f| (i, f)))
                    })
                    .collect(),
            };
            for (i, (frame, tag)) in arrived {
                busy = true;
                self.hand_to_engine(now, i, &frame, Tag(tag));
            }
            for i in [SENDER, RECEIVER] {
                busy |= self.events_to_app(now, i);
            }
            if !busy {
                break;
            }
        }
        self.follow_link_drop(now);
        self.rearm(now);
    }

    /// Hands an intact frame (carried by transmission `tag` of the other
    /// station) to engine `to`, and notes the end of the transfer.
    fn hand_to_engine(&mut self, now: Instant, to: usize, body: &[u8], tag: Tag) {
        let link = &mut self.links[to];
        let Ok(frame) = Frame::decode(body, link.modulus()) else {
            return;
        };
        // Other stations' traffic reaches the host too; the stack keeps
        // what is addressed to it.
        let (to_us, ours) = (frame.dest(), link.local());
        if to_us.callsign() != ours.callsign() || to_us.ssid() != ours.ssid() {
            return;
        }
        // Not ours until every digipeater of its path has repeated it
        // (AX.25 v2.2 3.12.5).
        if !frame.digipeaters().iter().all(Address::c_or_h) {
            return;
        }
        let outstanding = link.unacked();
        link.handle_frame(now, &frame);
        if !self.channel_busy[to] {
            self.seize_for_acknowledgement(now, to);
        }
        // The application sees at once what this frame brought.
        self.events_to_app(now, to);
        if to != SENDER || !self.measurement.is_offered() {
            return;
        }
        let sender = &self.links[SENDER];
        self.measurement
            .sender_acknowledged(now, outstanding, sender.unacked());
        if self.phase == Phase::Release && sender.state() == State::Disconnected {
            self.measurement.final_ua_in(tag);
        } else if self.app.complete(sender) {
            self.measurement.final_ack_in(tag);
        }
    }

    /// Hands engine `i`'s events to the application; `true` if there were
    /// any.
    fn events_to_app(&mut self, now: Instant, i: usize) -> bool {
        let mut any = false;
        while let Some(event) = self.links[i].poll_event() {
            any = true;
            self.app.handle_event(now, i, event);
        }
        any
    }

    fn on_medium_event(&mut self, now: Instant, event: MediumEvent) {
        let direct = self.hosts.is_none();
        match event {
            MediumEvent::ChannelBusy { station, busy, at } => {
                if direct && station.0 <= RECEIVER {
                    self.channel_busy[station.0] = busy;
                    if self.t1_held_until_sent {
                        self.hold_t1(at, station.0);
                    } else {
                        self.links[station.0].set_channel_busy(at, busy);
                    }
                    if !busy {
                        self.seize_for_acknowledgement(at, station.0);
                    }
                }
            }
            MediumEvent::TransmitterKeyed { station, at } => {
                self.measurement.keyed(station.0, at);
                if let (true, Some(link)) = (direct, self.links.get_mut(station.0)) {
                    link.transmitter_keyed(at);
                }
                for (i, s) in self.hosts.iter_mut().flatten().enumerate() {
                    if i != station.0 && self.radio.hears(StationId(i), station) {
                        s.other_keyed();
                    }
                }
            }
            MediumEvent::FrameSent {
                station,
                octets,
                at,
            } => {
                if let Some(s) = self.hosts.as_mut().and_then(|s| s.get_mut(station.0)) {
                    s.frame_sent(now, octets);
                }
                self.left_the_air(at, station.0);
                if self.measurement.is_offered() {
                    self.measurement.frame_sent(station.0, at);
                    if station.0 == SENDER && octets > self.longest_without_information {
                        self.count_towards_drop();
                    }
                }
            }
            MediumEvent::TransmissionEnded { station, at } => {
                for (i, s) in self.hosts.iter_mut().flatten().enumerate() {
                    if i == station.0 {
                        continue;
                    }
                    if self.radio.hears(StationId(i), station) {
                        s.other_unkeyed(at);
                    } else {
                        s.other_out_of_range();
                    }
                }
                self.measurement.unkeyed(station.0, at);
            }
            MediumEvent::TransmissionStarted { .. } => {}
        }
    }

    /// Keeps exactly one pending wake-up per component, at its
    /// `poll_timeout`.
    fn rearm(&mut self, now: Instant) {
        let host = |i: usize, f: fn(&HostAndTnc) -> Option<Instant>| {
            self.hosts.as_ref().and_then(|s| f(&s[i]))
        };
        let wanted = [
            self.radio.poll_timeout(),
            self.links[SENDER].poll_timeout(),
            self.links[RECEIVER].poll_timeout(),
            host(SENDER, HostAndTnc::tnc_timeout),
            host(RECEIVER, HostAndTnc::tnc_timeout),
            host(SENDER, HostAndTnc::poll_timeout),
            host(RECEIVER, HostAndTnc::poll_timeout),
        ];
        for (slot, (want, wake)) in wanted.into_iter().zip(WAKES).enumerate() {
            self.queue.keep_wake(&mut self.wakes[slot], want, now, wake);
        }
    }

    fn quiet(&self) -> bool {
        self.radio.poll_timeout().is_none()
            && self.hosts.as_ref().is_none_or(|s| {
                s.iter()
                    .all(|s| s.tnc_timeout().is_none() && s.poll_timeout().is_none())
            })
    }

    fn stalled(&self, phase: &'static str) -> TransferError {
        TransferError::Stalled {
            phase,
            at_us: self.queue.now().as_micros(),
        }
    }
}

/// The wake-ups are the events of the queue, one per component at its
/// `poll_timeout` ([`Testbed::rearm`]); each wakes only its own component.
impl World for Testbed<'_> {
    fn settle(&mut self, now: Instant) {
        self.settle_components(now);
        self.measurement.settled();
    }

    fn done(&self) -> bool {
        self.refused.is_some()
            || match self.phase {
                Phase::Connect => match self.clock {
                    Clock::Offer => {
                        self.links
                            .iter()
                            .all(|l| l.state() == State::Connected && l.unacked() == 0)
                            && self.app.ready()
                            && self.quiet()
                    }
                    Clock::Session => {
                        self.links.iter().all(|l| l.state() == State::Connected) && self.app.ready()
                    }
                },
                Phase::Transfer => self.measurement.final_ack_ended(),
                Phase::Release => self.measurement.final_ua_ended(),
            }
    }

    fn next_wake(&mut self, _now: Instant) -> Option<Instant> {
        self.queue.peek_time()
    }

    /// Pops the event due at `to` and hands it to its component.
    fn advance(&mut self, to: Instant) {
        let Some((now, wake)) = self.queue.pop_until(to) else {
            return;
        };
        if let Some(slot) = WAKES.iter().position(|w| *w == wake) {
            self.wakes[slot] = None;
        }
        match wake {
            Wake::Radio => self.radio.handle_timeout(now),
            Wake::Engine(i) => {
                self.links[i].handle_timeout(now);
                if i == SENDER && self.links[i].unacked() > 0 {
                    self.measurement.sender_timer_fired();
                }
            }
            Wake::Tnc(i) => {
                if let Some(hosts) = self.hosts.as_mut() {
                    hosts[i].handle_tnc_timeout(now);
                }
            }
            Wake::Host(_) => {}
            Wake::Offer => {
                match self.app.offer(now) {
                    Ok(()) => self.measurement.offer(now),
                    Err(error) => {
                        self.refused.get_or_insert(error);
                    }
                }
                let stations = self.background.as_ref().map_or(0, |(b, _)| b.stations);
                for i in 0..usize::from(stations) {
                    self.schedule_background(now, i);
                }
            }
            Wake::Background(i) => self.send_background(now, i),
            Wake::BackInRange => self.back_in_range(now),
        }
    }
}

/// The two stations' KISS parameters for a transfer of `config` with the
/// random streams `streams`: `config.station` with each station's slot
/// phase drawn, sender first, from the stream `slot-phase`, uniform in
/// whole microseconds below the slot time. [`super::run_transfer`] puts exactly
/// these on its [`RadioChannel`] (named `radio`, so station i draws its
/// persistence numbers from `radio/{i}/csma`); a real-time emulation of
/// the same channel with the same streams uses them to reproduce a
/// replication.
pub fn replication_stations(config: &TransferConfig, streams: &Streams) -> [StationConfig; 2] {
    let mut phases = streams.stream("slot-phase");
    let slot = config.station.slot_time.as_micros().max(1);
    let mut station = || StationConfig {
        slot_phase: Duration::from_micros(phases.below(u64::try_from(slot).unwrap_or(u64::MAX))),
        ..config.station
    };
    [station(), station()]
}
