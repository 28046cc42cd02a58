//! Scenario files: an experiment written as TOML data, run by
//! `linklab sim FILE.toml`, so that a new sweep of an existing kind needs
//! a file, not a rebuild.
//!
//! A file names its experiment with `kind` and gives that kind's
//! parameters, with units in the field names:
//!
//! ```toml
//! kind = "ronan-transfer"
//! bit_rate_bps = [1200, 9600]
//! window = [1, 2, 3, 4, 5, 6, 7]
//! n1_octets = 255
//! message_octets = 7182
//! slot_ms = 20
//! txdelay_ms = 150
//! txtail_ms = 20
//! persistence = 63
//! replications = 20
//! ```
//!
//! Each kind is one variant of [`Experiment`] wrapping its configuration
//! struct; [`Experiment::from_toml`] parses and checks a file (errors carry
//! the line and column), [`Experiment::run`] runs it into a
//! [`report::Output`](crate::report::Output) of tables and figures.
//!
//! # Adding a kind
//! Write a `#[derive(Deserialize)] #[serde(deny_unknown_fields)]` struct
//! in the paper's module, implement [`ExperimentKind`] for it (its checks,
//! its points, one point's run, and the tables and figures from all
//! points), and add one line to `experiments!` with the kind's name in
//! kebab case.

use core::fmt;
use core::ops::RangeInclusive;
use std::collections::BTreeMap;
use std::num::NonZeroUsize;

use linklab_core::Position;
use linklab_sim::try_map_ordered;
use serde::de::DeserializeOwned;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::report::{Output, Progress, RunOptions};
use crate::shard::Shard;

