//! The TNC model: frames ready when the channel is won, and turnaround.

use core::time::Duration;
use linklab_core::{Engine, Instant, Streams};

use linklab_channel::{
    Medium, MediumEvent, RadioChannel, RadioConfig, StationConfig, StationId, Tnc, TncConfig,
};

fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

fn tnc(tx_buffer_octets: usize) -> TncConfig {
    TncConfig {
        serial_rate: 9600,
        per_frame: ms(5),
        per_octet: Duration::from_micros(20),
        tx_buffer_octets,
    }
}

/// Station 0 (behind a TNC) is offered `n` I frames of `len` octets at
/// t = 0 while station 1 holds the channel with one long frame. Returns the
/// number of frames queued at the radio when station 0 keys up, and the
/// key-up time.
fn frames_ready_at_keyup(config: TncConfig, n: usize, len: usize) -> (usize, Instant) {
    let kiss = StationConfig {
        persistence: 255,
        slot_time: ms(10),
        txdelay: ms(300),
        txtail: ms(30),
        slot_phase: Duration::ZERO,
    };
    let mut radio = RadioChannel::new(
        RadioConfig::new(1200),
        &[kiss, kiss],
        &Streams::new(5),
        "radio",
    );
    let mut t = Tnc::new(config);
    radio.transmit(Instant::ZERO, StationId(1), vec![0x41; 300]);
    for _ in 0..n {
        t.host_send(Instant::ZERO, vec![0x41; len]);
    }
    loop {
        let now = [radio.poll_timeout(), t.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
            .expect("station 0 keys up before the model runs dry");
        t.handle_timeout(now);
        while let Some(frame) = t.poll_transmit(now) {
            radio.transmit(now, StationId(0), frame);
        }
        radio.handle_timeout(now);
        while let Some(event) = radio.poll_event() {
            match event {
                MediumEvent::TransmitterKeyed {
                    station: StationId(0),
                    at,
                } => {
                    return (radio.queued(StationId(0)), at);
                }
                MediumEvent::FrameSent {
                    station: StationId(0),
                    octets,
                    at,
                } => {
                    t.handle_frame_sent(at, octets);
                }
                _ => {}
            }
        }
    }
}

#[test]
fn frames_ready_when_the_channel_is_won_follow_from_serial_rate_and_buffer() {
    let len = 272; // N1 = 256 plus AX.25 header
    let config = tnc(100_000);
    let serial = config.serial_time(&[0x41; 272]);
    // 272 + FEND + type + FEND octets, 10 bits each, at 9600 bit/s.
    assert_eq!(
        serial,
        Duration::from_micros((275 * 10 * 1_000_000 + 4_800) / 9_600)
    );
    let processing = config.processing_time(len);
    assert_eq!(processing, ms(5) + Duration::from_micros(20 * 272));
    let (ready, keyup) = frames_ready_at_keyup(config, 20, len);
    // Frame i is ready at (i + 1)·S + processing (the CPU keeps up, as
    // processing < S), so by key-up K: ⌊(K − processing) / S⌋ frames.
    let elapsed = keyup - Instant::ZERO - processing;
    let expected = (elapsed.as_micros() / serial.as_micros()) as usize;
    assert!(expected > 2 && expected < 20, "{expected}");
    assert_eq!(ready, expected);
    // A buffer of three frames caps the real window size.
    let (ready, _) = frames_ready_at_keyup(tnc(3 * len), 20, len);
    assert_eq!(ready, 3);
}

#[test]
fn turnaround_is_processing_plus_serial_both_ways() {
    let config = tnc(10_000);
    let mut t = Tnc::new(config);
    let start = Instant::from_micros(1_000_000);
    let i_frame = vec![0xC0; 100]; // every octet needs a KISS escape
    t.handle_radio_frame(start, i_frame.clone());
    let host_at = loop {
        let now = t.poll_timeout().unwrap();
        t.handle_timeout(now);
        if let Some(f) = t.poll_host_delivery() {
            assert_eq!(f, i_frame);
            break now;
        }
    };
    let serial_i = config.serial_time(&i_frame);
    assert_eq!(
        serial_i,
        Duration::from_micros((203 * 10 * 1_000_000 + 4_800) / 9_600)
    );
    assert_eq!(host_at, start + config.processing_time(100) + serial_i);
    // The host answers at once with an RR: ready for the radio after the
    // serial link and processing again.
    let rr = vec![0x41; 15];
    t.host_send(host_at, rr.clone());
    let radio_at = loop {
        let now = t.poll_timeout().unwrap();
        t.handle_timeout(now);
        if let Some(f) = t.poll_transmit(now) {
            assert_eq!(f, rr);
            break now;
        }
    };
    assert_eq!(
        radio_at,
        host_at + config.serial_time(&rr) + config.processing_time(15)
    );
    assert_eq!(t.buffered_octets(), 15);
    t.handle_frame_sent(radio_at, 15);
    assert_eq!(t.buffered_octets(), 0);
    assert_eq!(t.poll_timeout(), None);
}

#[test]
fn the_processor_is_shared_by_both_directions() {
    let config = tnc(10_000);
    let mut t = Tnc::new(config);
    t.handle_radio_frame(Instant::ZERO, vec![1; 50]);
    t.handle_radio_frame(Instant::ZERO, vec![2; 50]);
    // The second frame waits for the first one's processing.
    let first = Instant::ZERO + config.processing_time(50);
    assert_eq!(t.poll_timeout(), Some(first));
    t.handle_timeout(first);
    let second = first + config.processing_time(50);
    let serial = first + config.serial_time(&[1; 50]);
    assert_eq!(t.poll_timeout(), Some(second.min(serial)));
}
