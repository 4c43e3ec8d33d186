//! Moving one whole request or response: a stream may take several calls,
//! a datagram is one; both count calls and bytes and give up when stopping.

use super::io::{self, Io};
use super::stop_flag::StopFlag;
use super::{Counters, DataError};
use std::os::fd::RawFd;

/// Result of receiving one whole message.
pub enum Got {
    Message,
    Closed,
    /// Stopped, or (UDP with a receive timeout) the response was lost.
    Interrupted,
    TimedOut,
}

/// Receive exactly `len` bytes on a stream (waitall), or one datagram.
#[inline]
pub(crate) fn recv_message(
    fd: RawFd,
    buf: *mut u8,
    len: usize,
    udp: bool,
    stop: &StopFlag,
    loss_timeout: bool,
    c: &mut Counters,
) -> Result<Got, DataError> {
    let mut got = 0usize;
    loop {
        // SAFETY: got < len keeps the pointer inside the buffer.
        match io::recv(fd, unsafe { buf.add(got) }, len - got) {
            Io::Moved(n) => {
                c.recv_calls += 1;
                c.bytes_received += n as u64;
                got += n;
                if udp || got >= len {
                    return Ok(Got::Message);
                }
            }
            Io::Zero => return Ok(Got::Closed),
            Io::Retry | Io::NoBuffers => {
                if stop.is_set() {
                    return Ok(Got::Interrupted);
                }
                if loss_timeout && udp {
                    return Ok(Got::TimedOut);
                }
            }
            Io::Failed(e) => {
                if stop.is_set() || e.raw_os_error() == Some(libc::ECONNRESET) {
                    return Ok(Got::Closed);
                }
                return Err(DataError::Recv(e));
            }
        }
    }
}

/// Send one whole message; false when stopping or the peer is gone.
#[inline(always)]
pub(crate) fn send_message(
    fd: RawFd,
    buf: *const u8,
    len: usize,
    dest: Option<&socket2::SockAddr>,
    stop: &StopFlag,
    c: &mut Counters,
) -> Result<bool, DataError> {
    let mut done = 0usize;
    while done < len {
        // SAFETY: done < len keeps the pointer inside the buffer.
        match io::send(fd, unsafe { buf.add(done) }, len - done, dest) {
            Io::Moved(n) => done += n,
            Io::Retry => {
                if stop.is_set() {
                    return Ok(false);
                }
            }
            Io::NoBuffers => {
                c.failed_sends += 1;
                return Ok(true);
            }
            Io::Zero => return Ok(false),
            Io::Failed(e) => {
                if stop.is_set() {
                    return Ok(false);
                }
                return Err(DataError::Send(e));
            }
        }
    }
    c.send_calls += 1;
    c.bytes_sent += len as u64;
    Ok(true)
}
