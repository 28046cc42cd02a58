//! Error recovery: REJ, SREJ and multi-SREJ (AX.25 v2.2 4.3.2.4, 4.4.3,
//! 4.4.4, 6.4.4, 6.4.7, 6.4.8), T1 and T3 expiry with enquiry (4.4.5,
//! 6.4.11), N(R) errors and "select T1 value" (figs. C4.4c, C4.5, C4.7).

use core::iter;
use core::time::Duration;

use linklab_wire::ax25::{CommandResponse, MultiSrejInfo};
use linklab_wire::control::{Control, Supervisory, Unnumbered};

use super::{Link, Payload, State};
use crate::config::{Mode, Role, T1Backoff};
use crate::event::{Event, FailureReason, LinkError};
use crate::framing::Framing;
use crate::timer::Timer;
use linklab_core::Instant;

impl<F: Framing> Link<F> {
    /// REJ received in state 3 or 4 (figs. C4.4c, C4.5): V(A) <- N(R) and
    /// go back to N(R) (6.4.7), unless a go-back from this N(R) is already
    /// under way (see [`Self::go_back_under_way`]); the REJ still
    /// acknowledges and clears the peer's busy condition.
    pub(super) fn on_rej(&mut self, now: Instant, nr: u8, pf: bool, command: bool) {
        self.peer_receiver_busy = false;
        self.check_need_for_response(now, pf, command);
        if !self.nr_valid(nr) {
            return self.nr_error_recovery(now, nr);
        }
        if self.config.role != Role::Combined {
            return self.unbalanced_rej(now, nr, pf, command);
        }
        if self.state == State::TimerRecovery {
            if !command && pf {
                return self.poll_answered(now, nr);
            }
            self.set_va(nr);
            if !self.go_back_under_way(nr) {
                self.invoke_retransmission(nr);
            }
            return;
        }
        let report = self.checkpoint_report(command, pf);
        self.final_ends_checkpoint(command, pf);
        self.set_va(nr);
        if self.top != self.va && self.go_back_under_way(nr) && !report {
            // T1 keeps timing the retransmission already started.
            return;
        }
        self.stop_t1(now);
        self.stop_t3(now);
        self.select_t1_value();
        if self.top == self.va {
            self.start_t3(now);
            // The REJ acknowledged everything, the frame with our P too.
            self.checkpoint_acknowledged();
        } else {
            self.invoke_retransmission(nr);
            self.start_t1(now);
        }
    }

    /// SREJ received (a response only, per X.25 and Dire Wolf's erratum):
    /// retransmit the frame N(R) and, for a multi-SREJ, the further frames
    /// its information field names, in that order (4.3.2.4, 4.4.4: "the
    /// individual I frames indicated"); with F = 1 it also acknowledges up
    /// to N(R) - 1 (6.4.8) and answers our enquiry in state 4. Further
    /// N(R)s that name no outstanding frame are ignored, as Dire Wolf does.
    /// A multi-SREJ is acted on even if XID did not agree on it.
    ///
    /// An SREJ with F = 1 does not resend a frame already resent for an
    /// SREJ acted on after our P = 1 went out (4.4.4: action on "the next
    /// SREJ response frame" with F = 1 and "the same N(R) ... as a
    /// previously actioned SREJ frame" is disabled "if the resultant
    /// retransmission was made following the transmission of the P bit set
    /// to 1"): the peer answered the poll before it could see that frame.
    pub(super) fn on_srej(&mut self, now: Instant, nr: u8, pf: bool, info: &[u8]) {
        self.peer_receiver_busy = false;
        if !self.nr_valid(nr) {
            return self.nr_error_recovery(now, nr);
        }
        if pf {
            self.poll_outstanding = false;
            if self.state == State::TimerRecovery {
                self.stop_t1(now);
                self.select_t1_value();
                self.enquiry_answered(nr);
                self.set_state(State::Connected);
            } else {
                self.set_va(nr);
            }
        }
        // The HDLC framing delivers no information field in an SREJ, and
        // AX.25 frames with a malformed one do not decode.
        let further = MultiSrejInfo::decode(info, self.modulus).unwrap_or_default();
        let resent_after_poll = self.srej_resent_after_poll;
        let requested: Vec<u8> = iter::once(nr)
            .chain(further.sequence_numbers(self.modulus))
            .filter(|&ns| self.outstanding(ns))
            .filter(|&ns| !(pf && resent_after_poll & (1u128 << ns) != 0))
            .filter(|&ns| !self.srej_on_air_again(ns))
            .collect();
        if pf {
            self.srej_resent_after_poll = 0;
        }
        if !requested.is_empty() {
            for ns in requested {
                if self.poll_outstanding {
                    self.srej_resent_after_poll |= 1u128 << ns;
                }
                if !self.resend.contains(&ns) {
                    self.resend.push_back(ns);
                }
            }
            self.stop_t3(now);
            self.start_t1(now);
        } else if self.state == State::Connected {
            if self.top == self.va {
                self.stop_t1(now);
                self.start_t3(now);
                self.checkpoint_acknowledged();
            } else if !self.timers.is_running(Timer::T1) {
                // Frames resent earlier are still unacknowledged.
                self.start_t1(now);
            }
        }
    }

