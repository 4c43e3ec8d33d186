//! Every relative link in README.md and docs/ resolves: the file or directory
//! it names exists in the repository (a link may not leave the checkout), and
//! a `#anchor` on a Markdown file, or alone (the same file), names a heading
//! of that file as GitHub makes its anchors. Links inside code blocks and code
//! spans are text, not links; http(s), mailto and other schemes are not
//! checked. Also: the README stays short enough to read in a minute.
//!
//! No dependency: a small reader of `[text](target)`, `[label]: target`
//! definitions and `<a href="target">` is enough for the documents we write.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The README's size budget (issue 25: it reads in a minute).
const README_MAX_BYTES: usize = 12 * 1024;

/// The Markdown files checked: README.md and every `.md` under docs/, as
/// repository-relative paths with `/` separators.
fn markdown_files(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                let rel = path.strip_prefix(root).expect("under the root");
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut files = vec!["README.md".to_string()];
    walk(root, &root.join("docs"), &mut files);
    files.sort();
    files
}

/// A line's text with its code spans blanked out (a backtick run opens a
/// span that the next run of the same length closes).
fn without_code_spans(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|&&c| c == '`').count();
        // Find the closing run of exactly `run` backticks.
        let mut j = i + run;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let n = chars[j..].iter().take_while(|&&c| c == '`').count();
                if n == run {
                    close = Some(j);
                    break;
                }
                j += n;
            } else {
                j += 1;
            }
        }
        match close {
            Some(j) => {
                out.push(' ');
                i = j + run;
            }
            None => {
                // An unmatched run is literal text.
                for _ in 0..run {
                    out.push('`');
                }
                i += run;
            }
        }
    }
    out
}

/// The lines of a Markdown text that are not inside a fenced code block,
/// with their 1-based line numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = marker.map_or(0, |m| trimmed.chars().take_while(|&c| c == m).count());
        match (fence, marker) {
            (None, Some(m)) if run >= 3 => fence = Some((m, run)),
            (Some((m, len)), Some(c))
                if c == m && run >= len && trimmed[run..].trim().is_empty() =>
            {
                fence = None
            }
            (None, _) => out.push((n + 1, line)),
            _ => {}
        }
    }
    out
}

/// The link targets on one line of prose (code spans already removed):
/// inline links and images, reference definitions, and `href` attributes.
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    // [label]: target
    let t = line.trim_start();
    if line.len() - t.len() <= 3 && t.starts_with('[') {
        if let Some(end) = t.find("]:") {
            if !t[1..end].contains(']') {
                if let Some(target) = t[end + 2..].split_whitespace().next() {
                    targets.push(target.to_string());
                }
            }
        }
    }
    // [text](target) and ![alt](target)
    let bytes = line.as_bytes();
    let mut from = 0;
    while let Some(pos) = line[from..].find("](") {
        let start = from + pos + 2;
        let mut depth = 1;
        let mut end = None;
        for (k, &b) in bytes.iter().enumerate().skip(start) {
            match b {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(k);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else { break };
        let raw = line[start..end].trim();
        let target = if let Some(inner) = raw.strip_prefix('<') {
            inner.split('>').next().unwrap_or("")
        } else {
            raw.split_whitespace().next().unwrap_or("")
        };
        targets.push(target.to_string());
        from = end + 1;
    }
    // <a href="target"> (either quote)
    let lower = line.to_ascii_lowercase();
    let mut from = 0;
    while let Some(pos) = lower[from..].find("href=") {
        let start = from + pos + 5;
        let quote = line[start..].chars().next();
        if let Some(q @ ('"' | '\'')) = quote {
            if let Some(len) = line[start + 1..].find(q) {
                targets.push(line[start + 1..start + 1 + len].to_string());
                from = start + 1 + len;
                continue;
            }
        }
        from = start;
    }
    targets
}

/// GitHub's anchor for a heading's text: the rendered text lower-cased,
/// everything but letters, digits, spaces, `-` and `_` dropped, spaces
/// made `-`.
fn github_slug(heading: &str) -> String {
    // Render the inline markup the way it shows: [text](url) is text, code
    // spans and emphasis marks vanish, HTML tags vanish.
    let mut text = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|c| open + c) else {
            break;
        };
        let Some(paren) = rest[close..].find(')').map(|p| close + p) else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..close]);
        rest = &rest[paren + 1..];
    }
    text.push_str(rest);
    let mut plain = String::new();
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if in_tag => {}
            '`' | '*' => {}
            _ => plain.push(c),
        }
    }
    plain
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor a Markdown text offers: its headings' GitHub anchors (a
/// repeated one gets -1, -2, ...) and explicit `id`/`name` attributes.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = HashSet::new();
    for (_, line) in prose_lines(text) {
        let t = line.trim_start();
        let level = t.chars().take_while(|&c| c == '#').count();
        if line.len() - t.len() <= 3
            && (1..=6).contains(&level)
            && t[level..].starts_with([' ', '\t'])
        {
            let title = t[level..].trim().trim_end_matches('#').trim_end();
            let slug = github_slug(title);
            let n = seen.entry(slug.clone()).or_insert(0);
            out.insert(if *n == 0 {
                slug.clone()
            } else {
                format!("{slug}-{n}")
            });
            *n += 1;
        }
        for attr in ["id=\"", "name=\""] {
            let mut from = 0;
            while let Some(pos) = line[from..].find(attr) {
                let start = from + pos + attr.len();
                let Some(len) = line[start..].find('"') else {
                    break;
                };
                out.insert(line[start..start + len].to_string());
                from = start + len;
            }
        }
    }
    out
}

