//! `netagg watch`: a plan measured on a schedule until stopped, every run
//! stored in the results database with its context (an absence with its
//! reason when an endpoint cannot be reached), the history searched for
//! change points after each run, the database kept bounded, and, with
//! `--listen`, the latest values, change points and history served over
//! HTTP (`/metrics`, a live page, a JSON API).
//!
//! Rooms: `cli` is the options and what is checked before the first run;
//! `plan` the plan file and the simple form, each entry a child's command
//! line; `schedule` the loop on the monotonic clock, the change-point
//! search and the retention after each round; `child` one run as a child
//! process; `import` a run's saved files made into stored results (one
//! importer per saved kind) or its absence; `spool` where runs wait to be
//! stored and the storing, with its failures said once; `state` is what
//! the loop knows that the database does not (the last runs, the next one,
//! a store that fails, the open change points), shared with the HTTP side
//! (`serve`: `--listen`'s `/metrics`, live page and JSON API, bounded
//! against hostile clients), which reads it and the database and never
//! writes either.

/// A line on stdout; a closed stdout (a reader gone) does not stop the
/// watch, which goes on storing.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

pub mod child;
pub mod cli;
pub mod import;
pub mod plan;
pub mod schedule;
pub mod serve;
pub mod spool;
pub mod state;
