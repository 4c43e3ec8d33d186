//! netperf's latency histogram (`-v 2` output and the `-j` statistics): counts in
//! log10 rows from UNIT_USEC to TEN_SEC plus ">100_SECS", exact min/max/mean/stddev,
//! and the percentiles netperf 2.7.1 interpolates from the buckets.
//!
//! Recording is a few float operations and counter increments on a fixed array: no
//! allocation, no lock. One `Histogram` per thread; `merge` combines them.

use std::collections::VecDeque;
use std::time::Instant;

use super::outcome::LatencyHistogram;

/// Rows: UNIT_USEC, TEN_USEC, HUNDRED_USEC, UNIT_MSEC, TEN_MSEC, HUNDRED_MSEC,
/// UNIT_SEC, TEN_SEC.
pub const ROWS: usize = 8;

/// Row names as netperf prints them (padded to its 14 columns).
pub const ROW_LABELS: [&str; ROWS] = [
    "UNIT_USEC     ",
    "TEN_USEC      ",
    "HUNDRED_USEC  ",
    "UNIT_MSEC     ",
    "TEN_MSEC      ",
    "HUNDRED_MSEC  ",
    "UNIT_SEC      ",
    "TEN_SEC       ",
];

/// Printed columns per row: the leading digit.
pub const COLUMNS: usize = 10;

/// netperf 2.7.1 keeps 100 buckets per row (HIST_NUM_OF_BUCKET), a tenth of a
/// column each, and prints them summed by ten; the percentiles use all 100.
const BUCKETS_PER_ROW: usize = 100;
const BUCKETS_PER_COLUMN: usize = BUCKETS_PER_ROW / COLUMNS;

/// Microseconds per unit of each row (the `scale` of netperf's percentile search).
const ROW_UNIT_US: [f64; ROWS] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7];

/// What netperf answers for a percentile that falls among the >100 s samples.
const BEYOND_LAST_ROW_US: u64 = 100_000_000;

/// Row and bucket (0..100) of a sample, or `None` for 100 seconds and more.
///
/// netperf divides the value by ten in single precision until it is below ten and
/// takes `(int)(value * 10)`. Below 2^24 us (16.7 s) that is exact decimal digit
/// arithmetic; above, float rounding moves some values up a bucket (and values a few
/// microseconds under 100 s to ">100_SECS"), so the float steps are kept as they are.
fn bucket_of(us: u64) -> Option<(usize, usize)> {
    let mut value = us as f32;
    for row in 0..ROWS {
        if value < 10.0 {
            let bucket = (value * BUCKETS_PER_COLUMN as f32) as usize;
            return Some((row, bucket.min(BUCKETS_PER_ROW - 1)));
        }
        value /= 10.0;
    }
    None
}

/// Summary statistics for the `-j` output selectors, all in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LatencyStats {
    pub min_us: u64,
    pub max_us: u64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub mean_us: f64,
    pub stddev_us: f64,
}

