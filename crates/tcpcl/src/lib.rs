//! The DTN TCP convergence layer, version 4 (TCPCLv4, RFC 9174), sans-IO.
//!
//! A TCPCL session carries *transfers*, opaque octet strings (for a bundle
//! agent, one encoded BPv7 bundle each), both ways over one TCP
//! connection. This crate knows nothing of bundles: it moves octets.
//!
//! - [`wire`] has the octets: the contact header (section 4.2), every
//!   message (SESS_INIT 4.6, KEEPALIVE 5.1.1, MSG_REJECT 5.1.2,
//!   XFER_SEGMENT 5.2.2, XFER_ACK 5.2.3, XFER_REFUSE 5.2.4, SESS_TERM
//!   6.1), session and transfer extension items (4.8, 5.2.5) with the
//!   Transfer Length extension (5.2.5.1), and the reason codes.
//! - [`Session`] is one entity's side of one connection, in the manner of
//!   quinn-proto: octets in with [`Session::handle_input`], octets out
//!   with [`Session::poll_transmit`](linklab_core::Engine::poll_transmit), [`Event`]s out with
//!   [`Session::poll_event`], time in with [`Session::handle_timeout`](linklab_core::Engine::handle_timeout) at
//!   [`Session::poll_timeout`](linklab_core::Engine::poll_timeout), and the user's requests
//!   [`Session::send_transfer`], [`Session::refuse_transfer`],
//!   [`Session::accept_transfer`] and [`Session::terminate`]. It never does I/O and never reads a clock.
//!
//! What the session does, clause by clause:
//!
//! - Contact header (4.2, 4.3): the active entity sends first, the passive
//!   one answers. A wrong magic closes the connection at once; a version
//!   other than 4 is answered by a passive entity with SESS_TERM "Version
//!   mismatch" and makes an active one close.
//! - TLS (4.3, 4.4): this entity always sends CAN_TLS = 0, so Enable TLS
//!   negotiates to false and the session is plain TCP. A peer that offered
//!   TLS and then ends the session before SESS_INIT is reported as
//!   [`Cause::TlsRequired`].
//! - SESS_INIT (4.6 to 4.8): the active entity sends it after the contact
//!   headers, the passive one in answer. The Session Keepalive is the
//!   smaller Keepalive Interval; the peer's Segment and Transfer MRUs bound
//!   what is sent to it. A Node ID that is not a URI, a zero MRU or an
//!   unknown critical session extension item ends the session with
//!   "Contact Failure".
//! - Transfers (5.2): Transfer IDs count up from 0 per session; a transfer
//!   is cut into segments of at most the peer's Segment MRU (and the
//!   configured `max_segment`), START and END flagged, the first with the
//!   Transfer Length extension; all segments are sent without waiting for
//!   acknowledgements, transfers one after the other. Received segments
//!   are acknowledged one by one with the cumulative length and the
//!   segment's flags; with `hold_final_ack` the last one waits until the
//!   user has kept the transfer ([`Session::accept_transfer`]). A transfer is refused (XFER_REFUSE) for an unknown
//!   critical transfer extension ("Extension Failure"), a length over the
//!   Transfer MRU ("No Resources"), a length that disagrees with its
//!   Transfer Length ("Not Acceptable"), or when the session is ending
//!   ("Session Terminating"); the user can refuse one too. A refused
//!   outgoing transfer sends no more segments.
//! - Malformed input (5.1.2): an unknown message type is answered with
//!   MSG_REJECT "Message Type Unknown" and the connection is closed; a
//!   segment over the Segment MRU with MSG_REJECT "Message Unsupported"
//!   (its data skipped, its transfer refused); a message out of place
//!   (SESS_INIT twice, an XFER_ACK for an unknown transfer, a segment with
//!   no START) with MSG_REJECT "Message Unexpected". A message whose inner
//!   lengths are inconsistent ends the session with SESS_TERM and closes.
//! - Keepalive and idle (5.1.1, 6.2): KEEPALIVE when nothing was sent for
//!   the Session Keepalive; SESS_TERM "Idle timeout" when nothing came for
//!   twice that, or nothing but KEEPALIVE for the configured idle timeout.
//! - SESS_TERM (6.1): answered with the same reason and REPLY; after it no
//!   new transfer starts, those on the wire may finish; the connection
//!   closes when both SESS_TERMs are exchanged and nothing is half done,
//!   or after the ending timeout.

mod config;
mod event;
mod session;
pub mod wire;

pub use config::{Config, ConfigError, Role};
pub use event::{Cause, Event, SessionParams, Side, Termination, TransferId};
pub use session::{AcceptError, RefuseError, SendError, Session, State};
pub use wire::{RefuseReason, RejectReason, SessTermReason};
