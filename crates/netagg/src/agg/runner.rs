//! The synchronized aggregate run: every stream is a thread of this process
//! running one netperf test against its load generator's netserver, and
//! publishing its work count (and receive timeouts) in a shared `StopFlag`;
//! the coordinator reads all of them at the same instants (one clock, no
//! skew), adds streams level by level, and records the series with the SUT's
//! CPU and packet counters.

use super::failures::StreamFailure;
use super::launch::{self, LaunchSettings, Started, Stream, TestRequest};
use super::plan::{ramp, KindSpec};
use netperf_data::engine::flows;
use netperf_data::measure::aggregate;
use netperf_data::measure::cpu::CpuSampler;
use netperf_data::net::interface::{egress_interface, InterfaceCounters};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What to run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub hosts: Vec<String>,
    pub port: u16,
    pub kind: &'static KindSpec,
    pub burst: u32,
    pub max_streams: u32,
    /// Run one level of `max_streams` instead of the ramp.
    pub single_level: bool,
    pub level_duration: Duration,
    pub sample_interval: Duration,
    /// Stream set-ups in flight at once per load generator.
    pub setup_concurrency: usize,
    /// Seconds a stream of a kind that recovers loss waits for a response
    /// before it restarts its burst (netperf's `-- -e`); 0 for no recovery.
    pub loss_timeout: u32,
    /// A level's new streams to a load generator running our netserver run
    /// as the flows of one test (false: one test per stream, as
    /// runemomniaggdemo.sh runs them).
    pub shared_tests: bool,
}

/// One sampling instant.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sample {
    /// Seconds since the run started, and wall-clock seconds.
    pub t: f64,
    pub epoch: f64,
    /// Index of the level running at this instant.
    pub level: usize,
    /// Rate of each running stream over the interval ending here.
    pub stream_rates: Vec<f64>,
    /// Work units (transactions or bytes) and receive timeouts of each
    /// running stream over the interval ending here.
    pub stream_moved: Vec<u64>,
    pub stream_timeouts: Vec<u64>,
    pub aggregate: f64,
    /// Microseconds between reading the first and the last stream.
    pub spread_us: f64,
    /// SUT CPU utilization over the interval (percent of all CPUs), and
    /// its busiest CPU.
    pub cpu_util: f64,
    pub cpu_peak: f64,
    /// Packets per second through the SUT's interface, out and in.
    pub packets_out: f64,
    pub packets_in: f64,
}

/// A level of the ramp as it ran (times in seconds since the run started):
/// its new streams were set up from `setup_start`; `start` is when all of
/// them ran, and the level was measured from there to `end`, --duration
/// later.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LevelRun {
    /// Streams running in the level, and how many it asked for.
    pub streams: u32,
    pub requested: u32,
    /// The stream (its number over the run) and load generator behind each
    /// position of this level's samples' per-stream vectors.
    pub members: Vec<(usize, String)>,
    /// The one load generator of a `sync` level.
    pub host: Option<String>,
    pub setup_start: f64,
    pub start: f64,
    pub end: f64,
    /// Streams that had not shown any work when the window started.
    pub late: usize,
}

/// What the run tells its caller as it goes.
pub enum Progress<'a> {
    /// A level's streams run (its measured window starts); the streams
    /// that failed to start.
    LevelStarted(&'a LevelRun, &'a [StreamFailure]),
    /// A sample was taken.
    Sample(&'a Sample, &'a LevelRun),
}

