//! netagg's commands over runs already measured: `netagg post` (real
//! netperf runs' logs, read as post_proc.py reads them) and `netagg report`
//! (a saved run's JSON), each drawn as the charts and the page of a ramp.

use super::charts::{self, ChartText};
use super::health::LevelHealth;
use super::post::{self, Analysis};
use super::report;
use super::runner::{LevelRun, Recording, Sample};
use super::summary::LevelSummary;
use netperf_pages::context::RunContext;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

// `netagg post`'s options; the subcommand's doc is the binary's.
#[derive(clap::Args, Debug)]
pub struct PostArgs {
    /// the run log, e.g. netperf_tps.log (the .out files beside it are read)
    pub log: PathBuf,
    /// also print every interval, as post_proc.py --intervals does
    #[arg(long)]
    pub intervals: bool,
    /// directory for the series, chart and report
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: PathBuf,
    /// title of the chart and the report
    #[arg(long, default_value = "")]
    pub title: String,
    /// a note drawn on the chart
    #[arg(long, default_value = "")]
    pub annotation: String,
}

// `netagg report`'s options; the subcommand's doc is the binary's.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// the saved run: netagg_KIND.json, or the FILE.json of `netperf -- --report FILE.html`
    pub json: PathBuf,
    /// directory for the page and its charts
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: PathBuf,
}

