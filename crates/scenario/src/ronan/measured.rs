//! Tables V, VI and VII of Ronan, Long and Walsh (the AX.25 CM-CL column):
//! the measured transfer times of 7182 octets between a Kenwood TM-D710E
//! and a TH-D72E in KISS mode, each driven by the Linux AX.25 stack.
//!
//! The transfer runs the real engines with a host and KISS TNC model
//! between each engine and the radio ([`KissPath`]): every frame crosses
//! the host (a fixed latency), the 9600 bit/s serial link and the TNC's
//! processor on its way to the radio and back, and a TNC holds its frames
//! for a while after the other station's carrier drops (squelch tail,
//! receive-to-transmit switch, DCD release). The engines behave as the
//! Linux stack does ([`StackConfig::linux`]): P only on a frame that fills
//! the window, an answer to P at once, and other I frames acknowledged
//! when T2 (3 s, started by the first unacknowledged frame) expires.
//! Above each engine runs the DTN application for real: a BPv7 bundle
//! agent (`linklab_dtn`) over the AX.25 convergence layer of the paper
//! (`linklab_ax25cl`: RFC 7242 segments with a CRC-32 each, the receiver
//! acknowledging every `ack_window` segments and each complete bundle at
//! once), the file sent as one bundle.
//!
//! The TNC's time per frame and the carrier hold are the calibrated
//! parameters, fitted once ([`calibrate`]) to the AX.25-CL column: both bit
//! rates and all windows together, `ack_window` 8, all 21 checks of Tables
//! V, VI and VII; their values live in
//! `crates/scenario/experiments/ronan-tables-5-7.toml` with the fit's
//! record. The fit's result and how the column compares with the paper:
//! docs/reproduce.md, section "Ronan et al., Tables V, VI and VII, AX.25
//! CM-CL column".

use core::time::Duration;

use linklab_channel::{Duplex, ErrorModel, SlotClock, StationConfig, TncConfig};
use linklab_sim::{ConfidenceInterval, Metric, ReplicationOutput, Runner};
use linklab_wire::control::Modulus;
use serde::Deserialize;

use super::cl::run_bundle_transfer;
use super::reference::{published_row, Published};
use super::{interval, RonanError, TRANSFER_S};
use crate::builtin;
use crate::experiment::{Experiment, ExperimentError, ExperimentKind, InvalidField};
use crate::published::load;
use crate::report::{NoProgress, Output, Progress, RunOptions, Table};
use crate::transfer::{Clock, HostConfig, KissPath, StackConfig, TransferConfig};

mod section;

use section::swaps;
pub use section::tables_5_7;

/// The `kind` of this experiment in a TOML file.
pub const KIND: &str = "ronan-measured";

/// Relative tolerance of Tables V and VII and of Table VI's per-swap
/// difference: within 10%.
const TOLERANCE: f64 = 0.10;

/// The kernel's default T1 (`AX25_DEF_T1`), which Ronan et al. had to
/// raise for windows of 4 and more (section V.A).
const DEFAULT_T1: Duration = Duration::from_secs(10);

/// One measured-transfer experiment (`kind = "ronan-measured"`): Table I's
/// radio link, the Linux AX.25 stack and a host + KISS TNC per station.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredConfig {
    /// Radio bit rates to run, bit/s.
    pub bit_rates_bps: Vec<u32>,
    /// Windows k (AX.25 `maxframe`) to run, 1-7.
    pub windows: Vec<u8>,
    /// Message length, octets (7182): the payload of the bundle.
    pub message_octets: usize,
    /// The convergence layer's `ack_window` values to run (segments per
    /// acknowledgement); the first is the one of Table VI, of the T1 study
    /// and of the calibration.
    pub ack_windows: Vec<u32>,
    /// Information field per I frame, octets (255).
    pub n1_octets: usize,
    /// KISS persistence P, 0-255 (63: p = 0.25).
    pub persistence: u8,
    /// KISS slot time, ms.
    pub slot_time_ms: f64,
    /// KISS TXDELAY, ms.
    pub txdelay_ms: f64,
    /// KISS TXTAIL, ms.
    pub txtail_ms: f64,
    /// AX.25 T1 (fixed), s.
    pub t1_s: f64,
    /// AX.25 T2, s.
    pub t2_s: f64,
    /// Host-TNC serial rate, bit/s (10 bits per octet).
    pub serial_rate_bps: u32,
    /// Host latency each way between the AX.25 stack and the serial port, ms.
    pub host_latency_ms: f64,
    /// TNC processing time per frame, ms.
    pub tnc_per_frame_ms: f64,
    /// TNC processing time per frame octet, µs.
    pub tnc_per_octet_us: f64,
    /// TNC transmit buffer, octets.
    pub tnc_tx_buffer_octets: usize,
    /// How long after the other station's carrier drops a TNC still holds
    /// its frames back (squelch tail, receive-to-transmit switch, DCD
    /// release), ms.
    pub carrier_hold_ms: f64,
    /// Replications per bit rate and window.
    pub replications: u64,
    /// Replications under `--quick`.
    pub quick_replications: u64,
}

