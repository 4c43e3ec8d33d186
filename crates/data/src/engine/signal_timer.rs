//! A test clock without a thread, for a process whose data loop runs alone
//! (netperf's own test): a POSIX timer sends a signal to the data thread at
//! the deadline and then every WAKE_REPEAT until the timer is dropped; the
//! handler sets the test's stop flag, and the signal ends a blocked call.
//! A stop signal (SIGINT, SIGTERM, SIGALRM) starts the same ticks at once.
//!
//! Why not the timer thread: a process with a second thread makes the kernel
//! take and drop a reference on the socket's file at every send and receive
//! (fdget/fput skip it only while the file table is not shared), about 1 %
//! of the CPU of a request/response test — stock netperf is single-threaded.
//!
//! One such timer exists at a time (a process runs one test at a time); its
//! state is in statics because signal handlers cannot capture anything.

use super::stop_flag::StopFlag;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::Once;
use std::time::Duration;

/// The stop flag of the test this timer serves; null when none.
static FLAG: AtomicPtr<AtomicBool> = AtomicPtr::new(std::ptr::null_mut());
/// The POSIX timer plus one, for the stop-signal handler to start the
/// ticks; 0 when none (the kernel's first timer id is 0, a null timer_t).
static TIMER: AtomicUsize = AtomicUsize::new(0);
/// Whether the deadline (rather than a stop signal or the test) ended it.
static FIRED: AtomicBool = AtomicBool::new(false);
/// Whether a timer is armed (the statics belong to it).
static IN_USE: AtomicBool = AtomicBool::new(false);

/// How often the tick repeats after the deadline, until the data loop has
/// noticed: a signal that lands just before a blocking call is not enough.
const WAKE_REPEAT: Duration = Duration::from_millis(20);

fn tick_signal() -> libc::c_int {
    libc::SIGRTMIN() + 2
}

/// Runs on the data thread (the timer targets it). Only the data thread
/// dereferences FLAG, and it clears FLAG before its StopFlag can go away.
extern "C" fn on_tick(_: libc::c_int) {
    let flag = FLAG.load(Ordering::Acquire);
    if flag.is_null() {
        return;
    }
    // SAFETY: FLAG points into the StopFlag the armed timer holds; see above.
    let flag = unsafe { &*flag };
    if flag.load(Ordering::Relaxed) {
        return; // already stopping: this tick only interrupts a call
    }
    if !super::signals::stop_requested() {
        FIRED.store(true, Ordering::Relaxed);
    }
    flag.store(true, Ordering::Relaxed);
}

/// Start the ticks now (the stop-signal handler calls this through
/// `signals::on_stop`; it only loads an atomic and calls timer_settime,
/// both async-signal-safe).
fn tick_now() {
    let timer = TIMER.load(Ordering::Acquire);
    if timer != 0 {
        set((timer - 1) as libc::timer_t, Duration::from_nanos(1));
    }
}

fn timespec(d: Duration) -> libc::timespec {
    libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: libc::c_long::from(d.subsec_nanos() as i32),
    }
}

/// Fire `after` from now (at least 1 ns: zero would disarm), then repeat.
fn set(timer: libc::timer_t, after: Duration) {
    let spec = libc::itimerspec {
        it_value: timespec(after.max(Duration::from_nanos(1))),
        it_interval: timespec(WAKE_REPEAT),
    };
    // SAFETY: a timer from timer_create; a stale one only yields EINVAL.
    unsafe { libc::timer_settime(timer, 0, &spec, std::ptr::null_mut()) };
}

fn install_handler() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        super::signals::set_handler(tick_signal(), on_tick);
        super::signals::on_stop(tick_now);
    });
}

/// An armed thread-free test clock; dropping it stops and deletes it. Drop
/// it on the thread that armed it.
pub struct SignalTimer {
    timer: libc::timer_t,
    /// Keeps the flag FLAG points into alive while armed.
    _flag: StopFlag,
}

impl SignalTimer {
    /// Arm for `after` (None: only a stop signal ends the test) on the
    /// calling thread; None when another is armed or the kernel refuses.
    pub fn arm(after: Option<Duration>, flag: &StopFlag) -> Option<SignalTimer> {
        if IN_USE.swap(true, Ordering::AcqRel) {
            return None;
        }
        install_handler();
        // SAFETY: sigevent is plain data; the fields set are the ones
        // SIGEV_THREAD_ID reads, and gettid names this thread.
        let timer = unsafe {
            let mut event: libc::sigevent = std::mem::zeroed();
            event.sigev_notify = libc::SIGEV_THREAD_ID;
            event.sigev_signo = tick_signal();
            event.sigev_notify_thread_id = libc::gettid();
            let mut timer: libc::timer_t = std::ptr::null_mut();
            if libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut timer) != 0 {
                IN_USE.store(false, Ordering::Release);
                return None;
            }
            timer
        };
        FIRED.store(false, Ordering::Relaxed);
        FLAG.store(flag.stop_ptr().cast_mut(), Ordering::Release);
        TIMER.store(timer as usize + 1, Ordering::Release);
        if let Some(after) = after {
            set(timer, after);
        }
        // A stop signal that came before the timer existed.
        if super::signals::stop_requested() {
            tick_now();
        }
        Some(SignalTimer {
            timer,
            _flag: flag.clone(),
        })
    }

    /// Whether the deadline ended the test.
    pub fn fired(&self) -> bool {
        FIRED.load(Ordering::Relaxed)
    }
}

impl Drop for SignalTimer {
    fn drop(&mut self) {
        TIMER.store(0, Ordering::Release);
        // SAFETY: our timer, deleted once; no tick is delivered after this.
        unsafe { libc::timer_delete(self.timer) };
        FLAG.store(std::ptr::null_mut(), Ordering::Release);
        IN_USE.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn the_deadline_sets_the_flag_and_ends_a_blocked_receive() {
        let _alone = crate::engine::signals::PROCESS_SIGNALS
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        std::thread::spawn(|| {
            let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let flag = StopFlag::new();
            let started = Instant::now();
            let timer = SignalTimer::arm(Some(Duration::from_millis(50)), &flag)
                .expect("a thread-free timer");
            // Only one at a time: the statics belong to the armed one.
            assert!(SignalTimer::arm(None, &StopFlag::new()).is_none());
            let mut buf = [0u8; 16];
            // Blocks with no timeout: only the tick can end it.
            for _ in 0..1000 {
                match sock.recv(&mut buf) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                        if flag.is_set() {
                            break;
                        }
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
            assert!(flag.is_set() && timer.fired());
            drop(timer);
            assert!(started.elapsed() < Duration::from_secs(30));
            // Dropped: another can be armed, and one never due never fires.
            let flag = StopFlag::new();
            let idle = SignalTimer::arm(Some(Duration::from_secs(3600)), &flag).unwrap();
            assert!(!flag.is_set() && !idle.fired());
        })
        .join()
        .unwrap();
    }
}
