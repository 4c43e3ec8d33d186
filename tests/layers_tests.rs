//! The house keeps its layers: a file in one of src/'s top-level modules
//! imports only modules listed before its own in `LAYERS`, so that each
//! layer can become a crate of its own that names only the ones below it.
//! Comments and string literals are not read; `crate::`, grouped
//! `crate::{...}` and `super::` paths are. Tests inside a module count too: a
//! lower crate's tests cannot name a higher crate either.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// src/'s top-level modules, bottom first, one line each: a module may use
/// the ones above its line, never the ones below. docs/architecture.md
/// says what each one does.
const LAYERS: &[&str] = &[
    "ids",        // UUIDs for tests and runs
    "input",      // reading files and arguments of any kind, bounded
    "timefmt",    // UTC timestamps in and out
    "rlimit",     // the open-file limit
    "stats",      // statistics over samples: pure functions
    "wire",       // the control protocol's messages: no I/O
    "net",        // addresses, sockets, interfaces, offloads, the control channel
    "measure",    // CPU, histograms, what a test measured
    "engine",     // the data path: loops, timers, stop
    "spec",       // TestSpec: one test, normalized
    "cli",        // netperf's command line, into a TestSpec
    "report",     // netperf's output formats
    "control",    // netperf's side of a test
    "server",     // netserver
    "page",       // pages and charts
    "resultsdb",  // the results database
    "run",        // netperf's coordinator: parse, run, report, store
    "k8s",        // Kubernetes discovery
    "experiment", // randomized experiments
    "agg",        // netagg's ramps and post-processing
    "matrix",     // the scenario matrix
    "fuzzing",    // the fuzz targets' checks, over everything
];

/// Peers on one layer that must not import each other (the two ends of the
/// control connection: netperf's and netserver's).
const PEERS: &[(&str, &str)] = &[("control", "server")];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|m| *m == module)
}

/// `text` with comments and the contents of string and character literals
/// blanked out (lengths and line breaks kept), so only code is searched.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"') | Some('#')) && !ident_before(&chars, i) {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let rest: String = chars[j + 1..].iter().collect();
            let end = rest.find(&close).map_or(chars.len(), |at| {
                j + 1 + rest[..at].chars().count() + close.chars().count()
            });
            for &k in &chars[i..end] {
                out.push(blank(k));
            }
            i = end;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && is_char_literal(&chars, i) {
            let end = chars[i + 1..]
                .iter()
                .enumerate()
                .skip(1)
                .find(|&(k, &ch)| ch == '\'' && chars[i + k] != '\\')
                .map_or(chars.len(), |(k, _)| i + 1 + k + 1);
            for _ in i..end.min(chars.len()) {
                out.push(' ');
            }
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// 'x', '\n', '\'' or '\u{1F600}', not a lifetime ('a).
fn is_char_literal(chars: &[char], i: usize) -> bool {
    matches!(
        (chars.get(i + 1), chars.get(i + 2)),
        (Some('\\'), _) | (Some(_), Some('\''))
    )
}

/// The module path of a file under src/: src/a/b.rs is [a, b], src/a/mod.rs
/// is [a], src/spec.rs is [spec].
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// The top-level modules `code` (of a file at `path`) names: `crate::m`,
/// each item of `crate::{m, n::x}`, and `super::...` chains that climb to
/// the crate root.
fn modules_named(code: &str, path: &[String]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let words: Vec<(usize, &str)> = tokens(code);
    for (k, &(line, word)) in words.iter().enumerate() {
        let at = |n: usize| words.get(k + n).map(|&(_, w)| w);
        let (root_at, is_root) = match word {
            "crate" if at(1) == Some("::") => (k + 2, true),
            "super" if at(1) == Some("::") && (k == 0 || words[k - 1].1 != "::") => {
                // Count the chain: super::super::x climbs two levels.
                let mut levels = 1;
                let mut j = k + 2;
                while words.get(j).map(|w| w.1) == Some("super")
                    && words.get(j + 1).map(|w| w.1) == Some("::")
                {
                    levels += 1;
                    j += 2;
                }
                (j, levels >= path.len())
            }
            _ => continue,
        };
        if !is_root {
            continue;
        }
        match words.get(root_at).map(|w| w.1) {
            Some("{") => {
                // Items at depth one of the group.
                let mut depth = 0;
                let mut expect_item = true;
                for &(l, w) in &words[root_at..] {
                    match w {
                        "{" => {
                            depth += 1;
                            if depth == 1 {
                                expect_item = true;
                            }
                        }
                        "}" => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        "," if depth == 1 => expect_item = true,
                        _ if depth == 1 && expect_item => {
                            found.push((l, w.to_string()));
                            expect_item = false;
                        }
                        _ => {}
                    }
                }
            }
            Some(name) => found.push((line, name.to_string())),
            None => {}
        }
    }
    found
}

/// Identifiers, `::` and braces/commas, each with its line number (1-based).
fn tokens(code: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b.is_ascii_alphanumeric() || b == b'_' {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                out.push((n + 1, &line[start..i]));
            } else if b == b':' && bytes.get(i + 1) == Some(&b':') {
                out.push((n + 1, "::"));
                i += 2;
            } else if matches!(b, b'{' | b'}' | b',') {
                out.push((n + 1, &line[i..i + 1]));
                i += 1;
            } else {
                i += 1;
            }
        }
    }
    out
}

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// Every import in src/ that points up the table (or across a pair of
/// peers), as "file:line: module -> module".
fn upward_imports(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let path = module_path(src, &file);
        let Some(own) = path.first() else { continue };
        // The binaries and lib.rs stand above every layer.
        if own == "bin" || path.is_empty() {
            continue;
        }
        let Some(own_rank) = rank(own) else {
            found.push(format!(
                "{}: module '{own}' is not in LAYERS",
                file.display()
            ));
            continue;
        };
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        for (line, target) in modules_named(&code, &path) {
            if &target == own {
                continue;
            }
            let Some(target_rank) = rank(&target) else {
                continue; // an item of lib.rs's own, or `*`
            };
            let peers = PEERS
                .iter()
                .any(|&(a, b)| (a, b) == (own, &target) || (b, a) == (own, &target));
            if target_rank > own_rank || peers {
                let rel = file.strip_prefix(src.parent().unwrap()).unwrap();
                found.push(format!("{}:{line}: {own} -> {target}", rel.display()));
            }
        }
    }
    found
}

