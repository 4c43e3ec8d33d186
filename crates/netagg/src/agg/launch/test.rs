//! One netperf test as netagg runs it: a thread that sets the test up
//! (its turn, control connection, request, the gate), runs its data phase
//! until its stop flag, and gives its final `-o all` line. A test carries
//! one stream, or, with our netserver, many: the flows of one many-flow
//! test (`-- --flows N`), each flow's counts on the test's board.

use super::gate::{EndGuard, Gate, Turn};
use super::{lock, SETUP_LIMIT, SETUP_WAIT};
use netperf_client::cli::config::Config;
use netperf_client::cli::{parse_netperf, Invocation};
use netperf_client::control::client::{self, ClientError, RunOptions};
use netperf_client::control::request::StartHook;
use netperf_data::engine::flows::{FlowBoard, FlowsReport};
use netperf_data::engine::stop_flag::StopFlag;
use netperf_data::spec::TestSpec;
use std::net::TcpStream;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

/// What a test gave when it ended well.
#[derive(Debug, Clone)]
pub struct TestResult {
    /// Its `-o all` values line, as `netperf -P 0 ... -- -o all` ends.
    pub final_line: String,
    /// Its load generator as its netserver described it.
    pub remote: Arc<netperf_pages::context::HostFacts>,
    /// What each flow did (a shared test).
    pub flows: Option<FlowsReport>,
}

/// How a test ended: its result or its error, read by every stream it
/// carries.
pub type Outcome = Arc<Result<TestResult, ClientError>>;

/// A started test: its stop flag, its flows' board (a shared test), a
/// second handle on its control connection (to cut it), and its thread.
pub struct Test {
    pub flag: StopFlag,
    pub board: Option<Arc<FlowBoard>>,
    /// The threads its flows run on (a shared test).
    pub threads: u32,
    control: Mutex<Option<TcpStream>>,
    thread: Mutex<Option<JoinHandle<Result<TestResult, ClientError>>>>,
    outcome: OnceLock<Outcome>,
}

impl Test {
    /// Cuts its control connection: a test waiting on netserver ends.
    pub fn cut(&self) {
        if let Some(c) = lock(&self.control).as_ref() {
            let _ = c.shutdown(std::net::Shutdown::Both);
        }
    }

    pub fn finished(&self) -> bool {
        lock(&self.thread).as_ref().is_none_or(|t| t.is_finished())
    }

    /// Its outcome, once its thread has ended (None: it never ran). The
    /// first caller joins the thread; every caller gets the same outcome.
    pub fn outcome(&self) -> Option<Outcome> {
        if let Some(done) = self.outcome.get() {
            return Some(done.clone());
        }
        let thread = lock(&self.thread).take()?;
        let result = thread
            .join()
            .unwrap_or_else(|_| Err(ClientError::Setup("the test's thread panicked".into())));
        Some(self.outcome.get_or_init(|| Arc::new(result)).clone())
    }
}

/// What a test thread needs of its level's start.
pub struct Seat {
    pub gate: Arc<Gate>,
    pub slot: usize,
    pub turn: Arc<Turn>,
    /// The nice the thread goes back to (the coordinator runs raised).
    pub nice: Option<i32>,
}

/// Starts the thread of a test configured by `args`; `flows` > 1 makes it
/// a shared test of that many flows on `threads` threads.
pub fn spawn(
    name: String,
    args: Vec<String>,
    flows: u32,
    threads: u32,
    seat: Seat,
) -> std::io::Result<Arc<Test>> {
    let board = (flows > 1).then(|| Arc::new(FlowBoard::new(flows, threads)));
    let test = Arc::new(Test {
        flag: StopFlag::new(),
        board,
        threads,
        control: Mutex::new(None),
        thread: Mutex::new(None),
        outcome: OnceLock::new(),
    });
    let mine = test.clone();
    let thread = std::thread::Builder::new().name(name).spawn(move || {
        if let Some(nice) = seat.nice {
            super::super::priority::stream_thread_at(nice);
        }
        let _end = EndGuard {
            gate: seat.gate.clone(),
            slot: seat.slot,
            turn: seat.turn.clone(),
        };
        run(&args, &seat, &mine)
    })?;
    *lock(&test.thread) = Some(thread);
    Ok(test)
}

/// The test's life: its turn, its control connection, the request, the
/// gate, the data phase; its final line.
fn run(args: &[String], seat: &Seat, test: &Test) -> Result<TestResult, ClientError> {
    let (config, mut spec) = parse(args)?;
    // The report names each load generator's kernel, CPU and driver.
    spec.extension.system_facts = true;
    if !seat.gate.take_turn(seat.slot, seat.turn.host) {
        return Err(ClientError::Setup(format!(
            "called off: not set up within the {} s set-up limit",
            SETUP_LIMIT.as_secs()
        )));
    }
    *lock(&seat.turn.held) = true;
    let mut chan = client::establish_within(&config.global, SETUP_WAIT)?;
    *lock(&test.control) = chan.shutdown_handle().ok();
    let mut run = RunOptions::from_global(&config.global);
    run.extra_flags |=
        netperf_wire::omni::flag::WANT_IFNAME | netperf_wire::omni::flag::WANT_DRVINFO;
    run.shared_stop = Some(test.flag.clone());
    run.flow_board = test.board.clone();
    let (at_gate, hook_turn, slot) = (seat.gate.clone(), seat.turn.clone(), seat.slot);
    run.start_hook = Some(StartHook(Arc::new(move || {
        hook_turn.give_back();
        at_gate.arrive_and_wait(slot)
    })));
    let result = client::run_iteration(Some(&mut chan), &spec, &run, false);
    chan.shutdown();
    let mut it = result?;
    let (final_line, remote) = final_line(&config, &spec, &it);
    let remote = Arc::new(remote);
    Ok(TestResult {
        final_line,
        remote,
        flows: it.flows.take(),
    })
}

/// A test's netperf command line (no program name) as its options and its
/// TestSpec: every test netagg runs in-process starts here.
pub fn parse(args: &[String]) -> Result<(Config, TestSpec), ClientError> {
    let config = match parse_netperf(args) {
        Ok(Invocation::Run(c)) => c,
        Ok(_) => return Err(ClientError::Setup(format!("bad test arguments {args:?}"))),
        Err(e) => return Err(ClientError::Setup(e.to_string())),
    };
    let spec = config
        .test_spec()
        .map_err(|e| ClientError::Setup(e.to_string()))?;
    Ok((config, spec))
}

/// The test's `-o all` values line, and its load generator's facts from
/// the same record.
fn final_line(
    config: &Config,
    spec: &TestSpec,
    it: &client::Iteration,
) -> (String, netperf_pages::context::HostFacts) {
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
    let remote = netperf_pages::context::HostFacts::of_end(
        "load generator",
        &config.global.host,
        &record.remote,
    )
    .with_cpu_count(it.remote_system.as_ref());
    (
        render_record(&output, config, spec, &measured, &record),
        remote,
    )
}
