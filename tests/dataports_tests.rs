//! Fixed data ports (issue 15 item 3): `netserver --data-ports MIN-MAX` opens
//! every data socket on a free port of the range and refuses a test when
//! none is free or when the client asks for a port outside it; netperf's
//! `-- --data-ports MIN-MAX` does the same for its local data socket. The
//! ports are read from /proc (which sockets each process holds), so a test
//! fails if a data socket lands outside the range. Loopback only; every
//! wait is bounded.

mod common;

use common::*;
use std::collections::HashSet;
use std::net::{TcpListener, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const HOST: &str = "127.0.0.1";

/// `n` consecutive ports free for TCP and UDP on loopback, below the
/// kernel's ephemeral range (so that no control or ephemeral port of a
/// parallel test lands in it), found by binding each.
fn free_range(n: u16) -> (u16, u16) {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    for _ in 0..200 {
        let k = NEXT.fetch_add(1, Ordering::Relaxed);
        let spread = (std::process::id().wrapping_mul(7919) + k * 97) % 600;
        let min = 20_000 + (spread as u16) * 16;
        let all_free = (min..min + n)
            .all(|p| TcpListener::bind((HOST, p)).is_ok() && UdpSocket::bind((HOST, p)).is_ok());
        if all_free {
            return (min, min + n - 1);
        }
    }
    panic!("no {n} free consecutive ports on {HOST}");
}

fn range_arg((min, max): (u16, u16)) -> String {
    format!("{min}-{max}")
}

/// A socket a process holds: its protocol table, local port and state.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Held {
    table: &'static str,
    port: u16,
    state: String,
}

/// The IPv4/IPv6 TCP and UDP sockets process `pid` holds, in any of its
/// threads' descriptor tables: netserver's data thread runs on a table of
/// its own, which /proc/PID/fd (the main thread's) does not show.
fn sockets_of(pid: u32) -> Vec<Held> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return vec![];
    };
    let inodes: HashSet<String> = tasks
        .flatten()
        .filter_map(|task| std::fs::read_dir(task.path().join("fd")).ok())
        .flat_map(|fds| fds.flatten())
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .map(|t| t.to_string_lossy().into_owned())
        .filter_map(|t| {
            t.strip_prefix("socket:[")
                .and_then(|s| s.strip_suffix(']'))
                .map(String::from)
        })
        .collect();
    let mut held = vec![];
    for (table, path) in [
        ("tcp", "/proc/net/tcp"),
        ("tcp", "/proc/net/tcp6"),
        ("udp", "/proc/net/udp"),
        ("udp", "/proc/net/udp6"),
    ] {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) = (f.get(1), f.get(3), f.get(9)) else {
                continue;
            };
            let port = local
                .rsplit(':')
                .next()
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            if let (Some(port), true) = (port, inodes.contains(*inode)) {
                held.push(Held {
                    table,
                    port,
                    state: state.to_string(),
                });
            }
        }
    }
    held
}

const LISTEN: &str = "0A";