/// Everything a run recorded.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    pub levels: Vec<LevelRun>,
    pub samples: Vec<Sample>,
    pub hosts: Vec<String>,
    /// The netserver port, and the most streams the plan runs on each host
    /// at once (for the hints of limit failures).
    pub port: u16,
    pub planned_per_host: Vec<usize>,
    /// Streams that failed, and why.
    pub failures: Vec<StreamFailure>,
    pub events: Vec<Event>,
    pub streams: Vec<StreamEnd>,
    /// Each stream's rate per sample, as its interim lines would show it:
    /// (stream, interval seconds, ending epoch, rate).
    pub stream_samples: Vec<(usize, f64, f64, f64)>,
    /// The SUT interfaces whose packets are counted.
    pub interfaces: Vec<String>,
    pub start_epoch: f64,
    /// Seconds between samples, as scheduled.
    pub sample_interval: f64,
    /// Whether the coordinator ran at a raised priority (`priority`).
    pub coordinator_raised: bool,
    /// The tests whose flows were streams (our netserver's many-flow
    /// tests), in the order they started.
    pub shared_tests: Vec<SharedTest>,
}

/// A test that carried several streams as its flows.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedTest {
    pub host: String,
    pub level: usize,
    /// Its streams (their numbers over the run), flow 0 first.
    pub streams: Vec<usize>,
    /// The threads its flows ran on, on netagg's side.
    pub threads: u32,
    /// Its final `-o all` line (None: it gave no results).
    pub final_line: Option<String>,
}

/// What happened during the run, for the runemomniaggdemo.sh-style log.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Started(f64),
    StreamStarted(String),
    Pausing { secs: u64, streams: u32, at: f64 },
    Resuming(f64),
    StartedBy(f64),
    Stopping(f64),
    Stopped(f64),
}

/// A stream as it ended: its load generator and, if it finished cleanly,
/// its final `-o all` line (what the seed's netperfs print at the end);
/// the level it was started for, and when (seconds since the run started)
/// it was set up and first did work (None: it never got there).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamEnd {
    pub host: String,
    pub final_line: Option<String>,
    /// Its load generator as the stream's netserver described it.
    pub remote: Option<std::sync::Arc<netperf_pages::context::HostFacts>>,
    pub level: usize,
    pub ready_s: Option<f64>,
    pub running_s: Option<f64>,
    /// Its flow in a shared test (None: a test of its own).
    pub flow: Option<u32>,
}