    /// True if frame `ns` was resent for an SREJ and that transmission
    /// has not ended: an SREJ for it now was sent before the peer could
    /// hear it, typically the answer to an earlier poll arriving after
    /// the one that asked for it first (Dire Wolf answers each P with the
    /// SREJs still open). For a station whose driver reports the end of
    /// its transmissions (the checkpointing rules of `checkpoint.rs`).
    fn srej_on_air_again(&self, ns: u8) -> bool {
        self.checkpoints() && self.srej_resent_on_air & (1u128 << ns) != 0
    }

    /// "Invoke retransmission" (fig. C4.7a): V(S) <- N(R), so that frames
    /// N(R) .. top-1 are sent again with their original N(S). (The SDL's
    /// re-queueing would renumber them; kept as a send buffer instead.)
    pub(super) fn invoke_retransmission(&mut self, nr: u8) {
        self.vs = nr;
        self.resend.clear();
        self.go_back_from = Some(nr);
        self.go_back_on_air = false;
        self.go_back_heard_in = self.heard_in;
    }

    /// One retransmission per recovery event: true if a go-back from
    /// `nr` already started and neither has V(A) moved, nor T1 expired,
    /// nor have its frames left the air since. A REJ and the F = 1 answer
    /// to our poll that both report the same gap (the peer sends both when
    /// our poll reaches it after the loss) then resend the window once,
    /// not twice. This is the rule of ISO/IEC 13239 (and ISO 4335) for
    /// REJ: a station that acted on a REJ inhibits the checkpoint
    /// retransmission that an F = 1 with the same N(R) would cause;
    /// applied here either way round. A report that comes after the
    /// go-back has left the air, or an answer to a poll sent after it
    /// (`checkpoint.rs`), is about the go-back itself and is acted on; T1
    /// recovers the rest.
    pub(super) fn go_back_under_way(&self, nr: u8) -> bool {
        self.go_back_from == Some(nr)
    }

    /// The go-back under way once V(A) moves to `nr` (`set_va`): one
    /// started by a frame of the peer's transmission that this frame also
    /// came in, and that has sent its frames up to `nr` again, goes on
    /// from `nr`; otherwise none. The peer composed that transmission
    /// before it could hear the go-back, so a REJ or F = 1 for `nr` after
    /// the acknowledgement asks for frames already on their way again.
    /// Seen over Dire Wolf at 1200 bit/s: one answer of `RR F R6`, `REJ
    /// R0` (answers to polls that waited in its TNC) had the window from
    /// 6 handed over, then 0-4 of it again, 9 s of air for nothing. Needs
    /// the port's bit rate to tell transmissions apart (`Config::bit_rate`);
    /// without it the go-back ends as V(A) moves, as before.
    pub(super) fn go_back_from_after_ack(&self, nr: u8) -> Option<u8> {
        let from = self.go_back_from?;
        let same = self.heard_in.is_some() && self.heard_in == self.go_back_heard_in;
        (same && self.seq_diff(nr, from) <= self.seq_diff(self.vs, from)).then_some(nr)
    }

    /// An I frame out of sequence with SREJ in use (6.4.4.2, 4.4.2): keep
    /// it if within V(R)+1 .. V(R)+k-1 and ask with SREJ for each missing
    /// frame not asked for yet. Dire Wolf's erratum: the SDL would ask for
    /// N(S), the frame just received; ask for the gap before it instead.
    pub(super) fn out_of_sequence_srej(
        &mut self,
        now: Instant,
        payload: Payload,
        ns: u8,
        pf: bool,
    ) {
        let offset = self.seq_diff(ns, self.vr);
        if offset > 0 && offset < self.k_rx {
            let slot = &mut self.stored[usize::from(ns)];
            if slot.is_none() {
                *slot = Some(payload);
            }
            if !pf {
                return self.request_missing(ns, false);
            }
        }
        if pf {
            self.enquiry_response(now, true);
        }
    }

    /// True if out-of-sequence frames wait for a gap to be filled.
    pub(super) fn has_stored_frames(&self) -> bool {
        self.stored.iter().any(Option::is_some)
    }

