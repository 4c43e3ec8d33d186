//! How an experiment's cells are laid out and labelled in the write-up's
//! tables and charts: one factor down the rows (message_size when the plan
//! has it, else the first factor), every combination of the other factors'
//! levels across the columns ("udp on", "tcp off"), back from (row, column)
//! to the cell in the plan's factor order, and the titles and units of
//! factors and metrics.

use std::collections::BTreeSet;

use netperf_results::model::{
    better, cross_product, Better, Cell, ExperimentRecord, FactorRecord, KEY_METRICS,
};

/// The factor preferred down the rows: the write-up's tables and charts are
/// "against send/packet size".
pub const PREFERRED_ROW_FACTOR: &str = "message_size";

/// Rows and columns of an experiment's tables.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// The row factor's name; None when the plan has no factor at all.
    pub row_factor: Option<String>,
    /// The row factor's levels in plan order (one empty level without one).
    pub rows: Vec<String>,
    /// Names of the other factors, in plan order.
    pub column_factors: Vec<String>,
    /// Every combination of the other factors' levels (last fastest); one
    /// empty combination when there is no other factor.
    pub columns: Vec<Cell>,
    /// All factor names in plan order, to put a (row, column) back together.
    factor_order: Vec<String>,
}

impl Layout {
    pub fn of(record: &ExperimentRecord) -> Layout {
        Layout::of_factors(&record.factors)
    }

    pub fn of_factors(factors: &[FactorRecord]) -> Layout {
        let row_index = factors
            .iter()
            .position(|f| f.name == PREFERRED_ROW_FACTOR)
            .or(if factors.is_empty() { None } else { Some(0) });
        let others: Vec<FactorRecord> = factors
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != row_index)
            .map(|(_, f)| f.clone())
            .collect();
        let row = row_index.map(|i| &factors[i]);
        Layout {
            row_factor: row.map(|f| f.name.clone()),
            rows: row.map_or_else(|| vec![String::new()], |f| f.levels.clone()),
            column_factors: others.iter().map(|f| f.name.clone()).collect(),
            columns: cross_product(&others),
            factor_order: factors.iter().map(|f| f.name.clone()).collect(),
        }
    }

    /// The cell at `row` (a level of the row factor) and `column`.
    pub fn cell(&self, row: &str, column: &Cell) -> Cell {
        self.factor_order
            .iter()
            .map(|name| {
                let level = if Some(name) == self.row_factor.as_ref() {
                    row.to_string()
                } else {
                    column
                        .iter()
                        .find(|(f, _)| f == name)
                        .map(|(_, l)| l.clone())
                        .unwrap_or_default()
                };
                (name.clone(), level)
            })
            .collect()
    }

    /// The row factor's title for a table's corner or a chart's x axis.
    pub fn row_title(&self) -> String {
        self.row_factor
            .as_deref()
            .map_or_else(String::new, factor_title)
    }

    /// What the columns are: "protocol × offloads".
    pub fn columns_title(&self) -> String {
        self.column_factors.join(" × ")
    }
}

/// A column's heading: its levels joined by spaces ("udp on"), or "all"
/// when there is no other factor.
pub fn column_label(column: &Cell) -> String {
    if column.is_empty() {
        return "all".to_string();
    }
    column
        .iter()
        .map(|(_, level)| level.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A cell's short name for legends: its levels joined by spaces.
pub fn cell_short_label(cell: &Cell) -> String {
    column_label(cell)
}

/// Factors whose levels carry a unit, and how an axis names them.
const FACTOR_TITLES: &[(&str, &str)] = &[
    ("message_size", "message size (bytes)"),
    ("send_size", "send size (bytes)"),
    ("mss", "MSS (bytes)"),
    ("socket_buffer", "socket buffer (bytes)"),
    ("burst", "burst (transactions)"),
    ("pacing_rate", "pacing rate"),
    ("streams", "streams"),
];

/// A factor's name as a reader would write it.
pub fn factor_title(name: &str) -> String {
    FACTOR_TITLES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or_else(|| name.replace('_', " "), |(_, t)| t.to_string())
}

/// A metric's title: "Throughput" for a key metric, else the selector.
pub fn metric_title(metric: &str) -> String {
    KEY_METRICS
        .iter()
        .find(|(m, ..)| *m == metric)
        .map_or_else(|| metric.to_string(), |(_, title, ..)| title.to_string())
}

/// A metric's unit: a key metric's literal unit, or the value of the fact
/// naming it (THROUGHPUT_UNITS, SD_UNITS) in the successful runs; several
/// different values are all listed; empty when unknown.
pub fn metric_unit(record: &ExperimentRecord, metric: &str) -> String {
    let Some(&(_, _, unit, _)) = KEY_METRICS.iter().find(|(m, ..)| *m == metric) else {
        return String::new();
    };
    let names_a_fact = unit.chars().all(|c| c.is_ascii_uppercase() || c == '_');
    if !names_a_fact {
        return unit.to_string();
    }
    let seen: BTreeSet<&str> = record
        .runs
        .iter()
        .filter(|r| r.status.is_ok())
        .filter_map(|r| r.facts.get(unit).map(String::as_str))
        .collect();
    seen.into_iter().collect::<Vec<_>>().join(" | ")
}

/// "Higher is Better", "Lower is Better", or nothing.
pub fn direction_text(better: Better) -> &'static str {
    match better {
        Better::Higher => "Higher is Better",
        Better::Lower => "Lower is Better",
        Better::Neither => "",
    }
}

/// The write-up's table title: "Throughput (10^6bits/s - Higher is Better)".
pub fn metric_heading(record: &ExperimentRecord, metric: &str) -> String {
    let parts: Vec<String> = [
        metric_unit(record, metric),
        direction_text(better(metric)).to_string(),
    ]
    .into_iter()
    .filter(|p| !p.is_empty())
    .collect();
    match parts.is_empty() {
        true => metric_title(metric),
        false => format!("{} ({})", metric_title(metric), parts.join(" - ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_size_goes_down_the_rows_and_cells_keep_plan_order() {
        let layout = Layout::of_factors(&[
            FactorRecord::new("protocol", &["udp", "tcp"]),
            FactorRecord::new("message_size", &["1024", "8192"]),
            FactorRecord::new("offloads", &["on", "off"]),
        ]);
        assert_eq!(layout.row_factor.as_deref(), Some("message_size"));
        assert_eq!(layout.rows, ["1024", "8192"]);
        let labels: Vec<String> = layout.columns.iter().map(column_label).collect();
        assert_eq!(labels, ["udp on", "udp off", "tcp on", "tcp off"]);
        let cell = layout.cell("8192", &layout.columns[2]);
        let expected: Cell = vec![
            ("protocol".into(), "tcp".into()),
            ("message_size".into(), "8192".into()),
            ("offloads".into(), "on".into()),
        ];
        assert_eq!(cell, expected);
        assert_eq!(layout.columns_title(), "protocol × offloads");
        assert_eq!(layout.row_title(), "message size (bytes)");
    }

    #[test]
    fn without_message_size_the_first_factor_is_the_row() {
        let layout = Layout::of_factors(&[FactorRecord::new("protocol", &["udp", "tcp"])]);
        assert_eq!(layout.row_factor.as_deref(), Some("protocol"));
        assert_eq!(layout.columns, vec![Vec::new()]);
        assert_eq!(column_label(&layout.columns[0]), "all");
        let none = Layout::of_factors(&[]);
        assert_eq!(
            (&none.row_factor, &none.rows),
            (&None, &vec![String::new()])
        );
        assert_eq!(none.cell("", &Vec::new()), Vec::new());
    }
}
