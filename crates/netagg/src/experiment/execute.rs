//! One run of one cell: its netperf processes started at once, bounded in
//! time, their `-k` output read into metrics and facts, and several
//! streams combined into one result (sums of rates, CPU averaged, service
//! demand computed for the total from its inputs; latency percentiles dropped, as a
//! multi-stream run's come from its streams' merged histograms in
//! `latency_merge`, which runs its streams through here). A run that gives
//! no throughput is a failure with its reason, never a zero.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use netperf_data::measure::aggregate;
use netperf_data::measure::demand::{charged_cpus, service_demand_of_rate, DemandUnit, Precision};

/// Selectors whose values are text even when they look like numbers.
const TEXT_SELECTORS: &[&str] = &["RESULT_BRAND", "UUID", "LOCAL_RELEASE", "REMOTE_RELEASE"];

/// How streams' values combine into the run's value.
#[derive(Clone, Copy)]
enum Combine {
    Sum,
    Mean,
    Max,
}

/// Metrics that add up across concurrent streams, and those that do not;
/// everything else (sizes, MSS, CPU counts) is the first stream's. Latency
/// percentiles cannot be merged from per-process percentiles: `combine`
/// drops them, and a multi-stream run's come from the streams' merged
/// histograms instead (`latency_merge::run_streams_merging_latency`).
const COMBINE: &[(&str, Combine)] = &[
    ("THROUGHPUT", Combine::Sum),
    ("LOCAL_SEND_THROUGHPUT", Combine::Sum),
    ("LOCAL_RECV_THROUGHPUT", Combine::Sum),
    ("REMOTE_SEND_THROUGHPUT", Combine::Sum),
    ("REMOTE_RECV_THROUGHPUT", Combine::Sum),
    ("LOCAL_SEND_CALLS", Combine::Sum),
    ("LOCAL_RECV_CALLS", Combine::Sum),
    ("REMOTE_SEND_CALLS", Combine::Sum),
    ("REMOTE_RECV_CALLS", Combine::Sum),
    ("LOCAL_BYTES_SENT", Combine::Sum),
    ("LOCAL_BYTES_RECVD", Combine::Sum),
    ("REMOTE_BYTES_SENT", Combine::Sum),
    ("REMOTE_BYTES_RECVD", Combine::Sum),
    ("TRANSACTION_RATE", Combine::Sum),
    ("LOCAL_TRANSPORT_RETRANS", Combine::Sum),
    ("REMOTE_TRANSPORT_RETRANS", Combine::Sum),
    ("LOCAL_CPU_UTIL", Combine::Mean),
    ("REMOTE_CPU_UTIL", Combine::Mean),
    ("ELAPSED_TIME", Combine::Max),
    ("LOCAL_CPU_PEAK_UTIL", Combine::Max),
    ("REMOTE_CPU_PEAK_UTIL", Combine::Max),
];

/// Per-process latency statistics that do not merge across streams; a
/// multi-stream run's are computed from the merged histograms.
const UNMERGEABLE: &[&str] = &["MEAN_LATENCY", "P50_LATENCY", "P90_LATENCY", "P99_LATENCY"];

/// Service demands, and the CPU utilization and CPU count each charges.
const SERVICE_DEMANDS: &[(&str, &str, &str)] = &[
    ("LOCAL_SD", "LOCAL_CPU_UTIL", "LOCAL_CPU_COUNT"),
    ("REMOTE_SD", "REMOTE_CPU_UTIL", "REMOTE_CPU_COUNT"),
];

/// What one run measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measured {
    pub metrics: BTreeMap<String, f64>,
    pub facts: BTreeMap<String, String>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Measured(Measured),
    Failed(String),
    Interrupted,
}

