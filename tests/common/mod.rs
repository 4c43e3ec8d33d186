//! Shared test harness: start our netserver on a free loopback port, run
//! netperf with a hard time limit, and clean up even when a test fails.
#![allow(dead_code)]

pub mod bins;
pub mod browser;
pub mod control;
pub mod harness;
pub mod http;
pub mod install;
pub mod podman;
pub mod prometheus;
pub mod ramp;
pub mod results;
pub mod saved;
pub mod skip;
pub mod stock;
pub mod testbed;

// Not every test binary uses all three.
#[allow(unused_imports)]
pub use skip::{fast_tier, fast_tier_skips, skip};

use std::io::Read;
use std::net::TcpListener;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

#[allow(unused_imports)]
pub use bins::{Bin, NETAGG, NETPERF, NETSERVER};

/// A netserver child process, killed when dropped.
pub struct Server {
    child: Child,
    pub port: u16,
    pub host: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port(host: &str) -> u16 {
    let l = TcpListener::bind((host, 0)).expect("bind an ephemeral port");
    l.local_addr().unwrap().port()
}

/// Whether process `pid` holds a TCP socket listening on `port`: the
/// listening sockets' inodes from /proc/net/tcp{,6} against the process's
/// descriptors.
fn listens_on(pid: u32, port: u16) -> bool {
    const LISTEN: &str = "0A";
    let mut inodes = std::collections::HashSet::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let local_port = fields
                .get(1)
                .and_then(|a| a.rsplit(':').next())
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            if local_port == Some(port) && fields.get(3) == Some(&LISTEN) {
                if let Some(inode) = fields.get(9) {
                    inodes.insert(format!("socket:[{inode}]"));
                }
            }
        }
    }
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path())
            .is_ok_and(|target| inodes.contains(target.to_string_lossy().as_ref()))
    })
}

impl Server {
    /// Start `netserver -D -L host -p <free port>` plus `extra` arguments.
    pub fn start_with(host: &str, extra: &[&str]) -> Server {
        Server::start_with_env(host, extra, &[])
    }

    /// As `start_with`, with extra environment variables (test modes).
    pub fn start_with_env(host: &str, extra: &[&str], env: &[(&str, &str)]) -> Server {
        Server::start_logging(host, extra, env, None)
    }

    /// As `start_with_env`, with netserver's stderr (its log) in `log`.
    pub fn start_logging(
        host: &str,
        extra: &[&str],
        env: &[(&str, &str)],
        log: Option<&std::path::Path>,
    ) -> Server {
        for _ in 0..20 {
            let port = free_port(host);
            let stderr = match log {
                Some(path) => Stdio::from(std::fs::File::create(path).expect("create the log")),
                None => Stdio::null(),
            };
            // Not listening: lost the port race; try another.
            if let Some(server) = Server::spawn_listening(host, port, extra, env, stderr) {
                return server;
            }
        }
        panic!("could not start netserver on {host}");
    }

    /// Spawn `netserver -D -L host -p port` plus `extra` and wait up to 5 s
    /// for it to listen there; None (and the child gone) if it does not.
    fn spawn_listening(
        host: &str,
        port: u16,
        extra: &[&str],
        env: &[(&str, &str)],
        stderr: Stdio,
    ) -> Option<Server> {
        let mut child = Command::new(NETSERVER)
            .args(["-D", "-L", host, "-p", &port.to_string()])
            .args(extra)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("spawn netserver");
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return None;
            }
            // Not a connect probe: a connect can reach another process
            // that took the port meanwhile (a parallel test's data socket),
            // while this child failed to bind it.
            if listens_on(child.id(), port) {
                return Some(Server {
                    child,
                    port,
                    host: host.to_string(),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }

    pub fn start(host: &str) -> Server {
        Server::start_with(host, &[])
    }

    /// Start `netserver -D -L host -p port` plus `extra` on a given port
    /// (a second load generator on another loopback address, same port);
    /// None if it does not listen there within 5 s.
    pub fn start_on(host: &str, port: u16, extra: &[&str]) -> Option<Server> {
        Server::spawn_listening(host, port, extra, &[], Stdio::null())
    }

    /// The netserver process id (for /proc/<pid>/status checks).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kill the server now (to test a netserver that vanishes).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The child's output once it exits; killed (and the test failed) past `limit`.
pub fn wait_bounded(child: std::process::Child, limit: Duration) -> std::process::Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.expect("wait"),
        Err(_) => {
            // SAFETY: kill takes a pid and a signal number.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("the program did not end within {limit:?}");
        }
    }
}

/// Run a program with `args`, killing it after `limit`.
pub fn run_with_limit(program: &str, args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let s = child.wait().expect("wait after kill");
            panic!("{program} {args:?} did not finish within {limit:?} (killed: {s})");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}

/// Run our netperf against `server` with extra arguments.
pub fn netperf(server: &Server, args: &[&str]) -> Output {
    let port = server.port.to_string();
    let mut all = vec!["-H", server.host.as_str(), "-p", port.as_str()];
    all.extend_from_slice(args);
    run_with_limit(&NETPERF, &all, Duration::from_secs(60))
}

/// Run our netperf against `server`, require success, return its stdout.
pub fn run_ok(server: &Server, args: &[&str]) -> String {
    let out = netperf(server, args);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{args:?} failed: {stdout}{}",
        text(&out.stderr)
    );
    stdout
}

