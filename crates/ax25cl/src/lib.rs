//! The DTN convergence layer over AX.25 connected mode of Ronan, Long and
//! Walsh ("More experiments with Delay and Disruption Tolerant Networking
//! over AX.25 Networks"; the AX.25CM-CL of DTN2), sans-IO.
//!
//! # What the paper describes
//! Section II: the AX.25CM-CL carries bundles directly over an AX.25
//! connection used as a layer-2 protocol, and differs from the TCP
//! convergence layer (draft-irtf-dtnrg-tcp-clayer-02, published as RFC
//! 7242, TCPCL version 3) only in a 32-bit CRC appended to each TCP-CL
//! segment, so that corrupted KISS frames are detected. Section V.B: the
//! receiver acknowledges every `ack_window` segments (8 by default; 32 for
//! stable links) rather than every segment, and every complete bundle at
//! once; the acknowledgements are what reactive fragmentation resumes from
//! when an AX.25 connection drops.
//!
//! # The format chosen here ([`wire`])
//! The paper gives no octet layout, so this crate takes RFC 7242's: the
//! contact header (`dtn!`, version 3, flags, keepalive interval, SDNV EID
//! length, EID) and the messages DATA_SEGMENT (S and E flags, SDNV length),
//! ACK_SEGMENT (SDNV cumulative acknowledged length), REFUSE_BUNDLE,
//! KEEPALIVE and SHUTDOWN, each followed by a CRC-32 (CRC-32/ISO-HDLC,
//! [`linklab_wire::fcs32`],
//! big-endian) over its own octets. RFC 9174 (TCPCLv4) is the model for
//! the engine's shape, not for the octets: it dropped SDNVs and the CL's
//! own integrity check is what this layer adds. LENGTH is not used.
//!
//! # The engine ([`Session`])
//! It does not own the link: AX.25 link up and down are inputs, octets
//! the link delivers go in with [`Session::handle_input`], and each
//! message [`Session::poll_transmit`] returns is one DL-DATA request
//! ([`Config::fit_frame`] sizes DATA_SEGMENTs so each fills one I frame).
//! Both entities send their contact header when the link comes up; then
//! bundles flow both ways, one after another in each direction, sent
//! without waiting for acknowledgements (the AX.25 window is the flow
//! control). No timers: keepalives are sent as 0 (off), since the AX.25
//! link's own T1/T3 polling finds a dead peer; a received KEEPALIVE is
//! ignored.
//!
//! # A bad CRC tears the session down and the link is re-established
//! The stream's framing rests on the length fields; once a message's
//! CRC-32 fails, no later octet can be trusted to start a message, and
//! there is no resynchronisation point short of a new connection. So a
//! CRC mismatch (and any other malformed input or protocol violation) ends
//! the session ([`Cause::Malformed`], [`Cause::Protocol`]): the user
//! releases the AX.25 link and connects again, and the new session's
//! contact headers restart the stream. Nothing already acknowledged is
//! lost: the bundle in flight is reported with the octets acknowledged
//! (sender) or received (receiver), exactly as for a link that dropped.
//!
//! # Link loss: reactive fragmentation
//! When the session ends inside a bundle, the sender gets
//! [`Event::TransferInterrupted`] with the octets the peer acknowledged
//! (for a bundle agent's `transfer_partial`: the rest becomes a fragment
//! sent on the next contact, resuming from the last acknowledged octet),
//! and the receiver [`Event::PartialReceived`] with the octets that
//! arrived, each segment checked by its CRC (for `handle_partial_bundle`,
//! which keeps them as a fragment). Octets received after the last
//! acknowledgement arrive again in the resumed fragment: the duplication
//! the paper's conclusion says short `ack_window`s keep small.

mod config;
mod event;
mod session;
pub mod wire;

pub use config::{Config, ConfigError, DEFAULT_ACK_WINDOW};
pub use event::{Cause, Event};
pub use session::{SendError, Session, State};
