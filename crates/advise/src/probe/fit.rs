//! From the probe's samples to a link `advise` can take: the hidden
//! values fitted on the virtual replica ([`super::replica`]), the loss by
//! maximum likelihood, the peer's acknowledgement delay by difference.
//!
//! # TXDELAY and the TNC's time per frame
//! Every round trip contains two key-ups (the window's and the
//! acknowledgement's) and four passes through a TNC processor, so a
//! single kind of window cannot tell the two apart. Windows of several
//! of the smallest frames can: their frames queue behind the processor,
//! and the round trip grows with each frame by the processing time when
//! that is longer than a frame's air time, by the air time otherwise.
//! The fit runs the probe's own plan on the replica for a grid of
//! (TXDELAY, time per frame), first coarse, then fine around the best,
//! and keeps the pair whose median round trips come closest to the
//! measured medians (least squares of the relative differences). When
//! the time per frame is below the smallest frame's air time the
//! windows no longer tell it apart from TXDELAY, and the fit says so
//! ([`Fit::per_frame_resolved`]).
//!
//! # Loss
//! Frames of the probe are judged by the bit-error process bit by bit,
//! so a frame of b line bits survives with probability (1 − BER)^b. Each
//! acknowledged I frame survived; the first unacknowledged one of a
//! window was lost (those after it may have been discarded as out of
//! sequence, and count as neither); an acknowledgement answered without
//! an enquiry survived, one found out by an enquiry was lost. The BER is
//! the one that makes these outcomes most likely.

use core::time::Duration;
use std::collections::BTreeMap;

use linklab_channel::airtime::hdlc_bits;
use linklab_channel::{StationConfig, TncConfig};
use linklab_core::Streams;
use linklab_wire::ax25::{Address, AddressField, CommandResponse, Frame, Pid};
use linklab_wire::control::{Modulus, Supervisory};
use serde::{Deserialize, Serialize};

use super::prober::{Exchange, ProbeConfig, Sample};
use super::replica::{run, Replica};

/// What the probe knows or assumes about the link (the rest is fitted).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Known {
    /// Radio bit rate, bit/s.
    pub bit_rate: u32,
    /// Serial rate between each host and its TNC, bit/s.
    pub serial_bps: u32,
    /// The probe's station: the persistence, slot time and TXTAIL it
    /// sends its TNC (TXDELAY is not sent: it is what is measured).
    pub local: StationConfig,
    /// The peer's station's persistence, slot time and TXTAIL.
    pub peer: StationConfig,
    /// TNC processing per octet.
    pub per_octet: Duration,
    /// TNC transmit buffer, octets.
    pub buffer_octets: usize,
    /// Carrier hold of each TNC.
    pub carrier_hold: Duration,
    /// The peer host's delay between its stack and its serial port.
    pub peer_latency: Duration,
    /// The peer's window k (it acknowledges a full window at once, before
    /// the probe's transmission ends).
    pub peer_window: u8,
}

/// One kind of window: the measured and the fitted median round trip.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Residual {
    /// The window.
    pub exchange: Exchange,
    /// Round trips measured (without loss).
    pub measured: usize,
    /// Median measured round trip, ms.
    pub measured_ms: f64,
    /// Median round trip on the fitted replica, ms.
    pub fitted_ms: f64,
}

/// What the probe found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fit {
    /// TXDELAY of the stations, ms.
    pub txdelay_ms: f64,
    /// TNC processing per frame, ms.
    pub tnc_per_frame_ms: f64,
    /// Whether the windows of small frames resolved the time per frame
    /// (it exceeds the smallest frame's air time); if not, TXDELAY and
    /// the time per frame share what was measured.
    pub per_frame_resolved: bool,
    /// Independent bit-error probability (maximum likelihood).
    pub ber: f64,
    /// Its 95% interval: lower end.
    pub ber_low: f64,
    /// Its 95% interval: upper end.
    pub ber_high: f64,
    /// How much longer the peer took to acknowledge a frame without P
    /// than with it: its T2 or equivalent, ms; `None` if not measured.
    pub peer_ack_delay_ms: Option<f64>,
    /// Root mean square of the relative differences of the medians.
    pub rms_relative_error: f64,
    /// Each kind of window.
    pub residuals: Vec<Residual>,
    /// I frames sent, and those found lost.
    pub frames_sent: u64,
    /// I frames found lost (the first unacknowledged of each window).
    pub frames_lost: u64,
    /// Acknowledgements found lost.
    pub acks_lost: u64,
}

/// TXDELAY values of the coarse grid, ms.
const COARSE_TXDELAY: (f64, f64, f64) = (0.0, 1000.0, 20.0);
/// Per-frame times of the coarse grid, ms.
const COARSE_PER_FRAME: (f64, f64, f64) = (0.0, 400.0, 10.0);
/// Replications of each candidate in the fine grid.
const FINE_REPLICATIONS: u64 = 3;

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
}

