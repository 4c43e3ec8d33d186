//! `netagg results changes` end to end: a stored history with a step where
//! the kernel and an offload changed (found at its run, with both named),
//! a quiet series beside it (nothing found), the selections (--series,
//! --metric, --since), a user's CSV (context columns, bad rows refused with
//! their line), and real `netperf -- --store` runs on loopback read as one
//! series. Every database lives in a temporary directory.

mod common;

use common::results::{code, netagg, netperf_point, one_error_line, TempDir};
use common::{netperf, text, Server};
use netperf_ng::resultsdb::{self, Db, StoredResult};

/// One stored netperf test at minute `i` of 2026-11-20: `test` to
/// 127.0.0.1 measuring `metric` = `value`, on `kernel`, GRO `gro`.
fn stored(i: usize, test: &str, metric: &str, value: f64, kernel: &str, gro: bool) -> StoredResult {
    let started = format!("2026-11-20T{:02}:{:02}:00.000Z", i / 60, i % 60);
    netperf_point(&started, test, (metric, value), kernel, gro, "nightly")
}

/// 80 nightly TCP_STREAM runs, 15 % slower from run 50 on, where the kernel
/// changed and GRO was turned off; 80 TCP_RR runs that never change.
fn history(db: &Db) {
    for i in 0..80 {
        let wobble = [0.0, 0.8, -0.6, 1.1, -1.2, 0.3, -0.2][i % 7] / 100.0;
        let (level, kernel, gro) = match i < 50 {
            true => (9400.0, "6.1.0-18-amd64", true),
            false => (9400.0 * 0.85, "6.5.0-1-amd64", false),
        };
        let r = stored(
            i,
            "TCP_STREAM",
            "THROUGHPUT",
            level * (1.0 + wobble),
            kernel,
            gro,
        );
        resultsdb::store_result(db, &r).unwrap();
        let rr = 30000.0 * (1.0 + [0.4, -0.3, 0.1, -0.5, 0.2][i % 5] / 100.0);
        let r = stored(i, "TCP_RR", "TRANSACTION_RATE", rr, "6.1.0-18-amd64", true);
        resultsdb::store_result(db, &r).unwrap();
    }
}

