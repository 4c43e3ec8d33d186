//! netperf's side of a test: its command line, parsed into a
//! `netperf_data::spec::TestSpec` (`cli`); netperf 2.7.1's output formats,
//! the classic blocks, omni's -o/-O/-k/-J and the interim lines (`report`);
//! and its half of the control session with a netserver, ours or stock
//! (`control`).

pub mod cli;
pub mod control;
pub mod report;
