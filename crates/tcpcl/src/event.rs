//! What a session tells its user, drained with
//! [`Session::poll_event`](crate::Session::poll_event).

use core::fmt;

use crate::wire::{DecodeError, ExtensionItem, RefuseReason, RejectReason, SessTermReason};

/// A session's Transfer ID (RFC 9174 section 5.2.1), unique per sender.
pub type TransferId = u64;

/// Which end of the session did something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// This entity.
    Local,
    /// The peer.
    Peer,
}

/// The negotiated session (RFC 9174 section 4.7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionParams {
    /// The peer's Node ID from its SESS_INIT.
    pub peer_node_id: String,
    /// Session Keepalive in seconds, the smaller of both offers; 0 means
    /// no KEEPALIVEs.
    pub keepalive_interval: u16,
    /// Segment MTU: the peer's Segment MRU, the largest segment sent.
    pub segment_mtu: u64,
    /// Transfer MTU: the peer's Transfer MRU, the largest transfer sent.
    pub transfer_mtu: u64,
    /// This entity's Segment MRU.
    pub segment_mru: u64,
    /// This entity's Transfer MRU.
    pub transfer_mru: u64,
    /// Whether the peer's contact header had CAN_TLS. The session is plain
    /// TCP either way: this entity never sets CAN_TLS, and Enable TLS is
    /// the AND of both flags (section 4.3).
    pub peer_can_tls: bool,
    /// The peer's non-critical session extension items, which this entity
    /// does not interpret (section 4.8).
    pub peer_extensions: Vec<ExtensionItem>,
}

/// Something that happened in the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Contact headers and SESS_INITs are exchanged: transfers may start.
    SessionEstablished(SessionParams),
    /// The peer started a transfer; `length` is its Transfer Length
    /// extension, if it sent one.
    TransferStarted {
        /// Transfer ID.
        id: TransferId,
        /// Declared total length.
        length: Option<u64>,
    },
    /// A whole transfer arrived and every segment was acknowledged, the
    /// last one only once the user calls
    /// [`Session::accept_transfer`](crate::Session::accept_transfer) if
    /// the configuration holds it (`hold_final_ack`).
    TransferReceived {
        /// Transfer ID.
        id: TransferId,
        /// The transfer's octets (for a bundle agent, one encoded bundle).
        data: Vec<u8>,
    },
    /// The peer acknowledged `octets` of an outgoing transfer of `total`.
    TransferAcked {
        /// Transfer ID.
        id: TransferId,
        /// Acknowledged Length.
        octets: u64,
        /// The transfer's length.
        total: u64,
    },
    /// The peer acknowledged the whole of an outgoing transfer.
    TransferSucceeded {
        /// Transfer ID.
        id: TransferId,
    },
    /// The peer refused an outgoing transfer (XFER_REFUSE); nothing more of
    /// it is sent. [`RefuseReason::Completed`] means the peer already has it.
    TransferRefused {
        /// Transfer ID.
        id: TransferId,
        /// The peer's reason.
        reason: RefuseReason,
    },
    /// An outgoing transfer will never be acknowledged: the session ended
    /// before it started or finished.
    TransferAborted {
        /// Transfer ID.
        id: TransferId,
    },
    /// The peer rejected a message of ours (MSG_REJECT).
    MessageRejected {
        /// The peer's reason.
        reason: RejectReason,
        /// The type code of the message it rejected.
        rejected_header: u8,
    },
    /// A SESS_TERM was sent or received: no new transfers start, those in
    /// progress may finish (RFC 9174 section 6.1).
    SessionEnding {
        /// The SESS_TERM reason.
        reason: SessTermReason,
        /// Who sent the first SESS_TERM.
        initiator: Side,
    },
    /// The session is over: send what `poll_transmit` still holds, then
    /// close the TCP connection.
    SessionTerminated(Termination),
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Termination {
    /// Why.
    pub cause: Cause,
    /// The reason of the SESS_TERM this entity sent, if it sent one.
    pub sent: Option<SessTermReason>,
    /// The reason of the SESS_TERM the peer sent, if it sent one.
    pub received: Option<SessTermReason>,
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.cause)?;
        if let Some(reason) = self.sent {
            write!(f, "; sent SESS_TERM ({reason})")?;
        }
        if let Some(reason) = self.received {
            write!(f, "; received SESS_TERM ({reason})")?;
        }
        Ok(())
    }
}

/// Why a session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// The user called [`Session::terminate`](crate::Session::terminate).
    Requested,
    /// The peer sent SESS_TERM.
    PeerTerminated(SessTermReason),
    /// The peer's contact header had CAN_TLS and it ended the session
    /// before SESS_INIT: it requires TLS, which this entity does not offer.
    TlsRequired,
    /// The peer's first octets are not a TCPCL contact header.
    NotTcpcl(Vec<u8>),
    /// The peer speaks another TCPCL version (RFC 9174 section 4.3).
    VersionMismatch(u8),
    /// The peer sent a message that cannot be decoded.
    Malformed(DecodeError),
    /// The peer's SESS_INIT cannot be accepted (RFC 9174 sections 4.7, 4.8).
    Unacceptable(String),
    /// No message for twice the Session Keepalive (RFC 9174 section 5.1.1).
    KeepaliveTimeout,
    /// No message but KEEPALIVE for the configured idle time (section 6.2).
    IdleTimeout,
    /// Contact headers and SESS_INITs were not exchanged in time.
    EstablishmentTimeout,
    /// The peer did not answer SESS_TERM or finish in time.
    EndingTimeout,
    /// All 2^64 Transfer IDs are used (RFC 9174 section 5.2.1).
    TransferIdsExhausted,
    /// The TCP connection closed before the session ended cleanly.
    ConnectionLost,
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Requested => f.write_str("session terminated locally"),
            Cause::PeerTerminated(reason) => write!(f, "peer terminated the session ({reason})"),
            Cause::TlsRequired => f.write_str(
                "the peer offered TLS (CAN_TLS) and ended the session before SESS_INIT: \
                 it requires TLS, which this TCPCL does not implement (it always sends CAN_TLS=0)",
            ),
            Cause::NotTcpcl(octets) => {
                write!(
                    f,
                    "the peer is not a TCPCL entity: it opened with {octets:02x?}, not \"dtn!\""
                )
            }
            Cause::VersionMismatch(v) => {
                write!(
                    f,
                    "the peer speaks TCPCL version {v}; this entity speaks version 4 only"
                )
            }
            Cause::Malformed(e) => write!(f, "the peer sent a malformed message: {e}"),
            Cause::Unacceptable(what) => write!(f, "the peer's SESS_INIT is unacceptable: {what}"),
            Cause::KeepaliveTimeout => {
                f.write_str("no message from the peer for twice the keepalive interval")
            }
            Cause::IdleTimeout => f.write_str("the session was idle for the configured time"),
            Cause::EstablishmentTimeout => {
                f.write_str("contact headers and SESS_INITs were not exchanged in time")
            }
            Cause::EndingTimeout => {
                f.write_str("the peer did not answer SESS_TERM or finish its transfer in time")
            }
            Cause::TransferIdsExhausted => f.write_str("all transfer IDs of the session are used"),
            Cause::ConnectionLost => {
                f.write_str("the TCP connection closed before the session ended")
            }
        }
    }
}
