//! The experiment's analysis and text tables checked on the limiters
//! write-up's experiment (tests/experiment_fixture): the per-cell
//! statistics and the ratios' point estimates against Python's `statistics`
//! module reading the saved experiment.json on its own, the ratios' verdicts
//! against what the data shows, failed runs kept out, and the tables' shape
//! and values against the write-up's tables.

mod common;
mod experiment_fixture;

use std::process::{Command, Stdio};

use experiment_fixture::{
    analysis, failing_cell, record, single_cell, writeup_means, TempDir, FAILURE_REASON,
};
use netperf_ng::experiment::analysis::{Finding, RatioOf};
use netperf_ng::experiment::tables::TEXT_WIDTH;
use netperf_ng::experiment::{output, text_report, Analysis};
use netperf_ng::resultsdb::model::cell_label;

/// Reads experiment.json on its own: per cell (its label) and metric the
/// statistics of the successful runs, the counts of the others, and per
/// ratio and improvement of the analysis its point estimate from the runs.
/// The Student-t 97.5 % quantile in plain Python (no scipy here).
const STUDENT_T: &str = include_str!("python/student_t.py");

const PYTHON_REFERENCE: &str = r#"
import json, math, statistics, sys

doc = json.load(open(sys.argv[1]))
label = lambda cell: " ".join(f"{f}={l}" for f, l in cell)
values, counts = {}, {}
for run in doc["runs"]:
    key = label(run["cell"])
    counts.setdefault(key, {"ok": 0, "failed": 0, "interrupted": 0})[run["status"]] += 1
    if run["status"] == "ok":
        for metric, v in run["metrics"].items():
            values.setdefault((key, metric), []).append(v)
cells = {}
for (key, metric), xs in values.items():
    s = {"n": len(xs), "mean": statistics.mean(xs), "median": statistics.median(xs),
         "min": min(xs), "max": max(xs)}
    if len(xs) >= 2:
        sd = statistics.stdev(xs)
        half = t_975(len(xs) - 1) * sd / math.sqrt(len(xs))
        q = statistics.quantiles(xs, n=100, method="inclusive")
        s.update(stdev=sd, ci_low=s["mean"] - half, ci_high=s["mean"] + half,
                 p5=q[4], p25=q[24], p75=q[74], p95=q[94], p99=q[98])
    cells[key + "|" + metric] = s
stat = {"mean": statistics.mean, "median": statistics.median}
def ratio(a_cell, b_cell, metric, of):
    a, b = values.get((label(a_cell), metric)), values.get((label(b_cell), metric))
    return stat[of](b) / stat[of](a) if a and b else None
ratios = []
for r in doc["analysis"]["ratios"]:
    held = dict(r["held"])
    order = [f["name"] for f in doc["factors"]]
    def cell(level):
        return [[f, level if f == r["factor"] else held[f]] for f in order]
    ratios.append(ratio(cell(r["baseline"]), cell(r["level"]), r["metric"], r["statistic"]))
improvements = []
for i in doc["analysis"]["improvements"]:
    column = dict(i["column"])
    order = [f["name"] for f in doc["factors"]]
    def cell(level):
        return [[f, level if f == i["factor"] else column[f]] for f in order]
    lower = i["metric"].endswith("_SD") or "CPU_UTIL" in i["metric"]
    a, b = (cell(i["to"]), cell(i["from"])) if lower else (cell(i["from"]), cell(i["to"]))
    improvements.append(ratio(a, b, i["metric"], "mean"))
print(json.dumps({"cells": cells, "counts": counts, "ratios": ratios, "improvements": improvements}))
"#;

