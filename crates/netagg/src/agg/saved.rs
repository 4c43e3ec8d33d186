//! A netagg run read back from its JSON (`netagg report netagg_tps.json`):
//! the series, the levels with their windows, averages and stream health,
//! the context and the page's texts — what the charts and the page draw, so
//! a report is drawn again from the JSON alone (on another machine, after a
//! change to the charts). Every member is checked; a document that is not
//! netagg's, or lacks what the page needs, is a clear error.

use super::charts::ChartText;
use super::health::{LevelHealth, StreamHealth};
use super::report::Drawing;
use super::runner::{LevelRun, Recording, Sample};
use super::summary::LevelSummary;
use netperf_base::saved::{count, list, number, numbers, seconds, span, text, RAMP};
use netperf_pages::context::RunContext;
use netperf_pages::rate::is_drawable_rate;
use serde_json::Value;

/// A saved run: its kind's name, what the charts draw and the page's texts.
pub struct Saved {
    pub kind: String,
    pub recording: Recording,
    pub levels: Vec<LevelSummary>,
    pub drawing: Drawing,
}

/// The chart's texts a saved page keeps, in `units`.
pub fn chart_text(page: &Value, units: String) -> Result<ChartText, String> {
    Ok(ChartText {
        title: text(page, "title")?,
        annotation: text(page, "annotation")?,
        units,
    })
}

/// A rate or an average of rates, as a page can draw it.
fn rate(v: &Value, key: &str) -> Result<f64, String> {
    let r = number(v, key)?;
    match is_drawable_rate(r) {
        true => Ok(r),
        false => Err(format!("\"{key}\" is not a rate a run measures: {r}")),
    }
}

fn rates(v: &Value, key: &str) -> Result<Vec<f64>, String> {
    let all = numbers(v, key)?;
    match all.iter().find(|r| !is_drawable_rate(**r)) {
        Some(r) => Err(format!("\"{key}\" holds a rate no run measures: {r}")),
        None => Ok(all),
    }
}

/// netagg's JSON document, read back.
pub fn read(doc: &Value) -> Result<Saved, String> {
    match netperf_base::saved::identify(doc)? {
        &RAMP => {}
        other => return Err(format!("not a netagg ramp but {}", other.format)),
    }
    let kind = text(doc, "kind")?;
    // It names the files written: only a kind netagg knows.
    if !super::plan::KINDS.iter().any(|k| k.name == kind) {
        return Err(format!("unknown kind {kind:?}"));
    }
    let units = text(doc, "units")?;
    let context = RunContext::from_json(doc)
        .ok_or("no \"context\": the run was saved by a netagg before reports carried it")?;
    let page = doc.get("page").ok_or("no \"page\" member")?;
    let samples = list(doc, "series")?
        .iter()
        .map(|s| {
            let stream_rates = rates(s, "stream_rates")?;
            Ok(Sample {
                t: seconds(s, "t_s")?,
                epoch: number(s, "epoch_s")?,
                level: count(s, "level")?,
                aggregate: rate(s, "aggregate")?,
                stream_moved: stream_rates.iter().map(|&r| u64::from(r > 0.0)).collect(),
                stream_rates,
                spread_us: number(s, "spread_us")?,
                cpu_util: number(s, "cpu_util_percent")?,
                packets_out: number(s, "packets_out_per_s")?,
                packets_in: number(s, "packets_in_per_s")?,
                ..Sample::default()
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let mut runs = Vec::new();
    let mut levels = Vec::new();
    for l in list(doc, "levels")? {
        let (run, summary) = level(l, super::health::work_name(&units))?;
        runs.push(run);
        levels.push(summary);
    }
    if let Some(bad) = samples.iter().find(|s| s.level >= levels.len().max(1)) {
        return Err(format!(
            "a sample names level {}, beyond the run's {}",
            bad.level,
            levels.len()
        ));
    }
    let hosts = list(doc, "hosts")?
        .iter()
        .map(|h| {
            h.as_str()
                .map(str::to_string)
                .ok_or("\"hosts\" holds a non-text")
        })
        .collect::<Result<Vec<_>, _>>()?;
    let recording = Recording {
        levels: runs,
        samples,
        hosts,
        interfaces: list(doc, "interfaces")?
            .iter()
            .filter_map(|i| i.as_str().map(str::to_string))
            .collect(),
        start_epoch: number(doc, "start_epoch_s")?,
        sample_interval: number(doc, "sample_interval_s")?,
        ..Recording::default()
    };
    let drawing = Drawing {
        context,
        summary_text: text(page, "summary_text")?,
        chart_text: chart_text(page, units)?,
        individual: page
            .get("individual")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    };
    Ok(Saved {
        kind,
        recording,
        levels,
        drawing,
    })
}

/// One level as it ran and as it was summarised.
fn level(l: &Value, work: &str) -> Result<(LevelRun, LevelSummary), String> {
    let (setup_start, start) = span(l, "setup_s")?;
    let (_, end) = span(l, "measured_s")?;
    let health = l.get("health").ok_or("a level has no \"health\"")?;
    let streams: Vec<StreamHealth> = list(health, "per_stream")?
        .iter()
        .map(|s| {
            // The work is named for the kind ("transactions", "bytes").
            let moved = s.get(work).and_then(Value::as_u64).unwrap_or(0);
            Ok(StreamHealth {
                id: count(s, "stream")?,
                host: text(s, "host")?,
                moved,
                timeouts: count(s, "timeouts")? as u64,
                longest_idle_s: number(s, "longest_idle_s")?,
                stalled: s.get("stalled").and_then(Value::as_bool).unwrap_or(false),
            })
        })
        .collect::<Result<_, String>>()?;
    let run = LevelRun {
        streams: count(l, "streams")? as u32,
        requested: count(l, "streams_requested")? as u32,
        members: streams.iter().map(|s| (s.id, s.host.clone())).collect(),
        host: None,
        setup_start,
        start,
        end,
        late: count(l, "streams_late")?,
    };
    let fairness = l.get("fairness").ok_or("a level has no \"fairness\"")?;
    let summary = LevelSummary {
        streams: run.streams,
        window: span(l, "window_s")?,
        samples: count(l, "samples")?,
        sample_indices: Vec::new(),
        average: rate(l, "average")?,
        min: rate(l, "min")?,
        max: rate(l, "max")?,
        cpu_util: number(l, "cpu_util_percent")?,
        cpu_peak: number(l, "cpu_busiest_percent")?,
        packets_out: number(l, "packets_out_per_s")?,
        packets_in: number(l, "packets_in_per_s")?,
        service_demand: number(l, "service_demand_us_per_unit")?,
        stream_rates: rates(l, "stream_rates")?,
        min_over_max: number(fairness, "min_over_max")?,
        jain: number(fairness, "jain")?,
        health: LevelHealth { streams },
    };
    Ok((run, summary))
}
