//! `linklab model`: the closed-form models from the command line.

use clap::{Args, Subcommand};
use linklab_models::{ronan, zielinski};
use linklab_wire::kiss::p_from_persistence;

use crate::table::Table;
use crate::usage::usage;
use crate::windows::Windows;

#[derive(Subcommand)]
pub enum Model {
    /// Ronan et al.'s minimum transfer time of a message over half-duplex
    /// AX.25 (defaults: their Table I, except N1: 256 as in every command;
    /// their 255 with --n1 255).
    Ronan(RonanArgs),
    /// Zielinski's AX.25 effective throughput, equations 1-5.
    Zielinski(ZielinskiArgs),
}

#[derive(Args)]
pub struct RonanArgs {
    /// Radio link rate, bit/s.
    #[arg(long, default_value_t = 1200.0)]
    bitrate: f64,
    /// Message length, octets.
    #[arg(long, default_value_t = 7182)]
    size: u64,
    /// I-frame information field length N1, octets (Ronan et al.'s Table I:
    /// 255).
    #[arg(long, value_name = "N", default_value_t = N1)]
    n1: u32,
    /// Transmitter key-up delay, ms.
    #[arg(long, value_name = "MS", default_value_t = 150.0)]
    txdelay_ms: f64,
    /// Transmitter tail, ms.
    #[arg(long, value_name = "MS", default_value_t = 20.0)]
    txtail_ms: f64,
    /// CSMA slot time, ms.
    #[arg(long, value_name = "MS", default_value_t = 20.0)]
    slot_ms: f64,
    /// CSMA persistence P, 0-255: a station sends in a slot with
    /// probability p = (P+1)/256 (Ronan et al.'s p = 0.25 is P = 63).
    #[arg(long, value_name = "P", default_value_t = 63)]
    persist: u8,
    /// Window sizes: 4, 1..7 or 1,2,4.
    #[arg(long, default_value = "1..7")]
    window: Windows,
    /// Evaluate T_ack without T_txtail, as the paper's worked example does
    /// (its tables include the tail).
    #[arg(long)]
    ack_without_tail: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct ZielinskiArgs {
    /// Radio link rate R_wl, bit/s.
    #[arg(long, default_value_t = 1200.0)]
    bitrate: f64,
    /// I-frame information field capacity N1, octets.
    #[arg(long, value_name = "N", default_value_t = N1)]
    n1: u32,
    /// Window sizes k: 4, 1..7 or 1,2,4.
    #[arg(long, default_value = "1..7")]
    window: Windows,
    /// CSMA slot time, ms: the paper's T_102 (SLOTTIME).
    #[arg(long, value_name = "MS", default_value_t = 10.0)]
    slot_ms: f64,
    /// CSMA persistence P, 0-255: a station sends in a slot with
    /// probability p = (P+1)/256.
    #[arg(long, value_name = "P", default_value_t = 63)]
    persist: u8,
    /// Transmitter start-up (key-up) delay, ms: the paper's T_103
    /// (TXDELAY).
    #[arg(long, value_name = "MS", default_value_t = 300.0)]
    txdelay_ms: f64,
    /// Receiver's acknowledgement delay T_2, ms (0: immediate RR).
    #[arg(long, value_name = "MS", default_value_t = 0.0)]
    t2_ms: f64,
    /// Acknowledgements on a separate channel (k then does not matter).
    #[arg(long)]
    full_duplex: bool,
    /// Host-TNC serial rate R_w, bit/s: adds eq. 5 to a transfer of --size.
    #[arg(long, requires = "size")]
    serial_bps: Option<f64>,
    /// Time a whole transfer of this many octets instead of one cycle.
    #[arg(long)]
    size: Option<u64>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// N1 of both models by default: 256 octets, the AX.25 v2.2 default, as
/// in the link commands.
const N1: u32 = 256;

fn positive(what: &str, v: f64) -> anyhow::Result<()> {
    if !(v.is_finite() && v > 0.0) {
        return Err(usage(format!("{what} must be positive, got {v}")));
    }
    Ok(())
}

fn non_negative(what: &str, v: f64) -> anyhow::Result<()> {
    if !(v.is_finite() && v >= 0.0) {
        return Err(usage(format!("{what} must not be negative, got {v}")));
    }
    Ok(())
}

/// `--n1`, which both models divide by.
fn n1_at_least_one(n1: u32) -> anyhow::Result<()> {
    if n1 == 0 {
        return Err(usage("--n1 must be at least 1".into()));
    }
    Ok(())
}

pub fn run(model: Model) -> anyhow::Result<()> {
    match model {
        Model::Ronan(a) => ronan(a),
        Model::Zielinski(a) => zielinski(a),
    }
}

fn ronan(a: RonanArgs) -> anyhow::Result<()> {
    positive("--bitrate", a.bitrate)?;
    n1_at_least_one(a.n1)?;
    for (what, v) in [
        ("--txdelay-ms", a.txdelay_ms),
        ("--txtail-ms", a.txtail_ms),
        ("--slot-ms", a.slot_ms),
    ] {
        non_negative(what, v)?;
    }
    let params = ronan::Params {
        bitrate_bps: a.bitrate,
        size_octets: a.size,
        n1: a.n1,
        txdelay_s: a.txdelay_ms / 1e3,
        txtail_s: a.txtail_ms / 1e3,
        slot_s: a.slot_ms / 1e3,
        persistence: p_from_persistence(a.persist),
        ack_reading: if a.ack_without_tail {
            ronan::AckReading::WithoutTxTail
        } else {
            ronan::AckReading::WithTxTail
        },
    };
    let rows: Vec<_> = a.window.0.iter().map(|&k| params.transfer(k)).collect();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{}", ronan_table(&rows));
    }
    Ok(())
}

/// Ronan model rows as an aligned table.
pub fn ronan_table(rows: &[ronan::Row]) -> Table {
    let mut t = Table::new(["window", "frames", "windows", "transfer_s"]);
    for r in rows {
        t.row(vec![
            r.window.to_string(),
            r.frames.to_string(),
            r.windows.to_string(),
            format!("{:.2}", r.transfer_s),
        ]);
    }
    t
}

fn zielinski(a: ZielinskiArgs) -> anyhow::Result<()> {
    positive("--bitrate", a.bitrate)?;
    n1_at_least_one(a.n1)?;
    for (what, v) in [
        ("--slot-ms", a.slot_ms),
        ("--txdelay-ms", a.txdelay_ms),
        ("--t2-ms", a.t2_ms),
    ] {
        non_negative(what, v)?;
    }
    if let Some(r) = a.serial_bps {
        positive("--serial-bps", r)?;
    }
    if let Some(size) = a.size {
        if size == 0 {
            return Err(usage("--size must be at least 1 octet".into()));
        }
    }
    let params = zielinski::Params {
        bitrate_bps: a.bitrate,
        n1: a.n1,
        t102_s: a.slot_ms / 1e3,
        persist: a.persist,
        t103_s: a.txdelay_ms / 1e3,
        t2_s: a.t2_ms / 1e3,
        duplex: if a.full_duplex {
            zielinski::Duplex::Full
        } else {
            zielinski::Duplex::Half
        },
        serial_bps: a.serial_bps,
        size_octets: a.size,
    };
    let rows: Vec<_> = a.window.0.iter().map(|&k| params.row(k)).collect();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{}", zielinski_table(&rows));
    }
    Ok(())
}

/// Zielinski model rows as an aligned table.
pub fn zielinski_table(rows: &[zielinski::Row]) -> Table {
    let with_transfer = rows.iter().any(|r| r.transfer_s.is_some());
    let mut headers = vec!["window", "cycle_s", "throughput_bps"];
    if with_transfer {
        headers.push("transfer_s");
    }
    let mut t = Table::new(headers);
    for r in rows {
        let mut cells = vec![
            r.window.to_string(),
            format!("{:.3}", r.cycle_s),
            format!("{:.1}", r.throughput_bps),
        ];
        if let Some(s) = r.transfer_s {
            cells.push(format!("{s:.2}"));
        }
        t.row(cells);
    }
    t
}
