//! The mesh's heatmap: one metric's N×N grid of ordered pairs as one
//! self-contained, deterministic SVG — rows are the sources, columns the
//! destinations, both grouped by zone (banded, named and ruled apart when
//! zones are known), each cell coloured by how much worse or better than
//! the grid's median it is, so that worse is red whichever way the metric
//! is better; cells without a value hatched, the endpoint itself grey, and
//! what the findings name (a cell, a row, a column, a zone block) outlined.
//! Readable from 2 endpoints to about 64 (names on every row and column,
//! the figure in each cell while it fits, a tooltip on each cell); drawn
//! for hundreds (names only where a finding points).
//!
//! Written as SVG text here rather than through the chart builder
//! (`chart`, plotters): plotters draws no patterns and no tooltips, and a
//! grid of 90,000 cells must be written as runs of one colour to stay a
//! few megabytes. Numbers are written as `units::si_label` writes ticks;
//! every name goes through `html::escape`. The colours and their legend
//! are `scale`'s.

mod scale;

use crate::html::escape;
use crate::units::si_label;
use scale::{colour, colourable, dark, draw_legend, hex, legend_height, Scale, LEGEND_WIDTH};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What a finding names, drawn as an outline on the grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// One ordered pair.
    Cell { src: usize, dst: usize },
    /// An endpoint as a source: its whole row.
    Row(usize),
    /// An endpoint as a destination: its whole column.
    Column(usize),
    /// The sources of zone `from` to the destinations of zone `to`.
    Block { from: String, to: String },
}

/// One metric's grid, described.
#[derive(Debug, Clone, Copy)]
pub struct Heatmap<'a> {
    pub title: &'a str,
    /// The values' unit ("Mbit/s", "us").
    pub unit: &'a str,
    /// Each endpoint's name as it was given; their count is N.
    pub labels: &'a [String],
    /// Each endpoint's zone when known: rows and columns are grouped by it.
    pub zones: &'a [Option<String>],
    /// N·N values, row-major, row = source; None where there is no value.
    pub values: &'a [Option<f64>],
    pub higher_is_better: bool,
    pub marks: &'a [Mark],
}

/// Above this many endpoints each cell has no tooltip and no row or column
/// name but a finding's (the file stays small; the names would not fit).
const READABLE: usize = 64;
/// The width the grid aims at, in pixels.
const GRID: usize = 768;
/// Names longer than this are cut (the whole name is the tooltip).
const LONGEST_NAME: usize = 28;
const MARGIN: f64 = 12.0;
/// The zone bands' thickness.
const BAND: f64 = 20.0;
/// Space between the names and the grid.
const GAP: f64 = 6.0;
/// The endpoint itself (the diagonal).
const SELF_FILL: &str = "#cfcfcf";
const ZONE_FILLS: [&str; 2] = ["#dde5ee", "#c5d1df"];
/// The SVG of `map`: same input, same bytes.
pub fn heatmap_svg(map: &Heatmap) -> String {
    let layout = Layout::of(map);
    let scale = Scale::of(map.values, map.higher_is_better);
    let mut svg = String::new();
    let (width, height) = (px(layout.width), px(layout.height));
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" role=\"img\">\
         <title>{title}</title>\n<defs>{hatch}</defs>\n\
         <rect width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>\n",
        title = text(map.title),
        hatch = hatch_pattern(&layout.hatch),
    );
    draw_titles(&mut svg, map, &layout);
    if layout.n > 0 {
        draw_zones(&mut svg, &layout);
        draw_names(&mut svg, map, &layout);
        draw_cells(&mut svg, map, &layout, scale.as_ref());
        draw_separators(&mut svg, &layout);
        draw_marks(&mut svg, map, &layout);
    }
    draw_legend(&mut svg, map, &layout, scale.as_ref());
    svg.push_str("</svg>\n");
    svg
}

/// A pixel figure: one decimal at most, none when whole.
fn px(v: f64) -> String {
    let text = format!("{v:.1}");
    match text.strip_suffix(".0") {
        Some(whole) => whole.to_string(),
        None => text,
    }
}

/// A name or title as SVG text: escaped, and without the control
/// characters XML cannot hold.
fn text(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect();
    escape(&clean)
}

