//! `linklab monitor` and `linklab heard`: what an AGWPE server's radio
//! ports hear, as axlisten and mheard showed the kernel's, through
//! [`linklab_agw::client`].

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use anyhow::anyhow;
use clap::Args;
use linklab_agw::client::{ClientEvent, HeardEntry};
use linklab_wire::monitor;

use crate::agw_client::{open, Stop};
use crate::localtime::Zone;
use crate::runtime::block_on;
use crate::table::Table;

/// How long the server has to answer a question.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

#[derive(Args)]
pub struct MonitorArgs {
    /// The AGWPE server: HOST:PORT, e.g. 127.0.0.1:8000.
    #[arg(long, value_name = "ADDR:PORT")]
    station: String,
    /// Ask for the raw frames ('k') and print each in linklab's own
    /// monitor format (as `linklab decode` does) instead of the server's
    /// monitor records ('m').
    #[arg(long)]
    raw: bool,
}

#[derive(Args)]
pub struct HeardArgs {
    /// The AGWPE server: HOST:PORT, e.g. 127.0.0.1:8000.
    #[arg(long, value_name = "ADDR:PORT")]
    station: String,
    /// Only this radio port, counted from 1 [default: every port].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=255))]
    port: Option<u16>,
    /// Print JSON (one array of stations) instead of a table.
    #[arg(long)]
    json: bool,
}

/// Information field octets as a terminal shows them: printable ASCII
/// kept, CR a line break, anything else a dot.
fn printable(info: &[u8]) -> String {
    info.iter()
        .map(|&b| match b {
            b'\r' | b'\n' => '\n',
            0x20..=0x7E => char::from(b),
            _ => '.',
        })
        .collect()
}

pub fn monitor(args: MonitorArgs) -> anyhow::Result<()> {
    let zone = Zone::local();
    block_on(async move {
        let mut stop = Stop::new();
        let mut conn = open(&args.station).await?;
        if args.raw {
            conn.client().toggle_raw();
        } else {
            conn.client().toggle_monitor();
        }
        conn.flush()?;
        eprintln!(
            "linklab: monitoring every port of AGWPE server {}{} (Ctrl-C stops)",
            args.station,
            if zone.utc { "; times are UTC" } else { "" }
        );
        let options = monitor::MonitorOptions::default();
        // Each port's links, to decode their I and S frames modulo 128
        // after a SABME.
        let mut moduli: BTreeMap<u8, monitor::LinkModuli> = BTreeMap::new();
        loop {
            let event = tokio::select! {
                event = conn.next_event() => event
                    .map_err(|e| anyhow!("AGWPE server {}: {e}", args.station))?,
                () = stop.wait() => break,
            };
            let clock = zone.clock(SystemTime::now());
            match event {
                ClientEvent::Monitor(record) => {
                    let kind = match record.kind {
                        b'T' => "TX",
                        b'U' => "UI",
                        b'I' => "I ",
                        _ => "S ",
                    };
                    println!(
                        "{clock} port {} {kind} {}",
                        u16::from(record.port) + 1,
                        record.text.trim()
                    );
                    if !record.info.is_empty() {
                        for line in printable(&record.info).lines() {
                            println!("    {line}");
                        }
                    }
                }
                ClientEvent::Raw { port, data } => {
                    // The KISS type octet, then the frame.
                    let frame = data.get(1..).unwrap_or_default();
                    let modulus = moduli.entry(port).or_default().observe(frame);
                    let line = monitor::format_raw_with(frame, modulus, options);
                    println!("{clock} port {} {line}", u16::from(port) + 1);
                }
                ClientEvent::Unreadable(why) => eprintln!("linklab: server message ignored: {why}"),
                _ => {}
            }
        }
        // Monitoring off again before leaving, as a polite client does.
        if args.raw {
            conn.client().toggle_raw();
        } else {
            conn.client().toggle_monitor();
        }
        conn.close(Duration::from_secs(1)).await.ok();
        Ok(())
    })
}

/// A heard-list row.
struct Row {
    port: u16,
    entry: HeardEntry,
}

pub fn heard(args: HeardArgs) -> anyhow::Result<()> {
    let zone = Zone::local();
    let rows = block_on(async {
        let mut conn = open(&args.station).await?;
        let lost = |e| anyhow!("AGWPE server {}: {e}", args.station);
        conn.client().ask_ports();
        let ports = tokio::time::timeout(ANSWER_WITHIN, async {
            loop {
                if let ClientEvent::Ports(ports) = conn.next_event().await? {
                    return Ok::<_, linklab_agw::connection::ConnectionError>(ports);
                }
            }
        })
        .await
        .map_err(|_| anyhow!("AGWPE server {}: no answer to 'G' (ports)", args.station))?
        .map_err(lost)?;
        let wanted: Vec<u16> = match args.port {
            Some(p) if usize::from(p) > ports.len() => {
                return Err(crate::usage::usage(format!(
                    "--port {p}: the server has {} radio port{}",
                    ports.len(),
                    if ports.len() == 1 { "" } else { "s" }
                )))
            }
            Some(p) => vec![p],
            None => (1..=u16::try_from(ports.len()).unwrap_or(255)).collect(),
        };
        for p in &wanted {
            conn.client().ask_heard(u8::try_from(p - 1).unwrap_or(0));
        }
        // The server answers in order: once 'R' comes, every 'H' has.
        conn.client().ask_version();
        let mut rows = Vec::new();
        tokio::time::timeout(ANSWER_WITHIN, async {
            loop {
                match conn.next_event().await? {
                    ClientEvent::Heard {
                        port,
                        entry: Some(entry),
                    } => rows.push(Row {
                        port: u16::from(port) + 1,
                        entry,
                    }),
                    ClientEvent::Version { .. } => return Ok(()),
                    _ => {}
                }
            }
        })
        .await
        .map_err(|_| {
            anyhow!(
                "AGWPE server {}: no answer to 'H' (heard list)",
                args.station
            )
        })?
        .map_err(lost)?;
        conn.close(Duration::from_secs(1)).await.ok();
        Ok(rows)
    })?;
    if args.json {
        let utc = |t: Option<SystemTime>| {
            t.map(|t| {
                let t = time::OffsetDateTime::from(t);
                format!(
                    "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
                    t.year(),
                    u8::from(t.month()),
                    t.day(),
                    t.hour(),
                    t.minute(),
                    t.second()
                )
            })
        };
        let list: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "port": r.port,
                    "station": r.entry.station,
                    "last_heard": utc(r.entry.last),
                    "first_heard": utc(r.entry.first),
                    "text": r.entry.text,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    if rows.is_empty() {
        println!("no station heard");
        return Ok(());
    }
    let when = |t: Option<SystemTime>| t.map_or_else(|| "-".to_string(), |t| zone.date_time(t));
    let zone_name = if zone.utc { " (UTC)" } else { "" };
    let mut table = Table::new([
        "port".to_string(),
        "callsign".to_string(),
        format!("last heard{zone_name}"),
        format!("first heard{zone_name}"),
    ]);
    for r in &rows {
        table.row(vec![
            r.port.to_string(),
            r.entry.station.clone(),
            when(r.entry.last),
            when(r.entry.first),
        ]);
    }
    print!("{table}");
    Ok(())
}
