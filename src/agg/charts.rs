//! netagg's pictures and report: the overall chart (the per-sample aggregate,
//! each level's average, level-start markers, title and annotation), the
//! per-stream chart, and one self-contained HTML page with the charts and
//! the tables — what post_proc.py and rrdtool drew, with no rrdtool.

use super::runner::Recording;
use super::summary::LevelSummary;
use plotters::prelude::*;
use std::fmt::Write as _;

/// What the user asked to see on the charts.
#[derive(Debug, Clone, Default)]
pub struct ChartText {
    pub title: String,
    pub annotation: String,
    pub units: String,
}

const WIDTH: u32 = 1000;
const HEIGHT: u32 = 500;

fn y_top(values: impl Iterator<Item = f64>) -> f64 {
    let top = values.fold(0.0, f64::max);
    if top > 0.0 {
        top * 1.1
    } else {
        1.0
    }
}

type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// A titled chart with seconds across and the units up, on a white page.
fn frame<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    caption: String,
    x_end: f64,
    top: f64,
    units: &str,
) -> Option<Chart<'a, 'b>> {
    let _ = root.fill(&WHITE);
    let mut chart = ChartBuilder::on(root)
        .caption(caption, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..x_end, 0.0..top)
        .ok()?;
    let _ = chart
        .configure_mesh()
        .x_desc("seconds")
        .y_desc(units)
        .draw();
    Some(chart)
}

/// The overall chart as SVG text.
pub fn overall(rec: &Recording, levels: &[LevelSummary], text: &ChartText) -> String {
    let mut svg = String::new();
    let x_end = rec.samples.last().map_or(1.0, |s| s.t).max(1.0);
    let top = y_top(rec.samples.iter().map(|s| s.aggregate));
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let caption = if text.title.is_empty() {
            "Aggregate".to_string()
        } else {
            text.title.clone()
        };
        let Some(mut chart) = frame(&root, caption, x_end, top, &text.units) else {
            return svg_fallback(&text.title);
        };
        let _ = chart
            .draw_series(LineSeries::new(
                rec.samples.iter().map(|s| (s.t, s.aggregate)),
                &BLUE,
            ))
            .map(|s| {
                s.label("aggregate per interval")
                    .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE))
            });
        for (index, (run, summary)) in rec.levels.iter().zip(levels).enumerate() {
            // The level's average, drawn over the window it is computed on.
            let drawn = chart.draw_series(LineSeries::new(
                vec![
                    (summary.window.0, summary.average),
                    (summary.window.1, summary.average),
                ],
                RED.stroke_width(2),
            ));
            if let (0, Ok(series)) = (index, drawn) {
                series.label("level average (window)").legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(2))
                });
            }
            // Level start marker, labelled with the stream count.
            let _ = chart.draw_series(LineSeries::new(
                vec![(run.start, 0.0), (run.start, top)],
                BLACK.mix(0.3),
            ));
            let _ = chart.draw_series(std::iter::once(Text::new(
                format!("{} streams", run.streams),
                (run.start, top * 0.97),
                ("sans-serif", 12),
            )));
        }
        if !text.annotation.is_empty() {
            let _ = chart.draw_series(std::iter::once(Text::new(
                text.annotation.clone(),
                (x_end * 0.02, top * 0.05),
                ("sans-serif", 14),
            )));
        }
        let _ = chart.configure_series_labels().border_style(BLACK).draw();
        let _ = root.present();
    }
    svg
}

/// One line per stream.
pub fn individual(rec: &Recording, text: &ChartText) -> String {
    let mut svg = String::new();
    let x_end = rec.samples.last().map_or(1.0, |s| s.t).max(1.0);
    let top = y_top(
        rec.samples
            .iter()
            .flat_map(|s| s.stream_rates.iter().copied()),
    );
    let streams = rec
        .samples
        .iter()
        .map(|s| s.stream_rates.len())
        .max()
        .unwrap_or(0);
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let caption = format!("{} per stream", text.title);
        let Some(mut chart) = frame(&root, caption, x_end, top, &text.units) else {
            return svg_fallback(&text.title);
        };
        for i in 0..streams {
            let color = Palette99::pick(i);
            let _ = chart.draw_series(LineSeries::new(
                rec.samples
                    .iter()
                    .filter_map(|s| s.stream_rates.get(i).map(|r| (s.t, *r))),
                &color,
            ));
        }
        let _ = root.present();
    }
    svg
}

fn svg_fallback(title: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\"><text x=\"10\" y=\"20\">{}</text></svg>",
        escape(title)
    )
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One self-contained HTML page: summary, charts, the level table.
pub fn html(
    summary_text: &str,
    charts: &[String],
    levels: &[LevelSummary],
    text: &ChartText,
) -> String {
    let mut out = String::new();
    let title = if text.title.is_empty() {
        "netagg report"
    } else {
        &text.title
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title>\
         <style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #999;padding:4px 8px;text-align:right}}</style></head><body>\n<h1>{}</h1>\n<pre>{}</pre>\n",
        escape(title),
        escape(title),
        escape(summary_text)
    );
    for chart in charts {
        out.push_str(chart);
        out.push('\n');
    }
    let units = escape(&text.units);
    let _ = writeln!(
        out,
        "<table><tr><th>streams</th><th>average {units}</th><th>min {units}</th><th>max {units}</th>\
         <th>SUT CPU %</th><th>busiest CPU %</th><th>us/unit</th><th>packets/s out</th>\
         <th>packets/s in</th><th>min/max</th><th>Jain</th><th>trustworthy</th></tr>"
    );
    for l in levels {
        let unhealthy = l.health.unhealthy().count();
        let trusted = if unhealthy == 0 {
            "yes".to_string()
        } else {
            format!("no: {unhealthy} streams stalled or moved nothing")
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{:.1}</td>\
             <td>{:.1}</td><td>{:.3}</td><td>{:.0}</td><td>{:.0}</td><td>{:.3}</td><td>{:.3}</td><td>{trusted}</td></tr>",
            l.streams, l.average, l.min, l.max, l.cpu_util, l.cpu_peak, l.service_demand,
            l.packets_out, l.packets_in, l.min_over_max, l.jain
        );
    }
    out.push_str("</table>\n</body></html>\n");
    out
}
