//! The results as they are stored: what an experiment records (its plan's
//! factors and levels, the seed of its run order, the environment, where
//! its targets went, and every run, measured or failed, with the offload
//! state read back before it), the shape a netperf test or a netagg run is
//! stored in too, and which way is better for each metric. This is the one
//! document the experiment's text, CSV, JSON and HTML outputs are rendered
//! from and the results database stores and compares, so a report can be
//! re-rendered from a saved JSON. Field names are the stored JSON's.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use netperf_data::net::offload::OffloadSnapshot;

/// Layout version of [`ExperimentRecord`] in JSON; bumped when a field
/// changes meaning, so a reader can refuse what it does not understand.
pub const RECORD_VERSION: u32 = 1;

/// One factor of the plan: its name (as in the plan file, e.g.
/// "message_size", "protocol", "offloads") and its levels as labels, in the
/// plan's order. The first level is the baseline of the ratios.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactorRecord {
    pub name: String,
    pub levels: Vec<String>,
}

impl FactorRecord {
    /// A factor named `name` with these levels, in this order.
    pub fn new(name: &str, levels: &[&str]) -> FactorRecord {
        FactorRecord {
            name: name.into(),
            levels: levels.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// A cell: one level of every factor, as (factor, level) pairs in the
/// plan's factor order.
pub type Cell = Vec<(String, String)>;

/// The cell's name in tables and keys: "protocol=udp message_size=1024".
pub fn cell_label(cell: &Cell) -> String {
    cell.iter()
        .map(|(factor, level)| format!("{factor}={level}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RunStatus {
    /// netperf exited 0 and reported its throughput.
    Ok,
    /// The run gave no usable result; `reason` says why (exit status and
    /// netperf's last error line, a refused offload, a timeout).
    Failed { reason: String },
    /// Ctrl-C (or SIGTERM) ended the experiment during this run.
    Interrupted,
}

impl RunStatus {
    pub fn is_ok(&self) -> bool {
        matches!(self, RunStatus::Ok)
    }
}

/// Offload state of both ends before a run; `remote` is None when the
/// remote netserver could not report it (a stock netserver).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffloadRecord {
    pub local: Option<OffloadSnapshot>,
    pub remote: Option<OffloadSnapshot>,
}

/// One netperf run of one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// UUID of this run (also given to netperf as its -u, so the omni UUID
    /// selector and the database agree).
    pub id: String,
    /// Position in the randomized run order, from 0.
    pub order: u32,
    pub cell: Cell,
    /// Which repetition of its cell this is, from 1.
    pub replicate: u32,
    /// RFC 3339 UTC times.
    pub started: String,
    pub ended: String,
    #[serde(flatten)]
    pub status: RunStatus,
    /// Numeric omni selector values, by selector name in upper case
    /// (THROUGHPUT, LOCAL_SD, ...). Only values netperf reported.
    pub metrics: BTreeMap<String, f64>,
    /// Text selector values (PROTOCOL, SD_UNITS, THROUGHPUT_UNITS,
    /// LOCAL_CONG_CONTROL, LOCAL_DRIVER_NAME, ...).
    pub facts: BTreeMap<String, String>,
    pub offloads: OffloadRecord,
    /// The netperf command line(s) of this run, one per concurrent stream.
    pub commands: Vec<Vec<String>>,
}

/// Where the experiment ran: facts of both ends that do not change from
/// run to run (those that do are in each run's facts and offloads).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Environment {
    /// key -> value, e.g. "kernel", "cpu_model", "cpu_count", "interface",
    /// "driver", "mtu", "congestion_control", "hostname".
    pub local: BTreeMap<String, String>,
    pub remote: BTreeMap<String, String>,
}

/// A whole experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentRecord {
    pub record_version: u32,
    /// UUID of the experiment.
    pub id: String,
    pub title: String,
    /// The netperf-ng version that ran it (CARGO_PKG_VERSION).
    pub tool_version: String,
    /// The git revision it was built from (`page::REVISION`; empty in
    /// records written before it was kept).
    #[serde(default)]
    pub tool_revision: String,
    /// The netagg command line as given.
    pub command_line: Vec<String>,
    /// The plan as TOML, after command-line factors were merged in: running
    /// it again with `--seed` gives the same order.
    pub plan: String,
    /// Seed of the run order (ChaCha8), also the bootstrap's seed.
    pub seed: u64,
    pub replicates: u32,
    pub factors: Vec<FactorRecord>,
    /// The remote host (netperf -H) and its control port.
    pub host: String,
    pub port: u16,
    pub started: String,
    pub ended: String,
    /// "complete", or "interrupted" when Ctrl-C ended it early.
    pub status: String,
    pub tags: Vec<String>,
    pub environment: Environment,
    /// Every run in the order it ran.
    pub runs: Vec<RunRecord>,
    /// Where the `target` factor's levels went, and the scenarios that
    /// could not run here with the reason (`netagg matrix`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<Target>,
}

impl ExperimentRecord {
    /// The record a saved experiment holds (experiment.json, a bare
    /// record, or what `netagg results show --json` prints: the record is
    /// its "document"), refused if its layout is newer than this build's.
    pub fn from_saved(doc: &serde_json::Value) -> Result<ExperimentRecord, String> {
        let record = netperf_base::saved::experiment_record(doc)
            .ok_or("not an experiment record (no record_version)")?;
        match record
            .get("record_version")
            .and_then(serde_json::Value::as_u64)
        {
            Some(v) if v > u64::from(RECORD_VERSION) => Err(format!(
                "record version {v} is newer than this netperf-ng understands ({RECORD_VERSION})"
            )),
            _ => serde_json::from_value(record.clone())
                .map_err(|e| format!("not an experiment record: {e}")),
        }
    }
}

/// One target: a label, and the netserver it reaches, or why there is none
/// (a scenario the place cannot offer, e.g. a second zone).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    pub label: String,
    /// netperf -H; empty when unavailable.
    pub host: String,
    /// netperf -p.
    pub port: u16,
    /// What the target is, e.g. "pod netserver-x7 on node b, zone 1".
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub about: String,
    /// Why the scenario cannot run here; it then has no runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

impl Target {
    /// A target that runs: `label` goes to `host`:`port`.
    pub fn reachable(label: &str, host: String, port: u16) -> Target {
        Target {
            label: label.to_string(),
            host,
            port,
            about: String::new(),
            unavailable: None,
        }
    }
}

/// Whether more of a metric is better: decides "faster"/"slower" from a
/// ratio's direction. Unknown metrics have no direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
    Neither,
}

