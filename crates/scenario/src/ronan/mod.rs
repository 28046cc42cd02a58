//! Ronan, Long and Walsh, "More experiments with DTN over AX.25 networks":
//! the reproductions of `linklab reproduce` for [`Paper::RonanAx25`].
//!
//! - `tables_2_3`: the model of section III.B (Tables II and III), in
//!   closed form and as simulated with the real engine ([`compare`]).
//! - [`measured`]: the measured AX.25 CM-CL transfers (Tables V, VI and
//!   VII) with a host and KISS TNC model between engine and radio.
//! - [`ack_window`]: the CL's `ack_window` on that link, steady and across
//!   a link drop (section V.B's design claim).
//! - [`repeater`]: the CL on that link through a single digipeater.
//! - [`experiment`]: the `ronan-transfer` experiment kind (section III.B
//!   as a scenario file); `ronan-measured` is [`MeasuredConfig`].
//!
//! # Tables II and III: the simulation against the model
//! Two things separate the simulation from the published model, and both
//! are measured here rather than argued:
//!
//! - **Channel access.** The model charges `p × T_slot` (5 ms with Table
//!   I) for each access to the channel. A KISS TNC with P = 63 waits for
//!   its next slot tick after the carrier drops and then draws against
//!   q = (P + 1)/256 = 0.25 in each slot, so it loses on average
//!   (1 − q)/q = 3 whole slots (60 ms) plus the part of a slot to its first
//!   tick. [`Comparison::access_wait`] is that wait as simulated
//!   (idle channel time over key-ups).
//! - **The short last frame.** The model counts every frame as N1 = 255
//!   octets; 7182 octets leave 42 for the 29th.
//!
//! [`Comparison::corrected_s`] is the model with exactly these two inputs
//! changed: its CSMA term set to the simulated mean access wait, and the
//! last frame's air time at its real length.

use linklab_models::airtime::frame_airtime;
use linklab_models::ronan::Params;
use linklab_sim::{ConfidenceInterval, Metric, ReplicationOutput, Report, Runner};
use std::num::NonZeroUsize;

use crate::report::{NoProgress, Progress};
use crate::transfer::{run_transfer, TransferConfig, TransferError};

#[cfg(doc)]
use crate::report::Paper;

pub mod ack_window;
mod cl;
pub mod experiment;
pub mod measured;
pub mod reference;
pub mod repeater;
mod tables_2_3;
pub mod tcpip;

pub use cl::{run_bundle_transfer, BundleOutcome};
pub use experiment::RonanTransfer;
pub use measured::{tables_5_7, MeasuredConfig, MeasuredRow};
pub use tables_2_3::tables_2_3;
pub use tcpip::{tables_5_7_tcpip, TcpipError, TcpipRow};

