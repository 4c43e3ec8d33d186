//! The test clock: a thread that flips an atomic when the test time is up, so
//! the data path checks a relaxed load instead of reading a clock per call.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Arc;
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

/// Sets a StopFlag after a duration unless dropped first.
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
        let (tx, rx) = mpsc::channel::<()>();
        let fired_in_thread = fired.clone();
        let thread = std::thread::Builder::new()
            .name("test-timer".into())
            .spawn(move || {
                if let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(after) {
                    fired_in_thread.store(true, Ordering::Relaxed);
                    flag.set();
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
        let flag2 = StopFlag::new();
        drop(Timer::arm(Some(Duration::from_secs(3600)), flag2.clone()));
        assert!(!flag2.is_set());
    }
}
