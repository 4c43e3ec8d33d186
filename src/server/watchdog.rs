//! Ends a netserver test whose client has gone: it closed (or reset) the
//! control connection, or it made no progress for the silent timeout. Runs
//! beside the data thread and only sets the test's StopFlag; the test's timer
//! (armed watching the flag) interrupts a data call blocked in the kernel.

use crate::engine::timer::StopFlag;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the watcher looks; it also bounds how long the results wait for
/// the watcher to notice that the test ended.
const WATCH_EVERY_MS: i32 = 50;

/// Why the watcher ended a test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClientGone {
    /// The client closed or reset the control connection mid-test.
    ControlClosed,
    /// Neither bytes nor transactions moved for this long.
    Silent(Duration),
}

impl std::fmt::Display for ClientGone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientGone::ControlClosed => write!(f, "the client closed the control connection"),
            ClientGone::Silent(d) => {
                write!(f, "the client was silent for {:.1} s", d.as_secs_f64())
            }
        }
    }
}

/// Run `test` on this thread while a watcher thread looks at the control
/// connection `control_fd` and at the units the test publishes on `stop`.
/// Returns what `test` returned and, if the watcher ended it, why.
pub fn watched<T>(
    control_fd: RawFd,
    stop: &StopFlag,
    silent: Duration,
    test: impl FnOnce() -> T,
) -> (T, Option<ClientGone>) {
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let watcher = std::thread::Builder::new()
            .name("client-watch".into())
            .spawn_scoped(scope, || watch(control_fd, stop, silent, &done));
        let value = test();
        done.store(true, Ordering::Relaxed);
        let gone = watcher.ok().and_then(|w| w.join().ok()).flatten();
        (value, gone)
    })
}

fn watch(fd: RawFd, stop: &StopFlag, silent: Duration, done: &AtomicBool) -> Option<ClientGone> {
    let mut last_units = stop.units();
    let mut last_progress = Instant::now();
    while !done.load(Ordering::Relaxed) && !stop.is_set() {
        if control_closed(fd) {
            stop.set();
            return Some(ClientGone::ControlClosed);
        }
        let units = stop.units();
        if units != last_units {
            (last_units, last_progress) = (units, Instant::now());
        } else if last_progress.elapsed() >= silent {
            stop.set();
            return Some(ClientGone::Silent(silent));
        }
    }
    None
}

/// Wait up to WATCH_EVERY_MS for a hangup on the control connection. Only
/// hangups wake the poll, so bytes the client sends are left for the session.
fn control_closed(fd: RawFd) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLRDHUP,
        revents: 0,
    };
    // SAFETY: one valid pollfd; the session keeps the control socket open
    // for as long as the test (and so this watcher) runs.
    let ready = unsafe { libc::poll(&mut p, 1, WATCH_EVERY_MS) } > 0;
    if ready && p.revents & libc::POLLNVAL != 0 {
        // Not a socket we can watch: fall back to sleeping between looks.
        std::thread::sleep(Duration::from_millis(WATCH_EVERY_MS as u64));
        return false;
    }
    ready
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    #[test]
    fn a_closed_control_connection_stops_the_test() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let stop = StopFlag::new();
        let (_, gone) = watched(ours.as_raw_fd(), &stop, Duration::from_secs(30), || {
            drop(theirs);
            let give_up = Instant::now() + Duration::from_secs(10);
            while !stop.is_set() && Instant::now() < give_up {
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        assert_eq!(gone, Some(ClientGone::ControlClosed));
    }

    #[test]
    fn silence_stops_the_test_and_progress_or_bytes_do_not() {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        let stop = StopFlag::new();
        let silent = Duration::from_millis(300);
        let started = Instant::now();
        let (_, gone) = watched(ours.as_raw_fd(), &stop, silent, || {
            // Progress for a while (and a control byte, which is no hangup),
            // then silence.
            theirs.write_all(b"x").unwrap();
            for units in 1..=10 {
                stop.publish(units);
                std::thread::sleep(Duration::from_millis(60));
            }
            let give_up = Instant::now() + Duration::from_secs(10);
            while !stop.is_set() && Instant::now() < give_up {
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        assert_eq!(gone, Some(ClientGone::Silent(silent)));
        assert!(started.elapsed() >= Duration::from_millis(600));
    }

    #[test]
    fn a_test_that_ends_by_itself_is_not_blamed() {
        let (ours, _theirs) = UnixStream::pair().unwrap();
        let stop = StopFlag::new();
        let (value, gone) = watched(ours.as_raw_fd(), &stop, Duration::from_secs(5), || 7);
        assert_eq!((value, gone), (7, None));
        assert!(!stop.is_set());
    }
}
