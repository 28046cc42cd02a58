//! Information transfer: sending I frames within the window, receiving
//! them in sequence, acknowledgements, RR/RNR and the P/F checkpoint
//! (AX.25 v2.2 6.2, 6.4.1-6.4.3, 6.4.6, 6.4.9-6.4.10; fig. C4.4).

use linklab_wire::ax25::{CommandResponse, Pid};
use linklab_wire::control::{Control, Supervisory, Unnumbered};

use super::{peer_bursts, Link, Payload, SendError, State};
use crate::config::{AckPolicy, Mode, PollPolicy, Role, T1OnIFrame};
use crate::event::{Event, LinkError, Version};
use crate::framing::{Framing, Pdu};
use crate::segment::{max_segmented_len, segment};
use crate::timer::Timer;
use linklab_core::Instant;

impl<F: Framing> Link<F> {
    /// DL-DATA request with PID 0xF0 (no layer 3); see
    /// [`Link::send_with_pid`].
    pub fn send(&mut self, data: Vec<u8>) -> Result<(), SendError> {
        self.send_with_pid(Pid::NoLayer3, data)
    }

    /// DL-DATA request: queues `data` for transmission in I frames. Data
    /// longer than N1 (for sending) is segmented (PID 0x08, 6.6) on a v2.2
    /// link whose peer did not refuse segmentation, and refused otherwise.
    /// A data unit is segmented when its first I frame is due; if XID
    /// negotiation makes it unsendable by then, it is discarded with
    /// [`LinkError::DataDiscarded`].
    pub fn send_with_pid(&mut self, pid: Pid, data: Vec<u8>) -> Result<(), SendError> {
        if !matches!(self.state, State::Connected | State::TimerRecovery) {
            return Err(SendError::NotConnected { state: self.state });
        }
        let n1 = self.n1_tx;
        let len = data.len();
        if len > n1 {
            if self.version == Version::V2_0 {
                return Err(SendError::TooLongForV2_0 { len, n1 });
            }
            if !self.segmenter {
                return Err(SendError::NoSegmenter { len, n1 });
            }
            let max = max_segmented_len(n1);
            if len > max {
                return Err(SendError::TooLongToSegment { len, n1, max });
            }
        }
        self.i_queue.push_back((pid, data));
        Ok(())
    }

    /// DL-UNIT-DATA request (C4.1, 4.3.3.6): sends `data` to the remote
    /// station in a UI command frame (P = 0, same address path), outside
    /// the link's sequencing: in any state, unacknowledged, never
    /// retransmitted. At most N1 octets.
    pub fn send_unit_data(&mut self, pid: Pid, data: Vec<u8>) -> Result<(), SendError> {
        let n1 = self.n1_tx;
        if data.len() > n1 {
            return Err(SendError::UnitDataTooLong {
                len: data.len(),
                n1,
            });
        }
        let control = Control::U {
            kind: Unnumbered::Ui,
            pf: false,
        };
        let pdu = self.pdu(CommandResponse::Command, control, Some(pid), data);
        self.out.push_back(pdu);
        Ok(())
    }

    /// UI frame received (4.3.3.6): DL-UNIT-DATA indication; a command
    /// with P = 1 is answered with DM F = 1 outside the information
    /// transfer states, with RR/RNR F = 1 in them.
    pub(super) fn on_ui(&mut self, now: Instant, pdu: &Pdu, pf: bool, command: bool) {
        let pid = pdu.pid.unwrap_or(Pid::NoLayer3);
        self.event(Event::UnitData {
            pid,
            data: pdu.info.clone(),
        });
        if command && pf {
            if matches!(self.state, State::Connected | State::TimerRecovery) {
                self.enquiry_response(now, true);
            } else {
                self.send_u(Unnumbered::Dm, CommandResponse::Response, true, Vec::new());
            }
        }
    }

    /// The next information field to send for the first time: the rest of
    /// the data unit being segmented, or the next data unit, segmented
    /// now with the N1 in force (6.6).
    fn next_payload(&mut self) -> Option<Payload> {
        loop {
            if let Some(payload) = self.segments.pop_front() {
                return Some(payload);
            }
            let (pid, data) = self.i_queue.pop_front()?;
            let n1 = self.n1_tx;
            if data.len() <= n1 {
                return Some((pid, data));
            }
            let segments = (self.segmenter && self.version == Version::V2_2)
                .then(|| segment(pid, &data, n1))
                .flatten();
            match segments {
                Some(segments) => self
                    .segments
                    .extend(segments.into_iter().map(|info| (Pid::Segmentation, info))),
                None => self.event(Event::Error(LinkError::DataDiscarded {
                    len: data.len(),
                    n1,
                    segmenter: self.segmenter,
                })),
            }
        }
    }

