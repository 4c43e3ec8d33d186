//! The statistics of an experiment: per cell and metric the descriptive
//! summary (n, mean, median, standard deviation, t interval of the mean,
//! bootstrap interval of the median, min/max, percentiles) over the runs
//! that measured something; per factor the ratio of every other level to
//! the first one with the other factors held fixed; and the write-up's
//! "Improvement" of the row factor's last level over its first, oriented so
//! that above 1 is better. Failed and interrupted runs are counted per cell
//! and never enter a statistic. The bootstrap is seeded with the record's
//! seed, so the same record always gives the same analysis.

use netperf_results::stats::MIN_BOOTSTRAP_SAMPLES;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

use super::layout::{cell_short_label, Layout};
use netperf_results::model::{
    better, cell_label, Better, Cell, ExperimentRecord, RunStatus, KEY_METRICS,
};
use netperf_results::stats::{Bootstrap, Statistic, Summary, Verdict};

/// The confidence of every interval: the t interval of the mean, the
/// bootstrap intervals of the median and of the ratios.
pub const CONFIDENCE: f64 = 0.95;

/// Below this many runs in a cell the percentile bootstrap's intervals are
/// noticeably too narrow (at 10 by about 1.2×), and the reports say so.
pub const SMALL_SAMPLE: usize = 10;

/// A confidence interval `[low, high]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    pub low: f64,
    pub high: f64,
}

impl Bounds {
    /// Half the width, the "±" of a table.
    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }
}

/// One metric of one cell over its successful runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricStats {
    /// The omni selector name (THROUGHPUT, LOCAL_SD, ...).
    pub metric: String,
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation; None for n = 1.
    pub stdev: Option<f64>,
    /// 95 % Student-t interval of the mean; None for n = 1.
    pub mean_ci95: Option<Bounds>,
    /// 95 % percentile-bootstrap interval of the median; None for n = 1.
    pub median_ci95: Option<Bounds>,
    pub min: f64,
    pub max: f64,
    pub p5: f64,
    pub p25: f64,
    pub p75: f64,
    pub p95: f64,
    pub p99: f64,
    /// Successful runs whose value was not a finite number, left out.
    pub n_excluded: usize,
}

/// One cell: how its runs ended and the statistics of every metric its
/// successful runs reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellStats {
    pub cell: Cell,
    /// "protocol=udp message_size=1024 offloads=on".
    pub label: String,
    pub n_ok: usize,
    pub n_failed: usize,
    pub n_interrupted: usize,
    /// Key metrics first (in table order), then the others by name.
    pub metrics: Vec<MetricStats>,
}

/// Which statistic a ratio compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RatioOf {
    Mean,
    Median,
}

impl RatioOf {
    fn statistic(self) -> Statistic {
        match self {
            RatioOf::Mean => Statistic::Mean,
            RatioOf::Median => Statistic::Median,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            RatioOf::Mean => "mean",
            RatioOf::Median => "median",
        }
    }
}

/// What a ratio's interval says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finding {
    /// The whole interval lies above 1.
    Higher,
    /// The whole interval lies below 1.
    Lower,
    /// The interval contains 1.
    NoSignificantDifference,
    /// No interval could be computed (n < 2 on a side, no successful run,
    /// a zero baseline); the note says why.
    NoInterval,
}

impl Finding {
    fn of(verdict: Verdict) -> Finding {
        match verdict {
            Verdict::Higher => Finding::Higher,
            Verdict::Lower => Finding::Lower,
            Verdict::NoSignificantDifference => Finding::NoSignificantDifference,
        }
    }
}

/// The ratio of a statistic between two cells that differ in one factor:
/// `level / baseline`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelRatio {
    pub factor: String,
    /// The factor's first level.
    pub baseline: String,
    pub level: String,
    /// The other factors' levels, the same on both sides.
    pub held: Cell,
    pub metric: String,
    pub statistic: RatioOf,
    pub n_baseline: usize,
    pub n_level: usize,
    pub baseline_value: Option<f64>,
    pub level_value: Option<f64>,
    /// `level_value / baseline_value`.
    pub ratio: Option<f64>,
    pub ci95: Option<Bounds>,
    pub finding: Finding,
    /// Which way is better for the metric.
    pub better: Better,
    pub note: Option<String>,
    /// For a reader: "1.83× [1.71, 1.95] higher (better)".
    pub summary: String,
}

