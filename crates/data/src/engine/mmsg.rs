//! Batched UDP data loops: sendmmsg(2)/recvmmsg(2) move up to `batch`
//! datagrams per system call. Same rules as the one-call-per-message loops
//! (stream.rs, rr.rs): blocking sockets, buffers from preallocated rings, the
//! message headers allocated once per loop, one relaxed stop-flag load per
//! batch, and `Counters` that count messages, not system calls — each loop
//! also returns the number of system calls it made.

use super::io::{classify, Io};
use super::ring::BufferRing;
use super::stop_flag::StopFlag;
use super::{Counters, DataError};
use std::os::fd::RawFd;

/// The most messages one call moves (the kernel's UIO_MAXIOV).
pub const MAX_BATCH: usize = 1024;

/// A requested batch size as the loops use it: 0 means 1, at most MAX_BATCH.
pub fn clamp_batch(batch: usize) -> usize {
    batch.clamp(1, MAX_BATCH)
}

/// The per-loop message headers: one mmsghdr, iovec and address slot per
/// message of a batch, allocated once when the loop starts.
pub(super) struct Slots {
    hdrs: Box<[libc::mmsghdr]>,
    iovs: Box<[libc::iovec]>,
    names: Box<[libc::sockaddr_storage]>,
}

const NAME_LEN: libc::socklen_t = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;

impl Slots {
    /// `cap` slots; `with_names` adds one source-address store per slot.
    pub(super) fn new(cap: usize, with_names: bool) -> Slots {
        // SAFETY: mmsghdr, iovec and sockaddr_storage are plain C data for
        // which all-zero bytes are valid: null pointers and zero lengths.
        let hdrs = std::iter::repeat_with(|| unsafe { std::mem::zeroed::<libc::mmsghdr>() })
            .take(cap)
            .collect();
        // SAFETY: as above.
        let iovs = std::iter::repeat_with(|| unsafe { std::mem::zeroed::<libc::iovec>() })
            .take(cap)
            .collect();
        let names = std::iter::repeat_with(|| {
            // SAFETY: as above.
            unsafe { std::mem::zeroed::<libc::sockaddr_storage>() }
        })
        .take(if with_names { cap } else { 0 })
        .collect();
        Slots { hdrs, iovs, names }
    }

    /// Address every message to `dest` (None: the connected peer).
    fn set_dest(&mut self, dest: Option<&socket2::SockAddr>) {
        let (name, len) = match dest {
            // The kernel only reads msg_name on send, so the const cast is sound.
            Some(a) => (a.as_ptr() as *mut libc::c_void, a.len()),
            None => (std::ptr::null_mut(), 0),
        };
        for h in self.hdrs.iter_mut() {
            h.msg_hdr.msg_name = name;
            h.msg_hdr.msg_namelen = len;
        }
    }

    /// Point the first `n` messages at the next `n` buffers of `ring`,
    /// `len` bytes each. Addresses are left as they are.
    #[inline]
    pub(super) fn arm(&mut self, ring: &mut BufferRing, n: usize, len: usize) {
        for (h, iov) in self.hdrs.iter_mut().zip(self.iovs.iter_mut()).take(n) {
            iov.iov_base = ring.next_ptr().cast();
            iov.iov_len = len;
            h.msg_hdr.msg_iov = iov;
            h.msg_hdr.msg_iovlen = 1;
        }
    }

    /// Let the first `n` messages record their source address.
    #[inline]
    fn arm_names(&mut self, n: usize) {
        for (h, name) in self.hdrs.iter_mut().zip(self.names.iter_mut()).take(n) {
            h.msg_hdr.msg_name = (name as *mut libc::sockaddr_storage).cast();
            h.msg_hdr.msg_namelen = NAME_LEN;
        }
    }

    /// The first `n` headers (all of them if `n` is larger).
    #[inline]
    pub(super) fn head(&mut self, n: usize) -> &mut [libc::mmsghdr] {
        let n = n.min(self.hdrs.len());
        &mut self.hdrs[..n]
    }
}

/// sendmmsg(2) of every header in `hdrs`.
#[inline]
fn send_mmsg(fd: RawFd, hdrs: &mut [libc::mmsghdr]) -> Io {
    // SAFETY: each header points at one live iovec (Slots::arm) over a ring
    // buffer of at least iov_len bytes, and at a live address or none; the
    // count is at most MAX_BATCH, so it fits in c_uint.
    // The raw system call skips glibc's cancellation-point bookkeeping (see
    // io::raw_sendto).
    let ret = unsafe {
        libc::syscall(
            libc::SYS_sendmmsg,
            fd as libc::c_long,
            hdrs.as_mut_ptr() as libc::c_long,
            hdrs.len() as libc::c_long,
            libc::MSG_NOSIGNAL as libc::c_long,
        )
    };
    classify(ret as isize)
}

