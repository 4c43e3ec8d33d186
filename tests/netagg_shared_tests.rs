//! netagg's streams as the flows of shared tests (a level's streams to one
//! load generator running our netserver are one many-flow test): they stop
//! with their results as streams of their own do, a shared test's refusal
//! is each of its streams' failure with the reason and the hint, and a
//! flow killed from outside is its stream's failure while the others go on.
//! Loopback only; the scale figures are bench/netagg-scale's.

mod common;

use common::ramp::{one_level, OutDir};
use common::*;
use std::time::Duration;

#[test]
fn inbound_streams_stop_with_their_results() {
    // A receiving stream that runs until stopped cannot wait for its
    // netserver, which sends until the connection goes away, to close: it
    // would be cut at the stop bound and lose its results. So for the
    // streams of a test each, and the flows of a shared test.
    let server = Server::start("127.0.0.1");
    let port = server.port.to_string();
    for separate in [true, false] {
        let out_dir = OutDir::named(&format!("netagg-inbound-{separate}"));
        let mut args = one_level(&port, "inbound", "4", "2", &out_dir);
        if separate {
            args.push("--separate-tests");
        }
        let out = run_with_limit(&NETAGG, &args, Duration::from_secs(60));
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(out.status.success(), "{stdout}{stderr}");
        assert!(
            !stdout.contains("failed") && !stderr.contains("failed"),
            "{stdout}{stderr}"
        );
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out_dir.0.join("netagg_inbound.json")).unwrap(),
        )
        .unwrap();
        let streams = json["streams"].as_array().unwrap();
        assert_eq!(streams.len(), 4);
        let shared = json["shared_tests"].as_array().unwrap();
        for s in streams {
            assert!(s["failure"].is_null(), "{s}");
            // A stream of its own has its final line; a flow's is its
            // test's.
            assert_eq!(s["final_line"] == true, separate, "{s}");
            assert_eq!(s["flow"].is_null(), separate, "{s}");
        }
        match separate {
            true => assert!(shared.is_empty(), "{shared:?}"),
            false => {
                assert_eq!(shared.len(), 1, "{shared:?}");
                assert_eq!(shared[0]["streams"], serde_json::json!([0, 1, 2, 3]));
                let line = shared[0]["final_line"].as_str().unwrap_or_default();
                assert!(line.contains(",TCP,"), "{line}");
                assert!(
                    stdout.contains("4 of 4 streams ran as the flows of 1 shared test"),
                    "{stdout}"
                );
            }
        }
    }
}

