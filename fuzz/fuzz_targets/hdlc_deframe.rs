//! Fuzzes the HDLC receiver with arbitrary line bits in arbitrary chunks.
//!
//! Input: byte 0 picks the line code (bit 7: NRZI), the way frames come
//! out (bit 6: queued for `poll_frame`) and the chunk size in bits from
//! its bits 0..=5, `n`: `n + 1` for `n` under 32, else `61 * (n - 31)`
//! (up to 244 octets, so that the word path sees many words in a row);
//! byte 1 the maximum frame length (plus one); the rest are the line bits,
//! LSB first.
//!
//! Checks: no panic; the table-driven deframer, fed in chunks, finds the
//! same frames and counts as the bit-at-a-time reference; every frame it
//! yields encodes and decodes back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linklab_wire::hdlc::{
    decode_all, encode_frames, reference, BitStream, Deframer, DeframerConfig, LineCode,
};

fuzz_target!(|data: &[u8]| {
    let [mode, max_len, line @ ..] = data else {
        return;
    };
    let line_code = if mode & 0x80 != 0 {
        LineCode::Nrzi
    } else {
        LineCode::Nrz
    };
    let n = usize::from(mode & 0x3F);
    let chunk_bits = if n < 32 { n + 1 } else { 61 * (n - 31) };
    let config = DeframerConfig {
        line_code,
        min_len: 4,
        max_len: usize::from(*max_len) + 1,
    };
    let stream = BitStream::from_octets(line.to_vec());

    let mut deframer = Deframer::new(config);
    let mut frames = Vec::new();
    let mut start = 0;
    while start < stream.bit_len() {
        let end = (start + chunk_bits).min(stream.bit_len());
        let chunk: BitStream = (start..end).filter_map(|i| stream.get(i)).collect();
        if mode & 0x40 != 0 {
            deframer.push_bits(chunk.octets(), chunk.bit_len());
            while let Some(frame) = deframer.poll_frame() {
                frames.push(frame);
            }
        } else {
            deframer.push_bits_with(chunk.octets(), chunk.bit_len(), |f| frames.push(f.to_vec()));
        }
        start = end;
    }

    let (expected, expected_stats) = reference::decode_all(&stream, config);
    assert_eq!(frames, expected);
    assert_eq!(*deframer.stats(), expected_stats);

    for frame in &frames {
        let encoded = encode_frames([frame.as_slice()], 1, line_code);
        let (again, stats) = decode_all(&encoded, config);
        assert_eq!(again.as_slice(), std::slice::from_ref(frame));
        assert_eq!(stats.frames_ok, 1);
    }
});
