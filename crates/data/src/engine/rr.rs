//! Request/response: the client keeps `burst` extra requests in flight (all
//! injected at once, as netperf 2.7.1's omni loop does) and counts a
//! transaction per response; the server answers each request.

use super::io::{self, Io};
use super::message::{recv_message, send_message, Got};
use super::pacing::Pacer;
use super::ring::BufferRing;
use super::sequence::Sequence;
use super::stop_flag::StopFlag;
use super::{Counters, DataError, Histogram};
use crate::measure::histogram::InFlightTimer;
use std::os::fd::RawFd;
use std::time::Instant;

/// Everything netperf's side of a request/response test works with.
pub struct RrClient<'a> {
    /// The data socket, connected unless `dest` is given.
    pub fd: RawFd,
    /// Where requests are taken from, the next buffer (of -W's width) each time.
    pub send_ring: &'a mut BufferRing,
    /// Where responses land, one buffer per response.
    pub recv_ring: &'a mut BufferRing,
    /// One datagram per message (UDP, AF_UNIX SOCK_DGRAM); else a byte stream.
    pub datagram: bool,
    /// Requests kept in flight beyond the first (`-- -b`); 0 is ping-pong.
    pub burst: u32,
    /// Set by the timer or a signal: end the test.
    pub stop: &'a StopFlag,
    /// A counted test (-l -N): never more requests than this.
    pub trans_limit: Option<u64>,
    /// Each request's destination on an unconnected datagram socket.
    pub dest: Option<&'a socket2::SockAddr>,
    /// -e: a receive that times out counts a loss and restarts the burst.
    pub loss_timeout: bool,
    /// Per-transaction times (-v 2, -j), from before a request's send.
    pub hist: Option<&'a mut Histogram>,
    /// Sequence numbers stamped into requests and checked in responses.
    pub seq: Option<&'a mut Sequence>,
    /// -w/-b interval pacing: a wait after each transaction.
    pub pacer: Option<&'a mut Pacer>,
}

