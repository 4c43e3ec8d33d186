use super::scale::STEPS;
use super::*;
use crate::chart::tests::texts;

/// `n` endpoints "node-0".., in `zones` zones round robin (none if 0),
/// every value 1000 but the diagonal, with `set` changes.
fn grid(n: usize, zones: usize, set: &[(usize, usize, Option<f64>)]) -> Owned {
    let labels: Vec<String> = (0..n).map(|i| format!("node-{i}")).collect();
    let zones = (0..n)
        .map(|i| (zones > 0).then(|| format!("zone-{}", i % zones)))
        .collect();
    let mut values: Vec<Option<f64>> = (0..n * n)
        .map(|k| (k / n != k % n).then_some(1000.0 + (k % 7) as f64))
        .collect();
    for &(src, dst, v) in set {
        values[src * n + dst] = v;
    }
    Owned {
        labels,
        zones,
        values,
        marks: Vec::new(),
        higher_is_better: true,
    }
}

struct Owned {
    labels: Vec<String>,
    zones: Vec<Option<String>>,
    values: Vec<Option<f64>>,
    marks: Vec<Mark>,
    higher_is_better: bool,
}

impl Owned {
    fn svg(&self) -> String {
        heatmap_svg(&Heatmap {
            title: "Throughput <TCP_STREAM>",
            unit: "Mbit/s",
            labels: &self.labels,
            zones: &self.zones,
            values: &self.values,
            higher_is_better: self.higher_is_better,
            marks: &self.marks,
        })
    }
}

/// The fill of the cell whose tooltip starts with `src → dst:`.
fn cell_fill(svg: &str, src: &str, dst: &str) -> String {
    let doc = roxmltree::Document::parse(svg).unwrap();
    let tip = format!("{src} → {dst}:");
    let rect = doc
        .descendants()
        .find(|n| {
            n.has_tag_name("rect")
                && n.first_child()
                    .and_then(|t| t.text())
                    .is_some_and(|t| t.starts_with(&tip))
        })
        .unwrap_or_else(|| panic!("no cell {tip}"));
    rect.attribute("fill").unwrap().to_string()
}

/// The outlines the marks drew (each on its white halo).
fn outlines(svg: &str) -> usize {
    svg.matches("fill=\"none\" stroke=\"#ffffff\"").count()
}

#[test]
fn the_same_grid_draws_the_same_bytes() {
    let mut map = grid(9, 3, &[(1, 2, None), (4, 5, Some(200.0))]);
    map.marks = vec![
        Mark::Row(3),
        Mark::Cell { src: 4, dst: 5 },
        Mark::Block {
            from: "zone-0".into(),
            to: "zone-1".into(),
        },
    ];
    let first = map.svg();
    assert_eq!(first, map.svg());
    let again = Owned {
        labels: map.labels.clone(),
        zones: map.zones.clone(),
        values: map.values.clone(),
        marks: map.marks.clone(),
        higher_is_better: true,
    };
    assert_eq!(first, again.svg());
    texts(&first);
}

#[test]
fn every_name_is_escaped_and_control_characters_dropped() {
    let mut map = grid(3, 2, &[]);
    map.labels[0] = "<script>alert('x')</script>".into();
    map.labels[1] = "a&b \"c\"\u{0}\u{1b}".into();
    map.zones[2] = Some("z<1>&".into());
    let svg = map.svg();
    assert!(!svg.contains("<script>"), "raw markup in {svg}");
    assert!(!svg.contains('\u{0}') && !svg.contains('\u{1b}'));
    let texts = texts(&svg);
    for want in [
        "<script>alert('x')</script>",
        "a&b \"c\"\u{fffd}\u{fffd}",
        "z<1>&",
        "Throughput <TCP_STREAM>",
    ] {
        assert!(texts.iter().any(|t| t == want), "no {want:?} in {texts:?}");
    }
}

#[test]
fn each_kind_of_mark_is_outlined_and_names_outside_are_ignored() {
    let mut map = grid(6, 2, &[]);
    assert_eq!(outlines(&map.svg()), 0);
    assert!(!texts(&map.svg())
        .iter()
        .any(|t| t == "a finding (outlined)"));
    map.marks = vec![
        Mark::Cell { src: 0, dst: 1 },
        Mark::Row(2),
        Mark::Column(3),
        Mark::Block {
            from: "zone-0".into(),
            to: "zone-1".into(),
        },
    ];
    let svg = map.svg();
    assert_eq!(outlines(&svg), 4);
    assert!(texts(&svg).iter().any(|t| t == "a finding (outlined)"));
    // Names a finding points at are bold.
    assert!(svg.contains("font-weight=\"700\"><title>node-2</title>node-2</text>"));
    map.marks = vec![
        Mark::Cell { src: 0, dst: 6 },
        Mark::Row(60),
        Mark::Column(usize::MAX),
        Mark::Block {
            from: "zone-0".into(),
            to: "nowhere".into(),
        },
    ];
    assert_eq!(outlines(&map.svg()), 0);
}

