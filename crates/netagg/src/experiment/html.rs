//! The experiment's HTML report: one self-contained page (inline CSS and
//! SVG, no script, no external resource) that reads at 1280 px, on a phone
//! (wide tables scroll inside their own box, never the page) and on paper:
//! the context (title, dates, host, seed, command line, plan, environment of
//! both ends, version), the per-metric tables with their Improvement row,
//! the charts, the ratios between levels, every cell's statistics, the runs
//! that did not measure, and how to reproduce the experiment. Every text
//! that came from the user or the network is escaped.

use std::fmt::Write as _;

use netperf_pages::context::command_text;
use netperf_pages::page::{Cell, Page, Table};

use super::analysis::{
    describe_ratio, format_ratio, key_metrics_present, Analysis, Bounds, LevelRatio, MetricStats,
    RatioOf,
};
use super::charts::{factor_names, metric_axis, Chart, ChartKind};
use super::layout::{cell_short_label, column_label, metric_heading, metric_title, Layout};
use super::numbers::format_value;
use super::tables::{
    cell_text, improvement_mark, MARK_NOT_SIGNIFICANT, MARK_NO_INTERVAL, MARK_SIGNIFICANT,
};
use netperf_results::model::{cell_label, ExperimentRecord, RunStatus};

/// The experiment's command line with its seed, so it runs in the same
/// order again.
pub fn reproduce_command(record: &ExperimentRecord) -> String {
    let mut args = record.command_line.clone();
    let has_seed = args
        .iter()
        .any(|a| a == "--seed" || a.starts_with("--seed="));
    if !has_seed {
        args.push("--seed".into());
        args.push(record.seed.to_string());
    }
    command_text(&args)
}

/// The whole page; `charts` are inlined in the order given.
pub fn report(record: &ExperimentRecord, analysis: &Analysis, charts: &[Chart]) -> String {
    let title = if record.title.trim().is_empty() {
        "Experiment"
    } else {
        &record.title
    };
    let mut page = Page::new(title);
    context(&mut page, record, analysis);
    scenarios(&mut page, record, analysis);
    results(&mut page, record, analysis);
    for (kind, heading) in [
        (ChartKind::MetricVsRow, "Charts"),
        (ChartKind::Percentiles, "Percentiles per cell"),
    ] {
        figures(&mut page, charts, kind, heading);
    }
    ratios(&mut page, analysis);
    cell_statistics(&mut page, record, analysis);
    failures(&mut page, record);
    page.reproduce(&[
        (
            "Run the same plan with the same seed to get the same run order:",
            &reproduce_command(record),
        ),
        (
            "Draw this report and its files again from the saved record:",
            "netagg report experiment.json --out DIR",
        ),
    ]);
    page.finish()
}

fn context(page: &mut Page, record: &ExperimentRecord, analysis: &Analysis) {
    let factors: Vec<String> = record
        .factors
        .iter()
        .map(|f| format!("{} ({})", f.name, f.levels.join(", ")))
        .collect();
    let runs = format!(
        "{} ok, {} failed, {} interrupted",
        analysis.runs_ok, analysis.runs_failed, analysis.runs_interrupted
    );
    let items: [(&str, String); 12] = [
        ("Experiment id", record.id.clone()),
        ("Started", record.started.clone()),
        ("Ended", record.ended.clone()),
        ("Status", record.status.clone()),
        (
            "Remote host",
            match record.targets.is_empty() {
                true => format!("{} (port {})", record.host, record.port),
                false => format!("{} (see Scenarios)", record.host),
            },
        ),
        ("Seed", record.seed.to_string()),
        ("Replicates", record.replicates.to_string()),
        ("Runs", runs),
        ("Factors", factors.join("; ")),
        ("Tags", record.tags.join(", ")),
        ("Duration", duration_text(&record.started, &record.ended)),
        (
            "netperf-ng",
            match record.tool_revision.as_str() {
                "" => record.tool_version.clone(),
                revision => format!("{} (git {revision})", record.tool_version),
            },
        ),
    ];
    page.section("context", "Context", |page| {
        page.context_list(items, &command_text(&record.command_line));
        page.heading("Plan").pre(&record.plan);
        if let Some(table) = environment(record) {
            page.heading("Environment").table(&table);
        }
    });
}

