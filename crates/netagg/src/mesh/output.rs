//! A mesh drawn: the text that leads with the findings (stdout and
//! mesh.txt) and, for a few endpoints, each metric's grid; mesh.csv (one
//! row per pair and metric); mesh.html (the findings, one heatmap per
//! metric, the failures, the context) — all from the mesh as its saved
//! JSON holds it, so `netagg report` draws them again byte for byte; and
//! the mesh as the results database keeps it (one run per pair and test,
//! its cell naming both ends).

use super::model::{metrics_of, Finding, FindingKind, Grid, Mesh, Outcome, PairRun};
use netperf_base::timefmt::utc_timestamp;
use netperf_pages::heatmap::{heatmap_svg, Heatmap, Mark, READING};
use netperf_pages::page::{Cell, Page, Table};
use netperf_results::model::{FactorRecord, OffloadRecord, RunRecord, RunStatus};
use netperf_results::{Kind, StoredResult};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// Most endpoints whose grids the text shows; beyond, they are in the
/// CSV and the page.
pub const TEXT_GRID_MAX: usize = 16;

/// The files drawn from a mesh: (name, contents). mesh.json is the
/// caller's (the document these are drawn from).
pub fn files(mesh: &Mesh) -> Result<Vec<(String, String)>, String> {
    Ok(vec![
        ("mesh.txt".into(), text(mesh)),
        ("mesh.csv".into(), csv(mesh)),
        ("mesh.html".into(), page(mesh)),
    ])
}

/// A value as the text and the page show it: three significant figures
/// or more.
pub fn shown(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        _ => format!("{v:.2}"),
    }
}

fn percent(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// The grid's label and unit.
fn grid_of<'a>(mesh: &'a Mesh, metric: &'a str) -> (&'a str, &'a str) {
    mesh.grid(metric)
        .map_or((metric, ""), |g| (g.label.as_str(), g.unit.as_str()))
}

/// Where an endpoint runs, as far as known: "node N", "zone Z".
fn placed(e: &super::model::Endpoint) -> Vec<String> {
    [("node", &e.node), ("zone", &e.zone)]
        .iter()
        .filter_map(|(what, v)| v.as_ref().map(|v| format!("{what} {v}")))
        .collect()
}

/// What a finding names, in words.
fn finding_place(mesh: &Mesh, f: &Finding) -> String {
    match f.kind {
        FindingKind::Node => {
            let place = mesh
                .index(&f.endpoints[0])
                .map_or(Vec::new(), |i| placed(&mesh.endpoints[i]));
            let side = f.side.as_deref().unwrap_or("");
            format!(
                "node {} ({})",
                f.endpoints[0],
                [vec![side.to_string()], place].concat().join("; ")
            )
        }
        FindingKind::Path => format!("path {} -> {}", f.endpoints[0], f.endpoints[1]),
        FindingKind::ZoneLink => format!("zone link {} -> {}", f.zones[0], f.zones[1]),
    }
}

/// One finding in words.
pub fn finding_text(mesh: &Mesh, f: &Finding) -> String {
    let place = finding_place(mesh, f);
    let (label, _) = grid_of(mesh, &f.metric);
    let way = if f.effect < 0.0 { "lower" } else { "higher" };
    format!(
        "{place}: {label} {} {way} than the rest of the mesh predicts ({} cell{}; noise {}, score {:.1})",
        percent(f.effect.abs()),
        f.cells,
        if f.cells == 1 { "" } else { "s" },
        percent(f.noise),
        f.score
    )
}

/// The mesh in one line.
fn heading(mesh: &Mesh) -> String {
    let names: Vec<&str> = mesh.endpoints.iter().map(|e| e.name.as_str()).collect();
    let ordered: std::collections::BTreeSet<(usize, usize)> =
        mesh.pairs.iter().map(|p| (p.src, p.dst)).collect();
    format!(
        "netagg mesh: {} endpoints ({}), {} ordered pairs ({}), {} for {} s each, {} rounds; started {}",
        names.len(),
        names.join(", "),
        ordered.len(),
        mesh.pairs_asked,
        mesh.tests.join(" and "),
        mesh.duration,
        mesh.rounds,
        mesh.started
    )
}

fn pair_name(mesh: &Mesh, p: &PairRun) -> String {
    format!(
        "{} -> {} {}",
        mesh.endpoints[p.src].name, mesh.endpoints[p.dst].name, p.test
    )
}