/// `name` cut to `longest` characters (an ellipsis says so).
fn shortened(name: &str, longest: usize) -> String {
    match name.chars().count() <= longest {
        true => name.to_string(),
        false if longest == 0 => String::new(),
        false => name.chars().take(longest - 1).chain(['…']).collect(),
    }
}

/// Roughly how wide `chars` characters are at `font` pixels.
fn text_width(chars: usize, font: f64) -> f64 {
    chars as f64 * font * 0.6
}

/// A run of rows (or columns) of one zone.
struct Group {
    zone: Option<String>,
    start: usize,
    len: usize,
}

/// An endpoint's name beside the grid.
struct Name {
    endpoint: usize,
    /// The middle of its row (or column) from the grid's start, and where
    /// the name is written: there, or further on when the name before it
    /// is in the way.
    centre: f64,
    at: f64,
    /// A finding names it.
    bold: bool,
}

impl Name {
    /// The names along an axis in `order`: every one when `all`, else the
    /// `marked` ones, moved apart so that none is written over another.
    fn along(order: &[usize], cell: f64, font: f64, all: bool, marked: &[bool]) -> Vec<Name> {
        let mut names: Vec<Name> = Vec::new();
        for (place, &endpoint) in order.iter().enumerate() {
            if !(all || marked[endpoint]) {
                continue;
            }
            let centre = (place as f64 + 0.5) * cell;
            let free = names.last().map_or(centre, |before| before.at + font + 1.0);
            names.push(Name {
                endpoint,
                centre,
                at: centre.max(free),
                bold: marked[endpoint],
            });
        }
        names
    }
}

/// Where everything goes.
struct Layout {
    n: usize,
    /// The endpoint at each place, and each endpoint's place.
    order: Vec<usize>,
    place: Vec<usize>,
    /// Empty when no zone is known.
    groups: Vec<Group>,
    cell: f64,
    grid_x: f64,
    grid_y: f64,
    name_font: f64,
    /// The names written beside the rows and above the columns.
    row_names: Vec<Name>,
    column_names: Vec<Name>,
    /// Between the names and the grid: room for the lines that lead from a
    /// name moved aside to its row or column.
    leader: f64,
    top: f64,
    legend_x: f64,
    width: f64,
    height: f64,
    /// The hatch pattern's id, unique to the drawing's title and unit (a
    /// page holds several drawings, and an id is the document's).
    hatch: String,
}

impl Layout {
    fn of(map: &Heatmap) -> Layout {
        let n = map.labels.len();
        let zone = |i: usize| map.zones.get(i).cloned().flatten();
        let mut order: Vec<usize> = (0..n).collect();
        // Zones by name, the endpoints without one last; given order within.
        order.sort_by_key(|&i| (zone(i).is_none(), zone(i)));
        let mut place = vec![0; n];
        for (at, &i) in order.iter().enumerate() {
            place[i] = at;
        }
        let mut groups: Vec<Group> = Vec::new();
        if (0..n).any(|i| zone(i).is_some()) {
            for (at, &i) in order.iter().enumerate() {
                match groups.last_mut() {
                    Some(g) if g.zone == zone(i) => g.len += 1,
                    _ => groups.push(Group {
                        zone: zone(i),
                        start: at,
                        len: 1,
                    }),
                }
            }
        }
        let least = if n <= READABLE { 12 } else { 2 };
        let cell = (GRID / n.max(1)).clamp(least, 64) as f64;
        let (mut as_source, mut as_destination) = (vec![false; n], vec![false; n]);
        for mark in map.marks {
            match *mark {
                Mark::Cell { src, dst } if src < n && dst < n => {
                    as_source[src] = true;
                    as_destination[dst] = true;
                }
                Mark::Row(i) if i < n => as_source[i] = true,
                Mark::Column(i) if i < n => as_destination[i] = true,
                _ => {}
            }
        }
        let all_named = cell >= 10.0;
        let name_font = if all_named {
            (cell - 1.0).min(13.0)
        } else {
            11.0
        };
        let names = |marked: &[bool]| Name::along(&order, cell, name_font, all_named, marked);
        let (row_names, column_names) = (names(&as_source), names(&as_destination));
        let longest = row_names
            .iter()
            .chain(&column_names)
            .map(|name| {
                shortened(&map.labels[name.endpoint], LONGEST_NAME)
                    .chars()
                    .count()
            })
            .max();
        let leader = if all_named { 0.0 } else { 14.0 };
        let names = longest.map_or(0.0, |c| text_width(c, name_font) + GAP + leader);
        let band = if groups.is_empty() { 0.0 } else { BAND + 2.0 };
        let top = 58.0;
        let grid_x = MARGIN + band + names + GAP;
        let grid_y = top + band + names + GAP;
        let side = cell * n as f64;
        // Names moved aside may reach past the grid's end.
        let last = |names: &[Name]| names.last().map_or(0.0, |name| name.at + name_font);
        let legend_x = grid_x + side.max(last(&column_names)) + 28.0;
        let title_width = text_width(map.title.chars().count(), 18.0) + 2.0 * MARGIN;
        let width = (legend_x + LEGEND_WIDTH + MARGIN).max(title_width).ceil();
        let height = (grid_y + side.max(last(&row_names))).max(top + legend_height()) + MARGIN;
        Layout {
            n,
            order,
            place,
            groups,
            cell,
            grid_x,
            grid_y,
            name_font,
            row_names,
            column_names,
            leader,
            top,
            legend_x,
            width,
            height: height.ceil(),
            hatch: format!("hatch-{:08x}", fnv(&[map.title, map.unit])),
        }
    }

