//! The experiment's HTML report: one self-contained page (inline CSS and
//! SVG, no script, no external resource) that reads at 1280 px, on a phone
//! (wide tables scroll inside their own box, never the page) and on paper:
//! the context (title, dates, host, seed, command line, plan, environment of
//! both ends, version), the per-metric tables with their Improvement row,
//! the charts, the ratios between levels, every cell's statistics, the runs
//! that did not measure, and how to reproduce the experiment. Every text
//! that came from the user or the network is escaped.

use std::fmt::Write as _;

use netperf_pages::html::svg_body;
pub use netperf_pages::html::{escape, shell_quote};

use super::analysis::{
    describe_ratio, format_ratio, key_metrics_present, Analysis, LevelRatio, RatioOf,
};
use super::charts::{Chart, ChartKind};
use super::layout::{
    cell_short_label, column_label, metric_heading, metric_title, metric_unit, Layout,
};
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
    args.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The whole page; `charts` are inlined in the order given.
pub fn report(record: &ExperimentRecord, analysis: &Analysis, charts: &[Chart]) -> String {
    let title = if record.title.trim().is_empty() {
        "Experiment"
    } else {
        &record.title
    };
    let mut out = netperf_pages::html::open(title);
    context(&mut out, record, analysis);
    scenarios(&mut out, record, analysis);
    results(&mut out, record, analysis);
    figures(&mut out, charts, ChartKind::MetricVsRow, "Charts");
    figures(
        &mut out,
        charts,
        ChartKind::Percentiles,
        "Percentiles per cell",
    );
    ratios(&mut out, analysis);
    cell_statistics(&mut out, record, analysis);
    failures(&mut out, record);
    reproduce(&mut out, record);
    out.push_str(netperf_pages::html::CLOSE);
    out
}

fn context(out: &mut String, record: &ExperimentRecord, analysis: &Analysis) {
    out.push_str("<section id=\"context\"><h2>Context</h2><dl class=\"context\">\n");
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
    for (name, value) in items {
        let _ = writeln!(out, "<dt>{name}</dt><dd>{}</dd>", escape(&value));
    }
    let command = record
        .command_line
        .iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ");
    let _ = writeln!(
        out,
        "<dt>Command line</dt><dd><code>{}</code></dd></dl>",
        escape(&command)
    );
    let _ = writeln!(out, "<h3>Plan</h3><pre>{}</pre>", escape(&record.plan));
    environment(out, record);
    out.push_str("</section>\n");
}

/// "1234.5 s" between two RFC 3339 times; empty when either is not one.
fn duration_text(started: &str, ended: &str) -> String {
    use netperf_base::timefmt::parse_utc;
    match (parse_utc(started), parse_utc(ended)) {
        (Some(from), Some(to)) if to >= from => format!("{:.1} s", (to - from).as_secs_f64()),
        _ => String::new(),
    }
}

fn environment(out: &mut String, record: &ExperimentRecord) {
    let env = &record.environment;
    let mut keys: Vec<&String> = env.local.keys().chain(env.remote.keys()).collect();
    keys.sort();
    keys.dedup();
    if keys.is_empty() {
        return;
    }
    out.push_str("<h3>Environment</h3><div class=\"scroll\"><table class=\"words\"><thead><tr><th></th><th>local</th><th>remote</th></tr></thead><tbody>\n");
    for key in keys {
        let side = |map: &std::collections::BTreeMap<String, String>| {
            escape(map.get(key).map_or("", String::as_str))
        };
        let _ = writeln!(
            out,
            "<tr><td class=\"label\">{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td></tr>",
            escape(key),
            side(&env.local),
            side(&env.remote)
        );
    }
    out.push_str("</tbody></table></div>\n");
}

