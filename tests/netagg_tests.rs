//! netagg end to end on loopback: a short ramp against our netserver writes
//! the summary, the series and the JSON, the summary agrees with the series,
//! and the median sample read all streams within a millisecond.

mod common;
use common::*;
use std::time::Duration;

const NETAGG: &str = env!("CARGO_BIN_EXE_netagg");

#[test]
fn a_short_ramp_writes_consistent_reports() {
    let server = Server::start("127.0.0.1");
    let out_dir = std::env::temp_dir().join(format!("netagg-test-{}", std::process::id()));
    let port = server.port.to_string();
    for kind in ["tps", "outbound"] {
        let out = run_with_limit(
            NETAGG,
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
        assert!(
            html.contains("<svg") && html.matches("<tr>").count() == 3,
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
            NETAGG,
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
        NETAGG,
        &["--hosts-file", "/no/such/remote_hosts"],
        Duration::from_secs(10),
    );
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("cannot read /no/such/remote_hosts"));
    let none = run_with_limit(NETAGG, &["--kind", "tps"], Duration::from_secs(10));
    assert_eq!(none.status.code(), Some(2));
    let help = run_with_limit(NETAGG, &["--help"], Duration::from_secs(10));
    assert!(text(&help.stdout).contains("Examples:"));
    assert!(text(&help.stdout).contains("--loss-timeout <SECS>"));
    // Loss recovery is for the datagram kind only: not silently ignored.
    let tcp = run_with_limit(
        NETAGG,
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
            NETAGG,
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
        NETAGG,
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
