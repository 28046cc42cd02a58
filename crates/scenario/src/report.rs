//! What a reproduction hands to `linklab reproduce` and `linklab sim`:
//! tables, figures with confidence intervals, and checks against the
//! published numbers. Rendering (text, CSV, SVG, HTML, `summary.json`) is
//! the CLI's business; the runners only fill these in.

use std::num::NonZeroUsize;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The papers `linklab reproduce` knows, by their `summary.json` ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Paper {
    /// Zieliński, "Effective throughput of AX.25 protocol", 2013.
    #[serde(rename = "zielinski2013")]
    Zielinski2013,
    /// Ronan, Long and Walsh, "More experiments with DTN over AX.25 networks".
    #[serde(rename = "ronan-ax25")]
    RonanAx25,
    /// Bux, Kümmerle and Truong, "Data link-control performance: results
    /// comparing HDLC operational modes", 1982.
    #[serde(rename = "bux1982")]
    Bux1982,
    /// Korb and Wills, "Some experiments with TCP/IP protocols over an
    /// X.25 network", Purdue CSD-TR-664, 1987.
    #[serde(rename = "korb1987")]
    Korb1987,
    /// Ronan, Long and Walsh, D-STAR Digital Data throughput of IPv4,
    /// IPv6, DTN TCP-CL and NORM-CL.
    #[serde(rename = "ronan-dstar")]
    RonanDstar,
}

impl Paper {
    /// The id used in `summary.json` and on the command line.
    pub fn id(self) -> &'static str {
        match self {
            Paper::Zielinski2013 => "zielinski2013",
            Paper::RonanAx25 => "ronan-ax25",
            Paper::Bux1982 => "bux1982",
            Paper::Korb1987 => "korb1987",
            Paper::RonanDstar => "ronan-dstar",
        }
    }

    /// Authors, title and year, for headings.
    pub fn citation(self) -> &'static str {
        match self {
            Paper::Zielinski2013 => {
                "B. Zieliński, \"Effective throughput of AX.25 protocol\", Bull. Pol. Ac.: Tech. \
                    61(3), 2013"
            }
            Paper::RonanAx25 => {
                "J. Ronan, D. Long, K. Walsh, \"More experiments with DTN over AX.25 networks\""
            }
            Paper::Bux1982 => {
                "W. Bux, K. Kümmerle, H. L. Truong, \"Data link-control performance: results \
                    comparing HDLC operational modes\", Computer Networks 6, 1982"
            }
            Paper::Korb1987 => {
                "J. T. Korb, C. E. Wills, \"Some experiments with TCP/IP protocols over an X.25 \
                    network\", Purdue CSD-TR-664, 1987"
            }
            Paper::RonanDstar => {
                "J. Ronan, D. Long, K. Walsh, D-STAR Digital Data: IPv4, IPv6, DTN TCP-CL and \
                    NORM-CL over Icom ID-1 radios"
            }
        }
    }
}

/// One comparison with a published figure, as written to `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// Unique, path-like: `paper/figure/what`.
    pub id: String,
    /// The paper compared with.
    pub paper: Paper,
    /// What is compared, in a sentence.
    pub what: String,
    /// The published figure (a number, or text such as "about 5900", or a
    /// conclusion for a qualitative check).
    pub paper_value: Value,
    /// linklab's figure (a number, or text for a qualitative check).
    pub ours: Value,
    /// Unit of both values ("s", "bit/s", ...; empty for qualitative).
    pub unit: String,
    /// Relative tolerance (0.10 is 10%); `None` for a qualitative check.
    pub tolerance: Option<f64>,
    /// Whether the check passes.
    pub pass: bool,
    /// Whether a value was fitted to this figure or it is predicted.
    pub basis: Basis,
    /// Why ours differs from the paper, or what the comparison assumes.
    pub note: String,
}

/// Whether a check's agreement was made or foretold (docs/reproduce.md,
/// "How a check works").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// A calibration: a value of the model was fitted to make this figure
    /// agree, so the check shows that the fit holds.
    Fit,
    /// Nothing was fitted to this figure.
    #[default]
    Prediction,
}

impl Check {
    /// A numeric check: passes when `|ours / paper − 1| ≤ tolerance`.
    pub fn relative(
        id: impl Into<String>,
        paper: Paper,
        what: impl Into<String>,
        published: f64,
        ours: f64,
        unit: &str,
        tolerance: f64,
    ) -> Self {
        let pass = published != 0.0 && (ours / published - 1.0).abs() <= tolerance;
        Check {
            id: id.into(),
            paper,
            what: what.into(),
            paper_value: published.into(),
            ours: round_sig(ours, 6).into(),
            unit: unit.to_string(),
            tolerance: Some(tolerance),
            pass,
            basis: Basis::Prediction,
            note: String::new(),
        }
    }

    /// A qualitative check (an ordering, a conclusion): text both sides and
    /// no tolerance.
    pub fn qualitative(
        id: impl Into<String>,
        paper: Paper,
        what: impl Into<String>,
        published: impl Into<String>,
        ours: impl Into<String>,
        pass: bool,
    ) -> Self {
        Check {
            id: id.into(),
            paper,
            what: what.into(),
            paper_value: Value::String(published.into()),
            ours: Value::String(ours.into()),
            unit: String::new(),
            tolerance: None,
            pass,
            basis: Basis::Prediction,
            note: String::new(),
        }
    }

    /// The same check as a calibration: a value was fitted to this figure.
    pub fn fitted(self) -> Self {
        self.with_basis(Basis::Fit)
    }

    /// The same check with its basis given.
    pub fn with_basis(mut self, basis: Basis) -> Self {
        self.basis = basis;
        self
    }

