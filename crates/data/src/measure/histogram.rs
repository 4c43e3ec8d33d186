//! netperf's latency histogram (`-v 2` output and the `-j` statistics): counts in
//! log10 rows from UNIT_USEC to TEN_SEC plus ">100_SECS" as netperf 2.7.1 prints
//! them, and beside them an HDR recorder (`latency`) of the same samples in
//! nanoseconds from which the `-j` statistics and the HDR summary come.
//!
//! Recording is a few float operations and counter increments on preallocated
//! arrays: no allocation, no lock. One `Histogram` per thread; `merge` combines them.

use std::collections::VecDeque;
use std::time::Instant;

use super::latency::LatencyRecorder;
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
/// column each, and prints them summed by ten.
const BUCKETS_PER_ROW: usize = 100;
const BUCKETS_PER_COLUMN: usize = BUCKETS_PER_ROW / COLUMNS;

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

/// Summary statistics for the `-j` output selectors, all in microseconds, taken
/// from the HDR recorder: percentiles, min and max rounded to the nearest
/// microsecond.
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

/// The recorder. About 6.5 KB inline and 230 KB of HDR counts on the heap; create
/// it before the test, not per operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    latency: LatencyRecorder,
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
            latency: LatencyRecorder::new(),
            buckets: [[0; BUCKETS_PER_ROW]; ROWS],
            over_100_secs: 0,
            total: 0,
            min_us: u64::MAX,
            max_us: 0,
            sum_us: 0,
            sum_sq_us: 0.0,
        }
    }

    /// Forgets every sample, keeping the HDR allocation.
    pub fn clear(&mut self) {
        self.latency.reset();
        self.buckets = [[0; BUCKETS_PER_ROW]; ROWS];
        self.over_100_secs = 0;
        self.total = 0;
        self.min_us = u64::MAX;
        self.max_us = 0;
        self.sum_us = 0;
        self.sum_sq_us = 0.0;
    }

    /// Records a duration in nanoseconds: as is in the HDR recorder, and rounded
    /// to the nearest microsecond in netperf's rows (netperf subtracts two
    /// microsecond timestamps, which on average is the true duration; truncating
    /// would bias every sample half a microsecond low).
    #[inline]
    pub fn record_ns(&mut self, ns: u64) {
        self.latency.record_ns(ns);
        self.record_rows(ns.saturating_add(500) / 1000);
    }

    /// Records a duration in microseconds. Samples of 100 s and more count in the
    /// ">100_SECS" cell and, as in netperf, in the total and the statistics.
    #[inline]
    pub fn record_us(&mut self, us: u64) {
        self.latency.record_ns(us.saturating_mul(1000));
        self.record_rows(us);
    }

    /// netperf's half: the row bucket and the microsecond sums.
    #[inline]
    fn record_rows(&mut self, us: u64) {
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
        self.latency.merge(&other.latency);
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

    /// The HDR recorder of the same samples.
    pub fn latency(&self) -> &LatencyRecorder {
        &self.latency
    }

    /// The HDR recorder, without netperf's rows (what a latency log writes).
    pub fn into_latency(self) -> LatencyRecorder {
        self.latency
    }

    /// Everything the `-j` selectors print, from the HDR summary (exact to 0.1%,
    /// where netperf interpolated in its buckets). Zeros when empty, as in netperf.
    pub fn stats(&self) -> LatencyStats {
        let summary = self.latency.summary();
        let whole = |us: f64| us.round() as u64;
        LatencyStats {
            min_us: whole(summary.min_us),
            max_us: whole(summary.max_us),
            p50_us: whole(summary.p50_us),
            p90_us: whole(summary.p90_us),
            p99_us: whole(summary.p99_us),
            mean_us: summary.mean_us,
            stddev_us: summary.stddev_us,
        }
    }

    /// The printed histogram, netperf's sums and the HDR summary, for the report.
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
            summary: self.latency.summary(),
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
        let s = h.stats();
        assert_eq!((s.mean_us, s.stddev_us), (5.0, 2.0));
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
    fn percentiles_come_from_the_hdr_recorder() {
        // 90 samples of 3 us, 9 of 150 us, 1 of 2500 us: netperf's bucket
        // interpolation said P99 = 160; the order statistic is 150.
        let mut h = Histogram::new();
        (0..90).for_each(|_| h.record_us(3));
        (0..9).for_each(|_| h.record_us(150));
        h.record_us(2_500);
        let s = h.stats();
        assert_eq!((s.p50_us, s.p90_us, s.p99_us), (3, 3, 150));
        assert_eq!((s.min_us, s.max_us), (3, 2_500));
        let summary = h.to_outcome().summary;
        assert_eq!(summary, h.latency().summary());
        assert_eq!(summary.count, 100);
        assert_eq!(summary.max_us, 2_500.0);
        // Nanosecond samples keep their fractions in the summary and round in stats.
        let mut fine = Histogram::new();
        (0..10).for_each(|_| fine.record_ns(25_499));
        assert_eq!(fine.stats().p50_us, 25);
        assert!((fine.latency().summary().p50_us - 25.499).abs() < 0.03);
    }

    #[test]
    fn percentile_edge_cases() {
        let mut h = Histogram::new();
        h.record_us(40);
        // netperf's rank (int)(0.5 * 1) = 0 gave 0; the HDR rank is at least 1.
        assert_eq!(h.stats().p50_us, 40);
        let mut zeros = Histogram::new();
        (0..10).for_each(|_| zeros.record_us(0));
        assert_eq!(zeros.stats(), LatencyStats::default());
        let mut slow = Histogram::new();
        slow.record_us(200_000_000);
        slow.record_us(300_000_000);
        // Beyond the HDR range: clamped to 100 s there, kept in netperf's cell.
        assert_eq!(slow.stats().p99_us, 100_000_000);
        assert_eq!(slow.to_outcome().summary.clamped, 2);
        assert_eq!(slow.over_100_secs(), 2);
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
