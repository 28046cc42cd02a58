//! The files `linklab reproduce` and `linklab sim` write: a CSV per table,
//! a CSV and an SVG per figure, `summary.json`; and the tables as text on
//! stdout.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{bail, Context};
use linklab_scenario::report::{Check, Figure, Table};
use serde::Serialize;

use super::svg;

/// Creates `dir` and its parents.
pub fn create_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create output directory {}", dir.display()))
}

/// Writes `contents` to `dir/name`.
pub fn write(dir: &Path, name: &str, contents: impl AsRef<[u8]>) -> anyhow::Result<()> {
    let path = dir.join(name);
    std::fs::write(&path, contents).with_context(|| format!("cannot write {}", path.display()))
}

/// Refuses ids that are not file names or that two tables or figures
/// share (one would overwrite the other's files).
pub fn check_ids<'a>(
    tables: impl IntoIterator<Item = &'a Table>,
    figures: impl IntoIterator<Item = &'a Figure>,
) -> anyhow::Result<()> {
    let mut seen = BTreeSet::new();
    let ids = tables
        .into_iter()
        .map(|t| &t.id)
        .chain(figures.into_iter().map(|f| &f.id));
    for id in ids {
        let safe = !id.is_empty()
            && !id.starts_with('.')
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        if !safe {
            bail!("table or figure id \"{id}\" is not a plain file name (letters, digits, -_.)");
        }
        if !seen.insert(id.as_str()) {
            bail!("two tables or figures share the id \"{id}\"");
        }
    }
    Ok(())
}

/// Writes `<id>.csv` for every table, `<id>.csv` (columns
/// `series,x,y,half_width`) and `<id>.svg` for every figure, and returns
/// the SVGs by figure id.
pub fn write_tables_and_figures<'a>(
    dir: &Path,
    tables: impl IntoIterator<Item = &'a Table>,
    figures: impl IntoIterator<Item = &'a Figure>,
) -> anyhow::Result<BTreeMap<String, String>> {
    for table in tables {
        write(dir, &format!("{}.csv", table.id), table_csv(table)?)?;
    }
    let mut svgs = BTreeMap::new();
    for figure in figures {
        write(dir, &format!("{}.csv", figure.id), figure_csv(figure)?)?;
        let svg = svg::render(figure)?;
        write(dir, &format!("{}.svg", figure.id), &svg)?;
        svgs.insert(figure.id.clone(), svg);
    }
    Ok(svgs)
}

/// A table as CSV: its columns, then its rows.
fn table_csv(table: &Table) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&table.columns)?;
    for row in &table.rows {
        w.write_record(row)?;
    }
    Ok(w.into_inner()?)
}

/// A figure's points as CSV: `series,x,y,half_width` (half-width empty
/// when unknown).
fn figure_csv(figure: &Figure) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["series", "x", "y", "half_width"])?;
    for series in &figure.series {
        for p in &series.points {
            w.write_record([
                series.label.clone(),
                p.x.to_string(),
                p.y.to_string(),
                p.half_width.map(|h| h.to_string()).unwrap_or_default(),
            ])?;
        }
    }
    Ok(w.into_inner()?)
}

/// `summary.json`: `{"checks": [...], "timing": {...}}`: every check; the
/// wall and CPU time of the run and of each section (seconds, to the
/// millisecond); the standard case's simulated frames per second.
pub fn summary_json(run: &super::Run) -> anyhow::Result<String> {
    #[derive(Serialize)]
    struct SectionTiming<'a> {
        paper: &'a str,
        section: &'a str,
        wall_s: f64,
        cpu_s: f64,
    }
    #[derive(Serialize)]
    struct StandardCase {
        what: &'static str,
        replications: u64,
        frames: u64,
        seconds: f64,
        frames_per_s: f64,
    }
    #[derive(Serialize)]
    struct Timing<'a> {
        wall_s: f64,
        cpu_s: f64,
        sections: Vec<SectionTiming<'a>>,
        standard_case: StandardCase,
    }
    #[derive(Serialize)]
    struct Summary<'a> {
        checks: Vec<&'a Check>,
        timing: Timing<'a>,
    }
    let seconds = |d: std::time::Duration| (d.as_secs_f64() * 1000.0).round() / 1000.0;
    let summary = Summary {
        checks: run.checks().collect(),
        timing: Timing {
            wall_s: seconds(run.wall_time),
            cpu_s: seconds(run.cpu_time),
            sections: run
                .costs
                .iter()
                .map(|c| SectionTiming {
                    paper: c.paper.id(),
                    section: &c.heading,
                    wall_s: seconds(c.cost.wall),
                    cpu_s: seconds(c.cost.cpu),
                })
                .collect(),
            standard_case: StandardCase {
                what: super::StandardCase::WHAT,
                replications: run.standard_case.replications,
                frames: run.standard_case.frames,
                seconds: seconds(run.standard_case.elapsed),
                frames_per_s: run.standard_case.frames_per_second().round(),
            },
        },
    };
    Ok(serde_json::to_string_pretty(&summary)? + "\n")
}

/// Prints a table's title and its cells, aligned.
pub fn print_table(table: &Table) {
    println!("{}", table.title);
    println!("{}", crate::table::Table::from_report(table));
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_scenario::report::{Point, Series, SeriesStyle};

    fn table(id: &str) -> Table {
        Table {
            id: id.into(),
            title: "t".into(),
            columns: vec!["a".into(), "b, c".into()],
            rows: vec![vec!["1".into(), "x \"y\"".into()]],
        }
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        let text = String::from_utf8(table_csv(&table("t")).unwrap()).unwrap();
        assert_eq!(text, "a,\"b, c\"\n1,\"x \"\"y\"\"\"\n");
    }

    #[test]
    fn figure_csv_has_one_row_per_point() {
        let figure = Figure {
            id: "f".into(),
            title: "f".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: false,
            log_y: false,
            series: vec![Series {
                label: "sim".into(),
                style: SeriesStyle::Simulated,
                points: vec![
                    Point {
                        x: 1.0,
                        y: 2.5,
                        half_width: Some(0.25),
                    },
                    Point {
                        x: 2.0,
                        y: 3.0,
                        half_width: None,
                    },
                ],
            }],
        };
        let text = String::from_utf8(figure_csv(&figure).unwrap()).unwrap();
        assert_eq!(text, "series,x,y,half_width\nsim,1,2.5,0.25\nsim,2,3,\n");
    }

    #[test]
    fn ids_must_be_plain_and_unique() {
        assert!(check_ids([&table("a-1.b")], []).is_ok());
        assert!(check_ids([&table("../x")], []).is_err());
        assert!(check_ids([&table("a b")], []).is_err());
        assert!(check_ids([&table("a"), &table("a")], []).is_err());
    }
}
