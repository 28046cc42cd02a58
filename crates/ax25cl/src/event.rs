//! What a session tells its user.

use crate::wire::{DecodeError, RefuseReason, ShutdownReason};

/// Something the user of a [`Session`](crate::Session) must act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Both contact headers are exchanged: bundles may flow both ways (a
    /// bundle agent's `link_up`).
    Established {
        /// The peer's endpoint ID from its contact header.
        peer_eid: String,
    },
    /// A whole bundle arrived; it was acknowledged at once (a bundle
    /// agent's `handle_bundle`).
    BundleReceived {
        /// Its octets.
        data: Vec<u8>,
    },
    /// An outgoing bundle was acknowledged to its last octet (a bundle
    /// agent's `transfer_succeeded`).
    BundleSent {
        /// The user's tag from [`Session::send_bundle`](crate::Session::send_bundle).
        id: u64,
    },
    /// The peer refused an outgoing bundle (a bundle agent's
    /// `transfer_failed`).
    BundleRefused {
        /// The user's tag.
        id: u64,
        /// Why.
        reason: RefuseReason,
    },
    /// The session ended with an outgoing bundle not wholly acknowledged:
    /// its first `acknowledged` octets got through (a bundle agent's
    /// `transfer_partial`, reactive fragmentation; 0 for a bundle of which
    /// nothing was acknowledged). Report it before the agent's `link_down`,
    /// which forgets transfers not reported.
    TransferInterrupted {
        /// The user's tag.
        id: u64,
        /// Octets the peer acknowledged.
        acknowledged: u64,
    },
    /// The session ended inside an incoming bundle: `data` are the octets
    /// that arrived, every segment checked by its CRC-32 (a bundle agent's
    /// `handle_partial_bundle`). It may run past the last acknowledgement;
    /// the sender resumes from that, so the octets between arrive twice
    /// (the duplication a short `ack_window` keeps small).
    PartialReceived {
        /// The first octets of the bundle.
        data: Vec<u8>,
    },
    /// The session is over; the reports above for its bundles came first.
    SessionEnded {
        /// Why.
        cause: Cause,
    },
}

/// Why a session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// The AX.25 link went down (released, or failed).
    LinkDown,
    /// The user called [`Session::shutdown`](crate::Session::shutdown).
    LocalShutdown,
    /// The peer sent SHUTDOWN.
    PeerShutdown {
        /// Its reason, if given.
        reason: Option<ShutdownReason>,
    },
    /// The peer's octets could not be read: a CRC-32 mismatch, an unknown
    /// message, a bad contact header. Release the AX.25 link and connect
    /// again (see the crate documentation).
    Malformed(DecodeError),
    /// The peer broke the protocol: `0` says how. Release the AX.25 link
    /// as for [`Cause::Malformed`].
    Protocol(&'static str),
}

impl Cause {
    /// Whether the AX.25 link must be released because of this ending (it
    /// is not already down).
    pub fn release_link(&self) -> bool {
        !matches!(self, Cause::LinkDown)
    }
}
