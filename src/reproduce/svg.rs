//! Figures as SVG, drawn with plotters: simulated series as filled markers
//! with their 95% confidence bars, model curves as lines, published values
//! as hollow diamonds, histograms as bars; a legend; logarithmic axes where
//! the figure asks for them.

use std::ops::Range;

use anyhow::Context;
use linklab_scenario::report::{Figure, Point, Series, SeriesStyle};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

/// Size of every figure's plot, pixels (the legend goes below).
const SIZE: (u32, u32) = (760, 440);

/// Legend entries per row, and the height of a row, pixels.
const LEGEND_COLUMNS: usize = 2;
const LEGEND_ROW: u32 = 22;

/// Series colours, in order (colour-blind-safe, Okabe and Ito).
const COLOURS: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

/// The figure as an SVG document.
pub fn render(figure: &Figure) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let rows = figure.series.len().div_ceil(LEGEND_COLUMNS) as u32;
        let height = SIZE.1 + LEGEND_ROW * rows + 12;
        let root = SVGBackend::with_string(&mut svg, (SIZE.0, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (plot, legend_area) = root.split_vertically(SIZE.1);
        legend(&legend_area, figure)?;
        let x = Axis::of(figure, figure.log_x, |p| [p.x, p.x]);
        let y = Axis::of(figure, figure.log_y, |p| {
            let h = p.half_width.unwrap_or(0.0);
            [p.y - h, p.y + h]
        });
        let y = if figure.series.iter().any(|s| s.style == SeriesStyle::Bars) {
            y.down_to_zero()
        } else {
            y
        };
        match (figure.log_x, figure.log_y) {
            (false, false) => draw(&plot, figure, x.range.clone(), y.range.clone(), &y),
            (true, false) => draw(
                &plot,
                figure,
                x.range.clone().log_scale(),
                y.range.clone(),
                &y,
            ),
            (false, true) => draw(
                &plot,
                figure,
                x.range.clone(),
                y.range.clone().log_scale(),
                &y,
            ),
            (true, true) => draw(
                &plot,
                figure,
                x.range.clone().log_scale(),
                y.range.clone().log_scale(),
                &y,
            ),
        }
        .with_context(|| format!("cannot draw figure {}", figure.id))?;
        root.present()?;
    }
    Ok(svg)
}

/// The drawn range of one axis.
struct Axis {
    range: Range<f64>,
}

impl Axis {
    /// A range holding every value `extent` gives for the figure's points
    /// (only the positive ones on a logarithmic axis), with a margin.
    fn of(figure: &Figure, log: bool, extent: impl Fn(&Point) -> [f64; 2]) -> Axis {
        let values = figure
            .series
            .iter()
            .flat_map(|s| &s.points)
            .flat_map(extent)
            .filter(|v| v.is_finite() && (!log || *v > 0.0));
        let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let range = match (lo.is_finite(), log) {
            (false, false) => 0.0..1.0,
            (false, true) => 1.0..10.0,
            (true, true) => lo / 1.25..hi * 1.25,
            (true, false) => {
                let pad = if hi > lo {
                    (hi - lo) * 0.06
                } else {
                    lo.abs().max(1.0) * 0.1
                };
                lo - pad..hi + pad
            }
        };
        Axis { range }
    }

    /// The range stretched down to zero (for bars), on a linear axis.
    fn down_to_zero(self) -> Axis {
        Axis {
            range: self.range.start.min(0.0)..self.range.end,
        }
    }

    /// Where bars start: zero, or the bottom of a logarithmic axis.
    fn base(&self, log: bool) -> f64 {
        if log {
            self.range.start
        } else {
            0.0_f64.clamp(self.range.start, self.range.end)
        }
    }
}

