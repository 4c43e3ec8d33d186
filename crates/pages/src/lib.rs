//! Self-contained HTML pages: netagg's report, the experiment's, the
//! matrix's, and one test's interim series (`netperf -- --report`); the
//! mesh's page is laid out by netagg with the builders here. One style sheet that reads at 1280 px, on a phone and on
//! paper; escaping; the one page builder (`page`), the one chart builder
//! (`chart`) with its tick labels, and the mesh's heatmap (`heatmap`); and
//! the run context every page opens with and its JSON carries. No script,
//! no external resource.

pub mod chart;
pub mod context;
pub mod heatmap;
pub mod html;
pub mod page;
pub mod rate;
pub mod series;
pub mod units;

/// netperf-ng's version, as Cargo has it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The git revision the binaries were built from ("unknown" outside a git
/// checkout; `NETPERF_NG_REVISION` at build time overrides it).
pub const REVISION: &str = env!("NETPERF_NG_REVISION");
