//! The discrete-event simulation layer of linklab (docs/architecture.md, `sim`).
//!
//! - [`queue`]: the event queue, a binary heap keyed by (virtual time,
//!   insertion sequence), so that runs are bit-for-bit repeatable.
//! - [`stats`]: output analysis: tallies, time-weighted averages, Student-t
//!   confidence intervals, MSER-5 warm-up detection.
//! - [`driver`]: the virtual-time loop of the sans-IO benches: settle,
//!   check the goal, wake the earliest component, with one verdict for
//!   stalls, livelocks and runs past their horizon.
//! - [`runner`]: the replication/deletion scenario runner that turns a
//!   closure simulating one replication into confidence intervals.
//! - [`parallel`]: the one way work is spread over threads, results in
//!   order whatever the thread count.
//!
//! Virtual time ([`linklab_core::Instant`]) and the seeded random streams
//! ([`linklab_core::Streams`]) come from `linklab-core`, shared with the
//! protocol engines. Nothing here reads a wall clock or does I/O.

pub mod driver;
pub mod parallel;
pub mod queue;
pub mod runner;
pub mod stats;

pub use driver::{drive, DriveError, World, MAX_STEPS_AT_ONE_INSTANT};
pub use parallel::{available_threads, cpu_time_of, map_ordered, try_map_ordered};
pub use queue::{EventId, EventQueue, ScheduleError};
pub use runner::{Metric, MetricSummary, Observation, ReplicationOutput, Report, Runner};
pub use stats::{ConfidenceInterval, MserCut, Tally, TimeWeighted};
