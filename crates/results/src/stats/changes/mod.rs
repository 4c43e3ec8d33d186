//! Change points in a series of measurements: where the distribution of a
//! metric changed, by how much, and how sure that is.
//!
//! Method: E-Divisive (Matteson and James, 2014, as Apache Otava and
//! MongoDB's signal-processing-algorithms use it) on ranks — see
//! [`energy`]. A segment (at first the whole series) is split where the
//! energy statistic of its ranks is largest; the split is a change point
//! when
//! 1. a permutation test of that maximum (the same maximum over every split
//!    of each shuffle, so the choice of the split is paid for) gives
//!    p ≤ `alpha`, and
//! 2. the change is abrupt ([`local`]): with the segment's trend taken
//!    out, the `local_window` points just before and just after it differ
//!    in level or spread more than any point of the shuffled segment's
//!    do (permutation p ≤ `alpha`). A slow drift makes the two halves of a
//!    long segment differ, but not a point's neighbours once its slope is
//!    removed, so it is not taken for a step; nor is a segment around it
//!    split further.
//!
//! Each side of an accepted split is then searched the same way (binary
//! segmentation). Under no change (independent values from one
//! distribution, whatever its shape) the first test rejects with
//! probability at most `alpha`: that is the false-positive rate per series.
//! Everything is seeded: the same series and options give the same answer.
//!
//! For each change point: the medians of the segments before and after
//! (between the neighbouring change points), the ratio after/before with a
//! bootstrap interval ([`super::bootstrap`], the medians of the points
//! nearest the change), and both p-values.

mod energy;
mod local;

use super::bootstrap::{Bootstrap, Estimate, Statistic};
use super::quantile::median_of_sorted;
use super::{sorted_copy, validate, StatsError};
use energy::{best_split, p_value, Fenwick, Permutations, Ranked};

/// The longest series searched: the rank sums stay exact 64-bit integers
/// (to a few million points) and the time within minutes.
pub const MAX_POINTS: usize = 1_000_000;

/// How change points are searched for.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeOptions {
    /// The significance level of each test: a series with no change gets a
    /// change point with at most this probability.
    pub alpha: f64,
    /// Permutations per test; the smallest p-value is 1/(permutations+1),
    /// so it must be at least 1/alpha − 1.
    pub permutations: usize,
    /// The fewest points a segment may have on either side of a change.
    pub min_size: usize,
    /// Points on either side of a change the abruptness test compares.
    pub local_window: usize,
    /// Changes smaller than this fraction (0.05 = 5 %) of the median
    /// before are not reported.
    pub min_change: f64,
    /// Seed of the permutations and of the bootstrap.
    pub seed: u64,
    /// Resamples of the ratio's interval, and its confidence.
    pub resamples: usize,
    pub confidence: f64,
    /// The ratio's interval is taken over at most this many points on
    /// either side, the nearest the change (the medians over all).
    pub interval_points: usize,
}

impl Default for ChangeOptions {
    fn default() -> Self {
        ChangeOptions {
            alpha: 0.01,
            permutations: 199,
            min_size: 5,
            local_window: 100,
            min_change: 0.0,
            seed: Bootstrap::default().seed,
            resamples: 1_000,
            confidence: 0.95,
            interval_points: 500,
        }
    }
}

/// One change point.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangePoint {
    /// The first point after the change, from 0.
    pub index: usize,
    /// Points in the segments before and after it.
    pub n_before: usize,
    pub n_after: usize,
    pub median_before: f64,
    pub median_after: f64,
    /// median after / median before, with its bootstrap interval; None when
    /// the median before is 0 (no ratio) or a side has too few points.
    pub ratio: Option<Estimate>,
    /// The permutation p-value of the split (the maximum over the segment).
    pub p_value: f64,
    /// The permutation p-value of the abruptness test.
    pub local_p_value: f64,
}

