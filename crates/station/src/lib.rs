//! `linklab station`: one long-running service that owns the radio ports
//! and serves everything else, the user-space home of what the Linux
//! kernel's AX.25 stack did until Linux 7.1 removed it (kissattach and
//! axports, ax25d, beacon, the digipeater, mheard's list).
//!
//! - [`config`]: the TOML file, checked whole before anything starts,
//!   each error naming file, line, column and key;
//! - [`Core`]: the station, sans-IO (docs/architecture.md, "the one rule"):
//!   one engine per port for every callsign on it, AGWPE and KISS
//!   clients, inbound connections handed to services, beacons and the
//!   digipeater;
//! - [`driver`]: the tokio loop that runs it on the TNCs, the listening
//!   sockets, the services' programs and connections, the control socket
//!   and the signals (SIGHUP reloads, SIGTERM releases every link);
//! - [`status`]: the report `linklab status` reads from the control
//!   socket.

pub mod config;
mod core;
mod digipeater;
pub mod driver;
mod ip;
mod keypath;
mod lines;
mod netrom;
pub mod status;
mod traffic;
pub mod web;

pub use crate::core::{Core, Output, Reload, SessionId, FIRST_BEACON_AFTER};
pub use config::{ConfigError, StationConfig};
pub use digipeater::{Digipeater, Repeats, DUPLICATE_WINDOW};
