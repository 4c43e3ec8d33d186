//! MPTCP data connections (`-- --mptcp`, `-T mptcp`): on loopback each end
//! reports one subflow and the bytes add up; what MPTCP cannot carry and a
//! kernel with MPTCP off are refused in one line before any traffic; and on
//! a two-path testbed (two veth pairs between two namespaces, the server
//! announcing its second address) the connection runs two subflows that
//! both carried bytes, checked against the two links' own byte counters.

mod common;

use common::{netperf, run_ok, text, Server, NETPERF, NETSERVER};
use std::process::Command;
use std::time::Duration;

/// `-k` output as (name, value) pairs.
fn keyval(stdout: &str) -> std::collections::BTreeMap<String, String> {
    stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Whether this kernel opens MPTCP sockets; else the test skips.
fn mptcp_here() -> bool {
    match netperf_ng::net::mptcp::available() {
        Ok(()) => true,
        Err(why) => {
            common::skip(why);
            false
        }
    }
}

#[test]
fn each_end_reports_its_subflow_and_the_bytes_add_up_on_loopback() {
    if !mptcp_here() {
        return;
    }
    let server = Server::start("127.0.0.1");
    let selectors = "LOCAL_MPTCP_SUBFLOWS,REMOTE_MPTCP_SUBFLOWS,LOCAL_BYTES_SENT,REMOTE_BYTES_RECVD,LOCAL_BYTES_RECVD,REMOTE_BYTES_SENT";
    for args in [
        &[
            "-t",
            "TCP_STREAM",
            "-l",
            "1",
            "--",
            "--mptcp",
            "-k",
            selectors,
        ][..],
        &[
            "-t", "omni", "-l", "1", "--", "-T", "mptcp", "-d", "rr", "-k", selectors,
        ],
    ] {
        let v = keyval(&run_ok(&server, args));
        assert_eq!(v["LOCAL_MPTCP_SUBFLOWS"], "1", "{args:?}: {v:?}");
        assert_eq!(v["REMOTE_MPTCP_SUBFLOWS"], "1", "{args:?}: {v:?}");
        // A stream's bytes add up exactly; a request/response test may end
        // with one 1-byte request in flight (sent by netperf, not yet read
        // by netserver when its clock ended), as stock's does.
        let in_flight: i64 = if args.contains(&"rr") { 1 } else { 0 };
        let apart = |a: &str, b: &str| {
            let n = |k: &str| v[k].parse::<i64>().unwrap_or_else(|_| panic!("{k}: {v:?}"));
            n(a) - n(b)
        };
        let sent = apart("LOCAL_BYTES_SENT", "REMOTE_BYTES_RECVD");
        assert!((0..=in_flight).contains(&sent), "{args:?}: {v:?}");
        let received = apart("REMOTE_BYTES_SENT", "LOCAL_BYTES_RECVD");
        assert!((0..=in_flight).contains(&received), "{args:?}: {v:?}");
    }
    // Without --mptcp the selectors say "not MPTCP", and the classic block
    // gains no line.
    let v = keyval(&run_ok(
        &server,
        &[
            "-t",
            "TCP_STREAM",
            "-l",
            "1",
            "--",
            "-k",
            "LOCAL_MPTCP_SUBFLOWS",
        ],
    ));
    assert_eq!(v["LOCAL_MPTCP_SUBFLOWS"], "-1");
    let plain = run_ok(&server, &["-t", "TCP_RR", "-l", "1"]);
    assert!(!plain.contains("MPTCP"), "{plain}");
    let classic = run_ok(&server, &["-t", "TCP_RR", "-l", "1", "--", "--mptcp"]);
    assert!(
        classic.contains("MPTCP subflows: 1 here, 1 at netserver"),
        "{classic}"
    );
}

#[test]
fn what_mptcp_cannot_carry_is_refused() {
    let server = Server::start("127.0.0.1");
    for test in ["UDP_STREAM", "UDP_RR", "STREAM_STREAM"] {
        let out = netperf(&server, &["-t", test, "-l", "1", "--", "--mptcp"]);
        assert!(!out.status.success(), "{test}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains("--mptcp: "), "{test}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{test}: {stderr}");
    }
    // A -T name netperf 2.7.1 does not know runs the socket type's own
    // protocol, as stock runs it (not MPTCP), and says so on stderr.
    let out = netperf(&server, &["-t", "omni", "-l", "1", "--", "-T", "mpudp"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("-T 'mpudp'"),
        "{}",
        text(&out.stderr)
    );
}

/// Network namespaces the test made, deleted when it ends (also when it
/// fails); their processes die with them.
struct Namespaces(Vec<String>);

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.0 {
            let _ = Command::new("ip")
                .args(["netns", "pids", ns])
                .output()
                .map(|o| {
                    for pid in text(&o.stdout).split_whitespace() {
                        let _ = Command::new("kill").arg(pid).status();
                    }
                });
            let _ = Command::new("ip").args(["netns", "delete", ns]).status();
        }
    }
}

/// Our netserver in namespace `ns`, listening on `addr:port` (killed by
/// the caller; it dies with the namespace too).
fn netserver_in(ns: &str, addr: &str, port: &str) -> std::process::Child {
    Command::new("ip")
        .args([
            "netns", "exec", ns, &NETSERVER, "-D", "-L", addr, "-p", port,
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// `ip` arguments letting namespace `ns` run two subflows and accept the
/// peer's announced addresses.
fn limits(ns: &str) -> Vec<&str> {
    vec![
        "-n",
        ns,
        "mptcp",
        "limits",
        "set",
        "subflows",
        "2",
        "add_addr_accepted",
        "2",
    ]
}

/// Runs `ip ARGS`; false when it fails.
fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .status()
        .is_ok_and(|s| s.success())
}

/// Root, not the fast tier, and namespaces can be made; else a skip.
fn namespaces_allowed() -> bool {
    if common::fast_tier_skips("needs root (network namespaces)") {
        return false;
    }
    if !common::results::is_root() {
        common::skip("needs root (network namespaces)");
        return false;
    }
    true
}

#[test]
fn a_kernel_with_mptcp_off_is_refused_in_one_line() {
    if !namespaces_allowed() || !mptcp_here() {
        return;
    }
    let ns = format!("ngmpoff{}", std::process::id() % 1000);
    let _guard = Namespaces(vec![ns.clone()]);
    assert!(ip(&["netns", "add", &ns]));
    assert!(ip(&["-n", &ns, "link", "set", "lo", "up"]));
    // net.mptcp.enabled is the namespace's own.
    let off = Command::new("ip")
        .args(["netns", "exec", &ns, "sysctl", "-qw", "net.mptcp.enabled=0"])
        .status()
        .is_ok_and(|s| s.success());
    if !off {
        return common::skip("cannot turn MPTCP off in a namespace");
    }
    let out = Command::new("ip")
        .args(["netns", "exec", &ns, &NETPERF, "-H", "127.0.0.1", "-l", "1"])
        .args(["--", "--mptcp"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("this kernel does not open MPTCP sockets"),
        "{stderr}"
    );
    // Our netserver on that kernel: its refusal, also in one line, exit 2.
    let host_end = format!("ngmpoffh{}", std::process::id() % 1000);
    let _link = Link(host_end.clone());
    for step in [
        vec![
            "link", "add", &host_end, "type", "veth", "peer", "name", "ngmpoffn", "netns", &ns,
        ],
        vec!["addr", "add", "198.18.30.1/24", "dev", &host_end],
        vec!["link", "set", &host_end, "up"],
        vec![
            "-n",
            &ns,
            "addr",
            "add",
            "198.18.30.2/24",
            "dev",
            "ngmpoffn",
        ],
        vec!["-n", &ns, "link", "set", "ngmpoffn", "up"],
    ] {
        assert!(ip(&step), "ip {step:?}");
    }
    let port = "12867";
    let mut server = netserver_in(&ns, "198.18.30.2", port);
    let mut refused = None;
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(100));
        let out = Command::new("timeout")
            .args(["30", &NETPERF, "-H", "198.18.30.2", "-p", port, "-l", "1"])
            .args(["-t", "TCP_STREAM", "--", "--mptcp"])
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        // Before netserver listens: connection refused; try again.
        if !stderr.contains("establish control") {
            refused = Some((out.status.code(), stderr));
            break;
        }
    }
    let _ = server.kill();
    let _ = server.wait();
    let (code, stderr) = refused.expect("netserver in the namespace never answered");
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("netserver on 198.18.30.2 cannot open MPTCP sockets"),
        "{stderr}"
    );
}

/// A link in this namespace the test made, deleted when it ends.
struct Link(String);

impl Drop for Link {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["link", "del", &self.0]).status();
    }
}

