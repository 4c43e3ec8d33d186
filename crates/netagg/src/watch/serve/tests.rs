//! The HTTP side against hostile clients over real loopback sockets, and
//! what it serves from a status built by hand and a database filled with
//! the results crate's own store calls.

use super::data::{self, Source};
use super::http::{self, parse};
use super::metrics::{self, Format};
use super::*;
use crate::watch::state::{Outcome, RunEntry, Status};
use netperf_results::changes::{ContextChange, Found};
use netperf_results::db::Db;
use netperf_results::history::Series;
use netperf_results::model::{OffloadRecord, RunRecord, RunStatus};
use netperf_results::record::{Kind, StoredResult};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Instant;

/// A temporary directory, removed when dropped.
struct Temp(PathBuf);

impl Temp {
    fn new(name: &str) -> Temp {
        let dir =
            std::env::temp_dir().join(format!("netagg-watch-serve-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Temp(dir)
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A stored netperf-style result of the watch "t": one run measuring
/// `value` at minute `minute` with `kernel`.
fn result(minute: u32, value: f64, kernel: &str, tags: &[&str]) -> StoredResult {
    let time = format!("2026-11-01T{:02}:{:02}:00.000Z", minute / 60, minute % 60);
    StoredResult {
        id: netperf_base::ids::new_uuid(),
        kind: Kind::Netperf,
        test: "TCP_STREAM".into(),
        host: "127.0.0.1".into(),
        kernel: kernel.into(),
        title: String::new(),
        started: time.clone(),
        ended: time.clone(),
        status: "complete".into(),
        tool_version: "0.1.0".into(),
        command_line: vec!["netperf".into()],
        tags: tags.iter().map(|t| t.to_string()).collect(),
        factors: Vec::new(),
        runs: vec![RunRecord {
            id: netperf_base::ids::new_uuid(),
            order: 0,
            cell: Vec::new(),
            replicate: 1,
            started: time.clone(),
            ended: time,
            status: RunStatus::Ok,
            metrics: BTreeMap::from([("THROUGHPUT".to_string(), value)]),
            facts: BTreeMap::from([("THROUGHPUT_UNITS".to_string(), "10^6bits/s".to_string())]),
            offloads: OffloadRecord::default(),
            commands: Vec::new(),
        }],
        document: None,
    }
}

/// A database of `n` runs of the watch "t" (a step down at half), and one
/// result of another watch that must not show.
fn filled(dir: &Temp, n: u32) -> PathBuf {
    let path = dir.0.join("results.db");
    let db = Db::open(&path).unwrap();
    for i in 0..n {
        let (v, k) = match i < n / 2 {
            true => (1000.0 + f64::from(i % 3), "6.1"),
            false => (800.0 + f64::from(i % 3), "6.5"),
        };
        netperf_results::store::store_result(&db, &result(i, v, k, &["watch=t"])).unwrap();
    }
    let other = result(n, 5.0, "6.1", &["watch=other"]);
    netperf_results::store::store_result(&db, &other).unwrap();
    path
}

fn found(series: &str, time: &str) -> Found {
    Found {
        series: series.into(),
        metric: "THROUGHPUT".into(),
        unit: "10^6bits/s".into(),
        index: 10,
        time: time.into(),
        result: None,
        run: None,
        time_before: String::new(),
        median_before: 1001.0,
        median_after: 801.0,
        n_before: 10,
        n_after: 10,
        change: Some(-0.2),
        change_low: Some(-0.21),
        change_high: Some(-0.19),
        confidence: 0.95,
        p_value: 0.001,
        local_p_value: 0.001,
        alpha: 0.01,
        direction: "slower",
        context_changes: vec![ContextChange {
            key: "kernel".into(),
            before: "6.1".into(),
            after: "6.5".into(),
        }],
    }
}

/// The status of watch "t" over `db` after three runs, one failed.
fn status(db: PathBuf) -> Status {
    let mut s = Status::new(
        "t",
        db,
        900.0,
        vec!["experiment TCP_STREAM 127.0.0.1".into()],
    );
    for (i, outcome) in [Outcome::Ok, Outcome::Failed, Outcome::Ok]
        .into_iter()
        .enumerate()
    {
        s.push_run(RunEntry {
            sequence: i as u64 + 1,
            result: format!("r{i}"),
            started: "2026-11-01T00:00:00.000Z".into(),
            ended: "2026-11-01T00:00:10.000Z".into(),
            outcome,
            reason: (outcome == Outcome::Failed).then(|| "establish control: refused <&>".into()),
            stored: true,
        });
    }
    s.last_success = Some(Instant::now());
    s.next_run = Some(Instant::now() + Duration::from_secs(600));
    s.changes = vec![found(
        "TCP_STREAM 127.0.0.1 THROUGHPUT",
        "2026-11-01T00:10:00.000Z",
    )];
    s.changes_searched = Some("2026-11-01T00:20:00.000Z".into());
    s
}

/// One exchange: `bytes` sent, the write side closed, everything read
/// back (bounded in time).
fn exchange(addr: SocketAddr, bytes: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let _ = s.write_all(bytes);
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn status_code(reply: &str) -> u16 {
    reply
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not a response: {reply:?}"))
}

fn get(addr: SocketAddr, path: &str, accept: &str) -> (u16, String) {
    let reply = exchange(
        addr,
        format!("GET {path} HTTP/1.1\r\nHost: x\r\nAccept: {accept}\r\n\r\n").as_bytes(),
    );
    let body = reply
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status_code(&reply), body)
}

fn server(db: PathBuf) -> SocketAddr {
    start("127.0.0.1:0", Shared::new(status(db)))
        .unwrap()
        .local_addr()
}

#[test]
fn heads_are_parsed_or_refused_with_the_right_status() {
    let ok = parse(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept: text/plain").unwrap();
    assert_eq!((ok.path.as_str(), ok.head_only), ("/metrics", false));
    assert_eq!(ok.accept, "text/plain");
    assert!(parse(b"HEAD / HTTP/1.0").unwrap().head_only);
    assert_eq!(
        parse(b"GET http://x/api/status HTTP/1.1").unwrap().path,
        "/api/status"
    );
    assert_eq!(parse(b"GET http://x HTTP/1.1").unwrap().path, "/");
    let refused = |head: &[u8]| parse(head).unwrap_err().status;
    assert_eq!(refused(b"POST / HTTP/1.1\r\nContent-Length: 5"), 405);
    assert_eq!(refused(b"DELETE / HTTP/1.1"), 405);
    assert_eq!(refused(b"GET / HTTP/1.1\r\nContent-Length: 5"), 413);
    assert_eq!(
        refused(b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked"),
        413
    );
    assert_eq!(refused(b"GET / HTTP/2.0"), 505);
    assert_eq!(refused(b"GET /\xff\xfe HTTP/1.1"), 400);
    assert_eq!(refused(b"GARBAGE"), 400);
    assert_eq!(refused(b"GET  / HTTP/1.1"), 400);
    assert_eq!(refused(b"GET ftp://x/ HTTP/1.1"), 400);
    assert_eq!(refused(b"GET * HTTP/1.1"), 400);
    assert_eq!(refused(b"GET / HTTP/1.1\r\nno colon here"), 400);
    let post = parse(b"POST / HTTP/1.1").unwrap_err();
    assert!(post.headers.contains(&("Allow", "GET, HEAD".to_string())));
}

#[test]
fn hostile_requests_get_refusals_not_files_or_hangs() {
    let dir = Temp::new("hostile");
    let addr = server(filled(&dir, 4));
    let mut long = b"GET / HTTP/1.1\r\nX-Long: ".to_vec();
    long.extend(std::iter::repeat_n(b'a', 100 * 1024));
    long.extend_from_slice(b"\r\n\r\n");
    assert_eq!(status_code(&exchange(addr, &long)), 431);
    // No line end at all, then the client stops sending.
    assert_eq!(status_code(&exchange(addr, b"GET / HTTP/1.1")), 400);
    // Bare line feeds are read as line ends.
    assert_eq!(
        status_code(&exchange(addr, b"GET /metrics HTTP/1.1\n\n")),
        200
    );
    let post = exchange(
        addr,
        b"POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello world",
    );
    assert_eq!(status_code(&post), 405, "{post}");
    assert!(post.contains("Allow: GET, HEAD"));
    let passwd = exchange(addr, b"GET /../../etc/passwd HTTP/1.1\r\n\r\n");
    assert_eq!(status_code(&passwd), 404);
    assert!(!passwd.contains("root:"));
    for path in [
        "/metrics/../../etc/passwd",
        "/%2e%2e/etc/passwd",
        "/api",
        "/index.html",
    ] {
        assert_eq!(get(addr, path, "").0, 404, "{path}");
    }
    let proxied = exchange(addr, b"GET http://x/ HTTP/1.1\r\nHost: example.com\r\n\r\n");
    assert_eq!(status_code(&proxied), 200);
    assert!(proxied.contains("<!DOCTYPE html>"));
    assert_eq!(
        status_code(&exchange(addr, b"GET /\xff\xfe\xfd HTTP/1.1\r\n\r\n")),
        400
    );
    assert_eq!(status_code(&exchange(addr, b"\x00\x01\x02\r\n\r\n")), 400);
    // HEAD: GET's headers, no body.
    let head = exchange(addr, b"HEAD /metrics HTTP/1.1\r\n\r\n");
    assert_eq!(status_code(&head), 200);
    assert!(head.ends_with("\r\n\r\n"), "{head}");
    // A client that connects and says nothing is let go; the server goes on.
    drop(TcpStream::connect(addr).unwrap());
    assert_eq!(get(addr, "/api/status", "").0, 200);
}

#[test]
fn a_slow_client_is_cut_at_the_request_deadline() {
    // The server's own bounds (10 s a read, 20 s a head) scaled down to
    // 1 s and 3 s, so the test takes seconds: a byte every 0.3 s never
    // waits a read out, and only the whole head's deadline cuts it.
    let (deadline, read_timeout) = (Duration::from_secs(3), Duration::from_secs(1));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let served = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let started = Instant::now();
        let refusal = http::read_request_within(&mut stream, deadline, read_timeout);
        let took = started.elapsed();
        if let Err(Some(refusal)) = &refusal {
            http::respond(&mut stream, refusal, false);
        }
        (refusal.err().flatten().map(|r| r.status), took)
    });
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let drip = b"GET / HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let mut reply = Vec::new();
    for byte in drip.iter().cycle().take(400) {
        if s.write_all(&[*byte]).is_err() {
            break;
        }
        let mut buf = [0u8; 4096];
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                reply.extend_from_slice(&buf[..n]);
                break;
            }
            Err(_) => {}
        }
    }
    let (status, took) = served.join().unwrap();
    assert_eq!(status, Some(408));
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply:?}");
    assert!(took >= deadline - Duration::from_millis(500), "{took:?}");
    assert!(took < Duration::from_secs(60), "{took:?}");
    // The server reads with its own, longer bounds.
    assert!(http::REQUEST_DEADLINE > http::READ_TIMEOUT);
}

#[test]
fn connections_beyond_the_bound_are_refused_and_the_server_recovers() {
    let wanted = 1000;
    let limit = netperf_base::rlimit::raise_open_files().map_or(1024, |l| l.soft);
    // Each connection is two descriptors here (client and server side).
    let n = wanted.min((limit.saturating_sub(200) / 2) as usize);
    let dir = Temp::new("many");
    let addr = server(dir.0.join("none.db"));
    let mut idle = Vec::new();
    for _ in 0..n {
        match TcpStream::connect(addr) {
            Ok(s) => idle.push(s),
            Err(e) => panic!("connection {} of {n}: {e}", idle.len()),
        }
    }
    // Read every connection without waiting on the held ones (their
    // server threads wait for a request that never comes), pass after
    // pass, until the refusals are all in or 30 s went by.
    let mut told = vec![false; idle.len()];
    let until = Instant::now() + Duration::from_secs(30);
    while told.iter().filter(|t| **t).count() < n - MAX_CONNECTIONS && Instant::now() < until {
        for (s, told) in idle.iter_mut().zip(told.iter_mut()).filter(|(_, t)| !**t) {
            s.set_nonblocking(true).unwrap();
            let mut buf = [0u8; 64];
            if let Ok(k) = s.read(&mut buf) {
                *told = buf[..k].starts_with(b"HTTP/1.1 503");
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let busy = told.iter().filter(|t| **t).count();
    assert!(
        busy >= n - MAX_CONNECTIONS,
        "{busy} of {n} connections were told 503"
    );
    drop(idle);
    // The held connections end as their clients go; then it serves again.
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        match get(addr, "/metrics", "").0 {
            200 => break,
            503 if Instant::now() < until => std::thread::sleep(Duration::from_millis(200)),
            other => panic!("after the crowd left: {other}"),
        }
    }
}

#[test]
fn a_missing_database_is_said_and_everything_still_answers() {
    let dir = Temp::new("missing");
    let addr = server(dir.0.join("gone").join("results.db"));
    let (code, text) = get(addr, "/metrics", "application/openmetrics-text");
    assert_eq!(code, 200);
    assert!(
        text.contains("netperf_ng_watch_database_readable 0\n"),
        "{text}"
    );
    assert!(text.contains("netperf_ng_watch_store_failing 0\n"));
    let (code, page) = get(addr, "/", "");
    assert_eq!(code, 200);
    assert!(
        page.contains("The history cannot be read: no results database at"),
        "{page}"
    );
    let (code, api) = get(addr, "/api/status", "");
    assert_eq!(code, 200);
    let doc: serde_json::Value = serde_json::from_str(&api).unwrap();
    assert!(doc["database_error"]
        .as_str()
        .unwrap()
        .contains("no results database"));
    assert_eq!(doc["runs"].as_array().unwrap().len(), 3);
}

/// Every line of an exposition is a TYPE, a HELP, `# EOF` last, or a
/// sample of the family typed last, named as Prometheus names.
fn well_formed(text: &str, format: Format) {
    let name_ok = |n: &str| {
        !n.is_empty()
            && !n.starts_with(|c: char| c.is_ascii_digit())
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let mut family = String::new();
    let mut typed = std::collections::HashSet::new();
    let mut samples = std::collections::HashSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert!(name_ok(name) && typed.insert(name.to_string()), "{line}");
            assert!(["gauge", "counter", "info"].contains(&kind), "{line}");
            family = name.to_string();
        } else if let Some(rest) = line.strip_prefix("# HELP ") {
            assert!(rest.starts_with(&format!("{family} ")), "{line}");
        } else if line == "# EOF" {
            assert_eq!(format, Format::OpenMetrics);
        } else {
            let (series, _) = line.rsplit_once(' ').unwrap();
            assert!(samples.insert(series.to_string()), "twice: {line}");
            let name = line.split(['{', ' ']).next().unwrap();
            assert!(name.starts_with(&family), "{line} outside {family}");
            let value = line.rsplit(' ').next().unwrap();
            assert!(value.parse::<f64>().unwrap().is_finite(), "{line}");
        }
    }
    assert_eq!(text.ends_with("# EOF\n"), format == Format::OpenMetrics);
}

#[test]
fn metrics_say_the_latest_values_the_runs_and_the_open_change_points() {
    let dir = Temp::new("metrics");
    let db = filled(&dir, 20);
    let source = Source::new(Shared::new(status(db)));
    let view = source.view();
    assert_eq!(
        view.stored.series.len(),
        1,
        "the other watch's result is not read"
    );
    for format in [Format::OpenMetrics, Format::Prometheus] {
        let text = metrics::render(&view, format);
        well_formed(&text, format);
        let labels =
            "series=\"TCP_STREAM 127.0.0.1 THROUGHPUT\",test=\"TCP_STREAM\",host=\"127.0.0.1\",metric=\"THROUGHPUT\",unit=\"10^6bits/s\"";
        for want in [
            format!("netperf_ng_throughput{{{labels}}} 801\n"),
            format!("netperf_ng_watch_change_ratio{{{labels}}} -0.2\n"),
            "netperf_ng_watch_recent_runs{outcome=\"failed\"} 1\n".to_string(),
            "netperf_ng_watch_recent_runs{outcome=\"ok\"} 2\n".to_string(),
            "netperf_ng_watch_runs_total 3\n".to_string(),
            "netperf_ng_watch_pending_runs 0\n".to_string(),
            "netperf_ng_watch_database_readable 1\n".to_string(),
            "netperf_ng_watch_interval_seconds 900\n".to_string(),
            "netperf_ng_watch_change_timestamp_seconds{".to_string(),
        ] {
            assert!(text.contains(&want), "{format:?}: no {want:?} in\n{text}");
        }
        assert!(text.contains("netperf_ng_watch_last_success_age_seconds 0"));
    }
    let om = metrics::render(&view, Format::OpenMetrics);
    assert!(om.contains("# TYPE netperf_ng_watch_runs counter\n"));
    assert!(om.contains("# TYPE netperf_ng_watch info\n"));
    assert!(om.contains("\nnetperf_ng_watch_info{name=\"t\",version=\""));
    let prom = metrics::render(&view, Format::Prometheus);
    assert!(prom.contains("# TYPE netperf_ng_watch_runs_total counter\n"));
    assert!(prom.contains("# TYPE netperf_ng_watch_info gauge\n"));
    assert_eq!(
        Format::of_accept("application/openmetrics-text; version=1.0.0"),
        Format::OpenMetrics
    );
    assert_eq!(
        Format::of_accept("text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
        Format::Prometheus
    );
}

#[test]
fn the_read_is_bounded_to_the_newest_results() {
    let dir = Temp::new("bounded");
    let db = filled(&dir, 12);
    let stored = data::read(&status(db.clone()), 5);
    assert!(stored.truncated);
    let s = &stored.series[0];
    assert_eq!(s.points.len(), 5);
    assert_eq!(
        s.points[4].time, "2026-11-01T00:11:00.000Z",
        "the newest kept"
    );
    let all = data::read(&status(db), 12);
    assert!(!all.truncated);
    assert_eq!(all.series[0].points.len(), 12);
}

#[test]
fn the_page_and_the_api_show_history_changes_and_status() {
    let dir = Temp::new("page");
    let db = filled(&dir, 20);
    let mut st = status(db);
    st.store_error = Some("database or disk is full".into());
    st.pending = 2;
    let source = Source::new(Shared::new(st));
    let view = source.view();
    let html = page::render(&view);
    for want in [
        "<meta http-equiv=\"refresh\" content=\"60\">",
        "Storing runs fails: database or disk is full. 2 measured run(s)",
        "next run in 10 min",
        "establish control: refused &lt;&amp;&gt;",
        "TCP_STREAM 127.0.0.1 THROUGHPUT",
        "kernel 6.1 -&gt; 6.5",
        "-20.0% slower",
        "95%: [-21.0%, -19.0%]",
        "change point",
        "<svg",
    ] {
        assert!(html.contains(want), "no {want:?} in the page");
    }
    assert!(!html.contains("<script"));
    let series = api::series(&view);
    let points = series["series"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 20);
    assert_eq!(series["series"][0]["latest"], 801.0);
    assert_eq!(series["series"][0]["labels"]["test"], "TCP_STREAM");
    let changes = api::changes(&view);
    assert_eq!(changes["changes"][0]["direction"], "slower");
    let status = api::status(&view);
    assert_eq!(status["pending"], 2);
    assert!(status["next_run_in_seconds"].as_f64().unwrap() > 500.0);
}

/// A three-endpoint mesh of TCP_STREAM pairs, one path slow.
fn mesh_document() -> String {
    use crate::mesh::model::{Endpoint, Figure, Mesh, Outcome as PairOutcome, PairRun};
    let endpoints: Vec<Endpoint> = ["a", "b", "c"]
        .iter()
        .map(|n| Endpoint {
            name: n.to_string(),
            address: "127.0.0.1".into(),
            port: 12865,
            node: None,
            zone: None,
        })
        .collect();
    let mut pairs = Vec::new();
    for src in 0..3 {
        for dst in (0..3).filter(|d| *d != src) {
            let mut p = PairRun::waiting(src, dst, "TCP_STREAM", 1);
            p.span = Some((0.0, 1.0));
            p.outcome = PairOutcome::Ok(vec![Figure {
                metric: "tcp_stream_throughput".into(),
                value: if (src, dst) == (0, 1) { 100.0 } else { 1000.0 },
                unit: "10^6bits/s".into(),
            }]);
            pairs.push(p);
        }
    }
    let mut mesh = Mesh {
        started: "2026-11-01T00:30:00.000Z".into(),
        start_epoch: 1.79e9,
        command_line: "netagg mesh".into(),
        duration: 1,
        tests: vec!["TCP_STREAM".into()],
        pairs_asked: "all".into(),
        concurrency: None,
        rounds: 1,
        elapsed: 1.0,
        endpoints,
        pairs,
        grids: Vec::new(),
        findings: Vec::new(),
        interrupted: false,
        not_confirmed: 0,
    };
    mesh.analyse();
    mesh.to_json().to_string()
}

#[test]
fn the_newest_mesh_is_drawn_as_its_heatmaps() {
    let dir = Temp::new("mesh");
    let db_path = filled(&dir, 4);
    let db = Db::open(&db_path).unwrap();
    let mut newest = result(50, 900.0, "6.5", &["watch=t"]);
    newest.document = Some(mesh_document());
    netperf_results::store::store_result(&db, &newest).unwrap();
    // An absence stored after it has no document: the mesh is still shown.
    let mut absence = result(51, 0.0, "6.5", &["watch=t"]);
    absence.runs[0].status = RunStatus::Failed {
        reason: "refused".into(),
    };
    netperf_results::store::store_result(&db, &absence).unwrap();
    let view = Source::new(Shared::new(status(db_path))).view();
    let html = page::render(&view);
    assert!(html.contains("The newest mesh"), "{html}");
    assert!(html.contains("TCP_STREAM throughput (10^6bits/s): rows send"));
}

#[test]
fn series_labels_name_the_test_and_ends_once() {
    let series = |test: &str, host: &str, cell: &[(&str, &str)]| Series {
        name: format!("{test} {host}"),
        metric: "THROUGHPUT".into(),
        unit: "Trans/s".into(),
        test: test.into(),
        host: host.into(),
        cell: cell
            .iter()
            .map(|(f, l)| (f.to_string(), l.to_string()))
            .collect(),
        points: Vec::new(),
    };
    let names = |s: &Series| -> Vec<String> {
        metrics::series_labels(s)
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect()
    };
    let watch = series(
        "TCP_STREAM,TCP_RR",
        "a,b",
        &[("test", "TCP_RR"), ("target", "b"), ("series", "x")],
    );
    assert_eq!(
        names(&watch),
        [
            "series=TCP_STREAM,TCP_RR a,b",
            "test=TCP_RR",
            "host=b",
            "metric=THROUGHPUT",
            "unit=Trans/s",
            "factor_series=x"
        ]
    );
    let pair = series(
        "TCP_RR",
        "a,b,c",
        &[("src", "a"), ("dst", "b"), ("test", "TCP_RR")],
    );
    assert!(!names(&pair).iter().any(|l| l.starts_with("host=")));
    assert!(names(&pair).contains(&"src=a".to_string()));
}
