//! Scenario runners of linklab (ARCHITECTURE.md, `sim`): the real protocol
//! engines on a simulated medium, driven by the discrete-event kernel in
//! virtual time, with replications and confidence intervals.
//!
//! - [`transfer`]: one message between two AX.25 stations on a half-duplex
//!   CSMA radio channel, directly or each behind a host and a KISS TNC
//!   (Ronan, Long and Walsh, sections III.B and IV).
//! - [`ronan`]: the Ronan reproductions: Tables II and III (model and
//!   simulation), Tables V-VII (measured transfers through host and TNC).
//! - [`zielinski`]: firmware TNCs (the AX.25 engine inside a modelled
//!   controller) on Zieliński's wired link, and the reproduction of his
//!   Figs. 4-15.
//! - [`bux`]: HDLC NRM against ABM on a full-duplex line (Bux, Kümmerle
//!   and Truong 1982, Figs. 2-11).
//! - [`published`]: the papers' published figures, one loader for all.
//! - [`experiment`]: scenario files (TOML) that `linklab sim` runs.
//! - [`report`]: what a reproduction hands to the CLI (tables, figures,
//!   checks).

pub mod builtin;
pub mod bux;
pub mod dstar;
pub mod experiment;
pub mod korb;
pub mod published;
pub mod radio_ip;
pub mod report;
pub mod ronan;
pub mod transfer;
pub mod workload;
pub mod zielinski;

pub use ronan::{compare, Comparison, RonanError};
pub use transfer::{
    run_transfer, HostConfig, KissPath, StackConfig, TransferConfig, TransferError, TransferOutcome,
};
