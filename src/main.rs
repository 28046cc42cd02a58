//! `linklab`: an HDLC-family data-link stack and link-performance laboratory.

mod model;
mod reproduce;
mod table;
mod windows;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    /// Reproduce the source papers' tables and figures.
    Reproduce(reproduce::ReproduceArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Model(m) => model::run(m),
        Command::Reproduce(a) => reproduce::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("linklab: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