/// The recorder. About 6.5 KB; create it before the test, not per operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    buckets: [[u64; BUCKETS_PER_ROW]; ROWS],
    over_100_secs: u64,
    total: u64,
    min_us: u64,
    max_us: u64,
    sum_us: u64,
    sum_sq_us: f64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    pub fn new() -> Self {
        Histogram {
            buckets: [[0; BUCKETS_PER_ROW]; ROWS],
            over_100_secs: 0,
            total: 0,
            min_us: u64::MAX,
            max_us: 0,
            sum_us: 0,
            sum_sq_us: 0.0,
        }
    }

    /// Forgets every sample.
    pub fn clear(&mut self) {
        *self = Self::new();
    }

    /// Records a duration in nanoseconds, rounded to the nearest microsecond:
    /// netperf subtracts two microsecond timestamps, which on average is the true
    /// duration; truncating would bias every sample half a microsecond low.
    #[inline]
    pub fn record_ns(&mut self, ns: u64) {
        self.record_us(ns.saturating_add(500) / 1000);
    }

    /// Records a duration in microseconds. Samples of 100 s and more count in the
    /// ">100_SECS" cell and, as in netperf, in the total and the statistics.
    #[inline]
    pub fn record_us(&mut self, us: u64) {
        self.total += 1;
        self.sum_us = self.sum_us.saturating_add(us);
        let as_float = us as f64;
        self.sum_sq_us += as_float * as_float;
        self.min_us = self.min_us.min(us);
        self.max_us = self.max_us.max(us);
        match bucket_of(us) {
            Some((row, bucket)) => self.buckets[row][bucket] += 1,
            None => self.over_100_secs += 1,
        }
    }

    /// Adds every sample of `other` (per-thread histograms, or iterations).
    pub fn merge(&mut self, other: &Histogram) {
        for (mine, theirs) in self.buckets.iter_mut().zip(&other.buckets) {
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
        self.over_100_secs += other.over_100_secs;
        self.total += other.total;
        self.min_us = self.min_us.min(other.min_us);
        self.max_us = self.max_us.max(other.max_us);
        self.sum_us = self.sum_us.saturating_add(other.sum_us);
        self.sum_sq_us += other.sum_sq_us;
    }

    /// Samples recorded (HIST_TOTAL).
    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The printed counts of one row (`row` < ROWS), summed by leading digit.
    pub fn row(&self, row: usize) -> [u64; COLUMNS] {
        let mut columns = [0; COLUMNS];
        if let Some(buckets) = self.buckets.get(row) {
            for (column, group) in columns.iter_mut().zip(buckets.chunks(BUCKETS_PER_COLUMN)) {
                *column = group.iter().sum();
            }
        }
        columns
    }

    /// Samples of 100 seconds or more.
    pub fn over_100_secs(&self) -> u64 {
        self.over_100_secs
    }

    /// The `fraction` (0.5 for P50) percentile in microseconds, as netperf's
    /// HIST_get_percentile: rank `(int)(fraction * total)`, the first bucket whose
    /// running count reaches it, interpolated linearly inside that bucket.
    /// 0 when the rank is 0 (e.g. P50 of a single sample); 10^8 when the rank lies
    /// among the >100 s samples.
    ///
    /// Unlike netperf we also answer 0 when the rank falls among 0 us samples;
    /// netperf takes that 0 for "not found", divides by zero in the next row and
    /// prints -2147483648.
    pub fn percentile(&self, fraction: f64) -> u64 {
        let rank = (fraction * self.total as f64) as u64;
        if rank == 0 {
            return 0;
        }
        let mut reached = 0u64;
        for (buckets, unit_us) in self.buckets.iter().zip(ROW_UNIT_US) {
            for (index, &count) in buckets.iter().enumerate() {
                let before = reached;
                reached += count;
                if reached >= rank {
                    // before < rank <= reached, so the divisor is at least 1.
                    let within = (rank - before) as f64 / (reached - before) as f64;
                    let buckets_per_unit = BUCKETS_PER_COLUMN as f64;
                    return ((index as f64 + within) * unit_us / buckets_per_unit) as u64;
                }
            }
        }
        BEYOND_LAST_ROW_US
    }

    /// Mean and population standard deviation in microseconds (netperf's
    /// HIST_get_stats); zeros when empty.
    pub fn mean_stddev(&self) -> (f64, f64) {
        if self.total == 0 {
            return (0.0, 0.0);
        }
        let n = self.total as f64;
        let sum = self.sum_us as f64;
        let mean = sum / n;
        // Rounding can leave a hair below zero for equal samples.
        let variance = ((self.sum_sq_us * n - sum * sum) / (n * n)).max(0.0);
        (mean, variance.sqrt())
    }

    /// Everything the `-j` selectors print. Min and max are 0 when empty, as in
    /// netperf.
    pub fn stats(&self) -> LatencyStats {
        let (mean_us, stddev_us) = self.mean_stddev();
        let (min_us, max_us) = if self.is_empty() {
            (0, 0)
        } else {
            (self.min_us, self.max_us)
        };
        LatencyStats {
            min_us,
            max_us,
            p50_us: self.percentile(0.50),
            p90_us: self.percentile(0.90),
            p99_us: self.percentile(0.99),
            mean_us,
            stddev_us,
        }
    }

    /// The printed histogram and the exact statistics, for the report. The
    /// percentiles need the finer buckets: take them from `stats()`.
    pub fn to_outcome(&self) -> LatencyHistogram {
        let mut rows = [[0; COLUMNS]; ROWS];
        for (index, row) in rows.iter_mut().enumerate() {
            *row = self.row(index);
        }
        LatencyHistogram {
            rows,
            over_100_secs: self.over_100_secs,
            total: self.total,
            min_us: self.min_us,
            max_us: self.max_us,
            sum_us: self.sum_us as f64,
            sum_sq_us: self.sum_sq_us,
        }
    }
}

/// Start times of operations still in flight, oldest first: netperf's
/// HIST_timestamp_start / HIST_timestamp_stop_add queue, which lets a burst of
/// requests (`-b`) be timed each from its own send to its response. The capacity
/// is fixed at creation, so start and stop never allocate.
#[derive(Debug, Clone)]
pub struct InFlightTimer {
    starts: VecDeque<Instant>,
    capacity: usize,
}

