//! netserver's operator limits and access rules (issue 7): the limit options
//! and their -h text, a refused request's reason in the log and errno at
//! netperf, --max-tests, the --allow list for control connections, and UDP
//! datagrams sent only to the client. Every wait is bounded.

mod common;

use common::control::*;
use common::*;
use netperf_ng::wire::omni::OmniResponse;
use std::net::UdpSocket;
use std::path::PathBuf;
use std::time::Duration;

fn log_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ng-limits-{}-{name}.log", std::process::id()))
}

/// The log so far, after giving the server a moment to write it.
fn read_log(path: &PathBuf) -> String {
    std::thread::sleep(Duration::from_millis(200));
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn help_lists_every_limit_and_bad_values_are_errors() {
    let out = run_with_limit(&NETSERVER, &["-h"], Duration::from_secs(5));
    let help = text(&out.stdout);
    for option in [
        "--max-connections",
        "--max-tests",
        "--max-message",
        "--max-socket-buffer",
        "--max-ring-width",
        "--max-ring-memory",
        "--max-test-length",
        "--idle-timeout",
        "--accept-timeout",
        "--silent-timeout",
        "--allow",
        "--fill-dir",
        "--pid-file",
        "--log-json",
        "--allow-offload-changes=IF",
    ] {
        assert!(help.contains(option), "-h lacks {option}:\n{help}");
    }
    // netperf's own usage comes first, unchanged.
    assert!(help.starts_with("\nUsage: netserver [options] \n"));
    for bad in [
        &["--max-tests", "0"][..],
        &["--max-message", "lots"],
        &["--silent-timeout", "-1"],
        &["--allow", "10.0.0.0/99"],
        &["--max-connections"],
        &["--allow-offload-changes=eth0/../lo"],
        &["--allow-offload-changes="],
    ] {
        let out = run_with_limit(&NETSERVER, bad, Duration::from_secs(5));
        assert_eq!(out.status.code(), Some(1), "{bad:?}");
        let err = text(&out.stderr);
        assert!(err.starts_with("netserver: "), "{bad:?}: {err}");
    }
}

#[test]
fn requests_over_a_limit_are_refused_with_the_reason_logged() {
    let log = log_path("refused");
    let server = Server::start_logging(
        "127.0.0.1",
        &[
            "-v",
            "1",
            "--max-message",
            "64K",
            "--max-socket-buffer",
            "1M",
            "--max-test-length",
            "2",
        ],
        &[],
        Some(&log),
    );
    let cases: [(&[&str], &str); 4] = [
        (
            &["-t", "TCP_STREAM", "-l", "1", "--", "-M", "1M"],
            "is over netserver's --max-message 65536",
        ),
        (
            &["-t", "TCP_RR", "-l", "1", "--", "-r", "1,100000"],
            "is over netserver's --max-message 65536",
        ),
        (
            &["-t", "TCP_STREAM", "-l", "1", "--", "-S", "4M"],
            "is over netserver's --max-socket-buffer 1048576",
        ),
        (
            &["-t", "TCP_STREAM", "-l", "5"],
            "is over netserver's --max-test-length 2",
        ),
    ];
    for (args, reason) in cases {
        let out = netperf(&server, args);
        assert!(!out.status.success(), "{args:?} was not refused");
        let err = text(&out.stderr);
        assert!(
            err.contains("netperf: remote error 22: Invalid argument"),
            "{args:?}: {err}"
        );
        let logged = read_log(&log);
        assert!(
            logged.contains(reason),
            "{args:?}: log lacks '{reason}':\n{logged}"
        );
    }
    // Within the limits all is well.
    run_ok(&server, &["-t", "TCP_STREAM", "-l", "1", "--", "-M", "64K"]);
    let _ = std::fs::remove_file(&log);
}

#[test]
fn max_tests_refuses_more_tests_with_ebusy() {
    let server = Server::start_with("127.0.0.1", &["--max-tests", "1", "--accept-timeout", "30"]);
    // One test waits for a data connection that never comes.
    let mut holder = connect(&server);
    send_message(&mut holder, &omni_request("TCP_STREAM", 60).encode()).unwrap();
    match read_reply(&mut holder, Duration::from_secs(10)) {
        Reply::Message(m) => assert_eq!(OmniResponse::decode(&m).serv_errno, 0),
        other => panic!("the first test was not answered: {other:?}"),
    }
    let out = netperf(&server, &["-t", "TCP_RR", "-l", "1"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("remote error 16: Device or resource busy"),
        "{}",
        text(&out.stderr)
    );
    // The client that held the place leaves: its test ends, the place frees.
    drop(holder);
    let mut served = false;
    for _ in 0..20 {
        if netperf(&server, &["-t", "TCP_RR", "-l", "-100"])
            .status
            .success()
        {
            served = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(served, "the test place was not freed");
}

#[test]
fn allow_list_admits_only_the_named_networks() {
    let log = log_path("allow");
    let closed = Server::start_logging(
        "127.0.0.1",
        &["-v", "1", "--allow", "10.0.0.0/8,192.168.0.0/16"],
        &[],
        Some(&log),
    );
    let out = netperf(&closed, &["-t", "TCP_RR", "-l", "1"]);
    assert!(!out.status.success(), "a client outside --allow was served");
    assert!(read_log(&log).contains("refused: not in the --allow networks"));
    let open = Server::start_with(
        "127.0.0.1",
        &["--allow", "10.0.0.0/8", "--allow=127.0.0.0/8"],
    );
    run_ok(&open, &["-t", "TCP_RR", "-l", "-100"]);
    let _ = std::fs::remove_file(&log);
}

/// Receive one datagram on `u` within a few seconds.
fn got_datagram(u: &UdpSocket) -> bool {
    u.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut b = [0u8; 2048];
    u.recv(&mut b).is_ok()
}

/// Ask for a UDP send test aimed at `ip`:`u`'s port; the response's errno.
fn udp_send_to(server: &Server, ip: [u8; 4], u: &UdpSocket) -> (i32, std::net::TcpStream) {
    let mut r = omni_request("UDP_MAERTS", 1);
    r.netperf_ip = [0; 16];
    r.netperf_ip[..4].copy_from_slice(&ip);
    r.netperf_port = u32::from(u.local_addr().unwrap().port());
    let mut control = connect(server);
    send_message(&mut control, &r.encode()).unwrap();
    match read_reply(&mut control, Duration::from_secs(10)) {
        Reply::Message(m) => (OmniResponse::decode(&m).serv_errno, control),
        other => panic!("no response: {other:?}"),
    }
}

#[test]
fn udp_datagrams_go_only_to_the_client_unless_allowed() {
    let server = Server::start("127.0.0.1");
    // Another address than the control connection's: refused.
    let elsewhere = UdpSocket::bind("127.0.0.2:0").expect("bind 127.0.0.2");
    let (errno, _c) = udp_send_to(&server, [127, 0, 0, 2], &elsewhere);
    assert_eq!(errno, libc::EACCES);
    // No address (netperf without -L): the control peer's, which works.
    let here = UdpSocket::bind("127.0.0.1:0").unwrap();
    let (errno, _c) = udp_send_to(&server, [0, 0, 0, 0], &here);
    assert_eq!(errno, 0);
    assert!(got_datagram(&here), "nothing sent to the control peer");
    // Our netperf's receive-side UDP test works end to end.
    run_ok(
        &server,
        &["-t", "omni", "-l", "1", "--", "-d", "recv", "-T", "udp"],
    );
    // An operator's --allow can permit another address.
    let allowing = Server::start_with("127.0.0.1", &["--allow", "127.0.0.0/8"]);
    let (errno, _c) = udp_send_to(&allowing, [127, 0, 0, 2], &elsewhere);
    assert_eq!(errno, 0);
    assert!(
        got_datagram(&elsewhere),
        "nothing sent to the allowed address"
    );
}

#[test]
fn idle_and_half_sent_control_connections_are_closed() {
    let server = Server::start_with(
        "127.0.0.1",
        &["--idle-timeout", "1", "--silent-timeout", "1"],
    );
    let mut idle = connect(&server);
    assert!(
        matches!(
            read_reply(&mut idle, Duration::from_secs(10)),
            Reply::Closed
        ),
        "an idle control connection was kept"
    );
    // A request started and not finished is not waited for longer either.
    let mut half = connect(&server);
    std::io::Write::write_all(&mut half, &omni_request("TCP_RR", 1).encode().bytes[..100]).unwrap();
    assert!(matches!(
        read_reply(&mut half, Duration::from_secs(10)),
        Reply::Closed
    ));
    still_serves(&server);
}

/// A test's data thread runs on a copy of netserver's descriptor table
/// (engine::fd_table): the copy must not keep another test's sockets. A
/// short UDP test's port is free again when it ends, although a long test
/// started while it ran is still running.
#[test]
fn a_running_test_does_not_keep_another_tests_socket() {
    let server = Server::start("127.0.0.1");
    let netperf = |args: &[&str]| {
        let port = server.port.to_string();
        std::process::Command::new(NETPERF)
            .args(["-H", "127.0.0.1", "-p", &port])
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start netperf")
    };
    let port_free = |port: u16| UdpSocket::bind(("0.0.0.0", port)).is_ok();
    let wait_for = |what: &mut dyn FnMut() -> bool, secs: u64| {
        let deadline = std::time::Instant::now() + Duration::from_secs(secs);
        while !what() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        what()
    };
    let udp_port = UdpSocket::bind("0.0.0.0:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let rport = format!(",{udp_port}");
    let mut short = netperf(&["-t", "UDP_RR", "-l", "4", "--", "-P", &rport]);
    let short_started = wait_for(&mut || !port_free(udp_port), 10);
    let mut long = netperf(&["-t", "TCP_STREAM", "-l", "30"]);
    let short_ended = wait_for(&mut || matches!(short.try_wait(), Ok(Some(_))), 20);
    let port_freed = wait_for(&mut || port_free(udp_port), 5);
    let long_running = matches!(long.try_wait(), Ok(None));
    for child in [&mut short, &mut long] {
        let _ = child.kill();
        let _ = child.wait();
    }
    assert!(
        short_started && short_ended,
        "the short UDP test did not run"
    );
    assert!(long_running, "the long test ended too soon to tell");
    assert!(
        port_freed,
        "the short test's port stayed bound while the long test ran"
    );
    still_serves(&server);
}

/// A client sending its request a byte a second is cut off after the
/// silent timeout (counted from its first byte), and others are served
/// meanwhile.
#[test]
fn a_byte_a_second_client_is_cut_off() {
    let server = Server::start_with("127.0.0.1", &["--silent-timeout", "3"]);
    let port = server.port;
    let slow = std::thread::spawn(move || {
        let request = omni_request("TCP_RR", 1).encode();
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_nodelay(true).unwrap();
        for (sent, b) in request.bytes.iter().enumerate().take(20) {
            if std::io::Write::write_all(&mut s, std::slice::from_ref(b)).is_err() {
                return sent;
            }
            if let Reply::Closed = read_reply(&mut s, Duration::from_secs(1)) {
                return sent + 1;
            }
        }
        usize::MAX
    });
    still_serves(&server);
    let sent = slow.join().unwrap();
    assert!(sent < 20, "a byte-a-second client was kept for 20 s");
}

/// Data connections from outside --allow are closed uncounted: the test
/// sees its data connection end at once, as netperf sees any end of test
/// (it reports what it counted: nothing).
#[test]
fn data_connections_from_outside_the_allow_list_are_dropped() {
    let server = Server::start_with(
        "127.0.0.1",
        &[
            "--allow",
            "127.0.0.1",
            "--accept-timeout",
            "2",
            "--silent-timeout",
            "2",
        ],
    );
    // A refused TCP_CRR client's end-of-test connection is refused too: the
    // server's test ends by the silent timeout.
    // netperf binds an RR test's data socket to -L's address only with a
    // port (stock's rule; a connection test binds each of its own).
    let free_port = |ip: &str| {
        let probe = std::net::TcpListener::bind((ip, 0)).expect("a free port");
        probe.local_addr().unwrap().port()
    };
    let rate = |test: &str, from: &str| {
        let port = format!("{},", free_port(from));
        let mut args = vec!["-t", test, "-l", "-50", "-P", "0", "--", "-L", from];
        if test == "TCP_RR" {
            args.extend(["-P", &port]);
        }
        let out = netperf(&server, &args);
        let row = numbers(first_line(&text(&out.stdout)).trim())
            .last()
            .copied();
        row.unwrap_or(0.0)
    };
    for test in ["TCP_RR", "TCP_CRR"] {
        assert!(
            rate(test, "127.0.0.1") > 0.0,
            "{test} from an allowed address"
        );
        assert_eq!(
            rate(test, "127.0.0.2"),
            0.0,
            "{test} from 127.0.0.2 was served"
        );
    }
    still_serves(&server);
}

/// A UDP_RR netserver answers only the client's data address: requests from
/// another (a spoofed source) are dropped and logged, never answered.
#[test]
fn udp_requests_from_other_sources_are_not_answered() {
    let log = log_path("spoofed");
    let server = Server::start_logging("127.0.0.1", &["-v", "1"], &[], Some(&log));
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut r = omni_request("UDP_RR", 30);
    r.netperf_port = u32::from(client.local_addr().unwrap().port());
    let mut control = connect(&server);
    send_message(&mut control, &r.encode()).unwrap();
    let port = match read_reply(&mut control, Duration::from_secs(10)) {
        Reply::Message(m) => OmniResponse::decode(&m).data_port as u16,
        other => panic!("no response: {other:?}"),
    };
    let spoofed = UdpSocket::bind("127.0.0.2:0").expect("bind 127.0.0.2");
    for u in [&spoofed, &client] {
        u.connect(("127.0.0.1", port)).unwrap();
        u.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
    }
    let mut b = [0u8; 16];
    for _ in 0..3 {
        spoofed.send(b"x").unwrap();
        assert!(
            spoofed.recv(&mut b).is_err(),
            "a spoofed source was answered"
        );
    }
    client.send(b"x").unwrap();
    assert!(client.recv(&mut b).is_ok(), "the client was not answered");
    drop(control);
    let mut logged = String::new();
    for _ in 0..20 {
        logged = read_log(&log);
        if logged.contains("dropped 3 UDP requests from addresses other than the client's") {
            break;
        }
    }
    assert!(logged.contains("dropped 3 UDP requests"), "{logged}");
    let _ = std::fs::remove_file(&log);
}

/// --max-test-length bounds every test, not only timed ones: a test that
/// asks for a count that never comes (or for no length at all) while its
/// client keeps it going ends at the longest length (plus netserver's pad
/// for a receiving test), with its results.
#[test]
fn counted_and_untimed_tests_end_at_the_longest_test_length() {
    if fast_tier_skips("slow (6 s)") {
        return;
    }
    use std::io::{Read, Write};
    let server = Server::start_with("127.0.0.1", &["--max-test-length", "1"]);
    for (test, length) in [("TCP_MAERTS", 0), ("TCP_RR", i32::MIN + 1)] {
        let mut control = connect(&server);
        send_message(&mut control, &omni_request(test, length).encode()).unwrap();
        let response = match read_reply(&mut control, Duration::from_secs(10)) {
            Reply::Message(m) => OmniResponse::decode(&m),
            other => panic!("{test}: no response: {other:?}"),
        };
        assert_eq!(response.serv_errno, 0, "{test} refused");
        let at = std::net::SocketAddr::from(([127, 0, 0, 1], response.data_port as u16));
        let mut data = std::net::TcpStream::connect_timeout(&at, Duration::from_secs(5)).unwrap();
        data.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        data.set_write_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        control
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let mut buf = vec![0u8; 65536];
        // The client keeps the test going, slowly, for up to about 30 s:
        // one transaction at a time, or a read of what netserver sends.
        let mut ended = false;
        for _ in 0..300 {
            if test == "TCP_RR" && data.write_all(b"x").is_ok() {
                let _ = data.read(&mut buf[..1]);
            } else {
                let _ = data.read(&mut buf);
            }
            if control.peek(&mut buf[..1]).is_ok_and(|n| n > 0) {
                ended = true;
                break;
            }
        }
        assert!(
            ended,
            "{test} with length {length} was not ended by --max-test-length"
        );
        // Stock netserver's results carry the response's type word.
        match read_reply(&mut control, Duration::from_secs(10)) {
            Reply::Message(m) => assert_eq!(m.kind(), netperf_ng::wire::kind::OMNI_RESPONSE),
            other => panic!("{test}: no results: {other:?}"),
        }
    }
    still_serves(&server);
}