/// The write-up's "Improvement" row for one column: the row factor's last
/// level over its first, as `last / first` when higher is better (or the
/// metric has no direction) and `first / last` when lower is better, so a
/// value above 1 is an improvement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Improvement {
    pub metric: String,
    pub factor: String,
    pub from: String,
    pub to: String,
    /// The other factors' levels.
    pub column: Cell,
    pub value: Option<f64>,
    pub ci95: Option<Bounds>,
    /// Higher: significantly better; Lower: significantly worse.
    pub finding: Finding,
    pub note: Option<String>,
}

/// Everything the reports show beside the runs themselves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// [`CONFIDENCE`], recorded for readers of the JSON.
    pub confidence: f64,
    pub bootstrap_resamples: usize,
    pub bootstrap_seed: u64,
    pub runs_ok: usize,
    pub runs_failed: usize,
    pub runs_interrupted: usize,
    pub cells: Vec<CellStats>,
    pub ratios: Vec<LevelRatio>,
    pub improvements: Vec<Improvement>,
}

impl Analysis {
    /// The analysis with the default bootstrap (10,000 resamples) seeded
    /// with the record's seed.
    pub fn of(record: &ExperimentRecord) -> Analysis {
        Analysis::with_resamples(record, Bootstrap::default().resamples)
    }

    /// The analysis with `resamples` bootstrap resamples (fewer are faster
    /// and coarser), seeded with the record's seed; every interval is 95 %.
    pub fn with_resamples(record: &ExperimentRecord, resamples: usize) -> Analysis {
        let bootstrap = Bootstrap {
            resamples,
            confidence: CONFIDENCE,
            seed: record.seed,
        };
        let samples = Samples::of(record);
        let count = |f: fn(&RunStatus) -> bool| record.runs.iter().filter(|r| f(&r.status)).count();
        Analysis {
            confidence: bootstrap.confidence,
            bootstrap_resamples: bootstrap.resamples,
            bootstrap_seed: bootstrap.seed,
            runs_ok: count(RunStatus::is_ok),
            runs_failed: count(|s| matches!(s, RunStatus::Failed { .. })),
            runs_interrupted: count(|s| matches!(s, RunStatus::Interrupted)),
            cells: cell_stats(record, &samples, &bootstrap),
            ratios: level_ratios(record, &samples, &bootstrap),
            improvements: improvements(record, &samples, &bootstrap),
        }
    }

    pub fn cell(&self, cell: &Cell) -> Option<&CellStats> {
        self.cells.iter().find(|c| &c.cell == cell)
    }

    /// The statistics of `metric` in `cell`, if it has a successful run
    /// that reported it.
    pub fn stats(&self, cell: &Cell, metric: &str) -> Option<&MetricStats> {
        self.cell(cell)?.metrics.iter().find(|m| m.metric == metric)
    }

    /// The ratios of one statistic grouped by metric (in table order),
    /// then as computed: factor, the levels held, level.
    pub fn ratios_by_metric(&self, of: RatioOf) -> Vec<&LevelRatio> {
        let rank = |metric: &str| KEY_METRICS.iter().position(|(m, ..)| *m == metric);
        let mut ratios: Vec<&LevelRatio> =
            self.ratios.iter().filter(|r| r.statistic == of).collect();
        ratios.sort_by_key(|r| rank(&r.metric));
        ratios
    }

