//! Sans-IO models of the medium (docs/architecture.md, `channel`): the
//! half-duplex shared radio channel with p-persistent CSMA ([`radio`]), the
//! full-duplex point-to-point line ([`line`](mod@line)), bit-error processes
//! ([`errors`]), the TNC between a host and the radio ([`tnc`]), the
//! processor of a firmware TNC that runs AX.25 itself ([`firmware`]) and
//! named controller/firmware profiles ([`profile`](mod@profile)), a
//! two-DTE public X.25 network ([`x25net`]) and the D-STAR Digital Data
//! channel of Icom ID-1 radios, two or more ([`dstar`]).
//!
//! Every model is a state machine in virtual time, driven like the protocol
//! engines: calls take `now`, outputs are drained by polling,
//! `poll_timeout` says when to call `handle_timeout` next, and randomness
//! comes from seeded `linklab_core` streams. Nothing here reads a clock or
//! does I/O. The models know the engines only through the [`Medium`]
//! trait and plain frame bytes.

pub mod airtime;
pub mod dstar;
pub mod errors;
pub mod firmware;
pub mod line;
pub mod medium;
pub mod profile;
pub mod radio;
pub mod tnc;
pub mod x25net;

pub use airtime::{bits_duration, hdlc_bits, FLAG_BITS};
pub use dstar::{Contention, DdChannel, DdConfig, DdStats};
pub use errors::{ErrorModel, ErrorProcess, GilbertElliott};
pub use firmware::{Cpu, FirmwareCosts, Priority};
pub use line::{DirectionStats, LineConfig, PointToPointLine};
pub use medium::{Delivery, Medium, MediumEvent, Outcome, StationId};
pub use profile::{profile, TncProfile};
pub use radio::{
    Duplex, RadioChannel, RadioConfig, RadioStats, SlotClock, StationConfig, StationStats,
};
pub use tnc::{Tnc, TncConfig, SERIAL_BITS_PER_OCTET};
