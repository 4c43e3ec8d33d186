//! The harnesses that drive netperf in other people's pipelines, run as they
//! run it: each one's exact command lines (test lengths shortened to 1-2 s),
//! read as that harness reads them (its splits and regular expressions,
//! re-implemented here from its public source), against our netperf and
//! netserver and, with NETPERF_STOCK_DIR, stock netperf against our
//! netserver. What the harness read must have the shape stock gives (the
//! fields, units, number formats, no zero or -1 where stock has a value),
//! recorded in tests/fixtures/harness/ (common::harness). The harnesses,
//! their sources and the lines are listed in docs/compatibility.md
//! ("Harnesses checked").

mod common;
use common::harness::*;
use common::*;
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::time::Duration;

/// One command line of a harness.
struct Case {
    /// Its name in the fixture.
    name: &'static str,
    /// The netperf arguments, placeholders as common::harness::fill fills them.
    line: &'static str,
    /// How many copies run at once (PerfKitBenchmarker's and Cilium's streams).
    streams: usize,
    /// The netserver's address.
    host: &'static str,
    /// SIGALRM this many seconds after the start (bloat.sh's `pkill -ALRM`).
    alarm: Option<u64>,
    /// What the harness reads from the runs, or what it says when it fails.
    parse: fn(&Case, &[Ran]) -> Result<Vec<Record>, String>,
}

impl Case {
    const fn one(
        name: &'static str,
        line: &'static str,
        parse: fn(&Case, &[Ran]) -> Result<Vec<Record>, String>,
    ) -> Case {
        Case {
            name,
            line,
            streams: 1,
            host: "127.0.0.1",
            alarm: None,
            parse,
        }
    }

    fn run(&self, pair: &Pair) -> Vec<Ran> {
        run_line(
            pair,
            self.host,
            self.line,
            self.streams,
            self.alarm.map(Duration::from_secs),
            Duration::from_secs(60),
        )
    }
}

