//! Writing an experiment's outputs into a directory: experiment.txt (the
//! text report), runs.csv, cells.csv, experiment.json (the record with its
//! analysis) and report.html, plus each chart as its own SVG; and reading a
//! saved experiment.json back to render them again. Each file is written
//! to a temporary name and renamed into place, so a reader never sees half
//! a file.

use std::io;
use std::path::{Path, PathBuf};

use super::analysis::Analysis;
use super::{charts, csv, html, tables};
use netperf_base::saved::{read_document, write_files, EXPERIMENT, MATRIX};
use netperf_results::model::ExperimentRecord;

/// experiment.json: the saved-run stamp (an experiment, or the matrix when
/// it has targets), the record's own fields, and `analysis` beside them. A
/// reader that wants only the record deserializes it as an
/// [`ExperimentRecord`] (the extra fields are ignored).
pub fn experiment_json(
    record: &ExperimentRecord,
    analysis: &Analysis,
) -> serde_json::Result<String> {
    let kind = match record.targets.is_empty() {
        true => &EXPERIMENT,
        false => &MATRIX,
    };
    let mut document = kind.stamped(serde_json::to_value(record)?);
    if let serde_json::Value::Object(map) = &mut document {
        map.insert("analysis".into(), serde_json::to_value(analysis)?);
    }
    serde_json::to_string_pretty(&document)
}

/// Reads a saved experiment (experiment.json, a bare record, or what
/// `netagg results show --json` prints), refusing a record layout newer
/// than this program understands.
pub fn read_record(path: &Path) -> io::Result<ExperimentRecord> {
    let invalid = |message: String| io::Error::new(io::ErrorKind::InvalidData, message);
    let doc = read_document(path).map_err(invalid)?;
    ExperimentRecord::from_saved(&doc).map_err(|e| invalid(format!("{}: {e}", path.display())))
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
    let files =
        files(record, analysis).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    write_files(dir, &files)
}

/// Every output as (file name, contents), in the order written.
pub fn files(
    record: &ExperimentRecord,
    analysis: &Analysis,
) -> serde_json::Result<Vec<(String, String)>> {
    let charts = charts::all(record, analysis);
    let mut files = vec![
        (
            "experiment.txt".into(),
            tables::text_report(record, analysis),
        ),
        ("runs.csv".into(), csv::runs_csv(record)),
        ("cells.csv".into(), csv::cells_csv(record, analysis)),
        ("experiment.json".into(), experiment_json(record, analysis)?),
        (
            "report.html".into(),
            html::report(record, analysis, &charts),
        ),
    ];
    if let Some(table) = super::scenarios::scenario_table(record, analysis) {
        files.push(("scenarios.csv".into(), super::scenarios::csv(&table)));
    }
    files.extend(charts.into_iter().map(|c| (c.file_name, c.svg)));
    Ok(files)
}

/// Renders a saved experiment.json again into `dir`: the analysis is
/// recomputed from the runs (it is reproducible from the record's seed).
pub fn render_from_json(json: &Path, dir: &Path) -> io::Result<Vec<PathBuf>> {
    let record = read_record(json)?;
    write_outputs(&record, dir)
}
