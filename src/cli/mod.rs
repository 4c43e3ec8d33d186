//! netperf-compatible command-line parsing: global options, test-specific options, sizespecs, usage texts.

pub mod config;
