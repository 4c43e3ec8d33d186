//! The synchronized aggregate run: every stream is a thread of this process
//! running one netperf test against its load generator's netserver, and
//! publishing its work count (and receive timeouts) in a shared `StopFlag`;
//! the coordinator reads all of them at the same instants (one clock, no
//! skew), adds streams level by level, and records the series with the SUT's
//! CPU and packet counters.

use super::plan::{ramp, KindSpec};
use crate::cli::{parse_netperf, Invocation};
use crate::control::client::{self, ClientError};
use crate::control::request::RunOptions;
use crate::engine::timer::StopFlag;
use crate::measure::cpu::CpuSampler;
use crate::net::interface::{egress_interface, InterfaceCounters};
use crate::spec::TestSpec;
use std::thread::JoinHandle;
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

/// A level of the ramp as it ran.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LevelRun {
    pub streams: u32,
    /// The stream (its number over the run) and load generator behind each
    /// position of this level's samples' per-stream vectors.
    pub members: Vec<(usize, String)>,
    /// The one load generator of a `sync` level.
    pub host: Option<String>,
    pub start: f64,
    pub end: f64,
}

/// Everything a run recorded.
#[derive(Debug, Clone)]
pub struct Recording {
    pub levels: Vec<LevelRun>,
    pub samples: Vec<Sample>,
    pub hosts: Vec<String>,
    /// Streams that ended with an error, and why.
    pub failures: Vec<String>,
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
}

