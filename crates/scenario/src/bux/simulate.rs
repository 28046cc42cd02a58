//! One simulated data link of Bux, Kümmerle and Truong (1982), section 2
//! and Fig. 1: two HDLC stations ([`HdlcLink`], the real engine) on a
//! full-duplex [`PointToPointLine`] with transmission rate v, delay t_p and
//! independent bit errors p_bit, driven by the sim [`EventQueue`] in
//! virtual time.
//!
//! Station 0 is the primary in NRM (a combined station, the LAPB DTE, in
//! ABM), station 1 the secondary (the DCE). Each station's messages come
//! from a [`Traffic`] source into an unlimited send buffer and leave first
//! come, first served, one message per I frame.
//!
//! # The wiring
//! A station hands the line one frame at a time, when its transmitter is
//! free (its previous frame's last bit went out): the frame, with its
//! N(R) and P/F bit, is built at the moment it starts, as a real HDLC
//! station builds it, so an acknowledgement is never stale behind a queue
//! of I frames. Intact deliveries are decoded and given to the other
//! engine; damaged ones are dropped (the FCS check). Every component's
//! `poll_timeout` is one pending wake-up in the event queue.
//!
//! # What is measured (section 3)
//! - *Throughput*: information bits delivered correctly per unit time,
//!   relative to v, per time slice of the measured period.
//! - *Transfer time*: from a message's arrival at the sending station to
//!   its correct reception (in sequence, delivered) at the other one.
//! - *Buffer-holding time*: from a message's arrival to the sender's
//!   reception of the acknowledgement that frees its buffer.
//!
//! Every delivered message is checked against the sender's record: each is
//! delivered exactly once, in order, with its length and its number.

use core::time::Duration;
use linklab_core::{Engine, Instant, Stream, Streams};
use std::collections::VecDeque;

use linklab_channel::{ErrorModel, LineConfig, Medium, MediumEvent, PointToPointLine, StationId};
use linklab_link::{
    AckPolicy, Config, Event, HdlcAddressing, HdlcLink, Mode, PollPolicy, RecoveryMode, Role,
    State, T1Backoff, T1OnIFrame, WindowLimit,
};
use linklab_sim::{drive, DriveError, EventId, EventQueue, World};
use linklab_wire::control::{Control, Modulus};
use linklab_wire::lapb::{self, Frame, LinkProcedure, Station};

use super::BuxError;

/// The HDLC mode of operation compared (section 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Procedure {
    /// Normal response mode: station 0 primary, station 1 secondary.
    Nrm,
    /// Asynchronous balanced mode: two combined stations.
    Abm,
    /// Asynchronous response mode: station 0 primary, station 1 a
    /// secondary that sends without waiting for a poll (Appendix A2).
    Arm,
}

impl Procedure {
    /// "NRM" or "ABM".
    pub fn name(self) -> &'static str {
        match self {
            Procedure::Nrm => "NRM",
            Procedure::Abm => "ABM",
            Procedure::Arm => "ARM",
        }
    }
}

/// Message lengths (section 2: constant l, or exponential with mean l).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MessageLength {
    /// Every message `bits` long (rounded up to whole octets).
    Constant {
        /// l, bits.
        bits: u32,
    },
    /// Exponentially distributed with mean `mean_bits`, each rounded up to
    /// whole octets and cut at [`MAX_MESSAGE_OCTETS`].
    Exponential {
        /// Mean l, bits.
        mean_bits: u32,
    },
}

impl MessageLength {
    /// The nominal mean length l, bits.
    pub fn mean_bits(self) -> u32 {
        match self {
            MessageLength::Constant { bits } => bits,
            MessageLength::Exponential { mean_bits } => mean_bits,
        }
    }

    fn draw_octets(self, stream: &mut Stream) -> usize {
        let bits = match self {
            MessageLength::Constant { bits } => f64::from(bits),
            MessageLength::Exponential { mean_bits } => stream.exponential(f64::from(mean_bits)),
        };
        ((bits / 8.0).ceil() as usize).clamp(1, MAX_MESSAGE_OCTETS)
    }
}