/// Start netperf against `server` in the background.
fn spawn_netperf(server: &Server, args: &[&str]) -> Child {
    Command::new(NETPERF)
        .args(["-H", &server.host, "-p", &server.port.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn netperf")
}

/// Wait (at most `limit`) for a background netperf, killing it past that.
fn finish(mut child: Child, limit: Duration) -> std::process::Output {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return child.wait_with_output().expect("netperf output");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let out = child.wait_with_output().expect("netperf output");
    panic!(
        "netperf did not finish within {limit:?}: {}",
        text(&out.stderr)
    );
}

/// Poll `pid`'s sockets (at most 5 s) until `done` holds for them.
fn wait_for_sockets(pid: u32, done: impl Fn(&[Held]) -> bool) -> Vec<Held> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let held = sockets_of(pid);
        if done(&held) || Instant::now() > deadline {
            return held;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The data sockets netserver holds: all but its control port's.
fn data_sockets(server: &Server) -> Vec<Held> {
    sockets_of(server.pid())
        .into_iter()
        .filter(|h| h.port != server.port)
        .collect()
}

fn in_range(port: u16, (min, max): (u16, u16)) -> bool {
    (min..=max).contains(&port)
}

fn log_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("ng-dataports-{}-{name}.log", std::process::id()))
}

fn read_log(path: &std::path::Path) -> String {
    std::thread::sleep(Duration::from_millis(200));
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn every_test_s_data_socket_is_in_the_range() {
    let range = free_range(4);
    let server = Server::start_with(HOST, &["--data-ports", &range_arg(range)]);
    for (test, table) in [
        ("TCP_STREAM", "tcp"),
        ("TCP_MAERTS", "tcp"),
        ("TCP_RR", "tcp"),
        ("UDP_RR", "udp"),
        ("UDP_STREAM", "udp"),
        ("omni", "tcp"),
    ] {
        let child = spawn_netperf(&server, &["-t", test, "-l", "1", "-P", "0"]);
        let held = wait_for_sockets(server.pid(), |h| {
            h.iter().any(|s| s.table == table && s.port != server.port)
        });
        let out = finish(child, Duration::from_secs(30));
        assert!(
            out.status.success(),
            "{test}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        let data: Vec<&Held> = held.iter().filter(|h| h.port != server.port).collect();
        assert!(
            data.iter().any(|h| h.table == table),
            "{test}: no data socket seen: {held:?}"
        );
        for h in data {
            assert!(
                in_range(h.port, range),
                "{test}: {h:?} is outside {range:?}"
            );
        }
    }
}

#[test]
fn tests_in_a_row_reuse_one_port_past_time_wait() {
    // One port: every test must reuse it, whoever holds its TIME_WAIT.
    let range = free_range(1);
    let server = Server::start_with(HOST, &["--data-ports", &range_arg(range)]);
    for test in ["TCP_STREAM", "TCP_MAERTS", "TCP_RR", "TCP_CRR", "UDP_RR"] {
        for round in 0..5 {
            let out = netperf(&server, &["-t", test, "-l", "-20", "-P", "0"]);
            assert!(
                out.status.success(),
                "{test} round {round}: {}{}",
                text(&out.stdout),
                text(&out.stderr)
            );
        }
    }
    assert!(
        data_sockets(&server)
            .iter()
            .all(|h| in_range(h.port, range)),
        "{:?}",
        data_sockets(&server)
    );
}

#[test]
fn a_full_range_refuses_the_next_test_clearly() {
    let range = free_range(4);
    let log = log_path("full");
    let server = Server::start_logging(
        HOST,
        &["-v", "1", "--data-ports", &range_arg(range)],
        &[],
        Some(&log),
    );
    let running: Vec<Child> = (0..4)
        .map(|_| spawn_netperf(&server, &["-t", "TCP_STREAM", "-l", "4", "-P", "0"]))
        .collect();
    let held = wait_for_sockets(server.pid(), |h| {
        h.iter()
            .filter(|s| s.state == LISTEN && s.port != server.port)
            .count()
            == 4
    });
    let listeners: HashSet<u16> = held
        .iter()
        .filter(|s| s.state == LISTEN && s.port != server.port)
        .map(|s| s.port)
        .collect();
    assert_eq!(listeners, (range.0..=range.1).collect(), "{held:?}");
    let fifth = netperf(&server, &["-t", "TCP_STREAM", "-l", "1", "-P", "0"]);
    assert!(!fifth.status.success());
    let err = text(&fifth.stderr);
    assert!(
        err.contains("remote error 98") && err.contains("every port of its range"),
        "the fifth test was not refused: {err}{}",
        text(&fifth.stdout)
    );
    // A UDP test has the range's UDP ports to itself.
    run_ok(&server, &["-t", "UDP_RR", "-l", "-10", "-P", "0"]);
    for child in running {
        let out = finish(child, Duration::from_secs(30));
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let logged = read_log(&log);
    assert!(
        logged.contains(&format!(
            "every data port of --data-ports {} is in use",
            range_arg(range)
        )),
        "{logged}"
    );
    // Freed again: the next test runs.
    run_ok(&server, &["-t", "TCP_STREAM", "-l", "1", "-P", "0"]);
    let _ = std::fs::remove_file(&log);
}

#[test]
fn an_explicit_remote_port_must_be_in_the_range() {
    let range = free_range(4);
    let log = log_path("explicit");
    let server = Server::start_logging(
        HOST,
        &["-v", "1", "--data-ports", &range_arg(range)],
        &[],
        Some(&log),
    );
    let outside = (range.1 + 1).to_string();
    let out = netperf(
        &server,
        &[
            "-t",
            "TCP_RR",
            "-l",
            "1",
            "--",
            "-P",
            &format!(",{outside}"),
        ],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("remote error 99"),
        "{}",
        text(&out.stderr)
    );
    assert!(read_log(&log).contains(&format!(
        "data port {outside} was asked for, outside --data-ports {}",
        range_arg(range)
    )));
    // Inside the range: that very port.
    let inside = range.0 + 2;
    let child = spawn_netperf(
        &server,
        &[
            "-t",
            "TCP_STREAM",
            "-l",
            "2",
            "--",
            "-P",
            &format!(",{inside}"),
        ],
    );
    let held = wait_for_sockets(server.pid(), |h| h.iter().any(|s| s.port == inside));
    let out = finish(child, Duration::from_secs(30));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(held.iter().any(|s| s.port == inside), "{held:?}");
    let _ = std::fs::remove_file(&log);
}

#[test]
fn netperf_opens_its_local_data_socket_in_its_range() {
    if fast_tier_skips("slow (7 s)") {
        return;
    }
    let server_range = free_range(4);
    let local = free_range(4);
    let server = Server::start_with(HOST, &["--data-ports", &range_arg(server_range)]);
    for (test, table) in [("TCP_STREAM", "tcp"), ("UDP_RR", "udp"), ("TCP_RR", "tcp")] {
        let child = spawn_netperf(
            &server,
            &[
                "-t",
                test,
                "-l",
                "2",
                "--",
                "--data-ports",
                &range_arg(local),
            ],
        );
        let pid = child.id();
        let held = wait_for_sockets(pid, |h| {
            h.iter()
                .any(|s| s.table == table && in_range(s.port, local))
        });
        let out = finish(child, Duration::from_secs(30));
        assert!(out.status.success(), "{test}: {}", text(&out.stderr));
        assert!(
            held.iter()
                .any(|s| s.table == table && in_range(s.port, local)),
            "{test}: {held:?}"
        );
    }
    // -P lport inside the range is that port; outside it is refused.
    let out = netperf(
        &server,
        &[
            "-t",
            "TCP_RR",
            "-l",
            "1",
            "--",
            "--data-ports",
            &range_arg(local),
            "-P",
            &format!("{},", local.1 + 1),
        ],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("outside --data-ports"),
        "{}",
        text(&out.stderr)
    );
    run_ok(
        &server,
        &[
            "-t",
            "TCP_RR",
            "-l",
            "1",
            "--",
            "--data-ports",
            &range_arg(local),
            "-P",
            &format!("{},", local.0 + 1),
        ],
    );
    // Netperf's own range full: a clear local refusal, no ephemeral port.
    let _hold: Vec<UdpSocket> = (local.0..=local.1)
        .filter_map(|p| UdpSocket::bind((HOST, p)).ok())
        .collect();
    let out = netperf(
        &server,
        &[
            "-t",
            "UDP_RR",
            "-l",
            "1",
            "--",
            "--data-ports",
            &range_arg(local),
        ],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("is in use"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn plain_minus_p_still_names_both_data_ports() {
    // netperf 2.7.1's -P lport,rport, with no --data-ports anywhere.
    let (l, r) = free_range(2);
    let server = Server::start(HOST);
    let child = spawn_netperf(
        &server,
        &[
            "-t",
            "TCP_STREAM",
            "-l",
            "2",
            "--",
            "-P",
            &format!("{l},{r}"),
        ],
    );
    let pid = child.id();
    let mine = wait_for_sockets(pid, |h| h.iter().any(|s| s.port == l));
    let theirs = wait_for_sockets(server.pid(), |h| h.iter().any(|s| s.port == r));
    let out = finish(child, Duration::from_secs(30));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(mine.iter().any(|s| s.port == l), "{mine:?}");
    assert!(theirs.iter().any(|s| s.port == r), "{theirs:?}");
}

#[test]
fn bad_ranges_are_refused_at_start() {
    for (args, why) in [
        (&["--data-ports", "9-3"][..], "above MAX"),
        (&["--data-ports", "0-3"], "outside 1..65535"),
        (&["--data-ports", "1-65536"], "outside 1..65535"),
        (&["--data-ports", "lots"], "MIN-MAX"),
        (&["--data-ports"], "--data-ports needs"),
        (
            &["-p", "20100", "--data-ports", "20000-20200"],
            "control port",
        ),
        (&["--data-ports=12865-12865"], "control port"),
    ] {
        let out = run_with_limit(&NETSERVER, args, Duration::from_secs(5));
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.starts_with("netserver: ") && err.contains(why),
            "{args:?}: {err}"
        );
    }
    let help = text(&run_with_limit(&NETSERVER, &["-h"], Duration::from_secs(5)).stdout);
    assert!(help.contains("--data-ports min-max"), "{help}");
    for (value, why) in [("5-1", "above MAX"), ("x", "MIN-MAX"), ("0-2", "outside")] {
        let out = run_with_limit(
            &NETPERF,
            &["-H", HOST, "-t", "TCP_RR", "--", "--data-ports", value],
            Duration::from_secs(10),
        );
        assert!(!out.status.success(), "{value}");
        let err = text(&out.stderr);
        assert!(
            err.contains("--data-ports") && err.contains(why),
            "{value}: {err}"
        );
    }
}

/// A stock netperf 2.7.1 built locally (NETPERF_STOCK_DIR), for the legacy
/// requests it still sends (TCP_SENDFILE as DO_TCP_STREAM, TCP_CC).
fn stock_netperf() -> Option<String> {
    stock_dir().map(|d| format!("{d}/netperf"))
}

#[test]
fn stock_netperf_s_legacy_tests_use_the_range() {
    let Some(stock) = stock_netperf() else { return };
    let range = free_range(1);
    let server = Server::start_with(HOST, &["--data-ports", &range_arg(range)]);
    let port = server.port.to_string();
    let base = ["-H", HOST, "-p", port.as_str(), "-P", "0"];
    for test in [
        &["-t", "TCP_SENDFILE", "-l", "2"][..],
        &["-t", "TCP_CC", "-l", "2"],
    ] {
        let child = Command::new(&stock)
            .args(base)
            .args(test)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn stock netperf");
        let held = wait_for_sockets(server.pid(), |h| {
            h.iter().any(|s| s.state == LISTEN && s.port != server.port)
        });
        let out = finish(child, Duration::from_secs(30));
        assert!(out.status.success(), "{test:?}: {}", text(&out.stderr));
        let listeners: Vec<&Held> = held
            .iter()
            .filter(|s| s.state == LISTEN && s.port != server.port)
            .collect();
        assert!(
            !listeners.is_empty() && listeners.iter().all(|s| in_range(s.port, range)),
            "{test:?}: {held:?}"
        );
    }
    // The one port held by someone else: refused, not moved elsewhere.
    let _squatter = TcpListener::bind((HOST, range.0)).expect("hold the range's port");
    let out = run_with_limit(
        &stock,
        &[&base[..], &["-t", "TCP_CC", "-l", "1"]].concat(),
        Duration::from_secs(30),
    );
    assert!(!out.status.success(), "{}", text(&out.stdout));
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(said.contains("remote error 98"), "{said}");
}

#[test]
fn ipv6_data_sockets_are_in_the_range_too() {
    if !have_ipv6() {
        return skip("no IPv6 loopback here");
    }
    let range = free_range(2);
    let server = Server::start_with("::1", &["--data-ports", &range_arg(range)]);
    for (test, table) in [("TCP_RR", "tcp"), ("UDP_RR", "udp")] {
        let child = spawn_netperf(&server, &["-t", test, "-l", "1", "-P", "0"]);
        let held = wait_for_sockets(server.pid(), |h| {
            h.iter().any(|s| s.table == table && s.port != server.port)
        });
        let out = finish(child, Duration::from_secs(30));
        assert!(out.status.success(), "{test}: {}", text(&out.stderr));
        let data: Vec<&Held> = held.iter().filter(|h| h.port != server.port).collect();
        assert!(
            !data.is_empty() && data.iter().all(|h| in_range(h.port, range)),
            "{test}: {held:?}"
        );
    }
}
