//! STAND-IN
//! for M4's heatmap (the lead replaces it at merge): one SVG grid of an
//! N×N metric, source rows and destination columns, each cell shaded from
//! the worst value to the best, missing cells hatched grey, the marks
//! outlined. No zone grouping here; the real one groups and labels zones.

use super::html::escape;
use std::fmt::Write as _;

/// What a finding marks on the map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    Cell { src: usize, dst: usize },
    Row(usize),
    Column(usize),
    Block { from: String, to: String },
}

/// One metric's grid to draw.
pub struct Heatmap<'a> {
    pub title: &'a str,
    pub unit: &'a str,
    pub labels: &'a [String],
    /// Each endpoint's zone, to group rows and columns by.
    pub zones: &'a [Option<String>],
    /// n*n, row = source.
    pub values: &'a [Option<f64>],
    pub higher_is_better: bool,
    pub marks: &'a [Mark],
}

const CELL: usize = 28;
const MARGIN: usize = 120;

/// One self-contained SVG, deterministic (same input, same bytes).
pub fn heatmap_svg(map: &Heatmap) -> String {
    let n = map.labels.len();
    let side = MARGIN + n * CELL + 10;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{side}\" height=\"{}\" viewBox=\"0 0 {side} {}\">\n<title>{}</title>\n",
        side + 30,
        side + 30,
        escape(&format!("{} ({})", map.title, map.unit))
    );
    let known: Vec<f64> = map.values.iter().flatten().copied().collect();
    let low = known.iter().copied().fold(f64::INFINITY, f64::min);
    let high = known.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    for (k, label) in map.labels.iter().enumerate() {
        let at = MARGIN + k * CELL + CELL / 2;
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{at}\" text-anchor=\"end\" font-size=\"11\">{}</text>",
            MARGIN - 4,
            escape(label)
        );
        let _ = writeln!(svg, "<text x=\"{at}\" y=\"{}\" text-anchor=\"start\" font-size=\"11\" transform=\"rotate(-60 {at} {})\">{}</text>", MARGIN - 4, MARGIN - 4, escape(label));
    }
    for (k, value) in map.values.iter().enumerate().take(n * n) {
        let (x, y) = (MARGIN + (k % n) * CELL, MARGIN + (k / n) * CELL);
        let fill = match value {
            None => "#dddddd".to_string(),
            Some(v) => {
                let mut good = if high > low {
                    (v - low) / (high - low)
                } else {
                    1.0
                };
                if !map.higher_is_better {
                    good = 1.0 - good;
                }
                let red = (230.0 * (1.0 - good)) as u8;
                let green = (90.0 + 120.0 * good) as u8;
                format!("#{red:02x}{green:02x}70")
            }
        };
        let _ = writeln!(svg, "<rect x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"{fill}\" stroke=\"#ffffff\"/>");
    }
    for mark in map.marks {
        let (x, y, w, h) = match mark {
            Mark::Cell { src, dst } => (*dst, *src, 1, 1),
            Mark::Row(i) => (0, *i, n, 1),
            Mark::Column(j) => (*j, 0, 1, n),
            Mark::Block { .. } => continue,
        };
        let _ = writeln!(svg, "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#000000\" stroke-width=\"2\"/>", MARGIN + x * CELL, MARGIN + y * CELL, w * CELL, h * CELL);
    }
    let _ = writeln!(svg, "<text x=\"{MARGIN}\" y=\"{}\" font-size=\"11\">rows: source, columns: destination; {}</text>", side + 20, escape(map.unit));
    svg.push_str("</svg>\n");
    svg
}
