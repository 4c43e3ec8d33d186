//! The experiment's text report, printed at the end of a run: a header
//! (title, seed, replicates, runs ok/failed), one table per key metric in
//! the shape of the write-up's Throughput / Send / Receive Service Demand
//! tables (rows = the row factor's levels, columns = the other factors'
//! combinations, an "Improvement" row), the ratios between levels, and the
//! failed runs with their reasons. Tables wider than a terminal are split
//! into blocks of columns that each repeat the row labels.

use std::fmt::Write as _;

use super::analysis::{format_ratio, key_metrics_present, Analysis, Finding, Improvement, RatioOf};
use super::layout::{column_label, metric_heading, metric_title, Layout};
use super::numbers::{format_mean_ci, format_value};
use netperf_results::model::{cell_label, ExperimentRecord, RunStatus};

/// The widest line a table may print (a 100-column terminal).
pub const TEXT_WIDTH: usize = 100;

/// Marks after an Improvement value, and what they mean.
pub const MARK_SIGNIFICANT: &str = "*";
pub const MARK_NOT_SIGNIFICANT: &str = "~";
pub const MARK_NO_INTERVAL: &str = "?";

/// The whole text report.
pub fn text_report(record: &ExperimentRecord, analysis: &Analysis) -> String {
    let mut out = String::new();
    header(&mut out, record, analysis);
    if let Some(table) = super::scenarios::scenario_table(record, analysis) {
        out.push_str("\nScenarios\n\n");
        out.push_str(&super::scenarios::markdown(&table));
    }
    let layout = Layout::of(record);
    let metrics = key_metrics_present(record);
    if metrics.is_empty() {
        out.push_str(
            "\nNo run reported a key metric (throughput, service demand, CPU, latency).\n",
        );
    } else {
        out.push('\n');
        out.push_str(&legend(&layout, analysis));
        for metric in metrics {
            out.push('\n');
            out.push_str(&metric_heading(record, metric));
            out.push('\n');
            out.push_str(&render_grid(
                &metric_grid(record, analysis, &layout, metric),
                TEXT_WIDTH,
            ));
        }
    }
    ratios(&mut out, analysis);
    failures(&mut out, record);
    out
}

fn header(out: &mut String, record: &ExperimentRecord, analysis: &Analysis) {
    let _ = writeln!(out, "Experiment: {}", one_line(&record.title));
    let _ = writeln!(
        out,
        "id {}  seed {}  {} replicates  runs: {} ok, {} failed, {} interrupted  ({})",
        record.id,
        record.seed,
        record.replicates,
        analysis.runs_ok,
        analysis.runs_failed,
        analysis.runs_interrupted,
        record.status
    );
    // With targets, each has its own port (in the scenarios' list).
    let destination = match record.targets.is_empty() {
        true => format!("host {} port {}", record.host, record.port),
        false => format!("hosts {}", record.host),
    };
    let _ = writeln!(
        out,
        "{destination}  started {}  ended {}  netperf-ng {}",
        record.started, record.ended, record.tool_version
    );
    let factors: Vec<String> = record
        .factors
        .iter()
        .map(|f| format!("{} ({})", f.name, f.levels.join(", ")))
        .collect();
    let factors = if factors.is_empty() {
        "none".to_string()
    } else {
        factors.join("; ")
    };
    let _ = writeln!(out, "factors: {factors}");
    let plan = record.cells();
    let outside = record
        .runs
        .iter()
        .filter(|r| !plan.contains(&r.cell))
        .count();
    if outside > 0 {
        let _ = writeln!(
            out,
            "warning: {outside} runs belong to no cell of the plan's factors; they are in the CSV and JSON, not in these tables"
        );
    }
}

/// Titles and plans come from the user: keep each on its line.
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

