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

mod experiment_fixture;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use experiment_fixture::{analysis, record, FAILURE_REASON, SEED};
use netperf_ng::experiment::analysis::key_metrics_present;
use netperf_ng::experiment::layout::{metric_heading, Layout};
use netperf_ng::experiment::model::ExperimentRecord;
use netperf_ng::experiment::tables::{cell_text, improvement_text};
use netperf_ng::experiment::{output, Analysis};

const CHROMIUM: &str = "/usr/bin/chromium";
/// The longest one Chromium run may take before the test kills it.
const CHROMIUM_TIME_LIMIT: Duration = Duration::from_secs(90);

/// A work directory: a fresh temporary one removed on drop, or the one
/// NETPERF_NG_REPORT_KEEP names, kept.
struct WorkDir {
    path: PathBuf,
    keep: bool,
}

impl WorkDir {
    fn new(name: &str) -> WorkDir {
        if let Some(dir) = std::env::var_os("NETPERF_NG_REPORT_KEEP") {
            let path = PathBuf::from(dir).join(name);
            std::fs::create_dir_all(&path).expect("keep directory");
            return WorkDir { path, keep: true };
        }
        let path =
            std::env::temp_dir().join(format!("netperf-ng-report-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temporary directory");
        WorkDir { path, keep: false }
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Writes the fixture's outputs into `dir`.
fn render(dir: &Path) -> Vec<PathBuf> {
    output::write_analysed(&record(), analysis(), dir).expect("write outputs")
}

/// Whether Chromium is here: installed from Debian's packages when missing
/// (once per run, bounded in time), else the browser checks are skipped
/// with a message.
fn have_chromium() -> bool {
    static CHECKED: std::sync::Mutex<Option<bool>> = std::sync::Mutex::new(None);
    let mut checked = CHECKED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(known) = *checked {
        return known;
    }
    if !Path::new(CHROMIUM).exists() {
        let install = "apt-get install -y --no-install-recommends chromium \
             || (apt-get update && apt-get install -y --no-install-recommends chromium)";
        let _ = std::process::Command::new("timeout")
            .args(["600", "sh", "-c", install])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
    let known = Path::new(CHROMIUM).exists();
    if !known {
        eprintln!("SKIPPED: {CHROMIUM} is not installed and could not be; the report was not checked in a browser");
    }
    *checked = Some(known);
    known
}

/// Runs Chromium headless on `url` with `extra` arguments, its own profile
/// directory under `work`, and a time limit; returns what it printed.
fn chromium(work: &Path, url: &str, extra: &[String]) -> String {
    let profile = work.join(format!("profile-{}", extra.join("").len()));
    let (stdout_path, stderr_path) = (work.join("chromium.out"), work.join("chromium.err"));
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(File::create(&stdout_path).expect("stdout file"))
        .stderr(File::create(&stderr_path).expect("stderr file"))
        .spawn()
        .expect("start chromium");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break status;
        }
        if started.elapsed() > CHROMIUM_TIME_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {CHROMIUM_TIME_LIMIT:?} on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = std::fs::remove_dir_all(&profile);
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(
        status.success(),
        "chromium failed on {url}: {status}\n{stderr}"
    );
    std::fs::read_to_string(&stdout_path).unwrap_or_default()
}

fn file_url(path: &Path) -> String {
    format!(
        "file://{}",
        path.canonicalize().expect("absolute path").display()
    )
}

/// (distinct colours, share of pixels that are not white) of a PNG.
fn png_ink(path: &Path) -> (usize, f64, (u32, u32)) {
    let file = std::io::BufReader::new(File::open(path).expect("screenshot written"));
    let mut reader = png::Decoder::new(file).read_info().expect("a PNG");
    let mut buffer = vec![0; reader.output_buffer_size().expect("buffer size")];
    let info = reader.next_frame(&mut buffer).expect("decode PNG");
    let channels = info.color_type.samples();
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "8-bit screenshot");
    let mut colours = std::collections::HashSet::new();
    let (mut ink, mut total) = (0usize, 0usize);
    for row in buffer[..info.line_size * info.height as usize].chunks(info.line_size) {
        for pixel in row[..info.width as usize * channels].chunks(channels) {
            let rgb = [
                pixel[0],
                pixel[channels.min(3) - 2],
                pixel[channels.min(3) - 1],
            ];
            colours.insert(rgb);
            total += 1;
            if rgb.iter().any(|&c| c < 240) {
                ink += 1;
            }
        }
    }
    (
        colours.len(),
        ink as f64 / total.max(1) as f64,
        (info.width, info.height),
    )
}

/// Screenshots `url` at `width` x `height` into `png` and checks it is a
/// picture, not a blank page.
fn screenshot_is_not_blank(
    work: &Path,
    url: &str,
    png: &Path,
    (width, height): (u32, u32),
    min_ink: f64,
) {
    chromium(
        work,
        url,
        &[
            format!("--window-size={width},{height}"),
            format!("--screenshot={}", png.display()),
        ],
    );
    let (colours, ink, size) = png_ink(png);
    assert_eq!(size, (width, height), "{}", png.display());
    assert!(colours >= 8, "{}: only {colours} colours", png.display());
    assert!(
        ink >= min_ink,
        "{}: only {:.1} % of the pixels are not white",
        png.display(),
        ink * 100.0
    );
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
        "0.1.0",
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

/// A test-only copy of the page with a script that, once laid out, reports
/// to its parent the viewport width, the document's scroll width, the
/// elements that stick out of the viewport outside a scrolling box, and how
/// many scrolling boxes do scroll. The report itself has no script.
fn measuring_copy(page: &Path, copy: &Path) {
    const PROBE: &str = "<script>addEventListener('load',()=>{const d=document.documentElement;\
        const out=[...document.querySelectorAll('body *')].filter(e=>!e.closest('.scroll')&&\
        e.getBoundingClientRect().right>d.clientWidth+1).slice(0,5).map(e=>e.tagName+'.'+e.className);\
        const scrolling=[...document.querySelectorAll('.scroll')].filter(e=>e.scrollWidth>e.clientWidth).length;\
        parent.postMessage([innerWidth,d.scrollWidth,d.clientWidth,scrolling,out.join(',')].join('|'),'*');});\
        </script></body>";
    let html = std::fs::read_to_string(page)
        .unwrap()
        .replace("</body>", PROBE);
    std::fs::write(copy, html).unwrap();
}

/// Headless Chromium will not make a window narrower than 500 px, so the
/// page is measured in a frame of exactly `width` px inside a wider window;
/// the frame's report comes back by message into the outer page's DOM.
fn measure(work: &Path, copy: &Path, width: u32) -> (u32, u32, u32, u32, String) {
    let frame = work.join(format!("frame-{width}.html"));
    let name = copy.file_name().unwrap().to_string_lossy();
    std::fs::write(
        &frame,
        format!(
            "<!DOCTYPE html><html><body style=\"margin:0\"><iframe src=\"{name}\" \
             style=\"width:{width}px;height:1200px;border:0;display:block\"></iframe><pre id=\"probe\"></pre>\
             <script>addEventListener('message',e=>{{document.getElementById('probe').textContent=e.data;}});\
             </script></body></html>"
        ),
    )
    .unwrap();
    let dom = chromium(
        work,
        &file_url(&frame),
        &[
            "--dump-dom".to_string(),
            format!("--window-size={},1400", width + 200),
            "--run-all-compositor-stages-before-draw".to_string(),
            "--virtual-time-budget=10000".to_string(),
        ],
    );
    let probe = dom
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| panic!("the probe did not report at {width} px:\n{dom}"));
    let parts: Vec<&str> = probe.split('|').collect();
    let number = |i: usize| {
        parts[i]
            .parse::<u32>()
            .unwrap_or_else(|_| panic!("probe {probe:?}"))
    };
    (
        number(0),
        number(1),
        number(2),
        number(3),
        parts[4].to_string(),
    )
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
