//! The test mode that stalls netserver's answers once: after a number of
//! transactions (`NETPERF_NG_TEST_PAUSE_AFTER`, default 1000) of a
//! request/response test it stops reading for `NETPERF_NG_TEST_PAUSE_ONCE_MS`
//! milliseconds, then answers on, so that tests can show what an open-loop
//! netperf (`--rate`) sees of a server stall and a closed loop hides. Never
//! set in normal use; unset, serving is exactly the loop it wraps.

use netperf_data::engine::stop_flag::StopFlag;
use netperf_data::engine::{Counters, DataError};
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

/// Serve a request/response test with `serve(limit)`, in two runs around
/// the stall when there is one: the loop itself stays as it is, and its
/// transaction limit is what ends the first run.
pub fn serve_around(
    pause: Option<Pause>,
    units: Option<u64>,
    stop: &StopFlag,
    mut serve: impl FnMut(Option<u64>) -> Result<Counters, DataError>,
) -> Result<Counters, DataError> {
    let Some(p) = pause.filter(|p| units.is_none_or(|u| u > p.after)) else {
        return serve(units);
    };
    let mut first = serve(Some(p.after))?;
    // The test ended (or stopped) before the stall was due.
    if first.transactions < p.after || stop.is_set() {
        return Ok(first);
    }
    let until = Instant::now() + p.stall;
    while !stop.is_set() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(SLICE));
    }
    let rest = serve(units.map(|u| u - p.after))?;
    first.add(&rest);
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(n: u64) -> Counters {
        Counters {
            transactions: n,
            send_calls: n,
            ..Counters::default()
        }
    }

    #[test]
    fn the_stall_splits_the_test_in_two_runs() {
        let stop = StopFlag::new();
        let pause = Some(Pause {
            after: 10,
            stall: Duration::from_millis(20),
        });
        let mut limits = Vec::new();
        let started = Instant::now();
        let c = serve_around(pause, Some(25), &stop, |limit| {
            limits.push(limit);
            Ok(served(limit.unwrap_or(0)))
        })
        .unwrap();
        assert_eq!(limits, [Some(10), Some(15)]);
        assert_eq!((c.transactions, c.send_calls), (25, 25));
        assert!(started.elapsed() >= Duration::from_millis(20));
    }

    #[test]
    fn without_a_stall_or_room_for_one_the_loop_runs_once() {
        let stop = StopFlag::new();
        let mut runs = 0;
        // Each run ends after 7 transactions, whatever its limit: the
        // test's end came first.
        let mut once = |limit: Option<u64>| {
            runs += 1;
            Ok(served(limit.map_or(7, |l| l.min(7))))
        };
        serve_around(None, None, &stop, &mut once).unwrap();
        let short = Some(Pause {
            after: 100,
            stall: Duration::from_secs(5),
        });
        serve_around(short, Some(50), &stop, &mut once).unwrap();
        // A test that ends before the stall is due never stalls.
        serve_around(short, None, &stop, &mut once).unwrap();
        assert_eq!(runs, 3);
    }
}
