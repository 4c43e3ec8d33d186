//! Open-loop request/response (`-- --rate R`): requests leave on a fixed
//! schedule (engine::schedule) whether or not earlier responses have come
//! back, as many in flight as the schedule needs up to a bound, and each
//! response is timed from its request's intended send time as well as from
//! its actual one. One thread, a non-blocking socket: sending on time and
//! receiving interleave in one loop that sleeps to the next deadline or until
//! a response arrives, whichever is first. Responses come back in order (a
//! TCP stream; a netserver answers UDP requests as they arrive), so a FIFO of
//! send times pairs them; a UDP request unanswered after the loss timeout is
//! counted lost and leaves the FIFO on its own, never restarting anything.

use super::io::{self, Io};
use super::ring::BufferRing;
use super::schedule::{self, Schedule, SPIN_NS};
use super::stop_flag::StopFlag;
use super::{Counters, DataError};
use crate::measure::open_loop::OpenLoopReport;
use std::collections::VecDeque;
use std::os::fd::RawFd;
use std::time::Duration;

/// The longest single wait: the loop looks at its stop flag at least this
/// often even if the signal that ends the test lands outside a wait.
const MAX_WAIT_NS: u64 = 50_000_000;

/// Bytes one receive call may take on a stream: many responses at once.
const STREAM_CHUNK: usize = 64 * 1024;

/// Everything netperf's side of an open-loop test works with.
pub struct OpenLoopClient<'a> {
    /// The data socket (connected unless `dest` is given); made non-blocking
    /// for the loop and given back as it was.
    pub fd: RawFd,
    /// Where requests are taken from.
    pub send_ring: &'a mut BufferRing,
    /// The response size.
    pub response_size: usize,
    /// One datagram per message (UDP); else a byte stream.
    pub datagram: bool,
    /// Each request's destination on an unconnected datagram socket.
    pub dest: Option<&'a socket2::SockAddr>,
    pub stop: &'a StopFlag,
    /// Requests per second.
    pub rate: f64,
    /// Most requests in flight; a request due beyond it waits for room.
    pub max_inflight: u32,
    /// UDP: how long a request may go unanswered before it counts as lost.
    pub loss_timeout: Duration,
    /// Where the two latencies, the slip and the schedule's counts go.
    pub report: &'a mut OpenLoopReport,
}

/// A request in flight: when it was due and when it left, in ns.
#[derive(Clone, Copy)]
struct Sent {
    intended: u64,
    actual: u64,
}

/// The socket in non-blocking mode for as long as this lives.
struct NonBlocking {
    fd: RawFd,
    flags: libc::c_int,
}

impl NonBlocking {
    fn set(fd: RawFd) -> Result<NonBlocking, DataError> {
        // SAFETY: fcntl on a descriptor we hold; failures are checked.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
            return Err(DataError::Send(std::io::Error::last_os_error()));
        }
        Ok(NonBlocking { fd, flags })
    }
}

impl Drop for NonBlocking {
    fn drop(&mut self) {
        // The end of the test (finish_data) reads the socket blocking again.
        // SAFETY: as in `set`.
        unsafe { libc::fcntl(self.fd, libc::F_SETFL, self.flags) };
    }
}

/// The loop's state between calls: the schedule, what is in flight and the
/// part of a request or response moved so far on a stream.
struct Run<'r, 'a> {
    cfg: &'r mut OpenLoopClient<'a>,
    schedule: Schedule,
    period_ns: u64,
    /// The next request's number on the schedule.
    next: u64,
    /// The last request counted as held back (counted once however long it waits).
    held: Option<u64>,
    in_flight: VecDeque<Sent>,
    /// The request being sent (a stream may take it in parts): its times
    /// and the bytes gone.
    sending: Option<(Sent, usize)>,
    request: *const u8,
    /// Bytes of the current response received so far (streams).
    partial: usize,
    scratch: Vec<u8>,
    /// The socket's send buffer is full: wait for it as well.
    want_write: bool,
    loss_ns: u64,
    c: Counters,
}

/// The netperf side of an open-loop request/response test.
pub fn client(mut cfg: OpenLoopClient<'_>) -> Result<Counters, DataError> {
    let _mode = NonBlocking::set(cfg.fd)?;
    let _timers = schedule::FineTimers::set();
    let bound = cfg.max_inflight.max(1) as usize;
    let scratch = if cfg.datagram {
        cfg.response_size.max(STREAM_CHUNK)
    } else {
        STREAM_CHUNK
    };
    let schedule = Schedule::new(schedule::now_ns(), cfg.rate);
    let loss_ns = cfg.loss_timeout.as_nanos().min(u128::from(u64::MAX)) as u64;
    let mut run = Run {
        schedule,
        period_ns: schedule.period_ns(),
        next: 0,
        held: None,
        in_flight: VecDeque::with_capacity(bound),
        sending: None,
        request: std::ptr::null(),
        partial: 0,
        scratch: vec![0; scratch],
        want_write: false,
        loss_ns,
        c: Counters::default(),
        cfg: &mut cfg,
    };
    while !run.cfg.stop.is_set() {
        if !run.send_due(bound)? || !run.receive()? {
            break;
        }
        if run.cfg.datagram {
            run.expire(schedule::now_ns());
        }
        run.wait(bound);
    }
    let c = run.c;
    cfg.report.in_flight_at_end = run.in_flight.len() as u64;
    Ok(c)
}

