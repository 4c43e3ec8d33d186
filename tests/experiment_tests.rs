//! `netagg experiment` end to end on loopback: a small plan run against our
//! netserver (every run recorded, every cell its replicates, outputs
//! written), the seeded order, failed runs kept with their reason, and bad
//! plans refused before anything runs. The offload experiment over network
//! namespaces is in experiment_netns_tests.rs.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::NETAGG;

/// A scratch directory removed when the test ends, also when it fails.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("ngexp-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn netagg(args: &[&str], limit: Duration) -> std::process::Output {
    run_with_limit(&NETAGG, args, limit)
}

fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_loopback_experiment_records_every_run_of_every_cell() {
    if fast_tier_skips("slow (9 s)") {
        return;
    }
    let server = Server::start("127.0.0.1");
    let scratch = Scratch::new("loop");
    let out = scratch.path("out");
    let db = scratch.path("results.db");
    let port = server.port.to_string();
    let run = netagg(
        &[
            "experiment",
            "--host",
            "127.0.0.1",
            "--port",
            &port,
            "--factor",
            "protocol=udp,tcp",
            "--factor",
            "message_size=1024,8192",
            "--replicates",
            "2",
            "--duration",
            "1",
            "--seed",
            "11",
            "--out",
            out.to_str().unwrap(),
            &format!("--store={}", db.display()),
        ],
        Duration::from_secs(120),
    );
    let stderr = text(&run.stderr);
    assert!(run.status.success(), "{stderr}{}", text(&run.stdout));
    assert!(stderr.contains("seed 11"), "{stderr}");
    assert!(stderr.contains("stored as"), "{stderr}");
    assert!(
        !stderr.contains("deprecated") && !stderr.contains("no longer stored"),
        "{stderr}"
    );
    let record = read_json(&out.join("experiment.json"));
    assert_eq!(record["status"], "complete");
    assert_eq!(record["seed"], 11);
    let runs = record["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 8);
    for run in runs {
        assert_eq!(run["status"], "ok", "{run}");
        assert!(
            run["metrics"]["THROUGHPUT"].as_f64().unwrap() > 0.0,
            "{run}"
        );
        let cell = run["cell"].as_array().unwrap();
        let protocol = cell[0][1].as_str().unwrap();
        assert_eq!(
            run["facts"]["PROTOCOL"].as_str().unwrap().to_lowercase(),
            protocol
        );
        let size: f64 = cell[1][1].as_str().unwrap().parse().unwrap();
        assert_eq!(
            run["metrics"]["LOCAL_SEND_SIZE"].as_f64(),
            Some(size),
            "{run}"
        );
        for key in [
            "LOCAL_CPU_UTIL",
            "REMOTE_CPU_UTIL",
            "LOCAL_SD",
            "REMOTE_SD",
            "LOCAL_SEND_CALLS",
            "REMOTE_RECV_CALLS",
            "LOCAL_BYTES_SENT",
        ] {
            assert!(run["metrics"][key].is_number(), "{key} missing in {run}");
        }
        // UDP has no MSS: netperf's -1 is left out, never recorded as a value.
        assert_eq!(
            run["metrics"]["TRANSPORT_MSS"].is_number(),
            protocol == "tcp",
            "{run}"
        );
        assert!(!run["metrics"]
            .as_object()
            .unwrap()
            .contains_key("TRANSACTION_RATE"));
    }
    // Re-rendered from the database: `results show --json` into --render.
    let id = record["id"].as_str().unwrap();
    let shown = netagg(
        &[
            "results",
            "show",
            id,
            "--json",
            "--db",
            db.to_str().unwrap(),
        ],
        Duration::from_secs(30),
    );
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    let saved = scratch.path("shown.json");
    std::fs::write(&saved, &shown.stdout).unwrap();
    let again_out = scratch.path("again");
    let rendered = netagg(
        &[
            "experiment",
            "--render",
            saved.to_str().unwrap(),
            "--out",
            again_out.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    // The old spelling of `netagg report FILE --out DIR`, with a note.
    assert!(rendered.status.success(), "{}", text(&rendered.stderr));
    assert!(
        again_out.join("report.html").exists() && text(&rendered.stdout).contains("report.html")
    );
    assert_eq!(
        deprecation_lines(&rendered).len(),
        1,
        "{}",
        text(&rendered.stderr)
    );
    // The same --out again would overwrite it: refused before any run.
    let again = netagg(
        &[
            "experiment",
            "--host",
            "127.0.0.1",
            "--port",
            &port,
            "--factor",
            "protocol=udp",
            "--out",
            out.to_str().unwrap(),
            "--no-store",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again.stderr).contains("already holds an experiment"),
        "{}",
        text(&again.stderr)
    );
    let env = &record["environment"];
    assert!(
        env["local"]["kernel"].is_string() && env["remote"]["cpu_count"].is_string(),
        "{env}"
    );
    // The same seed gives the same order.
    let dry = netagg(
        &[
            "experiment",
            "--dry-run",
            "--factor",
            "protocol=udp,tcp",
            "--factor",
            "message_size=1024,8192",
            "--replicates",
            "2",
            "--seed",
            "11",
        ],
        Duration::from_secs(30),
    );
    let planned: Vec<String> = text(&dry.stdout)
        .lines()
        .skip(1)
        .map(|l| {
            l.split(" #")
                .next()
                .unwrap()
                .split_whitespace()
                .skip(1)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let ran: Vec<String> = runs
        .iter()
        .map(|r| {
            r["cell"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| format!("{}={}", p[0].as_str().unwrap(), p[1].as_str().unwrap()))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(planned, ran);
}

#[test]
fn runs_that_fail_are_recorded_with_their_reason() {
    let scratch = Scratch::new("fail");
    let out = scratch.path("out");
    // A port nothing listens on: every run fails, none is dropped.
    let port = closed_port().to_string();
    let run = netagg(
        &[
            "experiment",
            "--host",
            "127.0.0.1",
            "--port",
            &port,
            "--factor",
            "message_size=64,128",
            "--replicates",
            "2",
            "--duration",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--db",
            scratch.path("r.db").to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    // The old spelling of --store=PATH still stores, and says so once.
    assert_eq!(
        deprecation_lines(&run),
        ["netagg: --db is deprecated; use --store=PATH"]
    );
    assert!(scratch.path("r.db").exists());
    let record = read_json(&out.join("experiment.json"));
    let runs = record["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    for r in runs {
        assert_eq!(r["status"], "failed");
        let reason = r["reason"].as_str().unwrap();
        assert!(
            reason.contains("exited with status") && reason.contains("control connection"),
            "{reason}"
        );
    }
}

#[test]
fn bad_plans_are_refused_before_anything_runs() {
    let scratch = Scratch::new("bad");
    let plan = scratch.path("plan.toml");
    let out = scratch.path("out");
    let cases: &[(&str, &[&str], &str)] = &[
        ("[factors\nprotocol = [\"udp\"]\n", &[], "line 1"),
        (
            "[factors]\ncolour = [\"red\"]\n",
            &[],
            "unknown factor \"colour\"",
        ),
        ("[factors]\nmessage_size = [\"huge\"]\n", &[], "not a size"),
        (
            "replicates = 0\n[factors]\nprotocol = [\"udp\"]\n",
            &[],
            "replicates 0",
        ),
        ("", &[], "no factors"),
        ("", &["--factor", "protocol"], "NAME=LEVEL"),
        (
            "[factors]\nprotocol = [\"tcp\"]\n",
            &["--netperf", "/nonexistent/netperf"],
            "not an executable",
        ),
    ];
    for (text_of_plan, extra, expect) in cases {
        std::fs::write(&plan, text_of_plan).unwrap();
        let mut args = vec![
            "experiment",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let run = netagg(&args, Duration::from_secs(30));
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{text_of_plan:?}: {stderr}");
        assert!(
            stderr.contains(expect),
            "{text_of_plan:?}: expected {expect:?} in {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(!out.exists(), "nothing written for {text_of_plan:?}");
    }
    let missing = netagg(
        &["experiment", "/nonexistent/plan.toml"],
        Duration::from_secs(30),
    );
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("cannot read plan /nonexistent/plan.toml"));
}

#[test]
fn storing_is_spelled_as_everywhere_and_old_spellings_still_parse() {
    let scratch = Scratch::new("vocab");
    let db = scratch.path("r.db");
    let db_text = db.to_str().unwrap();
    let store_at = format!("--store={db_text}");
    let dry = |extra: &[&str]| {
        let mut args = vec!["experiment", "--dry-run", "--factor", "protocol=udp,tcp"];
        args.extend_from_slice(extra);
        netagg(&args, Duration::from_secs(30))
    };
    // The new spellings: no note, the same dry run.
    for extra in [
        &["--store"][..],
        &[&store_at],
        &["--no-store"],
        &["--store", "--tag", "a,b", "--tag", "c"],
        &["--duration", "3", "--replicates", "2", "--out", db_text],
    ] {
        let out = dry(extra);
        assert!(out.status.success(), "{extra:?}: {}", text(&out.stderr));
        assert!(text(&out.stdout).starts_with("# seed "), "{extra:?}");
        assert!(deprecation_lines(&out).is_empty(), "{extra:?}");
        assert!(!text(&out.stderr).contains("no longer stored"), "{extra:?}");
    }
    let two = dry(&["--replicates", "2", "--duration", "3"]);
    assert!(text(&two.stdout).starts_with("# seed ") && text(&two.stdout).contains("-l 3 "));
    assert!(
        text(&two.stdout).lines().count() == 5,
        "{}",
        text(&two.stdout)
    );
    // Host selection: --host, or a remote_hosts file naming one netserver.
    let hosts_file = scratch.path("remote_hosts");
    std::fs::write(&hosts_file, "NUM_REMOTE_HOSTS=1\nREMOTE_HOSTS[0]=lg9\n").unwrap();
    let from_file = dry(&["--hosts-file", hosts_file.to_str().unwrap()]);
    assert!(
        text(&from_file.stdout).contains(" -H lg9 "),
        "{}",
        text(&from_file.stderr)
    );
    assert!(text(&dry(&["--host", "lg8"]).stdout).contains(" -H lg8 "));
    let two = dry(&["--host", "lg8", "--host", "lg9"]);
    assert_eq!(two.status.code(), Some(2));
    assert!(
        text(&two.stderr).contains("one netserver"),
        "{}",
        text(&two.stderr)
    );
    // The old spelling: the same meaning, and one line saying so.
    let old = dry(&["--db", db_text]);
    assert!(old.status.success(), "{}", text(&old.stderr));
    assert_eq!(
        deprecation_lines(&old),
        ["netagg: --db is deprecated; use --store=PATH"]
    );
    // A dry run stores nothing, whatever it is told.
    assert!(!db.exists());
    // Contradictions and bad tags are refused.
    for extra in [
        &["--store", "--no-store"][..],
        &["--db", db_text, "--no-store"],
        &["--db", db_text, "--store=/elsewhere.db"],
        &["--tag", "a,,b"],
    ] {
        let out = dry(extra);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{extra:?}: {}",
            text(&out.stderr)
        );
    }
    // --help shows the one vocabulary, never the old spellings.
    let help = text(&netagg(&["experiment", "--help"], Duration::from_secs(30)).stdout);
    for shown in [
        "--store[=<DB>]",
        "--no-store",
        "--tag",
        "--out",
        "--duration",
        "--replicates",
    ] {
        assert!(help.contains(shown), "{shown} not in {help}");
    }
    assert!(!help.contains("--db"), "{help}");
}

#[test]
fn without_store_an_experiment_stores_nothing_and_says_so_once() {
    let scratch = Scratch::new("nostore");
    let out = scratch.path("out");
    let db = scratch.path("default.db");
    // A port nothing listens on: the runs fail fast; the point is storing.
    let port = closed_port().to_string();
    let args = [
        "experiment",
        "--host",
        "127.0.0.1",
        "--port",
        &port,
        "--factor",
        "message_size=64",
        "--replicates",
        "1",
        "--duration",
        "1",
        "--out",
        out.to_str().unwrap(),
    ];
    let env = [("NETPERF_NG_DB", db.to_str().unwrap())];
    let run = common::results::run_as(&NETAGG, &args, &env, None).unwrap();
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    let notes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("no longer stored"))
        .collect();
    assert_eq!(
        notes,
        ["netagg experiment: results are no longer stored unless --store is given (--no-store silences this note)"]
    );
    assert!(out.join("experiment.json").exists());
    assert!(!db.exists(), "stored without --store");
}

#[test]
fn render_refuses_storing_options_it_would_ignore() {
    // --render draws saved outputs again and stores nothing: a storing
    // option beside it is refused, not dropped.
    for extra in [
        &["--store"][..],
        &["--db", "/tmp/x.db"],
        &["--tag", "a"],
        &["--no-store"],
    ] {
        let mut args = vec!["experiment", "--render", "/nonexistent/experiment.json"];
        args.extend_from_slice(extra);
        let out = netagg(&args, Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("cannot be used with"), "{extra:?}: {said}");
    }
}
