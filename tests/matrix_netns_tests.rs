//! `netagg matrix` over namespaces the test makes, standing in for the
//! places of a cluster (this is not a Kubernetes cluster, and nothing here
//! pretends to be one): the client's namespace is "node a" in zone z1,
//! with a netserver of its own on 127.0.0.1 ("same node"); a namespace
//! over a veth (198.18.152.0/24) is "node b", zone z1; another
//! (198.18.153.0/24) is "node c", zone z2. The "Service" is a virtual IP
//! translated by netfilter DNAT in the client's namespace — kube-proxy's
//! own mechanism in iptables/nftables mode — for the control port and the
//! fixed data ports only, so a netserver without `--data-ports` cannot be
//! reached through it (kubernetes/perf-tests' zero row), and one with
//! them can. The inventory file gives the places; the rows the "cluster"
//! cannot offer (host network, a node-local Service) must say why.
//! Skipped, saying so, where namespaces or nft are not available, and in
//! the fast tier.

mod common;
use common::*;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::NETAGG;
const NODE_B: &str = "198.18.152.2";
const NODE_C: &str = "198.18.153.2";
const VIP: &str = "198.18.152.100";
const VIP_NO_DATA_PORTS: &str = "198.18.152.101";
const DATA_PORTS: &str = "42424-42431";

/// The namespaces, their netservers and files; all removed when dropped.
struct Place {
    client: String,
    nodes: Vec<String>,
    netservers: Vec<std::process::Child>,
    dir: PathBuf,
}

