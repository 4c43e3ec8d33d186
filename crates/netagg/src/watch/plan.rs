//! What a watch runs and when: the plan file (`[schedule]` and one or more
//! `[[run]]`, each a netagg or netperf command line), or the command
//! line's simple form (an experiment over `--tests` against the hosts);
//! each run turned into the child's command line with its spool directory,
//! and what is known of it before it runs (its kind, test and host, for
//! an absence).

use netperf_results::retain::span_seconds;
use netperf_results::Kind;
use serde::Deserialize;
use std::path::Path;
use std::time::Duration;

/// Most `[[run]]` entries a plan may have.
const MAX_RUNS: usize = 64;
/// Longest a run of a plan entry may take, unless it says (`timeout`):
/// then it is cut (SIGTERM, then SIGKILL), so a hung run cannot stop the
/// watch forever.
pub const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(2 * 3600);

/// A span of time: seconds as a bare number, else with a unit ("15m").
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Span {
    Seconds(u64),
    Text(String),
}

impl Span {
    /// The span's length; `what` names it in the error.
    pub fn seconds(&self, what: &str) -> Result<u64, String> {
        let n = match self {
            Span::Seconds(n) => Some(*n),
            Span::Text(t) if t.trim().bytes().all(|b| b.is_ascii_digit()) => t.trim().parse().ok(),
            Span::Text(t) => span_seconds(t),
        };
        match n {
            Some(n) if n > 0 && n <= 100 * 365 * 86_400 => Ok(n),
            _ => Err(format!(
                "{what} {}: give seconds (900) or a span with its unit (30s, 15m, 1h, 1d)",
                self.text()
            )),
        }
    }

    pub fn text(&self) -> String {
        match self {
            Span::Seconds(n) => n.to_string(),
            Span::Text(t) => t.clone(),
        }
    }
}

/// The plan file's `[schedule]` table; the command line's options
/// override its keys.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleFile {
    pub every: Option<Span>,
    pub keep: Option<Span>,
    pub compact_after: Option<Span>,
    pub name: Option<String>,
    pub runs: Option<u64>,
}

/// One `[[run]]`: a netagg or a netperf command line (not both).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunFile {
    pub netagg: Option<Vec<String>>,
    pub netperf: Option<Vec<String>>,
    /// Longest the run may take (default two hours).
    pub timeout: Option<Span>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    #[serde(default)]
    pub schedule: ScheduleFile,
    #[serde(default)]
    pub run: Vec<RunFile>,
}

/// Reads and parses a plan file; an error names the file and line.
pub fn read_plan(path: &Path) -> Result<PlanFile, String> {
    let plan: PlanFile = crate::experiment::plan::read_toml(path)?;
    match plan.run.len() {
        0 => Err(format!(
            "plan {}: no [[run]]: give one or more, each netagg = [...] or netperf = [...]",
            path.display()
        )),
        n if n > MAX_RUNS => Err(format!(
            "plan {}: {n} [[run]] entries, at most {MAX_RUNS}",
            path.display()
        )),
        _ => Ok(plan),
    }
}

/// Which of our programs a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    Netagg,
    Netperf,
}

impl Program {
    pub fn name(self) -> &'static str {
        match self {
            Program::Netagg => "netagg",
            Program::Netperf => "netperf",
        }
    }
}

/// The simple form's run: an experiment over the tests against the hosts,
/// the hosts found again at each run with `--k8s-selector`.
#[derive(Debug, Clone)]
pub struct Simple {
    pub hosts: Vec<String>,
    pub k8s: Option<netperf_k8s::Query>,
    pub port: Option<u16>,
    pub tests: Vec<String>,
    pub duration: u32,
}

/// One entry of the plan, as it will be run.
#[derive(Debug, Clone)]
pub struct Job {
    pub program: Program,
    /// The user's words (a plan entry's), without the spool's.
    pub args: Vec<String>,
    /// Set for the simple form: `args` are then made at each run.
    pub simple: Option<Simple>,
    pub timeout: Duration,
    /// How long it has after SIGTERM before SIGKILL.
    pub grace: Duration,
    /// What an absence of this run is stored as.
    pub kind: Kind,
    pub test: String,
    pub host: String,
}

/// Options the watch gives every child itself.
const OWN_OPTIONS: &[&str] = &["--out", "--store", "--no-store", "--db"];
/// netagg subcommands a plan may run (a ramp is netagg's own options).
const SUBCOMMANDS: &[(&str, Kind)] = &[
    ("experiment", Kind::Experiment),
    ("matrix", Kind::Experiment),
    ("mesh", Kind::Netagg),
    ("responsiveness", Kind::Netagg),
];