/// Median round trip, ms, of each polled kind of window.
fn medians(samples: &[Sample]) -> BTreeMap<Exchange, (usize, f64)> {
    let mut by: BTreeMap<Exchange, Vec<f64>> = BTreeMap::new();
    for s in samples {
        if let Some(rt) = s.round_trip {
            by.entry(s.exchange)
                .or_default()
                .push(rt.as_secs_f64() * 1e3);
        }
    }
    by.into_iter()
        .filter_map(|(e, mut v)| median(&mut v).map(|m| (e, (v.len(), m))))
        .collect()
}

fn replica(known: &Known, txdelay_ms: f64, per_frame_ms: f64) -> Replica {
    let d = Duration::from_secs_f64(txdelay_ms.max(0.0) / 1e3);
    Replica {
        bit_rate: known.bit_rate,
        local: StationConfig {
            txdelay: d,
            ..known.local
        },
        peer: StationConfig {
            txdelay: d,
            ..known.peer
        },
        tnc: TncConfig {
            serial_rate: known.serial_bps,
            per_frame: Duration::from_secs_f64(per_frame_ms.max(0.0) / 1e3),
            per_octet: known.per_octet,
            tx_buffer_octets: known.buffer_octets,
        },
        carrier_hold: known.carrier_hold,
        peer_latency: known.peer_latency,
        peer_t2: Duration::from_secs(1),
        peer_window: known.peer_window,
        ber: 0.0,
    }
}

/// The polled windows of `config`'s plan, each once per kind.
fn polled_plan(config: &ProbeConfig, kinds: &BTreeMap<Exchange, (usize, f64)>) -> ProbeConfig {
    ProbeConfig {
        plan: kinds.keys().copied().collect(),
        ..config.clone()
    }
}

/// Sum of squared relative differences between the replica's and the
/// measured medians, and the replica's medians.
fn cost(
    known: &Known,
    plan: &ProbeConfig,
    measured: &BTreeMap<Exchange, (usize, f64)>,
    txdelay_ms: f64,
    per_frame_ms: f64,
    replications: u64,
) -> (f64, BTreeMap<Exchange, (usize, f64)>) {
    let replica = replica(known, txdelay_ms, per_frame_ms);
    let streams = Streams::new(1);
    let mut samples = Vec::new();
    for r in 0..replications {
        match run(&replica, plan, &streams.replication(r)) {
            Ok(s) => samples.extend(s),
            Err(_) => return (f64::INFINITY, BTreeMap::new()),
        }
    }
    let fitted = medians(&samples);
    let sum = measured
        .iter()
        .map(|(e, (_, m))| match fitted.get(e) {
            Some((_, f)) => ((f - m) / m).powi(2),
            None => f64::INFINITY,
        })
        .sum();
    (sum, fitted)
}

/// Line bits of the probe's I frame of `octets` and of the peer's RR.
fn frame_bits(local: Address, remote: Address, octets: usize) -> (u64, u64) {
    let cmd = AddressField::new(remote, local, &[], CommandResponse::Command).expect("no digis");
    let rsp = AddressField::new(local, remote, &[], CommandResponse::Response).expect("no digis");
    let i = Frame::i(
        cmd,
        Modulus::Mod8,
        0,
        0,
        true,
        Pid::NoLayer3,
        vec![0; octets],
    )
    .expect("a valid I frame");
    let rr = Frame::s(rsp, Modulus::Mod8, Supervisory::Rr, 0, true).expect("a valid RR");
    (hdlc_bits(&i.encode()), hdlc_bits(&rr.encode()))
}

