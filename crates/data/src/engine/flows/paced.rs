//! Open-loop flows (`--flows N --rate R`): the test's R requests a second
//! spread evenly over its flows, each request due on a schedule of absolute
//! deadlines whether or not the flow's earlier requests were answered — the
//! open loop of engine::open_loop, for many flows at once. Each thread keeps
//! one schedule for its share of the flows (its share of R, the threads'
//! schedules offset so that their requests interleave) and hands every due
//! request to the next of its flows in turn; a flow sends what it is handed
//! as soon as its socket and its bound on requests in flight let it, and
//! times each response from the request's intended send (corrected) and its
//! actual one (raw). Over UDP each request carries its number, which our
//! netserver echoes, so a response pairs with its own request after a loss.

use super::flow::{Flow, Moved, State, Step};
use crate::engine::io::{self, Io};
use crate::engine::schedule::{self, Lead, Schedule};
use crate::engine::sequence::SEQ_BYTES;
use crate::measure::open_loop::OpenLoopReport;
use std::collections::VecDeque;
use std::time::Duration;

/// What `--rate` asks of a many-flow test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpenPlan {
    /// Requests per second, all flows together.
    pub rate: f64,
    /// Most requests in flight on one flow.
    pub max_inflight: u32,
}

/// System calls one drive of a flow makes at most (as flow::drive).
const CALLS_PER_DRIVE: u32 = 32;

/// Requests one turn of a thread hands out at most, so that a schedule far
/// behind still lets the flows move and the stop flag be seen.
pub const DISPATCH_PER_TURN: usize = 4096;

/// A request in flight: its number on its flow, when it was due and when
/// it left, in ns on CLOCK_MONOTONIC.
#[derive(Debug, Clone, Copy)]
struct Sent {
    number: u64,
    intended: u64,
    actual: u64,
}

/// One flow's open loop.
#[derive(Debug, Default)]
pub struct Paced {
    /// Intended send times of the requests handed to the flow and not yet
    /// sent, oldest first.
    due: VecDeque<u64>,
    in_flight: VecDeque<Sent>,
    next_number: u64,
    /// The request being sent and the bytes of it gone (a stream's send
    /// can take part of it).
    sending: Option<(Sent, usize)>,
    /// Bytes of the current response received (a stream).
    got: usize,
}

/// Requests a flow holds due and unsent at most: beyond, the thread's
/// schedule waits for the flow (each request keeps its intended time, and
/// the wait is in its corrected latency) instead of queueing without bound
/// when the offered rate is far above what the flows move.
pub const MAX_DUE: usize = 64;

impl Paced {
    /// Whether the flow takes another due request now.
    pub fn has_room(&self) -> bool {
        self.due.len() < MAX_DUE
    }

    /// A request due at `intended` is the flow's to send. One that finds
    /// the flow's bound full is held back: counted, kept, sent when a
    /// response makes room.
    pub fn hand(&mut self, intended: u64, bound: usize, report: &mut OpenLoopReport) {
        if self.owed() >= bound {
            report.held_back += 1;
        }
        self.due.push_back(intended);
    }

    /// Requests handed to the flow and not answered: due, being sent, in
    /// flight. A flow owing none has nothing to do until the schedule
    /// hands it the next.
    pub fn owed(&self) -> usize {
        self.due.len() + self.in_flight.len() + usize::from(self.sending.is_some())
    }

    /// Requests sent and not answered when the test stopped.
    pub fn unanswered(&self) -> u64 {
        (self.in_flight.len() + usize::from(self.sending.is_some())) as u64
    }

    /// Whether the flow is between messages: nothing half sent or half
    /// received, so it can be closed cleanly.
    pub fn between_messages(&self) -> bool {
        self.sending.is_none() && self.got == 0 && self.in_flight.is_empty()
    }
}

/// What a drive of a paced flow works with: the thread's buffers and
/// schedule-wide figures.
pub struct PacedDrive<'a> {
    pub request: usize,
    pub response: usize,
    pub datagram: bool,
    /// The thread's send buffer: a datagram's number is written into its
    /// first bytes before each send.
    pub send_buf: &'a mut [u8],
    pub recv_buf: &'a mut [u8],
    pub dest: Option<&'a socket2::SockAddr>,
    pub bound: usize,
    /// The test's schedule interval (1/R): a request sent this late or
    /// later is late.
    pub period_ns: u64,
    /// No new request once set.
    pub stopping: bool,
    pub report: &'a mut OpenLoopReport,
    /// Each response's raw time also goes here (the thread's histogram,
    /// the flow's interval samples), as a closed loop would time it.
    pub latency: &'a mut dyn FnMut(u64),
}

