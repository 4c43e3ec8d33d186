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
#[path = "argv_differential/legacy.rs"]
mod legacy;
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
use std::time::Duration;

const FIXTURE: &str = include_str!("fixtures/netperf-2.7.1-argv.json");

/// Runs in parallel, each against its own fake netserver.
const WORKERS: usize = 8;

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
                request: c["request"].as_u64().map(|i| requests[i as usize].clone()),
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

/// Runs `program` with the fixture's prefix and `args` against `server`
/// (the test fails past [`RUN_LIMIT`]: no run may hang).
fn run(program: &str, server: &FakeNetserver, args: &[String]) -> Outcome {
    let port = server.port.to_string();
    let child = Command::new(program)
        .arg0_netperf()
        .args(["-H", "127.0.0.1", "-p", &port])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn netperf");
    let out = wait_bounded(child, RUN_LIMIT);
    let request = server.take();
    let code = {
        use std::os::unix::process::ExitStatusExt;
        out.status
            .code()
            .unwrap_or_else(|| -out.status.signal().unwrap_or(0))
    };
    Outcome {
        exit: if request.is_some() { None } else { Some(code) },
        timed_out: false,
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
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
    let (s, o) = (
        format!("{:#?}", OmniRequest::decode(&message(stock))),
        format!("{:#?}", OmniRequest::decode(&message(ours))),
    );
    s.lines()
        .zip(o.lines())
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("stock{} ours{}", a.trim(), b.trim()))
        .collect::<Vec<_>>()
        .join("; ")
}

fn message(words: &[u32]) -> Message {
    let mut m = Message::new(0, 0);
    for (i, w) in words.iter().enumerate() {
        m.set_word(i, *w);
    }
    m
}

/// The words of an omni request that hold the two data addresses: with
/// `-H addr/bits` or `-L addr/bits` stock netperf picks one at random.
const ADDRESS_WORDS: std::ops::Range<usize> = 30..38;

/// One way ours differs from stock for one argument list.
#[derive(Debug, Clone, PartialEq)]
enum Divergence {
    /// Ours did not end, or panicked: never tolerated.
    Broken(String),
    /// Stock sent its test request, ours stopped before (exit, stderr).
    OursStopped(Option<i32>, String),
    /// Stock stopped before its request (exit), ours sent one.
    StockStopped(Option<i32>),
    /// Both stopped, one with 0 and the other not.
    Exits(Option<i32>, Option<i32>, String),
    /// The requests differ in these words (named fields for the report).
    Words(Vec<usize>, String),
    /// Stock's legacy request (TCP_CC, TCP_SENDFILE, TCP_MSS) and our omni
    /// one ask for a different test in these fields.
    Legacy(Vec<String>),
    /// stdout differs (stock's, ours).
    Stdout(String, String),
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Divergence::Broken(why) => write!(f, "{why}"),
            Divergence::OursStopped(exit, stderr) => write!(
                f,
                "stock ran the test, ours stopped (exit {exit:?}): {}",
                stderr.trim()
            ),
            Divergence::StockStopped(exit) => {
                write!(f, "stock stopped (exit {exit:?}), ours ran the test")
            }
            Divergence::Exits(stock, ours, stderr) => write!(
                f,
                "both stopped, stock with {stock:?}, ours with {ours:?}: {}",
                stderr.trim()
            ),
            Divergence::Words(words, named) => {
                write!(f, "requests differ in words {words:?}: {named}")
            }
            Divergence::Legacy(fields) => write!(
                f,
                "stock's legacy request and our omni one differ in {}",
                fields.join(", ")
            ),
            Divergence::Stdout(stock, ours) => {
                write!(f, "stdout differs:\n  stock: {stock:?}\n  ours:  {ours:?}")
            }
        }
    }
}