#[test]
fn every_import_points_down_the_table() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let upward = upward_imports(&src);
    let mut by_pair: BTreeMap<String, usize> = BTreeMap::new();
    for line in &upward {
        let pair = line.rsplit(": ").next().unwrap_or(line).to_string();
        *by_pair.entry(pair).or_default() += 1;
    }
    assert!(
        upward.is_empty(),
        "{} imports point up the table in tests/layers_tests.rs (by pair: {by_pair:?}):\n{}",
        upward.len(),
        upward.join("\n")
    );
    // Every module of src/ is in the table, and nothing else.
    let mut dirs: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_stem()?.to_string_lossy().into_owned();
            (p.is_dir() || p.extension().is_some_and(|e| e == "rs")).then_some(name)
        })
        .filter(|n| n != "bin" && n != "lib")
        .collect();
    dirs.sort();
    let mut listed: Vec<String> = LAYERS.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(dirs, listed, "src/'s modules and LAYERS differ");
}

#[test]
fn the_reader_sees_code_and_nothing_else() {
    let src = r##"
use crate::{wire::Message, net::{self, socket}};
use super::super::engine::timer;
// crate::agg in a comment
let s = "crate::agg in a string"; let r = r#"crate::agg "raw""#;
let c = '"'; fn f<'a>(x: &'a str) {}
/* crate::agg /* nested */ still a comment */
crate::report::omni::write();
"##;
    let code = code_only(src);
    assert!(!code.contains("agg"), "{code}");
    let path = ["control".to_string(), "data".to_string()];
    let named: Vec<String> = modules_named(&code, &path)
        .into_iter()
        .map(|(_, m)| m)
        .collect();
    assert_eq!(named, ["wire", "net", "engine", "report"]);
    // super:: within a module stays inside it.
    let nested = ["report".to_string(), "omni".to_string(), "json".to_string()];
    assert!(modules_named("use super::super::units;", &nested).is_empty());
}