/// `netagg post`: post_proc.py's work, with our outputs.
pub fn post(args: &PostArgs, command_line: Vec<String>) -> ExitCode {
    let analysis = match post::analyze(&args.log) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("netagg: {e}");
            return ExitCode::from(1);
        }
    };
    let text = analysis.summary_text(args.intervals);
    print!("{text}");
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("netagg: cannot create {}: {e}", args.out.display());
        return ExitCode::from(2);
    }
    let files = post_files(args, &analysis, &text, command_line);
    match write_files(&args.out, files, false) {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

/// The files of `netagg post`, named after the log: the series (CSV,
/// JSON with the run's context), the overall chart and the page.
fn post_files(
    args: &PostArgs,
    analysis: &Analysis,
    text: &str,
    command_line: Vec<String>,
) -> Vec<(String, String)> {
    let base = args
        .log
        .file_stem()
        .map_or("netperf".to_string(), |s| s.to_string_lossy().into_owned());
    let (recording, levels) = as_recording(analysis);
    let chart_text = ChartText {
        title: if args.title.is_empty() {
            base.clone()
        } else {
            args.title.clone()
        },
        annotation: args.annotation.clone(),
        units: analysis.units.to_string(),
    };
    let svg = charts::overall(&recording, &levels, &chart_text);
    let mut context = RunContext::new("netagg post", command_line);
    context.setting("netperf log", args.log.display());
    context.setting("Units", analysis.units);
    context.setting("Hosts", "not in netperf's logs");
    let json = serde_json::to_string_pretty(&analysis.to_json()).unwrap_or_default() + "\n";
    let json = report::with_context(&json, &context);
    vec![
        (format!("{base}_series.csv"), analysis.series_csv()),
        (format!("{base}_series.json"), json),
        (format!("{base}_overall.svg"), svg.clone()),
        (
            format!("{base}.html"),
            report::page(
                &context,
                text,
                &[(svg, report::OVERALL_CAPTION.to_string())],
                &levels,
                &chart_text,
            ),
        ),
    ]
}

/// `netagg report`: a saved netagg run's charts and page, or a saved
/// `netperf -- --report` series page, drawn again.
pub fn redraw(args: &ReportArgs) -> ExitCode {
    let files = match redrawn_files(&args.json) {
        Ok(files) => files,
        Err(e) => {
            eprintln!("netagg: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("netagg: cannot create {}: {e}", args.out.display());
        return ExitCode::from(2);
    }
    match write_files(&args.out, files, true) {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

/// The files a saved run's JSON draws: a series page for what `netperf --
/// --report` saved, else a netagg run's charts and page; an error names
/// the file.
fn redrawn_files(json: &Path) -> Result<Vec<(String, String)>, String> {
    use netperf_pages::series::{SeriesRun, FORMAT};
    let text = std::fs::read_to_string(json)
        .map_err(|e| format!("cannot read {}: {e}", json.display()))?;
    let doc = serde_json::from_str::<serde_json::Value>(&text)
        .map_err(|e| format!("{}: not JSON: {e}", json.display()))?;
    let files = match doc.get("format").and_then(|f| f.as_str()) {
        Some(FORMAT) => SeriesRun::from_json(&doc).map(|run| {
            let stem = json
                .file_stem()
                .map_or("series".into(), |s| s.to_string_lossy());
            vec![(format!("{stem}.html"), run.page())]
        }),
        _ => super::saved::read(&doc).map(|s| s.drawing.files(&s.kind, &s.recording, &s.levels)),
    };
    files.map_err(|e| format!("{}: {e}", json.display()))
}

/// Write each (name, body) into `out`, printing each path when `tell`;
/// the first that cannot be written stops it with exit status 1.
fn write_files(out: &Path, files: Vec<(String, String)>, tell: bool) -> Result<(), ExitCode> {
    for (name, body) in files {
        let path = out.join(name);
        if let Err(e) = std::fs::write(&path, body) {
            eprintln!("netagg: cannot write {}: {e}", path.display());
            return Err(ExitCode::from(1));
        }
        if tell {
            println!("{}", path.display());
        }
    }
    Ok(())
}

/// The analysis of real netperf runs in the shape the charts draw: its
/// series as samples, its levels as they ran and as summarized.
pub fn as_recording(a: &Analysis) -> (Recording, Vec<LevelSummary>) {
    let t0 = a.series.first().map_or(0, |p| p.time);
    let recording = Recording {
        levels: level_runs(a, t0),
        samples: samples(a, t0),
        start_epoch: t0 as f64,
        // post_proc.py's series is resampled to one point a second.
        sample_interval: 1.0,
        ..Recording::default()
    };
    (recording, level_summaries(a, t0))
}

/// The aggregate's points as samples, `t0` their first second.
fn samples(a: &Analysis, t0: i64) -> Vec<Sample> {
    let level_of = |time: i64| {
        a.levels
            .iter()
            .position(|l| time >= l.window.start && time < l.window.end)
            .unwrap_or(0)
    };
    a.series
        .iter()
        .map(|p| Sample {
            t: (p.time - t0) as f64,
            epoch: p.time as f64,
            level: level_of(p.time),
            aggregate: p.value * a.multiplier,
            cpu_util: -1.0,
            cpu_peak: -1.0,
            packets_out: -1.0,
            packets_in: -1.0,
            ..Sample::default()
        })
        .collect()
}

/// The levels as the log marks them, in seconds from `t0`.
fn level_runs(a: &Analysis, t0: i64) -> Vec<LevelRun> {
    a.levels
        .iter()
        .map(|l| LevelRun {
            streams: l.streams,
            requested: l.streams,
            setup_start: (l.window.start - t0) as f64,
            start: (l.window.start - t0) as f64,
            end: (l.window.end - t0) as f64,
            ..LevelRun::default()
        })
        .collect()
}

/// The levels' results as post_proc.py computed them, in the report's
/// units; what netperf's logs do not say is marked absent.
fn level_summaries(a: &Analysis, t0: i64) -> Vec<LevelSummary> {
    a.levels
        .iter()
        .map(|l| LevelSummary {
            streams: l.streams,
            window: ((l.start - t0) as f64, (l.end - t0) as f64),
            samples: 0,
            sample_indices: vec![],
            average: l.average * a.multiplier,
            min: l.minimum * a.multiplier,
            max: l.maximum * a.multiplier,
            cpu_util: -1.0,
            cpu_peak: -1.0,
            packets_out: -1.0,
            packets_in: -1.0,
            service_demand: -1.0,
            stream_rates: vec![],
            min_over_max: 0.0,
            jain: 0.0,
            // netperf's logs say nothing of a stream's progress per sample.
            health: LevelHealth::default(),
        })
        .collect()
}