#[test]
fn a_block_outlines_exactly_its_zones() {
    let mut map = grid(4, 2, &[]);
    map.marks = vec![Mark::Block {
        from: "zone-1".into(),
        to: "zone-0".into(),
    }];
    let svg = map.svg();
    let layout = Layout::of(&Heatmap {
        title: "Throughput <TCP_STREAM>",
        unit: "Mbit/s",
        labels: &map.labels,
        zones: &map.zones,
        values: &map.values,
        higher_is_better: true,
        marks: &map.marks,
    });
    // zone-0 holds node-0 and node-2 (places 0, 1); zone-1 the others.
    assert_eq!(layout.order, [0, 2, 1, 3]);
    let (x, y, w, h) = layout.rect((2, 2), (0, 2));
    let outline = format!(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#000000\"",
        px(x - 1.0),
        px(y - 1.0),
        px(w + 2.0),
        px(h + 2.0)
    );
    assert!(svg.contains(&outline), "no {outline} in {svg}");
}

#[test]
fn missing_cells_are_hatched_and_the_legend_says_so() {
    let map = grid(
        4,
        0,
        &[(0, 1, None), (2, 3, Some(f64::NAN)), (3, 0, Some(-1.0))],
    );
    let svg = map.svg();
    let hatch = format!("url(#{})", Layout::of(&heatmap(&map)).hatch);
    for (src, dst) in [(0, 1), (2, 3), (3, 0)] {
        let (src, dst) = (format!("node-{src}"), format!("node-{dst}"));
        assert_eq!(cell_fill(&svg, &src, &dst), hatch);
    }
    assert_eq!(cell_fill(&svg, "node-1", "node-1"), SELF_FILL);
    assert_ne!(cell_fill(&svg, "node-1", "node-0"), hatch);
    let texts = texts(&svg);
    assert!(texts
        .iter()
        .any(|t| t == "no value (not measured, or failed)"));
    assert!(texts
        .iter()
        .any(|t| t == "node-0 → node-1: no value (not measured, or failed)"));
    assert!(texts.iter().any(|t| t == "the endpoint itself"));
    // No value at all: drawn, and the legend says there is nothing to colour.
    let empty = grid(
        3,
        0,
        &[
            (0, 1, None),
            (0, 2, None),
            (1, 0, None),
            (1, 2, None),
            (2, 0, None),
            (2, 1, None),
        ],
    );
    assert!(texts_of(&empty).iter().any(|t| t == "no value to colour"));
}

fn heatmap(map: &Owned) -> Heatmap<'_> {
    Heatmap {
        title: "Throughput <TCP_STREAM>",
        unit: "Mbit/s",
        labels: &map.labels,
        zones: &map.zones,
        values: &map.values,
        higher_is_better: map.higher_is_better,
        marks: &map.marks,
    }
}

fn texts_of(map: &Owned) -> Vec<String> {
    texts(&map.svg())
}

#[test]
fn worse_is_red_whichever_way_the_metric_is_better() {
    let worst = hex(colour(STEPS));
    let best = hex(colour(-STEPS));
    assert_eq!(worst, "#67001f", "the worse end is dark red");
    assert_eq!(best, "#2166ac", "the better end is blue");
    // Throughput: the low cell is worse.
    let mut map = grid(5, 0, &[(1, 2, Some(250.0)), (3, 4, Some(4000.0))]);
    let svg = map.svg();
    assert_eq!(cell_fill(&svg, "node-1", "node-2"), worst);
    assert_eq!(cell_fill(&svg, "node-3", "node-4"), best);
    assert!(texts(&svg)
        .iter()
        .any(|t| t == "red is worse (lower is worse), blue better"));
    // Latency: the high cell is worse.
    map.higher_is_better = false;
    let svg = map.svg();
    assert_eq!(cell_fill(&svg, "node-1", "node-2"), best);
    assert_eq!(cell_fill(&svg, "node-3", "node-4"), worst);
    assert!(texts(&svg)
        .iter()
        .any(|t| t == "red is worse (higher is worse), blue better"));
}