fn results(out: &mut String, record: &ExperimentRecord, analysis: &Analysis) {
    out.push_str("<section id=\"results\"><h2>Results</h2>\n");
    let metrics = key_metrics_present(record);
    if metrics.is_empty() {
        out.push_str("<p>No run reported a key metric.</p></section>\n");
        return;
    }
    let layout = Layout::of(record);
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
    let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(&legend));
    if let Some(caveat) = analysis.small_sample_caveat() {
        let _ = writeln!(out, "<p class=\"caution\">{}</p>", escape(&caveat));
    }
    for metric in metrics {
        let _ = writeln!(out, "<h3>{}</h3>", escape(&metric_heading(record, metric)));
        metric_table(out, record, analysis, &layout, metric);
    }
    out.push_str("</section>\n");
}

/// The scenario summary (experiments with targets: `netagg matrix`).
fn scenarios(out: &mut String, record: &ExperimentRecord, analysis: &Analysis) {
    let Some(table) = super::scenarios::scenario_table(record, analysis) else {
        return;
    };
    out.push_str("<section id=\"scenarios\"><h2>Scenarios</h2>\n");
    out.push_str("<div class=\"scroll\"><table><thead><tr><th>Scenario</th>");
    for column in &table.columns {
        let _ = write!(out, "<th>{}</th>", escape(&column.heading));
    }
    out.push_str("</tr></thead><tbody>\n");
    for row in &table.rows {
        let _ = write!(
            out,
            "<tr><td class=\"label\" title=\"{}\">{}</td>",
            escape(&row.about),
            escape(&row.label)
        );
        for (text, _) in &row.values {
            let _ = write!(out, "<td>{}</td>", escape(text));
        }
        out.push_str("</tr>\n");
    }
    let _ = write!(
        out,
        "</tbody></table></div>\n<p>Each value is the median of the scenario's runs ({} asked per cell).</p>\n<ul class=\"scenarios\">",
        table.replicates
    );
    for row in &table.rows {
        let _ = write!(
            out,
            "<li><b>{}</b>: {}</li>",
            escape(&row.label),
            escape(&row.about)
        );
    }
    out.push_str("</ul></section>\n");
}

