//! `/`: the watch as a live page, made with the one page builder and the
//! one chart builder, with no script (the browser loads it again by a
//! `<meta http-equiv="refresh">`). From the top: the status (plan,
//! schedule, next run, a failing store or an unreadable database as a
//! warning), the last runs with their outcomes and reasons, each series'
//! history with its change points marked and, beside each, the medians
//! either side, the relative change with its interval and what else
//! changed in the stored context, then the newest run as its own page
//! draws it (the mesh's heatmaps, an experiment's or matrix's tables).

use super::data::{View, MAX_RESULTS};
use super::metrics::outcome_name;
use crate::watch::state::RunEntry;
use netperf_pages::chart::{Axis, Look, Markers, Plot, Series as Line, Shape, BLUE, VERMILLION};
use netperf_pages::page::{Cell, Page, Table};
use netperf_results::changes::{changed_text, percent, Found};
use netperf_results::history::Series;

/// How many of the last runs the page lists.
const RUNS_SHOWN: usize = 20;
/// Charts on the page at most (a matrix watch can have hundreds of
/// series; the page stays a few megabytes and /api/series has them all).
const MAX_CHARTS: usize = 48;
/// Dots on every point up to this many (beyond, a line reads better).
const DOTS_UP_TO: usize = 200;

/// Seconds between reloads: a quarter of the schedule, within 10 s to 1 min.
fn refresh_seconds(every: f64) -> u32 {
    (every / 4.0).clamp(10.0, 60.0) as u32
}

fn seconds_text(s: f64) -> String {
    match s {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} min", s / 60.0),
        s if s < 172_800.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} days", s / 86_400.0),
    }
}

/// The page of `view`.
pub fn render(view: &View) -> String {
    let status = &view.status;
    let mut page = Page::refreshed(
        &format!("netagg watch {}", status.name),
        refresh_seconds(status.every_seconds),
    );
    page.section("status", "Status", |p| {
        if let Some(e) = &status.store_error {
            p.caution(&format!(
                "Storing runs fails: {e}. {} measured run(s) wait in the spool and are stored when it works again.",
                status.pending
            ));
        }
        if let Some(e) = &view.stored.error {
            p.caution(&format!("The history cannot be read: {e}."));
        }
        let now = match (status.running, view.until_next()) {
            (true, _) => "a run is measuring now".to_string(),
            (false, Some(s)) => format!("next run in {}", seconds_text(s)),
            (false, None) => "no run scheduled".to_string(),
        };
        let success = view.since_success().map_or("none yet".into(), |s| {
            format!("{} ago", seconds_text(s))
        });
        let items = [
            ("Watch", format!("{} (results tagged watch={})", status.name, status.name)),
            ("Database", status.db.display().to_string()),
            ("Every", seconds_text(status.every_seconds)),
            ("Started (UTC)", status.started.clone()),
            ("Now", now),
            ("Last run that measured", success),
            ("Waiting to be stored", status.pending.to_string()),
        ];
        let items: Vec<(&str, &str)> = items.iter().map(|(k, v)| (*k, v.as_str())).collect();
        p.labelled_list("status", &items);
        p.heading("Plan").pre(&status.plan.join("\n"));
    });
    page.section("runs", "Last runs", |p| {
        if status.runs.is_empty() {
            p.paragraph("No run has finished since the watch started.");
            return;
        }
        p.table(&runs_table(status.runs.iter().rev().take(RUNS_SHOWN)));
    });
    page.section("series", "History and change points", |p| {
        series_section(p, view);
    });
    latest(&mut page, view);
    page.finish()
}

fn runs_table<'a>(runs: impl Iterator<Item = &'a RunEntry>) -> Table {
    let mut table =
        Table::new(["run", "started (UTC)", "ended", "outcome", "stored", "why"]).of_words();
    for r in runs {
        table.row([
            Cell::number(r.sequence.to_string()),
            Cell::label(&r.started),
            Cell::label(&r.ended),
            Cell::label(outcome_name(r.outcome)),
            Cell::label(if r.stored { "yes" } else { "waiting" }),
            Cell::text(r.reason.clone().unwrap_or_default()),
        ]);
    }
    table
}

fn series_section(p: &mut Page, view: &View) {
    let stored = &view.stored;
    let changes = &view.status.changes;
    if stored.series.is_empty() {
        p.paragraph("Nothing measured is stored for this watch yet.");
    }
    let mut about = format!(
        "Each chart: one series (one metric of one test between the same ends), a point per measured run; rings mark the change points the last search found{}.",
        view.status
            .changes_searched
            .as_deref()
            .map_or(String::new(), |t| format!(" ({t})"))
    );
    if stored.truncated {
        about.push_str(&format!(
            " Only the newest {MAX_RESULTS} stored results of the watch are drawn; `netagg results changes --tag watch={}` reads them all.",
            view.status.name
        ));
    }
    p.note(&about);
    if stored.series.len() > MAX_CHARTS {
        p.caution(&format!(
            "{} series; the first {MAX_CHARTS} are drawn (all are in /api/series and /metrics).",
            stored.series.len()
        ));
    }
    for s in stored.series.iter().take(MAX_CHARTS) {
        let mine: Vec<&Found> = changes.iter().filter(|c| c.series == s.name).collect();
        p.heading(&s.name);
        p.figure(&chart(s, &mine), &caption(s, mine.len()));
        if !mine.is_empty() {
            p.table(&changes_table(&mine));
        }
    }
    let drawn = &stored.series[..stored.series.len().min(MAX_CHARTS)];
    let elsewhere: Vec<&Found> = changes
        .iter()
        .filter(|c| !drawn.iter().any(|s| s.name == c.series))
        .collect();
    if !elsewhere.is_empty() {
        p.heading("Change points of series not drawn");
        p.table(&changes_table(&elsewhere));
    }
}

