//! The synchronized aggregate run: every stream is a thread of this process
//! running one netperf test against its load generator's netserver, and
//! publishing its work count (and receive timeouts) in a shared `StopFlag`;
//! the coordinator reads all of them at the same instants (one clock, no
//! skew), adds streams level by level, and records the series with the SUT's
//! CPU and packet counters.

use super::failures::StreamFailure;
use super::launch::{self, LaunchSettings, Stream, StreamRequest};
use super::plan::{ramp, KindSpec};
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
    pub remote: Option<netperf_pages::context::HostFacts>,
    pub level: usize,
    pub ready_s: Option<f64>,
    pub running_s: Option<f64>,
}

fn epoch_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// netperf's command line for one stream (so a stream is configured exactly
/// as `netperf` would configure it).
fn stream_args(cfg: &RunConfig, host: &str) -> Vec<String> {
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
fn rate(cfg: &RunConfig, units: u64, secs: f64) -> f64 {
    if secs <= 0.0 {
        return 0.0;
    }
    if cfg.kind.units.starts_with("10^6bits") {
        units as f64 * 8.0 / 1e6 / secs
    } else {
        units as f64 / secs
    }
}

/// One trial of the burst search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BurstTrial {
    pub burst: u32,
    pub rate: f64,
}

/// find_max_burst.sh's search: one stream to the first load generator, the
/// burst doubling from 1 while the transaction rate still rises; returns
/// every trial and the best burst (the last one that raised the rate).
pub fn search_burst(cfg: &RunConfig, trial: Duration) -> (Vec<BurstTrial>, u32) {
    const MAX_BURST: u32 = 1 << 16;
    let settings = LaunchSettings {
        hosts: vec![cfg.hosts[0].clone()],
        setup_concurrency: 1,
        stream_nice: None,
    };
    let mut trials: Vec<BurstTrial> = Vec::new();
    let mut burst = 1;
    while burst <= MAX_BURST {
        let one = RunConfig {
            burst,
            ..cfg.clone()
        };
        let request = StreamRequest {
            id: 0,
            host: cfg.hosts[0].clone(),
            args: stream_args(&one, &cfg.hosts[0]),
        };
        let started = launch::start_level(vec![request], 0, &settings);
        launch::dismiss(started.called_off);
        let Some(stream) = started.streams.into_iter().next() else {
            break;
        };
        // Leave the connection set-up out of the measured time.
        std::thread::sleep(Duration::from_millis(200));
        let (u0, t0) = (stream.flag.units(), Instant::now());
        std::thread::sleep(trial);
        let (u1, t1) = (stream.flag.units(), Instant::now());
        let mut failures = Vec::new();
        let ended = launch::stop_streams(vec![stream], 0, &mut failures);
        let ok = failures.is_empty() && ended.iter().all(|e| e.finished.is_some());
        let rate = rate(
            cfg,
            u1.saturating_sub(u0),
            t1.duration_since(t0).as_secs_f64(),
        );
        let rising = trials.last().is_none_or(|last| rate > last.rate);
        trials.push(BurstTrial { burst, rate });
        if !ok || !rising {
            break;
        }
        burst *= 2;
    }
    let best = trials
        .windows(2)
        .take_while(|w| w[1].rate > w[0].rate)
        .last()
        .map_or(trials.first().map_or(0, |t| t.burst), |w| w[1].burst);
    (trials, best)
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

/// Stop `streams` and keep each one's final line.
fn finish(
    streams: Vec<Stream>,
    level: usize,
    failures: &mut Vec<StreamFailure>,
    records: &mut [StreamEnd],
) {
    for end in launch::stop_streams(streams, level, failures) {
        if let Some(finished) = end.finished {
            records[end.id].final_line = Some(finished.final_line);
            records[end.id].remote = Some(finished.remote);
        }
    }
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
            finish(stopped, index - 1, &mut self.failures, &mut self.records);
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
        let requests = self.stream_requests(index, count);
        let started = launch::start_level(requests, index, &self.settings);
        for s in &started.streams {
            self.records[s.id].ready_s = s.ready_at.map(|at| self.since_start(at));
            self.records[s.id].running_s = s.running_at.map(|at| self.since_start(at));
        }
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

    /// The level's new streams, each recorded as started on its load
    /// generator (in turn over the hosts; a `sync` level's own).
    fn stream_requests(&mut self, index: usize, count: u32) -> Vec<StreamRequest> {
        let cfg = self.cfg;
        (self.streams.len()..count as usize)
            .map(|_| {
                let id = self.records.len();
                let turn = if self.serial { index } else { id };
                let host = cfg.hosts[turn % cfg.hosts.len()].clone();
                self.events.push(Event::StreamStarted(host.clone()));
                self.records.push(StreamEnd {
                    host: host.clone(),
                    final_line: None,
                    remote: None,
                    level: index,
                    ready_s: None,
                    running_s: None,
                });
                StreamRequest {
                    id,
                    args: stream_args(cfg, &host),
                    host,
                }
            })
            .collect()
    }

    /// The level's series starts here: the set-up time is not in it.
    fn set_baselines(&mut self) {
        for s in self.streams.iter_mut() {
            s.last_units = s.flag.units();
            s.last_timeouts = s.flag.timeouts();
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
        let units: Vec<u64> = self.streams.iter().map(|s| s.flag.units()).collect();
        let read_end = Instant::now();
        let timeouts: Vec<u64> = self.streams.iter().map(|s| s.flag.timeouts()).collect();
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
        finish(streams, last, &mut self.failures, &mut self.records);
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        };
        assert_eq!(planned_per_host(&cfg), [342, 341, 341]);
        cfg.kind = super::super::plan::spec_of(super::super::plan::Kind::Sync);
        assert_eq!(planned_per_host(&cfg), [1, 1, 1]);
    }
}
