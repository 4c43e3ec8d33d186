//! netserver's mesh opt-in (issue 37), on loopback: a test a netserver
//! runs from itself to a peer for a coordinator (`run_origin`) end to end,
//! and every refusal: no opt-in (ours and stock's), half an opt-in at
//! start, a wrong key, a replayed request, a peer outside --mesh-peers, a
//! test too long or not in the allowlist, concurrency and rate exceeded.
//! Every wait is bounded; every netserver is killed when its test ends.

mod common;

use common::*;
use netperf_ng::mesh::remote::{run_origin, MeshKey, OriginRequest, RemoteError};
use netperf_ng::net::channel::Channel;
use netperf_ng::wire::mesh::{self as wire, Challenge, Origin, Outcome, ResultReader};
use netperf_ng::wire::Message;
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const KEY: &[u8] = b"the operator's mesh key, long enough\n";
/// The whole exchange: a 1 or 2 s test on a busy machine, 10x over.
const LIMIT: Duration = Duration::from_secs(60);

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ng-mesh-{}-{name}", std::process::id()))
}

fn key_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = temp(&format!("{name}.key"));
    std::fs::write(&path, bytes).unwrap();
    path
}

fn key() -> MeshKey {
    MeshKey::from_bytes(KEY).unwrap()
}

/// A netserver that opted in for 127.0.0.0/8, its log in `log`, with
/// `extra` options.
fn mesh_server(name: &str, extra: &[&str]) -> (Server, PathBuf) {
    let key = key_file(name, KEY);
    let log = temp(&format!("{name}.log"));
    let netperf = NETPERF.to_string();
    let mut args = vec![
        "--mesh-key",
        key.to_str().unwrap(),
        "--mesh-peers",
        "127.0.0.0/8",
        "--mesh-netperf",
        &netperf,
        "--mesh-max-duration",
        "5",
    ];
    args.extend_from_slice(extra);
    let server = Server::start_logging("127.0.0.1", &args, &[], Some(&log));
    // Read once at start: the file is not needed any more.
    let _ = std::fs::remove_file(&key);
    (server, log)
}

fn control(server: &Server) -> SocketAddr {
    format!("127.0.0.1:{}", server.port).parse().unwrap()
}

fn request(test: &str, destination: &Server, secs: u32) -> OriginRequest {
    OriginRequest {
        test: test.into(),
        destination: "127.0.0.1".parse().unwrap(),
        port: destination.port,
        duration_secs: secs,
        start_in_ms: 0,
    }
}

fn refused(result: Result<serde_json::Value, RemoteError>, says: &str) {
    match result {
        Err(RemoteError::Refused(why)) => assert!(why.contains(says), "{why}"),
        other => panic!("wanted a refusal saying {says:?}: {other:?}"),
    }
}

fn not_mesh(result: Result<serde_json::Value, RemoteError>, control: SocketAddr) {
    let line = format!(
        "{control}: this netserver does not run mesh tests (a stock netserver, or netperf-ng's without the opt-in): start netperf-ng's netserver with --mesh-key FILE --mesh-peers NET"
    );
    match result {
        Err(e @ RemoteError::NotMesh(_)) => assert_eq!(e.to_string(), line),
        other => panic!("wanted the how-to line: {other:?}"),
    }
}

/// The log, once it holds `wanted` (bounded wait).
fn log_with(path: &PathBuf, wanted: &str) -> String {
    let deadline = Instant::now() + LIMIT;
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.contains(wanted) || Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_test_runs_from_the_netserver_and_its_record_comes_back() {
    let destination = Server::start("127.0.0.1");
    let (source, log) = mesh_server("e2e", &["--mesh-rate", "100"]);
    for test in ["TCP_RR", "TCP_STREAM"] {
        let record = run_origin(
            control(&source),
            &key(),
            &request(test, &destination, 1),
            LIMIT,
        )
        .unwrap_or_else(|e| panic!("{test}: {e}"));
        assert_eq!(record["format"], "netperf-ng-omni", "{record}");
        assert_eq!(record["test"], test);
        let throughput = record["results"]["THROUGHPUT"]["value"].as_f64().unwrap();
        assert!(throughput > 0.0, "{record}");
        let latency = &record["results"]["P99_LATENCY"];
        assert_eq!(latency.is_object(), test == "TCP_RR", "{record}");
    }
    let text = log_with(&log, "mesh TCP_STREAM");
    let port = destination.port;
    assert!(
        text.contains(&format!(
            "originating mesh TCP_RR to 127.0.0.1:{port} for 1 s"
        )),
        "{text}"
    );
    assert!(text.contains(&format!("mesh TCP_RR to 127.0.0.1:{port} for 1 s: done")));
    // The key is never in the log.
    assert!(!text.contains("long enough"), "{text}");
    // A destination without a netserver: the failure is netperf's, said.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut nowhere = request("TCP_RR", &destination, 1);
    nowhere.port = port;
    match run_origin(control(&source), &key(), &nowhere, LIMIT) {
        Err(RemoteError::Failed(why)) => assert!(why.starts_with("netperf exited"), "{why}"),
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_file(log);
}

#[test]
fn a_test_toward_an_ipv6_peer_runs() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        return skip("no IPv6 loopback (::1) here");
    }
    let destination = Server::start("::1");
    let (source, log) = mesh_server("ipv6", &["--mesh-peers", "::1"]);
    let mut ask = request("TCP_RR", &destination, 1);
    ask.destination = "::1".parse().unwrap();
    let record = run_origin(control(&source), &key(), &ask, LIMIT).unwrap();
    assert!(record["results"]["THROUGHPUT"]["value"].as_f64().unwrap() > 0.0);
    // Only what is listed: ::1 is a host, not a network.
    ask.destination = "::2".parse().unwrap();
    refused(
        run_origin(control(&source), &key(), &ask, LIMIT),
        "::2 is outside",
    );
    let _ = std::fs::remove_file(log);
}

