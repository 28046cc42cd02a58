//! An AGWPE server on linklab's AX.25 stack: the "AGW Packet Engine"
//! TCP/IP API (by SV2AGW; described in the AGWPE TCP/IP API Tutorial by
//! LU7DID and SV2AGW) that terminal, APRS and Winlink programs use to
//! reach a packet engine, served over any KISS TNC.
//!
//! - [`wire`]: the 36-octet header and its data, and a stream decoder
//!   that refuses absurd lengths;
//! - [`monitor`]: the monitor ('I', 'S', 'U', 'T'), raw ('K') and heard
//!   list ('H') records;
//! - [`Server`]: the engine, sans-IO (clients' octets, TNC octets and the
//!   time in; answers, KISS frames and log lines out), one
//!   [`linklab_io::Station`] per local callsign in use on each port;
//! - the real-time driver is the station's (`linklab_station::driver`):
//!   `linklab agw` is a station with no services, and `linklab station`
//!   embeds this engine as the one engine of its ports;
//! - [`client`]: the other end, an AGWPE client, sans-IO (requests and
//!   the server's octets in, messages and events out), with paced sending
//!   ('Y'); [`connection`] runs it on a TCP connection with tokio. It
//!   speaks plain AGWPE, to this server or any other.

pub mod client;
pub mod connection;
mod embed;
pub mod monitor;
mod port;
mod requests;
mod server;
mod share;
pub mod wire;

pub use embed::{AirFrame, LinkSummary};
pub use port::{PortConfig, PortCounters};
pub use requests::VERSION;
pub use server::{ClientId, Server, LINK_QUEUE_LIMIT};
