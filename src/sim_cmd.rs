//! `linklab sim FILE.toml`: runs one scenario file
//! ([`linklab_scenario::experiment`]) and writes `DIR/<id>.csv` per table
//! and figure, `DIR/<id>.svg` per figure and `DIR/output.json` (the whole
//! output), and prints the tables. With `--shard I/N` it runs part I of
//! the experiment's points only and writes `DIR/part.cbor`
//! ([`crate::parts`]).
//!
//! A fault in the file (unreadable, not TOML, unknown kind or field, a
//! value out of range) is an [`InputError`]: one line naming the file,
//! the place and the field, and exit status 2.

use std::fmt;
use std::path::{Path, PathBuf};

use std::time::Instant;

use clap::Args;
use linklab_scenario::experiment::{Experiment, ExperimentError};
use linklab_scenario::report::{Output, RunOptions};
use linklab_scenario::shard::Shard;
use serde_json::Value;

use crate::parts::{Merged, Part, PartDir, RunOf};

use crate::reproduce::{check_ids, create_dir, print_table, write, write_tables_and_figures, Bar};
use crate::run_args::RunArgs;

#[derive(Args)]
pub struct SimArgs {
    /// The scenario file (TOML); `-` for standard input.
    file: PathBuf,
    /// Output directory [default: ./linklab-sim/<file stem>].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run only part I of N (counted from 0) of the experiment's points
    /// and write it to `--out DIR` as DIR/part.cbor, for `linklab merge`.
    #[arg(long, value_name = "I/N", requires = "out")]
    shard: Option<Shard>,
    #[command(flatten)]
    run: RunArgs,
}

/// The scenario file is at fault (exit status 2).
#[derive(Debug)]
pub struct InputError(pub(crate) String);

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}

pub fn run(args: SimArgs) -> anyhow::Result<()> {
    let file = crate::input::name(&args.file);
    let bytes = crate::input::read(&args.file).map_err(|e| {
        InputError(format!(
            "cannot read scenario file {file}: {}",
            e.root_cause()
        ))
    })?;
    let text = String::from_utf8(bytes)
        .map_err(|_| InputError(format!("scenario file {file} is not UTF-8 text")))?;
    let experiment =
        Experiment::from_toml(&text).map_err(|e| InputError(format!("{file}: {e}")))?;
    let out = args.out.clone().unwrap_or_else(|| default_out(&args.file));
    let options = args.run.options();
    crate::usage::check_out_dir("--out", &out)?;
    let bar = Bar::new(experiment.kind());
    if let Some(shard) = args.shard {
        let run = RunOf::Sim {
            file: file.clone(),
            text,
        };
        let mut part = Part::new(run, &options, shard);
        let start = Instant::now();
        let (points, cpu) = linklab_sim::cpu_time_of(|| experiment.run_part(&options, shard, &bar));
        bar.finish();
        let points = points.map_err(|e| run_error(&file, e))?;
        part.total = points.total;
        part.results = points.results;
        part.wall = start.elapsed();
        part.cpu = cpu;
        return part.write(&out);
    }
    create_dir(&out)?;
    let output = experiment.run(&options, &bar);
    bar.finish();
    let output = output.map_err(|e| run_error(&file, e))?;
    write_output(experiment.kind(), &output, &out)
}

/// `linklab merge` of the parts of `linklab sim FILE`: the experiment in
/// `text` (FILE's text when the parts ran) assembled from the parts'
/// points.
pub fn merge(file: &str, text: &str, merged: Merged, out: &Path) -> anyhow::Result<()> {
    let experiment = Experiment::from_toml(text).map_err(|e| InputError(format!("{file}: {e}")))?;
    let options = RunOptions {
        quick: merged.first.quick,
        seed: merged.first.seed,
        ..RunOptions::default()
    };
    let output = experiment
        .merge(&options, merged.results)
        .map_err(|e| run_error(file, e))?;
    create_dir(out)?;
    write_output(experiment.kind(), &output, out)?;
    println!(
        "merged {} parts: {:.1} s of CPU in all, {:.1} s for the longest part",
        merged.first.shard.count,
        merged.cpu.as_secs_f64(),
        merged.wall.as_secs_f64()
    );
    Ok(())
}

/// An error of the run of `file`: the file's fault (exit status 2) or the
/// run's.
fn run_error(file: &str, e: ExperimentError) -> anyhow::Error {
    if e.is_input_error() {
        anyhow::Error::new(InputError(format!("{file}: {e}")))
    } else {
        anyhow::Error::new(e).context(format!("running {file}"))
    }
}

/// Prints the tables and writes `<id>.csv`, `<id>.svg` and `output.json`
/// to `out`.
fn write_output(kind: &str, output: &Output, out: &Path) -> anyhow::Result<()> {
    check_ids(&output.tables, &output.figures)?;
    for table in &output.tables {
        print_table(table);
    }
    write_tables_and_figures(out, &output.tables, &output.figures)?;
    let mut json = serde_json::to_value(output)?;
    numbers_as_numbers(&mut json);
    write(
        out,
        "output.json",
        serde_json::to_string_pretty(&json)? + "\n",
    )?;
    println!(
        "{kind}: {} table(s) and {} figure(s) in {}",
        output.tables.len(),
        output.figures.len(),
        out.display()
    );
    Ok(())
}

/// Turns the table cells of an [`Output`](linklab_scenario::report::Output)
/// in JSON that are numbers (the tables keep their cells as formatted
/// text, for CSV and the terminal) into JSON numbers: integers exactly,
/// others as `f64`. Text cells stay strings.
fn numbers_as_numbers(output: &mut Value) {
    let cells = output["tables"]
        .as_array_mut()
        .into_iter()
        .flatten()
        .filter_map(|table| table["rows"].as_array_mut())
        .flatten()
        .filter_map(Value::as_array_mut)
        .flatten();
    for cell in cells {
        let Some(text) = cell.as_str() else { continue };
        let number = if let Ok(n) = text.parse::<i64>() {
            Some(Value::from(n))
        } else if let Ok(n) = text.parse::<u64>() {
            Some(Value::from(n))
        } else {
            text.parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
        };
        if let Some(number) = number {
            *cell = number;
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_cells_that_are_numbers_become_json_numbers() {
        let mut json = serde_json::json!({
            "tables": [{"id": "t", "columns": ["k", "s", "note"],
                        "rows": [["4", "12.50", "ok"], ["-1", "1e3", "inf"]]}],
            "figures": [{"id": "f"}],
        });
        numbers_as_numbers(&mut json);
        assert_eq!(
            json["tables"][0]["rows"],
            serde_json::json!([[4, 12.5, "ok"], [-1, 1000.0, "inf"]])
        );
        assert_eq!(json["figures"][0]["id"], "f");
    }
}