/// The value after `option` (or glued to it with '='), the last one given.
fn value_of(args: &[String], option: &str) -> Option<String> {
    let mut found = None;
    for (i, word) in args.iter().enumerate() {
        if word == option {
            found = args.get(i + 1).cloned();
        } else if let Some(v) = word.strip_prefix(option).and_then(|v| v.strip_prefix('=')) {
            found = Some(v.to_string());
        }
    }
    found
}

impl Job {
    /// A plan file's `[[run]]`, checked.
    pub fn of_entry(entry: &RunFile, index: usize) -> Result<Job, String> {
        let at = |why: String| format!("[[run]] {}: {why}", index + 1);
        let timeout = match &entry.timeout {
            Some(span) => Duration::from_secs(span.seconds("timeout").map_err(at)?),
            None => DEFAULT_RUN_TIMEOUT,
        };
        let (program, args) = match (&entry.netagg, &entry.netperf) {
            (Some(a), None) => (Program::Netagg, a.clone()),
            (None, Some(a)) => (Program::Netperf, a.clone()),
            _ => {
                return Err(at(
                    "give one of netagg = [...] or netperf = [...]".to_string()
                ))
            }
        };
        if args.len() > 256 || args.iter().any(|a| a.len() > 4096 || a.contains('\0')) {
            return Err(at("the command line is too long".into()));
        }
        let own = |word: &String| {
            OWN_OPTIONS
                .iter()
                .any(|o| word == o || word.starts_with(&format!("{o}=")))
        };
        if let Some(word) = args.iter().find(|w| own(w)) {
            return Err(at(format!(
                "{word}: the watch chooses where each run writes and stores it"
            )));
        }
        let (kind, test, host) = match program {
            Program::Netperf => (
                Kind::Netperf,
                value_of(&args, "-t").unwrap_or_else(|| "TCP_STREAM".into()),
                value_of(&args, "-H").unwrap_or_else(|| "localhost".into()),
            ),
            Program::Netagg => {
                let first = args.first().map(String::as_str).unwrap_or("");
                let kind = match SUBCOMMANDS.iter().find(|(name, _)| *name == first) {
                    Some((_, kind)) => *kind,
                    None if first.starts_with('-') => Kind::Netagg,
                    None => {
                        return Err(at(format!(
                        "netagg {first:?}: a run is one of {}, or a ramp (netagg's own options)",
                        SUBCOMMANDS
                            .iter()
                            .map(|(n, _)| *n)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )))
                    }
                };
                let test = match first.starts_with('-') {
                    true => format!("ramp {}", value_of(&args, "--kind").unwrap_or_default()),
                    false => first.to_string(),
                };
                let host = value_of(&args, "--host").unwrap_or_default();
                (kind, test.trim().to_string(), host)
            }
        };
        Ok(Job {
            program,
            args,
            simple: None,
            timeout,
            grace: super::child::GRACE,
            kind,
            test,
            host,
        })
    }

    /// The command line's simple form.
    pub fn of_simple(simple: Simple) -> Job {
        let expected = simple.expected();
        Job {
            program: Program::Netagg,
            args: Vec::new(),
            kind: Kind::Experiment,
            test: simple.tests.join(","),
            host: match &simple.k8s {
                Some(q) => q.selector.clone(),
                None => simple.hosts.join(","),
            },
            // A run that takes three times its length is stuck.
            timeout: expected * 3 + Duration::from_secs(120),
            // The test it is in the middle of, and the child's own grace.
            grace: Duration::from_secs(u64::from(simple.duration)) + super::child::GRACE,
            simple: Some(simple),
        }
    }

    /// The run's words after the program, writing into `spool`; an error
    /// (the hosts could not be found) is the run's absence.
    pub fn command(&self, spool: &Path) -> Result<Vec<String>, String> {
        let dir = spool.display().to_string();
        let mut words = match &self.simple {
            Some(simple) => simple.args()?,
            None => self.args.clone(),
        };
        match self.program {
            Program::Netagg => words.extend(["--out".into(), dir, "--no-store".into()]),
            Program::Netperf => {
                if !words.iter().any(|w| w == "--") {
                    words.push("--".into());
                }
                words.push(format!("--store={dir}/{}", super::import::NETPERF_DB));
            }
        }
        Ok(words)
    }

    /// The line that shows it in the plan.
    pub fn label(&self) -> String {
        let program = self.program.name();
        match &self.simple {
            Some(s) => format!(
                "netagg experiment: {} against {} for {} s each",
                s.tests.join(","),
                self.host,
                s.duration
            ),
            None => format!("{program} {}", self.args.join(" ")),
        }
    }
}

impl Simple {
    /// How long the run measures.
    pub fn expected(&self) -> Duration {
        let hosts = self.hosts.len().max(1) as u64;
        Duration::from_secs(self.tests.len() as u64 * hosts * u64::from(self.duration))
    }

