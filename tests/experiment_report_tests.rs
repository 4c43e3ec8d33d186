//! The experiment's HTML report and charts checked as a reader would see
//! them: rendered by headless Chromium (installed from Debian's packages
//! when missing; skipped with a message where that fails) — the page's screenshot is not blank, the
//! tables' values and the context are in the DOM with the user's text
//! escaped, nothing scrolls the page sideways at 1280 or 400 px (wide tables
//! scroll inside their own box), it prints; every SVG parses, and each of
//! the write-up's charts renders to a PNG that is not blank. The page is
//! self-contained: no script, no external resource.
//!
//! Set NETPERF_NG_REPORT_KEEP=DIR to keep the outputs and PNGs in DIR.

mod common;
mod experiment_fixture;

use std::path::{Path, PathBuf};

use common::browser::{
    chromium, file_url, have_chromium, measure, measuring_copy, png_ink, screenshot_is_not_blank,
    WorkDir,
};
use experiment_fixture::{analysis, record, FAILURE_REASON, SEED};
use netperf_ng::experiment::analysis::key_metrics_present;
use netperf_ng::experiment::layout::{metric_heading, Layout};
use netperf_ng::experiment::tables::{cell_text, improvement_text};
use netperf_ng::experiment::{output, Analysis};
use netperf_ng::resultsdb::model::ExperimentRecord;

/// Writes the fixture's outputs into `dir`.
fn render(dir: &Path) -> Vec<PathBuf> {
    output::write_analysed(&record(), analysis(), dir).expect("write outputs")
}

#[test]
fn report_is_self_contained_and_escapes_user_text() {
    let work = WorkDir::new("self-contained");
    render(&work.path);
    let html = std::fs::read_to_string(work.path.join("report.html")).unwrap();
    for forbidden in [
        "<script", "<link", "<iframe", "<img", "@import", "url(", "src=", "href=", "https:",
    ] {
        assert!(!html.contains(forbidden), "report.html holds {forbidden:?}");
    }
    // The only URL is the SVG namespace.
    assert_eq!(
        html.matches("http://").count(),
        html.matches("http://www.w3.org/2000/svg").count()
    );
    assert!(html.contains("<h1>UDP vs TCP &lt;offloads&gt; &amp; &quot;sizes&quot;</h1>"));
    assert!(!html.contains("<offloads>"));
    assert!(
        html.contains("title = &quot;UDP vs TCP &lt;offloads&gt;&quot;"),
        "the plan is escaped"
    );
    assert!(html.contains("@media print"));
    assert!(html.contains("name=\"viewport\""));
}

#[test]
fn every_svg_parses_and_is_inlined() {
    let work = WorkDir::new("svg");
    let written = render(&work.path);
    let svgs: Vec<&PathBuf> = written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .collect();
    let metrics = key_metrics_present(&record());
    assert_eq!(
        svgs.len(),
        metrics.len() * 2,
        "a line chart and a percentile chart per key metric"
    );
    let html = std::fs::read_to_string(work.path.join("report.html")).unwrap();
    for path in &svgs {
        let text = std::fs::read_to_string(path).unwrap();
        let doc =
            roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        assert!(
            root.attribute("viewBox").is_some(),
            "{} scales",
            path.display()
        );
        let texts: String = doc
            .descendants()
            .filter(|n| n.is_text())
            .filter_map(|n| n.text())
            .collect();
        assert!(
            texts.contains("percentile") || texts.contains("95 % CI"),
            "{}: {texts}",
            path.display()
        );
        assert!(
            html.contains(text.trim()),
            "{} is inlined in the page",
            path.display()
        );
    }
    // Every SVG inside the page parses on its own too.
    let inline: Vec<&str> = html
        .split("<svg")
        .skip(1)
        .map(|rest| rest.split("</svg>").next().unwrap())
        .collect();
    assert_eq!(inline.len(), svgs.len());
    for piece in inline {
        let svg = format!("<svg{piece}</svg>");
        roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("inline SVG: {e}"));
    }
}

