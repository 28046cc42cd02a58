//! Real time for linklab's sans-IO engines: AX.25 connected mode over a
//! KISS TNC reached by TCP or a serial port, or over AXUDP.
//!
//! - [`KissAddress`]: `tcp:HOST:PORT`, `serial:DEVICE:BAUD` or
//!   `axudp:BIND@PEER`, and the connection to it;
//! - [`axudp`]: AXUDP ports (AX.25 over UDP, as ax25ipd and BPQ's AXIP),
//!   a sans-IO router and the KISS stream over its socket;
//! - [`KissParams`]: TXDELAY, P, SLOTTIME and TXTAIL sent at start;
//! - [`Station`]: one callsign's links, routed by remote address, sans-IO
//!   like the engines (docs/architecture.md, "the one rule"), so it is tested
//!   in virtual time; it keeps at most [`DEFAULT_MAX_LINKS`] links unless
//!   told otherwise, and reports input it cannot use as [`InputError`],
//!   one by one for the first [`BAD_INPUT_BURST`], then as a
//!   [`BadInputCount`] per [`BAD_INPUT_INTERVAL`];
//! - [`driver`]: the tokio loop that feeds a station from the byte stream
//!   and the clock, and talks to its user over channels;
//! - [`IpStation`]: an IP host ([`linklab_ip::Host`], smoltcp over AX.25
//!   in VC or datagram mode) on a KISS port, sans-IO as well, and
//!   [`ip_driver`], the tokio loop that runs it with an [`Application`] on
//!   its sockets;
//! - [`tun_driver`]: the kernel's own IP stack as the host instead, through
//!   a TUN device ([`linklab_ip::DatagramPort`] in an [`IpStation`]).

mod address;
pub mod air;
pub mod axudp;
mod bad_input;
pub mod driver;
pub mod ip_driver;
mod ip_station;
mod kiss_input;
mod kiss_writer;
mod link_settings;
mod params;
mod station;
pub mod tun_driver;

pub use address::{ConnectError, KissAddress, KissAddressError, KissStream};
pub use air::{AckMode, AirClock, AirSettings};
pub use bad_input::{BadInputCount, BAD_INPUT_BURST, BAD_INPUT_INTERVAL};
pub use driver::{DriverError, DriverHandle, DriverOptions, Notice, Request};
pub use ip_driver::{Application, IpDriverOptions};
pub use ip_station::{IpEvent, IpHost, IpStation};
pub use link_settings::{LinkSettings, DEFAULT_T1, DEFAULT_WINDOW_MOD8};
pub use params::{KissParams, KissTime, KissTimeTooLong, KISS_MAX_TIME};
pub use station::{
    Direction, InputError, Station, StationError, StationEvent, DEFAULT_MAX_LINKS, KISS_MAX_FRAME,
};