/// "1234.5 s" between two RFC 3339 times; empty when either is not one.
fn duration_text(started: &str, ended: &str) -> String {
    use netperf_base::timefmt::parse_utc;
    match (parse_utc(started), parse_utc(ended)) {
        (Some(from), Some(to)) if to >= from => format!("{:.1} s", (to - from).as_secs_f64()),
        _ => String::new(),
    }
}

/// Both ends' environment side by side; none when neither was recorded.
fn environment(record: &ExperimentRecord) -> Option<Table> {
    let env = &record.environment;
    let mut keys: Vec<&String> = env.local.keys().chain(env.remote.keys()).collect();
    keys.sort();
    keys.dedup();
    if keys.is_empty() {
        return None;
    }
    let mut table = Table::new(["", "local", "remote"]).of_words();
    for key in keys {
        let side = |map: &std::collections::BTreeMap<String, String>| {
            Cell::text(map.get(key).map_or("", String::as_str))
        };
        table.row([Cell::label(key), side(&env.local), side(&env.remote)]);
    }
    Some(table)
}

/// The Results section: one table per key metric with its legend (also
/// the latest experiment on `netagg watch`'s page).
pub(crate) fn results(page: &mut Page, record: &ExperimentRecord, analysis: &Analysis) {
    page.section("results", "Results", |page| {
        let metrics = key_metrics_present(record);
        if metrics.is_empty() {
            page.paragraph("No run reported a key metric.");
            return;
        }
        let layout = Layout::of(record);
        page.note(&results_legend(record, analysis, &layout));
        if let Some(caveat) = analysis.small_sample_caveat() {
            page.caution(&caveat);
        }
        for metric in metrics {
            page.heading(&metric_heading(record, metric))
                .table(&metric_table(record, analysis, &layout, metric));
        }
    });
}

/// How to read a cell of the result tables and their Improvement row.
fn results_legend(record: &ExperimentRecord, analysis: &Analysis, layout: &Layout) -> String {
    let confidence = format!("{:.0} %", analysis.confidence * 100.0);
    let mut legend = format!(
        "Each cell: mean ± half-width of its {confidence} Student-t confidence interval over the \
         successful runs; (n=…) when fewer runs than the {} replicates succeeded; — when none did.",
        record.replicates
    );
    if let (Some(factor), [first, .., last]) = (&layout.row_factor, layout.rows.as_slice()) {
        let _ = write!(
            legend,
            " Improvement: {factor} {last} over {first}, as {last}/{first} when higher is better and \
             {first}/{last} when lower is better, so above 1 is better; with its {confidence} bootstrap \
             interval: {MARK_SIGNIFICANT} the interval excludes 1, {MARK_NOT_SIGNIFICANT} no significant \
             difference, {MARK_NO_INTERVAL} no interval (fewer than 2 runs)."
        );
    }
    if !layout.column_factors.is_empty() {
        let _ = write!(legend, " Columns: {}.", layout.columns_title());
    }
    legend
}

/// The scenario summary (experiments with targets: `netagg matrix`).
fn scenarios(page: &mut Page, record: &ExperimentRecord, analysis: &Analysis) {
    let Some(scenarios) = super::scenarios::scenario_table(record, analysis) else {
        return;
    };
    let headings = scenarios.columns.iter().map(|c| c.heading.clone());
    let mut table = Table::new(std::iter::once("Scenario".to_string()).chain(headings));
    for row in &scenarios.rows {
        let values = row.values.iter().map(|(text, _)| Cell::number(text));
        table.row(std::iter::once(Cell::label(&row.label).titled(&row.about)).chain(values));
    }
    let about: Vec<(&str, &str)> = scenarios
        .rows
        .iter()
        .map(|row| (row.label.as_str(), row.about.as_str()))
        .collect();
    page.section("scenarios", "Scenarios", |page| {
        page.table(&table)
            .paragraph(&format!(
                "Each value is the median of the scenario's runs ({} asked per cell).",
                scenarios.replicates
            ))
            .labelled_list("scenarios", &about);
    });
}