/// The longest information field the engine accepts (N1 = 2048 octets,
/// 16384 bits), and so the longest message.
pub const MAX_MESSAGE_OCTETS: usize = 2048;

/// What one station offers to send.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Traffic {
    /// No I frames (the reverse channel of one-way flow).
    Silent,
    /// Information to send at any time (maximum throughput, section 3).
    Saturated,
    /// Poisson arrivals of messages at a mean rate (transfer time).
    Poisson {
        /// Mean arrivals per second.
        messages_per_s: f64,
    },
}

/// One simulated link: the line, the procedure and the traffic.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkRun {
    /// NRM or ABM.
    pub procedure: Procedure,
    /// Modulus of the sequence numbers; the window is M − 1.
    pub modulus: Modulus,
    /// Transmission rate v, bit/s.
    pub bit_rate_bps: u32,
    /// Processing plus propagation delay t_p.
    pub t_p: Duration,
    /// Independent bit-error probability p_bit.
    pub p_bit: f64,
    /// Message lengths (both stations).
    pub length: MessageLength,
    /// Traffic offered by station 0 (primary or combined A) and station 1
    /// (secondary or combined B).
    pub traffic: [Traffic; 2],
    /// The time-out T1 (the paper gives no value; see [`LinkRun::default_t1`]).
    pub t1: Duration,
    /// The measured period, after the link is set up.
    pub measured: Duration,
    /// Number of equal slices of the measured period in the throughput
    /// series.
    pub slices: usize,
    /// What the NRM primary does with its window full (section 3.1.3:
    /// the paper's runs withhold acknowledgements).
    pub window_limit: WindowLimit,
}

impl LinkRun {
    /// T1 used when none is given: 2 t_p, a supervisory frame and four
    /// I-frame times of the longest likely message (l if constant; the
    /// 99.9% quantile, 6.9 l, if exponential; at most N1). Bux et al. give
    /// no value, only that time-out recovery starts "after a relatively
    /// short delay" (section 3.1.3). This is just over the longest time an
    /// acknowledgement takes on an error-free line in two-way flow (the I
    /// frame, t_p, a reverse I frame in progress and the one carrying
    /// N(R), t_p: three I frames), with one I frame to spare, so that T1
    /// seldom expires needlessly: a needless expiry
    /// sends again frames still in flight, and their duplicates draw REJs.
    pub fn default_t1(bit_rate_bps: u32, t_p: Duration, length: MessageLength) -> Duration {
        let longest = match length {
            MessageLength::Constant { bits } => f64::from(bits),
            MessageLength::Exponential { mean_bits } => f64::from(mean_bits) * 1000f64.ln(),
        }
        .min((MAX_MESSAGE_OCTETS * 8) as f64);
        let i_frame = i_frame_bits(longest.ceil() as u32, Modulus::Mod128);
        t_p * 2 + linklab_channel::bits_duration(4 * i_frame + S_FRAME_BITS_MOD128, bit_rate_bps)
    }
}

/// Line bits of an I frame with `bits` of information on the simulated
/// line (address, control, FCS and one shared flag, no stuffing): 40 + l
/// with modulo 8, 48 + l with modulo 128. Bux et al. count 48 + l with
/// two flags (Fig. 12a).
pub fn i_frame_bits(bits: u32, modulus: Modulus) -> u64 {
    u64::from(bits) + frame_overhead_bits(modulus)
}

/// Address, control, FCS and one flag: 40 bits (modulo 8), 48 (modulo 128).
pub fn frame_overhead_bits(modulus: Modulus) -> u64 {
    match modulus {
        Modulus::Mod8 => 40,
        Modulus::Mod128 => 48,
    }
}

const S_FRAME_BITS_MOD128: u64 = 48;

