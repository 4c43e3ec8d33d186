//! `netagg post`: reads what netperf's aggregate scripts write — the run log
//! `netperf_<type>.log` and one `netperf_<type>_<NNNNN>_to_<host>.out` per
//! netperf — and computes what post_proc.py computes with rrdtool: the
//! per-second aggregate, each ramp level's average, minimum and maximum, and
//! the peak level, with post_proc.py's text, plus the series as CSV and JSON.
//!
//! Parts: `logfile` (the level markers), `outfile` (interim results),
//! `rrd` (rrdtool's resampling and window arithmetic), `aggregate` (lining
//! the files up and the levels), `output` (text, CSV, JSON).
//!
//! This module uses nothing else from the crate, so it can be built alone.

mod aggregate;
mod logfile;
mod outfile;
mod output;
mod rrd;

use std::path::{Path, PathBuf};

pub use logfile::{parse_log, LevelWindow, RunLog};
pub use outfile::{parse_out, OutFile, Sample};

/// Largest file read, log or result: a day of half-second interim lines is
/// a few MiB, so anything this big is not one of ours.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// Longest run handled, start to stop: 31 days. The aggregate has one value
/// per second of it.
pub const MAX_RUN_SECONDS: f64 = 31.0 * 86_400.0;

/// Latest timestamp taken as a time (year 5138); larger means a damaged log.
const MAX_TIMESTAMP: f64 = 1e11;

/// Why a post-processing could not be done.
#[derive(Debug, thiserror::Error)]
pub enum PostError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {size} bytes; netagg post reads files of at most {limit} bytes", path.display())]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    #[error("{log}: no \"Starting netperfs at\" line; not a log of runemomniaggdemo.sh or netagg")]
    NoStart { log: String },
    #[error("{log}: no \"Netperfs stopped\" line; the run did not finish")]
    NoStop { log: String },
    #[error(
        "{log}: the run starts at {start} and stops at {end}; expected a stop after the start, \
         at most 31 days later"
    )]
    BadSpan { log: String, start: f64, end: f64 },
    #[error("There were no valid results for this prefix! (no interim result in {prefix}*.out)")]
    NoResults { prefix: String },
}

/// One second of the aggregate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Whole seconds since the epoch; the value covers `(time, time + 1]`.
    pub time: i64,
    /// Sum over the netperfs of each one's average rate over that second,
    /// in netperf's units (Trans/s, or 10^6bits/s for bulk tests).
    pub value: f64,
}

/// One ramp level's result, as post_proc.py reports an "interval".
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Level {
    /// The number post_proc.py prints ("interval N"): levels whose window
    /// is empty once the settling seconds are taken off are left out and
    /// the numbers close up.
    pub number: usize,
    /// 1-based position of the level among the log's markers.
    pub marker: usize,
    /// Streams running during the level.
    pub streams: u32,
    /// The level as the log marks it (whole seconds).
    pub window: LevelWindow,
    /// The measured window, one second in from each end of the level.
    pub start: i64,
    pub end: i64,
    /// Average, minimum and maximum of the aggregate over the window in
    /// netperf's units, rounded to two decimals as post_proc.py gets them
    /// from rrdtool; NaN when no second of the window has a value.
    pub average: f64,
    pub minimum: f64,
    pub maximum: f64,
}

/// One `.out` file as read.
#[derive(Debug, Clone, PartialEq)]
pub struct FileInfo {
    /// Path without ".out" (post_proc.py's name for it).
    pub name: String,
    /// Interim results found.
    pub samples: usize,
    /// Lines that looked like interim results but did not parse.
    pub bad_lines: usize,
    /// Endings of the first and last interim result.
    pub first: Option<f64>,
    pub last: Option<f64>,
}