    /// One past the highest stored N(S) within the window.
    pub(super) fn stored_end(&self) -> u8 {
        (1..self.k_rx)
            .rev()
            .map(|offset| self.seq_add(self.vr, offset))
            .find(|&ns| self.stored[usize::from(ns)].is_some())
            .map_or(self.vr, |ns| self.seq_add(ns, 1))
    }

    /// Asks for each N(S) from V(R) up to `end` that is neither stored nor
    /// already asked for: with multi-SREJ in one SREJ response, N(R) the
    /// first and the others in its information field (4.3.2.4); otherwise
    /// one SREJ response each. The SREJ with N(R) = V(R) has F = 1 when
    /// answering a poll. Only single N(R)s are sent, no spans: Dire Wolf
    /// reads a span as its two ends.
    pub(super) fn request_missing(&mut self, end: u8, answer_poll: bool) {
        let mut missing = Vec::new();
        let mut seq = self.vr;
        while seq != end {
            let bit = 1u128 << seq;
            if self.stored[usize::from(seq)].is_none() && self.srej_requested & bit == 0 {
                missing.push(seq);
                self.srej_requested |= bit;
            }
            seq = self.seq_add(seq, 1);
        }
        if self.multi_srej_in_use() {
            if let Some((&nr, further)) = missing.split_first() {
                self.send_srej(nr, further, answer_poll);
            }
        } else {
            for nr in missing {
                self.send_srej(nr, &[], answer_poll);
            }
        }
    }

    /// Queues an SREJ response for `nr` and the `further` N(R)s (a
    /// multi-SREJ if any, 4.3.2.4); F = 1 if answering a poll and N(R) =
    /// V(R).
    fn send_srej(&mut self, nr: u8, further: &[u8], answer_poll: bool) {
        let info = MultiSrejInfo::singles(further.iter().copied()).encode(self.modulus);
        debug_assert!(info.is_ok(), "{info:?}");
        let control = Control::S {
            kind: Supervisory::Srej,
            nr,
            pf: answer_poll && nr == self.vr,
        };
        let pdu = self.pdu(
            CommandResponse::Response,
            control,
            None,
            info.unwrap_or_default(),
        );
        self.out.push_back(pdu);
    }

    /// "N(R) error recovery" (fig. C4.7a): error J, then re-establish
    /// (revision 4 re-establishes instead of sending FRMR).
    pub(super) fn nr_error_recovery(&mut self, now: Instant, nr: u8) {
        self.event(Event::Error(LinkError::NrSequence {
            nr,
            va: self.va,
            vs: self.top,
        }));
        self.reestablish(now);
    }

    /// T1 expiry (figs. C4.2-C4.6).
    pub(super) fn t1_expiry(&mut self, now: Instant) {
        self.t1_expired = true;
        // Whatever was resent may be lost again: the next REJ, SREJ or
        // answer to the enquiry is acted on.
        self.go_back_from = None;
        self.srej_resent_after_poll = 0;
        // T1 runs only while the channel is clear (it is paused while
        // busy): what we sent has left the air, even under a driver that
        // never says when its transmissions end.
        self.srej_resent_on_air = 0;
        self.poll_on_air = false;
        if self.config.role == Role::Secondary {
            return self.secondary_t1_expiry(now);
        }
        match self.state {
            State::Connected if self.busy_answers >= self.n2 => self.give_up(now),
            State::Connected => {
                // Revision 4: RC <- 1.
                self.rc = 1;
                self.select_t1_value();
                self.transmit_enquiry(now);
                self.set_state(State::TimerRecovery);
            }
            State::TimerRecovery if self.rc >= self.n2 => self.give_up(now),
            State::TimerRecovery => {
                self.rc += 1;
                self.select_t1_value();
                self.transmit_enquiry(now);
            }
            _ => self.t1_expiry_unconnected(now),
        }
    }

    /// N2 tries have gone unanswered, or N2 answers came from a busy peer
    /// that acknowledged nothing, or a frame was due a sending beyond its
    /// 1 + N2: the link fails (DL-ERROR I, T or U, then
    /// DL-DISCONNECT).
    pub(super) fn give_up(&mut self, now: Instant) {
        let reason = if self.unacked() > 0 {
            FailureReason::UnacknowledgedData
        } else if self.peer_receiver_busy {
            FailureReason::PeerBusy
        } else {
            FailureReason::NoResponseToEnquiry
        };
        self.discard_queues();
        // Erratum (Dire Wolf): the SDL says DL-DISCONNECT "request";
        // tell the user and the peer (DM, F = 0). A primary sends
        // no responses: its secondary finds out by its T3.
        if self.config.role == Role::Combined {
            self.send_u(Unnumbered::Dm, CommandResponse::Response, false, Vec::new());
        }
        self.enter_disconnected(now);
        self.event(Event::LinkFailure { reason });
    }

