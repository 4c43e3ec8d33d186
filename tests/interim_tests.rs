//! Interim results (-D) in netperf's three formats, and stopping a running
//! netperf with a signal: the lines parse, arrive one by one on a pipe, add
//! up to the test, and a stopped test still prints its final result.

mod common;
use common::*;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// (value, units, interval, ending) of a human interim line.
fn parse_human(line: &str) -> Option<(f64, String, f64, f64)> {
    let rest = line.strip_prefix("Interim result:")?;
    let words: Vec<&str> = rest.split_whitespace().collect();
    match words.as_slice() {
        [value, units, "over", interval, "seconds", "ending", "at", ending] => Some((
            value.parse().ok()?,
            units.to_string(),
            interval.parse().ok()?,
            ending.parse().ok()?,
        )),
        _ => None,
    }
}

#[test]
fn human_lines_parse_and_add_up_to_the_test() {
    let server = Server::start("127.0.0.1");
    for (test, units) in [
        ("TCP_STREAM", "10^6bits/s"),
        ("TCP_RR", "Trans/s"),
        ("TCP_MAERTS", "10^6bits/s"),
    ] {
        let out = run_ok(&server, &["-t", test, "-l", "2", "-D", "0.5"]);
        let interims: Vec<_> = out.lines().filter_map(parse_human).collect();
        assert!(interims.len() >= 3, "{test}: {out}");
        for (value, u, interval, ending) in &interims {
            assert_eq!(u, units, "{test}");
            assert!(
                *value > 0.0 && *interval > 0.0 && *ending > 1.0e9,
                "{test}: {out}"
            );
        }
        // Endings increase, and the intervals cover the test (2 s).
        assert!(interims.windows(2).all(|w| w[0].3 <= w[1].3), "{out}");
        let total: f64 = interims.iter().map(|i| i.2).sum();
        assert!(
            (1.8..=2.5).contains(&total),
            "{test}: intervals sum to {total}: {out}"
        );
    }
}

