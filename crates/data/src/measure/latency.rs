//! HDR latency statistics: every sample kept in nanoseconds to three significant
//! digits (within 0.1%) from 1 ns to 100 s, beside an exact count, min, max, sum and
//! sum of squares. `summary()` gives what the reports print: the tail percentiles up
//! to P99.999, the mean with its standard error and 99% confidence interval.
//!
//! All memory (about 230 KB of counts) is allocated by `new`; recording is a clamp,
//! an index computation and a few additions: no allocation, no lock. One recorder
//! per thread; `merge` combines them.

use std::fmt;

use hdrhistogram::Histogram as Hdr;

/// Smallest value told apart from zero: 1 ns.
pub const LOWEST_NS: u64 = 1;
/// Largest value kept: 100 s. Larger samples are recorded as this and counted.
pub const HIGHEST_NS: u64 = 100_000_000_000;
/// Significant decimal digits kept: relative error below 1/1024.
pub const SIGNIFICANT_DIGITS: u8 = 3;

const NS_PER_US: f64 = 1_000.0;

/// Two-sided 99% quantile of the standard normal distribution.
const Z_99: f64 = 2.576;

/// Quantiles of the summary, in the order of its percentile fields.
const QUANTILES: [f64; 6] = [0.50, 0.90, 0.99, 0.999, 0.9999, 0.99999];

/// What a latency recording says, every value in microseconds. All zeros (and
/// `count` 0) when nothing was recorded.
///
/// Percentiles are HdrHistogram's: the highest value equivalent to the sample at
/// rank ceil(q * count) (capped at the max), at most 0.1% above the exact order
/// statistic. Min, max,
/// mean and standard deviation are exact (from the nanosecond samples, after
/// clamping to 100 s).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    /// Samples above 100 s, recorded as 100 s.
    pub clamped: u64,
    pub min_us: f64,
    pub max_us: f64,
    pub mean_us: f64,
    /// Population standard deviation, as netperf computes it.
    pub stddev_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    pub p99_99_us: f64,
    pub p99_999_us: f64,
    /// Standard error of the mean: stddev / sqrt(count).
    pub std_error_us: f64,
    /// 99% confidence interval of the mean, mean -/+ 2.576 standard errors. It
    /// assumes independent samples; back-to-back latencies are often correlated,
    /// which makes the true interval wider.
    pub ci99_low_us: f64,
    pub ci99_high_us: f64,
}

/// The recorder: an HdrHistogram of nanoseconds plus exact moments.
#[derive(Clone, PartialEq)]
pub struct LatencyRecorder {
    hdr: Hdr<u64>,
    min_ns: u64,
    max_ns: u64,
    sum_ns: u128,
    sum_sq_ns: u128,
    clamped: u64,
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        Self::new()
    }
}

/// The counts array is not worth printing; the moments are.
impl fmt::Debug for LatencyRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LatencyRecorder")
            .field("count", &self.hdr.len())
            .field("min_ns", &self.min_ns)
            .field("max_ns", &self.max_ns)
            .field("sum_ns", &self.sum_ns)
            .field("clamped", &self.clamped)
            .finish()
    }
}

