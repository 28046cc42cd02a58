//! What a primary or a secondary station of an unbalanced link (NRM, ARM)
//! does differently from a combined station (ISO/IEC 13239 clause 6;
//! Bux, Kümmerle and Truong 1982, Appendix A1 and A2).
//!
//! - The primary sends only commands, a secondary only responses; the
//!   framing sets the address accordingly (ISO/IEC 13239 5.5).
//! - NRM: the secondary transmits only after a command with P = 1 and
//!   marks the last frame of that opportunity with F = 1, an RR (RNR) if
//!   it has nothing else (A1.2). It has no T1: the primary alone recovers
//!   by time-out, with T1 running while its P = 1 is unanswered (Annex B
//!   of the HDLC standard as Bux et al. quote it: started on P = 1,
//!   restarted on a frame with F = 0, stopped on F = 1). Its polling
//!   strategy is [`Config::poll_policy`](crate::Config::poll_policy).
//! - ARM: the secondary transmits when it likes; P/F work as in ABM, and
//!   its own T1 retransmits the oldest unacknowledged I frame onward since
//!   it cannot poll (A2).
//! - Checkpointing (A1.3): a station that receives F = 1 (the primary) or
//!   P = 1 (a secondary, in NRM and ARM) retransmits from N(R) the I frames
//!   sent before its own last P or F that N(R) shows missing, unless a REJ
//!   with that N(R) already started the retransmission since then.
//! - A secondary's T3 supervises its primary: if nothing arrives for T3 the
//!   link is given up ([`FailureReason::NoResponseToEnquiry`], or
//!   [`FailureReason::UnacknowledgedData`] with data outstanding).

use linklab_wire::ax25::{CommandResponse, FrmrInfo};
use linklab_wire::control::{Control, Modulus, Supervisory, Unnumbered};

use super::{InvalidFrame, Link, State};
use crate::config::{Mode, PollPolicy, Role, WindowLimit};
use crate::event::{Event, FailureReason, LinkError};
use crate::framing::{Framing, Pdu};
use crate::timer::Timer;
use linklab_core::Instant;

impl<F: Framing> Link<F> {
    fn nrm_primary(&self) -> bool {
        self.config.role == Role::Primary && self.config.mode == Mode::Nrm
    }

    fn nrm_secondary(&self) -> bool {
        self.config.role == Role::Secondary && self.config.mode == Mode::Nrm
    }

    fn transferring(&self) -> bool {
        matches!(self.state, State::Connected | State::TimerRecovery)
    }

    /// T1 may be started: never on an NRM secondary; on an NRM primary
    /// only while its P = 1 is outstanding.
    pub(super) fn t1_may_run(&self) -> bool {
        !self.nrm_secondary() && (!self.nrm_primary() || self.poll_outstanding)
    }

    /// T1 may be stopped: not on an NRM primary waiting for F = 1.
    pub(super) fn t1_may_stop(&self) -> bool {
        !(self.nrm_primary() && self.poll_outstanding)
    }

    /// An NRM primary with its window full that does not acknowledge
    /// ([`WindowLimit::Withhold`]): the acknowledgement stays pending until
    /// an I frame can carry it.
    pub(super) fn withholds_ack(&self) -> bool {
        self.nrm_primary()
            && self.config.nrm_primary_at_window_limit == WindowLimit::Withhold
            && self.window_full()
    }

    fn window_full(&self) -> bool {
        self.seq_diff(self.top, self.va) >= self.k
    }

    /// Own receiver busy, asked for (DL-FLOW-OFF) or because an NRM
    /// primary's window is full ([`WindowLimit::ReceiverNotReady`]).
    pub(super) fn receiver_busy(&self) -> bool {
        self.own_receiver_busy || self.window_busy
    }

    /// [`WindowLimit::ReceiverNotReady`] (Bux et al. 3.1.3): an NRM
    /// primary whose window has just filled becomes busy. It tells a
    /// secondary in its transmit opportunity at once with an RNR command,
    /// so that the secondary stops sending I frames and ends with F = 1;
    /// an idle secondary learns it from the next poll, an RNR with P = 1.
    pub(super) fn window_filled(&mut self) {
        if !self.nrm_primary()
            || self.config.nrm_primary_at_window_limit != WindowLimit::ReceiverNotReady
            || self.window_busy
            || !self.window_full()
        {
            return;
        }
        self.window_busy = true;
        if self.poll_outstanding {
            let rnr = self.supervisory(CommandResponse::Command, false);
            self.out.push_back(rnr);
        }
    }

