//! The coordinator's scheduling priority. At a thousand streams on two CPUs
//! every stream thread (and, on a testbed, every netserver thread) is
//! runnable at once, and a coordinator at their priority waits its turn
//! behind them all: a level's gate looked at its streams seconds late and
//! sampling instants ran up to a second late (and were skipped). The
//! coordinator does next to nothing (it wakes, reads an atomic per stream,
//! sleeps), so it asks for a higher priority (nice 10 below the process's)
//! for its own thread, which takes no CPU from the streams' work; the stream
//! threads it spawns, which inherit it, go back to the process's nice first
//! thing. Raising a priority needs CAP_SYS_NICE (or an RLIMIT_NICE): without
//! it the coordinator stays where it is, and the run records that.

/// How far below the process's nice the coordinator asks to run.
const BOOST: i32 = 10;

/// The calling thread's kernel id (setpriority on it affects that thread
/// alone on Linux).
fn tid() -> libc::id_t {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as libc::id_t }
}

/// The calling thread's nice value.
fn nice_of_this_thread() -> Option<i32> {
    // getpriority may return -1 as a value: errno tells an error apart.
    // SAFETY: errno is thread-local; getpriority only reads.
    unsafe {
        *libc::__errno_location() = 0;
        let nice = libc::getpriority(libc::PRIO_PROCESS, tid());
        (*libc::__errno_location() == 0).then_some(nice)
    }
}

fn set_nice_of_this_thread(nice: i32) -> bool {
    // SAFETY: setpriority on this thread's own id changes only its nice.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, tid(), nice) == 0 }
}

/// The coordinator's raised priority while it lives; dropping it puts the
/// thread back at `base`.
#[derive(Debug)]
pub struct Raised {
    /// The nice the streams run at (the process's, before the raise).
    pub base: i32,
    /// Whether the raise was granted.
    pub granted: bool,
}

impl Raised {
    /// Raise the calling thread's priority, if allowed.
    pub fn coordinator() -> Raised {
        let base = nice_of_this_thread().unwrap_or(0);
        let granted = set_nice_of_this_thread((base - BOOST).max(-20));
        Raised { base, granted }
    }
}

impl Drop for Raised {
    fn drop(&mut self) {
        if self.granted {
            set_nice_of_this_thread(self.base);
        }
    }
}

/// In a thread the raised coordinator spawned: back to `base` (lowering a
/// priority is always allowed).
pub fn stream_thread_at(base: i32) {
    if nice_of_this_thread() != Some(base) {
        set_nice_of_this_thread(base);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spawned_thread_goes_back_to_the_base_priority() {
        // In a thread of its own, so the test thread keeps its nice.
        std::thread::spawn(|| {
            let before = nice_of_this_thread().unwrap();
            let raised = Raised::coordinator();
            assert_eq!(raised.base, before);
            if raised.granted {
                assert_eq!(nice_of_this_thread(), Some((before - BOOST).max(-20)));
            }
            let base = raised.base;
            let in_stream = std::thread::spawn(move || {
                stream_thread_at(base);
                nice_of_this_thread()
            })
            .join()
            .unwrap();
            assert_eq!(in_stream, Some(before));
            drop(raised);
            assert_eq!(nice_of_this_thread(), Some(before));
        })
        .join()
        .unwrap();
    }
}