/// Everything post_proc.py computes for one test type.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// The log's path without ".log", as post_proc.py prints it.
    pub prefix: String,
    /// Units of the report: "Trans/s", or "bits/s" for bulk tests.
    pub units: &'static str,
    /// Factor from netperf's units to `units` (1, or 1e6 from 10^6bits/s).
    pub multiplier: f64,
    /// The run's start and stop from the log.
    pub start_time: f64,
    pub end_time: f64,
    /// The earliest first interim result of any netperf.
    pub min_timestamp: f64,
    /// The aggregate, one point per second from `int(start_time)` to
    /// `int(end_time)`.
    pub series: Vec<Point>,
    /// The levels with a non-empty window, in log order.
    pub levels: Vec<Level>,
    /// Index in `levels` of the peak: the first with the highest average
    /// (None if no average is above zero, where post_proc.py fails).
    pub peak: Option<usize>,
    /// The `.out` files read, in name order.
    pub files: Vec<FileInfo>,
    /// Log marker lines skipped because their timestamp did not parse.
    pub bad_log_lines: usize,
    /// What post_proc.py would print between "Prefix is" and the results:
    /// refused rrdtool updates and slots outside the run.
    pub diagnostics: Vec<String>,
}

/// (text in the test's file name, units, multiplier from netperf's units);
/// the first match wins. post_proc.py's `units_et_al_by_prefix`.
const UNITS: &[(&str, &str, f64)] = &[("pps", "Trans/s", 1.0), ("tps", "Trans/s", 1.0)];
/// Bulk tests report 10^6bits/s (`-f m`); post_proc.py shows bits/s.
const BULK_UNITS: (&str, f64) = ("bits/s", 1e6);
/// Every unit a report is in.
const REPORT_UNITS: [&str; 2] = [UNITS[0].1, BULK_UNITS.0];

/// Reads `netperf_<type>.log` and the `netperf_<type>*.out` files beside it
/// and computes the summary, as `post_proc.py netperf_<type>.log` does.
pub fn analyze(log_path: impl AsRef<Path>) -> Result<Analysis, PostError> {
    let log_path = log_path.as_ref();
    let log = parse_log(&read_limited(log_path)?);
    let prefix = prefix_of(log_path);
    let mut files = Vec::new();
    for path in find_out_files(log_path)? {
        let name = path.to_string_lossy();
        let name = name.strip_suffix(".out").unwrap_or(&name).to_string();
        files.push((name, parse_out(&read_limited(&path)?)));
    }
    analyze_parsed(&prefix, &log, &files)
}

/// The computation on files already read: `prefix` is the log's path less
/// ".log", `files` each `.out` file's name (path less ".out") and contents.
pub fn analyze_parsed(
    prefix: &str,
    log: &RunLog,
    files: &[(String, OutFile)],
) -> Result<Analysis, PostError> {
    let start_time = log.start_time.ok_or_else(|| PostError::NoStart {
        log: format!("{prefix}.log"),
    })?;
    let end_time = log.end_time.ok_or_else(|| PostError::NoStop {
        log: format!("{prefix}.log"),
    })?;
    let span = end_time - start_time;
    if !(0.0..=MAX_TIMESTAMP).contains(&start_time) || !(0.0..=MAX_RUN_SECONDS).contains(&span) {
        return Err(PostError::BadSpan {
            log: format!("{prefix}.log"),
            start: start_time,
            end: end_time,
        });
    }

    let mut sink = aggregate::Sink::new(start_time, end_time);
    let mut diagnostics = Vec::new();
    let mut min_timestamp: Option<f64> = None;
    let mut infos = Vec::new();
    for (name, out) in files {
        let span = aggregate::add_file(name, &out.samples, end_time, &mut sink, &mut diagnostics);
        if let Some((first, _)) = span {
            min_timestamp = Some(min_timestamp.map_or(first, |m: f64| m.min(first)));
        }
        infos.push(FileInfo {
            name: name.clone(),
            samples: out.samples.len(),
            bad_lines: out.bad_lines,
            first: span.map(|s| s.0),
            last: span.map(|s| s.1),
        });
    }
    let min_timestamp = min_timestamp.ok_or_else(|| PostError::NoResults {
        prefix: prefix.to_string(),
    })?;

    let overall = aggregate::overall(prefix, &sink, min_timestamp, end_time, &mut diagnostics);
    let stats = aggregate::levels(&overall, &log.levels, min_timestamp);
    let peak = aggregate::peak(&stats);
    let levels = stats
        .iter()
        .enumerate()
        .map(|(number, l)| Level {
            number,
            marker: l.marker,
            streams: l.window.streams,
            window: l.window,
            start: l.start,
            end: l.end,
            average: l.stats.average,
            minimum: l.stats.minimum,
            maximum: l.stats.maximum,
        })
        .collect();
    let (units, multiplier) = units_of(prefix);
    let series = sink
        .values
        .iter()
        .enumerate()
        .map(|(i, &value)| Point {
            time: sink.first + i as i64,
            value,
        })
        .collect();
    Ok(Analysis {
        prefix: prefix.to_string(),
        units,
        multiplier,
        start_time,
        end_time,
        min_timestamp,
        series,
        levels,
        peak,
        files: infos,
        bad_log_lines: log.bad_lines,
        diagnostics,
    })
}

