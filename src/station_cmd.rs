//! `linklab station`: the long-running service that owns the radio ports
//! ([`linklab_station`]), and `linklab status`, which asks a running one
//! over its control socket.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use linklab_station::status::{NetromStatus, StatusReport};
use linklab_station::{config, driver};
use tokio::io::AsyncReadExt;

use crate::runtime::block_on;
use crate::usage::usage;

/// Where the configuration is unless `--config` says.
const DEFAULT_CONFIG: &str = "/etc/linklab/station.toml";

/// Where the control socket is unless the file or `--control` says.
const DEFAULT_CONTROL: &str = "/run/linklab/station.sock";

#[derive(Args)]
pub struct StationArgs {
    /// The station's configuration file (docs/station.md).
    #[arg(long, value_name = "FILE", default_value = DEFAULT_CONFIG)]
    config: PathBuf,
    /// Check FILE and exit: 0 if the station would start with it, 2 with
    /// the first mistake (file:line:column: key: what) otherwise.
    #[arg(long, value_name = "FILE", conflicts_with = "config")]
    check: Option<PathBuf>,
}

#[derive(Args)]
pub struct StatusArgs {
    /// The station's control socket ([station] control in its file).
    #[arg(long, value_name = "PATH", default_value = DEFAULT_CONTROL)]
    control: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

pub fn station(args: StationArgs) -> anyhow::Result<()> {
    if let Some(path) = args.check {
        let config = config::load(&path).map_err(|e| usage(e.to_string()))?;
        println!(
            "{}: good: {} port{}, {} service{}, {} beacon{}, {} TUN device{}",
            path.display(),
            config.ports.len(),
            plural(config.ports.len()),
            config.services.len(),
            plural(config.services.len()),
            config.beacons.len(),
            plural(config.beacons.len()),
            config.tuns.len(),
            plural(config.tuns.len()),
        );
        if let Some(n) = &config.netrom {
            println!(
                "NET/ROM node {}:{} on {} port{}",
                n.node.alias.text(),
                n.node.call,
                n.ports.len(),
                plural(n.ports.len())
            );
        }
        return Ok(());
    }
    let path = args.config;
    let config = config::load(&path).map_err(|e| usage(e.to_string()))?;
    // Under systemd the journal stamps each line; by hand, so does the
    // terminal's scrollback, not this.
    let log = |line: &str| eprintln!("station: {line}");
    block_on(async move {
        driver::run(Some(path), config, driver::Options::default(), |_| {}, log)
            .await
            .context("the station cannot start")?;
        Ok(())
    })
}

pub fn status(args: StatusArgs) -> anyhow::Result<()> {
    let path = args.control;
    let text = block_on(async {
        let mut stream = tokio::net::UnixStream::connect(&path).await.with_context(|| {
            format!(
                "no station answers on {} (is `linklab station` running, and is this its [station] control path?)",
                path.display()
            )
        })?;
        let mut text = Vec::new();
        stream
            .read_to_end(&mut text)
            .await
            .with_context(|| format!("reading the status from {}", path.display()))?;
        Ok(text)
    })?;
    let report: StatusReport = serde_json::from_slice(&text)
        .with_context(|| format!("the answer on {} is not a station's status", path.display()))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render(&report));
    }
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The report as text for a terminal.
fn render(r: &StatusReport) -> String {
    let mut out = format!(
        "station: {} (up {:.0} s), {} client{}",
        r.config,
        r.uptime_s,
        r.clients,
        plural(r.clients)
    );
    if let Some(agw) = &r.agw {
        out.push_str(&format!(", AGWPE on {agw}"));
    }
    if let Some(kiss) = &r.kiss_server {
        out.push_str(&format!(", KISS on {kiss}"));
    }
    out.push_str("\n\nports\n");
    for p in &r.ports {
        out.push_str(&format!(
            "  {} {:<10} {:<5} {}  rx {} frames {} octets, tx {} frames {} octets{}{}{}\n",
            p.number,
            p.name,
            if p.up { "up" } else { "DOWN" },
            p.tnc,
            p.frames_received,
            p.octets_received,
            p.frames_sent,
            p.octets_sent,
            if p.digipeat {
                format!(", digipeated {}", p.digipeated)
            } else {
                String::new()
            },
            if p.kiss_errors > 0 {
                format!(", {} KISS errors", p.kiss_errors)
            } else {
                String::new()
            },
            if p.tnc_losses > 0 {
                format!(", TNC lost {} times", p.tnc_losses)
            } else {
                String::new()
            },
        ));
        if !p.heard.is_empty() {
            out.push_str(&format!("    heard: {}\n", p.heard.join(" ")));
        }
    }
    out.push_str("\nlinks\n");
    if r.links.is_empty() {
        out.push_str("  none\n");
    }
    for l in &r.links {
        out.push_str(&format!(
            "  port {} {} <-> {}  {} mod {}  unacked {} queued {}  V(S) {} V(R) {} V(A) {}  T1 {} ms  {}\n",
            l.port,
            l.local,
            l.remote,
            l.state,
            l.modulus,
            l.unacked,
            l.queued,
            l.vs_vr_va.0,
            l.vs_vr_va.1,
            l.vs_vr_va.2,
            l.t1_ms,
            l.held_by
        ));
    }
    out.push_str("\nservices\n");
    if r.services.is_empty() {
        out.push_str("  none\n");
    }
    for s in &r.services {
        out.push_str(&format!(
            "  {:<10} {:<9} {}served {}\n",
            s.callsign,
            s.kind,
            if s.registered {
                ""
            } else {
                "NOT ANSWERING (an AGWPE client holds the callsign) "
            },
            s.served
        ));
        for x in &s.sessions {
            out.push_str(&format!(
                "    port {} {}  {:.0} s  in {} octets, out {} octets\n",
                x.port, x.caller, x.age_s, x.octets_in, x.octets_out
            ));
        }
    }
    if !r.tuns.is_empty() {
        out.push_str("\nTUN devices\n");
    }
    for t in &r.tuns {
        out.push_str(&format!(
            "  {} port {} {} {}  {} mode, {} VC links  from the kernel {}, to it {}, dropped {}\n",
            t.name,
            t.port,
            t.callsign,
            t.addresses.join(" "),
            t.mode,
            t.links,
            t.from_kernel,
            t.to_kernel,
            t.dropped
        ));
    }
    if let Some(n) = &r.netrom {
        render_netrom(n, &mut out);
    }
    out.push_str("\nbeacons\n");
    if r.beacons.is_empty() {
        out.push_str("  none\n");
    }
    for b in &r.beacons {
        out.push_str(&format!(
            "  port {} {}  every {} s, next in {:.0} s, sent {}\n",
            b.port, b.header, b.every_s, b.next_in_s, b.sent
        ));
    }
    out
}

