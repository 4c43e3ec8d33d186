//! The `netagg results` commands (list, show, compare, export) and
//! netagg's own `--store` / `--tag`, as clap definitions the netagg binary
//! embeds, with their handlers. Exit status: 0 done (for compare: no metric
//! significantly worse), 1 compare found a regression, 2 an error.

use super::compare::{compare, CompareOptions};
use super::db::{self, Db};
use super::error::DbError;
use super::export::{export, ExportOptions, Format};
use super::model::ExperimentRecord;
use super::netagg::NetaggRun;
use super::query::{self, Filter};
use super::record::{Kind, StoredResult};
use super::render;
use super::store::store_result;
use crate::stats::{Bootstrap, Statistic};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const EXIT_ERROR: u8 = DbError::EXIT_STATUS;

/// `netagg results ...`
#[derive(clap::Args, Debug)]
#[command(
    about = "List, show, compare and export stored results (netperf -- --store, netagg --store, experiments)",
    after_help = "The database is $NETPERF_NG_DB, else $XDG_DATA_HOME/netperf-ng/results.db, else\n\
~/.local/share/netperf-ng/results.db, unless --db says otherwise.\n\
compare exits 0 when no metric is significantly worse, 1 when one is (a regression), 2 on error."
)]
pub struct ResultsArgs {
    /// the results database file
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,
    #[command(subcommand)]
    pub command: ResultsCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum ResultsCommand {
    /// List stored results, newest first
    List {
        /// only this kind
        #[arg(long, value_enum)]
        kind: Option<Kind>,
        /// only results that ran this netperf test (any case)
        #[arg(long)]
        test: Option<String>,
        /// only results against this host
        #[arg(long)]
        host: Option<String>,
        /// only this kernel release, or releases beginning with it and a '.' or '-'
        #[arg(long)]
        kernel: Option<String>,
        /// only results with this tag (repeatable: all of them)
        #[arg(long = "tag", value_name = "TAG")]
        tags: Vec<String>,
        /// only results started at or after DATE: 2026-11-22, 2026-11-22T08:00Z, or 7d, 12h, 30m ago
        #[arg(long, value_name = "DATE")]
        since: Option<String>,
        /// at most N results
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// JSON instead of a table
        #[arg(long)]
        json: bool,
    },
    /// Show one result: its facts and runs
    Show {
        /// the result's id or its beginning
        id: String,
        /// JSON (the stored result, an experiment's whole record included)
        #[arg(long)]
        json: bool,
    },
    /// Compare B against the baseline A: per cell and metric the ratio B/A with its bootstrap interval and a verdict
    Compare {
        /// the baseline result's id (or its beginning)
        a: String,
        /// the result compared with it
        b: String,
        /// metrics to compare (repeatable or a comma list; "all" for every shared one); default: the key metrics
        #[arg(long = "metric", value_name = "M", value_delimiter = ',')]
        metrics: Vec<String>,
        /// the statistic whose ratio is taken
        #[arg(long, value_enum, default_value = "mean")]
        statistic: StatisticArg,
        /// bootstrap seed (the same seed gives the same intervals)
        #[arg(long, default_value_t = Bootstrap::default().seed)]
        seed: u64,
        /// bootstrap resamples
        #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(100..=1_000_000))]
        resamples: u32,
        /// a significant slow-down within PCT percent of no change is not a regression
        #[arg(long, value_name = "PCT", default_value_t = 0.0)]
        tolerance: f64,
        /// JSON instead of a table
        #[arg(long)]
        json: bool,
    },
    /// Change points in the history of each series (one metric of one test between the same ends), with what else changed at them
    Changes(ChangesArgs),
    /// Store an experiment's saved record (its JSON) in the database
    Import {
        /// the experiment record, as the experiment wrote it in JSON
        file: PathBuf,
    },
    /// Export one result for Prometheus, OpenSearch/Elasticsearch or perfdash
    Export {
        /// the result's id or its beginning
        id: String,
        #[arg(long, value_enum)]
        format: Format,
        /// the index named in the OpenSearch action lines
        #[arg(long, default_value = "netperf-ng")]
        index: String,
    },
}

/// `netagg results changes`
#[derive(clap::Args, Debug)]
pub struct ChangesArgs {
    /// only results started at or after DATE: 2026-11-22, 2026-11-22T08:00Z, or 7d, 12h, 30m ago
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// only series whose name contains TEXT (any case; repeatable: any of them)
    #[arg(long = "series", value_name = "TEXT")]
    pub series: Vec<String>,
    /// metrics (repeatable or a comma list; "all" for every one); default: the key metrics
    #[arg(long = "metric", value_name = "M", value_delimiter = ',')]
    pub metrics: Vec<String>,
    /// only results of this test (any case)
    #[arg(long)]
    pub test: Option<String>,
    /// only results against this host
    #[arg(long)]
    pub host: Option<String>,
    /// only results with this tag (repeatable: all of them)
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// read the series from FILE instead: a header line, then time,series,value rows (more columns are context)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["since", "test", "host", "tags"])]
    pub csv: Option<PathBuf>,
    /// the false-positive level: a series with no change shows one with at most this probability
    #[arg(long, default_value_t = 0.01)]
    pub alpha: f64,
    /// permutations per test (at least 1/alpha − 1)
    #[arg(long, default_value_t = 199, value_parser = clap::value_parser!(u32).range(19..=100_000))]
    pub permutations: u32,
    /// do not report changes smaller than PCT percent
    #[arg(long, value_name = "PCT", default_value_t = 0.0)]
    pub min_change: f64,
    /// seed of the permutations and the bootstrap (the same seed gives the same answer)
    #[arg(long, default_value_t = Bootstrap::default().seed)]
    pub seed: u64,
    /// a JSON list of the change points instead of a report
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum StatisticArg {
    Mean,
    Median,
}

/// Runs a `netagg results` command; prints its output and gives the exit status.
pub fn run(args: &ResultsArgs) -> ExitCode {
    match execute(args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("netagg results: {e}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn open(args: &ResultsArgs) -> Result<Db, DbError> {
    Db::open_read_only(&db::resolve(args.db.as_deref())?)
}

fn json_text<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

/// `value` as JSON with --json, else as `text` renders it.
fn json_or<T: serde::Serialize>(json: bool, value: &T, text: impl FnOnce(&T) -> String) -> String {
    match json {
        true => json_text(value),
        false => text(value),
    }
}

fn execute(args: &ResultsArgs) -> Result<u8, DbError> {
    match &args.command {
        ResultsCommand::List {
            kind,
            test,
            host,
            kernel,
            tags,
            since,
            limit,
            json,
        } => {
            let filter = Filter {
                kind: *kind,
                test: test.clone(),
                host: host.clone(),
                kernel: kernel.clone(),
                tags: tags.clone(),
                since: since.as_deref().map(since_text).transpose()?,
                limit: Some(limit.saturating_add(1)),
            };
            let mut results = query::list(&open(args)?, &filter)?;
            let more = results.len() > *limit;
            results.truncate(*limit);
            print!("{}", json_or(*json, &results, |r| render::list(r)));
            if more {
                eprintln!("netagg results: more than {limit} results match; --limit N shows more");
            }
            Ok(0)
        }
        ResultsCommand::Show { id, json } => {
            let db = open(args)?;
            let result = query::load(&db, &query::resolve(&db, id)?)?;
            if *json {
                let mut value = serde_json::to_value(&result).unwrap_or_default();
                // The document is JSON itself: show it as such.
                if let Some(doc) = result.document.as_deref() {
                    if let Ok(parsed) = serde_json::from_str::<serde_json::Value>(doc) {
                        value["document"] = parsed;
                    }
                }
                print!("{}", json_text(&value));
            } else {
                print!("{}", render::show(&result));
            }
            Ok(0)
        }
        ResultsCommand::Compare {
            a,
            b,
            metrics,
            statistic,
            seed,
            resamples,
            tolerance,
            json,
        } => {
            if !(0.0..100.0).contains(tolerance) {
                return Err(DbError::Invalid(format!(
                    "--tolerance {tolerance}: must be at least 0 and below 100 (percent)"
                )));
            }
            let db = open(args)?;
            let ra = query::load(&db, &query::resolve(&db, a)?)?;
            let rb = query::load(&db, &query::resolve(&db, b)?)?;
            let opts = CompareOptions {
                metrics: metrics.clone(),
                statistic: match statistic {
                    StatisticArg::Mean => Statistic::Mean,
                    StatisticArg::Median => Statistic::Median,
                },
                bootstrap: Bootstrap {
                    resamples: *resamples as usize,
                    ..Bootstrap::with_seed(*seed)
                },
                tolerance: tolerance / 100.0,
            };
            let c = compare(&ra, &rb, &opts).map_err(|e| DbError::Invalid(e.to_string()))?;
            print!("{}", json_or(*json, &c, render::compare));
            Ok(c.exit_status())
        }
        ResultsCommand::Changes(c) => changes(args, c),
        ResultsCommand::Import { file } => {
            let rec = read_record(file)?;
            let db = Db::open(&db::resolve(args.db.as_deref())?)?;
            println!("{}", super::store::store_experiment(&db, &rec)?);
            Ok(0)
        }
        ResultsCommand::Export { id, format, index } => {
            let db = open(args)?;
            let result = query::load(&db, &query::resolve(&db, id)?)?;
            let opts = ExportOptions {
                index: index.clone(),
            };
            print!("{}", export(&result, *format, &opts));
            Ok(0)
        }
    }
}

/// `netagg results changes`: always exit 0 when it could search.
fn changes(args: &ResultsArgs, c: &ChangesArgs) -> Result<u8, DbError> {
    use super::history::{self, Selection};
    let opts = crate::stats::ChangeOptions {
        alpha: c.alpha,
        permutations: c.permutations as usize,
        min_change: c.min_change / 100.0,
        seed: c.seed,
        ..Default::default()
    };
    let series = match &c.csv {
        Some(file) => {
            let mut all = history::from_csv(file)?;
            all.retain(|s| history::picked(&s.name, &c.series));
            all
        }
        None => {
            let selection = Selection {
                filter: Filter {
                    test: c.test.clone(),
                    host: c.host.clone(),
                    tags: c.tags.clone(),
                    since: c.since.as_deref().map(since_text).transpose()?,
                    ..Filter::default()
                },
                series: c.series.clone(),
                metrics: c.metrics.clone(),
            };
            history::from_db(&open(args)?, &selection)?
        }
    };
    let report =
        super::changes::find(&series, &opts).map_err(|e| DbError::Invalid(e.to_string()))?;
    match c.json {
        true => print!("{}", json_text(&report.changes)),
        false => print!("{}", super::changes::text(&report)),
    }
    Ok(0)
}

/// An experiment record from a saved run's JSON file.
fn read_record(file: &std::path::Path) -> Result<ExperimentRecord, DbError> {
    use netperf_base::saved::{identify, read_document, EXPERIMENT, MATRIX};
    let bad = |why: String| DbError::Invalid(format!("{}: {why}", file.display()));
    let doc = read_document(file).map_err(DbError::Invalid)?;
    match identify(&doc).map_err(&bad)? {
        &EXPERIMENT | &MATRIX => ExperimentRecord::from_saved(&doc).map_err(bad),
        other => Err(bad(format!(
            "a saved {} ({}), not an experiment",
            other.format, other.written_by
        ))),
    }
}

/// `--since` as a lower bound for RFC 3339 UTC text: a date or date-time
/// (compared as text, so "2026-11-22" means from that day's start), or a
/// span ago: "7d", "12h", "30m", "90s".
pub fn since_text(text: &str) -> Result<String, DbError> {
    let bad = || {
        DbError::Invalid(format!(
            "--since {text}: give a date (2026-11-22), a UTC time (2026-11-22T08:00Z) or a span ago (7d, 12h, 30m)"
        ))
    };
    let t = text.trim();
    if let Some(seconds) = super::retain::span_seconds(t) {
        return Ok(super::retain::ago(seconds));
    }
    // YYYY-MM-DD, then optionally THH:MM[:SS[.fff]] and an optional Z.
    let shape = "dddd-dd-dd";
    let date_ok = t.len() >= shape.len()
        && t.bytes().zip(shape.bytes()).all(|(c, s)| match s {
            b'd' => c.is_ascii_digit(),
            other => c == other,
        });
    if !date_ok {
        return Err(bad());
    }
    let rest = t[shape.len()..].trim_end_matches('Z');
    let time_ok = rest.is_empty()
        || (rest.starts_with('T')
            && rest.len() >= 6
            && rest[1..]
                .bytes()
                .all(|c| c.is_ascii_digit() || c == b':' || c == b'.'));
    if !time_ok {
        return Err(bad());
    }
    Ok(t.trim_end_matches('Z').to_string())
}

/// An open database waiting for a netagg run to finish.
pub struct PendingNetaggStore {
    db: Db,
    tags: Vec<String>,
}

impl PendingNetaggStore {
    /// Opens the database at `path` before the run, so a bad one stops
    /// netagg before any traffic; `tags` tag the stored run.
    pub fn open(path: &Path, tags: Vec<String>) -> Result<Self, DbError> {
        Ok(PendingNetaggStore {
            db: Db::open(path)?,
            tags,
        })
    }

    /// Stores the run; on failure prints one line and gives exit status 2.
    pub fn finish(self, run: &NetaggRun) -> Result<String, ExitCode> {
        let result = super::netagg::result_of(run, &self.tags);
        self.finish_result(result)
    }

    /// Stores a result netagg built itself (a responsiveness run), tagged
    /// with the tags given at open; failure as `finish`.
    pub fn finish_result(self, mut result: StoredResult) -> Result<String, ExitCode> {
        result.tags.extend(self.tags);
        store_result(&self.db, &result).map_err(|e| {
            eprintln!("netagg: --store: {e}");
            ExitCode::from(EXIT_ERROR)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_accepts_dates_times_and_spans() {
        assert_eq!(since_text("2026-11-22").unwrap(), "2026-11-22");
        assert_eq!(since_text("2026-11-22T08:00Z").unwrap(), "2026-11-22T08:00");
        assert!(since_text("7d").unwrap().ends_with('Z'));
        for bad in ["yesterday", "2026-1-2", "2026-11-22 08:00", "d", "5w", ""] {
            assert!(since_text(bad).is_err(), "{bad}");
        }
    }
}
