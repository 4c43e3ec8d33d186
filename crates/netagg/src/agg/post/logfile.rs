//! The run log runemomniaggdemo.sh writes (`netperf_<type>.log`): the lines
//! it echoes at each step of the ramp, read the way post_proc.py's
//! `find_vrules` reads them, giving the run's start and end and the list of
//! level windows (one per "Pausing ... Resuming" pair, then the last level
//! from "Netperfs started by" to "Netperfs stopping").

/// What one marker line means. The script writes, in this order:
///
/// ```text
/// Starting netperfs at 1543515682.686378423 for tps
/// Starting netperfs on localhost targeting lg1 for tps
/// Pausing for 60 seconds at 1543515683.697678277 with 1 netperfs running for tps
/// Resuming at 1543515743.706375807 for tps
/// ...
/// Netperfs started by 1543515939.171480464 for tps
/// Netperfs stopping 1543516002.219344070 for tps
/// Netperfs stopped 1543516002.255764921 for tps
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Launch,
    Pause,
    Resume,
    RunStart,
    AllStarted,
    Stopping,
    RunEnd,
}

/// (text the line contains, meaning, whitespace-separated field holding the
/// timestamp). The first match wins, in post_proc.py's order of tests, so
/// "Starting netperfs on" is recognised before "Starting netperfs at".
const MARKERS: &[(&str, Marker, usize)] = &[
    ("Starting netperfs on", Marker::Launch, 0),
    ("Pausing", Marker::Pause, 5),
    ("Resuming", Marker::Resume, 2),
    ("Starting netperfs at", Marker::RunStart, 3),
    ("Netperfs started", Marker::AllStarted, 3),
    ("Netperfs stopping", Marker::Stopping, 2),
    ("Netperfs stopped", Marker::RunEnd, 2),
];

/// Field of a "Pausing" line that holds the number of netperfs running.
const PAUSE_COUNT_FIELD: usize = 7;

/// One level of the ramp as the log marks it, in whole seconds (post_proc.py
/// truncates the timestamps with `int(float(...))`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LevelWindow {
    /// When the level's last stream had been started ("Pausing ... at" or
    /// "Netperfs started by"); 0 if the log had neither before this level's
    /// end, as in post_proc.py.
    pub start: i64,
    /// When the level ended: "Resuming at", or one second before
    /// "Netperfs stopping" (the script sleeps 3 s past the duration so that
    /// one more interim result arrives; post_proc.py takes 1 s of it back).
    pub end: i64,
    /// Streams running during the level: the count on the "Pausing" line,
    /// or for the last level the number of "Starting netperfs on" lines.
    pub streams: u32,
}

/// What the run log says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunLog {
    /// "Starting netperfs at" (seconds since the epoch, fractional).
    pub start_time: Option<f64>,
    /// "Netperfs stopped" (seconds since the epoch, fractional).
    pub end_time: Option<f64>,
    /// Number of "Starting netperfs on" lines: netperfs launched.
    pub launched: u32,
    /// The level windows in log order.
    pub levels: Vec<LevelWindow>,
    /// Marker lines whose timestamp field was missing or not a number.
    /// post_proc.py stops with a traceback on such a line; we skip it.
    pub bad_lines: usize,
}

/// Parses the text of a run log. Lines that are not markers are ignored, as
/// post_proc.py ignores them; nothing here can panic.
pub fn parse_log(text: &str) -> RunLog {
    let mut log = RunLog::default();
    // The start of the level being built and its stream count; post_proc.py
    // keeps `interval_start` across lines the same way.
    let mut level_start: i64 = 0;
    let mut level_streams: u32 = 0;

    for line in text.split(['\n', '\r']) {
        let Some(&(_, marker, field)) = MARKERS.iter().find(|(pat, _, _)| line.contains(pat))
        else {
            continue;
        };
        if marker == Marker::Launch {
            log.launched = log.launched.saturating_add(1);
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let Some(stamp) = fields.get(field).and_then(|f| parse_time(f)) else {
            log.bad_lines += 1;
            continue;
        };
        let whole = truncate(stamp);
        match marker {
            Marker::Launch => {}
            Marker::Pause => {
                level_start = whole;
                level_streams = fields
                    .get(PAUSE_COUNT_FIELD)
                    .and_then(|f| f.parse().ok())
                    .unwrap_or(log.launched);
            }
            Marker::Resume => log.levels.push(LevelWindow {
                start: level_start,
                end: whole,
                streams: level_streams,
            }),
            Marker::RunStart => log.start_time = Some(stamp),
            Marker::AllStarted => {
                level_start = whole;
                level_streams = log.launched;
            }
            Marker::Stopping => log.levels.push(LevelWindow {
                start: level_start,
                end: whole.saturating_sub(1),
                streams: level_streams,
            }),
            Marker::RunEnd => log.end_time = Some(stamp),
        }
    }
    log
}

/// A timestamp as the script prints it (`date +%s.%N`); only finite values
/// are taken, so later arithmetic stays meaningful.
fn parse_time(field: &str) -> Option<f64> {
    field.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Python's `int()` of a float: truncation toward zero (saturating, where
/// Python would grow a big integer).
pub(crate) fn truncate(v: f64) -> i64 {
    v.trunc() as i64
}
