//! 1 MB of garbage on a station's KISS port, at 9600 baud in virtual
//! time: the first bad inputs are reported one by one, the rest as one
//! count per interval and a last one at exit, so the reports stay few
//! while the count of bad inputs and of their octets stays exact.

use std::time::Duration;

use linklab_core::{Engine, Instant, Stream};
use linklab_io::{
    BadInputCount, InputError, Station, StationEvent, BAD_INPUT_BURST, BAD_INPUT_INTERVAL,
    KISS_MAX_FRAME,
};
use linklab_link::Config;
use linklab_wire::ax25::AddressField;
use linklab_wire::kiss::{self, Command, KissError};

/// 1 MB of seeded random octets, with a FEND about every 200 octets so
/// that the decoder keeps finding "frames".
fn garbage(seed: u64) -> Vec<u8> {
    let mut rng = Stream::from_seed(seed);
    (0..1 << 20)
        .map(|_| {
            if rng.below(200) == 0 {
                0xC0
            } else {
                rng.next_u64() as u8
            }
        })
        .collect()
}

/// The bad inputs a station drops for `bytes` on port 0 (none of them
/// for it), one by one, as the KISS decoder sees them: the octets skipped
/// before each item, damaged frames, data frames whose address field does
/// not decode.
fn expected(bytes: &[u8]) -> (u64, u64) {
    let mut decoder = kiss::Decoder::new(KISS_MAX_FRAME);
    decoder.push(bytes);
    let (mut count, mut octets, mut skipped) = (0, 0, 0);
    while let Some(item) = decoder.next() {
        let counted = decoder.stats().garbage_bytes;
        let own = u64::from(matches!(item, Err(KissError::FrameTooLong { .. })));
        if counted - own > skipped {
            count += 1;
            octets += counted - own - skipped;
        }
        skipped = counted;
        match item {
            // An ACKMODE frame with no frame in it is a TNC's answer;
            // with one, a frame like a data frame's.
            Ok(kiss::Frame {
                port,
                command: Command::AckMode { data, .. },
            }) if port == kiss::Port::ZERO && data.is_empty() => {}
            Ok(kiss::Frame {
                port,
                command: Command::Data(data) | Command::AckMode { data, .. },
            }) if port == kiss::Port::ZERO => {
                assert!(AddressField::decode(&data).is_err(), "a frame decoded");
                count += 1;
                octets += data.len() as u64;
            }
            Ok(_) => {}
            Err(_) => count += 1,
        }
    }
    (count, octets)
}

#[test]
fn a_megabyte_of_garbage_gives_few_reports_and_an_exact_count() {
    let bytes = garbage(0x1513_2024);
    let (count, octets) = expected(&bytes);
    assert!(count > 5_000, "only {count} bad inputs");

    let mut station = Station::new("N0CALL-2".parse().unwrap(), Config::default()).unwrap();
    // 960 octets a second; the station's timers run when due.
    let mut now = Instant::from_micros(0);
    let mut events = Vec::new();
    for chunk in bytes.chunks(96) {
        now = now + Duration::from_millis(100);
        if station.poll_timeout().is_some_and(|t| t <= now) {
            station.handle_timeout(now);
        }
        station.handle_kiss_bytes(now, chunk);
        while let Some(event) = station.poll_event() {
            events.push(event);
        }
    }
    station.flush_bad_input();
    while let Some(event) = station.poll_event() {
        events.push(event);
    }

    let shown: Vec<&InputError> = events
        .iter()
        .filter_map(|e| match e {
            StationEvent::BadInput(error) => Some(error),
            _ => None,
        })
        .collect();
    let counts: Vec<&BadInputCount> = events
        .iter()
        .filter_map(|e| match e {
            StationEvent::BadInputCount(count) => Some(count),
            _ => None,
        })
        .collect();
    assert_eq!(shown.len(), BAD_INPUT_BURST);
    // One count per interval of the run, and the last at exit.
    let run = now - Instant::ZERO;
    let intervals = run.as_secs() / BAD_INPUT_INTERVAL.as_secs() + 1;
    assert!(
        counts.len() as u64 <= intervals + 1,
        "{} counts over {} s",
        counts.len(),
        run.as_secs()
    );
    assert_eq!(events.len(), shown.len() + counts.len());
    // Nothing is lost: the bad inputs and their octets add up.
    let total: u64 = shown.len() as u64 + counts.iter().map(|c| c.count).sum::<u64>();
    assert_eq!(total, count);
    let total_octets: u64 = shown.iter().map(|e| e.octets()).sum::<u64>()
        + counts.iter().map(|c| c.octets).sum::<u64>();
    assert_eq!(total_octets, octets);
    // The counts follow each other, each one interval long at most.
    for pair in counts.windows(2) {
        assert!(pair[1].since >= pair[0].since + BAD_INPUT_INTERVAL);
    }
}
