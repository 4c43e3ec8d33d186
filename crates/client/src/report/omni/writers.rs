//! The omni output styles: netperf's human columns (-O), CSV (-o) and keyval
//! (-k), character for character, and our JSON (-J).

use super::record::OmniRecord;
use super::select::Selection;
use super::table::Selector;
use super::value::render;

/// How to print the selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Human,
    Csv,
    Keyval,
    Json,
}

/// Render `selection` of `record` in `style`; `headers` is netperf's -P.
pub fn render_omni(
    style: Style,
    selection: &Selection,
    record: &OmniRecord,
    headers: bool,
) -> String {
    match style {
        Style::Human => human(selection, record, headers),
        Style::Csv => csv(selection, record, headers),
        Style::Keyval => keyval(selection, record),
        Style::Json => super::json::render_json(selection, record, &record.interims),
    }
}

fn shown(s: &Selector, record: &OmniRecord) -> Option<String> {
    render(&s.value(record), s.fmt)
}

/// Columns as wide as their longest header line or value plus one, a space
/// between columns, four header lines per block, a blank line between blocks.
/// Every line keeps netperf's trailing spaces.
fn human(selection: &Selection, record: &OmniRecord, headers: bool) -> String {
    let mut out = String::new();
    for (index, block) in selection.blocks.iter().enumerate() {
        if block.is_empty() {
            continue;
        }
        let values: Vec<Option<String>> = block.iter().map(|s| shown(s, record)).collect();
        let widths: Vec<usize> = block
            .iter()
            .zip(&values)
            .map(|(s, v)| {
                let header = s.lines.iter().map(|l| l.len()).max().unwrap_or(0);
                header.max(v.as_ref().map_or(0, |v| v.len() + 1))
            })
            .collect();
        if index > 0 {
            out.push('\n');
        }
        if headers {
            for line in 0..4 {
                for (s, width) in block.iter().zip(&widths) {
                    out.push_str(&format!("{:<w$} ", s.lines[line], w = *width));
                }
                out.push('\n');
            }
        }
        for (value, width) in values.iter().zip(&widths) {
            out.push_str(&format!(
                "{:<w$} ",
                value.as_deref().unwrap_or(""),
                w = *width
            ));
        }
        out.push('\n');
    }
    out
}

/// One title line and one value line over all blocks. A missing value leaves
/// an empty field and, as in netperf, a space at the start of the next one.
fn csv(selection: &Selection, record: &OmniRecord, headers: bool) -> String {
    let columns: Vec<&Selector> = selection.blocks.iter().flatten().copied().collect();
    if selection.blocks.first().is_none_or(|b| b.is_empty()) {
        return String::new();
    }
    let mut values = String::new();
    for s in &columns {
        match shown(s, record) {
            Some(v) => {
                values.push_str(&v);
                values.push(',');
            }
            None => values.push_str(", "),
        }
    }
    values.pop();
    let mut out = String::new();
    if headers {
        let titles: Vec<String> = columns.iter().map(|s| s.title()).collect();
        out.push_str(&titles.join(","));
        out.push('\n');
    }
    out.push_str(&values);
    out.push('\n');
    out
}

/// NAME=value, one per line, missing values left out.
fn keyval(selection: &Selection, record: &OmniRecord) -> String {
    let mut out = String::new();
    for s in selection.blocks.iter().flatten() {
        if let Some(v) = shown(s, record) {
            out.push_str(s.name);
            out.push('=');
            out.push_str(&v);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::select::parse;
    use super::*;

    fn record() -> OmniRecord {
        OmniRecord {
            throughput: 13235.354,
            throughput_units: "Trans".into(),
            ..Default::default()
        }
    }

    #[test]
    fn human_matches_the_transcript() {
        let s = parse("THROUGHPUT,THROUGHPUT_UNITS").unwrap();
        let text = render_omni(Style::Human, &s, &record(), true);
        assert_eq!(
            text,
            "Throughput Throughput \n           Units      \n                      \n                      \n13235.35   Trans/s    \n"
        );
    }

    #[test]
    fn csv_and_keyval_match_the_transcript() {
        let s = parse("THROUGHPUT,THROUGHPUT_UNITS").unwrap();
        assert_eq!(
            render_omni(Style::Csv, &s, &record(), true),
            "Throughput,Throughput Units\n13235.35,Trans/s\n"
        );
        assert_eq!(
            render_omni(Style::Keyval, &s, &record(), true),
            "THROUGHPUT=13235.35\nTHROUGHPUT_UNITS=Trans/s\n"
        );
        assert_eq!(
            render_omni(Style::Csv, &s, &record(), false),
            "13235.35,Trans/s\n"
        );
    }

    #[test]
    fn a_missing_brand_is_an_empty_field_then_a_space() {
        let s = parse("PROTOCOL,RESULT_BRAND,UUID").unwrap();
        let r = OmniRecord {
            uuid: "abc".into(),
            ..Default::default()
        };
        assert_eq!(render_omni(Style::Csv, &s, &r, false), "TCP,, abc\n");
        assert_eq!(
            render_omni(Style::Keyval, &s, &r, false),
            "PROTOCOL=TCP\nUUID=abc\n"
        );
        let branded = OmniRecord {
            brand: Some("on".into()),
            ..r
        };
        assert_eq!(
            render_omni(Style::Csv, &s, &branded, false),
            "TCP,\"on\",abc\n"
        );
    }
}
