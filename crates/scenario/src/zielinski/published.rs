//! The throughputs Zieliński quotes in his text (the rows of
//! [`ZIELINSKI_TEXT`], read by [`published::load`](crate::published::load))
//! and how a simulated figure is judged against each: within 10% of
//! "about X" or "almost X", and within [0.9 · low, 1.1 · high] of a range
//! "low-high".

use serde::Deserialize;

use super::ZielinskiError;
use crate::published::{load, Row as PublishedRow, Source, ZIELINSKI_TEXT};
use crate::report::{Basis, Check, Paper};

/// Relative tolerance of every numeric check: within 10%.
pub const TOLERANCE: f64 = 0.10;

/// A published figure as the paper words it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quoted {
    /// "about X" or "almost X".
    About(f64),
    /// "low-high".
    Range(f64, f64),
}

impl Quoted {
    /// Reads "about 5900", "almost 5500", "750-900", or "about 4000
    /// (theory about 6000)" (the part in brackets is a remark).
    pub fn parse(text: &str) -> Result<Quoted, ZielinskiError> {
        let bad = || ZielinskiError::Published(text.to_string());
        let main = text.split('(').next().unwrap_or(text).trim();
        let number = main
            .trim_start_matches("about")
            .trim_start_matches("almost")
            .trim();
        if let Some((lo, hi)) = number.split_once('-') {
            let lo = lo.trim().parse().map_err(|_| bad())?;
            let hi = hi.trim().parse().map_err(|_| bad())?;
            return Ok(Quoted::Range(lo, hi));
        }
        number.parse().map(Quoted::About).map_err(|_| bad())
    }

    /// Whether `ours` agrees within [`TOLERANCE`].
    pub fn agrees(&self, ours: f64) -> bool {
        match *self {
            Quoted::About(x) => x != 0.0 && (ours / x - 1.0).abs() <= TOLERANCE,
            Quoted::Range(lo, hi) => {
                ours >= (1.0 - TOLERANCE) * lo && ours <= (1.0 + TOLERANCE) * hi
            }
        }
    }

    /// A representative number (the value, or the middle of a range).
    pub fn value(&self) -> f64 {
        match *self {
            Quoted::About(x) => x,
            Quoted::Range(lo, hi) => (lo + hi) / 2.0,
        }
    }
}

/// One row of the reference file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "TextRow")]
pub struct Row {
    /// Radio rate, kbit/s.
    pub radio_kbps: f64,
    /// The window(s) the figure refers to, as written ("7", "1-7").
    pub k: String,
    /// What was measured or computed.
    pub what: String,
    /// The figure as written.
    pub text: String,
    /// The figure.
    pub quoted: Quoted,
}

impl PublishedRow for Row {
    const SOURCE: Source = ZIELINSKI_TEXT;
}

/// The columns of the file that a [`Row`] keeps, as written.
#[derive(Deserialize)]
struct TextRow {
    radio_kbps: f64,
    k: String,
    what: String,
    value_bps: String,
}

impl TryFrom<TextRow> for Row {
    type Error = ZielinskiError;

    fn try_from(row: TextRow) -> Result<Row, ZielinskiError> {
        Ok(Row {
            quoted: Quoted::parse(&row.value_bps)?,
            radio_kbps: row.radio_kbps,
            k: row.k,
            what: row.what,
            text: row.value_bps,
        })
    }
}

/// The row whose description starts with `what` at `radio_kbps`.
pub fn row(radio_kbps: f64, what: &str) -> Result<Row, ZielinskiError> {
    load::<Row>()?
        .into_iter()
        .find(|r| (r.radio_kbps - radio_kbps).abs() < 1e-9 && r.what.starts_with(what))
        .ok_or_else(|| ZielinskiError::Published(format!("{radio_kbps} kbit/s: {what}")))
}

/// A numeric check of `ours` (bit/s) against `row`.
pub fn check(id: String, row: &Row, what: String, ours: f64) -> Check {
    Check {
        id,
        paper: Paper::Zielinski2013,
        what,
        paper_value: row.text.clone().into(),
        ours: ((ours * 10.0).round() / 10.0).into(),
        unit: "bit/s".to_string(),
        tolerance: Some(TOLERANCE),
        pass: row.quoted.agrees(ours),
        basis: Basis::Prediction,
        note: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paper_s_wordings_parse() {
        assert_eq!(Quoted::parse("about 5900").unwrap(), Quoted::About(5900.0));
        assert_eq!(Quoted::parse("almost 5500").unwrap(), Quoted::About(5500.0));
        assert_eq!(
            Quoted::parse("750-900").unwrap(),
            Quoted::Range(750.0, 900.0)
        );
        assert_eq!(
            Quoted::parse("about 4000 (theory about 6000)").unwrap(),
            Quoted::About(4000.0)
        );
        assert!(Quoted::parse("lots").is_err());
        assert_eq!(load::<Row>().unwrap().len(), 12);
    }

    #[test]
    fn a_range_passes_within_ten_percent_of_its_ends() {
        let r = Quoted::Range(750.0, 900.0);
        assert!(r.agrees(675.1) && r.agrees(989.9));
        assert!(!r.agrees(674.9) && !r.agrees(990.1));
        assert!(Quoted::About(1000.0).agrees(1099.9));
        assert!(!Quoted::About(1000.0).agrees(1101.0));
    }
}
