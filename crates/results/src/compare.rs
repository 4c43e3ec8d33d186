//! `netagg results compare A B`: per cell both results share (cells match
//! by their factor levels, in any order) and per metric, the ratio B/A of
//! the mean (or median) with its seeded bootstrap interval, and a verdict
//! in the metric's direction: faster, slower or no significant change.
//!
//! The replicates of a cell are its samples. A side with one value (a
//! single netperf test, a netagg level) has no spread to resample: its row
//! shows the ratio with "insufficient data" and never counts as a
//! regression; netperf's own `-i` interval widths are shown beside it when
//! both were stored. A metric with no better direction is reported as
//! higher or lower, never as a regression.

use super::model::{better, cell_label, Better, Cell, KEY_METRICS};
use super::record::StoredResult;
use crate::stats::{Bootstrap, Statistic, StatsError, Verdict};
use serde::Serialize;

/// How to compare.
#[derive(Debug, Clone)]
pub struct CompareOptions {
    /// Metrics to compare; empty: the key metrics both sides have (every
    /// shared metric when they share no key metric); `["ALL"]`: every
    /// shared metric.
    pub metrics: Vec<String>,
    pub statistic: Statistic,
    pub bootstrap: Bootstrap,
    /// A significant slow-down whose interval reaches within this fraction
    /// of 1 (0.05 = 5 %) is not counted as a regression.
    pub tolerance: f64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            metrics: Vec::new(),
            statistic: Statistic::Mean,
            bootstrap: Bootstrap::default(),
            tolerance: 0.0,
        }
    }
}

/// The verdict of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Faster,
    Slower,
    /// Significantly slower, but by less than the tolerance.
    SlowerWithinTolerance,
    NoSignificantChange,
    /// Significant, for a metric with no better direction.
    Higher,
    Lower,
    /// A side has fewer than two values.
    InsufficientData,
    /// A side has no value of the metric in this cell.
    Missing,
    /// The ratio cannot be formed (a zero baseline).
    Undefined,
    /// The two sides measured it in different units (bits and
    /// transactions, or -f k and -f m): no ratio is meaningful.
    UnitsDiffer,
}

/// One cell and metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub cell: String,
    pub metric: String,
    pub unit: String,
    pub n_a: usize,
    pub n_b: usize,
    /// The statistic of each side.
    pub a: Option<f64>,
    pub b: Option<f64>,
    pub ratio: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub verdict: Outcome,
    pub note: Option<String>,
}

impl Row {
    /// The verdict in words.
    pub fn verdict_text(&self) -> String {
        match self.verdict {
            Outcome::Faster => "faster".into(),
            Outcome::Slower => "slower".into(),
            Outcome::SlowerWithinTolerance => "slower (within tolerance)".into(),
            Outcome::NoSignificantChange => "no significant change".into(),
            Outcome::Higher => "higher".into(),
            Outcome::Lower => "lower".into(),
            Outcome::InsufficientData => {
                format!("insufficient data (n={})", self.n_a.min(self.n_b))
            }
            Outcome::Missing if self.n_a == 0 => "missing in A".into(),
            Outcome::Missing => "missing in B".into(),
            Outcome::Undefined => "undefined (baseline is 0)".into(),
            Outcome::UnitsDiffer => "not comparable (units differ)".into(),
        }
    }
}

/// Which result a side is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    pub id: String,
    pub kind: &'static str,
    pub title: String,
    pub started: String,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub a: Side,
    pub b: Side,
    pub statistic: &'static str,
    /// Each interval's confidence: the requested one made simultaneous
    /// over `family` intervals (Bonferroni).
    pub confidence: f64,
    /// How many rows have an interval (the Bonferroni family).
    pub family: usize,
    pub resamples: usize,
    pub seed: u64,
    pub tolerance: f64,
    pub rows: Vec<Row>,
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    /// What a reader should know (the sides ran different tests).
    pub notes: Vec<String>,
    pub regressions: usize,
}

impl Comparison {
    /// 0: nothing significantly worse; 1: at least one regression.
    pub fn exit_status(&self) -> u8 {
        u8::from(self.regressions > 0)
    }
}

/// Why two results cannot be compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    #[error("{a} and {b} have no cell in common (their factors or levels differ)")]
    NothingInCommon { a: String, b: String },
    #[error("no metric to compare: {0}")]
    NoMetric(String),
}

fn side(r: &StoredResult) -> Side {
    Side {
        id: r.id.clone(),
        kind: r.kind.as_str(),
        title: r.title.clone(),
        started: r.started.clone(),
    }
}

