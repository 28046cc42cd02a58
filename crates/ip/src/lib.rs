//! IP over AX.25 and over X.25 with smoltcp, sans-IO.
//!
//! A [`Host`] runs smoltcp over any [`IpLink`]: an [`Ax25Interface`]
//! (below) or an [`X25Interface`], IP datagrams on X.25 virtual circuits
//! (RFC 877/1356, [`x25::IpOverX25`]) over LAPB, as the hosts of Korb and
//! Wills (1987) on a public X.25 network, or an [`EthInterface`], IP
//! over a bridged Ethernet segment ([`ether`]), the Digital Data link of
//! the D-STAR reproduction.
//!
//! An [`Ax25Interface`] carries IP datagrams (PID 0xCC, AX.25 v2.2 3.4)
//! either in I frames of a connected-mode [`linklab_link::DataLink`] per
//! neighbour ([`Encapsulation::VirtualCircuit`], Linux `axparms --route
//! add ... --ipmode V`) or in UI frames ([`Encapsulation::Datagram`]), resolves IPv4
//! neighbours from a static table or with ARP over AX.25 ([`arp`], RFC 826
//! with hardware type 3, PID 0xCD), and offers smoltcp an [`Ax25Device`]
//! (`Medium::Ip`) whose tokens only fill and drain queues. A [`Host`]
//! puts a smoltcp `Interface` and its sockets on top; [`apps`] has the two
//! ends of a TCP file transfer and ping, [`server`] a TCP server that
//! receives files from any number of senders. A [`TcpSniffer`] on the
//! device counts retransmitted and duplicate TCP segments. Nothing here
//! simulates: the benches that run hosts on simulated channels, and the
//! paper models (4.2BSD's TCP), live with the reproductions in
//! `linklab-scenario`.
//!
//! # smoltcp's retransmission timer (smoltcp 0.14)
//! A [`Host`] uses smoltcp's retransmission timer as it is: its constants
//! have no setter. It matters over a 1200 bit/s channel, where one round
//! trip of a full segment takes seconds. smoltcp 0.14 (`socket/tcp.rs`,
//! `RttEstimator`) follows RFC 6298:
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
//! For comparison, the Linux stack of Ronan et al. uses RFC 6298 with a
//! 200 ms floor and a 120 s ceiling. A sender that needs another timer
//! (4.2BSD's, for Korb and Wills) is written in `linklab-scenario`. What
//! these timers do to the papers' transfers (the retransmissions of the
//! 7182-octet file on the bare radio channel, and the TCP/IP column of
//! Tables V and VII) is reported in docs/reproduce.md, section "Ronan et
//! al., Tables V and VII, TCP/IP column".
//!
//! Nothing here does I/O or reads a clock: time is a
//! [`linklab_core::Instant`] passed in.

pub mod apps;
pub mod arp;
mod device;
pub mod ether;
mod host;
mod iface;
mod port;
pub mod server;
mod sniff;
mod timestamps;
pub mod x25;

pub use device::{Ax25Device, RxToken, TxToken};
pub use ether::{EthInterface, EthStats};
pub use host::{link_instant, smol_instant, CongestionControl, Host, IpLink, TcpConfig};
pub use iface::{
    broadcast, Ax25Config, Ax25ConfigError, Ax25Interface, Ax25Stats, Encapsulation, ARP_PENDING,
    ARP_TRIES,
};
pub use port::{DatagramPort, PortDrops, PortError};
pub use sniff::{TcpCounters, TcpSniffer};
pub use x25::{X25IfConfig, X25IfError, X25IfStats, X25Interface};
