//! Paced sending (netperf's `-w interval -b burst`, its --enable-intervals):
//! after every `burst` operations the data thread sleeps until the next tick
//! of a fixed schedule (start + k x interval), so the rate does not drift
//! with the time the operations take. Used only when asked for; the sleep is
//! interrupted by the test's stop signal.

use super::stop_flag::StopFlag;
use std::time::{Duration, Instant};

/// A burst-per-interval schedule.
#[derive(Debug, Clone)]
pub struct Pacer {
    interval: Duration,
    burst: u32,
    done_in_burst: u32,
    next_tick: Instant,
    /// Time spent waiting for ticks (netperf subtracts it from the time a
    /// request/response test's latency is computed over).
    waited: Duration,
}

impl Pacer {
    /// `None` when there is no pacing (burst 0, as in netperf).
    pub fn new(interval_usecs: u32, burst: u32) -> Option<Pacer> {
        (burst > 0 && interval_usecs > 0).then(|| {
            let interval = Duration::from_micros(u64::from(interval_usecs));
            Pacer {
                interval,
                burst,
                done_in_burst: 0,
                next_tick: Instant::now() + interval,
                waited: Duration::ZERO,
            }
        })
    }

    /// Count one operation; at the end of a burst, wait for the next tick.
    #[inline]
    pub fn after_op(&mut self, stop: &StopFlag) {
        self.done_in_burst += 1;
        if self.done_in_burst >= self.burst {
            self.done_in_burst = 0;
            self.wait_for_tick(stop);
        }
    }

    #[cold]
    fn wait_for_tick(&mut self, stop: &StopFlag) {
        let started = Instant::now();
        while !stop.is_set() {
            let now = Instant::now();
            if now >= self.next_tick {
                break;
            }
            // Short slices, so the end of the test is never more than one
            // slice away even if its wake-up signal lands between them.
            std::thread::sleep((self.next_tick - now).min(Duration::from_millis(10)));
        }
        self.waited += started.elapsed();
        self.next_tick += self.interval;
        // Far behind (a stall): restart the schedule instead of bursting to
        // catch up.
        let now = Instant::now();
        if self.next_tick + self.interval < now {
            self.next_tick = now + self.interval;
        }
    }

    pub fn waited(&self) -> Duration {
        self.waited
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_burst_no_pacing() {
        assert!(Pacer::new(1000, 0).is_none());
        assert!(Pacer::new(0, 5).is_none());
    }

    #[test]
    fn bursts_wait_for_their_ticks() {
        let stop = StopFlag::new();
        let mut p = Pacer::new(5_000, 2).unwrap();
        let started = Instant::now();
        for _ in 0..8 {
            p.after_op(&stop);
        }
        // Four bursts of two: at least three full intervals have passed.
        assert!(started.elapsed() >= Duration::from_millis(15));
        assert!(p.waited() > Duration::ZERO);
    }

    #[test]
    fn a_stopped_test_does_not_wait() {
        let stop = StopFlag::new();
        stop.set();
        let mut p = Pacer::new(10_000_000, 1).unwrap();
        let started = Instant::now();
        p.after_op(&stop);
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
