//! Many flows in one test (`netperf -- --flows N`) end to end over loopback
//! against our netserver: thousands of flows complete, every flow's work is
//! accounted for and adds up, fairness matches the per-flow CSV, a flow
//! killed from outside is reported and the test still ends, signals end it
//! with its result, and what cannot be served is refused before traffic.
//! Scale and speed figures live in bench/, not here.

mod common;

use common::{netperf, run_with_limit, text, wait_bounded, Server, NETPERF};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The `-k` output as name → value.
fn keyval(stdout: &str) -> BTreeMap<String, String> {
    stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn number(values: &BTreeMap<String, String>, key: &str) -> f64 {
    values
        .get(key)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{key} missing in {values:?}"))
}

const SELECTORS: &str = "THROUGHPUT,FLOWS,THREADS,FLOWS_FAILED,FLOWS_STALLED,FLOW_JAIN,\
LOCAL_BYTES_SENT,REMOTE_BYTES_RECVD,LOCAL_BYTES_RECVD,REMOTE_BYTES_SENT";

/// `netperf -t TEST -l SECS -- --flows N [extra]` with the selectors above.
fn flows_run(
    server: &Server,
    test: &str,
    secs: &str,
    flows: &str,
    extra: &[&str],
) -> BTreeMap<String, String> {
    let mut args = vec![
        "-t", test, "-l", secs, "-P", "0", "--", "--flows", flows, "-k", SELECTORS,
    ];
    args.extend_from_slice(extra);
    let out = netperf(server, &args);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{args:?}: {stdout}{}",
        text(&out.stderr)
    );
    keyval(&stdout)
}

#[test]
fn two_thousand_tcp_rr_and_crr_flows_complete_and_add_up() {
    let server = Server::start("127.0.0.1");
    for test in ["TCP_RR", "TCP_CRR"] {
        let v = flows_run(&server, test, "2", "2000", &["--threads", "2"]);
        assert_eq!(number(&v, "FLOWS"), 2000.0, "{test}");
        assert_eq!(number(&v, "THREADS"), 2.0, "{test}");
        assert_eq!(number(&v, "FLOWS_FAILED"), 0.0, "{test}: {v:?}");
        assert!(number(&v, "THROUGHPUT") > 0.0, "{test}");
        // One-byte requests and responses: what one end sent the other got.
        assert_eq!(v["LOCAL_BYTES_SENT"], v["REMOTE_BYTES_RECVD"], "{test}");
        assert_eq!(v["REMOTE_BYTES_SENT"], v["LOCAL_BYTES_RECVD"], "{test}");
    }
}

#[test]
fn every_kind_of_test_runs_with_flows_and_bytes_add_up() {
    let server = Server::start("127.0.0.1");
    // TCP bulk: a thread per flow by default, each blocking on its flow.
    let v = flows_run(&server, "TCP_STREAM", "1", "16", &[]);
    assert_eq!(v["LOCAL_BYTES_SENT"], v["REMOTE_BYTES_RECVD"]);
    assert_eq!(number(&v, "THREADS"), 16.0, "{v:?}");
    assert_eq!(number(&v, "FLOWS_FAILED"), 0.0, "{v:?}");
    let v = flows_run(&server, "TCP_MAERTS", "1", "16", &[]);
    assert!(number(&v, "REMOTE_BYTES_SENT") >= number(&v, "LOCAL_BYTES_RECVD"));
    assert_eq!(number(&v, "THREADS"), 16.0, "{v:?}");
    // netserver's clock ends the streams it sends: no failure.
    assert_eq!(number(&v, "FLOWS_FAILED"), 0.0, "{v:?}");
    for test in ["UDP_RR", "UDP_STREAM"] {
        let v = flows_run(&server, test, "1", "64", &[]);
        assert_eq!(number(&v, "FLOWS"), 64.0, "{test}");
        assert_eq!(number(&v, "FLOWS_FAILED"), 0.0, "{test}: {v:?}");
        assert!(number(&v, "THROUGHPUT") > 0.0, "{test}");
    }
    // IPv6 where the machine has it.
    if common::have_ipv6() {
        let server = Server::start("::1");
        let v = flows_run(&server, "TCP_RR", "1", "100", &[]);
        assert_eq!(number(&v, "FLOWS_FAILED"), 0.0);
    }
}