#[test]
fn a_netserver_without_the_opt_in_refuses_with_how_to_enable_it() {
    let plain = Server::start("127.0.0.1");
    // One with a passphrase closes the connection: the same line.
    let guarded = Server::start_with("127.0.0.1", &["-Z", "secret"]);
    for server in [&plain, &guarded] {
        let ask = request("TCP_RR", &plain, 1);
        not_mesh(
            run_origin(control(server), &key(), &ask, LIMIT),
            control(server),
        );
    }
}

#[test]
fn a_stock_netserver_is_refused_with_how_to_enable_it() {
    let Some(dir) = stock_dir() else { return };
    let stock = stock::start_stock_on(&dir, "127.0.0.1");
    let control: SocketAddr = format!("127.0.0.1:{}", stock.port).parse().unwrap();
    let to_itself = OriginRequest {
        test: "TCP_RR".into(),
        destination: "127.0.0.1".parse().unwrap(),
        port: stock.port,
        duration_secs: 1,
        start_in_ms: 0,
    };
    not_mesh(run_origin(control, &key(), &to_itself, LIMIT), control);
}

#[test]
fn half_an_opt_in_stops_netserver_at_start_with_the_reason() {
    let key = key_file("half", KEY);
    let short = key_file("short", b"too short\n");
    let cases: [(&[&str], &str); 4] = [
        (
            &["--mesh-key", key.to_str().unwrap()],
            "--mesh-key needs --mesh-peers",
        ),
        (
            &["--mesh-peers", "127.0.0.0/8"],
            "--mesh-peers needs --mesh-key",
        ),
        (
            &[
                "--mesh-key",
                short.to_str().unwrap(),
                "--mesh-peers",
                "127.0.0.1",
            ],
            "at least 16",
        ),
        (
            &[
                "--mesh-key",
                key.to_str().unwrap(),
                "--mesh-peers",
                "127.0.0.0/40",
            ],
            "--mesh-peers",
        ),
    ];
    for (args, says) in cases {
        let mut argv = vec!["-D", "-p", "1"];
        argv.extend_from_slice(args);
        let out = run_with_limit(&NETSERVER, &argv, Duration::from_secs(20));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    let _ = std::fs::remove_file(key);
    let _ = std::fs::remove_file(short);
}

#[test]
fn a_wrong_key_a_foreign_peer_a_long_test_and_an_unknown_test_are_refused() {
    let destination = Server::start("127.0.0.1");
    let (source, log) = mesh_server("refusals", &[]);
    let wrong = MeshKey::from_bytes(b"not the operator's key, but long").unwrap();
    let ask = |k: &MeshKey, r: &OriginRequest| run_origin(control(&source), k, r, LIMIT);
    refused(
        ask(&wrong, &request("TCP_RR", &destination, 1)),
        "not signed with this netserver's mesh key",
    );
    // 198.18.0.1 is outside 127.0.0.0/8: refused before any traffic.
    let mut foreign = request("TCP_RR", &destination, 1);
    foreign.destination = "198.18.0.1".parse().unwrap();
    refused(
        ask(&key(), &foreign),
        "198.18.0.1 is outside this netserver's --mesh-peers",
    );
    refused(
        ask(&key(), &request("TCP_RR", &destination, 6)),
        "longer than this netserver's --mesh-max-duration 5",
    );
    // The coordinator refuses an unknown test itself; sent anyway, the
    // netserver refuses it too.
    refused(
        ask(&key(), &request("TCP_SENDFILE", &destination, 1)),
        "TCP_SENDFILE",
    );
    let mut chan = connect(&source);
    let nonce = challenge(&mut chan);
    let sendfile = Origin {
        test: "TCP_SENDFILE".into(),
        destination: "127.0.0.1".parse().unwrap(),
        port: destination.port,
        duration_secs: 1,
        start_in_ms: 0,
    };
    chan.send(&sendfile.sign(KEY.trim_ascii_end(), &nonce))
        .unwrap();
    match read_result(&mut chan) {
        Outcome::Refused(why) => {
            assert!(why.contains("is not one a netserver originates"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    let text = log_with(&log, "refused a mesh request: test 'TCP_SENDFILE'");
    for said in [
        "refused a mesh request: the request is not signed",
        "refused mesh TCP_RR to 198.18.0.1:",
        "refused mesh TCP_RR to 127.0.0.1:",
        "refused a mesh request: test 'TCP_SENDFILE'",
    ] {
        assert!(text.contains(said), "{said}: {text}");
    }
    assert!(!text.contains("originating"), "{text}");
    let _ = std::fs::remove_file(log);
}

fn connect(server: &Server) -> Channel {
    let stream = TcpStream::connect_timeout(&control(server), LIMIT).unwrap();
    Channel::new(stream)
}

fn challenge(chan: &mut Channel) -> [u8; wire::NONCE_LEN] {
    chan.send(&wire::encode_hello()).unwrap();
    match Challenge::decode(&chan.recv(LIMIT).unwrap()).unwrap() {
        Challenge::Nonce(nonce) => nonce,
        other => panic!("{other:?}"),
    }
}

fn read_result(chan: &mut Channel) -> Outcome {
    let mut reader = ResultReader::default();
    for _ in 0..200 {
        if let Some(done) = reader.push(&chan.recv(LIMIT).unwrap()).unwrap() {
            return done.outcome;
        }
    }
    panic!("a result of more than 200 messages");
}

#[test]
fn a_replayed_request_is_refused() {
    let destination = Server::start("127.0.0.1");
    let (source, log) = mesh_server("replay", &[]);
    let origin = Origin {
        test: "TCP_RR".into(),
        destination: "127.0.0.1".parse().unwrap(),
        port: destination.port,
        duration_secs: 1,
        start_in_ms: 0,
    };
    let mut chan = connect(&source);
    let nonce = challenge(&mut chan);
    let signed: Message = origin.sign(KEY.trim_ascii_end(), &nonce);
    chan.send(&signed).unwrap();
    assert!(matches!(read_result(&mut chan), Outcome::Record(_)));
    // Again on the same connection: its challenge is used up.
    chan.send(&signed).unwrap();
    match read_result(&mut chan) {
        Outcome::Refused(why) => assert!(why.contains("replayed"), "{why}"),
        other => panic!("{other:?}"),
    }
    // On another connection, after a challenge of its own, or without one.
    let mut other = connect(&source);
    other.send(&signed).unwrap();
    assert!(matches!(read_result(&mut other), Outcome::Refused(why) if why.contains("replayed")));
    let fresh = challenge(&mut other);
    assert_ne!(fresh, nonce);
    other.send(&signed).unwrap();
    assert!(matches!(read_result(&mut other), Outcome::Refused(why) if why.contains("replayed")));
    let text = log_with(&log, "(a replayed or stale one)");
    assert_eq!(text.matches("originating mesh TCP_RR").count(), 1, "{text}");
    let _ = std::fs::remove_file(log);
}

#[test]
fn concurrency_and_rate_are_bounded() {
    let destination = Server::start("127.0.0.1");
    let (source, log) = mesh_server("concurrency", &["--mesh-rate", "2"]);
    let at = control(&source);
    let long = request("TCP_STREAM", &destination, 5);
    let first = std::thread::spawn(move || run_origin(at, &key(), &long, LIMIT));
    let text = log_with(&log, "originating mesh TCP_STREAM");
    assert!(text.contains("originating mesh TCP_STREAM"), "{text}");
    refused(
        run_origin(at, &key(), &request("TCP_RR", &destination, 1), LIMIT),
        "1 mesh test(s) already running here (--mesh-concurrency)",
    );
    assert!(first.join().unwrap().is_ok());
    // The refused one did not count: one more this minute, then no more.
    assert!(run_origin(at, &key(), &request("TCP_RR", &destination, 1), LIMIT).is_ok());
    refused(
        run_origin(at, &key(), &request("TCP_RR", &destination, 1), LIMIT),
        "2 mesh test(s) in the last minute already (--mesh-rate)",
    );
    let _ = std::fs::remove_file(log);
}
