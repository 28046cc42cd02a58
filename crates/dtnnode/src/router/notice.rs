//! What the router tells the node's operator: the driver prints each
//! [`Notice`] after `linklab dtn node: `, one a line.

use std::fmt;

use linklab_dtn::{BundleId, Eid, LinkId, ReasonCode, ReceiveError};

use super::SHUTDOWN_GRACE;

/// Something the operator should see in the node's log.
#[derive(Debug)]
pub enum Notice {
    /// SIGINT or SIGTERM came: an orderly stop began.
    Stopping,
    /// A session was still up [`SHUTDOWN_GRACE`] after the stop began: the
    /// node exits without it.
    SessionLeft {
        /// The neighbour's node ID.
        peer: String,
        /// Where the session goes.
        remote: String,
    },
    /// A convergence-layer session is established.
    SessionUp {
        /// The neighbour's node ID.
        peer: String,
        /// Where the session goes.
        remote: String,
    },
    /// A convergence-layer session ended.
    SessionDown {
        /// The neighbour's node ID.
        peer: String,
        /// Where the session went.
        remote: String,
        /// Why it ended.
        why: String,
    },
    /// The first octets of a bundle a session was bringing in when the
    /// node stopped are stored as a fragment (RFC 9171 5.8).
    SpoolKept {
        /// The octets kept.
        length: usize,
        /// The fragment.
        id: BundleId,
    },
    /// The first octets of a bundle cut off by a stop cannot be kept.
    SpoolRefused {
        /// The octets refused.
        length: usize,
        /// Why.
        error: ReceiveError,
    },
    /// A received bundle is valid but deleted at once (RFC 9171 5.6).
    Discarded {
        /// The bundle.
        bundle: BundleId,
        /// The neighbour it came from.
        from: String,
        /// Why (RFC 9171 6.1.1).
        reason: ReasonCode,
    },
    /// Octets a session received are not a bundle the agent takes.
    Refused {
        /// The neighbour they came from.
        from: String,
        /// Why.
        error: ReceiveError,
    },
    /// The first octets of a bundle whose session ended inside it are
    /// stored as a fragment (reactive fragmentation, RFC 9171 5.8).
    PrefixKept {
        /// The neighbour they came from.
        from: String,
        /// The octets kept.
        length: usize,
        /// The fragment.
        id: BundleId,
    },
    /// The fragment an interrupted transfer would make is stored already.
    PrefixDuplicate {
        /// The neighbour it came from.
        from: String,
        /// The fragment.
        id: BundleId,
    },
    /// An interrupted transfer brought too little to make a fragment of.
    PrefixTooShort {
        /// The neighbour it came from.
        from: String,
        /// The octets that arrived.
        length: usize,
    },
    /// The first octets of an interrupted transfer cannot be kept.
    PrefixRefused {
        /// The neighbour they came from.
        from: String,
        /// The octets that arrived.
        length: usize,
        /// Why.
        error: ReceiveError,
    },
    /// A session ended with only the first part of a bundle acknowledged:
    /// the rest goes again as a fragment (RFC 9171 5.8).
    TransferBroken {
        /// The neighbour.
        to: String,
        /// Octets the neighbour acknowledged.
        acknowledged: usize,
        /// The bundle's length.
        length: usize,
    },
    /// A transfer failed during the stop: the bundle stays stored.
    TransferStopped {
        /// What the convergence layer said.
        why: String,
    },
    /// A transfer failed: the agent sends the bundle again later.
    TransferFailed {
        /// What the convergence layer said.
        why: String,
    },
    /// A status report came for an endpoint no application has registered
    /// (RFC 9171 6.1).
    ReportUnclaimed {
        /// The node that reported.
        from: Eid,
        /// The report-to endpoint.
        to: Eid,
    },
    /// A bundle left this node on `link`.
    Forwarded {
        /// The bundle.
        bundle: BundleId,
        /// The link.
        link: LinkId,
    },
    /// A stored bundle was split to fit a link (RFC 9171 5.8).
    Fragmented {
        /// The bundle before the split.
        bundle: BundleId,
        /// How many fragments replaced it.
        fragments: usize,
    },
    /// A bundle is larger than its link takes and may not be fragmented.
    TooLarge {
        /// The bundle.
        bundle: BundleId,
        /// The link.
        link: LinkId,
        /// Its size in octets.
        size: usize,
    },
    /// A bundle was deleted (RFC 9171 5.10).
    Deleted {
        /// The bundle.
        bundle: BundleId,
        /// Why.
        reason: ReasonCode,
    },
    /// An application connection ended on an error.
    ClientFailed {
        /// The error.
        why: String,
    },
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::Stopping => write!(f, "stopping"),
            Notice::SessionLeft { peer, remote } => write!(
                f,
                "the session with {peer} ({remote}) did not end within {SHUTDOWN_GRACE:?}: leaving it"
            ),
            Notice::SessionUp { peer, remote } => write!(f, "session with {peer} ({remote}) up"),
            Notice::SessionDown { peer, remote, why } => {
                write!(f, "session with {peer} ({remote}) down: {why}")
            }
            Notice::SpoolKept { length, id } => write!(
                f,
                "kept the first {length} octets of a bundle cut off when the node stopped as {id}"
            ),
            Notice::SpoolRefused { length, error } => write!(
                f,
                "the first {length} octets of a bundle cut off when the node stopped are refused: {error}"
            ),
            Notice::Discarded {
                bundle,
                from,
                reason,
            } => write!(f, "{bundle} from {from} discarded ({reason:?})"),
            Notice::Refused { from, error } => {
                write!(f, "a bundle from {from} is refused: {error}")
            }
            Notice::PrefixKept { from, length, id } => write!(
                f,
                "kept the first {length} octets of an interrupted bundle from {from} as {id}"
            ),
            Notice::PrefixDuplicate { from, id } => write!(f, "{id} from {from} was here already"),
            Notice::PrefixTooShort { from, length } => write!(
                f,
                "the first {length} octets of an interrupted bundle from {from} are too few to keep"
            ),
            Notice::PrefixRefused {
                from,
                length,
                error,
            } => write!(
                f,
                "the first {length} octets of an interrupted bundle from {from} are refused: {error}"
            ),
            Notice::TransferBroken {
                to,
                acknowledged,
                length,
            } => write!(
                f,
                "a transfer to {to} broke off after {acknowledged} of {length} octets acknowledged"
            ),
            Notice::TransferStopped { why } => write!(
                f,
                "a transfer ended with the stop ({why}): the bundle stays in the store for the next start"
            ),
            Notice::TransferFailed { why } => write!(f, "a transfer failed: {why}"),
            Notice::ReportUnclaimed { from, to } => write!(
                f,
                "status report from {from} for {to}, which no application has registered: dropped"
            ),
            Notice::Forwarded { bundle, link } => write!(f, "forwarded {bundle} on {link}"),
            Notice::Fragmented { bundle, fragments } => {
                write!(f, "split {bundle} into {fragments} fragments")
            }
            Notice::TooLarge { bundle, link, size } => write!(
                f,
                "{bundle} ({size} octets) is too large for {link} and may not be fragmented"
            ),
            Notice::Deleted { bundle, reason } => write!(f, "deleted {bundle} ({reason:?})"),
            Notice::ClientFailed { why } => write!(f, "an application connection failed: {why}"),
        }
    }
}
