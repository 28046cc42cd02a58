//! Known-answer and edge-case tests of FCS-16 and HDLC framing.

use linklab_wire::fcs::{self, Fcs16};
use linklab_wire::hdlc::{
    decode_all, reference, BitStream, DeframerConfig, DeframerStats, Encoder, LineCode,
};

/// An AX.25 UI frame, APRS <- N0CALL-7, PID 0xF0, info ">Hello".
const AX25_UI: [u8; 22] = [
    0x82, 0xa0, 0xa4, 0xa6, 0x40, 0x40, 0xe0, 0x9c, 0x60, 0x86, 0x82, 0x98, 0x98, 0x6f, 0x03, 0xf0,
    0x3e, 0x48, 0x65, 0x6c, 0x6c, 0x6f,
];

fn nrz() -> DeframerConfig {
    DeframerConfig::new(LineCode::Nrz)
}

#[test]
fn fcs_check_value() {
    assert_eq!(fcs::fcs16(b"123456789"), 0x906E);
    assert_eq!(reference::fcs16(b"123456789"), 0x906E);
    let mut incremental = Fcs16::default();
    incremental.update(b"12345");
    incremental.update(b"6789");
    assert_eq!(incremental.finish(), 0x906E);
}

#[test]
fn fcs_of_ax25_frame() {
    // Computed independently (bitwise CRC-16/X.25) and by the oracle.
    assert_eq!(fcs::fcs16(&AX25_UI), 0x1D95);
    assert_eq!(reference::fcs16(&AX25_UI), 0x1D95);
    let mut frame = AX25_UI.to_vec();
    fcs::append_fcs(&mut frame);
    assert_eq!(&frame[22..], &[0x95, 0x1D]);
    assert!(fcs::check(&frame));
    let mut fcs = Fcs16::new();
    fcs.update(&frame);
    assert_eq!(fcs.register(), fcs::GOOD_RESIDUE);
}

#[test]
fn golden_stuffed_frame() {
    // Body FF 01: flag, 11111 0 111 ..., worked out by hand and by a
    // separate script.
    let mut encoder = Encoder::new(LineCode::Nrz);
    encoder.frame(&[0xFF, 0x01]);
    let bits = encoder.finish();
    assert_eq!(bits.bit_len(), 49);
    assert_eq!(bits.octets(), &[0x7e, 0xdf, 0x03, 0x1c, 0xc2, 0xfd, 0x00]);
    assert_eq!(bits, reference::encode(&[&[0xFF, 0x01]], 0, LineCode::Nrz));
}

#[test]
fn golden_nrzi() {
    // Two flags from level 0: 0 -> change, 1 -> stay.
    let mut encoder = Encoder::new(LineCode::Nrzi);
    encoder.flags(2);
    let bits = encoder.finish();
    // Flag 0,1,1,1,1,1,1,0 from level 0 -> levels 1,1,1,1,1,1,1,0, which
    // ends at level 0 again, so the second flag codes the same.
    assert_eq!(bits.octets(), &[0x7F, 0x7F]);
}

#[test]
fn ax25_frame_round_trip_both_line_codes() {
    for code in [LineCode::Nrz, LineCode::Nrzi] {
        let mut encoder = Encoder::new(code);
        encoder.flags(8);
        encoder.frame(&AX25_UI);
        let (frames, stats) = decode_all(&encoder.finish(), DeframerConfig::ax25(code));
        assert_eq!(frames, vec![AX25_UI.to_vec()]);
        assert_eq!(stats.frames_ok, 1);
    }
}

#[test]
fn idle_flags_count_nothing() {
    let mut encoder = Encoder::new(LineCode::Nrz);
    encoder.flags(50);
    let (frames, stats) = decode_all(&encoder.finish(), nrz());
    assert!(frames.is_empty());
    assert_eq!(stats, DeframerStats::default());
    // Flags sharing their 0s: 0111111 0111111 0111111 0.
    let shared: BitStream = (0..22).map(|i| i % 7 != 0).chain([false]).collect();
    let (frames, stats) = decode_all(&shared, nrz());
    assert!(frames.is_empty());
    assert_eq!(stats, DeframerStats::default());
}

