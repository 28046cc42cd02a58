//! Sans-IO data-link engines of the HDLC family.
//!
//! [`DataLink`] is the AX.25 v2.2 (2025 revision 4) connected-mode data
//! link state machine of Appendix C4, for one link between a local and a
//! remote station in balanced mode (ABM). It never does I/O and never reads
//! a clock: frames and time come in through [`DataLink::handle_frame`] and
//! [`DataLink::handle_timeout`](linklab_core::Engine::handle_timeout) (received frames of the link that do not
//! decode through [`DataLink::handle_invalid_frame`], errors L, M and N of
//! C4.3), user requests through
//! [`DataLink::connect`], [`DataLink::send`] and [`DataLink::disconnect`],
//! and everything it wants to do is drained with
//! [`DataLink::poll_transmit`](linklab_core::Engine::poll_transmit), [`DataLink::poll_event`] and
//! [`DataLink::poll_timeout`](linklab_core::Engine::poll_timeout).
//!
//! On v2.2 links the initiating station negotiates the operating
//! parameters with an XID exchange after the UA (6.3.2, Appendix C5);
//! the outcome is reported as [`Event::Negotiated`].
//!
//! The same engine, [`Link`], runs the HDLC procedures with one-octet
//! addresses as [`HdlcLink`] (ISO/IEC 13239; [`Framing`] does the
//! addressing): LAPB in ABM (ITU-T X.25 2.4), and the unbalanced normal
//! and asynchronous response modes (NRM, ARM) with a primary and a
//! secondary station, as Bux, Kümmerle and Truong (1982) describe them in
//! their Appendix A1 and A2 ([`Config::role`], [`Config::mode`]).

pub mod air;
pub mod config;
mod datalink;
pub mod event;
pub mod framing;
mod segment;
pub mod timer;

pub use air::{frame_air_time, t2_for_bit_rate};
pub use config::{
    AckPolicy, Config, ConfigError, Mode, PollPolicy, RecoveryMode, Role, SabmeHandling, T1Backoff,
    T1OnIFrame, WindowLimit,
};
pub use datalink::{
    DataLink, HdlcLink, InvalidFrame, Link, NewLinkError, RoleError, SendError, State, Stats,
};
pub use event::{
    DisconnectReason, Event, FailureReason, LinkError, LinkParams, Negotiation, Version,
};
pub use framing::{Ax25Framing, Framing, HdlcAddressing, HdlcFraming, Pdu};
pub use timer::Timer;
