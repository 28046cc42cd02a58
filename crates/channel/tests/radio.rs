//! The half-duplex radio channel: timing, back-to-back frames, CSMA access
//! delay against Zielinski (2013) eq. 1, collisions, DCD deferral and
//! hidden-DCD collisions, full duplex.

use core::time::Duration;

use linklab_channel::{
    bits_duration, hdlc_bits, Delivery, Duplex, Medium, MediumEvent, Outcome, RadioChannel,
    RadioConfig, SlotClock, StationConfig, StationId, FLAG_BITS,
};
use linklab_core::{Instant, Streams};
use linklab_sim::{ConfidenceInterval, Tally};

const RATE: u32 = 1200;

fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

fn at(d: Duration) -> Instant {
    Instant::ZERO + d
}

fn station(persistence: u8) -> StationConfig {
    StationConfig {
        persistence,
        slot_time: ms(10),
        txdelay: ms(300),
        txtail: ms(30),
        slot_phase: Duration::ZERO,
    }
}

fn channel(config: RadioConfig, stations: &[StationConfig]) -> RadioChannel {
    RadioChannel::new(config, stations, &Streams::new(7), "radio")
}

/// Runs the channel until nothing is pending or `until`, collecting output.
fn run(ch: &mut RadioChannel, until: Instant) -> (Vec<Delivery>, Vec<MediumEvent>) {
    let (mut d, mut e) = (Vec::new(), Vec::new());
    while let Some(t) = ch.poll_timeout().filter(|&t| t <= until) {
        ch.handle_timeout(t);
        d.extend(std::iter::from_fn(|| ch.poll_delivery()));
        e.extend(std::iter::from_fn(|| ch.poll_event()));
    }
    e.extend(std::iter::from_fn(|| ch.poll_event()));
    (d, e)
}

fn keyed_times(events: &[MediumEvent], who: usize) -> Vec<Instant> {
    events
        .iter()
        .filter_map(|e| match *e {
            MediumEvent::TransmitterKeyed { station, at } if station.0 == who => Some(at),
            _ => None,
        })
        .collect()
}

#[test]
fn one_transmission_takes_txdelay_plus_bits_over_rate_then_txtail() {
    let mut ch = channel(RadioConfig::new(RATE), &[station(255), station(255)]);
    let frame = b"an RR-sized frame ...".to_vec();
    ch.transmit(Instant::ZERO, StationId(0), frame.clone());
    let (deliveries, events) = run(&mut ch, at(ms(10_000)));
    let bits = FLAG_BITS + hdlc_bits(&frame);
    // Body + FCS + two flags, plus whatever zero-bit insertion added.
    assert!(bits >= 8 * (frame.len() as u64 + 2) + 16);
    let end = at(ms(300) + bits_duration(bits, RATE));
    assert_eq!(deliveries.len(), 1);
    assert_eq!(
        deliveries[0],
        Delivery {
            at: end,
            from: StationId(0),
            to: StationId(1),
            frame,
            outcome: Outcome::Intact
        }
    );
    let ended = end + ms(30);
    let s0 = StationId(0);
    let s1 = StationId(1);
    assert_eq!(
        events,
        vec![
            MediumEvent::TransmitterKeyed {
                station: s0,
                at: Instant::ZERO
            },
            MediumEvent::ChannelBusy {
                station: s0,
                busy: true,
                at: Instant::ZERO
            },
            MediumEvent::ChannelBusy {
                station: s1,
                busy: true,
                at: Instant::ZERO
            },
            MediumEvent::TransmissionStarted {
                station: s0,
                at: at(ms(300))
            },
            MediumEvent::FrameSent {
                station: s0,
                octets: 21,
                at: end
            },
            MediumEvent::TransmissionEnded {
                station: s0,
                at: ended
            },
            MediumEvent::ChannelBusy {
                station: s0,
                busy: false,
                at: ended
            },
            MediumEvent::ChannelBusy {
                station: s1,
                busy: false,
                at: ended
            },
        ]
    );
    let busy = ch.stats().busy.mean(ended).unwrap();
    assert!((busy - 1.0).abs() < 1e-12, "{busy}");
    assert_eq!(ch.stats().received_intact, 1);
}

