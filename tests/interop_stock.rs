//! Interoperability with a stock netperf 2.7.1, both ways: stock netperf
//! against our netserver, and our netperf against a stock netserver.
//!
//! Runs only when NETPERF_STOCK_DIR names a directory holding a locally built
//! stock `netperf` and `netserver` (this project never builds or ships them);
//! otherwise each test says it is skipped.

mod common;
use common::stock::start_stock;
use common::*;
use std::time::Duration;

/// These tests compare rates, so they must not share the CPUs with each other.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn result_of(program: &str, port: u16, test: &str, extra: &[&str], field: usize) -> f64 {
    let port = port.to_string();
    let mut args = vec![
        "-H",
        "127.0.0.1",
        "-p",
        port.as_str(),
        "-t",
        test,
        "-P",
        "0",
        "-c",
        "-C",
    ];
    args.extend_from_slice(extra);
    let out = run_with_limit(program, &args, Duration::from_secs(60));
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{program} {test}: {stdout}{}",
        text(&out.stderr)
    );
    let first = first_line(&stdout);
    let v = numbers(first).get(field).copied().unwrap_or(-1.0);
    assert!(v > 0.0, "{program} {test}: no result in {first:?}");
    v
}

#[test]
fn stock_netperf_runs_every_test_against_our_netserver() {
    let _one_at_a_time = serial();
    let Some(dir) = stock_dir() else { return };
    let ours = Server::start("127.0.0.1");
    let stock = start_stock(&dir);
    let stock_netperf = format!("{dir}/netperf");
    for (test, extra, field) in CLASSIC_TESTS {
        let mixed = result_of(&stock_netperf, ours.port, test, extra, *field);
        let pure = result_of(&stock_netperf, stock.port, test, extra, *field);
        let ratio = mixed / pure;
        // Loopback on a shared 2-core machine is noisy: this only catches
        // results that are off by a factor (a unit or counting error), not noise.
        assert!(
            (0.1..10.0).contains(&ratio),
            "{test}: stock netperf gets {mixed} from our netserver vs {pure} from its own"
        );
    }
}

#[test]
fn our_netperf_runs_every_test_against_a_stock_netserver() {
    let _one_at_a_time = serial();
    let Some(dir) = stock_dir() else { return };
    let stock = start_stock(&dir);
    let stock_netperf = format!("{dir}/netperf");
    for (test, extra, field) in CLASSIC_TESTS {
        let mixed = result_of(&NETPERF, stock.port, test, extra, *field);
        let pure = result_of(&stock_netperf, stock.port, test, extra, *field);
        let ratio = mixed / pure;
        assert!(
            (0.1..10.0).contains(&ratio),
            "{test}: our netperf gets {mixed} from a stock netserver vs stock's {pure}"
        );
    }
}

