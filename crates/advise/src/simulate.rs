//! Settings on a link, simulated: the real AX.25 engine at both ends in
//! virtual time, replicated with independent seeds. KISS ends run the
//! transfer testbed of Ronan et al.'s reproduction
//! (`linklab_scenario::transfer`) with each stack as it runs
//! ([`Stack`], [`stack_config`]): linklab and the Linux kernel as a host
//! stack behind a serial link and a KISS TNC at each end, Dire Wolf's
//! engine on its own modem; firmware TNCs run Zieliński's testbed
//! (`linklab_scenario::zielinski::testbed`).

use core::num::NonZeroUsize;
use core::time::Duration;

use serde::Serialize;

use linklab_channel::profile::{RecipientAck, TncProfile};
use linklab_channel::{Duplex as RadioDuplex, SlotClock, StationConfig, TncConfig};
use linklab_core::Streams;
use linklab_link::{AckPolicy, Config, WindowLimit};
use linklab_scenario::bux::simulate::{
    simulate as bux_simulate, LinkRun, MessageLength, Procedure as BuxProcedure, Traffic,
};
use linklab_scenario::bux::BuxError;
use linklab_scenario::ronan::run_bundle_transfer;
use linklab_scenario::transfer::{
    run_transfer, Background, Clock, HostConfig, KissPath, StackConfig, TransferConfig,
    TransferError,
};
use linklab_scenario::zielinski::station::LinkSetup;
use linklab_scenario::zielinski::testbed::{self, TransferSetup};
use linklab_sim::{try_map_ordered, ConfidenceInterval};
use linklab_wire::control::Modulus;

use crate::link::{Duplex, Ends, Link};
use crate::settings::{Ack, Procedure, Settings, Stack};

/// Information octets of the other stations' frames.
pub const BACKGROUND_FRAME_OCTETS: usize = 128;

/// Confidence level of every interval `advise` reports.
pub const LEVEL: f64 = 0.95;

/// Throughput of one set of settings over its replications.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Simulated {
    /// Mean throughput of the runs that completed, bit/s (message bits
    /// over the transfer time); 0 when none did.
    pub throughput_bps: f64,
    /// Half-width of its 95% confidence interval, bit/s.
    pub half_width_bps: f64,
    /// Mean transfer time, s.
    pub transfer_s: f64,
    /// Replications.
    pub replications: u64,
    /// Runs whose link failed (N2 T1 expiries) and cut the transfer.
    pub cut: u64,
}

impl Simulated {
    /// Lower end of the interval.
    pub fn lower(&self) -> f64 {
        self.throughput_bps - self.half_width_bps
    }

    /// Upper end of the interval.
    pub fn upper(&self) -> f64 {
        self.throughput_bps + self.half_width_bps
    }

    /// What the search maximises: the throughput when every run
    /// completed; below any such, fewer cuts first.
    pub fn score(&self) -> f64 {
        if self.cut > 0 {
            -(self.cut as f64)
        } else {
            self.throughput_bps
        }
    }
}

/// A simulation that could not run (an engine refusing its
/// configuration, a run that stalled): a defect to report, not advice.
#[derive(Debug, thiserror::Error)]
#[error("simulating {settings}: {reason}")]
pub struct SimulationError {
    /// The settings simulated.
    pub settings: String,
    /// What failed.
    pub reason: String,
}

/// Simulates each of `candidates` on `link` with `replications` runs
/// each, all runs spread over `threads`. Replication r of every candidate
/// uses the same streams (common random numbers), from `seed`.
pub fn simulate(
    link: &Link,
    candidates: &[Settings],
    seed: u64,
    replications: u64,
    threads: NonZeroUsize,
) -> Result<Vec<Simulated>, SimulationError> {
    let runs: Vec<(usize, u64)> = (0..candidates.len())
        .flat_map(|c| (0..replications).map(move |r| (c, r)))
        .collect();
    let streams = Streams::new(seed);
    let times = try_map_ordered(threads, &runs, |_, &(c, r)| {
        transfer_time(link, &candidates[c], &streams.replication(r)).map_err(|reason| {
            SimulationError {
                settings: candidates[c].describe(link),
                reason,
            }
        })
    })?;
    let bits = 8.0 * link.workload.message_octets as f64 * directions(link);
    Ok(times
        .chunks(replications.max(1) as usize)
        .map(|runs| {
            let done: Vec<f64> = runs.iter().flatten().copied().collect();
            let throughput: Vec<f64> = done.iter().map(|s| bits / s).collect();
            let ci = ConfidenceInterval::from_samples(&throughput, LEVEL);
            Simulated {
                throughput_bps: ci.map_or(throughput.first().copied().unwrap_or(0.0), |c| c.mean),
                half_width_bps: ci.map_or(0.0, |c| c.half_width),
                transfer_s: done.iter().sum::<f64>() / done.len().max(1) as f64,
                replications: runs.len() as u64,
                cut: (runs.len() - done.len()) as u64,
            }
        })
        .collect())
}

