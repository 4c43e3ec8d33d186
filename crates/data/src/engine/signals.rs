//! Stopping netperf from outside: SIGALRM, SIGINT and SIGTERM ask the running
//! test to end at once (the aggregate scripts `kill -ALRM` their netperfs);
//! the test then closes down and reports the time it really measured. A
//! second SIGINT exits immediately. The handlers only touch atomics and
//! call the hook the thread-free clock registers to start its ticks; that
//! clock, or the test timer thread, does the rest.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};
use std::sync::Once;

static STOP_REQUESTED: AtomicBool = AtomicBool::new(false);
static INTERRUPTS: AtomicU32 = AtomicU32::new(0);

/// Exit status after a second SIGINT (128 + SIGINT, as a shell reports it).
const EXIT_ON_SECOND_INTERRUPT: i32 = 130;

extern "C" fn on_stop_signal(signal: libc::c_int) {
    if signal == libc::SIGINT && INTERRUPTS.fetch_add(1, Ordering::Relaxed) >= 1 {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(EXIT_ON_SECOND_INTERRUPT) };
    }
    STOP_REQUESTED.store(true, Ordering::Relaxed);
    // The thread-free test clock, if one runs, ends the test from its tick.
    let hook = ON_STOP.load(Ordering::Acquire);
    if !hook.is_null() {
        // SAFETY: ON_STOP only ever holds a `fn()` (see `on_stop`).
        let hook: fn() = unsafe { std::mem::transmute::<*mut (), fn()>(hook) };
        hook();
    }
}

/// Called by the stop-signal handler after it sets the stop: the
/// thread-free test clock (`signal_timer`) registers here, so that the
/// clock builds on this file and not the other way round. Null: none.
static ON_STOP: AtomicPtr<()> = AtomicPtr::new(std::ptr::null_mut());

/// Have every later stop signal also call `hook`, which must be
/// async-signal-safe (it runs in the handler).
pub(crate) fn on_stop(hook: fn()) {
    ON_STOP.store(hook as *mut (), Ordering::Release);
}

/// Install the handlers (once per process; netperf only, never netserver).
pub fn install() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        for signal in [libc::SIGALRM, libc::SIGINT, libc::SIGTERM] {
            set_handler(signal, on_stop_signal);
        }
    });
}

/// Handle `signal` with `handler`, without SA_RESTART: the signal makes a
/// blocked send/recv/accept/connect return EINTR, so a data loop looks at
/// its stop flag. `handler` must be async-signal-safe.
pub fn set_handler(signal: libc::c_int, handler: extern "C" fn(libc::c_int)) {
    // SAFETY: a zeroed sigaction with a plain handler and an empty mask is
    // valid; the handlers given here only touch atomics, timers or _exit.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler as *const () as usize;
        libc::sigemptyset(&mut action.sa_mask);
        action.sa_flags = 0;
        libc::sigaction(signal, &action, std::ptr::null_mut());
    }
}

/// Whether a stop signal arrived.
pub fn stop_requested() -> bool {
    STOP_REQUESTED.load(Ordering::Relaxed)
}

/// Held by the unit tests that raise a stop signal or arm the thread-free
/// clock: the stop signal starts that clock's ticks and keeps them from
/// counting as the deadline, so the two must not overlap.
#[cfg(test)]
pub(crate) static PROCESS_SIGNALS: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_requests_a_stop() {
        let _alone = PROCESS_SIGNALS.lock().unwrap_or_else(|e| e.into_inner());
        install();
        // SAFETY: raise delivers SIGTERM to this thread; our handler runs.
        unsafe { libc::raise(libc::SIGTERM) };
        assert!(stop_requested());
        STOP_REQUESTED.store(false, Ordering::Relaxed);
    }
}
