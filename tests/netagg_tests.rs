//! netagg end to end on loopback: a short ramp against our netserver writes
//! the summary, the series and the JSON, the summary agrees with the series,
//! and the median sample read all streams within a millisecond.

mod common;
use common::ramp::{one_level, OutDir};
use common::*;
use std::time::Duration;

use common::NETAGG;

#[test]
fn a_short_ramp_writes_consistent_reports() {
    if fast_tier_skips("slow (20 s)") {
        return;
    }
    let server = Server::start("127.0.0.1");
    let out_dir = std::env::temp_dir().join(format!("netagg-test-{}", std::process::id()));
    let port = server.port.to_string();
    for kind in ["tps", "outbound"] {
        let out = run_with_limit(
            &NETAGG,
            &[
                "--host",
                "127.0.0.1",
                "--port",
                &port,
                "--kind",
                kind,
                "--duration",
                "5",
                "--max-streams",
                "2",
                "--burst",
                "4",
                "--individual",
                "--annotation",
                "test note",
                "--out",
                out_dir.to_str().unwrap(),
            ],
            Duration::from_secs(60),
        );
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "{kind}: {stdout}{}",
            text(&out.stderr)
        );
        assert!(
            stdout.starts_with("Average of peak interval is "),
            "{stdout}"
        );

        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out_dir.join(format!("netagg_{kind}.json"))).unwrap(),
        )
        .unwrap();
        let levels = json["levels"].as_array().unwrap();
        assert_eq!(levels.len(), 2, "{kind}: levels 1 and 2");
        assert_eq!(levels[1]["streams"], 2);
        // Every level says, per stream, what it moved and whether it stalled.
        let work = if kind == "tps" {
            "transactions"
        } else {
            "bytes"
        };
        for level in levels {
            let per_stream = level["health"]["per_stream"].as_array().unwrap();
            assert_eq!(per_stream.len() as u64, level["streams"].as_u64().unwrap());
            assert!(per_stream.iter().all(|s| s[work].as_u64().unwrap() > 0
                && s["host"] == "127.0.0.1"
                && s["stalled"].is_boolean()));
            assert!(level["trustworthy"].is_boolean());
        }
        assert_eq!(
            json["loss_timeout_s"],
            if kind == "tps" {
                serde_json::json!(1)
            } else {
                serde_json::Value::Null
            }
        );

        // The level averages are the means of the CSV rows in their windows.
        let csv = std::fs::read_to_string(out_dir.join(format!("netagg_{kind}.csv"))).unwrap();
        let rows: Vec<Vec<String>> = csv
            .lines()
            .skip(1)
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect();
        assert_eq!(rows.len(), json["series"].as_array().unwrap().len());
        // A sample reads every stream's counter at once. One preempted
        // sample on a loaded machine may take longer: the median may not.
        let mut spreads: Vec<f64> = rows.iter().map(|r| r[10].parse().unwrap()).collect();
        spreads.sort_by(f64::total_cmp);
        let max = json["sample_spread_us"]["max"].as_f64().unwrap();
        assert!(spreads[spreads.len() / 2] < 1000.0 && max >= spreads[spreads.len() - 1] - 0.5);
        for (index, level) in levels.iter().enumerate() {
            let inside: Vec<f64> = rows
                .iter()
                .filter(|r| r[2] == index.to_string() && r[4] == "1")
                .map(|r| r[5].parse().unwrap())
                .collect();
            assert_eq!(
                inside.len() as u64,
                level["samples"].as_u64().unwrap(),
                "{csv}"
            );
            assert!(!inside.is_empty(), "{kind}: level {index}: {csv}");
            let mean = inside.iter().sum::<f64>() / inside.len() as f64;
            let average = level["average"].as_f64().unwrap();
            assert!(
                (mean - average).abs() <= 0.001 * average.max(1.0),
                "{kind}: {mean} vs {average}"
            );
            assert!(average > 0.0, "{kind}: level {index}");
        }
        // The charts and the self-contained report.
        let svg =
            std::fs::read_to_string(out_dir.join(format!("netagg_{kind}_overall.svg"))).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("2 streams") && svg.contains("test note"));
        assert!(out_dir.join(format!("netagg_{kind}_streams.svg")).exists());
        let html = std::fs::read_to_string(out_dir.join(format!("netagg_{kind}.html"))).unwrap();
        let level_table = html.split("id=\"levels\"").nth(1).unwrap_or("");
        assert!(
            html.contains("<svg") && level_table.matches("<tr>").count() == 3,
            "{kind}"
        );
        let peak = json["peak_level"].as_u64().unwrap() as usize;
        let peak_average = levels[peak]["average"].as_f64().unwrap();
        assert!(stdout.contains(&format!("{peak_average:.3}")), "{stdout}");

        // The files runemomniaggdemo.sh leaves, which `netagg post` (like
        // post_proc.py) reads back.
        let log = out_dir.join(format!("netperf_{kind}.log"));
        let log_text = std::fs::read_to_string(&log).unwrap();
        assert!(
            log_text.starts_with("Starting netperfs at ") && log_text.contains("Netperfs stopped ")
        );
        let outs: Vec<_> = std::fs::read_dir(&out_dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&format!("netperf_{kind}_")) && n.ends_with(".out"))
            .collect();
        assert_eq!(outs.len(), 2, "{outs:?}");
        let post = run_with_limit(
            &NETAGG,
            &[
                "post",
                log.to_str().unwrap(),
                "--out",
                out_dir.join("post").to_str().unwrap(),
            ],
            Duration::from_secs(30),
        );
        let post_text = text(&post.stdout);
        assert!(post.status.success(), "{post_text}{}", text(&post.stderr));
        assert!(
            post_text.contains("Average of peak interval is "),
            "{post_text}"
        );
    }
    std::fs::remove_dir_all(&out_dir).ok();
}

