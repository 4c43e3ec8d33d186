//! Latency histograms as HdrHistogram interval logs, the format
//! HdrHistogram's own tools read (Java `HistogramLogReader` and
//! `HistogramLogProcessor`, Python `hdrh.log.HistogramLogReader`, the C
//! library): `netperf -- --latency-histogram FILE` writes one interval that
//! holds the whole test's histogram, values in nanoseconds, and netagg reads
//! such files back to merge concurrent streams, since percentiles of a union
//! come only from the union's histogram.

use std::io::Cursor;
use std::path::Path;
use std::time::{Duration, SystemTime};

use base64::Engine;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram as Hdr;

use super::latency::{self, LatencyRecorder};

/// Largest log file read back: one test's histogram compresses to a few
/// KiB, so anything near this is not one of ours.
const MAX_LOG_BYTES: u64 = 16 << 20;

/// The log's header comment, naming the unit (HdrHistogram logs carry none).
const UNIT_COMMENT: &str = "netperf-ng latency histogram: values in nanoseconds";

/// The legend line HdrHistogram's Java writer puts before the intervals;
/// readers skip it, people are helped by it.
const LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";

/// The interval log of `recorder`: a header (unit, log format version,
/// StartTime and BaseTime at `started`), the legend, and one interval of
/// length `elapsed` starting at offset 0.
pub fn encode(
    recorder: &LatencyRecorder,
    started: SystemTime,
    elapsed: Duration,
) -> Result<Vec<u8>, String> {
    let mut text = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    IntervalLogWriterBuilder::new()
        .add_comment(UNIT_COMMENT)
        .add_comment("[Histogram log format version 1.3]")
        .with_start_time(started)
        .with_base_time(started)
        .begin_log_with(&mut text, &mut serializer)
        .map_err(|e| e.to_string())?;
    text.extend_from_slice(LEGEND.as_bytes());
    // A builder with no headers writes nothing: only the interval follows.
    let mut log = IntervalLogWriterBuilder::new()
        .begin_log_with(&mut text, &mut serializer)
        .map_err(|e| e.to_string())?;
    log.write_histogram(recorder.hdr(), Duration::ZERO, elapsed, None)
        .map_err(|e| format!("cannot encode the histogram: {e:?}"))?;
    Ok(text)
}

/// Writes the interval log of `recorder` to `path`; the error is a
/// sentence naming the file.
pub fn write(
    path: &Path,
    recorder: &LatencyRecorder,
    started: SystemTime,
    elapsed: Duration,
) -> Result<(), String> {
    let text = encode(recorder, started, elapsed)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Every interval histogram of a log, added into one (a log of ours holds
/// one). A log with no interval, or one that does not parse, is an error.
pub fn decode(log: &[u8]) -> Result<Hdr<u64>, String> {
    let mut intervals = Vec::new();
    for entry in IntervalLogIterator::new(log) {
        let interval = match entry {
            Ok(LogEntry::Interval(interval)) => interval,
            Ok(_) => continue,
            Err(e) => return Err(format!("not an HdrHistogram interval log ({e:?})")),
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(interval.encoded_histogram())
            .map_err(|e| format!("an interval's histogram is not base64: {e}"))?;
        let histogram: Hdr<u64> = Deserializer::new()
            .deserialize(&mut Cursor::new(bytes))
            .map_err(|e| format!("an interval's histogram does not decode: {e:?}"))?;
        intervals.push(histogram);
    }
    latency::union(intervals)
        .map_err(|(_, e)| format!("intervals do not add up: {e}"))?
        .ok_or_else(|| "the log holds no histogram".to_string())
}

/// Reads and decodes the log at `path`; the error names the file.
pub fn read(path: &Path) -> Result<Hdr<u64>, String> {
    use std::io::Read;
    let named = |e: String| format!("{}: {e}", path.display());
    let file = std::fs::File::open(path).map_err(|e| named(e.to_string()))?;
    let mut log = Vec::new();
    file.take(MAX_LOG_BYTES + 1)
        .read_to_end(&mut log)
        .map_err(|e| named(e.to_string()))?;
    if log.len() as u64 > MAX_LOG_BYTES {
        return Err(named(format!("larger than {MAX_LOG_BYTES} bytes")));
    }
    decode(&log).map_err(named)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder(samples: impl IntoIterator<Item = u64>) -> LatencyRecorder {
        let mut r = LatencyRecorder::new();
        samples.into_iter().for_each(|ns| r.record_ns(ns));
        r
    }

    #[test]
    fn a_log_decodes_to_the_recorded_histogram() {
        let r = recorder((1..=5_000u64).map(|i| i * 997));
        let started = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let log = encode(&r, started, Duration::from_millis(1500)).unwrap();
        let text = String::from_utf8(log.clone()).unwrap();
        assert!(text.starts_with("#netperf-ng latency histogram: values in nanoseconds\n"));
        assert!(text.contains("#[StartTime: 1700000000.000 (seconds since epoch)]\n"));
        assert!(text.contains("\n0.000,1.500,"), "{text}");
        let back = decode(&log).unwrap();
        assert_eq!(back, *r.hdr());
        assert_eq!(back.len(), 5_000);
    }

    #[test]
    fn intervals_of_one_log_add_up_and_junk_is_refused() {
        let a = encode(&recorder([1_000, 2_000]), SystemTime::now(), Duration::ZERO).unwrap();
        let b = encode(&recorder([3_000]), SystemTime::now(), Duration::ZERO).unwrap();
        let both = decode(&[a, b].concat()).unwrap();
        assert_eq!(both.len(), 3);
        assert!(decode(b"").unwrap_err().contains("no histogram"));
        assert!(decode(b"#only a comment\n")
            .unwrap_err()
            .contains("no histogram"));
        assert!(decode(b"0.000,1.000,5.0,HISTFAAAA!!!\n").is_err());
        assert!(decode(b"0.000,1.000,5.0,AAAA\n").is_err());
        let e = read(Path::new("/nonexistent/latency.hlog")).unwrap_err();
        assert!(e.starts_with("/nonexistent/latency.hlog: "), "{e}");
    }
}
