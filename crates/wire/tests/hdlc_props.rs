//! Property tests: the table-driven HDLC code against the bit-at-a-time
//! reference, and round trips through the whole modem path.

use linklab_wire::fcs::{self, Fcs16};
use linklab_wire::hdlc::{
    encode_frames, reference, BitStream, Deframer, DeframerConfig, DeframerStats, Encoder,
    LineCode, NrziDecoder, NrziEncoder,
};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

fn line_code() -> impl Strategy<Value = LineCode> {
    prop_oneof![Just(LineCode::Nrz), Just(LineCode::Nrzi)]
}

/// Frame bodies long enough for the default 4-octet minimum.
fn frames() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(
        prop_oneof![
            prop::collection::vec(any::<u8>(), 2..80),
            // Runs of 1s and flag-like octets, to exercise stuffing.
            prop::collection::vec(
                prop::sample::select(vec![0xFF, 0x7E, 0x7F, 0xFE, 0x3F, 0xFC]),
                2..40
            ),
        ],
        0..6,
    )
}

fn bits(octets: &[u8], len: usize) -> BitStream {
    (0..len)
        .map(|i| octets.get(i / 8).is_some_and(|o| o >> (i % 8) & 1 != 0))
        .collect()
}

/// Data-domain bits, NRZI-coded if asked.
fn line(data: &BitStream, code: LineCode) -> BitStream {
    match code {
        LineCode::Nrz => data.clone(),
        LineCode::Nrzi => {
            let mut nrzi = NrziEncoder::new();
            data.iter().map(|b| nrzi.encode_bit(b)).collect()
        }
    }
}

