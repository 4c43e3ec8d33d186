//! TCP stream receives that skip the copy (netperf-ng `--skip-rx-copy`):
//! recv with MSG_TRUNC and no buffer has the kernel drop up to `size` bytes
//! of the stream and say how many, so the bytes are counted exactly and
//! never copied to user space. What is left is the protocol's own cost.

use super::io::{self, classify, Io};
use super::stop_flag::StopFlag;
use super::{Counters, DataError};
use std::os::fd::RawFd;

/// Take the stream `size` bytes a call at most, discarding them, until the
/// peer closes, `stop` is set, or `byte_limit` bytes have arrived. Counts
/// bytes and calls as a copying receive does. Out of line, as every
/// fast-path loop (see `gso::send`).
#[inline(never)]
pub fn recv(
    fd: RawFd,
    size: usize,
    stop: &StopFlag,
    byte_limit: Option<u64>,
) -> Result<Counters, DataError> {
    let mut c = Counters::default();
    let size = size.max(1);
    while !stop.is_set() {
        if byte_limit.is_some_and(|limit| c.bytes_received >= limit) {
            break;
        }
        // SAFETY: with MSG_TRUNC on a TCP socket the kernel writes nothing
        // to the (null) buffer. The raw system call skips glibc's
        // cancellation bookkeeping (see io::raw_sendto).
        let ret = unsafe {
            libc::syscall(
                libc::SYS_recvfrom,
                fd as libc::c_long,
                std::ptr::null_mut::<u8>() as libc::c_long,
                size as libc::c_long,
                libc::MSG_TRUNC as libc::c_long,
                std::ptr::null_mut::<libc::sockaddr>() as libc::c_long,
                std::ptr::null_mut::<libc::socklen_t>() as libc::c_long,
            )
        };
        match classify(ret as isize) {
            Io::Moved(n) => {
                c.bytes_received += n as u64;
                stop.publish(c.bytes_received);
                c.recv_calls += 1;
            }
            Io::Zero => break,
            Io::Retry | Io::NoBuffers => {}
            Io::Failed(e) => {
                io::receive_failed(e, stop)?;
                break;
            }
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    #[test]
    fn every_byte_is_counted_and_none_copied() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut tx = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (rx, _) = listener.accept().unwrap();
        let writer = std::thread::spawn(move || {
            let block = [7u8; 10_000];
            for _ in 0..100 {
                tx.write_all(&block).unwrap();
            }
        });
        let c = recv(rx.as_raw_fd(), 4096, &StopFlag::new(), None).unwrap();
        writer.join().unwrap();
        assert_eq!(c.bytes_received, 1_000_000);
        assert!(c.recv_calls >= 1_000_000 / 4096);
    }
}