#[test]
fn queued_frames_go_back_to_back_in_one_keying() {
    let mut ch = channel(RadioConfig::new(RATE), &[station(255), station(255)]);
    let frames: Vec<Vec<u8>> = (0..3u8)
        .map(|i| vec![0x40 + i; 40 + usize::from(i)])
        .collect();
    for f in &frames {
        ch.transmit(Instant::ZERO, StationId(0), f.clone());
    }
    // The acknowledgement queued during TXDELAY rides in the same keying.
    ch.handle_timeout(at(ms(100)));
    ch.transmit(at(ms(100)), StationId(0), b"ack".to_vec());
    let (deliveries, events) = run(&mut ch, at(ms(10_000)));
    let mut all = frames.clone();
    all.push(b"ack".to_vec());
    let mut bits = FLAG_BITS;
    for (d, f) in deliveries.iter().zip(&all) {
        bits += hdlc_bits(f);
        assert_eq!(&d.frame, f);
        assert_eq!(d.at, at(ms(300) + bits_duration(bits, RATE)));
        assert!(d.is_intact());
    }
    assert_eq!(deliveries.len(), 4);
    assert_eq!(keyed_times(&events, 0), vec![Instant::ZERO]);
    // A frame queued in the tail waits for the next keying.
    let mut ch = channel(RadioConfig::new(RATE), &[station(255), station(255)]);
    ch.transmit(Instant::ZERO, StationId(0), b"first".to_vec());
    let end = at(ms(300) + bits_duration(FLAG_BITS + hdlc_bits(b"first"), RATE));
    let tail = end + ms(10);
    let (d1, _) = run(&mut ch, tail);
    assert_eq!(d1[0].at, end);
    ch.transmit(tail, StationId(0), b"second".to_vec());
    let (_, events) = run(&mut ch, at(ms(10_000)));
    assert_eq!(keyed_times(&events, 0).len(), 1);
    assert!(keyed_times(&events, 0)[0] >= end + ms(30));
}

/// Access delays of `n` frames, each offered to an idle station on a free
/// channel at a uniformly random phase of its slot clock.
fn access_delays(persistence: u8, n: usize, seed: u64) -> Tally {
    let streams = Streams::new(seed);
    let mut ch = RadioChannel::new(
        RadioConfig::new(9600),
        &[station(persistence), station(255)],
        &streams,
        "radio",
    );
    let mut phase = streams.stream("arrival-phase");
    let mut now = Instant::ZERO;
    let mut waits = Tally::new();
    for _ in 0..n {
        let arrival = now + Duration::from_micros(1_000 + phase.below(10_000));
        ch.handle_timeout(arrival);
        ch.transmit(arrival, StationId(0), vec![0; 20]);
        let (_, events) = run(&mut ch, Instant::from_micros(u64::MAX));
        let keyed = keyed_times(&events, 0);
        assert_eq!(keyed.len(), 1);
        waits.add((keyed[0] - arrival).as_secs_f64());
        now = ch
            .poll_timeout()
            .unwrap_or(keyed[0])
            .max(keyed[0] + ms(1_000));
    }
    assert_eq!(ch.stats().access_delay.count(), n as u64);
    waits
}

#[test]
fn csma_access_delay_matches_eq_1_at_p_255_and_the_kiss_law_elsewhere() {
    // The waits are iid (independent phases and draws), so a Student-t
    // interval on their mean is valid; 99% level, fixed seeds.
    let slot = 0.010;
    let ci = ConfidenceInterval::from_tally(&access_delays(255, 4_000, 1), 0.99).unwrap();
    // Zielinski eq. 1: T_CS = 256·T_102 / (2(P+1)) = T/2 at P = 255.
    let eq1 = 256.0 * slot / (2.0 * 256.0);
    assert!(ci.contains(eq1), "{ci} vs eq. 1 {eq1}");
    for persistence in [63u8, 127] {
        let q = (f64::from(persistence) + 1.0) / 256.0;
        let ci =
            ConfidenceInterval::from_tally(&access_delays(persistence, 4_000, 2), 0.99).unwrap();
        let kiss = slot * (1.0 / q - 0.5);
        assert!(ci.contains(kiss), "P = {persistence}: {ci} vs {kiss}");
        // Eq. 1 leaves out the failed whole slots: it is below the interval.
        let eq1 = 256.0 * slot / (2.0 * (f64::from(persistence) + 1.0));
        assert!(ci.lower() > eq1, "P = {persistence}: {ci} vs eq. 1 {eq1}");
    }
}

