//! `netagg results changes`: the change points of every selected series
//! (stored results or a user's CSV), each with when it happened, the
//! medians either side, the relative size with its interval, its
//! significance, and what else changed in the stored context between the
//! runs on either side of it; as a text report or a JSON list.

use super::history::{context_diff, Series};
use super::model::{better, Better};
use super::render::{number, table, Align};
use crate::stats::{change_points, ChangeOptions, StatsError};
use serde::Serialize;
use std::fmt::Write as _;

/// One difference of context across a change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextChange {
    pub key: String,
    pub before: String,
    pub after: String,
}

/// One change point of one series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Found {
    pub series: String,
    pub metric: String,
    pub unit: String,
    /// The first point after the change, from 0, in its series.
    pub index: usize,
    /// When that point ran.
    pub time: String,
    /// The stored result and run of that point (null for a CSV).
    pub result: Option<String>,
    pub run: Option<String>,
    /// The last point before the change.
    pub time_before: String,
    pub median_before: f64,
    pub median_after: f64,
    pub n_before: usize,
    pub n_after: usize,
    /// median after / median before − 1, and its interval (null when the
    /// median before is 0).
    pub change: Option<f64>,
    pub change_low: Option<f64>,
    pub change_high: Option<f64>,
    pub confidence: f64,
    /// The permutation p-values of the split and of its abruptness.
    pub p_value: f64,
    pub local_p_value: f64,
    pub alpha: f64,
    /// faster or slower for metrics with a better direction, else higher
    /// or lower.
    pub direction: &'static str,
    /// What else changed between the runs either side.
    pub context_changes: Vec<ContextChange>,
}

/// What was searched and found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub series: usize,
    pub points: usize,
    pub alpha: f64,
    pub changes: Vec<Found>,
}

fn direction(metric: &str, up: bool) -> &'static str {
    match (better(metric), up) {
        (Better::Higher, true) | (Better::Lower, false) => "faster",
        (Better::Higher, false) | (Better::Lower, true) => "slower",
        (Better::Neither, true) => "higher",
        (Better::Neither, false) => "lower",
    }
}

/// The change points of every series, in series order then time.
pub fn find(all: &[Series], opts: &ChangeOptions) -> Result<Report, StatsError> {
    let mut changes = Vec::new();
    for s in all {
        let values: Vec<f64> = s.points.iter().map(|p| p.value).collect();
        for c in change_points(&values, opts)? {
            let (before, after) = (&s.points[c.index - 1], &s.points[c.index]);
            let relative = |v: f64| v - 1.0;
            changes.push(Found {
                series: s.name.clone(),
                metric: s.metric.clone(),
                unit: s.unit.clone(),
                index: c.index,
                time: after.time.clone(),
                result: after.result.clone(),
                run: after.run.clone(),
                time_before: before.time.clone(),
                median_before: c.median_before,
                median_after: c.median_after,
                n_before: c.n_before,
                n_after: c.n_after,
                change: c.ratio.map(|r| relative(r.estimate)),
                change_low: c.ratio.map(|r| relative(r.low)),
                change_high: c.ratio.map(|r| relative(r.high)),
                confidence: opts.confidence,
                p_value: c.p_value,
                local_p_value: c.local_p_value,
                alpha: opts.alpha,
                direction: direction(&s.metric, c.median_after > c.median_before),
                context_changes: context_diff(&before.context, &after.context)
                    .into_iter()
                    .map(|(key, before, after)| ContextChange { key, before, after })
                    .collect(),
            });
        }
    }
    Ok(Report {
        series: all.len(),
        points: all.iter().map(|s| s.points.len()).sum(),
        alpha: opts.alpha,
        changes,
    })
}

/// A relative change as a signed percentage ("-20.0%"), "-" when none.
pub fn percent(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:+.1}%", 100.0 * v))
}

