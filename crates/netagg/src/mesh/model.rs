//! What a mesh measured, as its saved JSON (`netagg-mesh`) holds it and
//! read back from it, every member checked: the endpoints as given, each
//! ordered pair's outcome per test (its figures, or why it failed or is
//! missing — never a zero in its place), one grid per metric and the
//! findings. The metrics are one table (`METRICS`): which test gives them,
//! which field of netperf's `-J` record, which way is better.

use super::localise::{self, Better, Place, Settings, Side};
use netperf_base::saved::{count, list, number, text, MESH};
use serde_json::{json, Map, Value};

/// One figure the mesh reads from a test's record.
#[derive(Debug, PartialEq, Eq)]
pub struct Metric {
    /// Its name in the saved run, the CSV and the findings.
    pub id: &'static str,
    /// The test that measures it.
    pub test: &'static str,
    /// The `-J` selectors it is read from, the first present.
    pub selectors: &'static [&'static str],
    pub label: &'static str,
    /// Its unit when the record names none.
    pub unit: &'static str,
    pub higher_is_better: bool,
    /// Shown when the record has it, never required, never localised (a
    /// count that is mostly zero has no scale to judge on).
    pub optional: bool,
}

const fn metric(
    id: &'static str,
    test: &'static str,
    selectors: &'static [&'static str],
    label: &'static str,
    unit: &'static str,
    higher_is_better: bool,
) -> Metric {
    Metric {
        id,
        test,
        selectors,
        label,
        unit,
        higher_is_better,
        optional: false,
    }
}

const RATE: &[&str] = &["TRANSACTION_RATE", "THROUGHPUT"];
/// Which way is better, as the table reads.
const HIGHER: bool = true;
const LOWER: bool = false;

/// A finding's least relative effect, and how many noise scales it must
/// exceed.
const SETTINGS: Settings = Settings {
    min_effect: 0.10,
    sigmas: 4.0,
};

/// Every metric, in the order the outputs show them.
pub const METRICS: [Metric; 8] = [
    metric(
        "tcp_stream_throughput",
        "TCP_STREAM",
        &["THROUGHPUT"],
        "TCP_STREAM throughput",
        "10^6bits/s",
        HIGHER,
    ),
    metric(
        "tcp_rr_p50_latency",
        "TCP_RR",
        &["P50_LATENCY"],
        "TCP_RR P50 latency",
        "us",
        LOWER,
    ),
    metric(
        "tcp_rr_p99_latency",
        "TCP_RR",
        &["P99_LATENCY"],
        "TCP_RR P99 latency",
        "us",
        LOWER,
    ),
    metric(
        "tcp_rr_rate",
        "TCP_RR",
        RATE,
        "TCP_RR rate",
        "Trans/s",
        HIGHER,
    ),
    metric(
        "udp_rr_p50_latency",
        "UDP_RR",
        &["P50_LATENCY"],
        "UDP_RR P50 latency",
        "us",
        LOWER,
    ),
    metric(
        "udp_rr_p99_latency",
        "UDP_RR",
        &["P99_LATENCY"],
        "UDP_RR P99 latency",
        "us",
        LOWER,
    ),
    metric(
        "udp_rr_rate",
        "UDP_RR",
        RATE,
        "UDP_RR rate",
        "Trans/s",
        HIGHER,
    ),
    Metric {
        optional: true,
        ..metric(
            "udp_rr_lost",
            "UDP_RR",
            &["RR_TIMEOUTS"],
            "UDP_RR lost requests",
            "requests",
            LOWER,
        )
    },
];

/// The tests the mesh runs, in table order.
pub fn tests() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for m in &METRICS {
        if !out.contains(&m.test) {
            out.push(m.test);
        }
    }
    out
}

/// The metrics of `test`.
pub fn metrics_of(test: &str) -> impl Iterator<Item = &'static Metric> + '_ {
    METRICS.iter().filter(move |m| m.test == test)
}

/// One endpoint: its name as given (a host, a pod), where it is reached,
/// and where it runs when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub name: String,
    pub address: String,
    pub port: u16,
    pub node: Option<String>,
    pub zone: Option<String>,
}

