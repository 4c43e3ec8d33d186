//! A finished netagg run handed to the results database (`--store`): the
//! recording and level summaries put in the plain terms the store keeps,
//! so the store below never depends on how netagg runs.

use super::plan::KindSpec;
use super::runner::Recording;
use super::summary::LevelSummary;
use netperf_results::netagg::{NetaggLevel, NetaggRun};

/// The run as the store takes it. `levels` are the summaries of
/// `recording`'s levels, one each, in the same order.
pub fn stored_run(
    kind: &KindSpec,
    recording: &Recording,
    levels: &[LevelSummary],
    summary_json: &str,
    command_line: Vec<String>,
) -> NetaggRun {
    NetaggRun {
        kind: kind.name.to_string(),
        test: kind.test.to_string(),
        units: kind.units.to_string(),
        hosts: recording.hosts.clone(),
        start_epoch: recording.start_epoch,
        failed_streams: recording.failures.len(),
        levels: recording
            .levels
            .iter()
            .zip(levels)
            .map(|(run, summary)| NetaggLevel {
                streams: summary.streams,
                host: run.host.clone(),
                start: run.start,
                end: run.end,
                samples: summary.samples,
                average: summary.average,
                min: summary.min,
                max: summary.max,
                cpu_util: summary.cpu_util,
                cpu_peak: summary.cpu_peak,
                service_demand: summary.service_demand,
                packets_out: summary.packets_out,
                packets_in: summary.packets_in,
                min_over_max: summary.min_over_max,
                jain: summary.jain,
                timeouts: summary.health.timeouts(),
                unhealthy_streams: summary.health.unhealthy().count(),
            })
            .collect(),
        summary_json: summary_json.to_string(),
        command_line,
    }
}
