//! Ronan, Long and Walsh's D-STAR Digital Data measurements: the
//! reproductions of `linklab reproduce` for
//! [`Paper::RonanDstar`](crate::report::Paper::RonanDstar).
//!
//! - [`testbed`](mod@testbed): two PCs on the ID-1 DD channel
//!   ([`linklab_channel::dstar`]): iperf over smoltcp TCP (IPv4, IPv6),
//!   UDP/IPv4 for NORM;
//! - [`tcpcl`](mod@tcpcl): DTN over TCPCLv4 on the same PCs (dtnsend);
//! - [`normcl`](mod@normcl): DTN over the NORM convergence layer on the
//!   same PCs (dtnsend);
//! - [`table_1`], [`table_2`]: the report sections, with checks, also
//!   run from scenario files (`dstar-table-1`, `dstar-table-2`);
//! - [`stations`](mod@stations): several radios on one channel, iperf from
//!   every field station to a base (a section of its own).

mod experiment;
pub mod normcl;
mod sections;
pub mod stations;
pub mod tcpcl;
pub mod testbed;

pub use sections::{
    hostile, table_1, table_1_with, table_2, table_2_with, Table1Config, Table2Config, FILE_OCTETS,
};
