//! Tests of netagg's post-processing (crates/netagg/src/agg/post). The
//! expected texts were checked against the real post_proc.py with rrdtool
//! 1.7.2 on the same files (less the garbage lines, on which post_proc.py stops).

mod common;

use common::saved::{redraws_identically, refused};
use common::{run_with_limit, text, NETAGG};
use netperf_ng::agg::post;
use std::fs;
use std::path::PathBuf;
use std::time::Duration;

/// A directory of its own under the system's temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("agg_post_{}_{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

const BASE: i64 = 1_700_000_000;

/// The log runemomniaggdemo.sh would write for a ramp of 2 then 4 streams,
/// 20 s at the first level and 23 s at the second.
fn ramp_log() -> String {
    let b = BASE;
    format!(
        "Starting netperfs at {b}.100000000 for tps\n\
         Starting netperfs on localhost targeting lg1 for tps\n\
         Starting netperfs on localhost targeting lg2 for tps\n\
         Pausing for 20 seconds at {}.100000000 with 2 netperfs running for tps\n\
         Resuming at {}.100000000 for tps\n\
         Starting netperfs on localhost targeting lg1 for tps\n\
         Starting netperfs on localhost targeting lg2 for tps\n\
         Netperfs started by {}.100000000 for tps\n\
         Netperfs stopping {}.100000000 for tps\n\
         Netperfs stopped {}.800000000 for tps\n",
        b + 2,
        b + 22,
        b + 24,
        b + 47,
        b + 47
    )
}

/// A netperf at 100 Trans/s reporting every second at half past, from
/// `first` seconds after BASE to 47, then its final -o line.
fn steady_out(first: i64, garbage: bool) -> String {
    let mut lines: Vec<String> = (first..48)
        .map(|s| format!("100.00,Trans/s,1.000,{}.500", BASE + s))
        .collect();
    if garbage {
        let junk = [
            "garbage",
            "x,y,z,w",
            "",
            "Interim result: lots Trans/s over",
            "NETPERF_ENDING[0]=oops",
            "\u{fffd}\u{0}\u{7f},,,",
        ];
        for (i, j) in junk.iter().enumerate() {
            lines.insert(3 + i, j.to_string());
        }
    }
    lines.push("Stream,UDP,Send|Recv,1.0,100.0,Trans/s,-1,2,3,\"netperf -H lg1 -o all\"".into());
    lines.push("Histogram of request/response times".into());
    lines.push("UNIT_USEC      :    0:    0:    0".into());
    lines.join("\n") + "\n"
}

/// Writes the ramp: streams 0 and 1 from the start, 2 and 3 from level 2.
fn write_ramp(dir: &TempDir, garbage: bool) -> PathBuf {
    fs::write(dir.path("netperf_tps.log"), ramp_log()).unwrap();
    for (n, host, first) in [(0, "lg1", 1), (1, "lg2", 1), (2, "lg1", 23), (3, "lg2", 23)] {
        let name = format!("netperf_tps_{n:05}_to_{host}.out");
        fs::write(dir.path(&name), steady_out(first, garbage && n == 0)).unwrap();
    }
    // Files of another test type beside them are not read.
    fs::write(
        dir.path("netperf_outbound_00000_to_lg1.out"),
        steady_out(1, false),
    )
    .unwrap();
    dir.path("netperf_tps.log")
}

fn expected_summary(prefix: &str, intervals: bool) -> String {
    let (a, b) = (BASE + 25, BASE + 45);
    let mut text = format!(
        "Prefix is {prefix}\n\
         Average of peak interval is 400.000 Trans/s from {a} to {b}\n\
         Minimum of peak interval is 400.000 Trans/s from {a} to {b}\n\
         Maximum of peak interval is 400.000 Trans/s from {a} to {b}\n"
    );
    if intervals {
        let (c, d) = (BASE + 3, BASE + 21);
        text += &format!(
            "Average of interval 0 is 200.000 Trans/s from {c} to {d}\n\
             Minimum of interval 0 is 200.000 Trans/s from {c} to {d}\n\
             Maximum of interval 0 is 200.000 Trans/s from {c} to {d}\n\
             Average of interval 1 is 400.000 Trans/s from {a} to {b}\n\
             Minimum of interval 1 is 400.000 Trans/s from {a} to {b}\n\
             Maximum of interval 1 is 400.000 Trans/s from {a} to {b}\n"
        );
    }
    text
}