#[test]
fn a_shared_tests_refusals_are_every_one_of_its_streams_failures() {
    // Three load generators on one port, 32 streams each: 127.0.0.1 serves
    // them as one shared test, 127.0.0.2 allows fewer connections than the
    // test has flows (EUSERS), and on 127.0.0.3 nothing listens.
    let roomy = Server::start("127.0.0.1");
    let port = roomy.port;
    let Some(_tight) = Server::start_on("127.0.0.2", port, &["--max-connections", "16"]) else {
        return skip(format!("no second netserver on 127.0.0.2:{port}"));
    };
    let out_dir = OutDir::named("netagg-shared-limits");
    let port_text = port.to_string();
    let mut args = one_level(&port_text, "tps", "96", "2", &out_dir);
    args.extend(["--burst", "1", "--host", "127.0.0.2", "--host", "127.0.0.3"]);
    let out = run_with_limit(&NETAGG, &args, Duration::from_secs(120));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let over = "32 streams to 127.0.0.2 failed at set-up of level 0 (96 streams): netserver refused the shared test's flows";
    assert!(
        stdout.contains(over) && stdout.contains("`netserver --max-connections 32`"),
        "{stdout}"
    );
    assert!(
        stdout.contains("32 of 96 streams ran as the flows of 1 shared test"),
        "{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.0.join("netagg_tps.json")).unwrap())
            .unwrap();
    let groups = json["failures_by_host"].as_array().unwrap();
    let reasons: Vec<(&str, &str, u64)> = groups
        .iter()
        .map(|g| {
            (
                g["host"].as_str().unwrap(),
                g["reason"].as_str().unwrap(),
                g["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        reasons,
        [
            ("127.0.0.2", "flows_max_connections", 32),
            ("127.0.0.3", "refused", 32)
        ]
    );
    // Every stream is accounted for: the flows that ran, each with its
    // place in the shared test, and the failures.
    let streams = json["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 96);
    let ran: Vec<&serde_json::Value> = streams.iter().filter(|s| s["failure"].is_null()).collect();
    assert_eq!(ran.len(), 32);
    let mut flows: Vec<u64> = ran.iter().map(|s| s["flow"].as_u64().unwrap()).collect();
    flows.sort_unstable();
    assert_eq!(flows, (0..32).collect::<Vec<u64>>());
    assert!(ran.iter().all(|s| s["host"] == "127.0.0.1"));
    let level = &json["levels"][0];
    assert_eq!(level["streams"].as_u64(), Some(32));
    assert_eq!(level["health"]["stalled_streams"], serde_json::json!([]));
    assert_eq!(
        level["health"]["streams_that_moved_nothing"],
        serde_json::json!([])
    );
}

/// The established TCP connections process `pid` holds to 127.0.0.1,
/// other than to `control_port`: (its port, the far port).
fn data_connections(pid: u32, control_port: u16) -> Vec<(u16, u16)> {
    let Ok(out) = std::process::Command::new("ss")
        .args(["-Htnp", "state", "established", "dst", "127.0.0.1"])
        .output()
    else {
        return vec![];
    };
    let port = |addr: &str| addr.rsplit(':').next()?.parse::<u16>().ok();
    text(&out.stdout)
        .lines()
        .filter(|l| l.contains(&format!("pid={pid},")))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (local, peer) = (f.nth(2)?, f.next()?);
            Some((port(local)?, port(peer)?))
        })
        .filter(|&(_, far)| far != control_port)
        .collect()
}

#[test]
fn a_flow_killed_from_outside_is_its_streams_failure_and_the_others_go_on() {
    if fast_tier_skips("needs root (ss -K closes another process's socket)") {
        return;
    }
    if !common::results::is_root() {
        return skip("needs root (ss -K closes another process's socket)");
    }
    let server = Server::start("127.0.0.1");
    let out_dir = OutDir::named("netagg-kill");
    let port = server.port.to_string();
    let args = one_level(&port, "outbound", "8", "4", &out_dir);
    let child = std::process::Command::new(&*NETAGG)
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(6);
    let mut killed = None;
    while killed.is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(300));
        let conns = data_connections(child.id(), server.port);
        if conns.len() < 8 {
            continue;
        }
        let (mine, far) = conns[3];
        let status = std::process::Command::new("ss")
            .args(["-K", "dst", "127.0.0.1", "dport", "=", &far.to_string()])
            .args(["sport", "=", &mine.to_string()])
            .output();
        if status.is_ok_and(|s| s.status.success()) {
            killed = Some(mine);
        }
    }
    let out = wait_bounded(child, Duration::from_secs(60));
    if killed.is_none() {
        return skip("ss -K could not close the socket (kernel without CONFIG_INET_DIAG_DESTROY?)");
    }
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    // One stream failed: the run says so (exit 1) with its reason.
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.0.join("netagg_outbound.json")).unwrap(),
    )
    .unwrap();
    let streams = json["streams"].as_array().unwrap();
    let failed: Vec<&serde_json::Value> =
        streams.iter().filter(|s| !s["failure"].is_null()).collect();
    assert_eq!(failed.len(), 1, "{stdout}");
    let detail = failed[0]["failure"]["detail"].as_str().unwrap();
    assert!(detail.starts_with("its flow failed: "), "{detail}");
    assert_eq!(failed[0]["failure"]["phase"], "data phase");
    // The others ran to the end of the window, and the test gave its line.
    let level = &json["levels"][0];
    assert_eq!(level["streams"].as_u64(), Some(8));
    assert!(json["shared_tests"][0]["final_line"].is_string(), "{json}");
}
