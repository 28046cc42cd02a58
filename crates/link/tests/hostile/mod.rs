//! The hostile-peer suite's harness: a link A under test sends
//! (and in some runs receives) numbered data units to and from a peer B
//! whose engine stands behind a [`Hostile`] tamper, in every link mode.
//! [`check`] runs one behaviour against one mode and asserts what A must
//! do against any peer:
//!
//! - **exactly once, in order**: the units a peer's engine delivers carry
//!   strictly increasing numbers (a restarted peer starts a new count);
//! - **nothing lost silently**: either every unit arrives, or the station
//!   that sent it told its user (link failure, release, a reset that
//!   discarded data, data discarded);
//! - **bounded transmissions**: in any interval of T1 min during which
//!   nothing new is acknowledged or received, A starts at most 2k + 2
//!   frames on the line (a window, one retransmission of it, an enquiry
//!   and a report) plus one for each frame it received in that interval
//!   or in the T2 before it;
//! - **bounded give-up**: a link that fails does so within (N2 + 1) x T1
//!   (the largest T1V it used) plus T2 of its last progress, and T1V and
//!   N2 stay within T1 max and 31 whatever the peer's XID said;
//! - **never stops answering**: every poll A receives while connected, and
//!   stays connected after, is answered with F = 1 at once.
#![allow(dead_code)]

pub mod peer;

use std::time::Duration;

use linklab_core::Instant;
use linklab_link::{
    Config, DataLink, Event, HdlcAddressing, HdlcLink, Link, LinkError, Mode, RecoveryMode, State,
};
use linklab_wire::control::Modulus;
use linklab_wire::lapb::{LinkProcedure, Role as LapbRole, Station};

use crate::hdlc_pair::{configs, HdlcPair, Side, SECONDARY};
use crate::support::{addr, Impairment, LinkPair, Pair, TestFraming};
pub use peer::{Behaviour, Hostile};

/// Data units each way, and their size in octets.
const UNITS: usize = 24;
const UNIT_LEN: usize = 200;
/// How long a run may last in virtual time.
const DEADLINE: Duration = Duration::from_secs(3600);
/// How long a run goes on after A's link has gone down: A must stay quiet.
const AFTERMATH: Duration = Duration::from_secs(120);

/// A link mode under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkMode {
    /// AX.25 v2.2 between two combined stations.
    Ax25(Modulus, RecoveryMode),
    /// LAPB (ABM) between a DTE (A) and a DCE (B).
    Lapb(Modulus),
    /// NRM: A the primary, B the secondary.
    Nrm(Modulus),
    /// ARM: A the primary, B the secondary.
    Arm(Modulus),
}

impl LinkMode {
    pub const ALL: [LinkMode; 9] = [
        LinkMode::Ax25(Modulus::Mod8, RecoveryMode::Rej),
        LinkMode::Ax25(Modulus::Mod128, RecoveryMode::Rej),
        LinkMode::Ax25(Modulus::Mod128, RecoveryMode::Srej),
        LinkMode::Ax25(Modulus::Mod128, RecoveryMode::MultiSrej),
        LinkMode::Lapb(Modulus::Mod8),
        LinkMode::Lapb(Modulus::Mod128),
        LinkMode::Nrm(Modulus::Mod8),
        LinkMode::Nrm(Modulus::Mod128),
        LinkMode::Arm(Modulus::Mod8),
    ];

    fn base(self) -> Config {
        Config {
            modulus: self.modulus(),
            recovery: self.recovery(),
            t3: Duration::from_secs(60),
            ..Config::default()
        }
    }

    fn modulus(self) -> Modulus {
        match self {
            LinkMode::Ax25(modulus, _)
            | LinkMode::Lapb(modulus)
            | LinkMode::Nrm(modulus)
            | LinkMode::Arm(modulus) => modulus,
        }
    }

    fn recovery(self) -> RecoveryMode {
        match self {
            LinkMode::Ax25(_, recovery) => recovery,
            _ => RecoveryMode::Rej,
        }
    }