fn metric_table(
    record: &ExperimentRecord,
    analysis: &Analysis,
    layout: &Layout,
    metric: &str,
) -> Table {
    let corner = layout.row_factor.clone().unwrap_or_default();
    let mut table =
        Table::new(std::iter::once(corner).chain(layout.columns.iter().map(column_label)));
    for row in &layout.rows {
        let values = layout.columns.iter().map(|column| {
            let cell = layout.cell(row, column);
            Cell::number(cell_text(analysis, &cell, metric, record.replicates))
        });
        table.row(std::iter::once(Cell::label(row)).chain(values));
    }
    if layout.rows.len() >= 2 {
        let values = layout.columns.iter().map(|column| {
            let improvement = analysis.improvement(metric, column);
            let text = match improvement.map(|i| (i.value, i.ci95, i.finding)) {
                Some((Some(v), Some(ci), finding)) => format!(
                    "{} [{}, {}] {}",
                    format_ratio(v),
                    format_ratio(ci.low),
                    format_ratio(ci.high),
                    improvement_mark(finding)
                ),
                Some((Some(v), None, finding)) => {
                    format!("{} {}", format_ratio(v), improvement_mark(finding))
                }
                _ => "—".to_string(),
            };
            let note = improvement.and_then(|i| i.note.clone());
            Cell::number(text).titled(note.unwrap_or_default())
        });
        table.styled_row(
            "improvement",
            std::iter::once(Cell::label("Improvement")).chain(values),
        );
    }
    table
}

fn figures(page: &mut Page, charts: &[Chart], kind: ChartKind, heading: &str) {
    let mine: Vec<&Chart> = charts.iter().filter(|c| c.kind == kind).collect();
    if mine.is_empty() {
        return;
    }
    page.section("", heading, |page| {
        for chart in mine {
            page.figure(
                &chart.svg,
                &format!("{} ({})", chart.title, chart.file_name),
            );
        }
    });
}

fn ratios(page: &mut Page, analysis: &Analysis) {
    let means = analysis.ratios_by_metric(RatioOf::Mean);
    if means.is_empty() {
        return;
    }
    let mut table = Table::new([
        "metric",
        "factor",
        "level / baseline",
        "other factors at",
        "n",
        "ratio of means",
        "ratio of medians",
    ])
    .of_words();
    for r in means {
        let median = analysis.ratios.iter().find(|m| {
            m.statistic == RatioOf::Median
                && m.metric == r.metric
                && m.factor == r.factor
                && m.level == r.level
                && m.held == r.held
        });
        table.row([
            Cell::label(metric_title(&r.metric)),
            Cell::label(&r.factor),
            Cell::label(format!("{} / {}", r.level, r.baseline)),
            Cell::text(cell_label(&r.held)),
            Cell::number(format!("{} / {}", r.n_level, r.n_baseline)),
            ratio_cell(Some(r)),
            ratio_cell(median),
        ]);
    }
    let confidence = format!("{:.0} %", analysis.confidence * 100.0);
    page.section("ratios", "Ratios between levels", |page| {
        page.note(&format!(
            "Each level of a factor over the factor's first level, the other factors held at the \
             levels shown; {confidence} percentile-bootstrap intervals ({} resamples, seed {}); n \
             counts the successful runs of the level and of the baseline. An interval that contains \
             1 is \u{201c}no significant difference\u{201d}.",
            analysis.bootstrap_resamples, analysis.bootstrap_seed
        ));
        if let Some(caveat) = analysis.small_sample_caveat() {
            page.caution(&caveat);
        }
        page.table(&table);
    });
}

