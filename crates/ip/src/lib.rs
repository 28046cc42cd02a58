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
