//! netserver's side of a many-flow test: T threads share the test's one
//! data socket. Over TCP each thread accepts connections from the shared
//! listener (epoll wakes one thread per connection) and serves those it
//! accepted; over UDP all of them read the one socket and answer each
//! datagram's sender. The test ends when every expected flow has ended,
//! when a TCP_CRR client marks the end (a connection closed without a
//! byte), or when the stop flag is set (netserver's clock, a vanished
//! client).

use super::epoll::{self, Epoll};
use super::flow::{Drive, Flow, Moved, State, Work};
use super::Tally;
use crate::engine::gso;
use crate::engine::io::{self, Io};
use crate::engine::sequence::SEQ_BYTES;
use crate::engine::stop_flag::StopFlag;
use socket2::Socket;
use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

const EVENTS: usize = 256;
const WAIT_MS: i32 = 10;
/// How long a UDP test's socket stays quiet after an end datagram before
/// the test is over.
const QUIET_MS: u64 = 200;
/// How long a thread out of descriptors takes no connections.
const ACCEPT_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);
/// Connections one thread accepts per turn.
const ACCEPTS_PER_TURN: usize = 4;
/// Datagrams one thread takes from the UDP socket per turn.
const DATAGRAMS_PER_TURN: usize = 64;
/// The listener's token: flows are numbered from 0.
const LISTENER: u64 = u64::MAX;

/// What netserver serves.
#[derive(Debug, Clone)]
pub struct Service {
    pub work: Work,
    pub threads: u32,
    /// Flows the client opens; the test ends when each has ended.
    pub flows: u32,
    pub datagram: bool,
    /// A connection per transaction (TCP_CRR): flows are not connections.
    pub reconnect: bool,
    /// Bytes every message sent is cut from.
    pub payload: Vec<u8>,
    /// UDP: each response carries its request's first 8 bytes, the
    /// request's number in an open loop (`--rate`), so that the client
    /// pairs it with its own request after a loss.
    pub echo: bool,
    /// Test mode: every Nth UDP request goes unanswered (netserver's
    /// NETPERF_NG_TEST_DROP_EVERY, as in its single-flow loop).
    pub drop_every: Option<u64>,
    /// UDP stream data arrives coalesced (`--gro`: the socket has
    /// UDP_GRO): each receive's datagrams are counted, not the call.
    pub gro: bool,
}

/// What the flows did at netserver.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Served {
    pub tally: Tally,
    /// Connections accepted, or UDP flows that said they ended.
    pub flows_seen: u32,
    /// Connections that failed with another error than the client's reset.
    pub failed: u32,
}

/// State every thread shares.
struct Shared<'a> {
    svc: &'a Service,
    stop: &'a StopFlag,
    permit: &'a (dyn Fn(IpAddr) -> bool + Sync),
    accepted: AtomicU32,
    ended: AtomicU32,
    failed: AtomicU32,
    done: AtomicBool,
    /// UDP flows that sent their end datagrams.
    finished_sources: Mutex<HashSet<SocketAddr>>,
    /// Milliseconds from `started` to the last datagram with data (UDP),
    /// and whether any flow has said it ended: the client sends its end
    /// datagrams all at once, more than a receive buffer may hold, so the
    /// end is also a quiet socket once one of them came.
    started: Instant,
    last_data_ms: AtomicU64,
    ending: AtomicBool,
    /// UDP requests taken, all threads together (the drop test mode).
    requests: AtomicU64,
}

impl Shared<'_> {
    fn over(&self) -> bool {
        self.done.load(Ordering::Relaxed) || self.stop.is_set() || self.gone_quiet()
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// A UDP test whose client said it ended and then sent nothing more.
    fn gone_quiet(&self) -> bool {
        self.ending.load(Ordering::Relaxed)
            && self.now_ms() > self.last_data_ms.load(Ordering::Relaxed) + QUIET_MS
    }

    /// One more flow ended; the last one ends the test.
    fn flow_ended(&self) {
        let ended = self.ended.fetch_add(1, Ordering::Relaxed) + 1;
        if !self.svc.reconnect && ended >= self.svc.flows {
            self.done.store(true, Ordering::Relaxed);
        }
    }
}

