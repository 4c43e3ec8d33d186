//! Open-loop request/response (`netperf -- --rate R`) end to end over
//! loopback: a netserver that stalls once (its test mode
//! NETPERF_NG_TEST_PAUSE_ONCE_MS) shows in the corrected latencies of every
//! request the stall delayed, and in the raw ones of only the request it
//! caught; the schedule keeps sending through a stall when the bound allows;
//! UDP_RR and omni run open too; what cannot run open is refused before any
//! traffic. Shapes are checked with counts, never with timings: the
//! machine's speed is bench/open-loop's business.

mod common;

use common::{closed_port, run_ok, run_with_limit, text, Server, NETPERF};
use std::collections::BTreeMap;
use std::time::Duration;

/// Requests a second: what this 2-CPU machine keeps with room to catch up.
const RATE: u64 = 5000;
/// The netserver's one stall, in milliseconds, and after how many transactions.
const PAUSE_MS: u64 = 100;
const PAUSE_AFTER: &str = "2000";
const SECONDS: u64 = 3;

const SELECTORS: &str = "LATENCY_SAMPLES,OPEN_OFFERED_RATE,OPEN_ACHIEVED_RATE,OPEN_HELD_BACK,\
OPEN_LOST,OPEN_MAX_IN_FLIGHT,CO_P50_LATENCY,CO_P99_LATENCY,RAW_P99_LATENCY,RAW_P99_9_LATENCY";

/// The `-k` output as name → number.
fn keyval(stdout: &str) -> BTreeMap<String, f64> {
    stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect()
}

fn stalling_server() -> Server {
    let pause = PAUSE_MS.to_string();
    Server::start_with_env(
        "127.0.0.1",
        &[],
        &[
            ("NETPERF_NG_TEST_PAUSE_ONCE_MS", pause.as_str()),
            ("NETPERF_NG_TEST_PAUSE_AFTER", PAUSE_AFTER),
        ],
    )
}

/// TCP_RR at RATE against `server` with `extra` test options.
fn open_run(server: &Server, extra: &[&str]) -> BTreeMap<String, f64> {
    let (rate, secs) = (RATE.to_string(), SECONDS.to_string());
    let mut args = vec![
        "-t", "TCP_RR", "-l", &secs, "-P", "0", "--", "--rate", &rate,
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-k", SELECTORS]);
    let out = run_ok(server, &args);
    let values = keyval(&out);
    assert!(values.len() >= 10, "{out}");
    values
}

#[test]
fn a_stall_shows_in_the_corrected_latencies_and_hardly_in_the_raw_ones() {
    let server = stalling_server();
    // One request in flight at most: while the netserver stalls, the
    // schedule's requests wait their turn, as a closed loop's would, but
    // each keeps its intended send time.
    let v = open_run(&server, &["--max-inflight", "1"]);
    let samples = v["LATENCY_SAMPLES"];
    let half_pause_us = (PAUSE_MS * 1000 / 2) as f64;
    // About RATE x PAUSE requests fell due during the stall, half of them
    // in its first half: each waited at least half the stall.
    let expected = (RATE * PAUSE_MS / 1000 / 2) as f64;
    // A P99 at or above half the stall means at least 1% of the samples
    // are: compared in counts, with room for a slow machine.
    assert!(
        samples * 0.01 <= expected * 0.75,
        "the P99 stands for too many samples: {v:?}"
    );
    assert!(v["CO_P99_LATENCY"] >= half_pause_us, "{v:?}");
    // The raw times saw the stall only in the request it caught: fewer
    // than 0.1% of the samples (a handful) waited half the stall.
    assert!(samples * 0.001 < expected / 10.0, "{v:?}");
    assert!(v["RAW_P99_9_LATENCY"] < half_pause_us, "{v:?}");
    // Every request that fell due during the stall was held back, not
    // dropped from the schedule.
    assert!(v["OPEN_HELD_BACK"] >= expected, "{v:?}");
    assert_eq!(v["OPEN_MAX_IN_FLIGHT"], 1.0, "{v:?}");
    assert_eq!(v["OPEN_LOST"], 0.0, "{v:?}");
    assert_eq!(v["OPEN_OFFERED_RATE"], RATE as f64, "{v:?}");
}

#[test]
fn the_schedule_sends_through_a_stall() {
    let server = stalling_server();
    // Room for 20 s of requests: however slow this machine is, none waits.
    let v = open_run(&server, &["--max-inflight", "100000"]);
    // The requests due during the stall left on time: about RATE x PAUSE
    // were in flight at once, none was held back, and the raw times saw
    // the stall as well (those sent in its first half, about 1.7 % of the
    // samples, waited half of it).
    let due_in_stall = (RATE * PAUSE_MS / 1000) as f64;
    assert!(v["OPEN_MAX_IN_FLIGHT"] >= due_in_stall / 2.0, "{v:?}");
    assert_eq!(v["OPEN_HELD_BACK"], 0.0, "{v:?}");
    assert!(
        v["RAW_P99_LATENCY"] >= (PAUSE_MS * 1000 / 2) as f64,
        "{v:?}"
    );
}

#[test]
fn udp_rr_and_omni_run_open_and_say_so_at_verbosity_two() {
    let server = Server::start("127.0.0.1");
    for test in [&["-t", "UDP_RR"][..], &["-t", "omni", "--", "-d", "rr"][..]] {
        let mut args = vec!["-l", "1", "-v", "2"];
        args.extend_from_slice(test);
        if test.len() == 2 {
            args.push("--");
        }
        args.extend_from_slice(&["--rate", "1000", "-r", "8"]);
        let out = run_ok(&server, &args);
        for needle in [
            "Open loop: 1000.00 requests/s offered",
            "netperf alone keeps the schedule",
            "Corrected latency (from intended send), us: P50 ",
            "Raw latency (from actual send), us: P50 ",
        ] {
            assert!(out.contains(needle), "{test:?}: no {needle:?} in {out}");
        }
    }
}

/// UDP_RR at 2000 requests a second for `secs` against a netserver that
/// leaves every 500th request unanswered, with `extra` test options.
fn lossy_udp_run(secs: &str, extra: &[&str]) -> (String, BTreeMap<String, f64>) {
    let server = Server::start_with_env("127.0.0.1", &[], &[("NETPERF_NG_TEST_DROP_EVERY", "500")]);
    let mut args = vec![
        "-t", "UDP_RR", "-l", secs, "-P", "0", "--", "--rate", "2000", "-r", "8", "-e", "1",
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[
        "-k",
        "OPEN_LOST,RR_TIMEOUTS,OPEN_ACHIEVED_RATE,OPEN_OFFERED_RATE",
    ]);
    let out = run_ok(&server, &args);
    let v = keyval(&out);
    assert_eq!(v["OPEN_LOST"], v["RR_TIMEOUTS"], "{out}");
    assert_eq!(v["OPEN_OFFERED_RATE"], 2000.0, "{out}");
    assert!(v["OPEN_ACHIEVED_RATE"] > 0.0, "{out}");
    (out, v)
}

#[test]
fn a_lost_datagram_is_counted_and_the_schedule_goes_on() {
    // Each dropped request is lost on its own after -e's timeout, and the
    // responses after it still pair with their own requests (netserver
    // echoes their numbers). About 4000 requests, 8 dropped; those of the
    // last second may still have been in flight at the end.
    let (out, v) = lossy_udp_run("2", &[]);
    assert!(v["OPEN_LOST"] >= 2.0, "{out}");
}

/// The per-flow transactions of a `--flow-samples` CSV.
fn transactions_per_flow(csv: &std::path::Path) -> BTreeMap<u32, u64> {
    let body = std::fs::read_to_string(csv).unwrap();
    let mut per_flow = BTreeMap::new();
    for line in body.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        *per_flow.entry(cells[0].parse().unwrap()).or_default() += cells[3].parse::<u64>().unwrap();
    }
    per_flow
}