    /// A note for readers when a cell with an interval has fewer than
    /// [`SMALL_SAMPLE`] runs: the bootstrap intervals are expanded for
    /// small samples (see `stats::bootstrap`), so they are honest but wide,
    /// and "no significant difference" may only mean too few runs.
    pub fn small_sample_caveat(&self) -> Option<String> {
        let counted = || self.cells.iter().filter(|c| c.n_ok >= 2);
        let n = counted().map(|c| c.n_ok).min()?;
        if n >= SMALL_SAMPLE {
            return None;
        }
        // "only N successful runs" blames failures; say so only where runs
        // were lost, not when N is simply the replicates asked for.
        let smallest = || counted().filter(|c| c.n_ok == n);
        let lost = smallest().any(|c| c.n_failed + c.n_interrupted > 0);
        let every_cell_alike = counted().all(|c| c.n_ok == n);
        let which = match (lost, every_cell_alike) {
            (true, _) => format!(
                "some cells have only {n} successful runs (their other runs failed or were interrupted)"
            ),
            (false, true) => format!("every cell has {n} runs, all successful"),
            (false, false) => format!("some cells have only {n} runs, all successful"),
        };
        Some(format!(
            "Caution: {which}. The bootstrap intervals (of the \
             median, of the ratios and Improvements) are widened for samples this small (expanded \
             percentile bootstrap), so a \"no significant difference\" may only mean too few runs; \
             more replicates ({SMALL_SAMPLE} or more) narrow them."
        ))
    }

    pub fn improvement(&self, metric: &str, column: &Cell) -> Option<&Improvement> {
        self.improvements
            .iter()
            .find(|i| i.metric == metric && &i.column == column)
    }
}

/// Every cell of the plan, then any cell a run has that the plan does not
/// (so no run is left out of the statistics unseen).
pub fn all_cells(record: &ExperimentRecord) -> Vec<Cell> {
    let mut cells = record.cells();
    for run in &record.runs {
        if !cells.contains(&run.cell) {
            cells.push(run.cell.clone());
        }
    }
    cells
}

/// Every metric any run reported: the key metrics in table order, then the
/// others by name.
pub fn metric_order(record: &ExperimentRecord) -> Vec<String> {
    let seen: BTreeSet<&String> = record.runs.iter().flat_map(|r| r.metrics.keys()).collect();
    let mut order: Vec<String> = KEY_METRICS
        .iter()
        .filter(|(m, ..)| seen.iter().any(|s| s == m))
        .map(|(m, ..)| m.to_string())
        .collect();
    for metric in seen {
        if !order.contains(metric) {
            order.push(metric.clone());
        }
    }
    order
}

/// The key metrics some run reported, in table order.
pub fn key_metrics_present(record: &ExperimentRecord) -> Vec<&'static str> {
    KEY_METRICS
        .iter()
        .map(|(m, ..)| *m)
        .filter(|m| record.runs.iter().any(|r| r.metrics.contains_key(*m)))
        .collect()
}

/// The successful runs' finite values by (cell, metric), in run order.
struct Samples {
    values: BTreeMap<(Cell, String), Vec<f64>>,
    excluded: BTreeMap<(Cell, String), usize>,
}

impl Samples {
    fn of(record: &ExperimentRecord) -> Samples {
        let mut values: BTreeMap<(Cell, String), Vec<f64>> = BTreeMap::new();
        let mut excluded = BTreeMap::new();
        for run in record.runs.iter().filter(|r| r.status.is_ok()) {
            for (metric, &value) in &run.metrics {
                let key = (run.cell.clone(), metric.clone());
                if value.is_finite() {
                    values.entry(key).or_default().push(value);
                } else {
                    *excluded.entry(key).or_insert(0) += 1;
                }
            }
        }
        Samples { values, excluded }
    }

    fn get(&self, cell: &Cell, metric: &str) -> &[f64] {
        self.values
            .get(&(cell.clone(), metric.to_string()))
            .map_or(&[], Vec::as_slice)
    }
}

fn bounds(low: f64, high: f64) -> Bounds {
    Bounds { low, high }
}

