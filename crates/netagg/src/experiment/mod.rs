//! Experiments: factors and levels from a plan, every cell repeated and
//! run in a seeded random order as omni tests, stateless offloads switched
//! and read back between runs, and statistics, tables and charts per cell.

pub mod analysis;
pub mod args;
pub mod charts;
pub mod cli;
pub mod csv;
pub mod environment;
pub mod execute;
pub mod factors;
pub mod html;
pub mod interrupt;
pub mod latency_merge;
pub mod layout;
pub mod numbers;
pub mod offloads;
pub mod order;
pub mod output;
pub mod plan;
pub mod runner;
pub mod scenarios;
pub mod tables;
pub mod targets;

pub use analysis::Analysis;
pub use output::{read_record, render_from_json, write_analysed, write_outputs};
pub use tables::text_report;
pub mod iflock;
