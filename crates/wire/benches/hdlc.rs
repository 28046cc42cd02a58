//! HDLC framing throughput: the table-driven code against the bit-at-a-time
//! reference, on 1000 AX.25-sized frames (20 to 300 octets, fixed seed).
//!
//! - `hdlc_encode`: MB/s of frame octets (bodies, before FCS and stuffing)
//!   turned into line bits: FCS, zero-bit insertion, flags and, for `nrzi`,
//!   NRZI coding — the full transmit path of a modem.
//! - `hdlc_deframe`: MB/s of raw line octets received: NRZI decoding (for
//!   `nrzi`), flag hunt, zero-bit deletion and FCS check.
//!
//! Run: `cargo bench -p linklab-wire --bench hdlc -- --warm-up-time 1 --measurement-time 3`.
// criterion_group! defines a public function it cannot document.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use linklab_core::Stream;
use linklab_wire::hdlc::{encode_frames, reference, Deframer, DeframerConfig, LineCode};

fn workload() -> Vec<Vec<u8>> {
    let mut rng = Stream::from_seed(0x4c49_4e4b_4c41_4221);
    (0..1000)
        .map(|_| {
            let len = 20 + rng.below(281) as usize;
            (0..len).map(|_| rng.next_u64() as u8).collect()
        })
        .collect()
}

fn name(code: LineCode) -> &'static str {
    match code {
        LineCode::Nrz => "nrz",
        LineCode::Nrzi => "nrzi",
    }
}

fn encode(c: &mut Criterion) {
    let frames = workload();
    let refs: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
    let octets: usize = frames.iter().map(Vec::len).sum();
    let mut group = c.benchmark_group("hdlc_encode");
    group.throughput(Throughput::Bytes(octets as u64));
    for code in [LineCode::Nrzi, LineCode::Nrz] {
        group.bench_with_input(BenchmarkId::new("fast", name(code)), &refs, |b, refs| {
            b.iter(|| encode_frames(black_box(refs).iter().copied(), 1, code))
        });
        group.bench_with_input(BenchmarkId::new("naive", name(code)), &refs, |b, refs| {
            b.iter(|| reference::encode(black_box(refs), 1, code))
        });
    }
    group.finish();
}

fn deframe(c: &mut Criterion) {
    let frames = workload();
    let refs: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
    let mut group = c.benchmark_group("hdlc_deframe");
    for code in [LineCode::Nrzi, LineCode::Nrz] {
        let line = encode_frames(refs.iter().copied(), 1, code);
        let config = DeframerConfig::new(code);
        group.throughput(Throughput::Bytes(line.octets().len() as u64));
        group.bench_with_input(BenchmarkId::new("fast", name(code)), &line, |b, line| {
            b.iter(|| {
                let mut deframer = Deframer::new(config);
                let mut received = 0usize;
                deframer.push_with(black_box(line.octets()), |frame| received += frame.len());
                assert_eq!(deframer.stats().frames_ok, 1000);
                received
            })
        });
        group.bench_with_input(BenchmarkId::new("naive", name(code)), &line, |b, line| {
            b.iter(|| {
                let (frames, _) = reference::decode_all(black_box(line), config);
                assert_eq!(frames.len(), 1000);
                frames
            })
        });
    }
    group.finish();
}

criterion_group!(benches, encode, deframe);
criterion_main!(benches);
