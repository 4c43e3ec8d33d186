//! netperf's `-- --store[=DBPATH]`: the database is opened before the test
//! (a bad path or file stops netperf at once), and after the output is
//! printed the values the output reported are stored as one result with
//! one run: numbers as metrics, texts as facts, by selector name.

use super::db::{self, Db};
use super::model::{OffloadRecord, RunRecord, RunStatus};
use super::record::{Kind, StoredResult};
use netperf_client::cli::config::Config;
use netperf_client::report::omni::table::{by_name, Selector};
use netperf_client::report::omni::value::{render, Fmt, Value};
use netperf_client::report::omni::{OmniRecord, Selection};
use std::collections::BTreeMap;
use std::path::PathBuf;

pub use netperf_client::cli::extensions::EXIT_STORE_FAILED;

/// The confidence facts of a `-i` run, stored beside the figures.
const CONFIDENCE_SELECTORS: &[&str] = &[
    "CONFIDENCE_LEVEL",
    "CONFIDENCE_INTERVAL",
    "CONFIDENCE_ITERATION",
    "THROUGHPUT_CONFID",
    "LOCAL_CPU_CONFID",
    "REMOTE_CPU_CONFID",
];

/// An open database waiting for the test to finish.
pub struct PendingStore {
    db: Db,
    tags: Vec<String>,
    started: String,
}

impl PendingStore {
    /// Opens the database `--store` names; `Ok(None)` without `--store`.
    /// On failure prints one line and gives the exit status.
    pub fn open(config: &Config) -> Result<Option<PendingStore>, i32> {
        let Some(path) = &config.test.store else {
            return Ok(None);
        };
        let opened = db::resolve(path.as_deref().map(std::path::Path::new))
            .and_then(|p: PathBuf| Db::open(&p));
        match opened {
            Ok(db) => Ok(Some(PendingStore {
                db,
                tags: config.test.store_tags.clone(),
                started: netperf_base::timefmt::now_utc(),
            })),
            Err(e) => {
                eprintln!("netperf: --store: {e}");
                Err(EXIT_STORE_FAILED)
            }
        }
    }

    /// Stores the finished test; returns the exit status (0, or
    /// [`EXIT_STORE_FAILED`] after one line on stderr).
    pub fn finish(self, config: &Config, finished: Option<&(OmniRecord, Selection)>) -> i32 {
        let Some((record, selection)) = finished else {
            eprintln!("netperf: --store: the test produced no result to store");
            return EXIT_STORE_FAILED;
        };
        let result = result_of(config, record, selection, &self.started, &self.tags);
        self.store(&result)
    }

    /// Stores a test that reports plain figures (the Unix-domain tests):
    /// `figures` by selector name, the throughput in `unit`.
    pub fn finish_figures(self, config: &Config, figures: &[(&str, f64)], unit: &str) -> i32 {
        let metrics: BTreeMap<String, f64> = figures
            .iter()
            .filter(|(_, v)| v.is_finite() && *v != -1.0)
            .map(|(k, v)| (k.to_string(), *v))
            .collect();
        let mut facts = BTreeMap::from([("THROUGHPUT_UNITS".to_string(), unit.to_string())]);
        if metrics.contains_key("LOCAL_SD") || metrics.contains_key("REMOTE_SD") {
            // netperf's classic blocks charge CPU per KB, transactions too.
            facts.insert("SD_UNITS".into(), "usec/KB".into());
        }
        let id = config
            .test
            .uuid
            .clone()
            .unwrap_or_else(netperf_base::ids::new_uuid);
        let result = stored(config, &id, metrics, facts, &self.started, &self.tags);
        self.store(&result)
    }

    fn store(self, result: &StoredResult) -> i32 {
        match super::store::store_result(&self.db, result) {
            Ok(_) => 0,
            Err(e) => {
                eprintln!("netperf: --store: {e}");
                EXIT_STORE_FAILED
            }
        }
    }
}