/// Draws the figure on coordinates `x` × `y`.
fn draw<X, Y>(
    root: &DrawingArea<SVGBackend, Shift>,
    figure: &Figure,
    x: X,
    y: Y,
    y_axis: &Axis,
) -> anyhow::Result<()>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(root)
        .caption(&figure.title, ("sans-serif", 17))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x, y)?;
    chart
        .configure_mesh()
        .x_desc(&figure.x_label)
        .y_desc(&figure.y_label)
        .axis_desc_style(("sans-serif", 15))
        .label_style(("sans-serif", 13))
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()?;
    let bar_width = bar_width(figure);
    let bars = figure
        .series
        .iter()
        .filter(|s| s.style == SeriesStyle::Bars)
        .count()
        .max(1);
    let mut bar_index = 0;
    for (i, series) in figure.series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let points = drawable(series, figure.log_x, figure.log_y);
        match series.style {
            SeriesStyle::Model => chart.draw_series(LineSeries::new(
                points.iter().map(|p| (p.x, p.y)),
                colour.stroke_width(2),
            ))?,
            SeriesStyle::Simulated => {
                let floor = y_axis.range.start;
                // A bar reaching below the axis (to zero or less on a
                // logarithmic one) is clipped at it: no cap there but an
                // arrowhead, pointing on.
                let clipped = |p: &Point| p.y - p.half_width.unwrap_or(0.0) < floor;
                chart.draw_series(
                    points
                        .iter()
                        .filter(|p| clipped(p))
                        .map(|p| PathElement::new(vec![(p.x, floor), (p.x, p.y)], colour.filled())),
                )?;
                chart.draw_series(points.iter().filter(|p| clipped(p)).map(|p| {
                    EmptyElement::at((p.x, floor))
                        + PathElement::new(vec![(-4, -8), (0, 0), (4, -8)], colour.filled())
                }))?;
                chart.draw_series(points.iter().map(|p| {
                    let h = p.half_width.unwrap_or(0.0);
                    // The lower cap of a clipped bar is drawn at the point,
                    // under its marker.
                    let low = if clipped(p) { p.y } else { p.y - h };
                    ErrorBar::new_vertical(p.x, low, p.y, p.y + h, colour.filled(), 8)
                }))?
            }
            SeriesStyle::Published => chart.draw_series(
                points
                    .iter()
                    .map(|p| EmptyElement::at((p.x, p.y)) + published_mark(colour, (0, 0))),
            )?,
            SeriesStyle::Bars => {
                // Side by side when a figure has several histograms.
                let width = bar_width / bars as f64;
                let offset = (bar_index as f64 - (bars as f64 - 1.0) / 2.0) * width;
                bar_index += 1;
                let base = y_axis.base(figure.log_y);
                chart.draw_series(points.iter().map(|p| {
                    let centre = p.x + offset;
                    Rectangle::new(
                        [(centre - width * 0.45, base), (centre + width * 0.45, p.y)],
                        colour.mix(0.7).filled(),
                    )
                }))?
            }
        };
    }
    Ok(())
}

/// The legend, below the plot: each series' sample and label, in
/// [`LEGEND_COLUMNS`] columns.
fn legend(area: &DrawingArea<SVGBackend, Shift>, figure: &Figure) -> anyhow::Result<()> {
    let column_width = (SIZE.0 as i32 - 80) / LEGEND_COLUMNS as i32;
    for (i, series) in figure.series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let x = 80 + (i % LEGEND_COLUMNS) as i32 * column_width;
        let y = 10 + (i / LEGEND_COLUMNS) as i32 * LEGEND_ROW as i32;
        area.draw(&legend_mark(series.style, colour, x, y))?;
        area.draw(&Text::new(
            series.label.as_str(),
            (x + 28, y - 7),
            ("sans-serif", 13),
        ))?;
    }
    Ok(())
}

/// The legend's sample of one series.
fn legend_mark<DB: DrawingBackend>(
    style: SeriesStyle,
    colour: RGBColor,
    x: i32,
    y: i32,
) -> DynElement<'static, DB, (i32, i32)> {
    match style {
        SeriesStyle::Model => {
            PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)).into_dyn()
        }
        SeriesStyle::Simulated => Circle::new((x + 10, y), 4, colour.filled()).into_dyn(),
        SeriesStyle::Published => published_mark(colour, (x + 10, y)).into_dyn(),
        SeriesStyle::Bars => {
            Rectangle::new([(x + 4, y - 5), (x + 16, y + 5)], colour.mix(0.7).filled()).into_dyn()
        }
    }
}

/// The mark of a published value, apart from every simulated one: a
/// hollow diamond around pixel `(x, y)`.
fn published_mark(colour: RGBColor, (x, y): (i32, i32)) -> PathElement<(i32, i32)> {
    let corners = [(0, -7), (7, 0), (0, 7), (-7, 0), (0, -7)];
    PathElement::new(
        corners.map(|(dx, dy)| (x + dx, y + dy)).to_vec(),
        colour.stroke_width(2),
    )
}

/// The points that can be drawn: finite, and positive on a log axis.
fn drawable(series: &Series, log_x: bool, log_y: bool) -> Vec<Point> {
    series
        .points
        .iter()
        .filter(|p| p.x.is_finite() && p.y.is_finite())
        .filter(|p| (!log_x || p.x > 0.0) && (!log_y || p.y > 0.0))
        .copied()
        .collect()
}

/// Width of a histogram bar: the smallest gap between two x values (1
/// with a single value).
fn bar_width(figure: &Figure) -> f64 {
    let mut xs: Vec<f64> = figure
        .series
        .iter()
        .filter(|s| s.style == SeriesStyle::Bars)
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let gap = xs
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    if gap.is_finite() {
        gap
    } else {
        1.0
    }
}