/// A cell as a key that ignores the order of its factors.
fn key(cell: &Cell) -> Cell {
    let mut k = cell.clone();
    k.sort();
    k
}

/// The metrics any measured run of `cell` has.
fn metrics_in(r: &StoredResult, cell: &Cell) -> Vec<String> {
    let mut names: Vec<String> = r
        .runs
        .iter()
        .filter(|run| run.status.is_ok() && &run.cell == cell)
        .flat_map(|run| run.metrics.keys().cloned())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Compares `b` against the baseline `a`.
pub fn compare(
    a: &StoredResult,
    b: &StoredResult,
    opts: &CompareOptions,
) -> Result<Comparison, CompareError> {
    let cells_b = b.cells();
    let mut only_in_a = Vec::new();
    let mut pairs = Vec::new();
    for cell_a in a.cells() {
        let Some(cell_b) = cells_b.iter().find(|c| key(c) == key(&cell_a)) else {
            only_in_a.push(cell_label(&cell_a));
            continue;
        };
        for metric in chosen_metrics(a, &cell_a, b, cell_b, &opts.metrics) {
            pairs.push((cell_a.clone(), cell_b.clone(), metric));
        }
    }
    let shared_cells = a.cells().len() - only_in_a.len();
    let rows_at = |opts: &CompareOptions| -> Vec<Row> {
        pairs
            .iter()
            .map(|(cell_a, cell_b, metric)| row(a, cell_a, b, cell_b, metric, opts))
            .collect()
    };
    let mut rows = rows_at(opts);
    // Many cells x metrics tested at once would, at 95 % each, find a
    // "regression" in most comparisons of two runs of the same thing; the
    // intervals are made simultaneous (Bonferroni: each at 1 - (1 - c)/m
    // over the m rows that have an interval), so the gate's false alarm
    // rate is the nominal one for the whole comparison.
    let family = rows.iter().filter(|r| r.low.is_some()).count();
    let mut adjusted = opts.clone();
    if family > 1 {
        adjusted.bootstrap.confidence = 1.0 - (1.0 - opts.bootstrap.confidence) / family as f64;
        rows = rows_at(&adjusted);
    }
    let opts = &adjusted;
    let only_in_b: Vec<String> = cells_b
        .iter()
        .filter(|c| !a.cells().iter().any(|x| key(x) == key(c)))
        .map(cell_label)
        .collect();
    if shared_cells == 0 {
        return Err(CompareError::NothingInCommon {
            a: a.id.clone(),
            b: b.id.clone(),
        });
    }
    if rows.is_empty() {
        return Err(CompareError::NoMetric(
            "the shared cells have no measured metric in common".into(),
        ));
    }
    let wanted_missing: Vec<&String> = opts
        .metrics
        .iter()
        .filter(|m| !m.eq_ignore_ascii_case("all"))
        .filter(|m| {
            rows.iter()
                .filter(|r| r.metric.eq_ignore_ascii_case(m))
                .all(|r| r.n_a == 0 && r.n_b == 0)
        })
        .collect();
    if let Some(m) = wanted_missing.first() {
        return Err(CompareError::NoMetric(format!(
            "{m} is in neither result's shared cells"
        )));
    }
    let regressions = rows.iter().filter(|r| r.verdict == Outcome::Slower).count();
    let mut notes = Vec::new();
    if !a.test.eq_ignore_ascii_case(&b.test) {
        notes.push(format!("A ran {}, B ran {}", a.test, b.test));
    }
    Ok(Comparison {
        a: side(a),
        b: side(b),
        statistic: match opts.statistic {
            Statistic::Mean => "mean",
            Statistic::Median => "median",
        },
        confidence: opts.bootstrap.confidence,
        family,
        resamples: opts.bootstrap.resamples,
        seed: opts.bootstrap.seed,
        tolerance: opts.tolerance,
        rows,
        only_in_a,
        only_in_b,
        notes,
        regressions,
    })
}

/// The metrics to compare in one pair of cells.
fn chosen_metrics(
    a: &StoredResult,
    cell_a: &Cell,
    b: &StoredResult,
    cell_b: &Cell,
    wanted: &[String],
) -> Vec<String> {
    let in_a = metrics_in(a, cell_a);
    let in_b = metrics_in(b, cell_b);
    let shared: Vec<String> = in_a.iter().filter(|m| in_b.contains(m)).cloned().collect();
    if wanted.iter().any(|m| m.eq_ignore_ascii_case("all")) {
        return shared;
    }
    if !wanted.is_empty() {
        return wanted.iter().map(|m| m.to_ascii_uppercase()).collect();
    }
    let key: Vec<String> = KEY_METRICS
        .iter()
        .map(|(m, ..)| m.to_string())
        .filter(|m| shared.contains(m))
        .collect();
    if key.is_empty() {
        shared
    } else {
        key
    }
}

fn statistic_of(values: &[f64], statistic: Statistic) -> Option<f64> {
    let summary = crate::stats::Summary::of(values).ok()?;
    Some(match statistic {
        Statistic::Mean => summary.mean,
        Statistic::Median => summary.median,
    })
}

fn row(
    a: &StoredResult,
    cell_a: &Cell,
    b: &StoredResult,
    cell_b: &Cell,
    metric: &str,
    opts: &CompareOptions,
) -> Row {
    let (xa, xb) = (a.samples(cell_a, metric), b.samples(cell_b, metric));
    let (unit_a, unit_b) = (a.unit(metric), b.unit(metric));
    let unit = if unit_a.is_empty() {
        unit_b.clone()
    } else {
        unit_a.clone()
    };
    let (sa, sb) = (
        statistic_of(&xa, opts.statistic),
        statistic_of(&xb, opts.statistic),
    );
    let mut row = Row {
        cell: cell_label(cell_a),
        metric: metric.to_string(),
        unit,
        n_a: xa.len(),
        n_b: xb.len(),
        a: sa,
        b: sb,
        ratio: None,
        low: None,
        high: None,
        verdict: Outcome::Missing,
        note: None,
    };
    let (Some(sa), Some(sb)) = (sa, sb) else {
        return row;
    };
    if unit_a != unit_b {
        row.verdict = Outcome::UnitsDiffer;
        row.note = Some(format!("A is in {unit_a}, B in {unit_b}"));
        return row;
    }
    if sa == 0.0 && sb == 0.0 {
        row.verdict = Outcome::NoSignificantChange;
        row.note = Some("both are 0".into());
        return row;
    }
    if xa.len() < crate::stats::MIN_BOOTSTRAP_SAMPLES
        || xb.len() < crate::stats::MIN_BOOTSTRAP_SAMPLES
    {
        row.ratio = (sa != 0.0).then(|| sb / sa);
        row.verdict = Outcome::InsufficientData;
        row.note = netperf_interval_note(a, cell_a, b, cell_b, metric);
        return row;
    }
    match opts.bootstrap.ratio(&xa, &xb, opts.statistic) {
        Ok(r) => {
            row.ratio = Some(r.ratio.estimate);
            row.low = Some(r.ratio.low);
            row.high = Some(r.ratio.high);
            row.verdict = judge(r.verdict, better(metric), r.ratio.low, r.ratio.high, opts);
        }
        Err(StatsError::ZeroDenominator { .. }) => row.verdict = Outcome::Undefined,
        Err(e) => {
            row.verdict = Outcome::Undefined;
            row.note = Some(e.to_string());
        }
    }
    row
}

/// A ratio's verdict in the metric's direction.
fn judge(v: Verdict, better: Better, low: f64, high: f64, opts: &CompareOptions) -> Outcome {
    let slower = |near_one: f64| {
        if (near_one - 1.0).abs() <= opts.tolerance {
            Outcome::SlowerWithinTolerance
        } else {
            Outcome::Slower
        }
    };
    match (v, better) {
        (Verdict::NoSignificantDifference, _) => Outcome::NoSignificantChange,
        (Verdict::Higher, Better::Higher) | (Verdict::Lower, Better::Lower) => Outcome::Faster,
        (Verdict::Lower, Better::Higher) => slower(high),
        (Verdict::Higher, Better::Lower) => slower(low),
        (Verdict::Higher, Better::Neither) => Outcome::Higher,
        (Verdict::Lower, Better::Neither) => Outcome::Lower,
    }
}

/// netperf's own `-i` confidence widths of a throughput, when both single
/// tests stored one.
fn netperf_interval_note(
    a: &StoredResult,
    cell_a: &Cell,
    b: &StoredResult,
    cell_b: &Cell,
    metric: &str,
) -> Option<String> {
    if metric != "THROUGHPUT" {
        return None;
    }
    let wa = a.samples(cell_a, "THROUGHPUT_CONFID");
    let wb = b.samples(cell_b, "THROUGHPUT_CONFID");
    match (wa.first(), wb.first()) {
        (Some(wa), Some(wb)) => Some(format!("netperf -i interval width: A {wa:.1}%, B {wb:.1}%")),
        _ => None,
    }
}