/// One figure a pair measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub metric: String,
    pub value: f64,
    pub unit: String,
}

/// How one pair's test ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Ok(Vec<Figure>),
    /// It ran, or was asked for, and gave no result: why.
    Failed(String),
    /// It never finished: the mesh was interrupted.
    Missing(String),
}

impl Outcome {
    pub fn word(&self) -> &'static str {
        match self {
            Outcome::Ok(_) => "ok",
            Outcome::Failed(_) => "failed",
            Outcome::Missing(_) => "missing",
        }
    }

    pub fn reason(&self) -> Option<&str> {
        match self {
            Outcome::Ok(_) => None,
            Outcome::Failed(r) | Outcome::Missing(r) => Some(r),
        }
    }
}

/// One ordered pair's test.
#[derive(Debug, Clone, PartialEq)]
pub struct PairRun {
    pub src: usize,
    pub dst: usize,
    pub test: String,
    /// The round it was scheduled in, from 1.
    pub round: usize,
    /// Seconds from the mesh's start to the request and to the answer;
    /// None for a pair never asked.
    pub span: Option<(f64, f64)>,
    pub outcome: Outcome,
    /// Its second measurement, when a path finding named it (the
    /// confirmation round): when it was asked and answered, and how it
    /// ended.
    pub confirmation: Option<(Option<(f64, f64)>, Outcome)>,
}

impl PairRun {
    /// A pair's test not yet run: missing until it answers.
    pub fn waiting(src: usize, dst: usize, test: &str, round: usize) -> PairRun {
        PairRun {
            src,
            dst,
            test: test.to_string(),
            round,
            span: None,
            outcome: Outcome::Missing("interrupted before it ran".into()),
            confirmation: None,
        }
    }
}

impl Outcome {
    /// The value of `metric`, when measured.
    pub fn value(&self, metric: &str) -> Option<&Figure> {
        match self {
            Outcome::Ok(figures) => figures.iter().find(|f| f.metric == metric),
            _ => None,
        }
    }
}

impl PairRun {
    /// The value of `metric`, when measured.
    pub fn value(&self, metric: &str) -> Option<&Figure> {
        self.outcome.value(metric)
    }
}

/// One metric over every pair: n*n, row = source, None where nothing was
/// measured (the diagonal, a pair left out, failed or missing).
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    pub metric: String,
    pub test: String,
    pub label: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// The relative noise the findings were judged against (None for a
    /// metric not localised).
    pub noise: Option<f64>,
    pub values: Vec<Option<f64>>,
}

/// What a finding names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingKind {
    Node,
    Path,
    ZoneLink,
}

const FINDING_KINDS: [(FindingKind, &str); 3] = [
    (FindingKind::Node, "node"),
    (FindingKind::Path, "path"),
    (FindingKind::ZoneLink, "zone-link"),
];

const SIDES: [&str; 3] = ["sending", "receiving", "both"];

impl FindingKind {
    pub fn word(self) -> &'static str {
        FINDING_KINDS
            .iter()
            .find(|(k, _)| *k == self)
            .map_or("", |(_, w)| w)
    }
}

/// The word of a node finding's side.
pub fn side_word(side: &Side) -> &'static str {
    match side {
        Side::Sending => SIDES[0],
        Side::Receiving => SIDES[1],
        Side::Both => SIDES[2],
    }
}

/// The localisation's direction of a metric.
fn better(m: &Metric) -> Better {
    match m.higher_is_better {
        true => Better::Higher,
        false => Better::Lower,
    }
}

/// One finding as the saved run holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub kind: FindingKind,
    /// The endpoints it names, as given: the node, or the path's source
    /// and destination; none for a zone link.
    pub endpoints: Vec<String>,
    /// The zone link's two zones, from and to.
    pub zones: Vec<String>,
    /// A node's direction: "sending", "receiving" or "both".
    pub side: Option<String>,
    pub metric: String,
    /// Relative change: -0.35 is 35 % lower than the model expects.
    pub effect: f64,
    pub noise: f64,
    pub score: f64,
    pub cells: usize,
}

