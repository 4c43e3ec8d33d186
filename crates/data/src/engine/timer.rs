//! The test clock: flips an atomic when the test time is up and interrupts
//! the data thread's blocking call with a signal, as netperf's SIGALRM does —
//! so the data path reads a relaxed load per call, arms no socket timeout,
//! and still never blocks past the end of the test. The clock is either the
//! thread-free `signal_timer` (netperf's lone data loop) or the one thread
//! of `timer_thread` that serves every other Timer of the process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use super::signal_timer::SignalTimer;
use super::stop_flag::StopFlag;
use super::timer_thread::{self, wake_signal, Registration};

extern "C" fn on_wake_signal(_: libc::c_int) {}

/// Install a do-nothing handler without SA_RESTART, so the signal makes a
/// blocked send/recv/accept/connect return EINTR instead of killing us.
fn install_wake_handler() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| super::signals::set_handler(wake_signal(), on_wake_signal));
}

/// Sets a StopFlag after a duration, then interrupts the thread that armed
/// it until it is dropped. Drop it on that thread, before that thread ends.
pub struct Timer {
    /// With the process's timer thread; none for a timer that never goes off.
    registration: Option<Registration>,
    fired: Arc<AtomicBool>,
    /// The thread-free clock, when `arm_alone` could use it.
    alone: Option<SignalTimer>,
}

impl Timer {
    /// Arm netperf's clock for a data loop that is its process's only
    /// thread: no timer thread (see `signal_timer`), stop signals watched;
    /// the timer thread when the thread-free one is taken.
    pub fn arm_alone(after: Option<Duration>, flag: StopFlag) -> Timer {
        match SignalTimer::arm(after, &flag) {
            Some(alone) => Timer {
                registration: None,
                fired: Arc::new(AtomicBool::new(false)),
                alone: Some(alone),
            },
            None => Self::arm_watching(after, flag, true),
        }
    }

    /// Arm a timer; `None` means never (the test ends by count or by the peer).
    pub fn arm(after: Option<Duration>, flag: StopFlag) -> Timer {
        Self::arm_watching(after, flag, false)
    }

    /// Arm a timer that also ends the test when a stop signal arrives
    /// (`signals::install`) or someone else sets the flag: netperf's
    /// timer, even for -l 0 or a count.
    pub fn arm_watching(after: Option<Duration>, flag: StopFlag, watch_signals: bool) -> Timer {
        let fired = Arc::new(AtomicBool::new(false));
        if after.is_none() && !watch_signals {
            return Timer {
                registration: None,
                fired,
                alone: None,
            };
        }
        install_wake_handler();
        let deadline = after.map(|a| Instant::now() + a);
        let registration = timer_thread::register(deadline, watch_signals, flag, fired.clone());
        Timer {
            registration,
            fired,
            alone: None,
        }
    }

    /// Whether the timer (not the peer or a count) ended the test.
    pub fn fired(&self) -> bool {
        match &self.alone {
            Some(alone) => alone.fired(),
            None => self.fired.load(Ordering::Relaxed),
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        // Unregistering takes the timer thread's lock: once it returns,
        // this thread is never signalled for this timer again.
        drop(self.registration.take());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn fires_and_cancels() {
        let flag = StopFlag::new();
        let t = Timer::arm(Some(Duration::from_millis(10)), flag.clone());
        for _ in 0..500 {
            if flag.is_set() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(flag.is_set() && t.fired());
        drop(t);
        let flag2 = StopFlag::new();
        drop(Timer::arm(Some(Duration::from_secs(3600)), flag2.clone()));
        assert!(!flag2.is_set());
    }

    #[test]
    fn interrupts_a_blocked_receive() {
        std::thread::spawn(|| {
            let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let flag = StopFlag::new();
            let started = Instant::now();
            let timer = Timer::arm(Some(Duration::from_millis(50)), flag.clone());
            let mut buf = [0u8; 16];
            // Blocks with no timeout: only the timer's signal can end it.
            let err = loop {
                match sock.recv(&mut buf) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted && flag.is_set() => {
                        break e
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    other => panic!("unexpected {other:?}"),
                }
            };
            drop(timer);
            assert_eq!(err.kind(), std::io::ErrorKind::Interrupted);
            assert!(started.elapsed() < Duration::from_secs(30));
        })
        .join()
        .unwrap();
    }

    /// netagg's case: many data threads blocked with no deadline, each
    /// ended by its owner setting the shared flag, all served by the one
    /// timer thread; a short deadline fires while a long one does not.
    #[test]
    fn one_thread_serves_many_timers() {
        let flags: Vec<StopFlag> = (0..32).map(|_| StopFlag::new()).collect();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let threads: Vec<_> = flags
            .iter()
            .cloned()
            .map(|flag| {
                let ready = ready_tx.clone();
                std::thread::spawn(move || {
                    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
                    let timer = Timer::arm_watching(None, flag.clone(), true);
                    ready.send(()).unwrap();
                    let mut buf = [0u8; 16];
                    let mut interrupted = false;
                    for _ in 0..100_000 {
                        match sock.recv(&mut buf) {
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                                if flag.is_set() {
                                    interrupted = true;
                                    break;
                                }
                            }
                            other => panic!("unexpected {other:?}"),
                        }
                    }
                    let fired = timer.fired();
                    drop(timer);
                    (interrupted, fired)
                })
            })
            .collect();
        for _ in 0..flags.len() {
            ready_rx.recv_timeout(Duration::from_secs(30)).unwrap();
        }
        let short = StopFlag::new();
        let long = StopFlag::new();
        let short_timer = Timer::arm(Some(Duration::from_millis(20)), short.clone());
        let long_timer = Timer::arm(Some(Duration::from_secs(3600)), long.clone());
        for f in &flags {
            f.set();
        }
        for t in threads {
            // Stopped by the owner, not by a deadline.
            assert_eq!(t.join().unwrap(), (true, false));
        }
        for _ in 0..1000 {
            if short.is_set() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(short.is_set() && short_timer.fired());
        assert!(!long.is_set() && !long_timer.fired());
    }
}