impl Drop for Place {
    fn drop(&mut self) {
        for child in &mut self.netservers {
            let _ = child.kill();
            let _ = child.wait();
        }
        for ns in self.nodes.iter().chain([&self.client]) {
            let _ = Command::new("ip").args(["netns", "delete", ns]).status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Place {
    fn new() -> Option<Place> {
        let id = std::process::id() % 10_000;
        let mut place = Place {
            client: format!("ngm{id}a"),
            nodes: Vec::new(),
            netservers: Vec::new(),
            dir: std::env::temp_dir().join(format!("ngm-{id}")),
        };
        if fast_tier_skips("needs root (network namespaces, nftables)") {
            return None;
        }
        if !ip(&["netns", "add", &place.client]) {
            skip("cannot make a network namespace (needs root and iproute2)");
            return None;
        }
        if let Err(why) = have_nft() {
            skip(format!(
                "no nft (nftables) to build the Service's DNAT: {why}"
            ));
            return None;
        }
        let _ = std::fs::remove_dir_all(&place.dir);
        std::fs::create_dir_all(&place.dir).unwrap();
        assert!(ip(&["-n", &place.client, "link", "set", "lo", "up"]));
        for (node, net) in [("b", 152), ("c", 153)] {
            let ns = format!("ngm{id}{node}");
            let (here, there) = (format!("ngm{node}0"), format!("ngm{node}1"));
            let c = place.client.clone();
            place.nodes.push(ns.clone());
            let steps: Vec<Vec<String>> = vec![
                vec!["netns".into(), "add".into(), ns.clone()],
                [
                    "-n", &c, "link", "add", &here, "type", "veth", "peer", "name", &there,
                ]
                .map(String::from)
                .to_vec(),
                ["-n", &c, "link", "set", &there, "netns", &ns]
                    .map(String::from)
                    .to_vec(),
                vec![
                    "-n".into(),
                    c.clone(),
                    "addr".into(),
                    "add".into(),
                    format!("198.18.{net}.1/24"),
                    "dev".into(),
                    here.clone(),
                ],
                vec![
                    "-n".into(),
                    ns.clone(),
                    "addr".into(),
                    "add".into(),
                    format!("198.18.{net}.2/24"),
                    "dev".into(),
                    there.clone(),
                ],
                ["-n", &c, "link", "set", &here, "up"]
                    .map(String::from)
                    .to_vec(),
                ["-n", &ns, "link", "set", &there, "up"]
                    .map(String::from)
                    .to_vec(),
                ["-n", &ns, "link", "set", "lo", "up"]
                    .map(String::from)
                    .to_vec(),
            ];
            for step in steps {
                let args: Vec<&str> = step.iter().map(String::as_str).collect();
                assert!(ip(&args), "ip {step:?}");
            }
        }
        Some(place)
    }

    /// Our netserver in `ns` on `addr`:`port`, waited for.
    fn netserver(&mut self, ns: &str, addr: &str, port: u16, extra: &[&str]) {
        let port_text = port.to_string();
        let mut args = vec![
            "netns", "exec", ns, &NETSERVER, "-D", "-L", addr, "-p", &port_text,
        ];
        args.extend_from_slice(extra);
        let child = Command::new("ip")
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.netservers.push(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        let probe = format!("exec 3<>/dev/tcp/{addr}/{port}");
        while !ip(&["netns", "exec", &self.client, "bash", "-c", &probe]) {
            assert!(
                Instant::now() < deadline,
                "netserver {addr}:{port} did not listen"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// kube-proxy's translation, in the client's namespace: the VIP's
    /// declared ports go to node b; anything else to a VIP is refused.
    fn service(&self) {
        let rules = format!(
            "table ip ngmatrix {{
  chain nat_out {{
    type nat hook output priority -100;
    ip daddr {VIP} tcp dport {{ 12865, {DATA_PORTS} }} dnat to {NODE_B}
    ip daddr {VIP} udp dport {{ {DATA_PORTS} }} dnat to {NODE_B}
    ip daddr {VIP_NO_DATA_PORTS} tcp dport 12866 dnat to {NODE_B}
  }}
  chain filter_out {{
    type filter hook output priority 0;
    ip daddr {{ {VIP}, {VIP_NO_DATA_PORTS} }} meta l4proto tcp reject with tcp reset
    ip daddr {{ {VIP}, {VIP_NO_DATA_PORTS} }} reject
  }}
}}
"
        );
        let file = self.dir.join("service.nft");
        std::fs::write(&file, rules).unwrap();
        let file = file.display().to_string();
        assert!(
            ip(&["netns", "exec", &self.client, "nft", "-f", &file]),
            "nft -f {file}"
        );
    }

    fn run(&self, program: &str, args: &[&str], limit: Duration) -> std::process::Output {
        let mut all = vec!["netns", "exec", &self.client, program];
        all.extend_from_slice(args);
        run_with_limit("ip", &all, limit)
    }
}

/// nft for the "Service": installed from Debian's packages when missing.
fn have_nft() -> Result<(), String> {
    install::ensure(install::From::Apt, "nftables", || {
        install::runs("nft", &["--version"])
    })
}

const INVENTORY: &str = r#"
[me]
node = "a"
zone = "z1"

[[endpoint]]
name = "netserver-a"
address = "127.0.0.1"
port = 12865
node = "a"
zone = "z1"
network = "pod"

[[endpoint]]
name = "netserver-b"
address = "198.18.152.2"
node = "b"
zone = "z1"
network = "pod"

[[endpoint]]
name = "netserver-c"
address = "198.18.153.2"
node = "c"
zone = "z2"
network = "pod"

[[endpoint]]
name = "netserver-vip"
address = "198.18.152.100"
network = "service"
"#;

#[test]
fn the_matrix_fills_what_the_place_offers_and_names_what_it_cannot() {
    let Some(mut place) = Place::new() else {
        return;
    };
    let client = place.client.clone();
    let (node_b, node_c) = (place.nodes[0].clone(), place.nodes[1].clone());
    place.netserver(&client, "127.0.0.1", 12865, &[]);
    place.netserver(&node_b, NODE_B, 12865, &["--data-ports", DATA_PORTS]);
    place.netserver(&node_b, NODE_B, 12866, &[]);
    place.netserver(&node_c, NODE_C, 12865, &[]);
    place.service();

    // The point of fixed data ports: through the Service's declared ports
    // a test runs; without them its data connection is refused.
    let through = place.run(
        &NETPERF,
        &["-H", VIP, "-l", "1", "-t", "TCP_STREAM", "-P", "0"],
        Duration::from_secs(30),
    );
    assert!(through.status.success(), "{}", text(&through.stderr));
    let no_ports = place.run(
        &NETPERF,
        &[
            "-H",
            VIP_NO_DATA_PORTS,
            "-p",
            "12866",
            "-l",
            "1",
            "-t",
            "TCP_STREAM",
            "-P",
            "0",
        ],
        Duration::from_secs(30),
    );
    assert!(!no_ports.status.success(), "{}", text(&no_ports.stdout));
    // k8s-netperf's Service mode, test after test: `-- -P 42424` names both
    // data ports, so each run binds the local port the last one left in
    // TIME_WAIT (netperf sets SO_REUSEADDR for this); stock netperf too
    // when NETPERF_STOCK_DIR names one.
    let stock = std::env::var("NETPERF_STOCK_DIR")
        .ok()
        .map(|d| format!("{d}/netperf"))
        .filter(|p| std::path::Path::new(p).exists());
    for program in [Some(NETPERF.to_string()), stock].into_iter().flatten() {
        for test in ["TCP_STREAM", "TCP_RR", "TCP_STREAM", "UDP_RR"] {
            let out = place.run(
                &program,
                &[
                    "-H", VIP, "-l", "1", "-t", test, "--", "-k",
                    "rt_latency,p99_latency,throughput,throughput_units,remote_recv_calls,local_send_calls,local_transport_retrans",
                    "-m", "1024", "-P", "42424", "-R", "1",
                ],
                Duration::from_secs(30),
            );
            let stdout = text(&out.stdout);
            assert!(
                out.status.success() && stdout.contains("THROUGHPUT="),
                "{program} {test}: {stdout}{}",
                text(&out.stderr)
            );
        }
    }

    let inventory = place.dir.join("inventory.toml");
    std::fs::write(&inventory, INVENTORY).unwrap();
    let out_dir = place.dir.join("matrix");
    let db = place.dir.join("results.db");
    let (inventory_text, out_text, db_text) = (
        inventory.display().to_string(),
        out_dir.display().to_string(),
        db.display().to_string(),
    );
    let matrix = place.run(
        &NETAGG,
        &[
            "matrix",
            "--inventory",
            &inventory_text,
            "--tests",
            "TCP_STREAM,UDP_RR,TCP_RR*2",
            "--duration",
            "1",
            "--replicates",
            "1",
            "--out",
            &out_text,
            &format!("--store={db_text}"),
        ],
        Duration::from_secs(240),
    );
    let stdout = text(&matrix.stdout);
    let stderr = text(&matrix.stderr);
    assert!(matrix.status.success(), "{stderr}\n{stdout}");

    // The table: every scenario a row; the four the place offers measured
    // in every column, the others "n/a" with their reason below.
    let row = |label: &str| -> Vec<String> {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("| {label} ")))
            .unwrap_or_else(|| panic!("no row {label}:\n{stdout}"));
        line.split('|')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .skip(1)
            .collect()
    };
    for measured in [
        "same node, pod IP",
        "other node, same zone, pod IP",
        "other zone, pod IP",
        "Service (ClusterIP)",
    ] {
        let values = row(measured);
        assert_eq!(values.len(), 1 + 3 + 3, "{measured}: {values:?}");
        for (i, v) in values.iter().enumerate() {
            let number: f64 = v
                .parse()
                .unwrap_or_else(|_| panic!("{measured} column {i} is {v}:\n{stdout}"));
            assert!(number > 0.0, "{measured} column {i}: {v}");
        }
    }
    for missing in [
        "same node, host network",
        "same node, Service (node-local)",
        "other node, same zone, host network",
        "other zone, host network",
    ] {
        assert!(row(missing).iter().all(|v| v == "n/a"), "{missing}");
        assert!(
            stdout.contains(&format!("  {missing}: not available: ")),
            "{stdout}"
        );
    }

    // Each run went where its scenario says (netperf's own REMOTE_ADDR... is
    // not a selector; the command lines are recorded).
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("experiment.json")).unwrap())
            .unwrap();
    let runs = record["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4 * 3);
    for run in runs {
        let target = run["cell"][0][1].as_str().unwrap();
        let host = match target {
            "same node, pod IP" => "127.0.0.1",
            "other node, same zone, pod IP" => NODE_B,
            "other zone, pod IP" => NODE_C,
            _ => VIP,
        };
        let command = run["commands"][0].as_array().unwrap();
        let h = command.iter().position(|a| a == "-H").unwrap();
        assert_eq!(command[h + 1], host, "{target}");
        assert_eq!(run["status"], "ok", "{run}");
    }
    let targets = record["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 8);
    assert!(targets[1]["unavailable"]
        .as_str()
        .unwrap()
        .contains("no host-network netserver on this node (a)"));

    let csv = std::fs::read_to_string(out_dir.join("scenarios.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 8 * 7, "{csv}");
    // Saved as the matrix, and drawn again from that alone.
    assert_eq!(record["format"], "netagg-matrix");
    common::saved::redraws_identically(
        &out_dir.join("experiment.json"),
        &[
            "report.html",
            "scenarios.csv",
            "experiment.txt",
            "cells.csv",
        ],
    );
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(html.contains("<section id=\"scenarios\">") && html.contains("not available"));
    // Read as a reader would: the context and the scenarios show, and the
    // page keeps to the screen's width.
    if common::browser::have_chromium() {
        let texts = [
            "Context",
            "Scenarios",
            "not available",
            "other zone, pod IP",
            "How to reproduce",
        ];
        common::browser::reads_well(&out_dir.join("report.html"), &texts.map(String::from));
    }

    // Stored, as a matrix.
    let list = run_with_limit(
        &NETAGG,
        &["results", "list", "--db", &db_text],
        Duration::from_secs(30),
    );
    let listed = text(&list.stdout);
    assert!(
        list.status.success() && listed.contains("experiment"),
        "{listed}"
    );
}

#[test]
fn without_any_scenario_that_can_run_it_says_why_and_runs_nothing() {
    let dir = std::env::temp_dir().join(format!("ngm-none-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let inventory = dir.join("inventory.toml");
    std::fs::write(&inventory, "[me]\nnode = \"a\"\n").unwrap();
    let out = run_with_limit(
        &NETAGG,
        &[
            "matrix",
            "--inventory",
            &inventory.display().to_string(),
            "--no-store",
            "--out",
            &dir.join("out").display().to_string(),
        ],
        Duration::from_secs(30),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no scenario can run here"), "{stderr}");
    assert!(
        stderr.contains("same node, pod IP")
            && stderr.contains("no netserver pod on this node (a)"),
        "{stderr}"
    );
    assert!(!dir.join("out").exists());
    let bad = run_with_limit(
        &NETAGG,
        &["matrix", "--scenario", "x=h:0", "--no-store"],
        Duration::from_secs(30),
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("port outside"),
        "{}",
        text(&bad.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scratch directory with the path of a default database (not made),
/// and a scenario on a loopback port nobody listens on.
struct Closed {
    dir: PathBuf,
    db: PathBuf,
    scenario: String,
}

impl Closed {
    fn new(tag: &str) -> Closed {
        let dir = std::env::temp_dir().join(format!("ngm-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let scenario = format!("here=127.0.0.1:{}", closed_port());
        Closed {
            db: dir.join("default.db"),
            dir,
            scenario,
        }
    }

    /// One TCP_RR run of one second per scenario.
    fn base(&self) -> [&str; 8] {
        [
            "--scenario",
            &self.scenario,
            "--tests",
            "TCP_RR",
            "--replicates",
            "1",
            "--duration",
            "1",
        ]
    }
}

impl Drop for Closed {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `netagg matrix` with `env`.
fn matrix_with(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut all = vec!["matrix"];
    all.extend_from_slice(args);
    common::results::run_as(&NETAGG, &all, env, None).expect("run netagg matrix")
}

#[test]
fn the_matrix_speaks_the_shared_vocabulary_and_keeps_the_old_spellings() {
    // No namespaces: dry runs, and scenarios on a port nobody listens on.
    let closed = Closed::new("vocab");
    let db = &closed.db;
    let env = [("NETPERF_NG_DB", db.to_str().unwrap())];
    let base = closed.base();
    let dry = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.push("--dry-run");
        args.extend_from_slice(extra);
        matrix_with(&args, &env)
    };
    let store_at = format!("--store={}", db.display());
    for extra in [
        &["--store"][..],
        &[&store_at],
        &["--no-store"],
        &["--tag", "a,b"],
    ] {
        let out = dry(extra);
        assert!(out.status.success(), "{extra:?}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("-l 1 "), "{extra:?}");
        assert!(deprecation_lines(&out).is_empty(), "{extra:?}");
    }
    let old = dry(&["--db", db.to_str().unwrap()]);
    assert!(old.status.success(), "{}", text(&old.stderr));
    assert_eq!(
        deprecation_lines(&old),
        ["netagg: --db is deprecated; use --store=PATH"]
    );
    let old_k8s = dry(&[
        "--hosts-k8s",
        "app=x",
        "--kubeconfig",
        "/dev/null/kubeconfig",
    ]);
    assert_eq!(old_k8s.status.code(), Some(2));
    assert_eq!(
        deprecation_lines(&old_k8s),
        ["netagg: --hosts-k8s is deprecated; use --k8s-selector"]
    );
    assert!(text(&old_k8s.stderr).contains("cannot read kubeconfig"));
    assert_eq!(dry(&["--store", "--no-store"]).status.code(), Some(2));
    assert!(!db.exists(), "a dry run stores nothing");
    let help = text(&matrix_with(&["--help"], &env).stdout);
    for shown in [
        "--store[=<DB>]",
        "--no-store",
        "--tag",
        "--out",
        "--k8s-selector",
        "--replicates",
    ] {
        assert!(help.contains(shown), "{shown} not in {help}");
    }
    for hidden in ["--db", "--hosts-k8s"] {
        assert!(!help.contains(hidden), "{hidden} in {help}");
    }
}

#[test]
fn the_matrix_stores_only_with_store_and_says_so_where_it_used_to() {
    let closed = Closed::new("default");
    let (dir, db) = (&closed.dir, &closed.db);
    let env = [("NETPERF_NG_DB", db.to_str().unwrap())];
    let base = closed.base();
    // Real runs (that fail: nobody listens). Without --store nothing is
    // stored; where the old default would have stored (the database
    // exists), one line says so, and --no-store silences it.
    let note = "netagg matrix: results are no longer stored unless --store is given (--no-store silences this note)";
    let run = |extra: &[&str], out: &str| {
        let out_dir = dir.join(out);
        let mut args = base.to_vec();
        args.extend(["--out", out_dir.to_str().unwrap()]);
        args.extend_from_slice(extra);
        let got = matrix_with(&args, &env);
        assert_eq!(
            got.status.code(),
            Some(1),
            "{extra:?}: {}",
            text(&got.stderr)
        );
        text(&got.stderr).lines().filter(|l| *l == note).count()
    };
    assert_eq!(
        run(&[], "first"),
        0,
        "no database: the old default stored nothing either"
    );
    assert!(!db.exists());
    assert_eq!(run(&["--store"], "stored"), 0);
    assert!(db.exists());
    let stored = || {
        let db = netperf_ng::resultsdb::Db::open_read_only(db).unwrap();
        netperf_ng::resultsdb::query::list(&db, &Default::default())
            .unwrap()
            .len()
    };
    assert_eq!(stored(), 1);
    assert_eq!(run(&[], "unstored"), 1);
    assert_eq!(run(&["--no-store"], "quiet"), 0);
    assert_eq!(stored(), 1, "stored without --store");
}
