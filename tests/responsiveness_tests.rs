//! `netagg responsiveness`: a short run on loopback writes its table, JSON,
//! text and page, stores into the results database, and is drawn again
//! byte for byte by `netagg report`, without claiming a path inflated over
//! loopback; options it cannot use are refused before any traffic; and over
//! the namespace testbed with a token bucket (tc tbf) on the link, the
//! loaded latency far exceeds the idle one. Structure and wide ratios, never
//! timings.

mod common;
use common::browser::{have_chromium, reads_well};
use common::ramp::OutDir;
use common::results::TempDir;
use common::testbed::namespaces_work;
use common::*;
use serde_json::Value;
use std::time::Duration;

/// The saved run in `out`, read.
fn saved(out: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(out.join("responsiveness.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A phase's probe figure (µs or a count).
fn figure(doc: &Value, phase: usize, key: &str) -> f64 {
    doc["phases"][phase]["probe"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("phase {phase} has no {key}: {doc}"))
}

/// `netagg responsiveness` to a netserver on 127.0.0.1:`port`, into `dir`.
fn to_loopback<'a>(port: &'a str, dir: &'a str) -> Vec<&'a str> {
    vec![
        "responsiveness",
        "--host",
        "127.0.0.1",
        "--port",
        port,
        "--out",
        dir,
    ]
}

/// A short run, idle then upload, to our netserver on loopback into
/// `out`, with `extra` arguments; its stdout.
fn loopback_run(out: &OutDir, extra: &[&str]) -> String {
    let server = Server::start("127.0.0.1");
    let port = server.port.to_string();
    let dir = out.0.to_string_lossy().to_string();
    let mut args = to_loopback(&port, &dir);
    args.extend([
        "--duration",
        "1",
        "--settle",
        "0.5",
        "--flows",
        "2",
        "--phases",
        "idle,upload",
    ]);
    args.extend_from_slice(extra);
    let run = run_with_limit(&NETAGG, &args, Duration::from_secs(120));
    let (stdout, stderr) = (text(&run.stdout), text(&run.stderr));
    assert!(run.status.success(), "{stdout}{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stdout
}

#[test]
fn a_short_loopback_run_writes_stores_and_draws_again() {
    let out = OutDir::named("responsiveness-loopback");
    let db = TempDir::new();
    let store = format!("--store={}", db.db().display());
    let stdout = loopback_run(&out, &[&store, "--tag", "loopback"]);
    for words in [
        "phase",
        "P99 ms",
        "raw P99 ms",
        "up Mb/s",
        "against idle",
        "Noise:",
    ] {
        assert!(stdout.contains(words), "{words}: {stdout}");
    }
    // Over loopback the only path is this host: never called inflated.
    let upload = stdout.lines().find(|l| l.starts_with("upload")).unwrap();
    assert!(!upload.contains("inflated:"), "{upload}");

    let doc = saved(&out.0);
    assert_eq!(doc["format"], "netagg-responsiveness");
    assert_eq!(doc["loopback"], true);
    let phases: Vec<&str> = doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["idle", "upload"]);
    for k in 0..2 {
        assert!(figure(&doc, k, "sent") > 0.0 && figure(&doc, k, "answered") > 0.0);
        assert!(figure(&doc, k, "co_p50_us") <= figure(&doc, k, "co_p99_us"));
    }
    assert!(doc["phases"][1]["up_mbps"].as_f64().unwrap() > 0.0);
    assert!(doc["phases"][0]["up_mbps"].is_null());
    let seconds = doc["seconds"].as_array().unwrap();
    assert!(seconds.iter().any(|s| s["phase"] == 0) && seconds.iter().any(|s| s["phase"] == 1));
    let page = std::fs::read_to_string(out.0.join("responsiveness.html")).unwrap();
    assert!(page.contains("<svg") && page.contains("Latency over time"));

    common::saved::redraws_identically(
        &out.0.join("responsiveness.json"),
        &["responsiveness.html", "responsiveness.txt"],
    );
    let mut hostile = doc.clone();
    hostile["phases"][0]["name"] = "sideways".into();
    common::saved::refused(&out.0, &hostile.to_string(), "not a phase");
    hostile = doc.clone();
    hostile["seconds"][0]["t"] = 1e300.into();
    common::saved::refused(&out.0, &hostile.to_string(), "not a time");

    let show = run_with_limit(
        &NETAGG,
        &["results", "--db", &db.db().to_string_lossy(), "list"],
        Duration::from_secs(30),
    );
    let listed = text(&show.stdout);
    assert!(listed.contains("netagg responsiveness"), "{listed}");
    assert!(listed.contains("loopback"), "{listed}");
}

#[test]
fn its_page_reads_well_in_a_browser() {
    if !have_chromium() {
        return;
    }
    let out = OutDir::named("responsiveness-page");
    loopback_run(&out, &[]);
    let texts = [
        "Phases",
        "Latency over time",
        "against idle",
        "Noise:",
        "netagg report responsiveness.json",
    ];
    reads_well(&out.0.join("responsiveness.html"), &texts.map(String::from));
}

#[test]
fn options_it_cannot_use_are_refused_before_any_traffic() {
    let out = OutDir::named("responsiveness-refused");
    let dir = out.0.to_string_lossy().to_string();
    let port = closed_port().to_string();
    for (bad, says) in [
        (&["--probe-rate", "0"][..], "--probe-rate"),
        (&["--probe-rate", "1e9"], "--probe-rate"),
        (&["--probe-rate", "fast"], "--probe-rate"),
        (&["--flows", "0"], "--flows"),
        (&["--flows", "many"], "--flows"),
        (&["--phases", "idle,sideways"], "not a phase"),
        (&["--phases", "upload,upload"], "named twice"),
        (&["--phases", ""], "not a phase"),
        (&["--probe", "sctp"], "--probe"),
        (&["--settle", "99"], "--settle"),
        (&["--duration", "0"], "--duration"),
        (&["--tag", "x"], "needs --store"),
    ] {
        let mut args = to_loopback(&port, &dir);
        args.extend_from_slice(bad);
        let run = run_with_limit(&NETAGG, &args, Duration::from_secs(30));
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{bad:?}: {stderr}");
        assert!(stderr.contains(says), "{bad:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{bad:?}: {stderr}");
        assert!(!out.0.exists(), "{bad:?} wrote {dir}");
    }
    let none = run_with_limit(&NETAGG, &["responsiveness"], Duration::from_secs(30));
    assert_eq!(none.status.code(), Some(2));
    assert!(text(&none.stderr).contains("--host"));
}

/// Runs `args` (a command and its arguments) and says whether it worked.
fn runs(args: &[&str]) -> bool {
    run_with_limit(args[0], &args[1..], Duration::from_secs(30))
        .status
        .success()
}

#[test]
fn a_rate_limited_link_inflates_the_loaded_latency_far_beyond_idle() {
    if !namespaces_work("q") {
        return;
    }
    if !runs(&["tc", "-V"]) {
        skip("needs tc (iproute2) for the token bucket on the link");
        return;
    }
    let name = format!("rsp{}", std::process::id() % 10000);
    let (_bed, _) = common::testbed::up(&name, 1, &[]);
    let (sut, link) = (format!("{name}-sut"), format!("{name}-s1"));
    // 20 Mbit/s leaving the system under test, queueing up to 400 ms: the
    // upload's bulk flows fill the queue the probe crosses.
    assert!(runs(&[
        "ip", "netns", "exec", &sut, "tc", "qdisc", "add", "dev", &link, "root", "tbf", "rate",
        "20mbit", "burst", "32kbit", "latency", "400ms"
    ]));
    let out = OutDir::named("responsiveness-tbf");
    let run = run_with_limit(
        "ip",
        &[
            "netns",
            "exec",
            &sut,
            &NETAGG,
            "responsiveness",
            "--host",
            "198.18.1.2",
            "--duration",
            "3",
            "--flows",
            "4",
            "--phases",
            "idle,upload",
            "--out",
            &out.0.to_string_lossy(),
        ],
        Duration::from_secs(180),
    );
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{stdout}{}", text(&run.stderr));
    let doc = saved(&out.0);
    assert_eq!(doc["loopback"], false);
    // Wide factors on the statistics a stall of this host cannot fake: the
    // median, and the raw P99 (from each request's actual send).
    for key in ["co_p50_us", "raw_p99_us"] {
        let (idle, loaded) = (figure(&doc, 0, key), figure(&doc, 1, key));
        assert!(
            loaded >= 3.0 * idle,
            "{key}: idle {idle}, upload {loaded}\n{stdout}"
        );
    }
    let up = doc["phases"][1]["up_mbps"].as_f64().unwrap();
    assert!(up > 1.0 && up < 40.0, "a 20 Mbit/s link carried {up} Mb/s");
    let upload = stdout.lines().find(|l| l.starts_with("upload")).unwrap();
    assert!(upload.contains("inflated:"), "{stdout}");
}
