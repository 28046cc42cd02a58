//! The timer, checkpoint and acknowledgement rules that Bux, Kümmerle and
//! Truong (1982) give for NRM and ABM (Appendix A1.3, section 3.1.3),
//! checked on a bare full-duplex line: every frame takes 10 ms to send
//! and 20 ms to arrive, and the transmitter is never reported busy, so T1
//! runs exactly as the engine sets it.

use linklab_core::{Engine, Instant};
use std::collections::VecDeque;
use std::time::Duration;

use linklab_link::{
    AckPolicy, Config, HdlcAddressing, HdlcLink, Mode, PollPolicy, RecoveryMode, Role, State,
    T1OnIFrame, WindowLimit,
};
use linklab_wire::control::{Control, Modulus, Supervisory};
use linklab_wire::lapb::{Address, Frame, LinkProcedure, Role as LapbRole, Station};

const FRAME_TIME: Duration = Duration::from_millis(10);
const DELAY: Duration = Duration::from_millis(20);
const T1: Duration = Duration::from_millis(500);

type Dropper = Box<dyn FnMut(usize, &Frame) -> bool>;

/// Two stations (0: primary or DTE, 1: secondary or DCE) on the line.
struct Line {
    links: [HdlcLink; 2],
    now: Instant,
    free: [Instant; 2],
    in_flight: VecDeque<(Instant, usize, Vec<u8>)>,
    /// Frames sent by each station, with the time they started.
    sent: [Vec<(Instant, Frame)>; 2],
    drop: Dropper,
}

impl Line {
    fn new(mode: Mode, modulus: Modulus, tweak: impl Fn(&mut Config)) -> Line {
        let mut base = Config {
            modulus,
            window_mod128: 127,
            recovery: RecoveryMode::Rej,
            t1: T1,
            t1_adaptive: false,
            t1_min: T1,
            t1_max: T1,
            ack_policy: AckPolicy::Immediately,
            poll_policy: PollPolicy::AsOftenAsPossible,
            poll_interval: Duration::from_micros(1),
            xid: false,
            mode,
            ..Config::default()
        };
        tweak(&mut base);
        let secondary = Address(0x21);
        let (roles, addressing) = match mode {
            Mode::Abm => (
                [Role::Combined; 2],
                [LapbRole::Dte, LapbRole::Dce].map(|role| HdlcAddressing::Lapb {
                    role,
                    procedure: LinkProcedure::SingleLink,
                }),
            ),
            _ => (
                [Role::Primary, Role::Secondary],
                [Station::Primary, Station::Secondary]
                    .map(|station| HdlcAddressing::Unbalanced { station, secondary }),
            ),
        };
        let make = |i: usize| {
            let config = Config {
                role: roles[i],
                ..base.clone()
            };
            HdlcLink::new(config, addressing[i]).unwrap()
        };
        let mut b = make(1);
        b.set_accept_incoming(true);
        let mut line = Line {
            links: [make(0), b],
            now: Instant::ZERO,
            free: [Instant::ZERO; 2],
            in_flight: VecDeque::new(),
            sent: [Vec::new(), Vec::new()],
            drop: Box::new(|_, _| false),
        };
        line.links[0].connect(Instant::ZERO).unwrap();
        line.run_until(Duration::from_secs(5), |l| {
            l.links.iter().all(|x| x.state() == State::Connected)
        });
        line
    }

    fn transmit(&mut self) {
        for i in 0..2 {
            while self.free[i] <= self.now {
                let Some(frame) = self.links[i].poll_transmit(self.now) else {
                    break;
                };
                let end = self.now.max(self.free[i]) + FRAME_TIME;
                self.free[i] = end;
                if !(self.drop)(i, &frame) {
                    self.in_flight
                        .push_back((end + DELAY, 1 - i, frame.encode()));
                }
                self.sent[i].push((self.now, frame));
            }
        }
    }

