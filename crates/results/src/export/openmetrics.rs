//! OpenMetrics text exposition of a result (OpenMetrics 1.0,
//! <https://prometheus.io/docs/specs/om/open_metrics_spec/>; the same text
//! is valid Prometheus text format 0.0.4,
//! <https://prometheus.io/docs/instrumenting/exposition_formats/>, where
//! `# EOF` is a comment), for `curl --data-binary @- .../metrics/job/netperf`
//! to a pushgateway or a `.prom` file for node_exporter's textfile collector.
//!
//! What the specification asks and this writer does: every family is a
//! `gauge` (a finished test's values are measurements, not counters) with
//! `# TYPE` then `# HELP`, its samples contiguous; names match
//! `[a-zA-Z_:][a-zA-Z0-9_:]*` without colons (reserved for recording
//! rules) and without the suffixes other types own (`_total`, `_count`,
//! ...); label names match `[a-zA-Z_][a-zA-Z0-9_]*`, none beginning with
//! an underscore; label values escape `\`, `"` and newline; the exposition
//! ends with `# EOF`. No timestamps: the pushgateway refuses them, and the
//! run's time is the scrape's. Units are a `unit` label, as netperf's
//! units (10^6bits/s, Trans/s) are not base units a name suffix could say.
//!
//! Families: one per metric (`netperf_ng_throughput`, ...) with a sample
//! per measured run; `netperf_ng_run_ok` (1 measured, 0 failed or
//! interrupted) per run; and per cell `netperf_ng_cell_runs`,
//! `netperf_ng_cell_mean` and, with two runs or more, the 95 % t interval
//! of the mean `netperf_ng_cell_ci95_low` / `_high`, with a `metric` label.

use super::{cell_summary, metric_names};
use crate::record::StoredResult;
use std::fmt::Write as _;

pub const PREFIX: &str = "netperf_ng_";
/// Suffixes OpenMetrics gives to counters, histograms, summaries and info.
const RESERVED_SUFFIXES: &[&str] = &[
    "_total", "_created", "_count", "_sum", "_bucket", "_gcount", "_gsum", "_info",
];
/// Labels every sample of a run carries.
const FIXED_LABELS: &[&str] = &[
    "result",
    "run",
    "kind",
    "test",
    "host",
    "kernel",
    "replicate",
    "metric",
    "unit",
];

/// `text` as a metric or label name: ASCII letters, digits and '_' only,
/// not starting with a digit or an underscore.
pub fn name_part(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit() || c == '_') {
        out.insert(0, 'x');
    }
    out
}

/// The family name of a metric.
pub fn family_name(metric: &str) -> String {
    let mut name = format!("{PREFIX}{}", name_part(metric));
    if RESERVED_SUFFIXES.iter().any(|s| name.ends_with(s)) {
        name.push_str("_value");
    }
    name
}

