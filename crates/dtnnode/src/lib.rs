//! A DTN node: the sans-IO bundle agent of `linklab-dtn` (RFC 9171) run by
//! tokio, with convergence-layer sessions to its neighbours and a local
//! interface for applications. `linklab dtn node`, `send` and `recv` are
//! built on it.
//!
//! - [`router`]: the node's logic, sans-IO: the [`router::Router`] owns
//!   the [`linklab_dtn::Agent`], the neighbours and their links, the
//!   applications and the orderly stop. It takes `now` on every call and
//!   hands out commands for sessions, connections to make, messages for
//!   applications and notices for the log, drained by its `poll_*`
//!   methods; no tokio, clock or printing inside.
//! - [`node`]: the daemon, the router's driver. A thread of its own owns
//!   the router and the agent's redb store, so that a slow disk write
//!   never stalls a session; it feeds the router the sessions' and
//!   applications' events and the clock, carries out its commands,
//!   prints its notices, and ends cleanly on SIGINT or SIGTERM.
//! - [`cl`]: convergence layers, each a session task behind a small
//!   channel contract; [`cl::tcpcl`] is TCPCLv4 (RFC 9174), passive and
//!   active with reconnection and backoff; [`cl::ax25`] is the AX.25
//!   connected-mode CL over a KISS TNC, connecting on demand, with reactive
//!   fragmentation when a link drops inside a bundle; [`cl::norm`] is the
//!   NORM CL over UDP. A received bundle is
//!   acknowledged to the peer only once stored, so a node killed at any
//!   moment loses no bundle it acknowledged, and the agent's duplicate
//!   check means none is delivered twice.
//! - [`app`]: the application interface, a line protocol over a Unix
//!   socket or loopback TCP (register an endpoint, send a bundle with
//!   status reports asked for, receive deliveries and reports), and
//!   [`client`], its application side.
//! - [`options`]: peers, routes and addresses from the command line.

pub mod app;
pub mod cl;
pub mod client;
pub mod node;
pub mod options;
pub mod report;
pub mod router;
pub mod watch;

pub use client::{Client, ClientError};
pub use node::{run, run_watched, NodeConfig, NodeError};
pub use options::{
    AppAddress, Ax25Options, Ax25PeerSpec, Ax25ViaSpec, NormOptions, NormPeerSpec, PeerSpec,
    RouteSpec,
};
pub use report::{BundleRef, ReportNotice};
pub use watch::{NodeWatch, SharedWatch};
