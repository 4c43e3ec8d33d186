//! netperf-ng: a drop-in replacement for netperf 2.7.1 (`netperf`, `netserver`).
//!
//! Data flow: argv → `cli` → `spec::TestSpec` → `control` (wire protocol to the
//! netserver) and `engine` (the data path) → `measure::outcome::Outcome` → `report`.

pub mod agg;
pub mod cli;
pub mod control;
pub mod engine;
pub mod experiment;
#[doc(hidden)]
pub mod fuzzing;
pub mod ids;
pub mod input;
pub mod k8s;
pub mod matrix;
pub mod measure;
pub mod net;
pub mod page;
pub mod report;
pub mod resultsdb;
pub mod rlimit;
pub mod run;
pub mod server;
pub mod spec;
pub mod stats;
pub mod timefmt;
pub mod wire;

/// The test suite's one skip helper (tests/common/skip.rs), for the unit
/// tests that depend on the machine too: a skip counts as one, not a pass.
#[cfg(test)]
#[path = "../tests/common/skip.rs"]
#[allow(dead_code)]
mod test_skip;
