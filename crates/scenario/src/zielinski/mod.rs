//! Zieliński, "Effective throughput of AX.25 protocol" (2013): firmware
//! TNCs on a wired half-duplex link, simulated with the real AX.25 engine
//! inside each TNC, set against the paper's model (eq. 1-5) and the
//! throughputs it measured (sections 3.1 and 3.2).

pub mod experiment;
pub mod published;
pub mod reproduce;
pub mod station;
pub mod testbed;

pub use experiment::{
    RealWindowExperiment, ThroughputExperiment, REAL_WINDOW_KIND, THROUGHPUT_KIND,
};
pub use reproduce::{figures_10_to_13, figures_4_to_6, real_window_figures, sections, theory};

use linklab_channel::profile::UnknownProfile;
use linklab_link::NewLinkError;
use linklab_wire::ax25::AddressError;
use thiserror::Error;

/// Why a Zieliński experiment could not be run.
#[derive(Debug, Error)]
pub enum ZielinskiError {
    /// The engine configuration was refused.
    #[error("data link configuration refused: {0}")]
    Link(#[from] NewLinkError),
    /// A station address did not parse.
    #[error("bad station address: {0}")]
    Address(#[from] AddressError),
    /// A profile name is not known.
    #[error("{0}")]
    Profile(#[from] UnknownProfile),
    /// An experiment file did not parse.
    #[error("bad experiment file: {0}")]
    Toml(String),
    /// An experiment file of another kind.
    #[error("experiment kind \"{found}\" given to the \"{wanted}\" runner")]
    Kind {
        /// The file's kind.
        found: String,
        /// The kind the runner takes.
        wanted: &'static str,
    },
    /// A window outside the modulo-8 range.
    #[error(
        "window k = {k} is out of range: 1-7 allowed on the modulo-8 links Zieliński measured"
    )]
    Window {
        /// The value given.
        k: u8,
    },
    /// Another parameter out of range.
    #[error("{0}")]
    Parameter(String),
    /// A confidence interval needs at least two replications.
    #[error("{replications} replication(s): at least 2 are needed for a confidence interval")]
    TooFewReplications {
        /// Replications asked for.
        replications: u64,
    },
    /// A file of published figures did not parse.
    #[error(transparent)]
    Reference(#[from] crate::published::PublishedError),
    /// A published figure could not be read.
    #[error("cannot read the published figure \"{0}\"")]
    Published(String),
    /// Nothing left to do before the transfer finished.
    #[error("the simulation ran dry at {:.3} s in phase \"{phase}\"", *at_us as f64 / 1e6)]
    Stalled {
        /// Which part of the run.
        phase: &'static str,
        /// Virtual time, microseconds.
        at_us: u64,
    },
}
