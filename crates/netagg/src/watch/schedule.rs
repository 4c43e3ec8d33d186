//! The watch's loop: rounds of the plan on the monotonic clock (round k
//! starts at start + k × every; one that overruns makes the next start at
//! once, the slots it skipped said and never run twice, so a step of the
//! wall clock neither loses nor repeats a run), each entry run as a child,
//! imported and stored, one line each; after each round the change points
//! of the watch's series searched (new ones said with what else changed)
//! and the retention applied; a stop signal ends it with exit status 0.

use super::child;
use super::import;
use super::plan::Job;
use super::spool::{Keeper, Meta};
use super::state::{Outcome, RunEntry, Shared};
use netperf_base::timefmt::now_utc;
use netperf_results::changes::{self, Found};
use netperf_results::history::{self, Selection};
use netperf_results::render::number;
use netperf_results::retain::{self, Retention};
use netperf_results::stats::ChangeOptions;
use netperf_results::Filter;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the wait between runs looks at the stop flag.
const TICK: Duration = Duration::from_millis(100);
/// How often, while storing fails, the spool is tried again between runs.
const RETRY_EVERY: Duration = Duration::from_secs(60);

/// What the loop runs and keeps.
pub struct Settings {
    pub name: String,
    pub every: Duration,
    /// Rounds of the plan before it ends; None: until stopped.
    pub rounds: Option<u64>,
    pub keep_seconds: u64,
    pub compact_seconds: u64,
    pub jobs: Vec<Job>,
}

impl Settings {
    /// The tag every result of this watch carries.
    pub fn tag(&self) -> String {
        format!("watch={}", self.name)
    }
}

/// The loop's own state between rounds.
struct Looper<'a> {
    settings: &'a Settings,
    keeper: Keeper,
    shared: Shared,
    stop: &'a AtomicBool,
    sequence: u64,
    /// Change points already said by this process: (series, time).
    said: BTreeSet<(String, String)>,
    /// The retention failed last time (said once until it works again).
    retain_failing: bool,
}

/// Runs the watch until `stop` or its rounds are done.
pub fn watch(settings: &Settings, keeper: Keeper, shared: Shared, stop: &AtomicBool) {
    let mut looper = Looper {
        settings,
        keeper,
        shared,
        stop,
        sequence: 0,
        said: BTreeSet::new(),
        retain_failing: false,
    };
    // What a killed watch left is stored first.
    looper.keeper.retry();
    looper.retain();
    let start = Instant::now();
    let mut slot: u64 = 0;
    let mut rounds: u64 = 0;
    // Past what an Instant holds (never, in practice): no more rounds.
    while let Some(due) = start.checked_add(scaled(settings.every, slot)) {
        looper.shared.update(|s| s.next_run = Some(due));
        if !looper.wait_until(due) {
            break;
        }
        looper.round();
        rounds += 1;
        if stop.load(Ordering::Relaxed) {
            break;
        }
        looper.search_changes();
        if settings.rounds.is_some_and(|n| rounds >= n) {
            break;
        }
        looper.retain();
        let skipped;
        (slot, skipped) = next_slot(slot, start.elapsed(), settings.every);
        if skipped > 0 {
            eprintln!(
                "netagg watch: the last round took longer than --every: {skipped} slot(s) skipped, the next round starts now"
            );
        }
    }
    looper.finish(rounds);
}

/// The slot of the next round after the round of `slot`, `elapsed` since
/// the start, and how many slots were skipped: the next one, or, when its
/// start has passed, the latest whose start has (run at once) — a slot is
/// never run late twice.
fn next_slot(slot: u64, elapsed: Duration, every: Duration) -> (u64, u64) {
    let passed = (elapsed.as_secs_f64() / every.as_secs_f64()) as u64;
    let next = (slot + 1).max(passed);
    (next, next - slot - 1)
}

/// `every` × `slot`, saturating.
fn scaled(every: Duration, slot: u64) -> Duration {
    every.saturating_mul(u32::try_from(slot).unwrap_or(u32::MAX))
}

