//! End-to-end check of kernel, streams, MSER-5 and runner on a model with a
//! known answer: the M/M/1 queue, whose mean wait in queue is
//! Wq = ρ / (μ − λ) (e.g. Kleinrock, *Queueing Systems* vol. 1, §3.2).
//!
//! Each replication starts with a backlog of customers, a transient that
//! MSER-5 must delete: without the cut the estimate is biased upwards.

use std::collections::VecDeque;
use std::time::Duration;

use linklab_core::{Instant, Streams};
use linklab_sim::{EventQueue, Metric, ReplicationOutput, Runner};

/// Each customer's wait in queue, ms, after the MSER-5 warm-up cut.
const WAIT_MS: Metric = Metric::new("wait_ms");
/// The mean wait over the whole replication, warm-up included.
const WAIT_MS_UNCUT: Metric = Metric::new("wait_ms_uncut");

/// Mean interarrival time 12.5 ms (λ = 80/s), mean service 10 ms (μ = 100/s).
const MEAN_INTERARRIVAL: Duration = Duration::from_micros(12_500);
const MEAN_SERVICE: Duration = Duration::from_micros(10_000);
/// Customers waiting at t = 0: the initial transient.
const BACKLOG: usize = 40;
/// Customers served per replication.
const CUSTOMERS: usize = 20_000;

/// Wq = ρ/(μ − λ) = 0.8 / (100/s − 80/s) = 40 ms.
const ANALYTIC_WQ_MS: f64 = 40.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Arrival,
    Departure,
}

/// One replication: the waiting time (ms) of each customer in the order
/// service begins, plus the time-average number in system.
fn replicate(streams: Streams) -> ReplicationOutput {
    let mut arrivals = streams.stream("arrivals");
    let mut service = streams.stream("service");
    let mut fel = EventQueue::new();
    let mut waiting: VecDeque<Instant> = (0..BACKLOG).map(|_| Instant::ZERO).collect();
    let mut waits = Vec::with_capacity(CUSTOMERS);
    let mut busy = true; // the departure at t = 0 starts serving the backlog
    fel.schedule(Instant::ZERO, Event::Departure).unwrap();
    fel.schedule_after(
        arrivals.exponential_duration(MEAN_INTERARRIVAL),
        Event::Arrival,
    );

    while waits.len() < CUSTOMERS {
        let (now, event) = fel.pop().expect("arrivals never stop");
        match event {
            Event::Arrival => {
                waiting.push_back(now);
                fel.schedule_after(
                    arrivals.exponential_duration(MEAN_INTERARRIVAL),
                    Event::Arrival,
                );
                if !busy {
                    fel.schedule(now, Event::Departure).unwrap();
                    busy = true;
                }
            }
            // A departure frees the server; the next customer starts now.
            Event::Departure => match waiting.pop_front() {
                Some(arrived) => {
                    let wait = now - arrived;
                    waits.push(wait.as_secs_f64() * 1e3);
                    fel.schedule_after(
                        service.exponential_duration(MEAN_SERVICE),
                        Event::Departure,
                    );
                    busy = true;
                }
                None => busy = false,
            },
        }
    }
    let raw_mean = waits.iter().sum::<f64>() / waits.len() as f64;
    let mut out = ReplicationOutput::new();
    out.series(WAIT_MS, waits).value(WAIT_MS_UNCUT, raw_mean);
    out
}

#[test]
fn mm1_mean_wait_ci_covers_the_analytic_value() {
    let report = Runner::new(0x4c49_4e4b, 20).run(replicate);
    println!("{report}");
    let ci = report.ci(WAIT_MS).unwrap();
    println!(
        "M/M/1 ρ = 0.8: Wq analytic {ANALYTIC_WQ_MS} ms, simulated {ci}; \
         relative precision {:.2}%",
        ci.relative_precision * 100.0
    );
    assert_eq!(ci.n, 20);
    assert!(ci.contains(ANALYTIC_WQ_MS), "{ci} misses {ANALYTIC_WQ_MS}");
    assert!(ci.relative_precision < 0.1, "{ci}");

    let wait = &report.metrics[&WAIT_MS];
    let mean_cut = wait.cuts.iter().map(|c| c.cut).sum::<usize>() / wait.cuts.len();
    assert!(
        mean_cut >= BACKLOG,
        "MSER-5 kept the backlog: cut {mean_cut}"
    );
    assert_eq!(wait.cuts_at_limit(), 0);
    // Deleting the warm-up lowers the estimate in every replication.
    let uncut = &report.metrics[&WAIT_MS_UNCUT].estimates;
    assert!(wait.estimates.iter().zip(uncut).all(|(cut, raw)| cut < raw));
    // And here the bias is large enough that the uncut interval misses.
    let biased = report.ci(WAIT_MS_UNCUT).unwrap();
    assert!(!biased.contains(ANALYTIC_WQ_MS), "{biased}");
}

#[test]
fn mm1_is_reproducible_from_the_seed() {
    let runner = Runner::new(99, 3);
    let a = runner.run(replicate);
    let b = runner.run(replicate);
    assert_eq!(a, b);
    assert_eq!(
        a.metrics[&WAIT_MS].estimates[2].to_bits(),
        b.metrics[&WAIT_MS].estimates[2].to_bits()
    );
    assert_ne!(a, Runner::new(100, 3).run(replicate));
}
