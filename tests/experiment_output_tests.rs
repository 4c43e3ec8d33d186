//! The experiment's files checked on the limiters write-up's experiment
//! (tests/experiment_fixture): runs.csv and cells.csv parsed back (RFC
//! 4180), experiment.json read back into the same record and re-rendered
//! into the same bytes, bad JSON refused clearly, and degenerate or hostile
//! records still rendered, with every SVG well-formed.

mod common;
mod experiment_fixture;

use std::collections::BTreeMap;
use std::io::Write as _;

use experiment_fixture::{analysis, record, TempDir};
use netperf_ng::experiment::{csv, output, read_record, render_from_json, text_report, Analysis};
use netperf_ng::resultsdb::model::{ExperimentRecord, RunStatus};

fn parse_csv(text: &str) -> (Vec<String>, Vec<BTreeMap<String, String>>) {
    let mut reader = ::csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    let rows = reader
        .records()
        .map(|r| {
            let r = r.expect("a well-formed CSV row");
            header
                .iter()
                .cloned()
                .zip(r.iter().map(String::from))
                .collect()
        })
        .collect();
    (header, rows)
}

#[test]
fn runs_csv_parses_back_to_the_runs() {
    let mut record = record();
    // A reason with every character RFC 4180 quotes.
    let hostile = "refused, \"gro\" off\r\nby driver";
    if let Some(run) = record
        .runs
        .iter_mut()
        .find(|r| matches!(r.status, RunStatus::Failed { .. }))
    {
        run.status = RunStatus::Failed {
            reason: hostile.into(),
        };
    }
    let text = csv::runs_csv(&record);
    assert!(text.ends_with("\r\n"));
    for line in text.split('\n').filter(|l| !l.is_empty()) {
        assert!(line.ends_with('\r'), "RFC 4180 lines end in CRLF: {line:?}");
    }
    let (header, rows) = parse_csv(&text);
    for column in [
        "order",
        "replicate",
        "protocol",
        "message_size",
        "offloads",
        "status",
        "reason",
        "THROUGHPUT",
        "LOCAL_SD",
        "REMOTE_SD",
        "TRANSPORT_MSS",
        "SD_UNITS",
        "local_interface",
        "local_tso",
        "remote_gro",
        "command",
    ] {
        assert!(
            header.iter().any(|h| h == column),
            "no column {column} in {header:?}"
        );
    }
    assert_eq!(rows.len(), record.runs.len());
    for (run, row) in record.runs.iter().zip(&rows) {
        assert_eq!(row["order"], run.order.to_string());
        assert_eq!(row["message_size"], run.cell[1].1);
        for (metric, value) in &run.metrics {
            assert_eq!(
                row[metric].parse::<f64>().unwrap(),
                *value,
                "{metric} round-trips exactly"
            );
        }
        let on = run.cell[2].1 == "on";
        assert_eq!(row["local_tso"], if on { "on" } else { "off" });
        match &run.status {
            RunStatus::Ok => {
                assert_eq!((row["status"].as_str(), row["reason"].as_str()), ("ok", ""))
            }
            RunStatus::Failed { reason } => {
                assert_eq!(row["status"], "failed");
                assert_eq!(&row["reason"], reason);
                assert_eq!(row["THROUGHPUT"], "", "a failed run has no throughput");
            }
            RunStatus::Interrupted => assert_eq!(row["status"], "interrupted"),
        }
    }
    assert!(rows.iter().any(|r| r["reason"] == hostile));
}

