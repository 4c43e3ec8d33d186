//! What an analysis says, in post_proc.py's words and as data: the summary
//! text ("Average of peak interval is ..."), the per-second series as CSV,
//! and everything as JSON.

use std::fmt::Write as _;
use std::io::{self, Write};

use serde_json::{json, Value};

use super::{Analysis, Level};

/// Reads one statistic of a level.
type Stat = fn(&Level) -> f64;

/// (statistic, word post_proc.py prints): each level gets three lines.
const STATS: &[(Stat, &str)] = &[
    (|l| l.average, "Average"),
    (|l| l.minimum, "Minimum"),
    (|l| l.maximum, "Maximum"),
];

impl Analysis {
    /// post_proc.py's output: "Prefix is ...", the lines it prints while
    /// working (refused updates and the like), the peak level's three lines
    /// and, with `intervals` (its `--intervals`), three lines per level.
    ///
    /// The format strings are post_proc.py's:
    /// `"Average of peak interval is %.3f %s from %d to %d"` and
    /// `"Average of interval %d is %.3f %s from %d to %d"` (likewise
    /// Minimum and Maximum), the values multiplied into the report's units.
    /// Where post_proc.py would stop with a traceback because no level has
    /// an average above zero, one line says so instead.
    pub fn summary_text(&self, intervals: bool) -> String {
        let mut text = format!("Prefix is {}\n", self.prefix);
        for line in &self.diagnostics {
            let _ = writeln!(text, "{line}");
        }
        match self.peak.and_then(|i| self.levels.get(i)) {
            Some(peak) => {
                for (stat, word) in STATS {
                    let _ = writeln!(
                        text,
                        "{word} of peak interval is {} {} from {} to {}",
                        py_fixed3(stat(peak) * self.multiplier),
                        self.units,
                        peak.start,
                        peak.end
                    );
                }
            }
            None => text.push_str("No interval has an average above zero: there is no peak\n"),
        }
        if intervals {
            for level in &self.levels {
                for (stat, word) in STATS {
                    let _ = writeln!(
                        text,
                        "{word} of interval {} is {} {} from {} to {}",
                        level.number,
                        py_fixed3(stat(level) * self.multiplier),
                        self.units,
                        level.start,
                        level.end
                    );
                }
            }
        }
        text
    }

    /// The aggregate as CSV: a header `timestamp,<units>`, then one row per
    /// second, the value in the report's units with three decimals.
    pub fn write_series_csv(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(w, "timestamp,{}", self.units)?;
        for p in &self.series {
            writeln!(w, "{},{}", p.time, py_fixed3(p.value * self.multiplier))?;
        }
        Ok(())
    }

    /// `write_series_csv` into a string.
    pub fn series_csv(&self) -> String {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = self.write_series_csv(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Everything as JSON, values in the report's units; unknown values
    /// (NaN) are null.
    pub fn to_json(&self) -> Value {
        let m = self.multiplier;
        let level = |l: &Level| {
            json!({
                "number": l.number,
                "marker": l.marker,
                "streams": l.streams,
                "level_start": l.window.start,
                "level_end": l.window.end,
                "start": l.start,
                "end": l.end,
                "average": l.average * m,
                "minimum": l.minimum * m,
                "maximum": l.maximum * m,
            })
        };
        let peak = self.peak.and_then(|i| self.levels.get(i)).map(level);
        json!({
            "prefix": self.prefix,
            "units": self.units,
            "start_time": self.start_time,
            "end_time": self.end_time,
            "first_result": self.min_timestamp,
            "peak": peak,
            "levels": self.levels.iter().map(level).collect::<Vec<_>>(),
            "series": self.series.iter()
                .map(|p| json!({"time": p.time, "value": p.value * m}))
                .collect::<Vec<_>>(),
            "files": self.files.iter().map(|f| json!({
                "name": f.name,
                "samples": f.samples,
                "bad_lines": f.bad_lines,
                "first": f.first,
                "last": f.last,
            })).collect::<Vec<_>>(),
            "bad_log_lines": self.bad_log_lines,
            "diagnostics": self.diagnostics,
        })
    }

    /// `to_json`, pretty-printed, with a final newline.
    pub fn write_json(&self, w: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *w, &self.to_json())?;
        writeln!(w)
    }
}

/// Python's `'%.3f' % v`: as Rust's `{:.3}` (both round the exact binary
/// value half to even) but "nan" and "inf" in Python's spelling.
fn py_fixed3(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{v:.3}")
    }
}
