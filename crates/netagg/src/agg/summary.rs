//! What a recorded run says: per level the average, minimum and maximum of
//! the aggregate over its window (the level minus a settling margin at each
//! end, as post_proc.py does), the SUT's CPU and packet rates, service demand,
//! per-stream fairness and whether the level is trustworthy (`health`); the
//! peak level; and the series and report files (text, CSV, JSON).

use super::burst::BurstTrial;
use super::failures::{self, FailureGroup, StreamFailure};
use super::health::{self, LevelHealth};
use super::runner::{Recording, Sample};
use netperf_data::measure::demand::{service_demand_of_rate, DemandUnit, Precision};
use serde_json::json;
use std::fmt::Write as _;

/// Settling margin excluded at each end of a level (post_proc uses one second).
pub const MARGIN_SECS: f64 = 1.0;

/// One level's figures over its window.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelSummary {
    pub streams: u32,
    pub window: (f64, f64),
    pub samples: usize,
    /// Which samples (indices into the recording's series) the window holds.
    pub sample_indices: Vec<usize>,
    pub average: f64,
    pub min: f64,
    pub max: f64,
    pub cpu_util: f64,
    pub cpu_peak: f64,
    pub packets_out: f64,
    pub packets_in: f64,
    /// CPU microseconds of the SUT per unit of work (all CPUs).
    pub service_demand: f64,
    /// Per-stream average rates over the window.
    pub stream_rates: Vec<f64>,
    /// Slowest over fastest stream, and Jain's fairness index.
    pub min_over_max: f64,
    pub jain: f64,
    /// Each stream's work, timeouts and stalls over the level.
    pub health: LevelHealth,
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

pub use netperf_data::measure::aggregate::jain;

/// A level's service demand (-1 when not measured): the SUT's CPU over the
/// aggregate rate, per transaction, or per KB for bit rates (netperf's
/// usec/Tran and usec/KB), by netperf's formula in double precision.
fn level_demand(average: f64, units_are_bits: bool, cpu_util: f64, num_cpus: u32) -> f64 {
    let (raw_per_sec, unit) = if units_are_bits {
        (average * 1e6 / 8.0, DemandUnit::PerKilobyte)
    } else {
        (average, DemandUnit::PerTransaction)
    };
    if raw_per_sec > 0.0 && cpu_util >= 0.0 {
        service_demand_of_rate(raw_per_sec, unit, cpu_util, num_cpus, Precision::Double)
    } else {
        -1.0
    }
}

/// The samples of a level that lie inside its window (indices into the
/// series); when the level is too short for the margins, all of its samples
/// but the first.
fn window(rec: &Recording, level: usize) -> (Vec<usize>, (f64, f64)) {
    let l = &rec.levels[level];
    let (from, to) = (l.start + MARGIN_SECS, l.end - MARGIN_SECS);
    let of_level = || (0..rec.samples.len()).filter(|&i| rec.samples[i].level == level);
    let inside: Vec<usize> = of_level()
        .filter(|&i| rec.samples[i].t > from && rec.samples[i].t <= to + 1e-6)
        .collect();
    if !inside.is_empty() {
        return (inside, (from, to));
    }
    (of_level().skip(1).collect(), (l.start, l.end))
}

