//! `linklab probe`: measure a real link for [`crate::advise`]. Over a KISS
//! TNC and a peer that answers in AX.25 connected mode, the probe sends
//! windows of I frames and times the answers ([`prober`]), then fits the
//! values a user cannot read off a label (the radios' TXDELAY, the TNC's
//! time per frame, the bit-error rate, the peer's acknowledgement delay)
//! on a virtual replica of the link ([`replica`], [`fit`](mod@fit)) and writes a
//! [`Link`] for `linklab advise --link`.

pub mod fit;
pub mod prober;
pub mod replica;

use core::time::Duration;

use linklab_channel::StationConfig;

use crate::link::{Channel, Duplex, Ends, KissEnds, Limits, Link, Workload};
pub use fit::{fit, Fit, Known, Residual};
pub use prober::{Exchange, ProbeConfig, ProbeEvent, Prober, Sample};

/// The probe's plan: each kind of window `repeat` times, interleaved so
/// that a slow drift of the link touches every kind alike. Windows of
/// 1, 3 and 5 one-octet frames (the time per frame), of one frame of
/// half and of all of `n1` octets and of three of `n1` (the bit rate
/// and the serial link), all with P on the last frame; and one frame
/// without P (the peer's acknowledgement delay). Then `loss_windows`
/// windows of seven full frames, for the loss: a BER within 10% takes
/// about a hundred frames lost.
pub fn plan(n1: usize, repeat: usize, loss_windows: usize) -> Vec<Exchange> {
    let n1 = n1.max(2);
    let kinds = [
        (1, 1, true),
        (3, 1, true),
        (5, 1, true),
        (1, n1 / 2, true),
        (1, n1, true),
        (3, n1, true),
        (1, 1, false),
    ];
    let window = |(frames, octets, poll): (u8, usize, bool)| Exchange {
        frames,
        octets,
        poll,
    };
    (0..repeat)
        .flat_map(|_| kinds.map(window))
        .chain((0..loss_windows).map(|_| window((7, n1, true))))
        .collect()
}

/// The link the fit describes, for `advise`: the measured values in a
/// host-and-KISS-TNC link with the known ones.
pub fn link(known: &Known, fit: &Fit, txtail: Duration) -> Link {
    Link {
        channel: Channel {
            bit_rate: known.bit_rate,
            duplex: Duplex::Half,
            stations: 2,
            load: 0.0,
            ber: fit.ber,
            fades: None,
            txdelay_ms: fit.txdelay_ms,
            txtail_ms: txtail.as_secs_f64() * 1e3,
        },
        ends: Ends::Kiss(KissEnds {
            serial_bps: known.serial_bps,
            host_latency_ms: known.peer_latency.as_secs_f64() * 1e3,
            tnc_per_frame_ms: fit.tnc_per_frame_ms,
            tnc_per_octet_us: known.per_octet.as_secs_f64() * 1e6,
            tnc_buffer_octets: known.buffer_octets,
            carrier_hold_ms: known.carrier_hold.as_secs_f64() * 1e3,
            stack: crate::settings::Stack::Linklab,
        }),
        workload: Workload::default(),
        limits: Limits::default(),
        current: None,
        probe: None,
    }
}

/// The probe's own channel access: transmit at the first free slot of
/// 10 ms, so that its windows wait as little as the channel allows.
pub fn local_station(txtail: Duration) -> StationConfig {
    StationConfig {
        persistence: 255,
        slot_time: Duration::from_millis(10),
        txdelay: Duration::ZERO,
        txtail,
        slot_phase: Duration::ZERO,
    }
}