/// A whole mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct Mesh {
    /// UTC text and epoch seconds of the start.
    pub started: String,
    pub start_epoch: f64,
    pub command_line: String,
    pub duration: u32,
    pub tests: Vec<String>,
    /// `--pairs` as given, and `--concurrency` (None: no cap).
    pub pairs_asked: String,
    pub concurrency: Option<usize>,
    pub rounds: usize,
    /// Seconds from the start to the end.
    pub elapsed: f64,
    pub endpoints: Vec<Endpoint>,
    pub pairs: Vec<PairRun>,
    pub grids: Vec<Grid>,
    pub findings: Vec<Finding>,
    /// Stopped by a signal before every pair ran.
    pub interrupted: bool,
    /// Path findings dropped because their pair's second measurement did
    /// not stand out (the confirmation round).
    pub not_confirmed: usize,
}

/// A record's figures for `test`: each metric from the first of its
/// selectors the record has. A required figure missing, not a number, or
/// a rate of zero (nothing moved) makes the pair failed, with why.
pub fn read_record(test: &str, record: &Value) -> Result<Vec<Figure>, String> {
    let results = record
        .get("results")
        .and_then(Value::as_object)
        .ok_or("the result record has no \"results\"")?;
    let mut figures = Vec::new();
    for m in metrics_of(test) {
        let found = m
            .selectors
            .iter()
            .find_map(|s| results.get(*s).map(|v| (s, v)));
        let Some((selector, field)) = found else {
            match m.optional {
                true => continue,
                false => return Err(format!("the result record has no {}", m.selectors[0])),
            }
        };
        let value = field.get("value").and_then(Value::as_f64);
        let value = match value {
            Some(v) if v.is_finite() && v >= 0.0 => v,
            // netperf's -1: not measured.
            _ if m.optional => continue,
            _ => {
                return Err(format!(
                    "{selector} is not a measurement: {}",
                    field.get("value").unwrap_or(&Value::Null)
                ))
            }
        };
        if value == 0.0 && m.higher_is_better {
            return Err(format!("{selector} is 0: nothing moved"));
        }
        let unit = field.get("unit").and_then(Value::as_str).unwrap_or(m.unit);
        figures.push(Figure {
            metric: m.id.to_string(),
            value,
            unit: unit.to_string(),
        });
    }
    Ok(figures)
}

impl Mesh {
    /// The grids and findings of the pairs as they ended (localisation
    /// with its default settings); a path finding whose pair was measured
    /// again is kept only when that measurement stands out too.
    pub fn analyse(&mut self) {
        let n = self.endpoints.len();
        let zones: Vec<Option<String>> = self.endpoints.iter().map(|e| e.zone.clone()).collect();
        self.grids.clear();
        self.findings.clear();
        self.not_confirmed = 0;
        for m in METRICS
            .iter()
            .filter(|m| self.tests.iter().any(|t| t == m.test))
        {
            let mut values = vec![None; n * n];
            let mut unit = None;
            for p in self.pairs.iter().filter(|p| p.test == m.test) {
                if let Some(f) = p.value(m.id) {
                    values[p.src * n + p.dst] = Some(f.value);
                    unit.get_or_insert_with(|| f.unit.clone());
                }
            }
            let analysis =
                (!m.optional).then(|| localise::localise(n, &values, &zones, better(m), &SETTINGS));
            if let Some(a) = &analysis {
                let again: std::collections::HashMap<(usize, usize), f64> = self
                    .pairs
                    .iter()
                    .filter(|p| p.test == m.test)
                    .filter_map(|p| {
                        let (_, outcome) = p.confirmation.as_ref()?;
                        Some(((p.src, p.dst), outcome.value(m.id)?.value))
                    })
                    .collect();
                for f in &a.findings {
                    let kept = match f.place {
                        Place::Path { src, dst } => again.get(&(src, dst)).is_none_or(|&v| {
                            localise::confirms(a, src, dst, v, better(m), &SETTINGS)
                        }),
                        _ => true,
                    };
                    match kept {
                        true => self.findings.push(self.finding(m, f)),
                        false => self.not_confirmed += 1,
                    }
                }
            }
            self.grids.push(Grid {
                metric: m.id.into(),
                test: m.test.into(),
                label: m.label.into(),
                unit: unit.unwrap_or_else(|| m.unit.into()),
                higher_is_better: m.higher_is_better,
                noise: analysis.map(|a| a.noise),
                values,
            });
        }
        self.findings.sort_by(|a, b| b.score.total_cmp(&a.score));
    }