/// The bit-error probability that makes the samples' losses most
/// likely, and its 95% likelihood-ratio interval (the BERs whose log
/// likelihood is within 1.92 of the maximum).
fn ber(config: &ProbeConfig, samples: &[Sample]) -> (f64, f64, f64) {
    // (bits, survived) counts.
    let mut outcomes: BTreeMap<(u64, bool), u64> = BTreeMap::new();
    for s in samples {
        let (bits_i, bits_rr) = frame_bits(config.local, config.remote, s.exchange.octets);
        *outcomes.entry((bits_i, true)).or_default() += u64::from(s.frames_through);
        if s.frames_lost > 0 {
            *outcomes.entry((bits_i, false)).or_default() += 1;
        }
        if s.ack_lost {
            *outcomes.entry((bits_rr, false)).or_default() += 1;
        } else if s.round_trip.is_some() {
            *outcomes.entry((bits_rr, true)).or_default() += 1;
        }
    }
    let log_likelihood = |ber: f64| -> f64 {
        outcomes
            .iter()
            .map(|(&(bits, survived), &n)| {
                let keep = bits as f64 * (-ber).ln_1p();
                n as f64
                    * if survived {
                        keep
                    } else {
                        (-keep.exp_m1()).max(f64::MIN_POSITIVE).ln()
                    }
            })
            .sum()
    };
    // The bound where the log likelihood falls 1.92 below `top`, between
    // `inside` (above it) and `outside` (below), by bisection on log10.
    let bound = |top: f64, mut inside: f64, mut outside: f64| {
        for _ in 0..60 {
            let mid = (inside + outside) / 2.0;
            if log_likelihood(10f64.powf(mid)) >= top - 1.92 {
                inside = mid;
            } else {
                outside = mid;
            }
        }
        10f64.powf((inside + outside) / 2.0)
    };
    if outcomes.keys().all(|(_, survived)| *survived) {
        // No loss: the estimate is 0, the upper bound where the
        // likelihood of seeing none falls to exp(-1.92).
        return (0.0, 0.0, bound(0.0, -12.0, -1.0));
    }
    // Golden-section search on log10(BER) from 1e-9 to 1e-2.
    let (mut a, mut b) = (-9.0f64, -2.0f64);
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..100 {
        let c = b - g * (b - a);
        let d = a + g * (b - a);
        if log_likelihood(10f64.powf(c)) > log_likelihood(10f64.powf(d)) {
            b = d;
        } else {
            a = c;
        }
    }
    let best = (a + b) / 2.0;
    let top = log_likelihood(10f64.powf(best));
    (
        10f64.powf(best),
        bound(top, best, -12.0),
        bound(top, best, -1.0),
    )
}

/// Fits the hidden values to the samples of `config`'s plan.
pub fn fit(known: &Known, config: &ProbeConfig, samples: &[Sample]) -> Result<Fit, String> {
    let all = medians(samples);
    let measured: BTreeMap<Exchange, (usize, f64)> = all
        .iter()
        .filter(|(e, _)| e.poll)
        .map(|(e, v)| (*e, *v))
        .collect();
    if measured.len() < 2 {
        return Err(format!(
            "{} kinds of window got through without loss: at least 2 are needed to fit",
            measured.len()
        ));
    }
    let plan = polled_plan(config, &measured);
    let grid = |(lo, hi, step): (f64, f64, f64)| {
        let n = ((hi - lo) / step).round() as usize;
        (0..=n).map(move |i| lo + step * i as f64)
    };
    let mut best = (f64::INFINITY, 0.0, 0.0);
    for d in grid(COARSE_TXDELAY) {
        for f in grid(COARSE_PER_FRAME) {
            let (c, _) = cost(known, &plan, &measured, d, f, 1);
            if c < best.0 {
                best = (c, d, f);
            }
        }
    }
    let (_, d0, f0) = best;
    let mut best = (f64::INFINITY, d0, f0, BTreeMap::new());
    for d in grid((d0 - 20.0, d0 + 20.0, 2.0)) {
        for f in grid((f0 - 10.0, f0 + 10.0, 1.0)) {
            if d < 0.0 || f < 0.0 {
                continue;
            }
            let (c, fitted) = cost(known, &plan, &measured, d, f, FINE_REPLICATIONS);
            if c < best.0 {
                best = (c, d, f, fitted);
            }
        }
    }
    let (sum, txdelay_ms, tnc_per_frame_ms, fitted) = best;
    let residuals: Vec<Residual> = measured
        .iter()
        .map(|(e, (n, m))| Residual {
            exchange: *e,
            measured: *n,
            measured_ms: *m,
            fitted_ms: fitted.get(e).map_or(f64::NAN, |(_, f)| *f),
        })
        .collect();
    // The smallest frame's air time: below it the time per frame hides.
    let smallest = measured.keys().map(|e| e.octets).min().unwrap_or(0);
    let (bits, _) = frame_bits(config.local, config.remote, smallest);
    let air_ms = bits as f64 / f64::from(known.bit_rate) * 1e3;
    let peer_ack_delay_ms = all.iter().filter(|(e, _)| !e.poll).find_map(|(e, (_, m))| {
        all.get(&Exchange { poll: true, ..*e })
            .map(|(_, p)| (m - p).max(0.0))
    });
    let (ber, ber_low, ber_high) = ber(config, samples);
    Ok(Fit {
        txdelay_ms,
        tnc_per_frame_ms,
        per_frame_resolved: tnc_per_frame_ms > air_ms,
        ber,
        ber_low,
        ber_high,
        peer_ack_delay_ms,
        rms_relative_error: (sum / measured.len() as f64).sqrt(),
        residuals,
        frames_sent: samples.iter().map(|s| u64::from(s.exchange.frames)).sum(),
        frames_lost: samples.iter().filter(|s| s.frames_lost > 0).count() as u64,
        acks_lost: samples.iter().filter(|s| s.ack_lost).count() as u64,
    })
}
