//! Measurements: what a test measured (`outcome`), the sum of concurrent
//! streams (`aggregate`), what the flows of a many-flow test did (`flows`), CPU utilization from /proc/stat (`cpu`), service
//! demand (`demand`), confidence intervals over iterations (`confidence`),
//! netperf's latency histogram (`histogram`), the HDR latency statistics beside
//! it (`latency`) and their HdrHistogram interval-log files (`latency_log`), what an
//! open-loop request/response test measured (`open_loop`),
//! the `tcpi_*` lines of `DUMP_TCP_INFO` that both ends print (`tcp_info`),
//! and a connection's TCP_INFO sampled on a thread of its own (`tcp_series`).

pub mod aggregate;
pub mod confidence;
pub mod cpu;
pub mod demand;
pub mod flows;
pub mod histogram;
pub mod latency;
#[cfg(feature = "latency-log")]
pub mod latency_log;
pub mod open_loop;
pub mod outcome;
pub mod tcp_info;
pub mod tcp_series;