/// Python's view of experiment.json; None (with a message) without python3.
fn python_reference(json: &std::path::Path) -> Option<serde_json::Value> {
    let child = Command::new("python3")
        .args(["-c", &format!("{STUDENT_T}\n{PYTHON_REFERENCE}")])
        .arg(json)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(child) = child else {
        common::skip("python3 is not available; the Python comparison did not run");
        return None;
    };
    let out = child.wait_with_output().expect("python3 output");
    assert!(
        out.status.success(),
        "python3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("python3 printed JSON"))
}

fn close(what: &str, ours: f64, theirs: f64) {
    let tolerance = 1e-9 * ours.abs().max(theirs.abs()).max(1e-12);
    assert!(
        (ours - theirs).abs() <= tolerance,
        "{what}: ours {ours:?}, Python {theirs:?}"
    );
}

#[test]
fn statistics_and_ratios_match_python_reading_the_json() {
    let record = record();
    let dir = TempDir::new("analysis-python");
    let written = output::write_analysed(&record, analysis(), &dir.0).expect("outputs");
    let json = written
        .iter()
        .find(|p| p.ends_with("experiment.json"))
        .expect("experiment.json");
    let Some(py) = python_reference(json) else {
        return;
    };
    let analysis = analysis();
    let mut compared = 0;
    for cell in &analysis.cells {
        let counts = &py["counts"][&cell.label];
        assert_eq!(
            cell.n_ok as u64,
            counts["ok"].as_u64().unwrap_or(0),
            "{}",
            cell.label
        );
        assert_eq!(
            cell.n_failed as u64,
            counts["failed"].as_u64().unwrap_or(0),
            "{}",
            cell.label
        );
        assert_eq!(
            cell.n_interrupted as u64,
            counts["interrupted"].as_u64().unwrap_or(0),
            "{}",
            cell.label
        );
        for m in &cell.metrics {
            let p = &py["cells"][format!("{}|{}", cell.label, m.metric)];
            let what = |name: &str| format!("{} {} {name}", cell.label, m.metric);
            let f = |name: &str| {
                p[name]
                    .as_f64()
                    .unwrap_or_else(|| panic!("Python has no {}", what(name)))
            };
            assert_eq!(m.n as u64, p["n"].as_u64().unwrap(), "{}", what("n"));
            close(&what("mean"), m.mean, f("mean"));
            close(&what("median"), m.median, f("median"));
            assert_eq!((m.min, m.max), (f("min"), f("max")), "{}", what("min/max"));
            if m.n >= 2 {
                close(&what("stdev"), m.stdev.expect("stdev"), f("stdev"));
                let ci = m.mean_ci95.expect("t interval");
                close(&what("ci low"), ci.low, f("ci_low"));
                close(&what("ci high"), ci.high, f("ci_high"));
                for (name, ours) in [
                    ("p5", m.p5),
                    ("p25", m.p25),
                    ("p75", m.p75),
                    ("p95", m.p95),
                    ("p99", m.p99),
                ] {
                    close(&what(name), ours, f(name));
                }
                let median_ci = m.median_ci95.expect("bootstrap interval");
                assert!(
                    median_ci.low <= m.median && m.median <= median_ci.high,
                    "{}",
                    what("median CI")
                );
                assert!(
                    m.min <= median_ci.low && median_ci.high <= m.max,
                    "{}",
                    what("median CI")
                );
            } else {
                assert_eq!(
                    (m.stdev, m.mean_ci95, m.median_ci95),
                    (None, None, None),
                    "{}",
                    what("n=1")
                );
            }
            compared += 1;
        }
    }
    // 8 cells x 13 metrics.
    assert_eq!(compared, 8 * 13);
    let py_ratios = py["ratios"].as_array().expect("ratios");
    assert_eq!(py_ratios.len(), analysis.ratios.len());
    for (r, theirs) in analysis.ratios.iter().zip(py_ratios) {
        close(
            &r.summary,
            r.ratio.expect("every ratio has a value"),
            theirs.as_f64().expect("Python ratio"),
        );
    }
    let py_improvements = py["improvements"].as_array().expect("improvements");
    for (i, theirs) in analysis.improvements.iter().zip(py_improvements) {
        close(
            &format!("improvement {} {:?}", i.metric, i.column),
            i.value.unwrap(),
            theirs.as_f64().unwrap(),
        );
    }
}

#[test]
fn ratios_say_what_the_data_shows() {
    let analysis = analysis();
    // 3 factors x 4 held combinations x 1 other level x 5 key metrics x 2 statistics.
    assert_eq!(analysis.ratios.len(), 3 * 4 * 5 * 2);
    let find = |factor: &str, held: &str, metric: &str, of: RatioOf| {
        analysis
            .ratios
            .iter()
            .find(|r| {
                r.factor == factor
                    && cell_label(&r.held) == held
                    && r.metric == metric
                    && r.statistic == of
            })
            .unwrap_or_else(|| panic!("no ratio {factor} {held} {metric}"))
    };
    // Offloads off costs TCP at 1024 bytes: throughput 4430/10638 in the write-up.
    let r = find(
        "offloads",
        "protocol=tcp message_size=1024",
        "THROUGHPUT",
        RatioOf::Mean,
    );
    assert_eq!(r.finding, Finding::Lower);
    let ci = r.ci95.expect("interval");
    assert!(ci.low <= r.ratio.unwrap() && r.ratio.unwrap() <= ci.high);
    assert!(
        (r.ratio.unwrap() - 4430.0 / 10638.0).abs() < 0.03,
        "{}",
        r.summary
    );
    assert!(r.summary.ends_with("lower (worse)"), "{}", r.summary);
    // ... and its receive service demand rises: worse, for a lower-is-better metric.
    let r = find(
        "offloads",
        "protocol=tcp message_size=1024",
        "REMOTE_SD",
        RatioOf::Median,
    );
    assert!(r.summary.ends_with("higher (worse)"), "{}", r.summary);
    // TCP with offloads needs less CPU per KB than UDP: better.
    let r = find(
        "protocol",
        "message_size=1024 offloads=on",
        "LOCAL_SD",
        RatioOf::Mean,
    );
    assert!(r.summary.ends_with("lower (better)"), "{}", r.summary);
    // Offloads do not apply to UDP: the same measurements either way.
    let r = find(
        "offloads",
        "protocol=udp message_size=1024",
        "THROUGHPUT",
        RatioOf::Mean,
    );
    assert_eq!(r.finding, Finding::NoSignificantDifference);
    assert!(
        r.summary.contains("no significant difference"),
        "{}",
        r.summary
    );
    // A side with one run: a value, no interval, and it says so.
    let r = find(
        "offloads",
        "protocol=udp message_size=8192",
        "THROUGHPUT",
        RatioOf::Mean,
    );
    assert_eq!(
        (r.finding, r.ci95, r.n_level),
        (Finding::NoInterval, None, 1)
    );
    assert!(
        r.summary.contains("no interval: n=1 at udp 8192 off"),
        "{}",
        r.summary
    );
}

#[test]
fn failed_and_interrupted_runs_are_counted_never_measured() {
    let analysis = analysis();
    let failing = analysis.cell(&failing_cell()).expect("failing cell");
    assert_eq!(
        (failing.n_ok, failing.n_failed, failing.n_interrupted),
        (4, 1, 0)
    );
    assert!(failing.metrics.iter().all(|m| m.n == 4));
    let single = analysis.cell(&single_cell()).expect("single cell");
    assert_eq!(
        (single.n_ok, single.n_failed, single.n_interrupted),
        (1, 0, 1)
    );
    assert_eq!(
        (
            analysis.runs_ok,
            analysis.runs_failed,
            analysis.runs_interrupted
        ),
        (35, 1, 1)
    );
    // A failed run's metrics never count, even if the runner kept some.
    let mut record = record();
    let run = record
        .runs
        .iter_mut()
        .find(|r| r.cell == failing_cell() && !r.status.is_ok())
        .unwrap();
    run.metrics.insert("THROUGHPUT".into(), 1e12);
    let quick = Analysis::with_resamples(&record, 200);
    let stats = quick.stats(&failing_cell(), "THROUGHPUT").unwrap();
    assert!(stats.max < 1e6 && stats.n == 4);
}

/// The table under `heading` in the text report: its lines up to a blank.
fn table<'a>(report: &'a str, heading: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = report
        .lines()
        .skip_while(|l| *l != heading)
        .skip(1)
        .collect();
    assert!(!lines.is_empty(), "no table {heading:?} in\n{report}");
    // A blank line ends the table unless another block of its columns follows.
    let end = (0..lines.len())
        .find(|&i| {
            lines[i].is_empty()
                && !lines
                    .get(i + 1)
                    .is_some_and(|l| l.starts_with("message_size"))
        })
        .unwrap_or(lines.len());
    lines[..end].to_vec()
}

