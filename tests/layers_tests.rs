//! The house keeps its layers, at two scales. Between crates: each crate
//! of the workspace depends only on crates listed before its own in
//! `CRATES` (cargo already refuses circles; the table fixes the order, and
//! the two ends of the control connection never name each other). Inside a
//! crate with several layers: a file imports only modules listed before its
//! own. Comments and string literals are not read; `crate::`, grouped
//! `crate::{...}` and `super::` paths are. Tests inside a module count too.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The workspace's crates (their directories under crates/), bottom first,
/// one line each, and the layers inside those that have several (a crate
/// whose root is its one module has none): a crate may use the crates above
/// its line, a module the modules before its own. docs/architecture.md says
/// what each one does. The umbrella package at the root stands above all.
const CRATES: &[(&str, &[&str])] = &[
    ("workspace-hack", &[]), // no code: the test build's features for the programs' build
    ("base", &["ids", "input", "timefmt", "rlimit", "saved"]), // ids, bounded input, UTC text, fd limit, saved runs
    ("wire", &[]), // the control protocol's messages: no I/O
    ("data", &["net", "measure", "engine", "spec"]), // sockets, measurements, data loops, TestSpec
    ("netserver", &[]), // netserver
    ("client", &["cli", "report", "control"]), // netperf's options, output, control session
    ("pages", &[]), // pages and charts
    ("results", &[]), // the results database and statistics
    ("netperf", &[]), // netperf's coordinator and program
    ("k8s", &[]),  // Kubernetes discovery
    (
        "netagg",
        &[
            "args",
            "experiment",
            "agg",
            "matrix",
            "responsiveness",
            "mesh",
            "redraw",
            "watch",
        ],
    ), // netagg: shared options, experiments, ramps, the matrix, latency under load, the mesh, saved runs drawn again, the watch
];

/// Crates on one level that must not name each other (the two ends of the
/// control connection: netserver and netperf's).
const PEERS: &[(&str, &str)] = &[("netserver", "client")];

fn crate_rank(dir: &str) -> Option<usize> {
    CRATES.iter().position(|(d, _)| *d == dir)
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A crate's package name and the package names it depends on (normal, dev
/// and build dependencies), from its Cargo.toml.
fn manifest(dir: &str) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(root().join("crates").join(dir).join("Cargo.toml"))
        .unwrap_or_else(|e| panic!("crates/{dir}/Cargo.toml: {e}"));
    let mut name = String::new();
    let mut deps = Vec::new();
    let mut section = String::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.trim_matches(|c| c == '[' || c == ']').to_string();
        } else if let Some((key, value)) = line.split_once('=') {
            let key = key.trim();
            if section == "package" && key == "name" {
                name = value.trim().trim_matches('"').to_string();
            } else if section.ends_with("dependencies") && !key.is_empty() && !key.starts_with('#')
            {
                deps.push(key.to_string());
            }
        }
    }
    (name, deps)
}