impl LatencyRecorder {
    /// Allocates every count for 1 ns .. 100 s up front; the histogram never grows.
    pub fn new() -> Self {
        let mut hdr = Hdr::new_with_bounds(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
            .expect("constant HDR bounds are valid");
        hdr.auto(false);
        LatencyRecorder {
            hdr,
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            sum_sq_ns: 0,
            clamped: 0,
        }
    }

    /// Forgets every sample, keeping the allocation.
    pub fn reset(&mut self) {
        self.hdr.reset();
        self.min_ns = u64::MAX;
        self.max_ns = 0;
        self.sum_ns = 0;
        self.sum_sq_ns = 0;
        self.clamped = 0;
    }

    /// Records one duration in nanoseconds; above 100 s it counts as 100 s.
    #[inline]
    pub fn record_ns(&mut self, ns: u64) {
        let value = if ns > HIGHEST_NS {
            self.clamped += 1;
            HIGHEST_NS
        } else {
            ns
        };
        // In range by construction, so this neither fails nor resizes.
        let _ = self.hdr.record(value);
        self.min_ns = self.min_ns.min(value);
        self.max_ns = self.max_ns.max(value);
        // At most 10^22 per sample: u128 sums cannot overflow in any real test.
        let wide = u128::from(value);
        self.sum_ns += wide;
        self.sum_sq_ns += wide * wide;
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &LatencyRecorder) {
        // Same bounds on both sides, so adding cannot fail.
        let _ = self.hdr.add(&other.hdr);
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.sum_ns += other.sum_ns;
        self.sum_sq_ns += other.sum_sq_ns;
        self.clamped += other.clamped;
    }

    /// The HdrHistogram itself (nanoseconds), for writing it out.
    pub fn hdr(&self) -> &Hdr<u64> {
        &self.hdr
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.hdr.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hdr.is_empty()
    }

    /// The statistics of everything recorded so far.
    pub fn summary(&self) -> LatencySummary {
        let count = self.hdr.len();
        if count == 0 {
            return LatencySummary::default();
        }
        let n = count as f64;
        let mean_ns = self.sum_ns as f64 / n;
        let stddev_ns = self.variance_ns2(count).sqrt();
        let std_error_ns = stddev_ns / n.sqrt();
        let mut p = [0.0; QUANTILES.len()];
        for (slot, quantile) in p.iter_mut().zip(QUANTILES) {
            *slot = quantile_us(&self.hdr, quantile, self.max_ns);
        }
        LatencySummary {
            count,
            clamped: self.clamped,
            min_us: self.min_ns as f64 / NS_PER_US,
            max_us: self.max_ns as f64 / NS_PER_US,
            mean_us: mean_ns / NS_PER_US,
            stddev_us: stddev_ns / NS_PER_US,
            p50_us: p[0],
            p90_us: p[1],
            p99_us: p[2],
            p99_9_us: p[3],
            p99_99_us: p[4],
            p99_999_us: p[5],
            std_error_us: std_error_ns / NS_PER_US,
            ci99_low_us: (mean_ns - Z_99 * std_error_ns) / NS_PER_US,
            ci99_high_us: (mean_ns + Z_99 * std_error_ns) / NS_PER_US,
        }
    }

    /// Population variance in ns^2: (n * sum(x^2) - sum(x)^2) / n^2, exact in
    /// integers while they fit (equal samples give exactly 0), else in floats.
    fn variance_ns2(&self, count: u64) -> f64 {
        let n = u128::from(count);
        let exact = n
            .checked_mul(self.sum_sq_ns)
            .zip(self.sum_ns.checked_mul(self.sum_ns))
            .map(|(a, b)| a.saturating_sub(b));
        let nf = count as f64;
        match exact {
            Some(numerator) => numerator as f64 / (nf * nf),
            None => {
                let mean = self.sum_ns as f64 / nf;
                (self.sum_sq_ns as f64 / nf - mean * mean).max(0.0)
            }
        }
    }
}

/// A percentile in microseconds: HdrHistogram's value at quantile `q` of
/// `hdr` (nanoseconds), the top of the sample's bucket, but never above
/// `max_ns`, the exact largest sample where it is known (`u64::MAX` for a
/// histogram read back from a log). The one reading of a latency percentile:
/// a recorder's summary and the union of several streams' histograms
/// ([`union`]) both read theirs here. An empty histogram reads 0.
pub fn quantile_us(hdr: &Hdr<u64>, q: f64, max_ns: u64) -> f64 {
    hdr.value_at_quantile(q).min(max_ns) as f64 / NS_PER_US
}

/// The union of several histograms (streams of one run, intervals of one
/// log): every sample of each in one histogram, from which percentiles of
/// the whole are read ([`quantile_us`]), never from the parts' percentiles.
/// `None` for no histograms; a histogram that does not fit into the union
/// (its values beyond the union's bounds) is an error with its position.
pub fn union(
    histograms: impl IntoIterator<Item = Hdr<u64>>,
) -> Result<Option<Hdr<u64>>, (usize, String)> {
    let mut total: Option<Hdr<u64>> = None;
    for (i, histogram) in histograms.into_iter().enumerate() {
        match total.as_mut() {
            None => total = Some(histogram),
            Some(sum) => sum.add(&histogram).map_err(|e| (i, format!("{e:?}")))?,
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*: deterministic test data without a rand dependency.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        /// Uniform in [0, 1).
        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// The order statistic HdrHistogram reports: rank max(1, ceil(q * n)).
    fn reference_quantile(sorted: &[u64], q: f64) -> u64 {
        let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
        sorted[rank.min(sorted.len()) - 1]
    }

    fn assert_within(actual_us: f64, exact_ns: f64, what: &str) {
        let actual_ns = actual_us * NS_PER_US;
        let tolerance = exact_ns.abs() * 1e-3 + 1e-6;
        assert!(
            (actual_ns - exact_ns).abs() <= tolerance,
            "{what}: {actual_ns} ns vs exact {exact_ns} ns"
        );
    }

    /// Everything in the summary against a sorted-vector computation.
    fn check_against_reference(samples: &[u64]) {
        let mut recorder = LatencyRecorder::new();
        samples.iter().for_each(|&ns| recorder.record_ns(ns));
        let s = recorder.summary();
        let mut sorted: Vec<u64> = samples.iter().map(|&ns| ns.min(HIGHEST_NS)).collect();
        sorted.sort_unstable();
        let n = sorted.len() as f64;
        let mean = sorted.iter().map(|&v| v as f64).sum::<f64>() / n;
        let variance = sorted
            .iter()
            .map(|&v| (v as f64 - mean).powi(2))
            .sum::<f64>()
            / n;
        assert_eq!(s.count, sorted.len() as u64);
        assert_eq!(s.min_us * NS_PER_US, sorted[0] as f64);
        assert_eq!(s.max_us * NS_PER_US, sorted[sorted.len() - 1] as f64);
        assert_within(s.mean_us, mean, "mean");
        assert_within(s.stddev_us, variance.sqrt(), "stddev");
        let percentiles = [
            s.p50_us,
            s.p90_us,
            s.p99_us,
            s.p99_9_us,
            s.p99_99_us,
            s.p99_999_us,
        ];
        for (value, q) in percentiles.into_iter().zip(QUANTILES) {
            let exact = reference_quantile(&sorted, q) as f64;
            assert_within(value, exact, &format!("quantile {q}"));
            // HdrHistogram answers the top of the value's bucket: never below.
            assert!(value * NS_PER_US >= exact, "quantile {q} below exact");
        }
        let se = variance.sqrt() / n.sqrt();
        assert_within(s.std_error_us, se, "standard error");
        assert_within(s.ci99_low_us, mean - 2.576 * se, "ci low");
        assert_within(s.ci99_high_us, mean + 2.576 * se, "ci high");
    }

    #[test]
    fn uniform_data_is_exact_to_a_tenth_of_a_percent() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let samples: Vec<u64> = (0..200_000).map(|_| 1 + rng.next() % 5_000_000).collect();
        check_against_reference(&samples);
    }

    #[test]
    fn skewed_data_is_exact_to_a_tenth_of_a_percent() {
        // Log-uniform over 100 ns .. 10 s with a heavy tail: every magnitude.
        let mut rng = XorShift(42);
        let samples: Vec<u64> = (0..200_000)
            .map(|_| {
                let base = 100.0 * 10f64.powf(5.0 * rng.unit());
                let tail = if rng.unit() < 0.001 { 1_000.0 } else { 1.0 };
                (base * tail) as u64
            })
            .collect();
        check_against_reference(&samples);
        // Small values, recorded with unit resolution.
        let small: Vec<u64> = (0..10_000).map(|_| rng.next() % 2_000).collect();
        check_against_reference(&small);
    }

    #[test]
    fn empty_is_all_zeros() {
        let recorder = LatencyRecorder::new();
        assert!(recorder.is_empty());
        assert_eq!(recorder.summary(), LatencySummary::default());
    }

    #[test]
    fn single_sample() {
        let mut recorder = LatencyRecorder::new();
        recorder.record_ns(12_345);
        let s = recorder.summary();
        assert_eq!(s.count, 1);
        assert_eq!((s.min_us, s.max_us, s.mean_us), (12.345, 12.345, 12.345));
        assert_eq!((s.stddev_us, s.std_error_us), (0.0, 0.0));
        assert_eq!((s.ci99_low_us, s.ci99_high_us), (12.345, 12.345));
        assert_within(s.p50_us, 12_345.0, "p50");
        assert_within(s.p99_999_us, 12_345.0, "p99.999");
    }

    #[test]
    fn equal_samples_have_zero_spread() {
        let mut recorder = LatencyRecorder::new();
        (0..1_000).for_each(|_| recorder.record_ns(987_654_321));
        let s = recorder.summary();
        assert_eq!(s.stddev_us, 0.0);
        assert_eq!(s.mean_us, 987_654.321);
    }

    #[test]
    fn values_above_100_seconds_are_clamped_and_counted() {
        let mut recorder = LatencyRecorder::new();
        recorder.record_ns(0);
        recorder.record_ns(HIGHEST_NS);
        recorder.record_ns(HIGHEST_NS + 1);
        recorder.record_ns(u64::MAX);
        let s = recorder.summary();
        assert_eq!((s.count, s.clamped), (4, 2));
        assert_eq!((s.min_us, s.max_us), (0.0, 100_000_000.0));
        assert_within(s.p99_us, HIGHEST_NS as f64, "p99");
        assert_within(s.mean_us, 0.75 * HIGHEST_NS as f64, "mean");
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut rng = XorShift(7);
        let mut a = LatencyRecorder::new();
        let mut b = LatencyRecorder::new();
        let mut both = LatencyRecorder::new();
        for i in 0..10_000 {
            let ns = rng.next() % 50_000_000 + if i == 17 { HIGHEST_NS * 2 } else { 0 };
            if i % 3 == 0 { &mut a } else { &mut b }.record_ns(ns);
            both.record_ns(ns);
        }
        let mut merged = a.clone();
        merged.merge(&b);
        assert_eq!(merged, both);
        assert_eq!(merged.summary(), both.summary());
        // Merging into or from an empty recorder changes nothing.
        let mut empty = LatencyRecorder::new();
        empty.merge(&both);
        assert_eq!(empty.summary(), both.summary());
        merged.merge(&LatencyRecorder::new());
        assert_eq!(merged.summary(), both.summary());
        merged.reset();
        assert_eq!(merged.summary(), LatencySummary::default());
    }

    fn hdr_of(samples_ns: impl IntoIterator<Item = u64>) -> Hdr<u64> {
        let mut r = LatencyRecorder::new();
        samples_ns.into_iter().for_each(|ns| r.record_ns(ns));
        r.hdr().clone()
    }

    #[test]
    fn a_percentile_is_the_value_at_its_rank_capped_at_the_largest_sample() {
        // Below 2048 ns every value is its own bucket: exact ranks.
        let h = hdr_of(1..=1_000);
        assert_eq!(quantile_us(&h, 0.5, u64::MAX), 0.5);
        assert_eq!(quantile_us(&h, 0.99, u64::MAX), 0.99);
        assert_eq!(quantile_us(&h, 1.0, u64::MAX), 1.0);
        assert_eq!(quantile_us(&h, 0.0, u64::MAX), 0.001);
        assert_eq!(quantile_us(&h, 0.99, 400), 0.4);
        // 10 ms lies in a bucket 4096 ns wide (9,998,336..=10,002,431 ns):
        // its top, unless the largest sample is known.
        let h = hdr_of([10_000_000]);
        assert_eq!(quantile_us(&h, 0.5, u64::MAX), 10_002.431);
        assert_eq!(quantile_us(&h, 0.5, 10_000_000), 10_000.0);
        // Empty, or a quantile that is no number: 0 or the top, no panic.
        assert_eq!(quantile_us(&hdr_of([]), 0.99, u64::MAX), 0.0);
        let _ = quantile_us(&hdr_of(1..=10), f64::NAN, u64::MAX);
        assert_eq!(quantile_us(&hdr_of(1..=10), 7.0, u64::MAX), 0.01);
    }

    #[test]
    fn the_union_holds_every_sample_of_its_parts() {
        assert_eq!(union(std::iter::empty()), Ok(None));
        let one = union([hdr_of(1..=100)]).unwrap().unwrap();
        assert_eq!(one, hdr_of(1..=100));
        // 900 samples of 1..=900 ns and 100 of 1901..=2000: the union's P90
        // is the 900th sample, P95 the 950th.
        let u = union([hdr_of(1..=900), hdr_of(1_901..=2_000), hdr_of([])])
            .unwrap()
            .unwrap();
        assert_eq!(u.len(), 1_000);
        assert_eq!(quantile_us(&u, 0.90, u64::MAX), 0.9);
        assert_eq!(quantile_us(&u, 0.95, u64::MAX), 1.95);
        // A histogram beyond the union's bounds is named by its position.
        let mut narrow = Hdr::<u64>::new_with_bounds(1, 1_000, 3).unwrap();
        narrow.auto(false);
        let (at, _) = union([narrow, hdr_of([5_000_000])]).unwrap_err();
        assert_eq!(at, 1);
    }

    #[test]
    fn merged_percentiles_are_the_unions_not_averages_of_percentiles() {
        // A fast stream (1..=1000 us) and a slow one (10..=20 ms), as two
        // streams of one run might be: P99 of the union is the slow one's
        // 98th percentile, far from the mean of the two P99s.
        let mut fast = LatencyRecorder::new();
        let mut slow = LatencyRecorder::new();
        let mut union: Vec<u64> = Vec::new();
        for i in 1..=1_000u64 {
            fast.record_ns(i * 1_000);
            union.push(i * 1_000);
        }
        for i in 0..1_000u64 {
            let ns = 10_000_000 + i * 10_000;
            slow.record_ns(ns);
            union.push(ns);
        }
        union.sort_unstable();
        let (f, s) = (fast.summary(), slow.summary());
        let mut merged = fast.clone();
        merged.merge(&slow);
        let m = merged.summary();
        for (value, q) in [(m.p50_us, 0.50), (m.p90_us, 0.90), (m.p99_us, 0.99)] {
            assert_within(value, reference_quantile(&union, q) as f64, "merged");
        }
        // The union's P99 is rank 1980: 10 ms + 979 * 10 us = 19.79 ms.
        assert_within(m.p99_us, 19_790_000.0, "merged p99");
        let averaged_p99 = (f.p99_us + s.p99_us) / 2.0;
        assert_within(averaged_p99, (990_000.0 + 19_890_000.0) / 2.0, "averaged");
        assert!((m.p99_us - averaged_p99).abs() > 5_000.0, "{m:?}");
        // The median of the union sits at the fast stream's top.
        assert_within(m.p50_us, 1_000_000.0, "merged p50");
        assert_eq!(m.count, 2_000);
    }
}
