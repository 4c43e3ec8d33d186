//! perfdash's format, the `PerfData` of Kubernetes perf-tests
//! (clusterloader2/pkg/measurement/util/perftype.go in kubernetes/perf-tests;
//! cilium's CI writes the same): `{"version": "v1", "dataItems": [{"data":
//! {bucket: value}, "unit": "...", "labels": {...}}], "labels": {...}}`.
//!
//! One data item per cell and metric, with the cell's statistics as the
//! buckets: `Perc50` (median, perfdash's own bucket name), `Mean`, `Min`,
//! `Max`, and with two or more runs `CI95Low` / `CI95High` (t interval of
//! the mean). perf-tests asks that items with the same labels share their
//! buckets and unit across files, and perfdash that all items carry the
//! same label names: every item has `Metric`, `Test` and one label per
//! factor of the result, so a job that stores the same plan each build
//! charts consistently. The result's id, kind, host and kernel are the
//! dataset's labels.

use super::{cell_summary, metric_names};
use crate::record::StoredResult;
use serde_json::{json, Map, Value};

/// The perfdash document for `r`.
pub fn render(r: &StoredResult) -> String {
    let mut items = Vec::new();
    for cell in r.cells() {
        for metric in metric_names(r) {
            let Some(s) = cell_summary(r, &cell, &metric) else {
                continue;
            };
            let mut data = Map::new();
            data.insert("Perc50".into(), json!(s.median));
            data.insert("Mean".into(), json!(s.mean));
            data.insert("Min".into(), json!(s.min));
            data.insert("Max".into(), json!(s.max));
            if let Some(ci) = s.mean_ci95 {
                data.insert("CI95Low".into(), json!(ci.low));
                data.insert("CI95High".into(), json!(ci.high));
            }
            let mut labels = Map::new();
            labels.insert("Metric".into(), json!(metric));
            labels.insert("Test".into(), json!(r.test));
            for (factor, level) in &cell {
                labels.insert(factor.clone(), json!(level));
            }
            items.push(json!({
                "data": Value::Object(data),
                "unit": r.unit(&metric),
                "labels": Value::Object(labels),
            }));
        }
    }
    let doc = json!({
        "version": "v1",
        "dataItems": items,
        "labels": {
            "result": r.id,
            "kind": r.kind.as_str(),
            "host": r.host,
            "kernel": r.kernel,
            "started": r.started,
        },
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}
