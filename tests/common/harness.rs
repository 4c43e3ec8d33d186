//! Running other people's netperf command lines as their harnesses do, and
//! holding what the harness read from them against what it reads from stock
//! netperf 2.7.1. A line is a template with placeholders ({H} the netserver's
//! address, {P} its port, {D} a free port for the data connection), run by
//! one of three pairings; what the harness parsed is a record of (field,
//! text), and each text's shape (sign class and decimals, or the literal) is
//! compared with the shapes stock gave, recorded in
//! tests/fixtures/harness/NAME.txt (NETPERF_NG_WRITE_HARNESS=1 with
//! NETPERF_STOCK_DIR records them again).

use super::stock::{start_stock_on, StockServer};
use super::{fast_tier_skips, stock_dir, text, wait_bounded, Server, NETPERF};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Who runs a line: the netperf program and the kind of netserver.
#[derive(Clone, Debug)]
pub enum Pair {
    Ours,
    /// Stock netperf (in this directory) against our netserver.
    StockToOurs(String),
    /// Stock against stock: what the fixture records.
    StockToStock(String),
}

impl Pair {
    pub fn label(&self) -> &'static str {
        match self {
            Pair::Ours => "ours to ours",
            Pair::StockToOurs(_) => "stock netperf to our netserver",
            Pair::StockToStock(_) => "stock to stock",
        }
    }

    fn netperf(&self) -> String {
        match self {
            Pair::Ours => NETPERF.path().to_string(),
            Pair::StockToOurs(dir) | Pair::StockToStock(dir) => format!("{dir}/netperf"),
        }
    }

    /// The pairings to check here: ours always, and with NETPERF_STOCK_DIR
    /// stock netperf against ours. (Stock against stock only records.)
    pub fn to_check() -> Vec<Pair> {
        let mut pairs = vec![Pair::Ours];
        match std::env::var("NETPERF_STOCK_DIR") {
            Ok(d) if std::path::Path::new(&d).join("netperf").exists() => {
                pairs.push(Pair::StockToOurs(d))
            }
            _ => super::skip(
                "the stock pairing (stock netperf against our netserver): \
                 set NETPERF_STOCK_DIR to a stock netperf 2.7.1 build",
            ),
        }
        pairs
    }
}

/// A netserver of either kind, stopped when dropped.
enum AnyServer {
    Ours(Server),
    Stock(StockServer),
}

impl AnyServer {
    fn start(pair: &Pair, host: &str) -> AnyServer {
        match pair {
            Pair::StockToStock(dir) => AnyServer::Stock(start_stock_on(dir, host)),
            _ => AnyServer::Ours(Server::start(host)),
        }
    }

    fn port(&self) -> u16 {
        match self {
            AnyServer::Ours(s) => s.port,
            AnyServer::Stock(s) => s.port,
        }
    }
}

/// What one netperf process of a line gave.
#[derive(Debug)]
pub struct Ran {
    pub args: Vec<String>,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// Everything about the run, for a failure message.
    pub fn said(&self) -> String {
        format!(
            "netperf {}\nexit {:?}\nstdout:\n{}\nstderr:\n{}",
            self.args.join(" "),
            self.code,
            self.stdout,
            self.stderr
        )
    }
}

/// A port nobody holds on `host` now (bound, then let go).
pub fn free_port(host: &str) -> u16 {
    let l = std::net::TcpListener::bind((host, 0)).expect("bind an ephemeral port");
    l.local_addr().unwrap().port()
}