    /// The busy condition of [`Self::window_filled`] ends when an
    /// acknowledgement opens the window: an RR command tells a secondary
    /// in its transmit opportunity that it may send I frames again; an
    /// idle one learns it from the next poll.
    pub(super) fn window_opened(&mut self) {
        if !self.window_busy || self.window_full() {
            return;
        }
        self.window_busy = false;
        if self.poll_outstanding && !self.own_receiver_busy {
            let rr = self.supervisory(CommandResponse::Command, false);
            self.out.push_back(rr);
        }
    }

    /// Bookkeeping for every frame an unbalanced station receives.
    pub(super) fn unbalanced_received(&mut self, now: Instant, pdu: &Pdu) {
        match self.config.role {
            Role::Secondary => {
                if pdu.command && pdu.pf() && self.config.mode == Mode::Nrm {
                    self.polled = true;
                }
                if self.transferring() {
                    self.restart_supervision(now);
                }
            }
            Role::Primary
                if self.nrm_primary()
                    && self.transferring()
                    && !pdu.pf()
                    && self.poll_outstanding
                    && self.timers.is_running(Timer::T1) =>
            {
                self.start_t1(now)
            }
            _ => {}
        }
    }

    /// On entering the information transfer state: a secondary starts
    /// supervising its primary; an NRM primary polls at once if its policy
    /// is to poll as often as possible (else after the poll interval).
    pub(super) fn unbalanced_connected(&mut self, now: Instant) {
        match self.config.role {
            Role::Secondary => self.restart_supervision(now),
            Role::Primary => {
                // The SNRM(E)/SARM(E) poll is answered.
                self.poll_outstanding = false;
                if self.config.mode == Mode::Nrm {
                    self.timers.stop(Timer::T1, now);
                    self.poll_due = self.config.poll_policy != PollPolicy::OnLastIFrame;
                }
            }
            Role::Combined => {}
        }
    }

    fn restart_supervision(&mut self, now: Instant) {
        self.timers.start(Timer::T3, now, self.config.t3);
    }

    /// A secondary's T3 expiry: nothing from the primary for T3.
    pub(super) fn secondary_t3_expiry(&mut self, now: Instant) {
        if self.transferring() {
            let reason = if self.unacked() > 0 {
                FailureReason::UnacknowledgedData
            } else {
                FailureReason::NoResponseToEnquiry
            };
            self.discard_queues();
            self.enter_disconnected(now);
            self.event(Event::LinkFailure { reason });
        }
    }

    /// An NRM primary's idle poll timer (T3 with the poll interval).
    pub(super) fn nrm_idle_poll(&mut self) {
        if self.transferring() && !self.poll_outstanding {
            self.poll_due = true;
        }
    }

    /// An ARM secondary's T1 expiry (Bux et al. A2): it cannot ask for
    /// the primary's status, so it sends again from the unacknowledged I
    /// frame with the least N(S); after N2 tries it gives up and tells
    /// the primary with DM.
    pub(super) fn secondary_t1_expiry(&mut self, now: Instant) {
        if !self.transferring() || self.top == self.va {
            return;
        }
        if self.rc >= self.n2 {
            self.discard_queues();
            self.send_u(Unnumbered::Dm, CommandResponse::Response, false, Vec::new());
            self.enter_disconnected(now);
            return self.event(Event::LinkFailure {
                reason: FailureReason::UnacknowledgedData,
            });
        }
        self.rc += 1;
        self.select_t1_value();
        let va = self.va;
        self.invoke_retransmission(va);
        self.start_t1(now);
    }

    /// A secondary's answer to a condition that a combined station would
    /// clear by resetting the link: FRMR (ISO/IEC 13239 5.5.3.4.2), so that
    /// the primary resets it. Z (invalid N(R)) is the usual cause.
    pub(super) fn frame_reject(&mut self) {
        self.send_frmr(FrmrInfo {
            z: true,
            ..FrmrInfo::default()
        });
    }