impl Looper<'_> {
    /// Waits for `due`, retrying the spool while storing fails; false
    /// when a stop arrived.
    fn wait_until(&mut self, due: Instant) -> bool {
        let mut next_retry = Instant::now() + RETRY_EVERY;
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return false;
            }
            let now = Instant::now();
            if now >= due {
                return true;
            }
            if now >= next_retry {
                next_retry = now + RETRY_EVERY;
                if self.keeper.pending() > 0 {
                    self.keeper.retry();
                }
            }
            std::thread::sleep(TICK.min(due - now));
        }
    }

    /// One round: every entry of the plan, in order.
    fn round(&mut self) {
        if self.keeper.pending() > 0 {
            self.keeper.retry();
        }
        for job in &self.settings.jobs {
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            self.run(job);
        }
    }

    /// One entry: its child, its import, its store, its line.
    fn run(&mut self, job: &Job) {
        self.sequence += 1;
        let id = netperf_base::ids::new_uuid();
        let started = now_utc();
        self.shared.update(|s| s.running = true);
        let (results, from_dir, dir) = self.measure(job, &id, &started);
        let (outcome, reason) = import::outcome(&results);
        let measured = results
            .iter()
            .any(|r| r.runs.iter().any(|run| run.status.is_ok()));
        // An experiment keeps its own id; other kinds take the run's.
        let id = results.first().map_or(id, |r| r.id.clone());
        let stored = self.keeper.keep(dir.as_deref(), results, from_dir);
        let ended = now_utc();
        let reason_text = reason
            .as_deref()
            .map_or(String::new(), |r| format!(": {r}"));
        say!(
            "run {} {started} {} {id} {}{reason_text}",
            self.sequence,
            outcome_text(outcome),
            if stored {
                "stored"
            } else {
                "waiting to be stored"
            }
        );
        let entry = RunEntry {
            sequence: self.sequence,
            result: id,
            started,
            ended,
            outcome,
            reason,
            stored,
        };
        self.shared.update(|s| {
            s.running = false;
            if measured {
                s.last_success = Some(Instant::now());
            }
            s.push_run(entry);
        });
    }

    /// Runs `job` as a child writing into its spool directory; its saved
    /// results (from_dir), else its absence; and the directory.
    fn measure(
        &self,
        job: &Job,
        id: &str,
        started: &str,
    ) -> (
        Vec<netperf_results::StoredResult>,
        bool,
        Option<std::path::PathBuf>,
    ) {
        let program = job.program.name();
        let absent = |reason: &str, interrupted: bool, command: Vec<String>| {
            let span = (started, now_utc());
            let a = import::absence(job, id, (span.0, &span.1), reason, interrupted, command);
            vec![a]
        };
        let mut meta = Meta::default();
        let dir = match self.keeper.prepare(id, &meta) {
            Ok(dir) => dir,
            Err(e) => return (absent(&e, false, Vec::new()), false, None),
        };
        let words = match job.command(&dir) {
            Ok(words) => words,
            Err(e) => return (absent(&e, false, Vec::new()), false, Some(dir)),
        };
        meta.command = std::iter::once(program.to_string())
            .chain(words.iter().cloned())
            .collect();
        let path = match child::program(program) {
            Ok(path) => path,
            Err(e) => return (absent(&e, false, meta.command), false, Some(dir)),
        };
        self.keeper.started(&dir, &meta);
        let ended = child::run(&path, &words, job.timeout, job.grace, self.stop, |pid| {
            let mut with_pid = meta.clone();
            with_pid.pid = Some(pid);
            self.keeper.started(&dir, &with_pid);
        });
        let ended = match ended {
            Ok(ended) => ended,
            Err(e) => return (absent(&e, false, meta.command), false, Some(dir)),
        };
        match import::saved_results(&dir, id, &meta.command) {
            Ok(results) if !results.is_empty() => (results, true, Some(dir)),
            found => {
                let reason = match (&found, &ended) {
                    (Err(e), _) => e.clone(),
                    (_, e) if e.timed_out => {
                        format!("cut after its timeout of {} s", job.timeout.as_secs())
                    }
                    (_, e) if !e.last_line.is_empty() => e.last_line.clone(),
                    (_, e) => match e.code {
                        Some(code) => format!("{program} exited with status {code}"),
                        None => format!("{program} was killed by a signal"),
                    },
                };
                (
                    absent(&reason, ended.stopped, meta.command),
                    false,
                    Some(dir),
                )
            }
        }
    }

    /// The change points of the watch's series; each one this process has
    /// not said yet is said, with what else changed at it.
    fn search_changes(&mut self) {
        let selection = Selection {
            filter: Filter {
                tags: vec![self.settings.tag()],
                ..Filter::default()
            },
            ..Selection::default()
        };
        let found = history::from_db(self.keeper.db(), &selection)
            .map_err(|e| e.to_string())
            .and_then(|series| {
                changes::find(&series, &ChangeOptions::default()).map_err(|e| e.to_string())
            });
        let report = match found {
            Ok(report) => report,
            Err(e) => {
                eprintln!("netagg watch: cannot search for change points: {e}");
                return;
            }
        };
        for change in &report.changes {
            if self
                .said
                .insert((change.series.clone(), change.time.clone()))
            {
                eprintln!("netagg watch: {}", change_line(change));
            }
        }
        let searched = now_utc();
        self.shared.update(|s| {
            s.changes = report.changes;
            s.changes_searched = Some(searched);
        });
    }

    /// Deletes and compacts what is past --keep and --compact-after.
    fn retain(&mut self) {
        let retention = Retention {
            tag: self.settings.tag(),
            delete_before: Some(retain::ago(self.settings.keep_seconds)),
            compact_before: Some(retain::ago(self.settings.compact_seconds)),
        };
        let done = retain::apply(self.keeper.db(), &retention);
        match &done {
            Ok(done) if done.deleted + done.compacted > 0 => eprintln!(
                "netagg watch: retention: {} result(s) past --keep deleted, {} compacted{}",
                done.deleted,
                done.compacted,
                if done.vacuumed {
                    ", the file vacuumed"
                } else {
                    ""
                }
            ),
            Ok(_) => {}
            Err(e) if !self.retain_failing => {
                eprintln!("netagg watch: retention: {e} (tried again after every round)")
            }
            Err(_) => {}
        }
        self.retain_failing = done.is_err();
    }

    /// The last store attempt and the closing line.
    fn finish(&mut self, rounds: u64) {
        if self.keeper.pending() > 0 {
            self.keeper.retry();
        }
        let memory = self.keeper.in_memory();
        let spooled = self.keeper.pending() - memory;
        let mut waiting = String::new();
        if spooled > 0 {
            waiting += &format!("; {spooled} run(s) wait in the spool for the next start");
        }
        if memory > 0 {
            waiting += &format!("; {memory} absence(s) that could not be written are lost");
        }
        let why = match self.stop.load(Ordering::Relaxed) {
            true => "stopped by a signal",
            false => "its rounds done",
        };
        eprintln!(
            "netagg watch: {why} after {rounds} round(s), {} run(s){waiting}",
            self.sequence
        );
    }
}

