//! The data path and what it measures, shared by both ends: addresses,
//! sockets, interfaces, offloads and the control channel (`net`); CPU,
//! histograms, TCP_INFO and a test's outcome (`measure`); the loops that
//! move the data, their timers and how they stop (`engine`); and one test,
//! normalized, as both ends agree on it (`spec`).

pub mod engine;
pub mod measure;
pub mod net;
pub mod spec;

/// The test suite's one skip helper (tests/common/skip.rs), for the unit
/// tests that depend on the machine: a skip counts as one, not a pass.
#[cfg(test)]
#[path = "../../../tests/common/skip.rs"]
#[allow(dead_code)]
mod test_skip;
