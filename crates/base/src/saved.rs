//! The one saved-run format. Every JSON document a run writes so that its
//! page can be drawn again opens with "format" (which kind of run wrote
//! it) and "version" (the layout of that kind); `identify` reads
//! them back and refuses anything else with the reason. It also holds what
//! every reader of a saved run shares: the file read bounded, the checked
//! members (a hostile number must not reach a chart's arithmetic) and the
//! files written whole (temporary name, then rename).

use serde_json::Value;
use std::io;
use std::path::{Path, PathBuf};

/// One kind of saved run.
#[derive(Debug, PartialEq, Eq)]
pub struct SavedKind {
    /// The value of "format".
    pub format: &'static str,
    /// The newest "version" this build reads and writes.
    pub version: u64,
    /// What wrote it, for messages.
    pub written_by: &'static str,
}

/// A kind still at its first layout.
const fn first(format: &'static str, written_by: &'static str) -> SavedKind {
    SavedKind {
        format,
        version: 1,
        written_by,
    }
}

pub const SERIES: SavedKind = first("netperf-series", "netperf -- --report FILE.html");
pub const RAMP: SavedKind = first("netagg", "a netagg ramp");
pub const POST: SavedKind = first("netagg-post", "netagg post");
pub const EXPERIMENT: SavedKind = first("netagg-experiment", "netagg experiment");
pub const MATRIX: SavedKind = first("netagg-matrix", "netagg matrix");
pub const RESPONSIVENESS: SavedKind = first("netagg-responsiveness", "netagg responsiveness");
pub const MESH: SavedKind = first("netagg-mesh", "netagg mesh");

/// Every kind, in the order messages name them.
pub const KINDS: [&SavedKind; 7] = [
    &SERIES,
    &RAMP,
    &POST,
    &EXPERIMENT,
    &MATRIX,
    &RESPONSIVENESS,
    &MESH,
];

/// The member naming a kind's layout.
pub const VERSION_KEY: &str = "version";
/// The largest saved run read (far beyond a real one; a bound against a
/// hostile file).
pub const MAX_BYTES: usize = 256 << 20;
/// Most items a list in a saved run may hold.
pub const MAX_ITEMS: usize = 10_000_000;
/// Latest time into a run a saved run may name (115 days, far beyond a
/// real one): the charts turn times into pixels, and a hostile time
/// overflows that arithmetic.
pub const MAX_SECONDS: f64 = 1e7;

impl SavedKind {
    /// The two members that open a document of this kind.
    pub fn stamp(&self) -> [(&'static str, Value); 2] {
        [
            ("format", Value::from(self.format)),
            (VERSION_KEY, Value::from(self.version)),
        ]
    }

    /// `doc` (a JSON object) with the stamp first and its own members after.
    pub fn stamped(&self, doc: Value) -> Value {
        let mut out = serde_json::Map::new();
        for (key, value) in self.stamp() {
            out.insert(key.into(), value);
        }
        if let Value::Object(members) = doc {
            for (key, value) in members {
                out.entry(key).or_insert(value);
            }
        }
        Value::Object(out)
    }
}

/// The kind of a saved run, from its "format" and "version".
/// Experiment records written before the stamp (or printed by `netagg
/// results show --json`, the record under "document") are known by their
/// "record_version".
pub fn identify(doc: &Value) -> Result<&'static SavedKind, String> {
    let Some(members) = doc.as_object() else {
        return Err("not a saved run: the document is not a JSON object".into());
    };
    let kind = match members.get("format") {
        Some(Value::String(format)) => KINDS
            .into_iter()
            .find(|k| k.format == format)
            .ok_or_else(|| format!("\"format\" is {format:?}, not a saved run ({})", known()))?,
        Some(_) => return Err("\"format\" is not text".into()),
        None => match experiment_record(doc) {
            Some(record) => match has_targets(record) {
                true => &MATRIX,
                false => &EXPERIMENT,
            },
            None => return Err(format!("no \"format\": not a saved run ({})", known())),
        },
    };
    let version = match members.get(VERSION_KEY) {
        // Written before the member existed: the first layout.
        None => 1,
        Some(v) => v
            .as_u64()
            .ok_or_else(|| format!("\"{VERSION_KEY}\" is not a whole number"))?,
    };
    match version > kind.version {
        true => Err(format!(
            "{} {VERSION_KEY} {version} was written by a newer netperf-ng (this one reads up to {})",
            kind.format, kind.version
        )),
        false => Ok(kind),
    }
}

/// The experiment record a document holds: itself, or its "document".
pub fn experiment_record(doc: &Value) -> Option<&Value> {
    let record = |v: &Value| v.get("record_version").is_some();
    match record(doc) {
        true => Some(doc),
        false => doc.get("document").filter(|d| record(d)),
    }
}

fn has_targets(record: &Value) -> bool {
    record
        .get("targets")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty())
}

fn known() -> String {
    let names: Vec<String> = KINDS
        .iter()
        .map(|k| format!("{} from {}", k.format, k.written_by))
        .collect();
    format!("netperf-ng draws {}", names.join(", "))
}