/// The cells of a table line: fields separated by two spaces or more.
fn fields(line: &str) -> Vec<String> {
    line.split("  ")
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(String::from)
        .collect()
}

#[test]
fn text_tables_have_the_write_ups_shape_and_values() {
    let record = record();
    let report = text_report(&record, analysis());
    assert!(
        report.starts_with("Experiment: UDP vs TCP <offloads> & \"sizes\"\n"),
        "{report}"
    );
    assert!(
        report.contains("seed 20211018  5 replicates  runs: 35 ok, 1 failed, 1 interrupted"),
        "{report}"
    );
    // The write-up's Improvement rows: UDP, TCP on, TCP off.
    let writeup: [(&str, [f64; 3]); 3] = [
        (
            "Throughput (10^6bits/s - Higher is Better)",
            [3.81, 2.33, 4.49],
        ),
        (
            "Send Service Demand (usec/KB - Lower is Better)",
            [3.90, 2.47, 5.70],
        ),
        (
            "Receive Service Demand (usec/KB - Lower is Better)",
            [4.44, 1.17, 5.21],
        ),
    ];
    for (index, (heading, improvement)) in writeup.iter().enumerate() {
        let lines = table(&report, heading);
        assert_eq!(
            fields(lines[0]),
            ["message_size", "udp on", "udp off", "tcp on", "tcp off"],
            "{heading}"
        );
        assert!(lines[1].chars().all(|c| c == '-'), "{heading}: underline");
        for (line, size) in lines[2..4].iter().zip(["1024", "8192"]) {
            let row = fields(line);
            assert_eq!(row[0], size);
            for (text, (protocol, offloads)) in
                row[1..]
                    .iter()
                    .zip([("udp", "on"), ("udp", "off"), ("tcp", "on"), ("tcp", "off")])
            {
                let mean: f64 = text
                    .split(' ')
                    .next()
                    .unwrap()
                    .parse()
                    .expect("a mean first");
                let expected = [
                    writeup_means(protocol, size, offloads).0,
                    writeup_means(protocol, size, offloads).1,
                    writeup_means(protocol, size, offloads).2,
                ][index];
                assert!(
                    (mean / expected - 1.0).abs() < 0.05,
                    "{heading} {size} {protocol} {offloads}: {mean} vs {expected}"
                );
                let single = protocol == "udp" && size == "8192" && offloads == "off";
                let short = protocol == "tcp" && size == "8192" && offloads == "off";
                match (single, short) {
                    (true, _) => assert!(text.ends_with("(n=1)") && !text.contains('±'), "{text}"),
                    (_, true) => assert!(text.contains('±') && text.ends_with("(n=4)"), "{text}"),
                    _ => assert!(text.contains(" ± ") && !text.contains("(n="), "{text}"),
                }
            }
        }
        let last = fields(lines[4]);
        assert_eq!(last[0], "Improvement");
        assert!(last[2].ends_with(" ?"), "n=1 has no interval: {}", last[2]);
        for (text, expected) in [&last[1], &last[3], &last[4]].into_iter().zip(improvement) {
            let (value, mark) = text.split_once(' ').expect("value and mark");
            assert_eq!(mark, "*", "{heading}: {text}");
            let value: f64 = value.parse().unwrap();
            assert!(
                (value / expected - 1.0).abs() < 0.05,
                "{heading}: {value} vs the write-up's {expected}"
            );
        }
        assert!(lines.iter().all(|l| l.chars().count() <= TEXT_WIDTH));
    }
    assert!(
        report.contains("* its 95 % bootstrap interval excludes 1, ~ no significant difference"),
        "{report}"
    );
    assert!(
        report.contains(&format!("failed: {FAILURE_REASON}")),
        "{report}"
    );
    assert!(
        report.contains("protocol=udp message_size=8192 offloads=off: interrupted"),
        "{report}"
    );
    assert!(
        report.contains("offloads off / on at protocol=udp message_size=1024: 1.00× ["),
        "{report}"
    );
}