/// recvmmsg(2) into every header in `hdrs`: blocks for the first datagram
/// only (MSG_WAITFORONE), then takes what is already queued (on a
/// non-blocking socket: what is queued, EAGAIN if nothing).
#[inline]
pub(super) fn recv_mmsg(fd: RawFd, hdrs: &mut [libc::mmsghdr]) -> Io {
    // SAFETY: each header points at one live iovec over a writable ring
    // buffer of at least iov_len bytes, and at a live sockaddr_storage of
    // msg_namelen bytes or none; no timeout.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_recvmmsg,
            fd as libc::c_long,
            hdrs.as_mut_ptr() as libc::c_long,
            hdrs.len() as libc::c_long,
            libc::MSG_WAITFORONE as libc::c_long,
            0 as libc::c_long,
        )
    };
    classify(ret as isize)
}

/// A received datagram of length zero: netperf's end-of-test signal. A
/// longer datagram cut to nothing by a zero-size buffer carries MSG_TRUNC.
#[inline]
fn is_end(h: &libc::mmsghdr) -> bool {
    h.msg_len == 0 && h.msg_hdr.msg_flags & libc::MSG_TRUNC == 0
}

/// How a batch send ended.
struct Sent {
    /// Messages the kernel took.
    ok: usize,
    /// False when the loop must end (stopping, or the socket gave up).
    go_on: bool,
}

/// Send every (armed) message in `hdrs`, resubmitting the tail of a partial
/// batch; messages that fail with ENOBUFS/ENOMEM count as failed sends.
#[inline]
fn send_all(
    fd: RawFd,
    hdrs: &mut [libc::mmsghdr],
    stop: &StopFlag,
    c: &mut Counters,
    calls: &mut u64,
) -> Result<Sent, DataError> {
    let n = hdrs.len();
    let mut sent = 0usize;
    while sent < n {
        let rest = &mut hdrs[sent..];
        *calls += 1;
        match send_mmsg(fd, rest) {
            Io::Moved(k) => {
                let k = k.min(rest.len());
                for h in &rest[..k] {
                    c.bytes_sent += u64::from(h.msg_len);
                }
                c.send_calls += k as u64;
                stop.publish(c.bytes_sent);
                sent += k;
                // The kernel drops the error that cut a batch short (it
                // reports only errors before the first message): stop if
                // a signal did, otherwise resubmit and hear it then.
                if sent < n && stop.is_set() {
                    return Ok(Sent {
                        ok: sent,
                        go_on: false,
                    });
                }
            }
            Io::Retry | Io::Zero => {
                if stop.is_set() {
                    return Ok(Sent {
                        ok: sent,
                        go_on: false,
                    });
                }
            }
            Io::NoBuffers => {
                c.failed_sends += (n - sent) as u64;
                break;
            }
            Io::Failed(e) => {
                if stop.is_set() {
                    return Ok(Sent {
                        ok: sent,
                        go_on: false,
                    });
                }
                return Err(DataError::Send(e));
            }
        }
    }
    Ok(Sent {
        ok: sent,
        go_on: true,
    })
}

/// How many messages of `size` bytes still fit under a byte limit, at most
/// `batch` (every message is at most `size` bytes, so a limit is crossed
/// by the last message of a batch at the earliest, as one call at a time).
#[inline]
fn under_limit(done: u64, limit: Option<u64>, size: usize, batch: usize) -> usize {
    match limit {
        None => batch,
        Some(limit) => {
            let left = limit.saturating_sub(done);
            let msgs = left.div_ceil(size.max(1) as u64);
            msgs.min(batch as u64) as usize
        }
    }
}