/// The NET/ROM node: its neighbours (as LinBPQ's ROUTES), destinations
/// (NODES, with each route) and circuits.
fn render_netrom(n: &NetromStatus, out: &mut String) {
    let ports: Vec<String> = n.ports.iter().map(ToString::to_string).collect();
    out.push_str(&format!(
        "\nNET/ROM node {}:{} on port {}, next NODES in {:.0} s; datagrams: {} for us, {} forwarded, dropped {} TTL, {} no route, {} malformed\n",
        n.alias,
        n.callsign,
        ports.join(", "),
        n.next_broadcast_in_s,
        n.datagrams.delivered,
        n.datagrams.forwarded,
        n.datagrams.ttl_expired,
        n.datagrams.no_route,
        n.datagrams.malformed
    ));
    out.push_str("  neighbours (port callsign quality destinations)\n");
    if n.neighbours.is_empty() {
        out.push_str("    none heard yet\n");
    }
    for x in &n.neighbours {
        out.push_str(&format!(
            "    {} {:<9} {:>3} {:>3}{}{}\n",
            x.port,
            x.callsign,
            x.quality,
            x.destinations,
            if x.locked { "  locked" } else { "" },
            if x.failures > 0 {
                format!("  {} link failures", x.failures)
            } else {
                String::new()
            }
        ));
    }
    out.push_str("  destinations (alias:callsign, then quality/obsolescence via neighbour)\n");
    if n.destinations.is_empty() {
        out.push_str("    none known yet\n");
    }
    for d in &n.destinations {
        let routes: Vec<String> = d
            .routes
            .iter()
            .map(|r| {
                format!(
                    "{}/{} via {} port {}{}",
                    r.quality,
                    r.obsolescence,
                    r.neighbour,
                    r.port,
                    if r.locked { " (locked)" } else { "" }
                )
            })
            .collect();
        out.push_str(&format!(
            "    {:<16} {}\n",
            format!("{}:{}", d.alias, d.callsign),
            routes.join(", ")
        ));
    }
    for c in &n.circuits {
        out.push_str(&format!(
            "  circuit {} at {}  {}  unacknowledged {} octets\n",
            c.user, c.node, c.state, c.unacknowledged
        ));
    }
}