fn metric_table(
    out: &mut String,
    record: &ExperimentRecord,
    analysis: &Analysis,
    layout: &Layout,
    metric: &str,
) {
    let corner = layout.row_factor.as_deref().unwrap_or("");
    let _ = write!(
        out,
        "<div class=\"scroll\"><table><thead><tr><th>{}</th>",
        escape(corner)
    );
    for column in &layout.columns {
        let _ = write!(out, "<th>{}</th>", escape(&column_label(column)));
    }
    out.push_str("</tr></thead><tbody>\n");
    for row in &layout.rows {
        let _ = write!(out, "<tr><td class=\"label\">{}</td>", escape(row));
        for column in &layout.columns {
            let text = cell_text(
                analysis,
                &layout.cell(row, column),
                metric,
                record.replicates,
            );
            let _ = write!(out, "<td>{}</td>", escape(&text));
        }
        out.push_str("</tr>\n");
    }
    if layout.rows.len() >= 2 {
        out.push_str("<tr class=\"improvement\"><td class=\"label\">Improvement</td>");
        for column in &layout.columns {
            let text = match analysis.improvement(metric, column) {
                Some(i) => match (i.value, i.ci95) {
                    (Some(v), Some(ci)) => format!(
                        "{} [{}, {}] {}",
                        format_ratio(v),
                        format_ratio(ci.low),
                        format_ratio(ci.high),
                        improvement_mark(i.finding)
                    ),
                    (Some(v), None) => {
                        format!("{} {}", format_ratio(v), improvement_mark(i.finding))
                    }
                    (None, _) => "—".to_string(),
                },
                None => "—".to_string(),
            };
            let note = analysis
                .improvement(metric, column)
                .and_then(|i| i.note.clone())
                .unwrap_or_default();
            let _ = write!(
                out,
                "<td title=\"{}\">{}</td>",
                escape(&note),
                escape(&text)
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

fn figures(out: &mut String, charts: &[Chart], kind: ChartKind, heading: &str) {
    let mine: Vec<&Chart> = charts.iter().filter(|c| c.kind == kind).collect();
    if mine.is_empty() {
        return;
    }
    let _ = writeln!(out, "<section><h2>{}</h2>", escape(heading));
    for chart in mine {
        let _ = writeln!(
            out,
            "<figure><div class=\"scroll\">{}</div><figcaption>{} ({})</figcaption></figure>",
            svg_body(&chart.svg),
            escape(&chart.title),
            escape(&chart.file_name)
        );
    }
    out.push_str("</section>\n");
}

fn ratios(out: &mut String, analysis: &Analysis) {
    let means = analysis.ratios_by_metric(RatioOf::Mean);
    if means.is_empty() {
        return;
    }
    let confidence = format!("{:.0} %", analysis.confidence * 100.0);
    let _ = writeln!(
        out,
        "<section id=\"ratios\"><h2>Ratios between levels</h2><p class=\"note\">Each level of a factor \
         over the factor's first level, the other factors held at the levels shown; {confidence} \
         percentile-bootstrap intervals ({} resamples, seed {}); n counts the successful runs of the \
         level and of the baseline. An interval that contains 1 is \
         &ldquo;no significant difference&rdquo;.</p>",
        analysis.bootstrap_resamples, analysis.bootstrap_seed
    );
    if let Some(caveat) = analysis.small_sample_caveat() {
        let _ = writeln!(out, "<p class=\"caution\">{}</p>", escape(&caveat));
    }
    out.push_str(
        "<div class=\"scroll\"><table class=\"words\"><thead><tr><th>metric</th><th>factor</th>\
         <th>level / baseline</th><th>other factors at</th><th>n</th><th>ratio of means</th>\
         <th>ratio of medians</th></tr></thead><tbody>\n",
    );
    for r in means {
        let median = analysis.ratios.iter().find(|m| {
            m.statistic == RatioOf::Median
                && m.metric == r.metric
                && m.factor == r.factor
                && m.level == r.level
                && m.held == r.held
        });
        let _ = writeln!(
            out,
            "<tr><td class=\"label\">{}</td><td class=\"label\">{}</td><td class=\"label\">{} / {}</td>\
             <td class=\"text\">{}</td><td>{} / {}</td>{}{}</tr>",
            escape(&metric_title(&r.metric)),
            escape(&r.factor),
            escape(&r.level),
            escape(&r.baseline),
            escape(&cell_label(&r.held)),
            r.n_level,
            r.n_baseline,
            ratio_cell(Some(r)),
            ratio_cell(median)
        );
    }
    out.push_str("</tbody></table></div></section>\n");
}

fn ratio_cell(ratio: Option<&LevelRatio>) -> String {
    let Some(r) = ratio else {
        return "<td></td>".to_string();
    };
    let text = describe_ratio(r.ratio, r.ci95, r.finding, r.better, r.note.as_deref());
    let class = if text.ends_with("(better)") {
        " better"
    } else if text.ends_with("(worse)") {
        " worse"
    } else {
        ""
    };
    format!("<td class=\"text{class}\">{}</td>", escape(&text))
}

fn cell_statistics(out: &mut String, record: &ExperimentRecord, analysis: &Analysis) {
    let metrics = key_metrics_present(record);
    if metrics.is_empty() {
        return;
    }
    let factors = record
        .factors
        .iter()
        .map(|f| f.name.as_str())
        .collect::<Vec<_>>()
        .join(" × ");
    let _ = writeln!(
        out,
        "<section id=\"cells\"><h2>Cell statistics</h2><p class=\"note\">Over each cell's successful \
         runs; cells are named by their levels of {}. Percentiles and every other metric are in \
         cells.csv.</p>",
        escape(&factors)
    );
    const HEAD: [&str; 10] = [
        "ok",
        "not ok",
        "mean",
        "95 % CI (t)",
        "median",
        "95 % CI (bootstrap)",
        "sd",
        "min",
        "max",
        "n excluded",
    ];
    for metric in metrics {
        let unit = metric_unit(record, metric);
        let heading = match unit.is_empty() {
            true => metric_title(metric),
            false => format!("{} ({unit})", metric_title(metric)),
        };
        let _ = write!(
            out,
            "<h3>{}</h3><div class=\"scroll\"><table><thead><tr>",
            escape(&heading)
        );
        out.push_str("<th>cell</th>");
        for h in HEAD {
            let _ = write!(out, "<th>{h}</th>");
        }
        out.push_str("</tr></thead><tbody>\n");
        for cell in &analysis.cells {
            let interval = |b: Option<super::analysis::Bounds>| {
                b.map_or("—".to_string(), |b| {
                    format!("[{}, {}]", format_value(b.low), format_value(b.high))
                })
            };
            let stats = cell.metrics.iter().find(|m| m.metric == metric);
            let mut fields = vec![
                cell.n_ok.to_string(),
                (cell.n_failed + cell.n_interrupted).to_string(),
            ];
            match stats {
                Some(s) => fields.extend([
                    format_value(s.mean),
                    interval(s.mean_ci95),
                    format_value(s.median),
                    interval(s.median_ci95),
                    s.stdev.map_or("—".to_string(), format_value),
                    format_value(s.min),
                    format_value(s.max),
                    s.n_excluded.to_string(),
                ]),
                None => fields.extend(std::iter::repeat_n("—".to_string(), HEAD.len() - 2)),
            }
            let _ = write!(
                out,
                "<tr><td class=\"label\">{}</td>",
                escape(&cell_short_label(&cell.cell))
            );
            for f in fields {
                let _ = write!(out, "<td>{}</td>", escape(&f));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n");
    }
    out.push_str("</section>\n");
}

fn failures(out: &mut String, record: &ExperimentRecord) {
    let bad: Vec<_> = record.runs.iter().filter(|r| !r.status.is_ok()).collect();
    let _ = writeln!(
        out,
        "<section id=\"failures\"><h2>Runs that did not measure ({})</h2>",
        bad.len()
    );
    if bad.is_empty() {
        out.push_str("<p>Every run measured.</p></section>\n");
        return;
    }
    out.push_str(
        "<p class=\"note\">Counted per cell, never in the statistics.</p><div class=\"scroll\"><table class=\"words\"><thead><tr>\
         <th>run</th><th>replicate</th><th>cell</th><th>status</th><th>reason</th></tr></thead><tbody>\n",
    );
    for run in bad {
        let (status, reason) = match &run.status {
            RunStatus::Failed { reason } => ("failed", reason.as_str()),
            RunStatus::Interrupted => ("interrupted", ""),
            RunStatus::Ok => continue,
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"label\">{}</td><td class=\"label\">{status}</td>\
             <td class=\"text reason\">{}</td></tr>",
            run.order,
            run.replicate,
            escape(&cell_label(&run.cell)),
            escape(reason)
        );
    }
    out.push_str("</tbody></table></div></section>\n");
}

fn reproduce(out: &mut String, record: &ExperimentRecord) {
    let _ = writeln!(
        out,
        "<section id=\"reproduce\"><h2>How to reproduce</h2><p>Run the same plan with the same seed \
         to get the same run order:</p><pre>{}</pre><p>Re-render this report from the saved record:</p>\
         <pre>netagg experiment --render experiment.json</pre></section>",
        escape(&reproduce_command(record))
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape("<b a=\"x\">&'"),
            "&lt;b a=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn shell_quoting_round_trips_through_sh() {
        assert_eq!(shell_quote("plan.toml"), "plan.toml");
        assert_eq!(shell_quote("--seed=42"), "--seed=42");
        assert_eq!(shell_quote("my plan"), "'my plan'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn svg_body_drops_a_declaration() {
        assert_eq!(
            svg_body("<?xml version=\"1.0\"?>\n<svg></svg>"),
            "<svg></svg>"
        );
        assert_eq!(svg_body("<svg/>"), "<svg/>");
    }
}