    fn finding(&self, m: &Metric, f: &localise::Finding) -> Finding {
        let name = |i: usize| self.endpoints[i].name.clone();
        let (kind, endpoints, zones, side) = match &f.place {
            Place::Node { endpoint, side } => (
                FindingKind::Node,
                vec![name(*endpoint)],
                vec![],
                Some(side_word(side).to_string()),
            ),
            Place::Path { src, dst } => (
                FindingKind::Path,
                vec![name(*src), name(*dst)],
                vec![],
                None,
            ),
            Place::ZoneLink { from, to } => (
                FindingKind::ZoneLink,
                vec![],
                vec![from.clone(), to.clone()],
                None,
            ),
        };
        Finding {
            kind,
            endpoints,
            zones,
            side,
            metric: m.id.into(),
            effect: f.effect,
            noise: f.noise,
            score: f.score,
            cells: f.cells,
        }
    }

    /// The endpoint named `name`.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.endpoints.iter().position(|e| e.name == name)
    }

    /// The grid of `metric`.
    pub fn grid(&self, metric: &str) -> Option<&Grid> {
        self.grids.iter().find(|g| g.metric == metric)
    }

    /// The saved document.
    pub fn to_json(&self) -> Value {
        let name = |i: usize| self.endpoints[i].name.clone();
        MESH.stamped(json!({
            "started": self.started,
            "start_epoch": self.start_epoch,
            "command_line": self.command_line,
            "duration": self.duration,
            "tests": self.tests,
            "pairs_asked": self.pairs_asked,
            "concurrency": self.concurrency,
            "rounds": self.rounds,
            "elapsed": self.elapsed,
            "interrupted": self.interrupted,
            "not_confirmed": self.not_confirmed,
            "endpoints": self.endpoints.iter().map(|e| json!({
                "name": e.name, "address": e.address, "port": e.port,
                "node": e.node, "zone": e.zone,
            })).collect::<Vec<_>>(),
            "findings": self.findings.iter().map(|f| json!({
                "kind": f.kind.word(),
                "endpoints": f.endpoints,
                "zones": f.zones,
                "side": f.side,
                "metric": f.metric,
                "effect": f.effect,
                "noise": f.noise,
                "score": f.score,
                "cells": f.cells,
            })).collect::<Vec<_>>(),
            "grids": self.grids.iter().map(|g| {
                let n = self.endpoints.len();
                let rows: Vec<&[Option<f64>]> = g.values.chunks(n.max(1)).collect();
                json!({
                    "metric": g.metric, "test": g.test, "label": g.label, "unit": g.unit,
                    "better": if g.higher_is_better { "higher" } else { "lower" },
                    "noise": g.noise,
                    "values": rows,
                })
            }).collect::<Vec<_>>(),
            "pairs": self.pairs.iter().map(|p| {
                let mut o = Map::new();
                o.insert("src".into(), name(p.src).into());
                o.insert("dst".into(), name(p.dst).into());
                o.insert("test".into(), p.test.clone().into());
                o.insert("round".into(), p.round.into());
                put_outcome(&mut o, p.span, &p.outcome);
                if let Some((span, outcome)) = &p.confirmation {
                    let mut c = Map::new();
                    put_outcome(&mut c, *span, outcome);
                    o.insert("confirmation".into(), Value::Object(c));
                }
                Value::Object(o)
            }).collect::<Vec<_>>(),
        }))
    }

    /// The mesh read back from its saved document.
    pub fn from_json(doc: &Value) -> Result<Mesh, String> {
        match netperf_base::saved::identify(doc)? {
            &MESH => {}
            other => return Err(format!("not a mesh but {}", other.format)),
        }
        let endpoints = list(doc, "endpoints")?
            .iter()
            .map(read_endpoint)
            .collect::<Result<Vec<_>, _>>()?;
        let mut names = Names::with_capacity(endpoints.len());
        for (k, e) in endpoints.iter().enumerate() {
            if names.insert(e.name.as_str(), k).is_some() {
                return Err(format!("endpoint {:?} is named twice", e.name));
            }
        }
        let pairs = list(doc, "pairs")?
            .iter()
            .map(|p| read_pair(&names, p))
            .collect::<Result<_, _>>()?;
        let grids = list(doc, "grids")?
            .iter()
            .map(|g| read_grid(endpoints.len(), g))
            .collect::<Result<_, _>>()?;
        let findings = list(doc, "findings")?
            .iter()
            .map(|f| read_finding(&names, f))
            .collect::<Result<_, _>>()?;
        Ok(Mesh {
            started: text(doc, "started")?,
            start_epoch: number(doc, "start_epoch")?,
            command_line: text(doc, "command_line")?,
            duration: u32::try_from(count(doc, "duration")?).map_err(|e| e.to_string())?,
            tests: strings(doc, "tests")?,
            pairs_asked: text(doc, "pairs_asked")?,
            concurrency: match doc.get("concurrency") {
                Some(Value::Null) | None => None,
                Some(_) => Some(count(doc, "concurrency")?),
            },
            rounds: count(doc, "rounds")?,
            elapsed: netperf_base::saved::seconds(doc, "elapsed")?,
            interrupted: flag(doc, "interrupted")?,
            // Absent in meshes saved before the confirmation round.
            not_confirmed: match doc.get("not_confirmed") {
                None => 0,
                Some(_) => count(doc, "not_confirmed")?,
            },
            endpoints,
            pairs,
            grids,
            findings,
        })
    }
}

