//! Writing results: one result with its runs and tags in one transaction,
//! so a reader sees all of it or none, and a failure leaves nothing behind.

use super::db::Db;
use super::error::DbError;
use super::model::{ExperimentRecord, RunStatus};
use super::record::StoredResult;
use rusqlite::{params, Connection};

/// Stores a finished (or interrupted) experiment with every run, its full
/// record (so its report can be re-rendered) and its tags. Returns its id.
pub fn store_experiment(db: &Db, rec: &ExperimentRecord) -> Result<String, DbError> {
    let stored = StoredResult::of_experiment(rec)
        .map_err(|e| DbError::Invalid(format!("experiment {}: {e}", rec.id)))?;
    store_result(db, &stored)
}

/// Stores any result. Ids are checked to be UUIDs; a second result with
/// the same id is refused ([`DbError::Duplicate`]).
pub fn store_result(db: &Db, result: &StoredResult) -> Result<String, DbError> {
    check_ids(result)?;
    db.write(|conn| insert(db, conn, result))?;
    Ok(result.id.clone())
}

fn check_ids(result: &StoredResult) -> Result<(), DbError> {
    let bad = |what: &str, id: &str| {
        DbError::Invalid(format!(
            "{what} id '{id}' is not a UUID (like netperf's -u 6ba7b810-9dad-11d1-80b4-00c04fd430c8)"
        ))
    };
    if uuid::Uuid::parse_str(&result.id).is_err() {
        return Err(bad("result", &result.id));
    }
    for run in &result.runs {
        if uuid::Uuid::parse_str(&run.id).is_err() {
            return Err(bad("run", &run.id));
        }
    }
    Ok(())
}

fn json<T: serde::Serialize>(value: &T) -> Result<String, DbError> {
    serde_json::to_string(value).map_err(|e| DbError::Invalid(e.to_string()))
}

fn insert(db: &Db, conn: &Connection, r: &StoredResult) -> Result<(), DbError> {
    let inserted = conn.execute(
        "INSERT INTO results (id, kind, test, host, kernel, title, started, ended, status,
             tool_version, command_line, factors, document, stored)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
         ON CONFLICT (id) DO NOTHING",
        params![
            r.id,
            r.kind.as_str(),
            r.test,
            r.host,
            r.kernel,
            r.title,
            r.started,
            r.ended,
            r.status,
            r.tool_version,
            json(&r.command_line)?,
            json(&r.factors)?,
            r.document,
            netperf_base::timefmt::now_utc(),
        ],
    );
    if inserted.map_err(|e| db.error(e))? == 0 {
        return Err(DbError::Duplicate(r.id.clone()));
    }
    let mut run_insert = conn
        .prepare(
            "INSERT INTO runs (id, result_id, run_order, cell, replicate, started, ended, status,
                 reason, metrics, facts, offloads, commands)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        )
        .map_err(|e| db.error(e))?;
    // Runs are read back in insertion (rowid) order, which is the order
    // of `r.runs`: the order they ran.
    for run in &r.runs {
        let (status, reason) = match &run.status {
            RunStatus::Ok => ("ok", None),
            RunStatus::Failed { reason } => ("failed", Some(reason.as_str())),
            RunStatus::Interrupted => ("interrupted", None),
        };
        // Non-finite values cannot be stored in JSON; they are no measurement.
        let metrics: std::collections::BTreeMap<_, _> =
            run.metrics.iter().filter(|(_, v)| v.is_finite()).collect();
        run_insert
            .execute(params![
                run.id,
                r.id,
                i64::from(run.order),
                json(&run.cell)?,
                i64::from(run.replicate),
                run.started,
                run.ended,
                status,
                reason,
                json(&metrics)?,
                json(&run.facts)?,
                json(&run.offloads)?,
                json(&run.commands)?,
            ])
            .map_err(|e| match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::ConstraintViolation) => {
                    DbError::Duplicate(format!("{} (a run)", run.id))
                }
                _ => db.error(e),
            })?;
    }
    let mut tag_insert = conn
        .prepare("INSERT OR IGNORE INTO tags (result_id, tag) VALUES (?1, ?2)")
        .map_err(|e| db.error(e))?;
    for tag in &r.tags {
        tag_insert
            .execute(params![r.id, tag])
            .map_err(|e| db.error(e))?;
    }
    Ok(())
}
