//! Helpers of the results database tests: temporary databases, synthetic
//! experiments, and `netagg results` with a time limit.

use super::{run_with_limit, text};
use netperf_ng::resultsdb::model::{
    Environment, ExperimentRecord, FactorRecord, OffloadRecord, RunRecord, RunStatus,
    RECORD_VERSION,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

pub use super::NETAGG;
const LIMIT: Duration = Duration::from_secs(60);

/// A temporary directory, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "netperf-ng-resultsdb-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        TempDir(dir)
    }

    pub fn db(&self) -> PathBuf {
        self.0.join("results.db")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        make_writable(&self.0);
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn make_writable(dir: &Path) {
    let _ = Command::new("chmod").args(["-R", "u+w"]).arg(dir).status();
}

pub fn uuid(n: u64) -> String {
    format!("{:08x}-0000-4000-8000-{:012x}", n >> 16, n)
}

pub fn ids() -> u64 {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    u64::from(NEXT.fetch_add(1, Ordering::Relaxed)) << 20 | u64::from(std::process::id() & 0xfffff)
}

/// A synthetic experiment: protocol x message_size, `replicates` runs a
/// cell, throughput `scale` times a per-cell base with small deterministic
/// spread; one failed run.
pub fn experiment(scale: f64, replicates: u32) -> ExperimentRecord {
    let factors = vec![
        FactorRecord {
            name: "protocol".into(),
            levels: vec!["udp".into(), "tcp".into()],
        },
        FactorRecord {
            name: "message_size".into(),
            levels: vec!["1024".into(), "8192".into()],
        },
    ];
    let cells = netperf_ng::resultsdb::model::cross_product(&factors);
    let mut runs = Vec::new();
    for rep in 1..=replicates {
        for (c, cell) in cells.iter().enumerate() {
            let i = runs.len();
            let noise = 1.0 + ((i * 7919) % 11) as f64 / 500.0;
            let base = 1000.0 * (c as f64 + 1.0);
            runs.push(RunRecord {
                id: uuid(ids()),
                order: i as u32,
                cell: cell.clone(),
                replicate: rep,
                started: format!("2026-11-20T10:{:02}:00.000Z", i % 60),
                ended: format!("2026-11-20T10:{:02}:05.000Z", i % 60),
                status: RunStatus::Ok,
                metrics: BTreeMap::from([
                    ("THROUGHPUT".to_string(), base * scale * noise),
                    ("LOCAL_SD".to_string(), 2.0 / scale * noise),
                    ("LOCAL_SEND_CALLS".to_string(), 5000.0 * noise),
                ]),
                facts: BTreeMap::from([
                    ("THROUGHPUT_UNITS".to_string(), "10^6bits/s".to_string()),
                    ("SD_UNITS".to_string(), "usec/KB".to_string()),
                ]),
                offloads: OffloadRecord::default(),
                commands: vec![vec!["netperf".into(), "-t".into(), "omni".into()]],
            });
        }
    }
    runs.push(RunRecord {
        id: uuid(ids()),
        order: runs.len() as u32,
        cell: cells[0].clone(),
        replicate: replicates + 1,
        started: "2026-11-20T11:00:00.000Z".into(),
        ended: "2026-11-20T11:00:01.000Z".into(),
        status: RunStatus::Failed {
            reason: "netperf exited 255: connection refused".into(),
        },
        metrics: BTreeMap::new(),
        facts: BTreeMap::new(),
        offloads: OffloadRecord::default(),
        commands: vec![],
    });
    ExperimentRecord {
        record_version: RECORD_VERSION,
        id: uuid(ids()),
        title: "udp vs tcp".into(),
        tool_version: "0.1.0".into(),
        tool_revision: String::new(),
        command_line: vec!["netagg".into(), "experiment".into()],
        plan: "replicates = 5\n".into(),
        seed: 7,
        replicates,
        factors,
        host: "198.18.0.2".into(),
        port: 12865,
        started: "2026-11-20T10:00:00.000Z".into(),
        ended: "2026-11-20T11:00:01.000Z".into(),
        status: "complete".into(),
        tags: vec!["limiters".into()],
        environment: Environment {
            local: BTreeMap::from([("kernel".to_string(), "6.1.0-18-amd64".to_string())]),
            remote: BTreeMap::new(),
        },
        runs,
        targets: vec![],
    }
}

pub fn netagg(db: &Path, args: &[&str]) -> Output {
    let mut all = vec![
        "results".to_string(),
        "--db".into(),
        db.display().to_string(),
    ];
    all.extend(args.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    run_with_limit(&NETAGG, &refs, LIMIT)
}

pub fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

/// stderr is exactly one line naming the problem.
pub fn one_error_line(out: &Output, words: &str) {
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "one line on stderr: {err}");
    assert!(err.contains(words), "stderr should say '{words}': {err}");
}

/// Whether this process is root (file modes do not stop root: tests that
/// need a read-only file run their child as `nobody`).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `nobody`'s uid and gid.
pub const NOBODY: u32 = 65534;

/// Run `program` with `args` and extra environment, as `uid` if given,
/// killed after a minute. None if it could not be started (a binary that
/// user may not execute).
pub fn run_as(
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
    uid: Option<u32>,
) -> Option<Output> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(uid) = uid {
        cmd.uid(uid).gid(uid);
    }
    let mut child = cmd.spawn().ok()?;
    let mut out = child.stdout.take()?;
    let mut err = child.stderr.take()?;
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let deadline = std::time::Instant::now() + LIMIT;
    let status = loop {
        if let Some(s) = child.try_wait().ok()? {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{program} {args:?} did not finish within {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Some(Output {
        status,
        stdout: reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
    })
}

/// One stored netperf test: `test` to 127.0.0.1 started at `started`,
/// measuring `metric.0` = `metric.1`, on `kernel` with GRO `gro` on lo,
/// tagged `tag`.
pub fn netperf_point(
    started: &str,
    test: &str,
    metric: (&str, f64),
    kernel: &str,
    gro: bool,
    tag: &str,
) -> netperf_ng::resultsdb::StoredResult {
    use netperf_ng::net::offload::OffloadSnapshot;
    let id = uuid(ids());
    let snapshot = OffloadSnapshot {
        interface: "lo".into(),
        features: BTreeMap::from([("gro".to_string(), gro), ("tso".to_string(), true)]),
        mtu: Some(65536),
    };
    netperf_ng::resultsdb::StoredResult {
        id: id.clone(),
        kind: netperf_ng::resultsdb::Kind::Netperf,
        test: test.into(),
        host: "127.0.0.1".into(),
        kernel: kernel.into(),
        title: format!("{test} to 127.0.0.1"),
        started: started.into(),
        ended: started.into(),
        status: "complete".into(),
        tool_version: "0.1.0".into(),
        command_line: vec!["netperf".into()],
        tags: vec![tag.into()],
        factors: vec![],
        runs: vec![RunRecord {
            id: id.clone(),
            order: 0,
            cell: vec![],
            replicate: 1,
            started: started.into(),
            ended: started.into(),
            status: RunStatus::Ok,
            metrics: BTreeMap::from([
                (metric.0.to_string(), metric.1),
                ("LOCAL_CPU_COUNT".to_string(), 2.0),
            ]),
            facts: BTreeMap::from([
                ("THROUGHPUT_UNITS".to_string(), "10^6bits/s".to_string()),
                ("LOCAL_CONG_CONTROL".to_string(), "cubic".to_string()),
                ("UUID".to_string(), id),
            ]),
            offloads: OffloadRecord {
                local: Some(snapshot),
                remote: None,
            },
            commands: vec![],
        }],
        document: None,
    }
}
