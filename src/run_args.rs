//! The options every simulated run takes (`reproduce`, `sim`): how much to
//! run, the seed, and how many threads share the work.

use std::num::NonZeroUsize;

use clap::Args;
use linklab_scenario::report::RunOptions;

/// `--quick`, `--seed`, `--jobs`.
#[derive(Args)]
pub struct RunArgs {
    /// A reduced run: fewer replications and points (for CI); the checks
    /// stay the same.
    #[arg(long)]
    quick: bool,
    /// Master seed of every random stream.
    #[arg(long, default_value_t = RunOptions::default().seed)]
    seed: u64,
    /// Threads to use [default: every core]. Results do not depend on it.
    #[arg(long, short = 'j')]
    jobs: Option<NonZeroUsize>,
}

impl RunArgs {
    /// The run options these arguments ask for.
    pub fn options(&self) -> RunOptions {
        RunOptions {
            quick: self.quick,
            seed: self.seed,
            jobs: self.jobs.unwrap_or_else(linklab_sim::available_threads),
        }
    }
}
