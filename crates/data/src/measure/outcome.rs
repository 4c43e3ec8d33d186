//! What one test iteration measured, on both ends: the input of every report.

pub use super::latency::LatencySummary;

/// CPU utilization of one end over the measured interval (netperf's method 'S': /proc/stat).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuUsage {
    /// Overall utilization in percent (0..100) across all CPUs.
    pub util: f64,
    pub user: f64,
    pub system: f64,
    pub iowait: f64,
    pub irq: f64,
    pub softirq: f64,
    /// The busiest single CPU: its utilization in percent and its id.
    pub peak_util: f64,
    pub peak_id: i32,
    /// Number of CPUs counted (netperf's lib_num_loc_cpus, or -n).
    pub num_cpus: u32,
    /// netperf's method letter: 'S' for /proc/stat.
    pub method: char,
}

/// Counters and socket facts of one end (local = netperf, remote = netserver).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SideStats {
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub send_calls: u64,
    pub recv_calls: u64,
    pub failed_sends: u64,
    pub transactions: u64,
    /// Receive timeouts of a UDP request/response test with -e.
    pub timeouts: u64,
    /// Seconds spent waiting for pacing ticks (-w/-b).
    pub paced_wait_secs: f64,
    /// Socket buffer sizes: requested (-1 = default), initial (after setup), final (end of test).
    pub send_buf_req: i32,
    pub recv_buf_req: i32,
    pub send_buf: i32,
    pub recv_buf: i32,
    pub send_buf_end: i32,
    pub recv_buf_end: i32,
    /// Message sizes per send()/recv() call (-1 = not used on this end).
    pub send_size: i32,
    pub recv_size: i32,
    pub send_align: u32,
    pub recv_align: u32,
    pub send_offset: u32,
    pub recv_offset: u32,
    pub send_width: u32,
    pub recv_width: u32,
    /// TCP retransmissions seen (TCP_INFO), -1 if unknown.
    pub retransmits: i32,
    /// The data connection's MPTCP subflows (`--mptcp`); netserver's
    /// results carry only their number.
    pub mptcp: Option<crate::net::mptcp::Subflows>,
    /// What TCP did over the test (TCP_INFO at its end); netserver's
    /// when our netserver was asked for it.
    pub tcp_info: Option<crate::measure::tcp_info::TcpInterval>,
    /// Elapsed seconds as this end measured them.
    pub elapsed: f64,
    /// CPU usage if it was measured on this end.
    pub cpu: Option<CpuUsage>,
}

/// netperf's histogram: counts in log10 buckets from 1 us to 100 s (verbosity 2 and -j),
/// and the HDR summary of the same samples.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyHistogram {
    /// rows[row][col]: row 0 = UNIT_USEC .. row 7 = TEN_SEC; col = leading digit 0..9.
    pub rows: [[u64; 10]; 8],
    /// Samples of 100 seconds or more.
    pub over_100_secs: u64,
    pub total: u64,
    /// Exact summary statistics in microseconds (for -j selectors).
    pub min_us: u64,
    pub max_us: u64,
    pub sum_us: f64,
    pub sum_sq_us: f64,
    /// HDR statistics of the same samples: percentiles to P99.999, mean, stddev
    /// and its confidence interval.
    pub summary: LatencySummary,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            rows: [[0; 10]; 8],
            over_100_secs: 0,
            total: 0,
            min_us: u64::MAX,
            max_us: 0,
            sum_us: 0.0,
            sum_sq_us: 0.0,
            summary: LatencySummary::default(),
        }
    }
}

/// One measured iteration of a test.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Elapsed seconds of the data phase as netperf (the local end) measured it.
    pub elapsed: f64,
    pub local: SideStats,
    pub remote: SideStats,
    /// Request and response sizes of RR tests (-1 for stream tests).
    pub request_size: i32,
    pub response_size: i32,
    pub first_burst: u32,
    /// TCP_MAXSEG of the data connection, -1 if unknown.
    pub transport_mss: i32,
    /// Histogram of send() times (STREAM) or request/response times (RR), when kept.
    pub histogram: Option<LatencyHistogram>,
}