    fn step(&mut self) -> bool {
        self.transmit();
        let next = [
            self.in_flight.iter().map(|f| f.0).min(),
            (self.free[0] > self.now).then_some(self.free[0]),
            (self.free[1] > self.now).then_some(self.free[1]),
            self.links[0].poll_timeout(),
            self.links[1].poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(t) = next else { return false };
        self.now = self.now.max(t);
        while let Some(pos) = self.in_flight.iter().position(|f| f.0 <= self.now) {
            let (_, to, bytes) = self.in_flight.remove(pos).unwrap();
            let link = &mut self.links[to];
            let frame = Frame::decode(&bytes, link.modulus()).unwrap();
            link.handle_frame(self.now, &frame);
            self.transmit();
        }
        for link in &mut self.links {
            if link.poll_timeout().is_some_and(|t| t <= self.now) {
                link.handle_timeout(self.now);
            }
        }
        true
    }

    fn run_until(&mut self, limit: Duration, done: impl Fn(&Line) -> bool) -> bool {
        let end = self.now + limit;
        while !done(self) {
            if self.now > end || !self.step() {
                return false;
            }
        }
        true
    }

    fn queue(&mut self, station: usize, messages: usize) {
        for i in 0..messages {
            self.links[station].send(vec![i as u8; 20]).unwrap();
        }
    }

    fn delivered(&self) -> bool {
        self.links
            .iter()
            .all(|l| l.queued() == 0 && l.unacked() == 0)
    }

    fn i_frames(&self, station: usize) -> usize {
        self.sent[station]
            .iter()
            .filter(|(_, f)| matches!(f.control(), Control::I { .. }))
            .count()
    }

    /// Start of the first RR with P = 1 `station` sent after `after`.
    fn enquiry_after(&self, station: usize, after: Instant) -> Option<Instant> {
        self.sent[station].iter().find_map(|(t, f)| {
            let rr = matches!(
                f.control(),
                Control::S {
                    kind: Supervisory::Rr,
                    pf: true,
                    ..
                }
            );
            (rr && *t > after).then_some(*t)
        })
    }
}

/// T1 expired and the enquiry went out when the frame being sent ended.
fn assert_within_a_frame_after_t1(waited: Duration) {
    assert!((T1..=T1 + FRAME_TIME).contains(&waited), "{waited:?}");
}

/// Annex B as Bux et al. quote it: an NRM primary's T1 runs from its P = 1
/// and is restarted only by frames received with F = 0, not by the I
/// frames it goes on sending. A lost poll is queried T1 after it.
#[test]
fn nrm_primary_t1_times_the_poll_not_its_i_frames() {
    let mut line = Line::new(Mode::Nrm, Modulus::Mod128, |_| {});
    let mut lost = None;
    line.queue(0, 120);
    line.drop = Box::new(move |i, f| {
        let hit = i == 0 && lost.is_none() && matches!(f.control(), Control::I { pf: true, .. });
        if hit {
            lost = Some(());
        }
        hit
    });
    let polled = line.now;
    assert!(line.run_until(Duration::from_secs(60), Line::delivered));
    let poll = line.sent[0]
        .iter()
        .find(|(t, f)| *t >= polled && matches!(f.control(), Control::I { pf: true, .. }))
        .map(|(t, _)| *t)
        .unwrap();
    let enquiry = line.enquiry_after(0, poll).unwrap();
    // The primary sent I frames for longer than T1 after the lost poll.
    assert!(line.sent[0]
        .iter()
        .any(|(t, f)| matches!(f.control(), Control::I { .. }) && *t > poll + T1 * 2));
    assert_within_a_frame_after_t1(enquiry - poll);
}

/// Bux et al. A1.3, ABM: T1 starts with an I frame only if it is not
/// running, so with every acknowledgement lost the enquiry comes T1 after
/// the first I frame however many follow; the AX.25 erratum (restart on
/// every I frame) waits T1 after the last one.
#[test]
fn abm_t1_started_if_stopped_is_not_pushed_back_by_later_i_frames() {
    for (rule, after_last) in [
        (T1OnIFrame::StartIfStopped, false),
        (T1OnIFrame::Restart, true),
    ] {
        let mut line = Line::new(Mode::Abm, Modulus::Mod128, |c| c.t1_on_i_frame = rule);
        line.drop = Box::new(|i, _| i == 1);
        let start = line.now;
        line.queue(0, 100);
        line.run_until(Duration::from_secs(3), |l| {
            l.enquiry_after(0, start).is_some()
        });
        let first = line.sent[0]
            .iter()
            .find(|(t, _)| *t >= start)
            .map(|(t, _)| *t)
            .unwrap();
        let enquiry = line.enquiry_after(0, start).unwrap();
        let last_i = line.sent[0]
            .iter()
            .filter(|(t, f)| *t < enquiry && matches!(f.control(), Control::I { .. }))
            .map(|(t, _)| *t)
            .max()
            .unwrap();
        let expected = if after_last { last_i } else { first };
        let waited = enquiry - expected;
        assert!(
            (T1..=T1 + FRAME_TIME).contains(&waited),
            "{rule:?}: {waited:?}"
        );
    }
}

/// The NRM checkpoint answers for the frames sent before the poll only:
/// with both stations sending full modulo-8 windows on a clean line, an
/// old checkpoint whose V(S) has come round again must not be mistaken
/// for a new one, so no I frame is ever sent twice.
#[test]
fn nrm_checkpoint_survives_sequence_number_wrap() {
    let mut line = Line::new(Mode::Nrm, Modulus::Mod8, |_| {});
    line.queue(0, 200);
    line.queue(1, 200);
    assert!(line.run_until(Duration::from_secs(120), Line::delivered));
    assert_eq!((line.i_frames(0), line.i_frames(1)), (200, 200));
}

/// Bux et al. 3.1.3: an NRM primary with its window full stops
/// acknowledging, so that a secondary with much to send reaches its own
/// limit and ends its transmission with F = 1.
#[test]
fn nrm_primary_withholds_acknowledgements_at_its_window_limit() {
    for ack_at_limit in [true, false] {
        let mut line = Line::new(Mode::Nrm, Modulus::Mod8, |c| {
            c.nrm_primary_at_window_limit = if ack_at_limit {
                WindowLimit::Acknowledge
            } else {
                WindowLimit::Withhold
            }
        });
        // The primary's I frames are lost, so its window fills and stays
        // full while the secondary goes on sending.
        line.drop = Box::new(|i, f| i == 0 && matches!(f.control(), Control::I { .. }));
        line.queue(0, 10);
        line.queue(1, 60);
        line.run_until(Duration::from_millis(1500), |_| false);
        let plain_rr = line.sent[0]
            .iter()
            .filter(|(_, f)| {
                matches!(
                    f.control(),
                    Control::S {
                        kind: Supervisory::Rr,
                        pf: false,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(plain_rr > 0, ack_at_limit, "{ack_at_limit}");
        assert_eq!(line.links[0].unacked(), 7);
    }
}

/// Bux et al. 3.1.3, the alternative: an NRM primary whose window fills
/// sends RNR, the secondary stops sending I frames and ends its
/// transmission with F = 1 at once; the primary discards I frames while
/// busy and sends RR once the checkpoint's acknowledgement opens its
/// window. Withholding acknowledgements instead lets the secondary go on
/// until its own window is full.
#[test]
fn nrm_primary_sends_rnr_at_its_window_limit() {
    let mut secondary_i_while_full = Vec::new();
    for limit in [WindowLimit::Withhold, WindowLimit::ReceiverNotReady] {
        let mut line = Line::new(Mode::Nrm, Modulus::Mod8, |c| {
            c.nrm_primary_at_window_limit = limit;
            c.poll_policy = PollPolicy::SupervisoryAtOnce;
        });
        // The primary's first seven I frames are lost, so its window fills.
        let mut lost = 0;
        line.drop = Box::new(move |i, f| {
            let hit = i == 0 && lost < 7 && matches!(f.control(), Control::I { .. });
            lost += usize::from(hit);
            hit
        });
        line.queue(0, 10);
        line.queue(1, 60);
        assert!(line.run_until(Duration::from_secs(60), Line::delivered));
        let kinds = |station: usize, kind: Supervisory| {
            line.sent[station]
                .iter()
                .filter(|(_, f)| matches!(f.control(), Control::S { kind: k, .. } if k == kind))
                .map(|(t, _)| *t)
                .collect::<Vec<_>>()
        };
        let rnr = kinds(0, Supervisory::Rnr);
        // The I frames the secondary started between the primary's
        // seventh I frame and the primary's first retransmission.
        let full = line.sent[0]
            .iter()
            .filter(|(_, f)| matches!(f.control(), Control::I { .. }))
            .map(|(t, _)| *t)
            .collect::<Vec<_>>();
        let (filled, resent) = (full[6], full[7]);
        let during = line.sent[1]
            .iter()
            .filter(|(t, f)| *t > filled && *t < resent && matches!(f.control(), Control::I { .. }))
            .count();
        secondary_i_while_full.push(during);
        match limit {
            WindowLimit::ReceiverNotReady => {
                // RNR right after the frame that filled the window, and RR
                // (no more RNR) once everything is acknowledged.
                assert_eq!(rnr.first(), Some(&(filled + FRAME_TIME)), "{rnr:?}");
                assert!(!kinds(0, Supervisory::Rr).is_empty());
            }
            _ => assert!(rnr.is_empty(), "{rnr:?}"),
        }
        assert_eq!((line.i_frames(0) >= 10, line.links[1].queued()), (true, 0));
    }
    // Withholding: the secondary fills its own window of 7 before F = 1;
    // RNR: it stops within the frame it was sending and the one after.
    assert!(secondary_i_while_full[0] >= 7, "{secondary_i_while_full:?}");
    assert!(secondary_i_while_full[1] <= 2, "{secondary_i_while_full:?}");
}

/// With [`PollPolicy::SupervisoryAtOnce`] every poll after the first goes
/// as an RR command with P = 1 as soon as the secondary's F = 1 is in,
/// even while the primary has I frames waiting; with
/// [`PollPolicy::AsOftenAsPossible`] the polls ride on those I frames.
#[test]
fn nrm_supervisory_polls_go_ahead_of_i_frames() {
    for (policy, supervisory) in [
        (PollPolicy::SupervisoryAtOnce, true),
        (PollPolicy::AsOftenAsPossible, false),
    ] {
        let mut line = Line::new(Mode::Nrm, Modulus::Mod8, |c| c.poll_policy = policy);
        let start = line.now;
        line.queue(0, 100);
        line.queue(1, 100);
        assert!(line.run_until(Duration::from_secs(60), Line::delivered));
        let polls: Vec<bool> = line.sent[0]
            .iter()
            .filter(|(t, f)| *t > start && f.control().pf())
            .map(|(_, f)| matches!(f.control(), Control::S { .. }))
            .collect();
        assert!(polls.len() > 5, "{policy:?}: {polls:?}");
        // While I frames wait, every poll is of the policy's kind.
        let busy = &polls[..polls.len() / 2];
        assert!(
            busy.iter().all(|&s| s == supervisory),
            "{policy:?}: {polls:?}"
        );
        assert_eq!(
            (line.i_frames(0), line.i_frames(1)),
            (100, 100),
            "{policy:?}"
        );
    }
}

/// A REJ with F = 1 answers the primary's poll, so it is the checkpoint
/// (A1.3): it must not start a second go-back from an N(R) the primary
/// already went back to after an earlier checkpoint, or the duplicates it
/// sends draw REJ after REJ. One lost I frame, wherever it falls, costs
/// one go-back: the frames sent in about one round trip (at most 7 with
/// modulo 8; here never more than 12).
#[test]
fn nrm_one_loss_costs_one_go_back() {
    for modulus in [Modulus::Mod8, Modulus::Mod128] {
        for lost in 3..40 {
            let mut line = Line::new(Mode::Nrm, modulus, |c| {
                c.poll_policy = PollPolicy::SupervisoryAtOnce
            });
            let mut count = 0;
            line.drop = Box::new(move |i, f| {
                if i != 0 || !matches!(f.control(), Control::I { .. }) {
                    return false;
                }
                count += 1;
                count == lost
            });
            line.queue(0, 120);
            assert!(line.run_until(Duration::from_secs(120), Line::delivered));
            let extra = line.i_frames(0) - 120;
            let most = if modulus == Modulus::Mod8 { 7 } else { 12 };
            assert!(
                (1..=most).contains(&extra),
                "{modulus:?}, I frame {lost} lost: {extra} sent again"
            );
        }
    }
}
