//! Why octets are not a valid HDLC/LAPB frame, or an address does not fit
//! the LAPB addressing rule.

use thiserror::Error;

use super::address::{Address, LinkProcedure, Role};
use crate::ax25::FrmrError;
use crate::control::ControlError;

/// Errors of the [`crate::lapb`] module.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LapbError {
    /// No octet at all: the address field is missing (X.25 2.2.8 calls a
    /// frame shorter than 32 bits between flags invalid).
    #[error("frame is empty: the address octet is missing")]
    Empty,
    /// The control field is bad.
    #[error(transparent)]
    Control(#[from] ControlError),
    /// An information field on a frame type that may not carry one
    /// (X.25 2.3.4; ISO 13239 5.5).
    #[error("{frame} frame carries {len} octets of information; only I, UI, XID, TEST and FRMR frames may")]
    InfoNotAllowed {
        /// The frame's name, e.g. `"RR"`.
        frame: &'static str,
        /// Octets found after the control field.
        len: usize,
    },
    /// The FRMR information field is bad (X.25 2.3.4.9).
    #[error(transparent)]
    Frmr(#[from] FrmrError),
    /// [`crate::lapb::Frame::frmr_info`] on a frame that is not FRMR.
    #[error("{frame} frame has no FRMR information field")]
    NotFrmr {
        /// The frame's name.
        frame: &'static str,
    },
    /// A received address that is neither of the two the link uses
    /// (X.25 2.4.2: such frames are discarded).
    #[error("address {address} is neither of the two used by {procedure} LAPB: a {receiver} receives commands with address {own} and responses with {peer}")]
    UnexpectedAddress {
        /// The address received.
        address: Address,
        /// Role of the receiving station.
        receiver: Role,
        /// Single link or multilink.
        procedure: LinkProcedure,
        /// The receiver's own address (commands to it carry this).
        own: Address,
        /// The peer's address (responses to the receiver carry this).
        peer: Address,
    },
}
