//! The probe's AX.25 station: it connects to the peer (SABM, AX.25 v2.2
//! 6.3.1), sends the plan's windows of I frames and times the answers,
//! sans-IO like the engines (frames and time in, frames and samples
//! out), so the same code runs over a real TNC and in the fit's virtual
//! replica ([`super::replica`]).
//!
//! It drives the sequence numbers itself rather than through the engine,
//! because the measurement needs what the engine decides on its own: how
//! many I frames go in one window, which carries P, and when the next
//! window starts. Each exchange sends `frames` I frames of `octets`
//! zero octets (no bit stuffing: the air time is exact), P on the last
//! if `poll`, and waits until they are all acknowledged (6.4.4): the
//! round trip runs from the first frame handed to the TNC to the
//! acknowledgement's arrival. A REJ or an acknowledgement of fewer
//! frames ends the exchange as lossy: the next window starts at the
//! peer's N(R), so frames that never arrived are not sent again (their
//! filler octets carry nothing). With no answer within the response
//! time it asks with RR P = 1 (6.4.11, the enquiry of timer recovery)
//! up to N2 times; the answer tells which frames arrived, and if all did,
//! the acknowledgement was lost. Between exchanges it waits a pause so
//! that the peer's transmitter has dropped before the next window.

use core::time::Duration;
use std::collections::VecDeque;

use linklab_core::Instant;
use linklab_wire::ax25::{same_station, Address, AddressField, CommandResponse, Frame, Pid};
use linklab_wire::control::{Control, Modulus, Supervisory, Unnumbered};
use serde::{Deserialize, Serialize};

/// One window the probe sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Exchange {
    /// I frames in the window, 1-7.
    pub frames: u8,
    /// Information octets per frame.
    pub octets: usize,
    /// P on the last frame: the peer answers at once (6.4.2.1); without
    /// it the peer acknowledges when its own policy says (T2).
    pub poll: bool,
}

/// What one exchange measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// The window sent.
    pub exchange: Exchange,
    /// From the first frame handed to the TNC to the acknowledgement of
    /// the last, when every frame and the first answer got through.
    pub round_trip: Option<Duration>,
    /// I frames acknowledged, from the first of the window: they
    /// arrived intact.
    pub frames_through: u8,
    /// I frames of the window not acknowledged: the first of them was
    /// lost; the others may have been, or were discarded as out of
    /// sequence (6.4.7).
    pub frames_lost: u8,
    /// The window arrived whole but its acknowledgement did not (an
    /// enquiry found it out).
    pub ack_lost: bool,
}

/// What the probe's station tells its driver.
#[derive(Debug, Clone, PartialEq)]
pub enum ProbeEvent {
    /// The peer answered SABM with UA.
    Connected,
    /// One exchange finished.
    Sample(Sample),
    /// The probe ended: the plan is done or it was stopped, and the link
    /// released (or given up on).
    Finished,
    /// The probe could not go on: no answer to SABM or to N2 enquiries,
    /// DM or FRMR from the peer.
    Failed(String),
}

/// How the probe runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeConfig {
    /// This station.
    pub local: Address,
    /// The peer.
    pub remote: Address,
    /// Digipeaters on the way, in order.
    pub via: Vec<Address>,
    /// The windows to send, in order.
    pub plan: Vec<Exchange>,
    /// How long to wait for an answer before asking again (T1).
    pub response_time: Duration,
    /// Tries of SABM, of an enquiry and of DISC (N2).
    pub tries: u8,
    /// Wait after an answer before the next window.
    pub pause: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// SABM sent, `tries` so far.
    Connecting {
        tries: u8,
    },
    /// Waiting until `until` before the next exchange.
    Pausing {
        until: Instant,
    },
    /// A window is out.
    Waiting {
        started: Instant,
        first_ns: u8,
        exchange: Exchange,
        /// Enquiries sent so far (the round trip is void once one is).
        enquiries: u8,
    },
    /// DISC sent, `tries` so far.
    Releasing {
        tries: u8,
    },
    Done,
}

