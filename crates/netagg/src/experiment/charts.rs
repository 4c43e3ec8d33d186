//! The experiment's charts as SVG: each key metric against the row factor
//! (the write-up's "throughput / service demand vs send size"), one line
//! per combination of the other factors with the mean's 95 % t interval as
//! error bars; and per key metric the percentile (empirical CDF) curve of
//! every cell's successful runs. Legends sit beside the plot so they never
//! hide data; ticks are short SI labels.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::analysis::{key_metrics_present, Analysis};
use super::layout::{cell_short_label, column_label, metric_title, metric_unit, Layout};
use netperf_pages::units::si_label;
use netperf_results::model::ExperimentRecord;

pub const WIDTH: u32 = 960;
pub const HEIGHT: u32 = 540;

/// Okabe–Ito colours, distinguishable with the common colour-vision
/// deficiencies; series past the eighth repeat them dashed.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0x99, 0x99, 0x99),
];

/// One chart of a report: where it is saved, what it shows, its SVG.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// File name within the output directory ("throughput.svg").
    pub file_name: String,
    pub title: String,
    pub kind: ChartKind,
    pub svg: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    /// A metric's means against the row factor.
    MetricVsRow,
    /// A metric's per-cell percentile curves.
    Percentiles,
}

/// Every chart of the report: per key metric some run reported, the
/// metric against the row factor, then per key metric the percentiles.
pub fn all(record: &ExperimentRecord, analysis: &Analysis) -> Vec<Chart> {
    let metrics = key_metrics_present(record);
    let layout = Layout::of(record);
    let against = match layout.row_factor {
        Some(_) => format!(" vs {}", layout.row_title()),
        None => String::new(),
    };
    let mut charts: Vec<Chart> = metrics
        .iter()
        .map(|m| Chart {
            file_name: format!("{}.svg", file_stem(m)),
            title: format!("{}{against}", metric_title(m)),
            kind: ChartKind::MetricVsRow,
            svg: metric_vs_row(record, analysis, m),
        })
        .collect();
    charts.extend(metrics.iter().map(|m| Chart {
        file_name: format!("{}-percentiles.svg", file_stem(m)),
        title: format!("{}: percentiles per cell", metric_title(m)),
        kind: ChartKind::Percentiles,
        svg: percentiles(record, m),
    }));
    charts
}

/// A selector name as a safe file name: lower case, [a-z0-9_-] only.
fn file_stem(metric: &str) -> String {
    metric
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '_' | '-') => c,
            _ => '_',
        })
        .collect()
}

/// How a series is drawn: its colour says the column (the other factors'
/// combination), its dash the row factor's level, the same in every chart.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Look {
    color: RGBColor,
    /// None: solid; else (dash, gap) in pixels.
    dash: Option<(u32, u32)>,
}

/// Dash patterns by row level: solid, dashed, dotted, long dashes.
const DASHES: [Option<(u32, u32)>; 4] = [None, Some((9, 5)), Some((2, 4)), Some((16, 5))];

/// The look of column `column` at row level `row`; colours past the
/// palette move on to the next dash pattern.
fn look(column: usize, row: usize) -> Look {
    let dash_index = row + column / PALETTE.len();
    Look {
        color: PALETTE[column % PALETTE.len()],
        dash: DASHES[dash_index % DASHES.len()],
    }
}

/// A legend entry.
struct Entry {
    label: String,
    look: Look,
}

/// The legend's width for these labels, within reason.
fn legend_width(title: &str, entries: &[Entry]) -> u32 {
    let longest = entries
        .iter()
        .map(|e| e.label.chars().count() + 6)
        .chain(std::iter::once(title.chars().count()))
        .max()
        .unwrap_or(0);
    (16 + longest as u32 * 8).clamp(140, 300)
}

