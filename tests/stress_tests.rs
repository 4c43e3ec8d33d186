//! Many short runs of every classic test at once, on a machine this test
//! keeps busy itself (a spinning thread per CPU): our netperf against our
//! netserver, and with NETPERF_STOCK_DIR a stock netperf against ours too.
//! Every run must end within its length (plus netserver's pad, for the
//! connection tests that wait it out) and 5 s, exit 0 and report no zero. A
//! run that overruns is killed and named with its command line. A stock
//! netperf's failure against our netserver is excused only when the same
//! test fails the same way against a stock netserver under the same load
//! (stock's own TCP_SENDFILE client does, now and then). The MAERTS and
//! STREAM byte counts of both ends agree, as flent compares them.

mod common;
use common::*;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Every run's -l.
const LENGTH: u64 = 1;
/// What a run may take beyond its length.
const GRACE: Duration = Duration::from_secs(5);
/// netserver's pad (PAD_TIME): a timed connection test ends by netserver's
/// clock, 4 s after its netperf stops, with a stock netserver as with ours.
const PAD: u64 = 4;
/// netperf processes running at once.
const AT_ONCE: usize = 16;

/// The eight classic tests, each with what its -P 0 output is checked for.
const TESTS: [&str; 8] = [
    "TCP_STREAM",
    "TCP_MAERTS",
    "TCP_SENDFILE",
    "UDP_STREAM",
    "TCP_RR",
    "UDP_RR",
    "TCP_CRR",
    "TCP_CC",
];

