//! find_max_burst.sh's search: one tps stream to the first load generator,
//! its burst doubling from 1 while the transaction rate still rises; the
//! ramp then runs the best burst.

use super::launch::{self, LaunchSettings, TestRequest};
use super::runner::{rate, stream_args, RunConfig};
use std::time::{Duration, Instant};

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
        let request =
            TestRequest::single(0, cfg.hosts[0].clone(), stream_args(&one, &cfg.hosts[0]));
        let started = launch::start_level(vec![request], 0, &settings);
        launch::dismiss(started.called_off);
        let Some(stream) = started.streams.into_iter().next() else {
            break;
        };
        // Leave the connection set-up out of the measured time.
        std::thread::sleep(Duration::from_millis(200));
        let (u0, t0) = (stream.units(), Instant::now());
        std::thread::sleep(trial);
        let (u1, t1) = (stream.units(), Instant::now());
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
