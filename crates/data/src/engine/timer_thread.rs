//! The one thread that keeps every thread-based `Timer` of the process: it
//! sets a test's stop flag at its deadline (or on a stop signal, or when
//! someone else set the flag) and then interrupts the test's data thread
//! with the wake signal every WAKE_REPEAT until the Timer is dropped.
//!
//! Why one thread for all: a thread per armed timer, each waking every
//! SIGNAL_POLL to look for a stop, cost 1.2 of this 2-CPU machine's CPUs
//! at 1,024 timers (netagg's streams, or netserver's tests) before a byte
//! moved. One thread scans them all instead, ~100 times a second.
//!
//! The thread is started by the first Timer armed, from that thread: it
//! shares that thread's descriptor table, so arm the first Timer on a
//! thread with the process's own table (netserver does, before a data
//! thread enters a private one).

use super::stop_flag::StopFlag;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// How often the wake signal repeats until the data thread has noticed: a
/// signal that lands just before the thread enters a blocking call is lost.
const WAKE_REPEAT: Duration = Duration::from_millis(20);
/// How often a timer watching for stop signals looks at them.
const SIGNAL_POLL: Duration = Duration::from_millis(10);

/// The signal that interrupts a blocked data call at the end of a test: a
/// real-time signal, so that SIGALRM stays the user's way to stop netperf.
pub(crate) fn wake_signal() -> libc::c_int {
    libc::SIGRTMIN() + 1
}

/// One armed timer, as the thread sees it.
struct Armed {
    id: u64,
    /// The thread that armed it and whose blocking calls are interrupted.
    target: libc::pthread_t,
    deadline: Option<Instant>,
    watch_signals: bool,
    flag: StopFlag,
    /// Set when the deadline (not a stop) ended the test.
    fired: Arc<AtomicBool>,
    /// When to send the next wake signal, once the timer has gone off.
    next_wake: Option<Instant>,
}

#[derive(Default)]
struct Table {
    armed: Vec<Armed>,
    next_id: u64,
    /// Whether the thread runs (it is started again if it could not be).
    running: bool,
}

struct Shared {
    table: Mutex<Table>,
    changed: Condvar,
}

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(|| Shared {
        table: Mutex::new(Table::default()),
        changed: Condvar::new(),
    })
}

fn lock(s: &Shared) -> MutexGuard<'_, Table> {
    // A panic while holding the lock leaves plain data behind: go on.
    s.table.lock().unwrap_or_else(|e| e.into_inner())
}

/// A registration with the thread; dropping it unregisters, after which the
/// target thread is never signalled again.
pub(crate) struct Registration {
    id: u64,
}

/// Register the calling thread's timer. `None` when the thread cannot be
/// started (then nothing ends the test but the test itself, as before).
pub(crate) fn register(
    deadline: Option<Instant>,
    watch_signals: bool,
    flag: StopFlag,
    fired: Arc<AtomicBool>,
) -> Option<Registration> {
    let s = shared();
    let mut table = lock(s);
    if !table.running {
        let started = std::thread::Builder::new()
            .name("test-timers".into())
            .stack_size(64 << 10)
            .spawn(|| serve(shared()))
            .is_ok();
        if !started {
            return None;
        }
        table.running = true;
    }
    let id = table.next_id;
    table.next_id += 1;
    table.armed.push(Armed {
        id,
        // SAFETY: pthread_self has no preconditions.
        target: unsafe { libc::pthread_self() },
        deadline,
        watch_signals,
        flag,
        fired,
        next_wake: None,
    });
    drop(table);
    s.changed.notify_one();
    Some(Registration { id })
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut table = lock(shared());
        table.armed.retain(|a| a.id != self.id);
    }
}

/// The thread: go off, wake, and sleep until the next thing to do.
fn serve(s: &'static Shared) {
    let mut table = lock(s);
    loop {
        let now = Instant::now();
        let stop_signal = super::signals::stop_requested();
        let mut next: Option<Instant> = None;
        for a in table.armed.iter_mut() {
            if a.next_wake.is_none() {
                let time_up = a.deadline.is_some_and(|d| now >= d);
                // A signal, or whoever shares the flag (netagg's
                // coordinator) setting it.
                let stopped = a.watch_signals && (stop_signal || a.flag.is_set());
                if time_up || stopped {
                    a.fired.store(time_up, Ordering::Relaxed);
                    a.flag.set();
                    a.next_wake = Some(now);
                }
            }
            let due = match a.next_wake {
                Some(at) if at <= now => {
                    // SAFETY: the target thread unregisters (taking this
                    // lock, held here) before it can end, so it is alive.
                    unsafe { libc::pthread_kill(a.target, wake_signal()) };
                    a.next_wake = Some(now + WAKE_REPEAT);
                    now + WAKE_REPEAT
                }
                Some(at) => at,
                None => {
                    let poll = a.watch_signals.then(|| now + SIGNAL_POLL);
                    match (a.deadline, poll) {
                        (Some(d), Some(p)) => d.min(p),
                        (d, p) => match d.or(p) {
                            Some(at) => at,
                            None => continue,
                        },
                    }
                }
            };
            next = Some(next.map_or(due, |n| n.min(due)));
        }
        table = match next {
            None => s.changed.wait(table).unwrap_or_else(|e| e.into_inner()),
            Some(at) => {
                let left = at.saturating_duration_since(Instant::now());
                s.changed
                    .wait_timeout(table, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
        };
    }
}

/// How many timers are armed (for tests and diagnostics).
pub fn armed() -> usize {
    lock(shared()).armed.len()
}
