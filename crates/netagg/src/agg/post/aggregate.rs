//! Lining the netperfs up in time, as post_proc.py does with rrdtool: each
//! file's interim results resampled to one-second slots and summed into the
//! aggregate (post_proc.py's "kitchen sink", one value per whole second of
//! the run), the aggregate's own one-second database, and each level's
//! average, minimum and maximum over its window less a settling second at
//! either end (`process_result`, `add_to_ksink`, `generate_overall` and
//! `overall_min_max_avg`).

use super::logfile::{truncate, LevelWindow};
use super::outfile::Sample;
use super::rrd::{printed, sent_value, window_stats, Rrd, Stamp, Stats, Update};

/// Diagnostics of one kind shown per file before they are summed up in one
/// line; post_proc.py prints every one, which a damaged file could make
/// millions.
const MAX_LINES_PER_KIND: usize = 100;

/// Runs of resampled slots outside the run kept per file, for the "Key ...
/// not in ksink" lines only.
const MAX_OUTSIDE_RUNS: usize = 10_000;

/// The aggregate: for each whole second `k` from the run's start to its end
/// (`int()` of the log's times), the sum over files of each file's average
/// rate over `(k, k+1]`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sink {
    pub first: i64,
    pub values: Vec<f64>,
}

impl Sink {
    /// Keys `int(start)..=int(end)`, all 0.0 as post_proc.py starts them.
    /// The caller has bounded the span.
    pub fn new(start_time: f64, end_time: f64) -> Self {
        let first = truncate(start_time);
        let len = truncate(end_time)
            .saturating_sub(first)
            .saturating_add(1)
            .max(0);
        Sink {
            first,
            values: vec![0.0; usize::try_from(len).unwrap_or(0)],
        }
    }

    /// The last key (one before `first` when empty).
    pub fn last(&self) -> i64 {
        self.first + self.values.len() as i64 - 1
    }

    fn get(&self, key: i64) -> Option<f64> {
        let i = usize::try_from(key.checked_sub(self.first)?).ok()?;
        self.values.get(i).copied()
    }
}

/// Lines of one kind for one file, capped.
struct Capped<'a> {
    out: &'a mut Vec<String>,
    shown: usize,
    hidden: u64,
}

impl<'a> Capped<'a> {
    fn new(out: &'a mut Vec<String>) -> Self {
        Capped {
            out,
            shown: 0,
            hidden: 0,
        }
    }

    fn push(&mut self, line: impl FnOnce() -> String) {
        if self.shown < MAX_LINES_PER_KIND {
            self.out.push(line());
            self.shown += 1;
        } else {
            self.hidden += 1;
        }
    }

    fn add_hidden(&mut self, n: u64) {
        self.hidden = self.hidden.saturating_add(n);
    }

    fn close(self, what: &str, name: &str) {
        if self.hidden > 0 {
            self.out
                .push(format!("({} more {what} lines for {name})", self.hidden));
        }
    }
}

/// Resamples one file's interim results and adds them to the sink.
/// `name` is the file's path without ".out", as post_proc.py names its
/// database. Returns the endings of the first and last result, or None when
/// the file has none (post_proc.py then leaves it out of the run's start).
pub(crate) fn add_file(
    name: &str,
    samples: &[Sample],
    end_time: f64,
    sink: &mut Sink,
    diagnostics: &mut Vec<String>,
) -> Option<(f64, f64)> {
    let (first, last) = (samples.first()?, samples.last()?);
    // The database starts one interval before the first result, so the first
    // update has something to follow.
    let start = truncate(first.ending - first.interval);
    let rows = truncate(end_time).saturating_sub(start).saturating_add(1);
    if rows < 1 {
        diagnostics.push(format!(
            "{name}: its first result ({}) is after the run's end; left out",
            py_float(first.ending)
        ));
        return None;
    }
    let mut rrd = Rrd::create(start, 1, rows);

    // add_to_ksink fetches int(first)..=int(last); key k is the slot (k, k+1].
    let fetch = (truncate(first.ending), truncate(last.ending));
    let inside = (fetch.0.max(sink.first), fetch.1.min(sink.last()));
    let len = usize::try_from(inside.1 - inside.0 + 1).unwrap_or(0);
    let mut slots = vec![f64::NAN; len];
    let mut outside: Vec<(i64, i64, f64)> = Vec::new();
    let mut refused = Capped::new(diagnostics);

    for s in samples {
        let ceiling = s.interval.ceil();
        if ceiling > rrd.heartbeat as f64 {
            rrd.heartbeat = ceiling as u64;
        }
        match rrd.update(Stamp::sent(s.ending), sent_value(s.value)) {
            Update::Refused { time, last } => refused.push(|| {
                format!(
                    "Update to {name} with {} at {} failed with {name}.rrd: illegal attempt to \
                     update using time {time} when last update time is {last} (minimum one \
                     second step)",
                    py_float(s.value),
                    py_float(s.ending)
                )
            }),
            Update::Done { from, to, value } if from <= to => {
                // Slot T is key T-1.
                let (k0, k1) = (from.saturating_sub(1), to.saturating_sub(1));
                for k in k0.max(inside.0)..=k1.min(inside.1) {
                    slots[(k - inside.0) as usize] = value;
                }
                let wanted = value != 0.0 && !value.is_nan();
                let out_lo = (
                    k0.max(fetch.0),
                    k1.min(fetch.1).min(inside.0.saturating_sub(1)),
                );
                let out_hi = (
                    k0.max(fetch.0).max(inside.1.saturating_add(1)),
                    k1.min(fetch.1),
                );
                for (lo, hi) in [out_lo, out_hi] {
                    if wanted && lo <= hi && outside.len() < MAX_OUTSIDE_RUNS {
                        outside.push((lo, hi, value));
                    }
                }
            }
            Update::Done { .. } => {}
        }
    }
    refused.close("\"Update to ... failed\"", name);

    // The archive keeps the newest `rows` slots up to the last update.
    let kept = (
        rrd.oldest_kept().saturating_sub(1),
        rrd.last_update().saturating_sub(1),
    );
    for (i, v) in slots.iter().enumerate() {
        let key = inside.0 + i as i64;
        // post_proc.py's `if result[0]`: unknown and zero slots add nothing.
        if key >= kept.0 && key <= kept.1 && *v != 0.0 && !v.is_nan() {
            sink.values[(key - sink.first) as usize] += v;
        }
    }
    let mut strays = Capped::new(diagnostics);
    for (lo, hi, _) in outside {
        let (lo, hi) = (lo.max(kept.0), hi.min(kept.1));
        let mut k = lo;
        while k <= hi && strays.shown < MAX_LINES_PER_KIND {
            strays.push(|| format!("Key {k} not in ksink"));
            k += 1;
        }
        if k <= hi {
            strays.add_hidden((i128::from(hi) - i128::from(k) + 1) as u64);
        }
    }
    strays.close("\"Key ... not in ksink\"", name);
    Some((first.ending, last.ending))
}

