//! The phases run: each phase's bulk tests (one many-flow test per load
//! generator and direction, on threads of their own) and, once they move
//! and have settled, the probe — consecutive short open-loop tests to the
//! first load generator, so that its latency over time is a series. Every
//! test runs in-process as netagg's shared tests do (`agg::launch`'s
//! parse, then the control connection and `run_iteration`).

use super::model::{Phase, Probe, Run, Second};
use super::{PhaseKind, UPLOAD};
use crate::agg::launch::{parse_test, CUT_WAIT, SETUP_WAIT, STOP_WAIT};
use netperf_client::control::client::{self, ClientError, Iteration, RunOptions};
use netperf_client::control::request::StartHook;
use netperf_data::engine::signals::stop_requested;
use netperf_data::engine::stop_flag::StopFlag;
use netperf_data::measure::histogram::Histogram;
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What a run asks for, checked.
#[derive(Debug, Clone)]
pub struct Plan {
    pub hosts: Vec<String>,
    /// The probe's load generator is this host (a loopback address).
    pub loopback: bool,
    pub port: u16,
    pub phases: Vec<&'static PhaseKind>,
    pub flows: u32,
    pub probe_rate: f64,
    pub probe: &'static ProbeKind,
    /// Seconds of probing per phase, and of each probe test.
    pub duration: f64,
    pub probe_seconds: u32,
    /// Seconds between the bulk flows moving and the probe starting.
    pub settle: f64,
}

/// A probe protocol: its test and the request/response sizes (UDP's carry
/// the request's number, 8 bytes, so a loss is told apart).
#[derive(Debug, PartialEq, Eq)]
pub struct ProbeKind {
    pub name: &'static str,
    pub test: &'static str,
    pub sizes: &'static str,
}

pub const PROBES: [ProbeKind; 2] = [
    ProbeKind {
        name: "tcp",
        test: "TCP_RR",
        sizes: "1,1",
    },
    ProbeKind {
        name: "udp",
        test: "UDP_RR",
        sizes: "8,8",
    },
];

/// How much longer than the phase a bulk test is asked to run: it is
/// stopped when the probe ends, and must not end before.
const BULK_MARGIN_SECS: f64 = 30.0;

/// A bulk test on its own thread, and a second handle on its control
/// connection (to cut it, should netserver not answer after the stop).
struct Bulk {
    test: &'static str,
    host: String,
    flag: StopFlag,
    control: Arc<Mutex<Option<TcpStream>>>,
    thread: JoinHandle<Result<Iteration, ClientError>>,
}

