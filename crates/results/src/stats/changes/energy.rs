//! The energy statistic of Matteson and James ("A Nonparametric Approach
//! for Multiple Change Point Analysis of Multivariate Data", JASA 2014),
//! exponent 1, on the *ranks* of a segment rather than its values, and its
//! permutation p-value.
//!
//! Ranks make the statistic robust: an outlier is one point at the top rank
//! however far it lies, heavy tails weigh no more than normal ones, and a
//! change in spread moves ranks as a change in level does. They also make
//! the test exact and distribution-free: with independent, identically
//! distributed values every order of the ranks is equally likely, so the
//! permutation p-value holds whatever the noise.
//!
//! For a split of m points after τ, with L the first τ ranks and R the rest,
//! `Q(τ) = τ(m−τ)/m · (2·B/(τ(m−τ)) − W_L/C(τ,2) − W_R/C(m−τ,2))`, B the sum
//! of |r_i − r_j| over pairs across the split, W_L and W_R within each side.
//! Moving the split one point right changes the three sums by that point's
//! distance to the left side (a Fenwick tree of counts and sums over the
//! ranks) and to the rest (its distance to all, computed once from the
//! sorted ranks, minus that): every split of a segment in O(m log m), where
//! the plain formula is O(m²) per split.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A segment's ranks, doubled so that midranks of ties are integers, each
/// with its summed distance to every rank of the segment.
pub(super) struct Ranked {
    /// (doubled rank, Σ_j |r − r_j|), in the segment's order.
    pub points: Vec<(i64, i64)>,
}

impl Ranked {
    /// Ranks of `values` (finite), ties given their midrank.
    pub fn of(values: &[f64]) -> Ranked {
        let m = values.len();
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_unstable_by(|&a, &b| values[a].total_cmp(&values[b]));
        let mut doubled = vec![0i64; m];
        let mut start = 0;
        while start < m {
            let mut end = start + 1;
            while end < m && values[order[end]] == values[order[start]] {
                end += 1;
            }
            // Midrank of 1-based ranks start+1 ..= end, doubled.
            let rank = (start + 1 + end) as i64;
            for &i in &order[start..end] {
                doubled[i] = rank;
            }
            start = end;
        }
        // Distances to all: with the ranks sorted, q_k·k − (sum below) +
        // (sum above) − q_k·(m−1−k); equal ranks add 0 on either side.
        let sorted: Vec<i64> = order.iter().map(|&i| doubled[i]).collect();
        let total: i64 = sorted.iter().sum();
        let mut below = 0i64;
        let mut totals = vec![0i64; m];
        for (k, (&i, &q)) in order.iter().zip(&sorted).enumerate() {
            let above = total - below - q;
            let k = k as i64;
            totals[i] = q * k - below + above - q * (m as i64 - 1 - k);
            below += q;
        }
        Ranked {
            points: doubled.into_iter().zip(totals).collect(),
        }
    }
}

/// A Fenwick tree of counts and sums over doubled ranks 1 ..= 2m, its
/// storage kept for the largest segment and only the part in use cleared.
pub(super) struct Fenwick {
    count: Vec<i64>,
    sum: Vec<i64>,
    len: usize,
}

impl Fenwick {
    pub fn new(m: usize) -> Fenwick {
        Fenwick {
            count: vec![0; 2 * m + 1],
            sum: vec![0; 2 * m + 1],
            len: 2 * m + 1,
        }
    }

    /// Empty, for ranks of a segment of `m` points.
    fn reset(&mut self, m: usize) {
        self.len = 2 * m + 1;
        if self.count.len() < self.len {
            self.count.resize(self.len, 0);
            self.sum.resize(self.len, 0);
        }
        self.count[..self.len].fill(0);
        self.sum[..self.len].fill(0);
    }

    fn add(&mut self, rank: i64) {
        let mut i = rank as usize;
        while i < self.len {
            self.count[i] += 1;
            self.sum[i] += rank;
            i += i & i.wrapping_neg();
        }
    }

    /// (how many, their sum) of ranks ≤ `rank`.
    fn upto(&self, rank: i64) -> (i64, i64) {
        let (mut c, mut s) = (0, 0);
        let mut i = (rank as usize).min(self.len - 1);
        while i > 0 {
            c += self.count[i];
            s += self.sum[i];
            i -= i & i.wrapping_neg();
        }
        (c, s)
    }
}

