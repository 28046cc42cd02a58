//! T1 from the air: two stations, each with the transmit clock
//! (`AirClock`) as the drivers run it, on the emulated channel's sans-IO
//! core in virtual time (`air`: a half-duplex 1200 bit/s radio channel
//! with CSMA, TXDELAY 300 ms, P 63, SLOTTIME 100 ms, seeded).
//!
//! A window of 256-octet I frames is about 12 s on the air at 1200 bit/s,
//! four times an initial T1 of 3 s. Counted from the hand-over to the TNC
//! (as before the clock), T1 expires while the frames are still queued;
//! counted from the end of their transmission (ACKMODE answers from the
//! channel, or the estimate without them) it never expires on a lossless
//! channel, and once the TNC answers ACKMODE, T1 runs from the answer.

mod air;

use core::time::Duration;

use air::{linklab, settings, transfer, Side, FRAMES};
use linklab_core::{Engine, Instant};
use linklab_io::{AckMode, AirSettings};
use linklab_wire::kiss::Port;

/// A's T1 never expired (no enquiry) and no frame went twice; the
/// frames both sides sent are shown if it did.
fn assert_no_t1_expiry(a: &Side, b: &Side, seed: u64) {
    let controls = |side: &Side| {
        side.sent
            .iter()
            .map(|(_, f)| f.control())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        a.enquiries(),
        0,
        "seed {seed}: T1 expired\n{:?}\n{:?}",
        controls(a),
        controls(b)
    );
    assert_eq!(a.i_frames(), FRAMES, "seed {seed}: a frame went twice");
}

#[test]
fn with_ackmode_answered_a_lossless_window_of_seven_never_times_out() {
    for seed in 1..=3 {
        let (a, b) = transfer(settings(AckMode::Auto), seed);
        assert_eq!(a.air.ackmode(), Some(true), "the channel answers ACKMODE");
        assert_eq!(b.air.ackmode(), Some(true));
        assert_no_t1_expiry(&a, &b, seed);
    }
}

#[test]
fn without_ackmode_the_estimate_keeps_t1_from_expiring_on_queued_frames() {
    for seed in 1..=3 {
        let (a, b) = transfer(settings(AckMode::Off), seed);
        assert_eq!(a.air.ackmode(), Some(false));
        assert_no_t1_expiry(&a, &b, seed);
    }
}

#[test]
fn t1_counted_from_the_hand_over_expires_on_the_same_transfer() {
    // The control: a clock that takes every frame as sent the moment it
    // is handed over (no ACKMODE, an infinitely fast radio) is T1 as it
    // ran before. The same transfer then times out and resends.
    let hand_over = AirSettings {
        ackmode: AckMode::Off,
        bit_rate: u32::MAX,
        txdelay: Duration::ZERO,
        persistence: 255,
        slot_time: Duration::ZERO,
    };
    let (a, _) = transfer(hand_over, 1);
    assert!(a.enquiries() > 0, "T1 never expired");
    assert!(a.i_frames() > FRAMES, "nothing was sent twice");
}

#[test]
fn t1_starts_at_the_tncs_answer() {
    // After the ACKMODE answer for the last frame handed over, A's T1
    // runs T1V from that answer: its deadline is the answer's time + T1V.
    let mut side = Side::new("N0A", settings(AckMode::On), linklab());
    let now = Instant::ZERO;
    side.station.connect(now, air::call("N0B"), &[]).unwrap();
    let octets = side.drain(now);
    assert!(!octets.is_empty());
    let link = side.station.link(&air::call("N0B")).unwrap();
    assert_eq!(
        link.poll_timeout(),
        None,
        "T1 held while the SABM waits in the TNC"
    );
    let answer_at = Instant::from_micros(2_500_000);
    side.station.handle_kiss_bytes(
        answer_at,
        &linklab_wire::kiss::encode(&linklab_wire::kiss::Frame {
            port: Port::ZERO,
            command: linklab_wire::kiss::Command::AckMode {
                seq: 0,
                data: Vec::new(),
            },
        }),
    );
    side.drain(answer_at);
    let link = side.station.link(&air::call("N0B")).unwrap();
    assert_eq!(link.poll_timeout(), Some(answer_at + link.t1v()));
}
