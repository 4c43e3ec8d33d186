//! The harnesses that drive netperf in other people's pipelines, run as they
//! run it: each one's exact command lines (test lengths shortened to 1-2 s),
//! read as that harness reads them (its splits and regular expressions,
//! re-implemented here from its public source), against our netperf and
//! netserver and, with NETPERF_STOCK_DIR, stock netperf against our
//! netserver. What the harness read must have the shape stock gives (the
//! fields, units, number formats, no zero or -1 where stock has a value),
//! recorded in tests/fixtures/harness/ (common::harness). The harnesses,
//! their sources and the lines are listed in docs/compatibility.md
//! ("Harnesses checked"); netperf's own example scripts are in
//! harness_examples_tests.rs.

mod common;
use common::harness::*;
use std::collections::BTreeMap;

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

const HARNESSES: [Harness; 4] = [
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
];

/// The parsers against stock's recorded output, without running anything.
#[test]
fn each_harness_reads_stocks_recorded_output() {
    check_recorded_outputs(&HARNESSES);
}