/// UDP_STREAM sender: sendmmsg batches of up to `batch` ring buffers of
/// `ring.size()` bytes until `stop` is set or `byte_limit` bytes have gone.
/// `send_calls` counts messages, as netperf reports them; a batch that fails
/// with ENOBUFS/ENOMEM adds its unsent messages to `failed_sends`. Returns
/// the counters and the number of sendmmsg calls. A zero-size ring sends
/// nothing (a zero-length datagram would end the receiver's test).
pub fn stream_send_batched(
    fd: RawFd,
    ring: &mut BufferRing,
    batch: usize,
    stop: &StopFlag,
    byte_limit: Option<u64>,
    dest: Option<&socket2::SockAddr>,
) -> Result<(Counters, u64), DataError> {
    let mut c = Counters::default();
    let mut calls = 0u64;
    let size = ring.size();
    if size == 0 {
        return Ok((c, calls));
    }
    let batch = clamp_batch(batch);
    let mut slots = Slots::new(batch, false);
    slots.set_dest(dest);
    while !stop.is_set() {
        let n = under_limit(c.bytes_sent, byte_limit, size, batch);
        if n == 0 {
            break;
        }
        slots.arm(ring, n, size);
        if !send_all(fd, slots.head(n), stop, &mut c, &mut calls)?.go_on {
            break;
        }
    }
    Ok((c, calls))
}

/// UDP_STREAM receiver: recvmmsg up to `batch` datagrams per call (blocking
/// for the first only) until a zero-length datagram arrives — the messages
/// before it in its batch count, nothing after it — `stop` is set, or
/// `byte_limit` bytes have arrived. `recv_calls` counts messages. Returns
/// the counters and the number of recvmmsg calls.
pub fn stream_recv_batched(
    fd: RawFd,
    ring: &mut BufferRing,
    batch: usize,
    stop: &StopFlag,
    byte_limit: Option<u64>,
) -> Result<(Counters, u64), DataError> {
    let mut c = Counters::default();
    let mut calls = 0u64;
    let size = ring.size();
    let batch = clamp_batch(batch);
    let mut slots = Slots::new(batch, false);
    'test: while !stop.is_set() {
        let n = under_limit(c.bytes_received, byte_limit, size, batch);
        if n == 0 {
            break;
        }
        slots.arm(ring, n, size);
        let hdrs = slots.head(n);
        calls += 1;
        match recv_mmsg(fd, hdrs) {
            Io::Moved(k) => {
                for h in hdrs.iter().take(k) {
                    if is_end(h) {
                        break 'test;
                    }
                    c.recv_calls += 1;
                    c.bytes_received += u64::from(h.msg_len);
                    stop.publish(c.bytes_received);
                }
            }
            // Interrupted or timed out: the loop condition reads the flag.
            Io::Retry | Io::Zero | Io::NoBuffers => {}
            Io::Failed(e) => {
                if stop.is_set() || e.raw_os_error() == Some(libc::ECONNRESET) {
                    break;
                }
                return Err(DataError::Recv(e));
            }
        }
    }
    Ok((c, calls))
}

/// UDP request/response client keeping `first_burst + 1` requests in flight:
/// one sendmmsg sends the first window, then each recvmmsg takes the
/// responses that have arrived (up to `batch`), counts a transaction per
/// response and one sendmmsg sends as many new requests. Never sends more
/// requests than `trans_limit` needs. Requests lost to ENOBUFS are counted
/// as failed sends and sent again with the next refill; requests or
/// responses lost on the network are not noticed (there is no receive
/// timeout): the window shrinks and the stop flag ends the test. A
/// zero-length response ends it too. Returns the counters and the number of
/// sendmmsg + recvmmsg calls.
#[allow(clippy::too_many_arguments)]
pub fn rr_client_batched(
    fd: RawFd,
    send_ring: &mut BufferRing,
    recv_ring: &mut BufferRing,
    first_burst: u32,
    batch: usize,
    stop: &StopFlag,
    trans_limit: Option<u64>,
    dest: Option<&socket2::SockAddr>,
) -> Result<(Counters, u64), DataError> {
    let mut c = Counters::default();
    let mut calls = 0u64;
    let (req, rsp) = (send_ring.size(), recv_ring.size());
    let batch = clamp_batch(batch);
    let window = u64::from(first_burst) + 1;
    // The first window goes in one call when it fits in MAX_BATCH.
    let send_cap = (window.min(MAX_BATCH as u64) as usize).max(batch);
    let mut tx = Slots::new(send_cap, false);
    tx.set_dest(dest);
    let mut rx = Slots::new(batch, false);
    // Requests the kernel took and no response has answered yet.
    let mut in_flight = 0u64;
    'test: loop {
        if stop.is_set() {
            break;
        }
        let left = trans_limit.map_or(u64::MAX, |l| l.saturating_sub(c.transactions));
        if left == 0 {
            break;
        }
        // Refill the window, smaller near the transaction limit.
        let mut deficit = window.min(left).saturating_sub(in_flight);
        let mut first = true;
        while deficit > 0 {
            if !first && stop.is_set() {
                break 'test;
            }
            first = false;
            let n = deficit.min(send_cap as u64) as usize;
            tx.arm(send_ring, n, req);
            let sent = send_all(fd, tx.head(n), stop, &mut c, &mut calls)?;
            in_flight += sent.ok as u64;
            if !sent.go_on {
                break 'test;
            }
            deficit -= n as u64;
        }
        if in_flight == 0 {
            // Every request just failed locally: nothing can answer, so
            // try again rather than wait.
            continue;
        }
        let n = (batch as u64).min(left) as usize;
        rx.arm(recv_ring, n, rsp);
        let hdrs = rx.head(n);
        calls += 1;
        match recv_mmsg(fd, hdrs) {
            Io::Moved(k) => {
                for h in hdrs.iter().take(k) {
                    if is_end(h) {
                        break 'test;
                    }
                    c.recv_calls += 1;
                    c.bytes_received += u64::from(h.msg_len);
                    c.transactions += 1;
                    stop.publish(c.transactions);
                    in_flight = in_flight.saturating_sub(1);
                }
            }
            Io::Retry | Io::Zero | Io::NoBuffers => {}
            Io::Failed(e) => {
                if stop.is_set() || e.raw_os_error() == Some(libc::ECONNRESET) {
                    break;
                }
                return Err(DataError::Recv(e));
            }
        }
    }
    Ok((c, calls))
}

