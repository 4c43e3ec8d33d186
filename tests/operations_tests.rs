//! netserver's operations side: SIGTERM ends it gracefully (a running test
//! is cut and its results still reach netperf), the pid file, JSON log lines.

mod common;
use common::*;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn sigterm_cuts_running_tests_with_results_and_removes_the_pid_file() {
    let pid_file = std::env::temp_dir().join(format!("netserver-{}.pid", std::process::id()));
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut server = Command::new(NETSERVER)
        .args([
            "-D",
            "-L",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-v",
            "1",
            "--log-json",
        ])
        .args(["--pid-file", pid_file.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = server.stderr.take().unwrap();
    let log = std::thread::spawn(move || {
        BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<_>>()
    });
    for _ in 0..250 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() && pid_file.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(pid, server.id());

    // A 30-second test, cut by SIGTERM after about a second.
    let client = Command::new(NETPERF)
        .args([
            "-H",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-t",
            "TCP_RR",
            "-l",
            "30",
            "-P",
            "0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    // SAFETY: kill with the pid of our child.
    unsafe { libc::kill(server.id() as libc::pid_t, libc::SIGTERM) };
    let out = client.wait_with_output().unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let figures = numbers(first_line(&stdout));
    assert!(
        figures.len() >= 6 && figures[4] < 29.0 && figures[5] > 0.0,
        "{stdout}"
    );

    let mut status = None;
    for _ in 0..1500 {
        if let Some(s) = server.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = status.unwrap_or_else(|| {
        let _ = server.kill();
        panic!("netserver did not exit after SIGTERM");
    });
    assert!(status.success(), "{status}");
    assert!(!pid_file.exists(), "pid file left behind");
    let lines = log.join().unwrap();
    assert!(!lines.is_empty());
    for line in &lines {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(
            v["ts"].as_f64().unwrap() > 1.0e9 && v["message"].is_string(),
            "{line}"
        );
    }
    assert!(lines.iter().any(|l| l.contains("127.0.0.1")), "{lines:?}");
}

#[test]
fn unknown_long_options_are_errors() {
    let out = run_with_limit(&NETSERVER, &["--no-such-option"], Duration::from_secs(10));
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("unknown option --no-such-option"));
}
