//! The heatmap's colour scale: a value's ratio to the grid's median, on a
//! log scale, coloured red towards worse and blue towards better whichever
//! way the metric is better; and the legend that says so in the unit.

use super::{px, text, Heatmap, Layout, SELF_FILL};
use crate::units::si_label;
use std::fmt::Write as _;

/// Colour steps on each side of the median.
pub(super) const STEPS: i32 = 16;
/// The scale reaches at least this ratio from the median either way, so
/// that a clean grid's few per cent of noise stays pale.
const MIN_SPAN: f64 = 1.25;
/// ... and at most this one (beyond it the end colour, and the legend says so).
const MAX_SPAN: f64 = 100.0;

pub(super) const LEGEND_WIDTH: f64 = 260.0;
const BAR_HEIGHT: f64 = 200.0;

/// A diverging scale (ColorBrewer's RdBu, safe for the common colour-vision
/// deficiencies): from the median, towards worse and towards better.
const WORSE_RAMP: [(u8, u8, u8); 6] = [
    (0xf7, 0xf7, 0xf7),
    (0xfd, 0xdb, 0xc7),
    (0xf4, 0xa5, 0x82),
    (0xd6, 0x60, 0x4d),
    (0xb2, 0x18, 0x2b),
    (0x67, 0x00, 0x1f),
];
const BETTER_RAMP: [(u8, u8, u8); 5] = [
    (0xf7, 0xf7, 0xf7),
    (0xd1, 0xe5, 0xf0),
    (0x92, 0xc5, 0xde),
    (0x43, 0x93, 0xc3),
    (0x21, 0x66, 0xac),
];

/// How the colours map to values: log ratio to the grid's median, `span`
/// (a log ratio) at either end.
pub(super) struct Scale {
    pub(super) median: f64,
    pub(super) span: f64,
    pub(super) higher_is_better: bool,
    /// Whether some value lies past the worse (or better) end.
    pub(super) past_worse: bool,
    pub(super) past_better: bool,
}

impl Scale {
    /// The scale of these values; None when no value can be coloured.
    pub(super) fn of(values: &[Option<f64>], higher_is_better: bool) -> Option<Scale> {
        let mut positive: Vec<f64> = values
            .iter()
            .flatten()
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        positive.sort_by(f64::total_cmp);
        let middle = positive.len() / 2;
        let median = match positive.len() {
            0 => return None,
            len if len % 2 == 1 => positive[middle],
            _ => (positive[middle - 1] + positive[middle]) / 2.0,
        };
        let widest = positive
            .iter()
            .map(|v| (v / median).ln().abs())
            .fold(0.0, f64::max);
        let span = widest.clamp(MIN_SPAN.ln(), MAX_SPAN.ln());
        let mut scale = Scale {
            median,
            span,
            higher_is_better,
            past_worse: false,
            past_better: false,
        };
        for v in values.iter().flatten().filter(|v| colourable(**v)) {
            let b = scale.badness(*v);
            scale.past_worse |= b > 1.0 + 1e-9;
            scale.past_better |= b < -1.0 - 1e-9;
        }
        Some(scale)
    }

    /// How much worse than the median `v` is: 0 at the median, ±1 at the
    /// ends, beyond them past the ends (a zero: infinitely far).
    fn badness(&self, v: f64) -> f64 {
        let towards_higher = (v / self.median).ln() / self.span;
        match self.higher_is_better {
            true => -towards_higher,
            false => towards_higher,
        }
    }

    /// The colour step of `v`: -STEPS (best) to STEPS (worst).
    pub(super) fn step(&self, v: f64) -> i32 {
        (self.badness(v).clamp(-1.0, 1.0) * f64::from(STEPS)).round() as i32
    }

    /// The value at `badness`.
    pub(super) fn value_at(&self, badness: f64) -> f64 {
        let towards_higher = match self.higher_is_better {
            true => -badness,
            false => badness,
        };
        self.median * (towards_higher * self.span).exp()
    }
}

/// A value the scale colours: a measured rate or time (a zero included,
/// at the end where it belongs).
pub(super) fn colourable(v: f64) -> bool {
    v.is_finite() && v >= 0.0
}