/// The text report: per series with a change, a table of its change
/// points and, under each, what else changed.
pub fn text(report: &Report) -> String {
    let mut out = String::new();
    let mut names: Vec<&str> = report.changes.iter().map(|c| c.series.as_str()).collect();
    names.dedup();
    for name in names {
        let here: Vec<&Found> = report.changes.iter().filter(|c| c.series == name).collect();
        let unit = match here[0].unit.as_str() {
            "" => String::new(),
            u => format!(" ({u})"),
        };
        let _ = writeln!(out, "{name}{unit}");
        let rows: Vec<Vec<String>> = here
            .iter()
            .map(|c| {
                vec![
                    c.index.to_string(),
                    c.time.clone(),
                    number(c.median_before),
                    number(c.median_after),
                    percent(c.change),
                    format!("[{}, {}]", percent(c.change_low), percent(c.change_high)),
                    format!("{:.3}", c.p_value),
                    c.direction.to_string(),
                ]
            })
            .collect();
        let confidence = format!("{:.0}% INTERVAL", 100.0 * report_confidence(&here));
        let table_text = table(
            &[
                "INDEX",
                "TIME",
                "BEFORE",
                "AFTER",
                "CHANGE",
                confidence.as_str(),
                "P",
                "",
            ],
            &[
                Align::Right,
                Align::Left,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Left,
                Align::Right,
                Align::Left,
            ],
            &rows,
        );
        // Each change point's row, then what else changed at it.
        let mut lines = table_text.lines();
        if let Some(h) = lines.next() {
            let _ = writeln!(out, "  {h}");
        }
        for (line, c) in lines.zip(&here) {
            let _ = writeln!(out, "  {line}");
            let _ = writeln!(out, "      what else changed: {}", changed_text(c));
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "{} change point{} in {} series of {} points (false-positive level {} per series)",
        report.changes.len(),
        if report.changes.len() == 1 { "" } else { "s" },
        report.series,
        report.points,
        report.alpha
    );
    out
}

fn report_confidence(here: &[&Found]) -> f64 {
    here.first().map_or(0.95, |c| c.confidence)
}

/// What else changed at `c`, one "key before -> after" per difference;
/// "nothing stored" when the stored context is the same either side.
pub fn changed_text(c: &Found) -> String {
    if c.context_changes.is_empty() {
        return "nothing stored".into();
    }
    c.context_changes
        .iter()
        .map(|d| {
            let side = |v: &str| {
                if v.is_empty() {
                    "(none)".to_string()
                } else {
                    v.to_string()
                }
            };
            format!("{} {} -> {}", d.key, side(&d.before), side(&d.after))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Point;
    use std::collections::BTreeMap;

    fn point(i: usize, value: f64, kernel: &str) -> Point {
        Point {
            time: format!("t{i:03}"),
            value,
            result: Some(format!("r{i}")),
            run: None,
            context: BTreeMap::from([("kernel".to_string(), kernel.to_string())]),
        }
    }

    #[test]
    fn a_step_is_reported_with_the_context_that_changed() {
        let points: Vec<Point> = (0..60)
            .map(|i| {
                let wobble = [0.0, 1.0, -1.0, 0.5, -0.5][i % 5];
                match i < 30 {
                    true => point(i, 100.0 + wobble, "6.1"),
                    false => point(i, 80.0 + wobble, "6.5"),
                }
            })
            .collect();
        let s = Series {
            name: "TCP_STREAM h THROUGHPUT".into(),
            metric: "THROUGHPUT".into(),
            unit: "10^6bits/s".into(),
            test: "TCP_STREAM".into(),
            host: "h".into(),
            cell: Vec::new(),
            points,
        };
        let report = find(&[s], &ChangeOptions::default()).unwrap();
        assert_eq!(report.changes.len(), 1);
        let c = &report.changes[0];
        assert_eq!(
            (c.index, c.time.as_str(), c.direction),
            (30, "t030", "slower")
        );
        assert_eq!(c.result.as_deref(), Some("r30"));
        assert_eq!(
            c.context_changes,
            [ContextChange {
                key: "kernel".into(),
                before: "6.1".into(),
                after: "6.5".into()
            }]
        );
        let page = text(&report);
        assert!(
            page.contains("what else changed: kernel 6.1 -> 6.5"),
            "{page}"
        );
        assert!(page.contains("-20.0%"), "{page}");
        assert!(
            page.ends_with("(false-positive level 0.01 per series)\n"),
            "{page}"
        );
    }
}
