//! Many flows from one process: N data connections (or UDP flows) of one
//! test multiplexed over T threads, each thread one epoll loop over its
//! share of non-blocking sockets (`initiate` on netperf's side, `answer` on
//! netserver's). Single-flow tests keep the blocking loops of the rest of
//! the engine; this is the path of `-- --flows N`.
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

/// The threads to run `flows` flows on: `asked`, else the online CPUs, and
/// never more than the flows.
pub fn threads_for(flows: u32, asked: Option<u32>) -> u32 {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    asked.unwrap_or(cpus).clamp(1, flows.max(1))
}

#[cfg(test)]
mod tests;