#[test]
fn wide_tables_split_to_fit_a_terminal() {
    let mut record = record();
    // Six protocols x four offload settings: 24 columns.
    record.factors[0].levels = ["udp", "tcp", "sctp", "dccp", "udplite", "mptcp"]
        .map(String::from)
        .to_vec();
    record.factors[2].levels = ["on", "off", "tso-only", "gro-only"]
        .map(String::from)
        .to_vec();
    let quick = Analysis::with_resamples(&record, 100);
    let report = text_report(&record, &quick);
    let lines = table(&report, "Throughput (10^6bits/s - Higher is Better)");
    assert!(
        lines.iter().all(|l| l.chars().count() <= TEXT_WIDTH),
        "{report}"
    );
    let headers: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("message_size"))
        .collect();
    assert!(headers.len() >= 3, "split into blocks: {headers:?}");
    for label in ["udp on", "mptcp gro-only", "sctp tso-only"] {
        assert!(headers.iter().any(|h| h.contains(label)), "{label} missing");
    }
    // Cells with no run at all print a dash.
    assert!(lines.iter().any(|l| l.contains('—')));
}

#[test]
fn a_nan_is_left_out_and_counted() {
    let mut record = record();
    let cell = record
        .runs
        .iter()
        .find(|r| r.status.is_ok())
        .unwrap()
        .cell
        .clone();
    let run = record
        .runs
        .iter_mut()
        .find(|r| r.status.is_ok() && r.cell == cell)
        .unwrap();
    run.metrics.insert("THROUGHPUT".into(), f64::INFINITY);
    let quick = Analysis::with_resamples(&record, 50);
    let stats = quick.stats(&cell, "THROUGHPUT").unwrap();
    assert_eq!((stats.n, stats.n_excluded), (4, 1));
    assert!(stats.max.is_finite());
}

