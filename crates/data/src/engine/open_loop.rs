//! Open-loop request/response (`-- --rate R`): requests leave on a fixed
//! schedule (engine::schedule) whether or not earlier responses have come
//! back, as many in flight as the schedule needs up to a bound, and each
//! response is timed from its request's intended send time as well as from
//! its actual one. One thread, a non-blocking socket: sending on time and
//! receiving interleave in one loop that sleeps to the next deadline or until
//! a response arrives, whichever is first. On a TCP stream responses come
//! back in order, so the oldest request in flight is the one answered. A UDP
//! request carries its number in its first 8 bytes and netserver echoes it
//! (engine::sequence), so a response pairs with its own request even after a
//! loss; a request unanswered after the loss timeout is counted lost on its
//! own, never restarting anything.

use super::catch_up::{CatchUp, Due, MAX_BATCH};
use super::io::{self, Io};
use super::mmsg::{self, Slots};
use super::ring::BufferRing;
use super::schedule::{self, Lead, Schedule};
use super::sequence::SEQ_BYTES;
use super::stop_flag::StopFlag;
use super::{Counters, DataError};
use crate::measure::open_loop::OpenLoopReport;
use std::collections::VecDeque;
use std::os::fd::RawFd;
use std::time::Duration;

/// The longest single wait: the loop looks at its stop flag at least this
/// often even if the signal that ends the test lands outside a wait.
const MAX_WAIT_NS: u64 = 50_000_000;

/// While spinning toward a deadline, the loop goes round (a receive) at
/// least this often, so a response that arrives meanwhile is timed when it
/// arrives, not at the next send.
const SPIN_SLICE_NS: u64 = 2_000;

/// UDP responses one receive call may take (recvmmsg): at 10^5 requests a
/// second one call per response was a third of the loop's system calls.
const RECV_BATCH: usize = 32;

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
    /// One datagram per message (UDP), numbered in its first 8 bytes and
    /// answered with the number; else a byte stream answered in order.
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

/// A request in flight: its number on the schedule, when it was due and
/// when it left, in ns.
#[derive(Clone, Copy)]
struct Sent {
    number: u64,
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
    /// The request being sent when the socket took only part of it (a
    /// stream) or none: its times and the bytes gone.
    sending: Option<(Sent, usize)>,
    request: *const u8,
    /// Bytes of the current response received so far (streams).
    partial: usize,
    scratch: Vec<u8>,
    /// The socket's send buffer is full: wait for it as well.
    want_write: bool,
    /// How long before a deadline the sleep ends and the spin begins.
    lead: Lead,
    /// Several requests due at once leave in one call.
    catch_up: Box<CatchUp>,
    /// UDP: the headers and buffers responses are taken into, many a call.
    datagrams: Option<(Slots, BufferRing)>,
    loss_ns: u64,
    c: Counters,
}