    /// A secondary received a frame that does not decode (see
    /// `invalid.rs`): it still counts as hearing from the primary, and
    /// P = 1 in a control field whose format is known gives the NRM
    /// transmit opportunity. The frame is rejected with FRMR: W, and X as
    /// well for an information field not permitted or a wrong length,
    /// with the rejected control field and its C/R (ISO/IEC 13239
    /// 5.5.3.4.2).
    pub(super) fn reject_invalid_frame(
        &mut self,
        now: Instant,
        invalid: InvalidFrame,
        control: &[u8],
        command: bool,
    ) {
        self.restart_supervision(now);
        let pf = match control {
            [first] => first & 0x10 != 0,
            [first, second, ..] if first & 0x03 != 0x03 => second & 0x01 != 0,
            [first, ..] => first & 0x10 != 0,
            [] => false,
        };
        if command && pf && self.config.mode == Mode::Nrm {
            self.polled = true;
        }
        let rejected_control = match control {
            [first, second, ..] if self.modulus == Modulus::Mod128 => {
                u16::from_le_bytes([*first, *second])
            }
            [first, ..] => u16::from(*first),
            [] => 0,
        };
        self.send_frmr(FrmrInfo {
            rejected_control,
            rejected_was_response: !command,
            w: true,
            x: invalid != InvalidFrame::UnknownControl,
            ..FrmrInfo::default()
        });
    }

    /// Sends FRMR with `info` and our V(S) and V(R).
    fn send_frmr(&mut self, info: FrmrInfo) {
        let info = FrmrInfo {
            vs: self.vs,
            vr: self.vr,
            ..info
        };
        let info = info.encode(self.modulus).unwrap_or_default();
        self.send_u(Unnumbered::Frmr, CommandResponse::Response, false, info);
    }

    /// REJ received by a primary or secondary (ISO/IEC 13239 5.5.2; Bux
    /// et al. A1.3, REJ recovery): V(A) <- N(R) and send again from N(R),
    /// once; then the P or F it may carry.
    pub(super) fn unbalanced_rej(&mut self, now: Instant, nr: u8, pf: bool, command: bool) {
        self.set_va(nr);
        if self.nrm_primary() && pf && !command {
            // A REJ with F = 1 answers our poll: it is the checkpoint, and
            // sends again only the frames sent before the poll that N(R)
            // shows missing. Frames an earlier checkpoint already sent
            // again after the poll are under way; a second go-back would
            // send duplicates, each drawing a new REJ.
            return self.final_received(now, nr);
        }
        if self.top != self.va {
            self.invoke_retransmission(nr);
            self.rej_actioned = Some(nr);
        }
        if command && pf {
            self.checkpoint_on_poll(nr);
        } else if pf {
            self.final_received(now, nr);
        }
        if self.config.mode == Mode::Arm {
            if self.top == self.va {
                self.stop_t1(now);
                self.start_t3(now);
            } else {
                self.start_t1(now);
            }
        }
    }

    /// Checkpoint retransmission after our last P or F (A1.3): send again
    /// from N(R) if it shows frames sent before it missing, unless a REJ
    /// with this N(R) already did.
    fn checkpoint_retransmission(&mut self, nr: u8) {
        if self.checkpoint_unacked > 0 && self.rej_actioned != Some(nr) {
            self.invoke_retransmission(nr);
        }
        self.rej_actioned = None;
    }

    /// A secondary received P = 1 (NRM and ARM, Bux et al. A2: "the
    /// secondary initiates checkpoint retransmission also based on a
    /// received P-bit").
    pub(super) fn checkpoint_on_poll(&mut self, nr: u8) {
        if self.config.role == Role::Secondary {
            self.checkpoint_retransmission(nr);
        }
    }

    /// The primary received F = 1: the answer to its poll.
    pub(super) fn final_received(&mut self, now: Instant, nr: u8) {
        if self.config.mode == Mode::Nrm {
            return self.nrm_final(now, nr);
        }
        // ARM: as a combined station (A2).
        if self.state == State::TimerRecovery {
            self.poll_answered(now, nr);
        } else {
            self.poll_outstanding = false;
        }
    }