/// One simulated row: one window at one bit rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasuredRow {
    /// Radio bit rate, bit/s.
    pub bit_rate: u32,
    /// Window k.
    pub window: u8,
    /// The convergence layer's `ack_window`.
    pub ack_window: u32,
    /// Transfer time, s (95 %): the file offered to the end of the
    /// transmission carrying the last ACK_SEGMENT ([`Clock::Offer`]).
    pub transfer: ConfidenceInterval,
    /// The same transfer as a session, s (95 %): the first SABM's key-up
    /// to the end of the UA answering the sender's DISC, the file offered
    /// as soon as the CL is up ([`Clock::Session`]).
    pub session: ConfidenceInterval,
    /// Frames the sender put on the air per transfer (mean): its
    /// DATA_SEGMENTs, one per I frame, when nothing is lost.
    pub sender_frames: f64,
    /// Frames the receiver put on the air per transfer (mean): RRs and the
    /// CL's ACK_SEGMENTs.
    pub receiver_frames: f64,
    /// Key-ups per transfer (mean).
    pub transmissions: f64,
    /// Longest wait of the sender for an acknowledgement, s (mean over
    /// replications).
    pub ack_wait_max_s: f64,
    /// T1 expiries per transfer (mean).
    pub t1_expiries: f64,
}

impl MeasuredConfig {
    /// Parses and checks an experiment file.
    pub fn from_toml(text: &str) -> Result<Self, RonanError> {
        Experiment::from_toml_as(text).map_err(|error| match error {
            ExperimentError::WrongKind { found, expected } => RonanError::Parameter {
                field: "kind",
                problem: format!("\"{found}\" is not \"{expected}\""),
            },
            other => RonanError::Experiment(Box::new(other)),
        })
    }

    /// The built-in experiment, `crates/scenario/experiments/ronan-tables-5-7.toml`.
    pub fn built_in() -> Result<Self, RonanError> {
        Self::from_toml(builtin::RONAN_TABLES_5_7)
    }

    fn validate(&self) -> Result<(), RonanError> {
        let bad = |field, problem: &str| {
            Err(RonanError::Parameter {
                field,
                problem: problem.into(),
            })
        };
        if self.bit_rates_bps.is_empty() || self.bit_rates_bps.contains(&0) {
            return bad("bit_rates_bps", "give at least one rate, none zero");
        }
        if self.windows.is_empty() || self.windows.iter().any(|k| !(1..=7).contains(k)) {
            return bad("windows", "give at least one window, each 1-7");
        }
        if self.ack_windows.is_empty() || self.ack_windows.contains(&0) {
            return bad("ack_windows", "give at least one ack_window, none zero");
        }
        if self.message_octets == 0 {
            return bad("message_octets", "must be positive");
        }
        if self.message_octets as u64 > crate::experiment::MAX_MESSAGE_OCTETS {
            return bad(
                "message_octets",
                "is above 16777216 (16 MiB: the simulator holds the message in memory)",
            );
        }
        if linklab_ax25cl::Config::new("ipn:1.0")
            .fit_frame(self.n1_octets)
            .is_err()
        {
            return bad("n1_octets", "too small for a DATA_SEGMENT (at least 7)");
        }
        if self.serial_rate_bps == 0 {
            return bad("serial_rate_bps", "must be positive");
        }
        if self.replications < 2 || self.quick_replications < 2 {
            return bad(
                "replications",
                "at least 2 (both counts) for a confidence interval",
            );
        }
        if self.replications > 1000 || self.quick_replications > 1000 {
            return bad("replications", "at most 1000 (both counts)");
        }
        for (field, value) in [
            ("slot_time_ms", self.slot_time_ms),
            ("txdelay_ms", self.txdelay_ms),
            ("txtail_ms", self.txtail_ms),
            ("t1_s", self.t1_s),
            ("t2_s", self.t2_s),
            ("host_latency_ms", self.host_latency_ms),
            ("tnc_per_frame_ms", self.tnc_per_frame_ms),
            ("tnc_per_octet_us", self.tnc_per_octet_us),
            ("carrier_hold_ms", self.carrier_hold_ms),
        ] {
            if !(value.is_finite() && (0.0..=3600e3).contains(&value)) {
                return bad(
                    field,
                    &format!("{value} is not a duration from 0 to 3600000"),
                );
            }
        }
        Ok(())
    }

