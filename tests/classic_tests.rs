//! Every classic test end to end against our netserver on 127.0.0.1 and ::1:
//! the output parses, the results are positive, the layout is netperf's.

mod common;
use common::*;

fn check_all(host: &str) {
    let server = Server::start(host);
    for (test, extra, field) in CLASSIC_TESTS {
        let mut args = vec!["-t", test, "-P", "0"];
        args.extend_from_slice(extra);
        let out = netperf(&server, &args);
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "{test} on {host} failed: {}{}",
            stdout,
            text(&out.stderr)
        );
        let first = first_line(&stdout);
        let nums = numbers(first);
        let value = nums.get(*field).copied().unwrap_or(-1.0);
        assert!(
            value > 0.0,
            "{test} on {host}: no positive result in {first:?}"
        );
    }
}

#[test]
fn every_test_runs_on_ipv4_loopback() {
    check_all("127.0.0.1");
}

#[test]
fn every_test_runs_on_ipv6_loopback() {
    if !have_ipv6() {
        return skip("no IPv6 loopback here");
    }
    check_all("::1");
}

#[test]
fn stream_output_has_netperf_layout_and_awk_field_five() {
    let server = Server::start("127.0.0.1");
    let out = netperf(&server, &["-l", "1"]);
    let s = text(&out.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert!(lines[0].starts_with("MIGRATED TCP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 127.0.0.1 () port 0 AF_INET"), "{s}");
    assert_eq!(lines[1], "Recv   Send    Send                          ");
    assert_eq!(lines[4], "bytes  bytes   bytes    secs.    10^6bits/sec  ");
    let row = lines[6];
    let fields: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(fields[0..4], ["131072", "16384", "16384", fields[3]]);
    assert!(
        fields[4].parse::<f64>().unwrap() > 0.0,
        "awk $5 is the throughput: {row}"
    );
}

#[test]
fn rr_with_cpu_and_verbose_histogram() {
    let server = Server::start("127.0.0.1");
    let out = netperf(&server, &["-t", "TCP_RR", "-l", "1", "-c", "-C", "-v", "2"]);
    let s = text(&out.stdout);
    assert!(out.status.success(), "{s}");
    assert!(s.contains("local  remote local   remote"), "{s}");
    let row = s
        .lines()
        .find(|l| l.starts_with("16384  131072 1"))
        .expect("result row");
    let n = numbers(row);
    assert!(
        n.len() >= 10 && n[5] > 0.0 && n[6] >= 0.0 && n[8] >= 0.0,
        "{row}"
    );
    assert!(s.contains("Histogram of request/response times"), "{s}");
    let total = s
        .lines()
        .find(|l| l.starts_with("HIST_TOTAL:"))
        .expect("histogram total");
    assert!(numbers(total)[0] > 0.0, "{total}");
}

#[test]
fn brand_and_brief_output() {
    let server = Server::start("127.0.0.1");
    let out = netperf(
        &server,
        &[
            "-t",
            "TCP_RR",
            "-l",
            "1",
            "-P",
            "0",
            "-v",
            "0",
            "-B",
            "brand here",
            "--",
            "-b",
            "4",
            "-D",
        ],
    );
    let s = text(&out.stdout);
    assert!(s.trim_end().ends_with(" brand here"), "{s:?}");
    assert!(numbers(&s)[0] > 0.0);
}

#[test]
fn transaction_count_ends_the_test() {
    let server = Server::start("127.0.0.1");
    let out = netperf(
        &server,
        &["-t", "TCP_RR", "-l", "-5000", "-P", "0", "-v", "2"],
    );
    let s = text(&out.stdout);
    assert!(out.status.success(), "{s}");
    let total = s
        .lines()
        .find(|l| l.starts_with("HIST_TOTAL:"))
        .expect("histogram total");
    assert_eq!(numbers(total)[0], 5000.0, "{s}");
}

#[test]
fn confidence_iterations_show_in_the_banner() {
    let server = Server::start("127.0.0.1");
    let out = netperf(
        &server,
        &["-t", "TCP_RR", "-l", "1", "-i", "3,3", "-I", "99,5"],
    );
    let s = text(&out.stdout);
    assert!(out.status.success(), "{s}");
    assert!(
        s.lines()
            .next()
            .unwrap()
            .contains(" : +/-2.500% @ 99% conf. "),
        "{s}"
    );
}

#[test]
fn special_tests_print_without_newline() {
    let server = Server::start("127.0.0.1");
    let out = netperf(&server, &["-t", "REM_CPU"]);
    assert_eq!(text(&out.stdout), "100");
    let out = netperf(&server, &["-t", "LOC_CPU"]);
    assert_eq!(text(&out.stdout), "100");
    let out = netperf(&server, &["-t", "UUID"]);
    let u = text(&out.stdout);
    assert_eq!(u.len(), 36, "{u:?}");
}

#[test]
fn many_clients_at_once() {
    let server = Server::start("127.0.0.1");
    let port = server.port.to_string();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let port = port.clone();
            std::thread::spawn(move || {
                run_with_limit(
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
                    ],
                    std::time::Duration::from_secs(60),
                )
            })
        })
        .collect();
    for h in handles {
        let out = h.join().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(numbers(&text(&out.stdout))[5] > 0.0);
    }
}

