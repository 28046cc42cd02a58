//! Korb and Wills, "Some experiments with TCP/IP protocols over an X.25
//! network" (Purdue CSD-TR-664, 1987): the reproductions of `linklab
//! reproduce` for [`Paper::Korb1987`](crate::report::Paper::Korb1987).
//!
//! - [`testbed`](mod@testbed): two hosts (smoltcp over IP over X.25 over LAPB) on the
//!   simulated ACCUNET ([`linklab_channel::x25net`]);
//! - [`run`]: one replication of the ping sequence, an FTP transfer and
//!   the five simultaneous puts;
//! - [`experiment`]: the scenario kinds `korb-ping` and `korb-ftp`;
//! - [`table_1`], [`tables_2_3`], [`table_4`], [`retransmissions`]: the
//!   sections of the report, with checks.
//!
//! # The network's flow control
//! Two mechanisms of the simulated ACCUNET ([`linklab_channel::x25net`])
//! shape Tables 2-4: each call is held to a throughput class (X.25 6.13,
//! a token bucket per call at the ingress, the call held with RNR while
//! its datagrams wait), and the access port accepts at most a share of
//! the line (the paper saw "packets being queued waiting for the network
//! to accept them", section 3.5). The class sets what one circuit carries
//! (Tables 3 and 4 up to six circuits), the share the saturated level
//! (Table 4 from seven). Both are fitted values, taken from
//! `X25NetConfig::korb1987`: the class to Table 3's two-circuit row, the
//! share to the paper's saturated 35,000 bit/s with ten circuits (example
//! `korb_fit`). Why a class rather than an end-to-end window, how the
//! fits were made and what they give: docs/reproduce.md, section "Korb
//! and Wills 1987, Tables 1-4".
//!
//! # The sending TCP is 4.2BSD's
//! The paper's lesson is that "the TCP timeout period must be carefully
//! adjusted for X.25 carriers". smoltcp 0.14 computes its RTO as RFC 6298
//! says (initial 1 s, SRTT + 4 RTTVAR, clamped to 1-60 s, doubled on each
//! expiry) from constants with no setter, so the files of Tables 2-4 are
//! sent by [`bsd42::Bsd42Sender`] instead (`tcp = "bsd42"` in
//! the experiment files): 4.2BSD's timer (twice a smoothed round trip in
//! 1-30 s, a gentle backoff table, go-back-N, no Karn's rule), no
//! congestion window, and 4.2BSD's interface queue of 50 datagrams; the
//! receivers stay smoltcp sockets. smoltcp senders remain available
//! (`tcp = "smoltcp"`, `congestion = "none"`). The 4.2BSD sender is what
//! lets [`retransmissions`] run section 4's comparison on the timer
//! itself, with its floor raised from 1 s to the 30 s ceiling.
//!
//! Every run is in virtual time and determined by its configuration and
//! seed; nothing here does I/O.

pub mod bsd42;
pub mod experiment;
pub mod reference;
pub mod run;
mod sections;
pub mod testbed;

pub use sections::{larger_segments, retransmissions, table_1, table_4, tables_2_3};

use thiserror::Error;

/// Why a Korb reproduction or experiment could not run.
#[derive(Debug, Error)]
pub enum KorbError {
    /// The compiled-in published numbers did not parse.
    #[error(transparent)]
    Reference(#[from] crate::published::PublishedError),
    /// A built-in experiment file is not valid.
    #[error("experiment file: {0}")]
    Experiment(#[from] Box<crate::experiment::ExperimentError>),
    /// The testbed could not be built or a run failed.
    #[error(transparent)]
    Testbed(#[from] testbed::TestbedError),
    /// A metric had no value in any replication.
    #[error("no replication measured {0}")]
    NoResult(String),
}
