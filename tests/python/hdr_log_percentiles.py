"""Reads HdrHistogram interval logs with the Python `hdrhistogram` package
(an implementation independent of netperf-ng's), merges them, and prints
JSON: each file's sample count, the merged count, and the merged P50, P90
and P99 in nanoseconds. A percentile is the highest value equivalent to
the sample at rank max(1, ceil(q * count)), HdrHistogram's definition.

usage: python3 hdr_log_percentiles.py FILE...
"""
import json
import math
import sys

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

# netperf-ng's bounds: 1 ns .. 100 s, three significant digits.
LOWEST, HIGHEST, DIGITS = 1, 100_000_000_000, 3


def read(path):
    reader = HistogramLogReader(path, HdrHistogram(LOWEST, HIGHEST, DIGITS))
    total = HdrHistogram(LOWEST, HIGHEST, DIGITS)
    intervals = 0
    while True:
        interval = reader.get_next_interval_histogram()
        if interval is None:
            break
        total.add(interval)
        intervals += 1
    reader.close()
    if intervals == 0:
        sys.exit(f"{path}: no interval histogram")
    return total


def quantile(histogram, q):
    rank = max(1, math.ceil(q * histogram.get_total_count()))
    seen = 0
    for item in histogram.get_recorded_iterator():
        seen += item.count_at_value_iterated_to
        if seen >= rank:
            return item.value_iterated_to
    sys.exit("rank beyond the histogram")


def main(paths):
    histograms = [read(p) for p in paths]
    merged = HdrHistogram(LOWEST, HIGHEST, DIGITS)
    for h in histograms:
        merged.add(h)
    print(json.dumps({
        "counts": [h.get_total_count() for h in histograms],
        "count": merged.get_total_count(),
        "p50_ns": quantile(merged, 0.50),
        "p90_ns": quantile(merged, 0.90),
        "p99_ns": quantile(merged, 0.99),
        "mean_ns": merged.get_mean_value(),
    }))


if __name__ == "__main__":
    main(sys.argv[1:])
