//! Reading results back: the filtered list (newest first), an id prefix
//! resolved like git's (unique or an error naming the candidates), and a
//! whole result with its runs.

use super::db::Db;
use super::error::DbError;
use super::model::{ExperimentRecord, RunRecord, RunStatus};
use super::record::{Kind, StoredResult};
use rusqlite::types::Value;
use rusqlite::{params, Row};
use serde::Serialize;

/// What `list` keeps; every set field must match.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub kind: Option<Kind>,
    /// A test name (any case), matching a result that ran it.
    pub test: Option<String>,
    /// A host (any case), matching a result that ran against it.
    pub host: Option<String>,
    /// A kernel release, or its beginning up to a '.' or '-' ("6.1"
    /// matches "6.1.0-18-amd64" but not "6.10.2").
    pub kernel: Option<String>,
    /// Tags a result must all carry.
    pub tags: Vec<String>,
    /// RFC 3339 UTC time (or its beginning, e.g. a date): results started
    /// at or after it.
    pub since: Option<String>,
    pub limit: Option<usize>,
}

/// One line of `list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultSummary {
    pub id: String,
    pub kind: Kind,
    pub test: String,
    pub host: String,
    pub kernel: String,
    pub title: String,
    pub started: String,
    pub status: String,
    pub runs: u64,
    pub failed_runs: u64,
    pub tags: Vec<String>,
}

/// `text` for a LIKE pattern with '\' as the escape character.
fn like_escaped(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

/// The WHERE clause and its parameters for `f`.
fn where_clause(f: &Filter) -> (String, Vec<Value>) {
    let mut terms = vec!["1".to_string()];
    let mut values: Vec<Value> = Vec::new();
    let param = |v: String, values: &mut Vec<Value>| {
        values.push(Value::Text(v));
        format!("?{}", values.len())
    };
    if let Some(kind) = f.kind {
        let p = param(kind.as_str().into(), &mut values);
        terms.push(format!("kind = {p}"));
    }
    // test and host may hold several names joined by ",".
    for (column, wanted) in [("test", &f.test), ("host", &f.host)] {
        if let Some(w) = wanted {
            let exact = param(w.clone(), &mut values);
            let inside = param(format!("%,{},%", like_escaped(w)), &mut values);
            terms.push(format!(
                "({column} = {exact} COLLATE NOCASE OR ',' || {column} || ',' LIKE {inside} ESCAPE '\\')"
            ));
        }
    }
    if let Some(k) = &f.kernel {
        let exact = param(k.clone(), &mut values);
        let dot = param(format!("{}.%", like_escaped(k)), &mut values);
        let dash = param(format!("{}-%", like_escaped(k)), &mut values);
        terms.push(format!(
            "(kernel = {exact} OR kernel LIKE {dot} ESCAPE '\\' OR kernel LIKE {dash} ESCAPE '\\')"
        ));
    }
    for tag in &f.tags {
        let p = param(tag.clone(), &mut values);
        terms.push(format!(
            "EXISTS (SELECT 1 FROM tags t WHERE t.result_id = results.id AND t.tag = {p})"
        ));
    }
    if let Some(since) = &f.since {
        let p = param(since.clone(), &mut values);
        terms.push(format!("started >= {p}"));
    }
    (terms.join(" AND "), values)
}

/// The results matching `f`, newest first, at most `f.limit`.
pub fn list(db: &Db, f: &Filter) -> Result<Vec<ResultSummary>, DbError> {
    let (clause, mut values) = where_clause(f);
    values.push(Value::Integer(
        f.limit.map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX)),
    ));
    let sql = format!(
        "SELECT id, kind, test, host, kernel, title, started, status,
            (SELECT count(*) FROM runs WHERE result_id = results.id),
            (SELECT count(*) FROM runs WHERE result_id = results.id AND status <> 'ok'),
            (SELECT json_group_array(tag) FROM (SELECT tag FROM tags
                WHERE result_id = results.id ORDER BY tag))
         FROM results WHERE {clause}
         ORDER BY started DESC, id LIMIT ?{}",
        values.len()
    );
    rows(db, &sql, rusqlite::params_from_iter(values), |row| {
        Ok(ResultSummary {
            id: row.get(0)?,
            kind: kind_of(row, 1)?,
            test: row.get(2)?,
            host: row.get(3)?,
            kernel: row.get(4)?,
            title: row.get(5)?,
            started: row.get(6)?,
            status: row.get(7)?,
            runs: row.get::<_, i64>(8)?.max(0) as u64,
            failed_runs: row.get::<_, i64>(9)?.max(0) as u64,
            tags: json_column(row, 10)?,
        })
    })
}