/// Draws the legend (a title, then a line sample, a marker and the label per
/// entry) in its own area at the right.
fn draw_legend(area: &DrawingArea<SVGBackend<'_>, Shift>, title: &str, entries: &[Entry]) {
    let top = 64;
    let bold = ("sans-serif", 15).into_font().style(FontStyle::Bold);
    let _ = area.draw(&Text::new(title.to_string(), (8, top - 30), bold));
    for (i, entry) in entries.iter().enumerate() {
        let y = top + i as i32 * 24;
        let style = entry.look.color.stroke_width(2);
        match entry.look.dash {
            None => {
                let _ = area.draw(&PathElement::new(vec![(8, y), (40, y)], style));
            }
            Some((dash, gap)) => {
                let _ = area.draw(&plotters::element::DashedPathElement::new(
                    vec![(8, y), (40, y)],
                    dash,
                    gap,
                    style,
                ));
            }
        }
        let _ = area.draw(&Circle::new((24, y), 4, entry.look.color.filled()));
        let _ = area.draw(&Text::new(
            entry.label.clone(),
            (48, y - 8),
            ("sans-serif", 15),
        ));
    }
}

/// The plot area and the legend area of a white page.
fn split_page<'a>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    legend: u32,
) -> (
    DrawingArea<SVGBackend<'a>, Shift>,
    DrawingArea<SVGBackend<'a>, Shift>,
) {
    let _ = root.fill(&WHITE);
    root.split_horizontally(WIDTH.saturating_sub(legend))
}

/// The axis title of a metric: "Throughput (10^6bits/s)".
fn metric_axis(record: &ExperimentRecord, metric: &str) -> String {
    match metric_unit(record, metric) {
        unit if unit.is_empty() => metric_title(metric),
        unit => format!("{} ({unit})", metric_title(metric)),
    }
}

fn no_data(message: &str) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, 120)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let _ = root.draw(&Text::new(
            message.to_string(),
            (20, 50),
            ("sans-serif", 18),
        ));
        let _ = root.present();
    }
    svg
}

/// The top of a y axis that starts at 0: a little above the highest value.
fn y_top(highest: f64) -> f64 {
    if highest > 0.0 && highest.is_finite() {
        highest * 1.1
    } else {
        1.0
    }
}

