//! Convergence layers (RFC 9171 clause 7): how the node's bundles cross
//! links.
//!
//! A convergence layer is a task per session (one connection to one
//! neighbour) that speaks this module's small contract with the node over
//! channels, and nothing else:
//!
//! - it sends [`LinkEvent::Up`] once the session is established, with the
//!   neighbour's node ID, the largest bundle the session takes and the
//!   sender of its [`LinkCommand`]s;
//! - for every whole bundle received it sends [`LinkEvent::Received`] and
//!   waits on the enclosed channel before acknowledging the bundle to the
//!   peer: the node answers once the bundle is durably stored (RFC 9171
//!   5.6), so an acknowledged bundle survives a crash; a channel dropped
//!   unanswered (the node is going) leaves the bundle unacknowledged;
//! - it sends each bundle of [`LinkCommand::Send`] and reports the outcome
//!   with [`LinkEvent::Sent`], success meaning the peer acknowledged all of
//!   it, or, when the session ends with only a first part of it
//!   acknowledged, with [`LinkEvent::Interrupted`] (reactive
//!   fragmentation, RFC 9171 5.8: the node sends the rest as a fragment);
//! - when the session ends inside an incoming bundle, a layer that checks
//!   what arrived hands the node that prefix with
//!   [`LinkEvent::PartialReceived`] (kept as a fragment) before
//!   [`LinkEvent::Down`], and waits until the node has stored it;
//! - it ends the session on [`LinkCommand::Close`], and sends
//!   [`LinkEvent::Down`] when the session is over, whatever the cause.
//!
//! [`tcpcl`] is TCPCLv4 (RFC 9174) over TCP, active and passive; [`ax25`]
//! is the AX.25 connected-mode CL over a KISS TNC, which connects to a
//! configured peer when the node asks for it (a bundle is routed there
//! and no session carries that link); [`norm`] is the NORM CL over UDP
//! to configured peers.

use std::sync::atomic::{AtomicU64, Ordering};

use linklab_dtn::{LinkId, TransmitId};
use tokio::sync::{mpsc, oneshot};

pub mod ax25;
pub mod norm;
mod spool;
pub mod tcpcl;

pub use spool::spooled;

/// One session of a convergence layer within the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(pub u64);

impl SessionId {
    /// A session ID not given out before in this process.
    pub fn next() -> SessionId {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        SessionId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// What a convergence-layer session tells the node.
#[derive(Debug)]
pub enum LinkEvent {
    /// The session is established.
    Up {
        /// The session.
        session: SessionId,
        /// The neighbour's node ID, as it gave it.
        peer: String,
        /// Where the session goes, for the log (`tcpcl 127.0.0.1:4556`).
        remote: String,
        /// The link of a configured peer this session was opened for.
        configured: Option<LinkId>,
        /// The largest bundle, in octets, the session takes whole.
        mtu: Option<usize>,
        /// Where the node sends its commands for this session.
        commands: mpsc::UnboundedSender<LinkCommand>,
    },
    /// A whole bundle arrived. The session acknowledges it to the peer
    /// only once `stored` is answered; dropped unanswered, never.
    Received {
        /// The session.
        session: SessionId,
        /// The encoded bundle.
        octets: Vec<u8>,
        /// Answered when the node has stored the bundle.
        stored: oneshot::Sender<()>,
    },
    /// The outcome of a [`LinkCommand::Send`].
    Sent {
        /// The session.
        session: SessionId,
        /// The agent's transmission.
        transmit: TransmitId,
        /// `Ok` once the peer acknowledged the whole bundle.
        outcome: Result<(), String>,
    },
    /// The session ended with only the first `acknowledged` octets of a
    /// [`LinkCommand::Send`] acknowledged by the peer, which keeps them
    /// (reactive fragmentation, RFC 9171 5.8). Reported before
    /// [`LinkEvent::Down`].
    Interrupted {
        /// The session.
        session: SessionId,
        /// The agent's transmission.
        transmit: TransmitId,
        /// Octets from the start of the bundle the peer acknowledged.
        acknowledged: usize,
    },
    /// The session ended inside an incoming bundle: the octets that
    /// arrived, each checked by the layer's own integrity check, for the
    /// node to keep as a fragment. Reported before [`LinkEvent::Down`];
    /// the session waits for `stored` as for [`LinkEvent::Received`].
    PartialReceived {
        /// The session.
        session: SessionId,
        /// The first octets of the encoded bundle.
        octets: Vec<u8>,
        /// Answered when the node has stored what it keeps.
        stored: oneshot::Sender<()>,
    },
    /// The session is over; transmissions not reported are lost.
    Down {
        /// The session.
        session: SessionId,
        /// Why it ended.
        why: String,
    },
}

/// What the node asks of a session.
#[derive(Debug)]
pub enum LinkCommand {
    /// Send one encoded bundle.
    Send {
        /// The agent's transmission, for [`LinkEvent::Sent`].
        transmit: TransmitId,
        /// The bundle.
        octets: Vec<u8>,
    },
    /// End the session cleanly.
    Close,
}
