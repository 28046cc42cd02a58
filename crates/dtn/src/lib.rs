//! A DTN bundle protocol agent: BPv7 (RFC 9171) with a persistent bundle
//! store, sans-IO.
//!
//! [`Agent`] is the bundle protocol agent of RFC 9171 clause 5. Like the
//! `link` engines it never does network I/O and never reads a clock: the
//! caller passes `now` in, hands over what convergence layers receive, and
//! drains what the agent wants sent, delivered or reported. Convergence
//! layers (TCPCLv4, the AX.25 CL, NORM) appear only as [`LinkId`]s:
//!
//! - [`Agent::link_up`] / [`Agent::link_down`]: a contact begins (with the
//!   largest bundle the link takes, its MTU) or ends;
//! - [`Agent::handle_bundle`]: a link received a bundle; the answer
//!   [`Reception::Accepted`] means it is durably stored and may be
//!   acknowledged to the peer ([`Agent::handle_partial_bundle`] keeps what
//!   arrived of a broken-off transfer as a fragment, for reactive
//!   fragmentation);
//! - [`Agent::poll_transmit`]: a [`Transmit`] (link, encoded bundle) to
//!   send; its outcome comes back by [`Agent::transfer_succeeded`] (the
//!   bundle leaves the store), [`Agent::transfer_failed`] (it is offered
//!   again after a while) or [`Agent::transfer_partial`] (the first octets
//!   got through: reactive fragmentation, 5.8).
//!
//! Applications [`register`](Agent::register) endpoints, [`send`](Agent::send)
//! with a [`SendRequest`] (lifetime, report-to, status reports wanted,
//! fragmentation allowed), take [`Delivery`]s from [`Agent::poll_delivery`]
//! and confirm each with [`Agent::delivery_done`]; status reports for them
//! come as [`Event::StatusReport`].
//!
//! What the agent does, by RFC 9171 clause:
//!
//! - 4.1-4.3: bundles are encoded and decoded by the `hardy-bpv7` crate, but
//!   every block's CRC (CRC-16/X.25 or CRC-32C, 4.2.1) is first checked by
//!   [`crc`], our own code, so that a decoder letting a flipped bit through
//!   cannot put a corrupt bundle in the store.
//! - 4.2.5: endpoints `ipn:N.S` and `dtn://node/service`.
//! - 4.4: on forwarding, a Previous Node block names this node, a Hop Count
//!   block's count goes up (the bundle is deleted past its limit) and a
//!   Bundle Age block's age grows by the time spent here.
//! - 5.4: static routes ([`EidPattern`] to [`LinkId`]).
//! - 5.5: bundles are deleted when their lifetime ends.
//! - 5.6-5.7: reception and local delivery; a bundle already stored or
//!   delivered is dropped as a duplicate.
//! - 5.8-5.9: proactive fragmentation to a link's MTU (extension blocks
//!   not marked "must replicate" go in the first fragment only), reactive
//!   fragmentation on both sides of a broken transfer, and reassembly at
//!   the destination.
//! - 6.1.1, 6.2: bundle status reports (received, forwarded, delivered,
//!   deleted, with reason codes and, if asked, times) sent as
//!   administrative records from the node ID, never about an
//!   administrative record.
//!
//! The store ([`store`]): every change is one atomic durable [`Batch`];
//! [`RedbStore`] keeps it in a redb file. A bundle is accepted only once
//! stored; a delivery is confirmed, removed and remembered in one step, so
//! a node killed at any point delivers every accepted bundle after restart
//! and never one the application confirmed. The one window left is the
//! application's own: a delivery it kept but had not confirmed when the
//! process died is offered again, with the same bundle ID, so the
//! application can recognise it.

mod agent;
pub mod bundle;
mod config;
pub mod crc;
mod event;
mod partial;
mod redb_store;
pub mod route;
pub mod store;

pub use agent::Agent;
pub use bundle::{StatusKind, StatusReport};
pub use config::{Config, SendRequest};
pub use event::{
    AgentError, Delivery, DeliveryId, Event, ReceiveError, Reception, SendError, Transmit,
    TransmitId,
};
pub use hardy_bpv7;
pub use hardy_bpv7::bundle::Id as BundleId;
pub use hardy_bpv7::crc::CrcType;
pub use hardy_bpv7::eid::Eid;
pub use hardy_bpv7::status_report::ReasonCode;
pub use redb_store::RedbStore;
pub use route::{EidPattern, LinkId};
pub use store::{Batch, MemoryStore, Store, StoreError};