impl Run<'_, '_> {
    /// Send every request that is due and has room; false when the peer is
    /// gone or the test stopped during a send.
    fn send_due(&mut self, bound: usize) -> Result<bool, DataError> {
        loop {
            let now = schedule::now_ns();
            if self.sending.is_none() {
                let intended = self.schedule.due(self.next);
                if intended > now {
                    return Ok(true);
                }
                if self.in_flight.len() >= bound {
                    if self.held != Some(self.next) {
                        self.held = Some(self.next);
                        self.cfg.report.held_back += 1;
                    }
                    return Ok(true);
                }
                let sent = Sent {
                    intended,
                    actual: now,
                };
                self.request = self.cfg.send_ring.next_ptr();
                self.sending = Some((sent, 0));
                self.next += 1;
            }
            let Some((sent, done)) = self.sending else {
                continue;
            };
            let len = self.cfg.send_ring.size();
            // SAFETY: done < len keeps the pointer inside the ring buffer.
            match io::send(
                self.cfg.fd,
                unsafe { self.request.add(done) },
                len - done,
                self.cfg.dest,
            ) {
                Io::Moved(n) if done + n < len => {
                    self.sending = Some((sent, done + n));
                    continue;
                }
                Io::Moved(_) => {
                    self.c.send_calls += 1;
                    self.c.bytes_sent += len as u64;
                    self.in_flight.push_back(sent);
                    self.left(sent);
                }
                Io::Retry => {
                    self.want_write = true;
                    return Ok(!self.cfg.stop.is_set());
                }
                Io::NoBuffers => {
                    // The kernel dropped it: a request lost at the sender.
                    self.c.failed_sends += 1;
                    self.cfg.report.lost += 1;
                    self.left(sent);
                }
                Io::Zero => return Ok(false),
                Io::Failed(e) => {
                    if self.cfg.stop.is_set() || e.raw_os_error() == Some(libc::EPIPE) {
                        return Ok(false);
                    }
                    return Err(DataError::Send(e));
                }
            }
        }
    }

    /// A request has left (or been dropped by the kernel): its slip counts.
    fn left(&mut self, sent: Sent) {
        self.sending = None;
        self.want_write = false;
        let slip = sent.actual.saturating_sub(sent.intended);
        self.cfg
            .report
            .sent(slip, slip >= self.period_ns, self.in_flight.len());
    }

    /// Take every response that has arrived; false when the peer closed.
    fn receive(&mut self) -> Result<bool, DataError> {
        let (fd, rsp) = (self.cfg.fd, self.cfg.response_size.max(1));
        loop {
            let len = self.scratch.len();
            match io::recv(fd, self.scratch.as_mut_ptr(), len) {
                Io::Moved(n) => {
                    let at = schedule::now_ns();
                    self.c.recv_calls += 1;
                    self.c.bytes_received += n as u64;
                    let whole = if self.cfg.datagram {
                        1
                    } else {
                        let bytes = self.partial + n;
                        self.partial = bytes % rsp;
                        bytes / rsp
                    };
                    for _ in 0..whole {
                        self.answered(at);
                    }
                }
                Io::Retry | Io::NoBuffers => return Ok(true),
                Io::Zero => return Ok(false),
                Io::Failed(e) => {
                    if self.cfg.stop.is_set() || e.raw_os_error() == Some(libc::ECONNRESET) {
                        return Ok(false);
                    }
                    // A UDP request's ICMP error (nothing listens): it counts
                    // lost by its timeout, as a dropped one would.
                    if self.cfg.datagram && e.raw_os_error() == Some(libc::ECONNREFUSED) {
                        return Ok(true);
                    }
                    return Err(DataError::Recv(e));
                }
            }
        }
    }

    /// One response, at `at`: the oldest request in flight is answered.
    fn answered(&mut self, at: u64) {
        let Some(sent) = self.in_flight.pop_front() else {
            self.cfg.report.unmatched += 1;
            return;
        };
        self.cfg.report.answered(
            at.saturating_sub(sent.intended),
            at.saturating_sub(sent.actual),
        );
        self.c.transactions += 1;
        self.cfg.stop.publish(self.c.transactions);
    }

    /// UDP: requests unanswered for the loss timeout are lost, each on its
    /// own; the schedule goes on.
    fn expire(&mut self, now: u64) {
        while let Some(oldest) = self.in_flight.front() {
            if now.saturating_sub(oldest.actual) < self.loss_ns {
                break;
            }
            self.in_flight.pop_front();
            self.cfg.report.lost += 1;
            self.c.timeouts += 1;
            self.cfg.stop.publish_timeouts(self.c.timeouts);
        }
    }

    /// Wait for the next deadline, a response or room in the send buffer,
    /// whichever comes first: an absolute sleep when nothing can arrive,
    /// else poll until a little before the deadline; the last microseconds
    /// spin on the clock.
    fn wait(&mut self, bound: usize) {
        let now = schedule::now_ns();
        let can_send = self.sending.is_none() && self.in_flight.len() < bound;
        let deadline = if can_send {
            self.schedule.due(self.next)
        } else {
            u64::MAX
        };
        if deadline <= now {
            return;
        }
        if deadline - now <= SPIN_NS && !self.want_write {
            schedule::spin_until(deadline);
            return;
        }
        let wake = deadline.saturating_sub(SPIN_NS).min(now + MAX_WAIT_NS);
        let wake = match self.in_flight.front() {
            Some(oldest) if self.cfg.datagram => wake.min(oldest.actual + self.loss_ns),
            _ => wake,
        };
        if self.in_flight.is_empty() && !self.want_write {
            schedule::sleep_until(wake);
            return;
        }
        let events = libc::POLLIN | if self.want_write { libc::POLLOUT } else { 0 };
        let mut pfd = libc::pollfd {
            fd: self.cfg.fd,
            events,
            revents: 0,
        };
        let rel = wake.saturating_sub(now);
        let ts = libc::timespec {
            tv_sec: (rel / 1_000_000_000) as libc::time_t,
            tv_nsec: (rel % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: one live pollfd, a valid timeout, no signal mask change.
        unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
    }
}
