//! `linklab advise`: the best settings for a user's own link, their
//! predicted throughput, the gain over the Linux kernel's and Dire Wolf's
//! defaults, and which parameters matter.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use linklab_advise::{
    advise, Ack, Advice, AdviseError, Channel, Duplex, Ends, Fades, KissEnds, Limits, Link,
    LinkError, Modulo, SearchOptions, Settings, Simulated, Stack, Workload,
};

use crate::table::Table;
use crate::usage::usage;

/// `linklab advise`.
#[derive(Args)]
pub struct AdviseArgs {
    /// The link as JSON (as `linklab probe --json` writes it; fields in
    /// docs/advise.md) instead of the options below.
    #[arg(long, value_name = "FILE", conflicts_with_all = [
        "bitrate", "duplex", "stations", "load", "ber", "fades", "txdelay_ms", "txtail_ms", "tnc", "serial_bps",
        "host_latency_ms", "tnc_per_frame_ms", "tnc_per_octet_us", "tnc_buffer",
        "carrier_hold_ms", "size", "mod128", "n1_max", "line_tp_ms", "both_ways", "bundle", "stack",
    ])]
    link: Option<PathBuf>,
    /// Radio bit rate, bit/s.
    #[arg(long, value_name = "BPS", required_unless_present = "link")]
    bitrate: Option<u32>,
    /// One frequency for both directions (half) or one each (full).
    #[arg(long, value_enum, default_value_t = DuplexArg::Half)]
    duplex: DuplexArg,
    /// Stations on the channel, the two ends included: the others send
    /// 128-octet UI frames at random for --load of the time.
    #[arg(long, value_name = "N", default_value_t = 2)]
    stations: u32,
    /// The other stations' share of the channel's time (with --stations
    /// above 2).
    #[arg(long, value_name = "SHARE", default_value_t = 0.0)]
    load: f64,
    /// Bit-error probability of the channel.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    ber: f64,
    /// Fades instead of independent errors: a Gilbert-Elliott process,
    /// P_GB,P_BG,BER_GOOD,BER_BAD per bit (as in a channel file).
    #[arg(long, value_name = "P_GB,P_BG,BER_G,BER_B", conflicts_with = "ber")]
    fades: Option<String>,
    /// The radios' key-up delay TXDELAY, ms.
    #[arg(long, value_name = "MS", default_value_t = 300.0)]
    txdelay_ms: f64,
    /// TXTAIL, ms.
    #[arg(long, value_name = "MS", default_value_t = 100.0)]
    txtail_ms: f64,
    /// Firmware TNCs in terminal mode instead of a host stack and KISS
    /// TNC: one profile for both ends, or SENDER,RECIPIENT, e.g.
    /// tnc2-mfj, tnc2d-tf27, tnc3 (Zieliński's controllers; docs/advise.md
    /// lists them).
    #[arg(long, value_name = "PROFILE[,PROFILE]", value_delimiter = ',', num_args = 1..=2)]
    tnc: Option<Vec<String>>,
    /// A full-duplex line with this processing and propagation delay t_p
    /// (ms) instead of a radio channel: HDLC ABM or NRM at both ends, as
    /// Bux et al. compared them (50 terrestrial, 350 satellite).
    #[arg(long, value_name = "MS", conflicts_with = "tnc")]
    line_tp_ms: Option<f64>,
    /// Both stations send at once (lines only).
    #[arg(long)]
    both_ways: bool,
    /// The message as one DTN bundle over the AX.25 convergence layer,
    /// as Ronan et al. sent it: its ack_window is searched too (KISS
    /// ends).
    #[arg(long)]
    bundle: bool,
    /// KISS TNC: the fastest serial rate host and TNC support, bit/s.
    #[arg(
        long,
        value_name = "BPS",
        conflicts_with = "tnc",
        default_value_t = 9600
    )]
    serial_bps: u32,
    /// KISS TNC: the host's delay from stack to serial port and back, ms.
    #[arg(
        long,
        value_name = "MS",
        conflicts_with = "tnc",
        default_value_t = 10.0
    )]
    host_latency_ms: f64,
    /// KISS TNC: processing time per frame, ms.
    #[arg(
        long,
        value_name = "MS",
        conflicts_with = "tnc",
        default_value_t = 10.0
    )]
    tnc_per_frame_ms: f64,
    /// KISS TNC: processing time per octet, µs.
    #[arg(long, value_name = "US", conflicts_with = "tnc", default_value_t = 0.0)]
    tnc_per_octet_us: f64,
    /// KISS TNC: transmit buffer, octets.
    #[arg(
        long,
        value_name = "OCTETS",
        conflicts_with = "tnc",
        default_value_t = 8192
    )]
    tnc_buffer: usize,
    /// KISS TNC: how long after the other station unkeys it holds its
    /// frames (squelch tail, receive-to-transmit switch), ms.
    #[arg(
        long,
        value_name = "MS",
        conflicts_with = "tnc",
        default_value_t = 50.0
    )]
    carrier_hold_ms: f64,
    /// KISS ends: the AX.25 stack at both ends, the one advised: linklab,
    /// the Linux kernel's (both behind the KISS TNC), or Dire Wolf's own
    /// engine on its modem.
    #[arg(long, value_enum, conflicts_with_all = ["tnc", "line_tp_ms"], default_value_t = StackArg::Linklab)]
    stack: StackArg,
    /// The message to carry, octets.
    #[arg(long, value_name = "OCTETS", default_value_t = 16384)]
    size: usize,
    /// Both ends support modulo 128 (SABME): windows up to 127.
    #[arg(long)]
    mod128: bool,
    /// The largest N1 (PACLEN) both ends accept, octets.
    #[arg(long, value_name = "N", default_value_t = 256)]
    n1_max: usize,
    /// The settings in use now, to compare: K,N1,T1_MS,ACK,P,SLOT_MS with
    /// ACK `at-once` or a T2 in ms, e.g. 2,256,10000,3000,63,100.
    #[arg(long, value_name = "K,N1,T1,ACK,P,SLOT")]
    current: Option<String>,
    /// Print the advice as JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Master seed of the simulations.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Simulated transfers per setting.
    #[arg(long, value_name = "N", default_value_t = 10)]
    replications: u64,
    /// Threads [default: every core]. The advice does not depend on it.
    #[arg(long, short = 'j')]
    jobs: Option<NonZeroUsize>,
}