    /// "I frame pops off queue" (fig. C4.4a): retransmissions first
    /// (SREJ'd frames, then frames from V(S) after a backtrack), then new
    /// frames while the window V(A)..V(A)+k is open and the peer not busy.
    pub(super) fn next_i_frame(&mut self, now: Instant) -> Option<Pdu> {
        // While our XID command is outstanding, I frames wait for the
        // agreed N1, k and segmentation (6.3.2: negotiation precedes data).
        if !matches!(self.state, State::Connected | State::TimerRecovery)
            || self.peer_receiver_busy
            || self.negotiating
        {
            return None;
        }
        let ns = loop {
            if let Some(ns) = self.resend.pop_front() {
                if self.seq_diff(ns, self.va) < self.seq_diff(self.top, self.va) {
                    if !self.may_send_again(now, ns) {
                        return None;
                    }
                    self.srej_resent_on_air |= 1u128 << ns;
                    self.stats.i_frames_resent += 1;
                    break ns;
                }
                continue;
            }
            if self.vs != self.top {
                let ns = self.vs;
                if !self.may_send_again(now, ns) {
                    return None;
                }
                self.vs = self.seq_add(ns, 1);
                self.go_back_on_air |= self.go_back_from.is_some();
                self.stats.i_frames_resent += 1;
                break ns;
            }
            if !self.may_send_new_i_frame() {
                return None;
            }
            let payload = self.next_payload()?;
            let ns = self.top;
            self.sent[usize::from(ns)] = Some(payload);
            self.top = self.seq_add(ns, 1);
            self.vs = self.top;
            self.window_filled();
            break ns;
        };
        let (pid, info) = self.sent[usize::from(ns)].clone()?;
        // Checkpointing: at most one P = 1 outstanding (4.4.3; C4.4 "P = 1 only
        // if no poll outstanding"); the answer with F = 1 clears it.
        // A secondary never polls; an NRM primary polls on the last I
        // frame if its policy says so (the other policy polls on any frame
        // as it is sent, in `emitting`).
        let may_poll = match (self.config.role, self.config.mode) {
            (Role::Secondary, _) => false,
            (Role::Primary, Mode::Nrm) => self.config.poll_policy == PollPolicy::OnLastIFrame,
            _ => self.config.poll_on_last_i_frame,
        };
        let poll = may_poll && !self.poll_outstanding && self.ends_burst();
        if poll {
            self.poll_outstanding = true;
        }
        self.polled_frame = poll.then_some(ns);
        self.poll_on_air = poll;
        let control = Control::I {
            ns,
            nr: self.vr,
            pf: poll,
        };
        let pdu = self.pdu(CommandResponse::Command, control, Some(pid), info);
        self.acknowledge_pending = false;
        self.timers.stop(Timer::T2, now);
        self.stop_t3(now);
        self.t1_on_i_frame(now);
        Some(pdu)
    }

    /// Counts a retransmission of I frame `ns`. The oldest unacknowledged
    /// frame, V(A), is sent again at most N2 times (N2, "maximum number
    /// of retries", 6.7.2.4): once more fails the link
    /// ([`FailureReason::UnacknowledgedData`]) and false is returned.
    /// However the retransmissions come about (T1 recovery, REJ, SREJ), a
    /// peer that keeps asking for a frame it never takes, or answers every
    /// poll with the same stale N(R), is given up on within N2 tries: the
    /// SDL counts only T1 expiries, which REJs and stale answers reset or
    /// bypass, so such a peer held a link for ever, retransmitting at wire
    /// speed. Frames after V(A) are not counted: a go-back resends them
    /// for each loss before them while V(A) advances.
    ///
    /// [`FailureReason::UnacknowledgedData`]: crate::FailureReason::UnacknowledgedData
    fn may_send_again(&mut self, now: Instant, ns: u8) -> bool {
        if ns != self.va {
            return true;
        }
        if self.oldest_resent >= self.n2 {
            self.give_up(now);
            return false;
        }
        self.oldest_resent += 1;
        true
    }