fn json(out: &std::process::Output) -> Vec<serde_json::Value> {
    assert_eq!(code(out), 0, "{}", text(&out.stderr));
    serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_stored_step_is_found_at_its_run_with_what_else_changed() {
    let dir = TempDir::new();
    history(&Db::open(&dir.db()).unwrap());
    let found = json(&netagg(&dir.db(), &["changes", "--json"]));
    assert_eq!(found.len(), 1, "{found:?}");
    let c = &found[0];
    assert_eq!(c["series"], "TCP_STREAM 127.0.0.1 THROUGHPUT");
    assert_eq!(c["index"], 50);
    assert_eq!(c["time"], "2026-11-20T00:50:00.000Z");
    assert_eq!(c["direction"], "slower");
    assert_eq!(c["unit"], "10^6bits/s");
    let change = c["change"].as_f64().unwrap();
    assert!((change + 0.15).abs() < 0.01, "{c}");
    assert!(c["change_low"].as_f64().unwrap() <= change);
    assert!(c["change_high"].as_f64().unwrap() >= change);
    assert!(c["p_value"].as_f64().unwrap() <= c["alpha"].as_f64().unwrap());
    assert!((c["median_before"].as_f64().unwrap() - 9400.0).abs() < 50.0);
    let keys: Vec<&str> = c["context_changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["key"].as_str().unwrap())
        .collect();
    // The kernel and the offload, not the per-run UUID nor what stayed.
    assert_eq!(keys, ["kernel", "local gro"], "{c}");
    assert_eq!(c["context_changes"][1]["before"], "on");
    assert_eq!(c["context_changes"][1]["after"], "off");

    let report = netagg(&dir.db(), &["changes"]);
    assert_eq!(code(&report), 0);
    let page = text(&report.stdout);
    assert!(
        page.contains("TCP_STREAM 127.0.0.1 THROUGHPUT (10^6bits/s)"),
        "{page}"
    );
    assert!(
        page.contains(
            "what else changed: kernel 6.1.0-18-amd64 -> 6.5.0-1-amd64; local gro on -> off"
        ),
        "{page}"
    );
    assert!(
        page.contains("1 change point in 2 series of 160 points"),
        "{page}"
    );

    // Selections: only the quiet series; a metric it lacks; after the change.
    assert!(json(&netagg(
        &dir.db(),
        &["changes", "--series", "tcp_rr", "--json"]
    ))
    .is_empty());
    let none = netagg(&dir.db(), &["changes", "--metric", "LOCAL_SD"]);
    assert!(
        text(&none.stdout).contains("0 change points in 0 series"),
        "{}",
        text(&none.stdout)
    );
    let late = json(&netagg(
        &dir.db(),
        &["changes", "--since", "2026-11-20T00:51", "--json"],
    ));
    assert!(late.is_empty(), "{late:?}");
    let bad = netagg(&dir.db(), &["changes", "--alpha", "0.001"]);
    assert_eq!(code(&bad), 2);
    one_error_line(&bad, "permutations");
}

#[test]
fn a_users_csv_is_searched_with_its_context_columns() {
    let dir = TempDir::new();
    let path = dir.0.join("history.csv");
    let mut csv = String::from("time,series,value,build\n");
    for i in 0..120 {
        let wobble = [0.0, 1.0, -1.0, 0.5, -0.5, 0.2][i % 6];
        let step = if i >= 70 { 12.0 } else { 0.0 };
        let build = if i >= 70 { "b2" } else { "b1" };
        csv.push_str(&format!("{i},latency,{},{build}\n", 100.0 + step + wobble));
        csv.push_str(&format!("{i},\"rate, per s\",{},{build}\n", 500.0 + wobble));
    }
    csv.push_str("120,latency,,b2\n"); // a missing value: skipped
    std::fs::write(&path, &csv).unwrap();
    let csv_arg = path.display().to_string();
    let found = json(&netagg(
        &dir.db(),
        &["changes", "--csv", &csv_arg, "--json"],
    ));
    assert_eq!(found.len(), 1, "{found:?}");
    let c = &found[0];
    assert_eq!(
        (c["series"].as_str(), c["index"].as_u64()),
        (Some("latency"), Some(70))
    );
    assert_eq!(c["time"], "70");
    assert_eq!(c["time_before"], "69");
    assert!(c["result"].is_null());
    assert_eq!(c["context_changes"][0]["key"], "build");
    assert_eq!(c["context_changes"][0]["after"], "b2");
    // No database is needed or made for a CSV.
    assert!(!dir.db().exists());

    std::fs::write(&path, "time,series,value\n1,a,2\n2,a,fast\n").unwrap();
    let bad = netagg(&dir.db(), &["changes", "--csv", &csv_arg]);
    assert_eq!(code(&bad), 2);
    one_error_line(&bad, "line 3: value 'fast' is not a finite number");
    std::fs::write(&path, "time,value\n1,2\n").unwrap();
    one_error_line(
        &netagg(&dir.db(), &["changes", "--csv", &csv_arg]),
        "time,series,value",
    );
    let missing = dir.0.join("nothing.csv").display().to_string();
    let gone = netagg(&dir.db(), &["changes", "--csv", &missing]);
    assert_eq!(code(&gone), 2);
}

#[test]
fn netperf_store_runs_on_loopback_are_one_series() {
    let server = Server::start("127.0.0.1");
    let dir = TempDir::new();
    let store = format!("--store={}", dir.db().display());
    for _ in 0..3 {
        let out = netperf(&server, &["-l", "1", "--", &store]);
        assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    }
    let report = netagg(&dir.db(), &["changes"]);
    assert_eq!(code(&report), 0, "{}", text(&report.stderr));
    // Three points are too few to split: nothing found, the series read.
    let page = text(&report.stdout);
    assert!(
        page.contains("0 change points in 1 series of 3 points"),
        "{page}"
    );
}
