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
//! # What the simulation shows (Ronan, Long and Walsh, Tables IV and V)
//! With Table IV's settings at AX.25 window 2 (MTU 296, MSS 256, TCP
//! window 512) on Table I's 1200 bit/s channel, smoltcp's TCP delivers the
//! 7182-octet file byte-exact, but in about 430-540 s rather than the
//! 114.91 s of Table V: smoltcp's retransmission timer has fixed bounds
//! (initial RTO 0.7 s, at most 10 s) far below the round trip of a
//! 296-octet datagram over 1200 bit/s with a 150 ms TXDELAY, so it
//! retransmits spuriously; in VC mode AX.25 then carries every copy
//! reliably (the [`TcpSniffer`] counts them at both ends). The Linux
//! stack of the paper starts at 1 s (RFC 6298) and allows 120 s.
//! Congestion control (None, Reno, Cubic) makes no difference at these
//! windows: the receiver's window of two segments binds first.
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
