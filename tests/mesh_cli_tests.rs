//! `netagg mesh`: options it cannot use are refused before any traffic
//! with one line and exit 2; a saved mesh is checked member by member and
//! drawn again byte for byte; its JSON and CSV have the shape scripts read
//! (one finding per object, one CSV row per pair and metric); a pair that
//! failed is reported with its reason and never as a zero; and on loopback
//! a mesh of netservers runs end to end (written, stored, compared, drawn
//! again), reports a dead endpoint's pairs as failed, and keeps what
//! finished when interrupted. Structure only, never timings.

mod common;
use common::ramp::OutDir;
use common::results::TempDir;
use common::*;
use netperf_ng::mesh::model::{Endpoint, Figure, Mesh, Outcome, PairRun};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(300);

/// A key file in `dir`.
fn key_file(dir: &Path) -> String {
    let path = dir.join("mesh.key");
    std::fs::write(
        &path,
        "6d657368206b6579206f662074686520746573742073756974650a\n",
    )
    .unwrap();
    path.to_string_lossy().into_owned()
}

/// netserver's own opt-in options, when this build has them (the
/// coordinator's stand-in before them runs each test from here).
fn opt_in(key: &str) -> Vec<String> {
    let help = Command::new(NETSERVER).arg("-h").output().unwrap();
    let help = text(&help.stdout) + &text(&help.stderr);
    match help.contains("--mesh-key") {
        true => ["--mesh-key", key, "--mesh-peers", "127.0.0.0/8"]
            .map(String::from)
            .to_vec(),
        false => Vec::new(),
    }
}

/// `n` netservers on 127.0.0.1 that run mesh tests with `key`.
fn endpoints(n: usize, key: &str) -> Vec<Server> {
    let extra = opt_in(key);
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    (0..n)
        .map(|_| Server::start_with("127.0.0.1", &extra))
        .collect()
}

/// `netagg mesh` over `servers` (`--host 127.0.0.1:PORT` each) with the
/// key, the tests and the length, into `dir`.
fn mesh_args(
    servers: &[Server],
    key: &str,
    tests: &str,
    duration: &str,
    dir: &Path,
) -> Vec<String> {
    let mut args = vec!["mesh".to_string()];
    for s in servers {
        args.extend(["--host".to_string(), format!("127.0.0.1:{}", s.port)]);
    }
    args.extend(["--mesh-key", key, "--tests", tests, "--duration", duration].map(String::from));
    args.extend(["--out".to_string(), dir.to_string_lossy().into_owned()]);
    args
}

fn mesh(args: &[String]) -> std::process::Output {
    let all: Vec<&str> = args.iter().map(String::as_str).collect();
    run_with_limit(&NETAGG, &all, LIMIT)
}

fn saved(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("mesh.json")).unwrap()).unwrap()
}

fn csv_rows(dir: &Path) -> Vec<csv::StringRecord> {
    let mut reader = csv::Reader::from_path(dir.join("mesh.csv")).unwrap();
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "src", "dst", "src_node", "src_zone", "dst_node", "dst_zone", "test", "metric",
            "value", "unit", "outcome", "reason"
        ]
    );
    reader.records().map(Result::unwrap).collect()
}

/// Every pair that did not finish has its reason and no value anywhere:
/// not in the JSON, not in a grid, not in the CSV.
fn never_a_zero(dir: &Path) {
    let doc = saved(dir);
    let names: Vec<&str> = doc["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    for p in doc["pairs"].as_array().unwrap() {
        if p["outcome"] == "ok" {
            assert!(
                p["values"].as_object().is_some_and(|v| !v.is_empty()),
                "{p}"
            );
            continue;
        }
        assert!(p["reason"].as_str().is_some_and(|r| !r.is_empty()), "{p}");
        assert!(p.get("values").is_none(), "{p}");
        let (i, j) = (
            names.iter().position(|n| *n == p["src"]).unwrap(),
            names.iter().position(|n| *n == p["dst"]).unwrap(),
        );
        for g in doc["grids"].as_array().unwrap() {
            if g["test"] == p["test"] {
                assert!(g["values"][i][j].is_null(), "{g}");
            }
        }
    }
    for row in csv_rows(dir) {
        match &row[10] {
            "ok" => {}
            _ => assert!(row[8].is_empty() && !row[11].is_empty(), "{row:?}"),
        }
    }
}