/// Serves the test on `socket` (a listening TCP socket, or the UDP socket)
/// until it ends; `permit` says which client addresses are served.
pub fn serve(
    socket: &Socket,
    svc: &Service,
    stop: &StopFlag,
    permit: &(dyn Fn(IpAddr) -> bool + Sync),
) -> std::io::Result<Served> {
    socket.set_nonblocking(true)?;
    if svc.datagram {
        grow_receive_buffer(socket, svc.flows);
    }
    let shared = Shared {
        svc,
        stop,
        permit,
        accepted: AtomicU32::new(0),
        ended: AtomicU32::new(0),
        failed: AtomicU32::new(0),
        done: AtomicBool::new(false),
        finished_sources: Mutex::new(HashSet::new()),
        started: Instant::now(),
        last_data_ms: AtomicU64::new(0),
        ending: AtomicBool::new(false),
        requests: AtomicU64::new(0),
    };
    let fd = socket.as_raw_fd();
    let tallies: Vec<std::io::Result<Tally>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..svc.threads.max(1))
            .map(|_| scope.spawn(|| serve_thread(fd, &shared)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("a thread panicked")))
            })
            .collect()
    });
    let mut tally = Tally::default();
    for t in tallies {
        tally.add(&t?);
    }
    let flows_seen = match svc.datagram {
        true => shared.finished_sources.lock().map_or(0, |s| s.len() as u32),
        false => shared.accepted.load(Ordering::Relaxed),
    };
    Ok(Served {
        tally,
        flows_seen,
        failed: shared.failed.load(Ordering::Relaxed),
    })
}

fn serve_thread(fd: RawFd, shared: &Shared) -> std::io::Result<Tally> {
    let epoll = Epoll::new()?;
    let interest = match shared.svc.datagram {
        true => (libc::EPOLLIN | libc::EPOLLEXCLUSIVE) as u32,
        false => epoll::ACCEPT,
    };
    epoll.add(fd, LISTENER, interest)?;
    let len = shared
        .svc
        .work
        .buffer_len()
        .max(65_536 * usize::from(shared.svc.datagram));
    let send_buf = shared.svc.work.send_buffer(len, &shared.svc.payload);
    let mut t = ServeThread {
        shared,
        epoll,
        conns: Vec::new(),
        free: Vec::new(),
        send_buf,
        recv_buf: vec![0u8; len],
        total: Tally::default(),
        busy: Vec::new(),
        queued: Vec::new(),
        paused_until: None,
        per_flow: super::blocks_per_flow(
            shared.svc.work,
            shared.svc.datagram,
            shared.svc.reconnect,
        ) && shared.svc.threads >= shared.svc.flows,
        held: None,
    };
    let mut events = epoll::events(EVENTS);
    while !shared.over() {
        if let Some(slot) = t.held {
            // Blocks in the flow's call (at most BLOCKING_WAIT).
            t.drive(slot);
            continue;
        }
        if t.paused_until.is_some_and(|until| Instant::now() >= until) {
            t.paused_until = None;
            t.epoll.add(fd, LISTENER, interest)?;
        }
        let timeout = if t.busy.is_empty() { WAIT_MS } else { 0 };
        let ready = t.epoll.wait(&mut events, timeout)?;
        for event in &events[..ready] {
            match (event.u64, shared.svc.datagram) {
                (LISTENER, true) => t.datagrams(fd),
                (LISTENER, false) => t.accept(fd),
                (slot, _) => t.drive(slot as usize),
            }
        }
        for slot in std::mem::take(&mut t.busy) {
            t.queued[slot] = false;
            t.drive(slot);
        }
    }
    for slot in 0..t.conns.len() {
        t.close(slot, false);
    }
    Ok(t.total)
}

struct ServeThread<'a> {
    shared: &'a Shared<'a>,
    epoll: Epoll,
    conns: Vec<Option<(Socket, Flow)>>,
    free: Vec<usize>,
    send_buf: Vec<u8>,
    recv_buf: Vec<u8>,
    total: Tally,
    /// Connections that moved their share and may move more, and which
    /// slots are in that list.
    busy: Vec<usize>,
    queued: Vec<bool>,
    /// Taking no connections until then (out of descriptors).
    paused_until: Option<Instant>,
    /// A thread per flow (TCP bulk, as many threads as flows): the thread
    /// takes one connection and blocks on it (`held`).
    per_flow: bool,
    held: Option<usize>,
}

