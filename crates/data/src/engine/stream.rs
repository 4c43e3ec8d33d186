//! Unidirectional bulk transfer: the sending end (TCP_STREAM client, TCP_MAERTS
//! server, UDP_STREAM client, TCP_SENDFILE) and the receiving end.

use super::io::{self, Io};
use super::pacing::Pacer;
use super::ring::BufferRing;
use super::sequence::Sequence;
use super::stop_flag::StopFlag;
use super::{Counters, DataError, Histogram};
use std::os::fd::RawFd;
use std::time::Instant;

/// Send ring buffers until `stop` is set or `byte_limit` bytes have gone,
/// at the `pacer`'s rate when there is one.
/// UDP sends that fail with ENOBUFS count as failed sends, as in netperf.
#[allow(clippy::too_many_arguments)]
pub fn send(
    fd: RawFd,
    ring: &mut BufferRing,
    stop: &StopFlag,
    byte_limit: Option<u64>,
    dest: Option<&socket2::SockAddr>,
    mut hist: Option<&mut Histogram>,
    mut seq: Option<&mut Sequence>,
    mut pacer: Option<&mut Pacer>,
) -> Result<Counters, DataError> {
    let mut c = Counters::default();
    let size = ring.size();
    while !stop.is_set() {
        if let Some(limit) = byte_limit {
            if c.bytes_sent >= limit {
                break;
            }
        }
        let buf = ring.next_ptr();
        if let Some(s) = seq.as_deref_mut() {
            // SAFETY: the ring buffer holds `size` bytes.
            unsafe { s.stamp(buf, size) };
        }
        let started = hist.as_ref().map(|_| Instant::now());
        let mut done = 0usize;
        // A timed-out send may be partial; finish the buffer unless stopping.
        while done < size {
            // SAFETY: done < size keeps the pointer inside the ring buffer.
            match io::send(fd, unsafe { buf.add(done) }, size - done, dest) {
                Io::Moved(n) => done += n,
                Io::Retry => {
                    if stop.is_set() {
                        break;
                    }
                }
                Io::NoBuffers => {
                    c.failed_sends += 1;
                    break;
                }
                Io::Zero => break,
                Io::Failed(e) => {
                    // A reset or a closed peer at the end of a test that ran
                    // until its netperf stopped (-l 0, a signal) is that end.
                    if peer_went_away(&e) {
                        return Ok(c);
                    }
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
            if let Some(s) = seq.as_deref_mut() {
                s.sent();
            }
        }
        if let (Some(h), Some(t0)) = (hist.as_deref_mut(), started) {
            h.record_ns(t0.elapsed().as_nanos() as u64);
        }
        if let Some(p) = pacer.as_deref_mut() {
            p.after_op(stop);
        }
    }
    if let Some(p) = pacer {
        c.paced_wait = p.waited();
    }
    Ok(c)
}

fn peer_went_away(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPIPE) | Some(libc::ECONNRESET))
}

/// Send a regular file's bytes with sendfile(2), `size` bytes per call,
/// wrapping around the file.
pub fn send_file(
    fd: RawFd,
    file_fd: RawFd,
    file_len: usize,
    size: usize,
    stop: &StopFlag,
    byte_limit: Option<u64>,
    mut hist: Option<&mut Histogram>,
) -> Result<Counters, DataError> {
    let mut c = Counters::default();
    let mut offset: libc::off_t = 0;
    while !stop.is_set() {
        if let Some(limit) = byte_limit {
            if c.bytes_sent >= limit {
                break;
            }
        }
        if offset as usize + size > file_len {
            offset = 0;
        }
        let started = hist.as_ref().map(|_| Instant::now());
        match io::sendfile(fd, file_fd, &mut offset, size) {
            Io::Moved(n) => {
                c.bytes_sent += n as u64;
                stop.publish(c.bytes_sent);
                c.send_calls += 1;
                if let (Some(h), Some(t0)) = (hist.as_deref_mut(), started) {
                    h.record_ns(t0.elapsed().as_nanos() as u64);
                }
            }
            Io::Retry | Io::NoBuffers => {}
            Io::Zero => offset = 0,
            Io::Failed(e) => {
                if stop.is_set() {
                    break;
                }
                return Err(DataError::Send(e));
            }
        }
    }
    Ok(c)
}

/// Receive into ring buffers until the peer closes (or sends a zero-length
/// datagram), `stop` is set, or `byte_limit` bytes have arrived. With `hist`
/// every receive call is timed, as netperf times them in a receive test.
pub fn recv(
    fd: RawFd,
    ring: &mut BufferRing,
    stop: &StopFlag,
    byte_limit: Option<u64>,
    mut hist: Option<&mut Histogram>,
    mut seq: Option<&mut Sequence>,
) -> Result<Counters, DataError> {
    let mut c = Counters::default();
    let size = ring.size();
    while !stop.is_set() {
        if let Some(limit) = byte_limit {
            if c.bytes_received >= limit {
                break;
            }
        }
        let started = hist.as_ref().map(|_| Instant::now());
        let buf = ring.next_ptr();
        match io::recv(fd, buf, size) {
            Io::Moved(n) => {
                c.bytes_received += n as u64;
                stop.publish(c.bytes_received);
                c.recv_calls += 1;
                if let Some(s) = seq.as_deref_mut() {
                    // SAFETY: the ring buffer holds the n bytes just received.
                    unsafe { s.check(buf, n) };
                }
                if let (Some(h), Some(t0)) = (hist.as_deref_mut(), started) {
                    h.record_ns(t0.elapsed().as_nanos() as u64);
                }
            }
            // netperf does not count the final zero-byte receive.
            Io::Zero => break,
            Io::Retry | Io::NoBuffers => {}
            Io::Failed(e) => {
                if stop.is_set() {
                    break;
                }
                // A reset at the very end of a test is the peer going away.
                if e.raw_os_error() == Some(libc::ECONNRESET) {
                    break;
                }
                return Err(DataError::Recv(e));
            }
        }
    }
    Ok(c)
}