fn cell_stats(record: &ExperimentRecord, samples: &Samples, boot: &Bootstrap) -> Vec<CellStats> {
    let metrics = metric_order(record);
    all_cells(record)
        .into_iter()
        .map(|cell| {
            let runs: Vec<_> = record.runs.iter().filter(|r| r.cell == cell).collect();
            let n_status = |f: fn(&RunStatus) -> bool| runs.iter().filter(|r| f(&r.status)).count();
            let stats = metrics
                .iter()
                .filter_map(|m| metric_stats(&cell, m, samples, boot))
                .collect();
            CellStats {
                label: cell_label(&cell),
                n_ok: n_status(RunStatus::is_ok),
                n_failed: n_status(|s| matches!(s, RunStatus::Failed { .. })),
                n_interrupted: n_status(|s| matches!(s, RunStatus::Interrupted)),
                metrics: stats,
                cell,
            }
        })
        .collect()
}

fn metric_stats(
    cell: &Cell,
    metric: &str,
    samples: &Samples,
    boot: &Bootstrap,
) -> Option<MetricStats> {
    let values = samples.get(cell, metric);
    // Values are finite and non-empty here; Summary only fails on overflow.
    let s = Summary::of(values).ok()?;
    let median_ci95 = boot.median_ci(values).ok().map(|e| bounds(e.low, e.high));
    Some(MetricStats {
        metric: metric.to_string(),
        n: s.n,
        mean: s.mean,
        median: s.median,
        stdev: s.stdev,
        mean_ci95: s.mean_ci95.map(|i| bounds(i.low, i.high)),
        median_ci95,
        min: s.min,
        max: s.max,
        p5: s.percentiles.p5,
        p25: s.percentiles.p25,
        p75: s.percentiles.p75,
        p95: s.percentiles.p95,
        p99: s.percentiles.p99,
        n_excluded: samples
            .excluded
            .get(&(cell.clone(), metric.to_string()))
            .copied()
            .unwrap_or(0),
    })
}

/// A ratio `b / a` of two samples, or why there is none.
struct RatioOutcome {
    value: Option<f64>,
    ci95: Option<Bounds>,
    finding: Finding,
    note: Option<String>,
}

fn point(values: &[f64], of: RatioOf) -> Option<f64> {
    let s = Summary::of(values).ok()?;
    Some(match of {
        RatioOf::Mean => s.mean,
        RatioOf::Median => s.median,
    })
}

/// `b / a` with its bootstrap interval; `a_name` and `b_name` name the
/// sides in a note.
fn ratio_of(
    boot: &Bootstrap,
    (a, a_name): (&[f64], &str),
    (b, b_name): (&[f64], &str),
    of: RatioOf,
) -> RatioOutcome {
    let none = |note: String| RatioOutcome {
        value: None,
        ci95: None,
        finding: Finding::NoInterval,
        note: Some(note),
    };
    for (values, name) in [(a, a_name), (b, b_name)] {
        if values.is_empty() {
            return none(format!("no successful run at {name}"));
        }
    }
    let (Some(pa), Some(pb)) = (point(a, of), point(b, of)) else {
        return none("the values overflow".to_string());
    };
    if pa == 0.0 {
        return none(format!("the {} at {a_name} is 0", of.name()));
    }
    let value = Some(pb / pa);
    let single: Vec<String> = [(a, a_name), (b, b_name)]
        .iter()
        .filter(|(v, _)| v.len() < MIN_BOOTSTRAP_SAMPLES)
        .map(|(v, name)| format!("n={} at {name}", v.len()))
        .collect();
    if !single.is_empty() {
        return RatioOutcome {
            value,
            ci95: None,
            finding: Finding::NoInterval,
            note: Some(format!("no interval: {}", single.join(" and "))),
        };
    }
    match boot.ratio(a, b, of.statistic()) {
        Ok(r) => RatioOutcome {
            value: Some(r.ratio.estimate),
            ci95: Some(bounds(r.ratio.low, r.ratio.high)),
            finding: Finding::of(r.verdict),
            note: None,
        },
        Err(e) => RatioOutcome {
            value,
            ci95: None,
            finding: Finding::NoInterval,
            note: Some(format!("no interval: {e}")),
        },
    }
}