pub fn summarize(rec: &Recording, num_cpus: u32, units_are_bits: bool) -> Vec<LevelSummary> {
    (0..rec.levels.len())
        .map(|level| {
            let (indices, window) = window(rec, level);
            let samples: Vec<&Sample> = indices.iter().map(|&i| &rec.samples[i]).collect();
            let streams = rec.levels[level].streams;
            let average = mean(samples.iter().map(|s| s.aggregate));
            let stream_rates: Vec<f64> = (0..streams as usize)
                .map(|i| {
                    mean(
                        samples
                            .iter()
                            .filter_map(|s| s.stream_rates.get(i).copied()),
                    )
                })
                .collect();
            let fastest = stream_rates.iter().copied().fold(0.0, f64::max);
            let slowest = stream_rates.iter().copied().fold(f64::INFINITY, f64::min);
            let cpu_util = mean(samples.iter().map(|s| s.cpu_util));
            let service_demand = level_demand(average, units_are_bits, cpu_util, num_cpus);
            LevelSummary {
                streams,
                window,
                samples: samples.len(),
                sample_indices: indices.clone(),
                average,
                min: samples
                    .iter()
                    .map(|s| s.aggregate)
                    .fold(f64::INFINITY, f64::min)
                    .min(average),
                max: samples.iter().map(|s| s.aggregate).fold(0.0, f64::max),
                cpu_util,
                cpu_peak: mean(samples.iter().map(|s| s.cpu_peak)),
                packets_out: mean(samples.iter().map(|s| s.packets_out)),
                packets_in: mean(samples.iter().map(|s| s.packets_in)),
                service_demand,
                min_over_max: if fastest > 0.0 {
                    slowest / fastest
                } else {
                    0.0
                },
                jain: jain(&stream_rates),
                stream_rates,
                health: health::assess(rec, level, &indices),
            }
        })
        .collect()
}

/// The trustworthy level with the highest average; when no level is
/// trustworthy, the highest of them all (the text and JSON say so).
pub fn peak(levels: &[LevelSummary]) -> Option<usize> {
    let highest = |trusted_only: bool| {
        (0..levels.len())
            .filter(|&i| !trusted_only || levels[i].health.trustworthy())
            .max_by(|&a, &b| levels[a].average.total_cmp(&levels[b].average))
    };
    highest(true).or_else(|| highest(false))
}

/// The levels a stream stalled or moved nothing in.
pub fn untrustworthy(levels: &[LevelSummary]) -> Vec<usize> {
    (0..levels.len())
        .filter(|&i| !levels[i].health.trustworthy())
        .collect()
}

/// What the text says after the levels when some are not trustworthy.
fn peak_note(levels: &[LevelSummary]) -> Option<String> {
    let excluded = untrustworthy(levels);
    if excluded.is_empty() {
        return None;
    }
    let list: Vec<String> = excluded.iter().map(usize::to_string).collect();
    Some(if excluded.len() == levels.len() {
        "note: no level is trustworthy (streams stalled or moved nothing); the peak interval above is the highest of them".to_string()
    } else {
        format!(
            "note: level(s) {} not trustworthy (streams stalled or moved nothing) and not considered for the peak",
            list.join(", ")
        )
    })
}

/// post_proc.py's three lines for one interval ("peak interval" or
/// "interval N").
fn post_proc_lines(out: &mut String, name: &str, l: &LevelSummary, rec: &Recording, units: &str) {
    let (from, to) = (
        (rec.start_epoch + l.window.0) as i64,
        (rec.start_epoch + l.window.1) as i64,
    );
    for (what, value) in [
        ("Average", l.average),
        ("Minimum", l.min),
        ("Maximum", l.max),
    ] {
        let _ = writeln!(
            out,
            "{what} of {name} is {value:.3} {units} from {from} to {to}"
        );
    }
}

/// The text summary in post_proc.py's form (the peak interval, and with
/// `intervals` every one), then one line per level with what netagg adds.
/// How the streams ran, when some were the flows of shared tests: one
/// line, the tests themselves are in the JSON.
fn shared_line(rec: &Recording) -> Option<String> {
    let tests = &rec.shared_tests;
    let flows: usize = tests.iter().map(|t| t.streams.len()).sum();
    let threads: u32 = tests.iter().map(|t| t.threads).sum();
    (!tests.is_empty()).then(|| {
        let plural = |n: usize, one: &str, many: &str| match n {
            1 => format!("1 {one}"),
            n => format!("{n} {many}"),
        };
        format!(
            "{flows} of {} streams ran as the flows of {} (our netserver's many-flow tests), on {} in all; {} a test of its own",
            rec.streams.len(),
            plural(tests.len(), "shared test", "shared tests"),
            plural(threads as usize, "thread", "threads"),
            plural(rec.streams.len() - flows, "stream ran", "streams ran"),
        )
    })
}

