//! Writing an experiment's outputs into a directory: experiment.txt (the
//! text report), runs.csv, cells.csv, experiment.json (the record with its
//! analysis) and report.html, plus each chart as its own SVG; and reading a
//! saved experiment.json back to render them again. Each file is written
//! to a temporary name and renamed into place, so a reader never sees half
//! a file.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::analysis::Analysis;
use super::{charts, csv, html, tables};
use netperf_results::model::{ExperimentRecord, RECORD_VERSION};

/// experiment.json: the record's own fields, and `analysis` beside them. A
/// reader that wants only the record deserializes it as an
/// [`ExperimentRecord`] (the extra field is ignored).
pub fn experiment_json(
    record: &ExperimentRecord,
    analysis: &Analysis,
) -> serde_json::Result<String> {
    let mut document = serde_json::to_value(record)?;
    if let serde_json::Value::Object(map) = &mut document {
        map.insert("analysis".into(), serde_json::to_value(analysis)?);
    }
    serde_json::to_string_pretty(&document)
}

/// Reads an experiment.json (or a bare record, or what `netagg results
/// show --json` prints for a stored experiment: the record is its
/// "document"), refusing a record layout newer than this program
/// understands.
pub fn read_record(path: &Path) -> io::Result<ExperimentRecord> {
    let text = fs::read_to_string(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let invalid = |message: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {message}", path.display()),
        )
    };
    let mut value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| invalid(format!("not JSON: {e}")))?;
    if value.get("record_version").is_none() {
        if let Some(document) = value
            .get_mut("document")
            .filter(|d| d.get("record_version").is_some())
        {
            value = document.take();
        }
    }
    let version = value
        .get("record_version")
        .and_then(serde_json::Value::as_u64);
    match version {
        None => {
            return Err(invalid(
                "not an experiment record (no record_version)".into(),
            ))
        }
        Some(v) if v > u64::from(RECORD_VERSION) => {
            return Err(invalid(format!(
                "record version {v} is newer than this netperf-ng understands ({RECORD_VERSION})"
            )))
        }
        Some(_) => {}
    }
    serde_json::from_value(value).map_err(|e| invalid(format!("not an experiment record: {e}")))
}

/// Writes `contents` to `dir/name` through a temporary file and a rename.
fn write_file(dir: &Path, name: &str, contents: &str) -> io::Result<PathBuf> {
    let path = dir.join(name);
    let temporary = dir.join(format!(".{name}.tmp"));
    let result = fs::write(&temporary, contents).and_then(|()| fs::rename(&temporary, &path));
    if let Err(e) = result {
        let _ = fs::remove_file(&temporary);
        return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display())));
    }
    Ok(path)
}

/// Analyses `record` and writes every output into `dir` (created if
/// needed). Returns the paths written: experiment.txt, runs.csv, cells.csv,
/// experiment.json, report.html, then the charts.
pub fn write_outputs(record: &ExperimentRecord, dir: &Path) -> io::Result<Vec<PathBuf>> {
    let analysis = Analysis::of(record);
    write_analysed(record, &analysis, dir)
}

/// [`write_outputs`] with an analysis already made (the runner prints the
/// text report from the same one).
pub fn write_analysed(
    record: &ExperimentRecord,
    analysis: &Analysis,
    dir: &Path,
) -> io::Result<Vec<PathBuf>> {
    fs::create_dir_all(dir)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
    let json = experiment_json(record, analysis)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    let charts = charts::all(record, analysis);
    let mut written = vec![
        write_file(
            dir,
            "experiment.txt",
            &tables::text_report(record, analysis),
        )?,
        write_file(dir, "runs.csv", &csv::runs_csv(record))?,
        write_file(dir, "cells.csv", &csv::cells_csv(record, analysis))?,
        write_file(dir, "experiment.json", &json)?,
        write_file(dir, "report.html", &html::report(record, analysis, &charts))?,
    ];
    if let Some(table) = super::scenarios::scenario_table(record, analysis) {
        written.push(write_file(
            dir,
            "scenarios.csv",
            &super::scenarios::csv(&table),
        )?);
    }
    for chart in &charts {
        written.push(write_file(dir, &chart.file_name, &chart.svg)?);
    }
    Ok(written)
}

/// Renders a saved experiment.json again into `dir`: the analysis is
/// recomputed from the runs (it is reproducible from the record's seed).
pub fn render_from_json(json: &Path, dir: &Path) -> io::Result<Vec<PathBuf>> {
    let record = read_record(json)?;
    write_outputs(&record, dir)
}
