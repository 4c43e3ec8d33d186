//! A realistic experiment record for the output tests: the limiters
//! write-up's UDP vs TCP × 1024 vs 8192 bytes × offloads on/off, its table
//! means with a few per cent of deterministic noise, 5 replicates, run in a
//! shuffled order; one run failed, the experiment was interrupted so that
//! one cell has a single successful run, and UDP with offloads off repeats
//! UDP with offloads on (stateless offloads do not apply to UDP) so that
//! factor shows no significant difference.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use netperf_ng::experiment::Analysis;
use netperf_ng::net::offload::OffloadSnapshot;
use netperf_ng::resultsdb::model::{
    Cell, Environment, ExperimentRecord, FactorRecord, OffloadRecord, RunRecord, RunStatus,
    RECORD_VERSION,
};

pub const SEED: u64 = 20_211_018;
pub const TITLE: &str = "UDP vs TCP <offloads> & \"sizes\"";

/// The write-up's means: (protocol, size, offloads) -> (throughput, send SD, receive SD).
pub fn writeup_means(protocol: &str, size: &str, offloads: &str) -> (f64, f64, f64) {
    match (protocol, size, offloads) {
        ("udp", "1024", _) => (4805.0, 1.69, 2.80),
        ("udp", "8192", _) => (18314.0, 0.43, 0.63),
        ("tcp", "1024", "on") => (10638.0, 0.79, 0.33),
        ("tcp", "8192", "on") => (24820.0, 0.32, 0.28),
        ("tcp", "1024", "off") => (4430.0, 2.40, 2.93),
        ("tcp", "8192", "off") => (19902.0, 0.42, 0.56),
        other => panic!("no such cell {other:?}"),
    }
}

fn factor(name: &str, levels: &[&str]) -> FactorRecord {
    FactorRecord {
        name: name.into(),
        levels: levels.iter().map(|s| s.to_string()).collect(),
    }
}

/// Deterministic noise in [-1, 1) from a 64-bit LCG.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

fn snapshot(interface: &str, on: bool) -> OffloadSnapshot {
    OffloadSnapshot {
        interface: interface.into(),
        features: ["tso", "gso", "gro", "lro"]
            .iter()
            .map(|f| (f.to_string(), on))
            .collect(),
        mtu: Some(8896),
    }
}

fn cell(protocol: &str, size: &str, offloads: &str) -> Cell {
    vec![
        ("protocol".into(), protocol.into()),
        ("message_size".into(), size.into()),
        ("offloads".into(), offloads.into()),
    ]
}