fn outcome_text(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Ok => "ok",
        Outcome::Partial => "partial",
        Outcome::Failed => "failed",
        Outcome::Interrupted => "interrupted",
    }
}

/// One change point on one line, with what else changed.
fn change_line(c: &Found) -> String {
    let percent = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:+.1}%", 100.0 * v));
    let context = match c.context_changes.as_slice() {
        [] => "nothing else recorded changed".to_string(),
        diffs => {
            let list: Vec<String> = diffs
                .iter()
                .map(|d| format!("{} {:?} -> {:?}", d.key, d.before, d.after))
                .collect();
            format!("what else changed: {}", list.join("; "))
        }
    };
    let unit = match c.unit.is_empty() {
        true => String::new(),
        false => format!(" {}", c.unit),
    };
    format!(
        "change point in {} at {} ({}): median {} -> {}{unit} ({} [{}, {}], p = {}); {context}",
        c.series,
        c.time,
        c.direction,
        number(c.median_before),
        number(c.median_after),
        percent(c.change),
        percent(c.change_low),
        percent(c.change_high),
        c.p_value
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_keep_their_grid_and_overruns_skip_slots() {
        let every = Duration::from_secs(10);
        let at = |s: f64| Duration::from_secs_f64(s);
        // On time: the next slot.
        assert_eq!(next_slot(0, at(3.0), every), (1, 0));
        assert_eq!(next_slot(4, at(47.0), every), (5, 0));
        // A little over: the next slot, at once, nothing skipped.
        assert_eq!(next_slot(0, at(12.0), every), (1, 0));
        // Far over: the slots it covered are skipped, the latest runs now.
        assert_eq!(next_slot(0, at(35.0), every), (3, 2));
        assert_eq!(next_slot(3, at(35.5), every), (4, 0));
    }
}
