//! Wire formats of the HDLC family, with no I/O and no panics on any input.
//!
//! - [`fcs`]: the HDLC frame check sequence, FCS-16 (CRC-16/X.25, ISO 13239 4.2).
//! - [`fcs32`]: the 32-bit FCS of ISO 13239 (CRC-32/ISO-HDLC).
//! - [`hdlc`]: flags, bit stuffing, NRZI, abort sequences and a deframer that
//!   finds frames in a raw bit stream from a modem.
//! - [`control`]: HDLC control fields (I, S, U formats), modulo 8 and 128.
//! - [`ax25`]: AX.25 v2.2 addresses, frames, PIDs, XID parameters, FRMR,
//!   and which frames a digipeater repeats.
//! - [`lapb`]: HDLC/LAPB frames with single-octet address fields.
//! - [`kiss`]: the KISS TNC host protocol and its ACKMODE extension.
//! - [`pcap`]: libpcap capture files with AX.25 link types.
//! - [`axudp`]: AX.25 frames in UDP datagrams with their FCS (RFC 1226,
//!   as ax25ipd and BPQ's AXIP send them).
//! - [`monitor`]: a one-line, TNC-style rendering of a frame.

pub mod ax25;
pub mod axudp;
pub mod control;
pub mod fcs;
pub mod fcs32;
pub mod hdlc;
pub mod kiss;
pub mod lapb;
pub mod monitor;
pub mod pcap;