#[test]
fn cells_csv_has_every_statistic_of_every_cell() {
    let record = record();
    let analysis = analysis();
    let (header, rows) = parse_csv(&csv::cells_csv(&record, analysis));
    for column in [
        "protocol",
        "cell",
        "n_ok",
        "n_failed",
        "metric",
        "unit",
        "n",
        "mean",
        "mean_ci95_low",
        "median_ci95_high",
        "p99",
        "max",
    ] {
        assert!(header.iter().any(|h| h == column), "no column {column}");
    }
    let expected: usize = analysis.cells.iter().map(|c| c.metrics.len().max(1)).sum();
    assert_eq!(rows.len(), expected);
    for row in &rows {
        let cell = analysis
            .cells
            .iter()
            .find(|c| c.label == row["cell"])
            .expect("a known cell");
        let stats = cell
            .metrics
            .iter()
            .find(|m| m.metric == row["metric"])
            .expect("a known metric");
        assert_eq!(row["mean"].parse::<f64>().unwrap(), stats.mean);
        assert_eq!(row["n"], stats.n.to_string());
        assert_eq!(row["n_failed"], cell.n_failed.to_string());
        if stats.n < 2 {
            assert_eq!(
                (row["stdev"].as_str(), row["mean_ci95_low"].as_str()),
                ("", "")
            );
        }
        if row["metric"] == "THROUGHPUT" {
            assert_eq!(row["unit"], "10^6bits/s");
        }
    }
}

#[test]
fn json_reads_back_and_rerenders_the_same_files() {
    let record = record();
    let first = TempDir::new("json-first");
    let written = output::write_analysed(&record, analysis(), &first.0).expect("outputs");
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for name in [
        "experiment.txt",
        "runs.csv",
        "cells.csv",
        "experiment.json",
        "report.html",
        "throughput.svg",
        "local_sd.svg",
        "remote_sd.svg",
        "throughput-percentiles.svg",
    ] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} not written: {names:?}"
        );
    }
    let json_path = first.0.join("experiment.json");
    let back: ExperimentRecord = read_record(&json_path).expect("read back");
    assert_eq!(back, record);
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    let analysis_back: Analysis =
        serde_json::from_value(document["analysis"].clone()).expect("analysis");
    assert_eq!(&analysis_back, analysis());
    // Rendering again from the JSON alone gives the same bytes.
    let second = TempDir::new("json-second");
    let again = render_from_json(&json_path, &second.0).expect("re-render");
    assert_eq!(again.len(), written.len());
    for path in &written {
        let name = path.file_name().unwrap();
        assert_eq!(
            std::fs::read(path).unwrap(),
            std::fs::read(second.0.join(name)).unwrap(),
            "{name:?} differs"
        );
    }
    // No temporary file is left behind.
    assert!(std::fs::read_dir(&second.0).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".tmp")));
}

