//! The results database end to end: store -> show -> export round trips,
//! list filters, compare verdicts and exit statuses, concurrent writers
//! (threads and processes), every error case (read-only, corrupt, from a
//! newer netperf-ng, unknown id) with nothing half-written, and netperf's
//! and netagg's `--store` against a netserver on loopback. Every database
//! lives in a temporary directory; NETPERF_NG_DB points there too, so the
//! user's own database is never touched.

mod common;

use common::prometheus::{check_with_prometheus_parsers, Text};
use common::results::{code, experiment, ids, netagg, one_error_line, uuid, TempDir};
use common::text;
use netperf_ng::resultsdb::{self, query, Db, DbError, Filter, Kind};

#[test]
fn an_experiment_round_trips_through_store_show_and_export() {
    let dir = TempDir::new();
    let db = Db::open(&dir.db()).unwrap();
    let rec = experiment(1.0, 5);
    assert_eq!(resultsdb::store_experiment(&db, &rec).unwrap(), rec.id);
    assert_eq!(query::load_experiment(&db, &rec.id).unwrap(), rec);
    let stored = query::load(&db, &rec.id).unwrap();
    assert_eq!(stored.runs, rec.runs);
    assert_eq!(stored.kind, Kind::Experiment);
    assert_eq!(stored.kernel, "6.1.0-18-amd64");
    assert_eq!(stored.test, "omni");
    // Storing it again is refused, and leaves one copy.
    assert!(matches!(
        resultsdb::store_experiment(&db, &rec),
        Err(DbError::Duplicate(_))
    ));
    assert_eq!(query::list(&db, &Filter::default()).unwrap().len(), 1);
    drop(db);

    let show = netagg(&dir.db(), &["show", &rec.id[..8]]);
    assert_eq!(code(&show), 0, "{}", text(&show.stderr));
    let page = text(&show.stdout);
    assert!(page.contains("protocol=tcp message_size=8192"), "{page}");
    assert!(page.contains("failed: netperf exited 255"), "{page}");
    let json = netagg(&dir.db(), &["show", &rec.id, "--json"]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["document"]["seed"], 7);
    assert_eq!(value["runs"].as_array().unwrap().len(), rec.runs.len());

    // _bulk: an action line and one flat document per run.
    let bulk = netagg(&dir.db(), &["export", &rec.id, "--format", "opensearch"]);
    assert_eq!(code(&bulk), 0);
    let body = text(&bulk.stdout);
    assert!(body.ends_with('\n'));
    let lines: Vec<serde_json::Value> = body
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2 * rec.runs.len());
    for (pair, run) in lines.chunks(2).zip(&rec.runs) {
        assert_eq!(pair[0]["index"]["_id"], run.id.as_str());
        let doc = pair[1].as_object().unwrap();
        assert_eq!(doc["uuid"], rec.id.as_str());
        assert!(doc.values().all(|v| !v.is_object()), "flat: {doc:?}");
        if run.status.is_ok() {
            assert_eq!(doc["THROUGHPUT"], run.metrics["THROUGHPUT"]);
            let (low, high) = (
                doc["THROUGHPUT_ci95_low"].as_f64().unwrap(),
                doc["THROUGHPUT_ci95_high"].as_f64().unwrap(),
            );
            assert!(low < doc["THROUGHPUT_mean"].as_f64().unwrap() && high > low);
            assert_eq!(doc["THROUGHPUT_samples"], 5);
        } else {
            assert_eq!(doc["status"], "failed");
        }
    }

    // perfdash: one item per cell and metric, the same label names on all.
    let dash = netagg(&dir.db(), &["export", &rec.id[..6], "--format", "perfdash"]);
    let dash: serde_json::Value = serde_json::from_slice(&dash.stdout).unwrap();
    assert_eq!(dash["version"], "v1");
    let items = dash["dataItems"].as_array().unwrap();
    assert_eq!(items.len(), 4 * 3);
    let keys = |i: &serde_json::Value| {
        let mut k: Vec<String> = i["labels"].as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    for item in items {
        assert_eq!(keys(item), keys(&items[0]));
        assert!(item["data"]
            .as_object()
            .unwrap()
            .values()
            .all(|v| v.is_f64()));
        assert!(item["data"]["CI95Low"].is_f64() && item["unit"].is_string());
    }

    let metrics = netagg(&dir.db(), &["export", &rec.id, "--format", "openmetrics"]);
    let exposition = text(&metrics.stdout);
    assert!(exposition.ends_with("# EOF\n"));
    assert!(exposition.contains("netperf_ng_throughput{"));
    assert!(exposition.contains("protocol=\"udp\",message_size=\"1024\""));
    assert!(exposition.contains("netperf_ng_run_ok{") && exposition.contains("} 0\n"));
    check_with_prometheus_parsers(&dir.0, &exposition, Text::OpenMetrics);
}