/// What one direction of the link measured (index = sending station).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Direction {
    /// Information bits delivered per slice over v × slice length.
    pub throughput: Vec<f64>,
    /// Transfer time of each message that arrived in the measured period
    /// and was delivered before its end, s, in order.
    pub transfer_s: Vec<f64>,
    /// Buffer-holding time of each such message acknowledged before the
    /// end, s, in order.
    pub holding_s: Vec<f64>,
    /// Messages delivered in the measured period.
    pub delivered: u64,
    /// I frames sent in the measured period (retransmissions included).
    pub i_frames: u64,
    /// Frames of this direction lost to bit errors in the measured period.
    pub lost: u64,
}

/// What one run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// By sending station: 0 (primary or A), 1 (secondary or B).
    pub directions: [Direction; 2],
    /// Frames the line carried in the whole run (both directions).
    pub frames: u64,
}

/// What the event queue wakes up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wake {
    Line,
    Engine(usize),
    Arrival(usize),
}

/// A message the sender has been given and not yet seen acknowledged.
#[derive(Debug, Clone, Copy)]
struct Sent {
    number: u64,
    octets: usize,
    arrival: Instant,
    /// Arrived in the measured period.
    measured: bool,
}

/// One direction's bookkeeping.
#[derive(Debug, Default)]
struct Flow {
    /// Messages given to the sender and not yet delivered, oldest first.
    undelivered: VecDeque<Sent>,
    /// Messages given to the sender and not yet acknowledged, oldest first.
    unacknowledged: VecDeque<Sent>,
    /// Messages given to the sending engine so far.
    offered: u64,
    /// Messages the sender has seen acknowledged so far.
    acknowledged: u64,
    out: Direction,
}

struct Sim<'a> {
    run: &'a LinkRun,
    queue: EventQueue<Wake>,
    line: PointToPointLine,
    links: [HdlcLink; 2],
    /// Pending wake-up of the line (0) and the engines (1, 2).
    wakes: [Option<(Instant, EventId)>; 3],
    /// A station's transmitter is sending a frame.
    sending: [bool; 2],
    flows: [Flow; 2],
    lengths: [Stream; 2],
    arrivals: [Stream; 2],
    start: Instant,
    end: Instant,
    slice: Duration,
    frames: u64,
    /// What the run is waiting for.
    goal: Goal,
    /// The goal was met when the world last settled.
    reached: bool,
    /// The first error, which ends the run.
    failed: Option<BuxError>,
}

/// What a phase of the run waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Goal {
    /// Both stations connected.
    Connected,
    /// No event left before the end of the measured span.
    End,
}

/// The event queue is the clock: every component's wake-up is an event in
/// it (see `rearm`), and [`drive`] pops them one at a time, in time and
/// then insertion order.
impl World for Sim<'_> {
    fn settle(&mut self, now: Instant) {
        if self.failed.is_none() {
            if let Err(e) = Sim::settle(self, now) {
                self.failed = Some(e);
            }
        }
        self.reached = match self.goal {
            Goal::Connected => self.links.iter().all(|l| l.state() == State::Connected),
            Goal::End => self.queue.peek_time().is_none_or(|t| t > self.end),
        };
    }

    fn done(&self) -> bool {
        self.failed.is_some() || self.reached
    }

    fn next_wake(&mut self, _now: Instant) -> Option<Instant> {
        self.queue.peek_time()
    }

    fn advance(&mut self, _to: Instant) {
        if let Err(e) = self.handle_next() {
            self.failed = Some(e);
        }
    }
}

/// Simulates `run` with the random streams `streams` (line errors,
/// arrivals, lengths). Deterministic for given streams.
pub fn simulate(run: &LinkRun, streams: &Streams) -> Result<Measured, BuxError> {
    let mut sim = Sim::new(run, streams)?;
    let _ = sim.links[0].connect(Instant::ZERO); // primary or combined: always honoured
    sim.run_until(
        Goal::Connected,
        Instant::ZERO,
        Instant::from_micros(u64::MAX),
    )?;
    sim.start = sim.queue.now();
    sim.end = sim.start + run.measured;
    for station in 0..2 {
        match run.traffic[station] {
            Traffic::Saturated => sim.refill(station, sim.start),
            Traffic::Poisson { .. } => sim.schedule_arrival(station),
            Traffic::Silent => {}
        }
    }
    sim.run_until(Goal::End, sim.start, sim.end)?;
    let frames = sim.frames;
    let capacity = f64::from(run.bit_rate_bps) * sim.slice.as_secs_f64();
    let [mut a, mut b] = sim.flows;
    for flow in [&mut a, &mut b] {
        for bits in &mut flow.out.throughput {
            *bits /= capacity;
        }
    }
    Ok(Measured {
        directions: [a.out, b.out],
        frames,
    })
}

