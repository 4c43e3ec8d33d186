//! Text for people: the `list` table, a result's `show` page and the
//! `compare` table, in aligned columns (numbers to the right).

use super::compare::{Comparison, Row};
use super::model::{cell_label, RunStatus, KEY_METRICS};
use super::query::ResultSummary;
use super::record::StoredResult;
use std::fmt::Write as _;

/// Column alignment.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// `rows` under `headers`, each column as wide as its widest cell, two
/// spaces apart, trailing blanks trimmed.
pub fn table(headers: &[&str], align: &[Align], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut out = String::new();
        for (i, cell) in cells.enumerate() {
            let w = widths.get(i).copied().unwrap_or(0);
            if i > 0 {
                out.push_str("  ");
            }
            match align.get(i).copied().unwrap_or(Align::Left) {
                Align::Left => {
                    let _ = write!(out, "{cell:<w$}");
                }
                Align::Right => {
                    let _ = write!(out, "{cell:>w$}");
                }
            }
        }
        out.trim_end().to_string() + "\n"
    };
    let mut out = line(&mut headers.iter().copied());
    for row in rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
}

/// A number with about six significant digits, no exponent for everyday
/// magnitudes.
pub fn number(v: f64) -> String {
    let magnitude = v.abs();
    if v == 0.0 || (1e-3..1e12).contains(&magnitude) {
        let decimals = (5 - magnitude.log10().floor().max(0.0) as i32).clamp(0, 6) as usize;
        let text = format!("{v:.decimals$}");
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        }
    } else {
        format!("{v:.4e}")
    }
}

fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// The `list` table.
pub fn list(results: &[ResultSummary]) -> String {
    use Align::{Left, Right};
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            vec![
                short(&r.id).to_string(),
                r.kind.as_str().to_string(),
                r.started.get(..19).unwrap_or(&r.started).replace('T', " "),
                r.test.clone(),
                r.host.clone(),
                r.kernel.clone(),
                if r.failed_runs > 0 {
                    format!("{} ({} failed)", r.runs, r.failed_runs)
                } else {
                    r.runs.to_string()
                },
                r.tags.join(","),
                r.title.clone(),
            ]
        })
        .collect();
    table(
        &[
            "ID", "KIND", "STARTED", "TEST", "HOST", "KERNEL", "RUNS", "TAGS", "TITLE",
        ],
        &[Left, Left, Left, Left, Left, Left, Right, Left, Left],
        &rows,
    )
}

fn cell_text(label: String) -> String {
    if label.is_empty() {
        "-".into()
    } else {
        label
    }
}

/// The `show` page: the result's facts, then its runs with their key
/// metrics (or, for one netperf test, every value it stored).
pub fn show(r: &StoredResult) -> String {
    let mut out = String::new();
    let fields = [
        ("id", r.id.clone()),
        ("kind", r.kind.as_str().to_string()),
        ("title", r.title.clone()),
        ("test", r.test.clone()),
        ("host", r.host.clone()),
        ("kernel", r.kernel.clone()),
        ("started", r.started.clone()),
        ("ended", r.ended.clone()),
        ("status", r.status.clone()),
        ("tool", format!("netperf-ng {}", r.tool_version)),
        ("command", r.command_line.join(" ")),
        (
            "tags",
            if r.tags.is_empty() {
                "-".into()
            } else {
                r.tags.join(", ")
            },
        ),
    ];
    for (name, value) in fields {
        let _ = writeln!(out, "{name:<8} {value}");
    }
    for f in &r.factors {
        let _ = writeln!(out, "factor   {} = {}", f.name, f.levels.join(", "));
    }
    out.push('\n');
    if let [run] = r.runs.as_slice() {
        if run.cell.is_empty() {
            let rows: Vec<Vec<String>> = run
                .metrics
                .iter()
                .map(|(k, v)| vec![k.clone(), number(*v)])
                .chain(run.facts.iter().map(|(k, v)| vec![k.clone(), v.clone()]))
                .collect();
            out.push_str(&table(&["SELECTOR", "VALUE"], &[Align::Left], &rows));
            return out;
        }
    }
    out.push_str(&runs_table(r));
    for run in &r.runs {
        if let RunStatus::Failed { reason } = &run.status {
            let _ = writeln!(out, "run {} failed: {reason}", short(&run.id));
        }
    }
    out
}

