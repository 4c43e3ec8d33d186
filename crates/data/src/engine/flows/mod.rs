//! Many flows from one process: N data connections (or UDP flows) of one
//! test multiplexed over T threads, each thread one epoll loop over its
//! share of non-blocking sockets (`initiate` on netperf's side, `answer` on
//! netserver's); a thread holding a single TCP bulk flow blocks on it
//! instead ([`blocks_per_flow`]). Single-flow tests keep the blocking loops
//! of the rest of the engine; this is the path of `-- --flows N`.
//!
//! Each flow's work is counted on its own (what it moved, the intervals in
//! which it moved nothing, why it failed: `measure::flows`), every
//! transaction's time goes into its thread's histogram, and the histograms
//! are merged at the end: percentiles of every flow's transactions, never an
//! average of per-flow percentiles.

pub mod answer;
pub mod board;
pub mod epoll;
pub mod flow;
pub mod initiate;
pub mod paced;

pub use crate::measure::flows::{FlowResult, FlowSample, FlowsReport, Tally};
pub use board::FlowBoard;
pub use flow::Work;

pub use netperf_wire::extension::{MAX_FLOWS, MAX_FLOW_THREADS};

/// The message a many-flow TCP bulk test (TCP_STREAM, TCP_MAERTS, omni -d
/// send or recv) sends when -m gives none: 128 KB, iperf3's write, where a
/// single stream takes the socket buffer's size (16 KB by Linux's default).
/// At 2 and 8 flows on 2 CPUs 16 KB messages cost 1.1-1.3x the CPU per
/// MB of 128 KB ones (bench/bulk-vs-iperf3, docs/many-flows.md).
pub const BULK_MESSAGE: u32 = 128 * 1024;

/// Most flows a TCP bulk test gives a thread each by default: iperf3's
/// model (a thread per stream, blocking calls), which on 2 CPUs moved
/// 1.07-1.37x the bytes of the same 8 or 64 flows on an epoll thread per
/// CPU (paired against iperf3): a blocked thread is woken beside the data
/// it reads, where an epoll thread draining many sockets reads them cold
/// (bench/bulk-vs-iperf3, docs/performance.md). Past this, threads cost
/// more than they give and the epoll threads serve (thousands of flows are
/// neper's ground).
pub const THREAD_PER_FLOW_MAX: u32 = 64;

/// The threads to run `flows` flows on: `asked`, else a thread per flow for
/// TCP bulk (`bulk`) up to [`THREAD_PER_FLOW_MAX`] flows, else the online
/// CPUs; never more than the flows.
pub fn threads_for(flows: u32, asked: Option<u32>, bulk: bool) -> u32 {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let default = match bulk && flows <= THREAD_PER_FLOW_MAX {
        true => flows,
        false => cpus,
    };
    asked.unwrap_or(default).clamp(1, flows.max(1))
}

/// A thread holding one flow of this work drives it with blocking calls
/// instead of epoll: TCP bulk only (a request/response flow, a datagram
/// flow or an open loop keeps the event loop, which times and paces them).
pub fn blocks_per_flow(work: Work, datagram: bool, reconnect: bool) -> bool {
    matches!(work, Work::Send { .. } | Work::Receive { .. }) && !datagram && !reconnect
}

/// The TCP_NOTSENT_LOWAT a many-flow TCP bulk sender gets by default:
/// writes wait once 256 KB are written but not yet sent, rather than when
/// the whole send buffer (megabytes, autotuned) is full. Less data queued
/// in the kernel is data still warm when it is copied: on 2 CPUs, 1.17-1.31x
/// the bytes of the kernel's default at 0.79-0.85x the CPU per MB at 2 and
/// 64 streams, noise at 8 (bench/bulk-vs-iperf3, docs/performance.md); 32 KB,
/// 512 KB and 1 MB did no better.
pub const BULK_NOTSENT_LOWAT: u32 = 256 * 1024;

/// The TCP_NOTSENT_LOWAT of a test's data socket: what the user `asked`
/// (`--notsent-lowat`, 0 for the kernel's default), else
/// [`BULK_NOTSENT_LOWAT`] when this end sends the bulk data of a many-flow
/// TCP test (`flows` > 0), else the kernel's default untouched (None).
pub fn notsent_lowat(asked: Option<u32>, flows: u32, sends_bulk: bool) -> Option<u32> {
    asked.or((flows > 0 && sends_bulk).then_some(BULK_NOTSENT_LOWAT))
}

/// How long a blocking call of a flow's thread waits before it looks at
/// the stop flag again: an epoll thread's longest wait.
pub const BLOCKING_WAIT: std::time::Duration = std::time::Duration::from_millis(10);

#[cfg(test)]
mod tests;
