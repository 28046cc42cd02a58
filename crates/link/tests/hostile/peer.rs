//! The hostile peer: B's own engine behind a [`Tamper`] that misbehaves as
//! stations reported from the air in 2025-2026 did.

use std::time::Duration;

use linklab_core::Instant;
use linklab_link::{Framing, Pdu};
use linklab_wire::ax25::{FrmrInfo, XidNumber, XidParams};
use linklab_wire::control::{Control, Modulus, Supervisory, Unnumbered};

use crate::support::Tamper;

/// How B misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Answers every I frame and every poll with REJ N(R) = 0, for ever:
    /// a REJ-driven retransmission that never touches the retry count
    /// went at wire speed against this.
    RejectForever,
    /// Answers every poll with RR F = 1 and the same stale N(R) = 0, and
    /// acknowledges nothing otherwise: "both ends poll each other for
    /// ever".
    StalePollAnswers,
    /// Answers every I frame and every poll with RNR, for ever.
    BusyForever,
    /// Acknowledges correctly, but every I and S frame leaves 4 s late,
    /// longer than the initial T1 of 3 s.
    LateAnswers,
    /// A path that duplicates frames both ways.
    Duplicate,
    /// A path that reorders and duplicates frames both ways, as AXUDP over
    /// the internet does.
    ReorderAndDuplicate,
    /// Sends every S frame twice: repeated REJs, and an SREJ asked twice
    /// for one frame (AX.25 v2.2 4.4.4).
    RepeatedSupervisory,
    /// Rejects the third I frame with FRMR.
    Frmr,
    /// Restarts in the middle of the transfer and sets the link up again
    /// (SABM or SABME) with no memory of it.
    ResetMidTransfer,
    /// Sends its I frames as responses and its S frames with the C/R bit
    /// flipped (strict nodes answer such I frames with FRMR).
    WrongCommandResponse,
    /// Sends DM in the middle of the transfer, and DM to everything after.
    DmWhileConnected,
    /// Answers A's XID command with absurd values: one bit of I field, a
    /// window of 0, a T1 of 49 days, 255 retries.
    AbsurdXid,
    /// Sends more I frames than the window A can receive: B never learns
    /// A's window (its XID command is answered for it, as a station that
    /// ignores XID would).
    WindowOverrun,
    /// Polls A with RR P = 1 every 100 ms.
    PollFlood,
}

impl Behaviour {
    pub const ALL: [Behaviour; 14] = [
        Behaviour::RejectForever,
        Behaviour::StalePollAnswers,
        Behaviour::BusyForever,
        Behaviour::LateAnswers,
        Behaviour::Duplicate,
        Behaviour::ReorderAndDuplicate,
        Behaviour::RepeatedSupervisory,
        Behaviour::Frmr,
        Behaviour::ResetMidTransfer,
        Behaviour::WrongCommandResponse,
        Behaviour::DmWhileConnected,
        Behaviour::AbsurdXid,
        Behaviour::WindowOverrun,
        Behaviour::PollFlood,
    ];
}

/// B's tamper: `own` is B's framing (it decodes A's frames and encodes
/// B's), `other` A's (it decodes B's frames).
pub struct Hostile<F: Framing> {
    behaviour: Behaviour,
    own: F,
    other: F,
    modulus: Modulus,
    /// I frames from A seen so far.
    i_frames: usize,
    /// The last N(R) B's engine sent.
    last_nr: u8,
    /// The misbehaviour has started (DM sent; polling begun).
    tripped: bool,
    next_poll: Option<Instant>,
}

impl<F: Framing> Hostile<F> {
    pub fn new(behaviour: Behaviour, own: F, other: F, modulus: Modulus) -> Hostile<F> {
        Hostile {
            behaviour,
            own,
            other,
            modulus,
            i_frames: 0,
            last_nr: 0,
            tripped: false,
            next_poll: None,
        }
    }

    fn frame(&self, command: bool, control: Control, info: Vec<u8>) -> F::Frame {
        let pdu = Pdu {
            command,
            control,
            modulus: self.modulus,
            pid: None,
            info,
        };
        self.own.encode(pdu).expect("a frame B can send")
    }

    fn supervisory(&self, kind: Supervisory, nr: u8, pf: bool) -> F::Frame {
        self.frame(false, Control::S { kind, nr, pf }, Vec::new())
    }

    fn unnumbered(&self, command: bool, kind: Unnumbered, pf: bool, info: Vec<u8>) -> F::Frame {
        self.frame(command, Control::U { kind, pf }, info)
    }

    /// FRMR rejecting `control` (W: not implemented), as a strict node
    /// sends it.
    fn frmr(&self, control: Control, command: bool) -> F::Frame {
        let octets = control.encode(self.modulus).unwrap_or_default();
        let rejected_control = octets
            .iter()
            .enumerate()
            .fold(0u16, |v, (i, &o)| v | u16::from(o) << (8 * i));
        let info = FrmrInfo {
            rejected_control,
            rejected_was_response: !command,
            w: true,
            ..FrmrInfo::default()
        };
        let info = info.encode(self.modulus).unwrap_or_default();
        self.unnumbered(false, Unnumbered::Frmr, false, info)
    }