impl InFlightTimer {
    /// Room for `max_outstanding` operations plus one, as netperf sizes its ring
    /// (it creates it with the first burst size + 1, or 1 without a burst).
    pub fn new(max_outstanding: usize) -> Self {
        let capacity = max_outstanding.saturating_add(1);
        InFlightTimer {
            starts: VecDeque::with_capacity(capacity),
            capacity,
        }
    }

    /// An operation began at `now`. When full, the oldest start is dropped so the
    /// queue never grows (netperf overwrites it and warns).
    #[inline]
    pub fn start(&mut self, now: Instant) {
        if self.starts.len() >= self.capacity {
            self.starts.pop_front();
        }
        self.starts.push_back(now);
    }

    /// The oldest operation ended at `now`: its duration goes into `histogram`.
    /// Returns false (recording nothing) when nothing is in flight; netperf exits.
    #[inline]
    pub fn stop(&mut self, now: Instant, histogram: &mut Histogram) -> bool {
        match self.starts.pop_front() {
            Some(started) => {
                let elapsed = now.saturating_duration_since(started).as_nanos();
                histogram.record_ns(u64::try_from(elapsed).unwrap_or(u64::MAX));
                true
            }
            None => false,
        }
    }

    /// Forgets operations in flight (a new iteration, or a reconnect in a
    /// connect/request/response test), as HIST_purge.
    pub fn purge(&mut self) {
        self.starts.clear();
    }

    /// Operations in flight.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// (row, printed column) of a sample, or None for >100 s.
    fn cell(us: u64) -> Option<(usize, usize)> {
        bucket_of(us).map(|(row, bucket)| (row, bucket / BUCKETS_PER_COLUMN))
    }

    #[test]
    fn bucket_edges() {
        let cases: &[(u64, Option<(usize, usize)>)] = &[
            (0, Some((0, 0))),
            (1, Some((0, 1))),
            (9, Some((0, 9))),
            (10, Some((1, 1))),
            (19, Some((1, 1))),
            (20, Some((1, 2))),
            (99, Some((1, 9))),
            (100, Some((2, 1))),
            (999, Some((2, 9))),
            (1_000, Some((3, 1))),
            (9_999, Some((3, 9))),
            (10_000, Some((4, 1))),
            (99_999, Some((4, 9))),
            (100_000, Some((5, 1))),
            (999_999, Some((5, 9))),
            (1_000_000, Some((6, 1))),
            (9_999_999, Some((6, 9))),
            (10_000_000, Some((7, 1))),
            (99_999_000, Some((7, 9))),
            (100_000_000, None),
            (u64::MAX, None),
        ];
        for &(us, expected) in cases {
            assert_eq!(cell(us), expected, "{us} us");
        }
        // Columns 0 of rows above the first stay empty: 10..=19 us is TEN_USEC 1.
        assert_eq!(bucket_of(15), Some((1, 15)));
        assert_eq!(bucket_of(150), Some((2, 15)));
        // Integer microseconds use every tenth bucket of the first row.
        assert_eq!(bucket_of(7), Some((0, 70)));
    }

    #[test]
    fn float_rounding_near_100_seconds_matches_netperf() {
        // netperf's float steps send these to >100_SECS and one bucket up.
        assert_eq!(bucket_of(99_999_999), None);
        assert_eq!(bucket_of(16_999_999), Some((7, 17)));
        // Exact below 2^24 us.
        assert_eq!(bucket_of(16_777_215), Some((7, 16)));
    }

    #[test]
    fn rows_and_statistics() {
        let mut h = Histogram::new();
        for us in [5, 15, 15, 250, 3_000, 150_000_000] {
            h.record_us(us);
        }
        let out = h.to_outcome();
        assert_eq!(out.rows[0][5], 1);
        assert_eq!(out.rows[1][1], 2);
        assert_eq!(out.rows[2][2], 1);
        assert_eq!(out.rows[3][3], 1);
        assert_eq!(out.over_100_secs, 1);
        assert_eq!(out.total, 6);
        assert_eq!(out.min_us, 5);
        assert_eq!(out.max_us, 150_000_000);
        let counted: u64 = out.rows.iter().flatten().sum();
        assert_eq!(counted + out.over_100_secs, out.total);
        assert_eq!(h.row(1), out.rows[1]);
        assert_eq!(h.row(99), [0; COLUMNS]);
    }

    #[test]
    fn mean_and_population_stddev() {
        let mut h = Histogram::new();
        for us in [2, 4, 4, 4, 5, 5, 7, 9] {
            h.record_us(us);
        }
        let (mean, stddev) = h.mean_stddev();
        assert_eq!(mean, 5.0);
        assert_eq!(stddev, 2.0);
        let s = h.stats();
        assert_eq!((s.min_us, s.max_us), (2, 9));
    }