/// One run's transfer time, s; `None` when the link failed and cut it.
fn transfer_time(link: &Link, s: &Settings, streams: &Streams) -> Result<Option<f64>, String> {
    let c = &link.channel;
    let ms = |v: f64| Duration::from_secs_f64(v / 1e3);
    let station = StationConfig {
        persistence: s.persistence,
        slot_time: Duration::from_millis(u64::from(s.slot_ms)),
        txdelay: ms(c.txdelay_ms),
        txtail: ms(c.txtail_ms),
        slot_phase: Duration::ZERO,
    };
    let errors = c.error_model();
    let t1 = Duration::from_millis(u64::from(s.t1_ms));
    match &link.ends {
        Ends::Kiss(k) => {
            let config = TransferConfig {
                bit_rate: c.bit_rate,
                station,
                slot_clock: SlotClock::FreeRunning,
                modulus: if s.window > 7 {
                    Modulus::Mod128
                } else {
                    Modulus::Mod8
                },
                window: s.window,
                n1: s.n1,
                message_octets: link.workload.message_octets,
                duplex: match c.duplex {
                    Duplex::Half => RadioDuplex::Half,
                    Duplex::Full => RadioDuplex::Full,
                },
                errors,
                background: (c.stations > 2).then(|| Background {
                    stations: u8::try_from(c.stations - 2).unwrap_or(u8::MAX),
                    load: c.load,
                    frame_octets: BACKGROUND_FRAME_OCTETS,
                    station: StationConfig {
                        persistence: 63,
                        slot_time: Duration::from_millis(100),
                        ..station
                    },
                }),
                link_drop: None,
                digipeater: None,
                clock: Clock::Offer,
                stack: stack_config(s),
                path: (s.stack != Stack::DireWolf).then_some(KissPath {
                    host: HostConfig {
                        latency: ms(k.host_latency_ms),
                    },
                    tnc: TncConfig {
                        serial_rate: s.serial_bps,
                        per_frame: ms(k.tnc_per_frame_ms),
                        per_octet: Duration::from_secs_f64(k.tnc_per_octet_us / 1e6),
                        tx_buffer_octets: k.tnc_buffer_octets,
                    },
                    carrier_hold: ms(k.carrier_hold_ms),
                }),
            };
            let run = if link.workload.bundle {
                run_bundle_transfer(&config, s.ack_window, streams).map(|o| o.link)
            } else {
                run_transfer(&config, streams)
            };
            match run {
                Ok(o) => Ok(Some(o.transfer.as_secs_f64())),
                Err(TransferError::LinkFailed { .. }) => Ok(None),
                // Not done in a simulated day (a frame longer on the air
                // than T1 at a very low bit rate): these settings do not
                // carry the message, a cut transfer too.
                Err(TransferError::Unfinished { .. }) => Ok(None),
                // A bundle whose convergence-layer session never completes
                // (its link reset under it) did not arrive: a failure of
                // these settings, counted as a cut transfer.
                Err(TransferError::Stalled { .. }) if link.workload.bundle => Ok(None),
                Err(e) => Err(e.to_string()),
            }
        }
        Ends::Line { t_p_ms } => line_time(link, s, *t_p_ms, streams),
        Ends::Tnc { .. } => {
            let Ok(Some((sender, recipient))) = link.profiles() else {
                return Err("unknown TNC profile".into());
            };
            let setup = TransferSetup {
                sender: with_ack(sender, s.ack),
                recipient: with_ack(recipient, s.ack),
                radio_bps: c.bit_rate,
                link: LinkSetup {
                    window: s.window,
                    n1: s.n1,
                    serial_bps: s.serial_bps,
                    t1,
                },
                file_octets: link.workload.message_octets,
                station,
                errors,
            };
            testbed::run_transfer(&setup, streams)
                .map(|r| Some(r.duration.as_secs_f64()))
                .map_err(|e| e.to_string())
        }
    }
}

