//! The differential check of netperf's command line against stock netperf
//! 2.7.1: each argument list of the corpus in
//! tests/fixtures/netperf-2.7.1-argv.json (recorded by
//! scripts/record-stock-argv) is run through our netperf against a fake
//! netserver that keeps the test request and closes. Both must accept or
//! both refuse; where both accept, stdout (the banner, or nothing) and the
//! test request must be the same, word for word but for netperf's own data
//! port. With NETPERF_STOCK_DIR the same corpus also runs through stock
//! netperf live, which must agree with the fixture.

mod common;
use common::*;
use netperf_ng::wire::kind;
use netperf_ng::wire::message::{Message, MESSAGE_LEN, MESSAGE_WORDS};
use netperf_ng::wire::omni::OmniRequest;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const FIXTURE: &str = include_str!("fixtures/netperf-2.7.1-argv.json");

/// Runs in parallel, each against its own fake netserver.
const WORKERS: usize = 4;

/// Longer than any run takes: a run that stops before its request takes
/// milliseconds; the recorder gave stock 20 s.
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// The word of an omni request that holds netperf's own data port, which
/// the kernel picks (word 25 of the data, after the two header words).
const NETPERF_PORT_WORD: usize = 27;

/// What one run of a netperf did with an argument list.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    /// The exit status when no test request reached the netserver
    /// (None: a request came, or the run was killed).
    exit: Option<i32>,
    timed_out: bool,
    stdout: String,
    stderr: String,
    request: Option<Vec<u32>>,
}

/// One case of the fixture: the argument list and stock's outcome.
struct Case {
    args: Vec<String>,
    stock: Outcome,
}

fn words_from_hex(hex: &str) -> u32 {
    u32::from_str_radix(hex, 16).expect("hex word")
}

/// The cases of the fixture, with stock's requests rebuilt from their
/// baselines and differing words.
fn cases() -> Vec<Case> {
    let doc: Value = serde_json::from_str(FIXTURE).expect("fixture is JSON");
    let stdouts: Vec<String> = doc["stdouts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    let baseline = |name: &str| -> Vec<u32> {
        doc["baselines"][name]
            .as_array()
            .unwrap_or_else(|| panic!("no baseline for {name}"))
            .iter()
            .map(|w| words_from_hex(w.as_str().unwrap()))
            .collect()
    };
    let requests: Vec<Vec<u32>> = doc["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let mut words = match r["base"].as_str() {
                Some(name) => baseline(name),
                None => vec![0; MESSAGE_WORDS],
            };
            for (index, hex) in r["words"].as_object().unwrap() {
                words[index.parse::<usize>().unwrap()] = words_from_hex(hex.as_str().unwrap());
            }
            words
        })
        .collect();
    doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let args = c["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect();
            let exit = &c["exit"];
            let timed_out = exit.as_str() == Some("timeout");
            let stock = Outcome {
                exit: exit.as_i64().map(|e| e as i32),
                timed_out,
                stdout: stdouts[c["stdout"].as_u64().unwrap() as usize].clone(),
                stderr: String::new(),
                request: c["request"]
                    .as_u64()
                    .map(|i| requests[i as usize].clone()),
            };
            Case { args, stock }
        })
        .collect()
}

/// A netserver that only listens: it answers CPU_CALIBRATE, reads past a
/// PASSPHRASE, keeps the first other message and closes the connection,
/// so netperf stops without moving data.
struct FakeNetserver {
    port: u16,
    last: Arc<Mutex<Option<Vec<u32>>>>,
}

impl FakeNetserver {
    fn start() -> FakeNetserver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().unwrap().port();
        let last = Arc::new(Mutex::new(None));
        let kept = Arc::clone(&last);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let request = read_request(&mut conn);
                // Kept before the close that makes netperf exit.
                *kept.lock().unwrap() = request;
                drop(conn);
            }
        });
        FakeNetserver { port, last }
    }

    fn take(&self) -> Option<Vec<u32>> {
        self.last.lock().unwrap().take()
    }
}

