//! netagg's report and one test's series page (`netperf -D 0.5 -- --report
//! FILE.html`) read as a reader would: the context is in the page and in
//! the JSON (hosts with their kernels, CPUs and interfaces, the command
//! line, version and revision, start and end, how to reproduce), the charts
//! explain themselves (a legend naming each stream's load generator, SI axis
//! labels, the settling margins and the peak marked), every SVG parses, the
//! page is self-contained; and, with headless Chromium (skipped with a
//! message where it cannot be installed), the page shows it all, is not a
//! blank picture, never scrolls sideways at 1280 or 400 px, and prints.
//! Traffic: loopback only, a few seconds per run.

mod common;

use common::browser::{have_chromium, reads_well, WorkDir};
use common::{netperf, run_with_limit, text, Server};
use std::path::Path;
use std::time::Duration;

use common::NETAGG;
const TITLE: &str = "loopback <tps> & \"friends\"";

/// One netagg run, two levels of 2 s on loopback, into `work`.
fn netagg_run(work: &Path) {
    let server = Server::start("127.0.0.1");
    let port = server.port.to_string();
    let out = work.to_string_lossy().to_string();
    let args = [
        "--host",
        "127.0.0.1",
        "--port",
        &port,
        "--kind",
        "tps",
        "--burst",
        "4",
        "--max-streams",
        "2",
        "--duration",
        "2",
        "--individual",
        "--title",
        TITLE,
        "--out",
        &out,
    ];
    let run = run_with_limit(&NETAGG, &args, Duration::from_secs(90));
    assert!(run.status.success(), "netagg failed: {}", text(&run.stderr));
}

/// One run for all of netagg's checks (each check says what it reads).
#[test]
fn netaggs_report_reads_as_a_reader_needs() {
    let work = WorkDir::new("netagg-page");
    netagg_run(&work.path);
    netaggs_json_carries_the_context_of_both_ends(&work.path);
    netaggs_page_and_charts_explain_themselves(&work.path);
    the_json_draws_the_same_report_again(&work.path);
    if have_chromium() {
        let page = work.path.join("netagg_tps.html");
        reads_well(&page, &context_texts(&context(&work.path)));
    }
}

/// The run's context from its JSON.
fn context(dir: &Path) -> serde_json::Value {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("netagg_tps.json")).unwrap())
            .expect("netagg's JSON parses");
    json["context"].clone()
}

fn assert_self_contained(html: &str) {
    for forbidden in [
        "<script", "<link", "<iframe", "<img", "@import", "url(", "src=", "href=",
    ] {
        assert!(!html.contains(forbidden), "the page holds {forbidden:?}");
    }
    assert!(html.contains("@media print"));
    assert!(html.contains("name=\"viewport\""));
}

/// Every `<svg>` of the page parses; their text nodes, joined.
fn svg_texts(html: &str) -> String {
    let mut texts = String::new();
    for piece in html.split("<svg").skip(1) {
        let svg = format!("<svg{}</svg>", piece.split("</svg>").next().unwrap());
        let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("inline SVG: {e}"));
        for node in doc.descendants().filter(|n| n.is_text()) {
            texts.push_str(node.text().unwrap_or(""));
            texts.push('\n');
        }
    }
    texts
}

/// What the page must show of the context.
fn context_texts(ctx: &serde_json::Value) -> Vec<String> {
    let mut want = vec![
        ctx["what"].as_str().unwrap().to_string(),
        ctx["started"].as_str().unwrap().to_string(),
        ctx["ended"].as_str().unwrap().to_string(),
        ctx["revision"].as_str().unwrap().to_string(),
        "How to reproduce".to_string(),
    ];
    for host in ctx["hosts"].as_array().unwrap() {
        for key in ["role", "host", "kernel", "cpu_model", "interface", "mtu"] {
            want.push(host[key].as_str().unwrap().to_string());
        }
    }
    want
}