/// The full id of the one result whose id begins with `prefix` (any case).
pub fn resolve(db: &Db, prefix: &str) -> Result<String, DbError> {
    let wanted = prefix.trim().to_ascii_lowercase();
    if wanted.is_empty() || !wanted.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        return Err(DbError::Invalid(format!(
            "'{prefix}' is not a result id (a UUID or its beginning)"
        )));
    }
    let ids: Vec<String> = rows(
        db,
        "SELECT id FROM results WHERE lower(id) LIKE ?1 ESCAPE '\\' ORDER BY id LIMIT 6",
        params![format!("{}%", like_escaped(&wanted))],
        |r| r.get(0),
    )?;
    match ids.len() {
        0 => Err(DbError::UnknownId(prefix.to_string())),
        1 => Ok(ids.into_iter().next().unwrap_or_default()),
        _ => {
            let mut candidates = ids;
            if candidates.len() > 5 {
                candidates.truncate(5);
                candidates.push("...".into());
            }
            Err(DbError::Ambiguous {
                prefix: prefix.to_string(),
                candidates,
            })
        }
    }
}

/// The result `id` (a full id) with its runs and tags.
pub fn load(db: &Db, id: &str) -> Result<StoredResult, DbError> {
    let mut result = db
        .conn()
        .query_row(
            "SELECT id, kind, test, host, kernel, title, started, ended, status, tool_version,
                command_line, factors, document FROM results WHERE id = ?1",
            params![id],
            |row| {
                Ok(StoredResult {
                    id: row.get(0)?,
                    kind: kind_of(row, 1)?,
                    test: row.get(2)?,
                    host: row.get(3)?,
                    kernel: row.get(4)?,
                    title: row.get(5)?,
                    started: row.get(6)?,
                    ended: row.get(7)?,
                    status: row.get(8)?,
                    tool_version: row.get(9)?,
                    command_line: json_column(row, 10)?,
                    tags: Vec::new(),
                    factors: json_column(row, 11)?,
                    runs: Vec::new(),
                    document: row.get(12)?,
                })
            },
        )
        .map_err(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => DbError::UnknownId(id.to_string()),
            e => db.error(e),
        })?;
    result.runs = rows(
        db,
        "SELECT id, run_order, cell, replicate, started, ended, status, reason, metrics,
            facts, offloads, commands FROM runs WHERE result_id = ?1 ORDER BY rowid",
        params![id],
        run_of,
    )?;
    result.tags = rows(
        db,
        "SELECT tag FROM tags WHERE result_id = ?1 ORDER BY rowid",
        params![id],
        |r| r.get(0),
    )?;
    Ok(result)
}

/// Every row `sql` selects with `params`, each read by `read`.
fn rows<T>(
    db: &Db,
    sql: &str,
    params: impl rusqlite::Params,
    read: impl FnMut(&Row) -> rusqlite::Result<T>,
) -> Result<Vec<T>, DbError> {
    let mut stmt = db.conn().prepare(sql).map_err(|e| db.error(e))?;
    let rows = stmt.query_map(params, read).map_err(|e| db.error(e))?;
    rows.collect::<Result<Vec<_>, _>>().map_err(|e| db.error(e))
}

/// The experiment `id` exactly as it was recorded, to re-render its report.
pub fn load_experiment(db: &Db, id: &str) -> Result<ExperimentRecord, DbError> {
    let result = load(db, id)?;
    let document = match (result.kind, &result.document) {
        (Kind::Experiment, Some(d)) => d,
        _ => {
            return Err(DbError::Invalid(format!(
                "result {id} is a {} result, not an experiment",
                result.kind.as_str()
            )))
        }
    };
    serde_json::from_str(document).map_err(|e| DbError::Corrupt {
        path: db.path().to_path_buf(),
        detail: format!("the record of experiment {id} does not parse: {e}"),
    })
}

fn run_of(row: &Row) -> rusqlite::Result<RunRecord> {
    let status: String = row.get(6)?;
    let reason: Option<String> = row.get(7)?;
    let status = match status.as_str() {
        "ok" => RunStatus::Ok,
        "interrupted" => RunStatus::Interrupted,
        _ => RunStatus::Failed {
            reason: reason.unwrap_or_default(),
        },
    };
    Ok(RunRecord {
        id: row.get(0)?,
        order: row.get(1)?,
        cell: json_column(row, 2)?,
        replicate: row.get(3)?,
        started: row.get(4)?,
        ended: row.get(5)?,
        status,
        metrics: json_column(row, 8)?,
        facts: json_column(row, 9)?,
        offloads: json_column(row, 10)?,
        commands: json_column(row, 11)?,
    })
}

fn kind_of(row: &Row, index: usize) -> rusqlite::Result<Kind> {
    let text: String = row.get(index)?;
    Kind::parse(&text).ok_or_else(|| damaged(index, format!("unknown kind '{text}'")))
}

/// A JSON column decoded; a value that does not parse is a damaged file.
fn json_column<T: serde::de::DeserializeOwned>(row: &Row, index: usize) -> rusqlite::Result<T> {
    let text: String = row.get(index)?;
    serde_json::from_str(&text).map_err(|e| damaged(index, e.to_string()))
}

fn damaged(index: usize, detail: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        index,
        rusqlite::types::Type::Text,
        format!("a stored value is damaged: {detail}").into(),
    )
}
