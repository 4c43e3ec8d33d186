//! The flag a test stops by and the work count it publishes: shared by the
//! data thread, the test clocks (`timer`, `signal_timer`, `timer_thread`)
//! and whoever samples or ends the test from outside.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Set when the test must stop (by the timer, a signal, or a count), and the
/// data thread's running count of work units (bytes or transactions), which
/// it stores after every call so that interim results and netagg can sample
/// it at any instant without asking the data thread for anything.
#[derive(Clone, Default)]
pub struct StopFlag(Arc<Shared>);

impl std::fmt::Debug for StopFlag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StopFlag")
            .field("stop", &self.is_set())
            .field("units", &self.units())
            .finish()
    }
}

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    units: AtomicU64,
    /// Receive timeouts (UDP_RR with -e) so far: stored only when one
    /// happens, so the per-transaction path never touches it.
    timeouts: AtomicU64,
}

impl StopFlag {
    pub fn new() -> Self {
        StopFlag::default()
    }
    #[inline]
    pub fn is_set(&self) -> bool {
        self.0.stop.load(Ordering::Relaxed)
    }
    pub fn set(&self) {
        self.0.stop.store(true, Ordering::Relaxed)
    }
    /// Publish the work done so far: a plain store the data thread makes
    /// after each call (the line stays in its cache until someone samples).
    #[inline]
    pub fn publish(&self, units: u64) {
        self.0.units.store(units, Ordering::Relaxed)
    }
    /// Adds `units` to the work published so far: for work done by
    /// several threads at once (a many-flow test), each adding its own
    /// every so often, never per call.
    pub fn add_units(&self, units: u64) {
        self.0.units.fetch_add(units, Ordering::Relaxed);
    }
    /// The work units published so far.
    pub fn units(&self) -> u64 {
        self.0.units.load(Ordering::Relaxed)
    }
    /// Publish the receive timeouts so far (after each one, never per call).
    pub fn publish_timeouts(&self, timeouts: u64) {
        self.0.timeouts.store(timeouts, Ordering::Relaxed)
    }
    /// The receive timeouts published so far.
    pub fn timeouts(&self) -> u64 {
        self.0.timeouts.load(Ordering::Relaxed)
    }
    /// The flag itself, for the thread-free timer's signal handler.
    pub(crate) fn stop_ptr(&self) -> *const AtomicBool {
        &self.0.stop
    }
}
