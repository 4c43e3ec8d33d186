//! The one chart builder: every report's chart is a plain description — a
//! title, two axes, named series (lines, with dots and interval bars if
//! asked), shaded bands, markers, vertical rules and notes — drawn here as
//! SVG. The only code of the workspace that uses plotters. One size
//! (960 × 540, 16:9: a slide, a laptop screen, and the size the report
//! tests screenshot), one colour-blind-safe palette (Okabe–Ito), short SI
//! tick labels (`units::si_label`, never five digits), and the legend
//! beside the plot, where it never hides data.

use crate::units::si_label;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

/// Every chart's width in pixels.
pub const WIDTH: u32 = 960;
/// Every chart's height in pixels.
pub const HEIGHT: u32 = 540;

/// Okabe–Ito colours, told apart with the common colour-vision
/// deficiencies. A colour is an index into it (taken modulo its length).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0x99, 0x99, 0x99),
];
/// How many colours the palette has.
pub const COLOURS: usize = PALETTE.len();
/// The palette's colours by name.
pub const BLUE: usize = 0;
pub const VERMILLION: usize = 1;
pub const GREEN: usize = 2;
pub const BLACK_INK: usize = 6;

/// Grey behind a shaded band.
const BAND: RGBAColor = RGBAColor(120, 120, 120, 0.15);

/// A line's dash pattern.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dash {
    #[default]
    Solid,
    Dashed,
    Dotted,
    Long,
}

impl Dash {
    const ALL: [Dash; 4] = [Dash::Solid, Dash::Dashed, Dash::Dotted, Dash::Long];

    /// (dash, gap) in pixels; None for a solid line.
    fn pattern(self) -> Option<(u32, u32)> {
        match self {
            Dash::Solid => None,
            Dash::Dashed => Some((9, 5)),
            Dash::Dotted => Some((2, 4)),
            Dash::Long => Some((16, 5)),
        }
    }
}

/// How a series is drawn: a palette colour and a dash pattern.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Look {
    pub colour: usize,
    pub dash: Dash,
}

impl Look {
    /// Colour `colour`, dash pattern `step`; colours past the palette move
    /// on to the next pattern, so any number of series stay apart.
    pub fn new(colour: usize, step: usize) -> Look {
        Look {
            colour: colour % COLOURS,
            dash: Dash::ALL[(step + colour / COLOURS) % Dash::ALL.len()],
        }
    }
}

/// What an axis's tick labels say.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Ticks {
    /// Numbers in short SI form (18k, 2.5M, 0.25).
    #[default]
    Si,
    /// Names at x = 0, 1, 2, … (and nothing between them).
    Categories(Vec<String>),
}

impl Ticks {
    /// The tick label at `value`.
    fn label(&self, value: f64) -> String {
        match self {
            Ticks::Si => si_label(value),
            Ticks::Categories(names) => category(names, value),
        }
    }
}

/// An axis: its title, its ticks, and its range (None: from the data).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Axis {
    pub label: String,
    pub ticks: Ticks,
    pub range: Option<(f64, f64)>,
}

impl Axis {
    /// A numeric axis titled `label`, ranged from the data.
    pub fn si(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            ..Axis::default()
        }
    }

    /// An axis of named places (`names[i]` at i).
    pub fn categories(label: impl Into<String>, names: Vec<String>) -> Axis {
        let range = Some((-0.5, names.len() as f64 - 0.5));
        Axis {
            label: label.into(),
            ticks: Ticks::Categories(names),
            range,
        }
    }

    /// This axis over `low..high`.
    pub fn range(mut self, low: f64, high: f64) -> Axis {
        self.range = Some((low, high));
        self
    }
}

/// A line through points; with a name it has a legend entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    pub name: Option<String>,
    pub points: Vec<(f64, f64)>,
    pub look: Look,
    /// Stroke width in pixels (2 unless set).
    pub width: u32,
    /// A dot on every point.
    pub dots: bool,
    /// Interval bars with caps: (x, low, high).
    pub intervals: Vec<(f64, f64, f64)>,
}