/// The probe's AX.25 station (see the module documentation).
#[derive(Debug)]
pub struct Prober {
    config: ProbeConfig,
    state: State,
    /// Next exchange of the plan.
    next: usize,
    /// V(S): the next I frame's N(S).
    vs: u8,
    /// When the pending timer expires.
    deadline: Option<Instant>,
    outgoing: VecDeque<Frame>,
    events: VecDeque<ProbeEvent>,
    stopping: bool,
}

const MODULUS: u8 = 8;

impl Prober {
    /// A probe that starts by connecting at `now`.
    pub fn new(config: ProbeConfig, now: Instant) -> Prober {
        let mut p = Prober {
            config,
            state: State::Connecting { tries: 0 },
            next: 0,
            vs: 0,
            deadline: None,
            outgoing: VecDeque::new(),
            events: VecDeque::new(),
            stopping: false,
        };
        p.send_sabm(now);
        p
    }

    fn address(&self, cr: CommandResponse) -> AddressField {
        AddressField::new(self.config.remote, self.config.local, &self.config.via, cr)
            .expect("at most 8 digipeaters, checked by the driver")
    }

    fn send_u(&mut self, kind: Unnumbered) {
        let frame = Frame::u(
            self.address(CommandResponse::Command),
            Modulus::Mod8,
            kind,
            true,
            Vec::new(),
        )
        .expect("SABM and DISC carry no information");
        self.outgoing.push_back(frame);
    }

    fn send_sabm(&mut self, now: Instant) {
        let tries = match self.state {
            State::Connecting { tries } => tries + 1,
            _ => 1,
        };
        self.state = State::Connecting { tries };
        self.send_u(Unnumbered::Sabm);
        self.deadline = Some(now + self.config.response_time);
    }

    fn send_enquiry(&mut self) {
        let frame = Frame::s(
            self.address(CommandResponse::Command),
            Modulus::Mod8,
            Supervisory::Rr,
            0,
            true,
        )
        .expect("N(R) 0 is in range");
        self.outgoing.push_back(frame);
    }

    /// Starts the next exchange of the plan, or releases the link.
    fn next_exchange(&mut self, now: Instant) {
        let Some(&exchange) = self.config.plan.get(self.next).filter(|_| !self.stopping) else {
            self.release(now);
            return;
        };
        self.next += 1;
        let first_ns = self.vs;
        for i in 0..exchange.frames {
            let last = i + 1 == exchange.frames;
            let frame = Frame::i(
                self.address(CommandResponse::Command),
                Modulus::Mod8,
                self.vs,
                0,
                last && exchange.poll,
                Pid::NoLayer3,
                vec![0; exchange.octets],
            )
            .expect("sequence numbers are taken modulo 8");
            self.outgoing.push_back(frame);
            self.vs = (self.vs + 1) % MODULUS;
        }
        self.state = State::Waiting {
            started: now,
            first_ns,
            exchange,
            enquiries: 0,
        };
        self.deadline = Some(now + self.config.response_time);
    }

    fn release(&mut self, now: Instant) {
        let tries = match self.state {
            State::Releasing { tries } => tries + 1,
            _ => 1,
        };
        self.state = State::Releasing { tries };
        self.send_u(Unnumbered::Disc);
        self.deadline = Some(now + self.config.response_time);
    }

    fn finish(&mut self, event: ProbeEvent) {
        self.state = State::Done;
        self.deadline = None;
        self.events.push_back(event);
    }

    /// Stops at once: no further window; the link is released.
    pub fn stop(&mut self, now: Instant) {
        self.stopping = true;
        match self.state {
            State::Connecting { .. } => self.finish(ProbeEvent::Finished),
            State::Pausing { .. } | State::Waiting { .. } => self.release(now),
            State::Releasing { .. } | State::Done => {}
        }
    }

