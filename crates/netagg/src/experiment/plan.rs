//! An experiment's plan: the TOML file (or the command line alone) read,
//! merged with command-line overrides and validated into a [`Plan`] before
//! anything runs, and written back as the canonical TOML the record keeps;
//! and what a cell of it says: its levels and its test's direction and
//! protocol.

use super::factors::{self, FactorKind, OFFLOAD_NAMES};
use super::targets::{parse_targets, resolve_levels, target_toml};
use netperf_results::model::{cell_label, cross_product, Cell, FactorRecord, Target};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Largest plan file read, in bytes: a plan is a few lines.
const MAX_PLAN_BYTES: usize = 1 << 20;
/// Most runs one experiment may have (cells x replicates).
pub const MAX_RUNS: usize = 100_000;

/// The plan file as written (every key optional; unknown keys refused).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    pub title: Option<String>,
    /// netperf -H: the netserver's host.
    pub host: Option<String>,
    /// netperf -p: the netserver's control port.
    pub port: Option<u16>,
    /// netperf -l: seconds per run.
    pub duration: Option<u32>,
    pub replicates: Option<u32>,
    /// Seed of the run order; a new one is drawn and recorded when absent.
    pub seed: Option<u64>,
    /// Seconds to wait before every run (after any offload change).
    pub settle: Option<f64>,
    /// Measure CPU on both ends (-c -C); true by default.
    pub cpu: Option<bool>,
    /// Local interface whose offloads change (default: toward `host`).
    pub interface: Option<String>,
    /// Remote interface (default: the netserver's interface toward us).
    pub remote_interface: Option<String>,
    /// Where offload factors apply: "both" (default), "local", "remote".
    pub offload_ends: Option<String>,
    /// What the `offloads` factor switches (default tso, gso, gro, lro).
    pub offload_set: Option<Vec<String>>,
    /// TCP runs get -G message_size + mss_offset (the write-up uses 12).
    pub mss_offset: Option<u32>,
    /// The netperf binary (default: beside netagg, else on PATH).
    pub netperf: Option<String>,
    /// Extra global options for every netperf (before --).
    pub global_args: Option<Vec<String>>,
    /// Extra test-specific options for every netperf (after --).
    pub test_args: Option<Vec<String>>,
    pub tags: Option<Vec<String>>,
    /// factor name -> levels, in the order written.
    pub factors: Option<toml::Table>,
    /// label -> "host[:port]" or { host, port, about, unavailable }: where
    /// the `target` factor's levels go.
    pub targets: Option<toml::Table>,
}

/// Where offload factors are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffloadEnds {
    Both,
    Local,
    Remote,
}

impl OffloadEnds {
    const NAMES: [(&'static str, OffloadEnds); 3] = [
        ("both", OffloadEnds::Both),
        ("local", OffloadEnds::Local),
        ("remote", OffloadEnds::Remote),
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, e)| *e == self)
            .map_or("both", |(n, _)| n)
    }

    pub fn local(self) -> bool {
        self != OffloadEnds::Remote
    }

    pub fn remote(self) -> bool {
        self != OffloadEnds::Local
    }
}

/// One factor, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Factor {
    pub name: String,
    pub kind: FactorKind,
    pub levels: Vec<String>,
}

/// A validated plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub title: String,
    pub host: String,
    pub port: u16,
    pub duration: u32,
    pub replicates: u32,
    pub seed: Option<u64>,
    pub settle: Duration,
    pub cpu: bool,
    pub interface: Option<String>,
    pub remote_interface: Option<String>,
    pub offload_ends: OffloadEnds,
    pub offload_set: Vec<String>,
    pub mss_offset: Option<u32>,
    pub netperf: Option<PathBuf>,
    pub global_args: Vec<String>,
    pub test_args: Vec<String>,
    pub tags: Vec<String>,
    pub factors: Vec<Factor>,
    /// Where the `target` factor's levels go (empty without that factor),
    /// including scenarios marked unavailable.
    pub targets: Vec<Target>,
}

/// Reads a plan file (bounded; a clear error naming the file and the line).
pub fn read_plan_file(path: &Path) -> Result<PlanFile, String> {
    read_toml(path)
}