    /// The rectangle of places `rows` × `columns`.
    fn rect(&self, rows: (usize, usize), columns: (usize, usize)) -> (f64, f64, f64, f64) {
        (
            self.grid_x + columns.0 as f64 * self.cell,
            self.grid_y + rows.0 as f64 * self.cell,
            columns.1 as f64 * self.cell,
            rows.1 as f64 * self.cell,
        )
    }

    /// The places (first, count) of zone `name`.
    fn zone(&self, name: &str) -> Option<(usize, usize)> {
        let group = self
            .groups
            .iter()
            .find(|g| g.zone.as_deref() == Some(name))?;
        Some((group.start, group.len))
    }
}

/// FNV-1a of the parts, for an id that is the same on every run.
fn fnv(parts: &[&str]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in parts.iter().flat_map(|p| p.bytes().chain([0])) {
        hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
    }
    hash
}

fn hatch_pattern(id: &str) -> String {
    format!(
        "<pattern id=\"{id}\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\" \
         patternTransform=\"rotate(45)\"><rect width=\"5\" height=\"5\" fill=\"#ececec\"/>\
         <line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"5\" stroke=\"#7a7a7a\" stroke-width=\"2\"/></pattern>"
    )
}

/// What a cell holds.
enum Fill {
    Myself,
    Missing,
    Step(i32),
}

fn fill_of(map: &Heatmap, scale: Option<&Scale>, src: usize, dst: usize) -> (Fill, Option<f64>) {
    if src == dst {
        return (Fill::Myself, None);
    }
    let value = map
        .values
        .get(src * map.labels.len() + dst)
        .copied()
        .flatten();
    match (value.filter(|v| colourable(*v)), scale) {
        (Some(v), Some(scale)) => (Fill::Step(scale.step(v)), Some(v)),
        _ => (Fill::Missing, None),
    }
}

impl Fill {
    fn paint(&self, hatch: &str) -> String {
        match self {
            Fill::Myself => SELF_FILL.to_string(),
            Fill::Missing => format!("url(#{hatch})"),
            Fill::Step(step) => hex(colour(*step)),
        }
    }
}

fn draw_titles(svg: &mut String, map: &Heatmap, layout: &Layout) {
    let _ = writeln!(
        svg,
        "<text x=\"{m}\" y=\"26\" font-size=\"18\" font-weight=\"700\">{}</text>\n\
         <text x=\"{m}\" y=\"46\" font-size=\"13\" fill=\"#333333\">Rows: the source (sending) · \
         columns: the destination (receiving) · {} endpoints</text>",
        text(map.title),
        layout.n,
        m = px(MARGIN),
    );
}

