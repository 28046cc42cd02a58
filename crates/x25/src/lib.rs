//! The ITU-T X.25 packet layer (PLP, layer 3), sans-IO.
//!
//! [`packet`] has the packet formats of X.25 (10/96) clause 5 with the
//! facility codings of clause 7 and the cause and diagnostic codes of
//! Tables 5-5 to 5-7 and Annex E. [`Dte`] is the packet layer of a DTE
//! (the procedures of clauses 3 and 4 and the time-limits of Annex D):
//! restart, virtual calls on a configured range of logical channels,
//! data transfer with windows, complete packet sequences, the D bit,
//! flow control with RR and RNR, interrupts, reset and clearing (IP over
//! it, RFC 877/1356, is `linklab-ip`'s `x25` module). Like the
//! `link` engines it never does I/O and never reads a clock: packets come
//! in through [`Dte::handle_octets`] (the information field of an LAPB I
//! frame) and user requests through its methods, each with the current
//! [`Instant`](linklab_core::Instant); what it wants done is drained with [`Dte::poll_transmit`](linklab_core::Engine::poll_transmit),
//! [`Dte::poll_event`] and [`Dte::poll_timeout`](linklab_core::Engine::poll_timeout).
//!
//! Two DTEs can talk directly, as ISO 8208 allows (DTE/DTE operation):
//! one of them then plays the DCE's part in choosing logical channels and
//! resolving call collisions ([`Role`]).

mod channel;
pub mod config;
mod dte;
pub mod event;
pub mod packet;
mod timer;

pub use config::{Config, ConfigError, Role};
pub use dte::{CallOptions, ChannelState, Dte, LayerState, RequestError};
pub use event::{CallParams, Event};
pub use linklab_wire::control::Modulus;
pub use packet::{Body, CallFields, DataFields, DecodeError, DteAddress, EncodeError, Lci, Packet};
