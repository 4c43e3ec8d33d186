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

/// The words of an omni request that hold the two data addresses: with
/// `-H addr/bits` or `-L addr/bits` stock netperf picks one at random.
const ADDRESS_WORDS: std::ops::Range<usize> = 30..38;

/// How `ours` differs from `stock` for one case, if it does.
/// `random_address`: the arguments ask for a random data address.
fn divergence(stock: &Outcome, ours: &Outcome, random_address: bool) -> Option<String> {
    if ours.timed_out {
        return Some("ours did not end".into());
    }
    if ours.stderr.contains("panicked") {
        return Some(format!("ours panicked: {}", ours.stderr));
    }
    if stock.timed_out || stock.exit.is_some_and(|code| code < 0) {
        // Stock never got to its request (it fills a ring without end, or
        // allocates gigabytes) or died of a signal (an alignment of 0
        // crashes it, a negative ring width aborts it): ours must only
        // end, which it did.
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
                .filter(|&i| !(random_address && ADDRESS_WORDS.contains(&i)))
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
            let random_address = case.args.iter().any(|a| a.contains('/'));
            let why = divergence(stock, ours, random_address)?;
            let line = format!("{:?}: {why}", case.args);
            match known_difference(&case.args) {
                Some(reason) => {
                    eprintln!("known difference ({reason}): {line}");
                    None
                }
                None => Some(line),
            }
        })
        .collect()
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

/// Whether an argument list is one a known difference covers.
type Matcher = fn(&[String]) -> bool;

/// Where ours differs from stock on purpose or by a gap that is not the
/// parser's: each with the reason (docs/compatibility.md lists them).
/// Only the divergences of these argument lists are tolerated, and only
/// when they are of the stated kind is the list the place to look.
const KNOWN: &[(&str, Matcher)] = &[
    (
        "-T with a name netperf 2.7.1 does not know: stock sends protocol 0 (IPPROTO_IP), ours the socket type's own, which is what the kernel then uses; mptcp is ours",
        |a| {
            a.iter().position(|w| w == "-T").is_some_and(|i| {
                has(a, true, "-T")
                    && !matches!(
                        a.get(i + 1).map(|v| v.to_ascii_lowercase()).as_deref(),
                        Some("tcp" | "udp" | "udplite" | "sctp" | "dccp")
                    )
            })
        },
    ),
    ("-d: stock's debugging output is not implemented", |a| has(a, false, "-d")),
    (
        "control -L: the banner's and request's local address (issue 36 item 3, not the parser's)",
        |a| has(a, false, "-L") && !a.iter().any(|w| w.ends_with(",6")),
    ),
    (
        "test -L: ours puts the local data address in the request, stock leaves 0 (control, not the parser)",
        |a| has(a, true, "-L") && a.iter().any(|w| w == "127.0.0.1"),
    ),
    (
        "test -H/-L ...,6 over IPv4 control: stock refuses to resolve, ours runs over IPv6 (issue 36 item 3)",
        |a| a.iter().any(|w| w.ends_with(",6") || w.ends_with(",inet6")),
    ),
    (
        "test -a, -B, -f, -F, -V: stock sets their request flags, ours lists them as unsupported (control)",
        |a| ["-a", "-B", "-f", "-F", "-V"].iter().any(|o| has(a, true, o)),
    ),
    (
        "TCP_CC, TCP_SENDFILE, TCP_MSS: their requests and TCP_MSS itself are not the parser's (issue 36 item 3)",
        |a| {
            a.windows(2).any(|w| {
                w[0] == "-t" && matches!(w[1].as_str(), "TCP_CC" | "TCP_SENDFILE" | "TCP_MSS")
            })
        },
    ),
    (
        "-T cpu: stock ignores a binding the machine refuses and always says ': cpu bind' (run and banner, not the parser)",
        |a| has(a, false, "-T"),
    ),
    (
        "-W: stock bumps a ring width of 1 to 2 in the request (control)",
        |a| has(a, false, "-W") || has(a, true, "-W"),
    ),
    (
        "-l of -2^31: stock negates it to itself, ours to -2^31+1 (control)",
        |a| a.windows(2).any(|w| w[0] == "-l" && matches!(w[1].as_str(), "10G" | "2147483648")),
    ),
    (
        "UDP_STREAM -c: stock's request direction for a connection flag on a stream test (control)",
        |a| has(a, true, "-c") && a.iter().any(|w| w == "UDP_STREAM"),
    ),
    (
        "-D with -v 2: ours asks our netserver for its TCP_INFO series (issue 36 item 3)",
        |a| has(a, false, "-D") && a.windows(2).any(|w| w[0] == "-v" && w[1] == "2"),
    ),
    (
        "-T udplite: the automatic ring width follows the message size (control)",
        |a| a.iter().any(|w| w == "udplite"),
    ),
    (
        "a message size stock cannot allocate: whether it stops before or after its request depends on the test; ours refuses before",
        |a| {
            let split = a.iter().position(|w| w == "--").unwrap_or(a.len());
            a[split..].windows(2).any(|w| {
                matches!(w[0].as_str(), "-m" | "-M" | "-r")
                    && w[1].split(',').any(|half| {
                        let size = netperf_ng::cli::cnum::convert(half).value;
                        !half.is_empty() && !(-1..MESSAGE_LIMIT).contains(&size)
                    })
            })
        },
    ),
];

/// Message sizes from here on are refused (netperf_ng::cli::checked).
const MESSAGE_LIMIT: i32 = netperf_ng::cli::checked::MESSAGE_LIMIT;

fn known_difference(args: &[String]) -> Option<&'static str> {
    KNOWN
        .iter()
        .find(|(_, matches)| matches(args))
        .map(|(why, _)| *why)
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
