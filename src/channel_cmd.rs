//! `linklab channel`: a real-time emulated radio channel that any KISS
//! software can join ([`linklab_emu`]): one KISS TCP port (and on request
//! a pseudo-terminal) per station, the simulator's half-duplex CSMA radio
//! model between them, run against the wall clock.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use linklab_channel::{ErrorModel, StationConfig};
use linklab_emu::config::PtyPlan;
use linklab_emu::{default_kiss, Options, Plan, Server};
use linklab_wire::ax25::Address;

use crate::sim_cmd::InputError;
use crate::usage::usage;

#[derive(Args)]
pub struct ChannelArgs {
    /// A channel file (TOML: channels, stations, who hears whom, bit
    /// errors per link, TNC models; see docs/channel.md). Without one, the
    /// options below describe one channel of --stations stations.
    #[arg(value_name = "FILE", conflicts_with_all = ["stations", "base_port", "bitrate", "txdelay_ms", "persist", "slot_ms", "txtail_ms", "ber"])]
    file: Option<PathBuf>,
    /// Stations on the channel, named s0, s1, ...
    #[arg(long, value_name = "N", default_value_t = 2)]
    stations: usize,
    /// KISS TCP port of station s0; s1 gets the next, and so on (0: any
    /// free ports, printed at start).
    #[arg(long, value_name = "PORT", default_value_t = 8001)]
    base_port: u16,
    /// The channel's bit rate, bit/s.
    #[arg(long, value_name = "BPS", default_value_t = 1200)]
    bitrate: u32,
    /// Each radio's TXDELAY until its host sends one, in ms [default: 300].
    #[arg(long, value_name = "MS")]
    txdelay_ms: Option<u64>,
    /// Each radio's persistence P (0-255) until its host sends one
    /// [default: 63].
    #[arg(long, value_name = "P")]
    persist: Option<u8>,
    /// Each radio's SLOTTIME until its host sends one, in ms [default: 100].
    #[arg(long, value_name = "MS")]
    slot_ms: Option<u64>,
    /// Each radio's TXTAIL until its host sends one, in ms [default: 100].
    #[arg(long, value_name = "MS")]
    txtail_ms: Option<u64>,
    /// Independent bit errors at every receiver, probability per bit.
    #[arg(long, value_name = "P")]
    ber: Option<f64>,
    /// Give every station a pseudo-terminal too (for software that speaks
    /// KISS only over a serial line); its path is printed at start.
    #[arg(long)]
    pty: bool,
    /// Address the KISS TCP ports listen on (overrides the file's).
    #[arg(long, value_name = "ADDR")]
    bind: Option<std::net::IpAddr>,
    /// Master seed of every random stream (overrides the file's).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Print every frame on the air, and who lost it and why.
    #[arg(long)]
    monitor: bool,
    /// Write every frame on the air to a pcap file (AX.25), stamped with
    /// the time its last bit left the air.
    #[arg(long, value_name = "FILE")]
    capture: Option<PathBuf>,
    /// Write the statistics as JSON to FILE at exit (they are printed as
    /// text at exit, and on SIGUSR1).
    #[arg(long, value_name = "FILE")]
    stats_json: Option<PathBuf>,
    /// Make station STATION (s0, s1, ... or a name in the file) a
    /// digipeater for CALL, as a TNC with DIGIPEAT ON: it repeats every
    /// frame whose next digipeater is CALL, with that digipeater's H bit
    /// set (repeat for more stations).
    #[arg(long = "digipeater", value_name = "STATION=CALL", value_parser = parse_digipeater)]
    digipeaters: Vec<(String, Address)>,
}

/// `--digipeater STATION=CALL`.
fn parse_digipeater(text: &str) -> Result<(String, Address), String> {
    let Some((station, call)) = text.split_once('=') else {
        return Err(format!("{text:?}: use STATION=CALL, e.g. s1=DIGI-1"));
    };
    let call = call.parse().map_err(|e| format!("{text:?}: {e}"))?;
    Ok((station.to_string(), call))
}

pub fn run(args: ChannelArgs) -> anyhow::Result<()> {
    let plan = plan(&args)?;
    if let Some(path) = &args.stats_json {
        crate::usage::check_out_file("--stats-json", path)?;
    }
    if let Some(path) = &args.capture {
        crate::usage::check_out_file("--capture", path)?;
    }
    let server = Server::bind(plan)?;
    for e in server.endpoints() {
        match &e.pty {
            Some(pty) => println!(
                "station {}: kiss tcp {}, pty {}",
                e.name,
                e.tcp,
                pty.display()
            ),
            None => println!("station {}: kiss tcp {}", e.name, e.tcp),
        }
    }
    let options = Options {
        monitor: args.monitor,
        capture: args.capture.clone(),
        // Written here, after the statistics are printed, so that a file
        // that cannot be written at exit loses nothing.
        stats_json: None,
        signals: true,
    };
    let report = server.run(&options, |_| {
        println!("channel ready (Ctrl-C stops it and prints the statistics)");
    })?;
    print!("{report}");
    if let Some(path) = &args.stats_json {
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, json + "\n").with_context(|| {
            format!(
                "--stats-json: cannot write {} (the statistics are printed above)",
                path.display()
            )
        })?;
    }
    Ok(())
}

/// The channel the arguments describe.
fn plan(args: &ChannelArgs) -> anyhow::Result<Plan> {
    let mut plan = match &args.file {
        Some(file) => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read {}", file.display()))
                .map_err(|e| anyhow::Error::new(InputError(crate::usage::message(&e))))?;
            Plan::from_toml(&text)
                .map_err(|e| anyhow::Error::new(InputError(format!("{}: {e}", file.display()))))?
        }
        None => {
            let kiss = kiss(args)?;
            let errors = match args.ber {
                None => ErrorModel::Perfect,
                Some(ber) if (0.0..=1.0).contains(&ber) => ErrorModel::Independent { ber },
                Some(ber) => {
                    return Err(usage(format!("--ber: {ber} is not a probability (0 to 1)")))
                }
            };
            let mut plan = Plan::simple(args.stations, args.base_port, args.bitrate, kiss, errors)
                .map_err(|e| usage(e.to_string()))?;
            if args.pty {
                for s in &mut plan.stations {
                    s.pty = Some(PtyPlan::Anonymous);
                }
            }
            plan
        }
    };
    if let Some(seed) = args.seed {
        plan.seed = seed;
    }
    if let Some(bind) = args.bind {
        plan.bind = bind;
    }
    for (station, call) in &args.digipeaters {
        plan.set_digipeater(station, *call)
            .map_err(|e| usage(format!("--digipeater {station}={call}: {e}")))?;
    }
    Ok(plan)
}

/// The KISS defaults from the options: times KISS can carry (0-2550 ms).
fn kiss(args: &ChannelArgs) -> anyhow::Result<StationConfig> {
    let mut kiss = default_kiss();
    let time = |ms: u64, option: &str| {
        if ms > 2550 {
            Err(usage(format!(
                "{option}: {ms} ms; KISS carries at most 2550 ms (255 units of 10 ms)"
            )))
        } else {
            Ok(Duration::from_millis(ms))
        }
    };
    if let Some(ms) = args.txdelay_ms {
        kiss.txdelay = time(ms, "--txdelay-ms")?;
    }
    if let Some(ms) = args.slot_ms {
        kiss.slot_time = time(ms, "--slot-ms")?;
    }
    if let Some(ms) = args.txtail_ms {
        kiss.txtail = time(ms, "--txtail-ms")?;
    }
    if let Some(p) = args.persist {
        kiss.persistence = p;
    }
    Ok(kiss)
}
