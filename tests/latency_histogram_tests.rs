//! Latency histograms end to end on loopback: `netperf -- --latency-histogram
//! FILE` writes an HdrHistogram interval log that an independent reader
//! (the Python `hdrhistogram` package) decodes with every transaction in
//! it, and a two-stream TCP_RR cell of `netagg experiment` reports the
//! P50/P90/P99 of the union of its streams' histograms, as that reader
//! computes them from the very files the streams wrote. With a netperf that
//! cannot write histograms (stock 2.7.1), the cell runs and reports no
//! percentiles, saying why.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::NETAGG;
use common::NETPERF;
const READER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/python/hdr_log_percentiles.py"
);

/// A scratch directory removed when the test ends, also when it fails.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("nglat-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What the independent reader found in a set of histogram logs.
#[derive(Debug)]
struct Reading {
    counts: Vec<u64>,
    p50_ns: u64,
    p90_ns: u64,
    p99_ns: u64,
    mean_ns: f64,
}

/// The Python package, installed from PyPI when missing. Where it cannot
/// be, the running test skips the independent reading and netperf-ng's own
/// log reader stands in (the same code that wrote the logs).
fn python_reader_usable() -> bool {
    let present = || install::python_imports("hdrh.log");
    match install::ensure(install::From::Pip, "hdrhistogram", present) {
        Ok(()) => true,
        Err(why) => {
            skip(format!(
                "the independent reading (Python hdrhistogram); netperf-ng's own reader read the logs instead: {why}"
            ));
            false
        }
    }
}

/// The logs' merged percentiles, read by Python's hdrhistogram (or, if it
/// cannot be had, by netperf-ng's own log reader).
fn read_logs(files: &[PathBuf]) -> Reading {
    if python_reader_usable() {
        let mut args = vec![READER];
        args.extend(files.iter().map(|f| f.to_str().unwrap()));
        let out = run_with_limit("python3", &args, Duration::from_secs(60));
        assert!(out.status.success(), "{}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"));
        return Reading {
            counts: v["counts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_u64().unwrap())
                .collect(),
            p50_ns: n("p50_ns"),
            p90_ns: n("p90_ns"),
            p99_ns: n("p99_ns"),
            mean_ns: v["mean_ns"].as_f64().unwrap(),
        };
    }
    let logs: Vec<_> = files
        .iter()
        .map(|f| netperf_ng::measure::latency_log::read(f).unwrap())
        .collect();
    let mut merged = logs[0].clone();
    logs[1..].iter().for_each(|h| merged.add(h).unwrap());
    Reading {
        counts: logs.iter().map(|h| h.len()).collect(),
        p50_ns: merged.value_at_quantile(0.50),
        p90_ns: merged.value_at_quantile(0.90),
        p99_ns: merged.value_at_quantile(0.99),
        mean_ns: merged.mean(),
    }
}

/// Whole microseconds, as netperf prints its percentiles.
fn whole_us(ns: u64) -> f64 {
    (ns as f64 / 1_000.0).round()
}

fn keyval(stdout: &str, key: &str) -> f64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {stdout}"))
}

