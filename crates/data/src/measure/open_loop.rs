//! What an open-loop request/response test (`-- --rate R`) measured beyond
//! the transaction count: each response timed twice — from its request's
//! intended send time on the schedule (corrected: a stall of the server or
//! of netperf itself counts against every request it delayed) and from the
//! request's actual send (raw: what a closed loop would have seen) — how far
//! the sends slipped behind the schedule, and the requests the schedule
//! could not keep.

use super::histogram::Histogram;
use super::latency::{LatencyRecorder, LatencySummary};

/// The open loop's own figures; the transactions are in the test's counters.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenLoopReport {
    /// The rate asked for, requests per second.
    pub offered_rate: f64,
    /// The bound on requests in flight (`--max-inflight`).
    pub max_inflight: u32,
    /// Response times from each request's intended send time.
    pub corrected: Histogram,
    /// Response times from each request's actual send.
    pub raw: Histogram,
    /// Actual minus intended send time of every request sent.
    pub slip: LatencyRecorder,
    /// Requests sent.
    pub sent: u64,
    /// Requests sent one schedule interval (1/R) or more after their
    /// intended time: the sender could not keep the spacing.
    pub late: u64,
    /// Requests that left several to a system call, the schedule catching
    /// up after falling behind (engine::catch_up).
    pub caught_up: u64,
    /// Requests that were due while the bound was full, and waited for room
    /// (each is still sent, and its wait is in its corrected time).
    pub held_back: u64,
    /// UDP requests unanswered after the loss timeout (`-e`, else 1 s).
    pub lost: u64,
    /// The most requests in flight at once.
    pub max_in_flight: u64,
    /// Requests still unanswered when the test stopped (neither timed nor lost).
    pub in_flight_at_end: u64,
    /// Responses that arrived with no request in flight (UDP responses to
    /// requests already counted lost); not timed.
    pub unmatched: u64,
}

impl OpenLoopReport {
    /// An empty report; the histograms are allocated here, before the test.
    pub fn new(offered_rate: f64, max_inflight: u32) -> OpenLoopReport {
        OpenLoopReport {
            offered_rate,
            max_inflight,
            corrected: Histogram::new(),
            raw: Histogram::new(),
            slip: LatencyRecorder::new(),
            sent: 0,
            late: 0,
            caught_up: 0,
            held_back: 0,
            lost: 0,
            max_in_flight: 0,
            in_flight_at_end: 0,
            unmatched: 0,
        }
    }

    /// One request leaves `slip_ns` after its intended time; `late` when
    /// that is a whole schedule interval or more.
    #[inline]
    pub fn record_send(&mut self, slip_ns: u64, late: bool, in_flight: usize) {
        self.sent += 1;
        self.slip.record_ns(slip_ns);
        self.late += u64::from(late);
        self.max_in_flight = self.max_in_flight.max(in_flight as u64);
    }

    /// One response, `corrected_ns` after its request's intended send and
    /// `raw_ns` after its actual one.
    #[inline]
    pub fn record_response(&mut self, corrected_ns: u64, raw_ns: u64) {
        self.corrected.record_ns(corrected_ns);
        self.raw.record_ns(raw_ns);
    }

    /// Add another schedule's figures (a thread's, in a many-flow test):
    /// histograms and counts add up, the most in flight is the most of any.
    pub fn merge(&mut self, other: &OpenLoopReport) {
        self.corrected.merge(&other.corrected);
        self.raw.merge(&other.raw);
        self.slip.merge(&other.slip);
        self.sent += other.sent;
        self.late += other.late;
        self.caught_up += other.caught_up;
        self.held_back += other.held_back;
        self.lost += other.lost;
        self.max_in_flight = self.max_in_flight.max(other.max_in_flight);
        self.in_flight_at_end += other.in_flight_at_end;
        self.unmatched += other.unmatched;
    }

    /// The two latencies' statistics: corrected, then raw.
    pub fn latencies(&self) -> (LatencySummary, LatencySummary) {
        (
            self.corrected.latency().summary(),
            self.raw.latency().summary(),
        )
    }

    /// Responses per second over `elapsed` seconds: what the schedule
    /// achieved end to end.
    pub fn achieved_rate(&self, elapsed: f64) -> f64 {
        if elapsed > 0.0 {
            self.corrected.total() as f64 / elapsed
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_shows_in_corrected_times_only() {
        let mut r = OpenLoopReport::new(1000.0, 1);
        // One request stalled 100 ms, then nine held back behind it sent
        // late and answered at once: a closed loop's view has one slow
        // sample, the schedule's has ten.
        r.record_send(0, false, 1);
        r.record_response(100_000_000, 100_000_000);
        for k in 1..10u64 {
            let slip = 100_000_000 - k * 1_000_000;
            r.record_send(slip, true, 1);
            r.record_response(slip + 10_000, 10_000);
        }
        let (co, raw) = r.latencies();
        assert_eq!((co.count, raw.count), (10, 10));
        assert!(co.p50_us > 50_000.0, "{co:?}");
        assert!(raw.p50_us < 100.0, "{raw:?}");
        assert_eq!((r.sent, r.late, r.max_in_flight), (10, 9, 1));
        assert!((r.achieved_rate(2.0) - 5.0).abs() < 1e-9);
    }
}
