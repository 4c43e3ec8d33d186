//! netperf's histogram print (`-v 2`): eight log10 rows of ten buckets, then
//! the count of samples of 100 s or more and the total.

use super::cfmt::{sprintf, Arg};
use netperf_data::measure::outcome::LatencyHistogram;

/// Row titles, padded to 14 columns as netperf prints them; row 0 is 1..9 µs.
pub use netperf_data::measure::histogram::ROW_LABELS as ROW_TITLES;

/// The histogram body without a title line.
pub fn render_histogram(histogram: &LatencyHistogram) -> String {
    let mut out = String::new();
    for (title, row) in ROW_TITLES.iter().zip(histogram.rows.iter()) {
        out.push_str(title);
        for count in row {
            out.push_str(&sprintf(": %4d", &[Arg::Int(c_int(*count))]));
        }
        out.push('\n');
    }
    out.push_str(&sprintf(
        ">100_SECS: %d\nHIST_TOTAL:      %d\n",
        &[
            Arg::Int(c_int(histogram.over_100_secs)),
            Arg::Int(c_int(histogram.total)),
        ],
    ));
    out
}

/// netperf's counters are C `int`s that would wrap past 2^31; we print the
/// true count instead, which no parser can tell apart below that.
fn c_int(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_histogram_prints_all_rows() {
        let text = render_histogram(&LatencyHistogram::default());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 10);
        assert_eq!(
            lines[0],
            "UNIT_USEC     :    0:    0:    0:    0:    0:    0:    0:    0:    0:    0"
        );
        assert_eq!(lines[8], ">100_SECS: 0");
        assert_eq!(lines[9], "HIST_TOTAL:      0");
    }

    #[test]
    fn wide_counts_push_columns_like_netperf() {
        let mut histogram = LatencyHistogram::default();
        histogram.rows[0] = [0, 653, 27869, 62147, 7744, 4123, 8092, 4219, 6190, 2352];
        histogram.total = 146217;
        let text = render_histogram(&histogram);
        assert!(text.starts_with(
            "UNIT_USEC     :    0:  653: 27869: 62147: 7744: 4123: 8092: 4219: 6190: 2352\n"
        ));
        assert!(text.ends_with("HIST_TOTAL:      146217\n"));
    }
}