/// Declares [`Experiment`] with one variant per kind and the dispatch
/// from a kind's name to its configuration struct, so that adding a kind
/// is one line here.
macro_rules! experiments {
    ($( $(#[$doc:meta])* $kind:literal => $variant:ident($config:ty), )+) => {
        /// One experiment of a scenario file, selected by its `kind` field.
        #[derive(Debug, Clone, PartialEq, Deserialize)]
        #[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
        pub enum Experiment {
            $( $(#[$doc])* #[serde(rename = $kind)] $variant($config), )+
        }

        /// Every kind's name, in declaration order.
        pub const KINDS: &[&str] = &[$( $kind, )+];

        $(
            impl OfKind for $config {
                const KIND: &'static str = $kind;
                fn of(experiment: Experiment) -> Option<Self> {
                    match experiment {
                        Experiment::$variant(config) => Some(config),
                        _ => None,
                    }
                }
            }
        )+

        impl Experiment {
    /// Parses and checks a scenario file that must be of kind `T` (the
    /// built-in files of a reproduction).
    pub fn from_toml_as<T: OfKind>(text: &str) -> Result<T, ExperimentError> {
        let experiment = Experiment::from_toml(text)?;
        let found = experiment.kind();
        T::of(experiment).ok_or(ExperimentError::WrongKind {
            found,
            expected: T::KIND,
        })
    }

            /// The `kind` naming this experiment in a file.
            pub fn kind(&self) -> &'static str {
                match self {
                    $( Experiment::$variant(_) => $kind, )+
                }
            }

            /// The configuration, whatever its kind.
            fn config(&self) -> &dyn Kind {
                match self {
                    $( Experiment::$variant(c) => c, )+
                }
            }

            /// Deserializes the fields of kind `kind` from `text` (in which
            /// the `kind` key is blanked out); `None` for an unknown kind.
            fn parse_kind(kind: &str, text: &str) -> Option<Result<Experiment, toml::de::Error>> {
                match kind {
                    $( $kind => Some(toml::from_str::<$config>(text).map(Experiment::$variant)), )+
                    _ => None,
                }
            }
        }
    };
}

experiments! {
    /// `kind = "ronan-transfer"`: one message over the half-duplex radio
    /// channel, simulated and set against Ronan's model (Ronan, Long and
    /// Walsh, section III.B, Tables II and III).
    "ronan-transfer" => RonanTransfer(crate::ronan::RonanTransfer),
    /// `kind = "ronan-measured"`: the measured transfers of Tables V-VII
    /// through host and KISS TNC (Ronan, Long and Walsh, section IV).
    "ronan-measured" => RonanMeasured(crate::ronan::MeasuredConfig),
    /// `kind = "zielinski-throughput"`: throughput of firmware TNC pairs
    /// against k (Zieliński, Figs. 4-6 and 10-13).
    "zielinski-throughput" => ZielinskiThroughput(crate::zielinski::ThroughputExperiment),
    /// `kind = "zielinski-real-window"`: how many I frames a sender puts in
    /// each transmission (Zieliński, Figs. 7-9 and 14-15).
    "zielinski-real-window" => ZielinskiRealWindow(crate::zielinski::RealWindowExperiment),
    /// `kind = "bux-throughput"`: maximum throughput of HDLC NRM and ABM
    /// against message length (Bux, Kümmerle and Truong, Figs. 2-6).
    "bux-throughput" => BuxThroughput(crate::bux::ThroughputExperiment),
    /// `kind = "bux-transfer-time"`: mean transfer time and buffer-holding
    /// time against load or t_p (Bux, Kümmerle and Truong, Figs. 7-11).
    "bux-transfer-time" => BuxTransferTime(crate::bux::TransferTimeExperiment),
    /// `kind = "korb-ping"`: ping round trips over the X.25 network (Korb
    /// and Wills, section 3.1, Table 1).
    "korb-ping" => KorbPing(crate::korb::experiment::PingExperiment),
    /// `kind = "korb-ftp"`: FTP transfers over the X.25 network with one
    /// or more circuits (Korb and Wills, sections 3.3-3.5, Tables 2-4).
    "korb-ftp" => KorbFtp(crate::korb::experiment::FtpExperiment),
    /// `kind = "dstar-table-1"`: the five protocols on the calibrated ID-1
    /// DD channel (Ronan et al., D-STAR, Table I).
    "dstar-table-1" => DstarTable1(crate::dstar::Table1Config),
    /// `kind = "dstar-table-2"`: completion on a hostile path of fades
    /// (Ronan et al., D-STAR, Table II).
    "dstar-table-2" => DstarTable2(crate::dstar::Table2Config),
}

/// A kind's configuration struct, as declared in `experiments!`: its name
/// and its way out of an [`Experiment`].
pub trait OfKind: Sized {
    /// Its `kind` in a file.
    const KIND: &'static str;
    /// The configuration, when `experiment` is of this kind.
    fn of(experiment: Experiment) -> Option<Self>;
}

/// Boxed errors of a kind's run.
pub type RunError = Box<dyn std::error::Error + Send + Sync>;

/// What every kind's configuration struct provides: its checks, and its
/// run as independent points (the sweep's coordinates, each with its own
/// replications) and the tables and figures made from them. The points
/// are what `--shard` deals out to the parts of a run on many machines
/// ([`crate::shard`]); a kind whose run cannot be cut is one point.
pub trait ExperimentKind: Sync {
    /// One point's coordinates.
    type Point: Sync;
    /// What one point gives. It travels between machines in a part file,
    /// exactly (CBOR keeps every `f64` bit for bit).
    type Result: Serialize + DeserializeOwned + Send;
    /// What goes wrong while running.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Checks every parameter against what the experiment can run with.
    fn validate(&self) -> Result<(), InvalidField>;

    /// Every point, in a fixed order (`opts.quick`: a reduced run).
    fn points(&self, opts: &RunOptions) -> Result<Vec<Self::Point>, Self::Error>;

    /// Runs one point. Its random streams come from `opts.seed` and the
    /// point itself, never from which points run beside it.
    fn run_point(
        &self,
        opts: &RunOptions,
        point: &Self::Point,
        progress: &dyn Progress,
    ) -> Result<Self::Result, Self::Error>;

    /// The tables and figures from every point's result, in point order.
    fn assemble(
        &self,
        opts: &RunOptions,
        points: &[Self::Point],
        results: Vec<Self::Result>,
    ) -> Result<Output, Self::Error>;
}

/// The points one part of a run ran, by index, each result encoded as it
/// travels in a part file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartPoints {
    /// How many points the whole run has.
    pub total: usize,
    /// This part's points: (index, result).
    pub results: Vec<(usize, ciborium::Value)>,
}

/// [`ExperimentKind`] without its types, for [`Experiment`]'s dispatch.
trait Kind {
    fn validate(&self) -> Result<(), InvalidField>;
    fn run(&self, opts: &RunOptions, progress: &dyn Progress) -> Result<Output, RunError>;
    fn run_part(
        &self,
        opts: &RunOptions,
        shard: Shard,
        progress: &dyn Progress,
    ) -> Result<PartPoints, RunError>;
    fn merge(&self, opts: &RunOptions, results: Vec<ciborium::Value>) -> Result<Output, RunError>;
}

impl<K: ExperimentKind> Kind for K {
    fn validate(&self) -> Result<(), InvalidField> {
        ExperimentKind::validate(self)
    }

    fn run(&self, opts: &RunOptions, progress: &dyn Progress) -> Result<Output, RunError> {
        let (points, results) = run_all(self, opts, progress)?;
        Ok(self.assemble(opts, &points, results)?)
    }

    fn run_part(
        &self,
        opts: &RunOptions,
        shard: Shard,
        progress: &dyn Progress,
    ) -> Result<PartPoints, RunError> {
        let points = self.points(opts)?;
        let results = run_points(self, opts, &points, shard, progress)?
            .into_iter()
            .map(|(i, r)| ciborium::Value::serialized(&r).map(|v| (i, v)))
            .collect::<Result<_, _>>()?;
        Ok(PartPoints {
            total: points.len(),
            results,
        })
    }

    fn merge(&self, opts: &RunOptions, results: Vec<ciborium::Value>) -> Result<Output, RunError> {
        let points = self.points(opts)?;
        if points.len() != results.len() {
            return Err(format!(
                "the parts have {} points, this experiment {}",
                results.len(),
                points.len()
            )
            .into());
        }
        let results = results
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.deserialized()
                    .map_err(|e| format!("point {i} does not read back: {e}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(self.assemble(opts, &points, results)?)
    }
}

/// Every point of an experiment and its result, in point order.
pub type Swept<K> = (
    Vec<<K as ExperimentKind>::Point>,
    Vec<<K as ExperimentKind>::Result>,
);

/// Every point of `kind` and its result, in point order (for runs that
/// keep more than the [`Output`], such as `reproduce`'s sections).
pub fn run_all<K: ExperimentKind>(
    kind: &K,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<Swept<K>, K::Error> {
    let points = kind.points(opts)?;
    let results = run_points(kind, opts, &points, Shard::WHOLE, progress)?;
    Ok((points, results.into_iter().map(|(_, r)| r).collect()))
}

/// Runs the points `shard` owns on `opts.jobs` threads, in point order. A
/// point runs its own replications on one thread when there are points
/// enough for every thread, else on `opts.jobs`; results do not depend
/// on it.
fn run_points<K: ExperimentKind>(
    kind: &K,
    opts: &RunOptions,
    points: &[K::Point],
    shard: Shard,
    progress: &dyn Progress,
) -> Result<Vec<(usize, K::Result)>, K::Error> {
    let owned: Vec<usize> = (0..points.len()).filter(|&i| shard.owns(i)).collect();
    let inner = RunOptions {
        jobs: if owned.len() >= opts.jobs.get() {
            NonZeroUsize::MIN
        } else {
            opts.jobs
        },
        ..*opts
    };
    try_map_ordered(opts.jobs, &owned, |_, &i| {
        kind.run_point(&inner, &points[i], progress).map(|r| (i, r))
    })
}

/// A parameter value an experiment cannot run with.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{}{field}: {reason}", path_prefix(.within))]
pub struct InvalidField {
    /// The field, as named in the file.
    pub field: &'static str,
    /// The tables the field is in, outermost first: the name of an array
    /// of tables and the index (from 0) of the one holding the field
    /// (`[[figure]]`, `[[figure.case]]`); empty for a top-level field.
    pub within: Vec<(&'static str, usize)>,
    /// What is wrong with its value, and what is allowed.
    pub reason: String,
}

impl InvalidField {
    /// `field` is wrong for `reason`.
    pub fn new(field: &'static str, reason: impl Into<String>) -> Self {
        InvalidField {
            field,
            within: Vec::new(),
            reason: reason.into(),
        }
    }

    /// The same error, its field in table `index` of the array of tables
    /// `array` (called from the outside in: the innermost table first).
    pub fn within(mut self, array: &'static str, index: usize) -> Self {
        self.within.insert(0, (array, index));
        self
    }

    /// Where the field's value is in `text`: the closest place found
    /// along its path (`None` if not even its top-level key is there).
    fn position(&self, text: &str) -> Option<Position> {
        let top: BTreeMap<String, toml::Spanned<Placed>> = toml::from_str(text).ok()?;
        let mut found: Option<&toml::Spanned<Placed>> = None;
        let mut table = Some(&top);
        for &(array, index) in &self.within {
            let Some(entry) = table.and_then(|t| t.get(array)) else {
                break;
            };
            found = Some(entry);
            match entry.get_ref() {
                Placed::Array(items) if index < items.len() => {
                    found = Some(&items[index]);
                    table = match items[index].get_ref() {
                        Placed::Table(t) => Some(t),
                        _ => None,
                    };
                }
                _ => table = None,
            }
        }
        if let Some(value) = table.and_then(|t| t.get(self.field)) {
            found = Some(value);
        }
        found.map(|v| Position::of(text, v.span().start))
    }
}

/// Checks that `value` of `field` lies in `range` ("9 is out of range
/// 1-7"; NaN never does).
pub(crate) fn in_range<T: PartialOrd + fmt::Display>(
    field: &'static str,
    value: T,
    range: RangeInclusive<T>,
) -> Result<(), InvalidField> {
    if range.contains(&value) {
        Ok(())
    } else {
        Err(InvalidField::new(
            field,
            format!("{value} is out of range {}-{}", range.start(), range.end()),
        ))
    }
}

/// Checks that the list `values` of `field` is not empty and that every
/// value lies in `range`.
pub(crate) fn all_in_range<T: PartialOrd + fmt::Display + Copy>(
    field: &'static str,
    values: &[T],
    range: RangeInclusive<T>,
) -> Result<(), InvalidField> {
    if values.is_empty() {
        return Err(InvalidField::new(field, "the list is empty"));
    }
    values
        .iter()
        .try_for_each(|&v| in_range(field, v, range.clone()))
}

/// Checks that the array of tables `field` is not empty (`missing` says so
/// when it is) and that every table in it passes `validate`, an error
/// placed at the table's index.
pub(crate) fn each_valid<T>(
    field: &'static str,
    tables: &[T],
    missing: &str,
    validate: impl Fn(&T) -> Result<(), InvalidField>,
) -> Result<(), InvalidField> {
    if tables.is_empty() {
        return Err(InvalidField::new(field, missing));
    }
    tables
        .iter()
        .enumerate()
        .try_for_each(|(i, t)| validate(t).map_err(|e| e.within(field, i)))
}

/// Checks a figure's `id`, which names its output files: not empty,
/// letters, digits, `-` and `_` only.
pub(crate) fn file_name_id(id: &str) -> Result<(), InvalidField> {
    if !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        Ok(())
    } else {
        Err(InvalidField::new(
            "id",
            format!("\"{id}\" is not a file name: letters, digits, - and _ only"),
        ))
    }
}

/// Checks replications per point: `min` 2-1000 (a confidence interval
/// needs two), `max` from `min` to 1000, `quick` from 2 to `min`.
pub(crate) fn validate_replications(min: u64, max: u64, quick: u64) -> Result<(), InvalidField> {
    if !(2..=1000).contains(&min) {
        return Err(InvalidField::new(
            "replications",
            format!("{min} is out of range 2-1000"),
        ));
    }
    if max < min || max > 1000 {
        return Err(InvalidField::new(
            "max_replications",
            format!("{max} must be from replications ({min}) to 1000"),
        ));
    }
    if !(2..=min).contains(&quick) {
        return Err(InvalidField::new(
            "quick_replications",
            format!("{quick} must be from 2 to replications ({min})"),
        ));
    }
    Ok(())
}

/// `figure[0].case[1].` for a field in those tables.
fn path_prefix(within: &[(&'static str, usize)]) -> String {
    within.iter().map(|(a, i)| format!("{a}[{i}].")).collect()
}

/// A TOML document reduced to where its values are: a table's values by
/// key, an array's by index, with their places in the text.
enum Placed {
    /// A table (or an inline table).
    Table(BTreeMap<String, toml::Spanned<Placed>>),
    /// An array (or an array of tables).
    Array(Vec<toml::Spanned<Placed>>),
    /// Anything else.
    Scalar,
}

impl<'de> Deserialize<'de> for Placed {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Places;
        impl<'de> Visitor<'de> for Places {
            type Value = Placed;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a TOML value")
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Placed, E> {
                Ok(Placed::Scalar)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Placed, E> {
                Ok(Placed::Scalar)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Placed, E> {
                Ok(Placed::Scalar)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Placed, E> {
                Ok(Placed::Scalar)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Placed, E> {
                Ok(Placed::Scalar)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Placed, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Placed::Array(items))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Placed, A::Error> {
                let mut table = BTreeMap::new();
                while let Some((key, value)) = map.next_entry()? {
                    table.insert(key, value);
                }
                Ok(Placed::Table(table))
            }
        }
        deserializer.deserialize_any(Places)
    }
}

/// Why a scenario file could not be read or run. The messages fit on one
/// line.
#[derive(Debug, Error)]
pub enum ExperimentError {
    /// Not TOML, or not an experiment: a syntax error, an unknown `kind`,
    /// an unknown or missing field, a value of the wrong type.
    #[error("{}{message}", at_prefix(.at))]
    Parse {
        /// Where, when the parser could tell.
        at: Option<Position>,
        /// The parser's message.
        message: String,
    },
    /// A field holds a value the experiment cannot run with.
    #[error("{}{invalid}", at_prefix(.at))]
    Invalid {
        /// Where the value is, when read from a file.
        at: Option<Position>,
        /// The field and what is wrong.
        invalid: InvalidField,
    },
    /// A file of one kind given to the runner of another.
    #[error("experiment kind \"{found}\" given to the {expected} runner")]
    WrongKind {
        /// The file's kind.
        found: &'static str,
        /// The kind the runner takes.
        expected: &'static str,
    },
    /// The experiment failed while running.
    #[error("{kind}: {source}")]
    Run {
        /// The experiment's kind.
        kind: &'static str,
        /// What went wrong.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl ExperimentError {
    /// Whether the scenario file is at fault (rather than the run).
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            ExperimentError::Parse { .. }
                | ExperimentError::Invalid { .. }
                | ExperimentError::WrongKind { .. }
        )
    }
}

fn at_prefix(at: &Option<Position>) -> String {
    at.map(|p| format!("{p}: ")).unwrap_or_default()
}

impl Experiment {
    /// Parses and checks a scenario file. Errors give the line and column
    /// and name the field.
    pub fn from_toml(text: &str) -> Result<Experiment, ExperimentError> {
        let parse_error = |e: toml::de::Error| ExperimentError::Parse {
            at: e.span().map(|s| Position::of(text, s.start)),
            message: e.message().trim_end().replace('\n', "; "),
        };
        // First the top-level fields with their places (TOML syntax), ...
        let fields: BTreeMap<String, toml::Spanned<toml::Value>> =
            toml::from_str(text).map_err(parse_error)?;
        let Some(kind) = fields.get("kind") else {
            return Err(ExperimentError::Parse {
                at: None,
                message: format!("missing field `kind` (one of {})", kinds_list()),
            });
        };
        let kind_at = Position::of(text, kind.span().start);
        let Some(name) = kind.get_ref().as_str() else {
            return Err(ExperimentError::Parse {
                at: Some(kind_at),
                message: format!("kind: expected a string, one of {}", kinds_list()),
            });
        };
        // ... then that kind's fields straight from the text, so that an
        // error inside them keeps its place (serde's internally tagged
        // enums buffer the fields and lose it).
        let experiment = Experiment::parse_kind(name, &blank_line_of(text, kind.span()))
            .ok_or_else(|| ExperimentError::Parse {
                at: Some(kind_at),
                message: format!("unknown kind `{name}`, expected one of {}", kinds_list()),
            })?
            .map_err(parse_error)?;
        experiment
            .validate()
            .map_err(|invalid| ExperimentError::Invalid {
                at: invalid.position(text),
                invalid,
            })?;
        Ok(experiment)
    }

    /// Checks every parameter against what the experiment can run with.
    pub fn validate(&self) -> Result<(), InvalidField> {
        self.config().validate()
    }

    /// Runs the experiment (`opts.quick`: a reduced run, see each kind).
    pub fn run(
        &self,
        opts: &RunOptions,
        progress: &dyn Progress,
    ) -> Result<Output, ExperimentError> {
        self.checked()?;
        self.config()
            .run(opts, progress)
            .map_err(|source| self.run_error(source))
    }

    /// Runs the points of part `shard` only ([`crate::shard`]).
    pub fn run_part(
        &self,
        opts: &RunOptions,
        shard: Shard,
        progress: &dyn Progress,
    ) -> Result<PartPoints, ExperimentError> {
        self.checked()?;
        self.config()
            .run_part(opts, shard, progress)
            .map_err(|source| self.run_error(source))
    }

    /// The output of the whole run from every point's result, in point
    /// order, as the parts gave them.
    pub fn merge(
        &self,
        opts: &RunOptions,
        results: Vec<ciborium::Value>,
    ) -> Result<Output, ExperimentError> {
        self.checked()?;
        self.config()
            .merge(opts, results)
            .map_err(|source| self.run_error(source))
    }

    fn checked(&self) -> Result<(), ExperimentError> {
        self.validate()
            .map_err(|invalid| ExperimentError::Invalid { at: None, invalid })
    }

    fn run_error(&self, source: RunError) -> ExperimentError {
        ExperimentError::Run {
            kind: self.kind(),
            source,
        }
    }
}

/// `` `a`, `b` `` for messages.
fn kinds_list() -> String {
    KINDS
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `text` with the line(s) holding the value at `span`, and its key, turned
/// to spaces (line breaks kept, so every other place stays where it was).
fn blank_line_of(text: &str, span: core::ops::Range<usize>) -> String {
    let start = text[..floor_char_boundary(text, span.start)]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let end = floor_char_boundary(text, span.end);
    let blanked: String = text[start..end]
        .chars()
        .map(|c| if c == '\n' { c } else { ' ' })
        .collect();
    format!("{}{blanked}{}", &text[..start], &text[end..])
}

/// The largest char boundary of `text` not above `offset`.
fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut i = offset.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The longest message a transfer kind simulates, octets (16 MiB): the
/// sender's message and the receiver's copy are held in memory, so a
/// longer one is refused as an input error rather than aborting the
/// process on a failed allocation.
pub(crate) const MAX_MESSAGE_OCTETS: u64 = 1 << 24;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ronan::experiment::tests::{error, with, TABLE_I};

    #[test]
    fn an_unknown_field_is_named_with_its_line() {
        let e = error(&with("persistence = 63", "persistance = 63"));
        assert!(e.contains("unknown field `persistance`"), "{e}");
        assert!(e.starts_with("line 10, column 1: "), "{e}");
    }

    #[test]
    fn an_unknown_kind_is_named() {
        let e = error(&with("ronan-transfer", "ronan-transfers"));
        assert_eq!(
            e,
            "line 2, column 8: unknown kind `ronan-transfers`, expected one of `ronan-transfer`, \
             `ronan-measured`, `zielinski-throughput`, `zielinski-real-window`, `bux-throughput`, \
             `bux-transfer-time`, `korb-ping`, `korb-ftp`, `dstar-table-1`, `dstar-table-2`"
        );
        let e = error(&with("kind = \"ronan-transfer\"", ""));
        assert!(e.starts_with("missing field `kind`"), "{e}");
        let e = error(&with("\"ronan-transfer\"", "3"));
        assert!(
            e.starts_with("line 2, column 8: kind: expected a string"),
            "{e}"
        );
    }

    #[test]
    fn the_serde_enum_reads_files_as_from_toml_does() {
        let derived: Experiment = toml::from_str(TABLE_I).unwrap();
        assert_eq!(derived, Experiment::from_toml(TABLE_I).unwrap());
        assert_eq!(derived.kind(), KINDS[0]);
    }

    #[test]
    fn a_missing_field_is_named() {
        let e = error(&with("slot_ms = 20\n", ""));
        assert!(e.contains("missing field `slot_ms`"), "{e}");
    }

    #[test]
    fn a_value_of_the_wrong_type_is_placed() {
        let e = error(&with("slot_ms = 20", "slot_ms = \"20\""));
        assert!(
            e.starts_with("line 7, column 11: invalid type: string"),
            "{e}"
        );
    }

    #[test]
    fn bad_toml_gives_its_line() {
        let e = error(&with("window = [2, 7]", "window = [2, 7"));
        assert!(e.starts_with("line 5, column 1: invalid array"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn out_of_range_values_name_field_and_line() {
        let e = error(&with("window = [2, 7]", "window = [2, 9]"));
        assert_eq!(
            e,
            "line 4, column 10: window: 9 is out of range 1-7 (AX.25 modulo 8)"
        );
        let e = error(&with("replications = 2", "replications = 0"));
        assert!(
            e.starts_with("line 11, column 16: replications: 0 is too few"),
            "{e}"
        );
        let e = error(&with("persistence = 63", "persistence = 256"));
        assert!(e.contains("persistence: 256 is out of range 0-255"), "{e}");
    }
}