#[test]
fn netperf_writes_a_log_every_transaction_is_in() {
    let server = Server::start("127.0.0.1");
    let scratch = Scratch::new("one");
    let log = scratch.path("rr.hlog");
    let selectors = "-k P50_LATENCY,LATENCY_SAMPLES,TRANSACTION_RATE";
    let mut args: Vec<&str> = vec!["-t", "TCP_RR", "-l", "-300", "--"];
    args.extend(selectors.split(' '));
    let plain = run_ok(&server, &args);
    args.extend(["--latency-histogram", log.to_str().unwrap()]);
    let with_log = run_ok(&server, &args);
    // The output is netperf's, the same lines with or without the log.
    let keys = |s: &str| -> Vec<String> {
        s.lines()
            .map(|l| l.split('=').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(keys(&plain), keys(&with_log));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.starts_with("#netperf-ng latency histogram: values in nanoseconds\n"),
        "{text}"
    );
    let reading = read_logs(&[log]);
    assert_eq!(reading.counts, [300], "{reading:?}");
    assert_eq!(keyval(&with_log, "LATENCY_SAMPLES"), 300.0);
    assert_eq!(
        keyval(&with_log, "P50_LATENCY"),
        whole_us(reading.p50_ns),
        "{reading:?}\n{with_log}"
    );
}

#[test]
fn netperf_refuses_a_file_it_cannot_write_before_the_test() {
    let server = Server::start("127.0.0.1");
    let out = netperf(
        &server,
        &[
            "-t",
            "TCP_RR",
            "-l",
            "-10",
            "--",
            "--latency-histogram",
            "/nonexistent-dir/x.hlog",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--latency-histogram: cannot create /nonexistent-dir/x.hlog"),
        "{stderr}"
    );
    assert!(text(&out.stdout).is_empty(), "no test ran");
    let out = netperf(&server, &["-t", "TCP_RR", "--", "--latency-histogram"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("needs a value"));
}

/// A netperf that runs ours and keeps a copy of each histogram it wrote
/// (the experiment removes its temporary directory after the run).
fn keeping_wrapper(scratch: &Scratch) -> PathBuf {
    let kept = scratch.path("kept");
    std::fs::create_dir_all(&kept).unwrap();
    let script = format!(
        "#!/bin/sh\n\"{NETPERF}\" \"$@\"\nrc=$?\nprev=\nfor a in \"$@\"; do\n  if [ \"$prev\" = --latency-histogram ]; then cp \"$a\" \"{}/\"; fi\n  prev=$a\ndone\nexit $rc\n",
        kept.display()
    );
    let wrapper = scratch.path("netperf");
    std::fs::write(&wrapper, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    wrapper
}

/// Runs a one-cell experiment of two TCP_RR streams with `netperf`; its
/// only run record.
fn two_stream_rr_run(server: &Server, scratch: &Scratch, netperf: &Path) -> serde_json::Value {
    let out = scratch.path("out");
    let port = server.port.to_string();
    let run = run_with_limit(
        &NETAGG,
        &[
            "experiment",
            "--host",
            "127.0.0.1",
            "--port",
            &port,
            "--factor",
            "test=TCP_RR",
            "--factor",
            "streams=2",
            "--replicates",
            "1",
            "--duration",
            "1",
            "--settle",
            "0",
            "--seed",
            "5",
            "--netperf",
            netperf.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--no-store",
        ],
        Duration::from_secs(120),
    );
    assert!(
        run.status.success(),
        "{}{}",
        text(&run.stderr),
        text(&run.stdout)
    );
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("experiment.json")).unwrap())
            .unwrap();
    let runs = record["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{record}");
    assert_eq!(runs[0]["status"], "ok", "{}", runs[0]);
    runs[0].clone()
}

#[test]
fn a_two_stream_rr_cell_reports_the_percentiles_of_the_merged_histograms() {
    let server = Server::start("127.0.0.1");
    let scratch = Scratch::new("merge");
    let wrapper = keeping_wrapper(&scratch);
    let run = two_stream_rr_run(&server, &scratch, &wrapper);
    let metrics = &run["metrics"];
    assert_eq!(
        run["facts"]["LATENCY_SOURCE"], "merged histograms of 2 streams",
        "{run}"
    );
    let kept = scratch.path("kept");
    let files = [kept.join("stream-1.hlog"), kept.join("stream-2.hlog")];
    let reading = read_logs(&files);
    assert_eq!(reading.counts.len(), 2);
    assert!(reading.counts.iter().all(|&c| c > 0), "{reading:?}");
    for (key, ns) in [
        ("P50_LATENCY", reading.p50_ns),
        ("P90_LATENCY", reading.p90_ns),
        ("P99_LATENCY", reading.p99_ns),
    ] {
        assert_eq!(
            metrics[key].as_f64(),
            Some(whole_us(ns)),
            "{key}: {reading:?}\n{run}"
        );
    }
    // The mean is the streams' exact means weighted by their counts; the
    // histogram's own mean is within its bucket resolution (0.1%) of it.
    let mean_us = metrics["MEAN_LATENCY"].as_f64().unwrap();
    let hist_mean_us = reading.mean_ns / 1_000.0;
    assert!(
        (mean_us - hist_mean_us).abs() <= hist_mean_us * 0.01 + 0.01,
        "{mean_us} vs {hist_mean_us}"
    );
    // The run's temporary histogram directory is gone.
    for command in run["commands"].as_array().unwrap() {
        let words: Vec<&str> = command
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        let at = words
            .iter()
            .position(|w| *w == "--latency-histogram")
            .unwrap_or_else(|| panic!("{words:?}"));
        let file = Path::new(words[at + 1]);
        assert!(!file.parent().unwrap().exists(), "{} left", file.display());
    }
}

#[test]
fn a_stock_netperf_runs_the_cell_and_reports_no_percentiles() {
    let Some(stock) = stock_dir().map(|d| PathBuf::from(d).join("netperf")) else {
        return;
    };
    let server = Server::start("127.0.0.1");
    let scratch = Scratch::new("stock");
    let run = two_stream_rr_run(&server, &scratch, &stock);
    for key in ["P50_LATENCY", "P90_LATENCY", "P99_LATENCY", "MEAN_LATENCY"] {
        assert!(run["metrics"][key].is_null(), "{key}: {run}");
    }
    let why = run["facts"]["LATENCY_SOURCE"].as_str().unwrap();
    assert!(
        why.starts_with("none: ") && why.contains("not netperf-ng"),
        "{why}"
    );
    assert!(run["metrics"]["TRANSACTION_RATE"].as_f64().unwrap() > 0.0);
}
