//! netperf-ng's own options (--mmsg, --zerocopy, --busy-poll) end to end
//! against our netserver: they run, they count what netperf counts, and they
//! leave netperf's own options and output alone.

mod common;
use common::*;

fn first_numbers(out: &std::process::Output) -> Vec<f64> {
    let s = text(&out.stdout);
    assert!(out.status.success(), "{s}{}", text(&out.stderr));
    numbers(first_line(&s))
}

#[test]
fn batched_udp_stream_counts_messages_on_both_ends() {
    let server = Server::start("127.0.0.1");
    let out = netperf(
        &server,
        &[
            "-t",
            "UDP_STREAM",
            "-l",
            "1",
            "-P",
            "0",
            "--",
            "-m",
            "64",
            "--mmsg",
            "32",
        ],
    );
    let s = text(&out.stdout);
    assert!(out.status.success(), "{s}");
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    let sent = numbers(lines[0]);
    let received = numbers(lines[1]);
    // socket size, message size, elapsed, messages okay, errors, throughput
    assert!(sent[3] > 0.0 && received[2] > 0.0, "{s}");
    assert!(received[2] <= sent[3], "received more than was sent: {s}");
}

#[test]
fn batched_burst_udp_rr_completes_exact_counts() {
    let server = Server::start("127.0.0.1");
    let out = netperf(
        &server,
        &[
            "-t", "UDP_RR", "-l", "-20000", "-P", "0", "--", "-b", "15", "--mmsg", "16",
        ],
    );
    let n = first_numbers(&out);
    assert!(n[5] > 0.0, "{n:?}");
    let out = netperf(
        &server,
        &[
            "-t", "UDP_RR", "-l", "1", "-P", "0", "--", "-b", "15", "--mmsg", "16",
        ],
    );
    assert!(first_numbers(&out)[5] > 0.0);
}

#[test]
fn zerocopy_stream_and_maerts() {
    let server = Server::start("127.0.0.1");
    for test in ["TCP_STREAM", "TCP_MAERTS"] {
        let out = netperf(
            &server,
            &["-t", test, "-l", "1", "-P", "0", "--", "--zerocopy"],
        );
        assert!(first_numbers(&out)[4] > 0.0, "{test}");
    }
}

#[test]
fn busy_poll_request_response() {
    let server = Server::start("127.0.0.1");
    let out = netperf(
        &server,
        &[
            "-t",
            "TCP_RR",
            "-l",
            "-2000",
            "-P",
            "0",
            "--",
            "--busy-poll",
            "20",
        ],
    );
    assert!(first_numbers(&out)[5] > 0.0);
}

#[test]
fn extension_help_and_errors() {
    let out = run_with_limit(
        &NETPERF,
        &["--", "--help-ext"],
        std::time::Duration::from_secs(5),
    );
    assert!(text(&out.stdout).contains("--mmsg N"));
    let out = run_with_limit(
        &NETPERF,
        &["--", "--mmsg", "5000"],
        std::time::Duration::from_secs(5),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--mmsg"),
        "{}",
        text(&out.stderr)
    );
}