/// The pairs that ended `word` ("failed", "missing").
fn ended<'a>(mesh: &'a Mesh, word: &'a str) -> impl Iterator<Item = &'a PairRun> + 'a {
    mesh.pairs.iter().filter(move |p| p.outcome.word() == word)
}

/// Most unfinished pairs listed one by one; beyond, they are told by
/// reason (every one is in mesh.json and mesh.csv).
const LISTED_MAX: usize = 20;
/// Pairs named as examples of a reason.
const EXAMPLES: usize = 3;

/// Unfinished pairs as (which, why): one line each, or for many, one line
/// per reason, the most common first, with a few examples.
fn told(mesh: &Mesh, list: &[&PairRun]) -> Vec<(String, String)> {
    let why = |p: &PairRun| p.outcome.reason().unwrap_or("").to_string();
    if list.len() <= LISTED_MAX {
        return list.iter().map(|p| (pair_name(mesh, p), why(p))).collect();
    }
    let mut by_reason: BTreeMap<String, Vec<&PairRun>> = BTreeMap::new();
    for p in list {
        by_reason.entry(why(p)).or_default().push(p);
    }
    let mut groups: Vec<(String, Vec<&PairRun>)> = by_reason.into_iter().collect();
    groups.sort_by_key(|g| std::cmp::Reverse(g.1.len()));
    groups
        .into_iter()
        .map(|(reason, pairs)| {
            let examples: Vec<String> = pairs
                .iter()
                .take(EXAMPLES)
                .map(|p| pair_name(mesh, p))
                .collect();
            let more = if pairs.len() > EXAMPLES { ", ..." } else { "" };
            (
                format!("{} pairs ({}{more})", pairs.len(), examples.join(", ")),
                reason,
            )
        })
        .collect()
}

const NOTHING: &str = "Findings: none. No node, path or zone link stands out beyond the noise.";
const INTERRUPTED: &str =
    "Interrupted: stopped by a signal; every pair that finished is kept, the missing ones are listed.";

/// "1 path finding not confirmed by its second measurement (dropped)".
pub fn not_confirmed(count: usize) -> String {
    match count {
        1 => "1 path finding not confirmed by its second measurement (dropped)".into(),
        n => format!("{n} path findings not confirmed by their second measurements (dropped)"),
    }
}

/// The findings, then failures and missing pairs, then (few endpoints)
/// each metric's grid.
pub fn text(mesh: &Mesh) -> String {
    let mut out = format!("{}\n\n", heading(mesh));
    match mesh.findings.len() {
        0 => out.push_str(NOTHING),
        n => {
            let _ = write!(out, "Findings ({n}):");
            for (k, f) in mesh.findings.iter().enumerate() {
                let _ = write!(out, "\n  {}. {}", k + 1, finding_text(mesh, f));
            }
        }
    }
    out.push('\n');
    if mesh.not_confirmed > 0 {
        let _ = writeln!(out, "{}", not_confirmed(mesh.not_confirmed));
    }
    let noise: Vec<String> = mesh
        .grids
        .iter()
        .filter_map(|g| g.noise.map(|n| format!("{} {}", g.label, percent(n))))
        .collect();
    if !noise.is_empty() {
        let _ = writeln!(
            out,
            "Noise (the robust spread each metric was judged against): {}",
            noise.join(", ")
        );
    }
    for (word, heading) in [("failed", "Failed"), ("missing", "Missing")] {
        let list: Vec<&PairRun> = ended(mesh, word).collect();
        if !list.is_empty() {
            let _ = writeln!(out, "\n{heading} ({}):", list.len());
            for (who, why) in told(mesh, &list) {
                let _ = writeln!(out, "  {who}: {why}");
            }
        }
    }
    if mesh.interrupted {
        let _ = writeln!(out, "\n{INTERRUPTED}");
    }
    match mesh.endpoints.len() <= TEXT_GRID_MAX {
        true => {
            for grid in &mesh.grids {
                out.push('\n');
                out.push_str(&grid_text(mesh, grid));
            }
        }
        false => {
            let _ = writeln!(
                out,
                "\nThe grids of {} endpoints are in mesh.csv and mesh.html.",
                mesh.endpoints.len()
            );
        }
    }
    out
}