#[test]
fn compare_gives_verdicts_a_ci_can_gate_on() {
    let dir = TempDir::new();
    let db = Db::open(&dir.db()).unwrap();
    let base = experiment(1.0, 5);
    let slower = experiment(0.8, 5);
    let same = experiment(1.0, 5);
    for rec in [&base, &slower, &same] {
        resultsdb::store_experiment(&db, rec).unwrap();
    }
    drop(db);

    let itself = netagg(&dir.db(), &["compare", &base.id, &base.id]);
    assert_eq!(code(&itself), 0, "{}", text(&itself.stdout));
    let table = text(&itself.stdout);
    let verdict_rows: Vec<&str> = table.lines().filter(|l| l.contains("=")).collect();
    assert_eq!(verdict_rows.len(), 4 * 2, "{table}");
    assert!(
        verdict_rows
            .iter()
            .all(|l| l.ends_with("no significant change")),
        "{table}"
    );

    let worse = netagg(&dir.db(), &["compare", &base.id, &slower.id]);
    assert_eq!(code(&worse), 1, "{}", text(&worse.stdout));
    let table = text(&worse.stdout);
    assert!(
        table.contains("slower") && table.contains("significant regression"),
        "{table}"
    );
    // The other way round it is faster: exit 0.
    let better = netagg(&dir.db(), &["compare", &slower.id, &base.id, "--json"]);
    assert_eq!(code(&better), 0);
    let c: serde_json::Value = serde_json::from_slice(&better.stdout).unwrap();
    assert_eq!(c["regressions"], 0);
    let rows = c["rows"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["verdict"] == "faster"), "{rows:?}");
    let throughput = rows.iter().find(|r| r["metric"] == "THROUGHPUT").unwrap();
    assert!(throughput["low"].as_f64().unwrap() > 1.0);
    // A tolerance wider than the change forgives it.
    let tolerated = netagg(
        &dir.db(),
        &["compare", &base.id, &slower.id, "--tolerance", "30"],
    );
    assert_eq!(code(&tolerated), 0, "{}", text(&tolerated.stdout));
    // Reproducible: the same seed gives the same intervals.
    let again = netagg(&dir.db(), &["compare", &slower.id, &base.id, "--json"]);
    assert_eq!(again.stdout, better.stdout);
    // A metric asked for by name, any case; one neither has is an error.
    let one = netagg(
        &dir.db(),
        &[
            "compare",
            &base.id,
            &same.id,
            "--metric",
            "local_send_calls",
        ],
    );
    assert_eq!(code(&one), 0);
    assert!(text(&one.stdout).contains("LOCAL_SEND_CALLS"));
    let none = netagg(
        &dir.db(),
        &["compare", &base.id, &same.id, "--metric", "NOPE"],
    );
    assert_eq!(code(&none), 2);
    one_error_line(&none, "NOPE");
}

#[test]
fn single_results_compare_without_pretending_to_an_interval() {
    let dir = TempDir::new();
    let db = Db::open(&dir.db()).unwrap();
    let mut a = experiment(1.0, 1);
    a.factors.clear();
    a.runs.retain(|r| r.status.is_ok());
    a.runs.truncate(1);
    a.runs[0].cell.clear();
    let mut b = a.clone();
    b.id = uuid(ids());
    b.runs[0].id = uuid(ids());
    b.runs[0].metrics.insert("THROUGHPUT".into(), 500.0);
    resultsdb::store_experiment(&db, &a).unwrap();
    resultsdb::store_experiment(&db, &b).unwrap();
    drop(db);
    let out = netagg(&dir.db(), &["compare", &a.id, &b.id]);
    assert_eq!(code(&out), 0, "n = 1 is never a regression");
    let table = text(&out.stdout);
    assert!(table.contains("insufficient data (n=1)"), "{table}");
    assert!(
        table.contains("0.5000"),
        "the ratio is still shown: {table}"
    );
}