#[test]
fn bad_inputs_are_clear_errors() {
    let missing = run_with_limit(
        &NETAGG,
        &["--hosts-file", "/no/such/remote_hosts"],
        Duration::from_secs(10),
    );
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("cannot read /no/such/remote_hosts"));
    let none = run_with_limit(&NETAGG, &["--kind", "tps"], Duration::from_secs(10));
    assert_eq!(none.status.code(), Some(2));
    let help = run_with_limit(&NETAGG, &["--help"], Duration::from_secs(10));
    assert!(text(&help.stdout).contains("Examples:"));
    assert!(text(&help.stdout).contains("--loss-timeout <SECS>"));
    // Every subcommand says what it does (a misplaced doc comment once
    // gave `post`'s text to `report` and left `post` blank).
    let help = text(&help.stdout);
    let commands = help.split("Commands:\n").nth(1).expect("a Commands: list");
    for line in commands.lines().take_while(|l| !l.trim().is_empty()) {
        assert!(
            line.split_whitespace().count() > 3,
            "no help text: {line:?}"
        );
    }
    assert!(help.contains("  report ") && help.contains("  post "));
    // Loss recovery is for the datagram kind only: not silently ignored.
    let tcp = run_with_limit(
        &NETAGG,
        &[
            "--host",
            "127.0.0.1",
            "--kind",
            "outbound",
            "--loss-timeout",
            "1",
        ],
        Duration::from_secs(10),
    );
    assert_eq!(tcp.status.code(), Some(2));
    assert!(
        text(&tcp.stderr).contains("--loss-timeout applies to --kind tps only"),
        "{}",
        text(&tcp.stderr)
    );
    for bad in ["-1", "1.5", "3601", "soon"] {
        let out = run_with_limit(
            &NETAGG,
            // Port 1: nothing would be reached should a value be taken.
            &["--host", "127.0.0.1", "--port", "1", "--loss-timeout", bad],
            Duration::from_secs(10),
        );
        assert_eq!(out.status.code(), Some(2), "--loss-timeout {bad}");
    }
}