#[derive(Clone, Copy, ValueEnum)]
enum StackArg {
    Linklab,
    LinuxKernel,
    DireWolf,
}

#[derive(Clone, Copy, ValueEnum)]
enum DuplexArg {
    Half,
    Full,
}

impl AdviseArgs {
    /// `--fades P_GB,P_BG,BER_GOOD,BER_BAD`.
    fn fades(&self) -> anyhow::Result<Option<Fades>> {
        let Some(text) = &self.fades else {
            return Ok(None);
        };
        let v: Vec<f64> = text
            .split(',')
            .map(|f| f.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| fades_usage(text))?;
        let [p_good_to_bad, p_bad_to_good, ber_good, ber_bad] = v[..] else {
            return Err(fades_usage(text));
        };
        Ok(Some(Fades {
            p_good_to_bad,
            p_bad_to_good,
            ber_good,
            ber_bad,
        }))
    }

    /// The link the options or the file describe.
    fn link(&self) -> anyhow::Result<Link> {
        let mut link = match &self.link {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| usage(format!("--link: cannot read {}: {e}", path.display())))?;
                serde_json::from_str(&text).map_err(|e| {
                    usage(format!(
                        "--link: {} is not a link description: {e}",
                        path.display()
                    ))
                })?
            }
            None => Link {
                channel: Channel {
                    bit_rate: self.bitrate.unwrap_or_default(),
                    duplex: match self.duplex {
                        DuplexArg::Half => Duplex::Half,
                        DuplexArg::Full => Duplex::Full,
                    },
                    stations: self.stations,
                    load: self.load,
                    ber: self.ber,
                    fades: self.fades()?,
                    txdelay_ms: self.txdelay_ms,
                    txtail_ms: self.txtail_ms,
                },
                ends: match (&self.tnc, self.line_tp_ms) {
                    (Some(names), _) => Ends::Tnc {
                        sender: names[0].clone(),
                        recipient: names.last().unwrap_or(&names[0]).clone(),
                    },
                    (None, Some(t_p_ms)) => Ends::Line { t_p_ms },
                    (None, None) => Ends::Kiss(KissEnds {
                        serial_bps: self.serial_bps,
                        host_latency_ms: self.host_latency_ms,
                        tnc_per_frame_ms: self.tnc_per_frame_ms,
                        tnc_per_octet_us: self.tnc_per_octet_us,
                        tnc_buffer_octets: self.tnc_buffer,
                        carrier_hold_ms: self.carrier_hold_ms,
                        stack: match self.stack {
                            StackArg::Linklab => Stack::Linklab,
                            StackArg::LinuxKernel => Stack::LinuxKernel,
                            StackArg::DireWolf => Stack::DireWolf,
                        },
                    }),
                },
                workload: Workload {
                    message_octets: self.size,
                    both_ways: self.both_ways,
                    bundle: self.bundle,
                },
                limits: Limits {
                    modulo: if self.mod128 {
                        Modulo::OneTwentyEight
                    } else {
                        Modulo::Eight
                    },
                    n1_max: self.n1_max,
                },
                current: None,
                probe: None,
            },
        };
        if let Some(current) = &self.current {
            link.current = Some(parse_current(current, &link)?);
        }
        link.validate()
            .map_err(|e| link_error(&e, self.link.as_deref()))?;
        Ok(link)
    }
}