/// A stream: its thread and the flag it publishes into.
struct Stream {
    /// Numbers the stream over the whole run (its .out file).
    id: usize,
    host: String,
    flag: StopFlag,
    thread: Option<JoinHandle<Result<String, ClientError>>>,
    last_units: u64,
    last_timeouts: u64,
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
/// its final `-o all` line (what the seed's netperfs print at the end).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamEnd {
    pub host: String,
    pub final_line: Option<String>,
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

/// Start one stream against `host`.
fn start_stream(cfg: &RunConfig, host: &str, id: usize) -> Result<Stream, String> {
    let args = stream_args(cfg, host);
    let config = match parse_netperf(&args) {
        Ok(Invocation::Run(c)) => c,
        Ok(_) => return Err(format!("bad stream arguments {args:?}")),
        Err(e) => return Err(e.to_string()),
    };
    let spec = TestSpec::from_config(&config).map_err(|e| e.to_string())?;
    let flag = StopFlag::new();
    let mut run = RunOptions::from_global(&config.global);
    run.shared_stop = Some(flag.clone());
    let global = config.global.clone();
    let thread = std::thread::Builder::new()
        .name(format!("stream-{host}"))
        .spawn(move || {
            let mut chan = client::establish(&global)?;
            let result = client::run_iteration(Some(&mut chan), &spec, &run, false);
            chan.shutdown();
            let it = result?;
            Ok(final_line(&config, &spec, &it))
        })
        .map_err(|e| e.to_string())?;
    Ok(Stream {
        id,
        host: host.to_string(),
        flag,
        thread: Some(thread),
        last_units: 0,
        last_timeouts: 0,
    })
}

/// The stream's `-o all` values line, as `netperf -P 0 ... -- -o all` ends.
fn final_line(
    config: &crate::cli::config::Config,
    spec: &TestSpec,
    it: &client::Iteration,
) -> String {
    use crate::report::omni::{select, Style};
    use crate::run::omni::{render, Measured, OmniOutput};
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
    render(&output, config, spec, &measured)
}

/// Stop the running streams and collect how each ended.
fn finish_streams(
    streams: &mut Vec<Stream>,
    ends: &mut Vec<(usize, StreamEnd)>,
    failures: &mut Vec<String>,
) {
    for s in streams.iter() {
        s.flag.set();
    }
    for mut s in streams.drain(..) {
        let final_line = match s.thread.take().map(|t| t.join()) {
            Some(Ok(Ok(line))) => Some(line),
            Some(Ok(Err(e))) => {
                failures.push(format!("stream {} to {}: {e}", s.id, s.host));
                None
            }
            Some(Err(_)) => {
                failures.push(format!("stream {} to {}: thread panicked", s.id, s.host));
                None
            }
            None => None,
        };
        ends.push((
            s.id,
            StreamEnd {
                host: s.host,
                final_line,
            },
        ));
    }
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
    let mut trials: Vec<BurstTrial> = Vec::new();
    let mut burst = 1;
    while burst <= MAX_BURST {
        let one = RunConfig {
            burst,
            ..cfg.clone()
        };
        let Ok(mut stream) = start_stream(&one, &cfg.hosts[0], 0) else {
            break;
        };
        // Leave the connection set-up out of the measured time.
        std::thread::sleep(Duration::from_millis(200));
        let (u0, t0) = (stream.flag.units(), Instant::now());
        std::thread::sleep(trial);
        let (u1, t1) = (stream.flag.units(), Instant::now());
        stream.flag.set();
        let ok = stream
            .thread
            .take()
            .is_some_and(|t| matches!(t.join(), Ok(Ok(_))));
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

/// Run the whole ramp; `progress` is called after every sample.
pub fn run(cfg: &RunConfig, mut progress: impl FnMut(&Sample, &LevelRun)) -> Recording {
    // Every interface the SUT reaches a load generator by; packets are
    // counted over all of them.
    let mut interfaces: Vec<String> = Vec::new();
    for host in &cfg.hosts {
        let name =
            crate::net::resolve::resolve(host, Some(0), crate::cli::config::Family::Unspec, false)
                .ok()
                .and_then(|addrs| addrs.first().copied())
                .and_then(|addr| egress_interface(&addr));
        if let Some(name) = name {
            if !interfaces.contains(&name) {
                interfaces.push(name);
            }
        }
    }
    let mut counters: Vec<InterfaceCounters> = interfaces
        .iter()
        .map(|n| InterfaceCounters::read(n))
        .collect();
    let mut cpu = CpuSampler::start(None).ok();
    let start = Instant::now();
    let start_epoch = epoch_now();
    let mut streams: Vec<Stream> = Vec::new();
    let mut failures = Vec::new();
    let mut levels = Vec::new();
    let mut samples = Vec::new();
    let mut events = vec![Event::Started(start_epoch)];
    let mut stream_samples = Vec::new();
    let mut last_sample = start;
    // `sync` runs one stream at a time, to each load generator in turn, as
    // runemomniaggdemo.sh's run_cmd_serial does; the others ramp up.
    let serial = cfg.kind.kind == super::plan::Kind::Sync;
    let plan = if serial {
        vec![1; cfg.hosts.len()]
    } else if cfg.single_level {
        vec![cfg.max_streams]
    } else {
        ramp(cfg.max_streams)
    };
    let mut ends: Vec<(usize, StreamEnd)> = Vec::new();
    let mut started = 0usize;
    for (index, &count) in plan.iter().enumerate() {
        if serial {
            finish_streams(&mut streams, &mut ends, &mut failures);
        }
        let level_start = start.elapsed().as_secs_f64();
        while (streams.len() as u32) < count {
            let host = &cfg.hosts[started % cfg.hosts.len()];
            events.push(Event::StreamStarted(host.clone()));
            match start_stream(cfg, host, started) {
                Ok(s) => streams.push(s),
                Err(e) => {
                    failures.push(format!("stream to {host}: {e}"));
                    break;
                }
            }
            started += 1;
        }
        let last_level = index + 1 == plan.len();
        events.push(if last_level {
            Event::StartedBy(epoch_now())
        } else {
            Event::Pausing {
                secs: cfg.level_duration.as_secs(),
                streams: streams.len() as u32,
                at: epoch_now(),
            }
        });
        let level_t0 = Instant::now();
        let level_end_at = level_t0 + cfg.level_duration;
        let mut level = LevelRun {
            streams: streams.len() as u32,
            members: streams.iter().map(|s| (s.id, s.host.clone())).collect(),
            host: serial.then(|| cfg.hosts[index % cfg.hosts.len()].clone()),
            start: level_start,
            end: level_start,
        };
        // Samples at fixed instants of this level's schedule, the last one
        // at its end.
        let mut tick = 1u32;
        loop {
            let at = (level_t0 + cfg.sample_interval * tick).min(level_end_at);
            std::thread::sleep(at.saturating_duration_since(Instant::now()));
            let read_start = Instant::now();
            let units: Vec<u64> = streams.iter().map(|s| s.flag.units()).collect();
            let read_end = Instant::now();
            let timeouts: Vec<u64> = streams.iter().map(|s| s.flag.timeouts()).collect();
            let secs = read_start.duration_since(last_sample).as_secs_f64();
            let stream_moved: Vec<u64> = streams
                .iter_mut()
                .zip(&units)
                .map(|(s, &u)| u.saturating_sub(std::mem::replace(&mut s.last_units, u)))
                .collect();
            let stream_timeouts: Vec<u64> = streams
                .iter_mut()
                .zip(&timeouts)
                .map(|(s, &t)| t.saturating_sub(std::mem::replace(&mut s.last_timeouts, t)))
                .collect();
            let stream_rates: Vec<f64> = stream_moved.iter().map(|&m| rate(cfg, m, secs)).collect();
            let usage = cpu.as_mut().and_then(|c| {
                let u = c.stop().ok();
                let _ = c.restart();
                u
            });
            let (packets_out, packets_in) = if counters.is_empty() {
                (-1.0, -1.0)
            } else {
                let (mut tx, mut rx) = (0u64, 0u64);
                for before in counters.iter_mut() {
                    let now = InterfaceCounters::read(&before.name);
                    let d = before.delta(&now);
                    tx += d.tx_packets;
                    rx += d.rx_packets;
                    *before = now;
                }
                (tx as f64 / secs, rx as f64 / secs)
            };
            let ending = start_epoch + read_start.duration_since(start).as_secs_f64();
            for (stream, r) in streams.iter().zip(&stream_rates) {
                stream_samples.push((stream.id, secs, ending, *r));
            }
            last_sample = read_start;
            let sample = Sample {
                t: read_start.duration_since(start).as_secs_f64(),
                epoch: start_epoch + read_start.duration_since(start).as_secs_f64(),
                level: index,
                aggregate: stream_rates.iter().sum(),
                stream_rates,
                stream_moved,
                stream_timeouts,
                spread_us: read_end.duration_since(read_start).as_secs_f64() * 1e6,
                cpu_util: usage.as_ref().map_or(-1.0, |u| u.util),
                cpu_peak: usage.as_ref().map_or(-1.0, |u| u.peak_util),
                packets_out,
                packets_in,
            };
            level.end = sample.t;
            progress(&sample, &level);
            samples.push(sample);
            if at >= level_end_at {
                break;
            }
            tick += 1;
        }
        levels.push(level);
        events.push(if last_level {
            Event::Stopping(epoch_now())
        } else {
            Event::Resuming(epoch_now())
        });
    }
    finish_streams(&mut streams, &mut ends, &mut failures);
    ends.sort_by_key(|(id, _)| *id);
    let ends: Vec<StreamEnd> = ends.into_iter().map(|(_, end)| end).collect();
    events.push(Event::Stopped(epoch_now()));
    Recording {
        levels,
        samples,
        hosts: cfg.hosts.clone(),
        failures,
        events,
        streams: ends,
        stream_samples,
        interfaces,
        start_epoch,
        sample_interval: cfg.sample_interval.as_secs_f64(),
    }
}