    /// The experiment's words: one replicate of every test (and host).
    fn args(&self) -> Result<Vec<String>, String> {
        let (hosts, port) = match &self.k8s {
            Some(query) => {
                let found = netperf_k8s::discover(query).map_err(|e| e.to_string())?;
                let (list, port) = crate::agg::hosts::from_k8s(&found, &query.selector, self.port)
                    .map_err(|e| e.to_string())?;
                (list, Some(port))
            }
            None => (self.hosts.clone(), self.port),
        };
        let mut words: Vec<String> = ["experiment", "--factor"]
            .map(String::from)
            .into_iter()
            .chain([format!("test={}", self.tests.join(","))])
            .collect();
        match hosts.as_slice() {
            [one] => words.extend(["--host".into(), one.clone()]),
            several => words.extend(["--factor".into(), format!("target={}", several.join(","))]),
        }
        if let Some(port) = port {
            words.extend(["--port".into(), port.to_string()]);
        }
        words.extend(
            [
                "--duration",
                &self.duration.to_string(),
                "--replicates",
                "1",
                "--settle",
                "0",
            ]
            .map(String::from),
        );
        Ok(words)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn spans_in_seconds_or_with_units() {
        assert_eq!(Span::Seconds(900).seconds("--every"), Ok(900));
        assert_eq!(Span::Text("900".into()).seconds("--every"), Ok(900));
        assert_eq!(Span::Text("15m".into()).seconds("--every"), Ok(900));
        assert_eq!(Span::Text("1d".into()).seconds("--every"), Ok(86_400));
        for bad in ["0", "", "1w", "-5", "15 minutes"] {
            assert!(Span::Text(bad.into()).seconds("--every").is_err(), "{bad}");
        }
    }

    #[test]
    fn plan_entries_are_checked() {
        let plan: PlanFile = toml::from_str(
            r#"
            [schedule]
            every = "15m"
            runs = 2
            [[run]]
            netagg = ["experiment", "p.toml", "--host", "x"]
            [[run]]
            netperf = ["-H", "y", "-t", "TCP_RR", "--", "-r", "1,1"]
            timeout = 60
            [[run]]
            netagg = ["--host", "z", "--kind", "tps"]
            "#,
        )
        .unwrap();
        let jobs: Vec<Job> = plan
            .run
            .iter()
            .enumerate()
            .map(|(i, r)| Job::of_entry(r, i).unwrap())
            .collect();
        assert_eq!(jobs[0].kind, Kind::Experiment);
        assert_eq!(
            (jobs[0].test.as_str(), jobs[0].host.as_str()),
            ("experiment", "x")
        );
        assert_eq!(
            (jobs[1].test.as_str(), jobs[1].host.as_str()),
            ("TCP_RR", "y")
        );
        assert_eq!(jobs[1].timeout, Duration::from_secs(60));
        assert_eq!(jobs[2].test, "ramp tps");
        let spool = Path::new("/s/u");
        assert_eq!(
            jobs[1].command(spool).unwrap(),
            words("-H y -t TCP_RR -- -r 1,1 --store=/s/u/netperf.db")
        );
        assert_eq!(
            jobs[0].command(spool).unwrap(),
            words("experiment p.toml --host x --out /s/u --no-store")
        );
        for bad in [
            r#"netagg = ["experiment", "--store=x"]"#,
            r#"netagg = ["results", "list"]"#,
            r#"netagg = ["watch"]"#,
            r#"netperf = ["-H", "x"]
               netagg = ["mesh"]"#,
            "timeout = 5",
        ] {
            let entry: Result<RunFile, _> = toml::from_str(bad);
            if let Ok(entry) = entry {
                assert!(Job::of_entry(&entry, 0).is_err(), "{bad}");
            }
        }
    }

    #[test]
    fn the_simple_form_is_one_experiment() {
        let simple = |hosts: &[&str]| Simple {
            hosts: hosts.iter().map(|h| h.to_string()).collect(),
            k8s: None,
            port: Some(12866),
            tests: vec!["TCP_STREAM".into(), "TCP_RR".into()],
            duration: 2,
        };
        let job = Job::of_simple(simple(&["h"]));
        assert_eq!(
            job.command(Path::new("/s")).unwrap(),
            words("experiment --factor test=TCP_STREAM,TCP_RR --host h --port 12866 --duration 2 --replicates 1 --settle 0 --out /s --no-store")
        );
        let two = Job::of_simple(simple(&["a", "b"]));
        assert!(two
            .command(Path::new("/s"))
            .unwrap()
            .contains(&"target=a,b".to_string()));
        assert_eq!(two.simple.unwrap().expected(), Duration::from_secs(8));
    }
}