/// The aggregate's own database (post_proc.py's `<prefix>_overall.rrd`):
/// created three seconds before the first result, updated once a second
/// with the sink's values from two seconds before it. Slot T holds sink key
/// T; the first slot is unknown when the run's start is later than that.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Overall {
    first: i64,
    values: Vec<f64>,
}

impl Overall {
    fn get(&self, t: i64) -> f64 {
        t.checked_sub(self.first)
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| self.values.get(i).copied())
            .unwrap_or(f64::NAN)
    }

    fn known(&self) -> (i64, i64) {
        (self.first, self.first + self.values.len() as i64 - 1)
    }
}

pub(crate) fn overall(
    prefix: &str,
    sink: &Sink,
    min_timestamp: f64,
    end_time: f64,
    diagnostics: &mut Vec<String>,
) -> Overall {
    let mut result = Overall {
        first: sink.first,
        values: vec![f64::NAN; sink.values.len()],
    };
    // post_proc.py creates it at int(first - 3) and walks the keys from
    // int(first - 2), so the first update always lands.
    let start = truncate(min_timestamp - 2.0);
    let created = truncate(min_timestamp - 3.0);
    let end = truncate(end_time);
    let rows = end.saturating_sub(created).saturating_add(1);
    if rows < 1 {
        diagnostics.push(format!(
            "{prefix}_overall: the first result is after the run's end; no aggregate database"
        ));
        return result;
    }
    let mut rrd = Rrd::create(created, 1, rows);
    let mut previous: i64 = -1;
    // post_proc.py walks start..=end and updates the keys the sink has.
    for key in start.max(sink.first)..=end.min(sink.last()) {
        let value = sink.get(key).unwrap_or(0.0);
        match rrd.update(Stamp::whole(key), sent_value(value)) {
            Update::Refused { time, last } => diagnostics.push(format!(
                "Update to {prefix}_overall failed for {key}, previous {previous} \
                 {prefix}_overall.rrd: illegal attempt to update using time {time} when last \
                 update time is {last} (minimum one second step)"
            )),
            Update::Done { from, to, value } => {
                for t in from.max(sink.first)..=to.min(sink.last()) {
                    result.values[(t - sink.first) as usize] = value;
                }
                previous = key;
            }
        }
    }
    result
}

/// One level's result, before numbering.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LevelStats {
    /// 1-based position of the window in the log.
    pub marker: usize,
    pub window: LevelWindow,
    /// The measured window: one second in from each end of the level.
    pub start: i64,
    pub end: i64,
    /// Rounded to two decimals, as post_proc.py reads them from rrdtool.
    pub stats: Stats,
}

/// Each level's statistics over its window less the settling margin, the
/// levels whose window is empty after that left out (as post_proc.py skips
/// them, so the printed numbering closes up).
pub(crate) fn levels(
    overall: &Overall,
    windows: &[LevelWindow],
    min_timestamp: f64,
) -> Vec<LevelStats> {
    let mut out = Vec::new();
    for (i, w) in windows.iter().enumerate() {
        let mut start = w.start.saturating_add(1);
        // A netperf slow to report: start one second after its first result.
        if (start as f64) < min_timestamp {
            start = truncate(min_timestamp + 1.0);
        }
        let end = w.end.saturating_sub(1);
        if start >= end {
            continue;
        }
        let raw = window_stats(start, end, overall.known(), |t| overall.get(t));
        out.push(LevelStats {
            marker: i + 1,
            window: *w,
            start,
            end,
            stats: Stats {
                average: printed(raw.average),
                minimum: printed(raw.minimum),
                maximum: printed(raw.maximum),
            },
        });
    }
    out
}

/// The peak level: the first with the highest average above zero.
pub(crate) fn peak(levels: &[LevelStats]) -> Option<usize> {
    let mut best: Option<usize> = None;
    let mut max_average = 0.0;
    for (i, l) in levels.iter().enumerate() {
        if l.stats.average > max_average {
            max_average = l.stats.average;
            best = Some(i);
        }
    }
    best
}

/// A float as Python's `str()` writes it: shortest round-trip digits, ".0"
/// on whole numbers, exponent form below 1e-4 and from 1e16.
pub(crate) fn py_float(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if v != 0.0 && !(-4..16).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    let plain = format!("{v}");
    if plain.contains('.') {
        plain
    } else {
        format!("{plain}.0")
    }
}