    #[test]
    fn empty_histogram() {
        let h = Histogram::new();
        assert_eq!(h.stats(), LatencyStats::default());
        assert_eq!(h.to_outcome(), LatencyHistogram::default());
        assert!(h.is_empty());
    }

    #[test]
    fn percentiles_interpolate_within_a_bucket() {
        // 100 samples of 25 us (TEN_USEC, bucket 25). P50: rank 50 of 100 in that
        // bucket -> (25 + 0.5) * 10 / 10 = 25.5 -> 25.
        let mut h = Histogram::new();
        for _ in 0..100 {
            h.record_us(25);
        }
        assert_eq!(h.percentile(0.5), 25);
        assert_eq!(h.percentile(0.99), 25);
        // Rank equal to the running count: (25 + 1) -> 26.
        assert_eq!(h.percentile(1.0), 26);
    }

    #[test]
    fn percentiles_hand_computed() {
        // 90 samples of 3 us, 9 of 150 us, 1 of 2500 us.
        let mut h = Histogram::new();
        (0..90).for_each(|_| h.record_us(3));
        (0..9).for_each(|_| h.record_us(150));
        h.record_us(2_500);
        // P50: rank 50 in UNIT_USEC bucket 30: (30 + 50/90) * 1 / 10 = 3.05 -> 3.
        assert_eq!(h.percentile(0.50), 3);
        // P90: rank 90, reached exactly at bucket 30: (30 + 1) / 10 = 3.1 -> 3.
        assert_eq!(h.percentile(0.90), 3);
        // P99: rank 99 in HUNDRED_USEC bucket 15: (15 + 9/9) * 100 / 10 = 160.
        assert_eq!(h.percentile(0.99), 160);
        // Rank 100 in UNIT_MSEC bucket 25: (25 + 1) * 1000 / 10 = 2600.
        assert_eq!(h.percentile(1.0), 2_600);
    }

    #[test]
    fn percentile_edge_cases() {
        let mut h = Histogram::new();
        assert_eq!(h.percentile(0.5), 0);
        h.record_us(40);
        // rank (int)(0.5 * 1) = 0.
        assert_eq!(h.percentile(0.5), 0);
        assert_eq!(h.percentile(1.0), 41);
        let mut zeros = Histogram::new();
        (0..10).for_each(|_| zeros.record_us(0));
        assert_eq!(zeros.percentile(0.5), 0);
        let mut slow = Histogram::new();
        slow.record_us(200_000_000);
        slow.record_us(300_000_000);
        assert_eq!(slow.percentile(0.99), BEYOND_LAST_ROW_US);
        let _ = (
            h.percentile(f64::NAN),
            h.percentile(-1.0),
            h.percentile(1e300),
        );
    }

    #[test]
    fn record_ns_rounds_to_microseconds() {
        let mut h = Histogram::new();
        h.record_ns(1_499);
        h.record_ns(1_500);
        h.record_ns(u64::MAX);
        assert_eq!(h.row(0)[1], 1);
        assert_eq!(h.row(0)[2], 1);
        assert_eq!(h.over_100_secs(), 1);
    }

    #[test]
    fn merge_adds_everything() {
        let mut a = Histogram::new();
        let mut b = Histogram::new();
        let mut both = Histogram::new();
        for us in [1, 30, 700] {
            a.record_us(us);
            both.record_us(us);
        }
        for us in [2, 45_000, 120_000_000] {
            b.record_us(us);
            both.record_us(us);
        }
        a.merge(&b);
        assert_eq!(a, both);
        let mut empty = Histogram::new();
        empty.merge(&Histogram::new());
        assert_eq!(empty, Histogram::new());
    }

    #[test]
    fn in_flight_timer_pairs_oldest_first() {
        let base = Instant::now();
        let mut h = Histogram::new();
        let mut timer = InFlightTimer::new(2);
        timer.start(base);
        timer.start(base + Duration::from_micros(5));
        assert_eq!(timer.len(), 2);
        assert!(timer.stop(base + Duration::from_micros(50), &mut h));
        assert!(timer.stop(base + Duration::from_micros(50), &mut h));
        assert!(!timer.stop(base, &mut h));
        assert_eq!(h.stats().max_us, 50);
        assert_eq!(h.stats().min_us, 45);
        // Full: the oldest start is dropped, capacity never grows.
        for i in 0..10 {
            timer.start(base + Duration::from_micros(i));
        }
        assert_eq!(timer.len(), 3);
        timer.purge();
        assert!(timer.is_empty());
        // A stop "before" its start records 0, not a panic.
        timer.start(base + Duration::from_secs(1));
        assert!(timer.stop(base, &mut h));
        assert_eq!(h.stats().min_us, 0);
    }
}