    /// Why `behaviour` cannot be tried in this mode, if it cannot.
    pub fn excludes(self, behaviour: Behaviour) -> Option<&'static str> {
        let balanced = matches!(self, LinkMode::Ax25(..) | LinkMode::Lapb(_));
        match behaviour {
            Behaviour::ResetMidTransfer | Behaviour::WrongCommandResponse if !balanced => Some(
                "in NRM and ARM the direction of a frame makes it a command or a response, and \
                 only the primary sets the link up (ISO/IEC 13239 5.5)",
            ),
            Behaviour::ReorderAndDuplicate if self.modulus() == Modulus::Mod8 => Some(
                "a modulo-8 link cannot survive a path that reorders: a late acknowledgement \
                 whose N(R) falls inside the window after the sequence numbers wrap acknowledges \
                 frames never received, and no rule of the link can tell it from a fresh one \
                 (LAPB modulo 8 lost 4 of 24 units without a word here); over AXUDP use \
                 modulo 128, where such an N(R) is an N(R) error",
            ),
            Behaviour::AbsurdXid if !matches!(self, LinkMode::Ax25(Modulus::Mod128, _)) => {
                Some("linklab negotiates with XID on AX.25 v2.2 (modulo-128) links only")
            }
            _ => None,
        }
    }
}

/// How a behaviour may end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Everything is delivered, exactly once and in order.
    Delivered,
    /// A gives up and says so.
    GivesUp,
    /// Either, with a lost unit reported.
    Either,
}

impl Behaviour {
    /// What A must make of it in `mode`.
    pub fn expect(self, mode: LinkMode) -> Expect {
        let unbalanced = matches!(mode, LinkMode::Nrm(_) | LinkMode::Arm(_));
        match self {
            // A copy of the SABM(E) that comes after the link is up is a
            // reset to the peer (fig. C4.4b): if either side had sent
            // data, the two disagree until an N(R) error sets the link up
            // again, and the data the reset discards is reported. (Late
            // frames themselves are dropped: `late` in the engine.)
            Behaviour::ReorderAndDuplicate => Expect::Either,
            // A secondary's unasked RR with P/F set reads as F = 1, the
            // answer to the primary's poll, and an answer with a stale
            // N(R): the primary gives up as on stale answers.
            Behaviour::PollFlood if unbalanced => Expect::Either,
            Behaviour::RejectForever
            | Behaviour::StalePollAnswers
            | Behaviour::BusyForever
            | Behaviour::DmWhileConnected => Expect::GivesUp,
            Behaviour::Frmr | Behaviour::ResetMidTransfer | Behaviour::WrongCommandResponse => {
                Expect::Either
            }
            _ => Expect::Delivered,
        }
    }

    /// Whether B sends data to A too.
    fn both_ways(self) -> bool {
        matches!(
            self,
            Behaviour::WindowOverrun
                | Behaviour::WrongCommandResponse
                | Behaviour::Duplicate
                | Behaviour::ReorderAndDuplicate
        )
    }
}

/// Data unit `n`: its number, then filler.
fn unit(n: usize) -> Vec<u8> {
    let mut data = vec![(n * 7) as u8; UNIT_LEN];
    data[..2].copy_from_slice(&(n as u16).to_be_bytes());
    data
}

fn number(data: &[u8]) -> usize {
    usize::from(u16::from_be_bytes([data[0], data[1]]))
}

/// Whether a station's `events` tell its user that data may be lost: a
/// link failure or release, data discarded, or a second connection
/// (raised after a reset that discarded data).
fn reports_loss(events: &[&Event]) -> bool {
    let mut connects = 0;
    events.iter().any(|e| match e {
        Event::LinkFailure { .. }
        | Event::Disconnected { .. }
        | Event::Error(LinkError::DataDiscarded { .. }) => true,
        Event::Connected { .. } => {
            connects += 1;
            connects > 1
        }
        _ => false,
    })
}