    /// T3 expiry in state 3: poll the idle link (4.4.5.2). Erratum (Dire
    /// Wolf): RC <- 1 as in the 2006 SDL, not 0.
    pub(super) fn t3_expiry(&mut self, now: Instant) {
        match (self.config.role, self.config.mode) {
            (Role::Secondary, _) => return self.secondary_t3_expiry(now),
            (Role::Primary, Mode::Nrm) => return self.nrm_idle_poll(),
            _ => {}
        }
        if self.state == State::Connected {
            self.rc = 1;
            self.transmit_enquiry(now);
            self.set_state(State::TimerRecovery);
        }
    }

    /// T1V from the round trip: 2 SRT (fig. C4.7b), or with
    /// [`Config::srt_first_sample`](crate::Config::srt_first_sample) at
    /// least SRT + 4 RTTVAR (RFC 6298 2.3).
    fn t1_from_srt(&self) -> Duration {
        let sdl = self.srt * 2;
        if self.config.srt_first_sample && self.srt_measured {
            sdl.max(self.srt.saturating_add(self.rttvar.saturating_mul(4)))
        } else {
            sdl
        }
    }

    /// The least T1V that "select T1 value" gives with RC = 0: T1 min,
    /// and for a combined station that does not poll on the last I frame
    /// of a burst, 2 (SRT + T2). Such a station's frames are acknowledged
    /// up to the peer's T2 after they arrive (6.7.1.2; our own T2 stands
    /// for the peer's), while SRT may come from answers that were not
    /// delayed (the SABM(E)/UA exchange, enquiries): T1 is twice the
    /// expected answer time, as 2 SRT is twice the round trip, or every
    /// burst would end in a needless enquiry.
    fn t1_floor(&self) -> Duration {
        let config = &self.config;
        if config.srt_first_sample && config.role == Role::Combined && !config.poll_on_last_i_frame
        {
            config
                .t1_min
                .max(self.srt.saturating_add(config.t2).saturating_mul(2))
        } else {
            config.t1_min
        }
    }

    /// "Select T1 value" (fig. C4.7b, revision 4): with RC = 0, SRT <-
    /// 7/8 SRT + 1/8 (T1V - time left on T1 when last stopped) and T1V <-
    /// 2 SRT; after an expiry, T1V grows by the configured back-off.
    ///
    /// The SDL starts SRT at half the initial T1V and moves it an eighth
    /// per sample, so with a long initial T1 (needed before anything is
    /// known of the link) T1 stays near it for dozens of exchanges after a
    /// short round trip has been measured. With
    /// [`Config::srt_first_sample`](crate::Config::srt_first_sample) SRT and
    /// its variation are RFC 6298's (2.2, 2.3): the first measurement R
    /// gives SRT = R and RTTVAR = R / 2, later ones RTTVAR <- 3/4 RTTVAR +
    /// 1/4 |SRT - R| and SRT as the SDL smooths it; T1V is the larger of
    /// 2 SRT and SRT + 4 RTTVAR. On a radio channel the answer's wait
    /// for the channel (p-persistence) varies as much as it lasts, and 2
    /// SRT alone expires on the slower draws.
    pub(super) fn select_t1_value(&mut self) {
        let config = &self.config;
        if self.rc == 0 {
            if !config.t1_adaptive {
                return;
            }
            if let Some(left) = self.t1_remaining_when_stopped.take() {
                let rtt = self.t1v.saturating_sub(left);
                if !config.srt_first_sample {
                    self.srt = self.srt * 7 / 8 + rtt / 8;
                } else if self.srt_measured {
                    let error = self.srt.abs_diff(rtt);
                    self.rttvar = self.rttvar * 3 / 4 + error / 4;
                    self.srt = self.srt * 7 / 8 + rtt / 8;
                } else {
                    self.srt = rtt;
                    self.rttvar = rtt / 2;
                }
                self.srt_measured = true;
            }
            self.t1v = self.t1_from_srt().max(self.t1_floor()).min(config.t1_max);
        } else if self.t1_expired {
            let base = self.t1_from_srt();
            let t1v = match config.t1_backoff {
                T1Backoff::Constant => base,
                T1Backoff::Linear { step } => base.saturating_add(step * u32::from(self.rc)),
                T1Backoff::Exponential => {
                    let factor = 1u32.checked_shl(u32::from(self.rc) + 1).unwrap_or(u32::MAX);
                    self.srt.checked_mul(factor).unwrap_or(Duration::MAX)
                }
            };
            let floor = if config.t1_adaptive {
                self.t1_floor()
            } else {
                Duration::ZERO
            };
            self.t1v = t1v.clamp(floor, config.t1_max.max(floor));
        }
    }
}