/// A ratio in words, coloured by whether it is better or worse.
fn ratio_cell(ratio: Option<&LevelRatio>) -> Cell {
    let Some(r) = ratio else {
        return Cell::number("");
    };
    let text = describe_ratio(r.ratio, r.ci95, r.finding, r.better, r.note.as_deref());
    let class = [("(better)", "text better"), ("(worse)", "text worse")]
        .into_iter()
        .find(|(ending, _)| text.ends_with(ending))
        .map_or("text", |(_, class)| class);
    Cell::new(class, text)
}

fn cell_statistics(page: &mut Page, record: &ExperimentRecord, analysis: &Analysis) {
    let metrics = key_metrics_present(record);
    if metrics.is_empty() {
        return;
    }
    let factors = factor_names(record);
    page.section("cells", "Cell statistics", |page| {
        page.note(&format!(
            "Over each cell's successful runs; cells are named by their levels of {factors}. \
             Percentiles and every other metric are in cells.csv."
        ));
        for metric in metrics {
            page.heading(&metric_axis(record, metric))
                .table(&cell_table(analysis, metric));
        }
    });
}

/// The cell statistics of one metric: heading and figure.
type CellFigure = (&'static str, fn(&MetricStats) -> String);
const CELL_FIGURES: [CellFigure; 8] = [
    ("mean", |s| format_value(s.mean)),
    ("95 % CI (t)", |s| interval(s.mean_ci95)),
    ("median", |s| format_value(s.median)),
    ("95 % CI (bootstrap)", |s| interval(s.median_ci95)),
    ("sd", |s| s.stdev.map_or("—".to_string(), format_value)),
    ("min", |s| format_value(s.min)),
    ("max", |s| format_value(s.max)),
    ("n excluded", |s| s.n_excluded.to_string()),
];

fn interval(bounds: Option<Bounds>) -> String {
    bounds.map_or("—".to_string(), |b| {
        format!("[{}, {}]", format_value(b.low), format_value(b.high))
    })
}

/// Every cell's statistics of `metric`.
fn cell_table(analysis: &Analysis, metric: &str) -> Table {
    let head = ["cell", "ok", "not ok"].into_iter();
    let mut table = Table::new(head.chain(CELL_FIGURES.iter().map(|(heading, _)| *heading)));
    for cell in &analysis.cells {
        let stats = cell.metrics.iter().find(|m| m.metric == metric);
        let figures = CELL_FIGURES.iter().map(|(_, figure)| match stats {
            Some(stats) => figure(stats),
            None => "—".to_string(),
        });
        let counts = [cell.n_ok, cell.n_failed + cell.n_interrupted].map(|n| n.to_string());
        let label = Cell::label(cell_short_label(&cell.cell));
        table
            .row(std::iter::once(label).chain(counts.into_iter().chain(figures).map(Cell::number)));
    }
    table
}

fn failures(page: &mut Page, record: &ExperimentRecord) {
    let mut table = Table::new(["run", "replicate", "cell", "status", "reason"]).of_words();
    for run in &record.runs {
        let (status, reason) = match &run.status {
            RunStatus::Failed { reason } => ("failed", reason.as_str()),
            RunStatus::Interrupted => ("interrupted", ""),
            RunStatus::Ok => continue,
        };
        table.row([
            Cell::number(run.order.to_string()),
            Cell::number(run.replicate.to_string()),
            Cell::label(cell_label(&run.cell)),
            Cell::label(status),
            Cell::new("text reason", reason),
        ]);
    }
    let bad = record.runs.iter().filter(|r| !r.status.is_ok()).count();
    let heading = format!("Runs that did not measure ({bad})");
    page.section("failures", &heading, |page| match bad {
        0 => {
            page.paragraph("Every run measured.");
        }
        _ => {
            page.note("Counted per cell, never in the statistics.")
                .table(&table);
        }
    });
}