fn epoch_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// netperf's command line for one stream (so a stream is configured exactly
/// as `netperf` would configure it).
pub(super) fn stream_args(cfg: &RunConfig, host: &str) -> Vec<String> {
    let mut args: Vec<String> = [
        "-H",
        host,
        "-p",
        &cfg.port.to_string(),
        "-t",
        cfg.kind.test,
        "-l",
        "0",
        "-P",
        "0",
        "--",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(cfg.kind.test_options.iter().map(|s| s.to_string()));
    if cfg.burst > 0 {
        args.extend(["-b".to_string(), cfg.burst.to_string()]);
    }
    if cfg.kind.recovers_loss && cfg.loss_timeout > 0 {
        args.extend(["-e".to_string(), cfg.loss_timeout.to_string()]);
    }
    args
}

/// Units (bytes or transactions) to the kind's rate unit per second.
pub(super) fn rate(cfg: &RunConfig, units: u64, secs: f64) -> f64 {
    if secs <= 0.0 {
        return 0.0;
    }
    if cfg.kind.units.starts_with("10^6bits") {
        units as f64 * 8.0 / 1e6 / secs
    } else {
        units as f64 / secs
    }
}

/// The next sample of a level: the first instant of its schedule (every
/// `interval` from `t0`) after `now`, but never past `end`. A coordinator
/// that woke late skips the instants it missed rather than taking several
/// samples at once over near-zero intervals.
fn next_tick(
    t0: Instant,
    interval: Duration,
    tick: u32,
    now: Instant,
    end: Instant,
) -> (u32, Instant) {
    let behind = now.saturating_duration_since(t0).as_secs_f64() / interval.as_secs_f64();
    let tick = (tick + 1).max(behind.floor() as u32 + 1);
    ((tick), (t0 + interval * tick).min(end))
}

/// Stop `streams` and keep each one's final line (and each shared test's).
fn finish(
    streams: Vec<Stream>,
    level: usize,
    failures: &mut Vec<StreamFailure>,
    records: &mut [StreamEnd],
    shared: &mut [SharedTest],
) {
    for end in launch::stop_streams(streams, level, failures) {
        if let Some(finished) = end.finished {
            records[end.id].final_line = finished.final_line;
            records[end.id].remote = Some(finished.remote);
            if let Some(line) = finished.shared_line {
                if let Some(test) = shared
                    .iter_mut()
                    .find(|t| t.streams.first() == Some(&end.id))
                {
                    test.final_line = Some(line);
                }
            }
        }
    }
}

/// Whether the kind's streams can be the flows of one test: not `sync`'s
/// (one stream at a time, each level to another load generator).
fn shareable(cfg: &RunConfig) -> bool {
    cfg.shared_tests && cfg.kind.kind != super::plan::Kind::Sync
}

/// The threads of a shared test of `flows` flows when the largest level
/// runs `most` streams: for TCP bulk (`per_stream`) netperf's own default,
/// a thread per flow (up to THREAD_PER_FLOW_MAX flows); else the CPUs
/// shared by the flows, so that every shared test of the run together has
/// about one thread per CPU (each at least one, none more than the CPUs).
fn flow_threads(flows: usize, most: usize, per_stream: bool) -> u32 {
    if per_stream && flows as u32 <= flows::THREAD_PER_FLOW_MAX {
        return flows::threads_for(flows as u32, None, true);
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cpus * flows).div_ceil(most.max(1)).clamp(1, cpus) as u32
}

/// The stream counts of the run's levels.
fn level_plan(cfg: &RunConfig) -> Vec<u32> {
    // `sync` runs one stream at a time, to each load generator in turn, as
    // runemomniaggdemo.sh's run_cmd_serial does; the others ramp up.
    if cfg.kind.kind == super::plan::Kind::Sync {
        vec![1; cfg.hosts.len()]
    } else if cfg.single_level {
        vec![cfg.max_streams]
    } else {
        ramp(cfg.max_streams)
    }
}

/// The most streams the plan runs on each load generator at once (streams
/// go to the hosts in turn): what their netservers must allow.
pub fn planned_per_host(cfg: &RunConfig) -> Vec<usize> {
    let n = cfg.hosts.len().max(1);
    let most = level_plan(cfg).into_iter().max().unwrap_or(0) as usize;
    let serial = cfg.kind.kind == super::plan::Kind::Sync;
    (0..cfg.hosts.len())
        .map(|h| match serial {
            true => 1,
            false => (most + n - 1 - h) / n,
        })
        .collect()
}

/// Run the whole ramp, telling `progress` as levels start and samples come.
pub fn run(cfg: &RunConfig, mut progress: impl FnMut(Progress<'_>)) -> Recording {
    let mut run = Coordinator::begin(cfg);
    let plan = level_plan(cfg);
    for (index, &count) in plan.iter().enumerate() {
        let last_level = index + 1 == plan.len();
        run.run_level(index, count, last_level, &mut progress);
    }
    run.end(plan.len().saturating_sub(1))
}

/// Every interface the SUT reaches a load generator by; packets are
/// counted over all of them.
fn sut_interfaces(hosts: &[String]) -> Vec<String> {
    let mut interfaces: Vec<String> = Vec::new();
    for host in hosts {
        let name = netperf_data::net::resolve::resolve(
            host,
            Some(0),
            netperf_data::net::resolve::Family::Unspec,
            false,
        )
        .ok()
        .and_then(|addrs| addrs.first().copied())
        .and_then(|addr| egress_interface(&addr));
        if let Some(name) = name {
            if !interfaces.contains(&name) {
                interfaces.push(name);
            }
        }
    }
    interfaces
}

/// The run as the coordinator holds it from level to level: its clock,
/// the SUT's CPU and packet counters, the streams, and what is recorded.
struct Coordinator<'c> {
    cfg: &'c RunConfig,
    /// `sync`: one stream at a time, each level to the next load generator.
    serial: bool,
    start: Instant,
    start_epoch: f64,
    /// The coordinator's raised priority, given back when the run ends.
    raised: super::priority::Raised,
    settings: LaunchSettings,
    cpu: Option<CpuSampler>,
    interfaces: Vec<String>,
    /// Each interface's counters at the last sample.
    counters: Vec<InterfaceCounters>,
    streams: Vec<Stream>,
    called_off: Vec<Stream>,
    failures: Vec<StreamFailure>,
    records: Vec<StreamEnd>,
    levels: Vec<LevelRun>,
    samples: Vec<Sample>,
    events: Vec<Event>,
    stream_samples: Vec<(usize, f64, f64, f64)>,
    /// Load generators found to run a stock netserver (one data
    /// connection per test): their streams run one test each.
    stock: Vec<bool>,
    shared_tests: Vec<SharedTest>,
}

impl<'c> Coordinator<'c> {
    /// The run's start: the interfaces and CPU it measures, its clock, the
    /// coordinator's priority raised.
    fn begin(cfg: &'c RunConfig) -> Self {
        let interfaces = sut_interfaces(&cfg.hosts);
        let counters = interfaces
            .iter()
            .map(|n| InterfaceCounters::read(n))
            .collect();
        let cpu = CpuSampler::start(None).ok();
        let start = Instant::now();
        let start_epoch = epoch_now();
        let raised = super::priority::Raised::coordinator();
        let settings = LaunchSettings {
            hosts: cfg.hosts.clone(),
            setup_concurrency: cfg.setup_concurrency,
            stream_nice: raised.granted.then_some(raised.base),
        };
        Coordinator {
            cfg,
            serial: cfg.kind.kind == super::plan::Kind::Sync,
            start,
            start_epoch,
            raised,
            settings,
            cpu,
            interfaces,
            counters,
            streams: Vec::new(),
            called_off: Vec::new(),
            failures: Vec::new(),
            records: Vec::new(),
            levels: Vec::new(),
            samples: Vec::new(),
            events: vec![Event::Started(start_epoch)],
            stream_samples: Vec::new(),
            stock: vec![false; cfg.hosts.len()],
            shared_tests: Vec::new(),
        }
    }

    /// Seconds from the run's start to `at`.
    fn since_start(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.start).as_secs_f64()
    }

    /// One level: its streams started (a `sync` level's predecessor
    /// stopped first), then sampled over its window.
    fn run_level(
        &mut self,
        index: usize,
        count: u32,
        last_level: bool,
        progress: &mut impl FnMut(Progress<'_>),
    ) {
        if self.serial && index > 0 {
            let stopped = std::mem::take(&mut self.streams);
            finish(
                stopped,
                index - 1,
                &mut self.failures,
                &mut self.records,
                &mut self.shared_tests,
            );
        }
        let (mut level, first_failure, level_t0) = self.start_level(index, count);
        progress(Progress::LevelStarted(
            &level,
            &self.failures[first_failure..],
        ));
        self.events.push(if last_level {
            Event::StartedBy(epoch_now())
        } else {
            Event::Pausing {
                secs: self.cfg.level_duration.as_secs(),
                streams: self.streams.len() as u32,
                at: epoch_now(),
            }
        });
        self.set_baselines();
        self.sample_level(index, &level, level_t0, progress);
        level.streams = self.streams.len() as u32;
        self.levels.push(level);
        self.events.push(if last_level {
            Event::Stopping(epoch_now())
        } else {
            Event::Resuming(epoch_now())
        });
    }

    /// Start the level's new streams (up to `count`); gives the level as
    /// it starts, where its failures begin in `failures`, and when its
    /// window starts (all its streams run).
    fn start_level(&mut self, index: usize, count: u32) -> (LevelRun, usize, Instant) {
        let setup_start = self.since_start(Instant::now());
        let requests = self.test_requests(index, count);
        let mut started = launch::start_level(requests, index, &self.settings);
        self.run_refused_alone(&mut started, index);
        for s in &started.streams {
            let record = &mut self.records[s.id];
            record.ready_s = s
                .ready_at
                .map(|at| at.saturating_duration_since(self.start).as_secs_f64());
            record.running_s = s
                .running_at
                .map(|at| at.saturating_duration_since(self.start).as_secs_f64());
            record.flow = s.shared().map(|(flow, _)| flow);
        }
        self.note_shared_tests(&started.streams, index);
        let first_failure = self.failures.len();
        self.failures.extend(started.failures);
        self.called_off.extend(started.called_off);
        self.streams.extend(started.streams);
        let level_t0 = started.all_running;
        let level = LevelRun {
            streams: self.streams.len() as u32,
            requested: count,
            members: self
                .streams
                .iter()
                .map(|s| (s.id, s.host.clone()))
                .collect(),
            host: self
                .serial
                .then(|| self.cfg.hosts[index % self.cfg.hosts.len()].clone()),
            setup_start,
            start: self.since_start(level_t0),
            end: self.since_start(level_t0 + self.cfg.level_duration),
            late: started.late,
        };
        (level, first_failure, level_t0)
    }

    /// Shared tests a stock netserver refused: their hosts run a test per
    /// stream from now on, starting with these streams, whose start joins
    /// the level's.
    fn run_refused_alone(&mut self, started: &mut Started, index: usize) {
        let refused = std::mem::take(&mut started.needs_single);
        if refused.is_empty() {
            return;
        }
        let mut singles = Vec::new();
        for test in refused {
            if let Some(h) = self.cfg.hosts.iter().position(|h| *h == test.host) {
                self.stock[h] = true;
            }
            eprintln!(
                "netagg: {} runs a netserver that serves one data connection per test (a stock netserver?): its streams run a test each",
                test.host
            );
            singles.extend(
                test.streams
                    .iter()
                    .map(|&id| TestRequest::single(id, test.host.clone(), test.args.clone())),
            );
        }
        let again = launch::start_level(singles, index, &self.settings);
        started.streams.extend(again.streams);
        started.failures.extend(again.failures);
        started.called_off.extend(again.called_off);
        started.late += again.late;
        started.all_running = again.all_running;
    }

    /// The shared tests among `streams` (a level's new ones), by their
    /// first flow.
    fn note_shared_tests(&mut self, streams: &[Stream], index: usize) {
        for s in streams {
            match s.shared() {
                Some((0, threads)) => self.shared_tests.push(SharedTest {
                    host: s.host.clone(),
                    level: index,
                    streams: vec![s.id],
                    threads,
                    final_line: None,
                }),
                Some(_) => {
                    let test = self
                        .shared_tests
                        .iter_mut()
                        .rev()
                        .find(|t| t.host == s.host && t.level == index);
                    if let Some(test) = test {
                        test.streams.push(s.id);
                    }
                }
                None => {}
            }
        }
    }

    /// The level's new streams, each recorded as started on its load
    /// generator (in turn over the hosts; a `sync` level's own), as the
    /// tests that carry them: per load generator running our netserver,
    /// one shared test of them all; else one test each.
    fn test_requests(&mut self, index: usize, count: u32) -> Vec<TestRequest> {
        let cfg = self.cfg;
        let mut per_host: Vec<Vec<usize>> = vec![Vec::new(); cfg.hosts.len()];
        for _ in self.streams.len()..count as usize {
            let id = self.records.len();
            let turn = if self.serial { index } else { id };
            let h = turn % cfg.hosts.len();
            let host = cfg.hosts[h].clone();
            self.events.push(Event::StreamStarted(host.clone()));
            self.records.push(StreamEnd {
                host,
                final_line: None,
                remote: None,
                level: index,
                ready_s: None,
                running_s: None,
                flow: None,
            });
            per_host[h].push(id);
        }
        let most = level_plan(cfg).into_iter().max().unwrap_or(1).max(1) as usize;
        let mut requests = Vec::new();
        for (h, ids) in per_host.into_iter().enumerate() {
            let host = &cfg.hosts[h];
            let args = stream_args(cfg, host);
            if ids.len() > 1 && shareable(cfg) && !self.stock[h] {
                requests.push(TestRequest {
                    host: host.clone(),
                    args,
                    threads: flow_threads(ids.len(), most, cfg.kind.thread_per_stream),
                    streams: ids,
                });
            } else {
                requests.extend(
                    ids.into_iter()
                        .map(|id| TestRequest::single(id, host.clone(), args.clone())),
                );
            }
        }
        requests
    }

    /// The level's series starts here: the set-up time is not in it.
    fn set_baselines(&mut self) {
        for s in self.streams.iter_mut() {
            s.last_units = s.units();
            s.last_timeouts = s.timeouts();
        }
        let _ = self.cpu.as_mut().map(|c| c.restart());
        for before in self.counters.iter_mut() {
            *before = InterfaceCounters::read(&before.name);
        }
    }

    /// Samples at fixed instants of the level's schedule from `level_t0`,
    /// the last one at its end.
    fn sample_level(
        &mut self,
        index: usize,
        level: &LevelRun,
        level_t0: Instant,
        progress: &mut impl FnMut(Progress<'_>),
    ) {
        let interval = self.cfg.sample_interval;
        let level_end_at = level_t0 + self.cfg.level_duration;
        let mut last_sample = level_t0;
        let (mut tick, mut at) = (1u32, (level_t0 + interval).min(level_end_at));
        loop {
            std::thread::sleep(at.saturating_duration_since(Instant::now()));
            let sample = self.take_sample(index, &mut last_sample);
            progress(Progress::Sample(&sample, level));
            self.samples.push(sample);
            if at >= level_end_at {
                break;
            }
            (tick, at) = next_tick(level_t0, interval, tick, Instant::now(), level_end_at);
        }
    }

    /// Read every stream at once and the SUT's CPU and packets: the sample
    /// over the interval since `last_sample`, which moves to now.
    fn take_sample(&mut self, index: usize, last_sample: &mut Instant) -> Sample {
        let read_start = Instant::now();
        let units: Vec<u64> = self.streams.iter().map(Stream::units).collect();
        let read_end = Instant::now();
        let timeouts: Vec<u64> = self.streams.iter().map(Stream::timeouts).collect();
        let secs = read_start.duration_since(*last_sample).as_secs_f64();
        let stream_moved: Vec<u64> = self
            .streams
            .iter_mut()
            .zip(&units)
            .map(|(s, &u)| u.saturating_sub(std::mem::replace(&mut s.last_units, u)))
            .collect();
        let stream_timeouts: Vec<u64> = self
            .streams
            .iter_mut()
            .zip(&timeouts)
            .map(|(s, &t)| t.saturating_sub(std::mem::replace(&mut s.last_timeouts, t)))
            .collect();
        let stream_rates: Vec<f64> = stream_moved
            .iter()
            .map(|&m| rate(self.cfg, m, secs))
            .collect();
        let usage = self.cpu.as_mut().and_then(|c| {
            let u = c.stop().ok();
            let _ = c.restart();
            u
        });
        let (packets_out, packets_in) = self.packet_rates(secs);
        let ending = self.start_epoch + self.since_start(read_start);
        for (stream, r) in self.streams.iter().zip(&stream_rates) {
            self.stream_samples.push((stream.id, secs, ending, *r));
        }
        *last_sample = read_start;
        Sample {
            t: self.since_start(read_start),
            epoch: ending,
            level: index,
            // Every stream is read: the aggregate is always known.
            aggregate: aggregate::sum(stream_rates.iter().copied().map(Some)).unwrap_or(0.0),
            stream_rates,
            stream_moved,
            stream_timeouts,
            spread_us: read_end.duration_since(read_start).as_secs_f64() * 1e6,
            cpu_util: usage.as_ref().map_or(-1.0, |u| u.util),
            cpu_peak: usage.as_ref().map_or(-1.0, |u| u.peak_util),
            packets_out,
            packets_in,
        }
    }

    /// Packets per second out and in through the SUT's interfaces over the
    /// last `secs` (-1 when none is counted); the counters move to now.
    fn packet_rates(&mut self, secs: f64) -> (f64, f64) {
        if self.counters.is_empty() {
            return (-1.0, -1.0);
        }
        let (mut tx, mut rx) = (0u64, 0u64);
        for before in self.counters.iter_mut() {
            let now = InterfaceCounters::read(&before.name);
            let d = before.delta(&now);
            tx += d.tx_packets;
            rx += d.rx_packets;
            *before = now;
        }
        (tx as f64 / secs, rx as f64 / secs)
    }

    /// Stop the last level's streams (`last` its index) and those called
    /// off, and give what was recorded.
    fn end(mut self, last: usize) -> Recording {
        let streams = std::mem::take(&mut self.streams);
        finish(
            streams,
            last,
            &mut self.failures,
            &mut self.records,
            &mut self.shared_tests,
        );
        launch::dismiss(std::mem::take(&mut self.called_off));
        self.events.push(Event::Stopped(epoch_now()));
        let cfg = self.cfg;
        Recording {
            levels: self.levels,
            samples: self.samples,
            hosts: cfg.hosts.clone(),
            port: cfg.port,
            planned_per_host: planned_per_host(cfg),
            failures: self.failures,
            events: self.events,
            streams: self.records,
            stream_samples: self.stream_samples,
            interfaces: self.interfaces,
            start_epoch: self.start_epoch,
            sample_interval: cfg.sample_interval.as_secs_f64(),
            coordinator_raised: self.raised.granted,
            shared_tests: self.shared_tests,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bulk streams sharing a test get a thread each (netperf's own
    /// default); request/response streams share the CPUs.
    #[test]
    fn shared_bulk_tests_run_a_thread_per_stream() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        assert_eq!(flow_threads(8, 16, true), 8);
        assert_eq!(
            flow_threads(8, 16, false),
            cpus.div_ceil(2).max(1).min(cpus)
        );
        let past = flows::THREAD_PER_FLOW_MAX as usize + 1;
        assert_eq!(flow_threads(past, past, true), cpus);
        assert!(super::super::plan::KINDS
            .iter()
            .all(|k| k.thread_per_stream == (k.test == "TCP_STREAM" || k.test == "TCP_MAERTS")));
    }

    #[test]
    fn a_late_coordinator_skips_the_sampling_instants_it_missed() {
        let t0 = Instant::now();
        let second = Duration::from_secs(1);
        let end = t0 + Duration::from_secs(10);
        // On time: the next instant.
        assert_eq!(
            next_tick(t0, second, 1, t0 + second, end),
            (2, t0 + 2 * second)
        );
        // 3.5 s late after the first: the next is at 5 s, not 2, 3 and 4.
        let (tick, at) = next_tick(t0, second, 1, t0 + Duration::from_millis(4500), end);
        assert_eq!((tick, at), (5, t0 + 5 * second));
        // Never past the end.
        assert_eq!(
            next_tick(t0, second, 9, t0 + Duration::from_millis(9999), end).1,
            end
        );
    }

    #[test]
    fn each_host_must_allow_its_share_of_the_largest_level() {
        let mut cfg = RunConfig {
            hosts: vec!["a".into(), "b".into(), "c".into()],
            port: 12865,
            kind: super::super::plan::spec_of(super::super::plan::Kind::Tps),
            burst: 1,
            max_streams: 1024,
            single_level: false,
            level_duration: Duration::from_secs(10),
            sample_interval: Duration::from_secs(1),
            setup_concurrency: 32,
            loss_timeout: 0,
            shared_tests: true,
        };
        assert_eq!(planned_per_host(&cfg), [342, 341, 341]);
        cfg.kind = super::super::plan::spec_of(super::super::plan::Kind::Sync);
        assert_eq!(planned_per_host(&cfg), [1, 1, 1]);
    }
}