/// What a grid cell shows: the value, "-" on the diagonal, "failed",
/// "missing", or "." for a pair not asked for.
fn cell_text(mesh: &Mesh, grid: &Grid, src: usize, dst: usize) -> String {
    let n = mesh.endpoints.len();
    if let Some(v) = grid.values[src * n + dst] {
        return shown(v);
    }
    if src == dst {
        return "-".into();
    }
    let pair = mesh
        .pairs
        .iter()
        .find(|p| p.src == src && p.dst == dst && p.test == grid.test);
    match pair.map(|p| &p.outcome) {
        Some(Outcome::Failed(_)) => "failed".into(),
        Some(Outcome::Missing(_)) => "missing".into(),
        _ => ".".into(),
    }
}

/// One metric's grid as a text table: rows send, columns receive.
pub fn grid_text(mesh: &Mesh, grid: &Grid) -> String {
    let n = mesh.endpoints.len();
    let names: Vec<&str> = mesh.endpoints.iter().map(|e| e.name.as_str()).collect();
    let rows: Vec<Vec<String>> = (0..n)
        .map(|i| (0..n).map(|j| cell_text(mesh, grid, i, j)).collect())
        .collect();
    let first = names
        .iter()
        .map(|s| s.len())
        .fold("from \\ to".len(), usize::max);
    let widths: Vec<usize> = (0..n)
        .map(|j| {
            rows.iter()
                .map(|r| r[j].len())
                .fold(names[j].len(), usize::max)
        })
        .collect();
    let mut out = format!(
        "{}, {} ({} is better; rows send, columns receive):\n",
        grid.label,
        grid.unit,
        if grid.higher_is_better {
            "higher"
        } else {
            "lower"
        }
    );
    let line = |out: &mut String, head: &str, cells: &[String]| {
        let mut l = format!("{head:<first$}");
        for (c, w) in cells.iter().zip(&widths) {
            let _ = write!(l, "  {c:>w$}");
        }
        let _ = writeln!(out, "{}", l.trim_end());
    };
    let head: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    line(&mut out, "from \\ to", &head);
    for (i, row) in rows.iter().enumerate() {
        line(&mut out, names[i], row);
    }
    out
}

/// The CSV's columns.
const CSV_HEAD: [&str; 12] = [
    "src", "dst", "src_node", "src_zone", "dst_node", "dst_zone", "test", "metric", "value",
    "unit", "outcome", "reason",
];