/// The line's arguments: `template` with its placeholders filled, split at
/// white space as the harnesses' shells split it (none of the lines quotes).
pub fn fill(template: &str, host: &str, port: u16, data_port: u16) -> Vec<String> {
    template
        .replace("{H}", host)
        .replace("{P}", &port.to_string())
        .replace("{D}", &data_port.to_string())
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// Run `streams` copies of `template` at once, each against a netserver of
/// its own on `host` (as PerfKitBenchmarker gives each stream one), killed
/// past `limit`. With `alarm`, each gets SIGALRM that long after its start,
/// as bloat.sh's `pkill -ALRM netperf` ends its test.
pub fn run_line(
    pair: &Pair,
    host: &str,
    template: &str,
    streams: usize,
    alarm: Option<Duration>,
    limit: Duration,
) -> Vec<Ran> {
    let servers: Vec<AnyServer> = (0..streams).map(|_| AnyServer::start(pair, host)).collect();
    let children: Vec<_> = servers
        .iter()
        .map(|server| {
            let args = fill(template, host, server.port(), free_port(host));
            let child = Command::new(pair.netperf())
                .args(&args)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn netperf");
            (args, child)
        })
        .collect();
    if let Some(after) = alarm {
        std::thread::sleep(after);
        for (_, child) in &children {
            // SAFETY: kill takes a pid and a signal number.
            unsafe { libc::kill(child.id() as i32, libc::SIGALRM) };
        }
    }
    let ran = children
        .into_iter()
        .map(|(args, child)| {
            let out = wait_bounded(child, limit);
            Ran {
                args,
                code: out.status.code(),
                stdout: text(&out.stdout),
                stderr: text(&out.stderr),
            }
        })
        .collect();
    drop(servers);
    ran
}

/// What a harness read from one run: (field, the text it read).
pub type Record = Vec<(String, String)>;

/// Fields that count what may be none in any one run (stock netperf
/// counted 22 retransmissions on loopback in one run and 0 in the next;
/// bloat.sh's LENGTH, whole seconds between the first and last interim
/// line, is 0 when a loaded machine gives one line): zero and a positive
/// count are one shape.
fn is_count(field: &str) -> bool {
    field.to_ascii_uppercase().contains("RETRANS") || field == "LENGTH"
}

/// Fields whose value is its own shape: an exit status, a count of lines.
const EXACT: &[&str] = &["exit", "lines", "log lines"];

/// A value's shape: for a number its sign class (`-1`, netperf's "not
/// measured", apart) and its decimals, as `pos.2`; otherwise (and for the
/// EXACT fields) the literal, as `=Trans/s`.
pub fn shape(field: &str, value: &str) -> String {
    let v = value.trim();
    let number = v.parse::<f64>().ok().filter(|_| !EXACT.contains(&field));
    let Some(n) = number else {
        return format!("={v}");
    };
    let decimals = v.split_once('.').map_or(0, |(_, f)| f.len());
    let class = if n == -1.0 {
        "-1"
    } else if n.is_nan() {
        "nan"
    } else if n < 0.0 {
        "neg"
    } else if is_count(field) {
        "count"
    } else if n == 0.0 {
        "zero"
    } else {
        "pos"
    };
    format!("{class}.{decimals}")
}

/// The recorded shapes of one harness: case, then field, then the shapes
/// stock gave over the recorded runs.
type Shapes = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

fn fixture_path(harness: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/harness")
        .join(format!("{harness}.txt"))
}

/// Whether this run records the fixtures again (NETPERF_NG_WRITE_HARNESS=1).
pub fn recording() -> bool {
    std::env::var_os("NETPERF_NG_WRITE_HARNESS").is_some_and(|v| v == "1")
}

/// How many times recording runs each line with stock: a field stock
/// fills one way in one run and another in the next (TCP_CRR's
/// LOCAL_TRANSPORT_RETRANS is 0 or -1) shows both shapes.
pub const RECORDED_RUNS: usize = 5;

fn load(harness: &str) -> Shapes {
    let path = fixture_path(harness);
    let body =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let mut shapes = Shapes::new();
    for line in body
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let mut parts = line.split('\t');
        let (Some(case), Some(field), Some(set)) = (parts.next(), parts.next(), parts.next())
        else {
            panic!(
                "{}: not case<TAB>field<TAB>shapes: {line:?}",
                path.display()
            );
        };
        shapes.entry(case.to_string()).or_default().insert(
            field.to_string(),
            set.split('|').map(String::from).collect(),
        );
    }
    shapes
}

/// Write the harness's fixture from stock's records: each case's records
/// over the recorded runs (and streams).
pub fn write(harness: &str, source: &str, cases: &BTreeMap<String, Vec<Record>>) {
    let mut body = format!(
        "# What {harness} reads from stock netperf 2.7.1 against its own netserver on loopback,\n\
         # each line run {RECORDED_RUNS} times: case<TAB>field<TAB>the shapes it took ('|' between).\n\
         # A shape is a number's sign class (pos, zero, neg, -1, or count for a count that may\n\
         # be none) and decimals, or =literal (always for exit statuses and line counts). Harness source: {source}\n\
         # Recorded by NETPERF_NG_WRITE_HARNESS=1 NETPERF_STOCK_DIR=DIR cargo test --test harness_tests --test harness_examples_tests\n"
    );
    for (case, records) in cases {
        let mut fields: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        for record in records {
            for (field, value) in record {
                fields.entry(field).or_default().insert(shape(field, value));
            }
        }
        for (field, set) in fields {
            let set: Vec<_> = set.into_iter().collect();
            body.push_str(&format!("{case}\t{field}\t{}\n", set.join("|")));
        }
    }
    let path = fixture_path(harness);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, body).unwrap();
}

