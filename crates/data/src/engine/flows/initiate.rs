//! netperf's side of a many-flow test: each thread opens its share of the
//! flows (connects in flight together), drives them as epoll says they may
//! move until the stop flag, samples each flow every interval (stalls,
//! `--flow-samples`), gives up on lost UDP requests after the loss timeout,
//! and ends every flow the way netserver expects.

use super::epoll::{self, Epoll};
use super::flow::{Drive, Flow, Moved, State, Step, Work};
use super::paced::{self, OpenPlan, Paced, PacedDrive, Pacer, DISPATCH_PER_TURN};
use super::{FlowBoard, FlowResult, FlowSample, FlowsReport};
use crate::engine::schedule;
use crate::engine::stop_flag::StopFlag;
use crate::measure::histogram::Histogram;
use crate::measure::open_loop::OpenLoopReport;
use crate::measure::tcp_info::TcpInterval;
use crate::net::socket::{self, SocketOptions};
use socket2::{SockAddr, Socket};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod ending;

/// Events taken per epoll wait.
const EVENTS: usize = 256;
/// Longest an epoll wait lasts: how soon a thread sees the stop flag.
const WAIT_MS: i32 = 10;
/// How long an open loop's schedule waits for its flows to connect.
const CONNECT_WAIT: Duration = Duration::from_secs(1);
/// How long the end of the test waits for netserver to close the flows.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// What a many-flow test runs.
#[derive(Debug, Clone)]
pub struct Plan {
    pub work: Work,
    pub flows: u32,
    pub threads: u32,
    /// One datagram per message (UDP).
    pub datagram: bool,
    /// Datagrams per UDP send (`--gso`; the options' UDP_SEGMENT cuts
    /// them apart); 1 for one a send.
    pub segments: usize,
    /// A new connection per transaction (TCP_CRR).
    pub reconnect: bool,
    /// Requests each flow keeps in flight beyond the first (`-- -b`).
    pub burst: u32,
    pub remote: SocketAddr,
    /// The local address to bind each flow to (its port left to the kernel).
    pub local: Option<SocketAddr>,
    pub opts: SocketOptions,
    /// A UDP request unanswered this long is lost: counted, and the flow
    /// sends the next.
    pub loss_timeout: Duration,
    /// How often every flow is sampled.
    pub interval: Duration,
    /// Keep one row per flow per interval.
    pub flow_samples: bool,
    /// Bytes every message is cut from.
    pub payload: Vec<u8>,
    /// Where each flow's counts are stored as they move, for a reader
    /// outside the test (netagg); ignored unless it fits the plan.
    pub board: Option<Arc<FlowBoard>>,
    /// An open loop (`--rate`): requests on a schedule, not one after
    /// each response (request/response work only).
    pub open: Option<OpenPlan>,
}

/// What the flows did, every transaction's time, and when the last thread
/// stopped moving data (the data phase's end; ending the flows after it
/// is not part of the test's time).
pub struct Ran {
    pub report: FlowsReport,
    pub latency: Histogram,
    pub stopped_at: Instant,
    /// The open loop's figures, every thread's together (`--rate`).
    pub open_loop: Option<OpenLoopReport>,
}

/// Runs the flows until `stop` is set; `stop`'s units count every
/// thread's work as it goes (for interim results).
pub fn run(plan: &Plan, stop: &StopFlag) -> Ran {
    let started = Instant::now();
    let threads = plan.threads.clamp(1, plan.flows.max(1));
    let board = plan
        .board
        .as_deref()
        .filter(|b| b.fits(plan.flows, threads));
    let per_thread: Vec<ThreadOutcome> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let mine: Vec<u32> = (t..plan.flows).step_by(threads as usize).collect();
                std::thread::Builder::new()
                    .name(format!("flows-{t}"))
                    .spawn_scoped(scope, move || {
                        Thread::new(plan, t, mine, started, board).run(stop)
                    })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.ok().and_then(|h| h.join().ok()))
            .collect()
    });
    let mut outcome = FlowsReport {
        threads,
        ..FlowsReport::default()
    };
    let mut latency = Histogram::new();
    let mut stopped_at = started;
    let mut open_loop: Option<OpenLoopReport> = None;
    for t in per_thread {
        stopped_at = stopped_at.max(t.stopped_at);
        outcome.flows.extend(t.flows);
        latency.merge(&t.latency);
        outcome.samples.extend(t.samples);
        if let Some(theirs) = t.open_loop {
            match open_loop.as_mut() {
                Some(all) => all.merge(&theirs),
                None => open_loop = Some(theirs),
            }
        }
    }
    outcome.flows.sort_by_key(|f| f.flow);
    outcome
        .samples
        .sort_by(|a, b| a.end_s.total_cmp(&b.end_s).then(a.flow.cmp(&b.flow)));
    Ran {
        report: outcome,
        latency,
        stopped_at,
        open_loop,
    }
}

