//! The streaming KISS decoder: chunking, resynchronisation, bounds.

use linklab_wire::kiss::{
    encode, encode_into, Decoder, DecoderStats, Frame, KissError, FEND, FESC,
};
use proptest::prelude::*;

mod kiss_strategy;
use kiss_strategy::any_frame;

const MAX: usize = 400;

/// Feeds `input` to `decoder` in chunks of the given sizes (cycled),
/// taking every item after each chunk.
fn feed(decoder: &mut Decoder, input: &[u8], sizes: &[usize]) -> Vec<Result<Frame, KissError>> {
    let mut items = Vec::new();
    let mut rest = input;
    for &size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, tail) = rest.split_at(size.clamp(1, rest.len()));
        decoder.push(chunk);
        items.extend(decoder.by_ref());
        rest = tail;
    }
    items
}

#[test]
fn skips_leading_garbage_and_empty_frames() {
    let mut decoder = Decoder::new(MAX);
    decoder.push(&[
        0x41, 0x42, 0x43, FEND, FEND, FEND, 0x00, 0x41, FEND, FEND, FEND,
    ]);
    let items: Vec<_> = decoder.by_ref().collect();
    assert_eq!(items, vec![Ok(Frame::data(vec![0x41]))]);
    assert_eq!(
        decoder.stats(),
        DecoderStats {
            frames: 1,
            garbage_bytes: 3,
            errors: 0
        }
    );
}

#[test]
fn fend_after_fesc_drops_frame_and_opens_next() {
    let mut decoder = Decoder::new(MAX);
    decoder.push(&[FEND, 0x00, 0x41, FESC, FEND, 0x00, 0x42, FEND]);
    let items: Vec<_> = decoder.by_ref().collect();
    assert_eq!(
        items,
        vec![
            Err(KissError::BadEscape { octet: FEND }),
            Ok(Frame::data(vec![0x42]))
        ]
    );
}

#[test]
fn bad_escape_hunts_for_next_fend() {
    let mut decoder = Decoder::new(MAX);
    decoder.push(&[FEND, 0x00, FESC, 0x01, 0x02, 0x03, FEND, 0x00, 0x42, FEND]);
    let items: Vec<_> = decoder.by_ref().collect();
    assert_eq!(
        items,
        vec![
            Err(KissError::BadEscape { octet: 0x01 }),
            Ok(Frame::data(vec![0x42]))
        ]
    );
    assert_eq!(
        decoder.stats(),
        DecoderStats {
            frames: 1,
            garbage_bytes: 2,
            errors: 1
        }
    );
}

#[test]
fn length_limit_is_exact() {
    let mut decoder = Decoder::new(10);
    assert_eq!(decoder.max_frame_len(), 10);
    let fits = Frame::data(vec![0x41; 10]);
    let too_long = Frame::data(vec![0x41; 11]);
    let mut input = encode(&fits);
    encode_into(&too_long, &mut input);
    encode_into(&fits, &mut input);
    decoder.push(&input);
    let items: Vec<_> = decoder.by_ref().collect();
    assert_eq!(
        items,
        vec![
            Ok(fits.clone()),
            Err(KissError::FrameTooLong { max: 10 }),
            Ok(fits)
        ]
    );
}

#[test]
fn one_megabyte_without_fend_stays_bounded() {
    const MEGABYTE: usize = 1 << 20;
    let mut decoder = Decoder::new(MAX);
    decoder.push(&[FEND]);
    let mut items = Vec::new();
    let chunk = [0x41u8; 4096];
    for _ in 0..MEGABYTE / chunk.len() {
        decoder.push(&chunk);
        items.extend(decoder.by_ref());
        assert!(
            decoder.buffered() <= MAX + 1,
            "holds {} octets",
            decoder.buffered()
        );
    }
    assert_eq!(items, vec![Err(KissError::FrameTooLong { max: MAX })]);
    assert_eq!(decoder.stats().garbage_bytes, (MEGABYTE - (MAX + 1)) as u64);

    // And it decodes the next frame.
    decoder.push(&encode(&Frame::data(b"ok".to_vec())));
    let items: Vec<_> = decoder.by_ref().collect();
    assert_eq!(items, vec![Ok(Frame::data(b"ok".to_vec()))]);
    assert_eq!(decoder.buffered(), 0);
}

#[test]
fn pushing_without_iterating_keeps_all_input() {
    let mut decoder = Decoder::new(MAX);
    let frame = Frame::data(vec![1, 2, 3]);
    let bytes = encode(&frame);
    for _ in 0..3 {
        decoder.push(&bytes);
    }
    assert_eq!(decoder.buffered(), 3 * bytes.len());
    assert_eq!(decoder.by_ref().count(), 3);
}

/// Octets between frames that the decoder must reject as exactly one error:
/// no FEND, and a first octet whose command nibble is unknown.
fn garbage() -> impl Strategy<Value = Vec<u8>> {
    let unknown_type = (
        0..16u8,
        prop::sample::select(vec![7u8, 8, 9, 10, 11, 13, 14]),
    )
        .prop_map(|(port, command)| (port << 4) | command)
        .prop_filter("FESC would escape the next octet", |&octet| octet != FESC);
    let body = prop_oneof![
        4 => prop::collection::vec(any::<u8>(), 0..40),
        1 => prop::collection::vec(any::<u8>(), MAX..MAX + 100),
    ];
    prop_oneof![
        1 => Just(Vec::new()),
        3 => (unknown_type, body).prop_map(|(first, body)| {
            let mut garbage = vec![first];
            garbage.extend(body.into_iter().filter(|&octet| octet != FEND));
            garbage
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1000,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x4c494e4b),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn resynchronises_in_any_chunking(
        leading in prop::collection::vec(any::<u8>(), 0..20),
        frames in prop::collection::vec((any_frame(), garbage()), 0..8),
        sizes in prop::collection::vec(1..64usize, 1..8),
    ) {
        let leading: Vec<u8> = leading.into_iter().filter(|&octet| octet != FEND).collect();
        let mut input = leading.clone();
        let mut expected = Vec::new();
        for (frame, garbage) in &frames {
            encode_into(frame, &mut input);
            input.extend_from_slice(garbage);
            expected.push(Ok(frame.clone()));
            if !garbage.is_empty() {
                expected.push(Err(()));
            }
        }
        // The last garbage needs a FEND to be reported.
        input.push(FEND);

        let mut decoder = Decoder::new(MAX);
        let items: Vec<_> = feed(&mut decoder, &input, &sizes)
            .into_iter()
            .map(|item| item.map_err(|_| ()))
            .collect();
        prop_assert_eq!(items, expected);
        let stats = decoder.stats();
        prop_assert_eq!(stats.frames, frames.len() as u64);
        prop_assert_eq!(
            stats.errors,
            frames.iter().filter(|(_, garbage)| !garbage.is_empty()).count() as u64
        );
        prop_assert!(stats.garbage_bytes >= leading.len() as u64);
        prop_assert_eq!(decoder.buffered(), 0);
    }
}