/// Reads any TOML plan (an experiment's, a watch's) into `T`, bounded; an
/// error names the file and the line.
pub fn read_toml<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = netperf_base::input::read_text(path, MAX_PLAN_BYTES)
        .map_err(|e| format!("cannot read plan {}: {e}", path.display()))?;
    let text = String::from_utf8(text)
        .map_err(|_| format!("plan {} is not UTF-8 text", path.display()))?;
    parse_toml(&text).map_err(|e| format!("plan {}: {e}", path.display()))
}

/// Parses plan text.
pub fn parse_plan(text: &str) -> Result<PlanFile, String> {
    parse_toml(text)
}

/// Parses TOML text into `T`; an error names the line.
fn parse_toml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
        match line {
            Some(line) => format!("line {line}: {}", e.message().trim_end()),
            None => e.message().trim_end().to_string(),
        }
    })
}

/// "name=level,level" from `--factor`.
pub fn parse_factor_arg(arg: &str) -> Result<(String, Vec<String>), String> {
    let (name, levels) = arg
        .split_once('=')
        .ok_or_else(|| format!("--factor {arg}: expected NAME=LEVEL,LEVEL,..."))?;
    let levels: Vec<String> = levels.split(',').map(|l| l.trim().to_string()).collect();
    Ok((name.trim().to_string(), levels))
}

/// The levels of one factor of the plan file as text.
fn levels_of(name: &str, value: &toml::Value) -> Result<Vec<String>, String> {
    let items = match value {
        toml::Value::Array(items) => items.clone(),
        single => vec![single.clone()],
    };
    items
        .iter()
        .map(|v| match v {
            toml::Value::String(s) => Ok(s.clone()),
            toml::Value::Integer(i) => Ok(i.to_string()),
            toml::Value::Boolean(b) => Ok(if *b { "on" } else { "off" }.to_string()),
            other => Err(format!(
                "factor {name}: level {other} is neither a string nor a whole number"
            )),
        })
        .collect()
}

impl PlanFile {
    /// The file's factors, then `--factor` ones: a factor named again on the
    /// command line replaces the file's levels in place.
    fn merged_factors(
        &self,
        extra: &[(String, Vec<String>)],
    ) -> Result<Vec<(String, Vec<String>)>, String> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        if let Some(table) = &self.factors {
            for (name, value) in table {
                out.push((name.clone(), levels_of(name, value)?));
            }
        }
        for (name, levels) in extra {
            match out.iter_mut().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = levels.clone(),
                None => out.push((name.clone(), levels.clone())),
            }
        }
        Ok(out)
    }

    /// Validates everything and fills in the defaults.
    pub fn validate(&self, extra_factors: &[(String, Vec<String>)]) -> Result<Plan, String> {
        let mut factors = Vec::new();
        for (name, levels) in self.merged_factors(extra_factors)? {
            let kind = factors::kind_of(&name)?;
            if levels.is_empty() || levels.iter().any(|l| l.trim().is_empty()) {
                return Err(format!("factor {name}: a level is empty"));
            }
            let mut checked: Vec<String> = Vec::new();
            let mut seen: Vec<String> = Vec::new();
            for level in &levels {
                let level = factors::check_level(&name, level)?;
                // 1K, 1k and 1024 are one size.
                let same = match kind {
                    FactorKind::MessageSize | FactorKind::SocketBuffer | FactorKind::PacingRate => {
                        factors::size_of(&level).to_string()
                    }
                    _ => level.clone(),
                };
                if seen.contains(&same) {
                    return Err(format!("factor {name}: level {level} is listed twice"));
                }
                seen.push(same);
                checked.push(level);
            }
            factors.push(Factor {
                name,
                kind,
                levels: checked,
            });
        }
        let offload_set = match &self.offload_set {
            None => OFFLOAD_NAMES.iter().map(|s| s.to_string()).collect(),
            Some(set) => checked_offload_set(set)?,
        };
        let offload_ends = match &self.offload_ends {
            None => OffloadEnds::Both,
            Some(text) => OffloadEnds::NAMES
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(text))
                .map(|(_, e)| *e)
                .ok_or_else(|| {
                    format!("offload_ends \"{text}\": expected both, local or remote")
                })?,
        };
        check_combination(&factors, &offload_set)?;
        let port = self.port.unwrap_or(12865);
        let targets = self.targets_of(&factors, port)?;
        let plan = Plan {
            title: self.title.clone().unwrap_or_default(),
            host: self.host.clone().unwrap_or_else(|| "localhost".into()),
            port,
            duration: bounded("duration", self.duration.unwrap_or(10), 1, 86_400)?,
            replicates: bounded("replicates", self.replicates.unwrap_or(5), 1, 10_000)?,
            seed: self.seed,
            settle: settle_of(self.settle.unwrap_or(0.0))?,
            cpu: self.cpu.unwrap_or(true),
            interface: non_empty("interface", &self.interface)?,
            remote_interface: non_empty("remote_interface", &self.remote_interface)?,
            offload_ends,
            offload_set,
            mss_offset: self.mss_offset,
            netperf: self.netperf.as_ref().map(PathBuf::from),
            global_args: self.global_args.clone().unwrap_or_default(),
            test_args: self.test_args.clone().unwrap_or_default(),
            tags: self.tags.clone().unwrap_or_default(),
            factors,
            targets,
        };
        if plan.host.trim().is_empty() {
            return Err("host is empty".into());
        }
        let runs = plan.cells().len().saturating_mul(plan.replicates as usize);
        if runs > MAX_RUNS {
            return Err(format!(
                "the plan has {runs} runs; at most {MAX_RUNS} are allowed"
            ));
        }
        plan.check_cells()?;
        Ok(plan)
    }
}