    /// True if the I frame just taken is the last one [`Link::next_i_frame`]
    /// would give now: no retransmission left, and no new frame allowed
    /// (window full, peer busy) or none queued. Under
    /// [`Config::poll_on_last_i_frame`](crate::Config::poll_on_last_i_frame)
    /// it carries P, so every burst ends with a poll and the peer answers
    /// at once, whether the burst ended because the window filled or
    /// because the data did.
    fn ends_burst(&self) -> bool {
        let resend_left = self.resend.iter().any(|&ns| self.outstanding(ns));
        let new_left =
            self.may_send_new_i_frame() && !(self.segments.is_empty() && self.i_queue.is_empty());
        !resend_left && self.vs == self.top && (self.peer_receiver_busy || !new_left)
    }

    /// True if a new I frame (one never sent) may go now: the window
    /// V(A)..V(A)+k is open, and, for a combined station that polls on the
    /// last I frame of a burst and holds new frames for the answer
    /// ([`Config::poll_holds_new_frames`](crate::Config::poll_holds_new_frames),
    /// as G8BPQ's LinBPQ does), no poll is outstanding: a frame sent after
    /// the poll would end its burst without P (only one P may be
    /// outstanding, 4.4.3) and wait for the peer's T2 instead of being
    /// acknowledged at once. Retransmissions are not held.
    fn may_send_new_i_frame(&self) -> bool {
        let holds_for_final = self.config.role == Role::Combined
            && self.config.poll_on_last_i_frame
            && self.config.poll_holds_new_frames
            && self.poll_outstanding;
        self.seq_diff(self.top, self.va) < self.k && !holds_for_final
    }

    /// T1 as an I frame is sent ([`Config::t1_on_i_frame`](crate::Config::t1_on_i_frame)). An NRM
    /// primary's T1 times its poll alone (Annex B of ISO 4335 as Bux et
    /// al. quote it in A1.3): `emitting` starts it with the P = 1.
    fn t1_on_i_frame(&mut self, now: Instant) {
        if self.config.role == Role::Primary && self.config.mode == Mode::Nrm {
            return;
        }
        match self.config.t1_on_i_frame {
            // Erratum (Dire Wolf): restart T1 on every I frame sent, or a
            // long window times out before its last frame could be
            // acknowledged.
            T1OnIFrame::Restart => self.start_t1(now),
            T1OnIFrame::StartIfStopped => {
                if !self.timers.is_running(Timer::T1) {
                    self.start_t1(now);
                }
            }
        }
    }

    /// True if [`Link::next_i_frame`] has a frame to send now.
    pub(super) fn i_frame_ready(&self) -> bool {
        matches!(self.state, State::Connected | State::TimerRecovery)
            && !self.peer_receiver_busy
            && !self.negotiating
            && (self.resend.iter().any(|&ns| self.outstanding(ns))
                || self.vs != self.top
                || (self.may_send_new_i_frame()
                    && !(self.segments.is_empty() && self.i_queue.is_empty())))
    }

    /// LM-SEIZE confirm with acknowledge pending and no I frame to carry
    /// it (fig. C4.4b): RR now if the policy says so.
    pub(super) fn ack_at_transmit_opportunity(&mut self, now: Instant) {
        if self.acknowledge_pending
            && !self.withholds_ack()
            && self.config.ack_policy == AckPolicy::Immediately
            && matches!(self.state, State::Connected | State::TimerRecovery)
        {
            self.enquiry_response(now, false);
        }
    }

    /// T2 expiry: the delayed acknowledgement (6.7.1.2).
    pub(super) fn t2_expiry(&mut self, now: Instant) {
        if self.acknowledge_pending
            && !self.withholds_ack()
            && matches!(self.state, State::Connected | State::TimerRecovery)
        {
            self.enquiry_response(now, false);
        }
    }

    /// I frame received in state 3 or 4 (figs. C4.4c, C4.5). An
    /// unbalanced primary receives I frames as responses, where the bit is
    /// F: the end of the secondary's transmission, a checkpoint (ISO/IEC
    /// 13239 5.5.1; Bux et al. 1982, Appendix A1.3).
    pub(super) fn on_i(
        &mut self,
        now: Instant,
        payload: Payload,
        ns: u8,
        nr: u8,
        pf: bool,
        command: bool,
    ) {
        let primary = self.config.role == Role::Primary;
        if command == primary {
            if !primary {
                self.event(Event::Error(LinkError::IResponse));
            }
            return;
        }
        let poll = command && pf;
        // Erratum (Dire Wolf, github issue 102): a v2.0 peer cannot know
        // our N1, so this is strict; it is the N1 we notify in XID.
        if payload.1.len() > self.config.n1 {
            self.event(Event::Error(LinkError::IFrameTooLong {
                len: payload.1.len(),
                n1: self.config.n1,
            }));
            return self.reestablish(now);
        }
        if !self.nr_valid(nr) {
            return self.nr_error_recovery(now, nr);
        }
        self.acknowledge(now, nr);
        self.got_i = true;
        self.receive_i(now, payload, ns, poll);
        if poll {
            self.checkpoint_on_poll(nr);
        } else if pf && primary {
            self.final_received(now, nr);
        }
    }