#[test]
fn csv_and_keyval_interim_lines() {
    let server = Server::start("127.0.0.1");
    let out = run_ok(
        &server,
        &[
            "-t",
            "omni",
            "-l",
            "2",
            "-D",
            "0.5",
            "--",
            "-d",
            "rr",
            "-o",
            "THROUGHPUT,THROUGHPUT_UNITS",
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    let title = lines
        .iter()
        .position(|l| *l == "Throughput,Throughput Units")
        .expect(&out);
    assert!(title >= 4, "{out}");
    for line in &lines[1..title] {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields.len(), 4, "{line}");
        assert!(fields[0].trim().parse::<f64>().unwrap() > 0.0);
        assert_eq!(fields[1], "Trans/s");
        assert!(fields[2].parse::<f64>().unwrap() > 0.0);
        assert!(fields[3].parse::<f64>().unwrap() > 1.0e9);
    }

    let out = run_ok(
        &server,
        &[
            "-t",
            "TCP_STREAM",
            "-l",
            "2",
            "-D",
            "0.5",
            "--",
            "-k",
            "THROUGHPUT,ELAPSED_TIME",
        ],
    );
    let keys: Vec<(&str, &str)> = out.lines().filter_map(|l| l.split_once('=')).collect();
    let interim: Vec<_> = keys
        .iter()
        .filter(|(k, _)| k.starts_with("NETPERF_"))
        .collect();
    assert!(interim.len() >= 12 && interim.len() % 4 == 0, "{out}");
    for (n, chunk) in interim.chunks(4).enumerate() {
        let names: Vec<String> = chunk.iter().map(|(k, _)| k.to_string()).collect();
        assert_eq!(
            names,
            [
                format!("NETPERF_INTERIM_RESULT[{n}]"),
                format!("NETPERF_UNITS[{n}]"),
                format!("NETPERF_INTERVAL[{n}]"),
                format!("NETPERF_ENDING[{n}]"),
            ]
        );
        assert_eq!(chunk[1].1, "10^6bits/s");
    }
    let total: f64 = interim
        .chunks(4)
        .map(|c| c[2].1.parse::<f64>().unwrap())
        .sum();
    let elapsed: f64 = keys
        .iter()
        .find(|(k, _)| *k == "ELAPSED_TIME")
        .unwrap()
        .1
        .parse()
        .unwrap();
    assert!(
        (total - elapsed).abs() <= 0.05 * elapsed,
        "{total} vs {elapsed}: {out}"
    );
}

/// Start netperf with a piped stdout; lines arrive on the channel as netperf
/// writes them.
fn spawn(server: &Server, args: &[&str]) -> (std::process::Child, mpsc::Receiver<String>) {
    let port = server.port.to_string();
    let mut child = Command::new(NETPERF)
        .args(["-H", server.host.as_str(), "-p", port.as_str()])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("netperf starts");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

fn wait_for(rx: &mpsc::Receiver<String>, prefix: &str, seen: &mut Vec<String>) -> bool {
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(20)) {
        let hit = line.starts_with(prefix);
        seen.push(line);
        if hit {
            return true;
        }
    }
    false
}

fn signal(child: &std::process::Child, sig: libc::c_int) {
    // SAFETY: kill with a pid we own.
    unsafe { libc::kill(child.id() as libc::pid_t, sig) };
}

/// Wait at most 30 s for the child; kill it if it is still there.
fn finish(mut child: std::process::Child) -> std::process::ExitStatus {
    for _ in 0..3000 {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    panic!("netperf did not end after the signal");
}

#[test]
fn a_signal_ends_a_test_that_runs_until_stopped_and_prints_its_result() {
    let server = Server::start("127.0.0.1");
    let cases: [(&[&str], libc::c_int); 3] = [
        (
            &["-t", "TCP_RR", "-l", "0", "-D", "0.2", "-P", "0"],
            libc::SIGALRM,
        ),
        (
            &[
                "-t",
                "UDP_STREAM",
                "-l",
                "0",
                "-D",
                "0.2",
                "-P",
                "0",
                "--",
                "-m",
                "1024",
            ],
            libc::SIGTERM,
        ),
        (
            &["-t", "TCP_CRR", "-l", "60", "-D", "0.2", "-P", "0"],
            libc::SIGINT,
        ),
    ];
    for (args, sig) in cases {
        let (child, rx) = spawn(&server, args);
        let mut seen = Vec::new();
        // Interim lines reach the pipe as they are made (flushed per line).
        assert!(
            wait_for(&rx, "Interim result:", &mut seen),
            "{args:?}: {seen:?}"
        );
        signal(&child, sig);
        let status = finish(child);
        // The reader thread may still be passing on the last lines: take
        // them until it sees end of file (bounded).
        while let Ok(line) = rx.recv_timeout(Duration::from_secs(5)) {
            seen.push(line);
        }
        assert!(status.success(), "{args:?}: {status} {seen:?}");
        let result = seen
            .iter()
            .find(|l| !l.starts_with("Interim") && !l.trim().is_empty())
            .unwrap_or_else(|| panic!("{args:?}: no result in {seen:?}"));
        let numbers = numbers(result);
        assert!(
            numbers.len() >= 5 && numbers.iter().all(|n| *n >= 0.0),
            "{result}"
        );
        assert!(numbers[numbers.len() - 1] > 0.0, "{args:?}: {result}");
    }
}

/// The child's status if it ends within `limit`, else None (it is killed).
fn finish_within(
    mut child: std::process::Child,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let deadline = std::time::Instant::now() + limit;
    while std::time::Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// A stop signal ends a long test at once whichever end sends: netperf
/// resets a connection its netserver still sends on (it waited out a
/// 10 s drain before), tells our netserver through the control
/// connection when nothing on the data path can (UDP sent to netperf,
/// TCP_CC's accepts: it waited for the netserver's -l), and the
/// Unix-domain tests watch the signal as the others do (they ran on).
#[test]
fn a_signal_ends_a_long_test_at_once_whichever_end_sends() {
    if fast_tier_skips("slow (12 s)") {
        return;
    }
    let server = Server::start("127.0.0.1");
    let cases: [&[&str]; 8] = [
        &["-t", "TCP_MAERTS"],
        &["-t", "omni", "--", "-d", "recv", "-m", ",64K"],
        &["-t", "omni", "--", "-T", "udp", "-d", "recv", "-m", "1024"],
        &["-t", "TCP_CC"],
        &["-t", "TCP_CRR"],
        &["-t", "STREAM_STREAM"],
        &["-t", "STREAM_RR"],
        &["-t", "DG_RR"],
    ];
    for test in cases {
        // The Unix-domain tests print no interim results.
        let unix = test[1].contains("STREAM_") || test[1].starts_with("DG_");
        let mut args = vec!["-l", "7200", "-P", "0"];
        if !unix {
            args.extend_from_slice(&["-D", "0.2"]);
        }
        args.extend_from_slice(test);
        let (mut child, rx) = spawn(&server, &args);
        let mut seen = Vec::new();
        if unix {
            std::thread::sleep(Duration::from_millis(1500));
        } else {
            // The data phase runs once the first interim line is out.
            assert!(
                wait_for(&rx, "Interim result:", &mut seen),
                "{test:?}: {seen:?}"
            );
        }
        let mut stderr = child.stderr.take().expect("netperf's stderr");
        signal(&child, libc::SIGALRM);
        // Generous: it ends in well under a second here; the bug was 10 s
        // or the netserver's 7200.
        let status = finish_within(child, Duration::from_secs(8))
            .unwrap_or_else(|| panic!("{test:?}: netperf still ran 8 s after SIGALRM"));
        // Everything netperf wrote: the reader thread may not have passed
        // the last lines on yet when the process has exited; it ends (and
        // the channel with it) at the pipe's end.
        seen.extend(rx.iter());
        assert!(status.success(), "{test:?}: {status} {seen:?}");
        // The result line: sizes, the time and the rate (a Unix-domain test
        // stopped while its set-up is slow may have moved nothing yet).
        let result = seen
            .iter()
            .find(|l| !l.starts_with("Interim") && numbers(l).len() >= 5)
            .unwrap_or_else(|| panic!("{test:?}: no result in {seen:?}"));
        assert!(
            numbers(result).iter().all(|n| *n >= 0.0),
            "{test:?}: {result}"
        );
        // Our netserver ends its half and sends its results: netperf
        // reports with them, and says nothing of missing remote counters.
        let mut said = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut said).unwrap();
        assert!(said.is_empty(), "{test:?}: {said}");
    }
}

#[test]
fn a_second_interrupt_exits_at_once() {
    let server = Server::start("127.0.0.1");
    // After the first SIGINT netperf waits (a few seconds at most) for the
    // netserver's results; a netserver stopped (SIGSTOP) never sends them,
    // and the second SIGINT must not wait.
    let (child, rx) = spawn(
        &server,
        &["-t", "TCP_CC", "-l", "60", "-D", "0.2", "-P", "0"],
    );
    let mut seen = Vec::new();
    assert!(wait_for(&rx, "Interim result:", &mut seen), "{seen:?}");
    // SAFETY: kill with a pid we own; SIGCONT follows below.
    unsafe { libc::kill(server.pid() as libc::pid_t, libc::SIGSTOP) };
    signal(&child, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, libc::SIGINT);
    let status = finish(child);
    // SAFETY: as above.
    unsafe { libc::kill(server.pid() as libc::pid_t, libc::SIGCONT) };
    assert_eq!(status.code(), Some(130), "{seen:?}");
}

/// Transactions per second of a short TCP_RR with `-b burst`.
fn rr_rate(server: &Server, burst: &str) -> f64 {
    let out = run_ok(
        server,
        &[
            "-t",
            "TCP_RR",
            "-l",
            "1",
            "-P",
            "0",
            "--",
            "-b",
            burst,
            "-o",
            "THROUGHPUT",
        ],
    );
    out.trim()
        .parse()
        .unwrap_or_else(|_| panic!("no rate in {out:?}"))
}

#[test]
fn a_burst_of_eight_raises_the_transaction_rate() {
    if fast_tier_skips("slow (7 s)") {
        return;
    }
    let server = Server::start("127.0.0.1");
    // About twice the rate on an idle loopback, less when the suite loads
    // the machine (1.2 to 1.5 seen); no burst at all is 1.0. A few tries
    // absorb the noise.
    let tries: Vec<(f64, f64)> = (0..3)
        .map(|_| (rr_rate(&server, "0"), rr_rate(&server, "8")))
        .collect();
    assert!(
        tries.iter().any(|(one, eight)| *eight > 1.25 * one),
        "{tries:?}"
    );
    // -b negative is no burst at all in netperf 2.7.1; it still runs.
    assert!(rr_rate(&server, "-8") > 0.0);
}

/// A counted burst test sends exactly its count of requests (stock netperf
/// overshoots by the burst and dies of a broken pipe or a reset).
#[test]
fn a_counted_burst_test_sends_its_count_and_ends_cleanly() {
    let server = Server::start("127.0.0.1");
    for test in ["TCP_RR", "UDP_RR"] {
        for count in ["1", "5", "3000"] {
            let args = [
                "-t",
                test,
                "-l",
                &format!("-{count}"),
                "-P",
                "0",
                "--",
                "-b",
                "16",
                "-o",
                "LOCAL_SEND_CALLS,REMOTE_SEND_CALLS",
            ];
            let out = run_ok(&server, &args);
            assert_eq!(out.trim(), format!("{count},{count}"), "{test} -l -{count}");
        }
    }
}

#[test]
fn udp_rr_survives_lost_datagrams_and_reports_its_timeouts() {
    // A netserver that leaves every 3000th request unanswered.
    let server =
        Server::start_with_env("127.0.0.1", &[], &[("NETPERF_NG_TEST_DROP_EVERY", "3000")]);
    let out = run_ok(
        &server,
        &[
            "-t",
            "UDP_RR",
            "-l",
            "3",
            "-D",
            "0.5",
            "--",
            "-e",
            "1",
            "-b",
            "4",
            "-k",
            "TRANSACTION_RATE,RR_TIMEOUTS",
        ],
    );
    let value = |key: &str| -> f64 {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key} in {out}"))
            .parse()
            .unwrap()
    };
    assert!(value("RR_TIMEOUTS") >= 1.0, "{out}");
    assert!(value("TRANSACTION_RATE") > 0.0, "{out}");
    // The intervals before each timeout kept their transactions.
    assert!(out.contains("NETPERF_INTERIM_RESULT[0]="), "{out}");
}

#[test]
fn paced_sends_keep_to_their_burst_per_interval_on_both_ends() {
    let server = Server::start("127.0.0.1");
    let keyval = |args: &[&str]| -> std::collections::BTreeMap<String, f64> {
        run_ok(&server, args)
            .lines()
            .filter_map(|l| l.split_once('='))
            .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
            .collect()
    };
    // Two 1000-byte sends per 10 ms: never more than the schedule allows.
    let v = keyval(&[
        "-t",
        "TCP_STREAM",
        "-l",
        "1",
        "-w",
        "10ms",
        "-b",
        "2",
        "--",
        "-m",
        "1000",
        "-k",
        "LOCAL_SEND_CALLS,ELAPSED_TIME,LOCAL_INTERVAL_USECS,LOCAL_INTERVAL_BURST",
    ]);
    let allowed = (v["ELAPSED_TIME"] / 0.010 + 2.0) * 2.0;
    assert!(
        v["LOCAL_SEND_CALLS"] >= 2.0 && v["LOCAL_SEND_CALLS"] <= allowed,
        "{v:?}"
    );
    assert_eq!(
        (v["LOCAL_INTERVAL_USECS"], v["LOCAL_INTERVAL_BURST"]),
        (10000.0, 2.0)
    );
    // The netserver paces its sends when asked (-w ,interval -b ,burst).
    let v = keyval(&[
        "-t",
        "TCP_MAERTS",
        "-l",
        "1",
        "-w",
        ",10ms",
        "-b",
        ",1",
        "--",
        "-m",
        ",1000",
        "-k",
        "REMOTE_SEND_CALLS,ELAPSED_TIME",
    ]);
    // (its data phase starts a little before ours and ends a little after)
    let allowed = v["ELAPSED_TIME"] / 0.010 + 20.0;
    assert!(
        v["REMOTE_SEND_CALLS"] >= 1.0 && v["REMOTE_SEND_CALLS"] <= allowed,
        "{v:?}"
    );
}

/// A minimal inetd-style service on loopback: discard, echo or chargen.
fn inetd_service(kind: &'static str) -> (u16, std::thread::JoinHandle<()>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        // One connection: the test's data connection; it ends with the test.
        let Ok((mut s, _)) = listener.accept() else {
            return;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(20)));
        let _ = s.set_write_timeout(Some(Duration::from_secs(20)));
        let mut buf = vec![0u8; 65536];
        for _ in 0..10_000_000 {
            let ok = match kind {
                "discard" => matches!(s.read(&mut buf), Ok(n) if n > 0),
                "echo" => match s.read(&mut buf) {
                    Ok(n) if n > 0 => s.write_all(&buf[..n]).is_ok(),
                    _ => false,
                },
                _ => s.write_all(&buf).is_ok(),
            };
            if !ok {
                break;
            }
        }
    });
    (port, handle)
}

