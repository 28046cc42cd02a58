//! The papers' published figures, as delivered to the team: the CSV files
//! of `crates/scenario/published/`, compiled in (so that `linklab
//! reproduce` needs no file at run time) and read by one loader.
//!
//! Each paper's module declares the row of its file as a
//! `#[derive(Deserialize)]` struct whose fields name the file's columns
//! (columns it does not name are ignored, an empty cell is `None` for an
//! `Option` field) and implements [`Row`] with the file's [`Source`];
//! [`load`] reads every row. Errors name the file and the line.

use serde::de::DeserializeOwned;
use thiserror::Error;

/// One compiled-in file of published figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    /// File name in `crates/scenario/published/`.
    name: &'static str,
    /// Its text.
    text: &'static str,
}

/// The [`Source`] of `crates/scenario/published/$name`.
macro_rules! source {
    ($name:literal) => {
        Source {
            name: $name,
            text: include_str!(concat!("../published/", $name)),
        }
    };
}

/// Ronan, Long and Walsh: Tables II, III, V, VI and VII.
pub const RONAN_AX25_TRANSFER: Source = source!("ronan_ax25_transfer.csv");
/// Korb: Table 1 (ping round trips).
pub const KORB_PING: Source = source!("korb_ping.csv");
/// Korb: Tables 2-4 (FTP over one or more circuits).
pub const KORB_FTP: Source = source!("korb_ftp.csv");
/// Zieliński: the throughputs quoted in the text.
pub const ZIELINSKI_TEXT: Source = source!("zielinski_text.csv");
/// Ronan et al., D-STAR: Tables I and II.
pub const DSTAR_DD: Source = source!("dstar_dd.csv");

/// A row of a file of published figures.
pub trait Row: DeserializeOwned {
    /// The file its rows are read from.
    const SOURCE: Source;
}

/// A file of published figures did not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("crates/scenario/published/{file}, line {line}: {message}")]
pub struct PublishedError {
    /// The file name.
    pub file: &'static str,
    /// The line, counted from 1.
    pub line: u64,
    /// What is wrong, naming the column when the parser could tell.
    pub message: String,
}

/// Every row of `R`'s file, in file order.
pub fn load<R: Row>() -> Result<Vec<R>, PublishedError> {
    parse(R::SOURCE)
}

/// Every row of `source`, in file order (blank lines skipped, cells
/// trimmed).
fn parse<R: DeserializeOwned>(source: Source) -> Result<Vec<R>, PublishedError> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(source.text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| error(source, &csv::StringRecord::new(), &e))?
        .clone();
    reader
        .deserialize()
        .map(|row| row.map_err(|e| error(source, &headers, &e)))
        .collect()
}

/// `e` as a [`PublishedError`] of `source`, the column named from
/// `headers`.
fn error(source: Source, headers: &csv::StringRecord, e: &csv::Error) -> PublishedError {
    let message = match e.kind() {
        csv::ErrorKind::Deserialize { err, .. } => {
            match err
                .field()
                .and_then(|f| usize::try_from(f).ok())
                .and_then(|f| headers.get(f))
            {
                Some(column) => format!("{column}: {}", err.kind()),
                None => err.kind().to_string(),
            }
        }
        _ => e.to_string(),
    };
    PublishedError {
        file: source.name,
        // The header (line 1) is the only place without a position.
        line: e.position().map_or(1, csv::Position::line),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Deserialize)]
    struct Figure {
        name: String,
        value: f64,
        low: Option<f64>,
    }

    fn parse_text(text: &'static str) -> Result<Vec<Figure>, PublishedError> {
        parse(Source {
            name: "test.csv",
            text,
        })
    }

    #[test]
    fn rows_are_read_by_column_name_with_empty_cells_as_none() {
        let rows = parse_text("value,extra,name,low\n1.5,x,a,\n\n2, y ,b,0.5\n").unwrap();
        assert_eq!(
            rows,
            [
                Figure {
                    name: "a".into(),
                    value: 1.5,
                    low: None
                },
                Figure {
                    name: "b".into(),
                    value: 2.0,
                    low: Some(0.5)
                },
            ]
        );
    }

    #[test]
    fn errors_name_the_file_the_line_and_the_column() {
        let e = parse_text("name,value,low\na,1,\nb,lots,\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert_eq!(
            e.to_string(),
            "crates/scenario/published/test.csv, line 3: value: invalid float literal"
        );
        let e = parse_text("name,low\na,1\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("missing field `value`"), "{e}");
        let e = parse_text("name,value,low\na,1,2,3\n").unwrap_err();
        assert_eq!(e.line, 2);
    }
}