#[test]
fn passphrase_is_required_when_set() {
    let server = Server::start_with("127.0.0.1", &["-Z", "s3cret"]);
    let ok = netperf(
        &server,
        &["-t", "TCP_RR", "-l", "-100", "-P", "0", "-Z", "s3cret"],
    );
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    let bad = netperf(
        &server,
        &["-t", "TCP_RR", "-l", "-100", "-P", "0", "-Z", "wrong"],
    );
    assert!(!bad.status.success());
    assert!(
        text(&bad.stderr).contains("control connection"),
        "{}",
        text(&bad.stderr)
    );
    let none = netperf(&server, &["-t", "TCP_RR", "-l", "-100", "-P", "0"]);
    assert!(!none.status.success());
}

/// netperf's own example scripts pass `-s 0 -S 0` (tcp_rr_script: the
/// kernel's smallest buffers) and `-s -1 -S -1` (udp_rr_script: the
/// default); runemomni.sh runs a UDP omni stream with 2 MiB buffers and
/// 64-byte sends, a ring of 32769 buffers.
#[test]
fn example_script_socket_sizes_run() {
    let server = Server::start("127.0.0.1");
    let sizes = |extra: &[&str]| -> Vec<i64> {
        let mut args = vec!["-l", "1", "-P", "0"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-o", "LSS_SIZE_REQ,LSS_SIZE,RSS_SIZE_REQ,RSS_SIZE"]);
        let out = run_ok(&server, &args);
        out.trim()
            .lines()
            .last()
            .unwrap_or_default()
            .split(',')
            .map(|v| v.trim().parse().unwrap_or(i64::MIN))
            .collect()
    };
    let default = sizes(&["-t", "TCP_RR", "--"]);
    let smallest = sizes(&["-t", "TCP_RR", "--", "-s", "0", "-S", "0"]);
    assert_eq!((smallest[0], smallest[2]), (0, 0), "{smallest:?}");
    // Asking for 0 bytes gets the kernel's smallest buffer, not the default.
    assert!(
        smallest[1] > 0 && smallest[1] < default[1],
        "{smallest:?} vs {default:?}"
    );
    assert!(
        smallest[3] > 0 && smallest[3] < default[3],
        "{smallest:?} vs {default:?}"
    );
    let unset = sizes(&["-t", "UDP_RR", "--", "-s", "-1", "-S", "-1"]);
    assert_eq!((unset[0], unset[2]), (-1, -1), "{unset:?}");
    assert!(unset[1] > 0 && unset[3] > 0, "{unset:?}");
    let wide = sizes(&[
        "-t", "omni", "--", "-s", "1M", "-S", "1M", "-m", "64", "-T", "udp",
    ]);
    assert_eq!((wide[0], wide[2]), (1 << 20, 1 << 20), "{wide:?}");
}