fn value_at(a: &post::Analysis, second: i64) -> f64 {
    a.series
        .iter()
        .find(|p| p.time == BASE + second)
        .map(|p| p.value)
        .expect("second in series")
}

#[test]
fn ramp_series_levels_peak_and_text() {
    let dir = TempDir::new("ramp");
    let log = write_ramp(&dir, false);
    let a = post::analyze(&log).expect("analysis");
    let prefix = dir.path("netperf_tps").to_string_lossy().into_owned();

    assert_eq!(a.prefix, prefix);
    assert_eq!(a.units, "Trans/s");
    assert_eq!(a.files.len(), 4);
    // One point per second from int(start) to int(stop).
    assert_eq!(a.series.len(), 48);
    assert_eq!(a.series[0].time, BASE);
    // Before any result; the first second of each stream is diluted by
    // half (rrdtool counts the unknown half second as nothing); then the
    // plain sums.
    assert_eq!(value_at(&a, 0), 0.0);
    assert_eq!(value_at(&a, 1), 100.0);
    assert_eq!(value_at(&a, 10), 200.0);
    assert_eq!(value_at(&a, 23), 300.0);
    assert_eq!(value_at(&a, 30), 400.0);
    assert_eq!(value_at(&a, 46), 400.0);
    // The second after the last result is not complete.
    assert_eq!(value_at(&a, 47), 0.0);

    assert_eq!(a.levels.len(), 2);
    let (l1, l2) = (&a.levels[0], &a.levels[1]);
    assert_eq!(
        (l1.number, l1.streams, l1.start, l1.end),
        (0, 2, BASE + 3, BASE + 21)
    );
    assert_eq!((l1.average, l1.minimum, l1.maximum), (200.0, 200.0, 200.0));
    assert_eq!(
        (l2.number, l2.streams, l2.start, l2.end),
        (1, 4, BASE + 25, BASE + 45)
    );
    assert_eq!((l2.average, l2.minimum, l2.maximum), (400.0, 400.0, 400.0));
    assert_eq!(a.peak, Some(1));
    assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);

    assert_eq!(a.summary_text(false), expected_summary(&prefix, false));
    assert_eq!(a.summary_text(true), expected_summary(&prefix, true));
}

#[test]
fn garbage_lines_are_skipped_and_counted() {
    let dir = TempDir::new("garbage");
    let log = write_ramp(&dir, true);
    let a = post::analyze(&log).expect("analysis");
    let prefix = dir.path("netperf_tps").to_string_lossy().into_owned();
    assert_eq!(a.summary_text(true), expected_summary(&prefix, true));
    let first = &a.files[0];
    assert_eq!(first.samples, 47);
    // "x,y,z,w", the short "Interim result:" line, NETPERF_ENDING=oops and
    // the four-field binary junk; the others are not interim-shaped at all.
    assert_eq!(first.bad_lines, 4);
    assert_eq!(a.files[1].bad_lines, 0);
}

#[test]
fn series_csv_and_json() {
    let dir = TempDir::new("outputs");
    let a = post::analyze(write_ramp(&dir, false)).expect("analysis");

    let csv = a.series_csv();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 49);
    assert_eq!(lines[0], "timestamp,Trans/s");
    assert_eq!(lines[1], format!("{BASE},0.000"));
    assert_eq!(lines[31], format!("{},400.000", BASE + 30));

    let j = a.to_json();
    assert_eq!(j["units"], "Trans/s");
    assert_eq!(j["series"].as_array().map(Vec::len), Some(48));
    assert_eq!(j["series"][24]["time"], BASE + 24);
    assert_eq!(j["series"][24]["value"], 400.0);
    assert_eq!(j["levels"].as_array().map(Vec::len), Some(2));
    assert_eq!(j["levels"][0]["streams"], 2);
    assert_eq!(j["levels"][1]["streams"], 4);
    assert_eq!(j["peak"]["average"], 400.0);
    assert_eq!(j["peak"]["start"], BASE + 25);

    let mut text = Vec::new();
    a.write_json(&mut text).unwrap();
    let back: serde_json::Value = serde_json::from_slice(&text).unwrap();
    assert_eq!(back, j);
}