/// Run every case of a harness (at once: they are 1-3 s each and the checks
/// compare shapes, not rates) with each pairing to check, and fail with
/// every difference from stock's recorded shapes; with
/// NETPERF_NG_WRITE_HARNESS=1, record stock's shapes first.
fn check_harness(h: &Harness) {
    let Harness {
        name: harness,
        source,
        cases,
        slow_secs,
    } = *h;
    if fast_tier_skips(&format!("slow ({slow_secs} s)")) {
        return;
    }
    if recording() {
        let Some(dir) = stock_dir() else { return };
        let pair = Pair::StockToStock(dir);
        let (mut recorded, mut outputs) = (BTreeMap::new(), BTreeMap::new());
        std::thread::scope(|s| {
            let handles: Vec<_> = cases
                .iter()
                .map(|case| {
                    let pair = &pair;
                    s.spawn(move || {
                        let mut all = Vec::new();
                        let mut first = None;
                        for _ in 0..RECORDED_RUNS {
                            let ran = case.run(pair);
                            let records = (case.parse)(case, &ran).unwrap_or_else(|e| {
                                panic!("{}: stock: {harness} fails: {e}\n{}", case.name, said(&ran))
                            });
                            all.extend(records.into_iter().map(|r| with_exit(r, &ran)));
                            first.get_or_insert(ran);
                        }
                        (case.name.to_string(), all, first.unwrap())
                    })
                })
                .collect();
            for h in handles {
                let (name, all, first) = h.join().unwrap();
                recorded.insert(name.clone(), all);
                outputs.insert(name, first);
            }
        });
        write(harness, source, &recorded);
        write_outputs(harness, &outputs);
    }
    // Every pairing's lines run at once (the checks compare shapes, not
    // rates), and all of them before the test fails: one report says which
    // lines fail with ours and which with stock's netperf too.
    let pairs = Pair::to_check();
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = pairs
            .iter()
            .flat_map(|pair| cases.iter().map(move |case| (pair, case)))
            .map(|(pair, case)| {
                s.spawn(move || {
                    check_case(harness, case, pair).map(|f| format!("{}: {f}", pair.label()))
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{harness}: {} of {} runs read differently from stock:\n\n{}",
        failures.len(),
        pairs.len() * cases.len(),
        failures.join("\n\n")
    );
}

/// One case with one pairing: what went wrong, if anything.
fn check_case(harness: &str, case: &Case, pair: &Pair) -> Option<String> {
    let ran = case.run(pair);
    let problems = match (case.parse)(case, &ran) {
        Err(e) => vec![format!("{harness} fails: {e}")],
        Ok(records) => records
            .into_iter()
            .flat_map(|r| differences(harness, case.name, &with_exit(r, &ran)))
            .collect(),
    };
    (!problems.is_empty()).then(|| {
        format!(
            "[{}] {}\n  {}\n{}",
            case.name,
            case.line,
            problems.join("\n  "),
            said(&ran)
        )
    })
}

/// The record with each run's exit status (every harness here fails a run
/// that does not exit 0, or records its output as a failure).
fn with_exit(mut record: Record, ran: &[Ran]) -> Record {
    let mut codes: Vec<String> = ran
        .iter()
        .map(|r| r.code.map_or("signal".into(), |c| c.to_string()))
        .collect();
    codes.dedup();
    record.push(("exit".into(), codes.join("/")));
    record
}

fn said(ran: &[Ran]) -> String {
    ran.iter().map(Ran::said).collect::<Vec<_>>().join("\n")
}

// ---------------------------------------------------------------------------
// PerfKitBenchmarker: perfkitbenchmarker/linux_benchmarks/netperf_benchmark.py
// (RunNetperf builds the line, ParseNetperfOutput and _HistogramStatsCalculator
// read it) and linux_packages/netperf.py (ParseHistogram).

const PKB: &str = "GoogleCloudPlatform/PerfKitBenchmarker perfkitbenchmarker/linux_benchmarks/netperf_benchmark.py, linux_packages/netperf.py";

/// PKB's selector list (OUTPUT_SELECTOR): any user of its parser must ask for these.
macro_rules! pkb_line {
    ($head:literal, $tail:literal) => {
        concat!(
            "-p {P} -j ",
            $head,
            " -- ",
            $tail,
            " -P ,{D} -o THROUGHPUT,THROUGHPUT_UNITS,P50_LATENCY,P90_LATENCY,P99_LATENCY,",
            "STDDEV_LATENCY,MIN_LATENCY,MAX_LATENCY,CONFIDENCE_ITERATION,THROUGHPUT_CONFID,",
            "LOCAL_TRANSPORT_RETRANS,REMOTE_TRANSPORT_RETRANS,TRANSPORT_MSS"
        )
    };
}

/// The benchmark a case stands for (its name up to the first '/').
fn benchmark(case: &Case) -> &str {
    case.name.split('/').next().unwrap()
}

/// ParseNetperfOutput: a banner line starting OMNI or MIGRATED, then a CSV
/// header and row read by csv.DictReader; float() of Throughput and, for a
/// transaction rate, of each latency present; the units must be one of two;
/// the metadata keys must be there (a KeyError otherwise), and with several
/// streams int() of the retransmissions. With -v2 (not the STREAM tests)
/// ParseHistogram's regex and int() of every bucket, and
/// _HistogramStatsCalculator's percentiles over the buckets.
fn pkb_parse(case: &Case, ran: &[Ran]) -> Result<Vec<Record>, String> {
    let name = benchmark(case);
    let histograms = !name.ends_with("STREAM");
    ran.iter()
        .map(|r| {
            let mut lines = r.stdout.lines();
            let banner = lines.next().unwrap_or_default();
            if !(banner.starts_with("OMNI") || banner.starts_with("MIGRATED")) {
                return Err(format!("banner {banner:?}: KnownIntermittentError"));
            }
            let header = lines.next().ok_or("no CSV header: StopIteration")?;
            let row = lines.next().ok_or("no CSV row: StopIteration")?;
            let keys: Vec<&str> = header.split(',').collect();
            let values: Vec<&str> = row.split(',').collect();
            if keys.len() != values.len() {
                return Err(format!("{} keys, {} values", keys.len(), values.len()));
            }
            let results: BTreeMap<&str, &str> = keys.iter().copied().zip(values).collect();
            let get = |k: &str| results.get(k).copied().ok_or(format!("KeyError: {k}"));
            let float = |k: &str| -> Result<f64, String> {
                let v = get(k)?;
                v.parse().map_err(|_| format!("float({v:?}) of {k}"))
            };
            float("Throughput")?;
            let units = get("Throughput Units")?;
            if units != "10^6bits/s" && units != "Trans/s" {
                return Err(format!("unrecognized throughput units {units}: ValueError"));
            }
            let mut meta = vec![
                "Confidence Iterations Run",
                "Throughput Confidence Width (%)",
            ];
            if name.contains("TCP") {
                meta.extend([
                    "Local Transport Retransmissions",
                    "Remote Transport Retransmissions",
                    "Transport MSS bytes",
                ]);
            }
            for k in meta {
                get(k)?;
            }
            if case.streams > 1 && name.contains("TCP") {
                for k in [
                    "Local Transport Retransmissions",
                    "Remote Transport Retransmissions",
                ] {
                    get(k)?
                        .parse::<i64>()
                        .map_err(|_| format!("int() of {k}"))?;
                }
            }
            if units == "Trans/s" {
                for k in keys.iter().filter(|k| k.contains("Latency Microseconds")) {
                    float(k)?;
                }
            }
            let mut record: Record = results
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            if histograms {
                let hist = pkb_histogram(&r.stdout)?;
                let total: u64 = hist.iter().map(|(_, n)| n).sum();
                if total == 0 {
                    return Err("an empty latency histogram: no percentiles".into());
                }
                pkb_percentiles(&hist)?;
                record.push(("(histogram count)".into(), total.to_string()));
                pkb_histogram_covers_the_test(case, &results, total)?;
            }
            Ok(record)
        })
        .collect()
}

/// ParseHistogram: the text from UNIT_USEC to >100_SECS, each line's
/// buckets after its first ':' read by int(); bucket i of row k is the
/// latency i * 10^(k+1)/buckets us.
fn pkb_histogram(stdout: &str) -> Result<Vec<(f64, u64)>, String> {
    let start = stdout
        .find("UNIT_USEC")
        .ok_or("no UNIT_USEC: NoMatchError")?;
    let end = stdout[start..]
        .find(">100_SECS")
        .ok_or("no >100_SECS: NoMatchError")?;
    let mut row_size = 10.0;
    let mut hist = Vec::new();
    for line in stdout[start..start + end].lines() {
        let buckets = line
            .split(':')
            .skip(1)
            .map(|b| b.trim().parse::<u64>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| format!("int() of a bucket in {line:?}"))?;
        if buckets.is_empty() {
            return Err(format!("no buckets in {line:?}: ZeroDivisionError"));
        }
        let size = row_size / buckets.len() as f64;
        hist.extend(
            buckets
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(i, n)| (i as f64 * size, *n)),
        );
        row_size *= 10.0;
    }
    Ok(hist)
}

/// _HistogramStatsCalculator's default percentiles (p10 … p99.999): each
/// must fall on a bucket.
fn pkb_percentiles(hist: &[(f64, u64)]) -> Result<(), String> {
    let mut sorted = hist.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: u64 = sorted.iter().map(|(_, n)| n).sum();
    for p in [10.0, 50.0, 90.0, 99.0, 99.9, 99.99, 99.999] {
        let index = ((total as f64 * p / 100.0) as u64).min(total - 1);
        let mut seen = 0;
        if !sorted.iter().any(|(_, n)| {
            seen += n;
            seen > index
        }) {
            return Err(format!("p{p} on no bucket"));
        }
    }
    Ok(())
}

/// The histogram holds every transaction of the test, all iterations of a
/// confidence run included, as stock's does: its count against THROUGHPUT
/// times the 1 s length times the iterations run (a transaction rate
/// converted to Mbit/s, or a histogram of the last iteration alone, is off
/// by far more than the factor of 2 allowed).
fn pkb_histogram_covers_the_test(
    case: &Case,
    results: &BTreeMap<&str, &str>,
    total: u64,
) -> Result<(), String> {
    if results.get("Throughput Units") != Some(&"Trans/s") {
        return Ok(());
    }
    let number = |k: &str| results.get(k).and_then(|v| v.parse::<f64>().ok());
    let (Some(rate), Some(iterations)) =
        (number("Throughput"), number("Confidence Iterations Run"))
    else {
        return Err("no Throughput or iteration count".into());
    };
    assert!(case.line.contains("-l 1 "), "the check assumes 1 s");
    let expected = rate * iterations;
    let ratio = total as f64 / expected;
    if !(0.5..2.0).contains(&ratio) {
        return Err(format!(
            "the histogram counts {total} transactions; Throughput {rate} Trans/s over \
             {iterations} iterations of 1 s makes {expected:.0}"
        ));
    }
    Ok(())
}

const PKB_CASES: &[Case] = &[
    Case::one(
        "TCP_RR",
        pkb_line!("-v2  -t OMNI -H {H} -L {H} -l 1 ", "-T TCP -d RR"),
        pkb_parse,
    ),
    Case::one(
        "TCP_CRR",
        pkb_line!("-v2  -t OMNI -H {H} -L {H} -l 1 ", "-T TCP -d CRR"),
        pkb_parse,
    ),
    Case::one(
        "TCP_STREAM",
        concat!(
            pkb_line!(" -t OMNI -H {H} -L {H} -l 1 ", "-T TCP -d STREAM"),
            " -m 131072 -M 131072 "
        ),
        pkb_parse,
    ),
    Case::one(
        "UDP_RR",
        pkb_line!("-v2  -t OMNI -H {H} -L {H} -l 1 ", "-T UDP -d RR"),
        pkb_parse,
    ),
    Case::one(
        "UDP_STREAM",
        concat!(
            pkb_line!(" -t OMNI -H {H} -L {H} -l 1 ", "-T UDP -d STREAM"),
            " -R 1 -m 1024 -M 1024 "
        ),
        pkb_parse,
    ),
    // --netperf_max_iter=3: `-I 99,5 -i 3,3`.
    Case::one(
        "TCP_RR/confidence",
        pkb_line!(
            "-v2  -t OMNI -H {H} -L {H} -l 1 -I 99,5 -i 3,3",
            "-T TCP -d RR"
        ),
        pkb_parse,
    ),
    // --netperf_num_streams=2: two processes at once, each its own netserver.
    Case {
        name: "TCP_RR/2 streams",
        streams: 2,
        ..Case::one(
            "",
            pkb_line!("-v2  -t OMNI -H {H} -L {H} -l 1 ", "-T TCP -d RR"),
            pkb_parse,
        )
    },
];

#[test]
fn perfkitbenchmarker() {
    check_harness(&HARNESSES[0]);
}

// ---------------------------------------------------------------------------
// Cilium: cilium-cli connectivity/perf/benchmarks/netperf/perfpod.go
// (buildExecCommand, NetperfCmd, parseNetperfResult); the duration is Go's
// time.Duration printed, "10s" by default; UDP_STREAM adds -m (--msg-size,
// 1024); the _MULTI tests run --streams copies at once and cat their outputs.

const CILIUM: &str = "cilium/cilium-cli connectivity/perf/benchmarks/netperf/perfpod.go";

macro_rules! cilium_line {
    ($test:literal, $tail:literal) => {
        concat!(
            "-H {H} -p {P} -l 1s -t ",
            $test,
            " -- -R 1 -o MIN_LATENCY,MEAN_LATENCY,MAX_LATENCY,P50_LATENCY,P90_LATENCY,",
            "P99_LATENCY,TRANSACTION_RATE,THROUGHPUT,THROUGHPUT_UNITS",
            $tail
        )
    };
}

const CILIUM_FIELDS: [&str; 9] = [
    "MIN_LATENCY",
    "MEAN_LATENCY",
    "MAX_LATENCY",
    "P50_LATENCY",
    "P90_LATENCY",
    "P99_LATENCY",
    "TRANSACTION_RATE",
    "THROUGHPUT",
    "THROUGHPUT_UNITS",
];

/// Go's time.ParseDuration of a number with "us" appended: an optional
/// sign, digits with an optional fraction (at least one digit).
fn go_duration(v: &str) -> bool {
    let v = v.strip_prefix(['-', '+']).unwrap_or(v);
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    !(int.is_empty() && frac.is_empty())
        && int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit())
}

/// NetperfCmd: of all the output, the lines that start with a digit are the
/// results, exactly one per stream; each splits at ',' into 9 values, the
/// six latencies read as Go durations in us, the rate and throughput by
/// ParseFloat; a STREAM test's units must be 10^6bits/s.
fn cilium_parse(case: &Case, ran: &[Ran]) -> Result<Vec<Record>, String> {
    let output: String = ran.iter().map(|r| r.stdout.as_str()).collect();
    let lines: Vec<&str> = output
        .split('\n')
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    if lines.len() != case.streams {
        return Err(format!(
            "expected {} result lines, got {}",
            case.streams,
            lines.len()
        ));
    }
    lines
        .iter()
        .map(|line| {
            let values: Vec<&str> = line.split(',').collect();
            if values.len() != 9 {
                return Err(format!("{} values in {line:?}", values.len()));
            }
            if let Some(bad) = values[..6].iter().find(|v| !go_duration(v)) {
                return Err(format!("duration {bad:?}us"));
            }
            for v in &values[6..8] {
                v.parse::<f64>().map_err(|_| format!("float {v:?}"))?;
            }
            if case.name.contains("_STREAM") && values[8] != "10^6bits/s" {
                return Err(format!("STREAM units {:?}", values[8]));
            }
            Ok(CILIUM_FIELDS
                .iter()
                .zip(values)
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect())
        })
        .collect()
}

const CILIUM_CASES: &[Case] = &[
    Case::one("TCP_STREAM", cilium_line!("TCP_STREAM", ""), cilium_parse),
    Case::one(
        "UDP_STREAM",
        cilium_line!("UDP_STREAM", " -m 1024"),
        cilium_parse,
    ),
    Case::one("TCP_CRR", cilium_line!("TCP_CRR", ""), cilium_parse),
    Case::one("TCP_RR", cilium_line!("TCP_RR", ""), cilium_parse),
    Case::one("UDP_RR", cilium_line!("UDP_RR", ""), cilium_parse),
    // TCP_STREAM_MULTI with --streams 2.
    Case {
        name: "TCP_STREAM_MULTI",
        streams: 2,
        ..Case::one("", cilium_line!("TCP_STREAM", ""), cilium_parse)
    },
];

#[test]
fn cilium_connectivity_perf() {
    check_harness(&HARNESSES[1]);
}

// ---------------------------------------------------------------------------
// Phoronix Test Suite: pts/netperf-1.0.0 (install.sh runs
// `netperf -P 0 -v 0 $@ | grep -v is > $LOG_FILE` and keeps the pipeline's
// status; test-definition.xml gives -H, -t and -l in that order;
// results-definition.xml reads " #_RESULT_#").

const PHORONIX: &str = "phoronix-test-suite/test-profiles pts/netperf-1.0.0 (install.sh, test-definition.xml, results-definition.xml)";

/// install.sh's pipeline: the lines without "is" go to the log and grep's
/// status (1 when none is left) is the test's; the result is the log's
/// number (its last line's last word).
fn phoronix_parse(_case: &Case, ran: &[Ran]) -> Result<Vec<Record>, String> {
    let log: Vec<&str> = ran[0]
        .stdout
        .lines()
        .filter(|l| !l.contains("is"))
        .collect();
    if log.is_empty() {
        return Err("grep -v is selects nothing: test-exit-status 1".into());
    }
    let last = log.iter().rev().find(|l| !l.trim().is_empty());
    let result = last.and_then(|l| l.split_whitespace().last()).unwrap_or("");
    result
        .parse::<f64>()
        .map_err(|_| format!("no result in the log {log:?}"))?;
    Ok(vec![vec![
        ("log lines".into(), log.len().to_string()),
        ("result".into(), result.to_string()),
    ]])
}

macro_rules! phoronix_line {
    ($test:literal) => {
        concat!("-P 0 -v 0 -H {H} -p {P} -t ", $test, " -l 1")
    };
}

const PHORONIX_CASES: &[Case] = &[
    Case::one("TCP_STREAM", phoronix_line!("TCP_STREAM"), phoronix_parse),
    Case::one("TCP_MAERTS", phoronix_line!("TCP_MAERTS"), phoronix_parse),
    Case::one(
        "UDP_STREAM -b 10G",
        phoronix_line!("UDP_STREAM -b 10G"),
        phoronix_parse,
    ),
    Case::one("TCP_RR", phoronix_line!("TCP_RR"), phoronix_parse),
    Case::one("UDP_RR", phoronix_line!("UDP_RR"), phoronix_parse),
    Case::one(
        "TCP_SENDFILE",
        phoronix_line!("TCP_SENDFILE"),
        phoronix_parse,
    ),
];

#[test]
fn phoronix_pts_netperf() {
    check_harness(&HARNESSES[2]);
}

// ---------------------------------------------------------------------------
// k8s-netperf: cloud-bulldozer/k8s-netperf pkg/drivers/netperf.go (Run
// builds `super-netperf N PORT -H ip -l D -t PROFILE -- -k SELECTORS ...`,
// ParseResults reads it) and containers/super-netperf (runs
// `netperf -s 2 ARGS -P PORT`, greps KEY= lines). netperf.yml's profiles,
// message size 1024. Its data port is fixed and both ends take it: on one
// host the netserver listens on 127.0.0.2 so the data connection does not
// connect to itself (127.0.0.1:P to 127.0.0.1:P).

const K8S: &str =
    "cloud-bulldozer/k8s-netperf pkg/drivers/netperf.go, containers/super-netperf, netperf.yml";

macro_rules! k8s_line {
    ($test:literal, $tail:literal) => {
        concat!(
            "-s 2 -H {H} -p {P} -l 1 -t ",
            $test,
            " -- -k rt_latency,p99_latency,throughput,throughput_units,remote_recv_calls,",
            "local_send_calls,local_transport_retrans ",
            $tail,
            " -P {D}"
        )
    };
}

/// ParseResults: at least 5 lines; each line split at '=', the key matched
/// by substring in its order (THROUGHPUT_UNITS before THROUGHPUT); an empty
/// THROUGHPUT or P99_LATENCY is an error; a negative LOCAL_TRANSPORT_RETRANS
/// means "UDP", and the loss is computed from the call counts.
/// super-netperf adds them with bc, which reads plain decimals only.
fn k8s_parse(_case: &Case, ran: &[Ran]) -> Result<Vec<Record>, String> {
    let out = &ran[0].stdout;
    if out.split('\n').count() < 5 {
        return Err("length of output from netperf was too short".into());
    }
    let keys = [
        "THROUGHPUT_UNITS",
        "THROUGHPUT",
        "P99_LATENCY",
        "RT_LATENCY",
        "LOCAL_SEND_CALLS",
        "REMOTE_RECV_CALLS",
        "LOCAL_TRANSPORT_RETRANS",
    ];
    let mut record = Record::new();
    for line in out.split('\n') {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = value.split('=').next().unwrap().trim_matches('\r');
        let Some(k) = keys.iter().find(|k| key.contains(*k)) else {
            continue;
        };
        if (*k == "THROUGHPUT" || *k == "P99_LATENCY") && value.trim().is_empty() {
            return Err(format!("{k} was empty"));
        }
        let bc = value.trim_start_matches('-');
        if *k != "THROUGHPUT_UNITS" && !go_duration(bc) {
            return Err(format!("bc cannot add {k}={value:?}"));
        }
        record.push((k.to_string(), value.to_string()));
    }
    Ok(vec![record])
}

const K8S_CASES: &[Case] = &[
    Case {
        host: "127.0.0.2",
        ..Case::one("TCP_STREAM", k8s_line!("TCP_STREAM", "-m 1024"), k8s_parse)
    },
    Case {
        host: "127.0.0.2",
        ..Case::one(
            "UDP_STREAM",
            k8s_line!("UDP_STREAM", "-m 1024 -R 1"),
            k8s_parse,
        )
    },
    Case {
        host: "127.0.0.2",
        ..Case::one("TCP_RR", k8s_line!("TCP_RR", "-r 1024,1024"), k8s_parse)
    },
    Case {
        host: "127.0.0.2",
        ..Case::one("TCP_CRR", k8s_line!("TCP_CRR", "-r 1024,1024"), k8s_parse)
    },
];

#[test]
fn k8s_netperf() {
    check_harness(&HARNESSES[3]);
}

// ---------------------------------------------------------------------------
// netperf's own doc/examples (netperf 2.7.1): bloat.sh, packet_byte_script,
// find_max_burst.sh, runemomni.sh; their lengths shortened, the port given.

const EXAMPLES: &str =
    "netperf 2.7.1 doc/examples: bloat.sh, packet_byte_script, find_max_burst.sh, runemomni.sh";

/// bloat.sh: `grep Interim | awk '{print int($10)}'` of the first and last
/// line are the RRD's start and end, the largest $6 its heartbeat, and
/// every line whose $1 is "Interim" an update `$10:$3`. Any line with
/// "Interim" in it must be netperf's interim line, its $10 a Unix time
/// (after 2001), the span from first to last within an hour.
fn bloat_parse(_case: &Case, ran: &[Ran]) -> Result<Vec<Record>, String> {
    let interim: Vec<Vec<&str>> = ran[0]
        .stdout
        .lines()
        .filter(|l| l.contains("Interim"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    // Stock's interim timing overshoots on a busy machine: one line is
    // all a 2 s test is sure to give.
    if interim.is_empty() {
        return Err("no Interim lines".into());
    }
    let mut record = Record::new();
    let mut stamps = Vec::new();
    for fields in &interim {
        let field = |i: usize| fields.get(i - 1).copied().unwrap_or("");
        let number = |i: usize| field(i).parse::<f64>();
        if field(1) != "Interim" || number(3).is_err() || number(6).is_err() {
            return Err(format!(
                "awk reads {:?} as an interim result",
                fields.join(" ")
            ));
        }
        match number(10) {
            Ok(t) if t > 1e9 => stamps.push(t as i64),
            _ => return Err(format!("$10 of {:?} is no timestamp", fields.join(" "))),
        }
        for i in [3, 6, 10] {
            record.push((format!("${i}"), field(i).to_string()));
        }
    }
    let length = stamps.last().unwrap() - stamps[0];
    if !(0..3600).contains(&length) {
        return Err(format!("LENGTH {length}: rrdtool create fails"));
    }
    record.push(("LENGTH".into(), length.to_string()));
    Ok(vec![record])
}

/// packet_byte_script: MSS=`netperf ... -t TCP_MSS -P 0 -v 0` feeds `expr`
/// and `[ $bar -lt $MSS ]`: a positive integer, white space around it.
fn mss_parse(_case: &Case, ran: &[Ran]) -> Result<Vec<Record>, String> {
    let mss = ran[0].stdout.trim();
    match mss.parse::<u32>() {
        Ok(n) if n > 0 => Ok(vec![vec![("MSS".into(), mss.to_string())]]),
        _ => Err(format!("expr cannot use MSS={mss:?}")),
    }
}

/// A script that prints netperf's table for a reader: the numbers of its
/// first result row (the first line starting with a digit). (Not its line
/// count: the confidence warning comes and goes with the machine's load.)
fn table_parse(_case: &Case, ran: &[Ran]) -> Result<Vec<Record>, String> {
    let row = ran[0]
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .ok_or("no result row")?;
    Ok(vec![row
        .split_whitespace()
        .enumerate()
        .map(|(i, v)| (format!("row ${}", i + 1), v.to_string()))
        .collect()])
}

/// find_max_burst.sh: `echo $TMP_TPS | awk '{print int($1)}'`, compared
/// with the last rate by `[ -gt ]`: the first word of the output.
fn burst_parse(_case: &Case, ran: &[Ran]) -> Result<Vec<Record>, String> {
    let first = ran[0].stdout.split_whitespace().next().unwrap_or("");
    match first.parse::<f64>() {
        Ok(tps) if tps >= 1.0 => Ok(vec![vec![("$1".into(), first.to_string())]]),
        _ => Err(format!("int($1) of {first:?} stops the search")),
    }
}

/// runemomni.sh: `-o all` CSV for the netperf database, header with -P 1:
/// how many lines (banner, header, values) and CSV fields it printed.
fn csv_parse(_case: &Case, ran: &[Ran]) -> Result<Vec<Record>, String> {
    let out = &ran[0].stdout;
    let lines: Vec<&str> = out.lines().filter(|l| !l.is_empty()).collect();
    let values = lines.last().ok_or("no output")?;
    let mut record = vec![("lines".to_string(), lines.len().to_string())];
    let fields = values.split(',').collect::<Vec<_>>();
    for i in [5, 6] {
        let v = fields.get(i - 1).unwrap_or(&"");
        record.push((format!("CSV ${i}"), v.to_string()));
    }
    Ok(vec![record])
}

const EXAMPLE_CASES: &[Case] = &[
    // bloat.sh's TCP_RR runs for 7200 s until `pkill -ALRM netperf`.
    Case {
        alarm: Some(2),
        ..Case::one(
            "bloat.sh TCP_RR",
            "-H {H} -p {P} -l 7200 -t TCP_RR -D -0.5 -v 2 -- -r 1",
            bloat_parse,
        )
    },
    Case::one(
        "bloat.sh TCP_STREAM",
        "-H {H} -p {P} -l 2 -t TCP_STREAM -D 0.25 -v 2 -- -m 1K",
        bloat_parse,
    ),
    // NETPERF_AFFINITY="-p P" puts the port right after the program.
    Case::one(
        "packet_byte_script TCP_MSS",
        "-p {P} -H {H} -t TCP_MSS -P 0 -v 0",
        mss_parse,
    ),
    // NETPERF_TIME=1 NETPERF_STATS="-i 3,3 -I 99,5": the first size with
    // the header, the next without.
    Case::one(
        "packet_byte_script TCP_RR",
        "-p {P} -l 1 -H {H} -t TCP_RR -i 3,3 -I 99,5 -- -r 64,1 -s -1 -S -1",
        table_parse,
    ),
    Case::one(
        "packet_byte_script TCP_RR -P 0",
        "-p {P} -l 1 -H {H} -P 0 -t TCP_RR -i 3,3 -I 99,5 -- -r 128,1 -s -1 -S -1",
        table_parse,
    ),
    // NETPERF="netperf -p P -l 1"; the first two bursts of its search.
    Case::one(
        "find_max_burst.sh -b 1",
        "-p {P} -l 1 -t UDP_RR -P 0 -H {H} -- -b 1 -D -o throughput -e 1 -s 1M -S 1M",
        burst_parse,
    ),
    Case::one(
        "find_max_burst.sh -b 2",
        "-p {P} -l 1 -t UDP_RR -P 0 -H {H} -- -b 2 -D -o throughput -e 1 -s 1M -S 1M",
        burst_parse,
    ),
    // length=1 confidence="-i 3,3", one CPU pair, the data host the
    // control host (IPv4: the script's second host is IPv6, below).
    Case::one(
        "runemomni.sh TCP_STREAM",
        "-P 1 -T 0,0 -t omni -c -C -H {H} -p {P} -l 1 -i 3,3 -- -o all -H {H} -m 64K",
        csv_parse,
    ),
    Case::one(
        "runemomni.sh UDP_RR burst",
        "-P 0 -T 0 -t omni -f m -c -C -H {H} -p {P} -l 1 -i 3,3 -- -o all -H {H} -s 1M -S 1M -r 64 -b 4 -T udp",
        csv_parse,
    ),
];

#[test]
fn netperf_doc_examples() {
    check_harness(&HARNESSES[4]);
}

/// A harness: its fixture's name, its source, its lines, and how long its
/// check takes on a quiet machine.
struct Harness {
    name: &'static str,
    source: &'static str,
    cases: &'static [Case],
    slow_secs: u32,
}

const HARNESSES: [Harness; 5] = [
    Harness {
        name: "perfkitbenchmarker",
        source: PKB,
        cases: PKB_CASES,
        slow_secs: 8,
    },
    Harness {
        name: "cilium",
        source: CILIUM,
        cases: CILIUM_CASES,
        slow_secs: 6,
    },
    Harness {
        name: "phoronix",
        source: PHORONIX,
        cases: PHORONIX_CASES,
        slow_secs: 4,
    },
    Harness {
        name: "k8s-netperf",
        source: K8S,
        cases: K8S_CASES,
        slow_secs: 5,
    },
    Harness {
        name: "netperf-examples",
        source: EXAMPLES,
        cases: EXAMPLE_CASES,
        slow_secs: 6,
    },
];

/// Without running anything (the fast tier too): each harness parser reads
/// stock's recorded output of every case, and what it reads there has the
/// recorded shapes: the parsers and the fixtures agree.
#[test]
fn each_harness_reads_stocks_recorded_output() {
    let mut failures = Vec::new();
    for h in &HARNESSES {
        let outputs = load_outputs(h.name);
        for case in h.cases {
            let Some(ran) = outputs.get(case.name) else {
                failures.push(format!("{}: no recorded output of {}", h.name, case.name));
                continue;
            };
            match (case.parse)(case, ran) {
                Err(e) => failures.push(format!("{} {}: {e}", h.name, case.name)),
                Ok(records) => failures.extend(records.into_iter().flat_map(|r| {
                    differences(h.name, case.name, &with_exit(r, ran))
                        .into_iter()
                        .map(|d| format!("{} {}: {d}", h.name, case.name))
                })),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Kills a process group when dropped.
struct KillGroup(i32);

impl Drop for KillGroup {
    fn drop(&mut self) {
        // SAFETY: kill takes a pid and a signal; a negative pid names a group.
        unsafe { libc::kill(-self.0, libc::SIGKILL) };
    }
}

/// netperf's doc/examples scripts themselves, from the stock tree next to
/// NETPERF_STOCK_DIR (DIR/../doc/examples), with our netperf and with
/// stock's: packet_byte_script whole (NETPERF_TIME and NETPERF_CRR_TIME
/// -100, a transaction or byte count, and NETPERF_STATS `-i 3,3 -I 99,5`
/// shorten each of its tests; NETPERF_AFFINITY carries the port)
/// prints as many result rows with ours as with stock; find_max_burst.sh
/// (its NETPERF with `-p P -l 1`) ends with a burst size, as with stock.
#[test]
fn netperf_example_scripts_run_whole() {
    if fast_tier_skips("slow (10 s)") {
        return;
    }
    let Some(dir) = stock_dir() else { return };
    let examples = std::path::Path::new(&dir).join("../doc/examples");
    if !examples.join("packet_byte_script").exists() {
        return skip(format!(
            "no netperf doc/examples beside NETPERF_STOCK_DIR ({})",
            examples.display()
        ));
    }
    // Our netperf where the scripts look for one: NETPERF_DIR/netperf.
    let ours = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("harness-netperf");
    std::fs::create_dir_all(&ours).unwrap();
    let link = ours.join("netperf");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(NETPERF.path(), &link).unwrap();
    let server = Server::start("127.0.0.1");
    let port = format!("-p {}", server.port);
    let script = |name: &str, netperf_dir: &std::path::Path, env: &[(&str, String)]| {
        let child = std::process::Command::new("sh")
            .arg(examples.join(name))
            .arg("127.0.0.1")
            .env("NETPERF_DIR", netperf_dir)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("spawn sh");
        // The script's netperf processes go with it, also on a failure.
        let _group = KillGroup(child.id() as i32);
        wait_bounded(child, Duration::from_secs(120))
    };
    let packet_env = [
        ("NETPERF_TIME", "-100".to_string()),
        ("NETPERF_CRR_TIME", "-100".to_string()),
        ("NETPERF_STATS", "-i 3,3 -I 99,5".to_string()),
        ("NETPERF_AFFINITY", port.clone()),
    ];
    let rows = |out: &std::process::Output| {
        let stdout = text(&out.stdout);
        let n = stdout
            .lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .count();
        (out.status.code(), n, stdout)
    };
    let stock_dir = std::path::PathBuf::from(&dir);
    let (with_ours, with_stock, burst) = std::thread::scope(|s| {
        let a = s.spawn(|| rows(&script("packet_byte_script", &ours, &packet_env)));
        let b = s.spawn(|| rows(&script("packet_byte_script", &stock_dir, &packet_env)));
        let netperf = format!("{} {port} -l 1", NETPERF.path());
        let c = s.spawn(|| script("find_max_burst.sh", &ours, &[("NETPERF", netperf)]));
        (a.join().unwrap(), b.join().unwrap(), c.join().unwrap())
    });
    assert_eq!(with_stock.0, Some(0), "stock: {}", with_stock.2);
    assert!(
        with_stock.1 > 10,
        "stock printed {} rows: {}",
        with_stock.1,
        with_stock.2
    );
    assert_eq!(
        (with_ours.0, with_ours.1),
        (with_stock.0, with_stock.1),
        "packet_byte_script with our netperf (exit, result rows) against stock's:\n{}",
        with_ours.2
    );
    let last = text(&burst.stdout);
    let size = last.split_whitespace().last().unwrap_or("");
    assert!(
        burst.status.success() && size.parse::<u32>().is_ok_and(|b| b >= 1),
        "find_max_burst.sh ends with {size:?}: {last}{}",
        text(&burst.stderr)
    );
}
