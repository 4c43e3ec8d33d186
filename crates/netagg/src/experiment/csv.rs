//! The experiment as CSV for spreadsheets and scripts (RFC 4180: CRLF line
//! ends, fields quoted only when they hold a comma, quote or line break,
//! quotes doubled): `runs.csv`, one row per run with its factors, status,
//! every metric and fact any run reported and the offload state of both
//! ends; and `cells.csv`, one row per cell and metric with every statistic.
//! Numbers are written in full (shortest round-trip form), never rounded.

use std::collections::BTreeSet;

use super::analysis::{all_cells, metric_order, Analysis, Bounds, MetricStats};
use super::layout::metric_unit;
use netperf_data::net::offload::OffloadSnapshot;
use netperf_results::model::{cell_label, ExperimentRecord, RunRecord, RunStatus};

/// Rows into RFC 4180 text.
pub fn to_csv(rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut writer = ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::CRLF)
        .flexible(false)
        .from_writer(Vec::new());
    for row in rows {
        // Writing into memory cannot fail, and every row has the header's
        // length by construction.
        let _ = writer.write_record(&row);
    }
    let bytes = writer.into_inner().unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_default()
}

fn number(value: f64) -> String {
    value.to_string()
}

fn optional(value: Option<f64>) -> String {
    value.map(number).unwrap_or_default()
}

/// The offload features any run's snapshot of one end has.
fn features(
    record: &ExperimentRecord,
    end: fn(&RunRecord) -> Option<&OffloadSnapshot>,
) -> Vec<String> {
    let seen: BTreeSet<&String> = record
        .runs
        .iter()
        .filter_map(end)
        .flat_map(|s| s.features.keys())
        .collect();
    seen.into_iter().cloned().collect()
}

fn local(run: &RunRecord) -> Option<&OffloadSnapshot> {
    run.offloads.local.as_ref()
}

fn remote(run: &RunRecord) -> Option<&OffloadSnapshot> {
    run.offloads.remote.as_ref()
}

/// The columns of one end's offload state: interface, MTU, each feature.
fn offload_fields(snapshot: Option<&OffloadSnapshot>, features: &[String]) -> Vec<String> {
    let mut fields = vec![
        snapshot.map(|s| s.interface.clone()).unwrap_or_default(),
        snapshot
            .and_then(|s| s.mtu)
            .map(|m| m.to_string())
            .unwrap_or_default(),
    ];
    for feature in features {
        let state = snapshot.and_then(|s| s.features.get(feature));
        fields.push(match state {
            Some(true) => "on".into(),
            Some(false) => "off".into(),
            None => String::new(),
        });
    }
    fields
}

/// One row per run, in the order they ran.
pub fn runs_csv(record: &ExperimentRecord) -> String {
    let metrics = metric_order(record);
    let facts: Vec<String> = record
        .runs
        .iter()
        .flat_map(|r| r.facts.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .cloned()
        .collect();
    let (local_features, remote_features) = (features(record, local), features(record, remote));
    let mut header: Vec<String> = ["order", "replicate", "id"].map(String::from).to_vec();
    header.extend(record.factors.iter().map(|f| f.name.clone()));
    header.extend(["status", "reason", "started", "ended"].map(String::from));
    header.extend(metrics.iter().cloned());
    header.extend(facts.iter().cloned());
    for (end, features) in [("local", &local_features), ("remote", &remote_features)] {
        header.push(format!("{end}_interface"));
        header.push(format!("{end}_mtu"));
        header.extend(features.iter().map(|f| format!("{end}_{f}")));
    }
    header.push("command".into());
    let rows = record.runs.iter().map(|run| {
        let mut row = vec![
            run.order.to_string(),
            run.replicate.to_string(),
            run.id.clone(),
        ];
        row.extend(record.factors.iter().map(|f| {
            run.cell
                .iter()
                .find(|(name, _)| name == &f.name)
                .map(|(_, level)| level.clone())
                .unwrap_or_default()
        }));
        let (status, reason) = match &run.status {
            RunStatus::Ok => ("ok", String::new()),
            RunStatus::Failed { reason } => ("failed", reason.clone()),
            RunStatus::Interrupted => ("interrupted", String::new()),
        };
        row.extend([
            status.to_string(),
            reason,
            run.started.clone(),
            run.ended.clone(),
        ]);
        row.extend(
            metrics
                .iter()
                .map(|m| optional(run.metrics.get(m).copied())),
        );
        row.extend(
            facts
                .iter()
                .map(|f| run.facts.get(f).cloned().unwrap_or_default()),
        );
        row.extend(offload_fields(local(run), &local_features));
        row.extend(offload_fields(remote(run), &remote_features));
        let commands: Vec<String> = run.commands.iter().map(|argv| argv.join(" ")).collect();
        row.push(commands.join(" ; "));
        row
    });
    to_csv(std::iter::once(header).chain(rows))
}

/// The statistics columns of cells.csv, after the cell's own.
pub const CELL_STAT_COLUMNS: &[&str] = &[
    "metric",
    "unit",
    "n",
    "mean",
    "stdev",
    "mean_ci95_low",
    "mean_ci95_high",
    "median",
    "median_ci95_low",
    "median_ci95_high",
    "min",
    "p5",
    "p25",
    "p75",
    "p95",
    "p99",
    "max",
    "n_excluded",
];

fn stat_fields(record: &ExperimentRecord, s: &MetricStats) -> Vec<String> {
    let low = |b: Option<Bounds>| optional(b.map(|b| b.low));
    let high = |b: Option<Bounds>| optional(b.map(|b| b.high));
    vec![
        s.metric.clone(),
        metric_unit(record, &s.metric),
        s.n.to_string(),
        number(s.mean),
        optional(s.stdev),
        low(s.mean_ci95),
        high(s.mean_ci95),
        number(s.median),
        low(s.median_ci95),
        high(s.median_ci95),
        number(s.min),
        number(s.p5),
        number(s.p25),
        number(s.p75),
        number(s.p95),
        number(s.p99),
        number(s.max),
        s.n_excluded.to_string(),
    ]
}

/// One row per cell and metric; a cell with no successful run gets one row
/// with its counts and no statistics, so it is not lost.
pub fn cells_csv(record: &ExperimentRecord, analysis: &Analysis) -> String {
    let mut header: Vec<String> = record.factors.iter().map(|f| f.name.clone()).collect();
    header.extend(["cell", "n_ok", "n_failed", "n_interrupted"].map(String::from));
    header.extend(CELL_STAT_COLUMNS.iter().map(|c| c.to_string()));
    let mut rows = vec![header];
    for cell in all_cells(record) {
        let Some(stats) = analysis.cell(&cell) else {
            continue;
        };
        let mut lead: Vec<String> = record
            .factors
            .iter()
            .map(|f| {
                cell.iter()
                    .find(|(name, _)| name == &f.name)
                    .map(|(_, level)| level.clone())
                    .unwrap_or_default()
            })
            .collect();
        lead.extend([
            cell_label(&cell),
            stats.n_ok.to_string(),
            stats.n_failed.to_string(),
            stats.n_interrupted.to_string(),
        ]);
        if stats.metrics.is_empty() {
            let mut row = lead.clone();
            row.extend(CELL_STAT_COLUMNS.iter().map(|_| String::new()));
            rows.push(row);
        }
        for s in &stats.metrics {
            let mut row = lead.clone();
            row.extend(stat_fields(record, s));
            rows.push(row);
        }
    }
    to_csv(rows)
}