impl Series {
    /// A line in `look`, unnamed, two pixels wide.
    pub fn line(points: Vec<(f64, f64)>, look: Look) -> Series {
        Series {
            points,
            look,
            width: 2,
            ..Series::default()
        }
    }

    /// This series with a legend entry.
    pub fn named(mut self, name: impl Into<String>) -> Series {
        self.name = Some(name.into());
        self
    }

    /// This series with a dot on every point.
    pub fn dotted(mut self) -> Series {
        self.dots = true;
        self
    }
}

/// A marker's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A ring, as round the peak.
    Ring,
    /// A cross, as on a stalled stream's sample.
    Cross,
}

/// Markers of one kind at points, with one legend entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Markers {
    pub name: String,
    pub shape: Shape,
    pub colour: usize,
    pub points: Vec<(f64, f64)>,
}

/// Shaded spans of x (such as settling time), with one legend entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Bands {
    pub name: String,
    pub spans: Vec<(f64, f64)>,
}

/// Text on the plot at data x, at `height` (0 to 1) of the y axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    pub text: String,
    pub x: f64,
    pub height: f64,
    pub colour: usize,
    pub size: u32,
}

/// A chart described: draw it with [`Plot::svg`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plot {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub bands: Option<Bands>,
    pub markers: Vec<Markers>,
    /// Faint vertical lines at these x (such as where levels start).
    pub rules: Vec<f64>,
    pub notes: Vec<Note>,
    /// A heading over the legend's entries.
    pub legend_title: Option<String>,
}

/// One legend entry's sample.
enum Swatch {
    Line(Look, bool),
    Band,
    Marker(Shape, usize),
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Chart2d<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

impl Plot {
    /// A chart titled `title` with these axes and nothing on it yet.
    pub fn new(title: impl Into<String>, x: Axis, y: Axis) -> Plot {
        Plot {
            title: title.into(),
            x,
            y,
            ..Plot::default()
        }
    }

    /// The chart as SVG text.
    pub fn svg(&self) -> String {
        let entries = self.legend_entries();
        let (x, y) = (self.x_range(), self.y_range());
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
            let _ = root.fill(&WHITE);
            let legend = match (&self.legend_title, entries.is_empty()) {
                (None, true) => 0,
                _ => legend_width(self.legend_title.as_deref().unwrap_or(""), &entries),
            };
            let (plot, beside) = root.split_horizontally(WIDTH - legend);
            let Some(mut chart) = self.frame(&plot, x, y) else {
                return message(&self.title);
            };
            self.draw_behind(&mut chart, y);
            self.draw_series(&mut chart, x);
            self.draw_front(&mut chart, y);
            if legend > 0 {
                draw_legend(&beside, self.legend_title.as_deref(), &entries);
            }
            let _ = root.present();
        }
        svg
    }

