//! `linklab generate`: files made from the command line's own definitions
//! (the clap `Command` that parses it), for a package to install. It is a
//! build step (dist/build-deb.sh), not something an operator runs, so it
//! stands beside the public command line rather than in it: `--help`, the
//! manual pages, the completions and clap's suggestions for a mistyped
//! subcommand never show it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Parser, Subcommand};
use clap_complete::{Generator, Shell};

use crate::usage;

/// `linklab generate ...`: the arguments after `linklab`, parsed.
#[derive(Parser)]
#[command(name = "linklab generate", bin_name = "linklab generate")]
#[command(about = "Manual pages and shell completions for a package")]
pub struct GenerateArgs {
    #[command(subcommand)]
    what: Generate,
}

/// The process's arguments parsed when its first is `generate`, and
/// `None` otherwise (then they are the public command line's). Exits, as
/// clap does, on a mistake or `--help`.
pub fn requested() -> Option<GenerateArgs> {
    // `generate` stands where clap expects the program's name.
    (std::env::args_os().nth(1)? == "generate")
        .then(|| GenerateArgs::parse_from(std::env::args_os().skip(1)))
}

#[derive(Subcommand)]
enum Generate {
    /// Manual pages (roff, section 1): `linklab.1` and one for each
    /// subcommand, named as git's are (`linklab-station.1`,
    /// `linklab-model-ronan.1`).
    Man {
        /// Directory to write them in (made if missing).
        dir: PathBuf,
    },
    /// Completion scripts for bash (`linklab.bash`), zsh (`_linklab`)
    /// and fish (`linklab.fish`).
    Completions {
        /// Directory to write them in (made if missing).
        dir: PathBuf,
    },
}

/// The shells completions are made for.
const SHELLS: [Shell; 3] = [Shell::Bash, Shell::Zsh, Shell::Fish];

/// Runs `linklab generate` for `cli`, the whole command line; prints the
/// path of each file written.
pub fn run(args: GenerateArgs, cli: clap::Command) -> anyhow::Result<()> {
    let written = match args.what {
        Generate::Man { dir } => {
            usage::check_out_dir("generate man", &dir)?;
            man_pages(cli, &dir)?
        }
        Generate::Completions { dir } => {
            usage::check_out_dir("generate completions", &dir)?;
            completions(cli, &dir)?
        }
    };
    let mut out = std::io::stdout().lock();
    for path in written {
        writeln!(out, "{}", path.display())?;
    }
    Ok(())
}

/// Writes the page of `command` and, depth first, of each of its visible
/// subcommands into `dir`. `command` is built first, so each subcommand's
/// display name is its whole path joined by dashes (`linklab-dtn-node`),
/// which is the page's name and title.
fn man_pages(command: clap::Command, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut command = command.disable_help_subcommand(true);
    command.build();
    // The footer of every page, as `linklab --version` says it.
    let source = format!(
        "{} {}",
        command.get_name(),
        command.get_version().unwrap_or_default()
    );
    let mut written = Vec::new();
    write_pages(&command, &source, dir, &mut written)?;
    Ok(written)
}

fn write_pages(
    command: &clap::Command,
    source: &str,
    dir: &Path,
    written: &mut Vec<PathBuf>,
) -> anyhow::Result<()> {
    let page = clap_mangen::Man::new(command.clone()).source(source);
    let path = dir.join(page.get_filename());
    write_file(&path, |w| page.render(w))?;
    written.push(path);
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, source, dir, written)?;
    }
    Ok(())
}

/// Writes one completion script per shell of [`SHELLS`] into `dir`, named
/// as clap_complete names them (the package installs `linklab.bash` as
/// `linklab`, where bash-completion looks).
fn completions(mut command: clap::Command, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let name = command.get_name().to_owned();
    let mut written = Vec::new();
    for shell in SHELLS {
        // In memory first: clap_complete panics on a failed write.
        let mut script = Vec::new();
        clap_complete::generate(shell, &mut command, &name, &mut script);
        let path = dir.join(shell.file_name(&name));
        write_file(&path, |w| w.write_all(&script))?;
        written.push(path);
    }
    Ok(written)
}

/// Creates `path` and fills it with `fill`, every error naming the file.
fn write_file(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = BufWriter::new(file);
    fill(&mut w)
        .and_then(|()| w.flush())
        .with_context(|| format!("cannot write {}", path.display()))
}