#[test]
fn simultaneous_keyups_collide_and_both_frames_are_lost() {
    let mut ch = channel(
        RadioConfig::new(RATE),
        &[station(255), station(255), station(255)],
    );
    ch.transmit(at(ms(3)), StationId(0), b"from A".to_vec());
    ch.transmit(at(ms(5)), StationId(1), b"from B".to_vec());
    let (deliveries, events) = run(&mut ch, at(ms(10_000)));
    assert_eq!(keyed_times(&events, 0), vec![at(ms(10))]);
    assert_eq!(keyed_times(&events, 1), vec![at(ms(10))]);
    assert_eq!(deliveries.len(), 4);
    for d in &deliveries {
        let want = if d.to.0 == 2 {
            Outcome::Collision
        } else {
            Outcome::ReceiverKeyed
        };
        assert_eq!(d.outcome, want, "{d:?}");
    }
    assert_eq!(ch.stats().collisions, 1);
    assert_eq!(ch.stats().lost_to_collisions, 2);
    assert_eq!(ch.stats().received_intact, 0);
}

#[test]
fn dcd_defers_a_station_that_starts_a_slot_later() {
    let mut ch = channel(
        RadioConfig::new(RATE),
        &[station(255), station(255), station(255)],
    );
    ch.transmit(Instant::ZERO, StationId(0), b"from A".to_vec());
    ch.transmit(at(ms(1)), StationId(1), b"from B".to_vec());
    let (deliveries, events) = run(&mut ch, at(ms(10_000)));
    assert!(deliveries.iter().all(Delivery::is_intact), "{deliveries:?}");
    assert_eq!(deliveries.len(), 4);
    let a_end = events
        .iter()
        .find_map(|e| match *e {
            MediumEvent::TransmissionEnded { station, at } if station.0 == 0 => Some(at),
            _ => None,
        })
        .unwrap();
    // B keys at its first slot tick once A's carrier has gone.
    let b = keyed_times(&events, 1)[0];
    assert!(b >= a_end && b < a_end + ms(10), "{b:?} vs {a_end:?}");
    assert_eq!(b.as_micros() % 10_000, 0);
    assert_eq!(ch.stats().collisions, 0);
}

#[test]
fn a_dcd_delay_longer_than_a_slot_lets_collisions_through() {
    for (dcd, collide) in [(ms(5), false), (ms(25), true)] {
        let config = RadioConfig {
            dcd_delay: dcd,
            ..RadioConfig::new(RATE)
        };
        let mut ch = channel(config, &[station(255), station(255), station(255)]);
        ch.transmit(Instant::ZERO, StationId(0), b"from A".to_vec());
        ch.transmit(at(ms(1)), StationId(1), b"from B".to_vec());
        let (deliveries, events) = run(&mut ch, at(ms(10_000)));
        let at_c: Vec<Outcome> = deliveries
            .iter()
            .filter(|d| d.to.0 == 2)
            .map(|d| d.outcome)
            .collect();
        if collide {
            assert_eq!(keyed_times(&events, 1), vec![at(ms(10))]);
            assert_eq!(at_c, vec![Outcome::Collision; 2]);
            assert_eq!(ch.stats().collisions, 1);
        } else {
            assert_eq!(at_c, vec![Outcome::Intact; 2]);
        }
    }
}

#[test]
fn hidden_stations_collide_at_the_station_between_them() {
    let mut ch = channel(
        RadioConfig::new(RATE),
        &[station(255), station(255), station(255)],
    );
    ch.set_hears(StationId(0), StationId(1), false);
    ch.set_hears(StationId(1), StationId(0), false);
    ch.transmit(Instant::ZERO, StationId(0), b"from A".to_vec());
    // B keys at 50 ms: its data (from 350 ms) overlaps A's keying.
    ch.transmit(at(ms(50)), StationId(1), b"from B".to_vec());
    let (deliveries, _) = run(&mut ch, at(ms(10_000)));
    // Neither hears the other; C hears both, overlapping.
    assert_eq!(deliveries.len(), 2);
    assert!(deliveries
        .iter()
        .all(|d| d.to.0 == 2 && d.outcome == Outcome::Collision));
}