fn legend(layout: &Layout, analysis: &Analysis) -> String {
    let confidence = format!("{:.0} %", analysis.confidence * 100.0);
    let mut text = format!(
        "Cells: mean ± half-width of its {confidence} t confidence interval over the successful runs; \
         (n=…) when fewer runs than replicates succeeded; — when none did."
    );
    if let (Some(factor), [first, .., last]) = (&layout.row_factor, layout.rows.as_slice()) {
        let _ = write!(
            text,
            " Improvement: {factor} {last} over {first} (mean {last} / mean {first} when higher is \
             better, {first} / {last} when lower is better: above 1 is better); \
             {MARK_SIGNIFICANT} its {confidence} bootstrap interval excludes 1, \
             {MARK_NOT_SIGNIFICANT} no significant difference, {MARK_NO_INTERVAL} no interval (fewer than 4 runs a side)."
        );
    }
    if !layout.column_factors.is_empty() {
        let _ = write!(text, " Columns: {}.", layout.columns_title());
    }
    let mut out = wrap(&text, TEXT_WIDTH);
    if let Some(caveat) = analysis.small_sample_caveat() {
        out.push_str(&wrap(&caveat, TEXT_WIDTH));
    }
    out
}

/// Greedy word wrap to `width` characters.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// One table as rows of cells: the heading row, a row per row level, and
/// the Improvement row when the row factor has two levels or more.
pub fn metric_grid(
    record: &ExperimentRecord,
    analysis: &Analysis,
    layout: &Layout,
    metric: &str,
) -> Vec<Vec<String>> {
    let corner = layout.row_factor.clone().unwrap_or_default();
    let mut grid = vec![std::iter::once(corner)
        .chain(layout.columns.iter().map(column_label))
        .collect::<Vec<_>>()];
    for row in &layout.rows {
        let mut line = vec![row.clone()];
        for column in &layout.columns {
            let cell = layout.cell(row, column);
            line.push(cell_text(analysis, &cell, metric, record.replicates));
        }
        grid.push(line);
    }
    if layout.rows.len() >= 2 {
        let mut line = vec!["Improvement".to_string()];
        for column in &layout.columns {
            line.push(improvement_text(analysis.improvement(metric, column)));
        }
        grid.push(line);
    }
    grid
}

/// "4805 ± 120", "4805 ± 120 (n=4)", "4805 (n=1)" or "—".
pub fn cell_text(
    analysis: &Analysis,
    cell: &netperf_results::model::Cell,
    metric: &str,
    replicates: u32,
) -> String {
    let Some(s) = analysis.stats(cell, metric) else {
        return "—".to_string();
    };
    let value = match s.mean_ci95 {
        Some(ci) => format_mean_ci(s.mean, ci.half_width()),
        None => format_value(s.mean),
    };
    if s.n < 2 || s.n < replicates as usize {
        format!("{value} (n={})", s.n)
    } else {
        value
    }
}

/// "3.81 *", "1.02 ~", "1.05 ?" or "—".
pub fn improvement_text(improvement: Option<&Improvement>) -> String {
    match improvement {
        Some(Improvement {
            value: Some(v),
            finding,
            ..
        }) => format!("{} {}", format_ratio(*v), improvement_mark(*finding)),
        _ => "—".to_string(),
    }
}

pub fn improvement_mark(finding: Finding) -> &'static str {
    match finding {
        Finding::Higher | Finding::Lower => MARK_SIGNIFICANT,
        Finding::NoSignificantDifference => MARK_NOT_SIGNIFICANT,
        Finding::NoInterval => MARK_NO_INTERVAL,
    }
}