impl PlanFile {
    /// The targets the `target` factor's levels name; none without it.
    fn targets_of(&self, factors: &[Factor], port: u16) -> Result<Vec<Target>, String> {
        let table = match &self.targets {
            Some(t) => parse_targets(t, port)?,
            None => Vec::new(),
        };
        match factors.iter().find(|f| f.kind == FactorKind::Target) {
            Some(f) => resolve_levels(&f.levels, table, port),
            None if table.is_empty() => Ok(table),
            None => Err("the plan has [targets] but no factor target to use them".into()),
        }
    }
}

fn bounded(what: &str, value: u32, lo: u32, hi: u32) -> Result<u32, String> {
    if (lo..=hi).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{what} {value} is outside {lo}..{hi}"))
    }
}

fn settle_of(seconds: f64) -> Result<Duration, String> {
    if seconds.is_finite() && (0.0..=3600.0).contains(&seconds) {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(format!("settle {seconds} is outside 0..3600 seconds"))
    }
}

fn non_empty(what: &str, value: &Option<String>) -> Result<Option<String>, String> {
    match value {
        Some(v) if v.trim().is_empty() => Err(format!("{what} is empty")),
        Some(v) if v.len() > 15 || v.contains(['/', ' ']) => {
            Err(format!("{what} \"{v}\" is not an interface name"))
        }
        other => Ok(other.clone()),
    }
}

fn checked_offload_set(set: &[String]) -> Result<Vec<String>, String> {
    if set.is_empty() {
        return Err("offload_set is empty".into());
    }
    let mut out: Vec<String> = Vec::new();
    for name in set {
        let lower = name.to_ascii_lowercase();
        if !OFFLOAD_NAMES.contains(&lower.as_str()) {
            return Err(format!(
                "offload_set: unknown offload \"{name}\": expected {}",
                OFFLOAD_NAMES.join(", ")
            ));
        }
        if !out.contains(&lower) {
            out.push(lower);
        }
    }
    Ok(out)
}

/// Factors that would set the same thing twice.
fn check_combination(factors: &[Factor], offload_set: &[String]) -> Result<(), String> {
    let has = |kind: FactorKind| factors.iter().any(|f| f.kind == kind);
    if has(FactorKind::Test) && (has(FactorKind::Direction) || has(FactorKind::Protocol)) {
        return Err("factor test already sets the direction and protocol: use test, or direction and protocol".into());
    }
    let switches_offloads = has(FactorKind::Offloads) || has(FactorKind::Offload);
    if has(FactorKind::Target) && switches_offloads {
        return Err("offload factors switch the interfaces toward host; they cannot be combined with factor target".into());
    }
    if has(FactorKind::Offloads) {
        if let Some(f) = factors
            .iter()
            .find(|f| f.kind == FactorKind::Offload && offload_set.contains(&f.name))
        {
            return Err(format!(
                "factor {} is also switched by factor offloads (offload_set): use one of them",
                f.name
            ));
        }
    }
    Ok(())
}

impl Plan {
    pub fn factor_records(&self) -> Vec<FactorRecord> {
        self.factors
            .iter()
            .map(|f| FactorRecord {
                name: f.name.clone(),
                levels: f.levels.clone(),
            })
            .collect()
    }

