//! A responsiveness run as the results database keeps it: one run per
//! phase, in the cell `phase=NAME`, with the probe's percentiles under the
//! open loop's selector names (so `netagg results` knows their direction)
//! and the bulk throughput; the saved JSON as the document.

use super::model::{Phase, Run, Verdict};
use netperf_base::timefmt::utc_timestamp;
use netperf_results::model::{FactorRecord, OffloadRecord, RunRecord, RunStatus};
use netperf_results::{Kind, StoredResult};
use std::collections::BTreeMap;
use std::time::Duration;

fn at(run: &Run, offset: f64) -> String {
    let epoch = run.start_epoch + offset;
    utc_timestamp(Duration::try_from_secs_f64(epoch.max(0.0)).unwrap_or_default())
}

/// The phase's figures by selector name; what was not measured is left out.
fn metrics(run: &Run, k: usize) -> BTreeMap<String, f64> {
    let phase: &Phase = &run.phases[k];
    let p = &phase.probe;
    let inflation = match run.verdict(k) {
        Verdict::Inflated { ratio, .. } => Some(ratio),
        _ => None,
    };
    let figures = [
        ("CO_P50_LATENCY", p.co_p50),
        ("CO_P90_LATENCY", p.co_p90),
        ("CO_P99_LATENCY", p.co_p99),
        ("RAW_P50_LATENCY", p.raw_p50),
        ("RAW_P99_LATENCY", p.raw_p99),
        ("OPEN_OFFERED_RATE", Some(run.probe_rate)),
        ("OPEN_SENT", Some(p.sent as f64)),
        ("OPEN_LOST", Some(p.lost as f64)),
        ("THROUGHPUT_UP", phase.up_mbps),
        ("THROUGHPUT_DOWN", phase.down_mbps),
        ("FLOWS", Some(f64::from(run.flows))),
        ("P99_LATENCY_INFLATION", inflation),
    ];
    figures
        .into_iter()
        .filter_map(|(k, v)| v.filter(|v| v.is_finite()).map(|v| (k.to_string(), v)))
        .collect()
}

/// The stored form of `run`, its JSON `document` kept whole.
pub fn result_of(run: &Run, document: String, command_line: Vec<String>) -> StoredResult {
    let runs = run
        .phases
        .iter()
        .enumerate()
        .map(|(k, phase)| RunRecord {
            id: netperf_base::ids::new_uuid(),
            order: k as u32,
            cell: vec![("phase".to_string(), phase.name.clone())],
            replicate: 1,
            started: at(run, phase.start),
            ended: at(run, phase.end),
            status: match (phase.probe.answered, phase.problems.first()) {
                (0, _) => RunStatus::Failed {
                    reason: "no probe answered".into(),
                },
                (_, Some(problem)) => RunStatus::Failed {
                    reason: problem.clone(),
                },
                _ => RunStatus::Ok,
            },
            metrics: metrics(run, k),
            facts: BTreeMap::from([
                ("TEST".to_string(), run.probe_test.clone()),
                ("THROUGHPUT_UNITS".to_string(), "10^6bits/s".to_string()),
                ("NETAGG_KIND".to_string(), "responsiveness".to_string()),
            ]),
            offloads: OffloadRecord::default(),
            commands: Vec::new(),
        })
        .collect();
    let failed = run.phases.iter().filter(|p| !p.problems.is_empty()).count();
    StoredResult {
        id: netperf_base::ids::new_uuid(),
        kind: Kind::Netagg,
        test: run.probe_test.clone(),
        host: run.hosts.join(","),
        kernel: netperf_data::net::sysinfo::SystemInfo::collect().release,
        title: "netagg responsiveness".into(),
        started: at(run, 0.0),
        ended: at(run, run.phases.last().map_or(0.0, |p| p.end)),
        status: match (run.interrupted, failed) {
            (true, _) => "interrupted".into(),
            (false, 0) => "complete".into(),
            (false, n) => format!("complete, {n} phases with problems"),
        },
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command_line,
        tags: vec!["responsiveness".into()],
        factors: vec![FactorRecord {
            name: "phase".into(),
            levels: run.phases.iter().map(|p| p.name.clone()).collect(),
        }],
        runs,
        document: Some(document),
    }
}
