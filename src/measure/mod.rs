//! Measurements: what a test measured (`outcome`), CPU utilization from /proc/stat
//! (`cpu`), confidence intervals over iterations (`confidence`) and the latency
//! histogram (`histogram`).

pub mod confidence;
pub mod cpu;
pub mod histogram;
pub mod outcome;
