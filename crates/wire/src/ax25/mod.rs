//! AX.25 v2.2 wire formats (AX.25 Link Access Protocol for Amateur Packet
//! Radio, v2.2, 2025 revision 4): addresses, frames, PIDs, the segmenter
//! header, XID parameters, FRMR information fields, the further N(R)s of
//! a multi-SREJ, and the digipeater's rules for repeating a frame (AX.25's
//! and an APRS station digipeater's). Control
//! fields are the HDLC ones of [`crate::control`].
//!
//! Frames here exclude flags and FCS, as KISS carries them.

mod address;
mod digipeat;
mod digipeat_aprs;
mod frame;
mod frmr;
mod pid;
mod segment;
mod srej;
mod xid;

pub use address::{
    same_station, Address, AddressError, AddressField, Callsign, CallsignError, CommandResponse,
    Subfield, ADDRESS_LEN, CALLSIGN_MAX_LEN, MAX_DIGIPEATERS,
};
pub use digipeat::digipeat;
pub use digipeat_aprs::{dedupe_key, DedupeKey, DigipeatRules, NnAlias};
pub use frame::{Frame, FrameError};
pub use frmr::{FrmrError, FrmrInfo};
pub use pid::Pid;
pub use segment::{SegmentError, SegmentHeader, MAX_REMAINING};
pub use srej::{MultiSrejInfo, SrejInfoError, SrejRequest};
pub use xid::{
    ClassesOfProcedures, HdlcOptionalFunction, HdlcOptionalFunctions, ProcedureClass, XidError,
    XidNumber, XidParameter, XidParams, FORMAT_INDICATOR, GROUP_IDENTIFIER, PI_ACK_TIMER,
    PI_CLASSES_OF_PROCEDURES, PI_HDLC_OPTIONAL_FUNCTIONS, PI_I_FIELD_LENGTH_RX,
    PI_I_FIELD_LENGTH_TX, PI_RETRIES, PI_WINDOW_SIZE_RX, PI_WINDOW_SIZE_TX,
};