/// UDP request/response server: recvmmsg up to `batch` requests (blocking
/// for the first only), recording each one's source, then one sendmmsg
/// answering each to its source. A zero-length datagram ends the test (the
/// requests before it in its batch are answered). Stops at `trans_limit`
/// transactions or when `stop` is set. Returns the counters and the number
/// of sendmmsg + recvmmsg calls.
pub fn rr_server_batched(
    fd: RawFd,
    recv_ring: &mut BufferRing,
    send_ring: &mut BufferRing,
    batch: usize,
    stop: &StopFlag,
    trans_limit: Option<u64>,
    permit: impl Fn(&libc::sockaddr_storage) -> bool,
) -> Result<(Counters, u64), DataError> {
    let mut c = Counters::default();
    let mut calls = 0u64;
    let (req, rsp) = (recv_ring.size(), send_ring.size());
    let batch = clamp_batch(batch);
    // One set of slots: each response reuses its request's header, whose
    // msg_name/msg_namelen recvmmsg filled with the request's source.
    let mut slots = Slots::new(batch, true);
    while !stop.is_set() {
        let left = trans_limit.map_or(u64::MAX, |l| l.saturating_sub(c.transactions));
        let n = (batch as u64).min(left) as usize;
        if n == 0 {
            break;
        }
        slots.arm(recv_ring, n, req);
        slots.arm_names(n);
        let hdrs = slots.head(n);
        calls += 1;
        let k = match recv_mmsg(fd, hdrs) {
            Io::Moved(k) => k.min(n),
            Io::Retry | Io::Zero | Io::NoBuffers => continue,
            Io::Failed(e) => {
                if stop.is_set() {
                    break;
                }
                return Err(DataError::Recv(e));
            }
        };
        // A batch with a source `permit` refuses is dropped whole (its
        // requests time out at their clients): rare, and no answer can go
        // to a spoofed source.
        let refused = hdrs.iter().take(k).any(|h| {
            // SAFETY: msg_name points at the slot's sockaddr_storage.
            !permit(unsafe { &*h.msg_hdr.msg_name.cast::<libc::sockaddr_storage>() })
        });
        if refused {
            continue;
        }
        let mut answer = 0usize;
        let mut ended = false;
        for h in hdrs.iter().take(k) {
            if is_end(h) {
                ended = true;
                break;
            }
            c.recv_calls += 1;
            c.bytes_received += u64::from(h.msg_len);
            answer += 1;
        }
        if answer > 0 {
            slots.arm(send_ring, answer, rsp);
            let go_on = send_all(fd, slots.head(answer), stop, &mut c, &mut calls)?.go_on;
            c.transactions += answer as u64;
            stop.publish(c.transactions);
            if !go_on {
                break;
            }
        }
        if ended {
            break;
        }
    }
    Ok((c, calls))
}

#[cfg(test)]
#[path = "mmsg_tests.rs"]
mod tests;
