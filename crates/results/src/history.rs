//! Series over time, for change points: from the results database (one
//! metric of one test between the same ends, one point per measured run,
//! each with the context it ran in) or from a user's CSV (`time,series,value`
//! rows after a header; further columns are context).
//!
//! A point's context is everything stored about where it ran that is not a
//! measurement: the kernel and netperf-ng version of its result, an
//! experiment's environment of both ends, the run's text facts (drivers,
//! congestion control, interface names, health), the offloads and MTU read
//! back before it, and the few numbers that are settings (CPU count and
//! frequency, MSS, message sizes). The differences between the contexts on
//! either side of a change are "what else changed".

use super::db::Db;
use super::error::DbError;
use super::model::{cell_label, ExperimentRecord, RunRecord, KEY_METRICS};
use super::query::{self, Filter};
use super::record::StoredResult;
use std::collections::BTreeMap;
use std::path::Path;

/// One measurement in a series.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// When it ran (RFC 3339 UTC from the database, as given in a CSV).
    pub time: String,
    pub value: f64,
    /// The stored result and run it came from (none for a CSV).
    pub result: Option<String>,
    pub run: Option<String>,
    pub context: BTreeMap<String, String>,
}

/// One series, its points in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// "TCP_STREAM 127.0.0.1 THROUGHPUT", with the cell in brackets when the
    /// result has factors; a CSV's own name.
    pub name: String,
    pub metric: String,
    pub unit: String,
    /// The stored result's test(s) and host(s), and the run's cell, that
    /// the name is made of (empty for a CSV), for labels that name them
    /// one by one (`netagg watch`'s /metrics).
    pub test: String,
    pub host: String,
    pub cell: super::model::Cell,
    pub points: Vec<Point>,
}

/// Which stored series to read.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Results to read (kind, test, host, tags, since); `limit` is ignored.
    pub filter: Filter,
    /// Series whose name contains any of these (any case); empty: all.
    pub series: Vec<String>,
    /// Metrics; empty: the key metrics; "all": every one.
    pub metrics: Vec<String>,
}

/// Text facts that differ on every run by design: never "what changed".
const PER_RUN_FACTS: &[&str] = &["UUID", "COMMAND_LINE"];

/// Numeric selectors that are settings or the machine, not measurements.
const SETTING_METRICS: &[&str] = &[
    "LOCAL_CPU_COUNT",
    "REMOTE_CPU_COUNT",
    "LOCAL_CPU_FREQUENCY",
    "REMOTE_CPU_FREQUENCY",
    "TRANSPORT_MSS",
    "LOCAL_SEND_SIZE",
    "REMOTE_RECV_SIZE",
    "REQUEST_SIZE",
    "RESPONSE_SIZE",
    "STREAMS",
];

/// The context a run ran in.
pub fn context(
    result: &StoredResult,
    environment: Option<&super::model::Environment>,
    run: &RunRecord,
) -> BTreeMap<String, String> {
    let mut c = BTreeMap::new();
    c.insert("kernel".to_string(), result.kernel.clone());
    c.insert(
        "netperf-ng version".to_string(),
        result.tool_version.clone(),
    );
    if let Some(env) = environment {
        for (side, map) in [("local", &env.local), ("remote", &env.remote)] {
            for (k, v) in map {
                c.insert(format!("{side} {k}"), v.clone());
            }
        }
    }
    for (k, v) in &run.facts {
        if !PER_RUN_FACTS.contains(&k.as_str()) {
            c.insert(k.clone(), v.clone());
        }
    }
    for k in SETTING_METRICS {
        if let Some(v) = run.metrics.get(*k) {
            c.insert(k.to_string(), super::render::number(*v));
        }
    }
    for (side, snap) in [
        ("local", &run.offloads.local),
        ("remote", &run.offloads.remote),
    ] {
        let Some(snap) = snap else { continue };
        c.insert(format!("{side} interface"), snap.interface.clone());
        if let Some(mtu) = snap.mtu {
            c.insert(format!("{side} mtu"), mtu.to_string());
        }
        for (feature, on) in &snap.features {
            let state = if *on { "on" } else { "off" };
            c.insert(format!("{side} {feature}"), state.to_string());
        }
    }
    c
}

