//! Why a transfer could not be simulated ([`TransferError`]).

use linklab_link::NewLinkError;
use linklab_wire::ax25::AddressError;
use thiserror::Error;

/// Why a transfer could not be simulated.
#[derive(Debug, Error)]
pub enum TransferError {
    /// The engine configuration was refused.
    #[error("data link configuration refused: {0}")]
    Link(#[from] NewLinkError),
    /// A station address did not parse.
    #[error("bad station address: {0}")]
    Address(#[from] AddressError),
    /// The engine refused the message.
    #[error("the sender refused the message: {0}")]
    Send(#[from] linklab_link::SendError),
    /// Nothing left to do before the transfer finished.
    #[error("the simulation ran dry at {:.3} s in phase \"{phase}\"", *at_us as f64 / 1e6)]
    Stalled {
        /// Which part of the run.
        phase: &'static str,
        /// Virtual time, microseconds.
        at_us: u64,
    },
    /// The transfer had not finished at the run's horizon, a simulated
    /// day: on this link it takes longer than anyone would wait, or never
    /// ends (a frame longer on the air than T1, retried for ever).
    #[error("the transfer had not finished after a simulated day (24 h), in phase \"{phase}\"")]
    Unfinished {
        /// Which part of the run.
        phase: &'static str,
    },
    /// The components kept asking for attention without time passing.
    #[error("the simulation stopped advancing at {:.3} s in phase \"{phase}\"", *at_us as f64 / 1e6)]
    Livelock {
        /// Which part of the run.
        phase: &'static str,
        /// Virtual time, microseconds.
        at_us: u64,
    },
    /// A confidence interval needs at least two replications.
    #[error("{replications} replication(s): at least 2 are needed for a confidence interval")]
    TooFewReplications {
        /// Replications asked for.
        replications: u64,
    },
    /// The application above the engines failed.
    #[error("the application failed: {0}")]
    Application(String),
    /// The sender's link failed (N2 T1 expiries, AX.25 v2.2 C4.3 error
    /// I or T) or was reset, and the data it held went with it: the
    /// transfer was cut, as it would be on the air.
    #[error("the link failed and the transfer was cut: {reason}")]
    LinkFailed {
        /// What the engine reported, and how much had arrived.
        reason: String,
    },
    /// The receiver delivered something other than the message.
    #[error("the receiver delivered {got} octets that differ from the {sent} sent")]
    Corrupted {
        /// Octets delivered.
        got: usize,
        /// Octets sent.
        sent: usize,
    },
}