#[test]
fn sync_runs_one_stream_per_load_generator_in_turn() {
    // Listening on every IPv4 address: 127.0.0.1 and 127.0.0.2 are two
    // "load generators".
    let server = Server::start("0.0.0.0");
    let out_dir = std::env::temp_dir().join(format!("netagg-sync-{}", std::process::id()));
    let port = server.port.to_string();
    let out = run_with_limit(
        &NETAGG,
        &[
            "--host",
            "127.0.0.1",
            "--host",
            "127.0.0.2",
            "--port",
            &port,
            "--kind",
            "sync",
            "--duration",
            "3",
            "--out",
            out_dir.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("1 streams to 127.0.0.1:") && stdout.contains("1 streams to 127.0.0.2:"),
        "{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("netagg_sync.json")).unwrap())
            .unwrap();
    for level in json["levels"].as_array().unwrap() {
        assert_eq!(level["streams"], 1);
        assert!(level["average"].as_f64().unwrap() > 0.0);
    }
    std::fs::remove_dir_all(&out_dir).ok();
}

#[test]
fn streams_that_cannot_start_are_reported_per_host_and_the_window_follows_the_start() {
    // Three load generators on one port: 127.0.0.1 allows the 32 tests it
    // gets, 127.0.0.2 only 8 of its 32 (EBUSY), and on 127.0.0.3 nothing
    // listens (refused).
    let roomy = Server::start_with("127.0.0.1", &["--max-tests", "100"]);
    let port = roomy.port;
    let Some(_tight) = Server::start_on("127.0.0.2", port, &["--max-tests", "8"]) else {
        return skip(format!("no second netserver on 127.0.0.2:{port}"));
    };
    let out_dir = OutDir::named("netagg-limits");
    let port_text = port.to_string();
    let out = run_with_limit(
        &NETAGG,
        &[
            "--host",
            "127.0.0.1",
            "--host",
            "127.0.0.2",
            "--host",
            "127.0.0.3",
            "--port",
            &port_text,
            "--kind",
            "tps",
            "--burst",
            "1",
            "--streams",
            "96",
            "--duration",
            "3",
            // A test per stream: each stream meets the limits itself.
            "--separate-tests",
            "--out",
            out_dir.0.to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    // Per host, with the reason and how to raise the limit: on stderr, in
    // the summary and in the JSON.
    let busy = "24 streams to 127.0.0.2 failed at set-up of level 0 (96 streams): EBUSY";
    let refused =
        "32 streams to 127.0.0.3 failed at set-up of level 0 (96 streams): connection refused";
    for (what, text) in [("stderr", &stderr), ("summary", &stdout)] {
        assert!(
            text.contains(busy) && text.contains("`netserver --max-tests 32`"),
            "{what}: {text}"
        );
        assert!(
            text.contains(refused) && text.contains(&format!("port {port}")),
            "{what}: {text}"
        );
    }
    assert!(
        stdout.contains("  40 streams (of 96 asked): average "),
        "{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.0.join("netagg_tps.json")).unwrap())
            .unwrap();
    let groups = json["failures_by_host"].as_array().unwrap();
    let group = |host: &str| groups.iter().find(|g| g["host"] == host).unwrap();
    assert_eq!(groups.len(), 2, "{groups:?}");
    assert_eq!(
        (
            group("127.0.0.2")["reason"].as_str(),
            group("127.0.0.2")["count"].as_u64()
        ),
        (Some("ebusy_max_tests"), Some(24))
    );
    assert!(group("127.0.0.2")["hint"]
        .as_str()
        .unwrap()
        .contains("--max-tests 32"));
    assert_eq!(
        (
            group("127.0.0.3")["reason"].as_str(),
            group("127.0.0.3")["count"].as_u64()
        ),
        (Some("refused"), Some(32))
    );

    // No stream is dropped silently: each ran to its final results, or has
    // its failure.
    let streams = json["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 96);
    let ran: Vec<&serde_json::Value> = streams.iter().filter(|s| s["failure"].is_null()).collect();
    assert_eq!(ran.len(), 40);
    for s in &ran {
        assert!(s["running_s"].is_f64() && s["final_line"] == true, "{s}");
    }
    for s in streams.iter().filter(|s| !s["failure"].is_null()) {
        assert_eq!(s["failure"]["phase"], "set-up", "{s}");
        assert!(s["running_s"].is_null(), "{s}");
    }

    // The level was measured from when all of its streams ran, for exactly
    // --duration, and its samples lie in that span.
    let level = &json["levels"][0];
    assert_eq!(
        (
            level["streams"].as_u64(),
            level["streams_requested"].as_u64()
        ),
        (Some(40), Some(96))
    );
    let measured: Vec<f64> = level["measured_s"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(level["setup_s"][1].as_f64(), Some(measured[0]));
    assert!(
        (measured[1] - measured[0] - 3.0).abs() < 1e-6,
        "{measured:?}"
    );
    let last_start = ran
        .iter()
        .map(|s| s["running_s"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(last_start <= measured[0], "{last_start} > {measured:?}");
    let window: Vec<f64> = level["window_s"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(
        (window[0] - measured[0] - 1.0).abs() < 1e-6
            && (measured[1] - window[1] - 1.0).abs() < 1e-6
    );
    for sample in json["series"].as_array().unwrap() {
        assert!(sample["t_s"].as_f64().unwrap() > measured[0], "{sample}");
    }
    let outs = std::fs::read_dir(&out_dir.0)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".out"))
        .count();
    assert_eq!(outs, 40, "one .out per stream that ran");
}

#[test]
fn every_stream_of_a_wide_level_runs_through_its_measured_window() {
    // 128 tps streams with one transaction in flight each: before the
    // streams were set up in parallel behind a gate, the first ones ran
    // alone while the last ones connected, and some did nothing at all in
    // the samples.
    let server = Server::start_with("127.0.0.1", &["--max-tests", "200"]);
    let out_dir = OutDir::named("netagg-wide");
    let port = server.port.to_string();
    let mut args = one_level(&port, "tps", "128", "3", &out_dir);
    args.extend(["--burst", "1"]);
    let out = run_with_limit(&NETAGG, &args, Duration::from_secs(120));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.0.join("netagg_tps.json")).unwrap())
            .unwrap();
    let level = &json["levels"][0];
    assert_eq!(
        (level["streams"].as_u64(), level["streams_late"].as_u64()),
        (Some(128), Some(0)),
        "{level}"
    );
    // Every stream did transactions in the level, and none stalled.
    let per_stream = level["health"]["per_stream"].as_array().unwrap();
    assert_eq!(per_stream.len(), 128);
    for s in per_stream {
        assert!(s["transactions"].as_u64().unwrap() > 0, "{s}");
        assert_eq!(s["stalled"], false, "{s}");
    }
    // The measured span is --duration from when the last stream ran, and
    // its samples cover it: every sample inside it, reading every stream,
    // and the last one at its end, no later than one sampling interval past
    // it.
    let measured: Vec<f64> = level["measured_s"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(
        (measured[1] - measured[0] - 3.0).abs() < 1e-6,
        "{measured:?}"
    );
    let last_start = json["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["running_s"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(last_start <= measured[0], "{last_start} > {measured:?}");
    let series = json["series"].as_array().unwrap();
    let times: Vec<f64> = series.iter().map(|s| s["t_s"].as_f64().unwrap()).collect();
    let interval = json["sample_interval_s"].as_f64().unwrap();
    assert!(
        times.iter().all(|&t| t > measured[0]),
        "{times:?} {measured:?}"
    );
    let last = times.last().copied().unwrap();
    assert!(
        last >= measured[1] && last - measured[1] < interval,
        "{times:?} {measured:?}"
    );
    for s in series {
        let rates = s["stream_rates"].as_array().unwrap();
        assert_eq!(rates.len(), 128);
    }
}

#[test]
fn the_ramp_speaks_the_shared_vocabulary_and_keeps_the_old_spellings() {
    // Everything here is refused before any traffic: no netserver needed.
    let out_dir = OutDir::named("netagg-vocab");
    let out = out_dir.0.to_str().unwrap();
    let ramp = |args: &[&str]| run_with_limit(&NETAGG, args, Duration::from_secs(30));
    let missing = "/nonexistent/kubeconfig";
    // --k8s-selector, and --hosts-k8s as its old spelling: the same query
    // (here a kubeconfig that is missing), and one line saying so.
    for (spelling, notes) in [
        ("--k8s-selector", &[][..]),
        (
            "--hosts-k8s",
            &["netagg: --hosts-k8s is deprecated; use --k8s-selector"][..],
        ),
    ] {
        let got = ramp(&[spelling, "app=x", "--kubeconfig", missing, "--out", out]);
        assert_eq!(got.status.code(), Some(2), "{spelling}");
        assert!(
            text(&got.stderr).contains("cannot read kubeconfig /nonexistent/kubeconfig"),
            "{spelling}: {}",
            text(&got.stderr)
        );
        assert_eq!(deprecation_lines(&got), notes, "{spelling}");
    }
    let alone = ramp(&["--kubeconfig", missing]);
    assert_eq!(alone.status.code(), Some(2));
    assert!(text(&alone.stderr).contains("--kubeconfig needs --k8s-selector"));
    let both = ramp(&["--hosts-k8s", "a=b", "--k8s-selector", "a=b"]);
    assert_eq!(both.status.code(), Some(2));
    // --store=DB, and --db DB as its old spelling: the same database (one
    // that cannot be created), refused before any traffic.
    let bad_db = "/dev/null/r.db"; // under a file: never created
    let store_at = format!("--store={bad_db}");
    for (spelling, notes) in [
        (vec![store_at.as_str()], &[][..]),
        (
            vec!["--db", bad_db],
            &["netagg: --db is deprecated; use --store=PATH"][..],
        ),
    ] {
        let mut args = vec!["--host", "127.0.0.1", "--out", out];
        args.extend(&spelling);
        let got = ramp(&args);
        assert_eq!(got.status.code(), Some(2), "{spelling:?}");
        assert!(
            text(&got.stderr).contains("netagg: --store: "),
            "{spelling:?}: {}",
            text(&got.stderr)
        );
        assert_eq!(deprecation_lines(&got), notes, "{spelling:?}");
    }
    // --tag needs --store; --store and --no-store together are refused.
    for args in [
        &["--host", "127.0.0.1", "--tag", "x"][..],
        &["--host", "127.0.0.1", "--no-store", "--tag", "x"],
        &["--host", "127.0.0.1", "--store", "--no-store"],
        &["--host", "127.0.0.1", "--duration", "1"],
    ] {
        assert_eq!(ramp(args).status.code(), Some(2), "{args:?}");
    }
    // --help shows the one vocabulary, never the old spellings.
    let help = text(&ramp(&["--help"]).stdout);
    for shown in [
        "--store[=<DB>]",
        "--no-store",
        "--tag",
        "--out",
        "--duration",
        "--k8s-selector",
        "--k8s-namespace",
    ] {
        assert!(help.contains(shown), "{shown} not in {help}");
    }
    for hidden in ["--db", "--hosts-k8s"] {
        assert!(!help.contains(hidden), "{hidden} in {help}");
    }
}

#[test]
fn without_out_the_ramp_writes_into_its_working_directory() {
    // Scripts run the ramp and then read its runemomniaggdemo.sh-style
    // files where they stand, as the seed's post-processing does.
    if fast_tier_skips("slow (21 s)") {
        return;
    }
    let server = Server::start("127.0.0.1");
    let here = OutDir::named("netagg-here");
    std::fs::create_dir_all(&here.0).unwrap();
    let port = server.port.to_string();
    let mut args = one_level(&port, "tps", "1", "2", &here);
    args.truncate(args.len() - 2); // no --out
    let mut command = std::process::Command::new(NETAGG);
    command.args(&args).current_dir(&here.0);
    let out = common::podman::run_command_with_limit(command, Duration::from_secs(60));
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    for name in ["netagg_tps.json", "netagg_tps.csv", "netperf_tps.log"] {
        assert!(
            here.0.join(name).is_file(),
            "{name} is not in the working directory"
        );
    }
}