    /// The information part of an I frame: deliver it if in sequence, or
    /// recover with REJ or SREJ (6.4.2, 6.4.4).
    fn receive_i(&mut self, now: Instant, payload: Payload, ns: u8, poll: bool) {
        if self.receiver_busy() {
            // 6.4.2.2: discard, only repeat the busy indication.
            if poll {
                self.enquiry_response(now, true);
            }
            return;
        }
        if ns == self.vr {
            let len = payload.1.len();
            self.accept_in_sequence(payload);
            let window_or_t2 = self.config.ack_policy == AckPolicy::WindowOrT2;
            let peer_window_full = window_or_t2 && {
                let gap = peer_bursts::same_transmission(self.config.bit_rate, self.config.t2, len);
                self.peer_bursts.in_sequence_frame(now, gap)
            };
            if poll {
                self.enquiry_response(now, true);
            } else if window_or_t2 {
                self.acknowledge_pending = true;
                if peer_window_full || self.seq_diff(self.vr, self.nr_sent) >= self.k_rx {
                    self.enquiry_response(now, false);
                } else {
                    self.timers.start(Timer::T2, now, self.config.t2);
                }
            } else if !self.acknowledge_pending {
                self.acknowledge_pending = true;
                if self.config.ack_policy == AckPolicy::AfterT2 {
                    self.timers.start(Timer::T2, now, self.config.t2);
                }
            }
        } else if self.srej_in_use() {
            self.out_of_sequence_srej(now, payload, ns, poll);
        } else if self.reject_exception && !self.go_back_seen(ns) {
            if poll {
                self.enquiry_response(now, true);
            }
        } else {
            // 6.4.4.1: discard and send REJ once per exception.
            self.reject_exception = true;
            self.out_of_sequence_heard = 1u128 << ns;
            self.send_s(Supervisory::Rej, CommandResponse::Response, poll);
            self.acknowledge_pending = false;
            self.timers.stop(Timer::T2, now);
        }
    }

    /// With [`Config::reject_again_after_go_back`](crate::Config::reject_again_after_go_back),
    /// in REJ exception: true if N(S) was received out of sequence before
    /// in this exception, so the sender is sending again from our REJ's
    /// N(R) and that frame was lost again (within one exception the sender
    /// sends each N(S) once unless it goes back). Notes N(S) otherwise.
    fn go_back_seen(&mut self, ns: u8) -> bool {
        let bit = 1u128 << ns;
        let seen = self.out_of_sequence_heard & bit != 0;
        self.out_of_sequence_heard |= bit;
        seen && self.config.reject_again_after_go_back
    }

    /// V(R) <- V(R) + 1, deliver, then deliver any stored frames that are
    /// now in sequence (fig. C4.4c).
    fn accept_in_sequence(&mut self, payload: Payload) {
        let mut next = Some(payload);
        while let Some(payload) = next {
            self.srej_requested &= !(1u128 << self.vr);
            self.vr = self.seq_add(self.vr, 1);
            self.reject_exception = false;
            self.out_of_sequence_heard = 0;
            self.deliver(payload);
            next = self.stored[usize::from(self.vr)].take();
        }
    }

    /// DL-DATA indication, through the reassembler for PID 0x08.
    fn deliver(&mut self, (pid, info): Payload) {
        if pid != Pid::Segmentation {
            return self.event(Event::Data { pid, data: info });
        }
        match self.reassembler.push(&info) {
            Ok(Some((pid, data))) => self.event(Event::Data { pid, data }),
            Ok(None) => {}
            Err(error) => self.event(Event::Error(error)),
        }
    }

