//! Ends a test whose peer has gone: it closed (or reset) the control
//! connection, or no data moved for the silent timeout. One mechanism for
//! every family and both ends: the data loops publish their units on the
//! StopFlag, and this watcher, beside the data thread, only sets the flag;
//! the test's timer (armed watching the flag) or the sockets' timeouts
//! (`UNTIMED_IO_WAIT`) make a blocked call see it.

use crate::engine::fd_table::PrivateTable;
use crate::engine::stop_flag::StopFlag;
use crate::engine::timer::Timer;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a blocking data call of a test without a clock of its own waits
/// before it looks at the stop flag again (SO_RCVTIMEO/SO_SNDTIMEO).
pub const UNTIMED_IO_WAIT: Duration = Duration::from_millis(250);
/// How long netperf's count test waits for data that does not move.
pub const UNTIMED_SILENCE: Duration = Duration::from_secs(60);

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
        let value = {
            let _done = SetOnDrop(&done);
            test()
        };
        let gone = watcher.ok().and_then(|w| w.join().ok()).flatten();
        (value, gone)
    })
}

/// netperf's data loop `test`, watched when it has no clock of its own: a
/// count test (`silence`: `UNTIMED_SILENCE`) whose data stops moving that
/// long ends with a timed-out error, as does one whose netserver closes the
/// control connection (`control_fd`, -1 for none) — whatever the socket
/// family. A timed test (None) runs as it is: its clock ends blocked calls.
pub fn netperf_watched<T>(
    control_fd: RawFd,
    stop: &StopFlag,
    silence: Option<Duration>,
    test: impl FnOnce() -> T,
) -> (T, Option<std::io::Error>) {
    let Some(silence) = silence else {
        return (test(), None);
    };
    let (value, gone) = watched(control_fd, stop, silence, test);
    let error = gone.map(|why| {
        let text = match why {
            ClientGone::Silent(d) => format!("no data moved for {:.1} seconds", d.as_secs_f64()),
            ClientGone::ControlClosed => "netserver closed the control connection".to_string(),
        };
        std::io::Error::new(std::io::ErrorKind::TimedOut, text)
    });
    (value, error)
}

/// What `watched_alone` brings back from its test.
pub struct Watched<T> {
    /// What the test returned.
    pub value: T,
    /// Why the watcher ended the test, if it did.
    pub gone: Option<ClientGone>,
    /// Whether the test clock (not the peer, a count or a stop) ended it.
    pub timer_fired: bool,
}

/// `watched`, with `test` on a thread of its own whose descriptor table holds
/// only `data_fds` (see `engine::fd_table` for why and for the rules: `test`
/// borrows those descriptors, closes whatever it opens, and returns nothing
/// that owns a descriptor). The test clock
/// `limit` (None: no limit) is armed on that thread and also ends the test
/// on a stop signal, as `Timer::arm_watching(limit, stop, true)`.
pub fn watched_alone<T: Send>(
    control_fd: RawFd,
    stop: &StopFlag,
    silent: Duration,
    data_fds: &[RawFd],
    limit: Option<Duration>,
    test: impl FnOnce() -> T + Send,
) -> Watched<T> {
    let done = AtomicBool::new(false);
    // Taken by the data thread, or by this one if no thread can be had.
    let job = std::sync::Mutex::new(Some(test));
    let take_job = || job.lock().ok().and_then(|mut j| j.take());
    std::thread::scope(|scope| {
        let watcher = std::thread::Builder::new()
            .name("client-watch".into())
            .spawn_scoped(scope, || watch(control_fd, stop, silent, &done));
        let on_own_table = || {
            // The clock first: its thread must share the table it was
            // armed from, not the data thread's own.
            let timer = Timer::arm_watching(limit, stop.clone(), true);
            // SAFETY: a scoped thread: this one waits for it, sharing the
            // table, and nothing the test returns owns a descriptor.
            let table = unsafe { PrivateTable::enter(data_fds) };
            let value = take_job().map(|test| test());
            drop(table);
            value.map(|v| (v, timer.fired()))
        };
        let (value, timer_fired) = {
            // Also when the test panics: the watcher must not outlive it.
            let _done = SetOnDrop(&done);
            let ran = std::thread::Builder::new()
                .name("test-data".into())
                .spawn_scoped(scope, on_own_table)
                .ok()
                .and_then(|w| {
                    w.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                });
            ran.unwrap_or_else(|| {
                let timer = Timer::arm_watching(limit, stop.clone(), true);
                let test = take_job().expect("the test runs once, here if not on its thread");
                (test(), timer.fired())
            })
        };
        let gone = watcher.ok().and_then(|w| w.join().ok()).flatten();
        Watched {
            value,
            gone,
            timer_fired,
        }
    })
}

/// Tells the watcher the test is over when dropped, unwinding included.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
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

    #[test]
    fn alone_the_test_runs_on_its_own_table_under_its_clock() {
        let (ours, _theirs) = UnixStream::pair().unwrap();
        let (data, _peer) = UnixStream::pair().unwrap();
        let (control_fd, data_fd) = (ours.as_raw_fd(), data.as_raw_fd());
        let stop = StopFlag::new();
        let limit = Some(Duration::from_millis(50));
        let caller = std::thread::current().id();
        let w = watched_alone(
            control_fd,
            &stop,
            Duration::from_secs(30),
            &[data_fd],
            limit,
            || {
                let give_up = Instant::now() + Duration::from_secs(10);
                while !stop.is_set() && Instant::now() < give_up {
                    std::thread::sleep(Duration::from_millis(5));
                }
                // SAFETY: F_GETFD only reads the descriptors' flags.
                let open = |fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1;
                (std::thread::current().id(), open(data_fd), open(control_fd))
            },
        );
        let (thread, data_open, control_open) = w.value;
        assert!(thread != caller && data_open && !control_open);
        assert!(w.timer_fired && w.gone.is_none());
        // The caller's table is untouched.
        // SAFETY: as above.
        assert_ne!(unsafe { libc::fcntl(control_fd, libc::F_GETFD) }, -1);
    }

    #[test]
    fn a_panicking_test_does_not_leave_the_watcher_behind() {
        let (ours, _theirs) = UnixStream::pair().unwrap();
        let stop = StopFlag::new();
        let fd = ours.as_raw_fd();
        let alone = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            watched_alone(fd, &stop, Duration::from_secs(30), &[], None, || {
                panic!("boom")
            })
        }));
        let here = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            watched(fd, &stop, Duration::from_secs(30), || panic!("boom"))
        }));
        assert!(alone.is_err() && here.is_err());
    }

    #[test]
    fn a_silent_count_test_ends_with_an_error_and_a_timed_one_runs_alone() {
        let (ours, _theirs) = UnixStream::pair().unwrap();
        let stop = StopFlag::new();
        let silence = Some(Duration::from_millis(200));
        let (ran, error) = netperf_watched(ours.as_raw_fd(), &stop, silence, || {
            // A loop that moves nothing until it is stopped (bounded).
            let give_up = Instant::now() + Duration::from_secs(10);
            while !stop.is_set() && Instant::now() < give_up {
                std::thread::sleep(Duration::from_millis(10));
            }
            stop.is_set()
        });
        assert!(ran, "the watcher stopped the loop");
        let error = error.expect("silence is an error");
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
        assert!(error.to_string().contains("no data moved for 0.2 seconds"));
        let (value, error) = netperf_watched(-1, &StopFlag::new(), None, || 7);
        assert_eq!((value, error.is_none()), (7, true));
    }
}
