//! `netagg report FILE --out DIR`: any saved run drawn again from its JSON
//! alone — a `netperf -- --report` series, a netagg ramp, a `netagg post`,
//! an experiment, the matrix, a responsiveness run or a mesh — byte for byte the page (and charts,
//! tables) it wrote when it ran. The JSON's "format" says which drawer
//! reads it; anything else is refused with the reason, exit 2.

use netperf_base::saved::{
    identify, read_document, write_files, SavedKind, EXPERIMENT, MATRIX, MESH, POST, RAMP,
    RESPONSIVENESS, SERIES,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

// `netagg report`'s options; the subcommand's doc is the binary's.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// the saved run: netagg_KIND.json, NAME_series.json of `netagg post`,
    /// experiment.json, responsiveness.json, mesh.json, or the FILE.json of `netperf --
    /// --report FILE.html`
    pub json: PathBuf,
    /// directory for the page and its charts
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: PathBuf,
}

/// Draws one kind: the document, the file's stem → (file name, contents).
type Drawer = fn(&Value, &str) -> Result<Vec<(String, String)>, String>;

/// Which drawer reads which kind.
const DRAWERS: [(&SavedKind, Drawer); 7] = [
    (&SERIES, series),
    (&RAMP, ramp),
    (&POST, |doc, _| crate::agg::commands::redraw_post(doc)),
    (&EXPERIMENT, experiment),
    (&MATRIX, experiment),
    (&RESPONSIVENESS, responsiveness),
    (&MESH, mesh),
];

/// `netagg report`: the files drawn again, each path printed.
pub fn run(args: &ReportArgs) -> ExitCode {
    match redraw(&args.json, &args.out) {
        Ok(written) => {
            for path in written {
                println!("{}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err((code, e)) => {
            eprintln!("netagg: {e}");
            ExitCode::from(code)
        }
    }
}

/// Draws the saved run `json` into `out`; an error has its exit status:
/// 2 for a file that is not a saved run, 1 for one that cannot be written.
pub fn redraw(json: &Path, out: &Path) -> Result<Vec<PathBuf>, (u8, String)> {
    let files = drawn(json).map_err(|e| (2, e))?;
    let source = json.canonicalize().ok();
    if let Some((name, _)) = files
        .iter()
        .find(|(name, _)| source.is_some() && out.join(name).canonicalize().ok() == source)
    {
        return Err((
            2,
            format!(
                "--out {} would overwrite {} ({name}): choose another directory",
                out.display(),
                json.display()
            ),
        ));
    }
    write_files(out, &files).map_err(|e| (1, format!("cannot write {e}")))
}

/// The files a saved run's JSON draws; an error names the file.
fn drawn(json: &Path) -> Result<Vec<(String, String)>, String> {
    let doc = read_document(json)?;
    let stem = json
        .file_stem()
        .map_or("series".into(), |s| s.to_string_lossy().into_owned());
    let kind = identify(&doc).map_err(|e| format!("{}: {e}", json.display()))?;
    let (_, draw) = DRAWERS
        .iter()
        .find(|(k, _)| *k == kind)
        .expect("every saved kind has a drawer");
    draw(&doc, &stem).map_err(|e| format!("{}: {e}", json.display()))
}

fn series(doc: &Value, stem: &str) -> Result<Vec<(String, String)>, String> {
    let run = netperf_pages::series::SeriesRun::from_json(doc)?;
    Ok(vec![(format!("{stem}.html"), run.page())])
}

fn ramp(doc: &Value, _: &str) -> Result<Vec<(String, String)>, String> {
    let s = crate::agg::saved::read(doc)?;
    Ok(s.drawing.files(&s.kind, &s.recording, &s.levels))
}

fn experiment(doc: &Value, _: &str) -> Result<Vec<(String, String)>, String> {
    let record = netperf_results::model::ExperimentRecord::from_saved(doc)?;
    let analysis = crate::experiment::Analysis::of(&record);
    crate::experiment::output::files(&record, &analysis).map_err(|e| e.to_string())
}

fn responsiveness(doc: &Value, _: &str) -> Result<Vec<(String, String)>, String> {
    let run = crate::responsiveness::model::Run::from_json(doc)?;
    Ok(crate::responsiveness::draw::files(&run))
}

fn mesh(doc: &Value, _: &str) -> Result<Vec<(String, String)>, String> {
    let mesh = crate::mesh::model::Mesh::from_json(doc)?;
    crate::mesh::output::files(&mesh)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_saved_kind_has_one_drawer() {
        for kind in netperf_base::saved::KINDS {
            assert_eq!(DRAWERS.iter().filter(|(k, _)| *k == kind).count(), 1);
        }
    }
}
