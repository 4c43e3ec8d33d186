//! One flow of a many-flow test: a non-blocking socket and where it is in
//! its work (sending a message, waiting for one, connecting), driven
//! forward whenever epoll says it may move, until the kernel says wait.
//! Buffers are the thread's, not the flow's: a flow costs its socket and a
//! few words, whatever the message sizes.

use super::super::io::{self, Io};
use super::Tally;
use std::collections::VecDeque;
use std::time::Instant;

/// What every flow of a test does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// netperf's side of request/response: a request of `request` bytes,
    /// then a response of `response` bytes, again and again.
    Ask { request: usize, response: usize },
    /// netserver's side: each request answered.
    Answer { request: usize, response: usize },
    /// Messages of `size` bytes sent as fast as the socket takes them.
    Send { size: usize },
    /// Received into `size`-byte reads.
    Receive { size: usize },
}

impl Work {
    /// The largest buffer a thread needs for it.
    pub fn buffer_len(&self) -> usize {
        match *self {
            Work::Ask { request, response } | Work::Answer { request, response } => {
                request.max(response)
            }
            Work::Send { size } | Work::Receive { size } => size,
        }
        .max(1)
    }

    /// Transactions are the unit of work (else bytes).
    pub fn counts_transactions(&self) -> bool {
        matches!(self, Work::Ask { .. } | Work::Answer { .. })
    }

    /// A thread's send buffer of `len` bytes cut from `payload`; none for
    /// a receiver, whose threads (one a flow for bulk) would otherwise
    /// each hold one they never send from.
    pub fn send_buffer(&self, len: usize, payload: &[u8]) -> Vec<u8> {
        if matches!(self, Work::Receive { .. }) {
            return Vec::new();
        }
        match payload.is_empty() {
            true => vec![0u8; len],
            false => payload.iter().copied().cycle().take(len).collect(),
        }
    }
}

/// Where a flow is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// A non-blocking connect in progress (TCP_CRR's next connection).
    Connecting,
    /// This many bytes of the current message sent.
    Sending(usize),
    /// This many bytes of the awaited message received.
    Receiving(usize),
    /// The far end closed it, or it ended: nothing more to do.
    Done,
}

/// How a drive ended.
#[derive(Debug)]
pub enum Moved {
    /// The kernel said wait: epoll will say when to go on.
    Wait,
    /// The far end closed the flow cleanly (end of stream); `clean` when it
    /// closed between messages.
    Closed { clean: bool },
    /// A transaction completed and the flow wants a new connection
    /// (TCP_CRR).
    Reconnect,
    /// The socket failed.
    Failed(std::io::Error),
    /// It moved its share and may move more: drive it again after the
    /// others (the kernel has not said wait, so no edge will come).
    Busy,
}

/// System calls one drive makes at most, so that a flow the kernel never
/// stops (a UDP sender, a receiver of a fast sender) leaves the others and
/// the stop flag their turn.
const CALLS_PER_DRIVE: u32 = 32;

/// One flow: its socket (owned by the thread's table), state and tally.
#[derive(Debug)]
pub struct Flow {
    pub fd: std::os::fd::RawFd,
    pub state: State,
    /// When the flow began waiting for a response: the current request's
    /// send (its latency's start) when one request is in flight at a time,
    /// else the last response or the burst's start.
    pub asked_at: Instant,
    pub tally: Tally,
    /// One datagram per message (UDP).
    pub datagram: bool,
    /// Requests sent and not answered yet.
    pub in_flight: u32,
    /// Their send times, oldest first, with a burst (`-b`): each response
    /// is timed from the oldest request in flight, as netperf does.
    pub sent_at: VecDeque<Instant>,
}