/// Renders a grid with its first column left-aligned and repeated, the
/// others right-aligned, split into blocks of columns no wider than `width`.
pub fn render_grid(grid: &[Vec<String>], width: usize) -> String {
    let columns = grid.iter().map(Vec::len).max().unwrap_or(0);
    let text_width = |s: &String| s.chars().count();
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            grid.iter()
                .filter_map(|r| r.get(c))
                .map(text_width)
                .max()
                .unwrap_or(0)
        })
        .collect();
    const GAP: usize = 2;
    let mut out = String::new();
    let mut start = 1;
    while start < columns || (start == 1 && columns == 1) {
        let mut end = start;
        let mut used = widths[0];
        while end < columns && (end == start || used + GAP + widths[end] <= width) {
            used += GAP + widths[end];
            end += 1;
        }
        if start > 1 {
            out.push('\n');
        }
        for (index, row) in grid.iter().enumerate() {
            let empty = String::new();
            let mut line = format!("{:<w$}", row.first().unwrap_or(&empty), w = widths[0]);
            for (c, w) in widths.iter().enumerate().take(end).skip(start) {
                let _ = write!(line, "{:GAP$}{:>w$}", "", row.get(c).unwrap_or(&empty));
            }
            out.push_str(line.trim_end());
            out.push('\n');
            if index == 0 {
                out.push_str(&"-".repeat(used.min(width)));
                out.push('\n');
            }
        }
        if end == start {
            break;
        }
        start = end;
    }
    out
}

/// The ratios of means, grouped by metric.
fn ratios(out: &mut String, analysis: &Analysis) {
    let means = analysis.ratios_by_metric(RatioOf::Mean);
    if means.is_empty() {
        return;
    }
    let confidence = format!("{:.0} %", analysis.confidence * 100.0);
    let _ = writeln!(
        out,
        "\nRatios of means (level / first level, other factors held fixed, {confidence} bootstrap interval)"
    );
    let mut metric = "";
    for r in means {
        if r.metric != metric {
            metric = &r.metric;
            let _ = writeln!(out, "{}", metric_title(metric));
        }
        let held = match cell_label(&r.held) {
            label if label.is_empty() => String::new(),
            label => format!(" at {label}"),
        };
        let _ = writeln!(
            out,
            "  {} {} / {}{held}: {}",
            r.factor, r.level, r.baseline, r.summary
        );
    }
}

fn failures(out: &mut String, record: &ExperimentRecord) {
    let bad: Vec<_> = record.runs.iter().filter(|r| !r.status.is_ok()).collect();
    if bad.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nRuns that did not measure ({}):", bad.len());
    for run in bad {
        let reason = match &run.status {
            RunStatus::Failed { reason } => format!("failed: {}", one_line(reason)),
            RunStatus::Interrupted => "interrupted".to_string(),
            RunStatus::Ok => continue,
        };
        let cell = match cell_label(&run.cell) {
            label if label.is_empty() => String::new(),
            label => format!(" {label}"),
        };
        let _ = writeln!(
            out,
            "  run {} (replicate {}){cell}: {reason}",
            run.order, run.replicate
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(rows: &[&[&str]]) -> Vec<Vec<String>> {
        rows.iter()
            .map(|r| r.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    #[test]
    fn grid_aligns_and_underlines() {
        let text = render_grid(
            &grid(&[&["size", "udp", "tcp on"], &["1024", "4805", "10638"]]),
            100,
        );
        assert_eq!(
            text,
            "size   udp  tcp on\n------------------\n1024  4805   10638\n"
        );
    }

    #[test]
    fn wide_grids_split_into_blocks_repeating_the_row_labels() {
        let wide = grid(&[
            &["f", "aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc"],
            &["x", "1", "2", "3"],
        ]);
        let text = render_grid(&wide, 25);
        assert!(text.lines().all(|l| l.chars().count() <= 25), "{text}");
        assert_eq!(
            text.matches("\nx ").count() + usize::from(text.starts_with("x ")),
            2,
            "{text}"
        );
        assert!(text.contains("cccccccccc"));
    }

    #[test]
    fn wrap_keeps_lines_short() {
        let text = wrap(&"word ".repeat(50), 21);
        assert!(text.lines().all(|l| l.len() <= 21));
        assert_eq!(text.split_whitespace().count(), 50);
    }
}