/// The most simulated transfers per setting: every run of every setting
/// is planned in memory, so an absurd count is refused rather than
/// aborting on a failed allocation.
const MAX_REPLICATIONS: u64 = 1000;

/// `K,N1,T1_MS,ACK,P,SLOT_MS`.
fn parse_current(text: &str, link: &Link) -> anyhow::Result<Settings> {
    let fields: Vec<&str> = text.split(',').map(str::trim).collect();
    let [k, n1, t1, ack, p, slot] = fields[..] else {
        return Err(usage(format!(
            "--current {text:?}: give six fields K,N1,T1_MS,ACK,P,SLOT_MS, e.g. 2,256,10000,at-once,63,100"
        )));
    };
    let num = |name: &str, v: &str| -> anyhow::Result<u32> {
        v.parse()
            .map_err(|_| usage(format!("--current: {name} {v:?} is not a whole number")))
    };
    let ack = match ack {
        "at-once" => Ack::AtOnce,
        t2 => Ack::AfterT2 {
            t2_ms: num("ACK (at-once or T2 in ms)", t2)?,
        },
    };
    Ok(Settings {
        procedure: Default::default(),
        window: u8::try_from(num("K", k)?)
            .map_err(|_| usage("--current: K is at most 127".into()))?,
        n1: num("N1", n1)? as usize,
        t1_ms: num("T1_MS", t1)?,
        ack,
        persistence: u8::try_from(num("P", p)?)
            .map_err(|_| usage("--current: P is 0-255".into()))?,
        slot_ms: num("SLOT_MS", slot)?,
        serial_bps: link.serial_max_bps(),
        ack_window: linklab_advise::settings::default_ack_window(),
        stack: link.stack(),
    })
}

pub fn run(args: AdviseArgs) -> anyhow::Result<()> {
    if !(2..=MAX_REPLICATIONS).contains(&args.replications) {
        return Err(usage(format!(
            "--replications {}: give 2-{MAX_REPLICATIONS} (at least 2 for a confidence interval)",
            args.replications
        )));
    }
    let link = args.link()?;
    let options = SearchOptions {
        seed: args.seed,
        replications: args.replications,
        threads: args.jobs.unwrap_or_else(linklab_sim::available_threads),
        ..SearchOptions::default()
    };
    let advice = advise(&link, options).map_err(|e| match e {
        AdviseError::Link(e) => link_error(&e, args.link.as_deref()),
        AdviseError::Replications(_) => usage(format!("--replications: {e}")),
        AdviseError::Simulation(_) => anyhow::Error::new(e),
    })?;
    let best = &advice.best.simulated;
    if best.cut == best.replications {
        // Settings that fail in every run are no advice: none is printed.
        anyhow::bail!(
            "no setting carries the message over this link: of the {} simulated, the best ({}) \
             fails in {} of {} runs",
            advice.simulated,
            advice.best.settings.describe(&advice.link),
            best.cut,
            best.replications
        );
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&advice)?);
    } else {
        print!("{}", text(&advice));
    }
    Ok(())
}

/// `--fades TEXT` that is not four numbers.
fn fades_usage(text: &str) -> anyhow::Error {
    usage(format!(
        "--fades {text:?}: give four numbers P_GB,P_BG,BER_GOOD,BER_BAD"
    ))
}

/// A [`LinkError`] as a usage error: naming the field of the `--link`
/// file, or the command-line option that set it.
fn link_error(e: &LinkError, file: Option<&Path>) -> anyhow::Error {
    let at = match file {
        Some(path) => format!("--link {}: {e}", path.display()),
        None => option_of(e),
    };
    usage(format!("cannot advise on this link: {at}"))
}

/// A [`LinkError`] with the command-line option of its field first.
fn option_of(e: &LinkError) -> String {
    let field = match e {
        LinkError::Field { field, .. } => *field,
        LinkError::Stations(_) => "channel.stations",
        LinkError::Profile(_) => "ends.tnc",
    };
    let option = match field {
        "channel.bit_rate" => "--bitrate",
        "channel.stations" => "--stations",
        "channel.load" => "--load",
        "channel.ber" => "--ber",
        f if f.starts_with("channel.fades") => "--fades",
        "channel.txdelay_ms" => "--txdelay-ms",
        "channel.txtail_ms" => "--txtail-ms",
        "workload.message_octets" => "--size",
        "workload.bundle" => "--bundle",
        "workload.both_ways" => "--both-ways",
        "limits.n1_max" => "--n1-max",
        "limits.modulo" => "--mod128",
        "ends.serial_bps" => "--serial-bps",
        "ends.host_latency_ms" => "--host-latency-ms",
        "ends.tnc_per_frame_ms" => "--tnc-per-frame-ms",
        "ends.tnc_per_octet_us" => "--tnc-per-octet-us",
        "ends.carrier_hold_ms" => "--carrier-hold-ms",
        "ends.tnc_buffer_octets" => "--tnc-buffer",
        "ends.t_p_ms" => "--line-tp-ms",
        "ends.tnc" => "--tnc",
        "current" => "--current",
        _ => return e.to_string(),
    };
    format!("{option} ({e})")
}

