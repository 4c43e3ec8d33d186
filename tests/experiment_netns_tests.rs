//! The limiters write-up's experiment over a veth pair between two network
//! namespaces the test makes (198.18.150.0/24): UDP vs TCP x 1024 vs 8192
//! bytes x stateless offloads (tso, gso, gro) on/off on both ends x 4
//! replicates, short runs. Checks that each run's offloads were really
//! switched (read back, and ethtool as a second source), that everything
//! was put back, that every cell has its n, and that the stored experiment
//! compared with itself shows no significant change. Then the errors: an
//! interface that does not exist, an offload the driver refuses, a
//! netserver that does not allow offload changes, Ctrl-C. Skipped, saying
//! so, where namespaces cannot be made (not root, no iproute2), and in the
//! fast tier.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::NETAGG;
const SERVER_ADDR: &str = "198.18.150.2";

/// Two namespaces joined by a veth pair, with a netserver in the server's;
/// all removed when dropped, also when the test fails.
struct Pair {
    client: String,
    server: String,
    client_if: String,
    server_if: String,
    netservers: Vec<std::process::Child>,
    dir: PathBuf,
}

impl Drop for Pair {
    fn drop(&mut self) {
        for child in &mut self.netservers {
            let _ = child.kill();
            let _ = child.wait();
        }
        for ns in [&self.client, &self.server] {
            let _ = Command::new("ip").args(["netns", "delete", ns]).status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Pair {
    /// None (after saying why) when namespaces cannot be made here.
    fn new(tag: &str) -> Option<Pair> {
        let id = std::process::id() % 10_000;
        let pair = Pair {
            client: format!("ngx{tag}c{id}"),
            server: format!("ngx{tag}s{id}"),
            client_if: format!("ngx{tag}a"),
            server_if: format!("ngx{tag}b"),
            netservers: Vec::new(),
            dir: std::env::temp_dir().join(format!("ngx-{tag}-{id}")),
        };
        if fast_tier_skips("needs root (network namespaces)") {
            return None;
        }
        if !ip(&["netns", "add", &pair.client]) {
            skip("cannot make a network namespace (needs root and iproute2)");
            return None;
        }
        let _ = std::fs::remove_dir_all(&pair.dir);
        std::fs::create_dir_all(&pair.dir).unwrap();
        let (c, s, ca, sb) = (&pair.client, &pair.server, &pair.client_if, &pair.server_if);
        let steps: Vec<Vec<&str>> = vec![
            vec!["netns", "add", s],
            vec![
                "-n", c, "link", "add", ca, "type", "veth", "peer", "name", sb,
            ],
            vec!["-n", c, "link", "set", sb, "netns", s],
            vec!["-n", c, "addr", "add", "198.18.150.1/24", "dev", ca],
            vec!["-n", s, "addr", "add", "198.18.150.2/24", "dev", sb],
            vec!["-n", c, "link", "set", ca, "up"],
            vec!["-n", s, "link", "set", sb, "up"],
            vec!["-n", c, "link", "set", "lo", "up"],
            vec!["-n", s, "link", "set", "lo", "up"],
        ];
        for step in steps {
            assert!(ip(&step), "ip {step:?}");
        }
        Some(pair)
    }

    /// Starts our netserver in the server namespace on `port`.
    fn netserver(&mut self, port: u16, extra: &[&str]) {
        let port_text = port.to_string();
        let mut args = vec![
            "netns",
            "exec",
            &self.server,
            &NETSERVER,
            "-D",
            "-L",
            SERVER_ADDR,
            "-p",
            &port_text,
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
        while !ip(&[
            "netns",
            "exec",
            &self.client,
            "bash",
            "-c",
            &format!("exec 3<>/dev/tcp/{SERVER_ADDR}/{port}"),
        ]) {
            assert!(
                Instant::now() < deadline,
                "netserver on {port} did not listen"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// netagg in the client namespace.
    fn netagg(&self, args: &[&str], limit: Duration) -> std::process::Output {
        let mut all = vec!["netns", "exec", &self.client, &NETAGG];
        all.extend_from_slice(args);
        run_with_limit("ip", &all, limit)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// ethtool's view of tso/gso/gro/lro on the client or server end.
    fn ethtool(&self, server_end: bool) -> Option<BTreeMap<String, bool>> {
        let (ns, dev) = if server_end {
            (&self.server, &self.server_if)
        } else {
            (&self.client, &self.client_if)
        };
        let out = Command::new("ip")
            .args(["netns", "exec", ns, "ethtool", "-k", dev])
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| parse_ethtool_k(&text(&out.stdout)))
    }
}

/// `ethtool -k` lines for the four offloads.
fn parse_ethtool_k(out: &str) -> BTreeMap<String, bool> {
    const NAMES: [(&str, &str); 4] = [
        ("tcp-segmentation-offload", "tso"),
        ("generic-segmentation-offload", "gso"),
        ("generic-receive-offload", "gro"),
        ("large-receive-offload", "lro"),
    ];
    let mut state = BTreeMap::new();
    for line in out.lines() {
        if let Some((name, value)) = line.split_once(':') {
            if let Some((_, short)) = NAMES.iter().find(|(long, _)| *long == name.trim()) {
                state.insert(short.to_string(), value.trim().starts_with("on"));
            }
        }
    }
    state
}

/// ethtool for the second-source checks: installed with apt when missing;
/// where it cannot be, the running test skips that part (and goes on).
fn have_ethtool() -> bool {
    let present = || install::runs("ethtool", &["--version"]);
    match install::ensure(install::From::Apt, "ethtool", present) {
        Ok(()) => true,
        Err(why) => {
            skip(format!(
                "the offload read-back against ethtool; it is checked from the record only: {why}"
            ));
            false
        }
    }
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

const LIMITERS_PLAN: &str = r#"
title = "UDP vs TCP, 1024 vs 8192 bytes, stateless offloads on and off"
host = "198.18.150.2"
duration = 1
replicates = 4
mss_offset = 12
offload_set = ["tso", "gso", "gro"]

[factors]
protocol = ["udp", "tcp"]
message_size = [1024, 8192]
offloads = ["on", "off"]
"#;

#[test]
fn the_limiters_experiment_switches_offloads_on_both_ends_and_puts_them_back() {
    let Some(mut pair) = Pair::new("e") else {
        return;
    };
    pair.netserver(12865, &["--allow-offload-changes"]);
    let ethtool = have_ethtool();
    let before = (pair.ethtool(false), pair.ethtool(true));
    let plan = pair.path("limiters.toml");
    std::fs::write(&plan, LIMITERS_PLAN).unwrap();
    let out = pair.path("out");
    let db = pair.path("results.db");
    let run = pair.netagg(
        &[
            "experiment",
            plan.to_str().unwrap(),
            "--seed",
            "2021",
            "--out",
            out.to_str().unwrap(),
            &format!("--store={}", db.display()),
        ],
        Duration::from_secs(400),
    );
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{stdout}{}", text(&run.stderr));
    let record = read_json(&out.join("experiment.json"));
    assert_eq!(record["status"], "complete");
    let runs = record["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 32);
    for r in runs {
        assert_eq!(r["status"], "ok", "{r}");
        let level = r["cell"][2][1].as_str().unwrap() == "on";
        for end in ["local", "remote"] {
            let snapshot = &r["offloads"][end];
            for feature in ["tso", "gso", "gro"] {
                assert_eq!(
                    snapshot["features"][feature].as_bool(),
                    Some(level),
                    "{end} {feature} in {r}"
                );
            }
        }
        assert_eq!(r["offloads"]["local"]["interface"], pair.client_if.as_str());
        assert_eq!(
            r["offloads"]["remote"]["interface"],
            pair.server_if.as_str()
        );
    }
    // Every cell has its four replicates (the fewest a bootstrap interval needs) in the statistics.
    let cells = record["analysis"]["cells"]
        .as_array()
        .expect("analysis.cells in experiment.json");
    assert!(!cells.is_empty());
    assert_eq!(cells.len(), 8);
    for cell in cells {
        assert_eq!(cell["n_ok"], 4, "{cell}");
        let metrics = cell["metrics"].as_array().unwrap();
        assert!(metrics.len() >= 5, "{cell}");
        for metric in metrics {
            assert_eq!(metric["n"], 4, "{metric}");
        }
    }
    assert!(
        stdout.contains("Throughput") && stdout.contains("Improvement"),
        "{stdout}"
    );
    // Put back: as before the experiment, by ethtool's account too.
    if ethtool {
        assert_eq!((pair.ethtool(false), pair.ethtool(true)), before);
    }
    // The stored experiment compared with itself: no significant change.
    let id = record["id"].as_str().unwrap();
    let compare = pair.netagg(
        &["results", "compare", id, id, "--db", db.to_str().unwrap()],
        Duration::from_secs(60),
    );
    let compared = text(&compare.stdout);
    assert_eq!(
        compare.status.code(),
        Some(0),
        "{compared}{}",
        text(&compare.stderr)
    );
    assert!(compared.contains("no significant change"), "{compared}");
    assert!(
        !compared.contains("slower") && !compared.contains("faster"),
        "{compared}"
    );
}

#[test]
fn offload_errors_are_clear_and_leave_the_interfaces_as_they_were() {
    let Some(mut pair) = Pair::new("r") else {
        return;
    };
    pair.netserver(12865, &["--allow-offload-changes"]);
    pair.netserver(12866, &[]);
    let ethtool = have_ethtool();
    let before = (pair.ethtool(false), pair.ethtool(true));
    let out = pair.path("out");
    let base = [
        "experiment",
        "--host",
        SERVER_ADDR,
        "--duration",
        "1",
        "--replicates",
        "1",
        "--no-store",
        "--out",
    ];
    let cases: &[(&[&str], &str)] = &[
        (
            &["--interface", "nosuch0", "--factor", "tso=on,off"],
            "nosuch0",
        ),
        (
            &["--factor", "lro=on,off", "--factor", "tso=off"],
            "'large-receive-offload: off [fixed]'); nothing was changed; leave the lro factor out",
        ),
        // The offloads factor switches lro too by default: the refusal says
        // which --offload-set leaves it out.
        (
            &["--factor", "offloads=on,off"],
            "nothing was changed; to switch the others, leave lro out: --offload-set tso,gso,gro",
        ),
        (
            &["--offload-ends", "remote", "--factor", "offloads=on,off"],
            "remote: the remote netserver at 198.18.150.2 port 12865: cannot turn lro on on ngxrb: \
             the driver does not let it change (ethtool -k ngxrb shows 'large-receive-offload: off [fixed]'); \
             nothing was changed; to switch the others, leave lro out: --offload-set tso,gso,gro",
        ),
        (
            &["--port", "12866", "--factor", "gso=on,off"],
            "--allow-offload-changes",
        ),
    ];
    for (extra, expect) in cases {
        let mut args = base.to_vec();
        args.push(out.to_str().unwrap());
        args.extend_from_slice(extra);
        let run = pair.netagg(&args, Duration::from_secs(60));
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(
            stderr.contains(expect),
            "{extra:?}: expected {expect:?} in {stderr}"
        );
        assert!(!out.join("experiment.json").exists(), "{extra:?}: no runs");
        if ethtool {
            assert_eq!(
                (pair.ethtool(false), pair.ethtool(true)),
                before,
                "{extra:?} changed an interface"
            );
        }
    }
    // Against a netserver without the opt-in, the local end alone works.
    let mut args = base.to_vec();
    args.push(out.to_str().unwrap());
    args.extend([
        "--port",
        "12866",
        "--offload-ends",
        "local",
        "--factor",
        "gso=off",
    ]);
    let run = pair.netagg(&args, Duration::from_secs(60));
    assert!(run.status.success(), "{}", text(&run.stderr));
    let record = read_json(&out.join("experiment.json"));
    assert_eq!(
        record["runs"][0]["offloads"]["local"]["features"]["gso"],
        false
    );
    if ethtool {
        assert_eq!((pair.ethtool(false), pair.ethtool(true)), before);
    }
}

#[test]
fn ctrl_c_ends_the_experiment_and_puts_the_offloads_back() {
    let Some(mut pair) = Pair::new("i") else {
        return;
    };
    pair.netserver(12865, &["--allow-offload-changes"]);
    let ethtool = have_ethtool();
    let before = (pair.ethtool(false), pair.ethtool(true));
    let out = pair.path("out");
    let mut child = Command::new("ip")
        .args([
            "netns",
            "exec",
            &pair.client,
            &NETAGG,
            "experiment",
            "--host",
            SERVER_ADDR,
            "--duration",
            "4",
            "--replicates",
            "3",
            "--no-store",
        ])
        .args([
            "--factor",
            "tso=off,on",
            "--factor",
            "gro=on,off",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first run to start (its offloads are switched by then).
    std::thread::sleep(Duration::from_millis(2500));
    // A second experiment on the same interface meanwhile is refused: it
    // would take the first one's changes for the original state.
    let second = pair.netagg(
        &[
            "experiment",
            "--host",
            SERVER_ADDR,
            "--duration",
            "1",
            "--replicates",
            "1",
            "--no-store",
            "--offload-ends",
            "local",
            "--factor",
            "gso=off",
            "--out",
            pair.path("out2").to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    let refused = text(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{refused}");
    assert!(
        refused.contains("another experiment") && refused.contains(&pair.client_if),
        "{refused}"
    );
    // SAFETY: signalling our own child's process (ip exec's netagg in place).
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("netagg did not end after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    let record = read_json(&out.join("experiment.json"));
    assert_eq!(record["status"], "interrupted", "{stderr}");
    if ethtool {
        assert_eq!((pair.ethtool(false), pair.ethtool(true)), before);
    }
}
