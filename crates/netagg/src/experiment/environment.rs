//! The environment of an experiment for its record and report: kernel,
//! CPU, interface, driver, MTU, congestion control and offloads of both
//! ends, taken from what netperf reported in the first measured run (its
//! LOCAL_/REMOTE_ selectors) and the offload read-back, plus this host's
//! name. Facts that changed between runs stay in each run.

use netperf_data::net::interface::sysfs_mtu;
use netperf_data::net::offload::OffloadSnapshot;
use netperf_results::model::{Environment, RunRecord};
use std::collections::BTreeMap;

/// (environment key, local selector, remote selector).
const FROM_SELECTORS: &[(&str, &str, &str)] = &[
    ("kernel", "LOCAL_RELEASE", "REMOTE_RELEASE"),
    ("cpu_model", "LOCAL_CPU_MODEL", "REMOTE_CPU_MODEL"),
    ("cpu_count", "LOCAL_CPU_COUNT", "REMOTE_CPU_COUNT"),
    ("interface", "LOCAL_INTERFACE_NAME", "REMOTE_INTERFACE_NAME"),
    ("driver", "LOCAL_DRIVER_NAME", "REMOTE_DRIVER_NAME"),
    (
        "congestion_control",
        "LOCAL_CONG_CONTROL",
        "REMOTE_CONG_CONTROL",
    ),
];

/// Values netperf prints for what it could not learn.
const NOT_KNOWN: &[&str] = &["", "Deprecated", "unknown", "-1"];

/// The environment seen by `runs` (the first measured one), with the
/// offload state at the start of the experiment.
pub fn collect(
    runs: &[RunRecord],
    local_start: Option<&OffloadSnapshot>,
    remote_start: Option<&OffloadSnapshot>,
) -> Environment {
    let mut env = Environment::default();
    env.local.insert("hostname".into(), hostname());
    if let Some(run) = runs.iter().find(|r| r.status.is_ok()) {
        for &(key, local, remote) in FROM_SELECTORS {
            for (side, selector) in [(&mut env.local, local), (&mut env.remote, remote)] {
                if let Some(v) = value_of(run, selector) {
                    side.insert(key.to_string(), v);
                }
            }
        }
    }
    for (side, snapshot) in [
        (&mut env.local, local_start),
        (&mut env.remote, remote_start),
    ] {
        if let Some(s) = snapshot {
            add_offloads(side, s);
        }
    }
    if !env.local.contains_key("mtu") {
        if let Some(mtu) = env.local.get("interface").and_then(|i| sysfs_mtu(i)) {
            env.local.insert("mtu".into(), mtu.to_string());
        }
    }
    env
}

fn value_of(run: &RunRecord, selector: &str) -> Option<String> {
    let text = run
        .facts
        .get(selector)
        .cloned()
        .or_else(|| run.metrics.get(selector).map(|v| format!("{v}")))?;
    // netperf reports a CPU count of 0 when it did not measure CPU.
    let unknown =
        NOT_KNOWN.contains(&text.trim()) || (selector.ends_with("CPU_COUNT") && text.trim() == "0");
    (!unknown).then(|| text.trim().to_string())
}

fn add_offloads(side: &mut BTreeMap<String, String>, s: &OffloadSnapshot) {
    side.insert("offload_interface".into(), s.interface.clone());
    side.insert("offloads".into(), s.features_text(", "));
    if let Some(mtu) = s.mtu {
        side.insert("mtu".into(), mtu.to_string());
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use netperf_results::model::{OffloadRecord, RunStatus};

    fn run(status: RunStatus, facts: &[(&str, &str)]) -> RunRecord {
        RunRecord {
            id: "x".into(),
            order: 0,
            cell: vec![],
            replicate: 1,
            started: String::new(),
            ended: String::new(),
            status,
            metrics: [("LOCAL_CPU_COUNT".to_string(), 2.0)].into_iter().collect(),
            facts: facts
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            offloads: OffloadRecord::default(),
            commands: vec![],
        }
    }

    #[test]
    fn facts_come_from_the_first_measured_run() {
        let failed = run(
            RunStatus::Failed { reason: "x".into() },
            &[("LOCAL_RELEASE", "old")],
        );
        let ok = run(
            RunStatus::Ok,
            &[
                ("LOCAL_RELEASE", "6.18"),
                ("REMOTE_CPU_MODEL", "Deprecated"),
                ("LOCAL_INTERFACE_NAME", "lo"),
            ],
        );
        let snap = OffloadSnapshot {
            interface: "veth0".into(),
            features: [("gso".to_string(), true), ("tso".to_string(), false)]
                .into_iter()
                .collect(),
            mtu: Some(1500),
        };
        let env = collect(&[failed, ok], Some(&snap), None);
        assert_eq!(env.local["kernel"], "6.18");
        assert_eq!(env.local["cpu_count"], "2");
        assert!(
            !env.remote.contains_key("cpu_model"),
            "Deprecated is not a fact"
        );
        assert_eq!(env.local["offloads"], "gso on, tso off");
        assert_eq!(env.local["mtu"], "1500");
    }
}