/// One run's metrics around the cell's means, `noise` in [-1, 1) each.
fn metrics(protocol: &str, size: &str, offloads: &str, noise: &mut Noise) -> BTreeMap<String, f64> {
    let (throughput, send_sd, recv_sd) = writeup_means(protocol, size, offloads);
    let mut jitter = |value: f64, spread: f64| value * (1.0 + spread * noise.next());
    let bytes: f64 = size.parse().unwrap();
    let throughput = jitter(throughput, 0.02);
    let receive_loss = 1.0 - 0.01 * jitter(1.0, 1.0).abs() / 2.0;
    let calls = (throughput * 1e6 / 8.0 / bytes * 10.0).round();
    [
        ("THROUGHPUT", throughput),
        ("LOCAL_SEND_THROUGHPUT", throughput),
        ("REMOTE_RECV_THROUGHPUT", throughput * receive_loss),
        ("LOCAL_SD", jitter(send_sd, 0.03)),
        ("REMOTE_SD", jitter(recv_sd, 0.03)),
        ("LOCAL_CPU_UTIL", jitter(2.08, 0.02)),
        ("REMOTE_CPU_UTIL", jitter(3.5, 0.05)),
        ("LOCAL_CPU_PEAK_UTIL", jitter(95.0, 0.05)),
        ("REMOTE_CPU_PEAK_UTIL", jitter(80.0, 0.1)),
        ("LOCAL_SEND_CALLS", calls),
        ("REMOTE_RECV_CALLS", calls),
        ("LOCAL_BYTES_SENT", calls * bytes),
        ("TRANSPORT_MSS", if protocol == "tcp" { bytes } else { 0.0 }),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Fisher-Yates with the LCG, so the run order is shuffled like the runner's.
fn shuffle<T>(items: &mut [T], noise: &mut Noise) {
    for i in (1..items.len()).rev() {
        let j = (((noise.next() + 1.0) / 2.0) * (i + 1) as f64) as usize;
        items.swap(i, j.min(i));
    }
}

/// The cell with a single successful run: the experiment was interrupted
/// during its second replicate, its last run, and never ran the rest.
pub fn single_cell() -> Cell {
    cell("udp", "8192", "off")
}

/// The cell whose fifth replicate failed.
pub fn failing_cell() -> Cell {
    cell("tcp", "8192", "off")
}

pub const FAILURE_REASON: &str =
    "netperf exited 1: send_data: data send error: Connection reset by peer, \"errno\" 104";

pub fn record() -> ExperimentRecord {
    let mut noise = Noise(SEED);
    let mut plan: Vec<(Cell, u32)> = Vec::new();
    for protocol in ["udp", "tcp"] {
        for size in ["1024", "8192"] {
            for offloads in ["on", "off"] {
                for replicate in 1..=5 {
                    plan.push((cell(protocol, size, offloads), replicate));
                }
            }
        }
    }
    shuffle(&mut plan, &mut noise);
    // Ctrl-C came during the single cell's second replicate, which the
    // shuffle put last; its other replicates never ran.
    let (late, mut plan): (Vec<_>, Vec<_>) = plan
        .into_iter()
        .partition(|(c, r)| *c == single_cell() && *r >= 2);
    let mut late = late;
    late.sort_by_key(|(_, r)| *r);
    plan.extend(late);
    // UDP with offloads off measures what UDP with them on measured, in
    // another order: the offloads factor has no effect on UDP.
    let mut udp_on: BTreeMap<(String, u32), BTreeMap<String, f64>> = BTreeMap::new();
    let mut runs = Vec::new();
    for (order, (cell, replicate)) in plan.into_iter().enumerate() {
        let level = |name: &str| cell.iter().find(|(f, _)| f == name).unwrap().1.clone();
        let (protocol, size, offloads) =
            (level("protocol"), level("message_size"), level("offloads"));
        let mut status = RunStatus::Ok;
        if cell == single_cell() && replicate >= 2 {
            status = RunStatus::Interrupted;
        }
        if cell == failing_cell() && replicate == 5 {
            status = RunStatus::Failed {
                reason: FAILURE_REASON.into(),
            };
        }
        let measured = if protocol == "udp" {
            let key = (size.clone(), replicate);
            udp_on
                .entry(key)
                .or_insert_with(|| metrics(&protocol, &size, "on", &mut noise))
                .clone()
        } else {
            metrics(&protocol, &size, &offloads, &mut noise)
        };
        let ok = status.is_ok();
        let mut facts = BTreeMap::new();
        facts.insert("THROUGHPUT_UNITS".to_string(), "10^6bits/s".to_string());
        facts.insert("SD_UNITS".to_string(), "usec/KB".to_string());
        facts.insert("PROTOCOL".to_string(), protocol.to_uppercase());
        let on = offloads == "on";
        runs.push(RunRecord {
            id: format!("00000000-0000-4000-8000-{order:012}"),
            order: order as u32,
            cell: cell.clone(),
            replicate,
            started: format!("2024-05-01T10:{:02}:00Z", order % 60),
            ended: format!("2024-05-01T10:{:02}:10Z", order % 60),
            status,
            metrics: if ok { measured } else { BTreeMap::new() },
            facts: if ok { facts } else { BTreeMap::new() },
            offloads: OffloadRecord {
                local: Some(snapshot("veth0", on)),
                remote: Some(snapshot("veth1", on)),
            },
            commands: vec![vec![
                "netperf".into(),
                "-H".into(),
                "198.18.0.2".into(),
                "-t".into(),
                "omni".into(),
                "-c".into(),
                "-C".into(),
                "--".into(),
                "-T".into(),
                protocol.clone(),
                "-m".into(),
                size.clone(),
            ]],
        });
        if matches!(runs.last().unwrap().status, RunStatus::Interrupted) {
            break;
        }
    }
    let mut environment = Environment::default();
    for (side, host) in [
        (&mut environment.local, "left"),
        (&mut environment.remote, "right"),
    ] {
        side.insert("hostname".into(), host.into());
        side.insert("kernel".into(), "5.11.0-1018-gcp".into());
        side.insert("driver".into(), "virtio_net".into());
        side.insert("mtu".into(), "8896".into());
    }
    ExperimentRecord {
        record_version: RECORD_VERSION,
        id: "6f1c2a4e-1111-4222-8333-944455556666".into(),
        title: TITLE.into(),
        tool_version: "0.1.0".into(),
        tool_revision: "0123456789ab".into(),
        command_line: vec![
            "netagg".into(),
            "experiment".into(),
            "limiters plan.toml".into(),
        ],
        plan: "title = \"UDP vs TCP <offloads>\"\nreplicates = 5\n[factors]\nprotocol = [\"udp\", \"tcp\"]\nmessage_size = [1024, 8192]\noffloads = [\"on\", \"off\"]\n".into(),
        seed: SEED,
        replicates: 5,
        factors: vec![
            factor("protocol", &["udp", "tcp"]),
            factor("message_size", &["1024", "8192"]),
            factor("offloads", &["on", "off"]),
        ],
        host: "198.18.0.2".into(),
        port: 12865,
        started: "2024-05-01T10:00:00Z".into(),
        ended: "2024-05-01T10:40:00Z".into(),
        status: "interrupted".into(),
        tags: vec!["limiters".into()],
        environment,
        runs,
        targets: vec![],
    }
}

/// The analysis with the full default bootstrap, made once (it takes a
/// few seconds in a debug build).
pub fn analysis() -> &'static Analysis {
    static ANALYSIS: OnceLock<Analysis> = OnceLock::new();
    ANALYSIS.get_or_init(|| Analysis::of(&record()))
}

/// A fresh directory under the system's temporary one, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!("netperf-ng-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temporary directory");
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
