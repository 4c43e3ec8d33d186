//! Experiments: factors and levels from a plan, every cell repeated and
//! run in a seeded random order as omni tests, stateless offloads switched
//! and read back between runs, and statistics, tables and charts per cell.

pub mod args;
pub mod cli;
pub mod environment;
pub mod execute;
pub mod factors;
pub mod interrupt;
pub mod model;
pub mod offloads;
pub mod order;
pub mod plan;
pub mod runner;