/// `netagg post` saves what its page draws; `netagg report` draws the
/// same chart and page from that JSON alone, and refuses one that lies.
#[test]
fn the_post_page_is_drawn_again_from_its_json() {
    let dir = TempDir::new("redraw");
    let log = write_ramp(&dir, false);
    let out = dir.path("post");
    let (log, out_text) = (log.to_string_lossy(), out.to_string_lossy());
    let args = ["post", &log, "--out", &out_text, "--title", "a <ramp>"];
    let run = run_with_limit(&NETAGG, &args, Duration::from_secs(30));
    assert!(run.status.success(), "{}", text(&run.stderr));
    let json = out.join("netperf_tps_series.json");
    let doc: serde_json::Value = serde_json::from_slice(&fs::read(&json).unwrap()).unwrap();
    assert_eq!(
        (&doc["format"], &doc["version"]),
        (&"netagg-post".into(), &1.into())
    );
    redraws_identically(&json, &["netperf_tps.html", "netperf_tps_overall.svg"]);
    let lies = [
        ("not a file name", "/page/name", "../x".into()),
        ("not netagg post's", "/units", "furlongs".into()),
        ("not a time", "/levels/0/start", 1e300.into()),
        (
            "not a rate a run measures",
            "/series/3/value",
            (-5.0).into(),
        ),
        ("newer netperf-ng", "/version", 2.into()),
    ];
    for (why, at, value) in lies {
        let mut bad = doc.clone();
        *bad.pointer_mut(at).unwrap() = value;
        refused(&dir.0, &bad.to_string(), why);
    }
}

#[test]
fn bulk_tests_report_bits_per_second() {
    let dir = TempDir::new("bulk");
    fs::write(dir.path("netperf_outbound.log"), ramp_log()).unwrap();
    for (n, first) in [(0, 1), (1, 1), (2, 23), (3, 23)] {
        let text = steady_out(first, false).replace("Trans/s", "10^6bits/s");
        fs::write(
            dir.path(&format!("netperf_outbound_{n:05}_to_lg.out")),
            text,
        )
        .unwrap();
    }
    let a = post::analyze(dir.path("netperf_outbound.log")).expect("analysis");
    assert_eq!((a.units, a.multiplier), ("bits/s", 1e6));
    let text = a.summary_text(false);
    assert!(
        text.contains("Average of peak interval is 400000000.000 bits/s from"),
        "{text}"
    );
}

#[test]
fn missing_log_is_a_clear_error() {
    let dir = TempDir::new("empty");
    let err = post::analyze(dir.path("netperf_tps.log")).unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("cannot read "), "{msg}");
    assert!(msg.contains("netperf_tps.log"), "{msg}");
}

#[test]
fn log_without_results_is_a_clear_error() {
    let dir = TempDir::new("noresults");
    fs::write(dir.path("netperf_tps.log"), ramp_log()).unwrap();
    // An .out file with nothing usable counts as none.
    fs::write(dir.path("netperf_tps_00000_to_lg1.out"), "garbage\n\n").unwrap();
    let err = post::analyze(dir.path("netperf_tps.log")).unwrap_err();
    assert!(matches!(err, post::PostError::NoResults { .. }));
    assert!(err
        .to_string()
        .starts_with("There were no valid results for this prefix!"));
}

#[test]
fn unfinished_log_is_a_clear_error() {
    let dir = TempDir::new("unfinished");
    let log: String = ramp_log()
        .lines()
        .filter(|l| !l.starts_with("Netperfs stopped"))
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(dir.path("netperf_tps.log"), log).unwrap();
    fs::write(
        dir.path("netperf_tps_00000_to_lg1.out"),
        steady_out(1, false),
    )
    .unwrap();
    let err = post::analyze(dir.path("netperf_tps.log")).unwrap_err();
    assert!(
        err.to_string().contains("no \"Netperfs stopped\" line"),
        "{err}"
    );
}

