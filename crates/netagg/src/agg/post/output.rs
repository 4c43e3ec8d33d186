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

    /// What `to_json` wrote, read back as far as a page draws it: the
    /// series, the levels and the units, the values already in the
    /// report's units (the multiplier is 1). Every member is checked.
    pub fn from_json(doc: &Value) -> Result<Analysis, String> {
        use netperf_base::saved::{count, list, number, text};
        let units = text(doc, "units")?;
        let units = super::REPORT_UNITS
            .into_iter()
            .find(|u| *u == units)
            .ok_or_else(|| format!("\"units\" is {units:?}, not netagg post's"))?;
        // A level's statistic is null where no second had a value.
        let stat = |l: &Value, key: &str| match l.get(key) {
            Some(Value::Null) => Ok(f64::NAN),
            _ => number(l, key),
        };
        let whole = |v: &Value, key: &str| -> Result<i64, String> {
            let t = number(v, key)?;
            match t.fract() == 0.0 && t.abs() <= super::MAX_TIMESTAMP {
                true => Ok(t as i64),
                false => Err(format!("\"{key}\" is not a time: {t}")),
            }
        };
        let levels = list(doc, "levels")?
            .iter()
            .map(|l| {
                let streams = count(l, "streams")?
                    .try_into()
                    .map_err(|_| "too many streams")?;
                Ok(Level {
                    number: count(l, "number")?,
                    marker: count(l, "marker")?,
                    streams,
                    window: super::LevelWindow {
                        start: whole(l, "level_start")?,
                        end: whole(l, "level_end")?,
                        streams,
                    },
                    start: whole(l, "start")?,
                    end: whole(l, "end")?,
                    average: stat(l, "average")?,
                    minimum: stat(l, "minimum")?,
                    maximum: stat(l, "maximum")?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let series = list(doc, "series")?
            .iter()
            .map(|p| {
                let value = stat(p, "value")?;
                match netperf_pages::rate::is_drawable_rate(value) || value.is_nan() {
                    true => Ok(super::Point {
                        time: whole(p, "time")?,
                        value,
                    }),
                    false => Err(format!("\"value\" is not a rate a run measures: {value}")),
                }
            })
            .collect::<Result<Vec<_>, String>>()?;
        let first = series.first().map_or(0, |p| p.time);
        let last = series.last().map_or(0, |p| p.time);
        if last - first > super::MAX_RUN_SECONDS as i64 {
            return Err("\"series\" spans more than a run may".into());
        }
        let peak_number = doc.get("peak").and_then(|p| p.get("number"));
        Ok(Analysis {
            prefix: text(doc, "prefix")?,
            units,
            multiplier: 1.0,
            start_time: number(doc, "start_time")?,
            end_time: number(doc, "end_time")?,
            min_timestamp: number(doc, "first_result").unwrap_or(f64::NAN),
            peak: levels
                .iter()
                .position(|l| peak_number.and_then(Value::as_u64) == Some(l.number as u64)),
            levels,
            series,
            files: Vec::new(),
            bad_log_lines: 0,
            diagnostics: Vec::new(),
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
