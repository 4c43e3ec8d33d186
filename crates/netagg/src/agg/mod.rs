//! netagg: synchronized aggregate tests across many load generators — the
//! seed's runemomniaggdemo.sh, find_max_burst.sh and post_proc.py as one
//! program with one clock: the load generators (`hosts`), the test kinds and
//! the ramp (`plan`), find_max_burst.sh's search (`burst`), starting and
//! stopping the streams (`launch`: a test each, or the flows of shared tests), the
//! coordinator that samples them at the same instants (`runner`, at a raised
//! priority: `priority`), why streams failed (`failures`), which streams
//! stalled or moved nothing (`health`), and what the run says (`summary`,
//! the charts in `charts`, the context and HTML page in `report`), the run as
//! the results database takes it (`store`); and `post`, which reads the
//! logs of real netperf runs of runemomniaggdemo.sh as post_proc.py does.
//! `cli` is the ramp's options and top level, `commands` are `netagg post`
//! and `netagg report`: the netagg binary only dispatches to them.

pub mod burst;
pub mod charts;
pub mod cli;
pub mod commands;
pub mod compat;
pub mod failures;
pub mod health;
pub mod hosts;
pub mod launch;
pub mod plan;
pub mod post;
pub mod priority;
pub mod report;
pub mod runner;
pub mod saved;
pub mod store;
pub mod summary;