/// Throughput with its interval, or how many runs were cut.
fn throughput(s: &Simulated) -> String {
    if s.cut > 0 {
        format!("link fails in {} of {} runs", s.cut, s.replications)
    } else {
        format!("{:.0} ± {:.0} bit/s", s.throughput_bps, s.half_width_bps)
    }
}

fn describe(link: &Link) -> String {
    let c = &link.channel;
    let duplex = match c.duplex {
        Duplex::Half => "half duplex",
        Duplex::Full => "full duplex",
    };
    let errors = match (c.fades, c.ber) {
        (Some(f), _) => format!(
            "fades (Gilbert-Elliott: {:e} to bad, {:e} back, BER {:e} / {:e})",
            f.p_good_to_bad, f.p_bad_to_good, f.ber_good, f.ber_bad
        ),
        (None, ber) if ber > 0.0 => format!("bit errors {ber:e}"),
        (None, _) => "no bit errors".into(),
    };
    let ends = match &link.ends {
        Ends::Kiss(k) if k.stack == Stack::DireWolf => format!("{} at each end", k.stack),
        Ends::Kiss(k) => format!(
            "{} at each end (serial up to {} bit/s, host {} ms, TNC {} ms per frame, carrier hold {} ms)",
            k.stack, k.serial_bps, k.host_latency_ms, k.tnc_per_frame_ms, k.carrier_hold_ms
        ),
        Ends::Tnc { sender, recipient } => format!("firmware TNCs {sender} to {recipient}"),
        Ends::Line { t_p_ms } => {
            let flow = if link.workload.both_ways {
                "two-way"
            } else {
                "one-way"
            };
            return format!(
                "{} bit/s full-duplex line, t_p {t_p_ms} ms, {errors}; {flow} flow, saturated",
                c.bit_rate
            );
        }
    };
    let others = if c.stations > 2 {
        format!(
            ", {} other stations using {:.0}% of the time",
            c.stations - 2,
            100.0 * c.load
        )
    } else {
        String::new()
    };
    format!(
        "{} bit/s {duplex}{others}, {errors}, TXDELAY {} ms, TXTAIL {} ms; {ends}; {} octets one way",
        c.bit_rate, c.txdelay_ms, c.txtail_ms, link.workload.message_octets
    )
}

fn text(a: &Advice) -> String {
    let best = &a.best;
    let s = &best.settings;
    let mut out = format!("Link: {}\n\n", describe(&a.link));
    out += &format!("Best settings: {}\n", s.describe(&a.link));
    out += &format!(
        "  {} ({}% interval, {} runs; closed form {:.0} bit/s): {:.1} s for the message\n",
        throughput(&best.simulated),
        (linklab_advise::LEVEL * 100.0).round(),
        best.simulated.replications,
        best.model_bps,
        best.simulated.transfer_s
    );
    if !a.link.is_line() {
        out += &format!("  linklab:   {}\n", s.linklab_options(&a.link));
        out += &format!("  Dire Wolf: {}\n", s.direwolf_conf(&a.link));
    }
    out += "\n";

    let mut t = Table::new(["beside", "settings", "throughput", "advice gains"]);
    for c in &a.compared {
        t.row(vec![
            c.name.to_string(),
            c.rated.settings.describe(&a.link),
            throughput(&c.rated.simulated),
            c.gain.map_or("-".into(), |g| format!("{:+.0}%", 100.0 * g)),
        ]);
    }
    out += &format!("{t}\n");

    out += "What matters (each varied alone from the best, bit/s):\n";
    let mut t = Table::new(["parameter", "best", "verdict", "values tried"]);
    for p in &a.sensitivity {
        let values = p
            .variants
            .iter()
            .map(|v| {
                if v.simulated.cut > 0 {
                    format!("{}: fails", v.value)
                } else {
                    format!("{}: {:.0}", v.value, v.simulated.throughput_bps)
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        t.row(vec![
            p.parameter.to_string(),
            p.advised.clone(),
            p.verdict.to_string(),
            values,
        ]);
    }
    out += &format!("{t}");
    out += &format!(
        "\n{} settings estimated in closed form, {} simulated ({} transfers, seed {}).\n",
        a.modelled, a.simulated, a.runs, a.seed
    );
    out
}
