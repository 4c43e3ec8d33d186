//! Runs a validated plan: every (cell, replicate) in the seeded random
//! order, the cell's offloads set and read back before its run, a settling
//! pause, the run itself, and every outcome recorded (failed runs with
//! their reason). A stop signal ends the current run and the experiment,
//! which is then recorded as interrupted.

use super::args::{netperf_args, streams_of};
use super::execute::Outcome;
use super::latency_merge::{self, run_streams_merging_latency};
use super::order::run_order;
use super::plan::{shape_of, Plan};
use netperf_base::timefmt::now_utc;
use netperf_results::model::{
    cell_label, Cell, ExperimentRecord, OffloadRecord, RunRecord, RunStatus, RECORD_VERSION,
};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Time a run may take beyond its duration before it is killed: the
/// control connection's set-up, CPU measurement and the results exchange.
const RUN_GRACE: Duration = Duration::from_secs(60);

/// Metrics that mean something only in request/response tests.
const RR_ONLY_METRICS: &[&str] = &[
    "TRANSACTION_RATE",
    "MEAN_LATENCY",
    "P50_LATENCY",
    "P90_LATENCY",
    "P99_LATENCY",
];

/// Sets a cell's offloads on both ends and reads the state back.
pub trait OffloadControl {
    /// The read-back state after the cell's offload levels are in place
    /// (only reads when the cell has no offload factor), or why not.
    fn apply(&mut self, cell: &Cell) -> Result<OffloadRecord, String>;

    /// After the run: the state read back again is still `before`, or
    /// what changed under the run.
    fn verify(&mut self, before: &OffloadRecord) -> Result<(), String> {
        let _ = before;
        Ok(())
    }
}

/// For plans without offload factors and no interface to read.
pub struct NoOffloads;

impl OffloadControl for NoOffloads {
    fn apply(&mut self, _cell: &Cell) -> Result<OffloadRecord, String> {
        Ok(OffloadRecord::default())
    }
}

/// What the runner needs beyond the plan.
pub struct RunSettings<'a> {
    pub netperf: PathBuf,
    pub seed: u64,
    pub command_line: Vec<String>,
    pub stop: &'a AtomicBool,
}

/// Runs the plan and returns the whole record (environment left empty for
/// the caller to fill). Progress lines go to `progress`.
pub fn run_experiment(
    plan: &Plan,
    settings: &RunSettings,
    offloads: &mut dyn OffloadControl,
    progress: &mut dyn Write,
) -> ExperimentRecord {
    let cells = plan.cells();
    let order = run_order(cells.len(), plan.replicates, settings.seed);
    let started = now_utc();
    let mut runs = Vec::with_capacity(order.len());
    let each = EachRun {
        limit: Duration::from_secs(u64::from(plan.duration)) + RUN_GRACE,
        // Asked once, and only when some run has several request/response
        // streams whose latency must come from merged histograms.
        netperf_writes_histograms: cells.iter().any(merges_latency)
            && latency_merge::writes_histograms(&settings.netperf),
    };
    let mut interrupted = false;
    for (position, &(cell_index, replicate)) in order.iter().enumerate() {
        if settings.stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        let cell = &cells[cell_index];
        let run = one_run(plan, settings, offloads, cell, replicate, position, &each);
        let _ = writeln!(
            progress,
            "[{:>width$}/{}] {} #{}: {}",
            position + 1,
            order.len(),
            cell_label(cell),
            replicate,
            outcome_text(&run),
            width = order.len().to_string().len()
        );
        interrupted = run.status == RunStatus::Interrupted;
        runs.push(run);
        if interrupted {
            break;
        }
    }
    ExperimentRecord {
        record_version: RECORD_VERSION,
        id: uuid::Uuid::new_v4().to_string(),
        title: plan.title.clone(),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        tool_revision: netperf_pages::REVISION.to_string(),
        command_line: settings.command_line.clone(),
        plan: plan.to_toml(settings.seed),
        seed: settings.seed,
        replicates: plan.replicates,
        factors: plan.factor_records(),
        host: hosts_of(plan),
        port: plan.port,
        started,
        ended: now_utc(),
        status: if interrupted {
            "interrupted"
        } else {
            "complete"
        }
        .to_string(),
        tags: plan.tags.clone(),
        environment: Default::default(),
        runs,
        targets: plan.targets.clone(),
    }
}

