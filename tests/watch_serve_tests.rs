//! `netagg watch`'s HTTP side over a database filled by real `netperf --
//! --store --tag watch=NAME` runs against our netserver on loopback: the
//! server started through the library (as `--listen` starts it), its
//! `/metrics` read by prometheus_client's OpenMetrics and Prometheus
//! parsers and by `promtool check metrics`, its JSON API, and its page in
//! headless Chromium (it shows the status, the series and the change
//! points, is a picture and not a blank page, never scrolls sideways, and
//! prints). End-to-end checks through `netagg watch --listen` itself live
//! with the loop's tests. Traffic: loopback only, a second per run.

mod common;

use common::browser::{have_chromium, reads_well, screenshot_is_not_blank, WorkDir};
use common::http::get;
use common::prometheus::{check_with_prometheus_parsers, check_with_promtool, Text};
use common::results::{experiment, TempDir};
use common::{netperf, text, Server};
use netperf_ng::resultsdb::stats::ChangeOptions;
use netperf_ng::resultsdb::{changes, history, store, Db, Filter};
use netperf_ng::watch::serve;
use netperf_ng::watch::state::{Outcome, RunEntry, Shared, Status};
use std::time::{Duration, Instant};

const NAME: &str = "it";

/// Runs of TCP_STREAM and TCP_RR stored under the watch's tag, and one
/// stored without it (another user of the same database).
fn store_runs(server: &Server, db: &std::path::Path) -> Vec<RunEntry> {
    let store = format!("--store={}", db.display());
    let tag = format!("watch={NAME}");
    let mut entries = Vec::new();
    for (i, test) in ["TCP_STREAM", "TCP_RR", "TCP_STREAM", "TCP_RR"]
        .iter()
        .enumerate()
    {
        let started = netperf_ng::timefmt::now_utc();
        let out = netperf(
            server,
            &["-t", test, "-l", "1", "--", &store, "--tag", &tag],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        entries.push(RunEntry {
            sequence: i as u64 + 1,
            result: String::new(),
            started,
            ended: netperf_ng::timefmt::now_utc(),
            outcome: Outcome::Ok,
            reason: None,
            stored: true,
        });
    }
    let out = netperf(server, &["-l", "1", "--", &store]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    entries
}

/// The status the loop would share: the runs, a failed one, and the
/// change points of the stored series.
fn status_of(db: &std::path::Path, entries: Vec<RunEntry>) -> Status {
    let mut status = Status::new(
        NAME,
        db.to_path_buf(),
        900.0,
        vec!["experiment --factor test=TCP_STREAM,TCP_RR --host 127.0.0.1".into()],
    );
    for e in entries {
        status.push_run(e);
    }
    status.push_run(RunEntry {
        sequence: 5,
        result: String::new(),
        started: netperf_ng::timefmt::now_utc(),
        ended: netperf_ng::timefmt::now_utc(),
        outcome: Outcome::Failed,
        reason: Some("establish_control: connection refused".into()),
        stored: true,
    });
    status.last_success = Some(Instant::now());
    status.next_run = Some(Instant::now() + Duration::from_secs(900));
    let read = Db::open_read_only(db).unwrap();
    let selection = history::Selection {
        filter: Filter {
            tags: vec![format!("watch={NAME}")],
            ..Filter::default()
        },
        ..history::Selection::default()
    };
    let series = history::from_db(&read, &selection).unwrap();
    status.changes = changes::find(&series, &ChangeOptions::default())
        .unwrap()
        .changes;
    status.changes_searched = Some(netperf_ng::timefmt::now_utc());
    status
}

#[test]
fn the_watch_serves_metrics_the_page_and_the_api_over_stored_runs() {
    if common::fast_tier_skips("slow (10 s: real stored runs, the page drawn)") {
        return;
    }
    let server = Server::start("127.0.0.1");
    let dir = TempDir::new();
    let db = dir.db();
    let entries = store_runs(&server, &db);
    // The newest result an experiment: the page shows its tables.
    let mut rec = experiment(1.0, 2);
    rec.started = netperf_ng::timefmt::now_utc();
    rec.tags = vec![format!("watch={NAME}")];
    store::store_experiment(&Db::open(&db).unwrap(), &rec).unwrap();

    let shared = Shared::new(status_of(&db, entries));
    let listening = serve::start("127.0.0.1:0", shared).unwrap();
    let addr = listening.local_addr();
    assert!(serve::start(&addr.to_string(), Shared::new(status_of(&db, Vec::new()))).is_err());

    let (code, head, om) = get(
        addr,
        "/metrics",
        "application/openmetrics-text; version=1.0.0",
    );
    assert_eq!(code, 200);
    assert!(head.contains("Content-Type: application/openmetrics-text; version=1.0.0"));
    assert!(om.ends_with("# EOF\n"));
    for want in [
        "netperf_ng_throughput{series=\"TCP_STREAM 127.0.0.1 THROUGHPUT\",test=\"TCP_STREAM\",host=\"127.0.0.1\",metric=\"THROUGHPUT\",unit=\"10^6bits/s\"} ",
        "netperf_ng_throughput{series=\"TCP_RR 127.0.0.1 THROUGHPUT\",test=\"TCP_RR\",host=\"127.0.0.1\",metric=\"THROUGHPUT\",unit=\"Trans/s\"} ",
        "netperf_ng_watch_recent_runs{outcome=\"ok\"} 4\n",
        "netperf_ng_watch_recent_runs{outcome=\"failed\"} 1\n",
        "netperf_ng_watch_database_readable 1\n",
    ] {
        assert!(om.contains(want), "no {want:?} in\n{om}");
    }
    // Stored without the tag: not the watch's.
    let streams = om
        .lines()
        .filter(|l| {
            l.starts_with("netperf_ng_throughput{series=\"TCP_STREAM 127.0.0.1 THROUGHPUT\"")
        })
        .count();
    assert_eq!(streams, 1, "{om}");
    check_with_prometheus_parsers(&dir.0, &om, Text::OpenMetrics);
    let (code, head, prom) = get(addr, "/metrics", "text/plain");
    assert_eq!(code, 200);
    assert!(head.contains("Content-Type: text/plain; version=0.0.4"));
    check_with_prometheus_parsers(&dir.0, &prom, Text::Prometheus);
    check_with_promtool(&dir.0, &prom);

    let (code, _, api) = get(addr, "/api/series", "");
    assert_eq!(code, 200);
    let doc: serde_json::Value = serde_json::from_str(&api).unwrap();
    let names: Vec<&str> = doc["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"TCP_STREAM 127.0.0.1 THROUGHPUT"),
        "{names:?}"
    );
    let stream = doc["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "TCP_STREAM 127.0.0.1 THROUGHPUT")
        .unwrap();
    assert_eq!(stream["points"].as_array().unwrap().len(), 2);
    assert!(stream["latest"].as_f64().unwrap() > 0.0);
    let (_, _, status) = get(addr, "/api/status", "");
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["name"], NAME);
    assert_eq!(status["runs"].as_array().unwrap().len(), 5);
    assert!(status["database_error"].is_null());
    let (_, _, found) = get(addr, "/api/changes", "");
    let found: serde_json::Value = serde_json::from_str(&found).unwrap();
    assert!(found["changes"].is_array());

    let (code, head, page) = get(addr, "/", "text/html");
    assert_eq!(code, 200);
    assert!(head.contains("Content-Security-Policy: default-src 'none'"));
    assert!(page.contains("<meta http-equiv=\"refresh\""));
    assert!(page.contains("The newest run"));
    if !have_chromium() {
        return;
    }
    let work = WorkDir::new("watch-page");
    let file = work.path.join("watch.html");
    std::fs::write(&file, &page).unwrap();
    reads_well(
        &file,
        &[
            "netagg watch it".to_string(),
            "establish_control: connection refused".to_string(),
            "TCP_STREAM 127.0.0.1 THROUGHPUT".to_string(),
            "TCP_RR 127.0.0.1 THROUGHPUT".to_string(),
            "next run in 15 min".to_string(),
            "Results".to_string(),
        ],
    );
    // Served live, as a browser pointed at --listen sees it.
    screenshot_is_not_blank(
        &work.path,
        &format!("http://{addr}/"),
        &work.path.join("served.png"),
        (1280, 2000),
        0.02,
    );
}