/// Runs the given netperf command lines at once and waits for all of them,
/// at most `limit`; `stop` (Ctrl-C, SIGTERM) ends them early.
pub fn run_streams(
    netperf: &Path,
    commands: &[Vec<String>],
    limit: Duration,
    stop: &AtomicBool,
) -> Outcome {
    match measure_streams(netperf, commands, limit, stop) {
        Ok(streams) => Outcome::Measured(combine(streams)),
        Err(ended) => ended,
    }
}

/// `run_streams` before the streams combine: each stream's own result, or
/// how the run ended without them (failed or interrupted).
pub fn measure_streams(
    netperf: &Path,
    commands: &[Vec<String>],
    limit: Duration,
    stop: &AtomicBool,
) -> Result<Vec<Measured>, Outcome> {
    let mut running: Vec<Running> = Vec::new();
    for args in commands {
        match start(netperf, args) {
            Ok(r) => running.push(r),
            Err(e) => {
                running.into_iter().for_each(Running::kill);
                return Err(Outcome::Failed(format!(
                    "cannot start {}: {e}",
                    netperf.display()
                )));
            }
        }
    }
    let deadline = Instant::now() + limit;
    let mut timed_out = false;
    while running.iter_mut().any(|r| r.status.is_none()) {
        for r in running.iter_mut().filter(|r| r.status.is_none()) {
            if let Ok(Some(status)) = r.child.try_wait() {
                r.status = Some(status.code().unwrap_or(-1));
            }
        }
        if stop.load(Ordering::Relaxed) || Instant::now() >= deadline {
            timed_out = !stop.load(Ordering::Relaxed);
            for r in running.iter_mut().filter(|r| r.status.is_none()) {
                r.kill_group();
                r.status = r.child.wait().ok().map(|s| s.code().unwrap_or(-1));
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let finished: Vec<(i32, String, String)> = running.into_iter().map(Running::collect).collect();
    if stop.load(Ordering::Relaxed) {
        return Err(Outcome::Interrupted);
    }
    if timed_out {
        return Err(Outcome::Failed(format!(
            "netperf did not finish within {} s; killed",
            limit.as_secs()
        )));
    }
    let mut streams = Vec::new();
    for (i, (code, stdout, stderr)) in finished.iter().enumerate() {
        let which = if finished.len() > 1 {
            format!("stream {}: ", i + 1)
        } else {
            String::new()
        };
        let measured = parse_keyval(stdout);
        if *code != 0 {
            return Err(Outcome::Failed(format!(
                "{which}netperf exited with status {code}: {}",
                last_line(stderr, stdout)
            )));
        }
        if !measured.metrics.contains_key("THROUGHPUT") {
            return Err(Outcome::Failed(format!(
                "{which}netperf reported no throughput: {}",
                last_line(stderr, stdout)
            )));
        }
        streams.push(measured);
    }
    Ok(streams)
}

/// A started netperf with its output being read.
pub(super) struct Running {
    pub(super) child: Child,
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
    pub(super) status: Option<i32>,
}

/// Most output kept per stream: `-k` output is a few KiB.
const MAX_OUTPUT: u64 = 1 << 20;

pub(super) fn start(netperf: &Path, args: &[String]) -> std::io::Result<Running> {
    // Its own process group, so a stop or a timeout ends whatever it
    // started too, and the output pipes close.
    let mut child = Command::new(netperf)
        .args(args)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        pipe.map(|p| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut limited = p.take(MAX_OUTPUT);
                let _ = limited.read_to_end(&mut buf);
                // Drain the rest so the child never blocks on a full pipe.
                let _ = std::io::copy(&mut limited.into_inner(), &mut std::io::sink());
                buf
            })
        })
    };
    let stdout = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    Ok(Running {
        child,
        stdout,
        stderr,
        status: None,
    })
}

impl Running {
    fn kill(mut self) {
        self.kill_group();
        let _ = self.child.wait();
    }

