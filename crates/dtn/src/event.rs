//! What the agent hands out (transmissions, deliveries, events) and its
//! errors.

use hardy_bpv7::bundle::Id;
use hardy_bpv7::eid::Eid;
use hardy_bpv7::status_report::ReasonCode;
use thiserror::Error;

use crate::bundle::{DecodeError, EditError, StatusReport};
use crate::route::LinkId;
use crate::store::StoreError;
#[cfg(doc)]
use crate::{Agent, Config};

/// A transmission handed to a convergence layer; report its outcome with
/// [`Agent::transfer_succeeded`], [`Agent::transfer_failed`] or
/// [`Agent::transfer_partial`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TransmitId(pub u64);

/// A bundle for a convergence layer to send.
#[derive(Debug, Clone)]
pub struct Transmit {
    /// The transfer, for the outcome report.
    pub id: TransmitId,
    /// The link to send it on.
    pub link: LinkId,
    /// The bundle (or fragment).
    pub bundle: Id,
    /// The encoded bundle.
    pub octets: Vec<u8>,
}

/// A delivery handed to an application; confirm it with
/// [`Agent::delivery_done`] once the application has kept the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeliveryId(pub u64);

/// An application data unit for a local endpoint (RFC 9171 5.7).
#[derive(Debug, Clone)]
pub struct Delivery {
    /// For [`Agent::delivery_done`].
    pub id: DeliveryId,
    /// The bundle (the whole bundle's ID if it came in fragments). Stable
    /// across restarts: a delivery offered again after a crash, because it
    /// was not confirmed, has the same bundle ID.
    pub bundle: Id,
    /// Source endpoint.
    pub source: Eid,
    /// The local endpoint.
    pub destination: Eid,
    /// The application data unit (reassembled, 5.9).
    pub payload: Vec<u8>,
}

/// What happened to a bundle received from a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reception {
    /// Accepted and stored durably: the convergence layer may acknowledge
    /// it.
    Accepted(Id),
    /// Already stored or delivered here; dropped (and may be acknowledged).
    Duplicate(Id),
    /// Valid but deleted at once (expired, hop limit exceeded).
    Discarded {
        /// The bundle.
        bundle: Id,
        /// Why (RFC 9171 6.1.1).
        reason: ReasonCode,
    },
}

/// Something to tell the node's operator or applications.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A status report arrived for a local endpoint (or was made here for
    /// one).
    StatusReport {
        /// The local report-to endpoint.
        to: Eid,
        /// The node that reported.
        from: Eid,
        /// The report.
        report: StatusReport,
    },
    /// A convergence layer confirmed a transfer; the bundle has left this
    /// node.
    Forwarded {
        /// The bundle.
        bundle: Id,
        /// The link.
        link: LinkId,
    },
    /// A stored bundle was split into fragments to fit a link's MTU
    /// (RFC 9171 5.8).
    Fragmented {
        /// The bundle before the split.
        bundle: Id,
        /// How many fragments replaced it.
        fragments: usize,
    },
    /// A bundle cannot go over the link its route names: it is larger than
    /// the link's MTU and may not be fragmented. It stays stored.
    TooLarge {
        /// The bundle.
        bundle: Id,
        /// The link.
        link: LinkId,
        /// Its size in octets.
        size: usize,
    },
    /// A bundle was deleted (5.10).
    Deleted {
        /// The bundle.
        bundle: Id,
        /// Why.
        reason: ReasonCode,
    },
}

/// Why received octets were not accepted.
#[derive(Debug, Error)]
pub enum ReceiveError {
    /// Not a valid bundle (bad CRC, bad encoding).
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A partial bundle could not be made into a fragment.
    #[error(transparent)]
    Fragment(#[from] EditError),
    /// The store failed: the bundle was not accepted.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a send request was refused.
#[derive(Debug, Error)]
pub enum SendError {
    /// The source is not an endpoint of this node.
    #[error("{0} is not an endpoint of this node")]
    NotLocal(Eid),
    /// The destination is the null endpoint.
    #[error("a bundle cannot be sent to the null endpoint")]
    NullDestination,
    /// The bundle could not be encoded.
    #[error("cannot encode the bundle: {0}")]
    Encode(String),
    /// The store failed: the bundle was not accepted.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Errors of the other requests.
#[derive(Debug, Error)]
pub enum AgentError {
    /// The configured node ID is not a node ID.
    #[error("{0} is not a node ID (use ipn:N.0 or dtn://name/)")]
    BadNodeId(Eid),
    /// An endpoint to register is not on this node.
    #[error("{0} is not an endpoint of this node")]
    NotLocal(Eid),
    /// No delivery with this ID is waiting for confirmation.
    #[error("no delivery {0:?} is waiting for confirmation")]
    UnknownDelivery(DeliveryId),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}
