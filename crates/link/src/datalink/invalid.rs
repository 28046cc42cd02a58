//! Received frames of the link that do not decode: AX.25 v2.2 C4.3 error
//! codes L ("control field invalid or not implemented"), M ("information
//! field was received in a U- or S-type frame") and N ("length of frame
//! incorrect for frame type"), figs. C4.1-C4.5.
//!
//! In the information transfer states the SDL handles all three as a
//! DL-CONNECT request (figs. C4.4a, C4.5a, revision 4): DL-ERROR
//! indication, discard the I frame queue, establish data link, set layer 3
//! initiated, then state 1 or, on a v2.2 link, state 5. The UA then
//! completes the reset with a DL-CONNECT confirm ([`Event::Connected`]),
//! so the user learns that queued and unacknowledged data were dropped.
//! Erratum: fig. C4.5a ends this path in state 4 (timer recovery); like
//! the DL-CONNECT request it belongs in state 1 or 5. In the other states
//! the error is only indicated (figs. C4.1, C4.3).
//!
//! An unbalanced secondary cannot set the link up again: it answers with
//! FRMR, W set, and X too for M and N (ISO/IEC 13239 5.5.3.4.2; in LAPB,
//! ITU-T X.25 2.3.4.9, X also stands for an S or U frame of the wrong
//! length), and its primary resets the link.

use linklab_wire::ax25::FrameError;
use linklab_wire::control::ControlError;

use super::{Link, State};
use crate::config::Role;
use crate::event::{Event, LinkError};
use crate::framing::Framing;
use linklab_core::Instant;

/// What makes a received frame of the link invalid (AX.25 v2.2 C4.3 error
/// codes L, M and N).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InvalidFrame {
    /// L: the control field is invalid or not implemented (an unknown U
    /// frame, reserved bits set in a modulo-128 S frame).
    UnknownControl,
    /// M: an information field in an S or U frame that may carry none
    /// (AX.25 v2.2 3.5: only I, UI, XID, TEST and FRMR frames may), or an
    /// SREJ's that is not a list of further N(R)s (multi-SREJ, 4.3.2.4).
    InfoNotAllowed,
    /// N: the frame is too short for its type (a modulo-128 I or S frame
    /// with a one-octet control field, an I or UI frame without PID).
    BadLength,
}

impl InvalidFrame {
    /// The class of `error`, the reason a frame of the link did not
    /// decode, or `None` if it is none of L, M and N (no control field at
    /// all, a bad address field): such frames are not for the link.
    pub fn of(error: &FrameError) -> Option<InvalidFrame> {
        match error {
            FrameError::Control(
                ControlError::UnknownUnnumbered { .. }
                | ControlError::ReservedSupervisoryBits { .. },
            ) => Some(InvalidFrame::UnknownControl),
            FrameError::InfoNotAllowed { .. } | FrameError::SrejInfo(_) => {
                Some(InvalidFrame::InfoNotAllowed)
            }
            FrameError::Control(ControlError::TooShort { .. }) | FrameError::MissingPid { .. } => {
                Some(InvalidFrame::BadLength)
            }
            FrameError::Control(_) | FrameError::Address(_) | FrameError::PidNotAllowed { .. } => {
                None
            }
        }
    }

    /// The DL-ERROR indication for a frame with control field `control`.
    fn error(self, control: Vec<u8>) -> LinkError {
        match self {
            InvalidFrame::UnknownControl => LinkError::ControlFieldInvalid { control },
            InvalidFrame::InfoNotAllowed => LinkError::InfoNotPermitted { control },
            InvalidFrame::BadLength => LinkError::FrameLength { control },
        }
    }
}

impl<F: Framing> Link<F> {
    /// Processes a received frame of this link that does not decode for
    /// one of the reasons of [`InvalidFrame`] (see [`InvalidFrame::of`]):
    /// `control` is its control field as received (one octet, or two for
    /// a modulo-128 I or S frame), `command` whether its address field
    /// marks a command. The caller has checked that the frame is for this
    /// link (its address field decodes and names both stations).
    ///
    /// Connected (states 3 and 4): error L, M or N, and the link is
    /// re-established (figs. C4.4a, C4.5a) — or, on an unbalanced
    /// secondary, the frame is rejected with FRMR. Other states: the error
    /// only.
    pub fn handle_invalid_frame(
        &mut self,
        now: Instant,
        invalid: InvalidFrame,
        control: &[u8],
        command: bool,
    ) {
        self.event(Event::Error(invalid.error(control.to_vec())));
        if !matches!(self.state, State::Connected | State::TimerRecovery) {
            return;
        }
        if self.config.role == Role::Secondary {
            return self.reject_invalid_frame(now, invalid, control, command);
        }
        self.discard_queues();
        self.establish_data_link(now);
        self.layer_3_initiated = true;
        self.set_state(self.awaiting_state());
    }
}