/// A pair's (or its confirmation's) span, outcome and values or reason.
fn put_outcome(o: &mut Map<String, Value>, span: Option<(f64, f64)>, outcome: &Outcome) {
    o.insert(
        "span".into(),
        span.map_or(Value::Null, |(a, b)| json!([a, b])),
    );
    o.insert("outcome".into(), outcome.word().into());
    match outcome {
        Outcome::Ok(figures) => {
            let values: Map<String, Value> = figures
                .iter()
                .map(|f| (f.metric.clone(), json!({"value": f.value, "unit": f.unit})))
                .collect();
            o.insert("values".into(), Value::Object(values));
        }
        Outcome::Failed(r) | Outcome::Missing(r) => {
            o.insert("reason".into(), r.clone().into());
        }
    }
}

/// What `put_outcome` wrote.
fn read_outcome(p: &Value) -> Result<(Option<(f64, f64)>, Outcome), String> {
    let span = match p.get("span") {
        None | Some(Value::Null) => None,
        Some(_) => Some(netperf_base::saved::span(p, "span")?),
    };
    let outcome = match text(p, "outcome")?.as_str() {
        "ok" => {
            let values = p
                .get("values")
                .and_then(Value::as_object)
                .ok_or("an ok pair has no \"values\"")?;
            let figures = values
                .iter()
                .map(|(metric, v)| {
                    Ok(Figure {
                        metric: metric.clone(),
                        value: finite(v, "value")?,
                        unit: text(v, "unit")?,
                    })
                })
                .collect::<Result<_, String>>()?;
            Outcome::Ok(figures)
        }
        "failed" => Outcome::Failed(text(p, "reason")?),
        "missing" => Outcome::Missing(text(p, "reason")?),
        other => {
            return Err(format!(
                "a pair's outcome {other:?} is not ok, failed or missing"
            ))
        }
    };
    Ok((span, outcome))
}

fn flag(v: &Value, key: &str) -> Result<bool, String> {
    v.get(key)
        .and_then(Value::as_bool)
        .ok_or_else(|| format!("\"{key}\" is missing or not true or false"))
}

fn strings(v: &Value, key: &str) -> Result<Vec<String>, String> {
    list(v, key)?
        .iter()
        .map(|s| {
            s.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("\"{key}\" holds a non-text"))
        })
        .collect()
}

/// An optional text member: absent or null is None.
fn maybe_text(v: &Value, key: &str) -> Result<Option<String>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => text(v, key).map(Some),
    }
}

fn finite(v: &Value, key: &str) -> Result<f64, String> {
    let x = number(v, key)?;
    match x.is_finite() {
        true => Ok(x),
        false => Err(format!("\"{key}\" is not finite")),
    }
}