/// The zone bands above the columns and left of the rows, named.
fn draw_zones(svg: &mut String, layout: &Layout) {
    for (k, group) in layout.groups.iter().enumerate() {
        let name = group.zone.as_deref().unwrap_or("zone not known");
        let fill = ZONE_FILLS[k % ZONE_FILLS.len()];
        let length = group.len as f64 * layout.cell;
        let fits = shortened(name, (length / text_width(1, 12.0)).floor() as usize);
        let (full, fits) = (text(name), text(&fits));
        let along = group.start as f64 * layout.cell + length / 2.0;
        let (x, y) = (layout.grid_x + along, layout.top + BAND / 2.0 + 4.0);
        let _ = writeln!(
            svg,
            "<g><title>zone {full}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"/>\
             <text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{fits}</text></g>",
            px(layout.grid_x + group.start as f64 * layout.cell),
            px(layout.top),
            px(length),
            px(BAND),
            px(x),
            px(y),
        );
        let (x, y) = (MARGIN + BAND / 2.0 + 4.0, layout.grid_y + along);
        let _ = writeln!(
            svg,
            "<g><title>zone {full}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"/>\
             <text transform=\"translate({},{}) rotate(-90)\" font-size=\"12\" text-anchor=\"middle\">{fits}</text></g>",
            px(MARGIN),
            px(layout.grid_y + group.start as f64 * layout.cell),
            px(BAND),
            px(length),
            px(x),
            px(y),
        );
    }
}

/// The names beside the rows and above the columns (bold when a finding
/// names them), each moved aside joined to its row or column by a line.
fn draw_names(svg: &mut String, map: &Heatmap, layout: &Layout) {
    let font = layout.name_font;
    let (gx, gy) = (layout.grid_x, layout.grid_y);
    let edge = GAP + layout.leader;
    for (names, rows) in [(&layout.row_names, true), (&layout.column_names, false)] {
        for name in names {
            let full = text(&map.labels[name.endpoint]);
            let short = text(&shortened(&map.labels[name.endpoint], LONGEST_NAME));
            let weight = if name.bold {
                " font-weight=\"700\""
            } else {
                ""
            };
            let baseline = name.at + font * 0.35;
            let place = match rows {
                true => format!(
                    "x=\"{}\" y=\"{}\" text-anchor=\"end\"",
                    px(gx - edge),
                    px(gy + baseline)
                ),
                false => format!(
                    "transform=\"translate({},{}) rotate(-90)\"",
                    px(gx + baseline),
                    px(gy - edge)
                ),
            };
            let _ = writeln!(
                svg,
                "<text {place} font-size=\"{}\"{weight}><title>{full}</title>{short}</text>",
                px(font)
            );
            if layout.leader > 0.0 {
                let (from, to) = (edge - 2.0, 1.0);
                let d = match rows {
                    true => format!(
                        "M{} {}L{} {}",
                        px(gx - from),
                        px(gy + name.at),
                        px(gx - to),
                        px(gy + name.centre)
                    ),
                    false => format!(
                        "M{} {}L{} {}",
                        px(gx + name.at),
                        px(gy - from),
                        px(gx + name.centre),
                        px(gy - to)
                    ),
                };
                let _ = writeln!(svg, "<path stroke=\"#555555\" fill=\"none\" d=\"{d}\"/>");
            }
        }
    }
}

/// The cells: one by one with a tooltip (and the figure, while it fits)
/// for a readable grid; as runs of one colour for a large one.
fn draw_cells(svg: &mut String, map: &Heatmap, layout: &Layout, scale: Option<&Scale>) {
    let cell = layout.cell;
    if layout.n > READABLE {
        let mut runs: BTreeMap<String, String> = BTreeMap::new();
        for (row, &src) in layout.order.iter().enumerate() {
            let mut column = 0;
            while column < layout.n {
                let paint = fill_of(map, scale, src, layout.order[column])
                    .0
                    .paint(&layout.hatch);
                let mut end = column + 1;
                while end < layout.n
                    && fill_of(map, scale, src, layout.order[end])
                        .0
                        .paint(&layout.hatch)
                        == paint
                {
                    end += 1;
                }
                let (x, y, w, h) = layout.rect((row, 1), (column, end - column));
                let path = runs.entry(paint).or_default();
                let _ = write!(path, "M{} {}h{}v{}h-{}z", px(x), px(y), px(w), px(h), px(w));
                column = end;
            }
        }
        for (paint, path) in runs {
            let _ = writeln!(svg, "<path fill=\"{paint}\" d=\"{path}\"/>");
        }
        return;
    }
    let figures = cell >= 34.0;
    let font = (cell * 0.3).min(13.0);
    let unit = match map.unit {
        "" => String::new(),
        unit => format!(" {unit}"),
    };
    for (row, &src) in layout.order.iter().enumerate() {
        for (column, &dst) in layout.order.iter().enumerate() {
            let (fill, value) = fill_of(map, scale, src, dst);
            let (x, y, _, _) = layout.rect((row, 1), (column, 1));
            let what = match (&fill, value) {
                (Fill::Myself, _) => "the endpoint itself".to_string(),
                (_, Some(v)) => format!("{}{unit}", si_label(v)),
                _ => "no value (not measured, or failed)".to_string(),
            };
            let _ = write!(
                svg,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{} → {}: {}</title></rect>",
                px(x + 0.5),
                px(y + 0.5),
                px(cell - 1.0),
                px(cell - 1.0),
                fill.paint(&layout.hatch),
                text(&map.labels[src]),
                text(&map.labels[dst]),
                text(&what),
            );
            if let (true, Fill::Step(step), Some(v)) = (figures, &fill, value) {
                let ink = if dark(colour(*step)) {
                    "#ffffff"
                } else {
                    "#111111"
                };
                let _ = write!(
                    svg,
                    "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"middle\" fill=\"{ink}\">{}</text>",
                    px(x + cell / 2.0),
                    px(y + cell / 2.0 + font * 0.35),
                    px(font),
                    text(&si_label(v)),
                );
            }
        }
        svg.push('\n');
    }
}

