//! Test support for HDLC links: a primary (or LAPB DTE) A and a secondary
//! (or DCE) B over a full-duplex lossy line, in virtual time.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::time::Duration;

use linklab_link::{Config, Event, HdlcAddressing, HdlcLink, Instant, Mode, Role, State};
use linklab_wire::control::Control;
use linklab_wire::lapb::{Address, Frame, LinkProcedure, Role as LapbRole, Station};

use crate::support::SplitMix64;

/// The secondary's address in the unbalanced tests.
pub const SECONDARY: Address = Address(0x21);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

pub type Dropper = Box<dyn FnMut(Side, &Frame) -> bool>;

pub struct HdlcPair {
    pub links: [HdlcLink; 2],
    pub now: Instant,
    pub bit_rate: u64,
    pub propagation: Duration,
    /// Loss probability of frames sent by A (0) and B (1).
    pub loss: [f64; 2],
    pub dropper: Option<Dropper>,
    rng: SplitMix64,
    in_flight: VecDeque<(Instant, usize, Vec<u8>)>,
    line_free: [Instant; 2],
    pub events: [Vec<Event>; 2],
    pub log: Vec<String>,
    /// Frames sent by each side: (time, frame).
    pub sent: [Vec<(Instant, Frame)>; 2],
    /// When B received a frame with P = 1.
    pub polls_at_b: Vec<Instant>,
}

/// `<I C P S0 R1>`-style text of a frame.
pub fn show(frame: &Frame) -> String {
    let c = frame.control();
    let pf = if c.pf() { " PF" } else { "" };
    match c {
        Control::I { ns, nr, .. } => format!("<I{pf} S{ns} R{nr}> {} octets", frame.info().len()),
        Control::S { nr, .. } => format!("<{}{pf} R{nr}>", c.name()),
        Control::U { .. } => format!("<{}{pf}>", c.name()),
    }
}

/// Config for `mode`: A's role is primary (combined in ABM), B's secondary.
pub fn configs(mode: Mode, base: Config) -> (Config, Config) {
    let (ra, rb) = match mode {
        Mode::Abm => (Role::Combined, Role::Combined),
        _ => (Role::Primary, Role::Secondary),
    };
    (
        Config {
            mode,
            role: ra,
            ..base.clone()
        },
        Config {
            mode,
            role: rb,
            ..base
        },
    )
}

impl HdlcPair {
    /// A and B in `mode`; B accepts the link. In ABM, A is the DTE (LAPB
    /// single link), in NRM/ARM the primary.
    pub fn new(mode: Mode, config_a: Config, config_b: Config, seed: u64) -> HdlcPair {
        let (addr_a, addr_b) = match mode {
            Mode::Abm => (
                HdlcAddressing::Lapb {
                    role: LapbRole::Dte,
                    procedure: LinkProcedure::SingleLink,
                },
                HdlcAddressing::Lapb {
                    role: LapbRole::Dce,
                    procedure: LinkProcedure::SingleLink,
                },
            ),
            _ => (
                HdlcAddressing::Unbalanced {
                    station: Station::Primary,
                    secondary: SECONDARY,
                },
                HdlcAddressing::Unbalanced {
                    station: Station::Secondary,
                    secondary: SECONDARY,
                },
            ),
        };
        let a = HdlcLink::new(config_a, addr_a).unwrap();
        let mut b = HdlcLink::new(config_b, addr_b).unwrap();
        b.set_accept_incoming(true);
        HdlcPair {
            links: [a, b],
            now: Instant::ZERO,
            bit_rate: 9600,
            propagation: Duration::from_millis(10),
            loss: [0.0; 2],
            dropper: None,
            rng: SplitMix64::new(seed),
            in_flight: VecDeque::new(),
            line_free: [Instant::ZERO; 2],
            events: [Vec::new(), Vec::new()],
            log: Vec::new(),
            sent: [Vec::new(), Vec::new()],
            polls_at_b: Vec::new(),
        }
    }

    pub fn a(&mut self) -> &mut HdlcLink {
        &mut self.links[0]
    }

    pub fn b(&mut self) -> &mut HdlcLink {
        &mut self.links[1]
    }

    fn stamp(&self) -> String {
        format!("{:>10.3}", self.now.as_micros() as f64 / 1e6)
    }

