//! What a real-time emulation of Ronan, Long and Walsh's Table I channel
//! must reproduce: one replication of the simulated transfer of Tables II
//! and III (`linklab_scenario::ronan::compare`, replication r with the
//! streams `Streams::new(seed).replication(r)`), and the parameters and
//! random streams that fix it.
//!
//! Prints one JSON object:
//! - `seed`: the replication's master seed,
//!   `Streams::new(master_seed).replication(replication).master_seed()`.
//!   A channel built as `run_transfer` builds it from `Streams::new(seed)`
//!   (a `RadioChannel` named `radio`, so station i draws its persistence
//!   numbers from `radio/{i}/csma`, and the slot phases of
//!   `replication_stations`) is this replication's channel.
//! - `slot_phase_us`: `[sender, receiver]`, drawn from the stream
//!   `slot-phase` (for information: the seed fixes them).
//! - `simulated_s` (and `simulated_us`): this replication's transfer time.
//! - `mean_s`, `ci95_s`: mean and 95 % half-width over replications
//!   `0..replications` with the same master seed, as `compare` computes
//!   them (with the default seed and 20 replications, the `simulated_s`
//!   and `ci95_s` columns of `ronan-table-ii-simulated.csv` /
//!   `ronan-table-iii-simulated.csv` of `linklab reproduce`; `--quick`
//!   runs 5).
//! - `station`: the parameters of both stations and their AX.25 engines.
//!
//! # The span measured (the paper's `T_message`)
//! From the moment the whole message (7182 octets) is offered to the
//! sender's engine, one second after the link is up and the channel
//! quiet, to the moment the receiver's transmitter drops after the
//! transmission carrying the frame that acknowledged the last I frame:
//! the end of that transmission's TXTAIL (see the module documentation of
//! `linklab_scenario::transfer`). The sender polls on the last I frame of
//! each window and the receiver answers the poll at once with RR F = 1;
//! unpolled I frames are not acknowledged on their own.
//!
//! `cargo run --release -p linklab-scenario --example ronan_emulation_plan --
//!  --rate 9600 --window 7 [--seed S] [--replication R] [--replications N]`
//!
//! The seed defaults to `RunOptions::default().seed`, the replication to
//! 0 and the replications to 20.

use std::num::NonZeroUsize;

use linklab_core::Streams;
use linklab_scenario::report::RunOptions;
use linklab_scenario::transfer::{replication_stations, run_transfer, TransferConfig};

const USAGE: &str = "usage: ronan_emulation_plan --rate BIT_RATE --window K \
                     [--seed S] [--replication R] [--replications N]";

struct Args {
    rate: u32,
    window: u8,
    seed: u64,
    replication: u64,
    replications: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut rate = None;
    let mut window = None;
    let mut seed = RunOptions::default().seed;
    let mut replication = 0;
    let mut replications = 20;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let bad = |e: std::num::ParseIntError| format!("{flag} {value}: {e}\n{USAGE}");
        match flag.as_str() {
            "--rate" => rate = Some(value.parse().map_err(bad)?),
            "--window" => window = Some(value.parse().map_err(bad)?),
            "--seed" => seed = parse_u64(&value).map_err(bad)?,
            "--replication" => replication = value.parse().map_err(bad)?,
            "--replications" => replications = value.parse().map_err(bad)?,
            _ => return Err(format!("unknown argument {flag}\n{USAGE}")),
        }
    }
    Ok(Args {
        rate: rate.ok_or_else(|| format!("--rate is required\n{USAGE}"))?,
        window: window.ok_or_else(|| format!("--window is required\n{USAGE}"))?,
        seed,
        replication,
        replications,
    })
}

/// A seed in decimal or, with `0x`, in hexadecimal.
fn parse_u64(value: &str) -> Result<u64, std::num::ParseIntError> {
    match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => value.parse(),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let config = TransferConfig::ronan_table_1(args.rate, args.window);
    let streams = Streams::new(args.seed).replication(args.replication);
    let stations = replication_stations(&config, &streams);
    let outcome = run_transfer(&config, &streams)?;
    let threads = std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
    let all = linklab_scenario::compare(&config, args.replications, args.seed, threads)?;

    let ms = |d: core::time::Duration| d.as_secs_f64() * 1e3;
    let station = config.station;
    let plan = serde_json::json!({
        "master_seed": args.seed,
        "replication": args.replication,
        "seed": streams.master_seed(),
        "slot_phase_us": stations.map(|s| s.slot_phase.as_micros() as u64),
        "simulated_s": outcome.transfer.as_secs_f64(),
        "simulated_us": outcome.transfer.as_micros() as u64,
        "replications": args.replications,
        "mean_s": all.simulated.mean,
        "ci95_s": all.simulated.half_width,
        "station": {
            "bit_rate": config.bit_rate,
            "txdelay_ms": ms(station.txdelay),
            "slot_ms": ms(station.slot_time),
            "txtail_ms": ms(station.txtail),
            "persistence": station.persistence,
            "n1": config.n1,
            "window": config.window,
            "message_octets": config.message_octets,
            "t1_ms": ms(config.stack.t1),
            "t2_ms": ms(config.stack.t2),
            "ack_policy": format!("{:?}", config.stack.ack_policy),
        },
    });
    println!("{plan}");
    Ok(())
}
