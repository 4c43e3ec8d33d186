//! Measurements: what a test measured (`outcome`), CPU utilization from /proc/stat
//! (`cpu`), confidence intervals over iterations (`confidence`), netperf's latency
//! histogram (`histogram`) and the HDR latency statistics beside it (`latency`).

pub mod confidence;
pub mod cpu;
pub mod histogram;
pub mod latency;
pub mod outcome;