/// `%xx` escapes decoded (a link to `a%20b.md` names `a b.md`).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(b) = u8::from_str_radix(hex, 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `target`, written in the file `from` (repository-relative), as a
/// repository-relative path, or None when it leaves the repository.
fn resolve(from: &str, target: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    let target = if let Some(abs) = target.strip_prefix('/') {
        abs
    } else {
        let dir = Path::new(from).parent().map(|d| d.to_str().unwrap_or(""));
        parts.extend(dir.unwrap_or("").split('/').filter(|p| !p.is_empty()));
        target
    };
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// The broken links of `sources` (repository-relative path, text), one line
/// each: `file:line: target: why`. `exists` says whether a
/// repository-relative path exists; `read` gives a Markdown file's text (for
/// its anchors).
fn broken_links(
    sources: &[(String, String)],
    exists: &dyn Fn(&str) -> bool,
    read: &dyn Fn(&str) -> Option<String>,
) -> Vec<String> {
    let mut broken = Vec::new();
    for (file, text) in sources {
        for (n, line) in prose_lines(text) {
            for target in link_targets(&without_code_spans(line)) {
                let why = check_target(file, text, &target, exists, read);
                if let Some(why) = why {
                    broken.push(format!("{file}:{n}: {target}: {why}"));
                }
            }
        }
    }
    broken
}

fn check_target(
    file: &str,
    text: &str,
    target: &str,
    exists: &dyn Fn(&str) -> bool,
    read: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    if target.is_empty() {
        return Some("empty target".into());
    }
    // A scheme (http:, https:, mailto:, ...) before any / or #: not ours to check.
    let head = target.split(['/', '#', '?']).next().unwrap_or("");
    if head.contains(':') {
        return None;
    }
    let (path, fragment) = match target.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (target, None),
    };
    let path = path.split('?').next().unwrap_or("");
    let (resolved, anchor_text) = if path.is_empty() {
        (file.to_string(), Some(text.to_string()))
    } else {
        let Some(resolved) = resolve(file, &percent_decode(path)) else {
            return Some("leaves the repository".into());
        };
        if !exists(&resolved) {
            return Some(format!("{resolved} does not exist"));
        }
        (resolved.clone(), None)
    };
    let fragment = fragment?;
    if !resolved.ends_with(".md") {
        return None; // e.g. src/x.rs#L10: GitHub's line anchors, not headings
    }
    let Some(target_text) = anchor_text.or_else(|| read(&resolved)) else {
        return Some(format!("{resolved} cannot be read"));
    };
    let fragment = percent_decode(fragment);
    if anchors(&target_text).contains(&fragment) {
        None
    } else {
        Some(format!(
            "no heading in {resolved} has the anchor #{fragment}"
        ))
    }
}

fn repo() -> PathBuf {
    PathBuf::from(REPO)
}