    pub fn cells(&self) -> Vec<Cell> {
        cross_product(&self.factor_records())
    }

    /// Whether any factor switches offloads.
    pub fn changes_offloads(&self) -> bool {
        self.factors
            .iter()
            .any(|f| matches!(f.kind, FactorKind::Offloads | FactorKind::Offload))
    }

    /// Cells whose options do not fit together.
    fn check_cells(&self) -> Result<(), String> {
        for cell in self.cells() {
            let shape = shape_of(&cell);
            if shape.protocol == "udp" && cell_has(&cell, "mss") {
                return Err(format!(
                    "factor mss (-G, TCP_MAXSEG) applies to TCP only; cell \"{}\" is UDP",
                    cell_label(&cell)
                ));
            }
            if let (Some(offset), Some(size), "tcp") = (
                self.mss_offset,
                level_of(&cell, "message_size"),
                shape.protocol,
            ) {
                let mss = factors::size_of(size).saturating_add(u64::from(offset));
                if mss > 65_535 {
                    return Err(format!(
                        "mss_offset: message_size {size} + {offset} = {mss} is beyond the largest MSS, 65535"
                    ));
                }
            }
            if shape.direction != "rr" && cell_has(&cell, "burst") {
                return Err(format!(
                    "factor burst applies to request/response tests only; cell \"{}\" is a {} test",
                    cell_label(&cell),
                    shape.direction
                ));
            }
        }
        Ok(())
    }

    /// The plan as TOML, with the seed that was used, for the record.
    pub fn to_toml(&self, seed: u64) -> String {
        let mut factors = toml::Table::new();
        for f in &self.factors {
            factors.insert(
                f.name.clone(),
                toml::Value::Array(
                    f.levels
                        .iter()
                        .map(|l| toml::Value::String(l.clone()))
                        .collect(),
                ),
            );
        }
        let file = PlanFile {
            title: Some(self.title.clone()).filter(|t| !t.is_empty()),
            host: Some(self.host.clone()),
            port: Some(self.port),
            duration: Some(self.duration),
            replicates: Some(self.replicates),
            seed: Some(seed),
            settle: Some(self.settle.as_secs_f64()),
            cpu: Some(self.cpu),
            interface: self.interface.clone(),
            remote_interface: self.remote_interface.clone(),
            offload_ends: Some(self.offload_ends.name().to_string()),
            offload_set: Some(self.offload_set.clone()),
            mss_offset: self.mss_offset,
            netperf: self.netperf.as_ref().map(|p| p.display().to_string()),
            global_args: Some(self.global_args.clone()).filter(|a| !a.is_empty()),
            test_args: Some(self.test_args.clone()).filter(|a| !a.is_empty()),
            tags: Some(self.tags.clone()).filter(|a| !a.is_empty()),
            factors: Some(factors),
            targets: Some(
                self.targets
                    .iter()
                    .map(|t| (t.label.clone(), target_toml(t)))
                    .collect(),
            )
            .filter(|t: &toml::Table| !t.is_empty()),
        };
        toml::to_string(&file).unwrap_or_default()
    }
}

/// Whether `cell` has factor `name`.
pub fn cell_has(cell: &Cell, name: &str) -> bool {
    cell.iter().any(|(f, _)| f == name)
}

/// The level of factor `name` in `cell`.
pub fn level_of<'a>(cell: &'a Cell, name: &str) -> Option<&'a str> {
    cell.iter()
        .find(|(f, _)| f == name)
        .map(|(_, l)| l.as_str())
}

/// A run's omni direction ("send", "recv", "rr") and protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub direction: &'static str,
    pub protocol: &'static str,
}