/// What a run did, for the checks and for a failure's message.
pub struct Outcome {
    /// A's events with when they came.
    pub events: Vec<(Instant, Event)>,
    /// B's events (whichever engine).
    pub b_events: Vec<Event>,
    /// Units B's engines delivered, one list per engine (a restarted peer
    /// is a new engine).
    pub at_b: Vec<Vec<usize>>,
    /// Units A delivered.
    pub at_a: Vec<usize>,
    /// Instants at which A made progress: V(A) moved or a new unit came.
    pub progress: Vec<Instant>,
    /// When each frame A sent started on the line.
    pub a_sent: Vec<Instant>,
    /// Frames A received, and the polls among them it owed an answer.
    pub a_received: Vec<Instant>,
    pub owed_answers: Vec<Instant>,
    /// F = 1 responses A sent.
    pub a_finals: Vec<Instant>,
    pub max_t1v: Duration,
    pub t1_max: Duration,
    pub max_k: u8,
    pub max_n2: u8,
    pub t1_min: Duration,
    pub t2: Duration,
    pub both_ways: bool,
    pub end: Instant,
    pub log: String,
}

impl Outcome {
    /// The instant A's link failed or was released.
    pub fn gave_up(&self) -> Option<Instant> {
        self.events
            .iter()
            .find(|(_, e)| matches!(e, Event::LinkFailure { .. } | Event::Disconnected { .. }))
            .map(|(t, _)| *t)
    }

    /// Every unit went each way it was sent.
    pub fn delivered(&self) -> bool {
        self.delivered_to_b() && (!self.both_ways || self.delivered_to_a())
    }

    fn delivered_to_b(&self) -> bool {
        self.at_b.concat() == (0..UNITS).collect::<Vec<_>>()
    }

    fn delivered_to_a(&self) -> bool {
        self.at_a == (0..UNITS).collect::<Vec<_>>()
    }

    /// Each side that sent data that did not all arrive told its user.
    pub fn reported(&self) -> bool {
        let a_events: Vec<&Event> = self.events.iter().map(|(_, e)| e).collect();
        let b_events: Vec<&Event> = self.b_events.iter().collect();
        (self.delivered_to_b() || reports_loss(&a_events))
            && (!self.both_ways || self.delivered_to_a() || reports_loss(&b_events))
    }

    fn frames_per_t1_violation(&self) -> Option<String> {
        let bound = 2 * usize::from(self.max_k) + 2;
        let w = self.t1_min;
        let count = |times: &[Instant], from: Instant, to: Instant| {
            times.partition_point(|&t| t < to) - times.partition_point(|&t| t < from)
        };
        self.a_sent.iter().find_map(|&start| {
            let end = start + w;
            if count(&self.progress, start, end) > 0 {
                return None;
            }
            let sent = count(&self.a_sent, start, end);
            let t2 = self.t2.as_micros() as u64;
            let since = Instant::from_micros(start.as_micros().saturating_sub(t2));
            let received = count(&self.a_received, since, end);
            (sent > bound + received).then(|| {
                format!(
                    "{sent} frames started in the {w:?} from {start:?} with no progress, \
                     {received} received: more than 2k + 2 = {bound} beyond them"
                )
            })
        })
    }

    fn unanswered_poll(&self) -> Option<Instant> {
        self.owed_answers.iter().copied().find(|&at| {
            let i = self.a_finals.partition_point(|&t| t < at);
            self.a_finals.get(i).is_none_or(|&t| t > at)
        })
    }