    /// The XID response of [`Behaviour::AbsurdXid`].
    fn absurd_xid(&self) -> F::Frame {
        let xid = XidParams {
            i_field_length_rx: Some(XidNumber::new(1)),
            window_size_rx: Some(XidNumber::new(0)),
            ack_timer: Some(XidNumber::new(u32::MAX)),
            retries: Some(XidNumber::new(255)),
            ..XidParams::default()
        };
        let info = xid.encode().expect("XID encodes");
        self.unnumbered(false, Unnumbered::Xid, true, info)
    }

    /// The XID response of [`Behaviour::WindowOverrun`]: B could receive
    /// 127 frames of 256 octets, and says nothing else.
    fn permissive_xid(&self) -> F::Frame {
        let xid = XidParams {
            i_field_length_rx: Some(XidNumber::new(256 * 8)),
            window_size_rx: Some(XidNumber::new(127)),
            ..XidParams::default()
        };
        let info = xid.encode().expect("XID encodes");
        self.unnumbered(false, Unnumbered::Xid, true, info)
    }

    /// The answer, if any, that replaces B's engine's own: `kind` N(R) = 0
    /// to every I frame and every poll.
    fn stale_answer(&self, kind: Supervisory, pdu: &Pdu) -> Vec<F::Frame> {
        let poll = pdu.command && pdu.pf();
        match pdu.control {
            Control::I { .. } => vec![self.supervisory(kind, 0, pdu.pf())],
            Control::S { .. } if poll => vec![self.supervisory(kind, 0, true)],
            _ => Vec::new(),
        }
    }
}

impl<F: Framing> Tamper<F> for Hostile<F> {
    fn outgoing(&mut self, _now: Instant, frame: F::Frame) -> Vec<(Duration, F::Frame)> {
        let Some(pdu) = self.other.decode(&frame) else {
            return vec![(Duration::ZERO, frame)];
        };
        if let Control::I { nr, .. } | Control::S { nr, .. } = pdu.control {
            self.last_nr = nr;
        }
        let numbered = pdu.is_numbered();
        let at_once = |frame| vec![(Duration::ZERO, frame)];
        match self.behaviour {
            Behaviour::RejectForever | Behaviour::StalePollAnswers | Behaviour::BusyForever
                if numbered =>
            {
                Vec::new()
            }
            Behaviour::LateAnswers if numbered => vec![(Duration::from_secs(4), frame)],
            Behaviour::RepeatedSupervisory if matches!(pdu.control, Control::S { .. }) => {
                let again = self.own.encode(pdu).expect("B's frame again");
                vec![(Duration::ZERO, frame), (Duration::ZERO, again)]
            }
            Behaviour::WrongCommandResponse if numbered => {
                let flipped = Pdu {
                    command: !pdu.command,
                    ..pdu
                };
                at_once(self.own.encode(flipped).expect("B's frame flipped"))
            }
            Behaviour::DmWhileConnected if self.tripped => Vec::new(),
            _ => at_once(frame),
        }
    }

    fn incoming(&mut self, now: Instant, frame: &F::Frame) -> (bool, Vec<F::Frame>) {
        let Some(pdu) = self.own.decode(frame) else {
            return (true, Vec::new());
        };
        let is_i = matches!(pdu.control, Control::I { .. });
        if is_i {
            self.i_frames += 1;
        }
        match self.behaviour {
            Behaviour::RejectForever => (true, self.stale_answer(Supervisory::Rej, &pdu)),
            Behaviour::StalePollAnswers => {
                let poll = pdu.command && pdu.pf() && pdu.is_numbered();
                let answer = poll.then(|| self.supervisory(Supervisory::Rr, 0, true));
                (true, answer.into_iter().collect())
            }
            Behaviour::BusyForever => (true, self.stale_answer(Supervisory::Rnr, &pdu)),
            Behaviour::Frmr if is_i && self.i_frames == 3 => {
                (false, vec![self.frmr(pdu.control, pdu.command)])
            }
            Behaviour::DmWhileConnected if is_i && self.i_frames == 5 => {
                self.tripped = true;
                let dm = self.unnumbered(false, Unnumbered::Dm, false, Vec::new());
                (false, vec![dm])
            }
            Behaviour::DmWhileConnected if self.tripped => {
                let dm = self.unnumbered(false, Unnumbered::Dm, pdu.pf(), Vec::new());
                (false, vec![dm])
            }
            Behaviour::AbsurdXid if is_xid_command(&pdu) => (false, vec![self.absurd_xid()]),
            Behaviour::WindowOverrun if is_xid_command(&pdu) => {
                (false, vec![self.permissive_xid()])
            }
            Behaviour::PollFlood if is_i && !self.tripped => {
                self.tripped = true;
                self.next_poll = Some(now + Duration::from_millis(100));
                (true, Vec::new())
            }
            _ => (true, Vec::new()),
        }
    }

    fn next_time(&self) -> Option<Instant> {
        self.next_poll
    }

    fn poll(&mut self, now: Instant) -> Vec<F::Frame> {
        self.next_poll = Some(now + Duration::from_millis(100));
        let control = Control::S {
            kind: Supervisory::Rr,
            nr: self.last_nr,
            pf: true,
        };
        vec![self.frame(true, control, Vec::new())]
    }
}

fn is_xid_command(pdu: &Pdu) -> bool {
    pdu.command
        && matches!(
            pdu.control,
            Control::U {
                kind: Unnumbered::Xid,
                ..
            }
        )
}