/// A link's received bytes in namespace `ns`.
fn rx_bytes(ns: &str, dev: &str) -> u64 {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "cat"])
        .arg(format!("/sys/class/net/{dev}/statistics/rx_bytes"))
        .output()
        .unwrap();
    text(&out.stdout).trim().parse().unwrap_or(0)
}

#[test]
fn two_paths_carry_two_subflows_that_both_moved_bytes() {
    if !namespaces_allowed() || !mptcp_here() {
        return;
    }
    let tag = std::process::id() % 1000;
    let (a, b) = (format!("ngmpa{tag}"), format!("ngmpb{tag}"));
    let _guard = Namespaces(vec![a.clone(), b.clone()]);
    let (a1, a2, b1, b2) = ("ngmp1a", "ngmp2a", "ngmp1b", "ngmp2b");
    for step in [
        vec!["netns", "add", &a],
        vec!["netns", "add", &b],
        vec!["-n", &a, "link", "set", "lo", "up"],
        vec!["-n", &b, "link", "set", "lo", "up"],
        vec![
            "link", "add", a1, "netns", &a, "type", "veth", "peer", "name", b1, "netns", &b,
        ],
        vec![
            "link", "add", a2, "netns", &a, "type", "veth", "peer", "name", b2, "netns", &b,
        ],
        vec!["-n", &a, "addr", "add", "198.18.20.1/24", "dev", a1],
        vec!["-n", &a, "addr", "add", "198.18.21.1/24", "dev", a2],
        vec!["-n", &b, "addr", "add", "198.18.20.2/24", "dev", b1],
        vec!["-n", &b, "addr", "add", "198.18.21.2/24", "dev", b2],
        vec!["-n", &a, "link", "set", a1, "up"],
        vec!["-n", &a, "link", "set", a2, "up"],
        vec!["-n", &b, "link", "set", b1, "up"],
        vec!["-n", &b, "link", "set", b2, "up"],
        // The server announces its second address; the client's path
        // manager opens a subflow to it, over the second link.
        limits(&a),
        limits(&b),
        vec![
            "-n",
            &b,
            "mptcp",
            "endpoint",
            "add",
            "198.18.21.2",
            "dev",
            b2,
            "signal",
        ],
    ] {
        if !ip(&step) {
            return common::skip(format!(
                "cannot build the two-path testbed: ip {step:?} failed"
            ));
        }
    }
    let port = "12866";
    let mut server = netserver_in(&b, "198.18.20.2", port);
    let before = (rx_bytes(&b, b1), rx_bytes(&b, b2));
    let mut out = None;
    // The server may take a moment to listen: a few bounded tries.
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(100));
        let run = Command::new("timeout")
            .args([
                "60",
                "ip",
                "netns",
                "exec",
                &a,
                &NETPERF,
                "-H",
                "198.18.20.2",
                "-p",
                port,
            ])
            .args(["-t", "TCP_STREAM", "-l", "3", "--", "--mptcp"])
            .output()
            .unwrap();
        if run.status.success() {
            out = Some(run);
            break;
        }
    }
    let after = (rx_bytes(&b, b1), rx_bytes(&b, b2));
    let _ = server.kill();
    let _ = server.wait();
    let out = out.expect("netperf --mptcp over the two-path testbed never ran");
    let stdout = text(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("MPTCP subflows: "))
        .unwrap_or_else(|| panic!("no MPTCP line: {stdout}"));
    assert!(line.contains("2 here, 2 at netserver"), "{line}");
    let acked: Vec<u64> = line
        .rsplit(": ")
        .next()
        .unwrap()
        .split_whitespace()
        .map(|pair| pair.split('/').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(acked.len(), 2, "{line}");
    assert!(
        acked.iter().all(|&b| b > 100_000),
        "each subflow carried bytes: {line}"
    );
    // The links' own counters agree: each received well over what acks
    // and the handshake alone would make.
    let (one, two) = (after.0 - before.0, after.1 - before.1);
    assert!(
        one > 100_000 && two > 100_000,
        "link bytes: {one} and {two}; {line}"
    );
}
