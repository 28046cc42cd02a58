//! Events per second of the simulation kernel on an M/D/1 queue, and the
//! mean wait against Pollaczek-Khinchine (see `model.rs`).
//!
//! ```text
//! cargo run --release -p linklab-sim --example md1 -- [CUSTOMERS] [RUNS]
//! ```
//!
//! CUSTOMERS defaults to 1,000,000 (2,000,000 events) and RUNS to 5; every
//! run uses the same seed, and the median wall time is reported, so one
//! descheduling by a busy machine does not decide the figure.
//! `bench/kernel.sh` runs this beside the same model in SimPy.

mod model;

use std::process::ExitCode;
use std::time::Instant as WallClock;

use linklab_core::Streams;
use model::{simulate, Md1};

/// The master seed of every run ("LINK").
const SEED: u64 = 0x4c49_4e4b;

fn parse_arg(args: &[String], index: usize, name: &str, default: u64) -> Result<u64, String> {
    match args.get(index) {
        None => Ok(default),
        Some(text) => match text.replace('_', "").parse::<u64>() {
            Ok(value) if value > 0 => Ok(value),
            _ => Err(format!(
                "{name} must be a positive integer, got {text:?} \
                 (usage: md1 [CUSTOMERS] [RUNS])"
            )),
        },
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (customers, runs) = match (
        parse_arg(&args, 0, "CUSTOMERS", 1_000_000),
        parse_arg(&args, 1, "RUNS", 5),
    ) {
        (Ok(customers), Ok(runs)) if args.len() <= 2 => (customers, runs),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("md1: {e}");
            return ExitCode::from(2);
        }
        _ => {
            eprintln!("md1: too many arguments (usage: md1 [CUSTOMERS] [RUNS])");
            return ExitCode::from(2);
        }
    };

    let model = Md1::rho_0_8(customers);
    let mut seconds = Vec::new();
    let mut outcome = None;
    for _ in 0..runs {
        let start = WallClock::now();
        let run = simulate(&model, Streams::new(SEED));
        seconds.push(start.elapsed().as_secs_f64());
        outcome = Some(run);
    }
    let Some(outcome) = outcome else {
        return ExitCode::FAILURE;
    };
    seconds.sort_by(f64::total_cmp);
    let median = seconds[seconds.len() / 2];
    let mean_wait = outcome.waits_us.mean().unwrap_or(f64::NAN);

    println!(
        "model         M/D/1, rho = {}, D = {} us, {} customers, median of {} runs",
        model.rho(),
        model.service.as_micros(),
        customers,
        runs
    );
    println!("engine        linklab-sim EventQueue");
    println!("events        {}", outcome.events);
    println!("seconds       {median:.4}");
    println!("events/s      {:.0}", outcome.events as f64 / median);
    println!(
        "mean wait     {mean_wait:.1} us (Pollaczek-Khinchine {:.1} us)",
        model.pollaczek_khinchine_wait_us()
    );
    ExitCode::SUCCESS
}
