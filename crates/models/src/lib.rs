//! Closed-form performance models of AX.25 links.
//!
//! - [`airtime`]: the time a frame occupies the channel, with the HDLC
//!   bit-stuffing allowance both source papers use.
//! - [`ronan`]: the corrected transfer-time model of Ronan, Long and Walsh,
//!   "More experiments with DTN over AX.25 networks", section III.B
//!   (Tables II and III).
//! - [`zielinski`]: the effective-throughput model of Zieliński, "Effective
//!   throughput of AX.25 protocol", Bull. Pol. Ac.: Tech. 61(3), 2013,
//!   equations (1)-(5).
//!
//! All times are in seconds and all rates in bit/s, as `f64`: these are
//! closed-form models, not the simulator, which works in integer virtual time.

pub mod airtime;
pub mod ronan;
pub mod zielinski;