/// The metrics an experiment's tables, charts and comparisons are about:
/// (selector, title, unit or the selector naming the unit, which way is
/// better). The order is the order of the tables.
pub const KEY_METRICS: &[(&str, &str, &str, Better)] = &[
    (
        "THROUGHPUT",
        "Throughput",
        "THROUGHPUT_UNITS",
        Better::Higher,
    ),
    ("LOCAL_SD", "Send Service Demand", "SD_UNITS", Better::Lower),
    (
        "REMOTE_SD",
        "Receive Service Demand",
        "SD_UNITS",
        Better::Lower,
    ),
    ("LOCAL_CPU_UTIL", "Local CPU Util", "%", Better::Lower),
    ("REMOTE_CPU_UTIL", "Remote CPU Util", "%", Better::Lower),
    (
        "TRANSACTION_RATE",
        "Transaction Rate",
        "Tran/s",
        Better::Higher,
    ),
    ("MEAN_LATENCY", "Mean Latency", "usec", Better::Lower),
    (
        "P99_LATENCY",
        "99th Percentile Latency",
        "usec",
        Better::Lower,
    ),
];

/// Which way is better for `metric` (any selector name).
pub fn better(metric: &str) -> Better {
    if let Some(&(_, _, _, b)) = KEY_METRICS.iter().find(|(m, ..)| *m == metric) {
        return b;
    }
    const HIGHER: [&str; 2] = ["THROUGHPUT", "RATE"];
    const LOWER: [&str; 4] = ["_SD", "LATENCY", "CPU_UTIL", "RETRANS"];
    if LOWER.iter().any(|s| metric.contains(s)) {
        Better::Lower
    } else if HIGHER.iter().any(|s| metric.contains(s)) {
        Better::Higher
    } else {
        Better::Neither
    }
}

impl ExperimentRecord {
    /// The runs of `cell` that measured something.
    pub fn ok_runs<'a>(&'a self, cell: &'a Cell) -> impl Iterator<Item = &'a RunRecord> + 'a {
        self.runs
            .iter()
            .filter(move |r| r.status.is_ok() && &r.cell == cell)
    }

    /// Every cell of the plan (the cross product of the factors' levels),
    /// in plan order with the last factor varying fastest.
    pub fn cells(&self) -> Vec<Cell> {
        cross_product(&self.factors)
    }
}

/// The cross product of the factors' levels, last factor fastest.
pub fn cross_product(factors: &[FactorRecord]) -> Vec<Cell> {
    let mut cells: Vec<Cell> = vec![Vec::new()];
    for f in factors {
        cells = cells
            .into_iter()
            .flat_map(|prefix| {
                f.levels.iter().map(move |level| {
                    let mut c = prefix.clone();
                    c.push((f.name.clone(), level.clone()));
                    c
                })
            })
            .collect();
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_product_varies_the_last_factor_fastest() {
        let cells = cross_product(&[
            FactorRecord::new("protocol", &["udp", "tcp"]),
            FactorRecord::new("message_size", &["1024", "8192"]),
        ]);
        let labels: Vec<String> = cells.iter().map(cell_label).collect();
        assert_eq!(
            labels,
            [
                "protocol=udp message_size=1024",
                "protocol=udp message_size=8192",
                "protocol=tcp message_size=1024",
                "protocol=tcp message_size=8192"
            ]
        );
        assert_eq!(cross_product(&[]), vec![Vec::new()]);
    }

    #[test]
    fn run_status_flattens_into_the_run() {
        let status = serde_json::to_value(RunStatus::Failed {
            reason: "refused".into(),
        })
        .unwrap();
        assert_eq!(status["status"], "failed");
        assert_eq!(status["reason"], "refused");
    }

    #[test]
    fn metric_directions() {
        assert_eq!(better("THROUGHPUT"), Better::Higher);
        assert_eq!(better("REMOTE_SD"), Better::Lower);
        assert_eq!(better("P90_LATENCY"), Better::Lower);
        assert_eq!(better("LOCAL_SEND_CALLS"), Better::Neither);
        assert_eq!(better("TRANSPORT_MSS"), Better::Neither);
    }
}
