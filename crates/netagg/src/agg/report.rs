//! netagg's report page and the run's context: what ran (kind, test, burst,
//! levels, intervals, the command line), where (the SUT and every load
//! generator: kernel, CPU, interface, driver, MTU, offloads), when and with
//! what — the context the page opens with and the JSON carries — then the
//! summary, the charts and the level table, and how to run it again.

use super::charts::ChartText;
use super::runner::{Recording, RunConfig};
use super::summary::{with_members, LevelSummary};
use netperf_client::control::offload::RemoteOffloads;
use netperf_pages::context::{HostFacts, RunContext};
use netperf_pages::page::{Cell, Page, Table};
use std::sync::mpsc;
use std::time::{Duration, Instant, UNIX_EPOCH};

/// How long the load generators' offload reads may take together.
const OFFLOAD_READ_LIMIT: Duration = Duration::from_secs(15);

/// The run's context. `command_line` is netagg's own.
pub fn context(cfg: &RunConfig, rec: &Recording, command_line: Vec<String>) -> RunContext {
    let kind = cfg.kind;
    let mut ctx = RunContext::new(&format!("netagg {}", kind.name), command_line);
    let test = match kind.test_options {
        [] => kind.test.to_string(),
        options => format!("{} -- {}", kind.test, options.join(" ")),
    };
    ctx.setting(
        "Kind",
        format!("{}: netperf {test}, in {}", kind.name, kind.units),
    );
    ctx.setting(
        "Load generators",
        format!("{} (netserver port {})", rec.hosts.join(", "), rec.port),
    );
    ctx.setting("Burst", cfg.burst);
    let streams = match cfg.single_level {
        true => format!("{} in one level", cfg.max_streams),
        false => format!(
            "{} levels up to {}: {}",
            rec.levels.len(),
            cfg.max_streams,
            rec.levels
                .iter()
                .map(|l| l.requested.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    ctx.setting("Streams", streams);
    ctx.setting(
        "Level duration",
        format!("{} s", cfg.level_duration.as_secs_f64()),
    );
    ctx.setting(
        "Sampling interval",
        format!("{} s", cfg.sample_interval.as_secs_f64()),
    );
    if cfg.kind.recovers_loss {
        ctx.setting("Loss timeout (-e)", format!("{} s", cfg.loss_timeout));
    }
    ctx.setting("SUT interfaces counted", rec.interfaces.join(", "));
    let started = UNIX_EPOCH + Duration::from_secs_f64(rec.start_epoch.max(0.0));
    let ended = rec
        .levels
        .last()
        .map_or(0.0, |l| l.end)
        .max(rec.samples.last().map_or(0.0, |s| s.t));
    ctx.timed(started, Duration::from_secs_f64(ended.max(0.0)));
    ctx.hosts
        .push(HostFacts::this_host("SUT (netagg)", &rec.interfaces));
    ctx.hosts.extend(load_generators(rec));
    ctx
}

/// Each load generator as its streams' netserver described it, with the
/// offloads and MTU our netserver reports (read at once for all, bounded).
fn load_generators(rec: &Recording) -> Vec<HostFacts> {
    let mut facts: Vec<HostFacts> = rec
        .hosts
        .iter()
        .map(|host| {
            let seen = rec
                .streams
                .iter()
                .filter(|s| &s.host == host)
                .find_map(|s| s.remote.as_deref().cloned());
            seen.unwrap_or_else(|| HostFacts {
                role: "load generator".into(),
                host: host.clone(),
                note: "no stream of it finished with results".into(),
                ..HostFacts::default()
            })
        })
        .collect();
    let (tx, rx) = mpsc::channel();
    for (index, host) in rec.hosts.iter().enumerate() {
        let (tx, host, port) = (tx.clone(), host.clone(), rec.port);
        std::thread::spawn(move || {
            let read = RemoteOffloads::connect(&host, port).and_then(|mut r| r.read());
            let _ = tx.send((index, read));
        });
    }
    drop(tx);
    let deadline = Instant::now() + OFFLOAD_READ_LIMIT;
    let mut answered = vec![false; facts.len()];
    while let Ok((index, read)) =
        rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
    {
        answered[index] = true;
        match read {
            Ok(snapshot) => facts[index].add_remote_offloads(&snapshot),
            Err(e) => facts[index].note = format!("offloads not reported: {e}"),
        }
    }
    for (f, _) in facts.iter_mut().zip(answered).filter(|(_, a)| !a) {
        f.note = format!(
            "offloads not reported within {} s",
            OFFLOAD_READ_LIMIT.as_secs()
        );
    }
    facts
}

/// The overall chart's caption (also on `netagg post`'s page).
pub const OVERALL_CAPTION: &str = "The aggregate rate per sampling interval (blue); each level's average over its window (red), \
     the time outside the windows shaded grey; level starts labelled with their stream counts; the peak level ringed.";
const STREAMS_CAPTION: &str = "Each stream's rate per sampling interval; the legend names each stream's load generator \
     (one colour per load generator when there are many streams); red crosses: samples in which a stalled stream did no work.";

/// Everything the page draws beyond the recording: what the JSON keeps
/// (under "context" and "page") so `netagg report` can draw it again.
#[derive(Debug, Clone, Default)]
pub struct Drawing {
    pub context: RunContext,
    pub summary_text: String,
    pub chart_text: ChartText,
    /// The per-stream chart was asked for (--individual).
    pub individual: bool,
}

impl Drawing {
    /// `doc` (netagg's JSON) with the context and the page's texts.
    pub fn add_to_json(&self, doc: &str) -> String {
        let page = serde_json::json!({
            "title": self.chart_text.title,
            "annotation": self.chart_text.annotation,
            "individual": self.individual,
            "summary_text": self.summary_text,
        });
        with_members(doc, [("context", self.context.to_json()), ("page", page)])
    }

    /// The charts' SVG files and the page, named for `kind`.
    pub fn files(
        &self,
        kind: &str,
        rec: &Recording,
        levels: &[LevelSummary],
    ) -> Vec<(String, String)> {
        let overall = super::charts::overall(rec, levels, &self.chart_text);
        let mut files = vec![(format!("netagg_{kind}_overall.svg"), overall)];
        let mut captions = vec![OVERALL_CAPTION];
        if self.individual {
            let streams = super::charts::individual(rec, levels, &self.chart_text);
            files.push((format!("netagg_{kind}_streams.svg"), streams));
            captions.push(STREAMS_CAPTION);
        }
        let charts: Vec<(&str, &str)> = files
            .iter()
            .zip(captions)
            .map(|((_, svg), caption)| (svg.as_str(), caption))
            .collect();
        let html = page(
            &self.context,
            &self.summary_text,
            &charts,
            levels,
            &self.chart_text,
        );
        files.push((format!("netagg_{kind}.html"), html));
        files
    }
}

/// `doc` (a JSON document) with the context under "context".
pub fn with_context(doc: &str, ctx: &RunContext) -> String {
    with_members(doc, [("context", ctx.to_json())])
}

/// One self-contained page: the context, the summary, the charts with
/// their captions, the level table, and how to run it again.
pub fn page(
    ctx: &RunContext,
    summary_text: &str,
    charts: &[(&str, &str)],
    levels: &[LevelSummary],
    text: &ChartText,
) -> String {
    let title = match text.title.is_empty() {
        true => "netagg report",
        false => &text.title,
    };
    let mut page = Page::new(title);
    ctx.add_to(&mut page);
    page.section("summary", "Summary", |page| {
        page.summary(summary_text);
    });
    page.section("charts", "Charts", |page| {
        for (svg, caption) in charts {
            page.figure(svg, caption);
        }
    });
    page.section("levels", "Levels", |page| {
        page.table(&level_table(levels, &text.units));
    });
    ctx.add_reproduce_to(&mut page);
    page.finish()
}

/// The level table's figures: heading, whether it is in the run's units,
/// the figure and its decimal places.
type LevelFigure = (&'static str, bool, fn(&LevelSummary) -> f64, usize);
const LEVEL_FIGURES: [LevelFigure; 10] = [
    ("average", true, |l| l.average, 3),
    ("min", true, |l| l.min, 3),
    ("max", true, |l| l.max, 3),
    ("SUT CPU %", false, |l| l.cpu_util, 1),
    ("busiest CPU %", false, |l| l.cpu_peak, 1),
    ("us/unit", false, |l| l.service_demand, 3),
    ("packets/s out", false, |l| l.packets_out, 0),
    ("packets/s in", false, |l| l.packets_in, 0),
    ("min/max", false, |l| l.min_over_max, 3),
    ("Jain", false, |l| l.jain, 3),
];

fn level_table(levels: &[LevelSummary], units: &str) -> Table {
    let figures = LEVEL_FIGURES
        .iter()
        .map(|&(heading, in_units, _, _)| match in_units {
            true => format!("{heading} {units}"),
            false => heading.to_string(),
        });
    let head = std::iter::once("streams".to_string())
        .chain(figures)
        .chain(["trustworthy".to_string()]);
    let mut table = Table::new(head);
    let peak = super::summary::peak(levels);
    for (index, l) in levels.iter().enumerate() {
        let mark = if peak == Some(index) { " (peak)" } else { "" };
        let figures = LEVEL_FIGURES
            .iter()
            .map(|&(_, _, value, places)| Cell::number(format!("{:.places$}", value(l))));
        let trustworthy = match l.health.unhealthy().count() {
            0 => Cell::text("yes"),
            n => Cell::new(
                "text bad",
                format!("no: {n} streams stalled or moved nothing"),
            ),
        };
        table.row(
            std::iter::once(Cell::label(format!("{}{mark}", l.streams)))
                .chain(figures)
                .chain([trustworthy]),
        );
    }
    table
}
