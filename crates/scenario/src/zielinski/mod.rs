//! Zieliński, "Effective throughput of AX.25 protocol" (2013): firmware
//! TNCs on a wired half-duplex link, simulated with the real AX.25 engine
//! inside each TNC, set against the paper's model (eq. 1-5) and the
//! throughputs it measured (sections 3.1 and 3.2).

pub mod bench;
pub mod station;

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
    /// Nothing left to do before the transfer finished.
    #[error("the simulation ran dry at {at_us} us in phase \"{phase}\"")]
    Stalled {
        /// Which part of the run.
        phase: &'static str,
        /// Virtual time, microseconds.
        at_us: u64,
    },
}