/// The thread's buffers and what drives share.
pub struct Drive<'a> {
    pub work: Work,
    pub send_buf: &'a [u8],
    pub recv_buf: &'a mut [u8],
    /// A connection per transaction (TCP_CRR).
    pub reconnect: bool,
    /// Each completed transaction's time in nanoseconds goes here.
    pub latency: &'a mut dyn FnMut(u64),
    /// No new request once set (the test is ending).
    pub stopping: bool,
    /// Requests kept in flight beyond the first (`-- -b`); 0 is ping-pong.
    pub burst: u32,
    /// Where each datagram goes: UDP flows are not connected, so that a
    /// response from any of netserver's addresses is taken (a netserver
    /// bound to the wildcard answers from the address its route picks,
    /// not always the one asked).
    pub dest: Option<&'a socket2::SockAddr>,
    /// Datagrams a UDP send carries (`--gso`: the socket's UDP_SEGMENT
    /// cuts the send into messages); 1 for one a send.
    pub segments: usize,
}

impl Flow {
    pub fn new(fd: std::os::fd::RawFd, state: State, datagram: bool) -> Flow {
        Flow {
            fd,
            state,
            asked_at: Instant::now(),
            tally: Tally::default(),
            datagram,
            in_flight: 0,
            sent_at: VecDeque::new(),
        }
    }

    /// A request went whole: one more in flight, and with a burst, the
    /// next request goes at once until `burst` more than one are out.
    fn asked(&mut self, d: &Drive) {
        self.in_flight += 1;
        if d.burst > 0 {
            self.sent_at.push_back(Instant::now());
            if self.in_flight <= d.burst && !d.stopping {
                self.state = State::Sending(0);
            }
        }
    }

    /// Every request in flight is given up on (a loss, after the loss
    /// timeout): the flow starts its burst over, as netperf's -e does.
    pub fn restart(&mut self) {
        self.in_flight = 0;
        self.sent_at.clear();
        self.asked_at = Instant::now();
        self.state = State::Sending(0);
    }

    /// The units of work done: transactions or bytes.
    pub fn units(&self, work: Work) -> u64 {
        match work {
            Work::Ask { .. } | Work::Answer { .. } => self.tally.transactions,
            Work::Send { .. } => self.tally.bytes_sent,
            Work::Receive { .. } => self.tally.bytes_received,
        }
    }

    /// Moves the flow as far as the kernel lets it.
    pub fn drive(&mut self, d: &mut Drive) -> Moved {
        for _ in 0..CALLS_PER_DRIVE {
            let step = match (self.state, d.work) {
                (State::Done, _) => return Moved::Wait,
                (State::Connecting, _) => self.connected(),
                (State::Sending(done), Work::Ask { request, .. }) => {
                    let step = self.send(d, done, request, State::Receiving(0));
                    if self.state == State::Receiving(0) {
                        self.asked(d);
                    }
                    step
                }
                (State::Sending(done), Work::Answer { response, .. }) => {
                    self.send(d, done, response, State::Receiving(0))
                }
                (State::Receiving(got), Work::Ask { response, .. }) => {
                    self.receive(d.recv_buf, got, response)
                }
                (State::Receiving(got), Work::Answer { request, .. }) => {
                    self.receive(d.recv_buf, got, request)
                }
                (_, Work::Send { size }) => self.send(d, 0, size, State::Sending(0)),
                (_, Work::Receive { size }) => self.receive(d.recv_buf, 0, size),
            };
            match step {
                Step::Again => {}
                Step::Stop(moved) => return moved,
                Step::Complete => {
                    if let Some(moved) = self.completed(d) {
                        return moved;
                    }
                }
            }
        }
        Moved::Busy
    }

    /// A message of the exchange finished: the next one, or the end.
    fn completed(&mut self, d: &mut Drive) -> Option<Moved> {
        match d.work {
            Work::Ask { .. } => {
                self.tally.transactions += 1;
                self.in_flight = self.in_flight.saturating_sub(1);
                let asked = match d.burst {
                    0 => self.asked_at,
                    _ => self.sent_at.pop_front().unwrap_or(self.asked_at),
                };
                (d.latency)(asked.elapsed().as_nanos() as u64);
                if d.reconnect {
                    self.state = State::Done;
                    return Some(Moved::Reconnect);
                }
                if d.stopping && self.in_flight > 0 {
                    // The burst's other responses are still owed.
                    self.state = State::Receiving(0);
                    return None;
                }
                if d.stopping {
                    self.state = State::Done;
                    return Some(Moved::Wait);
                }
                // A response made room: the next request (with a burst,
                // until it is full again).
                self.asked_at = Instant::now();
                self.state = State::Sending(0);
            }
            Work::Answer { .. } => {
                self.tally.transactions += 1;
                self.state = State::Sending(0);
            }
            // Streams have no messages to complete.
            Work::Send { .. } | Work::Receive { .. } => {}
        }
        None
    }

