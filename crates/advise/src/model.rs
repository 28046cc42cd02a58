//! The closed-form estimate `advise` ranks candidate settings with before
//! simulating the best: Zieliński's half-duplex cycle (eq. 1-5) with the
//! turnaround of the ends, the receiver's acknowledgement delay and the
//! cost of lost frames added.
//!
//! # The cycle
//! A window of n = min(k, frames that fit the transmit buffer) I frames
//! takes, on a half-duplex channel:
//!
//! ```text
//! T_txdelay + n T_I + T_txtail                       the sender keyed (eq. 2, 3)
//! + max(turn_r - T_txtail, hold) + T_CS              the receiver's turnaround
//! + T_txdelay + T_RR + T_txtail                      the acknowledgement (eq. 4)
//! + max(turn_s - T_txtail, hold) + T_CS              the sender's turnaround
//! ```
//!
//! where T_CS is eq. 1's mean p-persistent wait, `hold` the TNC's carrier
//! hold after the other station unkeys, `turn_r` the time from the end of
//! the last I frame to the acknowledgement being ready in the receiver's
//! TNC (through its TNC and serial link to the host stack and back,
//! plus T2 less the window's air time when the receiver waits T2), and
//! `turn_s` the same for the RR and the next window. A firmware TNC
//! (the stack inside the TNC) has only its processor in the way; its
//! serial link and processor also bound how fast frames can be fed, so a
//! frame takes the longest of its air time, its serial time and its
//! processing. On a full-duplex channel the sender keeps sending while
//! the acknowledgements come back, and a window waits only when it is
//! shorter than the round trip.
//!
//! # Lost frames
//! With independent bit errors of probability `ber` a frame of b line
//! bits is lost with probability 1 − (1 − ber)^b; with fades, with the
//! Gilbert-Elliott process's long-run probability
//! (`ErrorModel::frame_loss_probability`). A window goes through
//! when its frames and its RR all do; a window that does not is sent
//! again (REJ recovers a lost frame in the next cycle; a lost last frame
//! or RR costs a T1 expiry first):
//!
//! ```text
//! E[window] = (cycle + P(last frame or RR lost) T1) / P(window and RR through)
//! ```
//!
//! A T1 shorter than the time it runs before the RR comes expires every
//! window and costs an extra poll and answer: from the window's first
//! frame where T1 starts at the hand-over to the KISS TNC (the Linux
//! kernel), from the window's last frame where T1 is held until the
//! frames have left the air (linklab's KISS port, Dire Wolf's engine). The
//! estimate ranks settings; the simulator, which runs the real engine,
//! decides between the best of them.

use linklab_models::airtime::{frame_airtime, FRAME_OVERHEAD_BITS, STUFFING_FACTOR};
use linklab_models::zielinski::t_cs;
use linklab_scenario::bux::model::one_way_bound;
use linklab_scenario::bux::simulate::frame_overhead_bits;
use linklab_wire::control::Modulus;

use crate::link::{Duplex, Ends, Link};
use crate::settings::{Ack, Settings, Stack};

/// Octets KISS and the serial link add to a frame (FEND, type, FEND).
const KISS_OCTETS: f64 = 3.0;
/// Octets of an AX.25 frame besides its information field, as carried
/// over a serial link (no flags): addresses, control, PID (and FCS,
/// which a KISS TNC adds; counted for a firmware TNC's processor).
const FRAME_OCTETS: f64 = 18.0;
/// Bits per character on an asynchronous serial link (start, 8, stop).
const SERIAL_BITS: f64 = 10.0;

/// What the closed form predicts for one set of settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Transfer time of the message, s.
    pub transfer_s: f64,
    /// Message bits over the transfer time, bit/s.
    pub throughput_bps: f64,
    /// The least T1 that does not expire on a clean link, s, as the
    /// settings' stack runs T1: from the first I frame of a window to its
    /// acknowledgement behind a KISS TNC where T1 starts at the hand-over
    /// (the Linux kernel, and firmware TNCs); from the end of the
    /// window's last frame where T1 is held until the frames have left
    /// the air (linklab, Dire Wolf).
    pub round_trip_s: f64,
}

/// Delays of one end's path between stack and radio, s.
struct Path {
    /// Through the path one way for a frame with `info` octets.
    one_way: Box<dyn Fn(f64) -> f64>,
    /// Least time between two frames fed to the radio, for a frame with
    /// `info` octets (serial link and processor).
    feed: Box<dyn Fn(f64) -> f64>,
    /// Carrier hold after the other station unkeys.
    hold: f64,
    /// I frames of `info` octets the transmit buffer holds.
    buffer_frames: Box<dyn Fn(f64) -> f64>,
    /// Serial fill before the first frame and drain after the last
    /// (eq. 5), for a firmware TNC.
    fill_drain: f64,
}