/// The units post_proc.py picks from the test's name. Only the file name is
/// looked at (post_proc.py looks at the whole path, so a directory named
/// "tps" would turn a bulk test into Trans/s).
fn units_of(prefix: &str) -> (&'static str, f64) {
    let name = Path::new(prefix)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    UNITS
        .iter()
        .find(|(word, _, _)| name.contains(word))
        .map_or(BULK_UNITS, |&(_, units, m)| (units, m))
}

/// The log's path less a trailing ".log" (post_proc.py removes every
/// ".log" in the path, which breaks on directories named "x.logs").
fn prefix_of(log_path: &Path) -> String {
    let s = log_path.to_string_lossy();
    s.strip_suffix(".log").unwrap_or(&s).to_string()
}

/// The `.out` files that belong to a log: in its directory, named like the
/// log less ".log", then anything, then ".out" (post_proc.py's
/// `glob(prefix + "*.out")`), sorted by name where glob's order is the
/// directory's.
pub fn find_out_files(log_path: &Path) -> Result<Vec<PathBuf>, PostError> {
    let dir = match log_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let stem = log_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = stem.strip_suffix(".log").unwrap_or(&stem).to_string();
    let read_err = |source| PostError::Read {
        path: dir.clone(),
        source,
    };
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(read_err)? {
        let entry = entry.map_err(read_err)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_file = entry.file_type().map(|t| t.is_file()).unwrap_or(false);
        if is_file
            && name.len() >= stem.len() + 4
            && name.starts_with(&stem)
            && name.ends_with(".out")
        {
            found.push(log_path.with_file_name(name));
        }
    }
    found.sort();
    Ok(found)
}

/// A file's text, refusing files over `MAX_FILE_BYTES` (checked on what is
/// read, so a file growing meanwhile is refused too). Bytes that are not
/// UTF-8 become U+FFFD: such lines are not results anyway.
pub fn read_limited(path: &Path) -> Result<String, PostError> {
    let read_err = |source| PostError::Read {
        path: path.to_path_buf(),
        source,
    };
    // Refuse at once what is already too big (stat: opening a FIFO would
    // wait for its writer); the read below is bounded too.
    if let Ok(size) = std::fs::metadata(path).map(|m| m.len()) {
        if size > MAX_FILE_BYTES {
            return Err(PostError::TooLarge {
                path: path.to_path_buf(),
                size,
                limit: MAX_FILE_BYTES,
            });
        }
    }
    let bytes =
        netperf_base::input::read_text(path, MAX_FILE_BYTES as usize + 1).map_err(read_err)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        let size = std::fs::metadata(path).map_or(bytes.len() as u64, |m| m.len());
        return Err(PostError::TooLarge {
            path: path.to_path_buf(),
            size,
            limit: MAX_FILE_BYTES,
        });
    }
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}
