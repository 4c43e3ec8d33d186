//! Interim results (-D): one measured interval and netperf's three ways of
//! printing it — the human line, the CSV line (with -o) and the indexed
//! keyval lines (with -k) — with its precisions and its wall-clock ending in
//! milliseconds; and the TCP_INFO selectors (`-o`/`-k` with -D) after
//! netperf's four fields, only when selected.

use super::cfmt::{sprintf, Arg};
use super::omni::record::{EndRecord, OmniRecord};
use super::omni::table::Selector;
use super::omni::value::render;
use netperf_data::measure::tcp_info::TcpInterval;

/// One interim result, as printed and as kept for JSON.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interim {
    /// Rate over the interval, in `units`.
    pub value: f64,
    /// "10^6bits/s", "Trans/s", ...
    pub units: String,
    pub interval_secs: f64,
    /// Wall-clock time at the end of the interval, seconds since the epoch.
    pub ending_epoch_secs: f64,
    /// What TCP did over the interval (TCP tests; our end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpInterval>,
    /// The netserver's figures for the same interval (our netserver only),
    /// paired by time after the test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_tcp: Option<TcpInterval>,
}

/// How interim results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterimStyle {
    Human,
    Csv,
    Keyval,
    /// Kept for the JSON output, not printed.
    Silent,
}

/// netperf prints the ending as seconds, a dot and the milliseconds.
fn ending(epoch_secs: f64) -> String {
    let whole = epoch_secs.floor();
    let millis = ((epoch_secs - whole) * 1000.0).floor() as i64;
    format!("{}.{:03}", whole as i64, millis.clamp(0, 999))
}

/// The text of one interim result; `index` numbers the keyval lines.
pub fn render_interim(i: &Interim, style: InterimStyle, index: usize) -> String {
    let value = |fmt: &str| sprintf(fmt, &[Arg::Float(i.value)]);
    let interval = sprintf("%.3f", &[Arg::Float(i.interval_secs)]);
    let end = ending(i.ending_epoch_secs);
    match style {
        InterimStyle::Human => format!(
            "Interim result: {} {} over {interval} seconds ending at {end}\n",
            value("%7.2f"),
            i.units
        ),
        InterimStyle::Csv => format!("{},{},{interval},{end}\n", value("%7.2f"), i.units),
        InterimStyle::Keyval => format!(
            "NETPERF_INTERIM_RESULT[{index}]={}\nNETPERF_UNITS[{index}]={}\n\
             NETPERF_INTERVAL[{index}]={interval}\nNETPERF_ENDING[{index}]={end}\n",
            value("%.2f"),
            i.units
        ),
        InterimStyle::Silent => String::new(),
    }
}

/// `render_interim` with the TCP_INFO `columns` selected (LOCAL_TCP_* and
/// REMOTE_TCP_*) after netperf's fields: more CSV fields, or more keyval
/// lines `NETPERF_<SELECTOR>[index]`; empty where the interval has no such
/// figure. Without columns, netperf's text unchanged.
pub fn render_interim_with(
    i: &Interim,
    style: InterimStyle,
    index: usize,
    columns: &[&'static Selector],
) -> String {
    let mut text = render_interim(i, style, index);
    if columns.is_empty() {
        return text;
    }
    // The selectors read a record: one standing for this interval.
    let record = OmniRecord {
        local: EndRecord {
            tcp: i.tcp,
            ..Default::default()
        },
        remote: EndRecord {
            tcp: i.remote_tcp,
            ..Default::default()
        },
        ..Default::default()
    };
    let shown = |s: &Selector| render(&s.value(&record), s.fmt).unwrap_or_default();
    match style {
        InterimStyle::Csv => {
            text.pop();
            for s in columns {
                text.push(',');
                text.push_str(&shown(s));
            }
            text.push('\n');
        }
        InterimStyle::Keyval => {
            for s in columns {
                text.push_str(&format!("NETPERF_{}[{index}]={}\n", s.name, shown(s)));
            }
        }
        InterimStyle::Human | InterimStyle::Silent => {}
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(value: f64, units: &str) -> Interim {
        Interim {
            value,
            units: units.into(),
            interval_secs: 1.0054,
            ending_epoch_secs: 1_795_311_928.619_5,
            tcp: None,
            remote_tcp: None,
        }
    }

    #[test]
    fn lines_match_the_transcripts() {
        assert_eq!(
            render_interim(&sample(24513.024, "10^6bits/s"), InterimStyle::Human, 0),
            "Interim result: 24513.02 10^6bits/s over 1.005 seconds ending at 1795311928.619\n"
        );
        assert_eq!(
            render_interim(&sample(13326.59, "Trans/s"), InterimStyle::Csv, 0),
            "13326.59,Trans/s,1.005,1795311928.619\n"
        );
        assert_eq!(
            render_interim(&sample(12377.21, "Trans/s"), InterimStyle::Keyval, 2),
            "NETPERF_INTERIM_RESULT[2]=12377.21\nNETPERF_UNITS[2]=Trans/s\n\
             NETPERF_INTERVAL[2]=1.005\nNETPERF_ENDING[2]=1795311928.619\n"
        );
        // %7.2f pads small rates to seven characters.
        assert!(
            render_interim(&sample(5.0, "Trans/s"), InterimStyle::Human, 0)
                .starts_with("Interim result:    5.00 Trans/s")
        );
        assert_eq!(
            render_interim(&sample(1.0, "x"), InterimStyle::Silent, 0),
            ""
        );
    }
}