#[test]
fn remote_cpu_rate_from_a_stock_netserver() {
    let _one_at_a_time = serial();
    let Some(dir) = stock_dir() else { return };
    let stock = start_stock(&dir);
    let out = run_with_limit(
        &NETPERF,
        &[
            "-H",
            "127.0.0.1",
            "-p",
            &stock.port.to_string(),
            "-t",
            "REM_CPU",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(text(&out.stdout), "100");
}

/// Commands of netperf's own example scripts (doc/examples): tcp_rr_script
/// asks for `-s 0 -S 0` (the kernel's smallest buffers), udp_rr_script for
/// `-s -1 -S -1` (the default), runemomni.sh for a UDP omni stream with
/// 2 MiB buffers and 64-byte sends (a 32769-buffer ring).
const EXAMPLE_SCRIPT_COMMANDS: &[&[&str]] = &[
    &[
        "-t", "TCP_RR", "-i", "3,3", "-I", "99,5", "--", "-r", "64,64", "-s", "0", "-S", "0",
    ],
    &[
        "-t", "UDP_RR", "--", "-r", "100,200", "-s", "-1", "-S", "-1",
    ],
    &[
        "-t", "omni", "-f", "m", "--", "-s", "1M", "-S", "1M", "-m", "64", "-T", "udp",
    ],
    &[
        "-t", "omni", "-f", "m", "--", "-s", "1M", "-S", "1M", "-r", "64K", "-b", "12",
    ],
];

/// The socket sizes a command ends with, requested and actual, both ends.
const SIZES: &str =
    "LSS_SIZE_REQ,LSS_SIZE,LSR_SIZE_REQ,LSR_SIZE,RSS_SIZE_REQ,RSS_SIZE,RSR_SIZE_REQ,RSR_SIZE";

fn sizes_from(program: &str, port: u16, command: &[&str]) -> String {
    let port = port.to_string();
    let mut args = vec!["-H", "127.0.0.1", "-p", port.as_str(), "-l", "1", "-P", "0"];
    args.extend_from_slice(command);
    if !command.contains(&"--") {
        args.push("--");
    }
    args.extend_from_slice(&["-o", SIZES]);
    let out = run_with_limit(program, &args, Duration::from_secs(60));
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{program} {command:?}: {stdout}{}",
        text(&out.stderr)
    );
    stdout.lines().last().unwrap_or_default().to_string()
}

#[test]
fn example_script_commands_run_both_ways_with_stocks_socket_sizes() {
    let _one_at_a_time = serial();
    let Some(dir) = stock_dir() else { return };
    let ours = Server::start("127.0.0.1");
    let stock = start_stock(&dir);
    let stock_netperf = format!("{dir}/netperf");
    for command in EXAMPLE_SCRIPT_COMMANDS {
        let pure = sizes_from(&stock_netperf, stock.port, command);
        let stock_to_ours = sizes_from(&stock_netperf, ours.port, command);
        let ours_to_stock = sizes_from(&NETPERF, stock.port, command);
        assert_eq!(
            stock_to_ours, pure,
            "stock netperf -> our netserver {command:?}"
        );
        assert_eq!(
            ours_to_stock, pure,
            "our netperf -> stock netserver {command:?}"
        );
    }
}

/// What only our netserver serves — many flows, MPTCP, an open loop over
/// UDP (its echoed request numbers), fast paths on netserver's end — asked
/// of a stock one: netperf says so in one line and exits 2, before any data
/// moves.
#[test]
fn what_only_our_netserver_serves_is_refused_in_one_line() {
    let _serial = serial();
    let Some(dir) = stock_dir() else { return };
    let stock = start_stock(&dir);
    let port = stock.port.to_string();
    let mptcp_here = netperf_ng::net::mptcp::available().is_ok();
    for (args, says) in [
        (
            &["-t", "TCP_RR", "--", "--flows", "8"][..],
            "--flows 8 needs netperf-ng's netserver",
        ),
        (
            &["-t", "TCP_RR", "--", "--mptcp"],
            "--mptcp needs netperf-ng's netserver",
        ),
        (
            &["-t", "UDP_RR", "--", "--rate", "1000", "-r", "8"],
            "--rate over UDP needs netperf-ng's netserver",
        ),
        (
            &["-t", "UDP_STREAM", "--", "-m", "1000", "--gro"],
            "--gro on netserver's end needs netperf-ng's netserver",
        ),
        (
            &["-t", "TCP_STREAM", "--", "--skip-rx-copy"],
            "--skip-rx-copy on netserver's end needs netperf-ng's netserver",
        ),
    ] {
        if args.contains(&"--mptcp") && !mptcp_here {
            common::skip("no MPTCP in this kernel: the --mptcp refusal is not checked");
            continue;
        }
        let mut all = vec!["-H", "127.0.0.1", "-p", &port, "-l", "1", "-P", "0"];
        all.extend_from_slice(args);
        let out = common::run_with_limit(&NETPERF, &all, Duration::from_secs(30));
        let stderr = common::text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}

/// Fast paths on our end alone run against a stock netserver as against
/// any peer: `--gso` on netperf's sends, `--skip-rx-copy` on its receives.
/// (On netserver's end they are refused: see above.)
#[test]
fn fast_paths_on_our_end_run_against_a_stock_netserver() {
    let _serial = serial();
    let Some(dir) = stock_dir() else { return };
    let stock = start_stock(&dir);
    let port = stock.port.to_string();
    for args in [
        &["-t", "UDP_STREAM", "--", "-m", "1000", "--gso", "8"][..],
        &["-t", "TCP_MAERTS", "--", "--skip-rx-copy"][..],
    ] {
        let mut all = vec!["-H", "127.0.0.1", "-p", &port, "-l", "1", "-P", "0"];
        all.extend_from_slice(args);
        let out = common::run_with_limit(&NETPERF, &all, Duration::from_secs(30));
        assert!(
            out.status.success(),
            "{args:?}: {}",
            common::text(&out.stderr)
        );
    }
}

/// netagg against a stock netserver: the shared test its streams would be
/// is refused, and they run a test each instead, every one to its final
/// line, with a note saying why.
#[test]
fn netagg_runs_a_test_per_stream_against_a_stock_netserver() {
    let _serial = serial();
    let Some(dir) = stock_dir() else { return };
    let stock = start_stock(&dir);
    let out_dir = common::ramp::OutDir::named("netagg-stock");
    let port = stock.port.to_string();
    let mut args = common::ramp::one_level(&port, "tps", "4", "2", &out_dir);
    args.extend(["--burst", "1"]);
    let out = common::run_with_limit(&NETAGG, &args, Duration::from_secs(60));
    let (stdout, stderr) = (common::text(&out.stdout), common::text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stderr.contains("127.0.0.1 runs a netserver that serves one data connection per test"),
        "{stderr}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.0.join("netagg_tps.json")).unwrap())
            .unwrap();
    assert_eq!(json["shared_tests"], serde_json::json!([]));
    let streams = json["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 4);
    for s in streams {
        assert!(s["failure"].is_null() && s["final_line"] == true, "{s}");
    }
}

/// TCP_RR `--rate` runs against a stock netserver: netperf alone keeps
/// the schedule, and the stock netserver answers each request as it comes.
#[test]
fn an_open_loop_runs_against_a_stock_netserver() {
    let _serial = serial();
    let Some(dir) = stock_dir() else { return };
    let stock = start_stock(&dir);
    let port = stock.port.to_string();
    // netperf alone keeps the schedule: a stock netserver answers each
    // request as it arrives.
    let out = common::run_with_limit(
        &NETPERF,
        &[
            "-H",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "TCP_RR",
            "-l",
            "1",
            "-P",
            "0",
            "--",
            "--rate",
            "1000",
            "-k",
            "OPEN_ACHIEVED_RATE,OPEN_LOST,CO_P50_LATENCY",
        ],
        Duration::from_secs(30),
    );
    let stdout = common::text(&out.stdout);
    let stderr = common::text(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    let value = |key: &str| -> f64 {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in {stdout}"))
    };
    assert!(value("OPEN_ACHIEVED_RATE") > 0.0, "{stdout}");
    assert!(value("CO_P50_LATENCY") > 0.0, "{stdout}");
    assert_eq!(value("OPEN_LOST"), 0.0, "{stdout}");
}

/// A stock netserver never acknowledges the extension: the TCP_INFO
/// figures are ours alone, the netserver's simply absent (no line, no
/// `remote_tcp`, empty REMOTE_TCP_* columns), and nothing is said wrong.
#[test]
fn tcp_info_against_a_stock_netserver_is_ours_alone() {
    let _one_at_a_time = serial();
    let Some(dir) = stock_dir() else { return };
    let stock = start_stock(&dir);
    let port = stock.port.to_string();
    let run = |extra: &[&str]| {
        let mut args = vec!["-H", "127.0.0.1", "-p", port.as_str(), "-t", "TCP_STREAM"];
        args.extend_from_slice(&["-l", "2", "-D", "0.5"]);
        args.extend_from_slice(extra);
        let out = run_with_limit(&NETPERF, &args, Duration::from_secs(60));
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(
            out.status.success() && stderr.is_empty(),
            "{extra:?}: {stdout}{stderr}"
        );
        stdout
    };
    let human = run(&["--", "--tcp-info"]);
    assert!(human.contains("Interim TCP: rtt "), "{human}");
    assert!(!human.contains("(netserver)"), "{human}");
    let json = run(&["--", "-J", "THROUGHPUT,REMOTE_TCP_RTT"]);
    assert_tcp_info_ours_alone(&json_of(&json));
    let csv = run(&["--", "-o", "THROUGHPUT,LOCAL_TCP_RTT,REMOTE_TCP_RTT"]);
    let interim: Vec<&str> = csv
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("Throughput"))
        .collect();
    assert!(!interim.is_empty(), "{csv}");
    assert!(interim.iter().all(|l| l.ends_with(',')), "{csv}");
}

/// TCP_MSS, the global -L's banner and IPv6 data under IPv4 control, run
/// by stock netperf and ours against a stock netserver and against ours:
/// the same lines every way (numbers masked: the segment size is the
/// kernel's).
#[test]
fn tcp_mss_banner_and_data_family_as_stock_both_ways() {
    let _one_at_a_time = serial();
    let Some(dir) = stock_dir() else { return };
    let stock = start_stock(&dir);
    let ours = Server::start("127.0.0.1");
    let stock_netperf = format!("{dir}/netperf");
    for command in [
        "-t TCP_MSS",
        "-t TCP_MSS -P 0 -v 0",
        "-t TCP_MSS -P 0 -B brand",
        "-L 127.0.0.1 -t TCP_MSS -v 0",
        "-l 1 -t omni -- -H ::1",
    ] {
        for port in [stock.port, ours.port] {
            let port = port.to_string();
            let mut args = vec!["-H", "127.0.0.1", "-p", port.as_str()];
            args.extend(command.split(' '));
            let run = |program: &str| {
                let out = run_with_limit(program, &args, Duration::from_secs(60));
                let code = out.status.code();
                (
                    shape(&format!("{}{}", text(&out.stdout), text(&out.stderr))),
                    code,
                )
            };
            assert_eq!(
                run(&NETPERF),
                run(&stock_netperf),
                "{command} on port {port}"
            );
        }
    }
}

/// Nothing of ours at a stock verbosity level: each classic test and omni
/// at -v 0, 1 and 2, with -P 0, -D, -c -C and -j, prints the lines stock netperf
/// prints against the same (our) netserver, line for line with the
/// numbers masked (how many interim lines fit aside).
#[test]
fn every_test_prints_stocks_lines_at_stocks_levels() {
    let _one_at_a_time = serial();
    let Some(dir) = stock_dir() else { return };
    let server = Server::start("127.0.0.1");
    let port = server.port.to_string();
    // Stock's own timer noise, and the interims whose count varies, aside.
    let lines = |t: &str| -> Vec<String> {
        shape(t)
            .into_iter()
            .filter(|l| !l.starts_with("catcher:") && !l.starts_with("Interim result"))
            .collect()
    };
    let stock_netperf = format!("{dir}/netperf");
    for test in [
        "TCP_STREAM",
        "TCP_MAERTS",
        "TCP_RR",
        "TCP_CRR",
        "TCP_CC",
        "UDP_STREAM",
        "UDP_RR",
        "omni",
    ] {
        for extra in ["-P 0 -v 0", "-v 1 -c -C", "-v 2 -D 0.5 -c -C -j"] {
            let mut args = vec![
                "-H",
                "127.0.0.1",
                "-p",
                port.as_str(),
                "-l",
                "1",
                "-t",
                test,
            ];
            args.extend(extra.split(' '));
            let run = |program: &str| {
                let out = run_with_limit(program, &args, Duration::from_secs(60));
                lines(&format!("{}{}", text(&out.stdout), text(&out.stderr)))
            };
            assert_eq!(run(&NETPERF), run(&stock_netperf), "-t {test} {extra}");
        }
    }
}

/// A `-T` name netperf 2.7.1 does not know goes out as protocol 0 (the
/// socket type's own, "IP Default"): stock's netserver runs it on a stream
/// socket and refuses it on a datagram one (error 95), and so does ours.
#[test]
fn stock_netperfs_protocol_zero_runs_against_our_netserver() {
    let _one_at_a_time = serial();
    let Some(dir) = stock_dir() else { return };
    let ours = Server::start("127.0.0.1");
    let port = ours.port.to_string();
    let stock_netperf = format!("{dir}/netperf");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "-H",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "omni",
            "-l",
            "1",
            "--",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-k", "PROTOCOL,THROUGHPUT"]);
        run_with_limit(&stock_netperf, &args, Duration::from_secs(60))
    };
    let out = run(&["-T", "mpudp"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("PROTOCOL=IP Default"), "{stdout}");
    let rate: f64 = keyval(&stdout)["THROUGHPUT"].parse().unwrap_or(0.0);
    assert!(rate > 0.0, "{stdout}");
    let out = run(&["-T", "mpudp", "-d", "rr", "-t", "dgram"]);
    assert_eq!(out.status.code(), Some(255), "{}", text(&out.stdout));
    let said = text(&out.stdout) + &text(&out.stderr);
    assert!(said.contains("remote error 95"), "{said}");
}
