//! `/metrics`: the watch for Prometheus, in OpenMetrics 1.0 text when the
//! scraper's Accept header asks for it, else in the Prometheus text format
//! 0.0.4 (the two differ only in how the info and counter families are
//! typed and in `# EOF`). Names, label names and escapes are the results
//! export's (`results::export::openmetrics`), so a dashboard built on
//! `netagg results export` reads the watch's latest values by the same
//! names. Every family is a gauge but the run counter and the info;
//! durations are in seconds and relative changes are ratios, as
//! Prometheus' naming conventions ask; a value that is not finite is left
//! out rather than written as NaN.

use super::data::View;
use crate::watch::state::Outcome;
use netperf_results::changes::Found;
use netperf_results::export::openmetrics::{cell_labels, family_name, help_text, labels, PREFIX};
use netperf_results::history::Series;
use std::fmt::Write as _;

/// The two text formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    OpenMetrics,
    Prometheus,
}

impl Format {
    /// The format the Accept header asks for: OpenMetrics only when named.
    pub fn of_accept(accept: &str) -> Format {
        match accept
            .to_ascii_lowercase()
            .contains("application/openmetrics-text")
        {
            true => Format::OpenMetrics,
            false => Format::Prometheus,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
        }
    }
}

/// The families written, each a TYPE and HELP then its samples.
struct Exposition {
    format: Format,
    out: String,
}

impl Exposition {
    /// A family of `kind` (gauge, counter or info); its samples follow.
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        // OpenMetrics names a counter or info family without the suffix
        // its sample carries; the 0.0.4 format names the sample and has
        // no info type.
        let (family, kind) = match (self.format, kind) {
            (Format::OpenMetrics, "counter") => (name.trim_end_matches("_total"), kind),
            (Format::OpenMetrics, "info") => (name.trim_end_matches("_info"), kind),
            (Format::Prometheus, "info") => (name, "gauge"),
            _ => (name, kind),
        };
        let _ = writeln!(self.out, "# TYPE {family} {kind}");
        let _ = writeln!(self.out, "# HELP {family} {}", help_text(help));
    }

    fn sample(&mut self, name: &str, pairs: &[(String, String)], value: f64) {
        if !value.is_finite() {
            return;
        }
        let set = match pairs.is_empty() {
            true => String::new(),
            false => labels(pairs),
        };
        let _ = writeln!(self.out, "{name}{set} {value}");
    }

    /// A family with one unlabelled sample (none when `value` is None).
    fn single(&mut self, suffix: &str, kind: &str, help: &str, value: Option<f64>) {
        let name = format!("{PREFIX}watch_{suffix}");
        self.family(&name, kind, help);
        if let Some(v) = value {
            self.sample(&name, &[], v);
        }
    }
}

fn pair(name: &str, value: impl Into<String>) -> (String, String) {
    (name.to_string(), value.into())
}

/// The labels that name a series: the series itself (its name is unique,
/// so no two samples of a family share their labels), its test and host —
/// the cell's own `test` and `target` factors where it has them (a watch's
/// runs are an experiment over them); none for a mesh pair, whose `src`
/// and `dst` factors name both ends — its metric and unit, then its other
/// factors.
pub fn series_labels(s: &Series) -> Vec<(String, String)> {
    let factor = |name: &str| s.cell.iter().find(|(f, _)| f == name).map(|(_, l)| l);
    let rest: Vec<(String, String)> = s
        .cell
        .iter()
        .filter(|(f, _)| f != "test" && f != "target")
        .cloned()
        .collect();
    let host = match (factor("target"), factor("src")) {
        (Some(target), _) => Some(target),
        (None, Some(_)) => None,
        (None, None) => Some(&s.host),
    };
    let mut out = vec![
        pair("series", s.name.as_str()),
        pair("test", factor("test").unwrap_or(&s.test).as_str()),
    ];
    out.extend(host.map(|h| pair("host", h.as_str())));
    out.push(pair("metric", s.metric.as_str()));
    out.push(pair("unit", s.unit.as_str()));
    out.extend(
        cell_labels(&rest)
            .into_iter()
            .map(|(name, level)| match name.as_str() {
                "series" => ("factor_series".to_string(), level),
                _ => (name, level),
            }),
    );
    out
}