/// The netperf side of an open-loop request/response test.
pub fn client(mut cfg: OpenLoopClient<'_>) -> Result<Counters, DataError> {
    let _mode = NonBlocking::set(cfg.fd)?;
    let _timers = schedule::FineTimers::set();
    let bound = cfg.max_inflight.max(1) as usize;
    let scratch = if cfg.datagram { 0 } else { STREAM_CHUNK };
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
        lead: Lead::default(),
        catch_up: Box::default(),
        datagrams: cfg.datagram.then(|| {
            let len = cfg.response_size.max(SEQ_BYTES);
            (
                Slots::new(RECV_BATCH, false),
                BufferRing::new(RECV_BATCH as u32, len, 8, 0),
            )
        }),
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
            if self.sending.is_none() {
                let due = self.due_now(bound);
                if due >= 2 && self.caught_up(due) {
                    continue;
                }
            }
            let (sent, done) = match self.sending {
                Some(partly) => partly,
                None => match self.take_due(bound) {
                    Some(sent) => (sent, 0),
                    None => return Ok(true),
                },
            };
            let len = self.cfg.send_ring.size();
            // SAFETY: done < len keeps the pointer inside the ring buffer.
            let rest = unsafe { self.request.add(done) };
            match io::send(self.cfg.fd, rest, len - done, self.cfg.dest) {
                Io::Moved(n) => {
                    self.c.bytes_sent += n as u64;
                    if done + n < len {
                        self.sending = Some((sent, done + n));
                    } else {
                        self.c.send_calls += 1;
                        self.in_flight.push_back(sent);
                        self.left(sent);
                    }
                }
                Io::Retry => {
                    self.sending = Some((sent, done));
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

    /// How many requests are due now and have room, up to one catch-up
    /// call's worth.
    fn due_now(&self, bound: usize) -> usize {
        if self.cfg.stop.is_set() {
            return 0;
        }
        let now = schedule::now_ns();
        let room = bound.saturating_sub(self.in_flight.len()).min(MAX_BATCH);
        (0..room as u64)
            .take_while(|&j| self.schedule.due(self.next + j) <= now)
            .count()
    }

    /// Send `count` due requests in one call; false when none left (the
    /// one-at-a-time path then meets the same condition and deals with it).
    fn caught_up(&mut self, count: usize) -> bool {
        let actual = schedule::now_ns();
        let datagram = self.cfg.datagram;
        let moved = self.catch_up.send(Due {
            fd: self.cfg.fd,
            ring: self.cfg.send_ring,
            count,
            first: self.next,
            datagram,
            dest: self.cfg.dest,
        });
        let Io::Moved(n) = moved else {
            return false;
        };
        let len = self.cfg.send_ring.size().max(1);
        let (whole, part) = if datagram { (n, 0) } else { (n / len, n % len) };
        self.c.bytes_sent += if datagram { (n * len) as u64 } else { n as u64 };
        // Calls count requests, as --mmsg's count datagrams.
        self.c.send_calls += whole as u64;
        self.cfg.report.caught_up += whole as u64;
        for _ in 0..whole {
            let sent = self.take_next(actual);
            self.in_flight.push_back(sent);
            self.left(sent);
        }
        if part > 0 {
            let sent = self.take_next(actual);
            self.request = self.catch_up.request_start(whole);
            self.sending = Some((sent, part));
        }
        true
    }

    /// The next request on the schedule, leaving at `actual`.
    fn take_next(&mut self, actual: u64) -> Sent {
        let number = self.next;
        self.next += 1;
        Sent {
            number,
            intended: self.schedule.due(number),
            actual,
        }
    }

    /// The next request on the schedule if it is due and there is room for
    /// it; one due without room is counted held back, once.
    fn take_due(&mut self, bound: usize) -> Option<Sent> {
        let now = schedule::now_ns();
        let intended = self.schedule.due(self.next);
        // Far behind a fast schedule with a large bound, this could send
        // for seconds without coming back to the loop's own stop check.
        if intended > now || self.cfg.stop.is_set() {
            return None;
        }
        if self.in_flight.len() >= bound {
            if self.held != Some(self.next) {
                self.held = Some(self.next);
                self.cfg.report.held_back += 1;
            }
            return None;
        }
        let request = self.cfg.send_ring.next_ptr();
        if self.cfg.datagram && self.cfg.send_ring.size() >= SEQ_BYTES {
            let number = self.next.to_le_bytes();
            // SAFETY: the ring buffer holds at least SEQ_BYTES bytes.
            unsafe { std::ptr::copy_nonoverlapping(number.as_ptr(), request, SEQ_BYTES) };
        }
        self.request = request;
        Some(self.take_next(now))
    }

    /// A request has left (or been dropped by the kernel): its slip counts.
    fn left(&mut self, sent: Sent) {
        self.sending = None;
        self.want_write = false;
        let slip = sent.actual.saturating_sub(sent.intended);
        self.cfg
            .report
            .record_send(slip, slip >= self.period_ns, self.in_flight.len());
    }

    /// Take every response that has arrived; false when the peer closed.
    fn receive(&mut self) -> Result<bool, DataError> {
        if let Some(mut datagrams) = self.datagrams.take() {
            let result = self.receive_datagrams(&mut datagrams);
            self.datagrams = Some(datagrams);
            return result;
        }
        let (fd, rsp) = (self.cfg.fd, self.cfg.response_size.max(1));
        loop {
            let len = self.scratch.len();
            match io::recv(fd, self.scratch.as_mut_ptr(), len) {
                Io::Moved(n) => {
                    let at = schedule::now_ns();
                    self.c.recv_calls += 1;
                    self.c.bytes_received += n as u64;
                    let bytes = self.partial + n;
                    self.partial = bytes % rsp;
                    for _ in 0..bytes / rsp {
                        let oldest = self.in_flight.pop_front();
                        self.answered(at, oldest);
                    }
                }
                Io::Retry | Io::NoBuffers => return Ok(true),
                Io::Zero => return Ok(false),
                Io::Failed(e) => return self.receive_failed(e),
            }
        }
    }

    /// Take every UDP response that has arrived, up to RECV_BATCH a call;
    /// false when the peer closed.
    fn receive_datagrams(
        &mut self,
        (slots, ring): &mut (Slots, BufferRing),
    ) -> Result<bool, DataError> {
        let len = ring.size();
        loop {
            slots.arm(ring, RECV_BATCH, len);
            let got = match mmsg::recv_mmsg(self.cfg.fd, slots.head(RECV_BATCH)) {
                Io::Moved(got) => got,
                Io::Retry | Io::NoBuffers => return Ok(true),
                Io::Zero => return Ok(false),
                Io::Failed(e) => return self.receive_failed(e),
            };
            let at = schedule::now_ns();
            for h in slots.head(got).iter() {
                let n = h.msg_len as usize;
                if n == 0 {
                    return Ok(false);
                }
                self.c.recv_calls += 1;
                self.c.bytes_received += n as u64;
                let number = (n >= SEQ_BYTES).then(|| {
                    // SAFETY: the message's one iovec is a ring buffer of
                    // `len` >= SEQ_BYTES bytes, n of them written.
                    let base = unsafe { (*h.msg_hdr.msg_iov).iov_base } as *const u8;
                    let mut number = [0u8; SEQ_BYTES];
                    // SAFETY: as above.
                    unsafe { std::ptr::copy_nonoverlapping(base, number.as_mut_ptr(), SEQ_BYTES) };
                    u64::from_le_bytes(number)
                });
                self.answered_datagram(at, number);
            }
            if got < RECV_BATCH {
                return Ok(true);
            }
        }
    }

    /// A receive that failed: the end at the peer's reset or when stopping,
    /// on with a UDP request's ICMP error, else the test's error.
    fn receive_failed(&self, e: std::io::Error) -> Result<bool, DataError> {
        if self.cfg.stop.is_set() || e.raw_os_error() == Some(libc::ECONNRESET) {
            return Ok(false);
        }
        // A UDP request's ICMP error (nothing listens): it counts lost by
        // its timeout, as a dropped one would.
        if self.cfg.datagram && e.raw_os_error() == Some(libc::ECONNREFUSED) {
            return Ok(true);
        }
        Err(DataError::Recv(e))
    }

    /// A datagram echoing request `number` (None: too short to carry one)
    /// arrived at `at`: that request is answered (numbers in flight are in
    /// order, so a binary search finds it).
    fn answered_datagram(&mut self, at: u64, number: Option<u64>) {
        let found = number.and_then(|number| {
            self.in_flight
                .binary_search_by_key(&number, |s| s.number)
                .ok()
        });
        let sent = found.and_then(|k| self.in_flight.remove(k));
        self.answered(at, sent);
    }

    /// One response, at `at`, to `sent`; none (an echo of a request already
    /// counted lost, or a stray) is counted and not timed.
    fn answered(&mut self, at: u64, sent: Option<Sent>) {
        let Some(sent) = sent else {
            self.cfg.report.unmatched += 1;
            return;
        };
        self.cfg.report.record_response(
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
    /// else poll until the lead before the deadline; the lead spins on the
    /// clock in slices, the loop receiving between them. How late each
    /// timer wake-up came teaches the lead.
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
        let lead = self.lead.ns();
        if deadline - now <= lead && !self.want_write {
            let slice_end = if self.in_flight.is_empty() {
                deadline
            } else {
                deadline.min(now + SPIN_SLICE_NS)
            };
            schedule::spin_until(slice_end);
            return;
        }
        let wake = deadline.saturating_sub(lead).min(now + MAX_WAIT_NS);
        let wake = match self.in_flight.front() {
            Some(oldest) if self.cfg.datagram => wake.min(oldest.actual + self.loss_ns),
            _ => wake,
        };
        if self.in_flight.is_empty() && !self.want_write {
            schedule::sleep_until(wake);
            self.lead
                .woke_late_by(schedule::now_ns().saturating_sub(wake));
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
        if unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) } == 0 {
            self.lead
                .woke_late_by(schedule::now_ns().saturating_sub(wake));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, UdpSocket};
    use std::os::fd::AsRawFd;

    /// Run the open loop at `rate` for `ms` milliseconds on `fd`, requests
    /// and responses `size` bytes.
    fn run_sized(
        fd: RawFd,
        datagram: bool,
        (rate, bound, size): (f64, u32, usize),
        ms: u64,
    ) -> (Counters, OpenLoopReport) {
        let stop = StopFlag::new();
        let mut ring = BufferRing::new(1, size, 8, 0);
        let mut report = OpenLoopReport::new(rate, bound);
        let c = std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(ms));
                stop.set();
            });
            client(OpenLoopClient {
                fd,
                send_ring: &mut ring,
                response_size: size,
                datagram,
                dest: None,
                stop: &stop,
                rate,
                max_inflight: bound,
                loss_timeout: Duration::from_millis(50),
                report: &mut report,
            })
            .unwrap()
        });
        (c, report)
    }

    fn run_for(
        fd: RawFd,
        datagram: bool,
        rate: f64,
        bound: u32,
        ms: u64,
    ) -> (Counters, OpenLoopReport) {
        run_sized(fd, datagram, (rate, bound, SEQ_BYTES), ms)
    }

    #[test]
    fn every_request_is_answered_or_still_in_flight_over_tcp() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut request = [0u8; SEQ_BYTES];
            while s.read_exact(&mut request).is_ok() {
                if s.write_all(&request).is_err() {
                    break;
                }
            }
        });
        let sock = std::net::TcpStream::connect(at).unwrap();
        sock.set_nodelay(true).unwrap();
        let (c, r) = run_for(sock.as_raw_fd(), false, 2000.0, 64, 300);
        drop(sock);
        server.join().unwrap();
        assert!(r.sent > 100, "{r:?}");
        assert_eq!(r.sent, c.transactions + r.in_flight_at_end, "{r:?}");
        assert_eq!((r.lost, r.unmatched, c.send_calls), (0, 0, r.sent));
        assert_eq!(r.corrected.total(), c.transactions);
        assert_eq!(r.raw.total(), c.transactions);
        assert_eq!(r.slip.count(), r.sent);
    }

    #[test]
    fn a_schedule_held_up_by_a_full_send_buffer_catches_up_without_losing_a_request() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            // Nothing is read for a while: the client's send buffer fills,
            // sends stop part way through a request, requests fall due.
            std::thread::sleep(Duration::from_millis(150));
            let mut request = [0u8; 1000];
            while s.read_exact(&mut request).is_ok() {
                if s.write_all(&request).is_err() {
                    break;
                }
            }
        });
        let sock = socket2::Socket::new(
            socket2::Domain::IPV4,
            socket2::Type::STREAM,
            Some(socket2::Protocol::TCP),
        )
        .unwrap();
        sock.set_send_buffer_size(4096).unwrap();
        sock.connect(&at.into()).unwrap();
        sock.set_tcp_nodelay(true).unwrap();
        let (c, r) = run_sized(sock.as_raw_fd(), false, (50_000.0, 100_000, 1000), 400);
        drop(sock);
        server.join().unwrap();
        assert!(r.sent > 1_000, "{r:?}");
        assert_eq!(r.sent, c.transactions + r.in_flight_at_end, "{r:?}");
        assert_eq!(c.bytes_received, c.transactions * 1000);
        // The stall's backlog left in calls of many requests each.
        assert!(r.caught_up > 0, "{r:?}");
        assert_eq!(c.send_calls, r.sent, "{r:?}");
        assert!(r.late > 0, "{r:?}");
    }

    #[test]
    fn an_unanswered_datagram_is_lost_on_its_own() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.connect(server.local_addr().unwrap()).unwrap();
        server
            .set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let answering = std::thread::spawn(move || {
            let (mut buf, mut seen, mut idle) = ([0u8; 16], 0u64, 0);
            // Every fifth request goes unanswered; quiet for 200 ms ends it.
            while idle < 10 {
                match server.recv_from(&mut buf) {
                    Ok((_, from)) => {
                        idle = 0;
                        seen += 1;
                        if seen % 5 != 0 {
                            let _ = server.send_to(&buf[..SEQ_BYTES], from);
                        }
                    }
                    Err(_) => idle += 1,
                }
            }
            (seen - seen / 5, seen / 5)
        });
        let (c, r) = run_for(sock.as_raw_fd(), true, 500.0, 1024, 400);
        drop(sock);
        let (answered, dropped) = answering.join().unwrap();
        // Each response paired with its own request: every dropped one
        // was counted lost (or was still in flight at the end), none was
        // taken for another's answer, and the schedule went on.
        assert!(dropped >= 10, "{dropped}");
        assert!(r.lost + r.in_flight_at_end >= dropped, "{r:?}");
        assert_eq!(r.unmatched, 0, "{r:?}");
        assert!(c.transactions <= answered, "{r:?}");
        assert_eq!(c.timeouts, r.lost);
        assert_eq!(
            r.sent,
            c.transactions + r.lost + r.in_flight_at_end,
            "{r:?}"
        );
    }
}
