//! Korb and Wills, "Some experiments with TCP/IP protocols over an X.25
//! network" (Purdue CSD-TR-664, 1987): the reproductions of `linklab
//! reproduce` for [`Paper::Korb1987`](crate::report::Paper::Korb1987).
//!
//! - [`bench`](mod@bench): two hosts (smoltcp over IP over X.25 over LAPB) on the
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
//! (Table 4 from seven). An end-to-end window instead of the class (each
//! packet acknowledged by the far DTE) would give a circuit at most two
//! packets per round trip, about 5.4 kbit/s for 552-octet datagrams of
//! four full packets and a short one, which puts two circuits near 10
//! kbit/s, under Table 3's 12.6. Both parameters were fitted once by
//! simulation (the example `korb_fit`; values and method in
//! `X25NetConfig::korb1987`): the class to Table 3's two-circuit row, the
//! share to the paper's saturated 35,000 bit/s with ten circuits.
//!
//! # smoltcp's retransmission timer cannot be tuned
//! The paper's lesson is that "the TCP timeout period must be carefully
//! adjusted for X.25 carriers". smoltcp 0.14 computes its RTO as RFC 6298
//! says (initial 1 s, SRTT + 4 RTTVAR, clamped to 1-60 s, doubled on each
//! expiry, go-back-N on expiry) from constants (`RTTE_INITIAL_RTO`,
//! `RTTE_MIN_RTO`, `RTTE_MAX_RTO` in `socket/tcp.rs`) with no setter; its
//! socket offers congestion control, Nagle, the delayed-ACK time,
//! keep-alive, the connection time-out (which aborts, it does not set the
//! RTO) and the buffer sizes. The retransmission section therefore
//! compares what can be changed: the same saturated transfers with no
//! congestion window (4.2BSD) and with Reno's slow start after each
//! time-out (RFC 5681), and a single transfer, which never saturates the
//! network. It says so in every note.

pub mod bench;
pub mod experiment;
pub mod reference;
pub mod run;
mod sections;

pub use sections::{retransmissions, table_1, table_4, tables_2_3};

use thiserror::Error;

/// Why a Korb reproduction or experiment could not run.
#[derive(Debug, Error)]
pub enum KorbError {
    /// The compiled-in published numbers did not parse.
    #[error(transparent)]
    Reference(#[from] reference::ReferenceError),
    /// A built-in experiment file is not valid.
    #[error("experiment file: {0}")]
    Experiment(#[from] Box<crate::experiment::ExperimentError>),
    /// The bench could not be built or a run failed.
    #[error(transparent)]
    Bench(#[from] bench::BenchError),
    /// A metric had no value in any replication.
    #[error("no replication measured {0}")]
    NoResult(String),
}
