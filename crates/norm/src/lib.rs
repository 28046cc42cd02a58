//! NORM, the NACK-Oriented Reliable Multicast protocol (RFC 5740), sans-IO.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod wire;
