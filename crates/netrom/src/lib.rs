//! NET/ROM layer 3 and 4 as sans-IO engines (docs/architecture.md, `netrom`).
//!
//! - [`wire`]: the NODES broadcast, the network header and the transport
//!   messages; total decoders, encoders that decode back to the same
//!   value.
//! - [`routing`]: the node table, qualities and obsolescence.
//! - [`l4`]: [`Transport`], the circuits of one node: connect, window,
//!   sequence numbers modulo 256, choke, NAK, acknowledgement, disconnect
//!   and their timers.
//! - [`l3`]: [`Node`], one node: NODES broadcasts sent and heard,
//!   datagrams forwarded by TTL and best route, and its [`Transport`].
//!
//! Time comes in as `now`; output leaves through `poll_transmit`, in the
//! shape of [`linklab_core::Engine`]. The protocol followed, the defaults
//! and where LinBPQ and the Linux kernel differ are in `docs/netrom.md`.

pub mod l3;
pub mod l4;
pub mod routing;
pub mod wire;

pub use l3::{Node, NodeConfig, Transmit};
pub use l4::{CircuitEvent, CircuitHandle, CloseReason, ConnectError, Transport, TransportConfig};
pub use routing::{NodeTable, RoutingConfig};