fn path(link: &Link, s: &Settings) -> Path {
    let serial = f64::from(s.serial_bps.max(1));
    match &link.ends {
        // Dire Wolf's engine is the modem: no host, serial link or TNC in
        // the way, and its transmit queue is unbounded.
        Ends::Kiss(_) if s.stack == Stack::DireWolf => Path {
            one_way: Box::new(|_| 0.0),
            feed: Box::new(|_| 0.0),
            hold: 0.0,
            buffer_frames: Box::new(|_| f64::INFINITY),
            fill_drain: 0.0,
        },
        Ends::Kiss(k) => {
            let latency = k.host_latency_ms / 1e3;
            let per_frame = k.tnc_per_frame_ms / 1e3;
            let per_octet = k.tnc_per_octet_us / 1e6;
            let buffer = k.tnc_buffer_octets as f64;
            let ser = move |info: f64| (info + FRAME_OCTETS + KISS_OCTETS) * SERIAL_BITS / serial;
            let proc = move |info: f64| per_frame + per_octet * (info + FRAME_OCTETS);
            Path {
                one_way: Box::new(move |info| latency + ser(info) + proc(info)),
                feed: Box::new(move |info| ser(info).max(proc(info))),
                hold: k.carrier_hold_ms / 1e3,
                buffer_frames: Box::new(move |info| (buffer / (info + FRAME_OCTETS)).floor()),
                fill_drain: 0.0,
            }
        }
        Ends::Line { .. } => unreachable!("lines are estimated by line_estimate"),
        Ends::Tnc { .. } => {
            let Ok(Some((p, _))) = link.profiles() else {
                unreachable!("validated TNC ends have profiles")
            };
            let clock = p.hardware.clock_hz as f64;
            let c = p.firmware.costs;
            let build = move |info: f64| {
                (c.frame_cycles as f64 + (info + FRAME_OCTETS) * c.radio_octet_cycles as f64)
                    / clock
            };
            let packetise = move |info: f64| {
                (c.frame_cycles as f64 + info * c.serial_octet_cycles as f64) / clock
            };
            let ser = move |info: f64| info * SERIAL_BITS / serial;
            let buffer = c.buffer_octets as f64;
            Path {
                one_way: Box::new(build),
                feed: Box::new(move |info| ser(info).max(build(info) + packetise(info))),
                hold: 0.0,
                buffer_frames: Box::new(move |info| (buffer / info.max(1.0)).floor()),
                fill_drain: 2.0 * ser(s.n1 as f64),
            }
        }
    }
}

fn txdelay_of(c: &crate::link::Channel) -> f64 {
    (c.txdelay_ms + c.txtail_ms) / 1e3
}

/// The closed-form estimate for `settings` on `link` (validated).
pub fn estimate(link: &Link, settings: &Settings) -> Estimate {
    if let Ends::Line { t_p_ms } = link.ends {
        return line_estimate(link, settings, t_p_ms / 1e3);
    }
    let c = &link.channel;
    let rate = f64::from(c.bit_rate);
    let n1 = settings.n1 as f64;
    let size = link.workload.message_octets as f64;
    let p = path(link, settings);
    let frames = (size / n1).ceil().max(1.0);
    let n = f64::from(settings.window)
        .min((p.buffer_frames)(n1).max(1.0))
        .min(frames);
    let windows = (frames / n).ceil();

    let t_i = frame_airtime(n1, rate).max((p.feed)(n1));
    let t_rr = frame_airtime(0.0, rate);
    let txdelay = c.txdelay_ms / 1e3;
    let txtail = c.txtail_ms / 1e3;
    // Other stations hold the channel for `load` of the time: each access
    // waits, on average, for the busy periods it meets (M/D/1-like,
    // residual time of a transmission of theirs).
    let theirs =
        txdelay_of(c) + frame_airtime(crate::simulate::BACKGROUND_FRAME_OCTETS as f64, rate);
    let load = if c.stations > 2 { c.load.min(0.9) } else { 0.0 };
    let access = t_cs(f64::from(settings.slot_ms) / 1e3, settings.persistence)
        + load / (1.0 - load) * theirs / 2.0;
    let ack_delay = match settings.ack {
        Ack::AtOnce => 0.0,
        Ack::AfterT2 { t2_ms } => (f64::from(t2_ms) / 1e3 - (n - 1.0) * t_i).max(0.0),
    };
    let turn_r = (p.one_way)(n1) + ack_delay + (p.one_way)(0.0);
    let turn_s = (p.one_way)(0.0) + (p.one_way)(n1);
    // From the first I frame's start to the RR's end, and what of it T1
    // runs through.
    let round_trip = n * t_i + turn_r + txdelay + t_rr;
    let t1_runs = match (&link.ends, settings.stack) {
        (Ends::Kiss(_), Stack::Linklab | Stack::DireWolf) => round_trip - n * t_i,
        _ => round_trip,
    };
    let t1 = f64::from(settings.t1_ms) / 1e3;

    let cycle = match c.duplex {
        Duplex::Half => {
            let gap = |turn: f64| (turn - txtail).max(p.hold) + access;
            txdelay + n * t_i + txtail + gap(turn_r) + txdelay + t_rr + txtail + gap(turn_s)
        }
        Duplex::Full => (n * t_i).max(round_trip + turn_s + access),
    };
    // A T1 shorter than the round trip expires every window: a poll and
    // its answer more.
    let needless = if t1 < t1_runs {
        txdelay + t_rr + txtail + access + turn_r
    } else {
        0.0
    };
    let bits_i = STUFFING_FACTOR * (FRAME_OVERHEAD_BITS + 8.0 * n1);
    let bits_rr = STUFFING_FACTOR * FRAME_OVERHEAD_BITS;
    let errors = c.error_model();
    let lost = |bits: f64| errors.frame_loss_probability(bits.ceil() as u64);
    let (q_i, q_rr) = (lost(bits_i), lost(bits_rr));
    let through = (1.0 - q_i).powf(n) * (1.0 - q_rr);
    let timeout = 1.0 - (1.0 - q_i) * (1.0 - q_rr);
    let window_s = (cycle + needless + timeout * t1) / through.max(1e-9);
    let transfer_s = windows * window_s + p.fill_drain;
    Estimate {
        transfer_s,
        throughput_bps: 8.0 * size / transfer_s,
        round_trip_s: t1_runs,
    }
}