/// "1.83× [1.71, 1.95] higher (better)", "0.99× [0.97, 1.02] no
/// significant difference", "1.05× (no interval: n=1 at tcp)".
pub fn describe_ratio(
    value: Option<f64>,
    ci95: Option<Bounds>,
    finding: Finding,
    better: Better,
    note: Option<&str>,
) -> String {
    let Some(value) = value else {
        return format!("no ratio ({})", note.unwrap_or("no data"));
    };
    let ratio = format_ratio(value);
    let Some(ci) = ci95 else {
        return format!("{ratio}× ({})", note.unwrap_or("no interval"));
    };
    let interval = format!(
        "{ratio}× [{}, {}]",
        format_ratio(ci.low),
        format_ratio(ci.high)
    );
    let judgement = match (finding, better) {
        (Finding::Higher, Better::Higher) | (Finding::Lower, Better::Lower) => " (better)",
        (Finding::Higher, Better::Lower) | (Finding::Lower, Better::Higher) => " (worse)",
        _ => "",
    };
    let word = match finding {
        Finding::Higher => "higher",
        Finding::Lower => "lower",
        Finding::NoSignificantDifference => "no significant difference",
        Finding::NoInterval => "no interval",
    };
    format!("{interval} {word}{judgement}")
}

/// A ratio with two decimals, or three significant digits when small.
pub fn format_ratio(value: f64) -> String {
    if value.abs() >= 0.1 || value == 0.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.2e}")
    }
}

/// Every non-baseline level of every factor with ≥ 2 levels against the
/// first, per combination of the other factors, key metric and statistic.
fn level_ratios(record: &ExperimentRecord, samples: &Samples, boot: &Bootstrap) -> Vec<LevelRatio> {
    let metrics = key_metrics_present(record);
    let cells = record.cells();
    let mut out = Vec::new();
    for (index, factor) in record.factors.iter().enumerate() {
        let Some(baseline) = factor.levels.first() else {
            continue;
        };
        for base_cell in cells.iter().filter(|c| &c[index].1 == baseline) {
            let held: Cell = base_cell
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != index)
                .map(|(_, pair)| pair.clone())
                .collect();
            for level in &factor.levels[1..] {
                if factor.name == "test" && !comparable_tests(baseline, level) {
                    continue;
                }
                let mut level_cell = base_cell.clone();
                level_cell[index].1 = level.clone();
                for metric in &metrics {
                    for of in [RatioOf::Mean, RatioOf::Median] {
                        let a = samples.get(base_cell, metric);
                        let b = samples.get(&level_cell, metric);
                        let (a_name, b_name) =
                            (cell_short_label(base_cell), cell_short_label(&level_cell));
                        let r = ratio_of(boot, (a, &a_name), (b, &b_name), of);
                        let better = better(metric);
                        out.push(LevelRatio {
                            factor: factor.name.clone(),
                            baseline: baseline.clone(),
                            level: level.clone(),
                            held: held.clone(),
                            metric: metric.to_string(),
                            statistic: of,
                            n_baseline: a.len(),
                            n_level: b.len(),
                            baseline_value: point(a, of),
                            level_value: point(b, of),
                            summary: describe_ratio(
                                r.value,
                                r.ci95,
                                r.finding,
                                better,
                                r.note.as_deref(),
                            ),
                            ratio: r.value,
                            ci95: r.ci95,
                            finding: r.finding,
                            better,
                            note: r.note,
                        });
                    }
                }
            }
        }
    }
    out
}

/// Whether two test levels measure the same kind of thing: a stream
/// test's bits per second over a request/response test's transactions per
/// second is no ratio at all.
fn comparable_tests(a: &str, b: &str) -> bool {
    let is_rr = |t: &str| super::factors::test_shape(t).is_some_and(|(d, _)| d == "rr");
    is_rr(a) == is_rr(b)
}

