//! Starting and stopping netagg's streams. A stream is one netperf test on
//! a thread of its own, or, with our netserver on its load generator, one
//! flow of a shared test: a level's new streams to one load generator run
//! as the flows of one many-flow test (`-- --flows N`), on a few threads.
//! A level's new tests set up in parallel (control connection, request,
//! netserver's answer), at most `setup_concurrency` at once per load
//! generator, then wait at the level's start gate (`gate`); the coordinator
//! opens it once every test is set up or has failed (or the set-up limit
//! passed), and the level's measured window starts when all their streams
//! move. Stopping sets every flag at once, waits a bounded time for the
//! results, then cuts the control connections of the tests still waiting.

mod gate;
mod test;

use super::failures::{Phase, Reason, StreamFailure};
use gate::{Gate, Slot, Turn};
use netperf_client::control::client::ClientError;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
pub use test::{parse as parse_test, TestResult};
use test::{Outcome, Seat, Test};

/// How long one stream's set-up (connect, request, netserver's answer) may
/// take once it has its turn.
pub const SETUP_WAIT: Duration = Duration::from_secs(10);
/// How long a level's set-up may take; streams not set up by then are
/// called off. Below our netserver's 60 s wait for a data connection, so
/// that the streams set up first are still awaited when the gate opens.
pub const SETUP_LIMIT: Duration = Duration::from_secs(30);
/// How long after the gate opens every stream has to show its first work.
const RUN_WAIT: Duration = Duration::from_secs(5);
/// How long a stop waits for the results before cutting the control
/// connections of the streams still waiting for them.
pub const STOP_WAIT: Duration = Duration::from_secs(10);
/// How long a cut stream has to end before it is left behind.
pub const CUT_WAIT: Duration = Duration::from_secs(2);
/// How often the coordinator looks at the streams while it waits for them
/// to move or end.
const POLL: Duration = Duration::from_millis(2);
/// How often it looks for slow set-ups while it waits for the others.
const LOOK_EVERY: Duration = Duration::from_millis(500);

/// A test to start: its load generator, the netperf command line of one
/// stream, and the streams it carries (their numbers over the run). More
/// than one makes a shared test: `--flows` and `--threads` are added.
#[derive(Debug, Clone)]
pub struct TestRequest {
    pub host: String,
    pub args: Vec<String>,
    pub streams: Vec<usize>,
    /// The threads a shared test's flows run on.
    pub threads: u32,
}

impl TestRequest {
    /// One stream, one test.
    pub fn single(id: usize, host: String, args: Vec<String>) -> Self {
        TestRequest {
            host,
            args,
            streams: vec![id],
            threads: 1,
        }
    }

    fn flows(&self) -> u32 {
        self.streams.len() as u32
    }

    /// netperf's command line of the test.
    fn command(&self) -> Vec<String> {
        let mut args = self.args.clone();
        if self.flows() > 1 {
            if !args.iter().any(|a| a == "--") {
                args.push("--".into());
            }
            let flows = ["--flows", &self.flows().to_string(), "--threads"];
            args.extend(flows.iter().map(|s| s.to_string()));
            args.push(self.threads.to_string());
        }
        args
    }
}

/// A stream as the coordinator holds it: its test and, in a shared test,
/// its flow.
pub struct Stream {
    pub id: usize,
    pub host: String,
    test: Arc<Test>,
    flow: Option<u32>,
    /// The units and receive timeouts read at the last sample.
    pub last_units: u64,
    pub last_timeouts: u64,
    /// When it was set up (at the gate), and first seen doing work.
    pub ready_at: Option<Instant>,
    pub running_at: Option<Instant>,
}

impl Stream {
    /// Its work units (transactions or bytes) so far.
    pub fn units(&self) -> u64 {
        match (self.flow, &self.test.board) {
            (Some(f), Some(board)) => board.units(f),
            _ => self.test.flag.units(),
        }
    }

    /// Its lost requests (receive timeouts) so far.
    pub fn timeouts(&self) -> u64 {
        match (self.flow, &self.test.board) {
            (Some(f), Some(board)) => board.timeouts(f),
            _ => self.test.flag.timeouts(),
        }
    }

    /// Its flow in a shared test, and the threads that test runs on.
    pub fn shared(&self) -> Option<(u32, u32)> {
        self.flow.map(|f| (f, self.test.threads))
    }