/// The colour of step `step` (see `Scale::step`).
pub(super) fn colour(step: i32) -> (u8, u8, u8) {
    let ramp: &[(u8, u8, u8)] = if step >= 0 { &WORSE_RAMP } else { &BETTER_RAMP };
    let t = f64::from(step.unsigned_abs().min(STEPS as u32)) / f64::from(STEPS);
    let at = t * (ramp.len() - 1) as f64;
    let low = (at.floor() as usize).min(ramp.len() - 2);
    let f = at - low as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * f).round() as u8;
    let (a, b) = (ramp[low], ramp[low + 1]);
    (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

pub(super) fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Whether text on this colour should be white.
pub(super) fn dark((r, g, b): (u8, u8, u8)) -> bool {
    0.2126 * f64::from(r) + 0.7152 * f64::from(g) + 0.0722 * f64::from(b) < 128.0
}

/// The legend's height: its heading, the bar, the swatches.
pub(super) fn legend_height() -> f64 {
    54.0 + BAR_HEIGHT + 30.0 + 3.0 * 24.0
}

/// The legend: what colour means (the direction, the scale's figures in
/// the unit), then hatched, grey and outlined.
pub(super) fn draw_legend(svg: &mut String, map: &Heatmap, layout: &Layout, scale: Option<&Scale>) {
    let x = layout.legend_x;
    let mut y = layout.top + 14.0;
    let unit = match map.unit {
        "" => "value".to_string(),
        unit => unit.to_string(),
    };
    let direction = match map.higher_is_better {
        true => "lower is worse",
        false => "higher is worse",
    };
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" font-size=\"13\" font-weight=\"700\">Colour: {}</text>\n\
         <text x=\"{}\" y=\"{}\" font-size=\"12\">red is worse ({direction}), blue better</text>",
        px(x),
        px(y),
        text(&unit),
        px(x),
        px(y + 17.0),
    );
    y += 40.0;
    match scale {
        Some(scale) => draw_bar(svg, scale, x, y),
        None => {
            let _ = writeln!(
                svg,
                "<text x=\"{}\" y=\"{}\" font-size=\"12\">no value to colour</text>",
                px(x),
                px(y + 12.0)
            );
        }
    }
    y += BAR_HEIGHT + 30.0;
    let swatches = [
        (
            format!("url(#{})", layout.hatch),
            "no value (not measured, or failed)",
            true,
        ),
        (SELF_FILL.to_string(), "the endpoint itself", true),
        (
            "none".to_string(),
            "a finding (outlined)",
            !map.marks.is_empty(),
        ),
    ];
    for (fill, label, shown) in swatches {
        if !shown {
            continue;
        }
        let outline = match fill.as_str() {
            "none" => " stroke=\"#000000\" stroke-width=\"2\"",
            _ => " stroke=\"#999999\" stroke-width=\"0.5\"",
        };
        let _ = writeln!(
            svg,
            "<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"16\" fill=\"{fill}\"{outline}/>\
             <text x=\"{}\" y=\"{}\" font-size=\"12\">{label}</text>",
            px(x + 1.0),
            px(y),
            px(x + 26.0),
            px(y + 12.5),
        );
        y += 24.0;
    }
}

/// The colour bar, worst at the top, with the figures at the ends, half
/// way and the median (each with its difference from the median).
fn draw_bar(svg: &mut String, scale: &Scale, x: f64, y: f64) {
    let band = BAR_HEIGHT / f64::from(2 * STEPS + 1);
    for (k, step) in (-STEPS..=STEPS).rev().enumerate() {
        let _ = write!(
            svg,
            "<rect x=\"{}\" y=\"{}\" width=\"18\" height=\"{}\" fill=\"{}\"/>",
            px(x),
            px(y + k as f64 * band),
            px(band + 0.4),
            hex(colour(step)),
        );
    }
    svg.push('\n');
    let _ = writeln!(
        svg,
        "<rect x=\"{}\" y=\"{}\" width=\"18\" height=\"{}\" fill=\"none\" stroke=\"#999999\" stroke-width=\"0.5\"/>\
         <text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#555555\">worse</text>\
         <text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#555555\">better</text>",
        px(x),
        px(y),
        px(BAR_HEIGHT),
        px(x),
        px(y - 4.0),
        px(x),
        px(y + BAR_HEIGHT + 13.0),
    );
    for badness in [1.0, 0.5, 0.0, -0.5, -1.0] {
        let value = scale.value_at(badness);
        let at = y + (1.0 - badness) / 2.0 * (BAR_HEIGHT - band) + band / 2.0;
        let beyond = match (badness, scale.higher_is_better) {
            (b, true) if b == 1.0 && scale.past_worse => "≤ ",
            (b, false) if b == 1.0 && scale.past_worse => "≥ ",
            (b, true) if b == -1.0 && scale.past_better => "≥ ",
            (b, false) if b == -1.0 && scale.past_better => "≤ ",
            _ => "",
        };
        let relative = match badness == 0.0 {
            true => "median".to_string(),
            false => format!("{:+.0}%", (value / scale.median - 1.0) * 100.0),
        };
        let _ = writeln!(
            svg,
            "<path stroke=\"#333333\" d=\"M{} {}h5\"/><text x=\"{}\" y=\"{}\" font-size=\"12\">{beyond}{} ({relative})</text>",
            px(x + 18.0),
            px(at),
            px(x + 27.0),
            px(at + 4.0),
            text(&si_label(value)),
        );
    }
}
