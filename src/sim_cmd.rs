//! `linklab sim FILE.toml`: runs one scenario file
//! ([`linklab_scenario::experiment`]) and writes `DIR/<id>.csv` per table
//! and figure, `DIR/<id>.svg` per figure and `DIR/output.json` (the whole
//! output), and prints the tables.
//!
//! A fault in the file (unreadable, not TOML, unknown kind or field, a
//! value out of range) is an [`InputError`]: one line naming the file,
//! the place and the field, and exit status 2.

use std::fmt;
use std::path::{Path, PathBuf};

use clap::Args;
use linklab_scenario::experiment::Experiment;

use crate::reproduce::{check_ids, create_dir, print_table, write, write_tables_and_figures, Bar};
use crate::run_args::RunArgs;

#[derive(Args)]
pub struct SimArgs {
    /// The scenario file (TOML); `-` for standard input.
    file: PathBuf,
    /// Output directory [default: ./linklab-sim/<file stem>].
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    run: RunArgs,
}

/// The scenario file is at fault (exit status 2).
#[derive(Debug)]
pub struct InputError(String);

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}

pub fn run(args: SimArgs) -> anyhow::Result<()> {
    let file = crate::input::name(&args.file);
    let bytes = crate::input::read(&args.file).map_err(|e| InputError(format!("{e:#}")))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| InputError(format!("scenario file {file} is not UTF-8 text")))?;
    let experiment =
        Experiment::from_toml(&text).map_err(|e| InputError(format!("{file}: {e}")))?;
    let out = args.out.clone().unwrap_or_else(|| default_out(&args.file));
    create_dir(&out)?;
    let options = args.run.options();
    let bar = Bar::new(experiment.kind());
    let output = experiment.run(&options, &bar);
    bar.finish();
    let output = output.map_err(|e| {
        if e.is_input_error() {
            anyhow::Error::new(InputError(format!("{file}: {e}")))
        } else {
            anyhow::Error::new(e).context(format!("running {file}"))
        }
    })?;
    check_ids(&output.tables, &output.figures)?;
    for table in &output.tables {
        print_table(table);
    }
    write_tables_and_figures(&out, &output.tables, &output.figures)?;
    write(
        &out,
        "output.json",
        serde_json::to_string_pretty(&output)? + "\n",
    )?;
    println!(
        "{}: {} table(s) and {} figure(s) in {}",
        experiment.kind(),
        output.tables.len(),
        output.figures.len(),
        out.display()
    );
    Ok(())
}

/// `./linklab-sim/<file stem>`, `./linklab-sim/experiment` for standard
/// input.
fn default_out(file: &Path) -> PathBuf {
    let stem = file
        .file_stem()
        .filter(|_| file != Path::new("-"))
        .map_or_else(|| "experiment".into(), |s| s.to_string_lossy());
    Path::new("linklab-sim").join(stem.as_ref())
}
