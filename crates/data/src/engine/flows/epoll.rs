//! The readiness source of a many-flow thread: one epoll instance, its
//! sockets registered edge-triggered under a token (the flow's slot).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Readable, writable, and the errors epoll always reports.
pub const READ_WRITE: u32 =
    (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32;
/// A listener shared by every thread: each connection wakes one of them.
pub const ACCEPT: u32 = (libc::EPOLLIN | libc::EPOLLEXCLUSIVE) as u32;

pub struct Epoll(OwnedFd);

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: epoll_create1 takes no pointers; a valid fd is owned below.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd was just returned by the kernel and is owned by nobody else.
        Ok(Epoll(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Watches `fd` for `events`, reporting `token`.
    pub fn add(&self, fd: RawFd, token: u64, events: u32) -> io::Result<()> {
        let mut event = libc::epoll_event { events, u64: token };
        // SAFETY: `event` lives across the call; the kernel copies it.
        let rc =
            unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut event) };
        match rc {
            0 => Ok(()),
            _ => Err(io::Error::last_os_error()),
        }
    }

    /// Stops watching `fd` (closing it would too; a flow that replaces its
    /// socket says so first).
    pub fn remove(&self, fd: RawFd) {
        let mut event = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: as in `add`; a failure only means fd was not registered.
        unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_DEL, fd, &mut event) };
    }

    /// Waits up to `timeout_ms` for readiness; the tokens that became ready
    /// are in `events[..n]`. An interrupting signal is a wait with none.
    pub fn wait(&self, events: &mut [libc::epoll_event], timeout_ms: i32) -> io::Result<usize> {
        let max = events.len().min(i32::MAX as usize) as i32;
        // SAFETY: the kernel writes at most `max` events into `events`.
        let n =
            unsafe { libc::epoll_wait(self.0.as_raw_fd(), events.as_mut_ptr(), max, timeout_ms) };
        match n {
            n if n >= 0 => Ok(n as usize),
            _ => match io::Error::last_os_error() {
                e if e.kind() == io::ErrorKind::Interrupted => Ok(0),
                e => Err(e),
            },
        }
    }

    /// Waits up to `timeout_ns` (epoll_pwait2: a timer to the nanosecond,
    /// where epoll_wait rounds to milliseconds — an open loop's deadlines are
    /// microseconds apart). A kernel older than 5.11 waits the whole
    /// milliseconds below it instead, never past the deadline.
    pub fn wait_ns(&self, events: &mut [libc::epoll_event], timeout_ns: u64) -> io::Result<usize> {
        let max = events.len().min(i32::MAX as usize) as libc::c_long;
        let ts = libc::timespec {
            tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: the kernel writes at most `max` events into `events` and
        // reads the live timespec; no signal mask is passed.
        let n = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                self.0.as_raw_fd() as libc::c_long,
                events.as_mut_ptr() as libc::c_long,
                max,
                &ts as *const libc::timespec as libc::c_long,
                0 as libc::c_long,
                0 as libc::c_long,
            )
        };
        match n {
            n if n >= 0 => Ok(n as usize),
            _ => match io::Error::last_os_error() {
                e if e.raw_os_error() == Some(libc::ENOSYS) => {
                    let ms = (timeout_ns / 1_000_000).min(i32::MAX as u64) as i32;
                    self.wait(events, ms)
                }
                e if e.kind() == io::ErrorKind::Interrupted => Ok(0),
                e => Err(e),
            },
        }
    }
}

/// An empty event buffer of `n` entries.
pub fn events(n: usize) -> Vec<libc::epoll_event> {
    vec![libc::epoll_event { events: 0, u64: 0 }; n]
}
