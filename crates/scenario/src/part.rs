//! Part files of a run cut into shards ([`crate::shard`]): what `sim
//! --shard I/N` and `reproduce --shard I/N` write, and the check that
//! `linklab merge DIR... --out DIR` makes before it puts the parts
//! together into the files of the whole run.
//!
//! A part is a directory holding [`PART_FILE`]: what was run (the
//! scenario file's text, or the reproduction and its paper), the seed,
//! quick or full, which part of how many, the linklab version, and the
//! results of the points it ran, encoded exactly. The merge refuses parts
//! that are missing, given twice, or of another run, naming the part;
//! the parts may be given in any order (docs/cluster.md).

use core::fmt;
use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::report::RunOptions;
use crate::shard::Shard;

/// The file a part directory holds.
pub const PART_FILE: &str = "part.cbor";

/// The format of [`PART_FILE`]; another one is refused.
pub const FORMAT: u32 = 1;

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

/// One part of a run, as [`PART_FILE`] holds it.
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

/// Why octets are not a part file this linklab reads; the message follows
/// the file's name.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReadError {
    /// Not CBOR, or not a part's fields.
    #[error("is not a linklab part file: {0}")]
    NotAPart(String),
    /// A part of another [`FORMAT`].
    #[error("is a part file of format {0} (this linklab reads format {FORMAT})")]
    Format(u32),
}

/// Why parts are not the parts of one run; the message names the part.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct NotOneRun(pub String);