fn read_request(conn: &mut TcpStream) -> Option<Vec<u32>> {
    conn.set_read_timeout(Some(RUN_LIMIT)).ok()?;
    loop {
        let mut bytes = [0u8; MESSAGE_LEN];
        conn.read_exact(&mut bytes).ok()?;
        let message = Message::from_bytes(bytes);
        match message.kind() {
            kind::PASSPHRASE => continue,
            kind::CPU_CALIBRATE => {
                let mut answer = [0u8; MESSAGE_LEN];
                answer[..4].copy_from_slice(&bytes[..4]);
                conn.write_all(&answer).ok()?;
            }
            _ => return Some((0..MESSAGE_WORDS).map(|i| message.word(i)).collect()),
        }
    }
}

/// Runs `program` with the fixture's prefix and `args` against `server`.
fn run(program: &str, server: &FakeNetserver, args: &[String]) -> Outcome {
    let port = server.port.to_string();
    let mut child = Command::new(program)
        .arg0_netperf()
        .args(["-H", "127.0.0.1", "-p", &port])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn netperf");
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
    let deadline = Instant::now() + RUN_LIMIT;
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            timed_out = true;
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let request = server.take();
    let code = status.map(|s| {
        use std::os::unix::process::ExitStatusExt;
        s.code().unwrap_or_else(|| -s.signal().unwrap_or(0))
    });
    Outcome {
        exit: if request.is_some() { None } else { code },
        timed_out,
        stdout: text(&out_reader.join().unwrap()),
        stderr: text(&err_reader.join().unwrap()),
        request,
    }
}

/// netperf's messages name the program as argv[0]; the fixture ran stock
/// as `netperf`, so ours runs under that name too.
trait Arg0 {
    fn arg0_netperf(&mut self) -> &mut Self;
}

impl Arg0 for Command {
    fn arg0_netperf(&mut self) -> &mut Self {
        use std::os::unix::process::CommandExt;
        self.arg0("netperf")
    }
}

/// Every case through `program`, in parallel; outcomes in case order.
fn run_all(program: &str, cases: &[Case]) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let results = Mutex::new(vec![None; cases.len()]);
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| {
                let server = FakeNetserver::start();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { break };
                    let outcome = run(program, &server, &case.args);
                    results.lock().unwrap()[i] = Some(outcome);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|o| o.expect("every case ran"))
        .collect()
}

/// The fields of two omni requests that differ, by name, for the report.
fn omni_differences(stock: &[u32], ours: &[u32]) -> String {
    let decode = |words: &[u32]| {
        let mut m = Message::new(0, 0);
        for (i, w) in words.iter().enumerate() {
            m.set_word(i, *w);
        }
        format!("{:#?}", OmniRequest::decode(&m))
    };
    let (s, o) = (decode(stock), decode(ours));
    s.lines()
        .zip(o.lines())
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("stock{} ours{}", a.trim(), b.trim()))
        .collect::<Vec<_>>()
        .join("; ")
}