    /// Checks what holds whatever B does, and what `expect` says.
    pub fn check(&self, expect: Expect) -> Result<(), String> {
        for (i, units) in self.at_b.iter().enumerate() {
            if units.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!(
                    "B's engine {i} delivered out of order or twice: {units:?}"
                ));
            }
        }
        if self.at_a.windows(2).any(|w| w[0] >= w[1]) {
            return Err(format!(
                "A delivered out of order or twice: {:?}",
                self.at_a
            ));
        }
        let delivered = self.delivered();
        match expect {
            Expect::Delivered if !delivered => return Err("not everything was delivered".into()),
            Expect::GivesUp if self.gave_up().is_none() => return Err("A never gave up".into()),
            _ => {}
        }
        if !delivered && !self.reported() {
            return Err("data was lost and its sender said nothing".into());
        }
        if self.max_t1v > self.t1_max || self.max_n2 > 31 {
            return Err(format!(
                "T1 reached {:?} (T1 max {:?}), N2 {}",
                self.max_t1v, self.t1_max, self.max_n2
            ));
        }
        if let Some(v) = self.frames_per_t1_violation() {
            return Err(v);
        }
        if let Some(at) = self.unanswered_poll() {
            return Err(format!("the poll A received at {at:?} was not answered"));
        }
        let failed = self
            .events
            .iter()
            .find(|(_, e)| matches!(e, Event::LinkFailure { .. }));
        if let Some((failed, _)) = failed {
            let last = self.progress.last().copied().unwrap_or(Instant::ZERO);
            let bound = self.max_t1v * (u32::from(self.max_n2) + 1) + self.t2;
            let took = *failed - last;
            if took > bound {
                return Err(format!(
                    "A gave up {took:?} after its last progress, more than (N2 + 1) x T1 + T2 \
                     = {bound:?}"
                ));
            }
        }
        Ok(())
    }
}

/// Runs `behaviour` against `mode` and checks the outcome; panics with
/// the frame log on a failure.
pub fn check(mode: LinkMode, behaviour: Behaviour, seed: u64) -> Outcome {
    let outcome = match mode {
        LinkMode::Ax25(..) => {
            let (a, b) = (mode.base(), mode.base());
            let fresh = b.clone();
            let pair = Pair::new(a, b, seed);
            run(pair, behaviour, move || {
                DataLink::new(fresh.clone(), addr("N0BBB"), addr("N0AAA"), &[]).unwrap()
            })
        }
        LinkMode::Lapb(_) | LinkMode::Nrm(_) | LinkMode::Arm(_) => {
            let hdlc = match mode {
                LinkMode::Lapb(_) => Mode::Abm,
                LinkMode::Nrm(_) => Mode::Nrm,
                _ => Mode::Arm,
            };
            let (a, b) = configs(hdlc, mode.base());
            let fresh = b.clone();
            let pair = HdlcPair::new(hdlc, a, b, seed);
            let addressing = match hdlc {
                Mode::Abm => HdlcAddressing::Lapb {
                    role: LapbRole::Dce,
                    procedure: LinkProcedure::SingleLink,
                },
                _ => HdlcAddressing::Unbalanced {
                    station: Station::Secondary,
                    secondary: SECONDARY,
                },
            };
            run(pair, behaviour, move || {
                HdlcLink::new(fresh.clone(), addressing).unwrap()
            })
        }
    };
    // HOSTILE_LOG=1 shows every run's frames, as DUMP does for the
    // property tests.
    if std::env::var("HOSTILE_LOG").is_ok() {
        eprintln!("{mode:?} against {behaviour:?}:\n{}", outcome.log);
    }
    if let Err(why) = outcome.check(behaviour.expect(mode)) {
        panic!(
            "{mode:?} against {behaviour:?}: {why}\n{}",
            shortened(&outcome.log)
        );
    }
    outcome
}

/// The first and last 200 lines of a long log.
fn shortened(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    if lines.len() <= 400 {
        return log.to_string();
    }
    format!(
        "{}\n... ({} lines left out)\n{}",
        lines[..200].join("\n"),
        lines.len() - 400,
        lines[lines.len() - 200..].join("\n")
    )
}

