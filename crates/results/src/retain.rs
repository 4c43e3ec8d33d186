//! Keeping a database bounded (`netagg watch --keep`, `--compact-after`):
//! the results carrying one tag deleted once older than a cutoff, compacted
//! to summaries once older than another, and the file vacuumed when much
//! was freed; spans of time as users write them ("90d", "15m").
//!
//! Compacting keeps what the history and the change points read — every
//! run's metrics, facts and offloads, and an experiment's environment —
//! and drops the bulk: a result's saved document (an experiment keeps its
//! record without the runs, which the `runs` table holds) and each run's
//! command lines.

use super::db::Db;
use super::error::DbError;
use rusqlite::params;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A span of time with its unit: "90s", "15m", "12h", "7d"; None for
/// anything else.
pub fn span_seconds(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, unit) = t.split_at_checked(t.len().checked_sub(1)?)?;
    let scale = match unit {
        "d" => 86_400,
        "h" => 3_600,
        "m" => 60,
        "s" => 1,
        _ => return None,
    };
    let n: u64 = digits.parse().ok()?;
    n.checked_mul(scale)
}

/// The RFC 3339 UTC time `seconds` before now, as results' `started`
/// columns write it (so text order is time order).
pub fn ago(seconds: u64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    netperf_base::timefmt::utc_timestamp(now.saturating_sub(Duration::from_secs(seconds)))
}

/// What to keep of the results tagged `tag`.
#[derive(Debug, Clone)]
pub struct Retention {
    pub tag: String,
    /// Results started before this (RFC 3339 UTC) are deleted.
    pub delete_before: Option<String>,
    /// Results started before this are compacted.
    pub compact_before: Option<String>,
}

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Retained {
    pub deleted: usize,
    pub compacted: usize,
    pub vacuumed: bool,
}

/// Free pages (of the file's) beyond which a pass vacuums: a quarter of
/// the file and at least this many pages (4 MiB of 4 KiB pages), so a
/// large database is not rewritten for a few freed runs.
const VACUUM_MIN_FREE_PAGES: i64 = 1024;

/// Deletes and compacts as `r` says, each in one transaction; vacuums when
/// a quarter of the file is free. A failed vacuum (it needs room for a
/// copy of the file) is not an error: the next pass tries again.
pub fn apply(db: &Db, r: &Retention) -> Result<Retained, DbError> {
    const TAGGED: &str = "id IN (SELECT result_id FROM tags WHERE tag = ?1)";
    let mut done = Retained::default();
    if let Some(cutoff) = &r.delete_before {
        // Runs and tags go with their result (ON DELETE CASCADE).
        done.deleted = db.write(|conn| {
            conn.execute(
                &format!("DELETE FROM results WHERE {TAGGED} AND started < ?2"),
                params![r.tag, cutoff],
            )
            .map_err(|e| db.error(e))
        })?;
    }
    if let Some(cutoff) = &r.compact_before {
        done.compacted = db.write(|conn| {
            let compacted = conn
                .execute(
                    &format!(
                        "UPDATE results SET document = CASE
                            WHEN kind = 'experiment' AND json_valid(document)
                                THEN json_set(document, '$.runs', json('[]'))
                            ELSE NULL END
                         WHERE {TAGGED} AND started < ?2 AND document IS NOT NULL
                           AND NOT (kind = 'experiment' AND json_valid(document)
                                    AND json_array_length(document, '$.runs') = 0)"
                    ),
                    params![r.tag, cutoff],
                )
                .map_err(|e| db.error(e))?;
            conn.execute(
                &format!(
                    "UPDATE runs SET commands = '[]' WHERE commands <> '[]' AND result_id IN
                        (SELECT id FROM results WHERE {TAGGED} AND started < ?2)"
                ),
                params![r.tag, cutoff],
            )
            .map_err(|e| db.error(e))?;
            Ok(compacted)
        })?;
    }
    if done.deleted + done.compacted > 0 {
        done.vacuumed = vacuum_if_worth_it(db)?;
    }
    Ok(done)
}

