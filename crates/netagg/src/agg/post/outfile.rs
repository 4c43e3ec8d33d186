//! One netperf's output file (`netperf_<type>_<NNNNN>_to_<host>.out`): the
//! interim results netperf printed with `-D`, read the way post_proc.py's
//! `process_result` reads them. Three shapes are understood — human
//! ("Interim result: ..."), keyval (`NETPERF_INTERIM_RESULT[i]=` and its
//! three companions) and CSV (`value,units,interval,ending`, a line with
//! exactly four comma-separated fields) — and everything else (the final
//! `-o` block, histograms, blank or garbage lines) is skipped.

/// One interim result: `value` units per second over `interval` seconds
/// ending at `ending` (seconds since the epoch).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub value: f64,
    pub interval: f64,
    pub ending: f64,
}

/// What a `.out` file holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutFile {
    /// The interim results in file order.
    pub samples: Vec<Sample>,
    /// The units of the last interim result (post_proc.py reads them but
    /// decides the units from the file name; so do we).
    pub units: Option<String>,
    /// Lines that looked like an interim result but held something other
    /// than numbers; post_proc.py stops with a traceback on them.
    pub bad_lines: usize,
}

/// Which part of an interim result a keyval line carries.
#[derive(Debug, Clone, Copy)]
enum Key {
    Value,
    Units,
    Interval,
    Ending,
}

/// Keyval names in post_proc.py's order of tests; only `NETPERF_ENDING`
/// completes a result, the others set part of the next one.
const KEYVAL: &[(&str, Key)] = &[
    ("NETPERF_INTERIM_RESULT", Key::Value),
    ("NETPERF_UNITS", Key::Units),
    ("NETPERF_INTERVAL", Key::Interval),
    ("NETPERF_ENDING", Key::Ending),
];

/// Marks a human-format interim line; its fields 2, 3, 5 and 9 are value,
/// units, interval and ending.
const HUMAN: &str = "Interim result:";
const HUMAN_FIELDS: [usize; 4] = [2, 3, 5, 9];

/// The result being assembled; like post_proc.py's variables it carries over
/// from line to line, which is what lets the keyval lines build one result.
#[derive(Debug, Clone)]
struct Pending {
    value: f64,
    units: String,
    interval: f64,
    ending: f64,
}

/// Parses the text of a `.out` file. Never panics; lines that are not an
/// interim result are skipped.
pub fn parse_out(text: &str) -> OutFile {
    let mut out = OutFile::default();
    // post_proc.py's initial values: 0.0 Trans/s over 1.0 s ending at 0.0.
    let mut pending = Pending {
        value: 0.0,
        units: "Trans/s".to_string(),
        interval: 1.0,
        ending: 0.0,
    };
    let mut any_units = false;

    for line in text.split(['\n', '\r']) {
        let complete = if line.contains(HUMAN) {
            human_line(line, &mut pending)
        } else if let Some(&(_, key)) = KEYVAL.iter().find(|(name, _)| line.contains(name)) {
            keyval_line(line, key, &mut pending)
        } else {
            csv_line(line, &mut pending)
        };
        match complete {
            Parsed::Result => {
                any_units = true;
                // Ending at or before the epoch, or infinite numbers, are not
                // results rrdtool could place in time.
                if pending.ending > 0.0
                    && pending.ending.is_finite()
                    && pending.interval.is_finite()
                {
                    out.samples.push(Sample {
                        value: pending.value,
                        interval: pending.interval,
                        ending: pending.ending,
                    });
                } else {
                    out.bad_lines += 1;
                }
            }
            Parsed::Partial => any_units = true,
            Parsed::Bad => out.bad_lines += 1,
            Parsed::Other => {}
        }
    }
    if any_units {
        out.units = Some(pending.units);
    }
    out
}

/// How a line went.
enum Parsed {
    /// A complete interim result is now in `Pending`.
    Result,
    /// A keyval line set part of the next result.
    Partial,
    /// It looked like an interim result but a number did not parse.
    Bad,
    /// Not an interim result at all.
    Other,
}

fn human_line(line: &str, p: &mut Pending) -> Parsed {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [v, u, i, e] = HUMAN_FIELDS.map(|n| fields.get(n).copied());
    match (rate(v), u, num(i), num(e)) {
        (Some(value), Some(units), Some(interval), Some(ending)) => {
            *p = Pending {
                value,
                units: units.to_string(),
                interval,
                ending,
            };
            Parsed::Result
        }
        _ => Parsed::Bad,
    }
}

fn keyval_line(line: &str, key: Key, p: &mut Pending) -> Parsed {
    // post_proc.py takes what follows the first '='.
    let Some(text) = line.split('=').nth(1) else {
        return Parsed::Bad;
    };
    let number = match key {
        Key::Value => rate(Some(text)),
        _ => num(Some(text)),
    };
    match (key, number) {
        (Key::Units, _) => p.units = text.trim().to_string(),
        (Key::Value, Some(v)) => p.value = v,
        (Key::Interval, Some(v)) => p.interval = v,
        (Key::Ending, Some(v)) => {
            p.ending = v;
            return Parsed::Result;
        }
        (_, None) => return Parsed::Bad,
    }
    Parsed::Partial
}

fn csv_line(line: &str, p: &mut Pending) -> Parsed {
    let fields: Vec<&str> = line.split(',').collect();
    // Only four-field lines are interim results; the final -o line has many
    // more fields, headers and histograms have other shapes.
    let [v, u, i, e] = match fields.as_slice() {
        [v, u, i, e] => [*v, *u, *i, *e],
        _ => return Parsed::Other,
    };
    match (rate(Some(v)), num(Some(i)), num(Some(e))) {
        (Some(value), Some(interval), Some(ending)) => {
            *p = Pending {
                value,
                units: u.trim().to_string(),
                interval,
                ending,
            };
            Parsed::Result
        }
        _ => Parsed::Bad,
    }
}

/// A number as Python's `float()` reads it (surrounding blanks allowed).
fn num(field: Option<&str>) -> Option<f64> {
    field?.trim().parse::<f64>().ok()
}

/// A rate: a number the charts can draw (a negative, infinite or absurd
/// one counts as a line that did not parse).
fn rate(field: Option<&str>) -> Option<f64> {
    num(field).filter(|r| netperf_pages::rate::is_drawable_rate(*r))
}