#[test]
fn options_it_cannot_use_are_refused_before_any_traffic() {
    let out = OutDir::named("mesh-refused");
    std::fs::create_dir_all(&out.0).unwrap();
    let key = key_file(&out.0);
    let empty = out.0.join("empty.key");
    std::fs::write(&empty, "\n").unwrap();
    let empty = empty.to_string_lossy().into_owned();
    let empty_refused = format!("--mesh-key {empty}: ");
    let inventory = out.0.join("inventory.toml");
    std::fs::write(
        &inventory,
        "[[endpoint]]\nname = \"pod-a\"\naddress = \"127.0.0.1\"\nzone = \"z1\"\nnetwork = \"pod\"\n\n\
         [[endpoint]]\nname = \"svc\"\naddress = \"127.0.0.9\"\nnetwork = \"service\"\n",
    )
    .unwrap();
    let inventory = inventory.to_string_lossy().into_owned();
    let dir = out.0.join("never");
    let dir = dir.to_string_lossy();
    let two = ["--host", "127.0.0.1:9", "--host", "127.0.0.2:9"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--mesh-key", &key], "no endpoints"),
        (
            vec!["--host", "127.0.0.1", "--mesh-key", &key],
            "a mesh needs two or more",
        ),
        (two.to_vec(), "--mesh-key FILE"),
        (
            [&two[..], &["--mesh-key", "/nonexistent/mesh.key"]].concat(),
            "--mesh-key /nonexistent/mesh.key: ",
        ),
        ([&two[..], &["--mesh-key", &empty]].concat(), &empty_refused),
        (
            [&two[..], &["--mesh-key", &key, "--tests", "TCP_RR*4"]].concat(),
            "drop the *N",
        ),
        (
            [&two[..], &["--mesh-key", &key, "--tests", "UDP_STREAM"]].concat(),
            "the mesh measures",
        ),
        (
            [&two[..], &["--mesh-key", &key, "--pairs", "sideways"]].concat(),
            "--pairs",
        ),
        (
            [&two[..], &["--mesh-key", &key, "--pairs", "node=nobody"]].concat(),
            "nobody",
        ),
        (
            [&two[..], &["--mesh-key", &key, "--pairs", "same-zone"]].concat(),
            "--pairs same-zone",
        ),
        (
            vec!["--inventory", &inventory, "--mesh-key", &key],
            "svc is a Service, not an endpoint on a node: left out",
        ),
        (
            vec!["--inventory", &inventory, "--mesh-key", &key],
            "one endpoint (pod-a): a mesh needs two or more",
        ),
        (
            [&two[..], &["--mesh-key", &key, "--duration", "0"]].concat(),
            "--duration",
        ),
        (
            [&two[..], &["--mesh-key", &key, "--concurrency", "0"]].concat(),
            "--concurrency",
        ),
        (
            vec![
                "--host",
                "127.0.0.1:9",
                "--host",
                "127.0.0.1:9",
                "--mesh-key",
                &key,
            ],
            "the same netserver",
        ),
        (
            [&two[..], &["--mesh-key", &key, "--hosts-dns", "localhost"]].concat(),
            "one way",
        ),
    ];
    for (args, why) in cases {
        let mut all = vec!["mesh", "--out", &dir];
        all.extend(args.iter().copied());
        let run = run_with_limit(&NETAGG, &all, Duration::from_secs(60));
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(why), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(text(&run.stdout).is_empty(), "{args:?}");
        assert!(!Path::new(&*dir).exists(), "{args:?} wrote {dir}");
    }
}

/// Six endpoints, TCP_STREAM: the fifth sends at half the rate, one pair
/// failed, one missing (interrupted).
fn synthetic() -> Mesh {
    let names = ["a", "b", "c", "d", "e", "f"];
    let endpoints = names
        .iter()
        .map(|n| Endpoint {
            name: n.to_string(),
            address: "198.18.0.1".into(),
            port: 12865,
            node: Some(format!("node-{n}")),
            zone: None,
        })
        .collect();
    let mut pairs = Vec::new();
    for src in 0..6 {
        for dst in (0..6).filter(|&d| d != src) {
            let wobble = 1.0 + 0.01 * (((src * 7 + dst * 3) % 5) as f64 - 2.0);
            let value = if src == 4 { 470.0 } else { 940.0 } * wobble;
            let outcome = match (src, dst) {
                (1, 2) => {
                    Outcome::Failed("netperf exited with 1: establish_control: refused".into())
                }
                (5, 0) => Outcome::Missing("interrupted before it ran".into()),
                _ => Outcome::Ok(vec![Figure {
                    metric: "tcp_stream_throughput".into(),
                    value,
                    unit: "10^6bits/s".into(),
                }]),
            };
            pairs.push(PairRun {
                src,
                dst,
                test: "TCP_STREAM".into(),
                round: pairs.len() + 1,
                span: Some((pairs.len() as f64, pairs.len() as f64 + 1.0)),
                outcome,
                confirmation: None,
            });
        }
    }
    let mut mesh = Mesh {
        started: "2026-11-28T12:00:00.000Z".into(),
        start_epoch: 1.7e9,
        command_line: "netagg mesh --host a ... --tests TCP_STREAM".into(),
        duration: 3,
        tests: vec!["TCP_STREAM".into()],
        pairs_asked: "all".into(),
        concurrency: None,
        rounds: 30,
        elapsed: 150.0,
        endpoints,
        pairs,
        grids: Vec::new(),
        findings: Vec::new(),
        interrupted: true,
        not_confirmed: 0,
    };
    mesh.analyse();
    mesh
}