/// The number after `label` in `text`.
fn count_after(text: &str, label: &str) -> u64 {
    let at = text
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in {text}"))
        + label.len();
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("{label:?} in {text}"))
}

#[test]
fn many_flows_share_the_rate_evenly() {
    // --flows N --rate R: the requests of one schedule go to the flows in
    // turn, so the flows' transactions differ by no more than what each
    // thread's turn and the requests still in flight at the end make.
    let server = Server::start("127.0.0.1");
    let csv = std::env::temp_dir().join(format!("open-flows-{}.csv", std::process::id()));
    let csv_text = csv.to_string_lossy().into_owned();
    let out = run_ok(
        &server,
        &[
            "-t",
            "TCP_RR",
            "-l",
            "2",
            "-v",
            "2",
            "--",
            "--flows",
            "16",
            "--threads",
            "2",
            "--rate",
            "4000",
            "--flow-samples",
            &csv_text,
        ],
    );
    let per_flow = transactions_per_flow(&csv);
    let _ = std::fs::remove_file(&csv);
    assert_eq!(per_flow.len(), 16, "{out}");
    assert!(out.contains("4000.00 requests/s offered"), "{out}");
    assert_eq!(count_after(&out, "lost "), 0, "{out}");
    let in_flight_at_end = count_after(&out, "in flight at the end ");
    let (least, most) = (
        *per_flow.values().min().unwrap(),
        *per_flow.values().max().unwrap(),
    );
    assert!(least > 0, "{per_flow:?}");
    assert!(
        most - least <= 2 + in_flight_at_end,
        "{per_flow:?} {in_flight_at_end}\n{out}"
    );
    // Every response timed twice, each once: the corrected histogram holds
    // the transactions.
    let total: u64 = per_flow.values().sum();
    assert_eq!(count_after(&out, "HIST_TOTAL:      "), total, "{out}");
}