fn runs_table(r: &StoredResult) -> String {
    let metrics: Vec<&str> = KEY_METRICS
        .iter()
        .map(|(m, ..)| *m)
        .filter(|m| r.runs.iter().any(|run| run.metrics.contains_key(*m)))
        .collect();
    let mut headers = vec!["RUN", "#", "CELL", "REP", "STATUS"];
    headers.extend(metrics.iter().copied());
    let mut align = vec![
        Align::Left,
        Align::Right,
        Align::Left,
        Align::Right,
        Align::Left,
    ];
    align.extend(metrics.iter().map(|_| Align::Right));
    let rows: Vec<Vec<String>> = r
        .runs
        .iter()
        .map(|run| {
            let status = match &run.status {
                RunStatus::Ok => "ok",
                RunStatus::Failed { .. } => "failed",
                RunStatus::Interrupted => "interrupted",
            };
            let mut row = vec![
                short(&run.id).to_string(),
                run.order.to_string(),
                cell_text(cell_label(&run.cell)),
                run.replicate.to_string(),
                status.to_string(),
            ];
            row.extend(
                metrics
                    .iter()
                    .map(|m| run.metrics.get(*m).map(|v| number(*v)).unwrap_or_default()),
            );
            row
        })
        .collect();
    table(&headers, &align, &rows)
}

fn optional(v: Option<f64>) -> String {
    v.map(number).unwrap_or_else(|| "-".into())
}

fn interval(r: &Row) -> String {
    match (r.low, r.high) {
        (Some(l), Some(h)) => format!("[{}, {}]", ratio_text(l), ratio_text(h)),
        _ => "-".into(),
    }
}

fn ratio_text(v: f64) -> String {
    format!("{v:.4}")
}

/// The `compare` table and what could not be compared.
pub fn compare(c: &Comparison) -> String {
    use Align::{Left, Right};
    let mut out = String::new();
    for (name, s) in [("A", &c.a), ("B", &c.b)] {
        let _ = writeln!(
            out,
            "{name}  {}  {}  {}  {}",
            s.id, s.kind, s.started, s.title
        );
    }
    let _ = writeln!(
        out,
        "ratio B/A of the {}, bootstrap intervals at {} ({} resamples, seed {}){}\n",
        c.statistic,
        confidence_text(c),
        c.resamples,
        c.seed,
        if c.tolerance > 0.0 {
            format!(", tolerance {}%", number(c.tolerance * 100.0))
        } else {
            String::new()
        }
    );
    let a_head = format!("{} A", c.statistic.to_uppercase());
    let b_head = format!("{} B", c.statistic.to_uppercase());
    let rows: Vec<Vec<String>> = c
        .rows
        .iter()
        .map(|r| {
            vec![
                cell_text(r.cell.clone()),
                r.metric.clone(),
                r.unit.clone(),
                r.n_a.to_string(),
                r.n_b.to_string(),
                optional(r.a),
                optional(r.b),
                r.ratio.map(ratio_text).unwrap_or_else(|| "-".into()),
                interval(r),
                r.verdict_text(),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "CELL", "METRIC", "UNIT", "N A", "N B", &a_head, &b_head, "B/A", "INTERVAL", "VERDICT",
        ],
        &[
            Left, Left, Left, Right, Right, Right, Right, Right, Left, Left,
        ],
        &rows,
    ));
    for r in c.rows.iter().filter(|r| r.note.is_some()) {
        let _ = writeln!(
            out,
            "note: {} {}: {}",
            cell_text(r.cell.clone()),
            r.metric,
            r.note.as_deref().unwrap_or_default()
        );
    }
    for note in &c.notes {
        let _ = writeln!(out, "note: {note}");
    }
    for (name, cells) in [("A", &c.only_in_a), ("B", &c.only_in_b)] {
        for cell in cells {
            let _ = writeln!(out, "only in {name}: {cell}");
        }
    }
    let _ = writeln!(
        out,
        "{}",
        match c.regressions {
            0 => "no significant regression".to_string(),
            1 => "1 significant regression".to_string(),
            n => format!("{n} significant regressions"),
        }
    );
    out
}

/// "95%", or "99.69% (simultaneous 95% over 16 intervals, Bonferroni)".
fn confidence_text(c: &Comparison) -> String {
    let family_wide = 1.0 - (1.0 - c.confidence) * c.family.max(1) as f64;
    if c.family > 1 {
        format!(
            "{}% each (simultaneous {:.0}% over {}, Bonferroni)",
            number(c.confidence * 100.0),
            family_wide * 100.0,
            c.family
        )
    } else {
        format!("{:.0}%", c.confidence * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_numbers_read_well() {
        let t = table(
            &["A", "NUM"],
            &[Align::Left, Align::Right],
            &[
                vec!["long name".into(), "1".into()],
                vec!["x".into(), "22.5".into()],
            ],
        );
        assert_eq!(t, "A           NUM\nlong name     1\nx          22.5\n");
        assert_eq!(number(941.234567), "941.235");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(12.0), "12");
        assert_eq!(number(123456789.0), "123456789");
        assert_eq!(number(1.5e-7), "1.5000e-7");
    }
}