/// The exposition of `view` in `format`.
pub fn render(view: &View, format: Format) -> String {
    let status = &view.status;
    let mut e = Exposition {
        format,
        out: String::new(),
    };
    let info = format!("{PREFIX}watch_info");
    e.family(
        &info,
        "info",
        "the watch: its name (its tag watch=NAME) and version",
    );
    e.sample(
        &info,
        &[
            pair("name", status.name.as_str()),
            pair("version", env!("CARGO_PKG_VERSION")),
        ],
        1.0,
    );
    e.single(
        "interval_seconds",
        "gauge",
        "seconds between the starts of scheduled runs",
        Some(status.every_seconds),
    );
    e.single(
        "last_success_age_seconds",
        "gauge",
        "seconds since the last run that measured anything ended (absent before the first)",
        view.since_success(),
    );
    e.single(
        "next_run_seconds",
        "gauge",
        "seconds until the next scheduled run starts (0 when due)",
        view.until_next(),
    );
    e.single(
        "running",
        "gauge",
        "1 while a scheduled run is measuring",
        Some(f64::from(u8::from(status.running))),
    );
    e.single(
        "runs_total",
        "counter",
        "scheduled runs finished since the watch started",
        Some(status.runs.back().map_or(0.0, |r| r.sequence as f64)),
    );
    let recent = format!("{PREFIX}watch_recent_runs");
    e.family(
        &recent,
        "gauge",
        &format!(
            "of the last {} runs at most, how many ended so",
            crate::watch::state::RECENT_RUNS
        ),
    );
    for outcome in [
        Outcome::Ok,
        Outcome::Partial,
        Outcome::Failed,
        Outcome::Interrupted,
    ] {
        let n = status.runs.iter().filter(|r| r.outcome == outcome).count();
        e.sample(&recent, &[pair("outcome", outcome_name(outcome))], n as f64);
    }
    e.single(
        "store_failing",
        "gauge",
        "1 while storing runs in the database fails (e.g. a full disk)",
        Some(f64::from(u8::from(status.store_error.is_some()))),
    );
    e.single(
        "pending_runs",
        "gauge",
        "measured runs waiting to be stored",
        Some(status.pending as f64),
    );
    e.single(
        "database_readable",
        "gauge",
        "1 when this server could read the watch's series from the database",
        Some(f64::from(u8::from(view.stored.error.is_none()))),
    );
    latest_values(&mut e, &view.stored.series);
    change_points(&mut e, view);
    if format == Format::OpenMetrics {
        e.out.push_str("# EOF\n");
    }
    e.out
}

/// An outcome as the status's JSON names it.
pub fn outcome_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Ok => "ok",
        Outcome::Partial => "partial",
        Outcome::Failed => "failed",
        Outcome::Interrupted => "interrupted",
    }
}

/// Per metric one family (the export's name), a sample per series: its
/// newest point.
fn latest_values(e: &mut Exposition, series: &[Series]) {
    let mut metrics: Vec<&str> = series.iter().map(|s| s.metric.as_str()).collect();
    metrics.sort();
    metrics.dedup();
    for metric in metrics {
        let name = family_name(metric);
        e.family(
            &name,
            "gauge",
            &format!(
                "netperf-ng {metric}: the newest measured value of each series the watch stored"
            ),
        );
        for s in series.iter().filter(|s| s.metric == metric) {
            if let Some(p) = s.points.last() {
                e.sample(&name, &series_labels(s), p.value);
            }
        }
    }
}

/// The latest change point of each series: its relative change with its
/// interval and when it happened.
fn change_points(e: &mut Exposition, view: &View) {
    let latest = open_changes(&view.status.changes);
    let labelled: Vec<(Vec<(String, String)>, &Found)> = latest
        .iter()
        .map(|c| (change_labels(c, &view.stored.series), *c))
        .collect();
    e.single(
        "change_points",
        "gauge",
        "change points the last search found in the watch's series",
        Some(view.status.changes.len() as f64),
    );
    type Field = fn(&Found) -> Option<f64>;
    let families: [(&str, &str, Field); 4] = [
        (
            "change_ratio",
            "the latest change point of each series: median after / median before - 1",
            |c| c.change,
        ),
        (
            "change_ratio_low",
            "low end of the interval of that relative change",
            |c| c.change_low,
        ),
        (
            "change_ratio_high",
            "high end of the interval of that relative change",
            |c| c.change_high,
        ),
        (
            "change_timestamp_seconds",
            "when the first run after that change point started (Unix time)",
            |c| netperf_base::timefmt::parse_utc(&c.time).map(|d| d.as_secs_f64()),
        ),
    ];
    for (suffix, help, field) in families {
        let name = format!("{PREFIX}watch_{suffix}");
        e.family(&name, "gauge", help);
        for (pairs, c) in &labelled {
            if let Some(v) = field(c) {
                e.sample(&name, pairs, v);
            }
        }
    }
}

/// The latest change point of each series, in series order.
pub fn open_changes(changes: &[Found]) -> Vec<&Found> {
    let mut out: Vec<&Found> = Vec::new();
    for c in changes {
        match out.iter_mut().find(|o| o.series == c.series) {
            Some(o) if o.time < c.time => *o = c,
            Some(_) => {}
            None => out.push(c),
        }
    }
    out
}

/// A change point's labels: its series' when that series was read, else
/// what the change point itself says.
fn change_labels(c: &Found, series: &[Series]) -> Vec<(String, String)> {
    match series.iter().find(|s| s.name == c.series) {
        Some(s) => series_labels(s),
        None => vec![
            pair("series", c.series.as_str()),
            pair("metric", c.metric.as_str()),
            pair("unit", c.unit.as_str()),
        ],
    }
}