    fn x_range(&self) -> (f64, f64) {
        self.x.range.unwrap_or_else(|| {
            let xs = self
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.0));
            let (low, high) = span(xs);
            (low.min(0.0), high.max(1.0))
        })
    }

    fn y_range(&self) -> (f64, f64) {
        self.y.range.unwrap_or_else(|| {
            let ys = self.series.iter().flat_map(|s| {
                let highs = s.intervals.iter().map(|i| i.2);
                s.points.iter().map(|p| p.1).chain(highs)
            });
            let top = span(ys).1;
            (0.0, if top > 0.0 { top * 1.1 } else { 1.0 })
        })
    }

    /// The titled plot with its axes and a quiet grid.
    fn frame<'a, 'b>(
        &self,
        area: &'a Area<'b>,
        x: (f64, f64),
        y: (f64, f64),
    ) -> Option<Chart2d<'a, 'b>> {
        let ok = |r: (f64, f64)| r.0.is_finite() && r.1.is_finite() && r.0 < r.1;
        if !ok(x) || !ok(y) {
            return None;
        }
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d(x.0..x.1, y.0..y.1)
            .ok()?;
        let x_label = |v: &f64| self.x.ticks.label(*v);
        let y_label = |v: &f64| self.y.ticks.label(*v);
        let mut mesh = chart.configure_mesh();
        mesh.max_light_lines(1)
            .light_line_style(RGBColor(0xF4, 0xF4, 0xF4))
            .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
            .x_desc(self.x.label.as_str())
            .y_desc(self.y.label.as_str())
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 16));
        if let Ticks::Categories(names) = &self.x.ticks {
            // At most one tick per name puts them exactly on the integers.
            mesh.disable_x_mesh().x_labels(names.len());
        }
        let _ = mesh.draw();
        Some(chart)
    }

    /// Bands and rules, under the data.
    fn draw_behind(&self, chart: &mut Chart2d<'_, '_>, y: (f64, f64)) {
        if let Some(bands) = &self.bands {
            let _ = chart.draw_series(
                bands
                    .spans
                    .iter()
                    .filter(|(from, to)| to > from)
                    .map(|&(from, to)| Rectangle::new([(from, y.0), (to, y.1)], BAND.filled())),
            );
        }
        let rule = BLACK.mix(0.3);
        for &x in &self.rules {
            let _ = chart.draw_series(LineSeries::new([(x, y.0), (x, y.1)], rule));
        }
    }

    fn draw_series(&self, chart: &mut Chart2d<'_, '_>, x: (f64, f64)) {
        for series in &self.series {
            let colour = PALETTE[series.look.colour % COLOURS];
            let style = colour.stroke_width(series.width.max(1));
            // Half an interval bar's cap, in x units.
            let cap = match self.x.ticks {
                Ticks::Categories(_) => 0.03,
                Ticks::Si => (x.1 - x.0) * 0.006,
            };
            for &(x, low, high) in &series.intervals {
                let _ = chart.draw_series([
                    PathElement::new(vec![(x, low), (x, high)], style),
                    PathElement::new(vec![(x - cap, low), (x + cap, low)], style),
                    PathElement::new(vec![(x - cap, high), (x + cap, high)], style),
                ]);
            }
            let points = series.points.iter().copied();
            let _ = match series.look.dash.pattern() {
                None => chart
                    .draw_series(LineSeries::new(points, style))
                    .map(|_| ()),
                Some((dash, gap)) => chart
                    .draw_series(DashedLineSeries::new(points, dash, gap, style))
                    .map(|_| ()),
            };
            if series.dots {
                let dots = series.points.iter();
                let _ = chart.draw_series(dots.map(|&p| Circle::new(p, 4, colour.filled())));
            }
        }
    }

    /// Markers and notes, over the data.
    fn draw_front(&self, chart: &mut Chart2d<'_, '_>, y: (f64, f64)) {
        for markers in &self.markers {
            let style = PALETTE[markers.colour % COLOURS].stroke_width(2);
            for &p in &markers.points {
                let _ = match markers.shape {
                    Shape::Ring => chart.draw_series([Circle::new(p, 7, style.stroke_width(3))]),
                    Shape::Cross => chart.draw_series([Cross::new(p, 6, style)]),
                };
            }
        }
        for note in &self.notes {
            let colour = PALETTE[note.colour % COLOURS];
            let font = ("sans-serif", note.size).into_font().color(&colour);
            let at = (note.x, y.0 + (y.1 - y.0) * note.height);
            let _ = chart.draw_series([Text::new(note.text.clone(), at, font)]);
        }
    }

    /// The legend's entries: named series, then the bands, then markers.
    fn legend_entries(&self) -> Vec<(Swatch, String)> {
        let mut entries: Vec<(Swatch, String)> = self
            .series
            .iter()
            .filter_map(|s| Some((Swatch::Line(s.look, s.dots), s.name.clone()?)))
            .collect();
        if let Some(bands) = self.bands.as_ref().filter(|b| !b.spans.is_empty()) {
            entries.push((Swatch::Band, bands.name.clone()));
        }
        for m in self.markers.iter().filter(|m| !m.points.is_empty()) {
            entries.push((Swatch::Marker(m.shape, m.colour), m.name.clone()));
        }
        entries
    }
}

