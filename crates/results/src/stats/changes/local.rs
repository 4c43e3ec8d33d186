//! Whether a change is a step at its point, not a drift: the test of
//! abruptness a split must pass besides the energy test.
//!
//! A drift makes the two halves of a long segment differ as surely as a
//! step does, so the energy test alone would cut a drift into pieces. What
//! sets a step apart is that the points just before it and just after it
//! differ beyond the segment's trend. So:
//! 1. the segment's ranks are detrended by their slope fitted with a
//!    separate level on either side of the split (least squares: a step
//!    leaves the slope alone, a drift is its slope), where that slope is
//!    clearly there (|t| > 3);
//! 2. at every point, the `window` ranks before and after it are compared
//!    twice — their mean ranks (a change of level) and their mean squared
//!    distance from the middle rank (a change of spread) — as z scores;
//! 3. the split's larger |z| is judged against the largest |z| anywhere in
//!    the segment when the detrended ranks are shuffled: the split was
//!    chosen for looking like a change, so it must beat the best that
//!    chance offers at any point, not a fixed one.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The permutation p-value that `values` step at `at` (points before it),
/// comparing `window` points a side, splits no closer than `min_size` to
/// the ends; `permutations` shuffles seeded with `seed`, stopping early
/// after `enough` reach the observed value.
pub(super) fn abrupt(
    values: &[f64],
    at: usize,
    window: usize,
    min_size: usize,
    (permutations, enough): (usize, usize),
    seed: u64,
) -> f64 {
    let m = values.len();
    let ranks = ranks_of(values);
    // Least squares slope of rank on position with one level before `at`
    // and another after: the pooled within-side slope, taken out only
    // where it is clearly there (|t| > 3 against the residuals about the
    // two lines). A drift over a long history is always that clear; in a
    // short one the ranks of a side slope by chance (a machine busier for
    // a while, a tbf's first second above the rest), and taking that out
    // explained half of a 14-against-8 step of 95 % away.
    let (mut sxy, mut sxx) = (0.0, 0.0);
    let mut sides = Vec::with_capacity(2);
    for side in [0..at, at..m] {
        let n = side.len() as f64;
        let tbar = (side.start + side.end - 1) as f64 / 2.0;
        let rbar = ranks[side.clone()].iter().sum::<f64>() / n;
        for i in side.clone() {
            sxy += (i as f64 - tbar) * (ranks[i] - rbar);
            sxx += (i as f64 - tbar).powi(2);
        }
        sides.push((side, tbar, rbar));
    }
    let fitted = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let ranks_ref = &ranks;
    let residual: f64 = sides
        .iter()
        .flat_map(|(side, tbar, rbar)| {
            side.clone()
                .map(move |i| (ranks_ref[i] - rbar - fitted * (i as f64 - tbar)).powi(2))
        })
        .sum();
    let degrees = m.saturating_sub(3).max(1) as f64;
    let standard_error = (residual / degrees / sxx).sqrt();
    let slope = match sxx > 0.0 && fitted.abs() > 3.0 * standard_error {
        true => fitted,
        false => 0.0,
    };
    let detrended: Vec<f64> = (0..m).map(|i| ranks[i] - slope * i as f64).collect();
    let mut scores = ranks_of(&detrended);
    let scan = Scan { window, min_size };
    let observed = scan.at(&scores, at);
    let reach = observed - observed.abs() * 1e-12;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut reached = 0;
    for draw in 1..=permutations {
        super::energy::shuffle(&mut rng, &mut scores);
        if scan.max(&scores) >= reach {
            reached += 1;
            if reached >= enough {
                return reached as f64 / draw as f64;
            }
        }
    }
    (reached + 1) as f64 / (permutations + 1) as f64
}

/// Midranks (1-based) of `values`: the energy test's, undoubled.
fn ranks_of(values: &[f64]) -> Vec<f64> {
    let ranked = super::energy::Ranked::of(values);
    ranked.points.iter().map(|p| p.0 as f64 / 2.0).collect()
}

/// The two-window z scores of level and spread.
struct Scan {
    window: usize,
    min_size: usize,
}

impl Scan {
    /// Prefix sums of the ranks and of their squared distance from the
    /// middle rank, with each one's variance over the segment.
    fn sums(scores: &[f64]) -> (Vec<f64>, Vec<f64>, f64, f64) {
        let m = scores.len() as f64;
        let mid = (m + 1.0) / 2.0;
        let mut level = Vec::with_capacity(scores.len() + 1);
        let mut spread = Vec::with_capacity(scores.len() + 1);
        let (mut a, mut b) = (0.0, 0.0);
        level.push(0.0);
        spread.push(0.0);
        for &r in scores {
            a += r;
            b += (r - mid).powi(2);
            level.push(a);
            spread.push(b);
        }
        let var_level = (m * m - 1.0) / 12.0;
        let mean_spread = b / m;
        let var_spread = scores
            .iter()
            .map(|r| ((r - mid).powi(2) - mean_spread).powi(2))
            .sum::<f64>()
            / m;
        (level, spread, var_level, var_spread)
    }

    fn z(&self, sums: &(Vec<f64>, Vec<f64>, f64, f64), m: usize, at: usize) -> f64 {
        let (level, spread, var_level, var_spread) = sums;
        let (a, b) = (at.saturating_sub(self.window), (at + self.window).min(m));
        let (n1, n2) = ((at - a) as f64, (b - at) as f64);
        let diff = |p: &[f64]| (p[b] - p[at]) / n2 - (p[at] - p[a]) / n1;
        let scale = 1.0 / n1 + 1.0 / n2;
        let z_level = diff(level) / (var_level * scale).sqrt();
        let z_spread = match *var_spread > 0.0 {
            true => diff(spread) / (var_spread * scale).sqrt(),
            false => 0.0,
        };
        z_level.abs().max(z_spread.abs())
    }

    /// The score at the split `at`.
    fn at(&self, scores: &[f64], at: usize) -> f64 {
        self.z(&Self::sums(scores), scores.len(), at)
    }

    /// The largest score over every split of the segment.
    fn max(&self, scores: &[f64]) -> f64 {
        let m = scores.len();
        let sums = Self::sums(scores);
        (self.min_size..=m - self.min_size)
            .map(|t| self.z(&sums, m, t))
            .fold(0.0, f64::max)
    }
}
