//! Simulated frames per second with the full engine on the Bux et al.
//! (1982) two-way ABM scenario: 48 kbit/s terrestrial line (t_p = 50 ms),
//! p_bit = 1e-5, modulo 8, 1024-bit messages, both stations saturated.
// criterion_group! defines a public function it cannot document.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use linklab_core::Streams;
use linklab_link::WindowLimit;
use linklab_scenario::bux::{simulate, LinkRun, MessageLength, Procedure, Traffic};
use linklab_wire::control::Modulus;

fn two_way_abm(c: &mut Criterion) {
    let t_p = Duration::from_millis(50);
    let length = MessageLength::Constant { bits: 1024 };
    let run = LinkRun {
        procedure: Procedure::Abm,
        modulus: Modulus::Mod8,
        bit_rate_bps: 48_000,
        t_p,
        p_bit: 1e-5,
        length,
        traffic: [Traffic::Saturated; 2],
        t1: LinkRun::default_t1(48_000, t_p, length),
        measured: Duration::from_secs(60),
        slices: 10,
        window_limit: WindowLimit::Withhold,
    };
    let streams = Streams::new(1);
    let frames = simulate(&run, &streams).map(|m| m.frames).unwrap_or(0);
    let mut group = c.benchmark_group("bux");
    group.throughput(Throughput::Elements(frames));
    group.sample_size(10);
    group.bench_function("two-way ABM frames", |b| {
        b.iter(|| simulate(&run, &streams).map(|m| m.frames))
    });
    group.finish();
}

criterion_group!(benches, two_way_abm);
criterion_main!(benches);