    /// The simulated transfer at `bit_rate` with window `window`.
    pub fn transfer_config(&self, bit_rate: u32, window: u8) -> TransferConfig {
        let ms = |v: f64| Duration::from_secs_f64(v / 1e3);
        TransferConfig {
            bit_rate,
            station: StationConfig {
                persistence: self.persistence,
                slot_time: ms(self.slot_time_ms),
                txdelay: ms(self.txdelay_ms),
                txtail: ms(self.txtail_ms),
                slot_phase: Duration::ZERO,
            },
            slot_clock: SlotClock::FreeRunning,
            modulus: Modulus::Mod8,
            window,
            n1: self.n1_octets,
            message_octets: self.message_octets,
            duplex: Duplex::Half,
            errors: ErrorModel::Perfect,
            background: None,
            link_drop: None,
            digipeater: None,
            clock: Clock::Offer,
            stack: StackConfig {
                t2: Duration::from_secs_f64(self.t2_s),
                ..StackConfig::linux(Duration::from_secs_f64(self.t1_s))
            },
            path: Some(KissPath {
                host: HostConfig {
                    latency: ms(self.host_latency_ms),
                },
                tnc: TncConfig {
                    serial_rate: self.serial_rate_bps,
                    per_frame: ms(self.tnc_per_frame_ms),
                    per_octet: Duration::from_secs_f64(self.tnc_per_octet_us / 1e6),
                    tx_buffer_octets: self.tnc_tx_buffer_octets,
                },
                carrier_hold: ms(self.carrier_hold_ms),
            }),
        }
    }

    /// Replications per cell under `opts` (`--quick` or not).
    pub(crate) fn replications(&self, opts: &RunOptions) -> u64 {
        if opts.quick {
            self.quick_replications
        } else {
            self.replications
        }
    }

    /// Simulates every bit rate and window, advancing `progress` by one
    /// unit per transfer.
    pub fn simulate(
        &self,
        opts: &RunOptions,
        progress: &dyn Progress,
    ) -> Result<Vec<MeasuredRow>, RonanError> {
        let replications = self.replications(opts);
        let cells = self.ack_windows.len() * self.bit_rates_bps.len() * self.windows.len();
        progress.add_work(replications * cells as u64);
        let mut rows = Vec::with_capacity(cells);
        for &ack_window in &self.ack_windows {
            for &rate in &self.bit_rates_bps {
                for &window in &self.windows {
                    let config = self.transfer_config(rate, window);
                    rows.push(replicate(
                        &config,
                        ack_window,
                        replications,
                        opts,
                        progress,
                    )?);
                }
            }
        }
        Ok(rows)
    }

    /// `linklab sim`: the simulated transfer times, one row per bit rate
    /// and window.
    pub fn run(&self, opts: &RunOptions, progress: &dyn Progress) -> Result<Output, RonanError> {
        let rows = self.simulate(opts, progress)?;
        Ok(Output {
            tables: vec![Table {
                id: "ronan-measured".into(),
                title: "Simulated bundle transfer over the AX.25 CL through host and KISS TNC \
                        (Linux AX.25 stack)"
                    .into(),
                columns: [
                    "ack_window",
                    "bit_rate_bps",
                    "window",
                    "transfer_s",
                    "ci95_s",
                    "sabm_to_final_ua_s",
                    "transmissions",
                    "longest_ack_wait_s",
                    "t1_expiries",
                ]
                .map(String::from)
                .into(),
                rows: rows
                    .iter()
                    .map(|r| {
                        vec![
                            r.ack_window.to_string(),
                            r.bit_rate.to_string(),
                            r.window.to_string(),
                            format!("{:.3}", r.transfer.mean),
                            format!("{:.3}", r.transfer.half_width),
                            format!("{:.3}", r.session.mean),
                            format!("{:.2}", r.transmissions),
                            format!("{:.2}", r.ack_wait_max_s),
                            format!("{:.2}", r.t1_expiries),
                        ]
                    })
                    .collect(),
            }],
            figures: Vec::new(),
        })
    }
}

