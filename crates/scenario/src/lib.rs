//! Scenario runners of linklab (docs/architecture.md, "scenario"): the
//! real protocol engines on a simulated medium, driven by the
//! discrete-event kernel in virtual time, with replications and
//! confidence intervals.
//!
//! - [`transfer`]: one message between two AX.25 stations on a half-duplex
//!   CSMA radio channel, directly or each behind a host and a KISS TNC
//!   ([`transfer::HostAndTnc`], also under the IP hosts of
//!   [`ronan::tcpip`]) (Ronan, Long and Walsh, sections III.B and IV).
//! - [`ronan`]: the Ronan reproductions: Tables II and III (model and
//!   simulation), Tables V-VII (measured transfers through host and TNC),
//!   and the `ronan-transfer` and `ronan-measured` experiment kinds.
//! - [`zielinski`]: firmware TNCs (the AX.25 engine inside a modelled
//!   controller) on Zieliński's wired link, and the reproduction of his
//!   Figs. 4-15.
//! - [`bux`]: HDLC NRM against ABM on a full-duplex line (Bux, Kümmerle
//!   and Truong 1982, Figs. 2-11).
//! - [`korb`]: TCP/IP over X.25 on a simulated public network, with a
//!   4.2BSD sender (Korb and Wills 1987, Tables 1-4).
//! - [`dstar`]: IP, DTN over TCPCL and DTN over NORM between two PCs on
//!   the D-STAR Digital Data link of two ID-1 radios (Ronan et al.,
//!   Tables I and II).
//! - [`radio_ip`] and [`workload`]: two IP hosts on a half-duplex AX.25
//!   radio channel, and what runs on the hosts of a simulated IP testbed.
//! - [`published`]: the papers' published figures, one loader for all.
//! - [`experiment`]: scenario files (TOML) that `linklab sim` runs; each
//!   kind lives in its paper's module.
//! - [`report`]: what a reproduction hands to the CLI (tables, figures,
//!   checks).
//! - [`shard`] and [`part`]: a run cut into parts for many machines, and
//!   the part files `linklab merge` puts together.
//!
//! Every run is in virtual time and is determined by its configuration
//! and seed; nothing here reads a clock. What these runners give against
//! the papers is reported by `linklab reproduce` and summarised in
//! docs/reproduce.md.

pub mod builtin;
pub mod bux;
pub mod dstar;
pub mod experiment;
pub mod korb;
pub mod part;
pub mod prose;
pub mod published;
pub mod radio_ip;
pub mod report;
pub mod ronan;
pub mod shard;
pub mod transfer;
pub mod workload;
pub mod zielinski;

pub use ronan::{compare, Comparison, RonanError};
pub use transfer::{
    run_transfer, HostConfig, KissPath, StackConfig, TransferConfig, TransferError, TransferOutcome,
};