#[test]
fn oversized_file_is_refused_without_reading_it() {
    let dir = TempDir::new("huge");
    let path = dir.path("netperf_tps.log");
    // Sparse: no disk is used.
    let f = fs::File::create(&path).unwrap();
    f.set_len(post::MAX_FILE_BYTES + 1).unwrap();
    let err = post::analyze(&path).unwrap_err();
    assert!(matches!(err, post::PostError::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("at most 268435456 bytes"), "{err}");
}

#[test]
fn the_three_interim_formats_parse() {
    // Lines from reference/netperf-2.7.1-transcripts.txt.
    let human = "Interim result: 15236.62 Trans/s over 1.521 seconds ending at 1795311932.139\n";
    let csv =
        "13326.59,Trans/s,1.091,1795311937.717\nThroughput,Throughput Units\n12992.68,Trans/s\n";
    let keyval = "NETPERF_INTERIM_RESULT[0]=12377.21\nNETPERF_UNITS[0]=Trans/s\n\
                  NETPERF_INTERVAL[0]=1.303\nNETPERF_ENDING[0]=1795311940.934\n\
                  THROUGHPUT=12427.28\nTHROUGHPUT_UNITS=Trans/s\n";
    let cases = [
        (human, 15236.62, 1.521, 1795311932.139),
        (csv, 13326.59, 1.091, 1795311937.717),
        (keyval, 12377.21, 1.303, 1795311940.934),
    ];
    for (text, value, interval, ending) in cases {
        let out = post::parse_out(text);
        let expect = post::Sample {
            value,
            interval,
            ending,
        };
        assert_eq!(out.samples, vec![expect], "{text}");
        assert_eq!(out.units.as_deref(), Some("Trans/s"));
    }
}

#[test]
fn a_rate_no_chart_can_draw_is_a_bad_line() {
    // Rates near f64's end made the chart's axis endless, negative ones
    // overflowed its pixel arithmetic: each counts as a line that did not parse.
    for rate in ["1e307", "-1e308", "inf", "nan", "-5"] {
        let human =
            format!("Interim result: {rate} Trans/s over 1.0 seconds ending at 1795311932.1\n");
        let csv = format!("{rate},Trans/s,1.0,1795311937.7\n");
        let keyval = format!(
            "NETPERF_INTERIM_RESULT[0]={rate}\nNETPERF_UNITS[0]=Trans/s\n\
             NETPERF_INTERVAL[0]=1.3\nNETPERF_ENDING[0]=1795311940.9\n"
        );
        for text in [human, csv, keyval] {
            let out = post::parse_out(&text);
            assert_eq!(out.bad_lines, 1, "{text}");
            // A keyval result keeps the value before it, as post_proc.py
            // does (its initial 0.0 here); the others are dropped.
            assert!(out.samples.iter().all(|s| s.value == 0.0), "{text}");
        }
    }
}

#[test]
fn hostile_text_never_panics() {
    let mut junk = String::new();
    for i in 0..2000u32 {
        let c = char::from_u32((i * 7919) % 0x2_0000).unwrap_or('?');
        junk.push(c);
        if i % 37 == 0 {
            junk.push_str("\nPausing for x at 1e308 with -1 netperfs\n,,,\n1e400,a,1e-400,-5\n");
            junk.push_str("Resuming at nan\nNetperfs stopping -9e18\nNETPERF_UNITS=\n");
        }
    }
    let log = post::parse_log(&junk);
    let out = post::parse_out(&junk);
    assert!(out.samples.iter().all(|s| s.ending > 0.0));
    // Extreme but parseable numbers go through the arithmetic unharmed.
    let wild = post::OutFile {
        samples: vec![
            post::Sample {
                value: 1e300,
                interval: 1e300,
                ending: 1e300,
            },
            post::Sample {
                value: -5.0,
                interval: -1e300,
                ending: 1.0,
            },
            post::Sample {
                value: 100.0,
                interval: 0.5,
                ending: (BASE + 5) as f64,
            },
        ],
        units: None,
        bad_lines: 0,
    };
    let run = post::parse_log(&ramp_log());
    let files = vec![("wild".to_string(), wild), ("junk".to_string(), out)];
    let _ = post::analyze_parsed("netperf_tps", &run, &files);
    let _ = post::analyze_parsed("netperf_tps", &log, &files);
}
