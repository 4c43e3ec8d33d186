//! What the flows of a many-flow test did (`-- --flows N`): each flow's
//! work, the intervals in which it did none and why it failed, how the
//! flows' rates spread (min, median, max, Jain's index), and the per-flow
//! per-interval rows `--flow-samples` writes.

use super::aggregate::jain;

/// What a flow did, in the units every report adds up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub send_calls: u64,
    pub recv_calls: u64,
    pub transactions: u64,
    /// UDP requests given up on after the loss timeout.
    pub timeouts: u64,
    /// Sends the kernel refused for want of buffers (UDP).
    pub failed_sends: u64,
}

impl Tally {
    pub fn add(&mut self, other: &Tally) {
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        self.send_calls += other.send_calls;
        self.recv_calls += other.recv_calls;
        self.transactions += other.transactions;
        self.timeouts += other.timeouts;
        self.failed_sends += other.failed_sends;
    }
}

/// One flow at the end of the test.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowResult {
    /// Its number, 0 .. N.
    pub flow: u32,
    /// The thread that ran it.
    pub thread: u32,
    pub tally: Tally,
    /// Its units of work (transactions, or bytes).
    pub units: u64,
    /// Sampling intervals in which it did no work.
    pub stalled_intervals: u32,
    /// Why it stopped before the test did.
    pub failure: Option<String>,
}

/// One flow's work over one sampling interval (`--flow-samples`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowSample {
    pub flow: u32,
    pub thread: u32,
    /// Seconds from the data phase's start to the interval's end.
    pub end_s: f64,
    /// Units of work in the interval.
    pub units: u64,
    /// Transaction times in the interval, in microseconds: P50, P99 and
    /// the largest; absent without transactions.
    pub latency_us: Option<[f64; 3]>,
    /// What TCP did on the flow's connection in the interval.
    pub tcp: Option<super::tcp_info::TcpInterval>,
}

/// Everything a many-flow test's flows did, on netperf's side (their
/// transaction times are in the test's histogram).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowsReport {
    pub threads: u32,
    pub flows: Vec<FlowResult>,
    pub samples: Vec<FlowSample>,
}

/// The per-flow figures a report prints.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FlowSpread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
    /// Jain's fairness index of the flows' rates.
    pub jain: f64,
    /// Flows that stalled (an interval without work) and did not fail.
    pub stalled: u32,
    pub failed: u32,
}

impl FlowsReport {
    /// Every flow's work added up.
    pub fn total(&self) -> Tally {
        let mut total = Tally::default();
        for f in &self.flows {
            total.add(&f.tally);
        }
        total
    }

    /// The flows' rates over `elapsed` seconds, in units per second times
    /// `scale` (8e-6 turns bytes into 10^6 bits), and how they spread.
    pub fn spread(&self, elapsed: f64, scale: f64) -> FlowSpread {
        let mut rates: Vec<f64> = self
            .flows
            .iter()
            .map(|f| f.units as f64 * scale / elapsed.max(1e-9))
            .collect();
        rates.sort_by(f64::total_cmp);
        let median = match rates.len() {
            0 => 0.0,
            n if n % 2 == 1 => rates[n / 2],
            n => (rates[n / 2 - 1] + rates[n / 2]) / 2.0,
        };
        FlowSpread {
            min: rates.first().copied().unwrap_or(0.0),
            median,
            max: rates.last().copied().unwrap_or(0.0),
            jain: jain(&rates),
            stalled: self
                .flows
                .iter()
                .filter(|f| f.stalled_intervals > 0 && f.failure.is_none())
                .count() as u32,
            failed: self.flows.iter().filter(|f| f.failure.is_some()).count() as u32,
        }
    }

    /// Why flows failed, as one line: "3 of 10 flows failed: 2 × why, 1 ×
    /// other"; None when none did.
    pub fn failures_line(&self) -> Option<String> {
        let mut reasons: Vec<(&str, usize)> = Vec::new();
        for why in self.flows.iter().filter_map(|f| f.failure.as_deref()) {
            match reasons.iter_mut().find(|(r, _)| *r == why) {
                Some((_, n)) => *n += 1,
                None => reasons.push((why, 1)),
            }
        }
        let failed: usize = reasons.iter().map(|(_, n)| n).sum();
        (failed > 0).then(|| {
            let each: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} × {r}")).collect();
            format!(
                "{failed} of {} flows failed: {}",
                self.flows.len(),
                each.join(", ")
            )
        })
    }

    /// `--flow-samples`: one CSV row per flow per interval, as neper's
    /// `-A` writes them, then what TCP did on the flow in the interval
    /// (empty for UDP and TCP_CRR).
    pub fn samples_csv(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::from(
            "flow,thread,interval_end_s,units,p50_us,p99_us,max_us,\
             rtt_us,rttvar_us,snd_cwnd,retransmits,delivery_rate_bytes_per_s,pacing_rate_bytes_per_s,busy,rwnd_limited,sndbuf_limited\n",
        );
        for s in &self.samples {
            let latency = s.latency_us.map_or(",,".to_string(), |[p50, p99, max]| {
                format!("{p50:.1},{p99:.1},{max:.1}")
            });
            let tcp = s.tcp.map_or(",,,,,,,,".to_string(), |t| {
                format!(
                    "{},{},{},{},{},{},{:.3},{:.3},{:.3}",
                    t.rtt_us,
                    t.rttvar_us,
                    t.snd_cwnd,
                    t.retransmits,
                    t.delivery_rate,
                    t.pacing_rate,
                    t.busy,
                    t.rwnd_limited,
                    t.sndbuf_limited
                )
            });
            let _ = writeln!(
                out,
                "{},{},{:.3},{},{latency},{tcp}",
                s.flow, s.thread, s.end_s, s.units
            );
        }
        out
    }
}
