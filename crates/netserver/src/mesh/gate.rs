//! The bounds on originated tests over every control connection: how many
//! run at once (`--mesh-concurrency`) and how many start in any minute
//! (`--mesh-rate`), so that even a coordinator holding the key cannot turn
//! the netserver into a traffic source beyond what the operator set.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const WINDOW: Duration = Duration::from_secs(60);

/// Originated tests running now.
static RUNNING: AtomicUsize = AtomicUsize::new(0);
/// When each test of the last minute was let through.
static STARTED: Mutex<VecDeque<Instant>> = Mutex::new(VecDeque::new());

/// One of the `--mesh-concurrency` places, held while a test runs.
#[derive(Debug)]
pub struct Slot;

impl Drop for Slot {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A place for one more test, within both bounds, or why not.
pub fn admit(concurrency: usize, per_minute: usize) -> Result<Slot, String> {
    RUNNING
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < concurrency).then_some(n + 1)
        })
        .map_err(|_| {
            format!("{concurrency} mesh test(s) already running here (--mesh-concurrency)")
        })?;
    let slot = Slot;
    let now = Instant::now();
    let mut started = STARTED.lock().unwrap_or_else(|e| e.into_inner());
    while started
        .front()
        .is_some_and(|t| now.duration_since(*t) >= WINDOW)
    {
        started.pop_front();
    }
    if started.len() >= per_minute {
        // The slot is dropped: the place is given back.
        return Err(format!(
            "{per_minute} mesh test(s) in the last minute already (--mesh-rate)"
        ));
    }
    started.push_back(now);
    Ok(slot)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrency_and_rate_are_bounded() {
        // One test, as the statics are the process's.
        let first = admit(1, 3).unwrap();
        assert!(admit(1, 3).unwrap_err().contains("--mesh-concurrency"));
        let second = admit(2, 3).unwrap();
        drop((first, second));
        let third = admit(1, 3).unwrap();
        drop(third);
        assert!(admit(1, 3).unwrap_err().contains("--mesh-rate"));
        // A refusal by rate gives its place back.
        assert_eq!(RUNNING.load(Ordering::Acquire), 0);
    }
}