/// A label value with OpenMetrics' escapes.
pub fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A HELP line's text with OpenMetrics' escapes.
pub fn help_text(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A label set, `{name="value",...}`, values escaped.
pub fn labels(pairs: &[(String, String)]) -> String {
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// The factor labels of a cell; a factor whose name collides with a fixed
/// label gets a `factor_` prefix.
pub fn cell_labels(cell: &[(String, String)]) -> Vec<(String, String)> {
    cell.iter()
        .map(|(factor, level)| {
            let mut name = name_part(factor);
            if FIXED_LABELS.contains(&name.as_str()) {
                name.insert_str(0, "factor_");
            }
            (name, level.clone())
        })
        .collect()
}

fn family(out: &mut String, name: &str, help: &str) {
    let _ = writeln!(out, "# TYPE {name} gauge");
    let _ = writeln!(out, "# HELP {name} {}", help_text(help));
}

/// The exposition of `r`.
pub fn render(r: &StoredResult) -> String {
    let mut out = String::new();
    let run_labels = |run: &crate::model::RunRecord| {
        let mut l = vec![
            ("result".to_string(), r.id.clone()),
            ("run".to_string(), run.id.clone()),
            ("kind".to_string(), r.kind.as_str().to_string()),
            ("test".to_string(), r.test.clone()),
            ("host".to_string(), r.host.clone()),
            ("kernel".to_string(), r.kernel.clone()),
            ("replicate".to_string(), run.replicate.to_string()),
        ];
        l.extend(cell_labels(&run.cell));
        l
    };
    for metric in metric_names(r) {
        let unit = r.unit(&metric);
        family(
            &mut out,
            &family_name(&metric),
            &format!("netperf-ng {metric} of each measured run"),
        );
        for run in r.runs.iter().filter(|run| run.status.is_ok()) {
            if let Some(v) = run.metrics.get(&metric).filter(|v| v.is_finite()) {
                let mut l = run_labels(run);
                l.push(("unit".into(), unit.clone()));
                let _ = writeln!(out, "{}{} {v}", family_name(&metric), labels(&l));
            }
        }
    }
    let ok_name = format!("{PREFIX}run_ok");
    family(
        &mut out,
        &ok_name,
        "1 if the run measured, 0 if it failed or was interrupted",
    );
    for run in &r.runs {
        let ok = u8::from(run.status.is_ok());
        let _ = writeln!(out, "{ok_name}{} {ok}", labels(&run_labels(run)));
    }
    cell_families(&mut out, r);
    out.push_str("# EOF\n");
    out
}

/// One statistic of a cell's summary, if it has one.
type CellStatistic = fn(&crate::stats::Summary) -> Option<f64>;

/// Per cell and metric: runs, mean and the 95 % interval of the mean.
fn cell_families(out: &mut String, r: &StoredResult) {
    let cells = r.cells();
    let metrics = metric_names(r);
    let stats: [(&str, &str, CellStatistic); 4] = [
        ("cell_runs", "measured runs of the cell", |s| {
            Some(s.n as f64)
        }),
        ("cell_mean", "mean over the cell's runs", |s| Some(s.mean)),
        (
            "cell_ci95_low",
            "low end of the 95% t interval of the cell's mean",
            |s| s.mean_ci95.map(|i| i.low),
        ),
        (
            "cell_ci95_high",
            "high end of the 95% t interval of the cell's mean",
            |s| s.mean_ci95.map(|i| i.high),
        ),
    ];
    for (suffix, help, value) in stats {
        let name = format!("{PREFIX}{suffix}");
        let mut body = String::new();
        for cell in &cells {
            for metric in &metrics {
                let Some(v) = cell_summary(r, cell, metric).and_then(|s| value(&s)) else {
                    continue;
                };
                let mut l = vec![
                    ("result".to_string(), r.id.clone()),
                    ("kind".to_string(), r.kind.as_str().to_string()),
                    ("test".to_string(), r.test.clone()),
                    ("host".to_string(), r.host.clone()),
                    ("metric".to_string(), metric.clone()),
                    ("unit".to_string(), r.unit(metric)),
                ];
                l.extend(cell_labels(cell));
                let _ = writeln!(body, "{name}{} {v}", labels(&l));
            }
        }
        if !body.is_empty() {
            family(out, &name, help);
            out.push_str(&body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values_are_made_valid() {
        assert_eq!(family_name("THROUGHPUT"), "netperf_ng_throughput");
        assert_eq!(
            family_name("LOCAL_CPU_COUNT"),
            "netperf_ng_local_cpu_count_value"
        );
        assert_eq!(name_part("9x-y"), "x9x_y");
        assert_eq!(name_part("_a"), "x_a");
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(
            cell_labels(&[("host".into(), "h".into()), ("msg size".into(), "1".into())]),
            vec![
                ("factor_host".to_string(), "h".to_string()),
                ("msg_size".to_string(), "1".to_string())
            ]
        );
    }
}