/// The direction and protocol of `cell`: from its test level, else its
/// direction and protocol levels, else send over TCP (TCP_STREAM).
pub fn shape_of(cell: &Cell) -> Shape {
    if let Some((direction, protocol)) = level_of(cell, "test").and_then(factors::test_shape) {
        return Shape {
            direction,
            protocol,
        };
    }
    let pick = |name: &str, words: &[&'static str], default: &'static str| {
        level_of(cell, name)
            .and_then(|l| words.iter().copied().find(|w| *w == l))
            .unwrap_or(default)
    };
    Shape {
        direction: pick("direction", &["send", "recv", "rr"], "send"),
        protocol: pick("protocol", &["tcp", "udp"], "tcp"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITERS: &str = r#"
title = "UDP vs TCP, 1024 vs 8192, offloads on/off"
host = "198.18.0.2"
replicates = 5
mss_offset = 12
offload_set = ["tso", "gso", "gro"]

[factors]
protocol = ["udp", "tcp"]
message_size = [1024, 8192]
offloads = ["on", "off"]
"#;

    #[test]
    fn the_limiters_plan_reads_in_order() {
        let plan = parse_plan(LIMITERS).unwrap().validate(&[]).unwrap();
        let names: Vec<&str> = plan.factors.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["protocol", "message_size", "offloads"]);
        assert_eq!(plan.cells().len(), 8);
        assert_eq!(plan.duration, 10);
        assert!(plan.changes_offloads());
        let again = parse_plan(&plan.to_toml(7)).unwrap();
        assert_eq!(again.seed, Some(7));
        assert_eq!(again.validate(&[]).unwrap().factors, plan.factors);
    }

    #[test]
    fn targets_round_trip_through_the_recorded_plan() {
        let text = r#"
port = 12866
[factors]
target = ["near", "far"]
test = ["TCP_RR", "TCP_RR*4"]
[targets]
near = "198.18.1.2"
far = { host = "[2001:2::9]:7", about = "zone b" }
gone = { unavailable = "one zone" }
"#;
        let plan = parse_plan(text).unwrap().validate(&[]).unwrap();
        assert_eq!(plan.targets.len(), 3);
        assert_eq!((plan.targets[0].port, plan.targets[1].port), (12866, 7));
        let again = parse_plan(&plan.to_toml(1)).unwrap().validate(&[]).unwrap();
        assert_eq!(again.targets, plan.targets);
        let bare = parse_plan("[factors]\ntarget = [\"198.18.1.2:9\", \"::1\"]")
            .unwrap()
            .validate(&[])
            .unwrap();
        assert_eq!(bare.targets[0].host, "198.18.1.2");
        assert_eq!(bare.targets[1].port, 12865);
    }

    #[test]
    fn command_line_factors_replace_or_add() {
        let extra = vec![
            parse_factor_arg("message_size=64,1K").unwrap(),
            parse_factor_arg("streams=1,2").unwrap(),
        ];
        let plan = parse_plan(LIMITERS).unwrap().validate(&extra).unwrap();
        assert_eq!(plan.factors[1].levels, ["64", "1K"]);
        assert_eq!(plan.factors[3].name, "streams");
    }

    #[test]
    fn bad_plans_are_refused_with_a_reason() {
        let cases = [
            ("colour = 1", "unknown field"),
            ("[factors]\ncolour = [1]", "unknown factor \"colour\""),
            ("[factors]\nprotocol = [\"udp\", \"udp\"]", "listed twice"),
            ("[factors]\nprotocol = []", "level is empty"),
            ("replicates = 0", "replicates 0"),
            ("settle = -1.0", "settle"),
            ("offload_ends = \"sideways\"", "offload_ends"),
            ("offload_set = [\"tx\"]", "unknown offload"),
            ("interface = \"\"", "interface is empty"),
            (
                "[factors]\ntest = [\"TCP_RR\"]\nprotocol = [\"udp\"]",
                "factor test already",
            ),
            (
                "[factors]\noffloads = [\"on\"]\ntso = [\"off\"]",
                "also switched",
            ),
            (
                "[factors]\nburst = [4]\nprotocol = [\"tcp\"]",
                "request/response tests only",
            ),
            ("[factors]\nmessage_size = [1.5]", "neither a string"),
            ("title = \"x\"\ntitle = \"y\"", "duplicate key"),
            ("[factors\n", "line 1: unclosed table"),
            ("[targets]\na = \"h\"", "no factor target"),
            (
                "[factors]\ntarget = [\"b\"]\n[targets]\na = \"h\"",
                "not in [targets]",
            ),
            ("[factors]\ntarget = [\"h:0\"]", "port outside"),
            (
                "[factors]\ntarget = [\"h\"]\noffloads = [\"on\"]",
                "cannot be combined",
            ),
        ];
        for (text, expect) in cases {
            let result = parse_plan(text).and_then(|f| f.validate(&[]));
            let e = result.unwrap_err();
            assert!(e.contains(expect), "{text:?}: {e}");
        }
        assert!(parse_factor_arg("message_size").is_err());
    }
}