fn read_endpoint(e: &Value) -> Result<Endpoint, String> {
    Ok(Endpoint {
        name: text(e, "name")?,
        address: text(e, "address")?,
        port: u16::try_from(count(e, "port")?).map_err(|_| "\"port\" is not a port")?,
        node: maybe_text(e, "node")?,
        zone: maybe_text(e, "zone")?,
    })
}

/// Each endpoint's index by name (a saved mesh may hold millions of pairs).
type Names<'a> = std::collections::HashMap<&'a str, usize>;

fn read_pair(names: &Names, p: &Value) -> Result<PairRun, String> {
    let end = |key: &str| -> Result<usize, String> {
        let name = text(p, key)?;
        names
            .get(name.as_str())
            .copied()
            .ok_or_else(|| format!("a pair's {key} {name:?} is not an endpoint"))
    };
    let (src, dst) = (end("src")?, end("dst")?);
    if src == dst {
        return Err("a pair runs from an endpoint to itself".into());
    }
    let (span, outcome) = read_outcome(p)?;
    let confirmation = match p.get("confirmation") {
        None => None,
        Some(c) => Some(read_outcome(c).map_err(|e| format!("a confirmation: {e}"))?),
    };
    Ok(PairRun {
        src,
        dst,
        test: text(p, "test")?,
        round: count(p, "round")?,
        span,
        outcome,
        confirmation,
    })
}

fn read_grid(n: usize, g: &Value) -> Result<Grid, String> {
    let rows = list(g, "values")?;
    if rows.len() != n {
        return Err(format!("a grid has {} rows for {n} endpoints", rows.len()));
    }
    let mut values = Vec::with_capacity(n * n);
    for row in rows {
        let cells = row
            .as_array()
            .filter(|r| r.len() == n)
            .ok_or("a grid's row is not one value per endpoint")?;
        for cell in cells {
            values.push(match cell {
                Value::Null => None,
                v => Some(
                    v.as_f64()
                        .filter(|x| x.is_finite())
                        .ok_or("a grid holds a non-number")?,
                ),
            });
        }
    }
    let higher_is_better = match text(g, "better")?.as_str() {
        "higher" => true,
        "lower" => false,
        other => return Err(format!("a grid's better {other:?} is not higher or lower")),
    };
    Ok(Grid {
        metric: text(g, "metric")?,
        test: text(g, "test")?,
        label: text(g, "label")?,
        unit: text(g, "unit")?,
        higher_is_better,
        noise: match g.get("noise") {
            None | Some(Value::Null) => None,
            Some(_) => Some(finite(g, "noise")?),
        },
        values,
    })
}

fn read_finding(names: &Names, f: &Value) -> Result<Finding, String> {
    let word = text(f, "kind")?;
    let kind = FINDING_KINDS
        .iter()
        .find(|(_, w)| *w == word)
        .map(|(k, _)| *k)
        .ok_or_else(|| format!("a finding's kind {word:?} is not node, path or zone-link"))?;
    let endpoints = strings(f, "endpoints")?;
    if let Some(stranger) = endpoints.iter().find(|e| !names.contains_key(e.as_str())) {
        return Err(format!("a finding names {stranger:?}, not an endpoint"));
    }
    let wanted = match kind {
        FindingKind::Node => 1,
        FindingKind::Path => 2,
        FindingKind::ZoneLink => 0,
    };
    let zones = strings(f, "zones")?;
    if endpoints.len() != wanted || (kind == FindingKind::ZoneLink && zones.len() != 2) {
        return Err(format!(
            "a {word} finding names the wrong number of endpoints or zones"
        ));
    }
    let side = maybe_text(f, "side")?;
    if kind == FindingKind::Node && !SIDES.iter().any(|w| Some(*w) == side.as_deref()) {
        return Err("a node finding's side is not sending, receiving or both".into());
    }
    Ok(Finding {
        kind,
        endpoints,
        zones,
        side,
        metric: text(f, "metric")?,
        effect: finite(f, "effect")?,
        noise: finite(f, "noise")?,
        score: finite(f, "score")?,
        cells: count(f, "cells")?,
    })
}
