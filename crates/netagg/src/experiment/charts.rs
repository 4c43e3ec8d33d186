//! The experiment's charts as SVG: each key metric against the row factor
//! (the write-up's "throughput / service demand vs send size"), one line
//! per combination of the other factors with the mean's 95 % t interval as
//! error bars; and per key metric the percentile (empirical CDF) curve of
//! every cell's successful runs. Legends sit beside the plot so they never
//! hide data; ticks are short SI labels.

use super::analysis::{key_metrics_present, Analysis};
use super::layout::{cell_short_label, column_label, metric_title, metric_unit, Layout};
use netperf_pages::chart::{message, span, Axis, Look, Plot, Series};
use netperf_results::model::ExperimentRecord;

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
    let against = against(&Layout::of(record));
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

/// " vs send size" when there is a row factor.
fn against(layout: &Layout) -> String {
    match layout.row_factor {
        Some(_) => format!(" vs {}", layout.row_title()),
        None => String::new(),
    }
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

/// The axis title of a metric: "Throughput (10^6bits/s)".
pub(super) fn metric_axis(record: &ExperimentRecord, metric: &str) -> String {
    match metric_unit(record, metric) {
        unit if unit.is_empty() => metric_title(metric),
        unit => format!("{} ({unit})", metric_title(metric)),
    }
}

/// A cell's mean on a line: (row index, mean, its interval). A series's
/// colour says its column (the other factors' combination), its dash the
/// row factor's level, the same in every chart (`Look::new(column, row)`).
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
        return no_run(metric);
    }
    let legend_title = match layout.columns_title() {
        t if t.is_empty() => "series".to_string(),
        t => t,
    };
    let caption = format!(
        "{}{}: mean and 95 % CI",
        metric_title(metric),
        against(&layout)
    );
    let x = Axis::categories(layout.row_title(), layout.rows.clone());
    let y = Axis::si(metric_axis(record, metric));
    let mut plot = Plot::new(caption, x, y);
    plot.legend_title = Some(legend_title);
    let count = series.len() as f64;
    for (c, (points, column)) in series.iter().zip(&layout.columns).enumerate() {
        // Lines side by side are nudged apart so their error bars do not
        // cover each other.
        let nudge = (c as f64 - (count - 1.0) / 2.0) * (0.25 / count);
        let xy = points
            .iter()
            .map(|&(r, mean, _)| (r as f64 + nudge, mean))
            .collect();
        let mut line = Series::line(xy, Look::new(c, 0)).named(column_label(column));
        line.intervals = points
            .iter()
            .filter_map(|&(r, _, ci)| ci.map(|(low, high)| (r as f64 + nudge, low, high)))
            .collect();
        plot.series.push(line.dotted());
    }
    plot.svg()
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
                curves.push((cell_short_label(&cell), Look::new(c, r), values));
            }
        }
    }
    if curves.is_empty() {
        return no_run(metric);
    }
    let median = |v: &[f64]| netperf_results::stats::median_of_sorted(v).unwrap_or(0.0);
    curves.sort_by(|a, b| median(&b.2).total_cmp(&median(&a.2)));
    let (low, high) = span(curves.iter().flat_map(|(_, _, v)| v.iter().copied()));
    let pad = if high > low {
        (high - low) * 0.05
    } else {
        low.abs().max(1.0) * 0.05
    };
    let legend_title = match factor_names(record) {
        names if names.is_empty() => "cell".to_string(),
        names => names,
    };
    let caption = format!("{}: percentiles per cell", metric_title(metric));
    let x = Axis::si("percentile of the cell's runs").range(0.0, 100.0);
    let y =
        Axis::si(metric_axis(record, metric)).range((low - pad).max(0.0_f64.min(low)), high + pad);
    let mut plot = Plot::new(caption, x, y);
    plot.legend_title = Some(legend_title);
    for (label, look, values) in curves {
        let line = Series::line(plotting_positions(&values), look);
        plot.series.push(line.named(label).dotted());
    }
    plot.svg()
}

/// In place of a chart: "Throughput: no successful run".
fn no_run(metric: &str) -> String {
    message(&format!("{}: no successful run", metric_title(metric)))
}

/// Every factor's name: "protocol × size × offloads".
pub(super) fn factor_names(record: &ExperimentRecord) -> String {
    let names: Vec<&str> = record.factors.iter().map(|f| f.name.as_str()).collect();
    names.join(" × ")
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
}
