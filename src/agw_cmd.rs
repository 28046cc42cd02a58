//! `linklab agw`: an AGWPE server ([`linklab_agw`]) on one or more KISS
//! TNCs, so packet applications that speak AGWPE (terminals, APRS and
//! Winlink clients) run on linklab's AX.25.

use std::net::SocketAddr;

use anyhow::Context;
use clap::Args;
use linklab_agw::PortConfig;
use linklab_io::KissAddress;
use linklab_station::config::{PortSpec, StationConfig};
use linklab_station::{driver, Repeats};
use linklab_wire::ax25::Address;

use crate::options::{LinkArgs, TncArgs};
use crate::runtime::block_on;
use crate::usage::usage;

/// Links a local callsign keeps on one port.
const MAX_LINKS: usize = 64;

#[derive(Args)]
pub struct AgwArgs {
    /// A KISS TNC, one AGWPE radio port each, in order (Port1, Port2,
    /// ...): tcp:HOST:PORT, serial:DEVICE:BAUD or axudp:BIND@PEER.
    /// Repeat for more ports.
    #[arg(long, value_name = "ADDRESS", required_unless_present = "config")]
    kiss: Vec<KissAddress>,
    /// More radio ports, each with settings of its own: a TOML file of
    /// `[[port]]` tables whose keys are this command's port options
    /// without the dashes (`kiss = "tcp:127.0.0.1:8002"`, `window = 7`,
    /// `mod128 = true`, `t1-ms = 2000`, ...). Its ports follow those of
    /// --kiss; each takes its settings from its own table alone.
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// Where AGWPE clients connect. The AGWPE protocol has no security
    /// worth the name: keep it on loopback unless the network is yours.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8000")]
    listen: SocketAddr,
    /// A callsign this station answers for on every port: a connection
    /// request to it while no client has registered it is refused with
    /// DM, as by a station whose application is not running. Frames to
    /// other unregistered callsigns are other stations' traffic and are
    /// left alone. Repeat for more.
    #[arg(long, value_name = "CALL")]
    mycall: Vec<Address>,
    /// Also share the TNCs with KISS clients (APRS programs, another
    /// stack) on this address: KISS port N is radio port N+1; frames from
    /// either side are seen by the other.
    #[arg(long, value_name = "ADDR:PORT")]
    kiss_server: Option<SocketAddr>,
    /// Connect out with SABME (AX.25 v2.2, modulo 128) instead of SABM;
    /// incoming links take whichever the caller asks for.
    #[arg(long)]
    mod128: bool,
    #[command(flatten)]
    link: LinkArgs,
    #[command(flatten)]
    tnc: TncArgs,
}

/// A `[[port]]` table of the `--config` file, read with the command
/// line's own option names, checks and messages.
#[derive(clap::Parser)]
#[command(no_binary_name = true, disable_help_flag = true)]
struct PortTable {
    #[arg(long)]
    kiss: KissAddress,
    #[arg(long)]
    mod128: bool,
    #[command(flatten)]
    link: LinkArgs,
    #[command(flatten)]
    tnc: TncArgs,
}

/// The port of `address` with these settings.
fn port(
    address: &KissAddress,
    mod128: bool,
    link: &LinkArgs,
    tnc: &TncArgs,
    answer_for: &[Address],
) -> anyhow::Result<PortConfig> {
    Ok(PortConfig {
        description: format!("linklab AX.25 on KISS {address}"),
        kiss: tnc.params()?,
        link: link.config(crate::modulus(mod128), tnc.bitrate)?,
        answer_for: answer_for.to_vec(),
        max_links: MAX_LINKS,
        bit_rate: tnc.bitrate,
        ackmode: tnc.ackmode(),
    })
}

