//! Ctrl-C and SIGTERM during an experiment: they only raise a flag. The
//! runner then ends the current run, puts the offloads back, writes what
//! it has (marked interrupted) and exits; nothing exits from the handler,
//! so the restore always happens.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signal: libc::c_int) {
    SIGNAL.store(signal, Ordering::Relaxed);
    STOP.store(true, Ordering::Relaxed);
}

/// The exit status for the stop signal that arrived (128 + its number, as
/// a shell reports it: 130 for Ctrl-C, 143 for SIGTERM).
pub fn exit_status() -> u8 {
    let signal = SIGNAL.load(Ordering::Relaxed);
    u8::try_from(128 + signal.clamp(1, 127)).unwrap_or(130)
}

/// Installs the handlers (SIGINT, SIGTERM, SIGHUP) and returns the flag.
pub fn install() -> &'static AtomicBool {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        netperf_data::engine::signals::set_handler(signal, on_signal);
    }
    &STOP
}