#[test]
fn small_samples_carry_a_caution() {
    // The fixture's cells have 5 runs (one has 4).
    let caveat = analysis()
        .small_sample_caveat()
        .expect("a caution below 10 runs");
    assert!(
        caveat.contains("only 4 successful runs") && caveat.contains("widened"),
        "{caveat}"
    );
    let report = text_report(&record(), analysis());
    assert!(
        report.contains("Caution: some cells have only 4 successful runs"),
        "{report}"
    );
    // Every cell with all of its 4 runs: the caution says how many, and
    // blames no failure.
    let mut complete = record();
    complete.runs.retain(|r| r.status.is_ok());
    let mut kept: std::collections::BTreeMap<_, usize> = Default::default();
    complete.runs.retain(|r| {
        let n = kept.entry(r.cell.clone()).or_default();
        *n += 1;
        *n <= 4
    });
    let caveat = Analysis::with_resamples(&complete, 20)
        .small_sample_caveat()
        .expect("a caution below 10 runs");
    assert!(
        caveat.starts_with("Caution: every cell has 4 runs, all successful.")
            && !caveat.contains("only 4"),
        "{caveat}"
    );
    // Ten runs a cell or more: no caution.
    let mut record = record();
    let copies: Vec<_> = record.runs.clone();
    record.runs.extend(copies.iter().cloned());
    record
        .runs
        .retain(|r| r.status.is_ok() && r.cell != single_cell() && r.cell != failing_cell());
    let runs = record.runs.clone();
    record.runs.extend(runs);
    let big = Analysis::with_resamples(&record, 20);
    assert!(big
        .cells
        .iter()
        .filter(|c| c.n_ok > 0)
        .all(|c| c.n_ok >= 10));
    assert_eq!(big.small_sample_caveat(), None);
}
