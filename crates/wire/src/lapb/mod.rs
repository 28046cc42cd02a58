//! HDLC and LAPB frames with a single-octet address field: LAPB (ITU-T
//! X.25 clause 2, the balanced ABM procedure, single link and multilink)
//! and HDLC (ISO/IEC 13239) in the unbalanced NRM and ARM procedures and
//! the balanced ABM procedure, modulo 8 and modulo 128.
//!
//! A frame between flags is (X.25 2.2; ISO 13239 clause 4):
//!
//! ```text
//! | Address 1 | Control 1-2 | Information 0-N | FCS 2 |
//! ```
//!
//! Frames here exclude flags and FCS; [`crate::hdlc`] and [`crate::fcs`]
//! handle those. Control fields are the HDLC ones of [`crate::control`]
//! (two octets for I and S frames in modulo 128, the LAPB "extended"
//! operation of X.25 2.3.2).
//!
//! The FRMR information field of X.25 2.3.4.9 is the one
//! AX.25 took over: [`FrmrInfo`] is [`crate::ax25::FrmrInfo`], re-exported
//! because it matches LAPB bit for bit. Its `v` flag is ISO 13239's
//! "invalid N(S)" bit, which X.25 leaves at 0.

mod address;
mod error;
mod frame;

pub use crate::ax25::{FrmrError, FrmrInfo};
pub use address::{
    lapb_address, lapb_command_response, unbalanced_command_response, Address, CommandResponse,
    LinkProcedure, Role, Station,
};
pub use error::LapbError;
pub use frame::Frame;