impl<'a> Sim<'a> {
    fn new(run: &'a LinkRun, streams: &Streams) -> Result<Sim<'a>, BuxError> {
        if !(0.0..1.0).contains(&run.p_bit) {
            return Err(BuxError::BitErrorProbability { p_bit: run.p_bit });
        }
        let errors = if run.p_bit > 0.0 {
            ErrorModel::Independent { ber: run.p_bit }
        } else {
            ErrorModel::Perfect
        };
        let line = PointToPointLine::new(
            LineConfig {
                bit_rate: run.bit_rate_bps,
                delay: run.t_p,
                errors,
            },
            streams,
            "line",
        );
        let links = stations(run)?;
        let slices = run.slices.max(1);
        Ok(Sim {
            run,
            queue: EventQueue::new(),
            line,
            links,
            wakes: [None; 3],
            sending: [false; 2],
            flows: [(); 2].map(|()| Flow {
                out: Direction {
                    throughput: vec![0.0; slices],
                    ..Direction::default()
                },
                ..Flow::default()
            }),
            lengths: [streams.stream("lengths/0"), streams.stream("lengths/1")],
            arrivals: [streams.stream("arrivals/0"), streams.stream("arrivals/1")],
            start: Instant::from_micros(u64::MAX),
            end: Instant::from_micros(u64::MAX),
            slice: run.measured / u32::try_from(slices).unwrap_or(u32::MAX),
            frames: 0,
            goal: Goal::Connected,
            reached: false,
            failed: None,
        })
    }

    /// Runs from `start` until `goal`, no later than `until`.
    fn run_until(&mut self, goal: Goal, start: Instant, until: Instant) -> Result<(), BuxError> {
        self.goal = goal;
        let outcome = drive(self, start, until);
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        outcome.map(|_| ()).map_err(|e| BuxError::Stalled {
            phase: match goal {
                Goal::Connected => "link set-up",
                Goal::End => "measurement",
            },
            at_us: match e {
                DriveError::Stalled { at }
                | DriveError::Livelock { at }
                | DriveError::Horizon { at, .. } => at.as_micros(),
            },
        })
    }

    fn measuring(&self, now: Instant) -> bool {
        now >= self.start && now < self.end
    }

    /// Pops the next event and handles it (the [`World::settle`] that
    /// follows moves what it set off).
    fn handle_next(&mut self) -> Result<(), BuxError> {
        let Some((now, wake)) = self.queue.pop() else {
            return Ok(());
        };
        match wake {
            Wake::Line => {
                self.wakes[0] = None;
                self.line.handle_timeout(now);
            }
            Wake::Engine(i) => {
                self.wakes[i + 1] = None;
                self.links[i].handle_timeout(now);
            }
            Wake::Arrival(i) => {
                self.offer(i, now)?;
                self.schedule_arrival(i);
            }
        }
        Ok(())
    }

    fn schedule_arrival(&mut self, station: usize) {
        if let Traffic::Poisson { messages_per_s } = self.run.traffic[station] {
            if messages_per_s > 0.0 {
                let gap = self.arrivals[station].exponential(1e6 / messages_per_s);
                let gap = Duration::from_micros(gap.round() as u64);
                self.queue.schedule_after(gap, Wake::Arrival(station));
            }
        }
    }

    /// A new message arrives at `station`'s send buffer.
    fn offer(&mut self, station: usize, now: Instant) -> Result<(), BuxError> {
        let octets = self.run.length.draw_octets(&mut self.lengths[station]);
        let measured = self.measuring(now);
        let flow = &mut self.flows[station];
        let number = flow.offered;
        let message = Sent {
            number,
            octets,
            arrival: now,
            measured,
        };
        self.links[station].send(payload(number, octets))?;
        flow.offered += 1;
        flow.undelivered.push_back(message);
        flow.unacknowledged.push_back(message);
        Ok(())
    }

    /// Keeps a saturated station's send buffer from running dry.
    fn refill(&mut self, station: usize, now: Instant) {
        if self.run.traffic[station] == Traffic::Saturated {
            while self.links[station].queued() < 2 {
                if self.offer(station, now).is_err() {
                    break;
                }
            }
        }
    }

    /// Moves frames between engines and line until all is quiet at `now`,
    /// then re-arms the wake-ups.
    fn settle(&mut self, now: Instant) -> Result<(), BuxError> {
        loop {
            let mut busy = false;
            for i in 0..2 {
                if !self.sending[i] {
                    if let Some(frame) = self.links[i].poll_transmit(now) {
                        if self.measuring(now) && matches!(frame.control(), Control::I { .. }) {
                            self.flows[i].out.i_frames += 1;
                        }
                        self.line.transmit(now, StationId(i), frame.encode());
                        self.sending[i] = true;
                        self.frames += 1;
                        busy = true;
                    }
                }
                self.refill(i, now);
            }
            while let Some(event) = self.line.poll_event() {
                if let MediumEvent::FrameSent { station, .. } = event {
                    if let Some(s) = self.sending.get_mut(station.0) {
                        *s = false;
                    }
                    busy = true;
                }
            }
            while let Some(delivery) = self.line.poll_delivery() {
                busy = true;
                let to = delivery.to.0;
                if !delivery.is_intact() {
                    if self.measuring(delivery.at) {
                        self.flows[1 - to].out.lost += 1;
                    }
                    continue;
                }
                let link = &mut self.links[to];
                if let Ok(frame) = Frame::decode(&delivery.frame, link.modulus()) {
                    link.handle_frame(delivery.at, &frame);
                }
            }
            for i in 0..2 {
                while let Some(event) = self.links[i].poll_event() {
                    busy = true;
                    self.on_event(i, now, event)?;
                }
                self.check_acknowledged(i, now);
            }
            if !busy {
                break;
            }
        }
        if self.start <= now {
            for link in &self.links {
                if !matches!(link.state(), State::Connected | State::TimerRecovery) {
                    return Err(BuxError::LinkLost {
                        state: link.state().describe(),
                        at_us: now.as_micros(),
                    });
                }
            }
        }
        self.rearm(now);
        Ok(())
    }

    /// An engine's event: data delivered to station `to`'s user.
    fn on_event(&mut self, to: usize, now: Instant, event: Event) -> Result<(), BuxError> {
        let Event::Data { data, .. } = event else {
            return match event {
                Event::LinkFailure { reason } => Err(BuxError::LinkFailed {
                    reason: format!("{reason:?}"),
                    at_us: now.as_micros(),
                }),
                _ => Ok(()),
            };
        };
        let from = 1 - to;
        let measuring = self.measuring(now);
        let start = self.start;
        let slice = self.slice;
        let flow = &mut self.flows[from];
        let Some(expected) = flow.undelivered.pop_front() else {
            return Err(BuxError::Delivery {
                from,
                expected: None,
                octets: data.len(),
            });
        };
        if data.len() != expected.octets || data != payload(expected.number, expected.octets) {
            return Err(BuxError::Delivery {
                from,
                expected: Some(expected.number),
                octets: data.len(),
            });
        }
        if measuring {
            let out = &mut flow.out;
            out.delivered += 1;
            let k = slice_index(now, start, slice, out.throughput.len());
            if let Some(bits) = out.throughput.get_mut(k) {
                *bits += 8.0 * data.len() as f64;
            }
            if expected.measured {
                out.transfer_s.push((now - expected.arrival).as_secs_f64());
            }
        }
        Ok(())
    }

    /// Messages the sender at `station` now knows acknowledged: all but
    /// those still queued or sent and unacknowledged (acknowledgement is
    /// cumulative and messages leave in order).
    fn check_acknowledged(&mut self, station: usize, now: Instant) {
        let link = &self.links[station];
        let pending = (link.queued() + link.unacked()) as u64;
        let measuring = self.measuring(now);
        let flow = &mut self.flows[station];
        let acknowledged = flow.offered.saturating_sub(pending);
        while flow.acknowledged < acknowledged {
            flow.acknowledged += 1;
            if let Some(message) = flow.unacknowledged.pop_front() {
                if measuring && message.measured {
                    flow.out
                        .holding_s
                        .push((now - message.arrival).as_secs_f64());
                }
            }
        }
    }

    /// Keeps exactly one pending wake-up per component at its
    /// `poll_timeout`.
    fn rearm(&mut self, now: Instant) {
        let wanted = [
            self.line.poll_timeout(),
            self.links[0].poll_timeout(),
            self.links[1].poll_timeout(),
        ];
        for (slot, (want, wake)) in wanted
            .into_iter()
            .zip([Wake::Line, Wake::Engine(0), Wake::Engine(1)])
            .enumerate()
        {
            self.queue.keep_wake(&mut self.wakes[slot], want, now, wake);
        }
    }
}

fn slice_index(now: Instant, start: Instant, slice: Duration, slices: usize) -> usize {
    let since = (now - start).as_micros();
    let width = slice.as_micros().max(1);
    usize::try_from(since / width)
        .unwrap_or(usize::MAX)
        .min(slices.saturating_sub(1))
}

/// The information field of message `number`: its number in the low
/// nibbles of the first eight octets (so no run of five 1 bits, and no
/// bit stuffing), zeros after.
fn payload(number: u64, octets: usize) -> Vec<u8> {
    let mut data = vec![0u8; octets];
    for (i, octet) in data.iter_mut().take(8).enumerate() {
        *octet = ((number >> (4 * i)) & 0x0f) as u8;
    }
    data
}

/// The two engines: the NRM primary and secondary, or two combined
/// stations (LAPB DTE and DCE) in ABM.
fn stations(run: &LinkRun) -> Result<[HdlcLink; 2], BuxError> {
    let base = Config {
        modulus: run.modulus,
        window_mod8: 7,
        window_mod128: 127,
        n1: MAX_MESSAGE_OCTETS,
        n2: 255,
        t1: run.t1,
        t1_adaptive: false,
        t1_backoff: T1Backoff::Constant,
        t1_on_i_frame: T1OnIFrame::StartIfStopped,
        t1_min: run.t1,
        t1_max: run.t1,
        t3: Duration::from_secs(24 * 3600),
        recovery: RecoveryMode::Rej,
        poll_on_last_i_frame: false,
        ack_policy: AckPolicy::Immediately,
        xid: false,
        poll_policy: PollPolicy::SupervisoryAtOnce,
        poll_interval: Duration::from_micros(1),
        nrm_primary_at_window_limit: run.window_limit,
        ..Config::default()
    };
    const SECONDARY: lapb::Address = lapb::Address(0x03);
    let unbalanced = |mode| {
        (
            mode,
            [Role::Primary, Role::Secondary],
            [Station::Primary, Station::Secondary].map(|station| HdlcAddressing::Unbalanced {
                station,
                secondary: SECONDARY,
            }),
        )
    };
    let (mode, roles, addressing) = match run.procedure {
        Procedure::Nrm => unbalanced(Mode::Nrm),
        Procedure::Arm => unbalanced(Mode::Arm),
        Procedure::Abm => (
            Mode::Abm,
            [Role::Combined, Role::Combined],
            [lapb::Role::Dte, lapb::Role::Dce].map(|role| HdlcAddressing::Lapb {
                role,
                procedure: LinkProcedure::SingleLink,
            }),
        ),
    };
    let make = |i: usize| {
        HdlcLink::new(
            Config {
                mode,
                role: roles[i],
                ..base.clone()
            },
            addressing[i],
        )
    };
    let a = make(0)?;
    let mut b = make(1)?;
    b.set_accept_incoming(true);
    Ok([a, b])
}
