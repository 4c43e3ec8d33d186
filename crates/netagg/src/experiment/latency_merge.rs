//! Latency of a multi-stream run from its streams' merged histograms. Each
//! stream's netperf writes its HDR histogram (`-- --latency-histogram
//! FILE`) into a temporary directory of the run; the run's P50/P90/P99 are
//! those of the union of every stream's samples, never an average of
//! per-process percentiles (which is no percentile of anything), and its
//! mean is the stream means weighted by their sample counts. When a
//! histogram is missing or unreadable, or the netperf cannot write one (a
//! stock netperf), the run reports no latency and its `LATENCY_SOURCE` fact
//! says why.

use super::execute::{combine, measure_streams, start, Measured, Outcome};
use netperf_data::measure::{latency, latency_log};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// The run's fact naming where its latency figures come from.
pub const SOURCE_FACT: &str = "LATENCY_SOURCE";

/// The netperf-ng option that writes a stream's histogram.
const OPTION: &str = "--latency-histogram";

/// How long asking a netperf for its extensions may take.
const PROBE_LIMIT: Duration = Duration::from_secs(10);

/// Where a multi-stream run's latency comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamLatency {
    /// Each stream's histogram file, in stream order.
    Files(Vec<PathBuf>),
    /// None can be had, and why.
    Unavailable(String),
}

/// `execute::run_streams`, and for several streams the run's latency from
/// `latency` (each stream's histogram file, or why there is none), recorded
/// with its source in the `LATENCY_SOURCE` fact.
pub fn run_streams_merging_latency(
    netperf: &Path,
    commands: &[Vec<String>],
    latency: Option<&StreamLatency>,
    limit: Duration,
    stop: &AtomicBool,
) -> Outcome {
    let streams = match measure_streams(netperf, commands, limit, stop) {
        Ok(streams) => streams,
        Err(ended) => return ended,
    };
    let merged = latency
        .filter(|_| streams.len() > 1)
        .map(|source| merged_metrics(source, &streams));
    let mut run = combine(streams);
    if let Some(merged) = merged {
        apply(&mut run, merged);
    }
    Outcome::Measured(run)
}

/// Whether `netperf` is netperf-ng, which can write latency histograms:
/// its `-- --help-ext` names the option on stdout (a stock netperf prints
/// its usage; both exit 1, as netperf does after a usage text). Bounded in
/// time; anything unexpected means no.
pub fn writes_histograms(netperf: &Path) -> bool {
    let args = ["--".to_string(), "--help-ext".to_string()];
    let Ok(mut probe) = start(netperf, &args) else {
        return false;
    };
    let deadline = Instant::now() + PROBE_LIMIT;
    loop {
        match probe.child.try_wait() {
            Ok(Some(status)) => {
                probe.status = status.code();
                break;
            }
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                probe.kill_group();
                let _ = probe.child.wait();
                break;
            }
        }
    }
    let (_, stdout, _) = probe.collect();
    stdout.contains(&format!("{OPTION} FILE"))
}

/// A run's temporary directory for its streams' histograms, removed with
/// everything in it when dropped (after the run, or on any failure).
pub struct HistogramDir {
    path: PathBuf,
    files: Vec<PathBuf>,
}