type Chart2d<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A titled chart on `plot` with quiet grid lines.
fn build<'a, 'b>(
    plot: &'a DrawingArea<SVGBackend<'b>, Shift>,
    caption: String,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
) -> Option<Chart2d<'a, 'b>> {
    ChartBuilder::on(plot)
        .caption(caption, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(x, y)
        .ok()
}

/// A series line through `points`, solid or dashed, with a marker at each.
fn draw_line(chart: &mut Chart2d<'_, '_>, points: &[(f64, f64)], look: Look) {
    let style = look.color.stroke_width(2);
    let _ = match look.dash {
        None => chart
            .draw_series(LineSeries::new(points.to_vec(), style))
            .map(|_| ()),
        Some((dash, gap)) => chart
            .draw_series(DashedLineSeries::new(points.to_vec(), dash, gap, style))
            .map(|_| ()),
    };
    let _ = chart.draw_series(
        points
            .iter()
            .map(|&p| Circle::new(p, 4, look.color.filled())),
    );
}

/// A cell's mean on a line: (row index, mean, its interval).
type MeanPoint = (usize, f64, Option<(f64, f64)>);

/// `metric` against the row factor's levels, one line per column.
pub fn metric_vs_row(record: &ExperimentRecord, analysis: &Analysis, metric: &str) -> String {
    let layout = Layout::of(record);
    // Per column: (row index, mean, interval) of every cell with data.
    let series: Vec<Vec<MeanPoint>> = layout
        .columns
        .iter()
        .map(|column| {
            layout
                .rows
                .iter()
                .enumerate()
                .filter_map(|(r, row)| {
                    let s = analysis.stats(&layout.cell(row, column), metric)?;
                    Some((r, s.mean, s.mean_ci95.map(|b| (b.low, b.high))))
                })
                .collect()
        })
        .collect();
    if series.iter().all(Vec::is_empty) {
        return no_data(&format!("{}: no successful run", metric_title(metric)));
    }
    let highest = series
        .iter()
        .flatten()
        .map(|&(_, mean, ci)| ci.map_or(mean, |(_, high)| high.max(mean)))
        .fold(0.0, f64::max);
    let entries: Vec<Entry> = layout
        .columns
        .iter()
        .enumerate()
        .map(|(i, column)| Entry {
            label: column_label(column),
            look: look(i, 0),
        })
        .collect();
    let legend_title = match layout.columns_title() {
        t if t.is_empty() => "series".to_string(),
        t => t,
    };
    let caption = match layout.row_factor {
        Some(_) => format!(
            "{} vs {}: mean and 95 % CI",
            metric_title(metric),
            layout.row_title()
        ),
        None => format!("{}: mean and 95 % CI", metric_title(metric)),
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let (plot, legend) = split_page(&root, legend_width(&legend_title, &entries));
        let rows = layout.rows.len();
        // Row r sits at x = r; asking for at most `rows` ticks makes
        // plotters put them exactly on the integers.
        let Some(mut chart) = build(&plot, caption, -0.5..rows as f64 - 0.5, 0.0..y_top(highest))
        else {
            return no_data(&metric_title(metric));
        };
        let row_names = layout.rows.clone();
        let _ = chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(rows)
            .y_max_light_lines(1)
            .light_line_style(RGBColor(0xF4, 0xF4, 0xF4))
            .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
            .x_desc(layout.row_title())
            .y_desc(metric_axis(record, metric))
            .x_label_formatter(&|x| row_label(&row_names, *x))
            .y_label_formatter(&|y| si_label(*y))
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 16))
            .draw();
        let count = series.len() as f64;
        for (c, (points, entry)) in series.iter().zip(&entries).enumerate() {
            // Lines side by side are nudged apart so their error bars do not
            // cover each other.
            let nudge = (c as f64 - (count - 1.0) / 2.0) * (0.25 / count);
            let xy: Vec<(f64, f64)> = points
                .iter()
                .map(|&(r, mean, _)| (r as f64 + nudge, mean))
                .collect();
            draw_error_bars(&mut chart, points, nudge, entry.look.color);
            draw_line(&mut chart, &xy, entry.look);
        }
        draw_legend(&legend, &legend_title, &entries);
        let _ = root.present();
    }
    svg
}

/// The row level at an integer x, nothing between rows.
fn row_label(rows: &[String], x: f64) -> String {
    let nearest = x.round();
    if (x - nearest).abs() > 1e-6 || nearest < 0.0 {
        return String::new();
    }
    rows.get(nearest as usize).cloned().unwrap_or_default()
}

/// Vertical bars over the intervals, with caps.
fn draw_error_bars(chart: &mut Chart2d<'_, '_>, points: &[MeanPoint], nudge: f64, color: RGBColor) {
    let cap = 0.03;
    let bar = color.stroke_width(2);
    for &(r, _, interval) in points {
        let Some((low, high)) = interval else {
            continue;
        };
        let x = r as f64 + nudge;
        let _ = chart.draw_series([
            PathElement::new(vec![(x, low), (x, high)], bar),
            PathElement::new(vec![(x - cap, low), (x + cap, low)], bar),
            PathElement::new(vec![(x - cap, high), (x + cap, high)], bar),
        ]);
    }
}