    /// The same check with an explanation attached.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = note.into();
        self
    }

    /// The same check with the published figure shown as the paper words
    /// it (e.g. "about 5900"), keeping the comparison already made.
    pub fn with_paper_text(mut self, text: impl Into<String>) -> Self {
        self.paper_value = Value::String(text.into());
        self
    }
}

/// Rounds to `digits` significant digits (for readable JSON).
fn round_sig(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(digits - 1 - v.abs().log10().floor() as i32);
    (v * scale).round() / scale
}

/// A table of already formatted cells (written as text, CSV and HTML).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// File-name-safe id (the CSV is `<id>.csv`).
    pub id: String,
    /// Caption.
    pub title: String,
    /// Column headings.
    pub columns: Vec<String>,
    /// Rows, one cell per column.
    pub rows: Vec<Vec<String>>,
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SeriesStyle {
    /// linklab's simulation: markers with confidence-interval bars.
    Simulated,
    /// A closed-form model: a line.
    Model,
    /// The paper's published values: hollow markers.
    Published,
    /// A histogram: bars at each x.
    Bars,
}

/// One point; `half_width` is the 95% confidence half-width when known.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Abscissa.
    pub x: f64,
    /// Ordinate (a mean for simulated points).
    pub y: f64,
    /// 95% confidence half-width of `y`.
    pub half_width: Option<f64>,
}

/// One curve of a figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// How to draw it.
    pub style: SeriesStyle,
    /// The points, in x order.
    pub points: Vec<Point>,
}

/// A figure (an SVG in the report, a CSV of its points).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// File-name-safe id (`<id>.svg`, `<id>.csv`).
    pub id: String,
    /// Caption.
    pub title: String,
    /// X axis label with unit.
    pub x_label: String,
    /// Y axis label with unit.
    pub y_label: String,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// The curves.
    pub series: Vec<Series>,
}

/// A part of a paper's reproduction: one table or figure of the paper with
/// what linklab made of it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Section {
    /// Heading, e.g. "Tables V-VII: measured transfer times".
    pub heading: String,
    /// What was simulated and how, and an explanation of every gap.
    pub text: String,
    /// Tables.
    pub tables: Vec<Table>,
    /// Figures.
    pub figures: Vec<Figure>,
    /// Checks against the paper.
    pub checks: Vec<Check>,
}

/// Everything reproduced from one paper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaperReport {
    /// The paper.
    pub paper: Paper,
    /// Its sections, in the paper's order.
    pub sections: Vec<Section>,
}

/// What `linklab sim FILE.toml` gets back from one experiment.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Output {
    /// Tables.
    pub tables: Vec<Table>,
    /// Figures.
    pub figures: Vec<Figure>,
}

/// How thoroughly to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOptions {
    /// `--quick`: fewer replications and points, for CI; the checks stay
    /// the same and must still pass.
    pub quick: bool,
    /// Master seed of every random stream.
    pub seed: u64,
    /// Threads that share the work (`--jobs`): sections, sweep points and
    /// replications. Results do not depend on it.
    pub jobs: NonZeroUsize,
}

impl Default for RunOptions {
    /// The built-in seed, full runs, every core.
    fn default() -> Self {
        RunOptions {
            quick: false,
            seed: 0x4c49_4e4b,
            jobs: linklab_sim::available_threads(),
        }
    }
}

/// Progress reporting (a progress bar in the CLI). Shared across the
/// threads that run replications.
pub trait Progress: Sync {
    /// Announces `units` more work units.
    fn add_work(&self, units: u64);
    /// Marks `units` work units done; `what` names the current step.
    fn advance(&self, units: u64, what: &str);
}

/// Progress reporting that reports nothing (tests, `--quiet`).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn add_work(&self, _units: u64) {}
    fn advance(&self, _units: u64, _what: &str) {}
}

/// A label as a part of a check id: lowercase letters and digits, every
/// other run of characters one hyphen (`Spirit-2 std` is `spirit-2-std`).
pub fn check_id_part(label: &str) -> String {
    let mut s = String::new();
    for c in label.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    s.trim_end_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_check_passes_inside_its_tolerance_only() {
        let inside = Check::relative("x", Paper::Bux1982, "w", 100.0, 109.9, "s", 0.10);
        let outside = Check::relative("x", Paper::Bux1982, "w", 100.0, 110.1, "s", 0.10);
        assert!(inside.pass);
        assert!(!outside.pass);
        assert_eq!(inside.tolerance, Some(0.10));
    }

    #[test]
    fn summary_json_uses_the_issue_field_names() {
        let c = Check::qualitative("b/abm", Paper::Bux1982, "ABM ≥ NRM", "yes", "yes", true);
        let v = serde_json::to_value(&c).unwrap();
        for key in [
            "id",
            "paper",
            "what",
            "paper_value",
            "ours",
            "unit",
            "tolerance",
            "pass",
            "basis",
        ] {
            assert!(v.get(key).is_some(), "{key} missing");
        }
        assert_eq!(v["paper"], "bux1982");
        assert!(v["tolerance"].is_null());
        assert_eq!(v["basis"], "prediction");
        assert_eq!(c.fitted().basis, Basis::Fit);
    }

    #[test]
    fn round_sig_keeps_six_digits() {
        assert_eq!(round_sig(1035.6123456, 6), 1035.61);
        assert_eq!(round_sig(0.000123456789, 6), 0.000123457);
    }

    #[test]
    fn a_label_in_a_check_id_is_lowercase_words_joined_by_single_hyphens() {
        assert_eq!(check_id_part("Spirit-2 std"), "spirit-2-std");
        assert_eq!(check_id_part("DTN (NORM-CL, 128 kB)"), "dtn-norm-cl-128-kb");
        assert_eq!(check_id_part(" TF  window "), "tf-window");
    }
}