fn vacuum_if_worth_it(db: &Db) -> Result<bool, DbError> {
    let pragma = |name: &str| -> Result<i64, DbError> {
        db.conn()
            .query_row(&format!("PRAGMA {name}"), [], |row| row.get(0))
            .map_err(|e| db.error(e))
    };
    let (free, pages) = (pragma("freelist_count")?, pragma("page_count")?);
    if free < VACUUM_MIN_FREE_PAGES || free * 4 < pages {
        return Ok(false);
    }
    Ok(db.conn().execute_batch("VACUUM").is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{OffloadRecord, RunRecord, RunStatus};
    use crate::record::{Kind, StoredResult};

    #[test]
    fn spans_need_their_unit() {
        assert_eq!(span_seconds("90d"), Some(90 * 86_400));
        assert_eq!(span_seconds(" 15m"), Some(900));
        assert_eq!(span_seconds("2h"), Some(7_200));
        assert_eq!(span_seconds("30s"), Some(30));
        for bad in ["", "d", "900", "1w", "-1d", "1.5h", "99999999999999999999d"] {
            assert_eq!(span_seconds(bad), None, "{bad}");
        }
    }

    fn result(n: u64, started: &str, kind: Kind, document: Option<&str>) -> StoredResult {
        let id = format!("00000000-0000-4000-8000-{n:012}");
        StoredResult {
            id: id.clone(),
            kind,
            test: "TCP_RR".into(),
            host: "h".into(),
            kernel: "k".into(),
            title: String::new(),
            started: started.into(),
            ended: started.into(),
            status: "complete".into(),
            tool_version: "0".into(),
            command_line: Vec::new(),
            tags: vec!["watch=w".into()],
            factors: Vec::new(),
            runs: vec![RunRecord {
                id: format!("00000000-0000-4000-9000-{n:012}"),
                order: 0,
                cell: Vec::new(),
                replicate: 1,
                started: started.into(),
                ended: started.into(),
                status: RunStatus::Ok,
                metrics: [("THROUGHPUT".to_string(), 1.0)].into(),
                facts: [("TEST".to_string(), "TCP_RR".to_string())].into(),
                offloads: OffloadRecord::default(),
                commands: vec![vec!["netperf".into(), "-t".into(), "TCP_RR".into()]],
            }],
            document: document.map(str::to_string),
        }
    }

    #[test]
    fn old_results_go_older_ones_shrink_others_stay() {
        let dir = std::env::temp_dir().join(format!("retain-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let db = Db::open(&dir.join("r.db")).unwrap();
        let doc = r#"{"id":"x","environment":{"local":{"kernel":"6"}},"runs":[{"a":1}]}"#;
        for (n, started, kind) in [
            (1, "2020-01-01T00:00:00Z", Kind::Experiment),
            (2, "2024-01-01T00:00:00Z", Kind::Experiment),
            (3, "2024-01-01T00:00:00Z", Kind::Netagg),
            (4, "2030-01-01T00:00:00Z", Kind::Experiment),
        ] {
            crate::store_result(&db, &result(n, started, kind, Some(doc))).unwrap();
        }
        let mut other = result(5, "2020-01-01T00:00:00Z", Kind::Netperf, None);
        other.tags = vec!["ci".into()];
        crate::store_result(&db, &other).unwrap();
        let r = Retention {
            tag: "watch=w".into(),
            delete_before: Some("2021-01-01T00:00:00Z".into()),
            compact_before: Some("2025-01-01T00:00:00Z".into()),
        };
        let done = apply(&db, &r).unwrap();
        assert_eq!((done.deleted, done.compacted), (1, 2));
        // A second pass finds nothing more to do.
        let again = apply(&db, &r).unwrap();
        assert_eq!((again.deleted, again.compacted), (0, 0));
        let load = |n: u64| crate::query::load(&db, &format!("00000000-0000-4000-8000-{n:012}"));
        assert!(matches!(load(1), Err(DbError::UnknownId(_))));
        let kept = load(2).unwrap();
        let document: serde_json::Value =
            serde_json::from_str(kept.document.as_deref().unwrap()).unwrap();
        assert_eq!(document["runs"], serde_json::json!([]));
        assert_eq!(document["environment"]["local"]["kernel"], "6");
        assert_eq!(kept.runs[0].metrics["THROUGHPUT"], 1.0);
        assert_eq!(kept.runs[0].facts["TEST"], "TCP_RR");
        assert!(kept.runs[0].commands.is_empty());
        assert_eq!(load(3).unwrap().document, None);
        assert_eq!(load(4).unwrap().document.as_deref(), Some(doc));
        // Another tag's result is not this retention's.
        assert!(load(5).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