/// The ports of a `--config` file: its `[[port]]` tables in order.
fn file_ports(
    path: &std::path::Path,
    answer_for: &[Address],
) -> anyhow::Result<Vec<(KissAddress, PortConfig)>> {
    let name = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| usage(format!("--config: cannot read {name}: {e}")))?;
    let mut doc: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| usage(format!("{name}: {}", e.to_string().trim_end())))?;
    let tables = match doc.remove("port") {
        Some(toml::Value::Array(tables)) => tables,
        Some(_) => {
            return Err(usage(format!(
                "{name}: `port` must be an array of tables: [[port]]"
            )))
        }
        None => Vec::new(),
    };
    if let Some(key) = doc.keys().next() {
        return Err(usage(format!(
            "{name}: unknown key `{key}` (only [[port]] tables are read)"
        )));
    }
    let mut ports = Vec::new();
    for (i, table) in tables.iter().enumerate() {
        let at = format!("{name}: port table {}", i + 1);
        let toml::Value::Table(table) = table else {
            return Err(usage(format!("{at}: not a table")));
        };
        let mut argv = Vec::new();
        for (key, value) in table {
            let option = format!("--{key}");
            match value {
                toml::Value::Boolean(true) => argv.push(option),
                // The one switch that is on unless turned off.
                toml::Value::Boolean(false) if key == "poll-last" => {
                    argv.push(format!("{option}=false"))
                }
                toml::Value::Boolean(false) => {}
                toml::Value::Integer(n) => argv.extend([option, n.to_string()]),
                toml::Value::Float(x) => argv.extend([option, x.to_string()]),
                toml::Value::String(text) => argv.extend([option, text.clone()]),
                _ => {
                    return Err(usage(format!(
                        "{at}: `{key}` must be a number, a string or a boolean"
                    )))
                }
            }
        }
        let parsed = <PortTable as clap::Parser>::try_parse_from(&argv).map_err(|e| {
            let text = e.to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ")
                .to_string();
            usage(format!("{at}: {first}"))
        })?;
        if parsed.tnc.monitor {
            return Err(usage(format!(
                "{at}: `monitor` is for the command line (it logs every port)"
            )));
        }
        let config = port(
            &parsed.kiss,
            parsed.mod128,
            &parsed.link,
            &parsed.tnc,
            answer_for,
        )
        .map_err(|e| usage(format!("{at}: {e}")))?;
        ports.push((parsed.kiss, config));
    }
    Ok(ports)
}

pub fn run(args: AgwArgs) -> anyhow::Result<()> {
    if args.kiss.is_empty() {
        if let Some(option) = args.link.first_given().or(args.tnc.first_given()) {
            return Err(usage(format!(
                "{option} sets the ports of --kiss; for the ports of --config, \
                 set it in their [[port]] tables"
            )));
        }
    }
    let mut tncs: Vec<KissAddress> = Vec::new();
    let mut ports: Vec<PortConfig> = Vec::new();
    for address in &args.kiss {
        ports.push(port(
            address,
            args.mod128,
            &args.link,
            &args.tnc,
            &args.mycall,
        )?);
        tncs.push(address.clone());
    }
    if let Some(path) = &args.config {
        for (address, config) in file_ports(path, &args.mycall)? {
            tncs.push(address);
            ports.push(config);
        }
    }
    if ports.is_empty() {
        return Err(usage(
            "no radio port: give --kiss, or [[port]] tables in --config".into(),
        ));
    }
    if ports.len() > 255 {
        return Err(usage(format!(
            "{} radio ports given; AGWPE numbers at most 255",
            ports.len()
        )));
    }
    // A small station: its ports and its AGWPE (and KISS) server, no
    // services; unlike a station it will not start without every TNC.
    let config = StationConfig {
        callsign: None,
        control: None,
        status: None,
        log_frames: args.tnc.monitor,
        agw: Some(args.listen),
        kiss_server: args.kiss_server,
        ports: tncs
            .iter()
            .zip(ports)
            .enumerate()
            .map(|(i, (address, agw))| PortSpec {
                name: format!("port{}", i + 1),
                kiss: address.clone(),
                callsigns: agw.answer_for.clone(),
                agw,
                aliases: Vec::new(),
                digipeat: false,
                repeats: Repeats {
                    callsigns: Vec::new(),
                    rules: None,
                },
            })
            .collect(),
        services: Vec::new(),
        beacons: Vec::new(),
        tuns: Vec::new(),
        dtn: None,
        netrom: None,
    };
    let options = driver::Options {
        connect_at_start: true,
        ..driver::Options::default()
    };
    let ready = |bound: driver::Bound| {
        for (i, address) in tncs.iter().enumerate() {
            println!("agw port {}: kiss {address}", i + 1);
        }
        if let Some(agw) = bound.agw {
            println!("agw listening on {agw}");
        }
        if let Some(kiss) = bound.kiss {
            println!("agw kiss server on {kiss}");
        }
        println!("agw ready (Ctrl-C stops it, releasing every link)");
    };
    let log = |line: &str| eprintln!("agw: {line}");
    block_on(async move {
        driver::run(None, config, options, ready, log)
            .await
            .context("cannot start the AGWPE server")?;
        Ok(())
    })
}
