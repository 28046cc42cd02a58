//! Bux, Kümmerle and Truong (1982), "Data link-control performance:
//! results comparing HDLC operational modes": NRM against ABM on a
//! full-duplex point-to-point link, simulated with the real engine.

mod arm;
pub mod delay;
pub mod model;
pub mod replicate;
mod rnr;
pub mod sections;
pub mod simulate;
pub mod throughput;

use linklab_link::{NewLinkError, SendError};

use crate::experiment::{ExperimentError, InvalidField};
use linklab_wire::control::Modulus;
use serde::Deserialize;
use thiserror::Error;

pub use delay::{Measure, TransferTimeExperiment, TransferTimeResults};
pub use replicate::{DirectionEstimate, Estimate};
pub use sections::{
    sections, throughput_one_way, throughput_two_way, transfer_time, transfer_time_vs_t_p,
};
pub use throughput::{Flow, ThroughputExperiment, ThroughputResults};

pub use simulate::{
    simulate, Direction, LinkRun, Measured, MessageLength, Procedure, Traffic, MAX_MESSAGE_OCTETS,
};

/// Message-length law of an experiment file (section 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LengthDistribution {
    /// Every message l bits long.
    Constant,
    /// Exponentially distributed with mean l.
    Exponential,
}

/// The modulus for a file's `modulus = 8` or `128`.
fn modulus(value: u32) -> Result<Modulus, BuxError> {
    match value {
        8 => Ok(Modulus::Mod8),
        128 => Ok(Modulus::Mod128),
        _ => Err(BuxError::Modulus { value }),
    }
}

/// The longest message (or mean) an experiment file may give, bits.
const MAX_MESSAGE_BITS: u32 = MAX_MESSAGE_OCTETS as u32 * 8;
/// The fastest line an experiment file may give, bit/s.
const MAX_BIT_RATE_BPS: u32 = 1_000_000_000;
/// The longest t_p an experiment file may give, ms.
const MAX_T_P_MS: f64 = 60_000.0;
/// The longest measured period an experiment file may ask for, in mean
/// I-frame times or messages per replication.
const MAX_FRAME_TIMES: u32 = 10_000_000;

/// Checks a file's `modulus`: 8 or 128.
fn validate_modulus(value: u32) -> Result<(), InvalidField> {
    modulus(value)
        .map(|_| ())
        .map_err(|e| InvalidField::new("modulus", e.to_string()))
}

/// Checks a bit-error probability `field`: from 0 up to (not including) 1.
fn validate_p_bit(field: &'static str, p_bit: f64) -> Result<(), InvalidField> {
    if (0.0..1.0).contains(&p_bit) {
        Ok(())
    } else {
        Err(InvalidField::new(
            field,
            format!("{p_bit} is out of range: from 0 up to, not including, 1"),
        ))
    }
}

/// Why a Bux experiment could not be run.
#[derive(Debug, Error)]
pub enum BuxError {
    /// The engine configuration was refused.
    #[error("data link configuration refused: {0}")]
    Link(#[from] NewLinkError),
    /// The engine refused a message.
    #[error("the sending station refused a message: {0}")]
    Send(#[from] SendError),
    /// The experiment file does not parse or holds a bad value.
    #[error("experiment file: {0}")]
    Experiment(Box<ExperimentError>),
    /// The file is for another kind of experiment.
    #[error("experiment kind \"{found}\" given to the {expected} runner")]
    Kind {
        /// The kind in the file.
        found: &'static str,
        /// The kind this runner takes.
        expected: &'static str,
    },
    /// A modulus other than 8 or 128.
    #[error("modulus {value} is not an HDLC modulus: 8 or 128")]
    Modulus {
        /// The value given.
        value: u32,
    },
    /// A sweep with no points.
    #[error("{what} is empty: nothing to run")]
    EmptySweep {
        /// The field.
        what: &'static str,
    },
    /// A parameter out of its range.
    #[error("{name} = {value} is invalid: {why}")]
    Parameter {
        /// The field.
        name: &'static str,
        /// The value given.
        value: f64,
        /// The range allowed.
        why: &'static str,
    },
    /// Fewer than two replications.
    #[error("{replications} replication(s): at least 2 are needed for a confidence interval")]
    TooFewReplications {
        /// Replications asked for.
        replications: u64,
    },
    /// The replications gave no estimate of a measure (nothing delivered).
    #[error("no {what} was measured: nothing was delivered in the measured period")]
    NoEstimate {
        /// The measure.
        what: &'static str,
    },
    /// p_bit outside [0, 1).
    #[error("bit-error probability p_bit = {p_bit} is outside [0, 1)")]
    BitErrorProbability {
        /// The value given.
        p_bit: f64,
    },
    /// Nothing left to do before the run finished.
    #[error("the simulation ran dry at {:.3} s during {phase}", *at_us as f64 / 1e6)]
    Stalled {
        /// Which part of the run.
        phase: &'static str,
        /// Virtual time, µs.
        at_us: u64,
    },
    /// A station left the information transfer state.
    #[error("a station left information transfer at {:.3} s: it is {state}", *at_us as f64 / 1e6)]
    LinkLost {
        /// The state it is in, in words.
        state: &'static str,
        /// Virtual time, µs.
        at_us: u64,
    },
    /// A station gave the link up.
    #[error("the link failed at {:.3} s: {reason}", *at_us as f64 / 1e6)]
    LinkFailed {
        /// The engine's reason.
        reason: String,
        /// Virtual time, µs.
        at_us: u64,
    },
    /// A message was delivered out of order, twice, or altered.
    #[error(
        "station {from}'s messages: delivered {octets} octets where message {expected:?} was next"
    )]
    Delivery {
        /// The sending station.
        from: usize,
        /// The message number expected next, if any was outstanding.
        expected: Option<u64>,
        /// Octets delivered.
        octets: usize,
    },
}

impl From<ExperimentError> for BuxError {
    fn from(error: ExperimentError) -> Self {
        match error {
            ExperimentError::WrongKind { found, expected } => BuxError::Kind { found, expected },
            other => BuxError::Experiment(Box::new(other)),
        }
    }
}