/// A saved run's file as JSON, read bounded; the error names the file.
pub fn read_document(path: &Path) -> Result<Value, String> {
    let bytes = crate::input::read_text(path, MAX_BYTES)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: not JSON: {e}", path.display()))
}

/// Writes each (name, body) into `dir` (created if need be), each through
/// a temporary name and a rename so a reader never sees half a file.
/// Returns the paths written, in order.
pub fn write_files(dir: &Path, files: &[(String, String)]) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
    let mut written = Vec::with_capacity(files.len());
    for (name, body) in files {
        let path = dir.join(name);
        let temporary = dir.join(format!(".{name}.tmp"));
        let result =
            std::fs::write(&temporary, body).and_then(|()| std::fs::rename(&temporary, &path));
        if let Err(e) = result {
            let _ = std::fs::remove_file(&temporary);
            return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display())));
        }
        written.push(path);
    }
    Ok(written)
}

/// A member that is a number.
pub fn number(v: &Value, key: &str) -> Result<f64, String> {
    v.get(key)
        .and_then(Value::as_f64)
        .ok_or_else(|| format!("\"{key}\" is missing or not a number"))
}

/// A member that is text.
pub fn text(v: &Value, key: &str) -> Result<String, String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("\"{key}\" is missing or not text"))
}

/// A member that is a list of at most MAX_ITEMS.
pub fn list<'a>(v: &'a Value, key: &str) -> Result<&'a Vec<Value>, String> {
    let items = v
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("\"{key}\" is missing or not a list"))?;
    match items.len() > MAX_ITEMS {
        true => Err(format!("\"{key}\" holds {} items, too many", items.len())),
        false => Ok(items),
    }
}

/// A member that is a list of numbers.
pub fn numbers(v: &Value, key: &str) -> Result<Vec<f64>, String> {
    list(v, key)?
        .iter()
        .map(|x| {
            x.as_f64()
                .ok_or_else(|| format!("\"{key}\" holds a non-number"))
        })
        .collect()
}

/// Seconds into the run: from its start to MAX_SECONDS.
pub fn seconds(v: &Value, key: &str) -> Result<f64, String> {
    let t = number(v, key)?;
    match (0.0..=MAX_SECONDS).contains(&t) {
        true => Ok(t),
        false => Err(format!("\"{key}\" is not a time in the run: {t}")),
    }
}

/// A stretch of the run: [from, to] in seconds into it, in order.
pub fn span(v: &Value, key: &str) -> Result<(f64, f64), String> {
    match numbers(v, key)?.as_slice() {
        &[from, to] if 0.0 <= from && from <= to && to <= MAX_SECONDS => Ok((from, to)),
        _ => Err(format!("\"{key}\" is not a stretch of the run")),
    }
}

/// A whole count up to MAX_ITEMS.
pub fn count(v: &Value, key: &str) -> Result<usize, String> {
    let n = number(v, key)?;
    match n >= 0.0 && n.fract() == 0.0 && n <= MAX_ITEMS as f64 {
        true => Ok(n as usize),
        false => Err(format!("\"{key}\" is not a count: {n}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_is_known_by_its_stamp() {
        for kind in KINDS {
            let doc = kind.stamped(json!({"x": 1}));
            assert_eq!(identify(&doc), Ok(kind));
            let first: Vec<&String> = doc.as_object().unwrap().keys().take(2).collect();
            assert_eq!(first, ["format", VERSION_KEY]);
        }
    }

    #[test]
    fn old_and_foreign_documents_are_told_apart() {
        let record = json!({"record_version": 3, "targets": []});
        assert_eq!(identify(&record), Ok(&EXPERIMENT));
        let matrix = json!({"document": {"record_version": 3, "targets": [{}]}});
        assert_eq!(identify(&matrix), Ok(&MATRIX));
        assert_eq!(identify(&json!({"format": "netagg"})), Ok(&RAMP));
        for (doc, why) in [
            (json!([1, 2]), "not a JSON object"),
            (json!({"format": "flent"}), "not a saved run"),
            (json!({"format": 7}), "not text"),
            (json!({"units": "x"}), "no \"format\""),
            (
                json!({"format": "netagg", "version": 99}),
                "newer netperf-ng",
            ),
            (
                json!({"format": "netagg", "version": -1}),
                "not a whole number",
            ),
        ] {
            let e = identify(&doc).unwrap_err();
            assert!(e.contains(why), "{doc}: {e}");
        }
    }

    #[test]
    fn checked_members_refuse_what_no_run_makes() {
        let v = json!({"t": 1e300, "s": [3, 2], "n": 1.5, "ok": [0, 4]});
        assert!(seconds(&v, "t").is_err());
        assert!(span(&v, "s").is_err());
        assert!(count(&v, "n").is_err());
        assert_eq!(span(&v, "ok"), Ok((0.0, 4.0)));
        assert!(text(&v, "t").unwrap_err().contains("not text"));
    }

    #[test]
    fn files_are_written_whole() {
        let dir = std::env::temp_dir().join(format!("saved-test-{}", std::process::id()));
        let files = [("a.txt".to_string(), "A".to_string())];
        let written = write_files(&dir.join("sub"), &files).unwrap();
        assert_eq!(std::fs::read_to_string(&written[0]).unwrap(), "A");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