#[test]
fn a_saved_mesh_has_its_shape_and_is_drawn_again_byte_for_byte() {
    let out = OutDir::named("mesh-saved");
    let mesh = synthetic();
    let json = serde_json::to_string_pretty(&mesh.to_json()).unwrap() + "\n";
    let back = Mesh::from_json(&serde_json::from_str(&json).unwrap()).unwrap();
    assert_eq!(back, mesh);
    let mut files = vec![("mesh.json".to_string(), json)];
    files.extend(netperf_ng::mesh::output::files(&back).unwrap());
    write_all(&out.0, &files);
    let doc = saved(&out.0);
    assert_eq!(doc["format"], "netagg-mesh");
    assert_eq!(doc["endpoints"][4]["name"], "e");
    let findings = doc["findings"].as_array().unwrap();
    assert!(!findings.is_empty(), "the slow sender is not named: {doc}");
    for f in findings {
        for key in [
            "kind",
            "endpoints",
            "metric",
            "effect",
            "noise",
            "score",
            "cells",
        ] {
            assert!(f.get(key).is_some(), "{key} missing in {f}");
        }
        assert!(["node", "path", "zone-link"].contains(&f["kind"].as_str().unwrap()));
    }
    assert!(
        findings
            .iter()
            .any(|f| f["endpoints"] == serde_json::json!(["e"])),
        "{findings:?}"
    );
    assert_eq!(doc["grids"][0]["values"].as_array().unwrap().len(), 6);
    // 30 pairs, one metric each.
    assert_eq!(csv_rows(&out.0).len(), 30);
    never_a_zero(&out.0);
    let txt = std::fs::read_to_string(out.0.join("mesh.txt")).unwrap();
    assert!(
        txt.contains("\n\nFindings (") && txt.contains("failed") && txt.contains("missing"),
        "{txt}"
    );
    assert!(txt.find("Findings").unwrap() < txt.find("TCP_STREAM throughput, ").unwrap());
    assert!(
        txt.contains("node e (") && txt.contains("node node-e"),
        "{txt}"
    );
    common::saved::redraws_identically(
        &out.0.join("mesh.json"),
        &["mesh.txt", "mesh.csv", "mesh.html"],
    );
    let good = std::fs::read_to_string(out.0.join("mesh.json")).unwrap();
    for (from, to, why) in [
        (
            "\"outcome\": \"failed\"",
            "\"outcome\": \"zero\"",
            "not ok, failed or missing",
        ),
        ("\"name\": \"f\"", "\"name\": \"a\"", "named twice"),
        (
            "\"kind\": \"node\"",
            "\"kind\": \"rack\"",
            "not node, path or zone-link",
        ),
        (
            "\"better\": \"higher\"",
            "\"better\": \"sideways\"",
            "not higher or lower",
        ),
    ] {
        assert!(good.contains(from), "{from}");
        common::saved::refused(&out.0, &good.replacen(from, to, 1), why);
    }
}

/// The synthetic mesh with the path a -> d at a third of its rate, and
/// that pair measured again at `again` (None: not measured again).
fn slow_path(again: Option<f64>) -> Mesh {
    let mut mesh = synthetic();
    let p = mesh
        .pairs
        .iter_mut()
        .find(|p| (p.src, p.dst) == (0, 3))
        .unwrap();
    if let Outcome::Ok(figures) = &mut p.outcome {
        figures[0].value /= 3.0;
    }
    p.confirmation = again.map(|value| {
        let figure = Figure {
            metric: "tcp_stream_throughput".into(),
            value,
            unit: "10^6bits/s".into(),
        };
        (Some((200.0, 203.0)), Outcome::Ok(vec![figure]))
    });
    mesh.analyse();
    mesh
}

fn names_the_path(mesh: &Mesh) -> bool {
    mesh.findings
        .iter()
        .any(|f| f.endpoints == ["a".to_string(), "d".to_string()])
}

