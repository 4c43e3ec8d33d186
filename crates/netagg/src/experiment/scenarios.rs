//! The scenario summary of an experiment with a `target` factor: one row
//! per target (scenario), one column per test and metric, each the median
//! of the cell's runs — the shape of the peer-tools write-up's summary
//! table. Scenarios that could not run here keep their row, saying why.

use super::analysis::Analysis;
use super::layout::column_label;
use super::numbers::format_value;
use super::plan::{level_of, shape_of};
use netperf_results::model::{cross_product, Cell, ExperimentRecord};

/// (metric, short title, unit when no fact names it) of a stream test's
/// columns, then of a request/response test's.
/// An empty unit is read from the runs' THROUGHPUT_UNITS fact.
const STREAM_COLUMNS: &[(&str, &str, &str)] = &[("THROUGHPUT", "", "")];
const RR_COLUMNS: &[(&str, &str, &str)] = &[
    ("TRANSACTION_RATE", "", "tx/s"),
    ("P50_LATENCY", "P50", "us"),
    ("P99_LATENCY", "P99", "us"),
];

/// Written where a scenario has no value for a column.
pub const NO_VALUE: &str = "–";
/// Written across a scenario that could not run here.
pub const NOT_AVAILABLE: &str = "n/a";
/// Written where every run of a cell failed.
pub const FAILED: &str = "failed";

/// One column: the cell's levels other than the target, and one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// "TCP_RR*4 P99 us".
    pub heading: String,
    pub levels: Cell,
    pub metric: &'static str,
    pub unit: String,
}

/// One scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub label: String,
    /// What the target is (pod, node, zone), or why it is not available.
    pub about: String,
    pub available: bool,
    /// The column values as text, and as numbers where measured.
    pub values: Vec<(String, Option<f64>)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioTable {
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    /// Runs per cell asked for: the medians' n.
    pub replicates: u32,
}

/// The summary, when the experiment has targets.
pub fn scenario_table(record: &ExperimentRecord, analysis: &Analysis) -> Option<ScenarioTable> {
    if record.targets.is_empty() {
        return None;
    }
    let columns = columns(record);
    let rows = record
        .targets
        .iter()
        .map(|target| {
            let values = match &target.unavailable {
                Some(_) => vec![(NOT_AVAILABLE.to_string(), None); columns.len()],
                None => columns
                    .iter()
                    .map(|c| value(record, analysis, &target.label, c))
                    .collect(),
            };
            Row {
                label: target.label.clone(),
                about: match &target.unavailable {
                    Some(why) => format!("not available: {why}"),
                    None => about(&target.about, &target.host, target.port),
                },
                available: target.unavailable.is_none(),
                values,
            }
        })
        .collect();
    Some(ScenarioTable {
        columns,
        rows,
        replicates: record.replicates,
    })
}

fn about(about: &str, host: &str, port: u16) -> String {
    let address = format!("{host} port {port}");
    match about.is_empty() {
        true => address,
        false => format!("{about} ({address})"),
    }
}

/// Every combination of the other factors' levels, with its test's metrics.
fn columns(record: &ExperimentRecord) -> Vec<Column> {
    let others: Vec<_> = record
        .factors
        .iter()
        .filter(|f| f.name != "target")
        .cloned()
        .collect();
    let mut out = Vec::new();
    for levels in cross_product(&others) {
        let metrics = match shape_of(&levels).direction {
            "rr" => RR_COLUMNS,
            _ => STREAM_COLUMNS,
        };
        for &(metric, title, fixed_unit) in metrics {
            let unit = match fixed_unit {
                "" => throughput_unit(record, &levels),
                unit => unit.to_string(),
            };
            let heading = [column_label(&levels), title.to_string(), unit.clone()]
                .into_iter()
                .filter(|part| !part.is_empty() && part != "all")
                .collect::<Vec<_>>()
                .join(" ");
            out.push(Column {
                heading,
                levels: levels.clone(),
                metric,
                unit,
            });
        }
    }
    out
}

/// The THROUGHPUT_UNITS the successful runs of the column's cells gave.
fn throughput_unit(record: &ExperimentRecord, levels: &Cell) -> String {
    let mut units: Vec<&str> = Vec::new();
    let in_column = |cell: &Cell| levels.iter().all(|(f, l)| level_of(cell, f) == Some(l));
    for run in record
        .runs
        .iter()
        .filter(|r| r.status.is_ok() && in_column(&r.cell))
    {
        if let Some(unit) = run.facts.get("THROUGHPUT_UNITS") {
            if !units.contains(&unit.as_str()) {
                units.push(unit);
            }
        }
    }
    units.join("|")
}

/// The median of one column for one target, or why there is none.
fn value(
    record: &ExperimentRecord,
    analysis: &Analysis,
    target: &str,
    column: &Column,
) -> (String, Option<f64>) {
    let cell: Cell = record
        .factors
        .iter()
        .filter_map(|f| {
            let level = match f.name.as_str() {
                "target" => target,
                name => level_of(&column.levels, name)?,
            };
            Some((f.name.clone(), level.to_string()))
        })
        .collect();
    let Some(stats) = analysis.cell(&cell) else {
        return (NO_VALUE.into(), None);
    };
    match stats.metrics.iter().find(|m| m.metric == column.metric) {
        Some(m) => (format_value(m.median), Some(m.median)),
        None if stats.n_ok == 0 && stats.n_failed > 0 => (FAILED.into(), None),
        None => (NO_VALUE.into(), None),
    }
}