/// One row per pair and metric of its test: the value, or empty with why.
pub fn csv(mesh: &Mesh) -> String {
    let or_empty = |v: &Option<String>| v.clone().unwrap_or_default();
    let mut rows = vec![CSV_HEAD.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    for p in &mesh.pairs {
        let (s, d) = (&mesh.endpoints[p.src], &mesh.endpoints[p.dst]);
        for m in metrics_of(&p.test) {
            let figure = p.value(m.id);
            let reason = match (&p.outcome, figure) {
                (Outcome::Ok(_), None) => "not in the result record",
                (outcome, _) => outcome.reason().unwrap_or(""),
            };
            rows.push(vec![
                s.name.clone(),
                d.name.clone(),
                or_empty(&s.node),
                or_empty(&s.zone),
                or_empty(&d.node),
                or_empty(&d.zone),
                p.test.clone(),
                m.id.to_string(),
                figure.map(|f| f.value.to_string()).unwrap_or_default(),
                figure.map_or(m.unit.to_string(), |f| f.unit.clone()),
                p.outcome.word().to_string(),
                reason.to_string(),
            ]);
        }
    }
    crate::experiment::csv::to_csv(rows)
}

/// Where a finding is on its metric's heatmap.
fn marks(mesh: &Mesh, grid: &Grid) -> Vec<Mark> {
    let mut out = Vec::new();
    for f in mesh.findings.iter().filter(|f| f.metric == grid.metric) {
        let at: Vec<usize> = f.endpoints.iter().filter_map(|e| mesh.index(e)).collect();
        match (f.kind, at.as_slice(), f.side.as_deref()) {
            (FindingKind::Node, &[e], Some("sending")) => out.push(Mark::Row(e)),
            (FindingKind::Node, &[e], Some("receiving")) => out.push(Mark::Column(e)),
            (FindingKind::Node, &[e], _) => out.extend([Mark::Row(e), Mark::Column(e)]),
            (FindingKind::Path, &[src, dst], _) => out.push(Mark::Cell { src, dst }),
            (FindingKind::ZoneLink, _, _) => out.push(Mark::Block {
                from: f.zones[0].clone(),
                to: f.zones[1].clone(),
            }),
            _ => {}
        }
    }
    out
}

/// One metric's heatmap (M4's builder in the pages crate).
pub(crate) fn heatmap(mesh: &Mesh, grid: &Grid) -> String {
    let labels: Vec<String> = mesh.endpoints.iter().map(|e| e.name.clone()).collect();
    let zones: Vec<Option<String>> = mesh.endpoints.iter().map(|e| e.zone.clone()).collect();
    let marks = marks(mesh, grid);
    heatmap_svg(&Heatmap {
        title: &grid.label,
        unit: &grid.unit,
        labels: &labels,
        zones: &zones,
        values: &grid.values,
        higher_is_better: grid.higher_is_better,
        marks: &marks,
    })
}

const EXPLAINED: &str = "Each test ran from the row's endpoint (its own netserver, started with --mesh-key) to the column's, in rounds in which no endpoint took part in two tests; every pair of a round started at once. A finding is a node (its whole row, column or both), a path (one cell) or a zone link (a block of cells between two zones) that differs from what the rest of the mesh predicts by more than 10 % and by more than the noise allows; the noise is the robust spread of the cells around that prediction. A failed pair is shown as failed, never as a zero.";

/// mesh.html: the findings, a heatmap per metric, the failures and the
/// context, built by the one page builder.
pub fn page(mesh: &Mesh) -> String {
    let mut page = Page::new("netagg mesh: every endpoint to every endpoint");
    page.section("findings", "Findings", |p| {
        p.paragraph(&heading(mesh));
        match mesh.findings.is_empty() {
            true => {
                p.paragraph(NOTHING);
            }
            false => {
                let mut table = Table::new(["what", "metric", "effect", "noise", "score", "cells"]);
                for f in &mesh.findings {
                    let (label, _) = grid_of(mesh, &f.metric);
                    table.row([
                        Cell::text(finding_place(mesh, f)),
                        Cell::label(label),
                        Cell::number(format!("{:+.1}%", f.effect * 100.0)),
                        Cell::number(percent(f.noise)),
                        Cell::number(format!("{:.1}", f.score)),
                        Cell::number(f.cells.to_string()),
                    ]);
                }
                p.table(&table);
            }
        }
        p.note(EXPLAINED);
        if mesh.not_confirmed > 0 {
            p.note(&not_confirmed(mesh.not_confirmed));
        }
        if mesh.interrupted {
            p.caution(INTERRUPTED);
        }
    });
    page.section("heatmaps", "Heatmaps", |p| {
        p.labelled_list("reading", &READING);
        for grid in &mesh.grids {
            let caption = format!(
                "{} ({}, {} is better): rows are the sending endpoint, columns the receiving one; the findings outlined; grey: not measured.",
                grid.label,
                grid.unit,
                if grid.higher_is_better { "higher" } else { "lower" }
            );
            p.figure(&heatmap(mesh, grid), &caption);
        }
    });
    let unfinished: Vec<(&str, Vec<&PairRun>)> = ["failed", "missing"]
        .into_iter()
        .map(|word| (word, ended(mesh, word).collect::<Vec<_>>()))
        .filter(|(_, list)| !list.is_empty())
        .collect();
    if !unfinished.is_empty() {
        page.section("failures", "Failed and missing pairs", |p| {
            let mut table = Table::new(["pairs", "outcome", "why"]).of_words();
            for (word, list) in &unfinished {
                for (who, why) in told(mesh, list) {
                    table.row([Cell::label(who), Cell::label(*word), Cell::text(why)]);
                }
            }
            p.table(&table);
        });
    }
    page.section("context", "Context", |p| {
        let endpoints: Vec<String> = mesh
            .endpoints
            .iter()
            .map(|e| {
                let place = placed(e);
                match place.is_empty() {
                    true => format!("{} ({} port {})", e.name, e.address, e.port),
                    false => format!(
                        "{} ({} port {}, {})",
                        e.name,
                        e.address,
                        e.port,
                        place.join(", ")
                    ),
                }
            })
            .collect();
        p.context_list(
            [
                ("Started (UTC)", mesh.started.clone()),
                ("Endpoints", endpoints.join("; ")),
                (
                    "Tests",
                    format!("{}, {} s each", mesh.tests.join(", "), mesh.duration),
                ),
                ("Pairs", mesh.pairs_asked.clone()),
                (
                    "Rounds",
                    format!("{} ({:.0} s in all)", mesh.rounds, mesh.elapsed),
                ),
            ],
            &mesh.command_line,
        );
    });
    page.reproduce(&[(
        "Draw this page again from the saved run:",
        "netagg report mesh.json --out DIR",
    )]);
    page.finish()
}

fn at(mesh: &Mesh, offset: f64) -> String {
    let epoch = mesh.start_epoch + offset;
    utc_timestamp(Duration::try_from_secs_f64(epoch.max(0.0)).unwrap_or_default())
}

/// netperf's selector a metric is stored under (so `netagg results` knows
/// which way is better).
fn stored_name(metric: &str) -> String {
    super::model::METRICS
        .iter()
        .find(|m| m.id == metric)
        .map_or(metric.to_uppercase(), |m| m.selectors[0].to_string())
}

/// The stored form of `mesh`: one run per pair and test, its cell
/// `src=A dst=B test=T`, so `netagg results compare` lines two meshes up
/// pair by pair; the saved JSON as the document.
pub fn result_of(mesh: &Mesh, document: String, command_line: Vec<String>) -> StoredResult {
    let name = |i: usize| mesh.endpoints[i].name.clone();
    let runs = mesh
        .pairs
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let (start, end) = p.span.unwrap_or((0.0, 0.0));
            let (s, d) = (&mesh.endpoints[p.src], &mesh.endpoints[p.dst]);
            let mut facts = BTreeMap::from([
                ("TEST".to_string(), p.test.clone()),
                ("NETAGG_KIND".to_string(), "mesh".to_string()),
                ("SRC".to_string(), s.name.clone()),
                ("DST".to_string(), d.name.clone()),
            ]);
            for (key, v) in [
                ("SRC_NODE", &s.node),
                ("SRC_ZONE", &s.zone),
                ("DST_NODE", &d.node),
                ("DST_ZONE", &d.zone),
            ] {
                if let Some(v) = v {
                    facts.insert(key.to_string(), v.clone());
                }
            }
            let mut metrics = BTreeMap::new();
            if let Outcome::Ok(figures) = &p.outcome {
                for f in figures {
                    let key = stored_name(&f.metric);
                    if key == "THROUGHPUT" {
                        facts.insert("THROUGHPUT_UNITS".into(), f.unit.clone());
                    }
                    metrics.insert(key, f.value);
                }
            }
            RunRecord {
                id: netperf_base::ids::new_uuid(),
                order: k as u32,
                cell: vec![
                    ("src".to_string(), name(p.src)),
                    ("dst".to_string(), name(p.dst)),
                    ("test".to_string(), p.test.clone()),
                ],
                replicate: 1,
                started: at(mesh, start),
                ended: at(mesh, end),
                status: match &p.outcome {
                    Outcome::Ok(_) => RunStatus::Ok,
                    Outcome::Failed(reason) => RunStatus::Failed {
                        reason: reason.clone(),
                    },
                    Outcome::Missing(_) => RunStatus::Interrupted,
                },
                metrics,
                facts,
                offloads: OffloadRecord::default(),
                commands: Vec::new(),
            }
        })
        .collect();
    let names: Vec<String> = mesh.endpoints.iter().map(|e| e.name.clone()).collect();
    let failed = ended(mesh, "failed").count();
    StoredResult {
        id: netperf_base::ids::new_uuid(),
        kind: Kind::Netagg,
        test: mesh.tests.join(","),
        host: names.join(","),
        kernel: netperf_data::net::sysinfo::SystemInfo::collect().release,
        title: "netagg mesh".into(),
        started: at(mesh, 0.0),
        ended: at(mesh, mesh.elapsed),
        status: match (mesh.interrupted, failed) {
            (true, _) => "interrupted".into(),
            (false, 0) => "complete".into(),
            (false, n) => format!("complete, {n} pair tests failed"),
        },
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command_line,
        tags: vec!["mesh".into()],
        factors: vec![
            FactorRecord {
                name: "src".into(),
                levels: names.clone(),
            },
            FactorRecord {
                name: "dst".into(),
                levels: names,
            },
            FactorRecord {
                name: "test".into(),
                levels: mesh.tests.clone(),
            },
        ],
        runs,
        document: Some(document),
    }
}