    pub(super) fn kill_group(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) on the group this child leads; no memory involved.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        let _ = self.child.kill();
    }

    pub(super) fn collect(self) -> (i32, String, String) {
        let text = |h: Option<JoinHandle<Vec<u8>>>| {
            h.and_then(|h| h.join().ok())
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default()
        };
        (
            self.status.unwrap_or(-1),
            text(self.stdout),
            text(self.stderr),
        )
    }
}

/// The last non-empty line of stderr (else stdout), for a failure's reason.
fn last_line(stderr: &str, stdout: &str) -> String {
    [stderr, stdout]
        .iter()
        .find_map(|t| t.lines().rev().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("no output")
        .chars()
        .take(300)
        .collect()
}

/// netperf `-k` output: KEY=VALUE lines. Finite, non-negative numbers are
/// metrics (netperf prints -1 for what it did not measure); the rest facts.
pub fn parse_keyval(text: &str) -> Measured {
    let mut m = Measured::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty()
            || !key
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        {
            continue;
        }
        let number = value.parse::<f64>().ok().filter(|v| v.is_finite());
        match number {
            Some(v) if !TEXT_SELECTORS.contains(&key) => {
                if v >= 0.0 {
                    m.metrics.insert(key.to_string(), v);
                }
            }
            _ => {
                // netperf quotes the result brand.
                let unquoted = value
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .unwrap_or(value);
                m.facts.insert(key.to_string(), unquoted.to_string());
            }
        }
    }
    m
}

/// One result from concurrent streams: rates and counts summed (the
/// aggregate), CPU utilization averaged (every stream measures the whole
/// system), peaks the highest, and service demand computed for the
/// aggregate from its inputs (`combined_demands`). A metric some stream
/// lacks is left out.
pub fn combine(mut streams: Vec<Measured>) -> Measured {
    if streams.len() <= 1 {
        return streams.pop().unwrap_or_default();
    }
    let mut out = streams[0].clone();
    for &(key, how) in COMBINE {
        let values = || streams.iter().map(|s| s.metrics.get(key).copied());
        let all = || values().collect::<Option<Vec<f64>>>();
        let v = match how {
            Combine::Sum => aggregate::sum(values()),
            Combine::Mean => all().map(|v| v.iter().sum::<f64>() / v.len() as f64),
            Combine::Max => all().map(|v| v.into_iter().fold(f64::MIN, f64::max)),
        };
        match v {
            Some(v) => out.metrics.insert(key.to_string(), v),
            None => out.metrics.remove(key),
        };
    }
    for key in UNMERGEABLE {
        out.metrics.remove(*key);
    }
    combined_demands(&streams, &mut out);
    out.facts
        .insert("STREAMS".into(), streams.len().to_string());
    out
}

/// One stream's work per second as netperf's omni service demand charges
/// it, in bytes or transactions: its transaction rate, or the bytes this
/// end moved over the elapsed time.
fn work_rate(stream: &Measured, unit: DemandUnit) -> Option<f64> {
    let metric = |key: &str| stream.metrics.get(key).copied();
    match unit {
        DemandUnit::PerTransaction => metric("TRANSACTION_RATE"),
        DemandUnit::PerKilobyte => {
            let bytes = metric("LOCAL_BYTES_SENT")? + metric("LOCAL_BYTES_RECVD")?;
            Some(bytes / metric("ELAPSED_TIME").filter(|&t| t > 0.0)?)
        }
    }
}

