//! A netagg run as a stored result: one run per level, in the cell
//! `streams=N` (and `host=H` for the levels of a `sync` run, which each
//! target one load generator), with the level's figures as metrics and
//! netagg's summary JSON as the document.
//!
//! Each level is one measurement (n = 1): its average is over samples of
//! one continuous run, which are not independent replicates. `compare`
//! therefore shows the ratio per level with "insufficient data"; repeat
//! the ramp as an experiment to get intervals.

use super::record::{Kind, StoredResult};
use crate::agg::plan::KindSpec;
use crate::agg::runner::Recording;
use crate::agg::summary::LevelSummary;
use crate::experiment::model::{FactorRecord, OffloadRecord, RunRecord, RunStatus};
use crate::timefmt::utc_timestamp;
use std::collections::BTreeMap;
use std::time::Duration;

/// What a netagg run produced, as its binary has it at the end.
pub struct NetaggRun<'a> {
    pub kind: &'a KindSpec,
    pub recording: &'a Recording,
    pub levels: &'a [LevelSummary],
    /// netagg_<kind>.json as written.
    pub summary_json: &'a str,
    /// netagg's argv, program included.
    pub command_line: Vec<String>,
}

fn at(recording: &Recording, offset: f64) -> String {
    let epoch = recording.start_epoch + offset;
    utc_timestamp(Duration::try_from_secs_f64(epoch.max(0.0)).unwrap_or_default())
}

/// The stored form of a netagg run, tagged `tags`.
pub fn result_of(run: &NetaggRun, tags: &[String]) -> StoredResult {
    let rec = run.recording;
    let sync_hosts = rec.levels.iter().any(|l| l.host.is_some());
    let mut runs = Vec::new();
    for (order, (level, summary)) in rec.levels.iter().zip(run.levels).enumerate() {
        let mut cell = vec![("streams".to_string(), summary.streams.to_string())];
        if let Some(host) = level.host.as_ref().filter(|_| sync_hosts) {
            cell.push(("host".to_string(), host.clone()));
        }
        let status = if summary.samples == 0 {
            RunStatus::Failed {
                reason: "no samples in the level's window".into(),
            }
        } else {
            RunStatus::Ok
        };
        runs.push(RunRecord {
            id: crate::ids::new_uuid(),
            order: order as u32,
            cell,
            replicate: 1,
            started: at(rec, level.start),
            ended: at(rec, level.end),
            status,
            metrics: level_metrics(summary),
            facts: level_facts(run.kind, summary),
            offloads: OffloadRecord::default(),
            commands: Vec::new(),
        });
    }
    let mut factors = vec![FactorRecord {
        name: "streams".into(),
        levels: distinct(run.levels.iter().map(|l| l.streams.to_string())),
    }];
    if sync_hosts {
        factors.push(FactorRecord {
            name: "host".into(),
            levels: distinct(rec.levels.iter().filter_map(|l| l.host.clone())),
        });
    }
    let end = rec.levels.iter().map(|l| l.end).fold(0.0, f64::max);
    StoredResult {
        id: crate::ids::new_uuid(),
        kind: Kind::Netagg,
        test: run.kind.test.to_string(),
        host: rec.hosts.join(","),
        kernel: crate::net::sysinfo::SystemInfo::collect().release,
        title: format!("netagg {}", run.kind.name),
        started: at(rec, 0.0),
        ended: at(rec, end),
        status: if rec.failures.is_empty() {
            "complete".into()
        } else {
            format!("complete, {} streams failed", rec.failures.len())
        },
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command_line: run.command_line.clone(),
        tags: tags.to_vec(),
        factors,
        runs,
        document: Some(run.summary_json.to_string()),
    }
}

fn distinct(values: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// The level's figures under selector-like names (so `better()` knows
/// their direction); netagg's -1 "not measured" is left out.
fn level_metrics(l: &LevelSummary) -> BTreeMap<String, f64> {
    let figures = [
        ("THROUGHPUT", l.average),
        ("THROUGHPUT_MIN", l.min),
        ("THROUGHPUT_MAX", l.max),
        ("LOCAL_CPU_UTIL", l.cpu_util),
        ("LOCAL_CPU_PEAK_UTIL", l.cpu_peak),
        ("LOCAL_SD", l.service_demand),
        ("LOCAL_IF_TX_PPS", l.packets_out),
        ("LOCAL_IF_RX_PPS", l.packets_in),
        ("STREAMS", f64::from(l.streams)),
        ("SAMPLES", l.samples as f64),
        ("FAIRNESS_MIN_OVER_MAX", l.min_over_max),
        ("FAIRNESS_JAIN", l.jain),
        ("RR_TIMEOUTS", l.health.timeouts() as f64),
    ];
    figures
        .into_iter()
        .filter(|(_, v)| v.is_finite() && *v != -1.0)
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

fn level_facts(kind: &KindSpec, l: &LevelSummary) -> BTreeMap<String, String> {
    let per = if kind.units.starts_with("10^6bits") {
        "KB"
    } else {
        "Tran"
    };
    let unhealthy = l.health.unhealthy().count();
    BTreeMap::from([
        ("THROUGHPUT_UNITS".to_string(), kind.units.to_string()),
        ("SD_UNITS".to_string(), format!("usec/{per}")),
        ("TEST".to_string(), kind.test.to_string()),
        ("NETAGG_KIND".to_string(), kind.name.to_string()),
        (
            "HEALTH".to_string(),
            if unhealthy == 0 {
                "trustworthy".to_string()
            } else {
                format!("not trustworthy: {unhealthy} streams stalled or idle")
            },
        ),
    ])
}