impl Bulk {
    /// Cuts its control connection: a test waiting on netserver ends.
    fn cut(&self) {
        if let Some(c) = self.control.lock().ok().as_ref().and_then(|c| c.as_ref()) {
            let _ = c.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// Waits until every test in `bulk` has ended or `limit` has passed.
fn await_ended(bulk: &[Bulk], limit: Duration) {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline && bulk.iter().any(|b| !b.thread.is_finished()) {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `plan`'s phases in order; `progress` hears of each probe test.
pub fn run(plan: &Plan, command_line: String, progress: &mut dyn FnMut(&str)) -> Run {
    let t0 = Instant::now();
    let mut run = Run {
        started: netperf_base::timefmt::now_utc(),
        start_epoch: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64()),
        command_line,
        hosts: plan.hosts.clone(),
        loopback: plan.loopback,
        probe_test: plan.probe.test.into(),
        probe_rate: plan.probe_rate,
        flows: plan.flows,
        duration: plan.duration,
        settle: plan.settle,
        ..Run::default()
    };
    for kind in &plan.phases {
        if stop_requested() {
            break;
        }
        let index = run.phases.len();
        let (phase, seconds) = phase(plan, kind, index, t0, progress);
        run.phases.push(phase);
        run.seconds.extend(seconds);
    }
    run.interrupted = stop_requested();
    run
}

/// A problem on one line (netperf's messages can span several).
fn one_line(text: String) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

fn since(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64()
}

/// One phase: its bulk tests started and settled, the probe, the bulk
/// stopped and read.
fn phase(
    plan: &Plan,
    kind: &'static PhaseKind,
    index: usize,
    t0: Instant,
    progress: &mut dyn FnMut(&str),
) -> (Phase, Vec<Second>) {
    let start = since(t0);
    let mut problems = Vec::new();
    let started = Arc::new(AtomicUsize::new(0));
    let bulk: Vec<Bulk> = kind
        .bulk
        .iter()
        .flat_map(|test| plan.hosts.iter().map(move |host| (*test, host)))
        .filter_map(
            |(test, host)| match start_bulk(plan, test, host, &started) {
                Ok(b) => Some(b),
                Err(e) => {
                    problems.push(one_line(format!("{test} to {host}: {e}")));
                    None
                }
            },
        )
        .collect();
    await_moving(&bulk, &started);
    if !bulk.is_empty() {
        std::thread::sleep(Duration::from_secs_f64(plan.settle));
    }
    let probe_start = since(t0);
    let (probe, seconds) = probe(plan, index, t0, &mut problems, progress);
    // Stopped as netagg's ramp stops its tests: the flags, a bounded wait
    // for the results, then the control connections cut.
    for b in &bulk {
        b.flag.set();
    }
    await_ended(&bulk, STOP_WAIT);
    bulk.iter()
        .filter(|b| !b.thread.is_finished())
        .for_each(Bulk::cut);
    await_ended(&bulk, CUT_WAIT);
    let (mut up, mut down, mut cpu) = (None, None, None::<f64>);
    for b in bulk {
        if !b.thread.is_finished() {
            problems.push(format!(
                "{} to {}: did not end; left behind",
                b.test, b.host
            ));
            continue;
        }
        match b.thread.join() {
            Ok(Ok(it)) => {
                let o = &it.outcome;
                let bytes = (o.local.bytes_sent + o.local.bytes_received) as f64;
                let mbps = match o.elapsed > 0.0 {
                    true => bytes * 8.0 / o.elapsed / 1e6,
                    false => 0.0,
                };
                let sum = if b.test == UPLOAD { &mut up } else { &mut down };
                *sum = Some(sum.unwrap_or(0.0) + mbps);
                if let Some(util) = o.local.cpu.as_ref().map(|c| c.util) {
                    cpu = Some(cpu.map_or(util, |c| c.max(util)));
                }
            }
            Ok(Err(e)) => problems.push(one_line(format!("{} to {}: {e}", b.test, b.host))),
            Err(_) => problems.push(format!("{} to {}: its thread panicked", b.test, b.host)),
        }
    }
    let phase = Phase {
        name: kind.name.into(),
        start,
        probe_start,
        end: since(t0),
        probe,
        up_mbps: up,
        down_mbps: down,
        cpu_busy: cpu,
        problems,
    };
    (phase, seconds)
}

/// Waits (bounded by the set-up wait) until every bulk test has started
/// its data phase or ended.
fn await_moving(bulk: &[Bulk], started: &AtomicUsize) {
    let deadline = Instant::now() + SETUP_WAIT;
    while Instant::now() < deadline {
        let ended = bulk.iter().filter(|b| b.thread.is_finished()).count();
        if started.load(Ordering::Acquire) + ended >= bulk.len() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The netperf command line of a test to `host`: global options, then
/// the test's own after `--`.
fn args(plan: &Plan, host: &str, test: &str, secs: String, own: &[String]) -> Vec<String> {
    let mut args: Vec<String> = ["-H", host, "-p", &plan.port.to_string(), "-t", test, "-l"]
        .map(String::from)
        .into();
    args.push(secs);
    args.push("--".into());
    args.extend_from_slice(own);
    args
}

fn start_bulk(
    plan: &Plan,
    test: &'static str,
    host: &str,
    started: &Arc<AtomicUsize>,
) -> Result<Bulk, String> {
    let secs = (plan.settle + plan.duration + BULK_MARGIN_SECS).ceil() as u64;
    let args = args(
        plan,
        host,
        test,
        secs.to_string(),
        &["--flows".into(), plan.flows.to_string()],
    );
    // This host's CPU over the test (-c), to tell its contention from the path's.
    let args: Vec<String> = std::iter::once("-c".to_string()).chain(args).collect();
    let flag = StopFlag::new();
    let control = Arc::new(Mutex::new(None));
    let (stop, started, handle) = (flag.clone(), started.clone(), control.clone());
    let thread = std::thread::Builder::new()
        .name(format!("bulk {test}"))
        .spawn(move || {
            in_process(&args, Some(&handle), |run| {
                run.shared_stop = Some(stop);
                run.start_hook = Some(StartHook(Arc::new(move || {
                    started.fetch_add(1, Ordering::AcqRel);
                    true
                })));
            })
        })
        .map_err(|e| e.to_string())?;
    Ok(Bulk {
        test,
        host: host.into(),
        flag,
        control,
        thread,
    })
}

/// One test in-process: its control connection (a second handle on it in
/// `control`, when given), the iteration, its end.
fn in_process(
    args: &[String],
    control: Option<&Mutex<Option<TcpStream>>>,
    adjust: impl FnOnce(&mut RunOptions),
) -> Result<Iteration, ClientError> {
    let (config, spec) = parse_test(args)?;
    let mut chan = client::establish_within(&config.global, SETUP_WAIT)?;
    if let Some(Ok(mut slot)) = control.map(Mutex::lock) {
        *slot = chan.shutdown_handle().ok();
    }
    let mut run = RunOptions::from_global(&config.global);
    adjust(&mut run);
    let result = client::run_iteration(Some(&mut chan), &spec, &run, false);
    chan.shutdown();
    result
}

/// Merged histograms of a phase's probe tests and their counts.
struct Merged {
    corrected: Histogram,
    raw: Histogram,
    probe: Probe,
}

impl Merged {
    fn new() -> Merged {
        Merged {
            corrected: Histogram::new(),
            raw: Histogram::new(),
            probe: Probe::default(),
        }
    }

    fn add(&mut self, report: &netperf_data::measure::open_loop::OpenLoopReport) {
        self.corrected.merge(&report.corrected);
        self.raw.merge(&report.raw);
        let p = &mut self.probe;
        p.sent += report.sent;
        p.lost += report.lost;
        p.unanswered += report.in_flight_at_end;
        p.late += report.late;
    }

    /// The figures: percentiles from the merged histograms.
    fn figures(&self) -> Probe {
        let (co, raw) = (
            self.corrected.latency().summary(),
            self.raw.latency().summary(),
        );
        let answered = co.count > 0;
        let some = |x: f64| answered.then_some(x);
        Probe {
            co_p50: some(co.p50_us),
            co_p90: some(co.p90_us),
            co_p99: some(co.p99_us),
            raw_p50: some(raw.p50_us),
            raw_p99: some(raw.p99_us),
            answered: co.count,
            ..self.probe.clone()
        }
    }
}

/// The probe over the phase: short open-loop tests in turn until the
/// phase's probing time is spent (a test's set-up crosses the loaded path
/// too, so fewer tests fit a loaded phase than an idle one).
fn probe(
    plan: &Plan,
    phase: usize,
    t0: Instant,
    problems: &mut Vec<String>,
    progress: &mut dyn FnMut(&str),
) -> (Probe, Vec<Second>) {
    let host = &plan.hosts[0];
    let own = [
        "--rate".to_string(),
        plan.probe_rate.to_string(),
        "-r".into(),
        plan.probe.sizes.into(),
    ];
    let args = args(
        plan,
        host,
        plan.probe.test,
        plan.probe_seconds.to_string(),
        &own,
    );
    let end = Instant::now() + Duration::from_secs_f64(plan.duration);
    let mut whole = Merged::new();
    let mut seconds = Vec::new();
    while Instant::now() < end && !stop_requested() {
        let report = match in_process(&args, None, |_| {}) {
            Ok(it) => it.open_loop,
            Err(e) => {
                problems.push(one_line(format!(
                    "probe {} to {host}: {e}",
                    plan.probe.test
                )));
                break;
            }
        };
        let Some(report) = report else {
            problems.push(format!("probe to {host}: no open-loop figures"));
            break;
        };
        whole.add(&report);
        let mut one = Merged::new();
        one.add(&report);
        let second = Second {
            phase,
            t: since(t0),
            probe: one.figures(),
        };
        progress(&progress_line(plan, phase, &second));
        seconds.push(second);
    }
    (whole.figures(), seconds)
}

fn progress_line(plan: &Plan, phase: usize, s: &Second) -> String {
    let us = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.0}"));
    format!(
        "{:>7.1} s  {:<9} corrected P50 {} us  P99 {} us  sent {} lost {}",
        s.t,
        plan.phases[phase].name,
        us(s.probe.co_p50),
        us(s.probe.co_p99),
        s.probe.sent,
        s.probe.lost
    )
}
