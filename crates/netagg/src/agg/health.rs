//! Stream health per level: which streams moved nothing or stalled inside a
//! level's measured window, and how many receive timeouts each counted — so
//! a level whose aggregate hides stuck streams is marked as not trustworthy
//! instead of being averaged as if every stream ran.
//!
//! The rules, from the per-stream counts the coordinator reads at every
//! sampling instant (a sample "covers" the time since the one before):
//! - a stream is *idle* over consecutive samples of its level in which its
//!   count (transactions or bytes) did not move; it *stalled* when such a
//!   run, touching the level's window, covers more than `STALL_INTERVALS`
//!   sampling intervals: two idle samples in a row, or one sample the
//!   coordinator took that late;
//! - it *moved nothing* when its count did not move over the whole level;
//! - a level is trustworthy when none of its streams stalled or moved nothing.
//!
//! One idle sample of a nominal interval is not a stall: it is what a tps
//! stream shows that waits out a 1 s loss timeout (the default, as long as
//! the default sampling interval) and goes on. Samples run late by
//! milliseconds, not by half an interval, hence the half interval of slack.

use super::runner::Recording;

/// Sampling intervals an idle run must exceed to be a stall.
pub const STALL_INTERVALS: f64 = 1.5;

/// One stream over one level.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamHealth {
    /// The stream's number over the run (its .out file) and load generator.
    pub id: usize,
    pub host: String,
    /// Work units (transactions or bytes) over the whole level.
    pub moved: u64,
    /// Receive timeouts (lost datagrams recovered with `-e`) over the level.
    pub timeouts: u64,
    /// Seconds covered by its longest idle run that touches the window.
    pub longest_idle_s: f64,
    /// That run covered more than `STALL_INTERVALS` sampling intervals.
    pub stalled: bool,
}

impl StreamHealth {
    pub fn stalled(&self) -> bool {
        self.stalled
    }
    pub fn moved_nothing(&self) -> bool {
        self.moved == 0
    }
    pub fn healthy(&self) -> bool {
        !self.stalled() && !self.moved_nothing()
    }
}

/// Every stream of one level.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LevelHealth {
    pub streams: Vec<StreamHealth>,
}

impl LevelHealth {
    pub fn trustworthy(&self) -> bool {
        self.streams.iter().all(StreamHealth::healthy)
    }
    pub fn unhealthy(&self) -> impl Iterator<Item = &StreamHealth> {
        self.streams.iter().filter(|s| !s.healthy())
    }
    pub fn timeouts(&self) -> u64 {
        self.streams.iter().map(|s| s.timeouts).sum()
    }
    /// The fewest and most work units a stream moved over the level.
    pub fn moved_range(&self) -> Option<(u64, u64)> {
        let moved = self.streams.iter().map(|s| s.moved);
        Some((moved.clone().min()?, moved.max()?))
    }
}

/// One sample as the idle rule sees one stream in it.
#[derive(Debug, Clone, Copy)]
pub struct Observed {
    pub moved: u64,
    /// Seconds since the sample before.
    pub secs: f64,
    pub in_window: bool,
}

/// Seconds covered by the longest run of consecutive samples without
/// progress that has at least one sample inside the window.
pub fn longest_idle(samples: impl IntoIterator<Item = Observed>) -> f64 {
    let (mut run, mut touches, mut longest) = (0.0, false, 0.0f64);
    for o in samples {
        if o.moved == 0 {
            run += o.secs;
            touches |= o.in_window;
            if touches {
                longest = longest.max(run);
            }
        } else {
            (run, touches) = (0.0, false);
        }
    }
    longest
}

/// The health of level `level`'s streams; `window` holds the indices of the
/// samples its figures are computed from.
pub fn assess(rec: &Recording, level: usize, window: &[usize]) -> LevelHealth {
    let Some(run) = rec.levels.get(level) else {
        return LevelHealth::default();
    };
    // The level's samples (indices into the series) and the seconds each
    // covers: the first one from the level's start, after its streams' set-up
    // (which is in no sample), the others from the sample before.
    let of_level: Vec<(usize, f64)> = (0..rec.samples.len())
        .filter(|&i| rec.samples[i].level == level)
        .map(|i| {
            let before = i
                .checked_sub(1)
                .filter(|&b| rec.samples[b].level == level)
                .map_or(run.start, |b| rec.samples[b].t);
            (i, rec.samples[i].t - before)
        })
        .collect();
    // A position the coordinator did not read counts as no progress.
    let at = |values: &[u64], position: usize| values.get(position).copied().unwrap_or(0);
    let stall_after = STALL_INTERVALS * rec.sample_interval;
    let streams = run
        .members
        .iter()
        .enumerate()
        .map(|(position, (id, host))| {
            let longest_idle_s = longest_idle(of_level.iter().map(|&(i, secs)| Observed {
                moved: at(&rec.samples[i].stream_moved, position),
                secs,
                in_window: window.contains(&i),
            }));
            StreamHealth {
                id: *id,
                host: host.clone(),
                moved: of_level
                    .iter()
                    .map(|&(i, _)| at(&rec.samples[i].stream_moved, position))
                    .sum(),
                timeouts: of_level
                    .iter()
                    .map(|&(i, _)| at(&rec.samples[i].stream_timeouts, position))
                    .sum(),
                longest_idle_s,
                stalled: longest_idle_s > stall_after,
            }
        })
        .collect();
    LevelHealth { streams }
}