#[test]
fn flows_far_behind_their_schedule_hold_it_back_and_end_on_time() {
    // A million requests a second over four flows, one in flight each: the
    // schedule waits for the flows, says how many it held back, and the
    // test ends with its results.
    let server = Server::start("127.0.0.1");
    let out = run_ok(
        &server,
        &[
            "-t",
            "TCP_RR",
            "-l",
            "1",
            "-P",
            "0",
            "--",
            "--flows",
            "4",
            "--rate",
            "1000000",
            "--max-inflight",
            "1",
            "-k",
            "OPEN_HELD_BACK,OPEN_ACHIEVED_RATE,OPEN_LATE",
        ],
    );
    let v = keyval(&out);
    assert!(v["OPEN_HELD_BACK"] > 0.0 && v["OPEN_LATE"] > 0.0, "{out}");
    assert!(v["OPEN_ACHIEVED_RATE"] > 0.0, "{out}");
}

#[test]
fn udp_flows_lose_each_request_on_its_own() {
    // The same over 8 flows: netserver's flows echo the numbers too. About
    // 6000 requests, 12 dropped.
    let (out, v) = lossy_udp_run("3", &["--flows", "8"]);
    assert!(v["OPEN_LOST"] >= 4.0, "{out}");
}

#[test]
fn a_closed_loop_shows_no_open_loop_figures() {
    let server = Server::start("127.0.0.1");
    let out = run_ok(
        &server,
        &[
            "-t",
            "TCP_RR",
            "-l",
            "1",
            "-v",
            "2",
            "--",
            "-k",
            "OPEN_OFFERED_RATE,CO_P99_LATENCY,LOCAL_NODELAY",
        ],
    );
    assert!(!out.contains("Open loop"), "{out}");
    let v = keyval(&out);
    assert_eq!(
        (
            v["OPEN_OFFERED_RATE"],
            v["CO_P99_LATENCY"],
            v["LOCAL_NODELAY"]
        ),
        (-1.0, -1.0, 0.0),
        "{out}"
    );
}

#[test]
fn what_cannot_run_open_is_refused_before_traffic() {
    // Nobody listens on the port: a refusal that came after connecting
    // would name the connection instead.
    let port = closed_port().to_string();
    for (args, needle) in [
        (&["-t", "TCP_RR", "--", "--rate", "0"][..], "above 0"),
        (&["-t", "TCP_RR", "--", "--rate", "-5"][..], "not a number"),
        (
            &["-t", "TCP_RR", "--", "--rate", "20000000"][..],
            "at most 10000000",
        ),
        (&["-t", "TCP_RR", "--", "--rate", "abc"][..], "not a number"),
        (&["-t", "TCP_RR", "--", "--rate=1e3"][..], "not a number"),
        (&["-t", "TCP_RR", "--", "--rate"][..], "needs a value"),
        (
            &["-t", "TCP_STREAM", "--", "--rate", "100"][..],
            "not a request/response test",
        ),
        (
            &["-t", "TCP_CRR", "--", "--rate", "100"][..],
            "connection per transaction",
        ),
        (
            &["-t", "TCP_RR", "--", "--rate", "100", "-c"][..],
            "connection per transaction",
        ),
        (
            &["-t", "TCP_RR", "-w", "1", "-b", "1", "--", "--rate", "100"][..],
            "-w/-b pacing",
        ),
        (
            &["-t", "TCP_RR", "--", "--rate", "100", "-b", "4"][..],
            "-b (first burst",
        ),
        (
            &["-t", "TCP_RR", "-l", "-100", "--", "--rate", "100"][..],
            "a count",
        ),
        (
            &["-t", "TCP_RR", "--", "--max-inflight", "4"][..],
            "goes with --rate",
        ),
        (&["-t", "UDP_RR", "--", "--rate", "100"][..], "-r 8"),
        (
            &["-t", "STREAM_RR", "--", "--rate", "100"][..],
            "Unix-domain",
        ),
        (
            &[
                "-t", "UDP_RR", "--", "--rate", "100", "-r", "8", "--mmsg", "4",
            ][..],
            "--mmsg",
        ),
        (
            &["-t", "UDP_RR", "--", "--rate", "100", "-r", "8,4"][..],
            "-r 8",
        ),
        (
            &["-t", "TCP_RR", "--", "--rate", "10", "--max-inflight", "0"][..],
            "between 1 and",
        ),
    ] {
        let mut all = vec!["-H", "127.0.0.1", "-p", port.as_str()];
        all.extend_from_slice(args);
        let out = run_with_limit(&NETPERF, &all, Duration::from_secs(10));
        let err = text(&out.stderr);
        // netperf's exit for a command line it refuses (docs/compatibility.md).
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains(needle) && err.contains("--"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn help_ext_names_the_options() {
    let out = run_with_limit(&NETPERF, &["--", "--help-ext"], Duration::from_secs(5));
    let help = text(&out.stdout);
    assert!(
        help.contains("--rate R") && help.contains("--max-inflight N"),
        "{help}"
    );
}
