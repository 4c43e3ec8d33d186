//! Stream sends with MSG_ZEROCOPY (netperf-ng `--zerocopy`): the kernel pins
//! the ring's pages instead of copying them, and reports completions on the
//! socket's error queue, which must be drained or sends start failing with
//! ENOBUFS. The data itself is never checked by netperf, so reusing a ring
//! buffer before its completion arrives is harmless.

use super::io::{self, Io};
use super::ring::BufferRing;
use super::stop_flag::StopFlag;
use super::{Counters, DataError};
use std::os::fd::RawFd;

/// Drain completions after this many sends: often enough to stay clear of
/// the socket's option-memory limit, rarely enough to cost little.
const DRAIN_EVERY: u32 = 64;

/// Read and discard every pending completion notification. Returns how many
/// notification messages were read.
fn drain_completions(fd: RawFd) -> u64 {
    let mut control = [0u8; 256];
    let mut drained = 0;
    // Bounded: the queue holds at most what the sends produced.
    for _ in 0..4096 {
        // SAFETY: msghdr is plain data; the control buffer outlives the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = control.len() as _;
        // SAFETY: valid fd and msghdr; no data iovecs are needed.
        let rc = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
        if rc < 0 {
            break;
        }
        drained += 1;
    }
    drained
}

/// Send ring buffers with MSG_ZEROCOPY until stopped or `byte_limit` bytes
/// have gone. The socket must have SO_ZEROCOPY set.
pub fn send(
    fd: RawFd,
    ring: &mut BufferRing,
    stop: &StopFlag,
    byte_limit: Option<u64>,
) -> Result<Counters, DataError> {
    let mut c = Counters::default();
    let size = ring.size();
    let mut since_drain = 0u32;
    while !stop.is_set() {
        if let Some(limit) = byte_limit {
            if c.bytes_sent >= limit {
                break;
            }
        }
        let buf = ring.next_ptr();
        let mut done = 0usize;
        while done < size {
            // SAFETY: done < size keeps the pointer inside the ring buffer.
            match io::send_flags(
                fd,
                unsafe { buf.add(done) },
                size - done,
                libc::MSG_ZEROCOPY,
            ) {
                Io::Moved(n) => done += n,
                Io::Retry => {
                    if stop.is_set() {
                        break;
                    }
                }
                // Out of option memory: completions are pending; reap them.
                Io::NoBuffers => {
                    if drain_completions(fd) == 0 && stop.is_set() {
                        break;
                    }
                }
                Io::Zero => break,
                Io::Failed(e) => {
                    if stop.is_set() {
                        break;
                    }
                    return Err(DataError::Send(e));
                }
            }
        }
        if done > 0 {
            c.bytes_sent += done as u64;
            stop.publish(c.bytes_sent);
            c.send_calls += 1;
        }
        since_drain += 1;
        if since_drain >= DRAIN_EVERY {
            drain_completions(fd);
            since_drain = 0;
        }
    }
    drain_completions(fd);
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::timer::Timer;
    use socket2::{Domain, Socket, Type};
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::time::Duration;

    #[test]
    fn zerocopy_sends_arrive_whole() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let reader = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut total = 0u64;
            let mut buf = vec![0u8; 65536];
            loop {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => total += n as u64,
                }
            }
            total
        });
        let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        s.connect(&addr.into()).unwrap();
        let one: i32 = 1;
        // SAFETY: valid fd and int option.
        let rc = unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                60,
                &one as *const i32 as *const libc::c_void,
                4,
            )
        };
        if rc != 0 {
            return crate::test_skip::skip("SO_ZEROCOPY not available here");
        }
        let mut ring = BufferRing::new(4, 16384, 8, 0);
        let stop = StopFlag::new();
        let timer = Timer::arm(Some(Duration::from_secs(20)), stop.clone());
        let c = send(s.as_raw_fd(), &mut ring, &stop, Some(16384 * 200)).unwrap();
        drop(timer);
        s.shutdown(std::net::Shutdown::Write).unwrap();
        assert_eq!(c.bytes_sent, 16384 * 200);
        assert_eq!(reader.join().unwrap(), 16384 * 200);
    }
}
