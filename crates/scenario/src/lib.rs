//! Scenario runners of linklab (ARCHITECTURE.md, `sim`): the real protocol
//! engines on a simulated medium, driven by the discrete-event kernel in
//! virtual time, with replications and confidence intervals.
//!
//! - [`transfer`]: one message between two AX.25 stations on a half-duplex
//!   CSMA radio channel (Ronan, Long and Walsh, section III.B).
//! - [`ronan`]: that transfer replicated and set against Ronan's transfer
//!   time model (Tables II and III).
//! - [`zielinski`]: firmware TNCs (the AX.25 engine inside a modelled
//!   controller) on Zieliński's wired link, and the reproduction of his
//!   Figs. 4-15.
//! - [`report`]: what a reproduction hands to the CLI (tables, figures,
//!   checks).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod report;
pub mod ronan;
pub mod transfer;
pub mod zielinski;

pub use ronan::{compare, Comparison};
pub use transfer::{run_transfer, TransferConfig, TransferError, TransferOutcome};