/// On a line, Bux et al.'s one-way bound (section 3.1.1) for each
/// direction that sends; it does not tell NRM from ABM, so the search
/// simulates both.
fn line_estimate(link: &Link, s: &Settings, t_p: f64) -> Estimate {
    let rate = f64::from(link.channel.bit_rate);
    let modulus = if s.window > 7 {
        Modulus::Mod128
    } else {
        Modulus::Mod8
    };
    let overhead = frame_overhead_bits(modulus) as f64;
    let l = 8.0 * s.n1 as f64;
    let directions = if link.workload.both_ways { 2.0 } else { 1.0 };
    let share = one_way_bound(
        l,
        overhead,
        link.channel.ber,
        f64::from(s.window),
        rate,
        t_p,
    );
    let throughput_bps = (share * rate * directions).max(1e-9);
    let size = 8.0 * link.workload.message_octets as f64 * directions;
    Estimate {
        transfer_s: size / throughput_bps,
        throughput_bps,
        round_trip_s: (l + overhead) / rate + 2.0 * t_p + overhead / rate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::{Channel, KissEnds, Limits, Workload};

    fn link(ber: f64) -> Link {
        Link {
            channel: Channel {
                bit_rate: 1200,
                duplex: Duplex::Half,
                stations: 2,
                load: 0.0,
                ber,
                fades: None,
                txdelay_ms: 300.0,
                txtail_ms: 30.0,
            },
            ends: Ends::Kiss(KissEnds::default()),
            workload: Workload::default(),
            limits: Limits::default(),
            current: None,
            probe: None,
        }
    }

    #[test]
    fn t2_costs_what_the_window_does_not_cover() {
        // At 1200 bit/s three 256-octet frames outlast a 3 s T2; at 9600 not.
        let slow = link(0.0);
        let base = Settings::direwolf(&slow);
        let t2 = Settings {
            ack: Ack::AfterT2 { t2_ms: 3000 },
            ..base
        };
        assert_eq!(
            estimate(&slow, &t2).transfer_s,
            estimate(&slow, &base).transfer_s
        );
        let l = Link {
            channel: Channel {
                bit_rate: 9600,
                ..slow.channel
            },
            ..slow
        };
        let t2 = Settings {
            ack: Ack::AfterT2 { t2_ms: 3000 },
            ..base
        };
        assert!(estimate(&l, &t2).transfer_s > estimate(&l, &base).transfer_s);
    }

    #[test]
    fn errors_favour_short_frames() {
        let short = |ber| {
            let l = link(ber);
            let s = Settings::direwolf(&l);
            estimate(&l, &Settings { n1: 64, ..s }).throughput_bps / estimate(&l, &s).throughput_bps
        };
        // Clean: long frames win; at 1e-3 a 256-octet frame is lost 9 times in 10.
        assert!(short(0.0) < 1.0);
        assert!(short(1e-3) > 1.0);
    }

    #[test]
    fn a_short_t1_costs_a_poll_per_window() {
        let l = link(0.0);
        let s = Settings {
            t1_ms: 60_000,
            ..Settings::direwolf(&l)
        };
        let e = estimate(&l, &s);
        let short = Settings {
            t1_ms: (e.round_trip_s * 500.0) as u32,
            ..s
        };
        assert!(estimate(&l, &short).transfer_s > e.transfer_s);
    }
}