/// What one thread hands back.
struct ThreadOutcome {
    flows: Vec<FlowResult>,
    latency: Histogram,
    samples: Vec<FlowSample>,
    stopped_at: Instant,
    open_loop: Option<OpenLoopReport>,
}

/// A flow of this thread: its socket, state, and what the samples saw.
struct Slot {
    id: u32,
    socket: Option<Socket>,
    flow: Flow,
    failure: Option<String>,
    sampled_units: u64,
    stalled_intervals: u32,
    /// Transaction times of the current interval (`--flow-samples` only).
    interval_ns: Vec<u64>,
    /// TCP_INFO as the last interval ended (`--flow-samples`, TCP only).
    tcp_before: Option<Box<libc::tcp_info>>,
    /// In `busy`.
    queued: bool,
    /// Its open loop (`--rate`).
    paced: Paced,
}

struct Thread<'a> {
    plan: &'a Plan,
    index: u32,
    board: Option<&'a FlowBoard>,
    epoll: Option<Epoll>,
    slots: Vec<Slot>,
    send_buf: Vec<u8>,
    recv_buf: Vec<u8>,
    latency: Histogram,
    samples: Vec<FlowSample>,
    started: Instant,
    /// When the thread left its loop (the stop).
    stopped_at: Instant,
    /// When the flows were last sampled.
    sampled_at: Instant,
    /// Units of work of all its flows, and how many of them it published.
    units: u64,
    published: u64,
    /// Flows that moved their share and may move more (`Moved::Busy`):
    /// driven again on the next turn.
    busy: Vec<usize>,
    /// Where UDP flows send (they are not connected: `Drive::dest`).
    dest: Option<SockAddr>,
    /// The thread's schedule (`--rate`), set as its loop starts.
    pacer: Option<Pacer>,
    /// One TCP bulk flow: once connected, driven with blocking calls
    /// (`blocks_per_flow`), not epoll; `blocking` once its socket is.
    per_flow: bool,
    blocking: bool,
}