/// TCP_STREAM for 2 s with `-D 0.5 -- --tcp-info` against `server`: its
/// output and how many `Interim TCP:` lines (our end's) it has. Without
/// `--tcp-info` no TCP line is printed, not even at -v 2 (netperf's
/// bloat.sh reads every line with "Interim" in it), checked on the way.
pub fn tcp_interims_verbose(server: &Server) -> (String, usize) {
    let asked: Vec<&str> = "-t TCP_STREAM -l 2 -D 0.5 -- --tcp-info"
        .split(' ')
        .collect();
    let out = run_ok(server, &asked);
    let ours = lines_starting(&out, "Interim TCP: rtt ");
    let plain = run_ok(
        server,
        &["-t", "TCP_STREAM", "-l", "1", "-D", "0.5", "-v", "2"],
    );
    assert!(!plain.contains("Interim TCP"), "{plain}");
    (out, ours)
}

/// The `NAME=value` lines of -k output, by name (the last of a repeated
/// name).
pub fn keyval(output: &str) -> std::collections::BTreeMap<String, String> {
    output
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Every line of `output` with each number masked as `N` and its blanks
/// collapsed: the shape two netperfs' outputs share when only their
/// figures and the widths those take differ.
pub fn shape(output: &str) -> Vec<String> {
    output
        .lines()
        .map(|l| {
            let mut masked = String::new();
            let mut in_number = false;
            for c in l.chars() {
                let digit = c.is_ascii_digit() || (in_number && c == '.');
                if digit && !in_number {
                    masked.push('N');
                } else if !digit {
                    masked.push(c);
                }
                in_number = digit;
            }
            masked.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .collect()
}

/// How many lines of `text` begin with `prefix`.
pub fn lines_starting(text: &str, prefix: &str) -> usize {
    text.lines().filter(|l| l.starts_with(prefix)).count()
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The lines of a program's stderr that say an option is an old spelling.
pub fn deprecation_lines(out: &Output) -> Vec<String> {
    text(&out.stderr)
        .lines()
        .filter(|l| l.contains("deprecated"))
        .map(String::from)
        .collect()
}

/// A loopback port nobody listens on (bound, then let go).
pub fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// The numeric fields of a whitespace-separated line.
pub fn numbers(line: &str) -> Vec<f64> {
    line.split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// The result of a `-P 0` netperf run: the last number of its first line
/// (throughput, or transactions per second).
pub fn p0_result(stdout: &str) -> f64 {
    numbers(first_line(stdout))
        .last()
        .copied()
        .unwrap_or(f64::NAN)
}

/// The first non-empty line of netperf's output: with -P 0, the result row.
pub fn first_line(stdout: &str) -> &str {
    stdout
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
}

/// Whether IPv6 loopback works here.
pub fn have_ipv6() -> bool {
    TcpListener::bind("[::1]:0").is_ok()
}

/// The directory of a stock netperf 2.7.1 build (its `netperf` and
/// `netserver`), named by NETPERF_STOCK_DIR; this project never builds or
/// ships one. Where there is none the running test skips (the caller
/// returns).
pub fn stock_dir() -> Option<String> {
    match std::env::var("NETPERF_STOCK_DIR") {
        Ok(d) if std::path::Path::new(&d).join("netperf").exists() => Some(d),
        _ => {
            skip("set NETPERF_STOCK_DIR to a directory with a stock netperf 2.7.1 build");
            None
        }
    }
}

/// Every classic test with short arguments, and the index of its result in
/// the first `-P 0` line. Connection tests use counts: a timed one waits
/// netserver's 4-second pad, as with stock netperf.
pub const CLASSIC_TESTS: &[(&str, &[&str], usize)] = &[
    ("TCP_STREAM", &["-l", "1"], 4),
    ("TCP_MAERTS", &["-l", "1"], 4),
    ("TCP_SENDFILE", &["-l", "1"], 4),
    ("UDP_STREAM", &["-l", "1", "--", "-m", "1024"], 5),
    ("TCP_RR", &["-l", "1"], 5),
    ("UDP_RR", &["-l", "1"], 5),
    ("TCP_CRR", &["-l", "-300"], 5),
    ("TCP_CC", &["-l", "-300"], 5),
];

/// `ip ARGS` (iproute2) with its output discarded: whether it succeeded.
/// The namespace tests build their hosts with it.
pub fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The `-J` document after netperf's banner line.
pub fn json_of(stdout: &str) -> serde_json::Value {
    let body = stdout.split_once('\n').map_or("", |(_, rest)| rest);
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// A `-J` document of a TCP test with -D and `REMOTE_TCP_RTT` selected whose
/// netserver sent no TCP_INFO (a stock one, or one before the flag): our
/// end's figures in every interim, the netserver's nowhere.
pub fn assert_tcp_info_ours_alone(doc: &serde_json::Value) {
    let interims = doc["interim"].as_array().unwrap();
    assert!(!interims.is_empty(), "{doc}");
    let ours_alone =
        |i: &serde_json::Value| i.get("tcp").is_some() && i.get("remote_tcp").is_none();
    assert!(interims.iter().all(ours_alone), "{doc}");
    assert!(doc["results"]["REMOTE_TCP_RTT"]["value"].is_null(), "{doc}");
}