#[test]
fn every_crate_depends_only_on_the_crates_below_it() {
    let names: Vec<String> = CRATES.iter().map(|(dir, _)| manifest(dir).0).collect();
    let dir_of = |package: &str| names.iter().position(|n| n == package).map(|k| CRATES[k].0);
    let mut wrong = Vec::new();
    for (own_rank, (dir, _)) in CRATES.iter().enumerate() {
        for dep in manifest(dir).1 {
            let Some(target) = dir_of(&dep) else { continue }; // not ours
            let peers = PEERS
                .iter()
                .any(|&(a, b)| (a, b) == (*dir, target) || (b, a) == (*dir, target));
            if crate_rank(target).unwrap() >= own_rank || peers {
                wrong.push(format!("crates/{dir} -> crates/{target}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "crates that name a crate not below them:\n{}",
        wrong.join("\n")
    );
    // Every crate of crates/ is in the table, and nothing else.
    let mut dirs: Vec<String> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let mut listed: Vec<String> = CRATES.iter().map(|(d, _)| d.to_string()).collect();
    listed.sort();
    assert_eq!(dirs, listed, "crates/ and CRATES differ");
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

/// The module path of a file under a crate's src/: src/a/b.rs is [a, b],
/// src/a/mod.rs is [a], src/spec.rs is [spec].
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

/// Every import inside crates/`dir` that points up its table of modules,
/// as "file:line: module -> module".
fn upward_imports(dir: &str, layers: &[&str]) -> Vec<String> {
    let src = root().join("crates").join(dir).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let rank = |m: &str| layers.iter().position(|l| *l == m);
    let mut found = Vec::new();
    for file in files {
        let path = module_path(&src, &file);
        let Some(own) = path.first() else { continue }; // lib.rs
        if own == "main" {
            continue; // the program stands above its library
        }
        let Some(own_rank) = rank(own) else {
            found.push(format!(
                "{}: module '{own}' is not in CRATES",
                file.display()
            ));
            continue;
        };
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        for (line, target) in modules_named(&code, &path) {
            match rank(&target) {
                Some(target_rank) if target_rank > own_rank => {
                    let rel = file.strip_prefix(root()).unwrap();
                    found.push(format!("{}:{line}: {own} -> {target}", rel.display()));
                }
                _ => {}
            }
        }
    }
    found
}

#[test]
fn every_import_inside_a_crate_points_down_its_table() {
    let mut upward = Vec::new();
    for (dir, layers) in CRATES.iter().filter(|(_, layers)| !layers.is_empty()) {
        upward.extend(upward_imports(dir, layers));
        // Every module of the crate is in its line, and nothing else.
        let mut modules: Vec<String> =
            std::fs::read_dir(root().join("crates").join(dir).join("src"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter_map(|p| {
                    let name = p.file_stem()?.to_string_lossy().into_owned();
                    (p.is_dir() || p.extension().is_some_and(|e| e == "rs")).then_some(name)
                })
                .filter(|n| n != "main" && n != "lib")
                .collect();
        modules.sort();
        let mut listed: Vec<String> = layers.iter().map(|s| s.to_string()).collect();
        listed.sort();
        assert_eq!(
            modules, listed,
            "crates/{dir}/src's modules and its line in CRATES differ"
        );
    }
    let mut by_pair: BTreeMap<String, usize> = BTreeMap::new();
    for line in &upward {
        let pair = line.rsplit(": ").next().unwrap_or(line).to_string();
        *by_pair.entry(pair).or_default() += 1;
    }
    assert!(
        upward.is_empty(),
        "{} imports point up a crate's table in tests/layers_tests.rs (by pair: {by_pair:?}):\n{}",
        upward.len(),
        upward.join("\n")
    );
}

/// The one file that draws with plotters: every chart is described to it.
const CHART_BUILDER: &str = "crates/pages/src/chart.rs";

#[test]
fn one_file_draws_charts() {
    let mut names = Vec::new();
    for (dir, _) in CRATES {
        if manifest(dir).1.iter().any(|d| d == "plotters") {
            names.push(format!("crates/{dir}"));
        }
        let mut files = Vec::new();
        rust_files(&root().join("crates").join(dir).join("src"), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let relative = file.strip_prefix(root()).unwrap().display().to_string();
            if code_only(&text).contains("plotters") && relative != CHART_BUILDER {
                names.push(relative);
            }
        }
    }
    assert_eq!(
        names,
        ["crates/pages"],
        "only {CHART_BUILDER} uses plotters"
    );
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

/// The lines `cargo tree --offline --prefix none ARGS` prints, or why it
/// cannot print them here.
fn cargo_tree(args: &[&str]) -> Result<Vec<String>, String> {
    let out = common::bins::nested_cargo()
        .current_dir(root())
        .args(["tree", "--offline", "--prefix", "none"])
        .args(args)
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo tree {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect())
}

/// The crates `cargo tree` lists for `args` (normal dependencies, each
/// once, ours included), or why it cannot list them here.
fn tree(args: &[&str]) -> Result<Vec<String>, String> {
    let mut crates: Vec<String> = cargo_tree(&[&["--edges", "normal"], args].concat())?
        .iter()
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect();
    crates.sort();
    crates.dedup();
    Ok(crates)
}

/// Each crate of a build (name and version) and the feature sets it is
/// compiled with (two where a build script's copy differs), as `cargo tree`
/// resolves them for `edges` and `args`.
fn features(edges: &str, args: &[&str]) -> Result<BTreeMap<String, Vec<String>>, String> {
    let lines = cargo_tree(&[&["--edges", edges, "--format", "{p}|{f}"], args].concat())?;
    let mut by_crate: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in lines {
        let Some((package, features)) = line.trim_end_matches(" (*)").split_once('|') else {
            continue;
        };
        let mut words = package.split_whitespace();
        let id = format!(
            "{} {}",
            words.next().unwrap_or(""),
            words.next().unwrap_or("")
        );
        let sets = by_crate.entry(id).or_default();
        if !sets.iter().any(|s| s == features) {
            sets.push(features.to_string());
            sets.sort();
        }
    }
    Ok(by_crate)
}

/// The programs' own build (tests/common/bins.rs: the three at once, no
/// dev-dependencies) compiles every crate they share with the test build
/// with the test build's features, so the build after `cargo test` reuses
/// them all. crates/workspace-hack turns on what the tests'
/// dev-dependencies add; a dev-dependency added or updated may add more.
#[test]
fn the_programs_build_with_the_test_builds_features() {
    let programs = ["-p", "netperf", "-p", "netserver", "-p", "netagg"];
    let programs = match features("normal,build", &programs) {
        Ok(crates) => crates,
        Err(why) => return common::skip(why),
    };
    let tests = features("normal,build,dev", &["--workspace"]).expect("cargo tree");
    let differ: Vec<String> = programs
        .iter()
        .filter(|(id, sets)| tests.get(*id) != Some(sets))
        .map(|(id, sets)| format!("{id}: programs {sets:?}, tests {:?}", tests.get(id)))
        .collect();
    assert!(
        differ.is_empty(),
        "crates the programs' build compiles with other features than the test build \
         (add the tests' features to crates/workspace-hack/Cargo.toml):\n{}",
        differ.join("\n")
    );
}

#[test]
fn the_programs_stay_lean() {
    let netserver = match tree(&["--package", "netserver"]) {
        Ok(crates) => crates,
        Err(why) => return common::skip(why),
    };
    assert!(
        netserver.len() <= 45,
        "netserver now builds from {} crates (docs/architecture.md says 40, the goal at most 45): {netserver:?}",
        netserver.len()
    );
    let lean = tree(&["--package", "netperf", "--no-default-features"]).expect("cargo tree");
    let heavy = ["kube", "tokio", "rusqlite", "plotters"];
    let found: Vec<&String> = lean
        .iter()
        .filter(|c| heavy.contains(&c.as_str()))
        .collect();
    assert!(
        found.is_empty(),
        "netperf without its default features builds {found:?}"
    );
    let full = tree(&["--package", "netperf"]).expect("cargo tree");
    for wanted in ["rusqlite", "plotters"] {
        assert!(
            full.iter().any(|c| c == wanted),
            "netperf's default features no longer bring {wanted}: is the tree read right?"
        );
    }
}