    /// Whether the probe has ended.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// The next frame for the TNC.
    pub fn poll_transmit(&mut self) -> Option<Frame> {
        self.outgoing.pop_front()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<ProbeEvent> {
        self.events.pop_front()
    }

    /// When [`Prober::handle_timeout`] is next due.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.state {
            State::Pausing { until } => Some(until),
            _ => self.deadline,
        }
    }

    /// Advances the probe to `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.poll_timeout().is_none_or(|t| t > now) {
            return;
        }
        match self.state {
            State::Connecting { tries } if tries < self.config.tries => self.send_sabm(now),
            State::Connecting { .. } => self.finish(ProbeEvent::Failed(format!(
                "{} did not answer SABM ({} tries)",
                self.config.remote, self.config.tries
            ))),
            State::Pausing { .. } => self.next_exchange(now),
            State::Waiting { enquiries, .. } if enquiries < self.config.tries => {
                if let State::Waiting { enquiries, .. } = &mut self.state {
                    *enquiries += 1;
                }
                self.send_enquiry();
                self.deadline = Some(now + self.config.response_time);
            }
            State::Waiting { .. } => self.finish(ProbeEvent::Failed(format!(
                "{} did not answer {} enquiries",
                self.config.remote, self.config.tries
            ))),
            State::Releasing { tries } if tries < self.config.tries => self.release(now),
            State::Releasing { .. } => self.finish(ProbeEvent::Finished),
            State::Done => {}
        }
    }

    /// A frame the TNC received (bytes without flags or FCS).
    pub fn handle_frame(&mut self, now: Instant, bytes: &[u8]) {
        let Ok(frame) = Frame::decode(bytes, Modulus::Mod8) else {
            return;
        };
        let (from, to) = (frame.source(), frame.dest());
        if !same_station(from, &self.config.remote) || !same_station(to, &self.config.local) {
            return;
        }
        match (self.state, frame.control()) {
            (
                State::Connecting { .. },
                Control::U {
                    kind: Unnumbered::Ua,
                    ..
                },
            ) => {
                self.events.push_back(ProbeEvent::Connected);
                self.state = State::Pausing {
                    until: now + self.config.pause,
                };
            }
            (
                _,
                Control::U {
                    kind: Unnumbered::Dm,
                    ..
                },
            ) if !self.is_releasing() => {
                self.finish(ProbeEvent::Failed(format!(
                    "{} refused the connection (DM)",
                    self.config.remote
                )));
            }
            (
                _,
                Control::U {
                    kind: Unnumbered::Frmr,
                    ..
                },
            ) => {
                self.finish(ProbeEvent::Failed(format!(
                    "{} rejected a frame (FRMR)",
                    self.config.remote
                )));
            }
            (
                State::Releasing { .. },
                Control::U {
                    kind: Unnumbered::Ua | Unnumbered::Dm,
                    ..
                },
            ) => self.finish(ProbeEvent::Finished),
            (
                State::Waiting {
                    started,
                    first_ns,
                    exchange,
                    enquiries,
                },
                Control::S { nr, pf, .. } | Control::I { nr, pf, .. },
            ) => {
                let acked = nr.wrapping_sub(first_ns) % MODULUS;
                if acked > exchange.frames {
                    // An N(R) outside the window: not an answer to it.
                    return;
                }
                let answer = pf && frame.is_response();
                let whole = acked == exchange.frames;
                let short = kind_is_rej(&frame) || answer;
                if !(whole || short) {
                    return;
                }
                let lost = exchange.frames - acked;
                self.vs = nr;
                self.events.push_back(ProbeEvent::Sample(Sample {
                    exchange,
                    round_trip: (lost == 0 && enquiries == 0).then(|| now - started),
                    frames_through: acked,
                    frames_lost: lost,
                    ack_lost: lost == 0 && enquiries > 0,
                }));
                self.deadline = None;
                self.state = State::Pausing {
                    until: now + self.config.pause,
                };
                if self.stopping {
                    self.release(now);
                }
            }
            _ => {}
        }
    }

    fn is_releasing(&self) -> bool {
        matches!(self.state, State::Releasing { .. })
    }
}

fn kind_is_rej(frame: &Frame) -> bool {
    matches!(
        frame.control(),
        Control::S {
            kind: Supervisory::Rej,
            ..
        }
    )
}