/// Lines between the zones, across the grid.
fn draw_separators(svg: &mut String, layout: &Layout) {
    let side = layout.n as f64 * layout.cell;
    let width = if layout.cell >= 6.0 { 2.0 } else { 1.0 };
    for group in layout.groups.iter().skip(1) {
        let at = group.start as f64 * layout.cell;
        let _ = writeln!(
            svg,
            "<path stroke=\"#222222\" stroke-width=\"{}\" d=\"M{} {}v{}M{} {}h{}\"/>",
            px(width),
            px(layout.grid_x + at),
            px(layout.grid_y),
            px(side),
            px(layout.grid_x),
            px(layout.grid_y + at),
            px(side),
        );
    }
}

/// The findings' outlines: black on a white halo, so they show on the
/// darkest cell, and never smaller than a few pixels.
fn draw_marks(svg: &mut String, map: &Heatmap, layout: &Layout) {
    let n = layout.n;
    let stroke = if layout.cell >= 20.0 { 3.0 } else { 2.0 };
    for mark in map.marks {
        let places = match mark {
            Mark::Cell { src, dst } if *src < n && *dst < n => {
                Some(((layout.place[*src], 1), (layout.place[*dst], 1)))
            }
            Mark::Row(i) if *i < n => Some(((layout.place[*i], 1), (0, n))),
            Mark::Column(i) if *i < n => Some(((0, n), (layout.place[*i], 1))),
            Mark::Block { from, to } => layout.zone(from).zip(layout.zone(to)),
            _ => None,
        };
        let Some((rows, columns)) = places else {
            continue;
        };
        let (x, y, w, h) = layout.rect(rows, columns);
        let grow = |at: f64, length: f64| {
            let length2 = length.max(8.0);
            (at - (length2 - length) / 2.0 - 1.0, length2 + 2.0)
        };
        let ((x, w), (y, h)) = (grow(x, w), grow(y, h));
        for (ink, width) in [("#ffffff", stroke + 2.0), ("#000000", stroke)] {
            let _ = write!(
                svg,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{ink}\" stroke-width=\"{}\"/>",
                px(x),
                px(y),
                px(w),
                px(h),
                px(width),
            );
        }
        svg.push('\n');
    }
}

/// What each pattern on a heatmap says, for the page and the docs.
pub const READING: [(&str, &str); 6] = [
    (
        "A red row",
        "that endpoint sends badly to every destination: its host, NIC or link in the sending direction",
    ),
    (
        "A red column",
        "that endpoint receives badly from every source",
    ),
    (
        "A red cross (its row and its column)",
        "that endpoint is bad both ways: a bad node",
    ),
    (
        "A red block on a zone's rows and another's columns",
        "the link between the two zones, in that direction",
    ),
    (
        "One red cell",
        "one path in one direction (a route, a queue, a policy on that pair)",
    ),
    (
        "Hatched",
        "no value: the pair was not asked for, failed (see Problems) or was not reached",
    ),
];

#[cfg(test)]
mod tests;