/// The split (points on the left, within `lo ..= hi`) where Q is largest
/// and that Q, scanning `points` in their order.
pub(super) fn best_split(
    points: &[(i64, i64)],
    lo: usize,
    hi: usize,
    tree: &mut Fenwick,
) -> (usize, f64) {
    let m = points.len();
    tree.reset(m);
    let mf = m as f64;
    let total: i64 = points.iter().map(|p| p.1).sum::<i64>() / 2;
    let (mut wl, mut wr, mut between) = (0i64, total, 0i64);
    let (mut left_count, mut left_sum) = (0i64, 0i64);
    let mut best = (lo, f64::NEG_INFINITY);
    for (t, &(rank, to_all)) in points.iter().enumerate().take(hi) {
        let (c, s) = tree.upto(rank);
        let to_left = rank * c - s + (left_sum - s) - rank * (left_count - c);
        let to_right = to_all - to_left;
        wl += to_left;
        wr -= to_right;
        between += to_right - to_left;
        tree.add(rank);
        left_count += 1;
        left_sum += rank;
        let tau = t + 1;
        if tau < lo {
            continue;
        }
        let (a, b) = (tau as f64, mf - tau as f64);
        let pairs = |n: f64| if n > 1.0 { n * (n - 1.0) / 2.0 } else { 1.0 };
        let e = 2.0 * between as f64 / (a * b) - wl as f64 / pairs(a) - wr as f64 / pairs(b);
        let q = a * b / mf * e;
        if q > best.1 {
            best = (tau, q);
        }
    }
    best
}

/// How a permutation test stops: after `permutations` draws, or (Besag and
/// Clifford's sequential test) as soon as `enough` draws reached the
/// observed statistic, when the p-value is `enough / draws` — far from
/// significant, so further draws would only refine a "no".
#[derive(Debug, Clone, Copy)]
pub(super) struct Permutations {
    pub permutations: usize,
    pub enough: usize,
}

/// Shuffles `items` in place (Fisher–Yates): every order equally likely.
pub(super) fn shuffle<T>(rng: &mut ChaCha8Rng, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        items.swap(i, rng.random_range(0..=i));
    }
}

/// The permutation p-value of `observed`, `statistic` computed on shuffles
/// of `points` drawn from a generator seeded with `seed`.
pub(super) fn p_value(
    points: &[(i64, i64)],
    observed: f64,
    plan: Permutations,
    seed: u64,
    mut statistic: impl FnMut(&[(i64, i64)]) -> f64,
) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut shuffled = points.to_vec();
    // Floating sums of the same integers in another order may differ in
    // the last bits: a tie with the observed value counts as reaching it.
    let reach = observed - observed.abs() * 1e-12;
    let mut reached = 0;
    for draw in 1..=plan.permutations {
        shuffle(&mut rng, &mut shuffled);
        if statistic(&shuffled) >= reach {
            reached += 1;
            if reached >= plan.enough {
                return reached as f64 / draw as f64;
            }
        }
    }
    (reached + 1) as f64 / (plan.permutations + 1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Q by its definition, O(m²) per split.
    fn q_direct(ranks: &[i64], tau: usize) -> f64 {
        let m = ranks.len();
        let d = |i: usize, j: usize| (ranks[i] - ranks[j]).abs() as f64;
        let (mut b, mut wl, mut wr) = (0.0, 0.0, 0.0);
        for i in 0..m {
            for j in i + 1..m {
                match (i < tau, j < tau) {
                    (true, true) => wl += d(i, j),
                    (false, false) => wr += d(i, j),
                    _ => b += d(i, j),
                }
            }
        }
        let (a, c) = (tau as f64, (m - tau) as f64);
        let pairs = |n: f64| if n > 1.0 { n * (n - 1.0) / 2.0 } else { 1.0 };
        a * c / m as f64 * (2.0 * b / (a * c) - wl / pairs(a) - wr / pairs(c))
    }

    #[test]
    fn ranks_are_midranks_doubled_with_their_distances() {
        let r = Ranked::of(&[3.0, 1.0, 3.0, 2.0]);
        let ranks: Vec<i64> = r.points.iter().map(|p| p.0).collect();
        assert_eq!(ranks, [7, 2, 7, 4]);
        for (i, &(q, total)) in r.points.iter().enumerate() {
            let direct: i64 = ranks.iter().map(|&o| (o - q).abs()).sum();
            assert_eq!(total, direct, "point {i}");
        }
    }

    #[test]
    fn the_scan_agrees_with_the_definition() {
        let values = [5.0, 1.0, 4.0, 4.0, 9.0, 8.0, 7.0, 9.5, 3.0, 10.0, 11.0];
        let r = Ranked::of(&values);
        let ranks: Vec<i64> = r.points.iter().map(|p| p.0).collect();
        let mut tree = Fenwick::new(values.len());
        for tau in 2..values.len() - 1 {
            let (at, q) = best_split(&r.points, tau, tau, &mut tree);
            assert_eq!(at, tau);
            let direct = q_direct(&ranks, tau);
            assert!(
                (q - direct).abs() < 1e-9 * direct.abs().max(1.0),
                "{tau}: {q} {direct}"
            );
        }
        let (at, _) = best_split(&r.points, 2, values.len() - 2, &mut tree);
        let best = (2..values.len() - 1)
            .max_by(|&a, &b| q_direct(&ranks, a).total_cmp(&q_direct(&ranks, b)))
            .unwrap();
        assert_eq!(at, best);
    }
}