#[test]
fn full_duplex_keys_at_once_and_never_collides() {
    let config = RadioConfig {
        duplex: Duplex::Full,
        ..RadioConfig::new(RATE)
    };
    let mut ch = channel(config, &[station(0), station(0)]);
    ch.transmit(at(ms(3)), StationId(0), b"I frame".to_vec());
    ch.transmit(at(ms(3)), StationId(1), b"RR".to_vec());
    let (deliveries, events) = run(&mut ch, at(ms(10_000)));
    assert_eq!(keyed_times(&events, 0), vec![at(ms(3))]);
    assert_eq!(keyed_times(&events, 1), vec![at(ms(3))]);
    assert_eq!(deliveries.len(), 2);
    assert!(deliveries.iter().all(Delivery::is_intact));
    assert!(!events
        .iter()
        .any(|e| matches!(e, MediumEvent::ChannelBusy { .. })));
}

#[test]
fn runs_repeat_bit_for_bit_from_a_seed() {
    let go = |seed| {
        let mut ch = RadioChannel::new(
            RadioConfig::new(RATE),
            &[station(63), station(63), station(63)],
            &Streams::new(seed),
            "radio",
        );
        for i in 0..3 {
            ch.transmit(Instant::ZERO, StationId(i), vec![i as u8; 50]);
        }
        run(&mut ch, at(ms(60_000)))
    };
    assert_eq!(go(11), go(11));
    assert_ne!(go(11).1, go(12).1);
}

/// Dire Wolf's slot timing with its 10 ms DCD looks.
const AFTER_CLEAR: SlotClock = SlotClock::AfterClear {
    carrier_poll: Duration::from_millis(10),
};

/// A station with a 100 ms slot (Dire Wolf's default SLOTTIME 10).
fn slow_slots(persistence: u8) -> StationConfig {
    StationConfig {
        slot_time: ms(100),
        ..station(persistence)
    }
}

fn ended_times(events: &[MediumEvent], who: usize) -> Vec<Instant> {
    events
        .iter()
        .filter_map(|e| match *e {
            MediumEvent::TransmissionEnded { station, at } if station.0 == who => Some(at),
            _ => None,
        })
        .collect()
}

#[test]
fn the_default_slot_clock_is_free_running() {
    assert_eq!(SlotClock::default(), SlotClock::FreeRunning);
    // Queued at 30 ms on a clear channel, P = 255: the free-running clock
    // (phase 0) draws at its next tick, 100 ms, with or without
    // set_slot_clock(FreeRunning).
    for set in [false, true] {
        let mut ch = channel(RadioConfig::new(RATE), &[slow_slots(255), slow_slots(255)]);
        if set {
            ch.set_slot_clock(StationId(0), SlotClock::FreeRunning);
        }
        ch.handle_timeout(at(ms(30)));
        ch.transmit(at(ms(30)), StationId(0), b"frame".to_vec());
        let (_, events) = run(&mut ch, at(ms(10_000)));
        assert_eq!(keyed_times(&events, 0), vec![at(ms(100))]);
    }
}

#[test]
fn after_clear_draws_one_slot_after_a_frame_is_queued_on_a_clear_channel() {
    let mut ch = channel(RadioConfig::new(RATE), &[slow_slots(255), slow_slots(255)]);
    ch.set_slot_clock(StationId(0), AFTER_CLEAR);
    ch.handle_timeout(at(ms(30)));
    ch.transmit(at(ms(30)), StationId(0), b"frame".to_vec());
    let (_, events) = run(&mut ch, at(ms(10_000)));
    // 30 ms + SLOTTIME, not the free-running tick at 100 ms.
    assert_eq!(keyed_times(&events, 0), vec![at(ms(130))]);
    // A second frame after the first transmission: one slot after it.
    let end = ended_times(&events, 0)[0];
    ch.transmit(end + ms(1_000), StationId(0), b"next".to_vec());
    let (_, events) = run(&mut ch, at(ms(20_000)));
    assert_eq!(keyed_times(&events, 0), vec![end + ms(1_100)]);
}

