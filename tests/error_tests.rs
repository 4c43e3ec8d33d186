//! Every failure a user can cause gives one clear message, a non-zero exit,
//! and no hang.

mod common;
use common::*;
use std::time::{Duration, Instant};

fn fails_with(args: &[&str], code: i32, needle: &str) {
    let out = run_with_limit(&NETPERF, args, Duration::from_secs(30));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(code), "{args:?}: {all}");
    assert!(
        all.contains(needle),
        "{args:?}: expected {needle:?} in {all}"
    );
    assert!(!all.contains("panicked"), "{all}");
}

#[test]
fn refused_connection() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    fails_with(
        &["-H", "127.0.0.1", "-p", &port, "-l", "1"],
        255,
        "are you sure there is a netserver listening on 127.0.0.1 at port",
    );
}

#[test]
fn unknown_host() {
    fails_with(
        &["-H", "no.such.host.invalid", "-l", "1"],
        255,
        "Netperf could not resolve no.such.host.invalid as a host name",
    );
}

#[test]
fn wrong_family_for_address() {
    fails_with(&["-H", "127.0.0.1", "-6", "-l", "1"], 255, "af AF_INET6");
}

#[test]
fn unknown_test_name() {
    fails_with(
        &["-t", "BOGUS_TEST"],
        1,
        "The test you requested (BOGUS_TEST) is unknown to this netperf.",
    );
}

/// What stock netperf 2.7.1 refuses (or cannot run) is refused; `-m 0`,
/// `-m abc` and `-l x1` it runs (tests/argv_differential_tests.rs).
#[test]
fn values_stock_cannot_run() {
    fails_with(&["-I", "50"], 1, "only 95% and 99%");
    fails_with(&["-W", "-1"], 1, "-W: a ring of -1 buffers");
    fails_with(&["-a", "-1"], 1, "'-1' for -a");
}

#[test]
fn usage_and_version() {
    let out = run_with_limit(&NETPERF, &["-V"], Duration::from_secs(5));
    assert_eq!(text(&out.stdout), "Netperf version 2.7.1\n");
    assert_eq!(out.status.code(), Some(0));
    let out = run_with_limit(&NETPERF, &["-h"], Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("Usage: netperf [global options] -- [test options]"));
    let out = run_with_limit(&NETPERF, &["--", "-h"], Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("OMNI and Migrated BSD Sockets Test Options:"));
    let out = run_with_limit(&NETSERVER, &["-h"], Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("Usage: netserver [options]")
            || text(&out.stderr).contains("Usage: netserver [options]")
    );
}

#[test]
fn server_that_vanishes_mid_test() {
    if fast_tier_skips("slow (9 s)") {
        return;
    }
    for test in ["TCP_STREAM", "TCP_RR", "TCP_MAERTS", "UDP_RR"] {
        let mut server = Server::start("127.0.0.1");
        let port = server.port.to_string();
        let started = Instant::now();
        let client = std::thread::spawn(move || {
            run_with_limit(
                &NETPERF,
                &["-H", "127.0.0.1", "-p", &port, "-t", test, "-l", "5"],
                Duration::from_secs(60),
            )
        });
        std::thread::sleep(Duration::from_millis(1200));
        server.kill();
        let out = client.join().unwrap();
        assert!(!out.status.success(), "{test}: {}", text(&out.stdout));
        let err = text(&out.stderr);
        assert!(err.starts_with("netperf: "), "{test}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{test} took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn netserver_port_in_use_fails_cleanly() {
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port().to_string();
    let out = run_with_limit(
        &NETSERVER,
        &["-D", "-4", "-L", "127.0.0.1", "-p", &port],
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains(&format!(
            "Unable to start netserver with  '127.0.0.1' port '{port}'"
        )),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn request_the_server_cannot_honour() {
    let server = Server::start("127.0.0.1");
    // A remote socket buffer beyond netserver's limit is refused with EINVAL.
    let out = netperf(
        &server,
        &["-t", "TCP_STREAM", "-l", "1", "--", "-S", "1500M"],
    );
    assert_eq!(out.status.code(), Some(255), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("netperf: remote error 22"),
        "{}",
        text(&out.stderr)
    );
    // The server is still there and serves the next test.
    let out = netperf(&server, &["-t", "TCP_RR", "-l", "-100", "-P", "0"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn an_absurd_ring_width_is_no_abort() {
    let server = Server::start("127.0.0.1");
    // -W asks for 10^8 local buffers: our end fits its rings into its
    // limit (it used to die of a failed allocation); netserver refuses its
    // own share with ENOMEM, one clear error, in every socket family.
    for test in ["TCP_STREAM", "STREAM_STREAM"] {
        let args = ["-t", test, "-l", "1", "-W", "100000000,100000000"];
        let out = netperf(&server, &args);
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(!all.contains("memory allocation"), "{test}: {all}");
        assert!(
            matches!(out.status.code(), Some(0 | 255)),
            "{test}: {:?} {all}",
            out.status
        );
    }
}
