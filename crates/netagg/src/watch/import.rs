//! A finished run's spool directory made into what the database stores:
//! the saved run its child wrote, read by the one importer of its kind
//! (the table below, parallel to `netagg report`'s drawers), or netperf's
//! own spool database; and, when the child left nothing, the absence with
//! its reason — failed runs, never a zero.

use super::plan::Job;
use super::state::Outcome;
use netperf_base::saved::{identify, read_document, SavedKind};
use netperf_base::saved::{EXPERIMENT, MATRIX, MESH, RAMP, RESPONSIVENESS};
use netperf_results::model::{OffloadRecord, RunRecord, RunStatus};
use netperf_results::{Db, Filter, StoredResult};
use serde_json::Value;
use std::path::Path;

/// The file a netperf run stores into (`-- --store=SPOOL/RUN/netperf.db`).
pub const NETPERF_DB: &str = "netperf.db";

/// Makes a saved run's document into its stored form: the document, its
/// text, the run's id (the spool directory's) and the child's command.
type Importer = fn(&Value, String, &str, Vec<String>) -> Result<StoredResult, String>;

/// Which importer reads which saved kind. A netperf series (`--report`)
/// and `netagg post` are not runs a watch makes.
const IMPORTERS: [(&SavedKind, Importer); 5] = [
    (&EXPERIMENT, experiment),
    (&MATRIX, experiment),
    (&RAMP, ramp),
    (&RESPONSIVENESS, responsiveness),
    (&MESH, mesh),
];

fn experiment(doc: &Value, _: String, _: &str, _: Vec<String>) -> Result<StoredResult, String> {
    // The experiment's own id: the same document read twice is one result.
    let record = netperf_results::model::ExperimentRecord::from_saved(doc)?;
    StoredResult::of_experiment(&record).map_err(|e| e.to_string())
}

fn ramp(doc: &Value, text: String, id: &str, command: Vec<String>) -> Result<StoredResult, String> {
    let saved = crate::agg::saved::read(doc)?;
    let kind = crate::agg::plan::KINDS
        .iter()
        .find(|k| k.name == saved.kind)
        .ok_or_else(|| format!("unknown ramp kind {:?}", saved.kind))?;
    let run = crate::agg::store::stored_run(kind, &saved.recording, &saved.levels, &text, command);
    Ok(with_id(netperf_results::netagg::result_of(&run, &[]), id))
}

fn responsiveness(
    doc: &Value,
    text: String,
    id: &str,
    command: Vec<String>,
) -> Result<StoredResult, String> {
    let run = crate::responsiveness::model::Run::from_json(doc)?;
    let result = crate::responsiveness::store::result_of(&run, text, command);
    Ok(with_id(result, id))
}

fn mesh(doc: &Value, text: String, id: &str, command: Vec<String>) -> Result<StoredResult, String> {
    let mesh = crate::mesh::model::Mesh::from_json(doc)?;
    Ok(with_id(
        crate::mesh::output::result_of(&mesh, text, command),
        id,
    ))
}

/// The result under the run's id, so a spool imported twice (the watch
/// killed between storing and removing it) is refused as a duplicate.
fn with_id(mut result: StoredResult, id: &str) -> StoredResult {
    result.id = id.to_string();
    result
}

/// What a spool directory holds: the stored forms of the run it saved
/// (none when the child wrote nothing); an error names the file that
/// could not be read.
pub fn saved_results(
    dir: &Path,
    id: &str,
    command: &[String],
) -> Result<Vec<StoredResult>, String> {
    let netperf_db = dir.join(NETPERF_DB);
    if netperf_db.exists() {
        return netperf_results(&netperf_db);
    }
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for file in files {
        let Ok(doc) = read_document(&file) else {
            continue;
        };
        let Ok(kind) = identify(&doc) else { continue };
        let Some((_, import)) = IMPORTERS.iter().find(|(k, _)| *k == kind) else {
            continue;
        };
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let result = import(&doc, text, id, command.to_vec())
            .map_err(|e| format!("{}: {e}", file.display()))?;
        return Ok(vec![result]);
    }
    Ok(Vec::new())
}

/// Every result netperf stored into its spool database.
fn netperf_results(path: &Path) -> Result<Vec<StoredResult>, String> {
    let db = Db::open_read_only(path).map_err(|e| e.to_string())?;
    let listed =
        netperf_results::query::list(&db, &Filter::default()).map_err(|e| e.to_string())?;
    listed
        .iter()
        .map(|s| netperf_results::query::load(&db, &s.id).map_err(|e| e.to_string()))
        .collect()
}

