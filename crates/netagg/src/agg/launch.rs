//! Starting and stopping netagg's streams. Every stream is a thread running
//! one netperf test. A level's new streams set up in parallel (control
//! connection, request, netserver's answer), at most `setup_concurrency`
//! at once per load generator, then wait at the level's start gate; the
//! coordinator opens it once every stream is set up or has failed (or the
//! set-up limit passed), and the level's measured window starts when all of
//! them move. Stopping sets every flag at once, waits a bounded time for the
//! results, then cuts the control connections of the streams still waiting.

use super::failures::{Phase, Reason, StreamFailure};
use netperf_client::cli::{parse_netperf, Invocation};
use netperf_client::control::client::{self, ClientError, RunOptions};
use netperf_client::control::request::StartHook;
use netperf_data::engine::stop_flag::StopFlag;
use netperf_data::spec::TestSpec;
use std::net::TcpStream;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long one stream's set-up (connect, request, netserver's answer) may
/// take once it has its turn.
const SETUP_WAIT: Duration = Duration::from_secs(10);
/// How long a level's set-up may take; streams not set up by then are
/// called off. Below our netserver's 60 s wait for a data connection, so
/// that the streams set up first are still awaited when the gate opens.
pub const SETUP_LIMIT: Duration = Duration::from_secs(30);
/// How long after the gate opens every stream has to show its first work.
const RUN_WAIT: Duration = Duration::from_secs(5);
/// How long a stop waits for the results before cutting the control
/// connections of the streams still waiting for them.
const STOP_WAIT: Duration = Duration::from_secs(10);
/// How long a cut stream has to end before it is left behind.
const CUT_WAIT: Duration = Duration::from_secs(2);
/// How often the coordinator looks at the streams while it waits for them
/// to move or end.
const POLL: Duration = Duration::from_millis(2);
/// How often it looks for slow set-ups while it waits for the others.
const LOOK_EVERY: Duration = Duration::from_millis(500);

/// A stream to start: its number over the run, load generator, and the
/// netperf command line that configures it.
#[derive(Debug, Clone)]
pub struct StreamRequest {
    pub id: usize,
    pub host: String,
    pub args: Vec<String>,
}

/// A stream as the coordinator holds it.
pub struct Stream {
    pub id: usize,
    pub host: String,
    pub flag: StopFlag,
    /// The units and receive timeouts read at the last sample.
    pub last_units: u64,
    pub last_timeouts: u64,
    /// When it was set up (at the gate), and first seen doing work.
    pub ready_at: Option<Instant>,
    pub running_at: Option<Instant>,
    thread: Option<JoinHandle<Result<Finished, ClientError>>>,
    /// A second handle on its control connection, to cut it.
    control: Arc<Mutex<Option<TcpStream>>>,
}

impl Stream {
    fn cut(&self) {
        if let Some(c) = lock(&self.control).as_ref() {
            let _ = c.shutdown(std::net::Shutdown::Both);
        }
    }

    fn finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// The thread's result, once it has finished (None: never ran).
    fn join(&mut self) -> Option<Result<Finished, ClientError>> {
        let thread = self.thread.take()?;
        Some(
            thread
                .join()
                .unwrap_or_else(|_| Err(ClientError::Setup("the stream's thread panicked".into()))),
        )
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where a stream of a starting level is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Slot {
    /// Waiting for a set-up turn, or setting up.
    SettingUp,
    /// Set up; waiting at the gate since then.
    Ready(Instant),
    /// Its thread ended before the gate opened (an error).
    Ended,
    /// Given up by the coordinator: it must not start.
    CalledOff(Why),
}

/// Why the coordinator gave a stream up.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Why {
    /// Its set-up took longer than SETUP_WAIT.
    Slow,
    /// The level's SETUP_LIMIT passed before it had a turn or was done.
    Limit,
}

impl Why {
    fn detail(self) -> String {
        match self {
            Why::Slow => format!("no answer within {} s of its set-up", SETUP_WAIT.as_secs()),
            Why::Limit => format!(
                "not set up within the {} s set-up limit of a level",
                SETUP_LIMIT.as_secs()
            ),
        }
    }
}

struct GateState {
    slots: Vec<Slot>,
    /// When each stream got its set-up turn.
    turn_taken: Vec<Option<Instant>>,
    open: bool,
    /// Set-ups in flight, per load generator.
    in_setup: Vec<usize>,
}

/// One level's start: the streams' slots, the set-up turns per host and
/// the gate. Each condition variable has its own waiters, so one arrival
/// wakes only the coordinator and one finished set-up only its host's next.
struct Gate {
    state: Mutex<GateState>,
    /// The coordinator waits here for arrivals and ends.
    arrived: Condvar,
    /// Streams wait here for the gate.
    opened: Condvar,
    /// Streams of each host wait here for a set-up turn.
    turns: Vec<Condvar>,
    concurrency: usize,
    deadline: Instant,
}

impl Gate {
    fn set(&self, slot: usize, to: Slot) {
        let mut st = lock(&self.state);
        if st.slots[slot] == Slot::SettingUp {
            st.slots[slot] = to;
        }
        drop(st);
        self.arrived.notify_one();
    }