/// Moves a paced flow as far as the kernel lets it: sends what is due and
/// has room, takes the responses that came.
pub fn drive(flow: &mut Flow, p: &mut Paced, d: &mut PacedDrive) -> Moved {
    for _ in 0..CALLS_PER_DRIVE {
        match flow.state {
            State::Done => return Moved::Wait,
            State::Connecting => match flow.connected() {
                Step::Stop(moved) => return moved,
                _ => continue,
            },
            _ => {}
        }
        let sent = match send(flow, p, d) {
            Err(moved) => return moved,
            Ok(sent) => sent,
        };
        let received = match receive(flow, p, d) {
            Err(moved) => return moved,
            Ok(received) => received,
        };
        if !sent && !received {
            return Moved::Wait;
        }
    }
    Moved::Busy
}

/// Sends the next due request (or the rest of one); whether a call moved
/// anything.
fn send(flow: &mut Flow, p: &mut Paced, d: &mut PacedDrive) -> Result<bool, Moved> {
    let (sent, done) = match p.sending {
        Some(partly) => partly,
        None if d.stopping || p.in_flight.len() >= d.bound => return Ok(false),
        None => match p.due.pop_front() {
            None => return Ok(false),
            Some(intended) => {
                let number = p.next_number;
                p.next_number += 1;
                let sent = Sent {
                    number,
                    intended,
                    actual: schedule::now_ns(),
                };
                (sent, 0)
            }
        },
    };
    let len = d.request.min(d.send_buf.len());
    if d.datagram && len >= SEQ_BYTES {
        d.send_buf[..SEQ_BYTES].copy_from_slice(&sent.number.to_le_bytes());
    }
    let want = if d.datagram { len } else { len - done };
    // SAFETY: done < len <= the buffer's length.
    let from = unsafe { d.send_buf.as_ptr().add(if d.datagram { 0 } else { done }) };
    let n = match io::send(flow.fd, from, want, d.dest) {
        Io::Moved(n) => n,
        // A zero-length request was asked for and went.
        Io::Zero => 0,
        Io::Retry => {
            p.sending = Some((sent, done));
            return Ok(false);
        }
        Io::NoBuffers => {
            // The kernel dropped it: a request lost at the sender.
            flow.tally.failed_sends += 1;
            d.report.lost += 1;
            p.sending = None;
            left(p, sent, d);
            return Ok(true);
        }
        Io::Failed(e) => return Err(Moved::Failed(e)),
    };
    flow.tally.bytes_sent += n as u64;
    if !d.datagram && done + n < len {
        p.sending = Some((sent, done + n));
        return Ok(true);
    }
    flow.tally.send_calls += 1;
    p.sending = None;
    p.in_flight.push_back(sent);
    left(p, sent, d);
    Ok(true)
}

/// A request left: its slip counts.
fn left(p: &Paced, sent: Sent, d: &mut PacedDrive) {
    let slip = sent.actual.saturating_sub(sent.intended);
    d.report
        .record_send(slip, slip >= d.period_ns, p.in_flight.len());
}

/// Takes what one receive call brings; whether it brought anything.
fn receive(flow: &mut Flow, p: &mut Paced, d: &mut PacedDrive) -> Result<bool, Moved> {
    if p.in_flight.is_empty() && p.got == 0 {
        return Ok(false);
    }
    let r = io::recv(flow.fd, d.recv_buf.as_mut_ptr(), d.recv_buf.len());
    let n = match r {
        Io::Moved(n) => n,
        Io::Retry | Io::NoBuffers => return Ok(false),
        Io::Zero if d.datagram => return Ok(false),
        Io::Zero => {
            let clean = p.got == 0;
            flow.state = State::Done;
            return Err(Moved::Closed { clean });
        }
        // A UDP request's ICMP error: it counts lost by its timeout.
        Io::Failed(e) if d.datagram && e.raw_os_error() == Some(libc::ECONNREFUSED) => {
            return Ok(false)
        }
        Io::Failed(e) => return Err(Moved::Failed(e)),
    };
    let at = schedule::now_ns();
    flow.tally.recv_calls += 1;
    flow.tally.bytes_received += n as u64;
    if d.datagram {
        let number = (n >= SEQ_BYTES).then(|| {
            let mut number = [0u8; SEQ_BYTES];
            number.copy_from_slice(&d.recv_buf[..SEQ_BYTES]);
            u64::from_le_bytes(number)
        });
        let found = number.and_then(|k| p.in_flight.binary_search_by_key(&k, |s| s.number).ok());
        let sent = found.and_then(|k| p.in_flight.remove(k));
        answered(flow, sent, at, d);
        return Ok(true);
    }
    let rsp = d.response.max(1);
    let bytes = p.got + n;
    p.got = bytes % rsp;
    for _ in 0..bytes / rsp {
        let oldest = p.in_flight.pop_front();
        answered(flow, oldest, at, d);
    }
    Ok(true)
}

/// One response, at `at`, to `sent` (none: a stray, counted, not timed).
fn answered(flow: &mut Flow, sent: Option<Sent>, at: u64, d: &mut PacedDrive) {
    let Some(sent) = sent else {
        d.report.unmatched += 1;
        return;
    };
    let raw = at.saturating_sub(sent.actual);
    d.report
        .record_response(at.saturating_sub(sent.intended), raw);
    (d.latency)(raw);
    flow.tally.transactions += 1;
}

