//! Which selectors to print, in which blocks: netperf's `-o/-O/-k [spec]`
//! argument (`all`, a list separated by commas or spaces with `;` between
//! blocks, or the name of a file of up to four lines) and its per-test default
//! when no list is given.

use super::table::{by_name, by_name_or_title, index_of, Need, Selector, NETPERF_SELECTORS};

/// netperf prints at most four blocks (lines of -O output).
pub const MAX_BLOCKS: usize = 4;
/// netperf's limit on one name in a selector file.
const MAX_NAME_IN_FILE: usize = 80;

/// The chosen selectors, block by block (empty blocks are not printed).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub blocks: Vec<Vec<&'static Selector>>,
    /// Names that matched no selector (netperf ignores them silently; we say so).
    pub unknown: Vec<String>,
}

impl Selection {
    /// Whether any chosen selector needs `need` measured.
    pub fn needs(&self, need: Need) -> bool {
        self.blocks.iter().flatten().any(|s| s.need == need)
    }

    /// The TCP_INFO selectors chosen, in order: the columns -D's CSV and
    /// keyval interim lines add.
    pub fn tcp_columns(&self) -> Vec<&'static Selector> {
        self.blocks
            .iter()
            .flatten()
            .copied()
            .filter(|s| matches!(s.need, Need::LocalTcpInfo | Need::RemoteTcpInfo))
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.iter().all(|b| b.is_empty())
    }
}

/// Why a selection could not be read.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SelectError {
    #[error("Could not open output selection file '{0}' errno {1}")]
    File(String, i32),
    /// netperf swaps the two numbers in this message; so do we, so that the
    /// text is the same.
    #[error("Output selection starting column {line} on line {column} is too long")]
    TooLong { line: usize, column: usize },
}

/// What the test is, as far as its default selection depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestShape {
    Send,
    Receive,
    RequestResponse,
}

/// Parse a `-o/-O/-k` argument as netperf does.
pub fn parse(spec: &str) -> Result<Selection, SelectError> {
    if spec.eq_ignore_ascii_case("all") {
        return Ok(all());
    }
    if spec.contains(',') || spec.contains(';') || by_name(spec).is_some() {
        return Ok(parse_direct(spec));
    }
    // Four lines of names never need more; a device or a huge file must not
    // be read to its end.
    const MAX_FILE_BYTES: usize = 64 * 1024;
    let bytes = netperf_base::input::read_prefix(
        std::path::Path::new(spec),
        MAX_FILE_BYTES,
        netperf_base::input::DEFAULT_WAIT,
        netperf_base::input::OnSilence::UseWhatArrived,
    )
    .map_err(|e| SelectError::File(spec.to_string(), netperf_base::input::errno_of(&e)))?;
    parse_file(&bytes)
}

/// netperf's `all`: four blocks by ranges of its selector order.
pub fn all() -> Selection {
    const RANGES: [(&str, &str); MAX_BLOCKS] = [
        ("SOCKET_TYPE", "RESPONSE_SIZE"),
        ("LOCAL_CPU_UTIL", "TRANSPORT_MSS"),
        ("LOCAL_SEND_THROUGHPUT", "REMOTE_CORK"),
        ("LOCAL_SYSNAME", "COMMAND_LINE"),
    ];
    let blocks = RANGES
        .iter()
        .map(|(first, last)| {
            let (a, b) = (index_of(first).unwrap_or(0), index_of(last).unwrap_or(0));
            NETPERF_SELECTORS[a..=b].iter().collect()
        })
        .collect();
    Selection {
        blocks,
        unknown: Vec::new(),
    }
}

/// A list on the command line: blocks split at `;`, names at `,` or ` `.
/// Blocks beyond the fourth are ignored, as netperf does.
fn parse_direct(spec: &str) -> Selection {
    let mut selection = Selection::default();
    for line in spec.split(';').take(MAX_BLOCKS) {
        let mut block = Vec::new();
        for token in line.split([',', ' ']).filter(|t| !t.is_empty()) {
            match by_name(token) {
                Some(s) => block.push(s),
                None => selection.unknown.push(token.to_string()),
            }
        }
        selection.blocks.push(block);
    }
    selection
}

/// A selector file: up to four lines, names (or titles) separated by commas;
/// netperf shows an unknown name as an empty column, and so do we.
fn parse_file(bytes: &[u8]) -> Result<Selection, SelectError> {
    let blank = by_name("OUTPUT_NONE").expect("OUTPUT_NONE is in the table");
    let mut selection = Selection::default();
    let mut block = Vec::new();
    let mut name = String::new();
    let finish = |name: &mut String, selection: &mut Selection, block: &mut Vec<_>| {
        match by_name_or_title(name) {
            Some(s) => block.push(s),
            None => {
                selection.unknown.push(name.clone());
                block.push(blank);
            }
        }
        name.clear();
    };
    for (column, &byte) in (1..).zip(bytes) {
        if selection.blocks.len() == MAX_BLOCKS {
            break;
        }
        if name.len() == MAX_NAME_IN_FILE {
            return Err(SelectError::TooLong {
                line: selection.blocks.len() + 1,
                column,
            });
        }
        match byte {
            b',' => finish(&mut name, &mut selection, &mut block),
            b'\n' => {
                finish(&mut name, &mut selection, &mut block);
                selection.blocks.push(std::mem::take(&mut block));
            }
            b' '..=b'~' => name.push(byte as char),
            _ => {}
        }
    }
    if !name.is_empty() && selection.blocks.len() < MAX_BLOCKS {
        finish(&mut name, &mut selection, &mut block);
    }
    if !block.is_empty() && selection.blocks.len() < MAX_BLOCKS {
        selection.blocks.push(block);
    }
    // An unknown empty name (",," or a blank line) is netperf's blank column,
    // not worth a warning.
    selection.unknown.retain(|n| !n.trim().is_empty());
    Ok(selection)
}

