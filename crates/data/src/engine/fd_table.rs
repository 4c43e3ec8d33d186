//! Gives a data thread a file-descriptor table of its own, holding only the
//! descriptors its test uses.
//!
//! Why: while a process's descriptor table is shared by more than one thread,
//! the kernel takes and drops a reference on the file at every socket call
//! (fdget/fput: two atomics and a cache line bounced between CPUs). netserver
//! serves each client on a thread, beside a watchdog and a timer, so every
//! send and recv of its data loop paid that; stock netserver forks a process
//! per client and does not. On a table of its own the data thread takes the
//! kernel's borrow path instead: about 1.4 % of netserver's CPU in TCP_RR.
//!
//! The rules that make this safe, because a private table holds *copies* of
//! the descriptors it was made from:
//! - A kept descriptor is only borrowed by the private thread; whoever owns it
//!   closes it, on the shared table, after the private thread has ended.
//! - Every other descriptor is closed in the copy at once, so the thread never
//!   holds another client's connection open past its close.
//! - Descriptors the private thread opens (accepted data connections, TCP_CRR
//!   connections) exist only in its table; it must close them itself, and
//!   nothing it opens may outlive it.

use std::os::fd::RawFd;

/// close_range(2) as a raw system call: the libc wrapper needs glibc 2.34
/// and is missing from musl. Fails with ENOSYS before Linux 5.9.
fn close_range(first: u32, last: u32, flags: u32) -> bool {
    let (first, last, flags) = (
        first as libc::c_ulong,
        last as libc::c_ulong,
        flags as libc::c_ulong,
    );
    // SAFETY: close_range only closes descriptors; the callers say which.
    unsafe { libc::syscall(libc::SYS_close_range, first, last, flags) == 0 }
}

/// A thread's own descriptor table, made by `PrivateTable::enter`.
pub struct PrivateTable {
    private: bool,
}

impl PrivateTable {
    /// Give the calling thread a table of its own holding stdin, stdout,
    /// stderr and `keep`. When the kernel cannot (no close_range, before
    /// Linux 5.9) the thread goes on with the shared table, unchanged.
    ///
    /// # Safety
    /// The calling thread's table must be shared with a thread that outlives
    /// the PrivateTable (a scoped thread: its spawner waits for it). On a
    /// table nobody shares, the kernel makes no copy and this would close
    /// the process's own descriptors under their owners.
    pub(crate) unsafe fn enter(keep: &[RawFd]) -> PrivateTable {
        let mut keep: Vec<u32> = keep
            .iter()
            .filter_map(|&fd| u32::try_from(fd).ok())
            .filter(|&fd| fd > 2)
            .collect();
        keep.sort_unstable();
        keep.dedup();
        let highest = keep.last().copied().unwrap_or(2);
        // Unsharing with the range that runs to the end copies only the
        // descriptors below it: the others never enter the new table.
        if !close_range(highest + 1, u32::MAX, libc::CLOSE_RANGE_UNSHARE) {
            return PrivateTable { private: false };
        }
        let mut first = 3;
        for &kept in &keep {
            if kept > first {
                // The copies of other threads' descriptors.
                close_range(first, kept - 1, 0);
            }
            first = kept + 1;
        }
        PrivateTable { private: true }
    }

    /// Whether the thread really has a table of its own.
    pub fn is_private(&self) -> bool {
        self.private
    }
}

impl Drop for PrivateTable {
    /// Release the copies before the thread is joined, so that the owners'
    /// closes take effect at once. Drop it after everything the thread
    /// opened is closed.
    fn drop(&mut self) {
        if self.private {
            // The table is this thread's alone; nothing in it is owned by
            // anyone (see the module rules).
            close_range(3, u32::MAX, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    fn is_open(fd: RawFd) -> bool {
        // SAFETY: F_GETFD only reads the descriptor's flags.
        unsafe { libc::fcntl(fd, libc::F_GETFD) != -1 }
    }

    #[test]
    fn keeps_only_what_it_is_given_and_leaves_the_shared_table_alone() {
        let (kept, mut kept_peer) = UnixStream::pair().unwrap();
        let (other, mut other_peer) = UnixStream::pair().unwrap();
        let (kept_fd, other_fd) = (kept.as_raw_fd(), other.as_raw_fd());
        kept_peer.write_all(b"x").unwrap();
        let (private, kept_open, other_open) = std::thread::scope(|s| {
            s.spawn(|| {
                // SAFETY: a scoped thread; this test's thread outlives it.
                let table = unsafe { PrivateTable::enter(&[kept_fd]) };
                // The kept socket works from the private table.
                let mut b = [0u8; 1];
                (&kept).read_exact(&mut b).unwrap();
                (table.is_private(), is_open(kept_fd), is_open(other_fd))
            })
            .join()
            .unwrap()
        });
        assert!(
            private,
            "close_range(CLOSE_RANGE_UNSHARE) is in every supported kernel"
        );
        assert!(kept_open && !other_open);
        // The shared table still holds both.
        assert!(is_open(kept_fd) && is_open(other_fd));
        // Closing the other socket on the shared table closes the connection
        // now: no copy was left behind in the private table.
        drop(other);
        let mut b = [0u8; 1];
        assert_eq!(other_peer.read(&mut b).unwrap(), 0);
    }

    fn inode(fd: RawFd) -> Option<u64> {
        // SAFETY: fstat writes into a stat we own.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st.st_ino)
    }

    #[test]
    fn what_the_private_thread_opens_is_not_in_the_shared_table() {
        let (opened_tx, opened_rx) = std::sync::mpsc::channel();
        let (checked_tx, checked_rx) = std::sync::mpsc::channel::<()>();
        let private = std::thread::spawn(move || {
            // SAFETY: the test's thread shares the table and outlives this one.
            let _table = unsafe { PrivateTable::enter(&[]) };
            let (a, _b) = UnixStream::pair().unwrap();
            opened_tx
                .send((a.as_raw_fd(), inode(a.as_raw_fd())))
                .unwrap();
            checked_rx.recv().unwrap();
        });
        let (fd, ino) = opened_rx.recv().unwrap();
        // The number may hold something else of the shared table (tests run
        // in parallel), but never this socket.
        assert!(ino.is_some() && inode(fd) != ino);
        checked_tx.send(()).unwrap();
        private.join().unwrap();
    }
}