/// `-b` keeps requests in flight on every flow; and UDP flows take the
/// responses of a netserver whose data socket is bound to the wildcard
/// (stock netperf asks for that), which answers a request sent to
/// 127.0.0.3 from the address its route picks, 127.0.0.1.
#[test]
fn flows_keep_a_burst_in_flight_and_take_answers_from_any_of_netservers_addresses() {
    let server = Server::start("127.0.0.3");
    for (test, burst) in [("TCP_RR", "3"), ("UDP_RR", "0"), ("UDP_RR", "2")] {
        let v = flows_run(&server, test, "1", "8", &["-b", burst, "-e", "1"]);
        let what = format!("{test} -b {burst}: {v:?}");
        assert_eq!(number(&v, "FLOWS_FAILED"), 0.0, "{what}");
        assert_eq!(number(&v, "FLOWS_STALLED"), 0.0, "{what}");
        assert!(number(&v, "THROUGHPUT") > 0.0, "{what}");
        if test == "TCP_RR" {
            // Every request in flight was answered before the end.
            assert_eq!(v["LOCAL_BYTES_SENT"], v["REMOTE_BYTES_RECVD"], "{what}");
            assert_eq!(v["REMOTE_BYTES_SENT"], v["LOCAL_BYTES_RECVD"], "{what}");
        }
    }
}

/// Jain's index over the per-flow CSV's sums is the one reported, and the
/// rows add up to the flows' work.
#[test]
fn fairness_is_what_the_per_flow_samples_say() {
    let server = Server::start("127.0.0.1");
    let csv = std::env::temp_dir().join(format!("flow-samples-{}.csv", std::process::id()));
    let csv_text = csv.to_string_lossy().into_owned();
    let v = flows_run(
        &server,
        "TCP_RR",
        "2",
        "40",
        &["--flow-samples", &csv_text, "-r", "64,64"],
    );
    let body = std::fs::read_to_string(&csv).unwrap();
    let _ = std::fs::remove_file(&csv);
    let mut lines = body.lines();
    assert_eq!(
        lines.next(),
        Some("flow,thread,interval_end_s,units,p50_us,p99_us,max_us,rtt_us,rttvar_us,snd_cwnd,retransmits,delivery_rate_bytes_per_s,pacing_rate_bytes_per_s,busy,rwnd_limited,sndbuf_limited")
    );
    let mut per_flow = BTreeMap::<u32, f64>::new();
    let mut with_tcp = 0;
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), 16, "{line}");
        // A TCP flow's row says what TCP did while its connection was open
        // (the last part-interval's, after the close, cannot).
        if !cells[7].is_empty() {
            let busy: f64 = cells[13].parse().unwrap();
            assert!((0.0..=1.0).contains(&busy), "{line}");
            with_tcp += 1;
        }
        *per_flow.entry(cells[0].parse().unwrap()).or_default() += cells[3].parse::<f64>().unwrap();
    }
    assert_eq!(per_flow.len(), 40);
    assert!(
        with_tcp >= 40,
        "every flow's first interval has TCP's figures"
    );
    let work: Vec<f64> = per_flow.values().copied().collect();
    let (sum, squares) = (
        work.iter().sum::<f64>(),
        work.iter().map(|w| w * w).sum::<f64>(),
    );
    let jain = sum * sum / (work.len() as f64 * squares);
    assert!(
        (jain - number(&v, "FLOW_JAIN")).abs() < 1e-4,
        "{jain} vs {v:?}"
    );
    // 64-byte requests: the rows' transactions are the bytes sent / 64.
    assert_eq!(sum * 64.0, number(&v, "LOCAL_BYTES_SENT"));
}