/// netperf's default selection for a test without a list.
pub fn by_test(shape: TestShape, cpu: bool) -> Selection {
    const TPUT: &str = "ELAPSED_TIME,THROUGHPUT,THROUGHPUT_UNITS";
    const CPU: &str = "LOCAL_CPU_UTIL,LOCAL_CPU_PERCENT_USER,LOCAL_CPU_PERCENT_SYSTEM,\
LOCAL_CPU_PERCENT_IOWAIT,LOCAL_CPU_PERCENT_IRQ,LOCAL_CPU_PERCENT_SWINTR,LOCAL_CPU_METHOD,\
REMOTE_CPU_UTIL,REMOTE_CPU_PERCENT_USER,REMOTE_CPU_PERCENT_SYSTEM,REMOTE_CPU_PERCENT_IOWAIT,\
REMOTE_CPU_PERCENT_IRQ,REMOTE_CPU_PERCENT_SWINTR,REMOTE_CPU_METHOD,LOCAL_SD,REMOTE_SD,SD_UNITS";
    let sizes = match shape {
        TestShape::Send => "LSS_SIZE_END,RSR_SIZE_END,LOCAL_SEND_SIZE",
        TestShape::Receive => "RSS_SIZE_END,LSR_SIZE_END,REMOTE_SEND_SIZE",
        TestShape::RequestResponse => {
            "LSS_SIZE_END,LSR_SIZE_END,RSR_SIZE_END,RSS_SIZE_END,REQUEST_SIZE,RESPONSE_SIZE"
        }
    };
    let list = if cpu {
        format!("{sizes},{TPUT},{CPU}")
    } else {
        format!("{sizes},{TPUT}")
    };
    parse_direct(&list)
}

/// `-o ?` and `-k ?` (comma separated) or `-O ?` (one per line): netperf's
/// selector names in its order.
pub fn list_choices(csv: bool) -> String {
    let names: Vec<&str> = NETPERF_SELECTORS.iter().map(|s| s.name).collect();
    let mut out = names.join(if csv { "," } else { "\n" });
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(s: &Selection) -> Vec<Vec<&'static str>> {
        s.blocks
            .iter()
            .map(|b| b.iter().map(|s| s.name).collect())
            .collect()
    }

    #[test]
    fn direct_lists_split_blocks_and_names() {
        let s = parse("throughput,THROUGHPUT_UNITS;elapsed_time bogus").unwrap();
        assert_eq!(
            names(&s),
            vec![vec!["THROUGHPUT", "THROUGHPUT_UNITS"], vec!["ELAPSED_TIME"]]
        );
        assert_eq!(s.unknown, vec!["bogus".to_string()]);
        assert_eq!(names(&parse("UUID").unwrap()), vec![vec!["UUID"]]);
        assert_eq!(parse("a;b;c;d;THROUGHPUT").unwrap().blocks.len(), 4);
    }

    #[test]
    fn all_is_four_blocks_in_netperf_order() {
        let s = all();
        assert_eq!(s.blocks.len(), 4);
        assert_eq!(s.blocks[0].first().unwrap().name, "SOCKET_TYPE");
        assert_eq!(s.blocks[0].last().unwrap().name, "RESPONSE_SIZE");
        assert_eq!(s.blocks[3].last().unwrap().name, "COMMAND_LINE");
        assert_eq!(s.blocks.iter().map(Vec::len).sum::<usize>(), 173);
        assert!(s.needs(Need::Latency));
    }

    #[test]
    fn files_take_names_or_titles_up_to_four_lines() {
        let text = b"THROUGHPUT,Throughput Units\nnope\r\n\n\nUUID\n";
        let s = parse_file(text).unwrap();
        assert_eq!(
            names(&s),
            vec![
                vec!["THROUGHPUT", "THROUGHPUT_UNITS"],
                vec!["OUTPUT_NONE"],
                vec!["OUTPUT_NONE"],
                vec!["OUTPUT_NONE"]
            ]
        );
        assert_eq!(s.unknown, vec!["nope".to_string()]);
        let long = vec![b'A'; 100];
        assert!(matches!(
            parse_file(&long),
            Err(SelectError::TooLong { .. })
        ));
        assert_eq!(
            parse("/no/such/file").unwrap_err(),
            SelectError::File("/no/such/file".into(), 2)
        );
        // An endless source is read only as far as four lines need.
        let zeros = parse("/dev/zero").unwrap();
        assert!(zeros.blocks.len() <= 1);
    }

    #[test]
    fn defaults_follow_the_test() {
        let s = by_test(TestShape::RequestResponse, false);
        assert_eq!(s.blocks[0].len(), 9);
        assert_eq!(s.blocks[0][0].name, "LSS_SIZE_END");
        let s = by_test(TestShape::Send, true);
        assert_eq!(s.blocks[0].len(), 6 + 17);
        assert!(list_choices(true).starts_with("OUTPUT_NONE,SOCKET_TYPE,"));
        assert!(list_choices(false).ends_with("COMMAND_LINE\nOUTPUT_END\n"));
    }
}