/// What a reader must find in the page: the context and every table's
/// values as the library formats them.
fn expected_texts(record: &ExperimentRecord, analysis: &Analysis) -> Vec<String> {
    let mut texts: Vec<String> = [
        record.id.as_str(),
        "2024-05-01T10:00:00Z",
        "198.18.0.2 (port 12865)",
        "virtio_net",
        "5.11.0-1018-gcp",
        "netagg experiment 'limiters plan.toml'",
        "35 ok, 1 failed, 1 interrupted",
        "0.1.0 (git 0123456789ab)",
        "2400.0 s",
        "Ratios between levels",
        "Percentiles per cell",
    ]
    .map(String::from)
    .to_vec();
    texts.push(SEED.to_string());
    texts.push(format!(
        "netagg experiment 'limiters plan.toml' --seed {SEED}"
    ));
    // Text nodes keep quotes as they are.
    texts.push(FAILURE_REASON.replace('&', "&amp;"));
    let layout = Layout::of(record);
    for metric in key_metrics_present(record) {
        texts.push(metric_heading(record, metric));
        for row in &layout.rows {
            for column in &layout.columns {
                texts.push(cell_text(
                    analysis,
                    &layout.cell(row, column),
                    metric,
                    record.replicates,
                ));
            }
        }
        for column in &layout.columns {
            // The page adds the interval after the value: "3.84 [3.79, 3.88] *".
            let text = improvement_text(analysis.improvement(metric, column));
            texts.push(text.split(' ').next().unwrap().to_string());
        }
    }
    texts
}

#[test]
fn chromium_renders_the_report_with_its_tables_and_context() {
    if !have_chromium() {
        return;
    }
    let work = WorkDir::new("dom");
    render(&work.path);
    let page = work.path.join("report.html");
    let dom = chromium(
        &work.path,
        &file_url(&page),
        &[
            "--dump-dom".to_string(),
            "--window-size=1280,2000".to_string(),
        ],
    );
    assert!(dom.contains("</html>"), "a whole DOM: {} bytes", dom.len());
    assert!(
        dom.contains("UDP vs TCP &lt;offloads&gt; &amp; \"sizes\"</h1>"),
        "the escaped title is text"
    );
    assert!(!dom.contains("<offloads"), "no element came from the title");
    for text in expected_texts(&record(), analysis()) {
        assert!(dom.contains(&text), "the page does not show {text:?}");
    }
    assert_eq!(
        dom.matches("<svg").count(),
        key_metrics_present(&record()).len() * 2
    );
    screenshot_is_not_blank(
        &work.path,
        &file_url(&page),
        &work.path.join("report-1280.png"),
        (1280, 2000),
        0.05,
    );
    // The print stylesheet gives a PDF of several pages.
    let pdf = work.path.join("report.pdf");
    chromium(
        &work.path,
        &file_url(&page),
        &[
            format!("--print-to-pdf={}", pdf.display()),
            "--no-pdf-header-footer".into(),
        ],
    );
    let bytes = std::fs::read(&pdf).expect("PDF written");
    assert!(bytes.starts_with(b"%PDF"));
    // The page tree's /Count is the number of pages.
    let text = String::from_utf8_lossy(&bytes);
    let pages = text
        .split("/Count ")
        .skip(1)
        .filter_map(|rest| {
            rest.split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse::<u32>()
                .ok()
        })
        .max()
        .unwrap_or(0);
    assert!(pages >= 3, "a printed report of several pages, got {pages}");
}

#[test]
fn the_page_never_scrolls_sideways_at_1280_or_400_px() {
    if !have_chromium() {
        return;
    }
    let work = WorkDir::new("widths");
    render(&work.path);
    let copy = work.path.join("measure.html");
    measuring_copy(&work.path.join("report.html"), &copy);
    for width in [1280, 400] {
        let (viewport, scroll, client, scrolling, out) = measure(&work.path, &copy, width);
        eprintln!(
            "{width} px: document {scroll} px for {client}, {scrolling} tables scroll in their box"
        );
        assert_eq!(viewport, width, "the page was laid out {width} px wide");
        assert!(
            scroll <= client,
            "at {width} px the page is {scroll} px wide for {client}: {out}"
        );
        assert!(out.is_empty(), "at {width} px these stick out: {out}");
        match width {
            // At a desktop width every table of this experiment fits.
            1280 => assert_eq!(scrolling, 0, "tables scroll at 1280 px"),
            // The measurement is real: on a phone the wide tables do
            // scroll, inside their own box.
            _ => assert!(
                scrolling > 0,
                "no table scrolls inside its box at {width} px"
            ),
        }
    }
}

#[test]
fn the_write_ups_charts_render_as_pictures() {
    if !have_chromium() {
        return;
    }
    let work = WorkDir::new("charts");
    render(&work.path);
    for name in [
        "throughput",
        "local_sd",
        "remote_sd",
        "throughput-percentiles",
    ] {
        let svg = work.path.join(format!("{name}.svg"));
        let png = work.path.join(format!("{name}.png"));
        screenshot_is_not_blank(&work.path, &file_url(&svg), &png, (960, 540), 0.02);
        // Four lines in four colours at least, beside black, grey and white.
        let (colours, _, _) = png_ink(&png);
        assert!(colours >= 12, "{name}: {colours} colours");
    }
}