impl ChangeOptions {
    fn check(&self) -> Result<(), StatsError> {
        let bad = |why: String| Err(StatsError::InvalidSetting(why));
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return bad(format!("alpha {} is not between 0 and 1", self.alpha));
        }
        if ((self.permutations + 1) as f64) * self.alpha < 1.0 {
            return bad(format!(
                "{} permutations cannot reach p ≤ {}: at least {} are needed",
                self.permutations,
                self.alpha,
                (1.0 / self.alpha).ceil() as usize - 1
            ));
        }
        if self.min_size < 2 || self.local_window < self.min_size {
            return bad(format!(
                "min_size {} must be at least 2 and the local window {} at least min_size",
                self.min_size, self.local_window
            ));
        }
        if !(self.min_change >= 0.0 && self.min_change.is_finite()) {
            return bad(format!(
                "min_change {} is not a fraction ≥ 0",
                self.min_change
            ));
        }
        Ok(())
    }

    fn plan(&self) -> Permutations {
        self.plan_of(self.permutations)
    }

    fn plan_of(&self, permutations: usize) -> Permutations {
        Permutations {
            permutations,
            // Ten draws at or above the observed value: p is then at least
            // 10/permutations, far from any sensible alpha.
            enough: 10.max((self.alpha * (permutations + 1) as f64).ceil() as usize + 1),
        }
    }

    /// A test's p-value, estimated again with ten times the permutations
    /// (and seeds of their own) when the first estimate is above alpha but
    /// within three times it: 199 draws cannot tell a p of 0.005 from one
    /// of 0.015 (a perfect step of 8 points a side has a true p near
    /// alpha's half, and one seed in a few draws it over). Only such
    /// borderline tests pay for it. Under no change the level becomes at
    /// most alpha·(1 + 2·alpha) (1.02 alpha at 0.01).
    fn resolved(&self, seed: u64, test: impl Fn(Permutations, u64) -> f64) -> f64 {
        let p = test(self.plan(), seed);
        if p <= self.alpha || p > 3.0 * self.alpha {
            return p;
        }
        let more = 10 * (self.permutations + 1) - 1;
        test(self.plan_of(more), seed ^ 0x005e_ed0f_5eed)
    }

    /// A seed for the test of `s..e` that depends on nothing else, so the
    /// order segments are searched in does not change the answer.
    fn seed_for(&self, s: usize, e: usize, local: bool) -> u64 {
        let mut z = self.seed
            ^ (s as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ (e as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9)
            ^ u64::from(local);
        // splitmix64's finaliser.
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The change points of `values` (in time order), by index.
pub fn change_points(values: &[f64], opts: &ChangeOptions) -> Result<Vec<ChangePoint>, StatsError> {
    opts.check()?;
    if values.is_empty() {
        return Ok(Vec::new());
    }
    validate(values)?;
    if values.len() > MAX_POINTS {
        return Err(StatsError::InvalidSetting(format!(
            "a series of {} points: change points are searched in at most {MAX_POINTS}",
            values.len()
        )));
    }
    let mut found: Vec<(usize, f64, f64)> = Vec::new();
    let mut tree = Fenwick::new(values.len());
    let mut todo = vec![(0, values.len())];
    while let Some((s, e)) = todo.pop() {
        let Some((tau, p, local_p)) = split(values, s, e, opts, &mut tree) else {
            continue;
        };
        found.push((s + tau, p, local_p));
        todo.push((s + tau, e));
        todo.push((s, s + tau));
    }
    found.sort_by_key(|f| f.0);
    let mut points = Vec::with_capacity(found.len());
    for (k, &(index, p_value, local_p_value)) in found.iter().enumerate() {
        let start = if k == 0 { 0 } else { found[k - 1].0 };
        let end = found.get(k + 1).map_or(values.len(), |f| f.0);
        points.push(describe(
            values,
            start,
            index,
            end,
            p_value,
            local_p_value,
            opts,
        )?);
    }
    // A change from a median of 0 has no relative size: it is kept.
    points.retain(|c| {
        let size = (c.median_after / c.median_before - 1.0).abs();
        size.is_nan() || size >= opts.min_change
    });
    Ok(points)
}

/// The accepted split of `values[s..e]` (points on its left, p-value,
/// local p-value), if any.
fn split(
    values: &[f64],
    s: usize,
    e: usize,
    opts: &ChangeOptions,
    tree: &mut Fenwick,
) -> Option<(usize, f64, f64)> {
    let m = e - s;
    if m < 2 * opts.min_size {
        return None;
    }
    let (lo, hi) = (opts.min_size, m - opts.min_size);
    let ranked = Ranked::of(&values[s..e]);
    let (tau, observed) = best_split(&ranked.points, lo, hi, tree);
    let tau = nearest_boundary(&values[s..e], tau, lo, hi);
    let tree = std::cell::RefCell::new(tree);
    let p = opts.resolved(opts.seed_for(s, e, false), |plan, seed| {
        p_value(&ranked.points, observed, plan, seed, |x| {
            best_split(x, lo, hi, &mut tree.borrow_mut()).1
        })
    });
    if p > opts.alpha {
        return None;
    }
    let local_p = opts.resolved(opts.seed_for(s, e, true), |plan, seed| {
        local::abrupt(
            &values[s..e],
            tau,
            opts.local_window,
            opts.min_size,
            (plan.permutations, plan.enough),
            seed,
        )
    });
    (local_p <= opts.alpha).then_some((tau, p, local_p))
}

/// Where near `tau` (within 2 points, and within `lo..=hi`) a step in
/// level divides the segment best in its values: the split most likely
/// under a Laplace distribution on either side, each with its own median
/// and scale (the least Σ n·ln(mean absolute deviation from the median)).
/// The energy statistic finds the change, but its largest value leans
/// toward balanced sides and, on ranks, cannot tell the last run before a
/// step from the runs after it when its rank lies next to theirs (14 runs
/// at 2,100–9,100 Mb/s then 8 at 200: the split one early wins one time in
/// ten); the values can. Each side's own scale keeps a wide side from
/// claiming a run that sits far out of a narrow one (1,777 Mb/s beside
/// 200 ± 3, not 3,400 ± 1,700), and medians keep an outlier from moving it.
/// Only a clear step in level is placed so (the medians either side
/// further apart than the wider side's mean absolute deviation): a change
/// of spread alone has no boundary in level to find.
fn nearest_boundary(values: &[f64], tau: usize, lo: usize, hi: usize) -> usize {
    const REACH: usize = 2;
    let fit = |side: &[f64]| {
        let median = median_of_sorted(&sorted_copy(side)).unwrap_or(0.0);
        let deviation = side.iter().map(|v| (v - median).abs()).sum::<f64>() / side.len() as f64;
        (median, deviation)
    };
    let ((before, spread_before), (after, spread_after)) =
        (fit(&values[..tau]), fit(&values[tau..]));
    if (before - after).abs() <= spread_before.max(spread_after) {
        return tau;
    }
    // A floor for a side of equal values, whose deviation is 0.
    let floor = values.iter().fold(0.0_f64, |a, v| a.max(v.abs())).max(1.0) * 1e-9;
    let cost = |t: usize| {
        let side = |x: &[f64]| x.len() as f64 * (fit(x).1 + floor).ln();
        side(&values[..t]) + side(&values[t..])
    };
    let candidates = tau.saturating_sub(REACH).max(lo)..=(tau + REACH).min(hi);
    candidates
        .map(|t| (t, cost(t)))
        // The energy split wins ties: it moves only for a better fit.
        .fold((tau, cost(tau)), |best, (t, c)| match c < best.1 {
            true => (t, c),
            false => best,
        })
        .0
}

/// The change at `index` between the segments `start..index` and `index..end`.
fn describe(
    values: &[f64],
    start: usize,
    index: usize,
    end: usize,
    p_value: f64,
    local_p_value: f64,
    opts: &ChangeOptions,
) -> Result<ChangePoint, StatsError> {
    let (before, after) = (&values[start..index], &values[index..end]);
    let median = |x: &[f64]| median_of_sorted(&sorted_copy(x)).unwrap_or(f64::NAN);
    let near_before = &before[before.len().saturating_sub(opts.interval_points)..];
    let near_after = &after[..after.len().min(opts.interval_points)];
    let bootstrap = Bootstrap {
        resamples: opts.resamples,
        confidence: opts.confidence,
        seed: opts.seed_for(start, end, true),
    };
    let ratio = match bootstrap.ratio(near_before, near_after, Statistic::Median) {
        Ok(r) => Some(r.ratio),
        Err(StatsError::ZeroDenominator { .. } | StatsError::TooFewSamples { .. }) => None,
        Err(e) => return Err(e),
    };
    Ok(ChangePoint {
        index,
        n_before: before.len(),
        n_after: after.len(),
        median_before: median(before),
        median_after: median(after),
        ratio,
        p_value,
        local_p_value,
    })
}

#[cfg(test)]
mod tests;