fn netaggs_json_carries_the_context_of_both_ends(dir: &Path) {
    let ctx = context(dir);
    assert_eq!(ctx["what"], "netagg tps");
    assert_eq!(ctx["version"], env!("CARGO_PKG_VERSION"));
    assert!(!ctx["revision"].as_str().unwrap().is_empty());
    let args: Vec<&str> = ctx["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(args.contains(&TITLE), "{args:?}");
    assert!(ctx["reproduce"]
        .as_str()
        .unwrap()
        .contains("'loopback <tps> & \"friends\"'"));
    assert!(
        ctx["duration_s"].as_f64().unwrap() >= 4.0,
        "two levels of 2 s"
    );
    let hosts = ctx["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 2, "the SUT and one load generator: {hosts:?}");
    assert_eq!(hosts[0]["role"], "SUT (netagg)");
    assert_eq!(hosts[1]["role"], "load generator");
    assert_eq!(hosts[1]["host"], "127.0.0.1");
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    for host in hosts {
        // Our netserver describes its host: on loopback, this one.
        assert!(
            host["kernel"].as_str().unwrap().ends_with(kernel.trim()),
            "{host}"
        );
        assert_eq!(host["interface"], "lo", "{host}");
        assert_eq!(host["mtu"], "65536", "{host}");
        assert!(host["offloads"].as_str().unwrap().contains("gro"), "{host}");
    }
    // Both counts: ours, and the one our netserver's facts block carries.
    let cpus = hosts[0]["cpu_count"].as_u64().unwrap();
    assert!(cpus >= 1);
    assert_eq!(hosts[1]["cpu_count"].as_u64(), Some(cpus), "{}", hosts[1]);
}

fn netaggs_page_and_charts_explain_themselves(dir: &Path) {
    let html = std::fs::read_to_string(dir.join("netagg_tps.html")).unwrap();
    assert_self_contained(&html);
    assert!(html.contains("<h1>loopback &lt;tps&gt; &amp; &quot;friends&quot;</h1>"));
    assert!(!html.contains("<tps>"));
    let ctx = context(dir);
    for want in context_texts(&ctx) {
        assert!(html.contains(&want), "the page does not show {want:?}");
    }
    let texts = svg_texts(&html);
    for legend in [
        "aggregate per interval",
        "level average (window)",
        "settling, outside the averaged window",
        "peak: ",
        "1 streams",
        "2 streams",
        "stream 0: 127.0.0.1",
        "stream 1: 127.0.0.1",
    ] {
        assert!(
            texts.contains(legend),
            "no {legend:?} in the charts:\n{texts}"
        );
    }
    // Axis numbers read in SI form: no tick label of five digits or more,
    // none with a ".0" tail.
    for label in texts.lines().map(str::trim) {
        let digits = label.chars().take_while(char::is_ascii_digit).count();
        let numeric = !label.is_empty()
            && label
                .chars()
                .all(|c| c.is_ascii_digit() || ".kMG".contains(c));
        if numeric {
            assert!(digits < 5 && !label.ends_with(".0"), "tick label {label:?}");
        }
    }
    assert!(
        texts.lines().any(|l| l.trim().ends_with('k')),
        "no SI label: {texts}"
    );
    // The saved SVGs parse on their own.
    for name in ["netagg_tps_overall.svg", "netagg_tps_streams.svg"] {
        let svg = std::fs::read_to_string(dir.join(name)).unwrap();
        roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// `netagg report JSON --out DIR`.
fn netagg_report(json: &Path, out: &Path) -> std::process::Output {
    let (json, out) = (json.to_string_lossy(), out.to_string_lossy());
    run_with_limit(
        &NETAGG,
        &["report", &json, "--out", &out],
        Duration::from_secs(30),
    )
}

/// `netagg report netagg_tps.json` draws the page and charts again, byte
/// for byte, from the JSON alone; a JSON that is not a netagg run's (or
/// lies) is refused with the reason, never a panic or a file elsewhere.
fn the_json_draws_the_same_report_again(dir: &Path) {
    let again = dir.join("again");
    let json = dir.join("netagg_tps.json");
    let run = netagg_report(&json, &again);
    assert!(run.status.success(), "{}", text(&run.stderr));
    for name in [
        "netagg_tps.html",
        "netagg_tps_overall.svg",
        "netagg_tps_streams.svg",
    ] {
        let first = std::fs::read(dir.join(name)).unwrap();
        let second = std::fs::read(again.join(name)).unwrap();
        assert!(first == second, "{name} differs when drawn from the JSON");
    }
    let original: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let hostile = [
        ("not JSON", "{".to_string()),
        ("not a saved run", r#"{"format":"other"}"#.to_string()),
        (
            "unknown kind",
            original
                .to_string()
                .replace(r#""kind":"tps""#, r#""kind":"../x""#),
        ),
        ("no \"context\"", {
            let mut doc = original.clone();
            doc.as_object_mut().unwrap().remove("context");
            doc.to_string()
        }),
        ("\"series\" is missing", {
            let mut doc = original.clone();
            doc["series"] = serde_json::json!("many");
            doc.to_string()
        }),
        // Values that overflowed the charts' pixel arithmetic (a panic, or
        // an endless axis when the rate neared f64's end).
        ("\"setup_s\" is not a stretch of the run", {
            let mut doc = original.clone();
            doc["levels"][0]["setup_s"] = serde_json::json!([1e300, 1e301]);
            doc.to_string()
        }),
        ("\"aggregate\" is not a rate a run measures", {
            let mut doc = original.clone();
            doc["series"][0]["aggregate"] = serde_json::json!(1e307);
            doc.to_string()
        }),
    ];
    for (why, body) in hostile {
        let file = dir.join("hostile.json");
        std::fs::write(&file, body).unwrap();
        let run = netagg_report(&file, &dir.join("hostile"));
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{why}: {stderr}");
        assert!(stderr.contains(why), "{why}: {stderr}");
        assert!(
            !dir.join("hostile").exists() && !dir.join("x").exists(),
            "{why}"
        );
    }
}

#[test]
fn netperf_draws_one_tests_series_as_a_page() {
    let server = Server::start("127.0.0.1");
    let work = WorkDir::new("series-page");
    let page = work.path.join("rr.html");
    let page_arg = page.to_string_lossy().to_string();
    let run = netperf(
        &server,
        &[
            "-t", "TCP_RR", "-l", "2", "-D", "0.5", "--", "--report", &page_arg,
        ],
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let stdout = text(&run.stdout);
    let interims = stdout
        .lines()
        .filter(|l| l.starts_with("Interim result:"))
        .count();
    assert!(interims >= 2, "{stdout}");
    let html = std::fs::read_to_string(&page).expect("the page is written");
    assert_self_contained(&html);
    assert!(html.contains("<h1>TCP_RR over time</h1>"));
    // Every interval netperf printed is a row of the page.
    assert_eq!(html.matches("<tr><td>").count(), interims, "{html}");
    let texts = svg_texts(&html);
    assert!(
        texts.contains("each interval's rate") && texts.contains("the test's result: "),
        "{texts}"
    );
    // netperf's own result block is on the page as printed.
    let result_line = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty() && l.split_whitespace().count() >= 6)
        .unwrap();
    assert!(html.contains(result_line.trim_end()), "{result_line:?}");
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(
        html.matches(kernel.trim()).count(),
        2,
        "netperf's and netserver's kernels"
    );
    for want in [
        "netserver",
        "Remote host",
        "127.0.0.1 (port ",
        "Interval (-D)",
        "0.5 s",
        "How to reproduce",
        "--report",
    ] {
        assert!(html.contains(want), "no {want:?} on the page");
    }
    // Beside it, what it draws: the page comes again from the JSON alone.
    let again = work.path.join("again");
    let json = work.path.join("rr.json");
    let redraw = netagg_report(&json, &again);
    assert!(redraw.status.success(), "{}", text(&redraw.stderr));
    assert!(
        std::fs::read_to_string(again.join("rr.html")).unwrap() == html,
        "redrawn page differs"
    );
    if have_chromium() {
        let texts: Vec<String> = [
            "TCP_RR over time",
            "Rate over time",
            "netserver",
            kernel.trim(),
            "Every interval",
        ]
        .map(String::from)
        .to_vec();
        reads_well(&page, &texts);
    }
}

#[test]
fn netperf_refuses_a_report_it_cannot_draw_before_any_traffic() {
    let server = Server::start("127.0.0.1");
    let work = WorkDir::new("series-refused");
    let page = work.path.join("no-interval.html");
    let page_arg = page.to_string_lossy().to_string();
    // (arguments, what stderr says, exit status: 1 for a command line
    // netperf cannot parse, 2 for a file it cannot write, as --store).
    let cases: [(&[&str], &str, i32); 5] = [
        (
            &["-t", "TCP_RR", "-l", "1", "--", "--report", &page_arg],
            "give -D INTERVAL",
            2,
        ),
        (
            &["-D", "1", "--", "--report", "/nonexistent-dir/x.html"],
            "cannot create /nonexistent-dir/x.html",
            2,
        ),
        (&["--", "--report="], "file name is empty", 1),
        (
            &["-t", "STREAM_RR", "-D", "1", "--", "--report", &page_arg],
            "STREAM_RR reports no interim results",
            2,
        ),
        (
            &["-t", "LOC_CPU", "-D", "1", "--", "--report", &page_arg],
            "LOC_CPU reports no interim results",
            2,
        ),
    ];
    for (args, why, status) in cases {
        let run = netperf(&server, args);
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(status), "{args:?}: {stderr}");
        assert!(stderr.contains(why), "{args:?}: {stderr}");
        assert!(run.stdout.is_empty(), "no test ran: {}", text(&run.stdout));
    }
    assert!(!page.exists());
}
