//! The test clock: a thread that flips an atomic when the test time is up and
//! interrupts the data thread's blocking call with a signal, as netperf's
//! SIGALRM does — so the data path reads a relaxed load per call, arms no
//! socket timeout, and still never blocks past the end of the test.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Once};
use std::thread::JoinHandle;
use std::time::Duration;

/// Set when the test must stop: by the timer, or by `stop_now`.
#[derive(Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    pub fn new() -> Self {
        StopFlag::default()
    }
    #[inline]
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
    pub fn set(&self) {
        self.0.store(true, Ordering::Relaxed)
    }
}

/// The signal that interrupts a blocked data call at the end of a test.
const WAKE_SIGNAL: libc::c_int = libc::SIGALRM;
/// How often the wake-up is repeated until the data thread has noticed: a
/// signal that lands just before the thread enters a blocking call is lost.
const WAKE_REPEAT: Duration = Duration::from_millis(20);

extern "C" fn on_wake_signal(_: libc::c_int) {}

/// Install a do-nothing handler without SA_RESTART, so the signal makes a
/// blocked send/recv/accept/connect return EINTR instead of killing us.
fn install_wake_handler() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // SAFETY: a zeroed sigaction with a plain handler and an empty mask
        // is valid; the handler touches nothing.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_wake_signal as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            action.sa_flags = 0;
            libc::sigaction(WAKE_SIGNAL, &action, std::ptr::null_mut());
        }
    });
}

/// Sets a StopFlag after a duration, then interrupts the thread that armed
/// it until it is dropped. Drop it on that thread, before that thread ends.
pub struct Timer {
    cancel: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
    fired: Arc<AtomicBool>,
}

impl Timer {
    /// Arm a timer; `None` means never (the test ends by count or by the peer).
    pub fn arm(after: Option<Duration>, flag: StopFlag) -> Timer {
        let fired = Arc::new(AtomicBool::new(false));
        let Some(after) = after else {
            return Timer {
                cancel: None,
                thread: None,
                fired,
            };
        };
        install_wake_handler();
        // SAFETY: pthread_self has no preconditions.
        let target = unsafe { libc::pthread_self() };
        let (tx, rx) = mpsc::channel::<()>();
        let fired_in_thread = fired.clone();
        let thread = std::thread::Builder::new()
            .name("test-timer".into())
            .spawn(move || {
                if !matches!(rx.recv_timeout(after), Err(RecvTimeoutError::Timeout)) {
                    return;
                }
                fired_in_thread.store(true, Ordering::Relaxed);
                flag.set();
                loop {
                    // SAFETY: the target thread owns this Timer and joins this
                    // thread in Drop before it can exit, so it is alive here.
                    unsafe { libc::pthread_kill(target, WAKE_SIGNAL) };
                    if !matches!(rx.recv_timeout(WAKE_REPEAT), Err(RecvTimeoutError::Timeout)) {
                        return;
                    }
                }
            })
            .ok();
        Timer {
            cancel: Some(tx),
            thread,
            fired,
        }
    }

    /// Whether the timer (not the peer or a count) ended the test.
    pub fn fired(&self) -> bool {
        self.fired.load(Ordering::Relaxed)
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        if let Some(tx) = self.cancel.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
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
}