/// The lowest and highest finite values (0, 0 when there are none).
pub fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc: Option<(f64, f64)>, v| {
            Some(acc.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
        })
        .unwrap_or((0.0, 0.0))
}

/// The name at an integer x, nothing between names.
pub fn category(names: &[String], x: f64) -> String {
    let nearest = x.round();
    if (x - nearest).abs() > 1e-6 || nearest < 0.0 {
        return String::new();
    }
    names.get(nearest as usize).cloned().unwrap_or_default()
}

/// The legend's width for these labels, within reason.
fn legend_width(title: &str, entries: &[(Swatch, String)]) -> u32 {
    let longest = entries
        .iter()
        .map(|(_, label)| label.chars().count() + 7)
        .chain(std::iter::once(title.chars().count()))
        .max()
        .unwrap_or(0);
    (16 + longest as u32 * 15 / 2).clamp(140, 360)
}

/// The legend in its own area at the right: a title, then per entry a
/// sample and its label.
fn draw_legend(area: &Area<'_>, title: Option<&str>, entries: &[(Swatch, String)]) {
    let mut top = 40;
    if let Some(title) = title {
        let bold = ("sans-serif", 15).into_font().style(FontStyle::Bold);
        let _ = area.draw(&Text::new(title.to_string(), (8, 34), bold));
        top = 64;
    }
    for (i, (swatch, label)) in entries.iter().enumerate() {
        let y = top + i as i32 * 24;
        match *swatch {
            Swatch::Line(look, dots) => {
                let colour = PALETTE[look.colour % COLOURS];
                let style = colour.stroke_width(2);
                let _ = match look.dash.pattern() {
                    None => area.draw(&PathElement::new(vec![(8, y), (40, y)], style)),
                    Some((dash, gap)) => area.draw(&DashedPathElement::new(
                        vec![(8, y), (40, y)],
                        dash,
                        gap,
                        style,
                    )),
                };
                if dots {
                    let _ = area.draw(&Circle::new((24, y), 4, colour.filled()));
                }
            }
            Swatch::Band => {
                let _ = area.draw(&Rectangle::new([(8, y - 6), (40, y + 6)], BAND.filled()));
            }
            Swatch::Marker(shape, colour) => {
                let style = PALETTE[colour % COLOURS].stroke_width(2);
                let _ = match shape {
                    Shape::Ring => area.draw(&Circle::new((24, y), 5, style)),
                    Shape::Cross => area.draw(&Cross::new((24, y), 5, style)),
                };
            }
        }
        let _ = area.draw(&Text::new(label.clone(), (48, y - 8), ("sans-serif", 15)));
    }
}

