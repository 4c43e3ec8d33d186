//! What a request shows, read once and shared: the status snapshot, the
//! watch's series from the database (the results tagged `watch=NAME`,
//! read-only, the newest [`MAX_RESULTS`] only, so a year of history costs
//! no more than a few weeks of it), the newest stored document (for the
//! mesh heatmap or the experiment's table), or why the database could not
//! be read. The series are read again when the loop has stored or searched
//! something since, or after [`FRESH_FOR`]; requests meanwhile share one
//! read, and one reader at a time reads.

use crate::watch::state::{Shared, Status};
use netperf_results::db::Db;
use netperf_results::error::DbError;
use netperf_results::history::{self, Selection, Series};
use netperf_results::query::{self, Filter};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How many of the watch's newest results the page, the API and
/// `/metrics` read; the page says so when there are more.
pub const MAX_RESULTS: usize = 2_000;
/// How many of the newest results are looked through for a document.
const LOOK_BACK: usize = 8;
/// How long a read serves requests when nothing changed in the status.
pub const FRESH_FOR: Duration = Duration::from_secs(10);

/// What the database holds for the watch, as last read.
#[derive(Debug, Default)]
pub struct Stored {
    /// The series, oldest point first.
    pub series: Vec<Series>,
    /// Whether older results were left out ([`MAX_RESULTS`]).
    pub truncated: bool,
    /// The newest result's document (JSON), if it has one.
    pub latest_document: Option<String>,
    /// Why the database could not be read; the rest is then empty.
    pub error: Option<String>,
}

/// One request's view: the status as it is now and the stored series.
pub struct View {
    pub status: Status,
    /// When the snapshot was taken (ages are measured to it).
    pub now: Instant,
    pub stored: Arc<Stored>,
}

impl View {
    /// Seconds since the last run that measured anything.
    pub fn since_success(&self) -> Option<f64> {
        let at = self.status.last_success?;
        Some(self.now.saturating_duration_since(at).as_secs_f64())
    }

    /// Seconds until the next run (0 when due).
    pub fn until_next(&self) -> Option<f64> {
        let at = self.status.next_run?;
        Some(at.saturating_duration_since(self.now).as_secs_f64())
    }
}

/// What changes in the status when the database may have changed.
type Key = (Option<u64>, usize, Option<String>, usize);

fn key(s: &Status) -> Key {
    let stored = s.runs.iter().filter(|r| r.stored).count();
    let last = s.runs.back().map(|r| r.sequence);
    (last, stored, s.changes_searched.clone(), s.pending)
}

/// The views of one server: its shared status and its last read.
pub struct Source {
    shared: Shared,
    cache: Mutex<Option<(Instant, Key, Arc<Stored>)>>,
}

impl Source {
    pub fn new(shared: Shared) -> Source {
        Source {
            shared,
            cache: Mutex::new(None),
        }
    }

    /// The status now and the stored series (read again if stale).
    pub fn view(&self) -> View {
        let status = self.shared.snapshot();
        let now = Instant::now();
        let wanted = key(&status);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let stored = match cache.as_ref() {
            Some((at, k, stored)) if *k == wanted && at.elapsed() < FRESH_FOR => stored.clone(),
            _ => {
                let stored = Arc::new(read(&status, MAX_RESULTS));
                *cache = Some((Instant::now(), wanted, stored.clone()));
                stored
            }
        };
        View {
            status,
            now,
            stored,
        }
    }
}

/// The watch's stored series from its newest `max_results` results, or
/// why they could not be read.
pub fn read(status: &Status, max_results: usize) -> Stored {
    match read_db(status, max_results) {
        Ok(stored) => stored,
        Err(e) => Stored {
            error: Some(e.to_string()),
            ..Stored::default()
        },
    }
}

fn read_db(status: &Status, max_results: usize) -> Result<Stored, DbError> {
    let db = Db::open_read_only(&status.db)?;
    let tag = format!("watch={}", status.name);
    let mut filter = Filter {
        tags: vec![tag],
        limit: Some(max_results + 1),
        ..Filter::default()
    };
    let mut newest = query::list(&db, &filter)?;
    let truncated = newest.len() > max_results;
    newest.truncate(max_results);
    // The oldest of the newest results bounds the read (results started
    // at the same instant as it may come along: a handful at most).
    filter.since = newest
        .last()
        .filter(|_| truncated)
        .map(|r| r.started.clone());
    filter.limit = None;
    let mut series = history::from_db(
        &db,
        &Selection {
            filter,
            ..Selection::default()
        },
    )?;
    for s in &mut series {
        let extra = s.points.len().saturating_sub(max_results);
        s.points.drain(..extra);
    }
    // The newest result that keeps its producer's document (an absence
    // stored for a run that reached nobody has none).
    let mut latest_document = None;
    for r in newest.iter().take(LOOK_BACK) {
        latest_document = query::load(&db, &r.id)?.document;
        if latest_document.is_some() {
            break;
        }
    }
    Ok(Stored {
        series,
        truncated,
        latest_document,
        error: None,
    })
}