/// The differences between two contexts: (key, before, after), "" where a
/// side does not have the key.
pub fn context_diff(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Vec<(String, String, String)> {
    let mut keys: Vec<&String> = before.keys().chain(after.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|k| {
            let (b, a) = (before.get(k), after.get(k));
            (b != a).then(|| {
                let text = |v: Option<&String>| v.cloned().unwrap_or_default();
                (k.clone(), text(b), text(a))
            })
        })
        .collect()
}

/// Whether a series named `name` is among `patterns` (its name contains
/// one, any case); every series when there are none.
pub fn picked(name: &str, patterns: &[String]) -> bool {
    let name = name.to_lowercase();
    patterns.is_empty() || patterns.iter().any(|p| name.contains(&p.to_lowercase()))
}

/// The stored series `selection` picks, each in the order its runs started.
pub fn from_db(db: &Db, selection: &Selection) -> Result<Vec<Series>, DbError> {
    let filter = Filter {
        limit: None,
        ..selection.filter.clone()
    };
    let mut summaries = query::list(db, &filter)?;
    summaries.reverse();
    let all_metrics = selection
        .metrics
        .iter()
        .any(|m| m.eq_ignore_ascii_case("all"));
    let wanted: Vec<String> = selection
        .metrics
        .iter()
        .map(|m| m.to_ascii_uppercase())
        .collect();
    // (name, metric) -> series, in the order first seen.
    let mut index: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut out: Vec<Series> = Vec::new();
    for summary in summaries {
        let result = query::load(db, &summary.id)?;
        let environment = result
            .document
            .as_deref()
            .filter(|_| result.kind == super::record::Kind::Experiment)
            .and_then(|d| serde_json::from_str::<ExperimentRecord>(d).ok())
            .map(|r| r.environment);
        for run in result.runs.iter().filter(|r| r.status.is_ok()) {
            let cell = cell_label(&run.cell);
            let base = match cell.is_empty() {
                true => format!("{} {}", result.test, result.host),
                false => format!("{} {} [{cell}]", result.test, result.host),
            };
            let context = context(&result, environment.as_ref(), run);
            for (metric, value) in &run.metrics {
                let chosen = if all_metrics {
                    !SETTING_METRICS.contains(&metric.as_str())
                } else if wanted.is_empty() {
                    KEY_METRICS.iter().any(|(m, ..)| m == metric)
                } else {
                    wanted.contains(metric)
                };
                let name = format!("{base} {metric}");
                if !chosen || !picked(&name, &selection.series) || !value.is_finite() {
                    continue;
                }
                let slot = *index
                    .entry((name.clone(), metric.clone()))
                    .or_insert_with(|| {
                        out.push(Series {
                            name,
                            metric: metric.clone(),
                            unit: result.unit(metric),
                            test: result.test.clone(),
                            host: result.host.clone(),
                            cell: run.cell.clone(),
                            points: Vec::new(),
                        });
                        out.len() - 1
                    });
                out[slot].points.push(Point {
                    time: run.started.clone(),
                    value: *value,
                    result: Some(result.id.clone()),
                    run: Some(run.id.clone()),
                    context: context.clone(),
                });
            }
        }
    }
    for s in &mut out {
        // Results are read in start order; runs of one result interleave
        // with another's only when they ran at the same time.
        s.points.sort_by(|a, b| a.time.cmp(&b.time));
    }
    Ok(out)
}

/// The series of a CSV file: a header line, then `time,series,value` rows
/// (more columns are the point's context, named by the header), points in
/// the file's order. An empty value is a missing point; anything else that
/// is not a finite number is an error naming its line.
pub fn from_csv(path: &Path) -> Result<Vec<Series>, DbError> {
    let bad = |why: String| DbError::Invalid(format!("{}: {why}", path.display()));
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .flexible(false)
        .from_path(path)
        .map_err(|e| bad(e.to_string()))?;
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| bad(e.to_string()))?
        .iter()
        .map(str::to_string)
        .collect();
    if header.len() < 3 {
        return Err(bad(format!(
            "the header has {} columns; a change-point CSV has time,series,value (and optional context columns)",
            header.len()
        )));
    }
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut out: Vec<Series> = Vec::new();
    for (row, record) in reader.records().enumerate() {
        let line = row + 2;
        let record = record.map_err(|e| bad(format!("line {line}: {e}")))?;
        let (time, name, text) = (&record[0], &record[1], &record[2]);
        if text.is_empty() {
            continue;
        }
        let value: f64 = text
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| {
                bad(format!(
                    "line {line}: value '{text}' is not a finite number"
                ))
            })?;
        if name.is_empty() {
            return Err(bad(format!("line {line}: the series name is empty")));
        }
        let slot = *index.entry(name.to_string()).or_insert_with(|| {
            out.push(Series {
                name: name.to_string(),
                metric: name.to_string(),
                unit: String::new(),
                test: String::new(),
                host: String::new(),
                cell: Vec::new(),
                points: Vec::new(),
            });
            out.len() - 1
        });
        let context = header[3..]
            .iter()
            .zip(record.iter().skip(3))
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect();
        out[slot].points.push(Point {
            time: time.to_string(),
            value,
            result: None,
            run: None,
            context,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_diff_names_what_changed_appeared_or_went() {
        let before = BTreeMap::from([
            ("kernel".to_string(), "6.1".to_string()),
            ("local mtu".to_string(), "1500".to_string()),
            ("gone".to_string(), "x".to_string()),
        ]);
        let after = BTreeMap::from([
            ("kernel".to_string(), "6.5".to_string()),
            ("local mtu".to_string(), "1500".to_string()),
            ("new".to_string(), "y".to_string()),
        ]);
        assert_eq!(
            context_diff(&before, &after),
            [
                ("gone".to_string(), "x".to_string(), String::new()),
                ("kernel".to_string(), "6.1".to_string(), "6.5".to_string()),
                ("new".to_string(), String::new(), "y".to_string()),
            ]
        );
        assert!(context_diff(&before, &before).is_empty());
    }
}