pub fn text(rec: &Recording, levels: &[LevelSummary], units: &str, intervals: bool) -> String {
    let mut out = String::new();
    if let Some(p) = peak(levels) {
        post_proc_lines(&mut out, "peak interval", &levels[p], rec, units);
    }
    if intervals {
        for (i, l) in levels.iter().enumerate() {
            post_proc_lines(&mut out, &format!("interval {i}"), l, rec, units);
        }
    }
    let work = health::work_name(units);
    for (l, run) in levels.iter().zip(&rec.levels) {
        let mut to = run
            .host
            .as_ref()
            .map(|h| format!(" to {h}"))
            .unwrap_or_default();
        if run.requested != l.streams {
            let _ = write!(to, " (of {} asked)", run.requested);
        }
        let mark = if l.health.trustworthy() {
            ""
        } else {
            " [NOT TRUSTWORTHY]"
        };
        let _ = writeln!(
            out,
            "{:>4} streams{to}: average {:.3} min {:.3} max {:.3} {units}; SUT CPU {:.1}% (busiest {:.1}%), {:.3} us/unit; packets/s out {:.0} in {:.0}; fairness min/max {:.3} Jain {:.3}{mark}",
            l.streams, l.average, l.min, l.max, l.cpu_util, l.cpu_peak, l.service_demand,
            l.packets_out, l.packets_in, l.min_over_max, l.jain
        );
        health_lines(&mut out, &l.health, work);
    }
    if let Some(note) = peak_note(levels) {
        let _ = writeln!(out, "{note}");
    }
    if let Some(line) = shared_line(rec) {
        let _ = writeln!(out, "{line}");
    }
    for line in failure_lines(rec) {
        let _ = writeln!(out, "failed: {line}");
    }
    out
}

/// `failures` grouped per level, host, phase and reason; the hints name
/// `port` and the streams the plan runs on each of `hosts` (`planned`).
pub fn group_failures(
    failures: &[StreamFailure],
    hosts: &[String],
    planned: &[usize],
    port: u16,
) -> Vec<FailureGroup> {
    failures::group(failures, port, |host| {
        hosts
            .iter()
            .position(|h| h == host)
            .and_then(|i| planned.get(i).copied())
            .unwrap_or(0)
    })
}

/// The run's failures grouped per level, host, phase and reason.
pub fn failure_groups(rec: &Recording) -> Vec<FailureGroup> {
    group_failures(&rec.failures, &rec.hosts, &rec.planned_per_host, rec.port)
}

/// One line per group of `failures` (a subset of the run's): host, count,
/// reason and hint.
pub fn failure_lines_of(rec: &Recording, failures: &[StreamFailure]) -> Vec<String> {
    group_failures(failures, &rec.hosts, &rec.planned_per_host, rec.port)
        .iter()
        .map(|g| g.line(rec.levels.get(g.level).map_or(0, |l| l.requested)))
        .collect()
}

/// One line per group of the run's failures.
pub fn failure_lines(rec: &Recording) -> Vec<String> {
    failure_lines_of(rec, &rec.failures)
}

/// Under a level's line: its streams' work and timeouts in one line, then
/// one line for each stream that stalled or moved nothing.
fn health_lines(out: &mut String, h: &LevelHealth, work: &str) {
    let Some((fewest, most)) = h.moved_range() else {
        return;
    };
    let with_timeouts = h.streams.iter().filter(|s| s.timeouts > 0).count();
    let unhealthy: Vec<_> = h.unhealthy().collect();
    let _ = writeln!(
        out,
        "      per stream: {work} {fewest} to {most}; timeouts {} (in {with_timeouts} streams); stalled or moved nothing: {}",
        h.timeouts(),
        unhealthy.len()
    );
    for s in unhealthy {
        let _ = writeln!(out, "      {}", health::describe(s, work));
    }
}