/// `netagg report experiment.json` (and the old `experiment --render`)
/// writes every file of the experiment again, byte for byte; a record
/// with targets is saved as the matrix and drawn the same way.
#[test]
fn netagg_report_draws_an_experiment_and_a_matrix_again() {
    if common::fast_tier_skips("slow (15 s)") {
        return;
    }
    use common::saved::{redraws_identically, refused};
    use netperf_ng::resultsdb::model::Target;
    let mut matrix = record();
    matrix.targets = vec![Target::reachable("same node", "127.0.0.1".into(), 12865)];
    for (record, format) in [(record(), "netagg-experiment"), (matrix, "netagg-matrix")] {
        let dir = TempDir::new(&format!("report-{format}"));
        let written = output::write_outputs(&record, &dir.0).expect("outputs");
        let json = dir.0.join("experiment.json");
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(doc["format"], format);
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        redraws_identically(&json, &names);
        let mut newer = doc.clone();
        newer["version"] = 7.into();
        refused(&dir.0, &newer.to_string(), "written by a newer netperf-ng");
        let mut lies = doc.clone();
        lies["runs"] = "none".into();
        refused(&dir.0, &lies.to_string(), "not an experiment record");
    }
    let dir = TempDir::new("report-foreign");
    for (body, why) in [
        ("[1, 2]", "not a JSON object"),
        (r#"{"metadata": {}, "results": {}}"#, "no \"format\""),
        (r#"{"format": "netagg-experiment"}"#, "no record_version"),
        ("{", "not JSON"),
    ] {
        refused(&dir.0, body, why);
    }
}

#[test]
fn bad_json_is_a_clear_error() {
    let dir = TempDir::new("json-bad");
    let write = |name: &str, text: &str| {
        let path = dir.0.join(name);
        std::fs::File::create(&path)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        path
    };
    let missing = read_record(&dir.0.join("nope.json")).unwrap_err();
    assert!(missing.to_string().contains("nope.json"), "{missing}");
    let garbage = read_record(&write("garbage.json", "{not json")).unwrap_err();
    assert!(garbage.to_string().contains("not JSON"), "{garbage}");
    let other = read_record(&write("other.json", "{\"hello\": 1}")).unwrap_err();
    assert!(other.to_string().contains("no record_version"), "{other}");
    let mut future = serde_json::to_value(record()).unwrap();
    future["record_version"] = 99.into();
    let newer = read_record(&write("future.json", &future.to_string())).unwrap_err();
    assert!(
        newer.to_string().contains("record version 99 is newer"),
        "{newer}"
    );
    let mut broken = serde_json::to_value(record()).unwrap();
    broken["runs"] = "none".into();
    let wrong = read_record(&write("broken.json", &broken.to_string())).unwrap_err();
    assert!(
        wrong.to_string().contains("not an experiment record"),
        "{wrong}"
    );
    // Nothing is rendered from a bad file.
    let out = dir.0.join("out");
    assert!(render_from_json(&dir.0.join("garbage.json"), &out).is_err());
    assert!(!out.exists());
}

/// Every SVG written into `dir` parses as XML.
fn svgs_parse(dir: &std::path::Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "svg") {
            let text = std::fs::read_to_string(&path).unwrap();
            roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}

#[test]
fn degenerate_and_hostile_records_still_render() {
    let quick = 50;
    let mut cases: Vec<(&str, ExperimentRecord)> = Vec::new();
    let mut empty = record();
    empty.runs.clear();
    cases.push(("no runs", empty));
    let mut all_failed = record();
    for run in &mut all_failed.runs {
        run.status = RunStatus::Failed {
            reason: "netserver refused".into(),
        };
        run.metrics.clear();
    }
    cases.push(("all failed", all_failed));
    let mut no_factors = record();
    no_factors.factors.clear();
    for run in &mut no_factors.runs {
        run.cell.clear();
    }
    cases.push(("no factors", no_factors));
    let mut one_level = record();
    one_level.factors.truncate(1);
    one_level.factors[0].levels.truncate(1);
    cases.push(("one level, runs outside the plan", one_level));
    let mut hostile = record();
    hostile.title = "</title><script>alert(1)</script>\n& more".into();
    hostile.factors[0].levels[0] = "<b>\"udp\" & co</b>".into();
    for run in &mut hostile.runs {
        if run.cell[0].1 == "udp" {
            run.cell[0].1 = "<b>\"udp\" & co</b>".into();
        }
    }
    if let Some(run) = hostile.runs.iter_mut().find(|r| r.status.is_ok()) {
        run.metrics.insert("THROUGHPUT".into(), f64::NAN);
    }
    cases.push(("hostile text, a NaN", hostile));
    for (name, record) in cases {
        let analysis = Analysis::with_resamples(&record, quick);
        let report = text_report(&record, &analysis);
        assert!(report.starts_with("Experiment: "), "{name}");
        if name.starts_with("one level") {
            assert!(
                report.contains("warning: 37 runs belong to no cell of the plan"),
                "{report}"
            );
        }
        let dir = TempDir::new(&format!("degenerate-{}", name.len()));
        let written = output::write_analysed(&record, &analysis, &dir.0)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(written.len() >= 5, "{name}");
        svgs_parse(&dir.0);
        let html = std::fs::read_to_string(dir.0.join("report.html")).unwrap();
        assert!(
            !html.contains("<script") && !html.contains("<b>"),
            "{name}: user text escaped"
        );
        let (_, rows) = parse_csv(&std::fs::read_to_string(dir.0.join("runs.csv")).unwrap());
        assert_eq!(rows.len(), record.runs.len(), "{name}");
    }
}
