//! The emulated radio channel behind `linklab channel`
//! (docs/architecture.md: emulate): the half-duplex CSMA radio model of
//! `linklab-channel`, the one the simulator drives in virtual time, run
//! here against the wall clock, with every station a KISS port that any
//! software can join, over TCP or a pseudo-terminal.
//!
//! - [`config`]: what the channel is made of ([`Plan`]), from a TOML file
//!   or a few numbers;
//! - [`air`]: the sans-IO core ([`Air`]): channels, radios, TNC models and
//!   the KISS protocol, time passed in;
//! - [`server`]: the thin driver ([`Server`]) that owns the clock, the
//!   sockets, the pseudo-terminals, the monitor and the capture file;
//! - [`report`]: the statistics ([`Report`]).

pub mod air;
pub mod config;
mod pty;
pub mod report;
pub mod server;

pub use air::{Air, AirFrame, ClientId, Output};
pub use config::{default_kiss, Plan, PlanError};
pub use report::Report;
pub use server::{Endpoint, Options, Server, ServerError, Stopper};