/// Every difference between `record` (what the harness read from `ran`)
/// and stock's recorded shapes for `case`: a field missing on either side,
/// or a value of a shape stock never gave.
pub fn differences(harness: &str, case: &str, record: &Record) -> Vec<String> {
    let shapes = load(harness);
    let Some(stock) = shapes.get(case) else {
        return vec![format!("no recorded case {case} in {harness}.txt")];
    };
    let mut out = Vec::new();
    for (field, value) in record {
        match stock.get(field) {
            None => out.push(format!("{field}={value:?}: stock has no such field")),
            Some(set) if !set.contains(&shape(field, value)) => out.push(format!(
                "{field}={value:?} is {}, stock's is {}",
                shape(field, value),
                set.iter().cloned().collect::<Vec<_>>().join(" or ")
            )),
            Some(_) => {}
        }
    }
    for field in stock.keys() {
        if !record.iter().any(|(f, _)| f == field) {
            out.push(format!("{field}: missing (stock has it)"));
        }
    }
    out
}

/// Where stock's own output of one recorded run of each case is kept: the
/// harness parsers are checked against it without running anything.
fn outputs_path(harness: &str) -> PathBuf {
    fixture_path(harness).with_extension("stock-output.txt")
}

/// The line that starts each run's output in the outputs file.
const OUTPUT_MARK: &str = "@@@";

/// Keep stock's output of one run of each case (every stream's), the stock
/// build's directory left out of it (`-o all` prints the command line): the
/// checkout names no path outside itself.
pub fn write_outputs(harness: &str, outputs: &BTreeMap<String, Vec<Ran>>) {
    let dir = std::env::var("NETPERF_STOCK_DIR").unwrap_or_default();
    let dir = format!("{}/", dir.trim_end_matches('/'));
    let mut body = String::new();
    for (case, ran) in outputs {
        for r in ran {
            let code = r.code.map_or("signal".into(), |c| c.to_string());
            body.push_str(&format!(
                "{OUTPUT_MARK}\t{case}\t{code}\t{}\n",
                r.args.join(" ")
            ));
            body.push_str(&r.stdout.replace(&dir, ""));
            if !r.stdout.ends_with('\n') {
                body.push('\n');
            }
        }
    }
    std::fs::write(outputs_path(harness), body).unwrap();
}

/// Stock's recorded output of each case, as runs (stderr not kept).
pub fn load_outputs(harness: &str) -> BTreeMap<String, Vec<Ran>> {
    let path = outputs_path(harness);
    let body =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let mut outputs: BTreeMap<String, Vec<Ran>> = BTreeMap::new();
    let mut current: Option<&mut Ran> = None;
    for line in body.split_inclusive('\n') {
        if let Some(head) = line.strip_prefix(OUTPUT_MARK) {
            let mut parts = head.trim_end_matches('\n').split('\t').skip(1);
            let case = parts.next().expect("a case name").to_string();
            let code = parts.next().and_then(|c| c.parse().ok());
            let args = parts.next().unwrap_or("").split(' ').map(String::from);
            let runs = outputs.entry(case).or_default();
            runs.push(Ran {
                args: args.collect(),
                code,
                stdout: String::new(),
                stderr: String::new(),
            });
            current = runs.last_mut();
        } else if let Some(ran) = current.as_mut() {
            ran.stdout.push_str(line);
        }
    }
    outputs
}

/// One command line of a harness.
pub struct Case {
    /// Its name in the fixture.
    pub name: &'static str,
    /// The netperf arguments, placeholders as common::harness::fill fills them.
    pub line: &'static str,
    /// How many copies run at once (PerfKitBenchmarker's and Cilium's streams).
    pub streams: usize,
    /// The netserver's address.
    pub host: &'static str,
    /// SIGALRM this many seconds after the start (bloat.sh's `pkill -ALRM`).
    pub alarm: Option<u64>,
    /// What the harness reads from the runs, or what it says when it fails.
    pub parse: fn(&Case, &[Ran]) -> Result<Vec<Record>, String>,
}

impl Case {
    pub const fn one(
        name: &'static str,
        line: &'static str,
        parse: fn(&Case, &[Ran]) -> Result<Vec<Record>, String>,
    ) -> Case {
        Case {
            name,
            line,
            streams: 1,
            host: "127.0.0.1",
            alarm: None,
            parse,
        }
    }

    pub fn run(&self, pair: &Pair) -> Vec<Ran> {
        run_line(
            pair,
            self.host,
            self.line,
            self.streams,
            self.alarm.map(Duration::from_secs),
            Duration::from_secs(60),
        )
    }
}

