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
    if args.file.is_none() {
        eprintln!("{}", TimingCost::of(args.bitrate, &kiss(&args)?));
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

/// What the KISS timings cost a transfer on a channel of the options, said
/// at start so that a fast channel carrying little is not a mystery: each
/// transmission waits for a slot, keys the transmitter TXDELAY before its
/// first frame and holds it TXTAIL after its last (KISS, Chepponis and
/// Karn 1987, commands 1-4), whatever the bit rate.
struct TimingCost {
    bit_rate: u32,
    kiss: StationConfig,
}

impl TimingCost {
    /// `linklab send`'s window k and N1: the transfer the estimate is of.
    const WINDOW: u64 = 4;
    const N1: u64 = 256;
    /// Octets on the line of an I frame with a full information field
    /// and of an RR, between two stations without digipeaters: two
    /// addresses (14), control, PID (I frames only), FCS (2) and a closing
    /// flag (AX.25 v2.2 sections 3.1-3.8; bit stuffing not counted).
    const I_FRAME_OCTETS: u64 = 14 + 1 + 1 + Self::N1 + 2 + 1;
    const RR_OCTETS: u64 = 14 + 1 + 2 + 1;

    fn of(bit_rate: u32, kiss: &StationConfig) -> TimingCost {
        TimingCost {
            bit_rate,
            kiss: *kiss,
        }
    }

    /// The mean wait for a slot on a free channel, T·(1/q − 1/2) with
    /// q = (P + 1)/256 (the channel model's free-running slot clock,
    /// `linklab_channel::radio`).
    fn access_wait(&self) -> Duration {
        let q = self.kiss.transmit_probability();
        self.kiss.slot_time.mul_f64(1.0 / q - 0.5)
    }

    /// What each transmission costs beyond its frames.
    fn per_transmission(&self) -> Duration {
        self.access_wait() + self.kiss.txdelay + self.kiss.txtail
    }

    /// Information bits per second of a one-way transfer in which each
    /// window of [`Self::WINDOW`] full I frames goes in one transmission
    /// and one RR answers it in another (AX.25 v2.2 section 6.4.1; an
    /// opening flag starts each transmission).
    fn throughput_bps(&self) -> f64 {
        let octets = 1 + Self::WINDOW * Self::I_FRAME_OCTETS + 1 + Self::RR_OCTETS;
        let line = octets as f64 * 8.0 / f64::from(self.bit_rate.max(1));
        let window = 2.0 * self.per_transmission().as_secs_f64() + line;
        (Self::WINDOW * Self::N1 * 8) as f64 / window
    }
}

impl std::fmt::Display for TimingCost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Duration| d.as_millis();
        let bps = self.throughput_bps();
        let rate = if bps >= 1000.0 {
            format!("{:.1} kbit/s", bps / 1000.0)
        } else {
            format!("{bps:.0} bit/s")
        };
        write!(
            f,
            "KISS timings: each transmission waits about {} ms for a slot (P {}, SLOTTIME {} ms), \
             keys TXDELAY {} ms before its frames and TXTAIL {} ms after them: {} ms per \
             transmission. A transfer of k = {} frames of {} octets per transmission, each \
             answered by an RR, carries at most about {rate} at {} bit/s ({:.1}% of it); \
             --txdelay-ms, --txtail-ms, --slot-ms and --persist set other timings (a host's \
             KISS commands change its own station's).",
            ms(self.access_wait()),
            self.kiss.persistence,
            ms(self.kiss.slot_time),
            ms(self.kiss.txdelay),
            ms(self.kiss.txtail),
            ms(self.per_transmission()),
            Self::WINDOW,
            Self::N1,
            self.bit_rate,
            100.0 * bps / f64::from(self.bit_rate.max(1)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_timings_name_what_a_megabit_channel_carries() {
        // The case: 1 Mbit/s with the default KISS timings carried
        // 5.6 kbit/s and nothing said why.
        let cost = TimingCost::of(1_000_000, &default_kiss());
        assert_eq!(cost.access_wait(), Duration::from_millis(350));
        assert_eq!(cost.per_transmission(), Duration::from_millis(750));
        // 8192 bits in 2 × 0.75 s and 8960 bits at 1 Mbit/s.
        assert!((cost.throughput_bps() - 8192.0 / 1.50896).abs() < 0.01);
        let text = cost.to_string();
        assert!(text.contains("TXDELAY 300 ms"), "{text}");
        assert!(text.contains("750 ms per transmission"), "{text}");
        assert!(
            text.contains("at most about 5.4 kbit/s at 1000000 bit/s (0.5% of it)"),
            "{text}"
        );
    }

    #[test]
    fn shorter_timings_carry_more() {
        let mut kiss = default_kiss();
        kiss.txdelay = Duration::from_millis(10);
        kiss.txtail = Duration::ZERO;
        kiss.persistence = 255;
        kiss.slot_time = Duration::from_millis(10);
        let fast = TimingCost::of(1_000_000, &kiss);
        assert_eq!(fast.per_transmission(), Duration::from_millis(15));
        assert!(fast.throughput_bps() > 200_000.0, "{fast}");
        let slow = TimingCost::of(1200, &default_kiss());
        assert!(slow.to_string().contains(" bit/s at 1200 bit/s"), "{slow}");
    }
}