/// The absence of a run that saved nothing: one run per cell it would
/// have measured, failed with `reason` (or interrupted), under the run's
/// id.
pub fn absence(
    job: &Job,
    id: &str,
    span: (&str, &str),
    reason: &str,
    interrupted: bool,
    command: Vec<String>,
) -> StoredResult {
    let status = match interrupted {
        true => RunStatus::Interrupted,
        false => RunStatus::Failed {
            reason: reason.to_string(),
        },
    };
    let cells: Vec<Vec<(String, String)>> = match &job.simple {
        Some(simple) => {
            let hosts: Vec<&String> = simple.hosts.iter().collect();
            let mut cells = Vec::new();
            for test in &simple.tests {
                match hosts.as_slice() {
                    [_] | [] => cells.push(vec![("test".to_string(), test.clone())]),
                    several => cells.extend(several.iter().map(|h| {
                        vec![
                            ("target".to_string(), h.to_string()),
                            ("test".to_string(), test.clone()),
                        ]
                    })),
                }
            }
            cells
        }
        None => vec![Vec::new()],
    };
    let runs = cells
        .into_iter()
        .enumerate()
        .map(|(order, cell)| RunRecord {
            id: netperf_base::ids::new_uuid(),
            order: order as u32,
            cell,
            replicate: 1,
            started: span.0.to_string(),
            ended: span.1.to_string(),
            status: status.clone(),
            metrics: Default::default(),
            facts: Default::default(),
            offloads: OffloadRecord::default(),
            commands: vec![command.clone()],
        })
        .collect();
    StoredResult {
        id: id.to_string(),
        kind: job.kind,
        test: job.test.clone(),
        host: job.host.clone(),
        kernel: netperf_data::net::sysinfo::SystemInfo::collect().release,
        title: format!("not measured: {reason}"),
        started: span.0.to_string(),
        ended: span.1.to_string(),
        status: if interrupted { "interrupted" } else { "failed" }.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command_line: command,
        tags: Vec::new(),
        factors: Vec::new(),
        runs,
        document: None,
    }
}

/// How a run went, by what it stored, and the first failed run's reason.
pub fn outcome(results: &[StoredResult]) -> (Outcome, Option<String>) {
    let runs = || results.iter().flat_map(|r| r.runs.iter());
    let reason = runs().find_map(|r| match &r.status {
        RunStatus::Failed { reason } => Some(reason.clone()),
        _ => None,
    });
    let interrupted = results.iter().any(|r| r.status == "interrupted")
        || runs().any(|r| r.status == RunStatus::Interrupted);
    let ok = runs().filter(|r| r.status.is_ok()).count();
    let outcome = match (interrupted, ok) {
        (true, _) => Outcome::Interrupted,
        (false, 0) => Outcome::Failed,
        (false, n) if n == runs().count() => Outcome::Ok,
        _ => Outcome::Partial,
    };
    (outcome, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_kind_has_one_importer() {
        for kind in [&EXPERIMENT, &MATRIX, &RAMP, &RESPONSIVENESS, &MESH] {
            assert_eq!(IMPORTERS.iter().filter(|(k, _)| *k == kind).count(), 1);
        }
    }

    #[test]
    fn an_absence_is_failed_runs_with_the_reason_never_a_zero() {
        let job = Job::of_simple(super::super::plan::Simple {
            hosts: vec!["h".into()],
            k8s: None,
            port: None,
            tests: vec!["TCP_STREAM".into(), "TCP_RR".into()],
            duration: 1,
        });
        let id = netperf_base::ids::new_uuid();
        let a = absence(&job, &id, ("t0", "t1"), "connection refused", false, vec![]);
        assert_eq!(a.runs.len(), 2);
        assert!(a.runs.iter().all(|r| r.metrics.is_empty()));
        assert_eq!(
            outcome(std::slice::from_ref(&a)),
            (Outcome::Failed, Some("connection refused".into()))
        );
        let cut = absence(&job, &id, ("t0", "t1"), "stopped", true, vec![]);
        assert_eq!(outcome(&[cut]).0, Outcome::Interrupted);
        let mut partial = a;
        partial.runs[0].status = RunStatus::Ok;
        assert_eq!(outcome(&[partial]).0, Outcome::Partial);
    }
}
