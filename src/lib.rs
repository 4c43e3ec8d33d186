//! netperf-ng: the umbrella over the workspace's crates. It re-exports each
//! under the module name it has in docs/architecture.md, so the integration
//! suite (tests/) and the fuzz targets (fuzz/) name the whole house through
//! one crate, and it holds the fuzz targets' checks (`fuzzing`), which reach
//! across both ends. The programs live in crates/netperf, crates/netserver
//! and crates/netagg.
//!
//! Data flow of one netperf test: argv → `cli` → `spec::TestSpec` →
//! `control` (the wire protocol to the netserver) and `engine` (the data
//! path) → `measure::outcome::Outcome` → `report`, coordinated by `run`.

pub use netagg::{agg, experiment, matrix, mesh, watch};
pub use netperf as run;
pub use netperf_base::{ids, input, rlimit, timefmt};
pub use netperf_client::{cli, control, report};
pub use netperf_data::{engine, measure, net, spec};
pub use netperf_k8s as k8s;
pub use netperf_pages as page;
pub use netperf_results as resultsdb;
pub use netperf_results::stats;
pub use netperf_wire as wire;
pub use netserver as server;

#[doc(hidden)]
pub mod fuzzing;