    /// RR or RNR received in state 3 or 4 (figs. C4.4b, C4.5).
    pub(super) fn on_rr_rnr(&mut self, now: Instant, rnr: bool, nr: u8, pf: bool, command: bool) {
        self.peer_receiver_busy = rnr;
        self.check_need_for_response(now, pf, command);
        if !self.nr_valid(nr) {
            return self.nr_error_recovery(now, nr);
        }
        if self.config.role != Role::Combined {
            self.acknowledge(now, nr);
            if command && pf {
                self.checkpoint_on_poll(nr);
            } else if pf {
                self.final_received(now, nr);
            }
            return;
        }
        if self.state == State::TimerRecovery && !command && pf {
            self.poll_answered(now, nr);
        } else {
            let report = self.checkpoint_report(command, pf);
            self.final_ends_checkpoint(command, pf);
            self.acknowledge(now, nr);
            if report && !rnr {
                self.checkpoint_retransmission_on_final(now, nr);
            }
        }
    }

    /// In state 3, a response with F = 1 answers the P = 1 we put on an I
    /// frame (poll on the last I frame of a window, 4.4.3), which ends that
    /// checkpoint so the next window may poll again. (In state 4 the answer
    /// to the enquiry is handled by [`Self::poll_answered`].)
    pub(super) fn final_ends_checkpoint(&mut self, command: bool, pf: bool) {
        if !command && pf {
            self.poll_outstanding = false;
        }
    }

    /// The answer (F = 1) to our enquiry in state 4 (fig. C4.5): V(A) <-
    /// N(R); if all is acknowledged, back to state 3 with T3, otherwise
    /// retransmit from N(R) ("invoke retransmission", unless a REJ with
    /// this N(R) already started it: `go_back_under_way`) and restart T1
    /// (Dire Wolf's erratum: the SDL leaves T1 stopped).
    pub(super) fn poll_answered(&mut self, now: Instant, nr: u8) {
        self.expect_late_final(nr);
        self.poll_outstanding = false;
        self.stop_t1(now);
        self.select_t1_value();
        self.enquiry_answered(nr);
        self.set_state(State::Connected);
        if self.top == self.va {
            self.start_t3(now);
        } else {
            if !self.go_back_under_way(nr) {
                self.invoke_retransmission(nr);
            }
            self.start_t1(now);
        }
    }

    /// The answer to our enquiry (F = 1 in state 4) with `nr`: V(A) <-
    /// N(R) and RC <- 0 (figs. C4.5, C4.6), counting a busy answer.
    pub(super) fn enquiry_answered(&mut self, nr: u8) {
        self.busy_answer();
        self.set_va(nr);
        self.rc = 0;
    }

    /// Counts an answer to our poll from a peer that is busy (RNR) while
    /// we have frames to send; any other answer ends the count, and so
    /// does an acknowledgement (`set_va`). The SDL's RC <- 0 on every answer
    /// would let a peer that stays busy hold the link for ever, polled
    /// each T1; after N2 such answers the link is given up on (DL-ERROR
    /// U) at the next T1 expiry. (A peer that answers with RR or REJ and
    /// a stale N(R) is caught by the frames it makes us send again:
    /// [`Self::next_i_frame`].)
    pub(super) fn busy_answer(&mut self) {
        let waiting = self.top != self.va || !self.i_queue.is_empty();
        if self.peer_receiver_busy && waiting {
            self.busy_answers = self.busy_answers.saturating_add(1);
        } else {
            self.busy_answers = 0;
        }
    }

    /// Acknowledgement by N(R) outside a poll answer: "check I frame
    /// acknowledged" in state 3, V(A) <- N(R) in state 4 (fig. C4.5), plus
    /// Dire Wolf's erratum: in state 4, once everything sent is
    /// acknowledged, return to state 3 (else RC creeps up to N2).
    pub(super) fn acknowledge(&mut self, now: Instant, nr: u8) {
        match self.state {
            State::Connected => self.check_i_frame_acked(now, nr),
            State::TimerRecovery => {
                self.set_va(nr);
                if self.top == self.va && !self.peer_receiver_busy {
                    self.stop_t1(now);
                    self.start_t3(now);
                    self.rc = 0;
                    self.set_state(State::Connected);
                    self.checkpoint_acknowledged();
                }
            }
            _ => {}
        }
    }

    /// Every I frame sent is acknowledged, and with it the frame that
    /// carried our P (or the enquiry's question is answered by the
    /// acknowledgement): a station that holds new frames for the answer
    /// ([`Config::poll_holds_new_frames`](crate::Config::poll_holds_new_frames))
    /// stops waiting for it. The F = 1 may have been lost, or never come
    /// (the P frame lost and sent again without P), and with T1 stopped
    /// nothing else would end the wait before T3; an F = 1 that still
    /// comes is a late answer, counted as error A.
    pub(super) fn checkpoint_acknowledged(&mut self) {
        if self.config.role == Role::Combined && self.config.poll_holds_new_frames {
            self.poll_outstanding = false;
        }
    }

