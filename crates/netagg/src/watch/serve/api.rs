//! The JSON behind the page: `/api/status` (the status with its ages in
//! seconds, and whether the database could be read), `/api/series` (each
//! series with its points, the newest [`super::data::MAX_RESULTS`] results
//! at most) and `/api/changes` (the last search's change points, as
//! `netagg results changes --json` writes them).

use super::data::{View, MAX_RESULTS};
use super::metrics::series_labels;
use serde_json::{json, Value};

/// `/api/status`.
pub fn status(view: &View) -> Value {
    let mut doc = serde_json::to_value(&view.status).unwrap_or_else(|_| json!({}));
    if let Value::Object(map) = &mut doc {
        map.insert(
            "last_success_age_seconds".into(),
            json!(view.since_success()),
        );
        map.insert("next_run_in_seconds".into(), json!(view.until_next()));
        map.insert("database_error".into(), json!(view.stored.error));
        map.insert("now".into(), json!(netperf_base::timefmt::now_utc()));
    }
    doc
}

/// `/api/series`.
pub fn series(view: &View) -> Value {
    let series: Vec<Value> = view
        .stored
        .series
        .iter()
        .map(|s| {
            let labels: serde_json::Map<String, Value> = series_labels(s)
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            let points: Vec<Value> = s
                .points
                .iter()
                .map(|p| json!({"time": p.time, "value": p.value, "result": p.result}))
                .collect();
            json!({
                "name": s.name,
                "metric": s.metric,
                "unit": s.unit,
                "labels": labels,
                "latest": s.points.last().map(|p| p.value),
                "points": points,
            })
        })
        .collect();
    json!({
        "watch": view.status.name,
        "max_results": MAX_RESULTS,
        "truncated": view.stored.truncated,
        "database_error": view.stored.error,
        "series": series,
    })
}

/// `/api/changes`.
pub fn changes(view: &View) -> Value {
    json!({
        "watch": view.status.name,
        "searched": view.status.changes_searched,
        "changes": view.status.changes,
    })
}