impl<'a> Thread<'a> {
    fn new(
        plan: &'a Plan,
        index: u32,
        ids: Vec<u32>,
        started: Instant,
        board: Option<&'a FlowBoard>,
    ) -> Thread<'a> {
        let len = plan.work.buffer_len();
        let send_buf = plan
            .work
            .send_buffer(len * plan.segments.max(1), &plan.payload);
        let slots_len = ids.len();
        let slots = ids
            .into_iter()
            .map(|id| Slot {
                id,
                socket: None,
                flow: Flow::new(-1, State::Done, plan.datagram),
                failure: None,
                sampled_units: 0,
                stalled_intervals: 0,
                interval_ns: Vec::new(),
                tcp_before: None,
                queued: false,
                paced: Paced::default(),
            })
            .collect();
        // An open loop over a stream reads many responses a call.
        let recv_len = match plan.open {
            Some(_) if !plan.datagram => len.max(64 * 1024),
            _ => len,
        };
        Thread {
            plan,
            index,
            board,
            epoll: None,
            slots,
            send_buf,
            recv_buf: vec![0u8; recv_len],
            latency: Histogram::new(),
            samples: Vec::new(),
            started,
            stopped_at: started,
            sampled_at: started,
            units: 0,
            published: 0,
            busy: Vec::new(),
            dest: unconnected(plan).then(|| SockAddr::from(plan.remote)),
            pacer: None,
            per_flow: slots_len == 1
                && plan.open.is_none()
                && super::blocks_per_flow(plan.work, plan.datagram, plan.reconnect),
            blocking: false,
        }
    }

    fn run(mut self, stop: &StopFlag) -> ThreadOutcome {
        match Epoll::new() {
            Ok(e) => self.epoll = Some(e),
            Err(e) => {
                let why = format!("cannot create an epoll instance: {e}");
                for s in &mut self.slots {
                    s.failure = Some(why.clone());
                }
                return self.outcome();
            }
        }
        for slot in 0..self.slots.len() {
            self.open(slot);
        }
        for slot in 0..self.slots.len() {
            self.drive(slot, false);
        }
        let mut events = epoll::events(EVENTS);
        let mut next_sample = Instant::now() + self.plan.interval;
        let sweep_every = (self.plan.loss_timeout / 4).max(Duration::from_millis(10));
        let mut next_sweep = Instant::now() + sweep_every;
        let asks_datagrams = self.plan.datagram && matches!(self.plan.work, Work::Ask { .. });
        while !stop.is_set() {
            match self.block_on_flow() {
                // Blocks in the flow's call (at most BLOCKING_WAIT).
                true => self.drive(0, false),
                false => self.turn(&mut events),
            }
            self.publish(stop);
            let now = Instant::now();
            if asks_datagrams && now >= next_sweep {
                match self.pacer.is_some() {
                    true => self.sweep_paced_losses(),
                    false => self.sweep_losses(),
                }
                next_sweep = now + sweep_every;
            }
            if now >= next_sample {
                self.sample(now);
                next_sample += self.plan.interval;
            }
        }
        self.publish(stop);
        self.stopped_at = Instant::now();
        self.stop_paced();
        self.finish();
        // The last part-interval, so that each flow's samples add up to
        // its whole work.
        self.sample(Instant::now());
        self.outcome()
    }

    /// One turn of the event loop: the flows epoll (or the schedule) says
    /// may move, then those that moved their share and may move more.
    fn turn(&mut self, events: &mut [libc::epoll_event]) {
        self.start_schedule();
        self.dispatch();
        let ready = match self.pacer.is_some() && self.busy.is_empty() {
            true => self.wait_paced(events),
            false => {
                let timeout = if self.busy.is_empty() { WAIT_MS } else { 0 };
                self.wait(events, timeout)
            }
        };
        for event in &events[..ready] {
            self.drive(event.u64 as usize, false);
        }
        for slot in std::mem::take(&mut self.busy) {
            self.slots[slot].queued = false;
            self.drive(slot, false);
        }
    }

    /// Whether the thread's one flow is driven with blocking calls now:
    /// once it is connected, its socket is made blocking (waking every
    /// BLOCKING_WAIT to look at the stop flag).
    fn block_on_flow(&mut self) -> bool {
        if !self.per_flow {
            return false;
        }
        let entry = &self.slots[0];
        let Some(socket) = &entry.socket else {
            return false;
        };
        if self.blocking {
            return true;
        }
        if !matches!(entry.flow.state, State::Sending(_) | State::Receiving(_)) {
            return false;
        }
        let made = socket
            .set_read_timeout(Some(super::BLOCKING_WAIT))
            .and_then(|()| socket.set_write_timeout(Some(super::BLOCKING_WAIT)))
            .and_then(|()| socket.set_nonblocking(false));
        // A socket that stays non-blocking is still driven by epoll.
        self.per_flow = made.is_ok();
        self.blocking = made.is_ok();
        self.blocking
    }

    fn wait(&self, events: &mut [libc::epoll_event], timeout_ms: i32) -> usize {
        let epoll = self.epoll.as_ref().expect("opened in run");
        epoll.wait(events, timeout_ms).unwrap_or(0)
    }

    /// Adds this thread's new work to the test's running count.
    fn publish(&mut self, stop: &StopFlag) {
        let units = self.units;
        stop.add_units(units - self.published);
        self.published = units;
    }

    /// A new socket for `slot`, connecting (TCP) or connected (UDP).
    fn open(&mut self, slot: usize) {
        let plan = self.plan;
        let opened = socket::create(&plan.remote, &plan.opts).and_then(|s| {
            if let Some(local) = plan.local {
                s.bind(&SockAddr::from(local))?;
            }
            s.set_nonblocking(true)?;
            if unconnected(plan) {
                return Ok((s, State::Sending(0)));
            }
            match s.connect(&SockAddr::from(plan.remote)) {
                Ok(()) => Ok((s, State::Sending(0))),
                Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => Ok((s, State::Connecting)),
                Err(e) => Err(e),
            }
        });
        let (s, state) = match opened {
            Ok(v) => v,
            Err(e) => return self.fail(slot, format!("cannot open the flow: {e}")),
        };
        // Receivers wait; everyone else starts once connected.
        let state = match (state, plan.work) {
            (State::Sending(_), Work::Receive { .. }) => State::Receiving(0),
            (state, _) => state,
        };
        let fd = s.as_raw_fd();
        let epoll = self.epoll.as_ref().expect("opened in run");
        if let Err(e) = epoll.add(fd, slot as u64, epoll::READ_WRITE) {
            return self.fail(slot, format!("cannot watch the flow: {e}"));
        }
        let entry = &mut self.slots[slot];
        let tally = entry.flow.tally;
        entry.flow = Flow::new(fd, state, plan.datagram);
        entry.flow.tally = tally;
        entry.socket = Some(s);
    }

    /// Moves `slot` as far as it goes; `stopping` lets the current
    /// transaction finish without starting another.
    fn drive(&mut self, slot: usize, stopping: bool) {
        let Some(entry) = self.slots.get_mut(slot) else {
            return;
        };
        if entry.socket.is_none() {
            return;
        }
        if self.plan.open.is_some() && self.pacer.is_none() {
            // Before an open loop's schedule starts, a flow only connects.
            if entry.flow.state == State::Connecting {
                if let Step::Stop(Moved::Failed(e)) = entry.flow.connected() {
                    self.fail(slot, format!("{e}"));
                }
            }
            return;
        }
        let (latency, interval_ns) = (&mut self.latency, &mut entry.interval_ns);
        let keep = self.plan.flow_samples;
        let mut record = |ns: u64| {
            latency.record_ns(ns);
            if keep {
                interval_ns.push(ns);
            }
        };
        let before = entry.flow.units(self.plan.work);
        let moved = match (self.pacer.as_mut(), self.plan.work) {
            (Some(pacer), Work::Ask { request, response }) => {
                let mut drive = PacedDrive {
                    request,
                    response,
                    datagram: self.plan.datagram,
                    send_buf: &mut self.send_buf,
                    recv_buf: &mut self.recv_buf,
                    dest: self.dest.as_ref(),
                    bound: pacer.bound,
                    period_ns: pacer.period_ns,
                    stopping,
                    report: &mut pacer.report,
                    latency: &mut record,
                };
                paced::drive(&mut entry.flow, &mut entry.paced, &mut drive)
            }
            _ => entry.flow.drive(&mut Drive {
                work: self.plan.work,
                send_buf: &self.send_buf,
                recv_buf: &mut self.recv_buf,
                reconnect: self.plan.reconnect,
                latency: &mut record,
                stopping,
                burst: self.plan.burst,
                dest: self.dest.as_ref(),
                segments: self.plan.segments.max(1),
            }),
        };
        let after = entry.flow.units(self.plan.work);
        // The thread's running count, so publishing never walks the flows.
        self.units += after - before;
        if let Some(board) = self.board.filter(|_| after != before) {
            board.store_units(entry.id, after);
        }
        match moved {
            Moved::Wait => {}
            Moved::Busy if !entry.queued => {
                entry.queued = true;
                self.busy.push(slot);
            }
            Moved::Busy => {}
            // TCP_CRR's connection ends with a reset, as neper's does: a
            // close's TIME_WAIT on this side would make every later
            // connect() search past it for a free port (measured: half
            // the rate at 64 flows, a quarter at 10,000; docs/many-flows.md).
            Moved::Reconnect if stopping => self.reset(slot),
            // epoll reports the new connection once it is writable.
            Moved::Reconnect => {
                self.reset(slot);
                self.open(slot);
            }
            Moved::Closed { .. } if stopping => self.close(slot),
            // A sender's clock ends a stream: netserver's, in TCP_MAERTS.
            Moved::Closed { .. } if matches!(self.plan.work, Work::Receive { .. }) => {
                self.close(slot)
            }
            Moved::Closed { .. } => self.fail(slot, "netserver closed the flow".into()),
            Moved::Failed(e) => self.fail(slot, format!("{e}")),
        }
    }

    /// Closes `slot`'s socket (a clean close: FIN).
    fn close(&mut self, slot: usize) {
        if let Some(s) = self.slots[slot].socket.take() {
            if let Some(epoll) = &self.epoll {
                epoll.remove(s.as_raw_fd());
            }
        }
        self.slots[slot].flow.state = State::Done;
    }

    /// Closes `slot` with a reset (SO_LINGER 0).
    fn reset(&mut self, slot: usize) {
        if let Some(s) = &self.slots[slot].socket {
            let _ = s.set_linger(Some(Duration::ZERO));
        }
        self.close(slot);
    }

    fn fail(&mut self, slot: usize, why: String) {
        self.close(slot);
        let entry = &mut self.slots[slot];
        entry.failure.get_or_insert(why);
    }

    /// An open loop's schedule starts once every flow of the thread is
    /// connected (or failed): a request is never due on a connection still
    /// being made, whose time would count as the schedule's slip.
    fn start_schedule(&mut self) {
        let Some(open) = self.plan.open.filter(|_| self.pacer.is_none()) else {
            return;
        };
        let connecting = self
            .slots
            .iter()
            .any(|s| s.socket.is_some() && s.flow.state == State::Connecting);
        // A connection that takes longer is the schedule's to wait for.
        if !connecting || self.started.elapsed() >= CONNECT_WAIT {
            let flows = self.slots.len();
            let now = schedule::now_ns();
            self.pacer = Some(Pacer::new(open, self.plan.flows, flows, self.index, now));
        }
    }

    /// Hands each request due by now to its flow (`--rate`), which is
    /// then driven on this turn.
    fn dispatch(&mut self) {
        let Some(pacer) = self.pacer.as_mut() else {
            return;
        };
        let now = schedule::now_ns();
        for _ in 0..DISPATCH_PER_TURN {
            let Some((slot, intended)) = pacer.next_due(now) else {
                break;
            };
            let entry = &mut self.slots[slot];
            if entry.socket.is_none() {
                // A failed flow sends nothing more: its share is lost.
                pacer.report.lost += 1;
                pacer.advance();
                continue;
            }
            if !entry.paced.has_room() {
                break;
            }
            pacer.advance();
            entry.paced.hand(intended, pacer.bound, &mut pacer.report);
            if !entry.queued && entry.socket.is_some() {
                entry.queued = true;
                self.busy.push(slot);
            }
        }
    }

    /// Waits for events until the lead before the next deadline (`--rate`);
    /// within the lead, only looks.
    fn wait_paced(&mut self, events: &mut [libc::epoll_event]) -> usize {
        let epoll = self.epoll.as_ref().expect("opened in run");
        let pacer = self.pacer.as_mut().expect("paced");
        match pacer.wait() {
            paced::Wait::Spin => epoll.wait(events, 0).unwrap_or(0),
            paced::Wait::For(ns) => {
                let most = WAIT_MS as u64 * 1_000_000;
                let from = schedule::now_ns();
                let ready = epoll.wait_ns(events, ns.min(most)).unwrap_or(0);
                if ready == 0 && ns <= most {
                    pacer.woke(from, ns);
                }
                ready
            }
        }
    }

    /// UDP requests of an open loop unanswered past the loss timeout: each
    /// lost on its own; the schedule goes on.
    fn sweep_paced_losses(&mut self) {
        let Some(pacer) = self.pacer.as_mut() else {
            return;
        };
        for entry in &mut self.slots {
            let lost = paced::expire(
                &mut entry.flow,
                &mut entry.paced,
                self.plan.loss_timeout,
                &mut pacer.report,
            );
            if let Some(board) = self.board.filter(|_| lost > 0) {
                board.store_timeouts(entry.id, entry.flow.tally.timeouts);
            }
        }
    }

    /// The schedule stops: what is unanswered is counted, and a TCP flow
    /// between messages is closed cleanly by `finish` (else reset).
    fn stop_paced(&mut self) {
        let Some(pacer) = self.pacer.as_mut() else {
            return;
        };
        for entry in &mut self.slots {
            pacer.report.in_flight_at_end += entry.paced.unanswered();
            if entry.socket.is_some() && !self.plan.datagram {
                entry.flow.state = match entry.paced.between_messages() {
                    true => State::Done,
                    false => State::Sending(0),
                };
            }
        }
    }

    /// UDP requests unanswered past the loss timeout: counted lost, and
    /// the flow asks again.
    fn sweep_losses(&mut self) {
        let timeout = self.plan.loss_timeout;
        let lost: Vec<usize> = (0..self.slots.len())
            .filter(|&i| {
                let f = &self.slots[i].flow;
                matches!(f.state, State::Receiving(_)) && f.asked_at.elapsed() >= timeout
            })
            .collect();
        for slot in lost {
            let entry = &mut self.slots[slot];
            let flow = &mut entry.flow;
            flow.tally.timeouts += 1;
            if let Some(board) = self.board {
                board.store_timeouts(entry.id, flow.tally.timeouts);
            }
            flow.restart();
            self.drive(slot, false);
        }
    }

    /// Every flow's work since the last sample; a flow that did none
    /// stalled this interval. Each flow is also driven once, in case an
    /// edge was missed.
    fn sample(&mut self, now: Instant) {
        let end_s = now.duration_since(self.started).as_secs_f64();
        let secs = now.duration_since(self.sampled_at).as_secs_f64();
        self.sampled_at = now;
        let reconnect = self.plan.reconnect;
        // The part-interval at the end is no interval to stall in.
        let ended = self.slots.iter().all(|s| s.socket.is_none());
        let paced = self.pacer.is_some();
        for slot in 0..self.slots.len() {
            self.drive(slot, false);
            let thread = self.index;
            let work = self.plan.work;
            let keep = self.plan.flow_samples;
            let entry = &mut self.slots[slot];
            let units = entry.flow.units(work);
            let moved = units - entry.sampled_units;
            entry.sampled_units = units;
            // An open loop's flow with nothing owed had no work to do.
            let idle = paced && entry.paced.owed() == 0;
            if moved == 0 && entry.failure.is_none() && !ended && !idle {
                entry.stalled_intervals += 1;
            }
            if keep {
                let latency_us = percentiles_us(&mut entry.interval_ns);
                entry.interval_ns.clear();
                let tcp = tcp_interval(entry, secs, reconnect);
                self.samples.push(FlowSample {
                    flow: entry.id,
                    thread,
                    end_s,
                    units: moved,
                    latency_us,
                    tcp,
                });
            }
        }
    }

    fn outcome(self) -> ThreadOutcome {
        let (work, thread) = (self.plan.work, self.index);
        ThreadOutcome {
            flows: self
                .slots
                .into_iter()
                .map(|s| FlowResult {
                    flow: s.id,
                    thread,
                    units: s.flow.units(work),
                    tally: s.flow.tally,
                    stalled_intervals: s.stalled_intervals,
                    failure: s.failure,
                })
                .collect(),
            latency: self.latency,
            samples: self.samples,
            stopped_at: self.stopped_at,
            open_loop: self.pacer.map(|p| p.report),
        }
    }
}