/// Why a Ronan reproduction or experiment could not run.
#[derive(Debug, thiserror::Error)]
pub enum RonanError {
    /// The compiled-in published numbers did not parse.
    #[error(transparent)]
    Reference(#[from] crate::published::PublishedError),
    /// A transfer could not be simulated.
    #[error(transparent)]
    Transfer(#[from] TransferError),
    /// An experiment file is not valid TOML for this kind.
    #[error("experiment file: {0}")]
    Experiment(#[from] Box<crate::experiment::ExperimentError>),
    /// An experiment parameter is out of range.
    #[error("experiment parameter {field}: {problem}")]
    Parameter {
        /// The TOML key.
        field: &'static str,
        /// What is wrong with it.
        problem: String,
    },
}

/// The transfer time of one replication, seconds.
const TRANSFER_S: Metric = Metric::new("transfer_s");
/// The mean channel-access wait of one replication, seconds.
const WAIT_S: Metric = Metric::new("wait_s");
/// I frames the sender transmitted.
const I_FRAMES: Metric = Metric::new("i_frames");
/// Frames the receiver transmitted (acknowledgements).
const ACKS: Metric = Metric::new("acks");

/// The 95 % interval of `metric` over a report of `replications` runs.
fn interval(
    report: &Report,
    metric: Metric,
    replications: u64,
) -> Result<ConfidenceInterval, TransferError> {
    report
        .ci(metric)
        .ok_or(TransferError::TooFewReplications { replications })
}

/// The distinct bit rates of some rows, lowest first.
fn bit_rates(rates: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut rates: Vec<u32> = rates.collect();
    rates.sort_unstable();
    rates.dedup();
    rates
}

/// One row of the comparison: one window at one bit rate.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Comparison {
    /// Window k.
    pub window: u8,
    /// Bit rate, bit/s.
    pub bit_rate: u32,
    /// The published model's `T_message` (formula as printed), s.
    pub model_s: f64,
    /// Simulated transfer time over the replications, s (95 %).
    pub simulated: ConfidenceInterval,
    /// Simulated mean channel-access wait per transmission, s (95 %).
    pub access_wait: ConfidenceInterval,
    /// The model with the simulated access wait in place of `p × T_slot`
    /// and the last frame at its real length, s.
    pub corrected_s: f64,
    /// I frames the sender transmitted per transfer (mean).
    pub i_frames: f64,
    /// Acknowledgements the receiver transmitted per transfer (mean).
    pub acks: f64,
}

impl Comparison {
    /// (simulated mean − model) / model, in percent.
    pub fn gap_percent(&self) -> f64 {
        100.0 * (self.simulated.mean - self.model_s) / self.model_s
    }

    /// (simulated mean − corrected model) / corrected model, in percent.
    pub fn corrected_gap_percent(&self) -> f64 {
        100.0 * (self.simulated.mean - self.corrected_s) / self.corrected_s
    }
}

/// Runs `replications` transfers of `config` (replication r uses
/// `Streams::new(seed).replication(r)`) and compares them with the model
/// for the same bit rate, window and message; the replications share
/// `threads` threads.
pub fn compare(
    config: &TransferConfig,
    replications: u64,
    seed: u64,
    threads: NonZeroUsize,
) -> Result<Comparison, TransferError> {
    compare_with_progress(config, replications, seed, threads, &NoProgress)
}

/// [`compare`], advancing `progress` by one unit per replication.
pub fn compare_with_progress(
    config: &TransferConfig,
    replications: u64,
    seed: u64,
    threads: NonZeroUsize,
    progress: &dyn Progress,
) -> Result<Comparison, TransferError> {
    let report = Runner::new(seed, replications).try_run_parallel(threads, |streams| {
        let outcome = run_transfer(config, &streams);
        progress.advance(1, "Ronan Tables II-III: simulated transfers");
        let o = outcome?;
        let mut out = ReplicationOutput::new();
        out.value(TRANSFER_S, o.transfer.as_secs_f64())
            .value(WAIT_S, o.mean_access_wait().as_secs_f64())
            .value(I_FRAMES, o.sender_frames as f64)
            .value(ACKS, o.receiver_frames as f64);
        Ok::<_, TransferError>(out)
    })?;
    let ci = |metric| interval(&report, metric, replications);
    let simulated = ci(TRANSFER_S)?;
    let access_wait = ci(WAIT_S)?;
    let wait = access_wait.mean;
    let station = config.station;
    let slot_s = station.slot_time.as_secs_f64();
    let params = Params {
        bitrate_bps: f64::from(config.bit_rate),
        size_octets: config.message_octets as u64,
        n1: u32::try_from(config.n1).unwrap_or(u32::MAX),
        txdelay_s: station.txdelay.as_secs_f64(),
        txtail_s: station.txtail.as_secs_f64(),
        slot_s,
        persistence: station.transmit_probability(),
        ..Params::default()
    };
    let window = u32::from(config.window);
    let model_s = params.transfer(window).transfer_s;
    let measured = Params {
        persistence: if slot_s > 0.0 { wait / slot_s } else { 0.0 },
        ..params
    };
    let last = match config.message_octets % config.n1.max(1) {
        0 => config.n1,
        short => short,
    };
    let short_last_frame =
        params.t_frame() - frame_airtime(last as f64, f64::from(config.bit_rate));
    Ok(Comparison {
        window: config.window,
        bit_rate: config.bit_rate,
        model_s,
        simulated,
        access_wait,
        corrected_s: measured.transfer(window).transfer_s - short_last_frame,
        i_frames: ci(I_FRAMES)?.mean,
        acks: ci(ACKS)?.mean,
    })
}
