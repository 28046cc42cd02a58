//! Fuzzes the streaming KISS decoder: arbitrary octets in arbitrary
//! chunkings never panic, memory stays bounded, chunking does not change
//! the result, and every decoded frame re-encodes and decodes to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linklab_wire::kiss::{encode, Decoder, Frame};

const MAX: usize = 64;

fuzz_target!(|input: &[u8]| {
    // The first octet picks the chunk sizes; the rest is the stream.
    let Some((&pattern, stream)) = input.split_first() else {
        return;
    };

    let mut whole = Decoder::new(MAX);
    whole.push(stream);
    let expected: Vec<_> = whole.by_ref().collect();
    assert!(whole.buffered() <= MAX + 1);

    let mut chunked = Decoder::new(MAX);
    let mut items = Vec::new();
    let mut rest = stream;
    let mut size = usize::from(pattern % 7) + 1;
    while !rest.is_empty() {
        let (chunk, tail) = rest.split_at(size.min(rest.len()));
        chunked.push(chunk);
        items.extend(chunked.by_ref());
        assert!(chunked.buffered() <= MAX + 1);
        rest = tail;
        size = (size * 3 + usize::from(pattern)) % 13 + 1;
    }
    assert_eq!(items, expected);
    assert_eq!(chunked.stats(), whole.stats());
    let stats = chunked.stats();
    assert_eq!(stats.frames + stats.errors, items.len() as u64);

    for frame in items.into_iter().flatten() {
        let mut again = Decoder::new(MAX);
        again.push(&encode(&frame));
        let decoded: Vec<_> = again.collect();
        assert_eq!(decoded, vec![Ok(frame.clone())]);
        let mut contents = Vec::new();
        frame.emit(&mut contents);
        assert_eq!(Frame::parse(&contents), Ok(frame));
    }
});