/// How `ours` differs from `stock` for one case: every way, so that a
/// known difference of one kind hides nothing of another.
/// `random_address`: the arguments ask for a random data address.
fn divergence(stock: &Outcome, ours: &Outcome, random_address: bool) -> Vec<Divergence> {
    if ours.timed_out {
        return vec![Divergence::Broken("ours did not end".into())];
    }
    if ours.stderr.contains("panicked") {
        return vec![Divergence::Broken(format!(
            "ours panicked: {}",
            ours.stderr
        ))];
    }
    if stock.timed_out || stock.exit.is_some_and(|code| code < 0) {
        // Stock never got to its request (it fills a ring without end, or
        // allocates gigabytes) or died of a signal (an alignment of 0
        // crashes it, a negative ring width aborts it): ours must only
        // end, which it did.
        return vec![];
    }
    let mut found = vec![];
    match (&stock.request, &ours.request) {
        (Some(_), None) => found.push(Divergence::OursStopped(ours.exit, ours.stderr.clone())),
        (None, Some(_)) => found.push(Divergence::StockStopped(stock.exit)),
        (None, None) => {
            if (stock.exit == Some(0)) != (ours.exit == Some(0)) {
                found.push(Divergence::Exits(
                    stock.exit,
                    ours.exit,
                    ours.stderr.clone(),
                ));
            }
        }
        (Some(s), Some(o)) if legacy::is_legacy(s[0]) && o[0] == kind::DO_OMNI => {
            let fields = legacy::differences(s, o);
            if !fields.is_empty() {
                found.push(Divergence::Legacy(fields));
            }
        }
        (Some(s), Some(o)) => {
            let differ: Vec<usize> = (0..MESSAGE_WORDS)
                .filter(|&i| !(s[0] == kind::DO_OMNI && i == NETPERF_PORT_WORD))
                .filter(|&i| !(random_address && ADDRESS_WORDS.contains(&i)))
                .filter(|&i| s[i] != o[i])
                .collect();
            if !differ.is_empty() {
                let named = if s[0] == kind::DO_OMNI && o[0] == kind::DO_OMNI {
                    omni_differences(s, o)
                } else {
                    String::new()
                };
                found.push(Divergence::Words(differ, named));
            }
        }
    }
    // Where a side stopped before its request, what it printed is part of
    // that divergence (a usage, an error): stdout is compared where both ran.
    let both_ran = stock.request.is_some() && ours.request.is_some();
    if both_ran && stock.stdout != ours.stdout {
        found.push(Divergence::Stdout(
            stock.stdout.clone(),
            ours.stdout.clone(),
        ));
    }
    found
}

/// Runs every case through `program` and lists each divergence from
/// `expected` that no entry of `known` tolerates (those are printed), and
/// each entry that tolerated none: a stale entry hides nothing but must go.
fn divergences(
    program: &str,
    cases: &[Case],
    expected: &[Outcome],
    known: &[Known],
) -> Vec<String> {
    let outcomes = run_all(program, cases);
    let mut used = vec![false; known.len()];
    let mut found = vec![];
    for ((case, stock), ours) in cases.iter().zip(expected).zip(&outcomes) {
        let random_address = case.args.iter().any(|a| a.contains('/'));
        for why in divergence(stock, ours, random_address) {
            let line = format!("{:?}: {why}", case.args);
            let tolerated = known
                .iter()
                .position(|k| (k.args)(&case.args) && k.tolerates.covers(&why));
            match tolerated {
                Some(i) => {
                    used[i] = true;
                    eprintln!("known difference ({}): {line}", known[i].why);
                }
                None => found.push(line),
            }
        }
    }
    for (entry, used) in known.iter().zip(used) {
        if !used {
            found.push(format!(
                "stale known difference, it matched nothing: {}",
                entry.why
            ));
        }
    }
    found
}

/// Whether `args` hold `word` (as one argument) in the section after `--`
/// (`test`) or before it.
fn has(args: &[String], test: bool, word: &str) -> bool {
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let section = if test {
        &args[split.min(args.len())..]
    } else {
        &args[..split]
    };
    section.iter().any(|a| a == word)
}

/// The value after `option` in the test section, if given.
fn test_value<'a>(args: &'a [String], option: &str) -> Option<&'a str> {
    let split = args.iter().position(|w| w == "--").unwrap_or(args.len());
    args[split..]
        .windows(2)
        .find(|w| w[0] == option)
        .map(|w| w[1].as_str())
}

/// Whether an argument list is one a known difference covers.
type Matcher = fn(&[String]) -> bool;