    fn stop(&self) {
        self.test.flag.set();
    }

    fn cut(&self) {
        self.test.cut();
    }

    fn finished(&self) -> bool {
        self.test.finished()
    }

    fn outcome(&self) -> Option<Outcome> {
        self.test.outcome()
    }

    /// Why its flow failed, in a shared test that ended well.
    fn flow_failure(&self, done: &TestResult) -> Option<String> {
        let flow = self.flow?;
        let report = done.flows.as_ref()?;
        let result = report.flows.iter().find(|r| r.flow == flow);
        match result {
            Some(r) => r.failure.clone(),
            None => Some("its flow is missing from the test's results".into()),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What starting a level gave.
pub struct Started {
    /// Its streams that run.
    pub streams: Vec<Stream>,
    /// Those that failed, and why.
    pub failures: Vec<StreamFailure>,
    /// Streams called off at the set-up limit whose threads may still be
    /// ending: stop them with the others (their failure is recorded).
    pub called_off: Vec<Stream>,
    /// Shared tests a netserver refused as one that serves one data
    /// connection per test (a stock netserver): run their streams one test
    /// each. Not failures.
    pub needs_single: Vec<TestRequest>,
    /// How many of `streams` showed no work within RUN_WAIT of the gate.
    pub late: usize,
    /// When the level's streams all ran (or RUN_WAIT passed).
    pub all_running: Instant,
}

/// How the streams are started.
#[derive(Debug, Clone)]
pub struct LaunchSettings {
    /// The load generators, in the order streams are spread over them.
    pub hosts: Vec<String>,
    /// Set-ups in flight at once per load generator.
    pub setup_concurrency: usize,
    /// The nice the stream threads go back to, when the coordinator that
    /// spawns them runs at a raised priority.
    pub stream_nice: Option<i32>,
}

/// Start a level's new tests and return once all of their streams run or
/// failed.
pub fn start_level(requests: Vec<TestRequest>, level: usize, settings: &LaunchSettings) -> Started {
    let gate = Arc::new(Gate::new(requests.len(), settings));
    let mut failures = Vec::new();
    let mut pending: Vec<(usize, Stream)> = Vec::new();
    let mut asked = Vec::new();
    for (slot, request) in requests.into_iter().enumerate() {
        match spawn_test(&gate, slot, &request, settings, level) {
            Ok(streams) => pending.extend(streams.into_iter().map(|s| (slot, s))),
            Err(mut failed) => failures.append(&mut failed),
        }
        asked.push(request);
    }
    let slots = gate.open_when_set_up(&pending);
    let sorted = sort_by_slot(pending, &slots, level, &mut failures);
    let (streams, late, mut run_failures) = wait_until_running(sorted.streams, level);
    failures.append(&mut run_failures);
    Started {
        streams,
        failures,
        called_off: sorted.called_off,
        needs_single: sorted
            .refused_shared
            .into_iter()
            .map(|slot| asked[slot].clone())
            .collect(),
        late,
        all_running: Instant::now(),
    }
}

/// Spawn the thread of the test `request` asks for, in `slot` of the
/// gate, and give its streams; a thread that cannot be started is each of
/// its streams' failure.
fn spawn_test(
    gate: &Arc<Gate>,
    slot: usize,
    request: &TestRequest,
    settings: &LaunchSettings,
    level: usize,
) -> Result<Vec<Stream>, Vec<StreamFailure>> {
    let host = settings
        .hosts
        .iter()
        .position(|h| *h == request.host)
        .unwrap_or(0);
    let seat = Seat {
        gate: gate.clone(),
        slot,
        turn: Arc::new(Turn {
            gate: gate.clone(),
            host,
            held: Mutex::new(false),
        }),
        nice: settings.stream_nice,
    };
    let first = request.streams.first().copied().unwrap_or(0);
    let name = match request.flows() {
        1 => format!("stream-{first}"),
        n => format!("streams-{first}+{n}"),
    };
    match test::spawn(
        name,
        request.command(),
        request.flows(),
        request.threads,
        seat,
    ) {
        Ok(test) => {
            let shared = request.flows() > 1;
            Ok(request
                .streams
                .iter()
                .enumerate()
                .map(|(flow, &id)| Stream {
                    id,
                    host: request.host.clone(),
                    test: test.clone(),
                    flow: shared.then_some(flow as u32),
                    last_units: 0,
                    last_timeouts: 0,
                    ready_at: None,
                    running_at: None,
                })
                .collect())
        }
        Err(e) => {
            gate.set(slot, Slot::Ended);
            let reason = if e.kind() == std::io::ErrorKind::WouldBlock {
                Reason::Threads
            } else {
                Reason::Other
            };
            let detail = format!("cannot start a thread: {e}");
            Err(request
                .streams
                .iter()
                .map(|&id| {
                    StreamFailure::new(id, &request.host, level, Phase::Setup, reason, &detail)
                })
                .collect())
        }
    }
}

/// The streams as the gate found their tests.
struct Sorted {
    /// Set up: they go on.
    streams: Vec<Stream>,
    /// Called off: stopped and cut, to be dismissed with the others.
    called_off: Vec<Stream>,
    /// The slots of shared tests a stock netserver refused.
    refused_shared: Vec<usize>,
}

/// The streams by where the gate found their tests: those set up go on;
/// those called off are stopped and cut; those whose test ended are
/// joined. Each one that does not go on adds its failure, except the
/// streams of a shared test a stock netserver refused (run one by one).
fn sort_by_slot(
    pending: Vec<(usize, Stream)>,
    slots: &[Slot],
    level: usize,
    failures: &mut Vec<StreamFailure>,
) -> Sorted {
    let mut sorted = Sorted {
        streams: Vec::new(),
        called_off: Vec::new(),
        refused_shared: Vec::new(),
    };
    for (slot, mut stream) in pending {
        match slots[slot] {
            Slot::Ready(at) => {
                stream.ready_at = Some(at);
                sorted.streams.push(stream);
            }
            Slot::CalledOff(why) => {
                stream.stop();
                stream.cut();
                failures.push(StreamFailure::new(
                    stream.id,
                    &stream.host,
                    level,
                    Phase::Setup,
                    Reason::Timeout,
                    &why.detail(),
                ));
                sorted.called_off.push(stream);
            }
            Slot::SettingUp | Slot::Ended => match stream.outcome().as_deref() {
                Some(Err(ClientError::NeedsOurNetserver(_))) if stream.flow.is_some() => {
                    if !sorted.refused_shared.contains(&slot) {
                        sorted.refused_shared.push(slot);
                    }
                }
                Some(Err(e)) => failures.push(StreamFailure::from_error(
                    stream.id,
                    &stream.host,
                    level,
                    Phase::Setup,
                    e,
                )),
                _ => failures.push(StreamFailure::new(
                    stream.id,
                    &stream.host,
                    level,
                    Phase::Setup,
                    Reason::Other,
                    "ended before its data phase",
                )),
            },
        }
    }
    sorted
}

/// After the gate: wait until every stream has done work (or ended, or
/// RUN_WAIT passed); returns the streams still alive, how many of them had
/// not moved yet, and the failures of those that ended.
fn wait_until_running(
    mut streams: Vec<Stream>,
    level: usize,
) -> (Vec<Stream>, usize, Vec<StreamFailure>) {
    let until = Instant::now() + RUN_WAIT;
    let mut failures = Vec::new();
    loop {
        let now = Instant::now();
        let mut waiting = 0;
        for s in streams.iter_mut().filter(|s| s.running_at.is_none()) {
            if s.units() > 0 {
                s.running_at = Some(now);
            } else {
                waiting += 1;
            }
        }
        let ended: Vec<usize> = (0..streams.len())
            .filter(|&i| streams[i].running_at.is_none() && streams[i].finished())
            .collect();
        for &i in ended.iter().rev() {
            let s = streams.remove(i);
            let detail = match s.outcome().as_deref() {
                Some(Err(e)) => {
                    failures.push(StreamFailure::from_error(
                        s.id,
                        &s.host,
                        level,
                        Phase::Run,
                        e,
                    ));
                    continue;
                }
                _ => "ended at its start without doing any work",
            };
            failures.push(StreamFailure::new(
                s.id,
                &s.host,
                level,
                Phase::Run,
                Reason::Other,
                detail,
            ));
        }
        waiting -= ended.len().min(waiting);
        if waiting == 0 || now >= until {
            return (streams, waiting, failures);
        }
        std::thread::sleep(POLL);
    }
}

/// How a stopped stream ended: its final line, or why there is none.
pub struct Ended {
    pub id: usize,
    pub host: String,
    /// None: it ended without results.
    pub finished: Option<Finished>,
}

/// A stream's results: its final `-o all` line (a stream of its own; the
/// flows of a shared test have none, their test has it) and what it
/// learned of its load generator (our netserver's facts; a stock one's
/// are unknown); for a shared test's first flow, the test's final line.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    pub final_line: Option<String>,
    /// Shared by every stream of a test: one copy, however many streams.
    pub remote: std::sync::Arc<netperf_pages::context::HostFacts>,
    pub shared_line: Option<String>,
}

impl Finished {
    fn of(stream: &Stream, done: &TestResult) -> Finished {
        let line = Some(done.final_line.clone());
        Finished {
            final_line: line.clone().filter(|_| stream.flow.is_none()),
            remote: done.remote.clone(),
            shared_line: line.filter(|_| stream.flow == Some(0)),
        }
    }
}

/// Stop `streams` at once and collect how each ended; `level` names the
/// level in failures. Bounded: STOP_WAIT for the results, then the waiting
/// tests' control connections are cut, CUT_WAIT more, and a test still
/// not ended is left behind (reported; its thread ends with the process).
pub fn stop_streams(
    streams: Vec<Stream>,
    level: usize,
    failures: &mut Vec<StreamFailure>,
) -> Vec<Ended> {
    // Those already ended failed during the data phase.
    let ended_early: Vec<bool> = streams.iter().map(Stream::finished).collect();
    for s in &streams {
        s.stop();
    }
    let wait_all = |limit: Duration| {
        let until = Instant::now() + limit;
        while Instant::now() < until && !streams.iter().all(Stream::finished) {
            std::thread::sleep(POLL * 5);
        }
    };
    wait_all(STOP_WAIT);
    let cut: Vec<bool> = streams.iter().map(|s| !s.finished()).collect();
    if cut.contains(&true) {
        for s in streams.iter().zip(&cut).filter(|(_, c)| **c) {
            s.0.cut();
        }
        wait_all(CUT_WAIT);
    }
    let mut ends = Vec::new();
    for ((s, early), was_cut) in streams.into_iter().zip(ended_early).zip(cut) {
        let phase = if early { Phase::Run } else { Phase::Stop };
        let finished = if !s.finished() {
            let waited = (STOP_WAIT + CUT_WAIT).as_secs();
            let detail = format!("did not end within {waited} s of the stop; left behind");
            failures.push(no_results(&s, level, &detail));
            None
        } else {
            match s.outcome().as_deref() {
                Some(Ok(done)) => match s.flow_failure(done) {
                    Some(why) => {
                        let detail = format!("its flow failed: {why}");
                        let failure = StreamFailure::new(
                            s.id,
                            &s.host,
                            level,
                            Phase::Run,
                            super::failures::classify_flow(&why),
                            &detail,
                        );
                        failures.push(failure);
                        None
                    }
                    None => Some(Finished::of(&s, done)),
                },
                Some(Err(e)) if was_cut => {
                    let waited = STOP_WAIT.as_secs();
                    let detail = format!("no results within {waited} s of the stop ({e})");
                    failures.push(no_results(&s, level, &detail));
                    None
                }
                Some(Err(e)) => {
                    failures.push(StreamFailure::from_error(s.id, &s.host, level, phase, e));
                    None
                }
                None => None,
            }
        };
        ends.push(Ended {
            id: s.id,
            host: s.host,
            finished,
        });
    }
    ends
}

/// A stream that gave no results after the stop.
fn no_results(s: &Stream, level: usize, detail: &str) -> StreamFailure {
    StreamFailure::new(s.id, &s.host, level, Phase::Stop, Reason::NoResults, detail)
}

/// Stop streams whose failure is already recorded (called off at the
/// set-up limit); bounded like `stop_streams`, results ignored.
pub fn dismiss(streams: Vec<Stream>) {
    let mut ignored = Vec::new();
    let _ = stop_streams(streams, 0, &mut ignored);
}