/// The row factor's last level over its first per column and key metric,
/// oriented so that above 1 is better.
fn improvements(
    record: &ExperimentRecord,
    samples: &Samples,
    boot: &Bootstrap,
) -> Vec<Improvement> {
    let layout = Layout::of(record);
    let (Some(factor), [first, .., last]) = (&layout.row_factor, layout.rows.as_slice()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for metric in key_metrics_present(record) {
        for column in &layout.columns {
            let from_cell = layout.cell(first, column);
            let to_cell = layout.cell(last, column);
            let from = (
                samples.get(&from_cell, metric),
                cell_short_label(&from_cell),
            );
            let to = (samples.get(&to_cell, metric), cell_short_label(&to_cell));
            // Lower is better: first / last, so above 1 still means better.
            let (a, b) = match better(metric) {
                Better::Lower => (&to, &from),
                Better::Higher | Better::Neither => (&from, &to),
            };
            let r = ratio_of(boot, (a.0, &a.1), (b.0, &b.1), RatioOf::Mean);
            out.push(Improvement {
                metric: metric.to_string(),
                factor: factor.clone(),
                from: first.clone(),
                to: last.clone(),
                column: column.clone(),
                value: r.value,
                ci95: r.ci95,
                finding: r.finding,
                note: r.note,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_say_which_way_is_better() {
        let ci = Some(bounds(1.71, 1.95));
        assert_eq!(
            describe_ratio(Some(1.83), ci, Finding::Higher, Better::Higher, None),
            "1.83× [1.71, 1.95] higher (better)"
        );
        assert_eq!(
            describe_ratio(Some(1.83), ci, Finding::Higher, Better::Lower, None),
            "1.83× [1.71, 1.95] higher (worse)"
        );
        assert_eq!(
            describe_ratio(
                Some(1.0),
                Some(bounds(0.97, 1.02)),
                Finding::NoSignificantDifference,
                Better::Higher,
                None
            ),
            "1.00× [0.97, 1.02] no significant difference"
        );
        assert_eq!(
            describe_ratio(
                Some(1.05),
                None,
                Finding::NoInterval,
                Better::Higher,
                Some("no interval: n=1 at tcp")
            ),
            "1.05× (no interval: n=1 at tcp)"
        );
        assert_eq!(
            describe_ratio(
                None,
                None,
                Finding::NoInterval,
                Better::Higher,
                Some("no successful run at udp")
            ),
            "no ratio (no successful run at udp)"
        );
    }

    #[test]
    fn ratio_sides_with_fewer_than_four_values_have_no_interval() {
        let boot = Bootstrap {
            resamples: 200,
            ..Bootstrap::default()
        };
        let r = ratio_of(&boot, (&[2.0], "a"), (&[3.0, 5.0], "b"), RatioOf::Mean);
        assert_eq!(r.value, Some(2.0));
        assert_eq!((r.ci95, r.finding), (None, Finding::NoInterval));
        assert_eq!(
            r.note.as_deref(),
            Some("no interval: n=1 at a and n=2 at b")
        );
        let three = ratio_of(
            &boot,
            (&[2.0, 2.1, 2.2], "a"),
            (&[3.0, 3.1, 3.2, 3.3], "b"),
            RatioOf::Mean,
        );
        assert_eq!(three.note.as_deref(), Some("no interval: n=3 at a"));
        let four = ratio_of(
            &boot,
            (&[2.0, 2.1, 2.2, 2.3], "a"),
            (&[3.0, 3.1, 3.2, 3.3], "b"),
            RatioOf::Mean,
        );
        assert_eq!(
            (four.note, four.finding == Finding::NoInterval),
            (None, false)
        );
        let zero = ratio_of(&boot, (&[0.0, 0.0], "a"), (&[1.0, 2.0], "b"), RatioOf::Mean);
        assert_eq!(zero.value, None);
        let empty = ratio_of(&boot, (&[], "a"), (&[1.0, 2.0], "b"), RatioOf::Median);
        assert_eq!(empty.note.as_deref(), Some("no successful run at a"));
    }
}
