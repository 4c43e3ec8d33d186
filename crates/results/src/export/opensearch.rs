//! OpenSearch/Elasticsearch `_bulk` NDJSON: for each run an action line
//! `{"index":{"_index":...,"_id":<run uuid>}}` then one flat document
//! (no nested objects), each line ending in a newline, the body ending in
//! one too (the bulk API's rule:
//! <https://opensearch.org/docs/latest/api-reference/document-apis/bulk/>,
//! <https://www.elastic.co/guide/en/elasticsearch/reference/current/docs-bulk.html>).
//! Post it with `curl -H 'Content-Type: application/x-ndjson'
//! --data-binary @file http://host:9200/_bulk`. The run's UUID as `_id`
//! makes a second export of the same result overwrite, not duplicate.
//!
//! The document follows what k8s-netperf indexes for its history (and
//! orion reads back): `uuid` (of the result, shared by its runs, as
//! k8s-netperf shares one per workload), `timestamp`, the metadata as
//! plain fields, the values, and per key metric the cell's confidence
//! interval. Metadata fields are lower case; metrics and facts keep
//! netperf's selector names (`THROUGHPUT`, `THROUGHPUT_UNITS`), so a
//! field is always a number or always a string across documents; a
//! cell's factors are `factor_<name>`. For each key metric of a cell with
//! two or more runs: `<METRIC>_mean`, `<METRIC>_ci95_low`,
//! `<METRIC>_ci95_high` (t interval of the mean) and `<METRIC>_samples`.

use super::cell_summary;
use crate::model::{cell_label, RunStatus, KEY_METRICS};
use crate::record::StoredResult;
use serde_json::{json, Map, Value};

/// The `_bulk` body for `r` into `index`.
pub fn render(r: &StoredResult, index: &str) -> String {
    let mut out = String::new();
    for run in &r.runs {
        let action = json!({"index": {"_index": index, "_id": run.id}});
        let mut doc = Map::new();
        let mut put = |k: &str, v: Value| {
            doc.insert(k.to_string(), v);
        };
        put("uuid", json!(r.id));
        put("run_uuid", json!(run.id));
        put("timestamp", json!(run.started));
        put("end_timestamp", json!(run.ended));
        put("kind", json!(r.kind.as_str()));
        put("test", json!(r.test));
        put("host", json!(r.host));
        put("kernel", json!(r.kernel));
        put("title", json!(r.title));
        put("tool", json!("netperf-ng"));
        put("tool_version", json!(r.tool_version));
        put("tags", json!(r.tags));
        put("result_started", json!(r.started));
        put("cell", json!(cell_label(&run.cell)));
        put("replicate", json!(run.replicate));
        put("order", json!(run.order));
        let (status, reason) = match &run.status {
            RunStatus::Ok => ("ok", Value::Null),
            RunStatus::Failed { reason } => ("failed", json!(reason)),
            RunStatus::Interrupted => ("interrupted", Value::Null),
        };
        put("status", json!(status));
        put("reason", reason);
        for (factor, level) in &run.cell {
            put(&format!("factor_{factor}"), json!(level));
        }
        for (name, value) in &run.facts {
            put(name, json!(value));
        }
        for (name, value) in run.metrics.iter().filter(|(_, v)| v.is_finite()) {
            put(name, json!(value));
        }
        for (metric, ..) in KEY_METRICS {
            let Some(s) = cell_summary(r, &run.cell, metric) else {
                continue;
            };
            let Some(ci) = s.mean_ci95 else {
                continue;
            };
            put(&format!("{metric}_mean"), json!(s.mean));
            put(&format!("{metric}_ci95_low"), json!(ci.low));
            put(&format!("{metric}_ci95_high"), json!(ci.high));
            put(&format!("{metric}_samples"), json!(s.n));
        }
        out.push_str(&action.to_string());
        out.push('\n');
        out.push_str(&Value::Object(doc).to_string());
        out.push('\n');
    }
    out
}