impl ServeThread<'_> {
    /// A few of the connections waiting on the listener, each served by
    /// this thread: the listener is level-triggered, so the rest wake
    /// another thread, and the flows spread over the threads (one thread
    /// taking a burst of connects whole would serve them all alone).
    fn accept(&mut self, listener: RawFd) {
        let turn = match self.per_flow {
            true => 1,
            false => ACCEPTS_PER_TURN,
        };
        for _ in 0..turn {
            let mut from: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of_val(&from) as libc::socklen_t;
            // SAFETY: from and len are valid for the kernel to write.
            let fd = unsafe {
                libc::accept4(
                    listener,
                    (&mut from as *mut libc::sockaddr_storage).cast(),
                    &mut len,
                    libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                )
            };
            if fd < 0 {
                // Out of descriptors: this thread stops taking connections
                // for a while rather than spin on a listener that stays
                // readable.
                if matches!(
                    std::io::Error::last_os_error().raw_os_error(),
                    Some(libc::EMFILE)
                        | Some(libc::ENFILE)
                        | Some(libc::ENOBUFS)
                        | Some(libc::ENOMEM)
                ) {
                    self.epoll.remove(listener);
                    self.paused_until = Some(Instant::now() + ACCEPT_PAUSE);
                }
                return;
            }
            // SAFETY: accept4 returned a new descriptor owned by nobody else.
            let socket = unsafe { Socket::from_raw_fd(fd) };
            if !io::source_ip(&from).is_some_and(|ip| (self.shared.permit)(ip)) {
                continue;
            }
            // No more connections open at once than the test's flows can
            // hold: a client that opens more gets them closed (its
            // descriptors never become ours to hold). TCP_CRR's flows open
            // the next before this side has seen the last one's reset.
            let room = match self.shared.svc.reconnect {
                true => self.shared.svc.flows.saturating_mul(4).saturating_add(64),
                false => self.shared.svc.flows,
            };
            let open = self
                .shared
                .accepted
                .load(Ordering::Relaxed)
                .saturating_sub(self.shared.ended.load(Ordering::Relaxed));
            if open >= room {
                continue;
            }
            self.shared.accepted.fetch_add(1, Ordering::Relaxed);
            let state = match self.shared.svc.work {
                Work::Send { .. } => State::Sending(0),
                _ => State::Receiving(0),
            };
            let flow = Flow::new(fd, state, false);
            let slot = match self.free.pop() {
                Some(slot) => slot,
                None => {
                    self.conns.push(None);
                    self.queued.push(false);
                    self.conns.len() - 1
                }
            };
            if self.epoll.add(fd, slot as u64, epoll::READ_WRITE).is_err() {
                self.free.push(slot);
                continue;
            }
            if self.per_flow && self.hold(listener, &socket).is_err() {
                self.epoll.remove(fd);
                self.free.push(slot);
                continue;
            }
            self.conns[slot] = Some((socket, flow));
            if self.per_flow {
                self.held = Some(slot);
            }
            self.drive(slot);
        }
    }

    /// Makes `socket` this thread's one flow: blocking, waking every
    /// BLOCKING_WAIT to look at the stop flag, and no more connections
    /// taken here (the other threads take them).
    fn hold(&mut self, listener: RawFd, socket: &Socket) -> std::io::Result<()> {
        socket.set_nonblocking(false)?;
        socket.set_read_timeout(Some(super::BLOCKING_WAIT))?;
        socket.set_write_timeout(Some(super::BLOCKING_WAIT))?;
        self.epoll.remove(listener);
        Ok(())
    }

    fn drive(&mut self, slot: usize) {
        let Some(Some((_, flow))) = self.conns.get_mut(slot) else {
            return;
        };
        let mut no_latency = |_| {};
        let mut drive = Drive {
            work: self.shared.svc.work,
            send_buf: &self.send_buf,
            recv_buf: &mut self.recv_buf,
            reconnect: false,
            latency: &mut no_latency,
            stopping: false,
            burst: 0,
            dest: None,
            segments: 1,
        };
        let moved = flow.drive(&mut drive);
        let untouched = flow.tally.bytes_received == 0;
        match moved {
            Moved::Wait | Moved::Reconnect => {}
            Moved::Busy => {
                if !std::mem::replace(&mut self.queued[slot], true) {
                    self.busy.push(slot);
                }
            }
            Moved::Closed { clean } => {
                // TCP_CRR's client marks its end with a connection that
                // closes without a byte.
                if self.shared.svc.reconnect && clean && untouched {
                    self.shared.done.store(true, Ordering::Relaxed);
                }
                self.close(slot, true);
            }
            Moved::Failed(e) => {
                // The client resets flows it cuts at the end (and a
                // receiver's close, unread bytes pending, is a reset).
                let reset = matches!(e.raw_os_error(), Some(libc::ECONNRESET) | Some(libc::EPIPE));
                if !reset && !self.shared.over() {
                    self.shared.failed.fetch_add(1, Ordering::Relaxed);
                }
                self.close(slot, true);
            }
        }
    }

    /// Closes `slot`, adding its work to the thread's; `ended` counts it as
    /// a flow (or, for TCP_CRR, a connection) that ended.
    fn close(&mut self, slot: usize, ended: bool) {
        if let Some((socket, flow)) = self.conns.get_mut(slot).and_then(Option::take) {
            if self.held == Some(slot) {
                self.held = None;
            }
            self.epoll.remove(socket.as_raw_fd());
            self.total.add(&flow.tally);
            self.free.push(slot);
            if ended {
                self.shared.flow_ended();
            }
        }
    }

    /// Every datagram waiting on the UDP socket: requests answered to
    /// their sender, stream data counted, each flow's empty datagrams
    /// taken as its end.
    fn datagrams(&mut self, fd: RawFd) {
        let answer = match self.shared.svc.work {
            Work::Answer { response, .. } => Some(response.min(self.send_buf.len())),
            _ => None,
        };
        let mut moved = false;
        // Bounded: the socket is level-triggered, so what is left is
        // reported again, after the other threads' turns.
        for _ in 0..DATAGRAMS_PER_TURN {
            let mut from: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
            let mut from_len = 0;
            let (got, segment) = match self.shared.svc.gro {
                true => {
                    gso::recv_coalesced(fd, &mut self.recv_buf, Some((&mut from, &mut from_len)))
                }
                false => {
                    let (buf, len) = (self.recv_buf.as_mut_ptr(), self.recv_buf.len());
                    (io::recv_from(fd, buf, len, &mut from, &mut from_len), None)
                }
            };
            let n = match got {
                Io::Moved(n) => n,
                // A flow's end mark: not data, so not counted (as the
                // single-flow receivers leave netperf's end marks out).
                Io::Zero => {
                    self.flow_finished(&from, from_len);
                    continue;
                }
                _ => break,
            };
            if !io::source_ip(&from).is_some_and(|ip| (self.shared.permit)(ip)) {
                continue;
            }
            moved = true;
            // Datagrams, not calls: the one that said EAGAIN brought none,
            // a coalesced one brought its bytes over the segment size.
            self.total.recv_calls += segment.map_or(1, |size| n.div_ceil(size)) as u64;
            self.total.bytes_received += n as u64;
            let Some(len) = answer else {
                continue;
            };
            let dropped =
                self.shared.svc.drop_every.is_some_and(|k| {
                    self.shared.requests.fetch_add(1, Ordering::Relaxed) % k == k - 1
                });
            if dropped {
                continue;
            }
            self.total.transactions += 1;
            self.total.send_calls += 1;
            if self.shared.svc.echo && n >= SEQ_BYTES && len >= SEQ_BYTES {
                self.send_buf[..SEQ_BYTES].copy_from_slice(&self.recv_buf[..SEQ_BYTES]);
            }
            match io::send_to_raw(fd, self.send_buf.as_ptr(), len, &from, from_len) {
                Io::Moved(sent) => self.total.bytes_sent += sent as u64,
                _ => self.total.failed_sends += 1,
            }
        }
        if moved {
            let now = self.shared.now_ms();
            self.shared.last_data_ms.fetch_max(now, Ordering::Relaxed);
        }
    }

    fn flow_finished(&self, from: &libc::sockaddr_storage, len: libc::socklen_t) {
        let Some(addr) = sockaddr(from, len) else {
            return;
        };
        self.shared.ending.store(true, Ordering::Relaxed);
        let Ok(mut finished) = self.shared.finished_sources.lock() else {
            return;
        };
        if finished.insert(addr) && finished.len() as u32 >= self.shared.svc.flows {
            self.shared.done.store(true, Ordering::Relaxed);
        }
    }
}

/// Room in the one UDP socket for a request from every flow at once (a
/// 2 KiB share each, at most 64 MiB), never less than it has: a full
/// buffer drops requests, and each drop stalls its flow for the loss
/// timeout. Beyond net.core.rmem_max only with CAP_NET_ADMIN.
fn grow_receive_buffer(socket: &Socket, flows: u32) {
    let want = (flows as usize).saturating_mul(2048).min(64 << 20);
    crate::net::socket::grow_recv_buffer(socket, want);
}

/// The sender's address and port of a datagram.
fn sockaddr(from: &libc::sockaddr_storage, _len: libc::socklen_t) -> Option<SocketAddr> {
    let ip = io::source_ip(from)?;
    let port = match i32::from(from.ss_family) {
        // SAFETY: the family says which address the storage holds; both fit.
        libc::AF_INET => unsafe { (*(from as *const _ as *const libc::sockaddr_in)).sin_port },
        libc::AF_INET6 => unsafe { (*(from as *const _ as *const libc::sockaddr_in6)).sin6_port },
        _ => return None,
    };
    Some(SocketAddr::new(ip, u16::from_be(port)))
}
