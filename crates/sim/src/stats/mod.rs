//! Output analysis: per-run accumulators, Student-t quantiles, confidence
//! intervals across replications (or from batch means of one long run) and
//! MSER-5 warm-up detection.
//!
//! The reporting convention follows Bux et al. (1982), who show "all
//! simulation results ... with their 95% confidence intervals": every figure
//! this crate reports is a [`ConfidenceInterval`] carrying its half-width and
//! relative precision, never a bare mean.

mod batch_means;
mod ci;
mod mser;
mod student_t;
mod tally;

pub use batch_means::batch_means;
pub use ci::ConfidenceInterval;
pub use mser::{mser, mser5, MserCut};
pub use student_t::{normal_quantile, t_critical, t_quantile};
pub use tally::{Tally, TimeWeighted};