#[test]
fn after_clear_draws_one_slot_after_the_first_dcd_look_past_the_carrier_drop() {
    let mut ch = channel(RadioConfig::new(RATE), &[station(255), slow_slots(255)]);
    ch.set_slot_clock(StationId(1), AFTER_CLEAR);
    // A keys at its tick at 0; B, queued at 5 ms, hears A's carrier.
    ch.transmit(Instant::ZERO, StationId(0), b"from A".to_vec());
    ch.handle_timeout(at(ms(5)));
    ch.transmit(at(ms(5)), StationId(1), b"from B".to_vec());
    let (deliveries, events) = run(&mut ch, at(ms(10_000)));
    assert!(deliveries.iter().all(Delivery::is_intact), "{deliveries:?}");
    let a_end = ended_times(&events, 0)[0];
    // B looks at its DCD at 5 ms + k·10 ms; the first look after A's
    // carrier dropped, then a whole slot, then the draw (P = 255).
    let waited = a_end.as_micros() - 5_000;
    let look = at(ms(5)) + Duration::from_micros(waited.div_ceil(10_000) * 10_000);
    assert_ne!(look, a_end, "the test wants a drop between two looks");
    assert_eq!(keyed_times(&events, 1), vec![look + ms(100)]);
}

#[test]
fn after_clear_starts_over_when_the_slot_ends_on_a_busy_channel() {
    let mut ch = channel(RadioConfig::new(RATE), &[station(255), slow_slots(255)]);
    ch.set_slot_clock(
        StationId(1),
        SlotClock::AfterClear {
            carrier_poll: Duration::ZERO,
        },
    );
    // B's slot runs from 0 to 100 ms; A keys at 50 ms and is still on
    // the air at 100 ms (TXDELAY 300 ms).
    ch.transmit(Instant::ZERO, StationId(1), b"from B".to_vec());
    ch.handle_timeout(at(ms(50)));
    ch.transmit(at(ms(50)), StationId(0), b"from A".to_vec());
    let (deliveries, events) = run(&mut ch, at(ms(10_000)));
    assert_eq!(keyed_times(&events, 0), vec![at(ms(50))]);
    assert!(deliveries.iter().all(Delivery::is_intact), "{deliveries:?}");
    // Watching the DCD continuously, B draws one slot after A's drop.
    let a_end = ended_times(&events, 0)[0];
    assert_eq!(keyed_times(&events, 1), vec![a_end + ms(100)]);
    assert_eq!(ch.stats().collisions, 0);
}

#[test]
fn after_clear_access_delay_on_a_free_channel_is_slot_over_q() {
    // Frames offered at random times to an idle station on a free
    // channel: (1 + G)·T, mean T/q, whatever the arrival phase.
    let streams = Streams::new(3);
    let mut ch = RadioChannel::new(
        RadioConfig::new(9600),
        &[station(63), station(255)],
        &streams,
        "radio",
    );
    ch.set_slot_clock(
        StationId(0),
        SlotClock::AfterClear {
            carrier_poll: ms(10),
        },
    );
    let mut phase = streams.stream("arrival-phase");
    let mut now = Instant::ZERO;
    let mut waits = Tally::new();
    for _ in 0..4_000 {
        let arrival = now + Duration::from_micros(1_000 + phase.below(10_000));
        ch.handle_timeout(arrival);
        ch.transmit(arrival, StationId(0), vec![0; 20]);
        let (_, events) = run(&mut ch, Instant::from_micros(u64::MAX));
        let keyed = keyed_times(&events, 0)[0];
        let wait = keyed - arrival;
        // Whole slots only: the phase of the arrival does not matter.
        assert_eq!(wait.as_micros() % 10_000, 0, "{wait:?}");
        assert!(wait >= ms(10));
        waits.add(wait.as_secs_f64());
        now = keyed + ms(1_000);
    }
    let ci = ConfidenceInterval::from_tally(&waits, 0.99).unwrap();
    let (slot, q) = (0.010, 64.0 / 256.0);
    assert!(ci.contains(slot / q), "{ci} vs T/q {}", slot / q);
    // The free-running clock's mean, T (1/q - 1/2), lies below.
    assert!(ci.lower() > slot * (1.0 / q - 0.5), "{ci}");
}