/// What TCP did on `entry`'s connection over the last `secs` (none for
/// UDP, TCP_CRR's connections of one transaction, or a flow without a
/// socket); its reading is kept for the next. The first interval counts
/// from the connection's start, which lies in it.
fn tcp_interval(entry: &mut Slot, secs: f64, reconnect: bool) -> Option<TcpInterval> {
    let socket = entry
        .socket
        .as_ref()
        .filter(|_| !entry.flow.datagram && !reconnect)?;
    let now = crate::net::socket::tcp_info(socket.as_raw_fd())?;
    // SAFETY: tcp_info is plain data; all zero is a connection's start.
    let start: libc::tcp_info = unsafe { std::mem::zeroed() };
    let before = entry.tcp_before.as_deref().unwrap_or(&start);
    let interval = TcpInterval::between(before, &now, secs);
    entry.tcp_before = Some(Box::new(now));
    Some(interval)
}

/// Whether the flows' sockets stay unconnected (`Drive::dest`): UDP flows
/// that wait for responses. Senders connect: nothing comes back to miss,
/// and the kernel skips a route lookup per datagram.
fn unconnected(plan: &Plan) -> bool {
    plan.datagram && matches!(plan.work, Work::Ask { .. })
}

/// P50, P99 and the largest of `ns`, in microseconds (sorts it).
fn percentiles_us(ns: &mut [u64]) -> Option<[f64; 3]> {
    if ns.is_empty() {
        return None;
    }
    ns.sort_unstable();
    let at = |q: f64| ns[((ns.len() as f64 * q).ceil() as usize).clamp(1, ns.len()) - 1];
    Some([at(0.5), at(0.99), ns[ns.len() - 1]].map(|v| v as f64 / 1000.0))
}