/// The netperf side of a request/response test.
// Inlined into its one caller (control::data::run_loop), with send_message
// always inlined: callgrind counts 166 instructions per TCP_RR transaction,
// against 201 as a function of its own (see docs/performance.md).
#[inline]
pub fn client(rr: RrClient<'_>) -> Result<Counters, DataError> {
    // Locals, not fields of `rr`: the loop keeps them in registers
    // (callgrind: 4 instructions per transaction fewer than `rr.fd` etc.).
    let RrClient {
        fd,
        send_ring,
        recv_ring,
        datagram,
        burst,
        stop,
        trans_limit,
        dest,
        loss_timeout,
        mut hist,
        mut seq,
        mut pacer,
    } = rr;
    let mut c = Counters::default();
    let (req, rsp) = (send_ring.size(), recv_ring.size());
    let mut outstanding: u32 = 0;
    // Timestamps only when the user asked for timing; pairs each response
    // with the oldest request in flight, as netperf does with bursts.
    let mut in_flight = hist
        .as_ref()
        .map(|_| InFlightTimer::new(burst as usize + 1));
    // A counted test sends no more requests than it counts: the server
    // answers that many and closes, so a burst must not overshoot (stock
    // netperf does, and dies of a broken pipe or a reset).
    let limit = trans_limit.unwrap_or(u64::MAX);
    'test: while !stop.is_set() && c.transactions < limit {
        // Fill the pipe: the ping-pong's one request plus `burst` more. The
        // burst goes out at once, at the start and after a lost response,
        // without waiting for a congestion window: netperf 2.7.1 removed its
        // ramp-up from the omni loop (its manual still describes it). Here
        // outstanding <= burst (a response or a loss has just made room), so
        // at least one request goes out unless the count is reached.
        debug_assert!(outstanding <= burst);
        while c.transactions + u64::from(outstanding) < limit {
            // A transaction is timed from before its send, as netperf does:
            // on loopback the send call itself carries the request over.
            let sent_at = in_flight.as_ref().map(|_| Instant::now());
            let buf = send_ring.next_ptr();
            stamp(seq.as_deref_mut(), buf, req);
            // The one place a request goes out.
            if !send_message(fd, buf, req, dest, stop, &mut c)? {
                break 'test;
            }
            if let Some(s) = seq.as_deref_mut() {
                s.sent();
            }
            if let (Some(t), Some(at)) = (in_flight.as_mut(), sent_at) {
                t.start(at);
            }
            outstanding += 1;
            if outstanding > burst {
                break;
            }
        }
        let response = recv_ring.next_ptr();
        match recv_message(fd, response, rsp, datagram, stop, loss_timeout, &mut c)? {
            Got::Message => {
                if let Some(s) = seq.as_deref_mut() {
                    // SAFETY: the ring buffer holds rsp bytes just received.
                    unsafe { s.check(response, rsp) };
                }
            }
            Got::TimedOut => {
                // Lost request or response: start the burst over, as netperf -e does.
                c.timeouts += 1;
                stop.publish_timeouts(c.timeouts);
                outstanding = 0;
                if let Some(t) = in_flight.as_mut() {
                    t.purge();
                }
                continue;
            }
            Got::Closed | Got::Interrupted => break,
        }
        outstanding -= 1;
        c.transactions += 1;
        stop.publish(c.transactions);
        if let (Some(h), Some(t)) = (hist.as_deref_mut(), in_flight.as_mut()) {
            t.stop(Instant::now(), h);
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

/// The netserver side of a TCP request/response test on a connected socket.
pub fn server_stream(
    fd: RawFd,
    recv_ring: &mut BufferRing,
    send_ring: &mut BufferRing,
    stop: &StopFlag,
    trans_limit: Option<u64>,
) -> Result<Counters, DataError> {
    let mut c = Counters::default();
    let (req, rsp) = (recv_ring.size(), send_ring.size());
    while !stop.is_set() {
        if let Some(limit) = trans_limit {
            if c.transactions >= limit {
                break;
            }
        }
        match recv_message(fd, recv_ring.next_ptr(), req, false, stop, false, &mut c)? {
            Got::Message => {}
            _ => break,
        }
        if !send_message(fd, send_ring.next_ptr(), rsp, None, stop, &mut c)? {
            break;
        }
        c.transactions += 1;
        stop.publish(c.transactions);
    }
    Ok(c)
}

/// The netserver side of a UDP request/response test: answer each datagram to
/// its source; a zero-length datagram ends the test. With `connect_to_peer`
/// (netperf's `-- -N`) the socket is connected to the first sender, and
/// plain send/recv are used from then on. A datagram from a source `permit`
/// refuses is dropped unanswered: netserver must not answer spoofed sources.
#[allow(clippy::too_many_arguments)]
pub fn server_datagram(
    fd: RawFd,
    recv_ring: &mut BufferRing,
    send_ring: &mut BufferRing,
    stop: &StopFlag,
    trans_limit: Option<u64>,
    connect_to_peer: bool,
    mut seq: Option<&mut Sequence>,
    drop_every: Option<u64>,
    permit: impl Fn(&libc::sockaddr_storage) -> bool,
) -> Result<Counters, DataError> {
    let mut c = Counters::default();
    let (req, rsp) = (recv_ring.size(), send_ring.size());
    // SAFETY: sockaddr_storage is plain data.
    let mut from: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut from_len: libc::socklen_t = 0;
    let mut connected = false;
    while !stop.is_set() {
        if let Some(limit) = trans_limit {
            if c.transactions >= limit {
                break;
            }
        }
        let request = recv_ring.next_ptr();
        let got = if connected {
            io::recv(fd, request, req)
        } else {
            io::recv_from(fd, request, req, &mut from, &mut from_len)
        };
        match got {
            Io::Moved(_) | Io::Zero if !connected && !permit(&from) => continue,
            Io::Moved(n) => {
                c.recv_calls += 1;
                c.bytes_received += n as u64;
                if let Some(s) = seq.as_deref_mut() {
                    // SAFETY: the ring buffer holds the n bytes just received.
                    unsafe { s.check(request, n) };
                }
            }
            Io::Zero => break,
            Io::Retry | Io::NoBuffers => continue,
            Io::Failed(e) => {
                if stop.is_set() {
                    break;
                }
                return Err(DataError::Recv(e));
            }
        }
        if connect_to_peer && !connected {
            // SAFETY: `from` holds the address recvfrom just filled in.
            let rc = unsafe {
                libc::connect(
                    fd,
                    &from as *const libc::sockaddr_storage as *const libc::sockaddr,
                    from_len,
                )
            };
            if rc != 0 {
                return Err(DataError::Connect(std::io::Error::last_os_error()));
            }
            connected = true;
        }
        // The test mode that loses datagrams: leave every Nth unanswered.
        if drop_every.is_some_and(|n| n > 0 && c.recv_calls % n == 0) {
            continue;
        }
        let response = send_ring.next_ptr();
        stamp(seq.as_deref_mut(), response, rsp);
        let sent = if connected {
            io::send(fd, response, rsp, None)
        } else {
            io::send_to_raw(fd, response, rsp, &from, from_len)
        };
        match sent {
            Io::Moved(n) => {
                c.send_calls += 1;
                c.bytes_sent += n as u64;
                if let Some(s) = seq.as_deref_mut() {
                    s.sent();
                }
            }
            Io::NoBuffers => c.failed_sends += 1,
            Io::Retry | Io::Zero => {}
            Io::Failed(e) => {
                if stop.is_set() {
                    break;
                }
                return Err(DataError::Send(e));
            }
        }
        c.transactions += 1;
        stop.publish(c.transactions);
    }
    Ok(c)
}

/// Number an outgoing message when sequence numbers are on.
#[inline]
fn stamp(seq: Option<&mut Sequence>, buf: *mut u8, len: usize) {
    if let Some(s) = seq {
        // SAFETY: `buf` is a ring buffer of at least `len` bytes.
        unsafe { s.stamp(buf, len) };
    }
}
