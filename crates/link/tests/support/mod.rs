//! Test support: a pair of data links over a serial line in virtual time
//! (after quinn-proto's `Pair`), each direction a seeded
//! `linklab_testkit::Impaired` channel carrying the frame and its FCS
//! (so a corrupted frame fails its FCS and is lost). The pair is
//! generic over the framing: [`Pair`] is the AX.25 one; the HDLC one is in
//! `hdlc_pair`.
#![allow(dead_code)]

use linklab_core::{Engine, Instant, Streams};
use std::time::Duration;

use linklab_link::{Ax25Framing, Config, DataLink, Event, Framing, InvalidFrame, Link, State};
use linklab_testkit::Impaired;
pub use linklab_testkit::Impairment;
use linklab_wire::ax25::{digipeat, Address, AddressField, CommandResponse, Frame};
use linklab_wire::control::Modulus;
use linklab_wire::fcs;
use linklab_wire::monitor::{self, Monitor, MonitorOptions};

/// Which end of the pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

impl Side {
    fn index(self) -> usize {
        match self {
            Side::A => 0,
            Side::B => 1,
        }
    }
}

/// What the pair needs of a framing's frames beyond the engine's view.
pub trait TestFraming: Framing + Sized {
    /// The engine is told its transmitter is busy (T1 paused) while a
    /// frame of its is on the line.
    const CARRIER_SENSE: bool;

    fn octets(frame: &Self::Frame) -> Vec<u8>;

    fn parse(octets: &[u8], modulus: Modulus) -> Option<Self::Frame>;

    /// The P/F bit.
    fn pf(frame: &Self::Frame) -> bool;

    /// The frame as the log shows it.
    fn text(frame: &Self::Frame) -> String;
}

