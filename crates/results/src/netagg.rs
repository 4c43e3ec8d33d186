//! A netagg run as a stored result: one run per level, in the cell
//! `streams=N` (and `host=H` for the levels of a `sync` run, which each
//! target one load generator), with the level's figures as metrics and
//! netagg's summary JSON as the document.
//!
//! Each level is one measurement (n = 1): its average is over samples of
//! one continuous run, which are not independent replicates. `compare`
//! therefore shows the ratio per level with "insufficient data"; repeat
//! the ramp as an experiment to get intervals.

use super::model::{FactorRecord, OffloadRecord, RunRecord, RunStatus};
use super::record::{Kind, StoredResult};
use netperf_base::timefmt::utc_timestamp;
use std::collections::BTreeMap;
use std::time::Duration;

/// What a netagg run produced, in the terms the store keeps: netagg builds
/// it from its recording and level summaries at the end, so the store does
/// not depend on how netagg runs.
pub struct NetaggRun {
    /// The test kind's name ("tps", "bidirectional", ...), the netperf
    /// test its streams run, and the units of its throughput.
    pub kind: String,
    pub test: String,
    pub units: String,
    /// The load generators, in plan order.
    pub hosts: Vec<String>,
    /// Epoch seconds the levels' offsets count from.
    pub start_epoch: f64,
    /// How many streams failed over the run.
    pub failed_streams: usize,
    /// Every level of the ramp, in the order it ran.
    pub levels: Vec<NetaggLevel>,
    /// netagg_<kind>.json as written.
    pub summary_json: String,
    /// netagg's argv, program included.
    pub command_line: Vec<String>,
}

/// One level of a netagg run: when it ran and what its window measured.
/// Figures netagg did not measure are -1, as in its summary.
pub struct NetaggLevel {
    pub streams: u32,
    /// The one load generator of a `sync` level.
    pub host: Option<String>,
    /// Seconds from the run's start.
    pub start: f64,
    pub end: f64,
    /// Samples in the level's window.
    pub samples: usize,
    pub average: f64,
    pub min: f64,
    pub max: f64,
    pub cpu_util: f64,
    pub cpu_peak: f64,
    pub service_demand: f64,
    pub packets_out: f64,
    pub packets_in: f64,
    pub min_over_max: f64,
    pub jain: f64,
    /// Request/response timeouts of all its streams.
    pub timeouts: u64,
    /// Streams that stalled or moved nothing.
    pub unhealthy_streams: usize,
}

fn at(run: &NetaggRun, offset: f64) -> String {
    let epoch = run.start_epoch + offset;
    utc_timestamp(Duration::try_from_secs_f64(epoch.max(0.0)).unwrap_or_default())
}

/// The stored form of a netagg run, tagged `tags`.
pub fn result_of(run: &NetaggRun, tags: &[String]) -> StoredResult {
    let sync_hosts = run.levels.iter().any(|l| l.host.is_some());
    let mut runs = Vec::new();
    for (order, level) in run.levels.iter().enumerate() {
        let mut cell = vec![("streams".to_string(), level.streams.to_string())];
        if let Some(host) = level.host.as_ref().filter(|_| sync_hosts) {
            cell.push(("host".to_string(), host.clone()));
        }
        let status = if level.samples == 0 {
            RunStatus::Failed {
                reason: "no samples in the level's window".into(),
            }
        } else {
            RunStatus::Ok
        };
        runs.push(RunRecord {
            id: netperf_base::ids::new_uuid(),
            order: order as u32,
            cell,
            replicate: 1,
            started: at(run, level.start),
            ended: at(run, level.end),
            status,
            metrics: level_metrics(level),
            facts: level_facts(run, level),
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
            levels: distinct(run.levels.iter().filter_map(|l| l.host.clone())),
        });
    }
    let end = run.levels.iter().map(|l| l.end).fold(0.0, f64::max);
    StoredResult {
        id: netperf_base::ids::new_uuid(),
        kind: Kind::Netagg,
        test: run.test.clone(),
        host: run.hosts.join(","),
        kernel: netperf_data::net::sysinfo::SystemInfo::collect().release,
        title: format!("netagg {}", run.kind),
        started: at(run, 0.0),
        ended: at(run, end),
        status: if run.failed_streams == 0 {
            "complete".into()
        } else {
            format!("complete, {} streams failed", run.failed_streams)
        },
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command_line: run.command_line.clone(),
        tags: tags.to_vec(),
        factors,
        runs,
        document: Some(run.summary_json.clone()),
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
fn level_metrics(l: &NetaggLevel) -> BTreeMap<String, f64> {
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
        ("RR_TIMEOUTS", l.timeouts as f64),
    ];
    figures
        .into_iter()
        .filter(|(_, v)| v.is_finite() && *v != -1.0)
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

fn level_facts(run: &NetaggRun, l: &NetaggLevel) -> BTreeMap<String, String> {
    let per = if run.units.starts_with("10^6bits") {
        "KB"
    } else {
        "Tran"
    };
    let unhealthy = l.unhealthy_streams;
    BTreeMap::from([
        ("THROUGHPUT_UNITS".to_string(), run.units.clone()),
        ("SD_UNITS".to_string(), format!("usec/{per}")),
        ("TEST".to_string(), run.test.clone()),
        ("NETAGG_KIND".to_string(), run.kind.clone()),
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
