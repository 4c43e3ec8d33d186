//! Quantiles of sorted data by linear interpolation between closest ranks:
//! the definition of numpy's default (`method="linear"`), R's type 7 and
//! Python's `statistics.quantiles(method="inclusive")`. For `p` in [0, 1] the
//! position is `h = (n - 1) p`; the result is `x[⌊h⌋] + (h - ⌊h⌋)(x[⌊h⌋+1] - x[⌊h⌋])`,
//! so p = 0 is the minimum, p = 1 the maximum and p = 0.5 the median.

/// The `p` quantile (0 ≤ p ≤ 1, clamped) of `sorted`, which must be non-empty,
/// finite and sorted ascending. Returns `None` for empty input.
pub fn quantile_of_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let p = if p.is_nan() { 0.5 } else { p.clamp(0.0, 1.0) };
    let h = last as f64 * p;
    let lo = (h.floor() as usize).min(last);
    let hi = (lo + 1).min(last);
    let frac = h - lo as f64;
    let (a, b) = (sorted[lo], sorted[hi]);
    // a + frac (b - a) could overflow for huge opposite-signed values; the
    // weighted form cannot, and it is exact at frac = 0 and between equal
    // values (where it could round to a neighbour of both).
    Some(if frac == 0.0 || a == b {
        a
    } else {
        (1.0 - frac) * a + frac * b
    })
}

/// The median of `sorted` (the mean of the two middle values for even n).
pub fn median_of_sorted(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let mid = n / 2;
    Some(if n % 2 == 1 {
        sorted[mid]
    } else {
        // Halving first keeps two values near f64::MAX from overflowing.
        sorted[mid - 1] / 2.0 + sorted[mid] / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_has_no_quantile_or_median() {
        assert_eq!(quantile_of_sorted(&[], 0.5), None);
        assert_eq!(median_of_sorted(&[]), None);
    }

    #[test]
    fn single_value_is_every_quantile() {
        for p in [0.0, 0.05, 0.5, 0.99, 1.0] {
            assert_eq!(quantile_of_sorted(&[7.0], p), Some(7.0));
        }
    }

    #[test]
    fn interpolates_between_closest_ranks() {
        let x = [1.0, 2.0, 3.0, 4.0];
        // numpy.percentile([1,2,3,4], [0,25,50,75,100]) = 1, 1.75, 2.5, 3.25, 4
        let expect = [
            (0.0, 1.0),
            (0.25, 1.75),
            (0.5, 2.5),
            (0.75, 3.25),
            (1.0, 4.0),
        ];
        for (p, q) in expect {
            assert_eq!(quantile_of_sorted(&x, p), Some(q), "p = {p}");
        }
    }

    #[test]
    fn out_of_range_p_is_clamped() {
        let x = [1.0, 2.0];
        assert_eq!(quantile_of_sorted(&x, -1.0), Some(1.0));
        assert_eq!(quantile_of_sorted(&x, 2.0), Some(2.0));
    }

    #[test]
    fn median_odd_and_even() {
        assert_eq!(median_of_sorted(&[1.0, 5.0, 9.0]), Some(5.0));
        assert_eq!(median_of_sorted(&[1.0, 5.0, 9.0, 11.0]), Some(7.0));
        assert_eq!(median_of_sorted(&[f64::MAX, f64::MAX]), Some(f64::MAX));
    }
}