/// Implements [`TestFraming`] for `$framing`, whose `$frame` has the
/// usual `encode`, `decode` and `control`; `$text` shows a frame.
macro_rules! test_framing {
    ($framing:ty, $frame:ty, carrier_sense: $carrier_sense:expr, text: $text:expr) => {
        impl $crate::support::TestFraming for $framing {
            const CARRIER_SENSE: bool = $carrier_sense;

            fn octets(frame: &$frame) -> Vec<u8> {
                frame.encode()
            }

            fn parse(octets: &[u8], modulus: linklab_wire::control::Modulus) -> Option<$frame> {
                <$frame>::decode(octets, modulus).ok()
            }

            fn pf(frame: &$frame) -> bool {
                frame.control().pf()
            }

            fn text(frame: &$frame) -> String {
                $text(frame)
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use test_framing;

const SHORT: MonitorOptions = MonitorOptions { max_info: Some(6) };

test_framing!(Ax25Framing, Frame, carrier_sense: true, text: |frame| {
    Monitor::with_options(frame, SHORT).to_string()
});

/// Drops frames chosen by a test: (sender side, frame) -> drop?
pub type Dropper<F = Ax25Framing> = Box<dyn FnMut(Side, &<F as Framing>::Frame) -> bool>;

/// A peer that misbehaves (`tests/hostile_peers.rs`): it stands between
/// B's engine and the line, and may also send frames of its own.
pub trait Tamper<F: Framing> {
    /// What goes on B's line instead of `frame`, a transmission of B's
    /// engine: each frame with how long it is held back first.
    fn outgoing(&mut self, now: Instant, frame: F::Frame) -> Vec<(Duration, F::Frame)>;

    /// A frame from A reaching B: whether B's engine gets it, and what B
    /// sends at once in its place.
    fn incoming(&mut self, now: Instant, frame: &F::Frame) -> (bool, Vec<F::Frame>);

    /// When B next sends something of its own accord.
    fn next_time(&self) -> Option<Instant>;

    /// What B sends of its own accord at `now`.
    fn poll(&mut self, now: Instant) -> Vec<F::Frame>;
}

/// Two links A and B over a full-duplex line, one per direction.
pub struct LinkPair<F: TestFraming> {
    pub links: [Link<F>; 2],
    pub now: Instant,
    /// Line rate in bit/s (full duplex, one line per direction).
    pub bit_rate: u64,
    pub propagation: Duration,
    /// The line from A (index 0) and from B (index 1): frames with their
    /// FCS, impaired by `line[i].impairment` (no delay of its own: the
    /// pair adds transmission and propagation time).
    pub line: [Impaired<Vec<u8>>; 2],
    pub dropper: Option<Dropper<F>>,
    /// Makes B a hostile peer.
    pub tamper: Option<Box<dyn Tamper<F>>>,
    /// Digipeaters every frame passes through (AX.25 only; the links
    /// must be set up with the same path, each from its own end).
    pub digipeaters: Vec<Address>,
    /// Frames B's tamper holds back, with when they go on the line.
    held_at_b: Vec<(Instant, F::Frame)>,
    line_free: [Instant; 2],
    /// The engine was told its transmitter is busy (T1 paused).
    tx_busy: [bool; 2],
    /// Whether the engines are told when their transmissions start and
    /// end (`set_channel_busy`); a driver without a transmit clock does
    /// not.
    pub reports_air: bool,
    pub events: [Vec<Event>; 2],
    pub log: Vec<String>,
    /// Frames sent by each side: (time, frame).
    pub sent: [Vec<(Instant, F::Frame)>; 2],
    /// When each of them started on the line.
    pub on_air: [Vec<Instant>; 2],
    /// Frames each side received: when, whether a command with P = 1,
    /// and the receiver's state just before.
    pub arrivals: [Vec<Arrival>; 2],
}

/// A frame handed to a link (see [`LinkPair::arrivals`]).
#[derive(Debug, Clone, Copy)]
pub struct Arrival {
    pub at: Instant,
    /// A command with P = 1: the receiver owes an F = 1 response.
    pub poll: bool,
    /// The receiver's state before it took the frame.
    pub state: State,
    /// Its state after.
    pub after: State,
}

/// The AX.25 pair.
pub type Pair = LinkPair<Ax25Framing>;

pub fn addr(text: &str) -> Address {
    text.parse().unwrap()
}

impl Pair {
    /// A (N0AAA) and B (N0BBB, listening), 9600 bit/s, 10 ms propagation.
    pub fn new(config_a: Config, config_b: Config, seed: u64) -> Pair {
        Pair::via(config_a, config_b, seed, &[])
    }

    /// As [`Pair::new`], A reaching B through the digipeaters `path` and
    /// B answering through them in reverse (AX.25 v2.2 3.12.5), every
    /// frame repeated by each of them on the way.
    pub fn via(config_a: Config, config_b: Config, seed: u64, path: &[Address]) -> Pair {
        let back: Vec<Address> = path.iter().rev().copied().collect();
        let a = DataLink::new(config_a, addr("N0AAA"), addr("N0BBB"), path).unwrap();
        let b = DataLink::new(config_b, addr("N0BBB"), addr("N0AAA"), &back).unwrap();
        let mut pair = LinkPair::with_links(a, b, seed);
        pair.digipeaters = path.to_vec();
        pair
    }

    /// Hands the octets of a frame to `to` at once, as a station does
    /// (linklab-io's `Station::handle_kiss_frame`): a frame that decodes
    /// with the link's modulus goes to `handle_frame`; one that fails for
    /// a reason of [`InvalidFrame`] goes to `handle_invalid_frame` with its
    /// control field; anything else is dropped.
    pub fn inject_bytes(&mut self, to: Side, bytes: &[u8]) {
        let modulus = self.links[to.index()].modulus();
        let line = format!(
            "{} inject >{:?} {}",
            self.stamp(),
            to,
            monitor::format_raw_with(bytes, modulus, SHORT)
        );
        self.log.push(line);
        let now = self.now;
        let link = &mut self.links[to.index()];
        match Frame::decode(bytes, modulus) {
            Ok(frame) => link.handle_frame(now, &frame),
            Err(error) => {
                if let (Some(invalid), Ok((field, used))) =
                    (InvalidFrame::of(&error), AddressField::decode(bytes))
                {
                    let rest = &bytes[used..];
                    let numbered = rest.first().is_some_and(|c| c & 0x03 != 0x03);
                    let len = if numbered { modulus.numbered_len() } else { 1 };
                    let control = &rest[..len.min(rest.len())];
                    let command = field.command_response() == CommandResponse::Command;
                    link.handle_invalid_frame(now, invalid, control, command);
                }
            }
        }
        self.transmit();
    }
}

impl<F: TestFraming> LinkPair<F> {
    /// A and B (accepting the link), 9600 bit/s, 10 ms propagation, a
    /// channel seeded with `seed`.
    pub fn with_links(a: Link<F>, mut b: Link<F>, seed: u64) -> LinkPair<F> {
        b.set_accept_incoming(true);
        let streams = Streams::new(seed);
        LinkPair {
            links: [a, b],
            now: Instant::ZERO,
            bit_rate: 9600,
            propagation: Duration::from_millis(10),
            line: [0, 1].map(|i| {
                Impaired::bytes(Impairment::default(), streams.stream_index(i).next_u64())
            }),
            dropper: None,
            tamper: None,
            digipeaters: Vec::new(),
            held_at_b: Vec::new(),
            line_free: [Instant::ZERO; 2],
            tx_busy: [false; 2],
            reports_air: true,
            events: [Vec::new(), Vec::new()],
            log: Vec::new(),
            sent: [Vec::new(), Vec::new()],
            on_air: [Vec::new(), Vec::new()],
            arrivals: [Vec::new(), Vec::new()],
        }
    }

    pub fn a(&mut self) -> &mut Link<F> {
        &mut self.links[0]
    }

    pub fn b(&mut self) -> &mut Link<F> {
        &mut self.links[1]
    }

    fn stamp(&self) -> String {
        format!("{:>10.3}", self.now)
    }

    /// Drains both engines' transmissions onto the channel and their events.
    pub fn transmit(&mut self) {
        for side in [Side::A, Side::B] {
            let i = side.index();
            while let Some(frame) = self.links[i].poll_transmit(self.now) {
                match (side, self.tamper.as_mut()) {
                    (Side::B, Some(tamper)) => {
                        for (hold, frame) in tamper.outgoing(self.now, frame) {
                            if hold.is_zero() {
                                self.put_on_line(side, frame);
                            } else {
                                self.held_at_b.push((self.now + hold, frame));
                            }
                        }
                    }
                    _ => self.put_on_line(side, frame),
                }
            }
            if F::CARRIER_SENSE
                && self.reports_air
                && self.line_free[i] > self.now
                && !self.tx_busy[i]
            {
                self.tx_busy[i] = true;
                self.links[i].set_channel_busy(self.now, true);
            }
        }
        self.collect_events();
    }

    /// Serialises `frame` from `side` onto its line after what is already
    /// on it: once, or through each of [`LinkPair::digipeaters`] in turn
    /// (the frame on the channel once more per digipeater, arriving with
    /// their H bits set).
    fn put_on_line(&mut self, side: Side, frame: F::Frame) {
        let i = side.index();
        let mut bytes = F::octets(&frame);
        let mut path: Vec<&Address> = self.digipeaters.iter().collect();
        if side == Side::B {
            path.reverse();
        }
        for digi in path {
            if let Some(repeated) = digipeat(&bytes, digi) {
                bytes = repeated;
            }
        }
        let hops = 1 + self.digipeaters.len() as u64;
        let bits = (bytes.len() as u64 + 4) * 8 * hops;
        let start = self.line_free[i].max(self.now);
        let end = start + Duration::from_micros(bits * 1_000_000 / self.bit_rate);
        self.line_free[i] = end;
        let arrival = end + self.propagation * hops as u32;
        let dropped = self
            .dropper
            .as_mut()
            .is_some_and(|dropper| dropper(side, &frame));
        let fate = if dropped {
            " [dropped by test]"
        } else {
            let mut octets = bytes;
            fcs::append_fcs(&mut octets);
            self.line[i].send(arrival, octets);
            let fate = self.line[i].fates.last().unwrap();
            match fate.arrivals.len() {
                0 => " [lost]",
                _ if fate.corrupted => " [corrupted]",
                1 => "",
                _ => " [duplicated]",
            }
        };
        let line = format!("{} {side:?}> {}{fate}", self.stamp(), F::text(&frame));
        self.log.push(line);
        self.sent[i].push((self.now, frame));
        self.on_air[i].push(start);
    }

    /// B's tamper's own frames and the frames it held back that are due.
    fn tamper_sends(&mut self) {
        let now = self.now;
        let (due, held): (Vec<_>, Vec<_>) = std::mem::take(&mut self.held_at_b)
            .into_iter()
            .partition(|(at, _)| *at <= now);
        self.held_at_b = held;
        let mut due: Vec<F::Frame> = due.into_iter().map(|(_, frame)| frame).collect();
        if let Some(tamper) = self.tamper.as_mut() {
            if tamper.next_time().is_some_and(|t| t <= now) {
                due.extend(tamper.poll(now));
            }
        }
        for frame in due {
            self.put_on_line(Side::B, frame);
        }
    }

    fn collect_events(&mut self) {
        for side in [Side::A, Side::B] {
            while let Some(event) = self.links[side.index()].poll_event() {
                let line = match &event {
                    Event::Data { pid, data } => {
                        format!(
                            "{} {:?}: Data {pid} {} octets {:02x?}",
                            self.stamp(),
                            side,
                            data.len(),
                            &data[..data.len().min(4)]
                        )
                    }
                    other => format!("{} {:?}: {:?}", self.stamp(), side, other),
                };
                self.log.push(line);
                self.events[side.index()].push(event);
            }
        }
    }

    /// Hands `frame` to `to` at once, as if received.
    pub fn inject(&mut self, to: Side, frame: &F::Frame) {
        let line = format!("{} inject >{:?} {}", self.stamp(), to, F::text(frame));
        self.log.push(line);
        let now = self.now;
        self.links[to.index()].handle_frame(now, frame);
        self.transmit();
    }

    /// The log from line `from` on without time stamps.
    pub fn log_since(&self, from: usize) -> Vec<String> {
        self.log[from..]
            .iter()
            .map(|l| l.get(11..).unwrap_or_default().to_string())
            .collect()
    }

    /// Next instant anything happens.
    fn next_time(&self) -> Option<Instant> {
        let flight = self.line.iter().filter_map(Impaired::next_arrival).min();
        let idle = |i: usize| self.tx_busy[i].then_some(self.line_free[i]);
        let tamper = self.tamper.as_ref().and_then(|t| t.next_time());
        let held = self.held_at_b.iter().map(|(at, _)| *at).min();
        [
            flight,
            idle(0),
            idle(1),
            self.links[0].poll_timeout(),
            self.links[1].poll_timeout(),
            tamper,
            held,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Advances to the next event; false if nothing is left to happen.
    pub fn step(&mut self) -> bool {
        self.transmit();
        let Some(t) = self.next_time() else {
            return false;
        };
        self.now = self.now.max(t);
        let now = self.now;
        for i in 0..2 {
            if self.tx_busy[i] && self.line_free[i] <= now {
                self.tx_busy[i] = false;
                self.links[i].set_channel_busy(now, false);
            }
        }
        // What A sent first, as A transmits first.
        while let Some((from, bytes)) =
            (0..2).find_map(|i| self.line[i].recv(now).map(|bytes| (i, bytes)))
        {
            let to = [Side::B, Side::A][from];
            let modulus = self.links[to.index()].modulus();
            let frame = fcs::check(&bytes)
                .then(|| F::parse(&bytes[..bytes.len() - 2], modulus))
                .flatten();
            if let Some(frame) = frame {
                let (deliver, answers) = match (to, self.tamper.as_mut()) {
                    (Side::B, Some(tamper)) => tamper.incoming(now, &frame),
                    _ => (true, Vec::new()),
                };
                if deliver {
                    let link = &mut self.links[to.index()];
                    let poll = link
                        .framing()
                        .decode(&frame)
                        .is_some_and(|pdu| pdu.command && pdu.pf());
                    let state = link.state();
                    link.handle_frame(now, &frame);
                    self.arrivals[to.index()].push(Arrival {
                        at: now,
                        poll,
                        state,
                        after: link.state(),
                    });
                }
                for answer in answers {
                    self.put_on_line(Side::B, answer);
                }
            }
            self.transmit();
        }
        self.tamper_sends();
        for link in &mut self.links {
            if link.poll_timeout().is_some_and(|t| t <= now) {
                link.handle_timeout(now);
            }
        }
        self.transmit();
        true
    }

    /// Steps until `done` holds (true) or `limit` of virtual time passes
    /// or nothing is left to happen (false).
    pub fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&Self) -> bool) -> bool {
        let end = self.now + limit;
        loop {
            self.transmit();
            if done(self) {
                return true;
            }
            if self.next_time().is_none_or(|t| t > end) || !self.step() {
                self.transmit();
                return done(self);
            }
        }
    }

    /// Runs for `span` of virtual time.
    pub fn run_for(&mut self, span: Duration) {
        let end = self.now + span;
        self.transmit();
        while self.next_time().is_some_and(|t| t <= end) {
            self.step();
        }
        self.now = self.now.max(end);
    }

    pub fn events(&self, side: Side) -> &[Event] {
        &self.events[side.index()]
    }

    pub fn take_events(&mut self, side: Side) -> Vec<Event> {
        std::mem::take(&mut self.events[side.index()])
    }

    /// Received data units at `side`, in order.
    /// True while `side` was told its transmitter is busy (its frames are
    /// still on the line).
    pub fn transmitting(&self, side: Side) -> bool {
        self.tx_busy[side.index()]
    }

    pub fn received(&self, side: Side) -> Vec<Vec<u8>> {
        self.events(side)
            .iter()
            .filter_map(|e| match e {
                Event::Data { data, .. } => Some(data.clone()),
                _ => None,
            })
            .collect()
    }

    /// Frame log lines containing `needle`.
    pub fn logged(&self, needle: &str) -> usize {
        self.log.iter().filter(|l| l.contains(needle)).count()
    }

    pub fn dump(&self) -> String {
        self.log.join("\n")
    }

    /// Both links are in `state`.
    pub fn all(&self, state: State) -> bool {
        self.links.iter().all(|l| l.state() == state)
    }

    /// Both idle: nothing queued or unacknowledged.
    pub fn idle(&self) -> bool {
        self.links
            .iter()
            .all(|l| l.unacked() == 0 && l.queued() == 0)
    }

    /// A sets the link up; asserts both report it.
    pub fn connect(&mut self) {
        let now = self.now;
        self.a().connect(now).unwrap();
        let ok = self.run_until(Duration::from_secs(120), |p| p.all(State::Connected));
        assert!(ok, "connect failed:\n{}", self.dump());
    }
}