/// The host(s) the runs went to: the plan's, or its targets' joined by ",".
fn hosts_of(plan: &Plan) -> String {
    let mut hosts: Vec<&str> = Vec::new();
    for t in plan.targets.iter().filter(|t| t.unavailable.is_none()) {
        if !hosts.contains(&t.host.as_str()) {
            hosts.push(&t.host);
        }
    }
    match hosts.is_empty() {
        true => plan.host.clone(),
        false => hosts.join(","),
    }
}

/// What every run of the experiment shares.
struct EachRun {
    /// Longest a run may take before it is killed.
    limit: Duration,
    /// The netperf is netperf-ng and writes latency histograms.
    netperf_writes_histograms: bool,
}

/// A cell of several request/response streams: its latency percentiles
/// come from the streams' merged histograms.
fn merges_latency(cell: &Cell) -> bool {
    streams_of(cell) > 1 && shape_of(cell).direction == "rr"
}

fn one_run(
    plan: &Plan,
    settings: &RunSettings,
    offloads: &mut dyn OffloadControl,
    cell: &Cell,
    replicate: u32,
    position: usize,
    each: &EachRun,
) -> RunRecord {
    let id = uuid::Uuid::new_v4().to_string();
    let mut record = RunRecord {
        id: id.clone(),
        order: position as u32,
        cell: cell.clone(),
        replicate,
        started: now_utc(),
        ended: String::new(),
        status: RunStatus::Ok,
        metrics: Default::default(),
        facts: Default::default(),
        offloads: OffloadRecord::default(),
        commands: Vec::new(),
    };
    match offloads.apply(cell) {
        Ok(state) => record.offloads = state,
        Err(reason) => {
            record.status = RunStatus::Failed {
                reason: format!("offloads: {reason}"),
            };
            record.ended = now_utc();
            return record;
        }
    }
    if !pause(plan.settle, settings.stop) {
        record.status = RunStatus::Interrupted;
        record.ended = now_utc();
        return record;
    }
    let streams = streams_of(cell);
    let uuids: Vec<String> = std::iter::once(id)
        .chain((1..streams).map(|_| uuid::Uuid::new_v4().to_string()))
        .collect();
    let mut commands: Vec<Vec<String>> =
        uuids.iter().map(|u| netperf_args(plan, cell, u)).collect();
    // The histograms' directory lives until the run's figures are read.
    let mut histograms = None;
    let mut latency = None;
    if merges_latency(cell) {
        let (dir, with_files, source) = latency_merge::prepare(
            &settings.netperf,
            each.netperf_writes_histograms,
            &record.id,
            commands,
        );
        (histograms, commands, latency) = (dir, with_files, Some(source));
    }
    record.started = now_utc();
    let outcome = run_streams_merging_latency(
        &settings.netperf,
        &commands,
        latency.as_ref(),
        each.limit,
        settings.stop,
    );
    drop(histograms);
    record.ended = now_utc();
    record.commands = commands
        .into_iter()
        .map(|args| {
            std::iter::once(settings.netperf.display().to_string())
                .chain(args)
                .collect()
        })
        .collect();
    let verified = match &outcome {
        Outcome::Measured(_) => offloads.verify(&record.offloads),
        _ => Ok(()),
    };
    match outcome {
        Outcome::Measured(_) if verified.is_err() => {
            record.status = RunStatus::Failed {
                reason: verified.err().unwrap_or_default(),
            };
        }
        Outcome::Measured(mut m) => {
            if shape_of(cell).direction != "rr" {
                // A stream test's transaction rate is 1 and its "latency" is
                // the time per send call: not figures to compare.
                for key in RR_ONLY_METRICS {
                    m.metrics.remove(*key);
                }
            }
            record.metrics = m.metrics;
            record.facts = m.facts;
        }
        Outcome::Failed(reason) => record.status = RunStatus::Failed { reason },
        Outcome::Interrupted => record.status = RunStatus::Interrupted,
    }
    record
}

/// Sleeps `settle`, waking early on a stop; false when stopped.
fn pause(settle: Duration, stop: &AtomicBool) -> bool {
    let step = Duration::from_millis(50);
    let mut left = settle;
    while !left.is_zero() {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let nap = left.min(step);
        std::thread::sleep(nap);
        left -= nap;
    }
    !stop.load(Ordering::Relaxed)
}

fn outcome_text(run: &RunRecord) -> String {
    match &run.status {
        RunStatus::Ok => {
            let units = run.facts.get("THROUGHPUT_UNITS").map_or("", String::as_str);
            format!(
                "{:.2} {units}",
                run.metrics.get("THROUGHPUT").copied().unwrap_or(0.0)
            )
        }
        RunStatus::Failed { reason } => format!("FAILED: {reason}"),
        RunStatus::Interrupted => "interrupted".to_string(),
    }
}
