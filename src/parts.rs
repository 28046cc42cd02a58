//! Part files of a run cut into shards (`sim --shard I/N`, `reproduce
//! --shard I/N`) and `linklab merge DIR... --out DIR`, which puts the parts
//! together into the files of the whole run
//! ([`linklab_scenario::shard`]): the part directories on disk around
//! [`linklab_scenario::part`], which decodes and checks them.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::usage::usage;
use clap::Args;
use linklab_scenario::part::{gather, PART_FILE};
pub use linklab_scenario::part::{Merged, Part, RunOf};
use linklab_scenario::report::RunOptions;
use linklab_scenario::shard::Shard;

/// A [`Part`] of this linklab in its directory.
pub trait PartDir: Sized {
    /// An empty part of `run` by this linklab version.
    fn new(run: RunOf, options: &RunOptions, shard: Shard) -> Self;
    /// Writes `dir/part.cbor` (making `dir`) and says what it holds.
    fn write(&self, dir: &Path) -> anyhow::Result<()>;
}

impl PartDir for Part {
    fn new(run: RunOf, options: &RunOptions, shard: Shard) -> Part {
        Part::empty(env!("CARGO_PKG_VERSION"), run, options, shard)
    }

    fn write(&self, dir: &Path) -> anyhow::Result<()> {
        crate::reproduce::create_dir(dir)?;
        let bytes = self.encode().context("encoding the part")?;
        crate::reproduce::write(dir, PART_FILE, bytes)?;
        println!(
            "part {} of {}: {} of {} {} in {}; put the parts together with `linklab merge`",
            self.shard,
            self.run.name(),
            self.results.len(),
            self.total,
            self.run.unit(),
            dir.join(PART_FILE).display()
        );
        Ok(())
    }
}

/// Reads `dir/part.cbor`.
fn read(dir: &Path) -> anyhow::Result<Part> {
    let path = dir.join(PART_FILE);
    let bytes = std::fs::read(&path).map_err(|e| {
        usage(format!(
            "{} is not a part of a run: cannot read {}: {e}",
            dir.display(),
            path.display()
        ))
    })?;
    Part::decode(&bytes).map_err(|e| usage(format!("{} {e}", path.display())))
}

#[derive(Args)]
pub struct MergeArgs {
    /// The part directories (each holding part.cbor), in any order.
    #[arg(required = true)]
    parts: Vec<PathBuf>,
    /// Output directory: the files the whole run writes.
    #[arg(long)]
    out: PathBuf,
}

/// `linklab merge DIR... --out DIR`.
pub fn merge(args: MergeArgs) -> anyhow::Result<()> {
    // Every error of gathering is the parts' fault: the wrong parts, a
    // part missing or truncated (exit status 2).
    let parts = args
        .parts
        .iter()
        .map(|d| read(d).map(|p| (d.display(), p)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let merged = gather(&parts).map_err(|e| crate::usage::input_file(e.into()))?;
    match merged.first.run.clone() {
        RunOf::Sim { file, text } => crate::sim_cmd::merge(&file, &text, merged, &args.out),
        RunOf::Reproduce { paper } => crate::reproduce::merge(paper.as_deref(), merged, &args.out),
    }
}