/// Runs `replications` transfers of `config`, the file as a bundle over
/// the AX.25 CL with `ack_window`, on `threads` threads.
fn replicate(
    config: &TransferConfig,
    ack_window: u32,
    replications: u64,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<MeasuredRow, RonanError> {
    let session = TransferConfig {
        clock: Clock::Session,
        ..*config
    };
    let report = Runner::new(opts.seed, replications).try_run_parallel(opts.jobs, |streams| {
        let outcome = run_bundle_transfer(config, ack_window, &streams).and_then(|o| {
            run_bundle_transfer(&session, ack_window, &streams).map(|s| (o.link, s.link))
        });
        progress.advance(1, "Ronan Tables V-VII: transfers through host and TNC");
        let (o, session) = outcome?;
        let mut out = ReplicationOutput::new();
        out.value(TRANSFER_S, o.transfer.as_secs_f64())
            .value(SESSION_S, session.transfer.as_secs_f64())
            .value(TRANSMISSIONS, o.transmissions as f64)
            .value(SENDER_FRAMES, o.sender_frames as f64)
            .value(RECEIVER_FRAMES, o.receiver_frames as f64)
            .value(ACK_WAIT_MAX_S, o.ack_wait_max.as_secs_f64())
            .value(T1_EXPIRIES, o.t1_expiries as f64);
        Ok::<_, crate::TransferError>(out)
    })?;
    let ci = |metric| interval(&report, metric, replications);
    Ok(MeasuredRow {
        bit_rate: config.bit_rate,
        window: config.window,
        ack_window,
        transfer: ci(TRANSFER_S)?,
        session: ci(SESSION_S)?,
        sender_frames: ci(SENDER_FRAMES)?.mean,
        receiver_frames: ci(RECEIVER_FRAMES)?.mean,
        transmissions: ci(TRANSMISSIONS)?.mean,
        ack_wait_max_s: ci(ACK_WAIT_MAX_S)?.mean,
        t1_expiries: ci(T1_EXPIRIES)?.mean,
    })
}

/// The same transfer timed on [`Clock::Session`], seconds.
const SESSION_S: Metric = Metric::new("session_s");
/// Frames the sender transmitted, retransmissions included.
const SENDER_FRAMES: Metric = Metric::new("sender_frames");
/// Frames the receiver transmitted.
const RECEIVER_FRAMES: Metric = Metric::new("receiver_frames");
/// Key-ups (data transmissions plus acknowledgements).
const TRANSMISSIONS: Metric = Metric::new("transmissions");
/// The longest wait for an acknowledgement, seconds.
const ACK_WAIT_MAX_S: Metric = Metric::new("ack_wait_max_s");
/// T1 expiries at the sender.
const T1_EXPIRIES: Metric = Metric::new("t1_expiries");

/// The result of [`calibrate`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// Best TNC time per frame, ms.
    pub tnc_per_frame_ms: f64,
    /// Best carrier hold, ms.
    pub carrier_hold_ms: f64,
    /// Largest relative error over the 21 checks (the objective).
    pub max_relative_error: f64,
    /// Root mean square of the relative errors over the 21 checks.
    pub rms_relative_error: f64,
}

/// The calibration grid: the values tried for each fitted parameter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grid {
    /// TNC time per frame, ms.
    pub tnc_per_frame_ms: Vec<f64>,
    /// Carrier hold, ms.
    pub carrier_hold_ms: Vec<f64>,
}

/// Relative errors of `rows` against every check of Tables V, VI and VII:
/// the transfer time of each row, and at 1200 bit/s the time beyond the
/// model per swap (Table VI), each as the checks compute it.
fn relative_errors(
    config: &MeasuredConfig,
    rows: &[MeasuredRow],
    reference: &[Published],
) -> Vec<f64> {
    let mut errors = Vec::new();
    for row in rows {
        let Some(p) = published_row(reference, row.bit_rate, row.window) else {
            continue;
        };
        if Some(&row.ack_window) != config.ack_windows.first() {
            continue;
        }
        errors.push(row.transfer.mean / p.ax25_cm_cl_s - 1.0);
        if let Some(per_cycle) = p.error_per_cycle_s {
            let ours = (row.transfer.mean - p.model_s) / f64::from(swaps(config, row.window));
            errors.push(ours / per_cycle - 1.0);
        }
    }
    errors
}