#[test]
fn abort_mid_frame_is_counted() {
    let mut encoder = Encoder::new(LineCode::Nrz);
    encoder.flags(2);
    encoder.abort_frame(b"partial frame");
    encoder.frame(b"next frame");
    let bits = encoder.finish();
    let (frames, stats) = decode_all(&bits, nrz());
    assert_eq!(frames, vec![b"next frame".to_vec()]);
    assert_eq!(stats.aborts, 1);
    assert_eq!(stats.frames_ok, 1);
    assert_eq!(reference::decode_all(&bits, nrz()), (frames, stats));
}

#[test]
fn flag_then_idle_is_not_an_abort() {
    let mut encoder = Encoder::new(LineCode::Nrz);
    encoder.frame(b"last frame");
    let mut bits = encoder.finish();
    for _ in 0..40 {
        bits.push(true);
    }
    let (frames, stats) = decode_all(&bits, nrz());
    assert_eq!(frames.len(), 1);
    assert_eq!(stats.aborts, 0);
}

#[test]
fn too_short_and_length_limits() {
    let config = DeframerConfig {
        line_code: LineCode::Nrz,
        min_len: 4,
        max_len: 10,
    };
    let mut encoder = Encoder::new(LineCode::Nrz);
    encoder.frame(&[0x42]); // 3 octets with FCS
    encoder.frame(&[0x11; 2]); // 4: shortest allowed
    encoder.frame(&[0x22; 8]); // 10: longest allowed
    encoder.frame(&[0x33; 9]); // 11
    encoder.frame(&[0xFF; 300]); // far too long
    encoder.frame(&[0x44; 3]);
    let bits = encoder.finish();
    let (frames, stats) = decode_all(&bits, config);
    assert_eq!(frames, vec![vec![0x11; 2], vec![0x22; 8], vec![0x44; 3]]);
    assert_eq!(stats.too_short, 1);
    assert_eq!(stats.too_long, 2);
    assert_eq!(stats.frames_ok, 3);
    assert_eq!(reference::decode_all(&bits, config), (frames, stats));
}

#[test]
fn not_octet_aligned_is_counted() {
    // Flag, nine 0 bits, flag.
    let flag = [false, true, true, true, true, true, true, false];
    let bits: BitStream = flag
        .iter()
        .copied()
        .chain([false; 9])
        .chain(flag.iter().copied())
        .collect();
    let (frames, stats) = decode_all(&bits, nrz());
    assert!(frames.is_empty());
    assert_eq!(stats.not_octet_aligned, 1);
    assert_eq!(reference::decode_all(&bits, nrz()), (frames, stats));
}

#[test]
fn corrupted_bit_in_quiet_body_is_an_fcs_error() {
    // A body of 0s has no runs of 1s, so a flipped bit cannot create a
    // flag or stuffing: exactly an FCS error.
    let mut encoder = Encoder::new(LineCode::Nrz);
    encoder.frame(&[0u8; 20]);
    let clean = encoder.finish();
    for index in 8..8 + 160 {
        let mut bits = clean.clone();
        assert!(bits.flip(index));
        let (frames, stats) = decode_all(&bits, nrz());
        assert!(frames.is_empty());
        assert_eq!(stats.fcs_errors, 1, "bit {index}");
    }
}

#[test]
fn streaming_take_matches_finish() {
    let mut whole = Encoder::new(LineCode::Nrzi);
    let mut streamed = Encoder::new(LineCode::Nrzi);
    let mut octets = Vec::new();
    for n in 0..20u8 {
        let body: Vec<u8> = (0..n * 7).map(|i| i.wrapping_mul(37) ^ n).collect();
        whole.frame(&body);
        streamed.frame(&body);
        octets.extend(streamed.take_octets());
    }
    let tail = streamed.finish();
    octets.extend_from_slice(tail.octets());
    let whole = whole.finish();
    assert_eq!(octets, whole.octets());
    assert_eq!(
        whole.bit_len(),
        (octets.len() - tail.octets().len()) * 8 + tail.bit_len()
    );
}