#[test]
fn a_path_finding_is_kept_only_when_its_second_measurement_confirms_it() {
    let unconfirmed = slow_path(None);
    assert!(names_the_path(&unconfirmed), "{:?}", unconfirmed.findings);
    let confirmed = slow_path(Some(320.0));
    assert!(names_the_path(&confirmed), "{:?}", confirmed.findings);
    assert_eq!(confirmed.not_confirmed, 0);
    let dropped = slow_path(Some(935.0));
    assert!(!names_the_path(&dropped), "{:?}", dropped.findings);
    assert_eq!(dropped.not_confirmed, 1);
    let txt = netperf_ng::mesh::output::text(&dropped);
    assert!(
        txt.contains("1 path finding not confirmed by its second measurement"),
        "{txt}"
    );
    // Both measurements are saved, and drawn again byte for byte.
    let out = OutDir::named("mesh-confirmed");
    let json = serde_json::to_string_pretty(&dropped.to_json()).unwrap() + "\n";
    let back = Mesh::from_json(&serde_json::from_str(&json).unwrap()).unwrap();
    assert_eq!(back, dropped);
    let mut files = vec![("mesh.json".to_string(), json)];
    files.extend(netperf_ng::mesh::output::files(&back).unwrap());
    write_all(&out.0, &files);
    let doc = saved(&out.0);
    assert_eq!(doc["not_confirmed"], 1);
    let pair = doc["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["src"] == "a" && p["dst"] == "d")
        .unwrap();
    assert_eq!(
        pair["confirmation"]["values"]["tcp_stream_throughput"]["value"],
        935.0
    );
    assert!(
        pair["values"]["tcp_stream_throughput"]["value"]
            .as_f64()
            .unwrap()
            < 400.0
    );
    common::saved::redraws_identically(
        &out.0.join("mesh.json"),
        &["mesh.txt", "mesh.csv", "mesh.html"],
    );
}

#[test]
fn many_unfinished_pairs_are_told_by_reason() {
    let mut mesh = synthetic();
    let why = "c: this netserver does not run mesh tests";
    for p in &mut mesh.pairs {
        p.outcome = Outcome::Failed(why.into());
    }
    mesh.analyse();
    let txt = netperf_ng::mesh::output::text(&mesh);
    assert!(txt.contains("Failed (30):\n  30 pairs (a -> b TCP_STREAM, a -> c TCP_STREAM, a -> d TCP_STREAM, ...): c: this netserver"), "{txt}");
    assert_eq!(txt.matches(why).count(), 1, "{txt}");
    assert!(txt.contains("Findings: none"), "{txt}");
}

fn write_all(dir: &Path, files: &[(String, String)]) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, body) in files {
        std::fs::write(dir.join(name), body).unwrap();
    }
}

#[test]
fn a_record_without_its_figures_is_a_failure_not_a_zero() {
    use netperf_ng::mesh::model::read_record;
    let record =
        |results: Value| serde_json::json!({"format": "netperf-ng-omni", "results": results});
    let ok = read_record(
        "TCP_STREAM",
        &record(serde_json::json!({"THROUGHPUT": {"value": 941.5, "unit": "10^6bits/s"}})),
    )
    .unwrap();
    assert_eq!(ok[0].value, 941.5);
    for (test, results, why) in [
        (
            "TCP_STREAM",
            serde_json::json!({"THROUGHPUT": {"value": 0, "unit": "x"}}),
            "nothing moved",
        ),
        ("TCP_STREAM", serde_json::json!({}), "has no THROUGHPUT"),
        (
            "TCP_RR",
            serde_json::json!({"P50_LATENCY": {"value": -1}}),
            "not a measurement",
        ),
    ] {
        let e = read_record(test, &record(results)).unwrap_err();
        assert!(e.contains(why), "{e}");
    }
    assert!(read_record("TCP_RR", &serde_json::json!({"results": 3})).is_err());
}