#[test]
fn without_a_control_connection_tests_run_against_inetd_services() {
    for (test, kind) in [
        ("TCP_STREAM", "discard"),
        ("TCP_RR", "echo"),
        ("TCP_MAERTS", "chargen"),
    ] {
        let (port, service) = inetd_service(kind);
        let remote = format!(",{port}");
        let out = run_with_limit(
            &NETPERF,
            &[
                "-N",
                "-H",
                "127.0.0.1",
                "-l",
                "1",
                "-t",
                test,
                "--",
                "-P",
                &remote,
            ],
            Duration::from_secs(30),
        );
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "{test}: {stdout}{}",
            text(&out.stderr)
        );
        assert!(
            stdout.lines().next().unwrap().contains(" : no control"),
            "{stdout}"
        );
        let result = stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .nth(5)
            .unwrap();
        assert!(
            numbers(result).last().copied().unwrap_or(0.0) > 0.0,
            "{test}: {stdout}"
        );
        service.join().unwrap();
    }
}

/// What TCP did in each interval (its TCP_INFO, our end): a line under each
/// interim result with --tcp-info only (never for -v 2 alone), and a `tcp`
/// object in each JSON interim;
/// the intervals' retransmissions add up to at most the test's own count.
#[test]
fn tcp_info_goes_into_each_interval() {
    let server = Server::start("127.0.0.1");
    let (verbose, tcp) = tcp_interims_verbose(&server);
    let results = lines_starting(&verbose, "Interim result:");
    assert!(results >= 2 && tcp == results, "{verbose}");
    // No TCP connection, no TCP lines.
    let udp = run_ok(
        &server,
        &["-t", "UDP_RR", "-l", "1", "-D", "0.5", "--", "--tcp-info"],
    );
    assert!(!udp.contains("Interim TCP"), "{udp}");
    let json = run_ok(
        &server,
        &[
            "-t",
            "TCP_STREAM",
            "-l",
            "2",
            "-D",
            "0.5",
            "--",
            "-J",
            "THROUGHPUT,LOCAL_TRANSPORT_RETRANS",
        ],
    );
    let body = json.split_once('\n').map_or("", |(_, rest)| rest);
    let doc: serde_json::Value = serde_json::from_str(body).unwrap();
    let interims = doc["interim"].as_array().unwrap();
    assert!(interims.len() >= 2, "{doc}");
    let mut retransmits = 0;
    for i in interims {
        let t = &i["tcp"];
        for share in ["busy", "rwnd_limited", "sndbuf_limited"] {
            let v = t[share].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&v), "{share} {v}: {i}");
        }
        assert!(t["snd_cwnd"].as_u64().unwrap() > 0, "{i}");
        retransmits += t["retransmits"].as_u64().unwrap();
    }
    let total = doc["results"]["LOCAL_TRANSPORT_RETRANS"]["value"]
        .as_f64()
        .unwrap();
    assert!(retransmits as f64 <= total, "{retransmits} > {total}");
}
