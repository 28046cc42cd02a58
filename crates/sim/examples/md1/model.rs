//! The M/D/1 queue in event-scheduling style: Poisson arrivals, one server,
//! a deterministic service time D, FIFO. It exercises nothing but the kernel
//! (an [`EventQueue`] of arrival and departure events, a [`Stream`] for the
//! interarrival times, a [`Tally`] of waiting times), so its event rate is
//! the kernel's own.
//!
//! Its mean wait in queue is known in closed form (the Pollaczek-Khinchine
//! formula with zero service variance; e.g. Kleinrock, *Queueing Systems*
//! vol. 1, §5.6): Wq = ρ·D / (2(1 − ρ)), ρ = D / (mean interarrival time).
//!
//! Shared by the `md1` example, the `kernel` benchmark and the
//! `md1_pollaczek_khinchine` test; `bench/md1_simpy.py` is the same model
//! in SimPy and counts events the same way.

use std::collections::VecDeque;
use std::time::Duration;

use linklab_core::{Instant, Stream, Streams};
use linklab_sim::{EventQueue, Tally};

/// The parameters of one M/D/1 run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Md1 {
    /// Mean of the exponential interarrival times, 1/λ.
    pub mean_interarrival: Duration,
    /// The service time D of every customer.
    pub service: Duration,
    /// Customers generated; the run ends when the last one departs.
    pub customers: u64,
}

impl Md1 {
    /// ρ = 0.8 with D = 1 ms (λ = 800/s): the benchmark's operating point.
    pub fn rho_0_8(customers: u64) -> Md1 {
        Md1 {
            mean_interarrival: Duration::from_micros(1_250),
            service: Duration::from_micros(1_000),
            customers,
        }
    }

    /// The offered load ρ = λ·D.
    pub fn rho(&self) -> f64 {
        self.service.as_secs_f64() / self.mean_interarrival.as_secs_f64()
    }

    /// The Pollaczek-Khinchine mean wait in queue ρ·D / (2(1 − ρ)), in µs.
    pub fn pollaczek_khinchine_wait_us(&self) -> f64 {
        let rho = self.rho();
        rho * self.service.as_secs_f64() * 1e6 / (2.0 * (1.0 - rho))
    }
}

/// What one run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Md1Outcome {
    /// Events popped from the queue: one arrival and one departure per
    /// customer, so exactly 2 × customers.
    pub events: u64,
    /// Waiting time in queue (arrival to start of service) of every
    /// customer, in µs.
    pub waits_us: Tally,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Arrival,
    Departure,
}

/// Simulates `model` with the interarrival times of the stream `"arrivals"`
/// of `streams`, from an empty system until the last customer departs.
pub fn simulate(model: &Md1, streams: Streams) -> Md1Outcome {
    let mut arrivals: Stream = streams.stream("arrivals");
    let mut fel = EventQueue::new();
    let mut waiting: VecDeque<Instant> = VecDeque::new();
    let mut waits_us = Tally::new();
    let mut busy = false;
    let mut generated = 0u64;
    let mut events = 0u64;

    if model.customers > 0 {
        fel.schedule_after(
            arrivals.exponential_duration(model.mean_interarrival),
            Event::Arrival,
        );
        generated = 1;
    }
    while let Some((now, event)) = fel.pop() {
        events += 1;
        match event {
            Event::Arrival => {
                if generated < model.customers {
                    fel.schedule_after(
                        arrivals.exponential_duration(model.mean_interarrival),
                        Event::Arrival,
                    );
                    generated += 1;
                }
                if busy {
                    waiting.push_back(now);
                } else {
                    waits_us.add(0.0);
                    fel.schedule_after(model.service, Event::Departure);
                    busy = true;
                }
            }
            // The departing customer frees the server for the head of line.
            Event::Departure => match waiting.pop_front() {
                Some(arrived) => {
                    waits_us.add((now.as_micros() - arrived.as_micros()) as f64);
                    fel.schedule_after(model.service, Event::Departure);
                }
                None => busy = false,
            },
        }
    }
    Md1Outcome { events, waits_us }
}