impl Part {
    /// An empty part of `run` by linklab `version`.
    pub fn empty(version: &str, run: RunOf, options: &RunOptions, shard: Shard) -> Part {
        Part {
            format: FORMAT,
            version: version.into(),
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

    /// The part as [`PART_FILE`] holds it.
    pub fn encode(&self) -> Result<Vec<u8>, ciborium::ser::Error<std::io::Error>> {
        let mut bytes = Vec::new();
        ciborium::into_writer(self, &mut bytes)?;
        Ok(bytes)
    }

    /// The part [`PART_FILE`]'s octets hold, if they are a part of this
    /// [`FORMAT`].
    pub fn decode(bytes: &[u8]) -> Result<Part, ReadError> {
        let part: Part =
            ciborium::from_reader(bytes).map_err(|e| ReadError::NotAPart(cbor_problem(&e)))?;
        if part.format != FORMAT {
            return Err(ReadError::Format(part.format));
        }
        Ok(part)
    }
}

impl RunOf {
    /// What was run, for messages.
    pub fn name(&self) -> String {
        match self {
            RunOf::Sim { file, .. } => format!("sim {file}"),
            RunOf::Reproduce { paper: None } => "reproduce".into(),
            RunOf::Reproduce { paper: Some(p) } => format!("reproduce --paper {p}"),
        }
    }

    /// What its results are.
    pub fn unit(&self) -> &'static str {
        match self {
            RunOf::Sim { .. } => "points",
            RunOf::Reproduce { .. } => "sections",
        }
    }
}

/// The parts of one run, checked and put in order.
#[derive(Debug, Clone, PartialEq)]
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

/// Checks that `parts`, each named by its label (its directory), are the
/// parts of one run, each once, none missing, and puts their results in
/// point order.
pub fn gather<L: fmt::Display>(parts: &[(L, Part)]) -> Result<Merged, NotOneRun> {
    let fail = |text: String| Err(NotOneRun(text));
    let Some((first_label, first)) = parts.first() else {
        return fail("no parts given".into());
    };
    let count = first.shard.count;
    // By index, not a table of `count` places: a damaged part may claim
    // billions of parts or points.
    let mut by_index: BTreeMap<u32, &L> = BTreeMap::new();
    for (label, part) in parts {
        let differs = |what: &str, theirs: String, ours: String| {
            NotOneRun(format!(
                "{label} is not a part of the same run as {first_label}: {what} {theirs}, not {ours}"
            ))
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
        if part.shard.index >= part.shard.count {
            return fail(format!(
                "{label} says it is part {}, which does not exist (parts are 0/N to N-1/N): the part file is damaged",
                part.shard
            ));
        }
        if let Some(other) = by_index.insert(part.shard.index, label) {
            return fail(format!(
                "{other} and {label} are both part {}: give each part once",
                part.shard
            ));
        }
    }
    // Every part is there once if there are `count` of them, each < count.
    if by_index.len() < count as usize {
        let shown = 16;
        let mut missing: Vec<String> = (0..count)
            .filter(|i| !by_index.contains_key(i))
            .take(shown)
            .map(|i| format!("{i}/{count}"))
            .collect();
        let more = count as usize - by_index.len() - missing.len();
        if more > 0 {
            missing.push(format!("and {more} more"));
        }
        return fail(format!(
            "part{} {} of {} missing ({} given)",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            first.run.name(),
            parts.len()
        ));
    }
    let mut results: BTreeMap<usize, &ciborium::Value> = BTreeMap::new();
    let mut extras = vec![None; count as usize];
    let (mut wall, mut cpu) = (Duration::ZERO, Duration::ZERO);
    for (label, part) in parts {
        for (i, value) in &part.results {
            if *i >= first.total || results.insert(*i, value).is_some() {
                return fail(format!(
                    "{label} holds {} {i}, which is out of range or in another part too",
                    part.run.unit()
                ));
            }
        }
        extras[part.shard.index as usize] = part.extra.clone();
        wall = wall.max(part.wall);
        cpu = cpu.checked_add(part.cpu).ok_or_else(|| {
            NotOneRun(format!(
                "{label} says it took {} s of CPU, more than can be added to the other parts': the part file is damaged",
                part.cpu.as_secs()
            ))
        })?;
    }
    // The indices are distinct and below `total`: the first that is not
    // where it would be in 0, 1, 2... is the first missing.
    if let Some(i) = (0..first.total)
        .zip(results.keys())
        .find(|(want, have)| want != *have)
        .map(|(want, _)| want)
        .or((results.len() < first.total).then_some(results.len()))
    {
        return fail(format!("no part holds {} {i}", first.run.unit()));
    }
    Ok(Merged {
        first: first.clone(),
        results: results.into_values().cloned().collect(),
        extras,
        wall,
        cpu,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Part `index` of `count` of a sim run of `total` points, holding
    /// the points `--shard` deals it.
    fn part(index: u32, count: u32, total: usize) -> Part {
        let run = RunOf::Sim {
            file: "my.toml".into(),
            text: "kind = \"korb-ping\"".into(),
        };
        let options = RunOptions {
            quick: true,
            seed: 7,
            jobs: core::num::NonZeroUsize::MIN,
        };
        let shard = Shard { index, count };
        let mut part = Part::empty("0.1.0", run, &options, shard);
        part.total = total;
        part.results = (0..total)
            .filter(|&i| shard.owns(i))
            .map(|i| (i, ciborium::Value::from(i as u64 * 10)))
            .collect();
        part.cpu = Duration::from_secs(u64::from(index) + 1);
        part.wall = Duration::from_secs(u64::from(count - index));
        part
    }

    fn labelled(parts: Vec<Part>) -> Vec<(String, Part)> {
        parts
            .into_iter()
            .map(|p| (format!("part-{}", p.shard.index), p))
            .collect()
    }

    #[test]
    fn parts_in_any_order_merge_alike() {
        let forward = gather(&labelled((0..3).map(|i| part(i, 3, 8)).collect())).unwrap();
        let backward = gather(&labelled((0..3).rev().map(|i| part(i, 3, 8)).collect())).unwrap();
        let values: Vec<_> = (0..8u64).map(|i| ciborium::Value::from(i * 10)).collect();
        assert_eq!(forward.results, values);
        assert_eq!(backward.results, values);
        assert_eq!(
            (forward.wall, forward.cpu),
            (Duration::from_secs(3), Duration::from_secs(6))
        );
        assert_eq!((backward.wall, backward.cpu), (forward.wall, forward.cpu));
    }

    #[test]
    fn a_part_past_the_last_is_refused_not_a_panic() {
        // Found by the part_file fuzz target: index 4 of 1 indexed a table
        // of one place.
        let mut bad = part(0, 1, 2);
        bad.shard.index = 4;
        let err = gather(&labelled(vec![bad])).unwrap_err();
        assert!(
            err.0
                .contains("part-4 says it is part 4/1, which does not exist"),
            "{err}"
        );
        let mut none = part(0, 1, 2);
        none.shard.count = 0;
        let err = gather(&labelled(vec![none])).unwrap_err();
        assert!(err.0.contains("part 0/0, which does not exist"), "{err}");
    }

    #[test]
    fn billions_of_parts_or_points_are_refused_without_tables_of_them() {
        let mut many = part(0, 1, 2);
        many.shard.count = u32::MAX;
        let err = gather(&labelled(vec![many])).unwrap_err();
        assert!(
            err.0.starts_with("parts 1/4294967295, 2/4294967295,"),
            "{err}"
        );
        assert!(
            err.0
                .ends_with("and 4294967278 more of sim my.toml missing (1 given)"),
            "{err}"
        );
        let mut points = part(0, 1, 2);
        points.total = usize::MAX;
        let err = gather(&labelled(vec![points])).unwrap_err();
        assert_eq!(err.0, "no part holds points 2");
    }

    #[test]
    fn cpu_times_past_what_adds_up_are_refused() {
        let mut parts: Vec<Part> = (0..2).map(|i| part(i, 2, 4)).collect();
        parts[1].cpu = Duration::MAX;
        let err = gather(&labelled(parts)).unwrap_err();
        assert!(
            err.0
                .starts_with("part-1 says it took 18446744073709551615 s of CPU"),
            "{err}"
        );
    }

    #[test]
    fn what_encodes_decodes_and_other_octets_are_refused() {
        let p = part(1, 3, 8);
        assert_eq!(Part::decode(&p.encode().unwrap()), Ok(p.clone()));
        let mut other = p.clone();
        other.format = 2;
        assert_eq!(
            Part::decode(&other.encode().unwrap()),
            Err(ReadError::Format(2))
        );
        let bytes = p.encode().unwrap();
        let err = Part::decode(&bytes[..bytes.len() / 2]).unwrap_err();
        assert!(err.to_string().contains("truncated"), "{err}");
    }
}