/// What a kind's work units are called: transactions, or bytes for the
/// kinds reported in bits per second.
pub fn work_name(units: &str) -> &'static str {
    if units.starts_with("10^6bits") {
        "bytes"
    } else {
        "transactions"
    }
}

/// What is wrong with a stream, e.g. "stream 3 to lg2: 0 transactions,
/// 0 timeouts, moved nothing, stalled (no progress for 4.0 s)".
pub fn describe(s: &StreamHealth, work: &str) -> String {
    let mut what = format!(
        "stream {} to {}: {} {work}, {} timeouts",
        s.id, s.host, s.moved, s.timeouts
    );
    if s.moved_nothing() {
        what.push_str(", moved nothing");
    }
    if s.stalled() {
        what.push_str(&format!(
            ", stalled (no progress for {:.1} s)",
            s.longest_idle_s
        ));
    }
    what
}

/// One warning line per stream that stalled or moved nothing, naming the
/// level, the stream and its load generator.
pub fn warnings(levels: &[(u32, &LevelHealth)], work: &str) -> Vec<String> {
    levels
        .iter()
        .enumerate()
        .flat_map(|(index, (streams, health))| {
            health.unhealthy().map(move |s| {
                format!(
                    "level {index} ({streams} streams): {}; the level is not trustworthy",
                    describe(s, work)
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::runner::{LevelRun, Sample};
    use super::*;

    /// A recording of one level sampled every second (or at `times`): one
    /// sample per row of `moved`, each row holding every stream's count
    /// over that interval.
    fn recording_at(times: &[f64], moved: &[&[u64]], timeouts: &[&[u64]]) -> Recording {
        let streams = moved[0].len();
        let samples = moved
            .iter()
            .zip(timeouts)
            .zip(times)
            .map(|((m, t), &at)| Sample {
                t: at,
                level: 0,
                stream_moved: m.to_vec(),
                stream_timeouts: t.to_vec(),
                stream_rates: m.iter().map(|&v| v as f64).collect(),
                ..Sample::default()
            })
            .collect();
        Recording {
            levels: vec![LevelRun {
                streams: streams as u32,
                members: (0..streams).map(|i| (i, format!("lg{}", i % 2))).collect(),
                start: 0.0,
                end: times.last().copied().unwrap_or(0.0),
                ..LevelRun::default()
            }],
            samples,
            hosts: vec!["lg0".into(), "lg1".into()],
            port: 12865,
            planned_per_host: vec![1, 1],
            sample_interval: 1.0,
            ..Recording::default()
        }
    }

    fn recording(moved: &[&[u64]], timeouts: &[&[u64]]) -> Recording {
        let times: Vec<f64> = (1..=moved.len()).map(|t| t as f64).collect();
        recording_at(&times, moved, timeouts)
    }

    fn observed(moved: u64, secs: f64, in_window: bool) -> Observed {
        Observed {
            moved,
            secs,
            in_window,
        }
    }

    #[test]
    fn idle_runs_count_only_when_they_touch_the_window() {
        assert_eq!(longest_idle([]), 0.0);
        let run = [
            observed(0, 1.0, false),
            observed(0, 1.0, false),
            observed(5, 1.0, true),
            observed(0, 1.0, true),
            observed(3, 1.0, true),
        ];
        assert_eq!(longest_idle(run), 1.0);
        // A run that starts before the window and reaches into it counts
        // whole.
        let run = [
            observed(0, 1.0, false),
            observed(0, 1.0, true),
            observed(4, 1.0, true),
        ];
        assert_eq!(longest_idle(run), 2.0);
    }

    #[test]
    fn the_set_up_before_a_level_is_not_idle_time() {
        // The level was measured from 3 s, after its streams' set-up; its
        // first sample (at 4 s) covers one second, not four.
        let mut rec = recording_at(
            &[4.0, 5.0, 6.0],
            &[&[0, 10], &[10, 10], &[10, 10]],
            &[&[0, 0], &[0, 0], &[0, 0]],
        );
        rec.levels[0].start = 3.0;
        let health = assess(&rec, 0, &[0, 1, 2]);
        assert_eq!(health.streams[0].longest_idle_s, 1.0);
        assert!(health.trustworthy());
    }

    #[test]
    fn one_idle_sample_is_a_recovered_loss_and_two_are_a_stall() {
        // Stream 0 runs throughout; stream 1 waits out one loss timeout;
        // stream 2 stops in the middle of the window.
        let rec = recording(
            &[
                &[10, 10, 10],
                &[10, 0, 10],
                &[10, 10, 0],
                &[10, 10, 0],
                &[10, 10, 0],
            ],
            &[&[0, 0, 0], &[0, 1, 0], &[0, 0, 0], &[0, 0, 0], &[0, 0, 0]],
        );
        let health = assess(&rec, 0, &[1, 2, 3]);
        let stalled: Vec<bool> = health.streams.iter().map(StreamHealth::stalled).collect();
        assert_eq!(stalled, [false, false, true]);
        assert_eq!(health.streams[1].timeouts, 1);
        assert_eq!(health.streams[1].longest_idle_s, 1.0);
        assert_eq!(health.streams[2].moved, 20);
        assert!(!health.streams[2].moved_nothing());
        // The run goes on past the window: all of it is counted.
        assert_eq!(health.streams[2].longest_idle_s, 3.0);
        assert!(!health.trustworthy());
        assert_eq!(health.timeouts(), 1);
        assert_eq!(health.moved_range(), Some((20, 50)));
        // A stop after the window is not this level's stall.
        assert!(assess(&rec, 0, &[0, 1]).trustworthy());
    }

    #[test]
    fn one_idle_sample_taken_late_is_a_stall() {
        // The coordinator was 1.5 s late: the stream did nothing for 2.5 s.
        let rec = recording_at(
            &[1.0, 2.0, 4.5, 5.5],
            &[&[10, 10], &[10, 10], &[10, 0], &[10, 10]],
            &[&[0, 0][..]; 4],
        );
        let health = assess(&rec, 0, &[1, 2]);
        assert!(!health.streams[0].stalled());
        assert!(health.streams[1].stalled());
        assert_eq!(health.streams[1].longest_idle_s, 2.5);
    }

    #[test]
    fn a_stream_that_moved_nothing_makes_the_level_untrustworthy() {
        // A window of one sample cannot show a stall of a stream that
        // idles one interval at a time, but a stream that moved nothing
        // over the whole level is named all the same.
        let rec = recording(&[&[7, 0], &[7, 5], &[7, 0]], &[&[0, 0], &[0, 0], &[0, 0]]);
        let mut health = assess(&rec, 0, &[1]);
        assert!(health.trustworthy());
        health.streams[1].moved = 0;
        assert!(!health.streams[1].stalled());
        assert!(health.streams[1].moved_nothing());
        assert!(!health.trustworthy());
        let lines = warnings(&[(2, &health)], "transactions");
        assert_eq!(
            lines,
            ["level 0 (2 streams): stream 1 to lg1: 0 transactions, 0 timeouts, moved nothing; the level is not trustworthy"]
        );
    }

    #[test]
    fn every_stream_that_stalled_is_named_with_its_load_generator() {
        let rec = recording(
            &[&[0, 0, 1], &[0, 0, 1], &[0, 0, 1]],
            &[&[0; 3], &[0; 3], &[0; 3]],
        );
        let health = assess(&rec, 0, &[0, 1, 2]);
        let lines = warnings(&[(3, &health)], "bytes");
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].contains(
                "stream 0 to lg0: 0 bytes, 0 timeouts, moved nothing, stalled (no progress for 3.0 s)"
            ),
            "{lines:?}"
        );
        assert!(lines[1].contains("stream 1 to lg1"), "{lines:?}");
        assert_eq!(work_name("10^6bits/s"), "bytes");
        assert_eq!(work_name("Trans/s"), "transactions");
    }

    #[test]
    fn a_level_without_members_or_out_of_range_is_empty_and_trusted() {
        let rec = recording(&[&[1]], &[&[0]]);
        assert_eq!(assess(&rec, 5, &[0]), LevelHealth::default());
        assert!(LevelHealth::default().trustworthy());
        assert_eq!(LevelHealth::default().moved_range(), None);
    }
}