#[test]
fn a_loopback_mesh_runs_end_to_end_and_is_stored_pair_by_pair() {
    // The fast tier still runs a live mesh: the dead endpoint's.
    if fast_tier_skips("slow (19 s)") {
        return;
    }
    let out = OutDir::named("mesh-loopback");
    std::fs::create_dir_all(&out.0).unwrap();
    let key = key_file(&out.0);
    let servers = endpoints(3, &key);
    let db = TempDir::new();
    let dir = out.0.join("run");
    let mut args = mesh_args(&servers, &key, "TCP_STREAM,TCP_RR", "1", &dir);
    args.extend([
        format!("--store={}", db.db().display()),
        "--tag".into(),
        "loopback".into(),
    ]);
    let run = mesh(&args);
    let (stdout, stderr) = (text(&run.stdout), text(&run.stderr));
    assert!(run.status.success(), "{stdout}{stderr}");
    assert!(
        stderr.contains("6 rounds") && stderr.contains("about "),
        "{stderr}"
    );
    assert!(
        stdout.starts_with("netagg mesh: 3 endpoints") && stdout.contains("Findings"),
        "{stdout}"
    );
    let doc = saved(&dir);
    assert_eq!(doc["pairs"].as_array().unwrap().len(), 12);
    assert!(
        doc["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["outcome"] == "ok"),
        "{doc}"
    );
    assert_eq!(
        doc["endpoints"][0]["name"],
        format!("127.0.0.1:{}", servers[0].port)
    );
    assert!(doc["findings"].is_array());
    let grids = doc["grids"].as_array().unwrap();
    assert_eq!(grids.len(), 4, "throughput, P50, P99, rate");
    for g in grids {
        assert!(
            g["values"][1][1].is_null() && g["values"][0][1].as_f64().unwrap() > 0.0,
            "{g}"
        );
    }
    // 6 pairs x (1 TCP_STREAM metric + 3 TCP_RR metrics).
    assert_eq!(csv_rows(&dir).len(), 24);
    common::saved::redraws_identically(
        &dir.join("mesh.json"),
        &["mesh.txt", "mesh.csv", "mesh.html"],
    );
    let list = common::results::netagg(&db.db(), &["list", "--json"]);
    let listed = text(&list.stdout);
    assert!(
        list.status.success() && listed.contains("mesh") && listed.contains("loopback"),
        "{listed}"
    );
    let id = serde_json::from_str::<Value>(&listed).unwrap()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let compare = common::results::netagg(&db.db(), &["compare", &id, &id]);
    let rows = text(&compare.stdout);
    assert!(
        rows.contains(&format!("src=127.0.0.1:{} dst=", servers[0].port)),
        "{rows}"
    );
    assert!(
        rows.contains("test=TCP_RR") && rows.contains("THROUGHPUT"),
        "{rows}"
    );
}

#[test]
fn a_dead_endpoint_s_pairs_fail_with_their_reason_and_the_rest_complete() {
    let out = OutDir::named("mesh-dead");
    std::fs::create_dir_all(&out.0).unwrap();
    let key = key_file(&out.0);
    let mut servers = endpoints(3, &key);
    servers[2].kill();
    let dir = out.0.join("run");
    let args = mesh_args(&servers, &key, "TCP_STREAM", "1", &dir);
    let run = mesh(&args);
    let (stdout, stderr) = (text(&run.stdout), text(&run.stderr));
    assert!(run.status.success(), "{stdout}{stderr}");
    let doc = saved(&dir);
    let dead = format!("127.0.0.1:{}", servers[2].port);
    for p in doc["pairs"].as_array().unwrap() {
        let involved = p["src"] == dead.as_str() || p["dst"] == dead.as_str();
        assert_eq!(p["outcome"] == "failed", involved, "{p}");
    }
    never_a_zero(&dir);
    assert!(
        stdout.contains("Failed (4):") && stdout.contains("failed"),
        "{stdout}"
    );
}

#[test]
fn an_interrupt_keeps_the_finished_pairs_and_names_the_missing() {
    let out = OutDir::named("mesh-interrupt");
    std::fs::create_dir_all(&out.0).unwrap();
    let key = key_file(&out.0);
    let servers = endpoints(2, &key);
    let dir = out.0.join("run");
    let log = out.0.join("stderr");
    let mut child = Command::new(NETAGG.path())
        .args(mesh_args(&servers, &key, "TCP_STREAM", "2", &dir))
        .stdout(Stdio::piped())
        .stderr(Stdio::from(std::fs::File::create(&log).unwrap()))
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("round 2/2")
    {
        assert!(Instant::now() < deadline, "round 2 never started");
        assert!(child.try_wait().unwrap().is_none(), "ended before round 2");
        std::thread::sleep(Duration::from_millis(50));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let run = wait_bounded(child, Duration::from_secs(120));
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert_eq!(run.status.code(), Some(130), "{stderr}");
    let doc = saved(&dir);
    assert_eq!(doc["interrupted"], true);
    let outcomes: Vec<&str> = doc["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["ok", "missing"], "{doc}");
    assert!(
        text(&run.stdout).contains("Missing (1):"),
        "{}",
        text(&run.stdout)
    );
    never_a_zero(&dir);
}