    /// "Check I frame acknowledged" (fig. C4.7a, revision 4).
    fn check_i_frame_acked(&mut self, now: Instant, nr: u8) {
        if self.peer_receiver_busy {
            self.set_va(nr);
            if self.t1_may_run() {
                self.stop_t3(now);
                if !self.timers.is_running(Timer::T1) {
                    self.start_t1(now);
                }
            } else if !self.timers.is_running(Timer::T3) {
                // An NRM primary between polls has no T1 running: its
                // poll interval (T3) must go on, or nothing would ever
                // ask the busy secondary again.
                self.start_t3(now);
            }
        } else if nr == self.top {
            self.set_va(nr);
            self.stop_t1(now);
            self.start_t3(now);
            self.select_t1_value();
            self.checkpoint_acknowledged();
        } else if nr != self.va {
            self.set_va(nr);
            self.start_t1(now);
        }
    }

    /// V(A) <- N(R), freeing the acknowledged frames; V(S) is kept within
    /// V(A)..top.
    pub(super) fn set_va(&mut self, nr: u8) {
        // An ARM secondary counts T1 tries until an acknowledgement.
        if self.va != nr && self.config.role == Role::Secondary {
            self.rc = 0;
        }
        if self.va != nr {
            self.go_back_from = self.go_back_from_after_ack(nr);
            self.busy_answers = 0;
            self.oldest_resent = 0;
        }
        while self.va != nr {
            self.srej_resent_after_poll &= !(1u128 << self.va);
            self.sent[usize::from(self.va)] = None;
            self.va = self.seq_add(self.va, 1);
            self.checkpoint_unacked = self.checkpoint_unacked.saturating_sub(1);
        }
        if self.seq_diff(self.vs, self.va) > self.seq_diff(self.top, self.va) {
            self.vs = self.va;
        }
        self.window_opened();
    }

    /// "Check need for response" (fig. C4.7b): a command with P = 1 gets
    /// an enquiry response with F = 1; a response with F = 1 and no poll
    /// outstanding is error A. Any F = 1 ends what 4.4.4 withholds from
    /// the answer to our poll (see `on_srej`).
    pub(super) fn check_need_for_response(&mut self, now: Instant, pf: bool, command: bool) {
        if command && pf {
            self.enquiry_response(now, true);
        } else if !command && pf {
            self.srej_resent_after_poll = 0;
            if !self.poll_outstanding {
                self.event(Event::Error(LinkError::UnexpectedFinal));
            }
        }
    }

    /// "Enquiry response" (fig. C4.7a, revision 4): RNR if busy; with SREJ
    /// and frames waiting for a gap, answer F = 1 with SREJ for V(R) (4.4.4:
    /// "the same N(R) as the oldest unresolved SREJ") and repeat the other
    /// SREJs; else RR. Clears acknowledge pending.
    ///
    /// An NRM secondary answers in its transmission opportunity instead:
    /// its frames carry N(R), and the last has F = 1 (see `unbalanced.rs`).
    pub(super) fn enquiry_response(&mut self, now: Instant, f: bool) {
        if self.config.mode == Mode::Nrm && self.config.role == Role::Secondary {
            self.acknowledge_pending = false;
            self.timers.stop(Timer::T2, now);
            return;
        }
        let cr = CommandResponse::Response;
        if self.receiver_busy() {
            self.send_s(Supervisory::Rnr, cr, f);
        } else if self.srej_in_use() && f && self.has_stored_frames() {
            self.srej_requested = 0;
            let end = self.stored_end();
            self.request_missing(end, true);
        } else {
            self.send_s(Supervisory::Rr, cr, f);
        }
        self.acknowledge_pending = false;
        self.timers.stop(Timer::T2, now);
    }

    /// "Transmit enquiry" (fig. C4.7a): RR or RNR command with P = 1,
    /// start T1.
    pub(super) fn transmit_enquiry(&mut self, now: Instant) {
        let kind = if self.receiver_busy() {
            Supervisory::Rnr
        } else {
            Supervisory::Rr
        };
        self.send_s(kind, CommandResponse::Command, true);
        self.acknowledge_pending = false;
        self.timers.stop(Timer::T2, now);
        self.start_t1(now);
    }
}