/// The per-second series as CSV: one row per sample; `in_window` marks the
/// samples a level's figures are computed from.
pub fn csv(rec: &Recording, levels: &[LevelSummary]) -> String {
    let mut out = String::from(
        "t_s,epoch_s,level,streams,in_window,aggregate,cpu_util,cpu_peak,packets_out_per_s,packets_in_per_s,sample_spread_us,level_trustworthy,stream_rates\n",
    );
    for (index, s) in rec.samples.iter().enumerate() {
        let in_window = levels
            .get(s.level)
            .is_some_and(|l| l.sample_indices.contains(&index));
        let trusted = levels.get(s.level).is_none_or(|l| l.health.trustworthy());
        let rates: Vec<String> = s.stream_rates.iter().map(|r| format!("{r:.3}")).collect();
        let _ = writeln!(
            out,
            "{:.3},{:.3},{},{},{},{:.3},{:.2},{:.2},{:.1},{:.1},{:.1},{},{}",
            s.t,
            s.epoch,
            s.level,
            rec.levels[s.level].streams,
            u8::from(in_window),
            s.aggregate,
            s.cpu_util,
            s.cpu_peak,
            s.packets_out,
            s.packets_in,
            s.spread_us,
            u8::from(trusted),
            rates.join(";")
        );
    }
    out
}

/// The burst search's trials, one line each, and the burst used.
pub fn burst_search_text(trials: &[BurstTrial], used: u32, units: &str) -> String {
    let mut out = String::new();
    for t in trials {
        let _ = writeln!(out, "burst search: -b {:<5} {:.3} {units}", t.burst, t.rate);
    }
    let _ = writeln!(out, "burst used: {used}");
    out
}

/// A level's stream health as JSON: per stream its work, timeouts and
/// whether it stalled or moved nothing.
fn health_json(h: &LevelHealth, work: &str) -> serde_json::Value {
    let ids = |pick: fn(&health::StreamHealth) -> bool| -> Vec<usize> {
        h.streams.iter().filter(|s| pick(s)).map(|s| s.id).collect()
    };
    json!({
        "trustworthy": h.trustworthy(),
        "timeouts": h.timeouts(),
        "stalled_streams": ids(health::StreamHealth::stalled),
        "streams_that_moved_nothing": ids(health::StreamHealth::moved_nothing),
        "per_stream": h.streams.iter().map(|s| json!({
            "stream": s.id,
            "host": s.host,
            work: s.moved,
            "timeouts": s.timeouts,
            "stalled": s.stalled(),
            "moved_nothing": s.moved_nothing(),
            "longest_idle_s": s.longest_idle_s,
        })).collect::<Vec<_>>(),
    })
}

/// `doc` (from `json`) with what the Kubernetes API said of the load
/// generators under "kubernetes": each host's pod, node and zone (in the
/// order of "hosts"), the Services in front of them and where the run was.
pub fn with_kubernetes(doc: &str, found: &netperf_k8s::Discovery) -> String {
    with_members(doc, [("kubernetes", json!(found))])
}

/// `doc` with `members` added at its top level. Here with `json`, which
/// makes the document, so that `report` can add its context without
/// `summary` naming the page.
pub(super) fn with_members<const N: usize>(
    doc: &str,
    members: [(&str, serde_json::Value); N],
) -> String {
    let Ok(serde_json::Value::Object(mut map)) = serde_json::from_str(doc) else {
        return doc.to_string();
    };
    for (key, value) in members {
        map.insert(key.into(), value);
    }
    serde_json::to_string_pretty(&map).unwrap_or_else(|_| doc.to_string()) + "\n"
}

