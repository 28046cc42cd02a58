//! The report's words: each check's note and each section's text, kept as
//! data in `crates/scenario/experiments/notes/*.toml` (compiled in, as
//! `gaps.toml` is) rather than as string literals among the computations.
//!
//! A file holds two tables, `[check]` (notes, keyed by check id, or by the
//! id with its varying part written `*` when one text serves a family of
//! checks) and `[section]` (section texts, keyed `paper/section`). A text
//! names the computed values it quotes as `{placeholder}`s (`{{` and `}}`
//! are literal braces), which the code fills through `check_note!` and
//! `section_text!`: `check_note!("bux1982/fig2/left-of-maximum", top =
//! top, compared = list)`; a value may itself be a text chosen from the
//! data (a shared head's `{more}`). A run's numbers come only through
//! placeholders, never written into a text.
//!
//! Rendering refuses a key that is not in the data, a placeholder that is
//! not supplied and a value that the text does not use; the tests hold the
//! keys the code names and the data's keys one for one, and each call's
//! values to its text's placeholders.

use std::collections::BTreeMap;
use std::fmt::{self, Display, Write as _};
use std::sync::LazyLock;

use serde::Deserialize;
use thiserror::Error;

/// Every file of report text: its name in
/// `crates/scenario/experiments/notes/` and its text.
const SOURCES: &[(&str, &str)] = &[
    (
        "bux1982.toml",
        include_str!("../experiments/notes/bux1982.toml"),
    ),
    (
        "korb1987.toml",
        include_str!("../experiments/notes/korb1987.toml"),
    ),
    (
        "zielinski2013.toml",
        include_str!("../experiments/notes/zielinski2013.toml"),
    ),
    (
        "ronan-ax25.toml",
        include_str!("../experiments/notes/ronan-ax25.toml"),
    ),
    (
        "ronan-dstar.toml",
        include_str!("../experiments/notes/ronan-dstar.toml"),
    ),
];

/// What a file of report text holds.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// Check notes by check id.
    #[serde(default)]
    check: BTreeMap<String, String>,
    /// Section texts by section id.
    #[serde(default)]
    section: BTreeMap<String, String>,
}

/// Which table of the data a text is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `[check]`: a check's note.
    Check,
    /// `[section]`: a section's text.
    Section,
}

impl Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Check => "check",
            Kind::Section => "section",
        })
    }
}

/// The report text could not be read or filled in.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProseError {
    /// A file does not parse, or repeats a key another file has.
    #[error("crates/scenario/experiments/notes/{file}: {message}")]
    File {
        /// The file name.
        file: &'static str,
        /// What is wrong.
        message: String,
    },
    /// No text under this key.
    #[error("no [{kind}] text \"{key}\" in crates/scenario/experiments/notes/")]
    Missing {
        /// The table looked in.
        kind: Kind,
        /// The key.
        key: String,
    },
    /// The text is not well formed, or its placeholders and the values
    /// given differ.
    #[error("[{kind}] text \"{key}\": {message}")]
    Render {
        /// The table.
        kind: Kind,
        /// The key.
        key: String,
        /// What is wrong.
        message: String,
    },
}