/// Feeds `line` to a fast deframer in chunks whose sizes (in bits) cycle
/// through `chunks`; returns frames and counts.
fn fast_chunked(
    line: &BitStream,
    config: DeframerConfig,
    chunks: &[usize],
) -> (Vec<Vec<u8>>, DeframerStats) {
    let mut deframer = Deframer::new(config);
    let mut frames = Vec::new();
    let mut start = 0;
    let mut k = 0;
    while start < line.bit_len() {
        let size = chunks
            .get(k % chunks.len().max(1))
            .copied()
            .unwrap_or(8)
            .max(1);
        let end = (start + size).min(line.bit_len());
        let piece: BitStream = (start..end).map(|i| line.get(i).unwrap_or(false)).collect();
        if piece.bit_len().is_multiple_of(8) && k.is_multiple_of(2) {
            deframer.push(piece.octets());
            while let Some(frame) = deframer.poll_frame() {
                frames.push(frame);
            }
        } else {
            deframer.push_bits_with(piece.octets(), piece.bit_len(), |f| frames.push(f.to_vec()));
        }
        start = end;
        k += 1;
    }
    (frames, *deframer.stats())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1000,
        rng_seed: RngSeed::Fixed(0x4c494e4b),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// The airtime models' count of a frame's line bits is the encoder's,
    /// bit for bit, whatever the body (runs of 1s across octets and into
    /// the FCS included).
    #[test]
    fn frame_bits_counts_what_the_encoder_sends(body in prop::collection::vec(prop_oneof![Just(0xFFu8), Just(0x7E), Just(0xFE), Just(0x00), Just(0x0F), Just(0xF0), Just(0x80), Just(0x01), any::<u8>()], 0..300)) {
        let mut encoder = Encoder::new(LineCode::Nrz);
        encoder.flags(1);
        encoder.frame(&body);
        prop_assert_eq!(linklab_wire::hdlc::frame_bits(&body), encoder.bit_len() as u64 - 8);
    }

    #[test]
    fn fcs_table_matches_bitwise(data in prop::collection::vec(any::<u8>(), 0..300), split in 0usize..300) {
        let expected = reference::fcs16(&data);
        prop_assert_eq!(fcs::fcs16(&data), expected);
        let (a, b) = data.split_at(split.min(data.len()));
        let mut incremental = Fcs16::new();
        incremental.update(a);
        incremental.update(b);
        prop_assert_eq!(incremental.finish(), expected);
        let mut framed = data.clone();
        fcs::append_fcs(&mut framed);
        prop_assert!(fcs::check(&framed));
    }

    #[test]
    fn encoder_matches_reference(frames in frames(), preamble in 0usize..4, code in line_code()) {
        let refs: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
        let fast = encode_frames(refs.iter().copied(), preamble, code);
        prop_assert_eq!(fast, reference::encode(&refs, preamble, code));
    }

    #[test]
    fn stuffing_leaves_no_six_ones_inside_frames(frames in frames()) {
        // Between the flags, zero-bit insertion leaves at most five 1s in a row.
        let refs: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
        let stream = encode_frames(refs.iter().copied(), 1, LineCode::Nrz);
        let mut ones = 0;
        let mut sixes = 0;
        for bit in stream.iter() {
            if bit { ones += 1 } else {
                if ones == 6 { sixes += 1 }
                prop_assert!(ones <= 6);
                ones = 0;
            }
        }
        // The only runs of six are the flags: one preamble and one per frame.
        prop_assert_eq!(sixes, 1 + frames.len());
    }

    #[test]
    fn round_trip_with_garbage_and_offsets(
        frames in frames(),
        preamble in 0usize..3,
        code in line_code(),
        lead in (prop::collection::vec(any::<u8>(), 5), 0usize..39),
        trail in (prop::collection::vec(any::<u8>(), 4), 0usize..31),
        chunks in prop::collection::vec(1usize..200, 1..6),
    ) {
        // Garbage shorter than the 32-bit minimum frame cannot yield a frame.
        let mut data = bits(&lead.0, lead.1);
        let refs: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
        data.extend_from(&encode_frames(refs.iter().copied(), preamble, LineCode::Nrz));
        data.extend_from(&bits(&trail.0, trail.1));
        let line = line(&data, code);
        let config = DeframerConfig::new(code);
        let (fast, fast_stats) = fast_chunked(&line, config, &chunks);
        prop_assert_eq!(&fast, &frames);
        prop_assert_eq!(fast_stats.frames_ok, frames.len() as u64);
        let (naive, naive_stats) = reference::decode_all(&line, config);
        prop_assert_eq!(naive, fast);
        prop_assert_eq!(naive_stats, fast_stats);
    }

    #[test]
    fn nrzi_round_trip(data in prop::collection::vec(any::<u8>(), 0..64)) {
        let mut line = data.clone();
        NrziEncoder::new().encode_in_place(&mut line);
        // Octet and bit paths agree.
        let mut by_bit = NrziEncoder::new();
        let per_bit: BitStream = bits(&data, data.len() * 8).iter().map(|b| by_bit.encode_bit(b)).collect();
        prop_assert_eq!(per_bit.octets(), &line[..]);
        NrziDecoder::new().decode_in_place(&mut line);
        prop_assert_eq!(line, data);
    }

    #[test]
    fn fast_matches_reference_on_garbage(
        input in prop::collection::vec(any::<u8>(), 0..400),
        tail_bits in 0usize..8,
        code in line_code(),
        min_len in 0usize..20,
        max_len in 1usize..40,
        chunks in prop::collection::vec(1usize..100, 1..6),
    ) {
        let config = DeframerConfig { line_code: code, min_len, max_len };
        let line = bits(&input, (input.len() * 8).saturating_sub(tail_bits));
        let fast = fast_chunked(&line, config, &chunks);
        prop_assert_eq!(fast, reference::decode_all(&line, config));
    }

    #[test]
    fn fast_matches_reference_on_noisy_frames(
        frames in frames(),
        code in line_code(),
        flips in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
        max_len in 1usize..100,
        chunks in prop::collection::vec(1usize..300, 1..4),
        gaps in prop::collection::vec(0usize..20, 6),
    ) {
        let mut encoder = Encoder::new(code);
        encoder.flags(1);
        for (i, frame) in frames.iter().enumerate() {
            // Runs of flags between frames, long enough for whole words.
            encoder.flags(gaps.get(i).copied().unwrap_or(0));
            if i % 3 == 2 {
                encoder.abort_frame(frame);
            } else {
                encoder.frame(frame);
            }
        }
        let mut line = encoder.finish();
        let clean = line.clone();
        for flip in &flips {
            if !line.is_empty() {
                line.flip(flip.index(line.bit_len()));
            }
        }
        let config = DeframerConfig { line_code: code, min_len: 4, max_len };
        let fast = fast_chunked(&line, config, &chunks);
        prop_assert_eq!(&fast, &reference::decode_all(&line, config));
        if flips.len() == 1 && line != clean {
            // A single bit error never gets a corrupted frame through. (It
            // may lose frames uncounted, by breaking their only flag.)
            let (frames_out, _) = fast;
            let (clean_frames, _) = reference::decode_all(&clean, config);
            for frame in &frames_out {
                prop_assert!(clean_frames.contains(frame));
            }
        }
    }
}

/// Long frame bodies: many 64-bit words each, with runs of 1s now and then.
fn long_frames() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(
        prop::collection::vec(
            prop_oneof![4 => any::<u8>(), 1 => Just(0xFF), 1 => Just(0x7E)],
            2..500,
        ),
        1..4,
    )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 100,
        rng_seed: RngSeed::Fixed(0x4c494e4b),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn fast_matches_reference_on_long_frames_in_one_push(
        frames in long_frames(),
        code in line_code(),
        max_len in 1usize..800,
        flip in any::<Option<prop::sample::Index>>(),
        gap in 0usize..20,
    ) {
        let mut encoder = Encoder::new(code);
        for frame in &frames {
            encoder.flags(gap);
            encoder.frame(frame);
        }
        let mut line = encoder.finish();
        if let Some(flip) = flip {
            line.flip(flip.index(line.bit_len()));
        }
        let config = DeframerConfig { line_code: code, min_len: 4, max_len };
        let mut deframer = Deframer::new(config);
        let mut found = Vec::new();
        deframer.push_bits_with(line.octets(), line.bit_len(), |f| found.push(f.to_vec()));
        let (expected, expected_stats) = reference::decode_all(&line, config);
        prop_assert_eq!(found, expected);
        prop_assert_eq!(*deframer.stats(), expected_stats);
    }
}
