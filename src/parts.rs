//! Part files of a run cut into shards (`sim --shard I/N`, `reproduce
//! --shard I/N`) and `linklab merge DIR... --out DIR`, which puts the parts
//! together into the files of the whole run
//! ([`linklab_scenario::shard`]).
//!
//! A part is a directory holding `part.cbor`: what was run (the scenario
//! file's text, or the reproduction and its paper), the seed, quick or
//! full, which part of how many, the linklab version, and the results of
//! the points it ran, encoded exactly. The merge refuses parts that are
//! missing, given twice, or of another run, naming the part.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};

use crate::usage::usage;
use clap::Args;
use linklab_scenario::shard::Shard;
use serde::{Deserialize, Serialize};

/// The file a part directory holds.
pub const PART_FILE: &str = "part.cbor";

/// The format of [`PART_FILE`]; another one is refused.
const FORMAT: u32 = 1;

/// What a part is a part of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum RunOf {
    /// `linklab sim FILE`.
    Sim {
        /// The file's name as given, for messages.
        file: String,
        /// The file's text (the merge runs nothing but needs the
        /// experiment's points and tables).
        text: String,
    },
    /// `linklab reproduce [--paper P]`.
    Reproduce {
        /// The paper reproduced, or every paper.
        paper: Option<String>,
    },
}

/// One part of a run, as `part.cbor` holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// [`FORMAT`].
    pub format: u32,
    /// The linklab version that ran it.
    pub version: String,
    /// What was run.
    pub run: RunOf,
    /// The master seed.
    pub seed: u64,
    /// `--quick`.
    pub quick: bool,
    /// Which part.
    pub shard: Shard,
    /// Points (or reproduction sections) in the whole run.
    pub total: usize,
    /// This part's points by index, each result encoded exactly.
    pub results: Vec<(usize, ciborium::Value)>,
    /// The part's wall time.
    pub wall: Duration,
    /// The part's CPU time, every thread.
    pub cpu: Duration,
    /// Anything else the run keeps (`reproduce`: the standard case's
    /// speed, measured by part 0).
    pub extra: Option<ciborium::Value>,
}

impl Part {
    /// A part of this linklab version.
    pub fn new(run: RunOf, options: &linklab_scenario::report::RunOptions, shard: Shard) -> Part {
        Part {
            format: FORMAT,
            version: env!("CARGO_PKG_VERSION").into(),
            run,
            seed: options.seed,
            quick: options.quick,
            shard,
            total: 0,
            results: Vec::new(),
            wall: Duration::ZERO,
            cpu: Duration::ZERO,
            extra: None,
        }
    }

    /// Writes `dir/part.cbor` (making `dir`) and says what it holds.
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        crate::reproduce::create_dir(dir)?;
        let mut bytes = Vec::new();
        ciborium::into_writer(self, &mut bytes).context("encoding the part")?;
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
        let part: Part = ciborium::from_reader(bytes.as_slice()).map_err(|e| {
            usage(format!(
                "{} is not a linklab part file: {}",
                path.display(),
                cbor_problem(&e)
            ))
        })?;
        if part.format != FORMAT {
            return Err(usage(format!(
                "{} is a part file of format {} (this linklab reads format {FORMAT})",
                path.display(),
                part.format
            )));
        }
        Ok(part)
    }
}

impl RunOf {
    /// What was run, for messages.
    fn name(&self) -> String {
        match self {
            RunOf::Sim { file, .. } => format!("sim {file}"),
            RunOf::Reproduce { paper: None } => "reproduce".into(),
            RunOf::Reproduce { paper: Some(p) } => format!("reproduce --paper {p}"),
        }
    }

    /// What its results are.
    fn unit(&self) -> &'static str {
        match self {
            RunOf::Sim { .. } => "points",
            RunOf::Reproduce { .. } => "sections",
        }
    }
}

/// The parts of one run, checked and put in order.
pub struct Merged {
    /// The first part given (what was run, seed, quick, version).
    pub first: Part,
    /// Every point's result, in point order.
    pub results: Vec<ciborium::Value>,
    /// Every part's `extra`, by part index.
    pub extras: Vec<Option<ciborium::Value>>,
    /// The longest part's wall time.
    pub wall: Duration,
    /// CPU time of all parts.
    pub cpu: Duration,
}

