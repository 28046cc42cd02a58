//! A NORM convergence layer for bundles (RFC 9171 clause 7 over RFC 5740
//! NORM), sans-IO: one [`Session`] per peer, over UDP datagrams that the
//! driver carries, with time passed in.
//!
//! # Bundles as NORM objects
//!
//! Each bundle is one NORM_OBJECT_DATA object of the session's NORM
//! sender (crate `linklab-norm`, FEC Encoding ID 5), sent at a fixed rate
//! or under NORM-CC, repaired on NACKs. The object is a short
//! [header] naming the sending node, then the bundle; the
//! object's size travels in EXT_FTI of every NORM_DATA (RFC 5740 section
//! 4.2.1), so the bundle's length is that size minus the header.
//! NORM_INFO is not used.
//!
//! # Acknowledgement
//!
//! A transfer succeeds only when the peer has all of the bundle: after
//! each batch of objects the sender asks the peer for positive
//! acknowledgement of the newest one (a watermark: NORM_CMD(FLUSH) naming
//! the peer, RFC 5740 section 5.1.3), and the peer's NORM_ACK covers that
//! object and every one before it. The peer's receiver holds the ACK back
//! until its node has stored every bundle up to the watermark
//! ([`Session::bundle_stored`], `linklab-norm`'s `hold_acks`), so
//! "acknowledged" means "stored there", as TCPCL's last XFER_ACK does in
//! the node.
//!
//! A bundle the peer does not acknowledge within [`Session::ack_bound`] —
//! robust factor × 2·GRTT (NORM's FLUSH schedule; 20 × 2 × GRTT by
//! default), at least [`Config::min_ack_wait`] — counted from when its
//! last symbol was first sent or, later, from the peer's last NACK (a
//! peer still asking for repairs is making progress), fails. NORM asks
//! again while within the bound; the failure is reported when NORM's
//! current round of requests ends after it, so at most one more round.
//!
//! # Up and down
//!
//! UDP has no connection, so a configured peer is taken to be reachable:
//! a session starts with its link up. After [`Config::down_after`]
//! acknowledgement requests in a row went unanswered the link goes down
//! (every transfer not yet reported fails); it comes up again when any
//! NORM message from the peer's NormNodeId arrives, or after
//! [`Config::retry_after`].
//!
//! # Receiving
//!
//! The session's NORM receiver follows the peer's sender (NORM_SYNC_ALL,
//! so a bundle whose first datagrams were lost is still repaired). A
//! bundle is delivered once per object transport ID and sender instance
//! (NORM's receiver completes each object once);
//! an object whose header is malformed or names another node than the
//! configured peer is reported and never acknowledged, so the peer's
//! transfers fail instead of vanishing. NormNodeIds come from the node
//! IDs ([`norm_node_id`]); datagrams from any other are dropped.
//!
//! Not done: a receiver restarted while its peer's sender still caches
//! objects asks for them again, and their bundles reach its node again
//! (the bundle agent's duplicate check is then what stops them).

mod config;
pub mod header;
mod session;

pub use config::{norm_node_id, Config, ConfigError};
pub use linklab_norm::{Rate, Transmit};
pub use session::{Event, ReceiptId, SendError, Session, TransferId};