impl HistogramDir {
    /// A new private directory under the system's temporary directory,
    /// with one file name per stream (the streams create the files).
    pub fn create(run_id: &str, streams: usize) -> std::io::Result<HistogramDir> {
        use std::os::unix::fs::DirBuilderExt;
        let path = std::env::temp_dir().join(format!("netagg-latency-{run_id}"));
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        let files = (1..=streams)
            .map(|i| path.join(format!("stream-{i}.hlog")))
            .collect();
        Ok(HistogramDir { path, files })
    }

    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

impl Drop for HistogramDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// For a run of several request/response streams: its histogram directory
/// and each stream's command line asking for a histogram file, or, when
/// `netperf` cannot write one or the directory cannot be made, the command
/// lines as they were and the reason the run will have no latency.
pub fn prepare(
    netperf: &Path,
    netperf_writes: bool,
    run_id: &str,
    commands: Vec<Vec<String>>,
) -> (Option<HistogramDir>, Vec<Vec<String>>, StreamLatency) {
    if !netperf_writes {
        let why = format!(
            "{} cannot write latency histograms (not netperf-ng), and percentiles of several streams come only from their merged histograms",
            netperf.display()
        );
        return (None, commands, StreamLatency::Unavailable(why));
    }
    match HistogramDir::create(run_id, commands.len()) {
        Ok(dir) => {
            let commands = commands
                .into_iter()
                .zip(dir.files())
                .map(|(args, file)| with_histogram_option(args, file))
                .collect();
            let source = StreamLatency::Files(dir.files().to_vec());
            (Some(dir), commands, source)
        }
        Err(e) => {
            let why = format!("cannot create a directory for the streams' histograms: {e}");
            (None, commands, StreamLatency::Unavailable(why))
        }
    }
}

/// `args` with `--latency-histogram FILE` first among the test options
/// (right after the first `--`, so a plan's own test options, even a
/// second `--`, stay as they were).
pub fn with_histogram_option(mut args: Vec<String>, file: &Path) -> Vec<String> {
    let at = match args.iter().position(|a| a == "--") {
        Some(i) => i + 1,
        None => {
            args.push("--".into());
            args.len()
        }
    };
    args.splice(at..at, [OPTION.to_string(), file.display().to_string()]);
    args
}

/// The run's latency metrics from `source`, given each stream's own
/// figures (for the mean); or why there are none.
pub fn merged_metrics(
    source: &StreamLatency,
    streams: &[Measured],
) -> Result<BTreeMap<String, f64>, String> {
    let files = match source {
        StreamLatency::Files(files) => files,
        StreamLatency::Unavailable(why) => return Err(why.clone()),
    };
    if files.len() != streams.len() {
        return Err(format!(
            "{} histogram files for {} streams",
            files.len(),
            streams.len()
        ));
    }
    let mut histograms = Vec::with_capacity(files.len());
    for (i, file) in files.iter().enumerate() {
        histograms.push(
            latency_log::read(file).map_err(|e| format!("stream {}'s histogram: {e}", i + 1))?,
        );
    }
    // The stream means weighted by their sample counts (none without every
    // stream's mean).
    let weighted_mean = histograms
        .iter()
        .zip(streams)
        .try_fold(0.0, |sum, (histogram, stream)| {
            let mean = stream.metrics.get("MEAN_LATENCY")?;
            Some(sum + mean * histogram.len() as f64)
        });
    let merged = latency::union(histograms)
        .map_err(|(i, e)| format!("stream {}'s histogram does not merge: {e}", i + 1))?
        .ok_or("no streams")?;
    let total = merged.len();
    if total == 0 {
        return Err("the streams recorded no latency".into());
    }
    // Whole microseconds, as netperf prints its own percentiles; a log
    // keeps no exact largest sample.
    let whole_us = |q: f64| latency::quantile_us(&merged, q, u64::MAX).round();
    let mut metrics: BTreeMap<String, f64> = [
        ("P50_LATENCY", whole_us(0.50)),
        ("P90_LATENCY", whole_us(0.90)),
        ("P99_LATENCY", whole_us(0.99)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    if let Some(sum) = weighted_mean {
        metrics.insert("MEAN_LATENCY".into(), sum / total as f64);
    }
    Ok(metrics)
}

/// Puts the merged latency (or the reason there is none) into `run`.
pub fn apply(run: &mut Measured, merged: Result<BTreeMap<String, f64>, String>) {
    let streams = run.facts.get("STREAMS").cloned().unwrap_or_default();
    let source = match merged {
        Ok(metrics) => {
            run.metrics.extend(metrics);
            format!("merged histograms of {streams} streams")
        }
        Err(why) => format!("none: {why}"),
    };
    run.facts.insert(SOURCE_FACT.into(), source);
}

#[cfg(test)]
mod tests {
    use super::*;
    use netperf_data::measure::latency::LatencyRecorder;
    use std::time::SystemTime;

    fn stream_with_mean(mean: f64) -> Measured {
        let mut m = Measured::default();
        m.metrics.insert("MEAN_LATENCY".into(), mean);
        m
    }

    fn write_log(path: &Path, samples_ns: impl IntoIterator<Item = u64>) {
        let mut r = LatencyRecorder::new();
        samples_ns.into_iter().for_each(|ns| r.record_ns(ns));
        latency_log::write(path, &r, SystemTime::now(), Duration::from_secs(1)).unwrap();
    }

    #[test]
    fn percentiles_come_from_the_union_and_the_mean_is_count_weighted() {
        let dir = HistogramDir::create(&uuid::Uuid::new_v4().to_string(), 2).unwrap();
        let (fast, slow) = (&dir.files()[0], &dir.files()[1]);
        // 900 samples at 10..=18 us (mean 14), 100 at 1 ms.
        write_log(fast, (0..900u64).map(|i| 10_000 + (i % 9) * 1_000));
        write_log(slow, (0..100).map(|_| 1_000_000));
        let streams = [stream_with_mean(14.0), stream_with_mean(1_000.0)];
        let m = merged_metrics(&StreamLatency::Files(dir.files().to_vec()), &streams).unwrap();
        assert_eq!(m["P50_LATENCY"], 14.0);
        assert_eq!(m["P90_LATENCY"], 18.0);
        assert_eq!(m["P99_LATENCY"], 1_000.0);
        assert!((m["MEAN_LATENCY"] - (0.9 * 14.0 + 0.1 * 1_000.0)).abs() < 1e-9);
        // Without a stream's mean there is no mean, the percentiles stay.
        let m = merged_metrics(
            &StreamLatency::Files(dir.files().to_vec()),
            &[stream_with_mean(14.0), Measured::default()],
        )
        .unwrap();
        assert!(!m.contains_key("MEAN_LATENCY") && m.contains_key("P99_LATENCY"));
    }

    #[test]
    fn a_missing_or_broken_histogram_gives_no_latency_and_the_reason() {
        let dir = HistogramDir::create(&uuid::Uuid::new_v4().to_string(), 2).unwrap();
        let path = dir.path.clone();
        write_log(&dir.files()[0], [5_000]);
        let streams = [stream_with_mean(5.0), stream_with_mean(5.0)];
        let source = StreamLatency::Files(dir.files().to_vec());
        let e = merged_metrics(&source, &streams).unwrap_err();
        assert!(
            e.starts_with("stream 2's histogram: ") && e.contains("stream-2.hlog"),
            "{e}"
        );
        std::fs::write(&dir.files()[1], "garbage\n").unwrap();
        let e = merged_metrics(&source, &streams).unwrap_err();
        assert!(e.contains("not an HdrHistogram interval log"), "{e}");
        let mut run = Measured::default();
        run.metrics.insert("THROUGHPUT".into(), 1.0);
        apply(&mut run, Err(e));
        assert!(run.facts[SOURCE_FACT].starts_with("none: stream 2's histogram"));
        assert!(!run.metrics.contains_key("P99_LATENCY"));
        let e = merged_metrics(&StreamLatency::Unavailable("stock".into()), &streams);
        assert_eq!(e, Err("stock".to_string()));
        drop(dir);
        assert!(!path.exists(), "the directory goes with its guard");
    }

    #[test]
    fn the_option_opens_the_test_options() {
        let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let f = Path::new("/tmp/d/stream-1.hlog");
        assert_eq!(
            with_histogram_option(words("-H h -- -d rr -- x"), f),
            words("-H h -- --latency-histogram /tmp/d/stream-1.hlog -d rr -- x")
        );
        assert_eq!(
            with_histogram_option(words("-H h"), f),
            words("-H h -- --latency-histogram /tmp/d/stream-1.hlog")
        );
    }

    #[test]
    fn several_streams_take_their_latency_from_the_source() {
        let stop = AtomicBool::new(false);
        let sh = Path::new("/bin/sh");
        // Several streams take their latency from the given source (or
        // say why there is none); one stream keeps its own figures.
        let why = StreamLatency::Unavailable("a stock netperf".into());
        let p99 = vec![
            "-c".to_string(),
            "echo THROUGHPUT=5; echo P99_LATENCY=7".to_string(),
        ];
        let pair = [p99.clone(), p99.clone()];
        let out = run_streams_merging_latency(sh, &pair, Some(&why), Duration::from_secs(5), &stop);
        let Outcome::Measured(m) = out else {
            panic!("{out:?}")
        };
        assert_eq!(m.facts["LATENCY_SOURCE"], "none: a stock netperf");
        assert!(!m.metrics.contains_key("P99_LATENCY"));
        let single = [p99];
        let out =
            run_streams_merging_latency(sh, &single, Some(&why), Duration::from_secs(5), &stop);
        let Outcome::Measured(m) = out else {
            panic!("{out:?}")
        };
        assert_eq!(m.metrics["P99_LATENCY"], 7.0);
        assert!(!m.facts.contains_key("LATENCY_SOURCE"));
    }

    #[test]
    fn only_netperf_ng_is_asked_for_histograms() {
        // netperf-ng's own answer is checked end to end in
        // tests/latency_histogram_tests.rs.
        assert!(!writes_histograms(Path::new("/nonexistent/netperf")));
        assert!(!writes_histograms(Path::new("/bin/false")));
        assert!(!writes_histograms(Path::new("/bin/echo")));
    }
}
