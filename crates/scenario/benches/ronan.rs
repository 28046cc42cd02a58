//! Simulated frames per second of the whole stack in the standard case
//! `reproduce` times: two AX.25 stations (the real `linklab-link` engine) on Ronan
//! et al.'s Table I radio channel at 9600 bit/s (slot 20 ms, TXDELAY
//! 150 ms, TXTAIL 20 ms, p = 0.25), window 7, N1 = 255, 7182 octets; one
//! replication per iteration, frames counted as the radio sent them.
// criterion_group! defines a public function it cannot document.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use linklab_core::Streams;
use linklab_scenario::transfer::{run_transfer, TransferConfig};

fn table_1_at_9600(c: &mut Criterion) {
    let config = TransferConfig::ronan_table_1(9600, 7);
    let streams = Streams::new(1);
    let frames = run_transfer(&config, &streams)
        .map(|o| o.radio.frames_sent)
        .unwrap_or(0);
    let mut group = c.benchmark_group("ronan");
    group.throughput(Throughput::Elements(frames));
    group.bench_function("Table I channel 9600 bit/s frames", |b| {
        b.iter(|| run_transfer(&config, &streams).map(|o| o.radio.frames_sent))
    });
    group.finish();
}

criterion_group!(benches, table_1_at_9600);
criterion_main!(benches);
