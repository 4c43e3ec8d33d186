//! netperf's Unix-domain tests' output (moving into report/).

pub mod report;
