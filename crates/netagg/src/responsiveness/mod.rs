//! `netagg responsiveness`: latency under working load in one command — an
//! open-loop request/response probe at a fixed rate, first alone (idle),
//! then beside bulk TCP flows loading the path upload, download and both,
//! against one or more load generators; the idle and loaded percentiles,
//! the inflation beyond the idle phase's own noise, each phase's bulk
//! throughput and the probe's losses, as text, JSON, a page with the
//! latency over time, and the results database.

pub mod cli;
pub mod draw;
pub mod measure;
pub mod model;
pub mod store;

/// One phase a run can have: its name and the bulk tests it runs to each
/// load generator (netperf's names: TCP_STREAM sends from here, the
/// upload; TCP_MAERTS has the load generator send, the download).
#[derive(Debug, PartialEq, Eq)]
pub struct PhaseKind {
    pub name: &'static str,
    pub bulk: &'static [&'static str],
}

/// Upload's bulk test.
pub const UPLOAD: &str = "TCP_STREAM";
/// Download's bulk test.
pub const DOWNLOAD: &str = "TCP_MAERTS";

/// Every phase, in the order a default run has them.
pub const PHASES: [PhaseKind; 4] = [
    PhaseKind {
        name: "idle",
        bulk: &[],
    },
    PhaseKind {
        name: "upload",
        bulk: &[UPLOAD],
    },
    PhaseKind {
        name: "download",
        bulk: &[DOWNLOAD],
    },
    PhaseKind {
        name: "both",
        bulk: &[UPLOAD, DOWNLOAD],
    },
];

/// The phase named `name`.
pub fn phase_kind(name: &str) -> Option<&'static PhaseKind> {
    PHASES.iter().find(|p| p.name == name)
}