/// The table as Markdown, the write-up's own form, with the scenarios'
/// descriptions and the medians' n below.
pub fn markdown(table: &ScenarioTable) -> String {
    let mut header = vec!["Scenario".to_string()];
    header.extend(table.columns.iter().map(|c| c.heading.clone()));
    let mut lines = vec![header];
    for row in &table.rows {
        let mut line = vec![row.label.clone()];
        line.extend(row.values.iter().map(|(text, _)| text.clone()));
        lines.push(line);
    }
    let widths: Vec<usize> = (0..lines[0].len())
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let render = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut out = render(&lines[0]);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out += &render(&rule);
    for line in &lines[1..] {
        out += &render(line);
    }
    out += &format!(
        "\nEach value is the median of the scenario's runs ({} asked per cell); {NO_VALUE} not \
         reported, {NOT_AVAILABLE} not available here.\n",
        table.replicates
    );
    for row in &table.rows {
        out += &format!("  {}: {}\n", row.label, row.about);
    }
    out
}

/// The table as CSV: one row per scenario, column and value.
pub fn csv(table: &ScenarioTable) -> String {
    let header = [
        "scenario",
        "available",
        "about",
        "column",
        "metric",
        "unit",
        "median",
    ];
    let mut rows = vec![header.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    for row in &table.rows {
        for (column, (_, number)) in table.columns.iter().zip(&row.values) {
            rows.push(vec![
                row.label.clone(),
                row.available.to_string(),
                row.about.clone(),
                column.heading.clone(),
                column.metric.to_string(),
                column.unit.clone(),
                number.map(|v| v.to_string()).unwrap_or_default(),
            ]);
        }
    }
    super::csv::to_csv(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use netperf_results::model::Target;
    use netperf_results::model::{FactorRecord, RunRecord, RunStatus};

    fn target(label: &str, unavailable: Option<&str>) -> Target {
        Target {
            label: label.into(),
            host: if unavailable.is_some() {
                ""
            } else {
                "198.18.1.2"
            }
            .into(),
            port: 12865,
            about: String::new(),
            unavailable: unavailable.map(String::from),
        }
    }

    fn run(target: &str, test: &str, metrics: &[(&str, f64)], ok: bool) -> RunRecord {
        RunRecord {
            id: String::new(),
            order: 0,
            cell: vec![
                ("target".into(), target.into()),
                ("test".into(), test.into()),
            ],
            replicate: 1,
            started: String::new(),
            ended: String::new(),
            status: match ok {
                true => RunStatus::Ok,
                false => RunStatus::Failed {
                    reason: "refused".into(),
                },
            },
            metrics: metrics.iter().map(|(m, v)| (m.to_string(), *v)).collect(),
            facts: Default::default(),
            offloads: Default::default(),
            commands: vec![],
        }
    }

    fn record() -> ExperimentRecord {
        let mut rec: ExperimentRecord = serde_json::from_value(serde_json::json!({
            "record_version": 1, "id": "x", "title": "", "tool_version": "0",
            "command_line": [], "plan": "", "seed": 1, "replicates": 1, "factors": [],
            "host": "h", "port": 1, "started": "", "ended": "", "status": "complete",
            "tags": [], "environment": {"local": {}, "remote": {}}, "runs": []
        }))
        .unwrap();
        rec.factors = vec![
            FactorRecord::new("target", &["near", "vip"]),
            FactorRecord::new("test", &["TCP_STREAM", "TCP_RR"]),
        ];
        rec.replicates = 1;
        rec.targets = vec![
            target("near", None),
            target("vip", None),
            target("other zone", Some("the cluster has one zone")),
        ];
        rec.runs = vec![
            run("near", "TCP_STREAM", &[("THROUGHPUT", 9400.0)], true),
            run(
                "near",
                "TCP_RR",
                &[
                    ("TRANSACTION_RATE", 30000.0),
                    ("P50_LATENCY", 31.0),
                    ("P99_LATENCY", 55.0),
                ],
                true,
            ),
            run("vip", "TCP_STREAM", &[], false),
            run("vip", "TCP_RR", &[("TRANSACTION_RATE", 20000.0)], true),
        ];
        rec
    }

    #[test]
    fn rows_are_scenarios_and_columns_test_metrics() {
        let rec = record();
        let table = scenario_table(&rec, &Analysis::of(&rec)).unwrap();
        let headings: Vec<&str> = table.columns.iter().map(|c| c.heading.as_str()).collect();
        assert_eq!(
            headings,
            [
                "TCP_STREAM",
                "TCP_RR tx/s",
                "TCP_RR P50 us",
                "TCP_RR P99 us"
            ]
        );
        let texts = |i: usize| -> Vec<String> {
            table.rows[i]
                .values
                .iter()
                .map(|(t, _)| t.clone())
                .collect()
        };
        assert_eq!(texts(0), ["9400", "30000", "31.0", "55.0"]);
        assert_eq!(texts(1), [FAILED, "20000", NO_VALUE, NO_VALUE]);
        assert_eq!(texts(2), [NOT_AVAILABLE; 4]);
        let md = markdown(&table);
        assert!(
            md.contains("other zone: not available: the cluster has one zone"),
            "{md}"
        );
        assert!(
            md.lines()
                .all(|l| !l.starts_with('|') || l.matches('|').count() == 6),
            "{md}"
        );
        let csv = csv(&table);
        assert_eq!(csv.lines().count(), 1 + 3 * 4, "{csv}");
    }

    #[test]
    fn no_targets_no_table() {
        let mut rec = record();
        rec.targets.clear();
        assert!(scenario_table(&rec, &Analysis::of(&rec)).is_none());
    }
}