/// Everything as one JSON document; `loss_timeout` is the streams' `-e`
/// (0 when recovery is off, None for kinds with no datagrams to lose).
pub fn json(
    rec: &Recording,
    levels: &[LevelSummary],
    kind: &str,
    units: &str,
    burst: u32,
    search: Option<&[BurstTrial]>,
    loss_timeout: Option<u32>,
) -> String {
    let spreads: Vec<f64> = rec.samples.iter().map(|s| s.spread_us).collect();
    let max_spread = spreads.iter().copied().fold(0.0, f64::max);
    let work = health::work_name(units);
    let peak_level = peak(levels);
    let doc = json!({
        "format": netperf_base::saved::RAMP.format,
        "version": netperf_base::saved::RAMP.version,
        "kind": kind,
        "units": units,
        "hosts": rec.hosts,
        "burst": burst,
        "burst_search": search.map(|t| t.iter().map(|t| json!({"burst": t.burst, "rate": t.rate})).collect::<Vec<_>>()),
        "interfaces": rec.interfaces,
        "start_epoch_s": rec.start_epoch,
        "sample_spread_us": { "max": max_spread, "mean": mean(spreads.iter().copied()) },
        "loss_timeout_s": loss_timeout,
        "stall_rule": format!("a stream stalled when consecutive samples of its level, one of them inside the level's window, saw it move nothing for more than {} sampling intervals", health::STALL_INTERVALS),
        "sample_interval_s": rec.sample_interval,
        "coordinator_priority_raised": rec.coordinator_raised,
        "peak_level": peak_level,
        "peak_trustworthy": peak_level.map(|p| levels[p].health.trustworthy()),
        "untrustworthy_levels": untrustworthy(levels),
        "levels": levels.iter().zip(&rec.levels).map(|(l, run)| json!({
            "streams": l.streams,
            "streams_requested": run.requested,
            "streams_late": run.late,
            "setup_s": [run.setup_start, run.start],
            "measured_s": [run.start, run.end],
            "window_s": [l.window.0, l.window.1],
            "samples": l.samples,
            "average": l.average, "min": l.min, "max": l.max,
            "cpu_util_percent": l.cpu_util, "cpu_busiest_percent": l.cpu_peak,
            "service_demand_us_per_unit": l.service_demand,
            "packets_out_per_s": l.packets_out, "packets_in_per_s": l.packets_in,
            "stream_rates": l.stream_rates,
            "fairness": { "min_over_max": l.min_over_max, "jain": l.jain },
            "trustworthy": l.health.trustworthy(),
            "health": health_json(&l.health, work),
        })).collect::<Vec<_>>(),
        "series": rec.samples.iter().map(|s| json!({
            "t_s": s.t, "epoch_s": s.epoch, "level": s.level, "aggregate": s.aggregate,
            "stream_rates": s.stream_rates, "spread_us": s.spread_us,
            "cpu_util_percent": s.cpu_util, "packets_out_per_s": s.packets_out,
            "packets_in_per_s": s.packets_in,
        })).collect::<Vec<_>>(),
        "streams": rec.streams.iter().enumerate().map(|(id, s)| json!({
            "id": id, "host": s.host, "level": s.level,
            "ready_s": s.ready_s, "running_s": s.running_s,
            "final_line": s.final_line.is_some(),
            "flow": s.flow,
            "failure": rec.failures.iter().find(|f| f.stream == id).map(|f| json!({
                "phase": f.phase.name(), "reason": f.reason.key(), "detail": f.detail,
            })),
        })).collect::<Vec<_>>(),
        "shared_tests": rec.shared_tests.iter().map(|t| json!({
            "host": t.host, "level": t.level, "streams": t.streams,
            "threads": t.threads, "final_line": t.final_line,
        })).collect::<Vec<_>>(),
        "failures": failure_lines(rec),
        "failures_by_host": failure_groups(rec).iter().map(FailureGroup::to_json).collect::<Vec<_>>(),
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::runner::LevelRun;
    use super::*;

    fn sample(t: f64, level: usize, rates: &[f64]) -> Sample {
        Sample {
            t,
            epoch: 1000.0 + t,
            level,
            aggregate: netperf_data::measure::aggregate::sum(rates.iter().copied().map(Some))
                .unwrap_or(0.0),
            stream_rates: rates.to_vec(),
            stream_moved: rates.iter().map(|&r| r as u64).collect(),
            stream_timeouts: vec![0; rates.len()],
            spread_us: 1.0,
            cpu_util: 50.0,
            cpu_peak: 80.0,
            packets_out: 10.0,
            packets_in: 10.0,
        }
    }

    #[test]
    fn levels_average_their_window_and_the_peak_is_found() {
        let mut samples = Vec::new();
        for t in 1..=4 {
            samples.push(sample(f64::from(t), 0, &[100.0]));
        }
        for t in 5..=8 {
            samples.push(sample(f64::from(t), 1, &[90.0, 110.0]));
        }
        let rec = Recording {
            levels: vec![
                LevelRun {
                    streams: 1,
                    requested: 1,
                    members: vec![(0, "lg1".into())],
                    host: None,
                    setup_start: 0.0,
                    start: 0.0,
                    end: 4.0,
                    late: 0,
                },
                LevelRun {
                    streams: 2,
                    requested: 2,
                    members: vec![(0, "lg1".into()), (1, "lg1".into())],
                    host: None,
                    setup_start: 4.0,
                    start: 4.0,
                    end: 8.0,
                    late: 0,
                },
            ],
            samples,
            hosts: vec!["lg1".into()],
            port: 12865,
            planned_per_host: vec![2],
            interfaces: vec!["lo".into()],
            start_epoch: 1000.0,
            sample_interval: 1.0,
            ..Recording::default()
        };
        let levels = summarize(&rec, 2, false);
        assert_eq!(levels[0].samples, 2, "t=2,3 inside 1..3");
        assert_eq!(levels[0].average, 100.0);
        assert_eq!(levels[1].average, 200.0);
        assert_eq!(levels[1].stream_rates, [90.0, 110.0]);
        assert!((levels[1].jain - 0.99).abs() < 0.01);
        assert!((levels[1].min_over_max - 90.0 / 110.0).abs() < 1e-9);
        assert_eq!(peak(&levels), Some(1));
        let text = text(&rec, &levels, "Trans/s", true);
        assert!(
            text.starts_with("Average of peak interval is 200.000 Trans/s from 1005 to 1007\n"),
            "{text}"
        );
        assert!(text.contains("Minimum of peak interval is 200.000 Trans/s from 1005 to 1007\n"));
        assert!(text.contains("Average of interval 0 is 100.000 Trans/s from 1001 to 1003\n"));
        // 50% of 2 CPUs for 200 transactions/s: 5000 us per transaction.
        assert_eq!(levels[1].service_demand, 5000.0);
        let csv = csv(&rec, &levels);
        assert_eq!(csv.lines().count(), 9);
        assert_eq!(
            csv.lines()
                .filter(|l| l.split(',').nth(4) == Some("1"))
                .count(),
            4
        );
        let doc: serde_json::Value =
            serde_json::from_str(&json(&rec, &levels, "tps", "Trans/s", 4, None, Some(1))).unwrap();
        assert_eq!(doc["peak_level"], 1);
        assert_eq!(doc["series"].as_array().unwrap().len(), 8);
        assert_eq!(doc["peak_trustworthy"], true);
        assert_eq!(doc["loss_timeout_s"], 1);
        assert_eq!(
            doc["levels"][1]["health"]["per_stream"][1]["transactions"],
            440
        );
        assert!(!text.contains("TRUSTWORTHY") && !text.contains("note:"));
    }

    #[test]
    fn a_level_is_charged_its_cpu_per_kb_or_transaction() {
        // 8 10^6bits/s = 976.5625 KB/s at 50 % of 2 CPUs: 10^6 us/s over that.
        assert_eq!(level_demand(8.0, true, 50.0, 2), 1024.0);
        assert_eq!(level_demand(200.0, false, 50.0, 2), 5000.0);
        // Nothing moved, or no CPU measured: not measured.
        assert_eq!(level_demand(0.0, true, 50.0, 2), -1.0);
        assert_eq!(level_demand(200.0, false, -1.0, 2), -1.0);
        assert_eq!(level_demand(f64::NAN, false, 50.0, 2), -1.0);
    }

    /// Level 0 (0 to 4 s): one stream; level 1 (4 to 10 s): two streams,
    /// the second stalled from 8 s on (or, with `stop_level_0`, the first
    /// level's stream stalls from 2 s on instead).
    pub(crate) fn stalling_recording(stop_level_0: bool) -> Recording {
        let mut samples = Vec::new();
        for t in 1..=4 {
            let r = if stop_level_0 && t >= 2 { 0.0 } else { 100.0 };
            samples.push(sample(f64::from(t), 0, &[r]));
        }
        for t in 5..=10 {
            let second = if t >= 8 && !stop_level_0 { 0.0 } else { 300.0 };
            samples.push(sample(f64::from(t), 1, &[100.0, second]));
        }
        let run = |streams: u32, start: f64, end: f64| LevelRun {
            streams,
            members: (0..streams as usize)
                .map(|i| (i, format!("lg{i}")))
                .collect(),
            requested: streams,
            host: None,
            setup_start: start,
            start,
            end,
            late: 0,
        };
        Recording {
            levels: vec![run(1, 0.0, 4.0), run(2, 4.0, 10.0)],
            samples,
            hosts: vec!["lg0".into(), "lg1".into()],
            port: 12865,
            planned_per_host: vec![1, 1],
            start_epoch: 1000.0,
            sample_interval: 1.0,
            ..Recording::default()
        }
    }

    #[test]
    fn a_level_with_a_stalled_stream_is_marked_and_not_taken_as_the_peak() {
        let rec = stalling_recording(false);
        let levels = summarize(&rec, 2, false);
        // Level 1's average (the zeros included) is still the highest.
        assert!(levels[1].average > levels[0].average);
        assert!(!levels[1].health.trustworthy());
        assert_eq!(peak(&levels), Some(0));
        assert_eq!(untrustworthy(&levels), [1]);
        let text = text(&rec, &levels, "Trans/s", false);
        assert!(
            text.starts_with("Average of peak interval is 100.000 Trans/s"),
            "{text}"
        );
        assert!(text.contains("Jain 0.962 [NOT TRUSTWORTHY]\n"), "{text}");
        assert!(
            text.contains("      stream 1 to lg1: 900 transactions, 0 timeouts, stalled (no progress for 3.0 s)\n"),
            "{text}"
        );
        assert!(text.contains("note: level(s) 1 not trustworthy"), "{text}");
        let doc: serde_json::Value =
            serde_json::from_str(&json(&rec, &levels, "tps", "Trans/s", 4, None, None)).unwrap();
        assert_eq!(doc["peak_level"], 0);
        assert_eq!(doc["peak_trustworthy"], true);
        assert_eq!(doc["untrustworthy_levels"], serde_json::json!([1]));
        assert_eq!(doc["levels"][1]["trustworthy"], false);
        assert_eq!(
            doc["levels"][1]["health"]["stalled_streams"],
            serde_json::json!([1])
        );
        let stalled = &doc["levels"][1]["health"]["per_stream"][1];
        assert_eq!(
            (stalled["host"].as_str(), stalled["stalled"].as_bool()),
            (Some("lg1"), Some(true))
        );
        assert!(doc["loss_timeout_s"].is_null());
        let csv = csv(&rec, &levels);
        let trusted: Vec<&str> = csv
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(11).unwrap())
            .collect();
        assert_eq!(trusted, ["1", "1", "1", "1", "0", "0", "0", "0", "0", "0"]);
    }

    #[test]
    fn when_no_level_is_trustworthy_the_highest_is_the_peak_and_the_text_says_so() {
        let rec = stalling_recording(true);
        let mut levels = summarize(&rec, 2, false);
        assert!(!levels[0].health.trustworthy());
        // Make the second level untrustworthy too.
        levels[1].health.streams[0].moved = 0;
        assert_eq!(peak(&levels), Some(1));
        let text = text(&rec, &levels, "Trans/s", false);
        assert!(text.contains("note: no level is trustworthy"), "{text}");
        let doc: serde_json::Value =
            serde_json::from_str(&json(&rec, &levels, "tps", "Trans/s", 4, None, None)).unwrap();
        assert_eq!(doc["peak_trustworthy"], false);
    }
}