/// The data connections of a test to `port`, as ss lists them: the
/// client ends' ports.
fn client_ports(port: u16) -> Vec<u16> {
    let out = std::process::Command::new("ss")
        .args([
            "-Htn",
            "state",
            "established",
            "dst",
            &format!("127.0.0.1:{port}"),
        ])
        .output();
    let Ok(out) = out else { return vec![] };
    text(&out.stdout)
        .lines()
        .filter_map(|l| {
            l.split_whitespace()
                .nth(2)?
                .rsplit(':')
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

#[test]
fn a_flow_killed_from_outside_is_reported_and_the_test_ends() {
    if common::fast_tier_skips("needs root (ss -K closes another process's socket)") {
        return;
    }
    if !nix_root() {
        common::skip("needs root (ss -K closes another process's socket)");
        return;
    }
    let server = Server::start("127.0.0.1");
    let data_port = common::closed_port();
    let p = format!(",{data_port}");
    let child = spawn_netperf(
        &server,
        &["-l", "3", "--", "-P", &p, "--flows", "20", "-k", SELECTORS],
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut killed = false;
    while !killed && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        if let Some(victim) = client_ports(data_port).first() {
            let status = std::process::Command::new("ss")
                .args([
                    "-K",
                    "dst",
                    "127.0.0.1",
                    "dport",
                    "=",
                    &data_port.to_string(),
                ])
                .args(["sport", "=", &victim.to_string()])
                .output();
            killed = status.is_ok_and(|s| s.status.success());
        }
    }
    let out = wait_bounded(child, Duration::from_secs(20));
    if !killed {
        common::skip("ss -K could not close the socket (kernel without CONFIG_INET_DIAG_DESTROY?)");
        return;
    }
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let v = keyval(&stdout);
    assert_eq!(number(&v, "FLOWS"), 20.0);
    assert!(number(&v, "FLOWS_FAILED") >= 1.0, "{v:?}");
    assert!(number(&v, "THROUGHPUT") > 0.0);
}

fn nix_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Our netperf running a TCP_RR test against `server` with `args` (global
/// options, then `--` and the test's), its output piped.
fn spawn_netperf(server: &Server, args: &[&str]) -> std::process::Child {
    let port = server.port.to_string();
    std::process::Command::new(&*NETPERF)
        .args(["-H", &server.host, "-p", &port, "-t", "TCP_RR", "-P", "0"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn netperf")
}

#[test]
fn sigint_ends_a_many_flow_test_with_its_result() {
    let server = Server::start("127.0.0.1");
    for signal in [libc::SIGINT, libc::SIGALRM] {
        let child = spawn_netperf(
            &server,
            &["-l", "60", "--", "--flows", "100", "-k", SELECTORS],
        );
        std::thread::sleep(Duration::from_millis(1500));
        // SAFETY: kill takes a pid and a signal number.
        unsafe { libc::kill(child.id() as i32, signal) };
        let started = Instant::now();
        let out = wait_bounded(child, Duration::from_secs(20));
        let stdout = text(&out.stdout);
        let v = keyval(&stdout);
        assert!(
            number(&v, "THROUGHPUT") > 0.0,
            "{signal}: {stdout}{}",
            text(&out.stderr)
        );
        assert_eq!(number(&v, "FLOWS"), 100.0);
        assert!(started.elapsed() < Duration::from_secs(15));
    }
}

#[test]
fn what_cannot_be_served_is_refused_before_any_traffic() {
    let limited = Server::start_with("127.0.0.1", &["--max-connections", "50"]);
    let out = netperf(
        &limited,
        &["-t", "TCP_RR", "-l", "1", "--", "--flows", "60"],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--max-connections"),
        "{}",
        text(&out.stderr)
    );
    // Absurd counts never reach a netserver: a usage error, as for every
    // bad option value.
    for flows in ["0", "1000001", "many"] {
        let out = run_with_limit(
            &NETPERF,
            &["-H", "127.0.0.1", "-t", "TCP_RR", "--", "--flows", flows],
            Duration::from_secs(10),
        );
        assert_eq!(out.status.code(), Some(1), "{flows}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("option --flows"));
    }
    let server = Server::start("127.0.0.1");
    for (args, why) in [
        (&["-t", "TCP_CC", "--", "--flows", "4"][..], "TCP_CC"),
        (
            &["-t", "TCP_RR", "-l", "-100", "--", "--flows", "4"],
            "a count",
        ),
        (
            &["-t", "TCP_CRR", "--", "--flows", "4", "-b", "2"],
            "first burst",
        ),
        (
            &["-t", "TCP_SENDFILE", "--", "--flows", "4"],
            "not a TCP or UDP test",
        ),
        (
            &["-t", "STREAM_STREAM", "--", "--flows", "4"],
            "not a TCP or UDP test",
        ),
        (
            &["-t", "TCP_RR", "--", "--threads", "4"],
            "goes with --flows",
        ),
        (
            &["-t", "TCP_RR", "--", "--flows", "4", "-P", "5000,"],
            "local port",
        ),
    ] {
        let out = netperf(&server, args);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            text(&out.stderr).contains(why),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    // More flows than the open-file limit lets netperf open.
    let port = server.port.to_string();
    let out = run_with_limit(
        "prlimit",
        &[
            "--nofile=200:200",
            "--",
            &NETPERF,
            "-H",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "TCP_RR",
            "--",
            "--flows",
            "1000",
        ],
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("open files"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stdout).is_empty(), "refused before any output");
}
