//! AXUDP ports: AX.25 frames in UDP datagrams (RFC 1226 carried in UDP,
//! as ax25ipd and LinBPQ's AXIP exchange them), reached like a KISS TNC.
//!
//! - [`AxudpConfig`]: the bind address, the routes to peers by callsign
//!   and the broadcast calls, and their text form;
//! - [`AxudpRouter`]: the sans-IO core, which picks the peers of an
//!   outgoing frame and checks each received datagram, and counts;
//! - [`AxudpStream`]: the tokio side, a KISS byte stream over a UDP socket,
//!   which [`crate::KissAddress::Axudp`] connects to.
//!
//! The datagram format is [`linklab_wire::axudp`].

mod config;
mod port;
mod router;

pub use config::{AxudpConfig, AxudpConfigError, AxudpPeer};
pub use port::{AxudpCountersHandle, AxudpStream, MAX_FRAME};
pub use router::{call_serves, AxudpCounters, AxudpRouter, Outgoing, RouteError};