/// An axis label: short, without trailing zeros.
fn tick(v: &f64) -> String {
    let v = *v;
    if v == 0.0 {
        return "0".into();
    }
    let magnitude = v.abs();
    if !(1e-3..1e6).contains(&magnitude) {
        return format!("{v:.0e}");
    }
    let text = format!("{v:.4}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(style: SeriesStyle, log_y: bool) -> Figure {
        Figure {
            id: "f".into(),
            title: "Throughput <against> k".into(),
            x_label: "k".into(),
            y_label: "throughput (bit/s)".into(),
            log_x: false,
            log_y,
            series: vec![Series {
                label: "simulated & model".into(),
                style,
                points: (1..=7)
                    .map(|k| Point {
                        x: f64::from(k),
                        y: 100.0 * f64::from(k),
                        half_width: Some(5.0),
                    })
                    .collect(),
            }],
        }
    }

    #[test]
    fn every_style_renders_on_linear_and_log_axes() {
        for style in [
            SeriesStyle::Simulated,
            SeriesStyle::Model,
            SeriesStyle::Published,
            SeriesStyle::Bars,
        ] {
            for log_y in [false, true] {
                let svg = render(&figure(style, log_y)).unwrap();
                assert!(svg.starts_with("<svg"), "{style:?}");
                assert!(svg.contains("throughput (bit/s)"));
                // Text is escaped for XML.
                assert!(svg.contains("simulated &amp; model"), "{style:?}");
                assert!(!svg.contains("<against>"));
            }
        }
    }

    /// The y pixels of every element drawn in `stroke` in the plot (above
    /// the legend), and the tips of its arrowheads.
    fn drawn_in(svg: &str, stroke: &str) -> (Vec<i32>, Vec<i32>) {
        let (mut ys, mut tips) = (Vec::new(), Vec::new());
        for tag in svg
            .split('<')
            .filter(|t| t.contains(&format!("stroke=\"{stroke}\"")))
        {
            let attr = |name: &str| {
                let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
                tag[start..].split('"').next()
            };
            if let Some(points) = attr("points") {
                let points: Vec<(i32, i32)> = points
                    .split_whitespace()
                    .map(|p| {
                        let (x, y) = p.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect();
                if let [a, tip, b] = points[..] {
                    if a.1 == b.1 && a.1 == tip.1 - 8 && b.0 - a.0 == 8 {
                        tips.push(tip.1);
                    }
                }
                ys.extend(points.iter().map(|p| p.1));
            }
            ys.extend(
                ["y1", "y2", "cy"]
                    .into_iter()
                    .filter_map(|a| attr(a)?.parse::<i32>().ok()),
            );
        }
        ys.retain(|&y| y < SIZE.1 as i32);
        (ys, tips)
    }

    #[test]
    fn a_bar_reaching_below_a_log_axis_is_clipped_at_it_with_an_arrowhead() {
        let mut f = figure(SeriesStyle::Simulated, true);
        // Tolerances of 50% and of 300% of the value (the parity figure's
        // widest) around the same value.
        f.series[0].points = vec![
            Point {
                x: 1.0,
                y: 100.0,
                half_width: Some(50.0),
            },
            Point {
                x: 2.0,
                y: 100.0,
                half_width: Some(300.0),
            },
        ];
        let svg = render(&f).unwrap();
        let (ys, tips) = drawn_in(&svg, "#0072B2");
        assert_eq!(tips.len(), 1, "one arrowhead: {svg}");
        let lowest = *ys.iter().max().unwrap();
        assert_eq!(lowest, tips[0], "nothing of the series below the axis");
        // The unclipped bar ends above the axis.
        let unclipped = render(&figure(SeriesStyle::Simulated, true)).unwrap();
        assert!(drawn_in(&unclipped, "#0072B2").1.is_empty());
    }

    #[test]
    fn published_values_are_hollow_diamonds() {
        let svg = render(&figure(SeriesStyle::Published, false)).unwrap();
        let diamonds = svg
            .split('<')
            .filter(|t| t.starts_with("polyline") && t.contains("fill=\"none\""))
            .filter_map(|t| t.split(" points=\"").nth(1)?.split('"').next())
            .filter(|points| points.split_whitespace().count() == 5)
            .count();
        // Seven points and the legend's sample.
        assert_eq!(diamonds, 8, "{svg}");
        assert!(!svg.contains("<circle"), "no circles: {svg}");
    }

    #[test]
    fn ticks_are_short() {
        assert_eq!(tick(&1000.0), "1000");
        assert_eq!(tick(&0.25), "0.25");
        assert_eq!(tick(&1e-5), "1e-5");
    }

    #[test]
    fn bars_are_as_wide_as_the_smallest_gap() {
        assert_eq!(bar_width(&figure(SeriesStyle::Bars, false)), 1.0);
    }
}
