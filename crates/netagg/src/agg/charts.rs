//! netagg's pictures — what post_proc.py and rrdtool drew, with no rrdtool,
//! and explaining themselves: the overall chart (the per-sample aggregate,
//! each level's average over its window, the settling margins outside the
//! windows shaded, level starts labelled with their stream counts, the peak
//! level marked, levels with stalled streams flagged) and the per-stream
//! chart (a legend naming each stream's load generator, or one colour per
//! load generator when there are many streams; stalled samples crossed),
//! described for the one chart builder (`netperf_pages::chart`). The page
//! is `report`.

use super::runner::Recording;
use super::summary::LevelSummary;
use netperf_pages::chart::{self, Axis, Bands, Look, Markers, Note, Plot, Series, Shape};
use netperf_pages::units::si_label;

/// What the user asked to see on the charts.
#[derive(Debug, Clone, Default)]
pub struct ChartText {
    pub title: String,
    pub annotation: String,
    pub units: String,
}

/// A titled chart with seconds across and the units up.
fn frame(rec: &Recording, title: String, units: &str) -> Plot {
    let x_end = rec.samples.last().map_or(1.0, |s| s.t).max(1.0);
    let x = Axis::si("seconds since the run started").range(0.0, x_end);
    Plot::new(title, x, Axis::si(units))
}

/// A note at `x`, `height` up the plot.
fn note(text: String, x: f64, height: f64, colour: usize, size: u32) -> Note {
    Note {
        text,
        x,
        height,
        colour,
        size,
    }
}

/// The overall chart as SVG text.
pub fn overall(rec: &Recording, levels: &[LevelSummary], text: &ChartText) -> String {
    let title = match text.title.is_empty() {
        true => "Aggregate".to_string(),
        false => text.title.clone(),
    };
    let mut plot = frame(rec, title, &text.units);
    let aggregate = rec.samples.iter().map(|s| (s.t, s.aggregate)).collect();
    let aggregate = Series::line(aggregate, Look::new(chart::BLUE, 0));
    plot.series.push(aggregate.named("aggregate per interval"));
    plot.bands = Some(settling(rec, levels));
    for (index, (run, summary)) in rec.levels.iter().zip(levels).enumerate() {
        // The level's average, drawn over the window it is computed on.
        let (from, to) = summary.window;
        let average = vec![(from, summary.average), (to, summary.average)];
        let average = Series::line(average, Look::new(chart::VERMILLION, 0));
        plot.series.push(match index {
            0 => average.named("level average (window)"),
            _ => average,
        });
        // Level start marker, labelled with the stream count.
        plot.rules.push(run.start);
        let streams = format!("{} streams", run.streams);
        plot.notes
            .push(note(streams, run.start, 0.97, chart::BLACK_INK, 12));
        let stalled = summary.health.unhealthy().count();
        if stalled > 0 {
            let stalled = format!("{stalled} stalled");
            plot.notes
                .push(note(stalled, run.start, 0.91, chart::VERMILLION, 12));
        }
    }
    plot.markers.extend(peak(levels, &text.units));
    if !text.annotation.is_empty() {
        let x = plot.x.range.map_or(0.0, |(_, end)| end * 0.02);
        let annotation = text.annotation.clone();
        plot.notes
            .push(note(annotation, x, 0.05, chart::BLACK_INK, 14));
    }
    plot.svg()
}

/// Each level's time outside its window — setting up, settling, winding
/// down — shaded, so the averages' windows stand out.
fn settling(rec: &Recording, levels: &[LevelSummary]) -> Bands {
    let spans = rec
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
    Bands {
        name: "settling, outside the averaged window".into(),
        spans,
    }
}

/// A ring on the peak level's average, with its stream count and value.
fn peak(levels: &[LevelSummary], units: &str) -> Option<Markers> {
    let peak = super::summary::peak(levels).and_then(|p| levels.get(p))?;
    Some(Markers {
        name: format!(
            "peak: {} streams, {} {units}",
            peak.streams,
            si_label(peak.average)
        ),
        shape: Shape::Ring,
        colour: chart::GREEN,
        points: vec![((peak.window.0 + peak.window.1) / 2.0, peak.average)],
    })
}

/// Most streams the per-stream chart names one by one; beyond it, one
/// colour (and legend entry) per load generator.
const NAMED_STREAMS: usize = 12;

/// One line per stream, with a legend saying which load generator each one
/// ran against, and crosses where a stream the level's health check found
/// stalled moved nothing.
pub fn individual(rec: &Recording, levels: &[LevelSummary], text: &ChartText) -> String {
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
    let mut hosts: Vec<&String> = Vec::new();
    for (_, host) in &members {
        if !hosts.contains(&host) {
            hosts.push(host);
        }
    }
    let mut plot = frame(rec, format!("{} per stream", text.title), &text.units);
    for i in 0..streams {
        let member = members.get(i);
        let host_index = member.and_then(|(_, h)| hosts.iter().position(|x| *x == h));
        let colour = if by_host { host_index.unwrap_or(i) } else { i };
        let rates = rec
            .samples
            .iter()
            .filter_map(|s| s.stream_rates.get(i).map(|r| (s.t, *r)))
            .collect();
        let mut line = Series::line(rates, Look::new(colour, 0));
        line.width = 1;
        line.name = match (by_host, member) {
            (false, Some((id, host))) => Some(format!("stream {id}: {host}")),
            (false, None) => Some(format!("stream at {i}")),
            // One entry per load generator, on its first stream.
            (true, Some((_, host))) if members.iter().position(|(_, h)| h == host) == Some(i) => {
                let n = members.iter().filter(|(_, h)| h == host).count();
                Some(format!("{host} ({n} streams)"))
            }
            (true, _) => None,
        };
        plot.series.push(line);
    }
    plot.markers.push(stalls(rec, levels));
    plot.svg()
}

/// A cross on every sample of a level's window in which a stream its
/// health check marked stalled (or that moved nothing) did no work.
fn stalls(rec: &Recording, levels: &[LevelSummary]) -> Markers {
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
    Markers {
        name: "stalled stream: no work in this sample".into(),
        shape: Shape::Cross,
        colour: chart::VERMILLION,
        points,
    }
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
