//! netagg's pictures — what post_proc.py and rrdtool drew, with no rrdtool,
//! and explaining themselves: the overall chart (the per-sample aggregate,
//! each level's average over its window, the settling margins outside the
//! windows shaded, level starts labelled with their stream counts, the peak
//! level marked, levels with stalled streams flagged) and the per-stream
//! chart (a legend naming each stream's load generator, or one colour per
//! load generator when there are many streams; stalled samples crossed).
//! Axes read in SI form (180k, not 180000.0). The page is `report`.

use super::runner::Recording;
use super::summary::LevelSummary;
use netperf_pages::html::escape;
use netperf_pages::series::legend;
use netperf_pages::units::si_label;
use plotters::prelude::*;

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
        .x_desc("seconds since the run started")
        .y_desc(units)
        .x_label_formatter(&|x| si_label(*x))
        .y_label_formatter(&|y| si_label(*y))
        .draw();
    Some(chart)
}

/// Grey behind the time outside a level's averaging window.
const SETTLING: RGBAColor = RGBAColor(120, 120, 120, 0.15);
const STALLED: RGBColor = RGBColor(200, 0, 0);

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
        shade_settling(&mut chart, rec, levels, top);
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
            let stalled = summary.health.unhealthy().count();
            if stalled > 0 {
                let _ = chart.draw_series(std::iter::once(Text::new(
                    format!("{stalled} stalled"),
                    (run.start, top * 0.91),
                    ("sans-serif", 12).into_font().color(&STALLED),
                )));
            }
        }
        mark_peak(&mut chart, levels, &text.units);
        if !text.annotation.is_empty() {
            let _ = chart.draw_series(std::iter::once(Text::new(
                text.annotation.clone(),
                (x_end * 0.02, top * 0.05),
                ("sans-serif", 14),
            )));
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight);
        let _ = root.present();
    }
    svg
}

/// Each level's time outside its window — setting up, settling, winding
/// down — shaded, so the averages' windows stand out.
fn shade_settling(chart: &mut Chart, rec: &Recording, levels: &[LevelSummary], top: f64) {
    let spans: Vec<(f64, f64)> = rec
        .levels
        .iter()
        .zip(levels)
        .flat_map(|(run, summary)| {
            [
                (run.setup_start.min(run.start), summary.window.0),
                (summary.window.1, run.end),
            ]
        })
        .filter(|(from, to)| to > from)
        .collect();
    let drawn = chart.draw_series(
        spans
            .iter()
            .map(|&(from, to)| Rectangle::new([(from, 0.0), (to, top)], SETTLING.filled())),
    );
    if let (false, Ok(series)) = (spans.is_empty(), drawn) {
        series
            .label("settling, outside the averaged window")
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], SETTLING.filled()));
    }
}

/// A ring on the peak level's average, with its stream count and value.
fn mark_peak(chart: &mut Chart, levels: &[LevelSummary], units: &str) {
    let Some(peak) = super::summary::peak(levels).and_then(|p| levels.get(p)) else {
        return;
    };
    let at = ((peak.window.0 + peak.window.1) / 2.0, peak.average);
    let colour = RGBColor(0, 120, 0);
    let drawn = chart.draw_series(std::iter::once(Circle::new(at, 7, colour.stroke_width(3))));
    if let Ok(series) = drawn {
        series
            .label(format!(
                "peak: {} streams, {} {units}",
                peak.streams,
                si_label(peak.average)
            ))
            .legend(move |(x, y)| Circle::new((x + 10, y), 5, colour.stroke_width(2)));
    }
}

/// Most streams the per-stream chart names one by one; beyond it, one
/// colour (and legend entry) per load generator.
const NAMED_STREAMS: usize = 12;