/// The stored form of a finished netperf test.
pub fn result_of(
    config: &Config,
    record: &OmniRecord,
    selection: &Selection,
    started: &str,
    tags: &[String],
) -> StoredResult {
    let g = &config.global;
    let mut selectors: Vec<&Selector> = selection.blocks.iter().flatten().copied().collect();
    if g.iterations_max > 1 {
        selectors.extend(CONFIDENCE_SELECTORS.iter().filter_map(|n| by_name(n)));
    }
    let (metrics, mut facts) = values_of(&selectors, record);
    // A figure is only defensible with its unit.
    for (metric, unit) in [
        ("THROUGHPUT", "THROUGHPUT_UNITS"),
        ("LOCAL_SD", "SD_UNITS"),
        ("REMOTE_SD", "SD_UNITS"),
    ] {
        if metrics.contains_key(metric) && !facts.contains_key(unit) {
            let (_, more) = values_of(&by_name(unit).into_iter().collect::<Vec<_>>(), record);
            facts.extend(more);
        }
    }
    stored(config, &record.uuid, metrics, facts, started, tags)
}

/// One netperf test as a stored result with one run in the empty cell.
fn stored(
    config: &Config,
    id: &str,
    metrics: BTreeMap<String, f64>,
    facts: BTreeMap<String, String>,
    started: &str,
    tags: &[String],
) -> StoredResult {
    let g = &config.global;
    let kernel = netperf_data::net::sysinfo::SystemInfo::collect().release;
    let ended = netperf_base::timefmt::now_utc();
    let command: Vec<String> = std::iter::once("netperf".to_string())
        .chain(g.args.iter().cloned())
        .collect();
    StoredResult {
        id: id.to_string(),
        kind: Kind::Netperf,
        test: g.test_name.clone(),
        host: g.host.clone(),
        kernel,
        title: format!("{} to {}", g.test_name, g.host),
        started: started.to_string(),
        ended: ended.clone(),
        status: "complete".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command_line: command.clone(),
        tags: tags.to_vec(),
        factors: Vec::new(),
        runs: vec![RunRecord {
            id: id.to_string(),
            order: 0,
            cell: Vec::new(),
            replicate: 1,
            started: started.to_string(),
            ended,
            status: RunStatus::Ok,
            metrics,
            facts,
            offloads: OffloadRecord::default(),
            commands: vec![command],
        }],
        document: None,
    }
}

/// The selectors' values as netperf showed them: numbers printed as
/// numbers are metrics, everything else (texts, hexadecimal ids, letters)
/// is a fact in its printed form. netperf's -1 ("not measured", "system
/// default") and missing values are not stored: they are no measurement.
pub fn values_of(
    selectors: &[&Selector],
    record: &OmniRecord,
) -> (BTreeMap<String, f64>, BTreeMap<String, String>) {
    let mut metrics = BTreeMap::new();
    let mut facts = BTreeMap::new();
    for s in selectors {
        if s.name == "OUTPUT_NONE" {
            continue;
        }
        let value = s.value(record);
        let number = match (&value, s.fmt) {
            (Value::Int(i), Fmt::Int | Fmt::Fixed(_)) => Some(*i as f64),
            (Value::Real(r), Fmt::Int | Fmt::Fixed(_)) => Some(*r),
            _ => None,
        };
        match number {
            Some(n) if n == -1.0 || !n.is_finite() => {}
            Some(n) => {
                metrics.insert(s.name.to_string(), n);
            }
            None => {
                if let Some(text) = render(&value, s.fmt) {
                    let text = text.trim_matches('"').to_string();
                    if !text.is_empty() {
                        facts.insert(s.name.to_string(), text);
                    }
                }
            }
        }
    }
    (metrics, facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_metrics_texts_are_facts_and_minus_one_is_dropped() {
        let record = OmniRecord {
            throughput: 941.5,
            elapsed: 10.0,
            ..OmniRecord::default()
        };
        let names = [
            "THROUGHPUT",
            "THROUGHPUT_UNITS",
            "ELAPSED_TIME",
            "LOCAL_CPU_UTIL",
            "PROTOCOL",
            "OUTPUT_NONE",
        ];
        let selectors: Vec<&Selector> = names.iter().filter_map(|n| by_name(n)).collect();
        let (metrics, facts) = values_of(&selectors, &record);
        assert_eq!(metrics.get("THROUGHPUT"), Some(&941.5));
        assert_eq!(metrics.get("ELAPSED_TIME"), Some(&10.0));
        assert!(
            !metrics.contains_key("LOCAL_CPU_UTIL"),
            "-1 is not measured"
        );
        assert_eq!(facts.get("THROUGHPUT_UNITS").unwrap(), "10^6bits/s");
        assert_eq!(facts.get("PROTOCOL").unwrap(), "TCP");
        assert!(!facts.contains_key("OUTPUT_NONE"));
    }
}