/// The service demands of a run of several streams, by netperf's formula
/// (`measure::demand`) on the run's own inputs: the streams' work rates
/// summed, the averaged utilization (already in `out`) and the CPU count
/// (netperf's: a side that reports none is charged the local count). Left
/// out where the first stream has none or an input is missing.
fn combined_demands(streams: &[Measured], out: &mut Measured) {
    let unit = out
        .facts
        .get("SD_UNITS")
        .and_then(|text| DemandUnit::from_omni_label(text));
    let rate = unit.and_then(|u| aggregate::sum(streams.iter().map(|s| work_rate(s, u))));
    // Counts are whole and non-negative (parse_keyval keeps no negatives).
    let count_of = |m: &Measured, key: &str| {
        m.metrics
            .get(key)
            .map(|&n| n.min(f64::from(u32::MAX)) as u32)
    };
    let local_cpus = count_of(out, "LOCAL_CPU_COUNT");
    for &(sd, util, count) in SERVICE_DEMANDS {
        let cpus = count_of(out, count)
            .or(local_cpus)
            .map(|n| charged_cpus(n, local_cpus.unwrap_or(0)));
        let demand = match (unit, rate, out.metrics.get(util), cpus) {
            (Some(unit), Some(rate), Some(&util), Some(cpus))
                if out.metrics.contains_key(sd) && rate > 0.0 =>
            {
                Some(service_demand_of_rate(
                    rate,
                    unit,
                    util,
                    cpus,
                    Precision::Double,
                ))
            }
            _ => None,
        };
        match demand {
            Some(d) => out.metrics.insert(sd.to_string(), d),
            None => out.metrics.remove(sd),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyval_output_splits_into_metrics_and_facts() {
        let m = parse_keyval("THROUGHPUT=9412.31\nTHROUGHPUT_UNITS=10^6bits/s\nRESULT_BRAND=\"1024\"\nLOCAL_SD=-1.000\nLOCAL_CPU_UTIL=12.5\nnoise line\nlower=1\n");
        assert_eq!(m.metrics.get("THROUGHPUT"), Some(&9412.31));
        assert_eq!(m.metrics.get("LOCAL_CPU_UTIL"), Some(&12.5));
        assert!(!m.metrics.contains_key("LOCAL_SD"), "-1 means not measured");
        assert_eq!(
            m.facts.get("RESULT_BRAND").map(String::as_str),
            Some("1024")
        );
        assert_eq!(
            m.facts.get("THROUGHPUT_UNITS").map(String::as_str),
            Some("10^6bits/s")
        );
        assert!(!m.facts.contains_key("lower"));
    }

    #[test]
    fn streams_combine_with_service_demand_recomputed() {
        let one = parse_keyval(
            "THROUGHPUT=1000\nLOCAL_CPU_UTIL=10\nLOCAL_SD=2.0\nP99_LATENCY=5\nTRANSPORT_MSS=1448\n\
             SD_UNITS=usec/KB\nLOCAL_BYTES_SENT=2048000\nLOCAL_BYTES_RECVD=0\nELAPSED_TIME=2.00\n\
             LOCAL_CPU_COUNT=2\nREMOTE_CPU_UTIL=30\nREMOTE_SD=4.5\nREMOTE_CPU_COUNT=0\n",
        );
        let two = parse_keyval(
            "THROUGHPUT=3000\nLOCAL_CPU_UTIL=20\nLOCAL_SD=1.3\nP99_LATENCY=9\nTRANSPORT_MSS=1448\n\
             SD_UNITS=usec/KB\nLOCAL_BYTES_SENT=3072000\nLOCAL_BYTES_RECVD=0\nELAPSED_TIME=1.00\n\
             LOCAL_CPU_COUNT=2\nREMOTE_CPU_UTIL=50\nREMOTE_SD=3.1\nREMOTE_CPU_COUNT=0\n",
        );
        let c = combine(vec![one.clone(), two.clone()]);
        assert_eq!(c.metrics["THROUGHPUT"], 4000.0);
        assert_eq!(c.metrics["LOCAL_CPU_UTIL"], 15.0);
        assert_eq!(c.metrics["LOCAL_BYTES_SENT"], 5_120_000.0);
        assert_eq!(c.metrics["ELAPSED_TIME"], 2.0);
        // 1000 + 3000 KB/s at 15 % of 2 CPUs: 300,000 us/s over 4000 KB/s.
        assert_eq!(c.metrics["LOCAL_SD"], 75.0);
        // The remote side reports no CPU count: it is charged the local one.
        assert_eq!(c.metrics["REMOTE_SD"], 200.0);
        assert!(!c.metrics.contains_key("P99_LATENCY"));
        assert_eq!(c.metrics["TRANSPORT_MSS"], 1448.0);
        assert_eq!(c.facts["STREAMS"], "2");
        // Per transaction: the transaction rates add up.
        let rr = |rate: &str| {
            parse_keyval(&format!(
                "THROUGHPUT={rate}\nTRANSACTION_RATE={rate}\nLOCAL_CPU_UTIL=25\nLOCAL_SD=9\n\
                 SD_UNITS=usec/Tran\nLOCAL_CPU_COUNT=4\n"
            ))
        };
        let c = combine(vec![rr("1500"), rr("2500")]);
        assert_eq!(c.metrics["TRANSACTION_RATE"], 4000.0);
        assert_eq!(c.metrics["LOCAL_SD"], 250.0);
        // A stream without its bytes, a run without CPU or units: no demand.
        let mut partial = two.clone();
        partial.metrics.remove("LOCAL_BYTES_SENT");
        let c = combine(vec![one.clone(), partial]);
        assert!(!c.metrics.contains_key("LOCAL_SD") && !c.metrics.contains_key("LOCAL_BYTES_SENT"));
        let mut unitless = one.clone();
        unitless.facts.remove("SD_UNITS");
        let c = combine(vec![unitless, two.clone()]);
        assert!(!c.metrics.contains_key("LOCAL_SD"));
        let mut idle = one;
        idle.metrics.insert("LOCAL_BYTES_SENT".into(), 0.0);
        let mut idle_too = two;
        idle_too.metrics.insert("LOCAL_BYTES_SENT".into(), 0.0);
        let c = combine(vec![idle, idle_too]);
        assert!(
            !c.metrics.contains_key("LOCAL_SD"),
            "nothing moved: no demand"
        );
    }

    #[test]
    fn a_missing_program_or_a_failing_one_is_a_failure_with_its_reason() {
        let stop = AtomicBool::new(false);
        let out = run_streams(
            Path::new("/nonexistent/netperf"),
            &[vec![]],
            Duration::from_secs(5),
            &stop,
        );
        assert!(
            matches!(&out, Outcome::Failed(r) if r.contains("cannot start")),
            "{out:?}"
        );
        let sh = Path::new("/bin/sh");
        let failing = vec![
            "-c".to_string(),
            "echo 'netperf: no route' >&2; exit 3".to_string(),
        ];
        let out = run_streams(sh, &[failing], Duration::from_secs(5), &stop);
        assert_eq!(
            out,
            Outcome::Failed("netperf exited with status 3: netperf: no route".into())
        );
        let silent = vec!["-c".to_string(), "echo LOCAL_SD=1".to_string()];
        let out = run_streams(sh, &[silent], Duration::from_secs(5), &stop);
        assert!(
            matches!(&out, Outcome::Failed(r) if r.contains("no throughput")),
            "{out:?}"
        );
        let slow = vec!["-c".to_string(), "sleep 30".to_string()];
        let out = run_streams(sh, &[slow], Duration::from_millis(200), &stop);
        assert!(
            matches!(&out, Outcome::Failed(r) if r.contains("killed")),
            "{out:?}"
        );
        let ok = vec!["-c".to_string(), "echo THROUGHPUT=5".to_string()];
        let out = run_streams(sh, &[ok.clone(), ok], Duration::from_secs(5), &stop);
        assert!(
            matches!(&out, Outcome::Measured(m) if m.metrics["THROUGHPUT"] == 10.0),
            "{out:?}"
        );
        stop.store(true, Ordering::Relaxed);
        let out = run_streams(
            sh,
            &[vec!["-c".to_string(), "sleep 30".to_string()]],
            Duration::from_secs(60),
            &stop,
        );
        assert_eq!(out, Outcome::Interrupted);
    }
}