/// Every text, by table and key.
#[derive(Debug, Default)]
struct Prose {
    check: BTreeMap<String, (&'static str, String)>,
    section: BTreeMap<String, (&'static str, String)>,
}

/// Reads every file, refusing a key given twice.
fn load() -> Result<Prose, ProseError> {
    let mut prose = Prose::default();
    for &(name, text) in SOURCES {
        let file: File = toml::from_str(text).map_err(|e| ProseError::File {
            file: name,
            message: e.to_string(),
        })?;
        for (table, texts) in [
            (&mut prose.check, file.check),
            (&mut prose.section, file.section),
        ] {
            for (key, text) in texts {
                if let Some((other, _)) = table.insert(key.clone(), (name, text)) {
                    return Err(ProseError::File {
                        file: name,
                        message: format!("\"{key}\" is also in {other}"),
                    });
                }
            }
        }
    }
    Ok(prose)
}

static PROSE: LazyLock<Result<Prose, ProseError>> = LazyLock::new(load);

/// The text under `key` in table `kind` with its placeholders filled from
/// `values`.
pub fn text(kind: Kind, key: &str, values: &[(&str, &dyn Display)]) -> Result<String, ProseError> {
    let prose = PROSE.as_ref().map_err(Clone::clone)?;
    let table = match kind {
        Kind::Check => &prose.check,
        Kind::Section => &prose.section,
    };
    let (_, template) = table.get(key).ok_or_else(|| ProseError::Missing {
        kind,
        key: key.to_string(),
    })?;
    render(template, values).map_err(|message| ProseError::Render {
        kind,
        key: key.to_string(),
        message,
    })
}

/// The same as [`text`] for text the code names: the data is compiled in
/// and the tests hold it to the code, so a failure here is a bug, reported
/// with the key.
pub fn built_in(kind: Kind, key: &str, values: &[(&str, &dyn Display)]) -> String {
    text(kind, key, values).unwrap_or_else(|e| panic!("{e}"))
}

/// A check's note from the data: `check_note!("paper/figure/what", name =
/// value, ...)`, every `{name}` of the text filled with its value's
/// `Display`. (`@Check` or `@Section` first names the table; that is how
/// `section_text!` calls it.)
#[macro_export]
macro_rules! check_note {
    (@$kind:ident $key:literal $(, $name:ident = $value:expr)* $(,)?) => {
        $crate::prose::built_in(
            $crate::prose::Kind::$kind,
            $key,
            &[$((stringify!($name), &$value as &dyn ::std::fmt::Display)),*],
        )
    };
    ($($arguments:tt)*) => {
        $crate::check_note!(@Check $($arguments)*)
    };
}

/// A section's text from the data, as [`check_note!`].
#[macro_export]
macro_rules! section_text {
    ($($arguments:tt)*) => {
        $crate::check_note!(@Section $($arguments)*)
    };
}

/// A piece of a text: literal text or a placeholder's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece<'a> {
    /// Text as it is (a doubled brace already made single).
    Literal(&'a str),
    /// `{name}`.
    Placeholder(&'a str),
}

/// `template` cut into literal text and placeholders; an unmatched brace
/// is an error.
fn pieces(template: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(at) = rest.find(['{', '}']) {
        pieces.push(Piece::Literal(&rest[..at]));
        let tail = &rest[at..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            pieces.push(Piece::Literal(&tail[..1]));
            rest = &tail[2..];
        } else if let Some(after) = tail.strip_prefix('{') {
            let end = after
                .find('}')
                .ok_or_else(|| format!("unclosed {{ at \"{}\"", excerpt(tail)))?;
            pieces.push(Piece::Placeholder(&after[..end]));
            rest = &after[end + 1..];
        } else {
            return Err(format!("unmatched }} at \"{}\"", excerpt(tail)));
        }
    }
    pieces.push(Piece::Literal(rest));
    Ok(pieces)
}

/// `template` with each `{name}` replaced by the value of that name and
/// `{{`, `}}` by single braces; an unknown name, a value the template does
/// not use, a name given twice or an unmatched brace is an error.
pub fn render(template: &str, values: &[(&str, &dyn Display)]) -> Result<String, String> {
    for (i, (name, _)) in values.iter().enumerate() {
        if values[..i].iter().any(|(other, _)| other == name) {
            return Err(format!("value {{{name}}} given twice"));
        }
    }
    let mut used = vec![false; values.len()];
    let mut out = String::with_capacity(template.len());
    for piece in pieces(template)? {
        match piece {
            Piece::Literal(text) => out.push_str(text),
            Piece::Placeholder(name) => {
                let index = values
                    .iter()
                    .position(|(n, _)| *n == name)
                    .ok_or_else(|| format!("no value for placeholder {{{name}}}"))?;
                used[index] = true;
                write!(out, "{}", values[index].1).map_err(|e| e.to_string())?;
            }
        }
    }
    match values.iter().zip(&used).find(|(_, used)| !**used) {
        Some(((name, _), _)) => Err(format!("value {{{name}}} not used by the text")),
        None => Ok(out),
    }
}

/// The first few characters of `s`, for error messages.
fn excerpt(s: &str) -> &str {
    s.char_indices().nth(30).map_or(s, |(i, _)| &s[..i])
}

#[cfg(test)]
mod tests;
