//! `report.html`: one self-contained page (styles and figures inline) with
//! a summary of the checks at the top and, per paper, every section's
//! text, tables, figures and checks, each check with its note.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use linklab_scenario::report::{
    Basis, Check, Figure, PaperReport, Point, Section, Series, SeriesStyle, Table,
};
use serde_json::Value;

use super::gaps::Gaps;
use super::Run;

const STYLE: &str = "\
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em}h2{margin-top:2.2em;border-bottom:2px solid #ccc;padding-bottom:.2em}h3{margin-top:1.6em}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}
caption{caption-side:top;text-align:left;font-weight:600;padding:.3em 0}
th,td{border:1px solid #ccc;padding:.25em .6em;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.pass td.result{background:#d9f2d9;color:#145214;font-weight:600}
tr.fail td.result{background:#f8d4d4;color:#8a1010;font-weight:600}
tr.gap td.result{background:#fbe8c8;color:#6b4200;font-weight:600}
tr.note td{border-top:none;color:#444;font-size:.92em;background:#fafafa}
tr.note td.missing{color:#8a1010}
td.id{font-family:ui-monospace,monospace;font-size:.85em;white-space:nowrap}
figure{margin:1.2em 0}figcaption{font-size:.9em;color:#444}
figure svg{max-width:100%;height:auto}
.summary td.fail{color:#8a1010;font-weight:600}.summary td.pass{color:#145214}
.summary td.gap{color:#6b4200;font-weight:600}
p.verdict{font-size:1.15em;font-weight:600}p.verdict .gap{color:#6b4200}p.verdict .fail{color:#8a1010}
nav.contents{columns:2;column-gap:2em;font-size:.92em;margin:1em 0;padding:.6em 1em;background:#f7f7f7;border:1px solid #ddd}
nav.contents ol{margin:.2em 0;padding-left:1.4em}nav.contents>ol>li{break-inside:avoid;margin-bottom:.4em}
";

/// The page. `svgs` holds each figure's SVG by figure id.
pub fn page(run: &Run, svgs: &BTreeMap<String, String>) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<title>linklab reproduce: report</title>\n");
    let _ = writeln!(h, "<style>\n{STYLE}</style>\n</head>\n<body>");
    h.push_str("<h1>linklab: reproductions of the source papers</h1>\n");
    summary(&mut h, run);
    contents(&mut h, run);
    listed_checks(&mut h, run);
    timing(&mut h, run);
    parity_part(&mut h, run);
    for paper in &run.papers {
        paper_part(&mut h, paper, svgs, &run.gaps);
    }
    h.push_str("</body>\n</html>\n");
    h
}

/// The wall and CPU time of each section, in report order.
fn timing(h: &mut String, run: &Run) {
    if run.costs.is_empty() {
        return;
    }
    h.push_str("<details><summary>Time per section</summary>\n<table class=\"summary\">\n<tr><th>paper</th><th>section</th><th>wall s</th><th>CPU s</th></tr>\n");
    for c in &run.costs {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{:.2}</td><td class=\"num\">{:.2}</td></tr>",
            escape(c.paper.id()),
            escape(&c.heading),
            c.cost.wall.as_secs_f64(),
            c.cost.cpu.as_secs_f64(),
        );
    }
    h.push_str("</table>\n</details>\n");
    let case = &run.standard_case;
    let _ = writeln!(
        h,
        "<p>Speed of the whole stack: {:.0} simulated frames per second ({} frames in {} replications in {:.3} s, one thread; {}).</p>",
        case.frames_per_second(),
        case.frames,
        case.replications,
        case.elapsed.as_secs_f64(),
        escape(crate::reproduce::StandardCase::WHAT),
    );
}

/// What a check came to, as the report shows it: a declared gap is a
/// failure known and explained beforehand ([`Gaps`]), shown apart from
/// the failures that are not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Pass,
    Gap,
    Fail,
}

impl Outcome {
    fn of(check: &Check, gaps: &Gaps) -> Outcome {
        match (check.pass, gaps.why(&check.id)) {
            (true, _) => Outcome::Pass,
            (false, Some(_)) => Outcome::Gap,
            (false, None) => Outcome::Fail,
        }
    }

    /// The class of its row and cells.
    fn class(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Gap => "gap",
            Outcome::Fail => "fail",
        }
    }

    /// Its word in the result column.
    fn label(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Gap => "declared gap",
            Outcome::Fail => "fail",
        }
    }
}

/// How many of `checks` came to `outcome`.
fn count(checks: &[&Check], gaps: &Gaps, outcome: Outcome) -> usize {
    checks
        .iter()
        .filter(|c| Outcome::of(c, gaps) == outcome)
        .count()
}

fn summary(h: &mut String, run: &Run) {
    let checks: Vec<&Check> = run.checks().collect();
    let passed = count(&checks, &run.gaps, Outcome::Pass);
    let gaps = count(&checks, &run.gaps, Outcome::Gap);
    let failed = count(&checks, &run.gaps, Outcome::Fail);
    let declared = match gaps {
        0 => String::new(),
        n => format!(
            " <span class=\"gap\">{n} {} declared {}</span>: known not to reproduce, \
             each with its reason (<a href=\"#declared-gaps\">list</a>).",
            if n == 1 { "is a" } else { "are" },
            if n == 1 { "gap" } else { "gaps" },
        ),
    };
    let failing = match failed {
        0 if gaps > 0 => " No other check fails.".to_string(),
        0 => String::new(),
        n => format!(
            " <span class=\"fail\">{n} {} (<a href=\"#failing\">list</a>).</span>",
            if n == 1 { "fails" } else { "fail" }
        ),
    };
    let _ = writeln!(
        h,
        "<p class=\"verdict\">{passed} of {} checks pass ({}).{declared}{failing}</p>",
        checks.len(),
        by_basis(&checks)
    );
    let _ = writeln!(
        h,
        "<p>{} run, seed {}, wall time {:.2} s, CPU time {:.2} s, linklab {}.</p>",
        if run.options.quick {
            "Quick (<code>--quick</code>)"
        } else {
            "Full"
        },
        run.options.seed,
        run.wall_time.as_secs_f64(),
        run.cpu_time.as_secs_f64(),
        env!("CARGO_PKG_VERSION"),
    );
    h.push_str(
        "<table class=\"summary\" id=\"summary\">\n<tr><th>paper</th><th>checks</th><th>pass</th>\
         <th>declared gaps</th><th>fail</th><th>fits</th><th>predictions</th></tr>\n",
    );
    for paper in &run.papers {
        let all: Vec<&Check> = paper.sections.iter().flat_map(|s| &s.checks).collect();
        let [pass, gap, fail] =
            [Outcome::Pass, Outcome::Gap, Outcome::Fail].map(|o| count(&all, &run.gaps, o));
        let fits = all.iter().filter(|c| c.basis == Basis::Fit).count();
        let marked = |n: usize, class: &str| {
            if n > 0 {
                format!(" {class}")
            } else {
                String::new()
            }
        };
        let _ = writeln!(
            h,
            "<tr><td><a href=\"#{id}\">{id}</a></td><td class=\"num\">{}</td>\
             <td class=\"num pass\">{pass}</td><td class=\"num{}\">{gap}</td>\
             <td class=\"num{}\">{fail}</td><td class=\"num\">{fits}</td><td class=\"num\">{}</td></tr>",
            all.len(),
            marked(gap, "gap"),
            marked(fail, "fail"),
            all.len() - fits,
            id = escape(paper.paper.id()),
        );
    }
    h.push_str("</table>\n");
}

/// The table of contents: the summary's lists, the parity figure, each
/// paper and its sections.
fn contents(h: &mut String, run: &Run) {
    let checks: Vec<&Check> = run.checks().collect();
    h.push_str("<nav class=\"contents\" id=\"contents\">\n<strong>Contents</strong>\n<ol>\n");
    if count(&checks, &run.gaps, Outcome::Fail) > 0 {
        h.push_str("<li><a href=\"#failing\">Failing checks</a></li>\n");
    }
    if count(&checks, &run.gaps, Outcome::Gap) > 0 {
        h.push_str("<li><a href=\"#declared-gaps\">Declared gaps</a></li>\n");
    }
    if parity(run).is_some() {
        h.push_str("<li><a href=\"#parity\">Every numeric check in one figure</a></li>\n");
    }
    for paper in &run.papers {
        let _ = writeln!(
            h,
            "<li><a href=\"#{id}\">{}</a>\n<ol>",
            escape(paper.paper.citation()),
            id = escape(paper.paper.id()),
        );
        for (i, section) in paper.sections.iter().enumerate() {
            let _ = writeln!(
                h,
                "<li><a href=\"#{}\">{}</a></li>",
                section_anchor(paper, i),
                escape(&section.heading)
            );
        }
        h.push_str("</ol></li>\n");
    }
    h.push_str("</ol>\n</nav>\n");
}

/// The failing checks and, apart from them, the declared gaps with their
/// reasons, each linked to its row.
fn listed_checks(h: &mut String, run: &Run) {
    for (outcome, id, heading) in [
        (Outcome::Fail, "failing", "Failing checks"),
        (
            Outcome::Gap,
            "declared-gaps",
            "Declared gaps: known not to reproduce, listed with their reasons in \
             <code>crates/scenario/experiments/gaps.toml</code>",
        ),
    ] {
        let listed: Vec<&Check> = run
            .checks()
            .filter(|c| Outcome::of(c, &run.gaps) == outcome)
            .collect();
        if listed.is_empty() {
            continue;
        }
        let _ = writeln!(
            h,
            "<p id=\"{id}\">{heading}:</p>\n<ul class=\"{}\">",
            outcome.class()
        );
        for c in listed {
            let _ = writeln!(
                h,
                "<li><a href=\"#{}\">{}</a>: {}{}</li>",
                anchor(&c.id),
                escape(&c.id),
                escape(&c.what),
                run.gaps
                    .why(&c.id)
                    .map(|why| format!(" <em>({})</em>", escape(why)))
                    .unwrap_or_default()
            );
        }
        h.push_str("</ul>\n");
    }
}

/// "fits 41 of 41, predictions 132 of 135": how many of each basis pass.
pub fn by_basis(checks: &[&Check]) -> String {
    let count = |basis: Basis| {
        let of: Vec<_> = checks.iter().filter(|c| c.basis == basis).collect();
        let pass = of.iter().filter(|c| c.pass).count();
        format!("{pass} of {}", of.len())
    };
    format!(
        "fits {}, predictions {}",
        count(Basis::Fit),
        count(Basis::Prediction)
    )
}

/// The paper's value of a numeric check as a number: the number itself,
/// or from the paper's words the middle of a range ("750-800") or the
/// first number ("about 5900", "35,000 (63% ...)").
fn paper_number(value: &Value) -> Option<f64> {
    if let Some(v) = value.as_f64() {
        return Some(v);
    }
    let text = value.as_str()?.replace(',', "");
    let mut numbers = text
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| w.parse::<f64>().ok());
    let first = numbers.next()?;
    let range = text.trim_start_matches(|c: char| !c.is_ascii_digit());
    let is_range = range
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')
        .starts_with('-');
    match (is_range, numbers.next()) {
        (true, Some(second)) => Some((first + second) / 2.0),
        _ => Some(first),
    }
}

/// Every numeric check in one figure: the paper's value against ours on
/// logarithmic axes, each check's tolerance as a bar around ours (it
/// passes when its bar reaches the line ours = paper), fits drawn hollow.
fn parity(run: &Run) -> Option<Figure> {
    let point = |c: &Check| {
        let paper = paper_number(&c.paper_value)?;
        let ours = c.ours.as_f64()?;
        let tolerance = c.tolerance?;
        (paper > 0.0 && ours > 0.0).then_some(Point {
            x: paper,
            y: ours,
            half_width: Some(tolerance * paper),
        })
    };
    let of = |basis: Basis| -> Vec<Point> {
        let mut points: Vec<Point> = run
            .checks()
            .filter(|c| c.basis == basis)
            .filter_map(point)
            .collect();
        points.sort_by(|a, b| a.x.total_cmp(&b.x));
        points
    };
    let (fits, predictions) = (of(Basis::Fit), of(Basis::Prediction));
    let all = fits.iter().chain(&predictions);
    let (lo, hi) = all.fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
        (lo.min(p.x), hi.max(p.x))
    });
    if !lo.is_finite() {
        return None;
    }
    let line = |factor: f64| {
        [lo, hi]
            .map(|x| Point {
                x,
                y: x * factor,
                half_width: None,
            })
            .to_vec()
    };
    let series = |label: &str, style, points| Series {
        label: label.into(),
        style,
        points,
    };
    Some(Figure {
        id: "parity".into(),
        title: "Every numeric check: the paper's value against linklab's".into(),
        x_label: "paper (its unit)".into(),
        y_label: "linklab (same unit)".into(),
        log_x: true,
        log_y: true,
        series: vec![
            series("linklab = paper", SeriesStyle::Model, line(1.0)),
            series(
                &format!("prediction ({}), bar: its tolerance", predictions.len()),
                SeriesStyle::Simulated,
                predictions,
            ),
            series(
                &format!("fit ({})", fits.len()),
                SeriesStyle::Published,
                fits,
            ),
        ],
    })
}

/// The parity figure with its caption, when there are numeric checks.
fn parity_part(h: &mut String, run: &Run) {
    let Some(figure) = parity(run) else {
        return;
    };
    let Ok(svg) = super::svg::render(&figure) else {
        return;
    };
    let _ = writeln!(
        h,
        "<figure id=\"parity\">{svg}<figcaption>{} Each numeric check of the five papers, \
         the paper's value across and linklab's up, both in the check's own unit. A check \
         passes when its bar (ours ± its tolerance of the paper's value) reaches the line; \
         a bar reaching zero or below ends at the axis in an arrowhead. \
         Hollow: a value of the model was fitted to this figure (a calibration); filled: \
         nothing was fitted to it (a prediction). A paper's range is drawn at its middle \
         (such a check passes within the range widened by its tolerance). Checks of a \
         paper's words or orderings are not drawn.</figcaption></figure>",
        escape(&figure.title)
    );
}

fn paper_part(h: &mut String, paper: &PaperReport, svgs: &BTreeMap<String, String>, gaps: &Gaps) {
    let _ = writeln!(
        h,
        "<h2 id=\"{}\">{}</h2>",
        escape(paper.paper.id()),
        escape(paper.paper.citation())
    );
    for (i, section) in paper.sections.iter().enumerate() {
        section_part(h, &section_anchor(paper, i), section, svgs, gaps);
    }
}

/// The element id of `paper`'s section `index`: the paper's id and the
/// section's number, from 1.
fn section_anchor(paper: &PaperReport, index: usize) -> String {
    format!("{}-section-{}", escape(paper.paper.id()), index + 1)
}

fn section_part(
    h: &mut String,
    id: &str,
    section: &Section,
    svgs: &BTreeMap<String, String>,
    gaps: &Gaps,
) {
    let _ = writeln!(h, "<h3 id=\"{id}\">{}</h3>", escape(&section.heading));
    for paragraph in section.text.split("\n\n").filter(|p| !p.trim().is_empty()) {
        let _ = writeln!(h, "<p>{}</p>", escape(paragraph.trim()));
    }
    for table in &section.tables {
        table_part(h, table);
    }
    for figure in &section.figures {
        figure_part(h, figure, svgs);
    }
    if !section.checks.is_empty() {
        checks_part(h, &section.checks, gaps);
    }
}

fn table_part(h: &mut String, table: &Table) {
    let _ = writeln!(
        h,
        "<table id=\"{}\">\n<caption>{}</caption>",
        escape(&table.id),
        escape(&table.title)
    );
    h.push_str("<tr>");
    for c in &table.columns {
        let _ = write!(h, "<th>{}</th>", escape(c));
    }
    h.push_str("</tr>\n");
    for row in &table.rows {
        h.push_str("<tr>");
        for cell in row {
            let class = if is_number(cell) {
                " class=\"num\""
            } else {
                ""
            };
            let _ = write!(h, "<td{class}>{}</td>", escape(cell));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
}

fn figure_part(h: &mut String, figure: &Figure, svgs: &BTreeMap<String, String>) {
    let _ = writeln!(h, "<figure id=\"{}\">", escape(&figure.id));
    if let Some(svg) = svgs.get(&figure.id) {
        // plotters writes a complete <svg> element with its text escaped.
        h.push_str(svg.trim());
        h.push('\n');
    }
    let _ = writeln!(
        h,
        "<figcaption>{} (<code>{id}.svg</code>, points in <code>{id}.csv</code>)</figcaption>\n</figure>",
        escape(&figure.title),
        id = escape(&figure.id)
    );
}

fn checks_part(h: &mut String, checks: &[Check], gaps: &Gaps) {
    h.push_str(
        "<table class=\"checks\">\n<caption>Checks</caption>\n<tr><th>check</th><th>what</th>\
         <th>paper</th><th>ours</th><th>unit</th><th>tolerance</th><th>result</th></tr>\n",
    );
    for c in checks {
        let outcome = Outcome::of(c, gaps);
        let (class, verdict) = (outcome.class(), outcome.label());
        let tolerance = c.tolerance.map_or("qualitative".to_string(), |t| {
            format!("±{}%", round(t * 100.0))
        });
        let _ = writeln!(
            h,
            "<tr class=\"{}\" id=\"{}\"><td class=\"id\">{}</td><td>{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"result\">{verdict}</td></tr>",
            class,
            anchor(&c.id),
            escape(&c.id),
            escape(&c.what),
            escape(&value(&c.paper_value)),
            escape(&value(&c.ours)),
            escape(&c.unit),
            escape(&tolerance),
        );
        if c.note.trim().is_empty() {
            let _ = writeln!(
                h,
                "<tr class=\"note {class}\"><td colspan=\"7\" class=\"missing\">No note: \
                 the reproduction gives no explanation for this check.</td></tr>"
            );
        } else {
            let _ = writeln!(
                h,
                "<tr class=\"note {class}\"><td colspan=\"7\">{}</td></tr>",
                escape(&c.note)
            );
        }
    }
    h.push_str("</table>\n");
}

/// A JSON value as the reader expects it: numbers bare, text unquoted.
pub fn value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `v` with at most four decimals and no trailing zeros.
fn round(v: f64) -> String {
    let text = format!("{v:.4}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn is_number(cell: &str) -> bool {
    !cell.is_empty()
        && cell
            .trim_start_matches(['+', '-', '±'])
            .parse::<f64>()
            .is_ok()
}

/// An element id for a check: its id with anything but letters, digits
/// and `-_./` turned into `_`, prefixed so that it cannot clash with a
/// table's, figure's or paper's id.
fn anchor(id: &str) -> String {
    let safe: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_./".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("check-{safe}")
}

/// Text made safe for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_scenario::report::{Paper, RunOptions};

    #[test]
    fn escape_covers_markup_and_quotes() {
        assert_eq!(
            escape(r#"<a href="x">'T' & Co</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;T&#39; &amp; Co&lt;/a&gt;"
        );
    }

    /// A run of one section of Bux et al. with `checks`, gaps `gaps`.
    fn run_of(checks: Vec<Check>, gaps: Gaps) -> Run {
        let section = Section {
            heading: "Table <II>".into(),
            text: "first & only\n\nsecond".into(),
            tables: vec![],
            figures: vec![],
            checks,
        };
        Run {
            papers: vec![PaperReport {
                paper: Paper::Bux1982,
                sections: vec![section],
            }],
            options: RunOptions::default(),
            wall_time: std::time::Duration::from_millis(1500),
            cpu_time: std::time::Duration::from_millis(2900),
            costs: Vec::new(),
            standard_case: crate::reproduce::StandardCase::default(),
            gaps,
        }
    }

    #[test]
    fn page_escapes_section_text_and_marks_each_check() {
        let run = run_of(
            vec![
                Check::relative("p/a", Paper::Bux1982, "a < b", 1.0, 1.05, "s", 0.1)
                    .with_note("gap explained"),
                Check::qualitative("p/b", Paper::Bux1982, "order", "A > B", "A < B", false),
            ],
            Gaps::default(),
        );
        let page = page(&run, &BTreeMap::new());
        assert!(page.contains("<h3 id=\"bux1982-section-1\">Table &lt;II&gt;</h3>"));
        assert!(page.contains("<p>first &amp; only</p>\n<p>second</p>"));
        assert!(page.contains("1 of 2 checks pass"));
        assert!(page.contains("<tr class=\"pass\" id=\"check-p/a\">"));
        assert!(page.contains("<tr class=\"fail\" id=\"check-p/b\">"));
        assert!(page.contains("gap explained"));
        assert!(page.contains("No note"));
        assert!(page.contains("±10%"));
        assert!(page.contains("wall time 1.50 s"));
    }

    #[test]
    fn declared_gaps_are_shown_apart_from_failures() {
        let gaps: Gaps =
            toml::from_str("[[gap]]\ncheck = \"p/gap\"\nwhy = \"known & explained\"\n").unwrap();
        let run = run_of(
            vec![
                Check::qualitative("p/ok", Paper::Bux1982, "w", "x", "x", true),
                Check::qualitative("p/gap", Paper::Bux1982, "w", "x", "y", false),
                Check::qualitative("p/bad", Paper::Bux1982, "w", "x", "y", false),
            ],
            gaps,
        );
        let page = page(&run, &BTreeMap::new());
        // The gap's row, note and result have a class and a word of their
        // own, not the failures'.
        assert!(
            page.contains("<tr class=\"gap\" id=\"check-p/gap\">"),
            "{page}"
        );
        assert!(page.contains("<td class=\"result\">declared gap</td>"));
        assert!(page.contains("<tr class=\"note gap\">"));
        assert!(page.contains("<tr class=\"fail\" id=\"check-p/bad\">"));
        assert!(!page.contains("fail (declared gap)"));
        // The summary counts them in columns of their own.
        assert!(page.contains("<th>declared gaps</th><th>fail</th>"));
        assert!(page.contains("<td class=\"num gap\">1</td><td class=\"num fail\">1</td>"));
        assert!(page.contains("<span class=\"gap\">1 is a declared gap</span>"));
        assert!(page.contains("<span class=\"fail\">1 fails"));
        // Two lists: the gap with its reason under the gaps only.
        let failing = page.find("<p id=\"failing\">").expect("the failing list");
        let declared = page
            .find("<p id=\"declared-gaps\">")
            .expect("the gaps list");
        let (first, second) = page.split_at(declared);
        assert!(failing < declared);
        assert!(first[failing..].contains("check-p/bad") && !first[failing..].contains("p/gap"));
        assert!(second.contains("p/gap</a>: w <em>(known &amp; explained)</em>"));
        assert!(page.contains("tr.gap td.result{"));
    }

    #[test]
    fn a_table_of_contents_links_every_paper_and_section() {
        let mut run = run_of(Vec::new(), Gaps::default());
        run.papers.push(PaperReport {
            paper: Paper::Korb1987,
            sections: vec![
                Section {
                    heading: "Table 1".into(),
                    ..Section::default()
                },
                Section {
                    heading: "Table 2".into(),
                    ..Section::default()
                },
            ],
        });
        let page = page(&run, &BTreeMap::new());
        let nav = page.find("<nav class=\"contents\"").expect("contents");
        assert!(nav < page.find("<h2").unwrap(), "before the papers");
        for (href, id) in [
            ("#bux1982", "<h2 id=\"bux1982\">"),
            ("#bux1982-section-1", "<h3 id=\"bux1982-section-1\">"),
            ("#korb1987", "<h2 id=\"korb1987\">"),
            ("#korb1987-section-1", "<h3 id=\"korb1987-section-1\">"),
            ("#korb1987-section-2", "<h3 id=\"korb1987-section-2\">"),
        ] {
            assert!(
                page[nav..].contains(&format!("<a href=\"{href}\">")),
                "{href}"
            );
            assert!(page.contains(id), "{id}");
        }
    }
}