    pub fn transmit(&mut self) {
        for (i, side) in [(0, Side::A), (1, Side::B)] {
            while let Some(frame) = self.links[i].poll_transmit(self.now) {
                let bytes = frame.encode();
                let bits = (bytes.len() as u64 + 4) * 8;
                let start = self.line_free[i].max(self.now);
                let end = start + Duration::from_micros(bits * 1_000_000 / self.bit_rate);
                self.line_free[i] = end;
                let mut fate = "";
                if let Some(dropper) = self.dropper.as_mut() {
                    if dropper(side, &frame) {
                        fate = " [dropped by test]";
                    }
                }
                if fate.is_empty() && self.rng.chance(self.loss[i]) {
                    fate = " [lost]";
                }
                if fate.is_empty() {
                    self.in_flight
                        .push_back((end + self.propagation, 1 - i, bytes));
                }
                let line = format!(
                    "{} {side:?}> {:02x} {}{fate}",
                    self.stamp(),
                    frame.address().octet(),
                    show(&frame)
                );
                self.log.push(line);
                self.sent[i].push((self.now, frame));
            }
        }
        for i in 0..2 {
            while let Some(event) = self.links[i].poll_event() {
                let line = format!("{} {:?}: {:?}", self.stamp(), [Side::A, Side::B][i], event);
                self.log.push(line);
                self.events[i].push(event);
            }
        }
    }

    fn next_time(&self) -> Option<Instant> {
        let flight = self.in_flight.iter().map(|f| f.0).min();
        [
            flight,
            self.links[0].poll_timeout(),
            self.links[1].poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    pub fn step(&mut self) -> bool {
        self.transmit();
        let Some(t) = self.next_time() else {
            return false;
        };
        self.now = self.now.max(t);
        let now = self.now;
        while let Some(pos) = self.in_flight.iter().position(|f| f.0 <= now) {
            let (_, to, bytes) = self.in_flight.remove(pos).unwrap();
            let link = &mut self.links[to];
            if let Ok(frame) = Frame::decode(&bytes, link.modulus()) {
                if to == 1 && frame.control().pf() {
                    self.polls_at_b.push(now);
                }
                link.handle_frame(now, &frame);
            }
            self.transmit();
        }
        for link in &mut self.links {
            if link.poll_timeout().is_some_and(|t| t <= now) {
                link.handle_timeout(now);
            }
        }
        self.transmit();
        true
    }

    pub fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&HdlcPair) -> bool) -> bool {
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

    pub fn run_for(&mut self, span: Duration) {
        let end = self.now + span;
        self.transmit();
        while self.next_time().is_some_and(|t| t <= end) {
            self.step();
        }
        self.now = self.now.max(end);
    }

    pub fn events(&self, side: Side) -> &[Event] {
        &self.events[side as usize]
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

    pub fn logged(&self, needle: &str) -> usize {
        self.log.iter().filter(|l| l.contains(needle)).count()
    }

    pub fn dump(&self) -> String {
        self.log.join("\n")
    }

    pub fn all(&self, state: State) -> bool {
        self.links.iter().all(|l| l.state() == state)
    }

    /// A sets the link up; asserts both report it.
    pub fn connect(&mut self) {
        let now = self.now;
        self.a().connect(now);
        let ok = self.run_until(Duration::from_secs(120), |p| p.all(State::Connected));
        assert!(ok, "connect failed:\n{}", self.dump());
    }

    /// Both idle: nothing queued or unacknowledged.
    pub fn idle(&self) -> bool {
        self.links
            .iter()
            .all(|l| l.unacked() == 0 && l.queued() == 0)
    }

    /// True if the secondary (B) never sent a frame except as a response
    /// to a poll: every frame it sends follows a P = 1 from A received
    /// since its previous F = 1 (NRM, ISO/IEC 13239; Bux A1.2).
    pub fn secondary_only_polled(&self) -> Result<(), String> {
        let mut next_poll = 0;
        let mut holds = false;
        for (t, frame) in &self.sent[1] {
            while next_poll < self.polls_at_b.len() && self.polls_at_b[next_poll] <= *t {
                holds = true;
                next_poll += 1;
            }
            if !holds {
                return Err(format!("B sent {} at {t:?} unpolled", show(frame)));
            }
            if frame.control().pf() {
                holds = false;
            }
        }
        Ok(())
    }
}