fn run<F: TestFraming + Clone + 'static>(
    mut pair: LinkPair<F>,
    behaviour: Behaviour,
    fresh_b: impl Fn() -> Link<F>,
) -> Outcome {
    let modulus = pair.links[0].modulus();
    let path = match behaviour {
        Behaviour::Duplicate => Some(Impairment {
            duplicate: 0.2,
            ..Impairment::default()
        }),
        Behaviour::ReorderAndDuplicate => Some(Impairment {
            duplicate: 0.1,
            reorder: 0.2,
            reorder_delay: Duration::from_millis(400),
            ..Impairment::default()
        }),
        _ => None,
    };
    if let Some(impairment) = path {
        for line in &mut pair.line {
            line.impairment = impairment;
        }
    } else {
        let own = pair.links[1].framing().clone();
        let other = pair.links[0].framing().clone();
        pair.tamper = Some(Box::new(Hostile::new(behaviour, own, other, modulus)));
    }
    pair.connect();
    for n in 0..UNITS {
        pair.a().send(unit(n)).unwrap();
        if behaviour.both_ways() {
            pair.b().send(unit(n)).unwrap();
        }
    }
    let config = pair.links[0].config().clone();
    let mut outcome = Outcome {
        events: Vec::new(),
        b_events: Vec::new(),
        at_b: vec![Vec::new()],
        at_a: Vec::new(),
        progress: Vec::new(),
        a_sent: Vec::new(),
        a_received: Vec::new(),
        owed_answers: Vec::new(),
        a_finals: Vec::new(),
        max_t1v: Duration::ZERO,
        max_k: 0,
        max_n2: 0,
        t1_min: config.t1_min,
        t1_max: config.t1_max,
        t2: config.t2,
        both_ways: behaviour.both_ways(),
        end: Instant::ZERO,
        log: String::new(),
    };
    let (mut va, mut down_since, mut restarted) = (0, None, false);
    let end = pair.now + DEADLINE;
    while pair.now < end {
        if !pair.step() {
            break;
        }
        let now = pair.now;
        let a = &pair.links[0];
        outcome.max_t1v = outcome.max_t1v.max(a.t1v());
        outcome.max_k = outcome.max_k.max(a.params().k_tx);
        outcome.max_n2 = outcome.max_n2.max(a.params().n2);
        let (_, new_va, _) = a.sequence_variables();
        if new_va != va {
            va = new_va;
            outcome.progress.push(now);
        }
        for event in pair.take_events(Side::A) {
            if let Event::Data { data, .. } = &event {
                outcome.at_a.push(number(data));
                outcome.progress.push(now);
            }
            outcome.events.push((now, event));
        }
        for event in pair.take_events(Side::B) {
            if let Event::Data { data, .. } = &event {
                outcome.at_b.last_mut().unwrap().push(number(data));
            }
            outcome.b_events.push(event);
        }
        if behaviour == Behaviour::ResetMidTransfer && !restarted && outcome.at_b[0].len() >= 5 {
            restarted = true;
            let mut b = fresh_b();
            b.set_accept_incoming(true);
            b.connect(now).unwrap();
            pair.links[1] = b;
            outcome.at_b.push(Vec::new());
        }
        let a = &pair.links[0];
        if a.state() == State::Disconnected {
            let since = *down_since.get_or_insert(now);
            if now - since > AFTERMATH {
                break;
            }
        } else {
            down_since = None;
        }
        let done = outcome.delivered() && a.unacked() == 0 && a.queued() == 0;
        if done && (!behaviour.both_ways() || pair.links[1].unacked() == 0) {
            break;
        }
    }
    outcome.end = pair.now;
    outcome.a_sent = pair.on_air[0].clone();
    let b_framing = pair.links[1].framing().clone();
    for (at, frame) in &pair.sent[0] {
        if b_framing
            .decode(frame)
            .is_some_and(|pdu| !pdu.command && pdu.pf())
        {
            outcome.a_finals.push(*at);
        }
    }
    let connected = |s| matches!(s, State::Connected | State::TimerRecovery);
    for arrival in &pair.arrivals[0] {
        outcome.a_received.push(arrival.at);
        if arrival.poll && connected(arrival.state) && connected(arrival.after) {
            outcome.owed_answers.push(arrival.at);
        }
    }
    outcome.log = pair.dump();
    outcome
}
