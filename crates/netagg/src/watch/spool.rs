//! Where runs wait to be stored, and the storing: each run writes into its
//! own spool directory (`SPOOL/<run id>/`, with `watch.json` saying what
//! ran), is imported and stored with the watch's tags, and the directory
//! removed only once the database has it. A store that fails (a full disk,
//! a read-only file) is said once, keeps the directories (and, bounded,
//! the absences that could not be spooled) and is retried until it works
//! again; whatever a killed watch left in its spool is stored at the next
//! start — nothing measured is lost, nothing is stored twice.

use super::import;
use super::state::Shared;
use netperf_results::{Db, DbError, StoredResult};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// Most absences kept in memory while nothing can be written.
const MAX_IN_MEMORY: usize = 10_000;
/// What a spool directory says about its run.
const META: &str = "watch.json";

/// `watch.json`: the run's command line and its child's pid (while it
/// runs, a restarted watch leaves the directory to it).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Meta {
    pub command: Vec<String>,
    pub pid: Option<u32>,
}

/// The spool and the database, and whether storing works.
pub struct Keeper {
    db: Db,
    spool: PathBuf,
    tags: Vec<String>,
    shared: Shared,
    /// Why storing fails now; None while it works.
    failing: Option<String>,
    /// Absences that could not be spooled or stored, oldest first.
    memory: VecDeque<StoredResult>,
}

impl Keeper {
    /// The keeper of `spool` (created if missing) storing into `db`,
    /// tagging every result `tags`.
    pub fn open(db: Db, spool: &Path, tags: Vec<String>, shared: Shared) -> Result<Keeper, String> {
        std::fs::create_dir_all(spool)
            .map_err(|e| format!("--spool {}: cannot create it: {e}", spool.display()))?;
        Ok(Keeper {
            db,
            spool: spool.to_path_buf(),
            tags,
            shared,
            failing: None,
            memory: VecDeque::new(),
        })
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The directory of run `id`, made with its `watch.json`.
    pub fn prepare(&self, id: &str, meta: &Meta) -> Result<PathBuf, String> {
        let dir = self.spool.join(id);
        std::fs::create_dir(&dir)
            .and_then(|_| write_meta(&dir, meta))
            .map_err(|e| {
                let _ = std::fs::remove_dir_all(&dir);
                format!("cannot write the spool {}: {e}", dir.display())
            })?;
        Ok(dir)
    }

    /// Notes the child's pid in `dir` (best effort: it only spares a
    /// running orphan's directory at a restart).
    pub fn started(&self, dir: &Path, meta: &Meta) {
        let _ = write_meta(dir, meta);
    }

    /// Stores a finished run's results; `dir` is its spool directory,
    /// removed once they are stored. `from_dir` says the results are read
    /// from files in it (kept there when storing fails); otherwise they
    /// are kept in memory. Returns whether they are stored.
    pub fn keep(&mut self, dir: Option<&Path>, results: Vec<StoredResult>, from_dir: bool) -> bool {
        let stored = self.store_all(&results);
        match (&stored, dir) {
            (Ok(()), Some(dir)) => remove(dir),
            (Err(_), Some(dir)) if !from_dir => remove(dir),
            _ => {}
        }
        if stored.is_err() && !from_dir {
            for r in results {
                if self.memory.len() == MAX_IN_MEMORY {
                    self.memory.pop_front();
                }
                self.memory.push_back(r);
            }
        }
        self.settle(stored.err());
        self.failing.is_none()
    }

    /// Stores what waits: the absences in memory, then every spool
    /// directory whose run has ended (at start: what a killed watch left).
    /// A directory whose run saved nothing is removed with a note.
    pub fn retry(&mut self) {
        while let Some(first) = self.memory.front().cloned() {
            match self.store_all(std::slice::from_ref(&first)) {
                Ok(()) => {
                    self.memory.pop_front();
                }
                Err(e) => return self.settle(Some(e)),
            }
        }
        for dir in self.waiting_dirs() {
            let id = dir_id(&dir);
            let meta = read_meta(&dir);
            if meta.pid.is_some_and(alive) {
                continue;
            }
            match import::saved_results(&dir, &id, &meta.command) {
                Ok(results) if results.is_empty() => {
                    eprintln!(
                        "netagg watch: run {id} saved nothing before the watch stopped; its spool is removed"
                    );
                    remove(&dir);
                }
                Ok(results) => {
                    if let Err(e) = self.store_all(&results) {
                        return self.settle(Some(e));
                    }
                    eprintln!("netagg watch: stored run {id} from the spool");
                    remove(&dir);
                }
                Err(e) => {
                    // Set aside under a name no retry reads, said once.
                    let aside = self.spool.join(format!("unreadable-{id}"));
                    let _ = std::fs::rename(&dir, &aside);
                    eprintln!(
                        "netagg watch: run {id}: {e}; its spool is kept as {}",
                        aside.display()
                    );
                }
            }
        }
        self.settle(None);
    }

    /// The absences waiting in memory (lost if the watch ends first).
    pub fn in_memory(&self) -> usize {
        self.memory.len()
    }

    /// How many runs wait to be stored.
    pub fn pending(&self) -> usize {
        self.memory.len() + self.waiting_dirs().len()
    }

    fn waiting_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&self.spool)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.is_dir() && uuid::Uuid::parse_str(&dir_id(p)).is_ok())
                    .collect()
            })
            .unwrap_or_default();
        dirs.sort();
        dirs
    }

    /// Stores each result with the watch's tags; one already stored (the
    /// watch killed before its spool was removed) counts as stored.
    fn store_all(&self, results: &[StoredResult]) -> Result<(), String> {
        for result in results {
            let mut result = result.clone();
            for tag in &self.tags {
                if !result.tags.contains(tag) {
                    result.tags.push(tag.clone());
                }
            }
            match netperf_results::store_result(&self.db, &result) {
                Ok(_) | Err(DbError::Duplicate(_)) => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(())
    }

    /// Says when storing starts or stops failing (once per change), and
    /// publishes the state.
    fn settle(&mut self, error: Option<String>) {
        match (&self.failing, &error) {
            (None, Some(e)) => eprintln!(
                "netagg watch: cannot store ({e}); runs wait in {} and are stored when it works again",
                self.spool.display()
            ),
            (Some(_), None) => eprintln!("netagg watch: storing works again"),
            _ => {}
        }
        self.failing = error;
        let (failing, pending) = (self.failing.clone(), self.pending());
        self.shared.update(|s| {
            s.store_error = failing;
            s.pending = pending;
        });
    }
}

fn dir_id(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn write_meta(dir: &Path, meta: &Meta) -> std::io::Result<()> {
    let text = serde_json::to_string(meta).map_err(std::io::Error::other)?;
    std::fs::write(dir.join(META), text)
}

fn read_meta(dir: &Path) -> Meta {
    std::fs::read(dir.join(META))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn remove(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}

/// Whether process `pid` still runs (and is not a zombie of ours).
fn alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The state follows the command name in parentheses.
    let state = stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
    matches!(state, Some(Some(c)) if c != 'Z' && c != 'X')
}