#[test]
fn list_filters_by_kind_test_host_kernel_tag_and_date() {
    let dir = TempDir::new();
    let db = Db::open(&dir.db()).unwrap();
    let mut stored = Vec::new();
    for (i, (host, kernel, tag, test)) in [
        ("198.18.0.2", "6.1.0-18-amd64", "nightly", "omni"),
        ("198.18.0.3", "6.10.2", "nightly", "TCP_RR"),
        ("198.18.0.2", "6.1.5", "release", "TCP_STREAM"),
    ]
    .into_iter()
    .enumerate()
    {
        let mut rec = experiment(1.0, 2);
        rec.host = host.into();
        rec.environment.local.insert("kernel".into(), kernel.into());
        rec.tags = vec![tag.into()];
        rec.started = format!("2026-11-2{i}T10:00:00.000Z");
        for r in &mut rec.runs {
            r.commands = vec![vec!["netperf".into(), "-t".into(), test.into()]];
        }
        resultsdb::store_experiment(&db, &rec).unwrap();
        stored.push(rec.id);
    }
    let ids = |f: Filter| -> Vec<String> {
        query::list(&db, &f)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect()
    };
    let all = ids(Filter::default());
    assert_eq!(
        all,
        vec![stored[2].clone(), stored[1].clone(), stored[0].clone()]
    );
    let host = ids(Filter {
        host: Some("198.18.0.2".into()),
        ..Filter::default()
    });
    assert_eq!(host, vec![stored[2].clone(), stored[0].clone()]);
    let kernel = ids(Filter {
        kernel: Some("6.1".into()),
        ..Filter::default()
    });
    assert_eq!(
        kernel,
        vec![stored[2].clone(), stored[0].clone()],
        "6.1 is not 6.10"
    );
    let tagged = ids(Filter {
        tags: vec!["nightly".into()],
        since: Some("2026-11-21".into()),
        ..Filter::default()
    });
    assert_eq!(tagged, vec![stored[1].clone()]);
    let test = ids(Filter {
        test: Some("tcp_rr".into()),
        kind: Some(Kind::Experiment),
        ..Filter::default()
    });
    assert_eq!(test, vec![stored[1].clone()]);
    assert!(ids(Filter {
        kind: Some(Kind::Netperf),
        ..Filter::default()
    })
    .is_empty());
    drop(db);
    let out = netagg(&dir.db(), &["list", "--tag", "nightly", "--limit", "1"]);
    assert_eq!(code(&out), 0);
    let table = text(&out.stdout);
    assert_eq!(table.lines().count(), 2, "{table}");
    assert!(table.starts_with("ID ") && table.contains(&stored[1][..8]));
    assert!(text(&out.stderr).contains("--limit"));
    let bad = netagg(&dir.db(), &["list", "--since", "last tuesday"]);
    assert_eq!(code(&bad), 2);
    one_error_line(&bad, "--since");
}

#[test]
fn an_id_is_resolved_by_prefix_like_git() {
    let dir = TempDir::new();
    let db = Db::open(&dir.db()).unwrap();
    let mut a = experiment(1.0, 2);
    let mut b = experiment(1.0, 2);
    a.id = "abcd0000-0000-4000-8000-000000000001".into();
    b.id = "abcd0000-0000-4000-8000-000000000002".into();
    resultsdb::store_experiment(&db, &a).unwrap();
    resultsdb::store_experiment(&db, &b).unwrap();
    assert_eq!(
        query::resolve(&db, "ABCD0000-0000-4000-8000-000000000001").unwrap(),
        a.id
    );
    drop(db);
    let ambiguous = netagg(&dir.db(), &["show", "abcd"]);
    assert_eq!(code(&ambiguous), 2);
    one_error_line(&ambiguous, "ambiguous");
    let unknown = netagg(&dir.db(), &["export", "ffff", "--format", "perfdash"]);
    assert_eq!(code(&unknown), 2);
    one_error_line(&unknown, "no result with id ffff");
    let garbage = netagg(&dir.db(), &["show", "x'; DROP TABLE results; --"]);
    assert_eq!(code(&garbage), 2);
    one_error_line(&garbage, "is not a result id");
    let missing = netagg(&dir.0.join("none.db"), &["list"]);
    assert_eq!(code(&missing), 2);
    one_error_line(&missing, "no results database at");
}

#[test]
fn a_saved_experiment_record_can_be_imported() {
    let dir = TempDir::new();
    let rec = experiment(1.0, 3);
    let file = dir.0.join("record.json");
    std::fs::write(&file, serde_json::to_string_pretty(&rec).unwrap()).unwrap();
    let out = netagg(&dir.db(), &["import", file.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), rec.id);
    let db = Db::open_read_only(&dir.db()).unwrap();
    assert_eq!(query::load_experiment(&db, &rec.id).unwrap(), rec);
    drop(db);
    let again = netagg(&dir.db(), &["import", file.to_str().unwrap()]);
    assert_eq!(code(&again), 2);
    one_error_line(&again, "already stored");
    let mut newer = serde_json::to_value(&rec).unwrap();
    newer["record_version"] = 99.into();
    std::fs::write(&file, newer.to_string()).unwrap();
    let out = netagg(&dir.db(), &["import", file.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    one_error_line(&out, "record version 99 is newer");
    std::fs::write(&file, "{\"id\": 1").unwrap();
    let out = netagg(&dir.db(), &["import", file.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    one_error_line(&out, "not JSON");
}