    /// The NRM primary received F = 1 (A1.2, A1.3): the secondary's
    /// transmission ended; stop T1, checkpoint, and decide when to poll
    /// next.
    fn nrm_final(&mut self, now: Instant, nr: u8) {
        if !self.poll_outstanding {
            // Error A: a repeated or stray F = 1 ends no poll; acting on
            // it would checkpoint the window a second time.
            return self.event(Event::Error(LinkError::UnexpectedFinal));
        }
        self.poll_outstanding = false;
        self.stop_t1(now);
        self.set_state(State::Connected);
        self.rc = 0;
        self.select_t1_value();
        self.busy_answer();
        if self.busy_answers > self.n2 {
            return self.give_up(now);
        }
        self.set_va(nr);
        self.checkpoint_retransmission(nr);
        let busy = self.peer_receiver_busy;
        let unacked = self.top != self.va;
        self.poll_due = !busy
            && match self.config.poll_policy {
                PollPolicy::AsOftenAsPossible | PollPolicy::SupervisoryAtOnce => {
                    self.got_i || unacked || self.queued() > 0
                }
                PollPolicy::OnLastIFrame => unacked && !self.i_frame_ready(),
            };
        if !self.poll_due {
            self.start_t3(now);
        }
    }

    /// The next frame of an NRM primary: queued frames, I frames, a due
    /// poll (RR or RNR with P = 1; before the I frames with
    /// [`PollPolicy::SupervisoryAtOnce`]), a pending acknowledgement.
    pub(super) fn next_nrm_command(&mut self, now: Instant) -> Option<Pdu> {
        if let Some(pdu) = self.out.pop_front() {
            return Some(pdu);
        }
        let poll = self.poll_due && !self.poll_outstanding && self.transferring();
        if poll && self.config.poll_policy == PollPolicy::SupervisoryAtOnce {
            return Some(self.supervisory(CommandResponse::Command, true));
        }
        if let Some(pdu) = self.next_i_frame(now) {
            return Some(pdu);
        }
        if poll {
            return Some(self.supervisory(CommandResponse::Command, true));
        }
        self.ack_at_transmit_opportunity(now);
        self.out.pop_front()
    }

    /// The next frame of an NRM secondary: nothing unless polled; then
    /// its queued responses and I frames (within the window k <= M - 1),
    /// the last with F = 1, or RR/RNR F = 1 if there is nothing (A1.2).
    pub(super) fn next_nrm_response(&mut self, now: Instant) -> Option<Pdu> {
        if !self.polled {
            return None;
        }
        let pdu = match self.out.pop_front() {
            Some(pdu) => Some(pdu),
            None => self.next_i_frame(now),
        };
        let mut pdu = match pdu {
            Some(pdu) => pdu,
            None if self.transferring() => self.supervisory(CommandResponse::Response, false),
            None => {
                self.polled = false;
                return None;
            }
        };
        let more = !self.out.is_empty() || self.i_frame_ready();
        pdu.set_pf(!more);
        if !more {
            self.polled = false;
        }
        Some(pdu)
    }

    /// RR, or RNR if our receiver is busy, with N(R) = V(R).
    fn supervisory(&mut self, cr: CommandResponse, pf: bool) -> Pdu {
        let kind = if self.receiver_busy() {
            Supervisory::Rnr
        } else {
            Supervisory::Rr
        };
        let control = Control::S {
            kind,
            nr: self.vr,
            pf,
        };
        self.pdu(cr, control, None, Vec::new())
    }

    /// Last look at a frame as it leaves: an NRM primary polling as often
    /// as possible sets P on any I or S frame while no poll is
    /// outstanding; a P (primary) or F (secondary) sets the checkpoint.
    pub(super) fn emitting(&mut self, now: Instant, mut pdu: Pdu) -> Pdu {
        if self.config.role == Role::Combined || !pdu.is_numbered() || !self.transferring() {
            return pdu;
        }
        if self.nrm_primary()
            && !self.poll_outstanding
            && self.config.poll_policy != PollPolicy::OnLastIFrame
        {
            pdu.set_pf(true);
        }
        if !pdu.pf() {
            return pdu;
        }
        self.checkpoint_unacked = self.seq_diff(self.vs, self.va);
        if self.config.role == Role::Primary {
            self.poll_outstanding = true;
            self.poll_due = false;
            self.got_i = false;
            if matches!(pdu.control, Control::S { .. }) {
                self.acknowledge_pending = false;
                self.timers.stop(Timer::T2, now);
            }
            if self.config.mode == Mode::Nrm {
                self.stop_t3(now);
                self.start_t1(now);
            }
        }
        pdu
    }
}
