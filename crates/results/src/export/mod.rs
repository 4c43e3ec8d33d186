//! Exports of a stored result for the tools that keep performance history:
//! Prometheus (OpenMetrics text, for the pushgateway or node_exporter's
//! textfile collector), OpenSearch/Elasticsearch (`_bulk` NDJSON, one flat
//! document per run) and perfdash (Kubernetes perf-tests, cilium).

pub mod openmetrics;
pub mod opensearch;
pub mod perfdash;

use super::record::StoredResult;
use crate::model::Cell;
use crate::stats::Summary;

/// An export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Openmetrics,
    Opensearch,
    Perfdash,
}

/// What an export needs beyond the result.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// The OpenSearch index named in each action line.
    pub index: String,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            index: "netperf-ng".into(),
        }
    }
}

/// `result` in `format`.
pub fn export(result: &StoredResult, format: Format, opts: &ExportOptions) -> String {
    match format {
        Format::Openmetrics => openmetrics::render(result),
        Format::Opensearch => opensearch::render(result, &opts.index),
        Format::Perfdash => perfdash::render(result),
    }
}

/// The summary of `metric` over the measured runs of `cell`, if any.
pub(crate) fn cell_summary(result: &StoredResult, cell: &Cell, metric: &str) -> Option<Summary> {
    Summary::of(&result.samples(cell, metric)).ok()
}

/// Every metric name of the result's measured runs, sorted.
pub(crate) fn metric_names(result: &StoredResult) -> Vec<String> {
    let mut names: Vec<String> = result
        .runs
        .iter()
        .filter(|r| r.status.is_ok())
        .flat_map(|r| r.metrics.keys().cloned())
        .collect();
    names.sort();
    names.dedup();
    names
}