/// The calibration: a grid search over the TNC's time per frame and the
/// carrier hold, every other parameter as in `base` and the CL's
/// `ack_window` the first of `base.ack_windows`, minimising the largest
/// relative error over all 21 checks of Tables V, VI and VII together
/// (both bit rates, all windows; common random numbers: every grid point
/// sees the same seeds).
pub fn calibrate(
    base: &MeasuredConfig,
    grid: &Grid,
    replications: u64,
    seed: u64,
) -> Result<Fit, RonanError> {
    let reference = load::<Published>()?;
    let opts = RunOptions {
        seed,
        ..RunOptions::default()
    };
    let mut best: Option<Fit> = None;
    for &f in &grid.tnc_per_frame_ms {
        for &h in &grid.carrier_hold_ms {
            let config = MeasuredConfig {
                tnc_per_frame_ms: f,
                carrier_hold_ms: h,
                ack_windows: base.ack_windows.iter().take(1).copied().collect(),
                replications,
                ..base.clone()
            };
            let rows = config.simulate(&opts, &NoProgress)?;
            let errors = relative_errors(&config, &rows, &reference);
            let squares: f64 = errors.iter().map(|e| e * e).sum();
            let fit = Fit {
                tnc_per_frame_ms: f,
                carrier_hold_ms: h,
                max_relative_error: errors.iter().fold(0.0, |m: f64, e| m.max(e.abs())),
                rms_relative_error: (squares / errors.len().max(1) as f64).sqrt(),
            };
            if best.is_none_or(|b| fit.max_relative_error < b.max_relative_error) {
                best = Some(fit);
            }
        }
    }
    best.ok_or(RonanError::Parameter {
        field: "grid",
        problem: "the calibration grid is empty".into(),
    })
}

impl ExperimentKind for MeasuredConfig {
    type Point = ();
    type Result = Output;
    type Error = RonanError;

    fn validate(&self) -> Result<(), InvalidField> {
        MeasuredConfig::validate(self).map_err(|e| match e {
            RonanError::Parameter { field, problem } => InvalidField::new(field, problem),
            other => InvalidField::new("kind", other.to_string()),
        })
    }

    /// One point: this kind's run is not cut into parts.
    fn points(&self, _: &RunOptions) -> Result<Vec<()>, RonanError> {
        Ok(vec![()])
    }

    fn run_point(
        &self,
        opts: &RunOptions,
        (): &(),
        progress: &dyn Progress,
    ) -> Result<Output, RonanError> {
        MeasuredConfig::run(self, opts, progress)
    }

    fn assemble(
        &self,
        _: &RunOptions,
        _: &[()],
        results: Vec<Output>,
    ) -> Result<Output, RonanError> {
        Ok(results.into_iter().next().unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_experiment_parses() {
        let c = MeasuredConfig::built_in().unwrap();
        assert_eq!(c.windows, vec![1, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn bad_files_are_refused_with_the_field_named() {
        let unknown = builtin::RONAN_TABLES_5_7.replace("t1_s", "t1_seconds");
        let err = MeasuredConfig::from_toml(&unknown).unwrap_err();
        assert!(err.to_string().contains("t1_seconds"), "{err}");
        let window =
            builtin::RONAN_TABLES_5_7.replace("windows = [1, 2, 3, 4, 5, 6, 7]", "windows = [8]");
        let err = MeasuredConfig::from_toml(&window).unwrap_err();
        assert!(err.to_string().contains("windows"), "{err}");
        let negative =
            builtin::RONAN_TABLES_5_7.replace("host_latency_ms = ", "host_latency_ms = -");
        let err = MeasuredConfig::from_toml(&negative).unwrap_err();
        assert!(err.to_string().contains("host_latency_ms"), "{err}");
    }

    #[test]
    fn swaps_are_windows_of_data() {
        let c = MeasuredConfig::built_in().unwrap();
        let counted: Vec<u32> = (1..=7).map(|k| swaps(&c, k)).collect();
        assert_eq!(counted, [29, 15, 10, 8, 6, 5, 5]);
    }
}
