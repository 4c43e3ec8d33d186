//! The one shape every kind of result is stored and read back in: a
//! [`StoredResult`] with its runs as the experiment model's
//! [`RunRecord`]s. A single netperf test is one run in the empty cell; a
//! netagg run is one run per level in the cell `streams=N`; an experiment's
//! runs are its own, with its full record kept as the document.

use super::model::{Cell, ExperimentRecord, FactorRecord, RunRecord};
use serde::{Deserialize, Serialize};

/// Which program produced a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Netperf,
    Netagg,
    Experiment,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Netperf => "netperf",
            Kind::Netagg => "netagg",
            Kind::Experiment => "experiment",
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        [Kind::Netperf, Kind::Netagg, Kind::Experiment]
            .into_iter()
            .find(|k| k.as_str() == text)
    }
}

/// A result as the database holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredResult {
    /// UUID: netperf's -u (or a new one), the experiment's id, or a new one
    /// for a netagg run.
    pub id: String,
    pub kind: Kind,
    /// The netperf test name(s) as given (several joined by ",").
    pub test: String,
    /// The remote host(s) (several joined by ",").
    pub host: String,
    /// The local kernel release (uname -r).
    pub kernel: String,
    pub title: String,
    /// RFC 3339 UTC.
    pub started: String,
    pub ended: String,
    /// "complete", "interrupted", "failed".
    pub status: String,
    pub tool_version: String,
    pub command_line: Vec<String>,
    pub tags: Vec<String>,
    /// The factors the runs' cells are made of (empty for one netperf test).
    pub factors: Vec<FactorRecord>,
    pub runs: Vec<RunRecord>,
    /// The producer's full document as JSON: the ExperimentRecord of an
    /// experiment, netagg's summary JSON of a netagg run.
    pub document: Option<String>,
}

impl StoredResult {
    /// The cells with runs, in the order they first ran.
    pub fn cells(&self) -> Vec<Cell> {
        let mut cells: Vec<Cell> = Vec::new();
        for run in &self.runs {
            if !cells.contains(&run.cell) {
                cells.push(run.cell.clone());
            }
        }
        cells
    }

    /// The values of `metric` over the measured runs of `cell`.
    pub fn samples(&self, cell: &Cell, metric: &str) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| r.status.is_ok() && &r.cell == cell)
            .filter_map(|r| r.metrics.get(metric).copied())
            .filter(|v| v.is_finite())
            .collect()
    }

    /// The unit of `metric` as the runs' facts or the key-metric table
    /// name it ("" when unknown).
    pub fn unit(&self, metric: &str) -> String {
        unit_of(metric, |fact| {
            self.runs.iter().find_map(|r| r.facts.get(fact).cloned())
        })
    }

    /// An experiment as it is stored.
    pub fn of_experiment(rec: &ExperimentRecord) -> Result<StoredResult, serde_json::Error> {
        Ok(StoredResult {
            id: rec.id.clone(),
            kind: Kind::Experiment,
            test: experiment_tests(rec),
            host: rec.host.clone(),
            kernel: rec
                .environment
                .local
                .get("kernel")
                .cloned()
                .unwrap_or_default(),
            title: rec.title.clone(),
            started: rec.started.clone(),
            ended: rec.ended.clone(),
            status: rec.status.clone(),
            tool_version: rec.tool_version.clone(),
            command_line: rec.command_line.clone(),
            tags: rec.tags.clone(),
            factors: rec.factors.clone(),
            runs: rec.runs.clone(),
            document: Some(serde_json::to_string(rec)?),
        })
    }
}

/// The unit of `metric`: the key-metric table's unit, which is either a
/// unit or the selector whose fact holds it (THROUGHPUT_UNITS, SD_UNITS);
/// for other metrics a `<METRIC>_UNITS` fact if there is one.
pub fn unit_of(metric: &str, fact: impl Fn(&str) -> Option<String>) -> String {
    use super::model::KEY_METRICS;
    let from_table = KEY_METRICS
        .iter()
        .find(|(m, ..)| *m == metric)
        .map(|(_, _, unit, _)| *unit);
    match from_table {
        Some(unit) if unit.ends_with("_UNITS") => fact(unit).unwrap_or_default(),
        Some(unit) => unit.to_string(),
        None => fact(&format!("{metric}_UNITS")).unwrap_or_default(),
    }
}

/// The netperf tests an experiment ran: the distinct -t values of its
/// runs' command lines (netperf's default TCP_STREAM where a command names
/// none); "" when no command was recorded.
fn experiment_tests(rec: &ExperimentRecord) -> String {
    let mut tests: Vec<String> = Vec::new();
    for command in rec.runs.iter().flat_map(|r| r.commands.iter()) {
        let test = test_of_command(command);
        if !tests.iter().any(|x| x.eq_ignore_ascii_case(&test)) {
            tests.push(test);
        }
    }
    tests.join(",")
}

/// The last -t of a netperf command line ("-t NAME" or "-tNAME") among the
/// global options (before "--"), else TCP_STREAM.
fn test_of_command(command: &[String]) -> String {
    let globals = command.iter().take_while(|w| *w != "--");
    let mut test = None;
    let mut words = globals.peekable();
    while let Some(word) = words.next() {
        if word == "-t" {
            test = words.next().cloned();
        } else if let Some(glued) = word.strip_prefix("-t") {
            test = Some(glued.to_string());
        }
    }
    test.unwrap_or_else(|| "TCP_STREAM".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use netperf_client::cli::test_support::words;

    #[test]
    fn the_test_is_the_last_global_t() {
        assert_eq!(
            test_of_command(&words("netperf -H h -t omni -- -d send")),
            "omni"
        );
        assert_eq!(test_of_command(&words("netperf -tUDP_RR -l 1")), "UDP_RR");
        assert_eq!(
            test_of_command(&words("netperf -H h -- -t x")),
            "TCP_STREAM"
        );
    }

    #[test]
    fn units_come_from_the_table_or_the_facts() {
        let facts = |k: &str| match k {
            "THROUGHPUT_UNITS" => Some("10^6bits/s".to_string()),
            "RT_LATENCY_UNITS" => Some("usec".to_string()),
            _ => None,
        };
        assert_eq!(unit_of("THROUGHPUT", facts), "10^6bits/s");
        assert_eq!(unit_of("LOCAL_CPU_UTIL", facts), "%");
        assert_eq!(unit_of("RT_LATENCY", facts), "usec");
        assert_eq!(unit_of("LOCAL_SD", facts), "");
        assert_eq!(unit_of("BYTES", facts), "");
    }
}