/// One spinning thread per CPU until dropped: the machine is busy for as
/// long as the runs go, whoever else uses it.
struct Busy {
    stop: &'static AtomicBool,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Busy {
    fn start() -> Busy {
        let stop: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let threads = (0..cpus)
            .map(|_| {
                std::thread::spawn(move || {
                    // Bounded even if the guard were never dropped.
                    let give_up = Instant::now() + Duration::from_secs(600);
                    while !stop.load(Ordering::Relaxed) && Instant::now() < give_up {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        Busy { stop, threads }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// One run: which pairing, which program, which netserver port, which test.
#[derive(Clone)]
struct Run {
    pairing: &'static str,
    netperf: String,
    port: u16,
    test: &'static str,
}

impl Run {
    fn args(&self) -> Vec<String> {
        let (port, length) = (self.port.to_string(), LENGTH.to_string());
        [
            "-H",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            self.test,
            "-l",
            &length,
            "-P",
            "0",
        ]
        .map(String::from)
        .to_vec()
    }

    fn command_line(&self) -> String {
        format!("{} {}", self.netperf, self.args().join(" "))
    }

    /// How long the run may take: its length, netserver's pad when the
    /// test waits it out, and the grace.
    fn bound(&self) -> Duration {
        let pad = if matches!(self.test, "TCP_CRR" | "TCP_CC") {
            PAD
        } else {
            0
        };
        Duration::from_secs(LENGTH + pad) + GRACE
    }

    /// Run it: None if it ended in time, exited 0 and reported no zero;
    /// else what went wrong (`hung` when it was killed at its bound).
    fn check(&self) -> Option<Failure> {
        let started = Instant::now();
        let mut child = Command::new(&self.netperf)
            .args(self.args())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn netperf");
        let deadline = started + self.bound();
        let mut hung = false;
        while child.try_wait().expect("wait").is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                hung = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().expect("collect netperf's output");
        let took = started.elapsed();
        let stdout = text(&out.stdout);
        let zero = result_rows(&stdout).any(|rate| rate <= 0.0);
        let kind = match (hung, out.status.success(), zero) {
            (true, _, _) => "hung",
            (false, false, _) => "failed",
            (false, true, true) => "zero",
            (false, true, false) => return None,
        };
        Some(Failure {
            kind,
            test: self.test,
            what: format!(
                "{} ({}) {kind} after {:.1} s: {}\n{stdout}{}",
                self.pairing,
                self.command_line(),
                took.as_secs_f64(),
                out.status,
                text(&out.stderr)
            ),
        })
    }
}

/// What went wrong with a run: its kind (hung, failed, zero), its test and
/// the whole story.
struct Failure {
    kind: &'static str,
    test: &'static str,
    what: String,
}

/// The rate of each result row of a -P 0 output (a row of four or more
/// numbers: the last is the rate; RR's socket-size row has two).
fn result_rows(stdout: &str) -> impl Iterator<Item = f64> + '_ {
    stdout
        .lines()
        .map(numbers)
        .filter(|n| n.len() >= 4)
        .filter_map(|n| n.last().copied())
}

/// Run every job, AT_ONCE at a time: the failures.
fn run_all(jobs: Vec<Run>) -> Vec<Failure> {
    let queue = Mutex::new(jobs);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..AT_ONCE {
            s.spawn(|| loop {
                let Some(run) = queue.lock().unwrap().pop() else {
                    return;
                };
                if let Some(f) = run.check() {
                    failures.lock().unwrap().push(f);
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

/// `rounds` runs of every classic test through `netperf` to `port`,
/// interleaved so that every test runs beside every other.
fn jobs(pairing: &'static str, netperf: &str, port: u16, rounds: usize) -> Vec<Run> {
    (0..rounds)
        .flat_map(|_| TESTS)
        .map(|test| Run {
            pairing,
            netperf: netperf.to_string(),
            port,
            test,
        })
        .collect()
}

#[test]
fn every_classic_test_ends_in_time_with_a_result_on_a_busy_machine() {
    if fast_tier_skips("slow (60 s)") {
        return;
    }
    let server = Server::start("127.0.0.1");
    let stock = std::env::var("NETPERF_STOCK_DIR")
        .ok()
        .filter(|d| std::path::Path::new(d).join("netperf").exists());
    if stock.is_none() {
        skip("stock netperf against our netserver: set NETPERF_STOCK_DIR to a stock netperf 2.7.1 build");
    }
    // A few hundred runs (256): ours alone gets them all; with stock, half
    // each.
    let rounds = if stock.is_some() { 16 } else { 32 };
    let mut all = jobs("ours to ours", &NETPERF, server.port, rounds);
    if let Some(dir) = &stock {
        let stock_netperf = format!("{dir}/netperf");
        all.extend(jobs("stock to ours", &stock_netperf, server.port, rounds));
    }
    let runs = all.len();
    let busy = Busy::start();
    let failures = run_all(all);
    // A stock netperf's failure is its own when it fails the same way
    // against its own netserver, under the same load.
    let (stock_failed, mut unexcused): (Vec<Failure>, Vec<Failure>) = failures
        .into_iter()
        .partition(|f| f.what.starts_with("stock to ours"));
    if let Some(dir) = &stock {
        let stock_server = common::stock::start_stock(dir);
        let mut tests: Vec<&str> = stock_failed.iter().map(|f| f.test).collect();
        tests.sort_unstable();
        tests.dedup();
        let own = tests
            .iter()
            .flat_map(|&test| {
                jobs(
                    "stock to stock",
                    &format!("{dir}/netperf"),
                    stock_server.port,
                    rounds,
                )
                .into_iter()
                .filter(move |r| r.test == test)
            })
            .collect();
        let own_failures = run_all(own);
        let excused = |f: &Failure| {
            own_failures
                .iter()
                .any(|o| o.test == f.test && o.kind == f.kind)
        };
        for f in stock_failed {
            if excused(&f) {
                eprintln!(
                    "stock netperf's own failure, as against its own netserver:\n{}",
                    f.what
                );
            } else {
                unexcused.push(f);
            }
        }
    }
    drop(busy);
    let report: Vec<&str> = unexcused.iter().map(|f| f.what.as_str()).collect();
    assert!(
        report.is_empty(),
        "{} of {runs} runs went wrong:\n{}",
        report.len(),
        report.join("\n")
    );
}

/// The byte counts of TCP_MAERTS (LOCAL_BYTES_RECVD, REMOTE_BYTES_SENT) and
/// of TCP_STREAM (LOCAL_BYTES_SENT, REMOTE_BYTES_RECVD) agree to the byte,
/// on a busy machine: the receiving end reads to the sender's end of file
/// and the sender counts every byte that left, a partial send cut by the
/// clock included.
#[test]
fn stream_byte_counts_of_both_ends_agree() {
    if fast_tier_skips("slow (8 s)") {
        return;
    }
    let server = Server::start("127.0.0.1");
    let _busy = Busy::start();
    let cases = [
        ("TCP_MAERTS", "LOCAL_BYTES_RECVD", "REMOTE_BYTES_SENT"),
        ("TCP_STREAM", "LOCAL_BYTES_SENT", "REMOTE_BYTES_RECVD"),
    ];
    for (test, ours, theirs) in cases {
        for _ in 0..3 {
            let selectors = format!("{ours},{theirs}");
            let out = run_ok(
                &server,
                &["-t", test, "-l", "1", "-P", "0", "--", "-k", &selectors],
            );
            let value = |name: &str| -> u64 {
                out.lines()
                    .find_map(|l| l.strip_prefix(&format!("{name}=")))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or_else(|| panic!("{test}: no {name} in {out}"))
            };
            assert!(value(ours) > 0, "{test}: {out}");
            assert_eq!(value(ours), value(theirs), "{test}: {out}");
        }
    }
}