/// A chart-sized picture that only says `text` (a chart with nothing to
/// draw).
pub fn message(text: &str) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let _ = root.draw(&Text::new(text.to_string(), (20, 50), ("sans-serif", 18)));
        let _ = root.present();
    }
    svg
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The SVG parses; its text nodes, one a line (the heatmap's tests
    /// read theirs with it too).
    pub(crate) fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).expect("the SVG parses");
        doc.descendants()
            .filter_map(|n| n.text())
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect()
    }

    fn busy() -> Plot {
        let mut plot = Plot::new(
            "Rate <&> \"over\" time",
            Axis::si("seconds"),
            Axis::si("Trans/s"),
        );
        let points: Vec<(f64, f64)> = (0..30)
            .map(|i| (i as f64, 150_000.0 + i as f64 * 1e3))
            .collect();
        plot.series.push(
            Series::line(points, Look::new(BLUE, 0))
                .named("aggregate")
                .dotted(),
        );
        plot.series
            .push(Series::line(vec![(0.0, 1e5), (30.0, 1e5)], Look::new(1, 1)));
        plot.bands = Some(Bands {
            name: "settling".into(),
            spans: vec![(0.0, 2.0), (10.0, 12.0)],
        });
        plot.markers.push(Markers {
            name: "peak: 2 streams".into(),
            shape: Shape::Ring,
            colour: GREEN,
            points: vec![(29.0, 179_000.0)],
        });
        plot.markers.push(Markers {
            name: "stalled".into(),
            shape: Shape::Cross,
            colour: VERMILLION,
            points: vec![(3.0, 0.0)],
        });
        plot.rules = vec![0.0, 10.0];
        plot.notes.push(Note {
            text: "2 streams".into(),
            x: 10.0,
            height: 0.97,
            colour: BLACK_INK,
            size: 12,
        });
        plot.legend_title = Some("what".into());
        plot
    }

    #[test]
    fn legends_markers_and_notes_are_drawn_when_asked() {
        let svg = busy().svg();
        assert!(svg.contains(&format!("width=\"{WIDTH}\"")), "one size");
        let texts = texts(&svg);
        for want in [
            "aggregate",
            "settling",
            "peak: 2 streams",
            "stalled",
            "2 streams",
            "what",
        ] {
            assert!(texts.iter().any(|t| t == want), "no {want:?} in {texts:?}");
        }
        assert!(
            texts.iter().any(|t| t == "Rate <&> \"over\" time"),
            "escaped title"
        );
        // An unnamed series has no legend entry, nor do absent markers.
        let mut bare = busy();
        bare.markers.clear();
        bare.bands = None;
        let texts = super::tests::texts(&bare.svg());
        assert!(!texts.iter().any(|t| t == "stalled" || t == "settling"));
    }

    #[test]
    fn no_tick_label_has_five_digits() {
        for scale in [1.0, 1e3, 1e5, 1e7, 1e10, 1e13] {
            let mut plot = busy();
            plot.series[0].points = (0..50)
                .map(|i| (i as f64 * 1000.0, i as f64 * scale))
                .collect();
            plot.x.range = None;
            for label in texts(&plot.svg()) {
                let digits = label.chars().filter(char::is_ascii_digit).count();
                let numeric = label
                    .chars()
                    .all(|c| c.is_ascii_digit() || ".-kMGT".contains(c));
                if numeric {
                    assert!(
                        digits < 5 && !label.ends_with(".0"),
                        "tick {label:?} at {scale}"
                    );
                }
            }
        }
    }

    #[test]
    fn categories_label_only_their_places() {
        let names = vec!["1024".to_string(), "8192".to_string()];
        assert_eq!(category(&names, 1.0), "8192");
        assert_eq!(category(&names, 0.5), "");
        assert_eq!(category(&names, -1.0), "");
        assert_eq!(category(&names, 2.0), "");
        let mut plot = Plot::new("t", Axis::categories("size", names), Axis::si("x"));
        let mut series = Series::line(vec![(0.0, 1.0), (1.0, 2.0)], Look::new(0, 0));
        series.intervals = vec![(0.0, 0.5, 1.5), (1.0, 1.5, 2.5)];
        plot.series.push(series.named("a").dotted());
        let texts = texts(&plot.svg());
        assert!(texts.iter().any(|t| t == "8192") && texts.iter().any(|t| t == "a"));
    }

    #[test]
    fn empty_or_odd_charts_do_not_panic() {
        let empty = Plot::new("nothing", Axis::si("x"), Axis::si("y"));
        texts(&empty.svg());
        let mut one = empty.clone();
        one.series
            .push(Series::line(Vec::new(), Look::default()).named("none"));
        one.series.push(Series::line(
            vec![(f64::NAN, f64::INFINITY)],
            Look::default(),
        ));
        texts(&one.svg());
        let inverted = Plot::new("upside down", Axis::si("x").range(2.0, 1.0), Axis::si("y"));
        assert!(texts(&inverted.svg()).contains(&"upside down".to_string()));
        texts(&message("no data"));
    }

    #[test]
    fn looks_move_to_the_next_dash_past_the_palette() {
        assert_eq!(Look::new(0, 0).dash, Dash::Solid);
        assert_eq!(Look::new(0, 1).colour, Look::new(0, 0).colour);
        assert_ne!(Look::new(0, 1).dash, Dash::Solid);
        assert_ne!(Look::new(1, 0).colour, Look::new(0, 0).colour);
        assert_eq!(Look::new(COLOURS, 0).colour, 0);
        assert_ne!(Look::new(COLOURS, 0).dash, Dash::Solid);
    }
}
