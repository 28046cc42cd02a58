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
//! # The 7182-octet transfer on the bare radio channel
//! Ronan, Long and Walsh's file with Table IV's settings (MTU 128 k + 40,
//! MSS 128 k, TCP window 256 k, AX.25 window k in VC mode) on Table I's
//! channel, the hosts on the radio directly (no host latency, serial link
//! or TNC); means over ten seeds (`examples/bare_radio.rs`).
//! *Retransmitted*: segments the sender's sniffer saw re-send sequence
//! space; *spurious*: segments whose sequence space the receiver already
//! had (the channel loses nothing, so every retransmission is spurious).
//!
//! | bit/s | k | transfer, s | Table V/VII TCP/IP, s | retransmitted | spurious |
//! |------:|--:|------------:|----------------------:|--------------:|---------:|
//! |  1200 | 1 | 156.5 | 169.18 | 6.8 | 6.8 |
//! |  1200 | 2 | 104.2 | 114.91 | 7.0 | 7.0 |
//! |  1200 | 3 |  99.8 |  96.45 | 8.0 | 8.0 |
//! |  1200 | 4 | 109.0 |  90.36 | 10.0 | 10.0 |
//! |  1200 | 5 | 102.9 |  88.18 | 8.0 | 8.0 |
//! |  1200 | 6 | 106.6 |  86.09 | 8.0 | 8.0 |
//! |  1200 | 7 | 111.9 |  86.82 | 8.0 | 8.0 |
//! |  9600 | 1 |  43.0 |  71.50 | 0.6 | 0.6 |
//! |  9600 | 2 |  18.2 |  42.91 | 0.6 | 0.6 |
//! |  9600 | 3 |  14.3 |  34.10 | 0.6 | 0.6 |
//! |  9600 | 4 |  12.5 |  30.50 | 0.6 | 0.6 |
//! |  9600 | 5 |  11.8 |  27.00 | 0.6 | 0.6 |
//! |  9600 | 6 |  11.0 |  25.27 | 0.6 | 0.6 |
//! |  9600 | 7 |  10.7 |  26.09 | 0.6 | 0.6 |
//!
//! With smoltcp 0.12 window 2 at 1200 bit/s took 430-540 s; with the
//! RFC 6298 timer it takes 104 s. The spurious retransmissions left at
//! 1200 bit/s all fall in the first 30-50 s (traced at k = 1 and 4): the
//! SYN waits for the AX.25 link set-up (SABM, UA) and is re-sent when the
//! 1 s initial RTO expires; Karn's rule then discards the samples of
//! re-sent segments, and a full window with its acknowledgement takes
//! longer than an RTO computed from short samples, so the timer expires a
//! few more times, each time re-sending the whole flight (go-back-N),
//! before SRTT reaches the round trip; AX.25 delivers every copy. At
//! 9600 bit/s the link set-up is quicker and a window fits inside the
//! RTO; only some runs re-send a segment. Congestion control
//! (None, Reno, Cubic) makes no difference at these windows: the
//! receiver's window of k segments binds first. The bare channel has none
//! of the paper's host and TNC turnaround, hence the 9600 bit/s times far
//! below Table VII; the scenario crate's `ronan::tables_5_7_tcpip` puts a
//! host and KISS TNC in front of each stack.
//!
//! Nothing here does I/O or reads a clock: time is a
//! [`linklab_core::Instant`] passed in.

pub mod apps;
pub mod arp;
mod device;
pub mod ether;
mod host;
mod iface;
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
pub use sniff::{TcpCounters, TcpSniffer};
pub use x25::{X25IfConfig, X25IfError, X25IfStats, X25Interface};