    /// Wait for a set-up turn on `host`; false when called off or too late.
    fn take_turn(&self, slot: usize, host: usize) -> bool {
        let mut st = lock(&self.state);
        loop {
            if matches!(st.slots[slot], Slot::CalledOff(_)) {
                return false;
            }
            if st.in_setup[host] < self.concurrency {
                st.in_setup[host] += 1;
                st.turn_taken[slot] = Some(Instant::now());
                return true;
            }
            // The coordinator calls the stream off at the deadline; this
            // bound only keeps the wait finite if it never does.
            let left = (self.deadline + RUN_WAIT).saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            st = self.turns[host]
                .wait_timeout(st, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn give_back_turn(&self, host: usize) {
        let mut st = lock(&self.state);
        st.in_setup[host] = st.in_setup[host].saturating_sub(1);
        drop(st);
        self.turns[host].notify_one();
    }

    /// At the gate: say so, and wait until it opens (true) or the stream is
    /// called off (false). Bounded: the coordinator decides by the deadline.
    fn arrive_and_wait(&self, slot: usize) -> bool {
        let mut st = lock(&self.state);
        if st.slots[slot] != Slot::SettingUp {
            return false;
        }
        st.slots[slot] = Slot::Ready(Instant::now());
        self.arrived.notify_one();
        let until = self.deadline + RUN_WAIT;
        while !st.open && !matches!(st.slots[slot], Slot::CalledOff(_)) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            st = self
                .opened
                .wait_timeout(st, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        st.open && !matches!(st.slots[slot], Slot::CalledOff(_))
    }
}

/// A set-up turn, given back once, whichever comes first: the stream
/// reaching the gate, or its thread ending.
struct Turn {
    gate: Arc<Gate>,
    host: usize,
    held: Mutex<bool>,
}

impl Turn {
    fn give_back(&self) {
        let mut held = lock(&self.held);
        if *held {
            *held = false;
            self.gate.give_back_turn(self.host);
        }
    }
}

/// Marks the slot ended when the stream's thread ends, however it ends.
struct EndGuard {
    gate: Arc<Gate>,
    slot: usize,
    turn: Arc<Turn>,
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        self.turn.give_back();
        self.gate.set(self.slot, Slot::Ended);
    }
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

/// The thread of one stream: its turn, its control connection, the
/// request, the gate, the data phase; the final `-o all` line.
fn stream_thread(
    args: &[String],
    gate: &Arc<Gate>,
    slot: usize,
    turn: Arc<Turn>,
    flag: StopFlag,
    control: &Mutex<Option<TcpStream>>,
) -> Result<Finished, ClientError> {
    let config = match parse_netperf(args) {
        Ok(Invocation::Run(c)) => c,
        Ok(_) => return Err(ClientError::Setup(format!("bad stream arguments {args:?}"))),
        Err(e) => return Err(ClientError::Setup(e.to_string())),
    };
    let mut spec = config
        .test_spec()
        .map_err(|e| ClientError::Setup(e.to_string()))?;
    // The report names each load generator's kernel, CPU and driver.
    spec.extension.system_facts = true;
    if !gate.take_turn(slot, turn.host) {
        return Err(ClientError::Setup(format!(
            "called off: not set up within the {} s set-up limit",
            SETUP_LIMIT.as_secs()
        )));
    }
    *lock(&turn.held) = true;
    let mut chan = client::establish_within(&config.global, SETUP_WAIT)?;
    *lock(control) = chan.shutdown_handle().ok();
    let mut run = RunOptions::from_global(&config.global);
    run.extra_flags |=
        netperf_wire::omni::flag::WANT_IFNAME | netperf_wire::omni::flag::WANT_DRVINFO;
    run.shared_stop = Some(flag);
    let at_gate = gate.clone();
    let hook_turn = turn.clone();
    run.start_hook = Some(StartHook(Arc::new(move || {
        hook_turn.give_back();
        at_gate.arrive_and_wait(slot)
    })));
    let result = client::run_iteration(Some(&mut chan), &spec, &run, false);
    chan.shutdown();
    let it = result?;
    Ok(final_line(&config, &spec, &it))
}

/// The stream's `-o all` values line, as `netperf -P 0 ... -- -o all` ends,
/// and its load generator's facts from the same record.
fn final_line(
    config: &netperf_client::cli::config::Config,
    spec: &TestSpec,
    it: &client::Iteration,
) -> Finished {
    use netperf::omni::{record, render_record, Measured, OmniOutput};
    use netperf_client::report::omni::{select, Style};
    let output = OmniOutput {
        style: Style::Csv,
        selection: select::all(),
    };
    let measured = Measured {
        last: it,
        iterations: 1,
        averaged: None,
        widths: None,
    };
    let record = record(&output.selection, config, spec, &measured);
    Finished {
        final_line: render_record(&output, config, spec, &measured, &record),
        remote: netperf_pages::context::HostFacts::of_end(
            "load generator",
            &config.global.host,
            &record.remote,
        )
        .with_cpu_count(it.remote_system.as_ref()),
    }
}

/// Start a level's new streams and return once all of them run or failed.
pub fn start_level(
    requests: Vec<StreamRequest>,
    level: usize,
    settings: &LaunchSettings,
) -> Started {
    let gate = Arc::new(Gate::new(requests.len(), settings));
    let mut failures = Vec::new();
    let mut pending: Vec<(usize, Stream)> = Vec::new();
    for (slot, request) in requests.into_iter().enumerate() {
        match spawn_stream(&gate, slot, request, settings, level) {
            Ok(stream) => pending.push((slot, stream)),
            Err(failure) => failures.push(failure),
        }
    }
    let slots = gate.open_when_set_up(&pending);
    let (streams, called_off) = sort_by_slot(pending, &slots, level, &mut failures);
    let (streams, late, mut run_failures) = wait_until_running(streams, level);
    failures.append(&mut run_failures);
    Started {
        streams,
        failures,
        called_off,
        late,
        all_running: Instant::now(),
    }
}

impl Gate {
    /// A closed gate for `streams` set-ups spread over `settings`' hosts;
    /// the level's set-up limit runs from now.
    fn new(streams: usize, settings: &LaunchSettings) -> Gate {
        let setup_start = Instant::now();
        Gate {
            state: Mutex::new(GateState {
                slots: vec![Slot::SettingUp; streams],
                turn_taken: vec![None; streams],
                open: false,
                in_setup: vec![0; settings.hosts.len()],
            }),
            arrived: Condvar::new(),
            opened: Condvar::new(),
            turns: settings.hosts.iter().map(|_| Condvar::new()).collect(),
            concurrency: settings.setup_concurrency.max(1),
            deadline: setup_start + SETUP_LIMIT,
        }
    }

    /// Every stream set up or ended, or the limit: then the gate opens. A
    /// set-up that takes too long is given up and its connection cut, so
    /// that its turn goes to the next stream. Gives the slots as the gate
    /// opened.
    fn open_when_set_up(&self, pending: &[(usize, Stream)]) -> Vec<Slot> {
        let slots = {
            let mut st = lock(&self.state);
            loop {
                if !st.slots.contains(&Slot::SettingUp) {
                    break;
                }
                let now = Instant::now();
                if now >= self.deadline {
                    for s in st.slots.iter_mut() {
                        if *s == Slot::SettingUp {
                            *s = Slot::CalledOff(Why::Limit);
                        }
                    }
                    break;
                }
                for (slot, stream) in pending {
                    let slow =
                        st.turn_taken[*slot].is_some_and(|t| now.duration_since(t) > SETUP_WAIT);
                    if slow && st.slots[*slot] == Slot::SettingUp {
                        st.slots[*slot] = Slot::CalledOff(Why::Slow);
                        stream.cut();
                    }
                }
                let left = self.deadline.saturating_duration_since(now).min(LOOK_EVERY);
                st = self
                    .arrived
                    .wait_timeout(st, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            st.open = true;
            st.slots.clone()
        };
        self.opened.notify_all();
        for cv in &self.turns {
            cv.notify_all();
        }
        slots
    }
}

/// Spawn the thread of the stream `request` asks for, in `slot` of the
/// gate; a thread that cannot be started is the stream's failure.
fn spawn_stream(
    gate: &Arc<Gate>,
    slot: usize,
    request: StreamRequest,
    settings: &LaunchSettings,
    level: usize,
) -> Result<Stream, StreamFailure> {
    let host_index = settings
        .hosts
        .iter()
        .position(|h| *h == request.host)
        .unwrap_or(0);
    let flag = StopFlag::new();
    let control = Arc::new(Mutex::new(None));
    let turn = Arc::new(Turn {
        gate: gate.clone(),
        host: host_index,
        held: Mutex::new(false),
    });
    let stream_nice = settings.stream_nice;
    let spawned = {
        let (gate, flag, control, args) = (
            gate.clone(),
            flag.clone(),
            control.clone(),
            request.args.clone(),
        );
        std::thread::Builder::new()
            .name(format!("stream-{}", request.id))
            .spawn(move || {
                if let Some(nice) = stream_nice {
                    super::priority::stream_thread_at(nice);
                }
                let _end = EndGuard {
                    gate: gate.clone(),
                    slot,
                    turn: turn.clone(),
                };
                stream_thread(&args, &gate, slot, turn, flag, &control)
            })
    };
    match spawned {
        Ok(thread) => Ok(Stream {
            id: request.id,
            host: request.host,
            flag,
            last_units: 0,
            last_timeouts: 0,
            ready_at: None,
            running_at: None,
            thread: Some(thread),
            control,
        }),
        Err(e) => {
            gate.set(slot, Slot::Ended);
            let reason = if e.kind() == std::io::ErrorKind::WouldBlock {
                Reason::Threads
            } else {
                Reason::Other
            };
            Err(StreamFailure::new(
                request.id,
                &request.host,
                level,
                Phase::Setup,
                reason,
                &format!("cannot start a thread: {e}"),
            ))
        }
    }
}

/// The streams by where the gate found them: those set up go on (the
/// first list); those called off are stopped and cut, to be dismissed
/// with the others (the second); those that ended are joined. Each one
/// that does not go on adds its failure.
fn sort_by_slot(
    pending: Vec<(usize, Stream)>,
    slots: &[Slot],
    level: usize,
    failures: &mut Vec<StreamFailure>,
) -> (Vec<Stream>, Vec<Stream>) {
    let mut streams = Vec::new();
    let mut called_off = Vec::new();
    for (slot, mut stream) in pending {
        match slots[slot] {
            Slot::Ready(at) => {
                stream.ready_at = Some(at);
                streams.push(stream);
            }
            Slot::CalledOff(why) => {
                stream.flag.set();
                stream.cut();
                failures.push(StreamFailure::new(
                    stream.id,
                    &stream.host,
                    level,
                    Phase::Setup,
                    Reason::Timeout,
                    &why.detail(),
                ));
                called_off.push(stream);
            }
            Slot::SettingUp | Slot::Ended => {
                let result = stream.join();
                failures.push(match result {
                    Some(Err(e)) => {
                        StreamFailure::from_error(stream.id, &stream.host, level, Phase::Setup, &e)
                    }
                    _ => StreamFailure::new(
                        stream.id,
                        &stream.host,
                        level,
                        Phase::Setup,
                        Reason::Other,
                        "ended before its data phase",
                    ),
                });
            }
        }
    }
    (streams, called_off)
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
            if s.flag.units() > 0 {
                s.running_at = Some(now);
            } else {
                waiting += 1;
            }
        }
        let ended: Vec<usize> = (0..streams.len())
            .filter(|&i| streams[i].running_at.is_none() && streams[i].finished())
            .collect();
        for &i in ended.iter().rev() {
            let mut s = streams.remove(i);
            let detail = match s.join() {
                Some(Err(e)) => {
                    failures.push(StreamFailure::from_error(
                        s.id,
                        &s.host,
                        level,
                        Phase::Run,
                        &e,
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

/// A stream's results: its final `-o all` line and what it learned of its
/// load generator (our netserver's facts; a stock one's are unknown).
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    pub final_line: String,
    pub remote: netperf_pages::context::HostFacts,
}

/// Stop `streams` at once and collect how each ended; `level` names the
/// level in failures. Bounded: STOP_WAIT for the results, then the waiting
/// streams' control connections are cut, CUT_WAIT more, and a stream still
/// not ended is left behind (reported; its thread ends with the process).
pub fn stop_streams(
    streams: Vec<Stream>,
    level: usize,
    failures: &mut Vec<StreamFailure>,
) -> Vec<Ended> {
    // Those already ended failed during the data phase.
    let ended_early: Vec<bool> = streams.iter().map(Stream::finished).collect();
    for s in &streams {
        s.flag.set();
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
    for ((mut s, early), was_cut) in streams.into_iter().zip(ended_early).zip(cut) {
        let phase = if early { Phase::Run } else { Phase::Stop };
        let finished = if !s.finished() {
            let waited = (STOP_WAIT + CUT_WAIT).as_secs();
            let detail = format!("did not end within {waited} s of the stop; left behind");
            failures.push(no_results(&s, level, &detail));
            None
        } else {
            match s.join() {
                Some(Ok(finished)) => Some(finished),
                Some(Err(e)) if was_cut => {
                    let waited = STOP_WAIT.as_secs();
                    let detail = format!("no results within {waited} s of the stop ({e})");
                    failures.push(no_results(&s, level, &detail));
                    None
                }
                Some(Err(e)) => {
                    failures.push(StreamFailure::from_error(s.id, &s.host, level, phase, &e));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(slots: usize, concurrency: usize) -> Arc<Gate> {
        Arc::new(Gate {
            state: Mutex::new(GateState {
                slots: vec![Slot::SettingUp; slots],
                turn_taken: vec![None; slots],
                open: false,
                in_setup: vec![0],
            }),
            arrived: Condvar::new(),
            opened: Condvar::new(),
            turns: vec![Condvar::new()],
            concurrency,
            deadline: Instant::now() + SETUP_LIMIT,
        })
    }

    #[test]
    fn set_ups_take_turns_and_wait_at_the_gate() {
        let g = gate(4, 2);
        assert!(g.take_turn(0, 0) && g.take_turn(1, 0));
        assert_eq!(lock(&g.state).in_setup[0], 2);
        // The third waits for a turn until one is given back.
        let third = {
            let g = g.clone();
            std::thread::spawn(move || g.take_turn(2, 0) && g.arrive_and_wait(2))
        };
        // Called off while waiting at the gate: it does not start.
        let fourth = {
            let g = g.clone();
            std::thread::spawn(move || g.arrive_and_wait(3))
        };
        g.give_back_turn(0);
        for _ in 0..5000 {
            let st = lock(&g.state);
            if matches!(st.slots[2], Slot::Ready(_)) && matches!(st.slots[3], Slot::Ready(_)) {
                break;
            }
            drop(st);
            std::thread::sleep(Duration::from_millis(1));
        }
        {
            let mut st = lock(&g.state);
            assert!(matches!(st.slots[2], Slot::Ready(_)), "{:?}", st.slots);
            st.slots[3] = Slot::CalledOff(Why::Slow);
            st.open = true;
        }
        g.opened.notify_all();
        assert!(third.join().unwrap(), "the gate opened");
        assert!(!fourth.join().unwrap(), "called off");
        // A stream called off before its turn never takes one.
        let g = gate(1, 1);
        lock(&g.state).slots[0] = Slot::CalledOff(Why::Limit);
        assert!(!g.take_turn(0, 0));
    }
}