/// How `s.stack` runs the settings' T1 and acknowledgement (KISS ends).
pub fn stack_config(s: &Settings) -> StackConfig {
    let t1 = Duration::from_millis(u64::from(s.t1_ms));
    let t2 = |t2_ms: u32| Duration::from_millis(u64::from(t2_ms));
    match (s.stack, s.ack) {
        // `--poll-last`, the receiver's default policy and T2 (1 s), or
        // `--ack-policy t2 --t2-ms T2`.
        (Stack::Linklab, Ack::AtOnce) => {
            StackConfig::linklab(t1, Config::default().t2, AckPolicy::WindowOrT2, true)
        }
        (Stack::Linklab, Ack::AfterT2 { t2_ms }) => {
            StackConfig::linklab(t1, t2(t2_ms), AckPolicy::AfterT2, false)
        }
        // The kernel adapts T1 (its RTT from T1 / 2).
        (Stack::LinuxKernel, ack) => {
            let linux = StackConfig::linux(t1);
            StackConfig {
                t1_adaptive: true,
                t2: match ack {
                    Ack::AtOnce => linux.t2,
                    Ack::AfterT2 { t2_ms } => t2(t2_ms),
                },
                poll_last: ack == Ack::AtOnce,
                ..linux
            }
        }
        // Dire Wolf has no T2: it acknowledges when it has the channel.
        (Stack::DireWolf, _) => StackConfig::direwolf(t1),
    }
}

/// Directions that carry the message: both in two-way flow.
fn directions(link: &Link) -> f64 {
    if link.workload.both_ways {
        2.0
    } else {
        1.0
    }
}

/// On a line, the time the saturated link takes to carry the message
/// (each way, in two-way flow) at the throughput one simulated run of Bux
/// et al.'s set-up measures: both stations always have information (or
/// the secondary none in one-way flow), measured for ten times the
/// message's own transmission time after the link is set up.
fn line_time(
    link: &Link,
    s: &Settings,
    t_p_ms: f64,
    streams: &Streams,
) -> Result<Option<f64>, String> {
    let c = &link.channel;
    let bits = 8.0 * link.workload.message_octets as f64;
    let measured = Duration::from_secs_f64((10.0 * bits / f64::from(c.bit_rate)).max(1.0));
    let sending = Traffic::Saturated;
    let run = LinkRun {
        procedure: match s.procedure {
            Procedure::Abm => BuxProcedure::Abm,
            Procedure::Nrm => BuxProcedure::Nrm,
        },
        modulus: if s.window > 7 {
            Modulus::Mod128
        } else {
            Modulus::Mod8
        },
        bit_rate_bps: c.bit_rate,
        t_p: Duration::from_secs_f64(t_p_ms / 1e3),
        p_bit: c.ber,
        length: MessageLength::Constant {
            bits: u32::try_from(8 * s.n1).unwrap_or(u32::MAX),
        },
        traffic: [
            sending,
            if link.workload.both_ways {
                sending
            } else {
                Traffic::Silent
            },
        ],
        t1: Duration::from_millis(u64::from(s.t1_ms)),
        measured,
        slices: 1,
        window_limit: WindowLimit::Withhold,
    };
    // A link reset or given up (T1 too short for the round trip, N2
    // expiries) cuts the transfer; anything else is a defect.
    let m = match bux_simulate(&run, streams) {
        Ok(m) => m,
        Err(BuxError::LinkLost { .. } | BuxError::LinkFailed { .. }) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let delivered: u64 = m.directions.iter().map(|d| d.delivered).sum();
    if delivered == 0 {
        return Ok(None);
    }
    let rate = delivered as f64 * 8.0 * s.n1 as f64 / measured.as_secs_f64();
    Ok(Some(bits * directions(link) / rate))
}

/// A firmware TNC's profile with its acknowledgement set as `ack` says:
/// at once when the sender's carrier drops, or T2 after the last I frame
/// (every firmware has a T2 or RESPTIME command). Whether the firmware
/// polls on its last frame is its own and is kept.
fn with_ack(mut profile: TncProfile, ack: Ack) -> TncProfile {
    profile.firmware.policy.recipient_ack = match ack {
        Ack::AtOnce => RecipientAck::OnChannelClear,
        Ack::AfterT2 { t2_ms } => RecipientAck::AfterT2 {
            t2: Duration::from_millis(u64::from(t2_ms)),
        },
    };
    profile
}
