//! Throughput of the simulation kernel alone.
//!
//! - `md1`: events per second of a whole M/D/1 simulation at ρ = 0.8
//!   (1,000,000 customers, 2,000,000 arrival and departure events through
//!   the [`EventQueue`], exponential interarrivals from a [`Stream`], a
//!   [`Tally`] of waits; the model of `examples/md1/model.rs`).
//! - `hold`: the classic "hold" operation of event-list studies (Jones,
//!   "An empirical comparison of priority-queue and event-set
//!   implementations", CACM 29(4), 1986): pop the earliest event and schedule
//!   one a random span later, with a fixed number of events pending. One
//!   element = one pop plus one schedule.
//! - `fill_drain`: schedule n events at random instants, then pop them all.
//!   One element = one schedule plus one pop.
//!
//! Run: `cargo bench -p linklab-sim --bench kernel -- --warm-up-time 1 --measurement-time 3`.
//!
//! [`EventQueue`]: linklab_sim::EventQueue
//! [`Stream`]: linklab_core::Stream
//! [`Tally`]: linklab_sim::Tally
// criterion_group! defines a public function it cannot document.
#![allow(missing_docs)]

#[path = "../examples/md1/model.rs"]
mod model;

use std::hint::black_box;
use std::time::Duration;

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use linklab_core::Streams;
use linklab_sim::EventQueue;
use model::{simulate, Md1};

/// Spans (µs) drawn once from an exponential with mean 1 ms, cycled through
/// by the queue benchmarks so that they time the queue, not the generator.
fn spans() -> Vec<Duration> {
    let mut stream = Streams::new(0x4c49_4e4b).stream("bench/spans");
    (0..4096)
        .map(|_| stream.exponential_duration(Duration::from_millis(1)))
        .collect()
}

fn md1(c: &mut Criterion) {
    let model = Md1::rho_0_8(1_000_000);
    // Time the right model: its mean wait must be Pollaczek-Khinchine's.
    let check = simulate(&model, Streams::new(0x4c49_4e4b));
    let wait = check.waits_us.mean().unwrap_or(f64::NAN);
    let expected = model.pollaczek_khinchine_wait_us();
    assert!(
        (wait / expected - 1.0).abs() < 0.05,
        "M/D/1 mean wait {wait} µs, Pollaczek-Khinchine {expected} µs"
    );
    let mut group = c.benchmark_group("md1");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .throughput(Throughput::Elements(2 * model.customers));
    group.bench_function(format!("rho_{}", model.rho()), |b| {
        b.iter(|| simulate(black_box(&model), Streams::new(0x4c49_4e4b)))
    });
    group.finish();
}

fn hold(c: &mut Criterion) {
    const OPS: u64 = 10_000;
    let spans = spans();
    let mut group = c.benchmark_group("hold");
    group.throughput(Throughput::Elements(OPS));
    for pending in [2usize, 64, 4_096, 262_144] {
        let mut queue = EventQueue::new();
        for (i, span) in spans.iter().cycle().take(pending).enumerate() {
            queue.schedule_after(*span, i);
        }
        let mut next = spans.iter().cycle();
        group.bench_with_input(BenchmarkId::from_parameter(pending), &pending, |b, _| {
            b.iter(|| {
                for _ in 0..OPS {
                    let (_, event) = queue.pop().expect("the hold model keeps its events");
                    let span = next.next().copied().unwrap_or_default();
                    queue.schedule_after(span, black_box(event));
                }
            })
        });
    }
    group.finish();
}

fn fill_drain(c: &mut Criterion) {
    const EVENTS: usize = 100_000;
    let spans = spans();
    let mut group = c.benchmark_group("fill_drain");
    group.throughput(Throughput::Elements(EVENTS as u64));
    group.bench_function(BenchmarkId::from_parameter(EVENTS), |b| {
        b.iter(|| {
            let mut queue = EventQueue::new();
            for (i, span) in spans.iter().cycle().take(EVENTS).enumerate() {
                queue.schedule_after(*span * (1 + (i % 7) as u32), i);
            }
            while let Some(event) = queue.pop() {
                black_box(event);
            }
        })
    });
    group.finish();
}

criterion_group!(benches, md1, hold, fill_drain);
criterion_main!(benches);