/// The percentile plot of `metric`: per cell with a successful run, its
/// sorted values against their plotting positions (i − ½)/n in percent,
/// value up, so a flat line is a steady cell and a slope is spread. The
/// legend lists the cells from the highest median down, as they stack.
pub fn percentiles(record: &ExperimentRecord, metric: &str) -> String {
    let layout = Layout::of(record);
    let mut curves: Vec<(String, Look, Vec<f64>)> = Vec::new();
    for (c, column) in layout.columns.iter().enumerate() {
        for (r, row) in layout.rows.iter().enumerate() {
            let cell = layout.cell(row, column);
            let mut values: Vec<f64> = record
                .ok_runs(&cell)
                .filter_map(|run| run.metrics.get(metric).copied())
                .filter(|v| v.is_finite())
                .collect();
            values.sort_by(f64::total_cmp);
            if !values.is_empty() {
                curves.push((cell_short_label(&cell), look(c, r), values));
            }
        }
    }
    if curves.is_empty() {
        return no_data(&format!("{}: no successful run", metric_title(metric)));
    }
    let median = |v: &[f64]| netperf_results::stats::median_of_sorted(v).unwrap_or(0.0);
    curves.sort_by(|a, b| median(&b.2).total_cmp(&median(&a.2)));
    let (low, high) = curves
        .iter()
        .flat_map(|(_, _, v)| v.iter().copied())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let pad = if high > low {
        (high - low) * 0.05
    } else {
        low.abs().max(1.0) * 0.05
    };
    let entries: Vec<Entry> = curves
        .iter()
        .map(|(label, look, _)| Entry {
            label: label.clone(),
            look: *look,
        })
        .collect();
    let legend_title = match record
        .factors
        .iter()
        .map(|f| f.name.as_str())
        .collect::<Vec<_>>()
    {
        names if names.is_empty() => "cell".to_string(),
        names => names.join(" × "),
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let (plot, legend) = split_page(&root, legend_width(&legend_title, &entries));
        let caption = format!("{}: percentiles per cell", metric_title(metric));
        let Some(mut chart) = build(
            &plot,
            caption,
            0.0..100.0,
            (low - pad).max(0.0_f64.min(low))..high + pad,
        ) else {
            return no_data(&metric_title(metric));
        };
        let _ = chart
            .configure_mesh()
            .max_light_lines(1)
            .light_line_style(RGBColor(0xF4, 0xF4, 0xF4))
            .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
            .x_desc("percentile of the cell's runs")
            .y_desc(metric_axis(record, metric))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| si_label(*y))
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 16))
            .draw();
        for ((_, look, values), _) in curves.iter().zip(&entries) {
            draw_line(&mut chart, &plotting_positions(values), *look);
        }
        draw_legend(&legend, &legend_title, &entries);
        let _ = root.present();
    }
    svg
}

/// Sorted `values` at their plotting positions (i − ½)/n, in percent.
fn plotting_positions(values: &[f64]) -> Vec<(f64, f64)> {
    let n = values.len() as f64;
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| ((i as f64 + 0.5) / n * 100.0, v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plotting_positions_are_centred() {
        assert_eq!(
            plotting_positions(&[1.0, 2.0, 4.0, 8.0]),
            [(12.5, 1.0), (37.5, 2.0), (62.5, 4.0), (87.5, 8.0)]
        );
        assert_eq!(plotting_positions(&[5.0]), [(50.0, 5.0)]);
    }

    #[test]
    fn file_names_are_safe() {
        assert_eq!(file_stem("LOCAL_SD"), "local_sd");
        assert_eq!(file_stem("../X Y"), "___x_y");
    }

    #[test]
    fn row_labels_only_on_rows() {
        let rows = ["1024".to_string(), "8192".to_string()];
        assert_eq!(row_label(&rows, 1.0), "8192");
        assert_eq!(row_label(&rows, 0.5), "");
        assert_eq!(row_label(&rows, -1.0), "");
        assert_eq!(row_label(&rows, 2.0), "");
    }

    #[test]
    fn looks_follow_column_and_row() {
        assert_eq!(look(0, 0).dash, None);
        assert_eq!(look(0, 1).color, look(0, 0).color);
        assert_ne!(look(0, 1).dash, None);
        assert_ne!(look(1, 0).color, look(0, 0).color);
        // Past the palette the colours repeat with another dash.
        assert_eq!(look(PALETTE.len(), 0).color, look(0, 0).color);
        assert_ne!(look(PALETTE.len(), 0).dash, look(0, 0).dash);
    }
}
