//! IP over AX.25 with smoltcp, sans-IO.
//!
//! An [`Ax25Interface`] carries IP datagrams (PID 0xCC, AX.25 v2.2 3.4)
//! either in I frames of a connected-mode [`linklab_link::DataLink`] per
//! neighbour ([`Encapsulation::VirtualCircuit`], Linux `ip route ... mode
//! vc`) or in UI frames ([`Encapsulation::Datagram`]), resolves IPv4
//! neighbours from a static table or with ARP over AX.25 ([`arp`], RFC 826
//! with hardware type 3, PID 0xCD), and offers smoltcp an [`Ax25Device`]
//! (`Medium::Ip`) whose tokens only fill and drain queues. A [`Host`]
//! puts a smoltcp `Interface` and its sockets on top; [`workload`] has a
//! TCP file transfer and ping; [`sim`] runs two hosts on the simulated
//! half-duplex radio channel in virtual time. A [`TcpSniffer`] on the
//! device counts retransmitted and duplicate TCP segments.
//!
//! # smoltcp's retransmission timer (smoltcp 0.14)
//! Which TCP timers apply matters over a 1200 bit/s channel, where one
//! round trip of a full segment takes seconds. smoltcp 0.14
//! (`socket/tcp.rs`, `RttEstimator`) follows RFC 6298:
//! - **initial RTO 1 s** (`RTTE_INITIAL_RTO`, RFC 6298 2.1), until the
//!   first round-trip sample;
//! - **SRTT and RTTVAR** per RFC 6298 2.2-2.3 (gains 1/8 and 1/4), RTO =
//!   SRTT + max(5 ms, 4 RTTVAR) (`RTTE_K` 4, `RTTE_MIN_MARGIN` 5 ms);
//! - **clamped to 1-60 s** (`RTTE_MIN_RTO`, `RTTE_MAX_RTO`, RFC 6298 2.4
//!   and 2.5);
//! - **backoff**: each expiry doubles the RTO up to 60 s (RFC 6298 5.5);
//!   after three expiries without a sample SRTT and RTTVAR are forgotten
//!   and the next sample starts them afresh;
//! - **Karn's algorithm**: one segment is timed at a time (the first new
//!   sequence number sent while none is timed), and a retransmission
//!   abandons the sample, so no RTT is taken from a retransmitted segment;
//! - **go-back-N on expiry**: an RTO rewinds the send pointer to the
//!   oldest unacknowledged octet, so every segment in flight is sent
//!   again, not only the first one.
//!
//! smoltcp 0.12 had a fixed scheme instead (initial 0.7 s, at most 10 s,
//! no RFC 6298 floor), which over this channel expired on segments that
//! were only queued behind others; the Linux stack of Ronan et al. uses
//! RFC 6298 with a 200 ms floor and a 120 s ceiling.
//!
//! Nothing here does I/O or reads a clock: time is a
//! [`linklab_link::Instant`] passed in.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod arp;
mod device;
mod host;
mod iface;
pub mod sim;
mod sniff;
pub mod workload;

pub use device::{Ax25Device, RxToken, TxToken};
pub use host::{link_instant, smol_instant, CongestionControl, Host, TcpConfig};
pub use iface::{
    broadcast, Ax25Config, Ax25ConfigError, Ax25Interface, Ax25Stats, Encapsulation, ARP_PENDING,
    ARP_TRIES,
};
pub use sniff::{TcpCounters, TcpSniffer};