#[test]
fn every_relative_link_in_readme_and_docs_resolves() {
    let root = repo();
    let files = markdown_files(&root);
    assert!(
        files.len() > 1,
        "README.md and docs/*.md should be found under {REPO}: {files:?}"
    );
    let sources: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            let text =
                std::fs::read_to_string(root.join(f)).unwrap_or_else(|e| panic!("read {f}: {e}"));
            (f.clone(), text)
        })
        .collect();
    let exists = |p: &str| root.join(p).exists();
    let read = |p: &str| std::fs::read_to_string(root.join(p)).ok();
    let broken = broken_links(&sources, &exists, &read);
    assert!(
        broken.is_empty(),
        "broken links in README.md and docs/ ({}):\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn the_readme_reads_in_a_minute() {
    let size = std::fs::metadata(repo().join("README.md"))
        .expect("README.md")
        .len() as usize;
    assert!(
        size <= README_MAX_BYTES,
        "README.md is {size} bytes, over its {README_MAX_BYTES}: move detail to a page under docs/"
    );
}

#[test]
fn the_checker_finds_broken_links_and_only_those() {
    let readme = "\
# Title

See [the guide](docs/guide.md), [its setup](docs/guide.md#set-it-up), [a section](#title)
and [the code](src/main.rs#L10), [a directory](docs/), [the web](https://example.com/x.md),
[mail](mailto:someone@example.com).

Broken: [gone](docs/gone.md), [no heading](docs/guide.md#nowhere), [no such section](#titel),
[outside](../elsewhere/DESIGN.md), <a href=\"docs/also-gone.md\">html</a>.

`[not a link](docs/in-a-code-span.md)` is code.

```
[not a link](docs/in-a-fence.md)
```

[ref]: docs/ref-gone.md
";
    let guide = "\
# The guide

## Set it up

## `netagg matrix`: many places
";
    let sources = vec![
        ("README.md".to_string(), readme.to_string()),
        ("docs/guide.md".to_string(), guide.to_string()),
    ];
    let present = ["README.md", "docs", "docs/guide.md", "src/main.rs"];
    let exists = |p: &str| present.contains(&p);
    let read = |p: &str| (p == "docs/guide.md").then(|| guide.to_string());
    let broken = broken_links(&sources, &exists, &read);
    assert_eq!(
        broken,
        [
            "README.md:7: docs/gone.md: docs/gone.md does not exist",
            "README.md:7: docs/guide.md#nowhere: no heading in docs/guide.md has the anchor #nowhere",
            "README.md:7: #titel: no heading in README.md has the anchor #titel",
            "README.md:8: ../elsewhere/DESIGN.md: leaves the repository",
            "README.md:8: docs/also-gone.md: docs/also-gone.md does not exist",
            "README.md:16: docs/ref-gone.md: docs/ref-gone.md does not exist",
        ]
    );

    // The same documents with the links mended: nothing to report.
    let mended = readme
        .lines()
        .filter(|l| {
            !l.starts_with("Broken") && !l.starts_with("[outside]") && !l.starts_with("[ref]")
        })
        .collect::<Vec<_>>()
        .join("\n");
    let sources = vec![
        ("README.md".to_string(), mended),
        ("docs/guide.md".to_string(), guide.to_string()),
    ];
    assert!(broken_links(&sources, &exists, &read).is_empty());
}

#[test]
fn anchors_are_githubs() {
    let doc = "\
# netperf-ng
## Limits and access
## `netagg matrix`: the scenario matrix
## Experiments: randomized, repeated comparisons
## What works today
## What works today
### TCP_STREAM × 4 (ours)
```
# not a heading
```
<a id=\"custom\"></a>
";
    let a = anchors(doc);
    for want in [
        "netperf-ng",
        "limits-and-access",
        "netagg-matrix-the-scenario-matrix",
        "experiments-randomized-repeated-comparisons",
        "what-works-today",
        "what-works-today-1",
        "tcp_stream--4-ours",
        "custom",
    ] {
        assert!(a.contains(want), "{want} missing from {a:?}");
    }
    assert!(!a.contains("not-a-heading"));
    assert_eq!(
        github_slug("[docs/x.md](docs/x.md) and *more*"),
        "docsxmd-and-more"
    );
}
