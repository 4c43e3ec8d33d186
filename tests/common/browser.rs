//! Reading a report as a reader would: headless Chromium (installed from
//! Debian's packages when missing; the checks skip, saying why, where that
//! fails and in the fast tier) renders a page to its DOM, a screenshot or a PDF, bounded in
//! time; a PNG's ink tells a picture from a blank page; and a test-only copy
//! of a page measures, in a frame of an exact width, whether anything
//! scrolls the page sideways. Set NETPERF_NG_REPORT_KEEP=DIR to keep the
//! outputs and PNGs in DIR.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
/// The longest one Chromium run may take before the test kills it.
const CHROMIUM_TIME_LIMIT: Duration = Duration::from_secs(90);

/// A work directory: a fresh temporary one removed on drop, or the one
/// NETPERF_NG_REPORT_KEEP names, kept.
pub struct WorkDir {
    pub path: PathBuf,
    keep: bool,
}

impl WorkDir {
    pub fn new(name: &str) -> WorkDir {
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

/// Whether Chromium is here: installed from Debian's packages when missing
/// (once per run, bounded in time). Where it cannot be, and in the fast
/// tier, the running test skips its browser checks (the caller leaves them
/// out).
pub fn have_chromium() -> bool {
    if super::fast_tier_skips("needs chromium (the browser checks)") {
        return false;
    }
    let present = || Path::new(CHROMIUM).exists();
    match super::install::ensure(super::install::From::Apt, "chromium", present) {
        Ok(()) => true,
        Err(why) => {
            super::skip(format!("the report was not checked in a browser: {why}"));
            false
        }
    }
}

/// Runs Chromium headless on `url` with `extra` arguments, its own profile
/// directory under `work`, and a time limit; returns what it printed.
pub fn chromium(work: &Path, url: &str, extra: &[String]) -> String {
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

pub fn file_url(path: &Path) -> String {
    format!(
        "file://{}",
        path.canonicalize().expect("absolute path").display()
    )
}

/// (distinct colours, share of pixels that are not white) of a PNG.
pub fn png_ink(path: &Path) -> (usize, f64, (u32, u32)) {
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
pub fn screenshot_is_not_blank(
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

/// A test-only copy of the page with a script that, once laid out, reports
/// to its parent the viewport width, the document's scroll width, the
/// elements that stick out of the viewport outside a scrolling box, and how
/// many scrolling boxes do scroll. The report itself has no script.
pub fn measuring_copy(page: &Path, copy: &Path) {
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
pub fn measure(work: &Path, copy: &Path, width: u32) -> (u32, u32, u32, u32, String) {
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

/// The page's DOM shows `texts`; it is a picture, not a blank page; nothing
/// scrolls it sideways at 1280 or 400 px; it prints.
pub fn reads_well(page: &Path, texts: &[String]) {
    let work = WorkDir::new(&format!(
        "read-{}",
        page.file_stem().unwrap().to_string_lossy()
    ));
    let dom = chromium(
        &work.path,
        &file_url(page),
        &["--dump-dom".into(), "--window-size=1280,2000".into()],
    );
    assert!(dom.contains("</html>"));
    for want in texts {
        let want = want
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        assert!(
            dom.contains(&want),
            "the rendered page does not show {want:?}"
        );
    }
    screenshot_is_not_blank(
        &work.path,
        &file_url(page),
        &work.path.join("page.png"),
        (1280, 2000),
        0.02,
    );
    let copy = work.path.join("measure.html");
    measuring_copy(page, &copy);
    for width in [1280, 400] {
        let (viewport, scroll, client, _, out) = measure(&work.path, &copy, width);
        assert_eq!(viewport, width);
        assert!(
            scroll <= client,
            "at {width} px the page is {scroll} px wide for {client}: {out}"
        );
        assert!(out.is_empty(), "at {width} px these stick out: {out}");
    }
    let pdf = work.path.join("page.pdf");
    chromium(
        &work.path,
        &file_url(page),
        &[
            format!("--print-to-pdf={}", pdf.display()),
            "--no-pdf-header-footer".into(),
        ],
    );
    assert!(std::fs::read(&pdf)
        .expect("PDF written")
        .starts_with(b"%PDF"));
}
