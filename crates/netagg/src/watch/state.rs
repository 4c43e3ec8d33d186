//! What the watch loop knows that the database does not, shared with the
//! HTTP side behind one lock: the watch's settings, the last runs and how
//! each ended, when the next one starts, whether storing fails (a full
//! disk), how many measured runs wait to be stored, and the change points
//! the last search found. The loop is the only writer; readers take a
//! snapshot (`Shared::snapshot`) and never hold the lock while they work.

use netperf_results::changes::Found;
use serde::Serialize;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// How many finished runs the status keeps (the database keeps them all).
pub const RECENT_RUNS: usize = 64;

/// How one scheduled run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every test of the run measured.
    Ok,
    /// Some tests measured, others failed (each stored with its reason).
    Partial,
    /// Nothing measured: every endpoint unreachable or every test failed;
    /// the absence is stored with the reason.
    Failed,
    /// SIGTERM or SIGINT cut it; what it measured is stored, marked so.
    Interrupted,
}

/// One finished run of the schedule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunEntry {
    /// The watch's own count of its runs, from 1 since it started.
    pub sequence: u64,
    /// The stored result's id (UUID); a run that could not be stored yet
    /// has its id too.
    pub result: String,
    /// RFC 3339 UTC.
    pub started: String,
    pub ended: String,
    pub outcome: Outcome,
    /// Why it failed or was partial (the first failed test's reason).
    pub reason: Option<String>,
    /// In the database (false while it waits for room).
    pub stored: bool,
}

/// The watch as the HTTP side sees it.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// The watch's name: its tag in the database (`watch=NAME`).
    pub name: String,
    pub db: PathBuf,
    /// Seconds between run starts.
    pub every_seconds: f64,
    /// What each run measures, one line per plan entry, for the page.
    pub plan: Vec<String>,
    /// RFC 3339 UTC, when this watch process started.
    pub started: String,
    /// The last runs, newest last, at most [`RECENT_RUNS`].
    pub runs: VecDeque<RunEntry>,
    /// When the last run with anything measured ended (monotonic: a clock
    /// step does not age it).
    #[serde(skip)]
    pub last_success: Option<Instant>,
    /// When the next run starts (monotonic).
    #[serde(skip)]
    pub next_run: Option<Instant>,
    /// Whether a run is going on now.
    pub running: bool,
    /// Why the last attempt to store failed (e.g. "database or disk is
    /// full"); None once storing works again.
    pub store_error: Option<String>,
    /// Measured runs that wait to be stored.
    pub pending: usize,
    /// The change points of the watch's series from the last search,
    /// series order then time.
    pub changes: Vec<Found>,
    /// RFC 3339 UTC of that search; None before the first.
    pub changes_searched: Option<String>,
}

impl Status {
    /// The status of a watch that has not run yet.
    pub fn new(name: &str, db: PathBuf, every_seconds: f64, plan: Vec<String>) -> Status {
        Status {
            name: name.to_string(),
            db,
            every_seconds,
            plan,
            started: netperf_base::timefmt::now_utc(),
            runs: VecDeque::new(),
            last_success: None,
            next_run: None,
            running: false,
            store_error: None,
            pending: 0,
            changes: Vec::new(),
            changes_searched: None,
        }
    }

    /// Adds a finished run, dropping the oldest beyond [`RECENT_RUNS`].
    pub fn push_run(&mut self, entry: RunEntry) {
        if self.runs.len() == RECENT_RUNS {
            self.runs.pop_front();
        }
        self.runs.push_back(entry);
    }
}

/// The status behind its lock, cloned cheaply between the loop and the
/// HTTP threads.
#[derive(Debug, Clone)]
pub struct Shared(Arc<Mutex<Status>>);

impl Shared {
    pub fn new(status: Status) -> Shared {
        Shared(Arc::new(Mutex::new(status)))
    }

    /// Changes the status (the loop only).
    pub fn update(&self, change: impl FnOnce(&mut Status)) {
        let mut guard = self.0.lock().unwrap_or_else(|p| p.into_inner());
        change(&mut guard);
    }

    /// A copy of the status as it is now.
    pub fn snapshot(&self) -> Status {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