fn caption(s: &Series, changes: usize) -> String {
    format!(
        "{} ({}): {} point(s), {} change point(s).",
        s.metric,
        if s.unit.is_empty() {
            "no unit"
        } else {
            &s.unit
        },
        s.points.len(),
        changes
    )
}

/// The x axis: time before the newest point, in a unit that suits the
/// span.
fn time_axis(span: f64) -> (&'static str, f64) {
    match span {
        s if s <= 120.0 => ("seconds before the newest run", 1.0),
        s if s <= 7200.0 => ("minutes before the newest run", 60.0),
        s if s <= 259_200.0 => ("hours before the newest run", 3600.0),
        _ => ("days before the newest run", 86_400.0),
    }
}

/// One series' history with its change points ringed.
fn chart(s: &Series, changes: &[&Found]) -> String {
    let at = |time: &str| netperf_base::timefmt::parse_utc(time).map(|d| d.as_secs_f64());
    let times: Vec<Option<f64>> = s.points.iter().map(|p| at(&p.time)).collect();
    let newest = times.iter().flatten().copied().fold(f64::MIN, f64::max);
    let oldest = times.iter().flatten().copied().fold(f64::MAX, f64::min);
    let (label, scale) = time_axis(newest - oldest);
    let x = |t: f64| (t - newest) / scale;
    let points: Vec<(f64, f64)> = s
        .points
        .iter()
        .zip(&times)
        .filter_map(|(p, t)| Some((x((*t)?), p.value)))
        .collect();
    let unit = if s.unit.is_empty() {
        &s.metric
    } else {
        &s.unit
    };
    let mut plot = Plot::new(&s.name, Axis::si(label), Axis::si(unit.as_str()));
    // Time runs up to the newest point at 0; a lone point gets room.
    let oldest_x = points.iter().map(|p| p.0).fold(0.0, f64::min);
    let pad = match -oldest_x {
        span if span > 0.0 => span * 0.02,
        _ => 1.0,
    };
    plot.x = plot.x.range(oldest_x - pad, pad);
    let mut line = Line::line(points, Look::new(BLUE, 0)).named("measured");
    if s.points.len() <= DOTS_UP_TO {
        line = line.dotted();
    }
    plot.series.push(line);
    let rings: Vec<(f64, f64)> = changes
        .iter()
        .filter_map(|c| {
            let i = s.points.iter().position(|p| p.time == c.time)?;
            Some((x(times[i]?), s.points[i].value))
        })
        .collect();
    plot.markers.push(Markers {
        name: "change point".into(),
        shape: Shape::Ring,
        colour: VERMILLION,
        points: rings,
    });
    plot.svg()
}

/// A row per change point: when, the medians either side, the change with
/// its interval, its significance, and what else changed.
fn changes_table(changes: &[&Found]) -> Table {
    let mut table = Table::new([
        "first run after (UTC)",
        "median before",
        "median after",
        "change",
        "interval",
        "p",
        "what else changed",
    ]);
    for c in changes {
        let interval = format!(
            "{:.0}%: [{}, {}]",
            100.0 * c.confidence,
            percent(c.change_low),
            percent(c.change_high)
        );
        table.row([
            Cell::label(&c.time),
            Cell::number(netperf_results::render::number(c.median_before)),
            Cell::number(netperf_results::render::number(c.median_after)),
            Cell::number(format!("{} {}", percent(c.change), c.direction)),
            Cell::number(interval),
            Cell::number(format!("{:.3}", c.p_value)),
            Cell::text(context_text(c)),
        ]);
    }
    table
}

fn context_text(c: &Found) -> String {
    match c.context_changes.is_empty() {
        true => "nothing stored changed (the cause is outside what runs record: the network, the peer, the load)".into(),
        false => changed_text(c),
    }
}

/// The newest stored run as its own page draws it: the mesh's heatmaps,
/// or the experiment's (or matrix's) result tables.
fn latest(page: &mut Page, view: &View) {
    let Some(text) = view.stored.latest_document.as_deref() else {
        return;
    };
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return;
    };
    use netperf_base::saved::{identify, EXPERIMENT, MATRIX, MESH};
    match identify(&doc) {
        Ok(k) if *k == MESH => {
            let Ok(mesh) = crate::mesh::model::Mesh::from_json(&doc) else {
                return;
            };
            page.section("latest", "The newest mesh", |p| {
                p.paragraph(&format!("Started {} (UTC).", mesh.started));
                for grid in &mesh.grids {
                    let caption = format!(
                        "{} ({}): rows send, columns receive; findings outlined; grey: not measured.",
                        grid.label, grid.unit
                    );
                    p.figure(&crate::mesh::output::heatmap(&mesh, grid), &caption);
                }
            });
        }
        Ok(k) if *k == EXPERIMENT || *k == MATRIX => {
            let Ok(record) = netperf_results::model::ExperimentRecord::from_saved(&doc) else {
                return;
            };
            let analysis = crate::experiment::Analysis::of(&record);
            page.section("latest", "The newest run", |p| {
                p.paragraph(&format!(
                    "Started {} (UTC), {}: its tables follow.",
                    record.started, record.status
                ));
            });
            crate::experiment::html::results(page, &record, &analysis);
        }
        _ => {}
    }
}