/// The one kind of divergence a known difference tolerates.
enum Tolerated {
    /// stdout only (the requests, or both refusals, agree).
    Stdout,
    /// The requests differ in these words and no others.
    Words(&'static [usize]),
    /// Stock ran the test; ours stopped saying this on stderr.
    OursStopped(&'static str),
}

impl Tolerated {
    fn covers(&self, divergence: &Divergence) -> bool {
        match (self, divergence) {
            (Tolerated::Stdout, Divergence::Stdout(..)) => true,
            (Tolerated::Words(allowed), Divergence::Words(words, _)) => {
                words.iter().all(|w| allowed.contains(w))
            }
            (Tolerated::OursStopped(text), Divergence::OursStopped(_, stderr)) => {
                stderr.contains(text)
            }
            _ => false,
        }
    }
}

/// A difference of ours from stock, on purpose (docs/compatibility.md
/// "different on purpose" gives each with its reason): the argument lists
/// it covers and the one kind of divergence it tolerates in them.
struct Known {
    why: &'static str,
    args: Matcher,
    tolerates: Tolerated,
}

const KNOWN: &[Known] = &[
    Known {
        why: "-d: stock's debugging dump on stdout is not reproduced (ours writes its own on stderr)",
        args: |a| has(a, false, "-d"),
        tolerates: Tolerated::Stdout,
    },
    Known {
        why: "-T mptcp: netperf-ng's own protocol name asks for TCP (6) and MPTCP in the extension words, stock for protocol 0",
        args: |a| test_value(a, "-T").is_some_and(|v| v.eq_ignore_ascii_case("mptcp")),
        tolerates: Tolerated::Words(&[25, 102, 103]),
    },
    Known {
        why: "a message size stock cannot allocate, in a test that uses it: stock sends its request and then fails or spends minutes allocating; ours refuses before",
        args: |a| {
            ["-m", "-M", "-r"].iter().any(|&option| {
                uses_size(a, option)
                    && test_value(a, option).is_some_and(|text| {
                        text.split(',').any(|half| {
                            let size = netperf_ng::cli::cnum::convert(half).value;
                            !half.is_empty() && !(-1..MESSAGE_LIMIT).contains(&size)
                        })
                    })
            })
        },
        tolerates: Tolerated::OursStopped("cannot run with messages of"),
    },
];

/// What stock live may do differently from its own recording.
const KNOWN_LIVE: &[Known] = &[Known {
    why: "-d: stock's dump names the fake netserver's port, a new one each run",
    args: |a| has(a, false, "-d"),
    tolerates: Tolerated::Stdout,
}];

/// Whether the test of `args` uses the message size `option` sets at
/// netperf's end: -r sizes the buffers of whichever way it moves data (and
/// makes an omni test request/response), an RR test ignores -m and -M, a
/// receiving test -m.
fn uses_size(args: &[String], option: &str) -> bool {
    let test = args
        .windows(2)
        .rfind(|w| w[0] == "-t")
        .map_or("TCP_STREAM", |w| w[1].as_str());
    let rr = matches!(test, "TCP_RR" | "UDP_RR" | "TCP_CRR")
        || (test == "OMNI" && has(args, true, "-r"));
    match option {
        "-r" => test != "TCP_CC",
        "-m" => !rr && test != "TCP_MAERTS",
        _ => !rr && test == "TCP_MAERTS",
    }
}

/// Message sizes from here on are refused (netperf_ng::cli::checked).
const MESSAGE_LIMIT: i32 = netperf_ng::cli::checked::MESSAGE_LIMIT;

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
    if fast_tier_skips("slow (21 s)") {
        return;
    }
    let cases = cases();
    let expected: Vec<Outcome> = cases.iter().map(|c| c.stock.clone()).collect();
    let found = divergences(&NETPERF, &cases, &expected, KNOWN);
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
    let found = divergences(&program, &cases, &expected, KNOWN_LIVE);
    report("stock live against its recording", &found, cases.len());
}

#[test]
fn a_legacy_request_and_an_omni_one_are_compared_by_what_they_ask() {
    let cases = cases();
    let stock = |args: &[&str]| -> Vec<u32> {
        let case = cases
            .iter()
            .find(|c| c.args == args)
            .unwrap_or_else(|| panic!("{args:?} is in the corpus"));
        case.stock.request.clone().expect("stock sent its request")
    };
    // TCP_CC -l 5 as omni asks for it: a connection test of no direction
    let cc = OmniRequest {
        cpu_bind: -1,
        send_buf_size: -1,
        recv_buf_size: -1,
        send_alignment: 8,
        recv_alignment: 8,
        request_size: 1,
        response_size: 1,
        flags: netperf_ng::wire::omni::flag::CONNECT_TEST,
        test_length: 5,
        ipfamily: netperf_ng::wire::omni::NF_INET,
        ..Default::default()
    };
    let words = |r: &OmniRequest| -> Vec<u32> {
        let m = r.encode();
        (0..MESSAGE_WORDS).map(|i| m.word(i)).collect()
    };
    let tcp_cc = stock(&["-t", "TCP_CC", "-l", "5"]);
    assert_eq!(
        legacy::differences(&tcp_cc, &words(&cc)),
        Vec::<String>::new()
    );
    let longer = OmniRequest {
        test_length: 6,
        ..cc.clone()
    };
    assert_eq!(
        legacy::differences(&tcp_cc, &words(&longer)),
        ["test_length 5/Some(6)"]
    );
    // a stream to netserver is not a connect/close test
    let sendfile = stock(&["-t", "TCP_SENDFILE", "-l", "3s"]);
    let fields = legacy::differences(&sendfile, &words(&cc));
    assert!(fields.iter().any(|f| f.starts_with("test ")), "{fields:?}");
}