/// Run every case of a harness (at once: they are 1-3 s each and the checks
/// compare shapes, not rates) with each pairing to check, and fail with
/// every difference from stock's recorded shapes; with
/// NETPERF_NG_WRITE_HARNESS=1, record stock's shapes first.
pub fn check_harness(h: &Harness) {
    let Harness {
        name: harness,
        source,
        cases,
        slow_secs,
    } = *h;
    if fast_tier_skips(&format!("slow ({slow_secs} s)")) {
        return;
    }
    if recording() {
        let Some(dir) = stock_dir() else { return };
        let pair = Pair::StockToStock(dir);
        let (mut recorded, mut outputs) = (BTreeMap::new(), BTreeMap::new());
        std::thread::scope(|s| {
            let handles: Vec<_> = cases
                .iter()
                .map(|case| {
                    let pair = &pair;
                    s.spawn(move || {
                        let mut all = Vec::new();
                        let mut first = None;
                        for _ in 0..RECORDED_RUNS {
                            let ran = case.run(pair);
                            let records = (case.parse)(case, &ran).unwrap_or_else(|e| {
                                panic!("{}: stock: {harness} fails: {e}\n{}", case.name, said(&ran))
                            });
                            all.extend(records.into_iter().map(|r| with_exit(r, &ran)));
                            first.get_or_insert(ran);
                        }
                        (case.name.to_string(), all, first.unwrap())
                    })
                })
                .collect();
            for h in handles {
                let (name, all, first) = h.join().unwrap();
                recorded.insert(name.clone(), all);
                outputs.insert(name, first);
            }
        });
        write(harness, source, &recorded);
        write_outputs(harness, &outputs);
    }
    // Every pairing's lines run at once (the checks compare shapes, not
    // rates), and all of them before the test fails: one report says which
    // lines fail with ours and which with stock's netperf too.
    let pairs = Pair::to_check();
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = pairs
            .iter()
            .flat_map(|pair| cases.iter().map(move |case| (pair, case)))
            .map(|(pair, case)| {
                s.spawn(move || {
                    check_case(harness, case, pair).map(|f| format!("{}: {f}", pair.label()))
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{harness}: {} of {} runs read differently from stock:\n\n{}",
        failures.len(),
        pairs.len() * cases.len(),
        failures.join("\n\n")
    );
}

/// One case with one pairing: what went wrong, if anything.
fn check_case(harness: &str, case: &Case, pair: &Pair) -> Option<String> {
    let ran = case.run(pair);
    let problems = match (case.parse)(case, &ran) {
        Err(e) => vec![format!("{harness} fails: {e}")],
        Ok(records) => records
            .into_iter()
            .flat_map(|r| differences(harness, case.name, &with_exit(r, &ran)))
            .collect(),
    };
    (!problems.is_empty()).then(|| {
        format!(
            "[{}] {}\n  {}\n{}",
            case.name,
            case.line,
            problems.join("\n  "),
            said(&ran)
        )
    })
}

/// The record with each run's exit status (every harness here fails a run
/// that does not exit 0, or records its output as a failure).
pub fn with_exit(mut record: Record, ran: &[Ran]) -> Record {
    let mut codes: Vec<String> = ran
        .iter()
        .map(|r| r.code.map_or("signal".into(), |c| c.to_string()))
        .collect();
    codes.dedup();
    record.push(("exit".into(), codes.join("/")));
    record
}

pub fn said(ran: &[Ran]) -> String {
    ran.iter().map(Ran::said).collect::<Vec<_>>().join("\n")
}

/// A harness: its fixture's name, its source, its lines, and how long its
/// check takes on a quiet machine.
pub struct Harness {
    pub name: &'static str,
    pub source: &'static str,
    pub cases: &'static [Case],
    pub slow_secs: u32,
}

/// Without running anything (the fast tier too): each harness parser reads
/// stock's recorded output of every case, and what it reads there has the
/// recorded shapes: the parsers and the fixtures agree.
pub fn check_recorded_outputs(harnesses: &[Harness]) {
    let mut failures = Vec::new();
    for h in harnesses {
        let outputs = load_outputs(h.name);
        for case in h.cases {
            let Some(ran) = outputs.get(case.name) else {
                failures.push(format!("{}: no recorded output of {}", h.name, case.name));
                continue;
            };
            match (case.parse)(case, ran) {
                Err(e) => failures.push(format!("{} {}: {e}", h.name, case.name)),
                Ok(records) => failures.extend(records.into_iter().flat_map(|r| {
                    differences(h.name, case.name, &with_exit(r, ran))
                        .into_iter()
                        .map(|d| format!("{} {}: {d}", h.name, case.name))
                })),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