/// Reads the parts in `dirs` and checks that they are the parts of one
/// run, each once, none missing.
fn gather(dirs: &[PathBuf]) -> anyhow::Result<Merged> {
    let parts = dirs
        .iter()
        .map(|d| Part::read(d).map(|p| (d, p)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let Some((first_dir, first)) = parts.first() else {
        bail!("no parts given");
    };
    let first_dir = first_dir.display();
    let count = first.shard.count as usize;
    let mut by_index: Vec<Option<&PathBuf>> = vec![None; count];
    for (dir, part) in &parts {
        let differs = |what: &str, theirs: String, ours: String| {
            anyhow::anyhow!(
                "{} is not a part of the same run as {first_dir}: {what} {theirs}, not {ours}",
                dir.display()
            )
        };
        if part.version != first.version {
            return Err(differs(
                "linklab version",
                part.version.clone(),
                first.version.clone(),
            ));
        }
        if part.run != first.run {
            let theirs = match &part.run {
                RunOf::Sim { file, .. } if part.run.name() == first.run.name() => {
                    format!("another text of {file}")
                }
                other => other.name(),
            };
            return Err(differs("it ran", theirs, first.run.name()));
        }
        if part.seed != first.seed {
            return Err(differs(
                "seed",
                part.seed.to_string(),
                first.seed.to_string(),
            ));
        }
        if part.quick != first.quick {
            let q = |quick| if quick { "a quick run" } else { "a full run" };
            return Err(differs(
                "it is",
                q(part.quick).into(),
                q(first.quick).into(),
            ));
        }
        if part.shard.count != first.shard.count || part.total != first.total {
            return Err(differs(
                "it is cut into",
                format!(
                    "{} parts of {} {}",
                    part.shard.count,
                    part.total,
                    part.run.unit()
                ),
                format!(
                    "{} parts of {} {}",
                    first.shard.count,
                    first.total,
                    first.run.unit()
                ),
            ));
        }
        let index = part.shard.index as usize;
        if let Some(other) = by_index.get(index).copied().flatten() {
            bail!(
                "{} and {} are both part {}: give each part once",
                other.display(),
                dir.display(),
                part.shard
            );
        }
        by_index[index] = Some(dir);
    }
    let missing: Vec<String> = (0..count)
        .filter(|&i| by_index[i].is_none())
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        bail!(
            "part{} {} of {} missing ({} given)",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            first.run.name(),
            parts.len()
        );
    }
    let mut results: Vec<Option<ciborium::Value>> = vec![None; first.total];
    let mut extras = vec![None; count];
    let (mut wall, mut cpu) = (Duration::ZERO, Duration::ZERO);
    for (dir, part) in parts.iter() {
        for (i, value) in &part.results {
            match results.get_mut(*i) {
                Some(slot @ None) => *slot = Some(value.clone()),
                _ => bail!(
                    "{} holds {} {i}, which is out of range or in another part too",
                    dir.display(),
                    part.run.unit()
                ),
            }
        }
        extras[part.shard.index as usize] = part.extra.clone();
        wall = wall.max(part.wall);
        cpu += part.cpu;
    }
    let results = results
        .into_iter()
        .enumerate()
        .map(|(i, r)| r.with_context(|| format!("no part holds {} {i}", first.run.unit())))
        .collect::<anyhow::Result<_>>()?;
    Ok(Merged {
        first: first.clone(),
        results,
        extras,
        wall,
        cpu,
    })
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
    let merged = gather(&args.parts).map_err(crate::usage::input_file)?;
    match merged.first.run.clone() {
        RunOf::Sim { file, text } => crate::sim_cmd::merge(&file, &text, merged, &args.out),
        RunOf::Reproduce { paper } => crate::reproduce::merge(paper.as_deref(), merged, &args.out),
    }
}

/// What is wrong with a part file CBOR could not decode, in words (the
/// decoder's own `Display` shows its Rust `Debug` form).
fn cbor_problem(e: &ciborium::de::Error<std::io::Error>) -> String {
    use ciborium::de::Error;
    match e {
        Error::Io(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            "it ends too early (truncated: copy it again from where the part ran)".into()
        }
        Error::Io(e) => format!("cannot read it: {e}"),
        Error::Syntax(at) => format!("it is not CBOR (octet {at})"),
        Error::Semantic(Some(at), what) => format!("{what} (octet {at})"),
        Error::Semantic(None, what) => what.clone(),
        Error::RecursionLimitExceeded => "it is nested too deeply".into(),
    }
}
