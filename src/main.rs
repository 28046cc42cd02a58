//! `linklab`: an HDLC-family data-link stack and link-performance laboratory.

mod advise_cmd;
mod agw_client;
mod agw_cmd;
mod channel_cmd;
mod codec;
mod dtn_cmd;
mod generate_cmd;
mod input;
mod ip_cmd;
mod link_cmd;
mod localtime;
mod model;
mod monitor_cmd;
mod new_file;
mod options;
mod parts;
mod probe_cmd;
mod reproduce;
mod run_args;
mod runtime;
mod send_feed;
mod sim_cmd;
mod station_cmd;
mod stdout;
mod table;
mod usage;
mod windows;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use linklab_wire::control::Modulus;

#[derive(Parser)]
#[command(name = "linklab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate a closed-form link model.
    #[command(subcommand)]
    Model(model::Model),
    /// Print AX.25 frames from pcap, KISS or hex in the monitor format.
    Decode(codec::DecodeArgs),
    /// Build an AX.25 frame and write it as hex, KISS or pcap.
    Encode(codec::EncodeArgs),
    /// Reproduce the source papers' tables and figures.
    Reproduce(reproduce::ReproduceArgs),
    /// Run a scenario file (TOML) and write its tables and figures.
    Sim(sim_cmd::SimArgs),
    /// Put the parts of a run cut with `--shard I/N` together into the
    /// files of the whole run.
    Merge(parts::MergeArgs),
    /// Accept AX.25 connections over a KISS TNC or an AGWPE server and
    /// write what arrives.
    Listen(link_cmd::ListenArgs),
    /// Send a file over an AX.25 connection through a KISS TNC or an
    /// AGWPE server.
    Send(link_cmd::SendArgs),
    /// An interactive AX.25 session over a KISS TNC or an AGWPE server,
    /// like `call`.
    Connect(link_cmd::ConnectArgs),
    /// TCP/IP over AX.25 through a KISS TNC: ping, serve or send a file.
    Ip(ip_cmd::IpArgs),
    /// A real-time emulated radio channel: every station a KISS TCP port
    /// (or pseudo-terminal) any KISS software can join.
    Channel(channel_cmd::ChannelArgs),
    /// An AGWPE server (port 8000) on KISS TNCs: packet applications that
    /// speak AGWPE run on linklab's AX.25.
    Agw(agw_cmd::AgwArgs),
    /// The best link settings (k, N1, T1, acknowledgement, persistence,
    /// slot time, serial rate) for a channel and its ends, from the
    /// papers' models and the simulator.
    Advise(advise_cmd::AdviseArgs),
    /// Measure a link through a KISS TNC and a peer (TXDELAY, TNC time per
    /// frame, bit errors, the peer's acknowledgement delay) for `advise`.
    Probe(probe_cmd::ProbeArgs),
    /// A DTN node (BPv7 over TCPCLv4) and the applications that send and
    /// receive through it.
    Dtn(dtn_cmd::DtnArgs),
    /// A whole packet station as a service: the radio ports, AGWPE and
    /// KISS servers, programs answering inbound calls (as ax25d), beacons
    /// and a digipeater, from one configuration file.
    Station(station_cmd::StationArgs),
    /// Ask a running station for its ports, links, services and beacons.
    Status(station_cmd::StatusArgs),
    /// Every frame on every radio port of an AGWPE server, as axlisten
    /// showed the kernel's.
    Monitor(monitor_cmd::MonitorArgs),
    /// The stations an AGWPE server's radio ports have heard, as mheard
    /// showed the kernel's.
    Heard(monitor_cmd::HeardArgs),
}

fn main() -> ExitCode {
    stdout::quiet_when_closed();
    if let Some(args) = generate_cmd::requested() {
        return exit(generate_cmd::run(args, Cli::command()));
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Model(m) => model::run(m),
        Command::Decode(a) => codec::decode(a),
        Command::Encode(a) => codec::encode(a),
        Command::Reproduce(a) => reproduce::run(a),
        Command::Sim(a) => sim_cmd::run(a),
        Command::Merge(a) => parts::merge(a),
        Command::Advise(a) => advise_cmd::run(a),
        Command::Probe(a) => probe_cmd::run(a),
        Command::Listen(a) => link_cmd::listen(a),
        Command::Send(a) => link_cmd::send(a),
        Command::Connect(a) => link_cmd::connect(a),
        Command::Ip(a) => ip_cmd::run(a),
        Command::Dtn(a) => dtn_cmd::run(a),
        Command::Channel(a) => channel_cmd::run(a),
        Command::Agw(a) => agw_cmd::run(a),
        Command::Station(a) => station_cmd::station(a),
        Command::Status(a) => station_cmd::status(a),
        Command::Monitor(a) => monitor_cmd::monitor(a),
        Command::Heard(a) => monitor_cmd::heard(a),
    };
    exit(result)
}

/// The exit status for a command's `result`, its error printed.
fn exit(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if stdout::is_closed(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("linklab: error: {}", usage::message(&e));
            if usage::is_usage_or_input(&e) {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// The sequence-number modulus a `--mod128` flag selects.
fn modulus(mod128: bool) -> Modulus {
    if mod128 {
        Modulus::Mod128
    } else {
        Modulus::Mod8
    }
}