/// UDP: the flow's requests unanswered for `loss` are lost, each on its
/// own; how many.
pub fn expire(flow: &mut Flow, p: &mut Paced, loss: Duration, report: &mut OpenLoopReport) -> u64 {
    let now = schedule::now_ns();
    let loss_ns = loss.as_nanos().min(u128::from(u64::MAX)) as u64;
    let mut lost = 0;
    while p
        .in_flight
        .front()
        .is_some_and(|s| now.saturating_sub(s.actual) >= loss_ns)
    {
        p.in_flight.pop_front();
        lost += 1;
    }
    flow.tally.timeouts += lost;
    report.lost += lost;
    lost
}

/// A thread's schedule: its share of the test's rate over its flows.
pub struct Pacer {
    schedule: Schedule,
    /// The next request's number on this thread's schedule.
    next: u64,
    flows: usize,
    pub period_ns: u64,
    pub bound: usize,
    lead: Lead,
    pub report: OpenLoopReport,
}

/// What the thread should do before its next turn.
pub enum Wait {
    /// Sleep in epoll up to this many ns (then look at the clock again).
    For(u64),
    /// The next deadline is within the lead: poll, do not sleep.
    Spin,
}

impl Pacer {
    /// Thread `index` of `threads`, with `flows` of the test's `total`
    /// flows, its schedule starting at `start_ns`.
    pub fn new(plan: OpenPlan, total: u32, flows: usize, index: u32, start_ns: u64) -> Pacer {
        let share = plan.rate * flows as f64 / f64::from(total.max(1));
        let period_ns = (1e9 / plan.rate) as u64;
        // The threads' schedules start one test interval apart, so their
        // requests interleave instead of leaving together.
        let start = start_ns + u64::from(index) * period_ns;
        Pacer {
            schedule: Schedule::new(start, share.max(f64::MIN_POSITIVE)),
            next: 0,
            flows,
            period_ns: period_ns.max(1),
            bound: plan.max_inflight.max(1) as usize,
            lead: Lead::default(),
            report: OpenLoopReport::new(plan.rate, plan.max_inflight),
        }
    }

    /// The next request due by `now_ns`, if any: the flow it goes to (the
    /// next in turn) and its intended send time. It stays next until
    /// `advance`.
    pub fn next_due(&self, now_ns: u64) -> Option<(usize, u64)> {
        let intended = self.schedule.due(self.next);
        if self.flows == 0 || intended > now_ns {
            return None;
        }
        Some(((self.next % self.flows as u64) as usize, intended))
    }

    /// The next request has been handed out.
    pub fn advance(&mut self) {
        self.next += 1;
    }

    /// How long the thread may wait for events before its next deadline.
    pub fn wait(&self) -> Wait {
        let now = schedule::now_ns();
        let wake = self.schedule.due(self.next).saturating_sub(self.lead.ns());
        if wake <= now {
            Wait::Spin
        } else {
            Wait::For(wake - now)
        }
    }

    /// A wait that ended with no event woke at `now_ns` for a wake-up set
    /// `waited_ns` after `from_ns`: its lateness teaches the lead.
    pub fn woke(&mut self, from_ns: u64, waited_ns: u64) {
        let late = schedule::now_ns().saturating_sub(from_ns + waited_ns);
        self.lead.woke_late_by(late);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_holds_a_bounded_number_of_due_requests_and_counts_those_held_back() {
        let mut report = OpenLoopReport::new(1000.0, 4);
        let mut p = Paced::default();
        for k in 0..MAX_DUE as u64 {
            assert!(p.has_room());
            p.hand(k, 4, &mut report);
        }
        assert!(!p.has_room());
        assert_eq!(p.owed(), MAX_DUE);
        // All but the first four found the bound of four full.
        assert_eq!(report.held_back, MAX_DUE as u64 - 4);
        // Handed, not sent: nothing is in flight yet.
        assert_eq!(p.unanswered(), 0);
    }

    #[test]
    fn each_thread_takes_its_share_of_the_rate_in_turn_over_its_flows() {
        let plan = OpenPlan {
            rate: 1000.0,
            max_inflight: 1,
        };
        // Thread 1 of a test of 10 flows, with 5 of them: 500 a second,
        // its first request one test interval (1 ms) after the start.
        let mut pacer = Pacer::new(plan, 10, 5, 1, 0);
        assert_eq!(pacer.next_due(999_999), None);
        let mut flows = Vec::new();
        while let Some((flow, intended)) = pacer.next_due(1_000_000_000) {
            flows.push((flow, intended));
            pacer.advance();
        }
        assert_eq!(flows.len(), 500);
        assert_eq!(flows[0], (0, 1_000_000));
        assert_eq!(flows[1], (1, 3_000_000));
        assert_eq!(flows[7].0, 2);
    }
}