/// How `ours` differs from `stock` for one case, if it does.
fn divergence(stock: &Outcome, ours: &Outcome) -> Option<String> {
    if ours.timed_out {
        return Some("ours did not end".into());
    }
    if ours.stderr.contains("panicked") {
        return Some(format!("ours panicked: {}", ours.stderr));
    }
    if stock.timed_out {
        // Stock never got to its request (it fills a ring without end, or
        // allocates gigabytes): ours must only end, which it did.
        return None;
    }
    match (&stock.request, &ours.request) {
        (Some(_), None) => {
            return Some(format!(
                "stock ran the test, ours stopped (exit {:?}): {}",
                ours.exit,
                ours.stderr.trim()
            ))
        }
        (None, Some(_)) => {
            return Some(format!(
                "stock stopped (exit {:?}), ours ran the test",
                stock.exit
            ))
        }
        (None, None) => {
            let stock_ok = stock.exit == Some(0);
            let ours_ok = ours.exit == Some(0);
            return (stock_ok != ours_ok).then(|| {
                format!(
                    "both stopped, stock with {:?}, ours with {:?}: {}",
                    stock.exit,
                    ours.exit,
                    ours.stderr.trim()
                )
            });
        }
        (Some(s), Some(o)) => {
            let differ: Vec<usize> = (0..MESSAGE_WORDS)
                .filter(|&i| !(s[0] == kind::DO_OMNI && i == NETPERF_PORT_WORD))
                .filter(|&i| s[i] != o[i])
                .collect();
            if !differ.is_empty() {
                let named = if s[0] == kind::DO_OMNI && o[0] == kind::DO_OMNI {
                    omni_differences(s, o)
                } else {
                    String::new()
                };
                return Some(format!("requests differ in words {differ:?}: {named}"));
            }
        }
    }
    (stock.stdout != ours.stdout).then(|| {
        format!(
            "stdout differs:\n  stock: {:?}\n  ours:  {:?}",
            stock.stdout, ours.stdout
        )
    })
}

/// Runs every case through `program` and lists each divergence from `expected`.
fn divergences(program: &str, cases: &[Case], expected: &[Outcome]) -> Vec<String> {
    let outcomes = run_all(program, cases);
    cases
        .iter()
        .zip(expected)
        .zip(&outcomes)
        .filter_map(|((case, stock), ours)| {
            divergence(stock, ours).map(|why| format!("{:?}: {why}", case.args))
        })
        .collect()
}

fn report(what: &str, found: &[String], total: usize) {
    assert!(
        found.is_empty(),
        "{what}: {} of {total} argument lists diverge:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn the_corpus_is_large_and_covers_every_option() {
    let cases = cases();
    assert!(cases.len() >= 2000, "{} cases", cases.len());
    let accepted = cases.iter().filter(|c| c.stock.request.is_some()).count();
    let refused = cases.iter().filter(|c| c.stock.exit.is_some()).count();
    assert!(accepted > 1000 && refused > 50, "{accepted} {refused}");
    // every letter of both sections appears with a value
    let letters = |section_test: bool| -> std::collections::BTreeSet<char> {
        cases
            .iter()
            .flat_map(|c| {
                let split = c.args.iter().position(|a| a == "--");
                c.args
                    .iter()
                    .enumerate()
                    .filter(move |(i, _)| split.is_some_and(|s| *i > s) == section_test)
                    .filter_map(|(_, a)| a.strip_prefix('-').and_then(|l| l.chars().next()))
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    for letter in "aAbBcCdDfFiIjlLnNoOPrsStTvwWyYZ46".chars() {
        assert!(letters(false).contains(&letter), "global -{letter}");
    }
    for letter in "abBcCdDeFgGHiIjkKlLmMnNoOpPqrRsStTuUVW46".chars() {
        assert!(letters(true).contains(&letter), "test -{letter}");
    }
}

#[test]
fn ours_reads_every_argument_list_as_stock_did() {
    let cases = cases();
    let expected: Vec<Outcome> = cases.iter().map(|c| c.stock.clone()).collect();
    let found = divergences(&NETPERF, &cases, &expected);
    report("ours against the recorded stock", &found, cases.len());
}

#[test]
fn stock_live_still_reads_the_corpus_as_recorded() {
    let Some(dir) = stock_dir() else { return };
    let cases = cases();
    let expected: Vec<Outcome> = cases.iter().map(|c| c.stock.clone()).collect();
    let program = format!("{dir}/netperf");
    // Where stock never sent its request in the recorder's 20 s, it would
    // not here either: those cases only bound ours.
    let (cases, expected): (Vec<Case>, Vec<Outcome>) = cases
        .into_iter()
        .zip(expected)
        .filter(|(_, stock)| !stock.timed_out)
        .unzip();
    let found = divergences(&program, &cases, &expected);
    report("stock live against its recording", &found, cases.len());
}