#[test]
fn the_scale_reads_in_the_unit_from_worse_to_better() {
    let values = [Some(100.0), Some(100.0), Some(50.0), Some(200.0), None];
    let scale = Scale::of(&values, true).unwrap();
    assert_eq!(scale.median, 100.0);
    assert!(
        (scale.value_at(1.0) - 50.0).abs() < 1e-9,
        "worse end: lower"
    );
    assert!((scale.value_at(-1.0) - 200.0).abs() < 1e-9);
    assert_eq!(scale.step(50.0), STEPS);
    assert_eq!(scale.step(100.0), 0);
    let latency = Scale::of(&values, false).unwrap();
    assert!(
        (latency.value_at(1.0) - 200.0).abs() < 1e-9,
        "worse end: higher"
    );
    assert_eq!(latency.step(50.0), -STEPS);
    // A clean grid's noise stays pale: the scale spans at least ±25 %.
    let clean = Scale::of(&[Some(100.0), Some(103.0), Some(97.0)], true).unwrap();
    assert!(clean.step(97.0).abs() <= 3, "{}", clean.step(97.0));
    // A zero is the worst throughput, drawn at the end and said to be past it.
    let zero = Scale::of(&[Some(100.0), Some(0.0), Some(90.0)], true).unwrap();
    assert_eq!(zero.step(0.0), STEPS);
    assert!(zero.past_worse && !zero.past_better);
    assert!(Scale::of(&[None, Some(0.0), Some(f64::INFINITY)], true).is_none());
    let svg = grid(3, 0, &[(0, 1, Some(0.0))]).svg();
    let texts = texts(&svg);
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("≤ ") && t.ends_with("(-20%)")),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t.ends_with("(median)")));
    assert!(texts.iter().any(|t| t == "Colour: Mbit/s"));
}

#[test]
fn small_grids_print_their_figures_large_ones_do_not() {
    let small = grid(3, 0, &[(0, 1, Some(9410.0))]);
    let texts_small = texts_of(&small);
    assert!(texts_small.iter().any(|t| t == "9.41k"), "{texts_small:?}");
    assert!(texts_small
        .iter()
        .any(|t| t == "node-0 → node-1: 9.41k Mbit/s"));
    let middling = grid(30, 3, &[(0, 1, Some(9410.0))]);
    let texts_mid = texts_of(&middling);
    assert!(!texts_mid.iter().any(|t| t == "9.41k"));
    assert!(
        texts_mid.iter().any(|t| t == "node-29"),
        "every name written"
    );
}

#[test]
fn one_to_three_endpoints_and_none_draw() {
    for n in 0..=3 {
        for zones in [0, 1, 2] {
            let mut map = grid(n, zones, &[]);
            map.marks = vec![Mark::Row(0), Mark::Cell { src: 0, dst: 1 }];
            let texts = texts_of(&map);
            assert!(texts.iter().any(|t| t
                == &format!(
                "Rows: the source (sending) · columns: the destination (receiving) · {n} endpoints"
            )));
        }
    }
    // Fewer zones or values than names: the rest are not known.
    let map = Owned {
        labels: vec!["a".into(), "b".into(), "c".into()],
        zones: vec![Some("z".into())],
        values: vec![None, Some(1.0)],
        marks: vec![],
        higher_is_better: false,
    };
    let texts = texts_of(&map);
    assert!(texts.iter().any(|t| t == "zone not known"), "{texts:?}");
}

#[test]
fn hundreds_of_endpoints_draw_as_runs_with_only_the_findings_named() {
    let mut map = grid(300, 4, &[(7, 8, None)]);
    for dst in 0..300 {
        if dst != 5 {
            map.values[5 * 300 + dst] = Some(100.0);
        }
    }
    map.marks = vec![Mark::Row(5), Mark::Cell { src: 7, dst: 8 }];
    let svg = map.svg();
    assert!(svg.len() < 3_000_000, "{} bytes", svg.len());
    assert!(!svg.contains(" → "), "no tooltip per cell");
    assert!(svg.contains("url(#hatch-"));
    assert!(svg.contains(&hex(colour(STEPS))), "the bad row is dark red");
    let texts = texts(&svg);
    for named in ["node-5", "node-7", "node-8", "zone-3"] {
        assert!(texts.iter().any(|t| t == named), "no {named}");
    }
    assert!(!texts.iter().any(|t| t == "node-6"));
    assert_eq!(outlines(&svg), 2);
    // A row of one colour is at most a run on each side of the diagonal
    // (and of the missing cell).
    let runs: usize = svg
        .lines()
        .filter(|l| l.starts_with("<path fill="))
        .map(|l| l.matches('z').count())
        .sum();
    assert!(runs <= 3 * 300 + 2, "{runs} runs");
}

#[test]
fn ids_are_the_titles_so_two_maps_on_a_page_keep_their_own() {
    let map = grid(3, 0, &[]);
    let a = Layout::of(&heatmap(&map)).hatch;
    let mut other = heatmap(&map);
    other.title = "Latency";
    assert_ne!(a, Layout::of(&other).hatch);
    assert_eq!(a, Layout::of(&heatmap(&map)).hatch);
}

#[test]
fn long_names_are_cut_with_the_whole_name_as_the_tooltip() {
    let mut map = grid(2, 0, &[]);
    map.labels[0] = "x".repeat(100);
    let texts = texts_of(&map);
    let cut = format!("{}…", "x".repeat(LONGEST_NAME - 1));
    assert!(texts.iter().any(|t| t == &cut));
    assert!(texts.iter().any(|t| t == &"x".repeat(100)));
    assert_eq!(shortened("abc", 0), "");
    assert_eq!(shortened("abc", 3), "abc");
    assert_eq!(shortened("abcd", 3), "ab…");
}
