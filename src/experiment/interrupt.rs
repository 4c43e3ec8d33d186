//! Ctrl-C and SIGTERM during an experiment: they only raise a flag. The
//! runner then ends the current run, puts the offloads back, writes what
//! it has (marked interrupted) and exits; nothing exits from the handler,
//! so the restore always happens.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_signal: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Installs the handlers (SIGINT, SIGTERM, SIGHUP) and returns the flag.
pub fn install() -> &'static AtomicBool {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        crate::engine::signals::set_handler(signal, on_signal);
    }
    &STOP
}
