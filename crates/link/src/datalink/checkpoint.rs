//! Checkpointing for a combined station that polls on the last I frame of
//! every burst and holds new frames for the answer
//! ([`Config::poll_holds_new_frames`](crate::Config::poll_holds_new_frames)):
//! what the answer to that poll says about the frames sent, and acting on
//! it at once instead of after T1.
//!
//! AX.25 v2.2 leaves a gap reported in state 3 to T1 (fig. C4.4): an RR
//! with F = 1 only acknowledges. ISO/IEC 13239's checkpoint retransmission
//! has the station that sent P = 1 resend, on the F = 1
//! answer, every unacknowledged I frame sent before that P, and so does
//! G8BPQ's LinBPQ once per poll. With the poll on the last frame of the
//! burst, "sent before the P" is everything sent, and a receiver in REJ
//! exception (6.4.4.1: one REJ per exception), whose retransmitted frame
//! was lost again, says nothing else: without the checkpoint it costs a
//! T1 every time.
//!
//! The rule's risk is an answer that is not to the poll it seems to answer.
//! An enquiry sent on T1 expiry while the P = 1 of an I frame was still
//! unanswered gets a second F = 1 if the peer heard both: the answer to
//! the first ends Timer Recovery, new frames go with a new poll, and the
//! other answer, which the peer could not send while those frames were on
//! the air, comes after them. It is recognised two ways: an F = 1 that
//! arrives before the frame with the new poll has left the air (the layer
//! below says when, through [`Link::set_channel_busy`]; a driver that never
//! does never gets the checkpoint) cannot answer it; and if the answer
//! that ended Timer Recovery acknowledged the frame with the earlier P, the
//! peer heard both polls, and the next F = 1 is the other answer. Either
//! only acknowledges.

use super::{Link, State};
use crate::config::Role;
use crate::framing::Framing;
use linklab_core::Instant;

impl<F: Framing> Link<F> {
    /// True for a combined station that holds new frames for the answer to
    /// its poll on the last I frame of a burst: the rules of this module
    /// are its own.
    pub(super) fn checkpoints(&self) -> bool {
        let config = &self.config;
        config.role == Role::Combined && config.poll_on_last_i_frame && config.poll_holds_new_frames
    }

    /// True if a response with F = 1, received in state 3, answers our
    /// outstanding P = 1 and nothing was sent after the frame that carried
    /// it: its N(R) then reports on every frame we sent, and a gap it shows
    /// is a fresh loss, even one a go-back under way was meant to repair.
    /// Not the answer to an earlier poll (see the module's text).
    pub(super) fn checkpoint_report(&mut self, command: bool, pf: bool) -> bool {
        if command || !pf || !self.checkpoints() {
            return false;
        }
        let late = std::mem::take(&mut self.late_final_expected);
        !late && self.poll_outstanding && self.polled_frame.is_some() && !self.poll_on_air
    }

    /// The answer with this N(R) ends Timer Recovery: if the enquiry
    /// crossed an unanswered P = 1 on an I frame and this answer
    /// acknowledges that frame, the peer heard both polls and will answer
    /// the other one too. (If the frame is not acknowledged, it was most
    /// likely lost with its poll, and no second answer comes.)
    pub(super) fn expect_late_final(&mut self, nr: u8) {
        let crossed = std::mem::take(&mut self.enquiry_crossed_poll);
        self.late_final_expected = crossed
            && self
                .polled_frame
                .is_some_and(|ns| self.seq_diff(ns, self.va) < self.seq_diff(nr, self.va));
    }

    /// Checkpoint retransmission (ISO/IEC 13239): after
    /// [`Self::checkpoint_report`] found a gap, V(S) <- N(R) and T1
    /// restarted; the resent burst ends with P = 1 again.
    pub(super) fn checkpoint_retransmission_on_final(&mut self, now: Instant, nr: u8) {
        if self.state != State::Connected || self.peer_receiver_busy || self.top == self.va {
            return;
        }
        self.invoke_retransmission(nr);
        self.start_t1(now);
    }
}