    pub(super) fn connected(&mut self) -> Step {
        let mut error: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: error and len are valid for the kernel to write.
        let rc = unsafe {
            libc::getsockopt(
                self.fd,
                libc::SOL_SOCKET,
                libc::SO_ERROR,
                (&mut error as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        match (rc, error) {
            (0, 0) => {
                // Writable without an error: connected (or still going,
                // which a send then says as EAGAIN).
                self.asked_at = Instant::now();
                self.state = State::Sending(0);
                Step::Again
            }
            (0, libc::EINPROGRESS) | (0, libc::EALREADY) => Step::Stop(Moved::Wait),
            (0, e) => Step::Stop(Moved::Failed(std::io::Error::from_raw_os_error(e))),
            _ => Step::Stop(Moved::Failed(std::io::Error::last_os_error())),
        }
    }

    /// Sends the rest of a `len`-byte message; a datagram goes whole.
    fn send(&mut self, d: &Drive, done: usize, len: usize, next: State) -> Step {
        let buf = d.send_buf;
        let want = match self.datagram {
            true => len * d.segments,
            false => len - done,
        };
        let want = want.min(buf.len());
        let r = io::send(self.fd, buf.as_ptr(), want, d.dest);
        self.tally.send_calls += 1;
        match r {
            Io::Moved(n) => {
                self.tally.bytes_sent += n as u64;
                if d.segments > 1 {
                    // Messages are counted in datagrams, not calls.
                    self.tally.send_calls += n.div_ceil(len.max(1)).saturating_sub(1) as u64;
                }
                if self.datagram || done + n >= len {
                    // Sent whole: on to the next state (a transaction
                    // completes with its response, not its request).
                    self.state = next;
                    Step::Again
                } else {
                    self.state = State::Sending(done + n);
                    Step::Again
                }
            }
            Io::Retry => Step::Stop(Moved::Wait),
            Io::NoBuffers => {
                self.tally.failed_sends += d.segments as u64;
                Step::Stop(Moved::Wait)
            }
            // A zero-length message was asked for and went.
            Io::Zero => {
                self.state = next;
                Step::Again
            }
            Io::Failed(e) => Step::Stop(Moved::Failed(e)),
        }
    }

    /// Receives the rest of a `len`-byte message; a datagram is one
    /// message whatever its length.
    fn receive(&mut self, buf: &mut [u8], got: usize, len: usize) -> Step {
        let want = match self.datagram {
            true => buf.len(),
            false => (len - got).clamp(1, buf.len()),
        };
        let r = io::recv(self.fd, buf.as_mut_ptr(), want);
        self.tally.recv_calls += 1;
        match r {
            Io::Moved(n) => {
                self.tally.bytes_received += n as u64;
                if self.datagram || got + n >= len {
                    self.state = State::Sending(0);
                    Step::Complete
                } else {
                    self.state = State::Receiving(got + n);
                    Step::Again
                }
            }
            Io::Retry | Io::NoBuffers => Step::Stop(Moved::Wait),
            Io::Zero if self.datagram => Step::Stop(Moved::Closed { clean: got == 0 }),
            Io::Zero => {
                let clean = got == 0;
                self.state = State::Done;
                Step::Stop(Moved::Closed { clean })
            }
            Io::Failed(e) => Step::Stop(Moved::Failed(e)),
        }
    }
}

/// One step of a drive.
pub(super) enum Step {
    /// Moved; try again.
    Again,
    /// A message was received whole.
    Complete,
    Stop(Moved),
}