/// One line per stream, with a legend saying which load generator each one
/// ran against, and red crosses where a stream the level's health check
/// found stalled moved nothing.
pub fn individual(rec: &Recording, levels: &[LevelSummary], text: &ChartText) -> String {
    let mut svg = String::new();
    let x_end = rec.samples.last().map_or(1.0, |s| s.t).max(1.0);
    let top = y_top(
        rec.samples
            .iter()
            .flat_map(|s| s.stream_rates.iter().copied()),
    );
    // The widest level's members name every position of the per-stream vectors.
    let members: Vec<(usize, String)> = rec
        .levels
        .iter()
        .max_by_key(|l| l.members.len())
        .map_or(Vec::new(), |l| l.members.clone());
    let streams = rec
        .samples
        .iter()
        .map(|s| s.stream_rates.len())
        .max()
        .unwrap_or(0);
    let by_host = streams > NAMED_STREAMS;
    let hosts: Vec<&String> = {
        let mut seen: Vec<&String> = Vec::new();
        for (_, host) in &members {
            if !seen.contains(&host) {
                seen.push(host);
            }
        }
        seen
    };
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let caption = format!("{} per stream", text.title);
        let Some(mut chart) = frame(&root, caption, x_end, top, &text.units) else {
            return svg_fallback(&text.title);
        };
        for i in 0..streams {
            let member = members.get(i);
            let host_index = member.and_then(|(_, h)| hosts.iter().position(|x| *x == h));
            let color =
                Palette99::pick(if by_host { host_index.unwrap_or(i) } else { i }).to_rgba();
            let drawn = chart.draw_series(LineSeries::new(
                rec.samples
                    .iter()
                    .filter_map(|s| s.stream_rates.get(i).map(|r| (s.t, *r))),
                &color,
            ));
            let label = match (by_host, member) {
                (false, Some((id, host))) => Some(format!("stream {id}: {host}")),
                (false, None) => Some(format!("stream at {i}")),
                // One entry per load generator, on its first stream.
                (true, Some((_, host)))
                    if members.iter().position(|(_, h)| h == host) == Some(i) =>
                {
                    let n = members.iter().filter(|(_, h)| h == host).count();
                    Some(format!("{host} ({n} streams)"))
                }
                (true, _) => None,
            };
            if let (Some(label), Ok(series)) = (label, drawn) {
                series
                    .label(label)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            }
        }
        cross_stalls(&mut chart, rec, levels);
        legend(&mut chart, SeriesLabelPosition::UpperRight);
        let _ = root.present();
    }
    svg
}

/// A red cross on every sample of a level's window in which a stream its
/// health check marked stalled (or that moved nothing) did no work.
fn cross_stalls(chart: &mut Chart, rec: &Recording, levels: &[LevelSummary]) {
    let mut points = Vec::new();
    for (run, summary) in rec.levels.iter().zip(levels) {
        for stream in summary.health.unhealthy() {
            let Some(at) = run.members.iter().position(|(id, _)| *id == stream.id) else {
                continue;
            };
            points.extend(
                rec.samples
                    .iter()
                    .filter(|s| s.t >= run.start && s.t <= run.end)
                    .filter(|s| s.stream_moved.get(at) == Some(&0))
                    .map(|s| (s.t, s.stream_rates.get(at).copied().unwrap_or(0.0))),
            );
        }
    }
    if points.is_empty() {
        return;
    }
    let drawn = chart.draw_series(
        points
            .into_iter()
            .map(|p| Cross::new(p, 6, STALLED.stroke_width(2))),
    );
    if let Ok(series) = drawn {
        series
            .label("stalled stream: no work in this sample")
            .legend(|(x, y)| Cross::new((x + 10, y), 5, STALLED.stroke_width(2)));
    }
}

fn svg_fallback(title: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\"><text x=\"10\" y=\"20\">{}</text></svg>",
        escape(title)
    )
}

#[cfg(test)]
mod tests {
    use super::super::summary::{summarize, tests::stalling_recording};
    use super::*;

    fn texts(svg: &str) -> String {
        let doc = roxmltree::Document::parse(svg).expect("the SVG parses");
        let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
        texts.join("\n")
    }

    #[test]
    fn a_stalled_stream_is_flagged_on_both_charts() {
        let rec = stalling_recording(false);
        let levels = summarize(&rec, 2, false);
        let text = ChartText {
            title: "t".into(),
            units: "Trans/s".into(),
            ..ChartText::default()
        };
        let overall = texts(&overall(&rec, &levels, &text));
        assert!(overall.contains("1 stalled"), "{overall}");
        assert!(
            overall.contains("peak: 1 streams, 100 Trans/s"),
            "{overall}"
        );
        let streams = texts(&individual(&rec, &levels, &text));
        assert!(
            streams.contains("stalled stream: no work in this sample"),
            "{streams}"
        );
        assert!(
            streams.contains("stream 0: lg0") && streams.contains("stream 1: lg1"),
            "{streams}"
        );
        let healthy = stalling_recording(false);
        let mut levels = summarize(&healthy, 2, false);
        levels[1].health = Default::default();
        assert!(!texts(&individual(&healthy, &levels, &text)).contains("stalled"));
    }

    #[test]
    fn many_streams_are_grouped_by_load_generator() {
        let mut rec = stalling_recording(false);
        let wide = NAMED_STREAMS + 4;
        for level in &mut rec.levels {
            level.members = (0..wide).map(|i| (i, format!("lg{}", i % 2))).collect();
        }
        for sample in &mut rec.samples {
            sample.stream_rates = vec![10.0; wide];
            sample.stream_moved = vec![10; wide];
        }
        let levels = summarize(&rec, 2, false);
        let streams = texts(&individual(&rec, &levels, &ChartText::default()));
        let half = wide / 2;
        assert!(
            streams.contains(&format!("lg0 ({half} streams)")),
            "{streams}"
        );
        assert!(
            streams.contains(&format!("lg1 ({half} streams)")),
            "{streams}"
        );
        assert!(!streams.contains("stream 3:"), "{streams}");
    }
}
