//! The test mode that stalls netserver's answers once: after a number of
//! transactions (`NETPERF_NG_TEST_PAUSE_AFTER`, default 1000) of a
//! request/response test it stops reading for `NETPERF_NG_TEST_PAUSE_ONCE_MS`
//! milliseconds, then answers on, so that tests can show what an open-loop
//! netperf (`--rate`) sees of a server stall and a closed loop hides. Never
//! set in normal use; unset, serving is exactly the loop it wraps.

use netperf_data::engine::stop_flag::StopFlag;
use netperf_data::engine::Counters;
use std::time::{Duration, Instant};

/// How long to stall, in milliseconds.
pub const PAUSE_ONCE_ENV: &str = "NETPERF_NG_TEST_PAUSE_ONCE_MS";
/// After how many transactions of the test.
pub const PAUSE_AFTER_ENV: &str = "NETPERF_NG_TEST_PAUSE_AFTER";
const DEFAULT_AFTER: u64 = 1000;
/// The stall looks at the test's stop flag this often.
const SLICE: Duration = Duration::from_millis(5);

/// One stall of a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pause {
    pub after: u64,
    pub stall: Duration,
}

/// The stall the environment asks for, read once.
pub fn test_pause() -> Option<Pause> {
    static PAUSE: std::sync::OnceLock<Option<Pause>> = std::sync::OnceLock::new();
    *PAUSE.get_or_init(|| {
        let read = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        let ms = read(PAUSE_ONCE_ENV).filter(|ms| *ms > 0)?;
        Some(Pause {
            after: read(PAUSE_AFTER_ENV).unwrap_or(DEFAULT_AFTER),
            stall: Duration::from_millis(ms),
        })
    })
}

/// The runs of a request/response test's loop: one, or two around the
/// stall (one when the test's count ends it first). Each run's transaction
/// limit ends the first; the loop itself stays as it is.
#[derive(Debug)]
pub struct Runs {
    pause: Option<Pause>,
    units: Option<u64>,
    started: u8,
}

impl Runs {
    /// The runs of a test of `units` transactions (None: timed) with `pause`.
    pub fn new(pause: Option<Pause>, units: Option<u64>) -> Runs {
        let pause = pause.filter(|p| units.is_none_or(|u| u > p.after));
        Runs {
            pause,
            units,
            started: 0,
        }
    }

    /// The next run's transaction limit, after the stall that comes before
    /// it; None when the test is over: after its last run, or when the first
    /// run (which has `served` so far) ended before the stall was due.
    pub fn next(&mut self, served: &Counters, stop: &StopFlag) -> Option<Option<u64>> {
        self.started += 1;
        match (self.started, self.pause) {
            (1, None) => Some(self.units),
            (1, Some(p)) => Some(Some(p.after)),
            (2, Some(p)) if served.transactions >= p.after && !stop.is_set() => {
                stall(p.stall, stop);
                Some(self.units.map(|u| u - p.after))
            }
            _ => None,
        }
    }
}

/// Sleep `stall`, looking at the test's stop flag every slice.
fn stall(stall: Duration, stop: &StopFlag) {
    let until = Instant::now() + stall;
    while !stop.is_set() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(SLICE));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every run's limit, each run serving `serves(limit)` transactions.
    fn limits(
        pause: Option<Pause>,
        units: Option<u64>,
        serves: impl Fn(Option<u64>) -> u64,
    ) -> Vec<Option<u64>> {
        let (stop, mut served) = (StopFlag::new(), Counters::default());
        let mut runs = Runs::new(pause, units);
        let mut limits = Vec::new();
        while let Some(limit) = runs.next(&served, &stop) {
            limits.push(limit);
            served.add(&Counters {
                transactions: serves(limit),
                ..Counters::default()
            });
        }
        limits
    }

    const PAUSE: Pause = Pause {
        after: 10,
        stall: Duration::from_millis(20),
    };

    #[test]
    fn the_stall_splits_the_test_in_two_runs() {
        let started = Instant::now();
        let all = |limit: Option<u64>| limit.unwrap_or(1000);
        assert_eq!(limits(Some(PAUSE), Some(25), all), [Some(10), Some(15)]);
        assert!(started.elapsed() >= PAUSE.stall);
        assert_eq!(limits(Some(PAUSE), None, all), [Some(10), None]);
    }

    #[test]
    fn without_a_stall_or_room_for_one_the_loop_runs_once() {
        let all = |limit: Option<u64>| limit.unwrap_or(1000);
        assert_eq!(limits(None, None, all), [None]);
        assert_eq!(limits(None, Some(5), all), [Some(5)]);
        // A count that ends before the stall is due.
        assert_eq!(limits(Some(PAUSE), Some(10), all), [Some(10)]);
        // A timed test stopped before the stall was due.
        assert_eq!(limits(Some(PAUSE), None, |_| 7), [Some(10)]);
    }
}
