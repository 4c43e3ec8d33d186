//! `netagg post`: real netperf runs' logs, read as post_proc.py reads them,
//! drawn as the chart and the page of a ramp; and that page drawn again
//! from the JSON it saved (for `netagg report`).

use super::charts::{self, ChartText};
use super::health::LevelHealth;
use super::post::{self, Analysis};
use super::report;
use super::runner::{LevelRun, Recording, Sample};
use super::summary::LevelSummary;
use netperf_base::saved::{write_files, POST};
use netperf_pages::context::RunContext;
use std::path::PathBuf;
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
    let files = post_files(args, &analysis, &text, command_line);
    match write_files(&args.out, &files) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("netagg: cannot write {e}");
            ExitCode::from(1)
        }
    }
}

/// What `netagg post` keeps of a page beyond the analysis (the JSON's
/// "page"), so `netagg report` draws the same page again.
struct PostPage {
    /// The files' stem: the log's name.
    name: String,
    summary_text: String,
    chart_text: ChartText,
}

impl PostPage {
    /// The chart and the page.
    fn files(&self, analysis: &Analysis, context: &RunContext) -> Vec<(String, String)> {
        let (recording, levels) = as_recording(analysis);
        let svg = charts::overall(&recording, &levels, &self.chart_text);
        let page = report::page(
            context,
            &self.summary_text,
            &[(svg.as_str(), report::OVERALL_CAPTION)],
            &levels,
            &self.chart_text,
        );
        vec![
            (format!("{}_overall.svg", self.name), svg),
            (format!("{}.html", self.name), page),
        ]
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "name": self.name,
            "title": self.chart_text.title,
            "annotation": self.chart_text.annotation,
            "summary_text": self.summary_text,
        })
    }
}

/// The files of `netagg post`, named after the log: the series (CSV,
/// JSON with the run's context and page), the overall chart and the page.
fn post_files(
    args: &PostArgs,
    analysis: &Analysis,
    text: &str,
    command_line: Vec<String>,
) -> Vec<(String, String)> {
    let name = args
        .log
        .file_stem()
        .map_or("netperf".to_string(), |s| s.to_string_lossy().into_owned());
    let page = PostPage {
        chart_text: ChartText {
            title: match args.title.is_empty() {
                true => name.clone(),
                false => args.title.clone(),
            },
            annotation: args.annotation.clone(),
            units: analysis.units.to_string(),
        },
        name,
        summary_text: text.to_string(),
    };
    let mut context = RunContext::new("netagg post", command_line);
    context.setting("netperf log", args.log.display());
    context.setting("Units", analysis.units);
    context.setting("Hosts", "not in netperf's logs");
    let mut doc = POST.stamped(analysis.to_json());
    doc["page"] = page.to_json();
    doc["context"] = context.to_json();
    let json = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
    let mut files = vec![
        (format!("{}_series.csv", page.name), analysis.series_csv()),
        (format!("{}_series.json", page.name), json),
    ];
    files.extend(page.files(analysis, &context));
    files
}

/// A saved `netagg post`'s chart and page, drawn again from its JSON.
pub fn redraw_post(doc: &serde_json::Value) -> Result<Vec<(String, String)>, String> {
    use netperf_base::saved::text;
    let analysis = Analysis::from_json(doc)?;
    let context = RunContext::from_json(doc).ok_or("no \"context\"")?;
    let saved = doc.get("page").ok_or("no \"page\" member")?;
    let name = text(saved, "name")?;
    // It names the files written: a plain file name only.
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        return Err(format!("\"name\" is not a file name: {name:?}"));
    }
    let page = PostPage {
        name,
        summary_text: text(saved, "summary_text")?,
        chart_text: super::saved::chart_text(saved, analysis.units.to_string())?,
    };
    Ok(page.files(&analysis, &context))
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
