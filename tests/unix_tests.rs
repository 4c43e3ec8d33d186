//! The Unix-domain tests (STREAM_STREAM, STREAM_RR, DG_STREAM, DG_RR) end
//! to end against our netserver: timed and counted runs, netperf's output
//! shape, CPU columns, the -p directory, refusals, and socket file cleanup.

mod common;
use common::*;
use netperf_ng::wire::unix::{StreamStreamRequest, UnixPath, STREAM_STREAM_RESPONSE};
use netperf_ng::wire::{Message, MESSAGE_LEN};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::Duration;

/// Each test, and where its first result line has its headline figure.
const TESTS: &[(&str, usize)] = &[
    ("STREAM_STREAM", 4),
    ("STREAM_RR", 5),
    ("DG_STREAM", 5),
    ("DG_RR", 5),
];

/// A directory of our own for socket files, removed at the end.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("npng-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create a test directory");
        Dir(dir)
    }

    fn text(&self) -> String {
        self.0.display().to_string()
    }

    fn entries(&self) -> usize {
        std::fs::read_dir(&self.0).map_or(0, |d| d.count())
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The figures of a `-P 0` run: first line, and the second when there is one.
fn check_rows(test: &str, stdout: &str, field: usize) {
    let rows: Vec<&str> = stdout.lines().filter(|l| !l.trim().is_empty()).collect();
    let first = numbers(rows.first().copied().unwrap_or_default());
    assert!(
        first.get(field).is_some_and(|v| *v > 0.0),
        "{test}: no positive figure in {stdout:?}"
    );
    assert!(first.iter().all(|v| *v >= 0.0), "{test}: {stdout:?}");
    let second = numbers(rows.get(1).copied().unwrap_or_default());
    match test {
        // The remote line: buffer, elapsed, datagrams received, throughput.
        "DG_STREAM" => assert!(second.len() == 4 && second[2] > 0.0 && second[3] > 0.0),
        // netserver's send and receive buffer sizes.
        "STREAM_RR" | "DG_RR" => assert!(second.len() == 2 && second[0] > 0.0),
        _ => assert_eq!(rows.len(), 1, "{stdout:?}"),
    }
}

#[test]
fn every_test_runs_timed_and_counted() {
    let server = Server::start("127.0.0.1");
    let dir = Dir::new("runs");
    let d = dir.text();
    for (test, field) in TESTS {
        let timed = run_ok(&server, &["-t", test, "-P", "0", "-l", "1", "--", "-p", &d]);
        check_rows(test, &timed, *field);
        let counted = run_ok(
            &server,
            &["-t", test, "-P", "0", "-l", "-2000", "--", "-p", &d],
        );
        check_rows(test, &counted, *field);
    }
    assert_eq!(dir.entries(), 0, "socket files left behind");
}

#[test]
fn headers_are_netperfs() {
    let server = Server::start("127.0.0.1");
    let out = run_ok(&server, &["-t", "STREAM_RR", "-l", "-500"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[..6],
        [
            "STREAM REQUEST/RESPONSE TEST",
            "Local /Remote",
            "Socket Size   Request  Resp.   Elapsed  Trans.",
            "Send   Recv   Size     Size    Time     Rate         ",
            "bytes  Bytes  bytes    bytes   secs.    per sec   ",
            "",
        ],
        "{out}"
    );
    let out = run_ok(
        &server,
        &["-t", "DG_STREAM", "-l", "-65536", "--", "-m", "1024"],
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "DG UNIDIRECTIONAL SEND TEST", "{out}");
    assert_eq!(
        lines[3],
        "bytes   bytes    secs            #      #   10^6bits/sec"
    );
    let row = numbers(lines[5]);
    assert_eq!((row[1], row[3]), (1024.0, 64.0), "{out}");
    let out = run_ok(
        &server,
        &["-t", "STREAM_STREAM", "-l", "-100000", "-f", "K"],
    );
    assert!(
        out.starts_with("STREAM STREAM TEST\nRecv   Send    Send"),
        "{out}"
    );
    assert!(
        out.contains("bytes  bytes   bytes    secs.    KBytes/sec  \n\n"),
        "{out}"
    );
}

#[test]
fn cpu_columns_and_terse_output() {
    let server = Server::start("127.0.0.1");
    let out = run_ok(&server, &["-t", "DG_RR", "-l", "-3000", "-c", "-C"]);
    assert!(out.contains("local  remote local   remote\n"), "{out}");
    let row = out
        .lines()
        .find(|l| numbers(l).len() == 10)
        .unwrap_or_else(|| panic!("a row of ten figures in {out}"));
    let n = numbers(row);
    assert!(n[5] > 0.0 && n[6] >= 0.0 && n[7] >= 0.0, "{row}");
    let out = run_ok(
        &server,
        &["-t", "STREAM_STREAM", "-l", "-100000", "-P", "0", "-v", "0"],
    );
    let only = numbers(out.trim());
    assert!(only.len() == 1 && only[0] > 0.0, "{out:?}");
}

#[test]
fn a_bad_directory_is_a_clear_error() {
    let server = Server::start("127.0.0.1");
    let out = netperf(
        &server,
        &[
            "-t",
            "STREAM_STREAM",
            "-l",
            "1",
            "--",
            "-p",
            "/no/such/netperf-ng/dir",
        ],
    );
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("-p /no/such/netperf-ng/dir: No such file or directory"),
        "{stderr}"
    );
}

/// What a client that skips our netperf's own check gets from netserver.
#[test]
fn netserver_refuses_a_bad_directory_with_its_errno() {
    let server = Server::start("127.0.0.1");
    let mut control = TcpStream::connect((server.host.as_str(), server.port)).unwrap();
    control
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let request = StreamStreamRequest {
        cpu_bind: -1,
        test_length: 1,
        path: UnixPath::new(b"/no/such/netperf-ng/dir"),
        ..Default::default()
    };
    control.write_all(&request.encode().bytes).unwrap();
    let mut answer = [0u8; MESSAGE_LEN];
    control.read_exact(&mut answer).unwrap();
    let answer = Message::from_bytes(answer);
    assert_eq!(answer.kind(), STREAM_STREAM_RESPONSE);
    assert_eq!(answer.serv_errno(), libc::ENOENT);
}

/// A stock netperf 2.7.1 build with `--enable-unixdomain`, if
/// NETPERF_STOCK_UNIX_DIR (else NETPERF_STOCK_DIR) names one; this project
/// never builds or ships it. Else the running test skips (the caller
/// returns).
fn stock_unix_dir() -> Option<String> {
    let Some(dir) = ["NETPERF_STOCK_UNIX_DIR", "NETPERF_STOCK_DIR"]
        .iter()
        .find_map(|name| std::env::var(name).ok())
    else {
        skip("set NETPERF_STOCK_UNIX_DIR (or NETPERF_STOCK_DIR) to a stock netperf 2.7.1 built with --enable-unixdomain");
        return None;
    };
    let usage = run_with_limit(
        &format!("{dir}/netperf"),
        &["-t", "DG_RR", "--", "-h"],
        Duration::from_secs(10),
    );
    if text(&usage.stdout).contains("UNIX Sockets Test Options") {
        Some(dir)
    } else {
        skip(format!(
            "the stock netperf in {dir} has no Unix-domain tests"
        ));
        None
    }
}

/// A stock netserver, killed when dropped (its per-connection children end
/// with their connections).
struct StockServer(std::process::Child, u16);

impl Drop for StockServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_stock(dir: &str) -> StockServer {
    for _ in 0..20 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let mut child = std::process::Command::new(format!("{dir}/netserver"))
            .args(["-D", "-4", "-L", "127.0.0.1", "-p", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn the stock netserver");
        for _ in 0..250 {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return StockServer(child, port);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    panic!("could not start the stock netserver");
}

/// Both mixed pairings. Counted runs where stock netperf has a count mode
/// (a timed request/response test against a stock netserver waits out its
/// 4-second pad); stock DG_STREAM has none and sends until killed, and its
/// byte count is a C int: small datagrams keep it from wrapping in a second.
#[test]
fn stock_netperf_and_netserver_interoperate() {
    let Some(dir) = stock_unix_dir() else { return };
    let ours = Server::start("127.0.0.1");
    let stock = start_stock(&dir);
    let stock_netperf = format!("{dir}/netperf");
    let pairings = [(stock_netperf.as_str(), ours.port), (&NETPERF, stock.1)];
    for (program, port) in pairings {
        for (test, field) in TESTS {
            let port = port.to_string();
            let mut args = vec!["-H", "127.0.0.1", "-p", &port, "-t", test, "-P", "0", "-C"];
            if *test == "DG_STREAM" {
                args.extend(["-l", "1", "--", "-m", "1024"]);
            } else {
                args.extend(["-l", "-2000"]);
            }
            let out = run_with_limit(program, &args, Duration::from_secs(60));
            let stdout = text(&out.stdout);
            assert!(
                out.status.success(),
                "{program} {test}: {stdout}{}",
                text(&out.stderr)
            );
            let row = numbers(first_line(&stdout));
            assert!(
                row.get(*field).is_some_and(|v| *v > 0.0),
                "{program} {test} port {port}: {stdout:?}"
            );
        }
    }
}
