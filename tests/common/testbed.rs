//! The namespace testbed (scripts/testbed) for tests: whether namespaces
//! can be made here (else the test skips, saying so), and a testbed — the
//! load generators', or the mesh's nodes in zones with faults to inject —
//! brought up and removed when the test ends, also when it fails.

use super::{fast_tier_skips, run_with_limit, skip, text, NETSERVER};
use std::process::Command;
use std::time::Duration;

pub const TESTBED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/testbed");

/// Removes the testbed when the test ends, also when it fails.
pub struct Testbed {
    pub name: String,
}

impl Drop for Testbed {
    fn drop(&mut self) {
        let _ = Command::new(TESTBED)
            .args(["down", "--name", &self.name])
            .status();
    }
}

/// Whether a namespace can be made (not in the fast tier); where not, the
/// running test skips. `tag` keeps the probes of tests that run at once
/// apart.
pub fn namespaces_work(tag: &str) -> bool {
    if fast_tier_skips("needs root (network namespaces)") {
        return false;
    }
    let probe = format!("ngprobe{tag}{}", std::process::id() % 100);
    let ok = Command::new("ip")
        .args(["netns", "add", &probe])
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        let _ = Command::new("ip")
            .args(["netns", "delete", &probe])
            .status();
    } else {
        skip("cannot create network namespaces here (needs root and iproute2)");
    }
    ok
}

/// Brings up testbed `name` with `lgs` load generators whose netservers
/// see `env` (VAR=value words); returns its guard and `up`'s output.
pub fn up(name: &str, lgs: u32, env: &[&str]) -> (Testbed, std::process::Output) {
    let bed = Testbed {
        name: name.to_string(),
    };
    let lgs = lgs.to_string();
    let mut args = env.to_vec();
    args.extend([
        TESTBED,
        "up",
        "--name",
        name,
        "--lgs",
        &lgs,
        "--netserver",
        &NETSERVER,
    ]);
    (bed, succeeds("env", &args, Duration::from_secs(60)))
}

/// `program args`, which must succeed within `limit`; its output.
fn succeeds(program: &str, args: &[&str], limit: Duration) -> std::process::Output {
    let out = run_with_limit(program, args, limit);
    assert!(
        out.status.success(),
        "{program} {args:?}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// A mesh testbed (`scripts/testbed mesh`): node namespaces NAME-n1..,
/// zones, a coordinator namespace NAME-c; removed when the test ends,
/// also when it fails.
pub struct MeshTestbed {
    pub name: String,
}

impl Drop for MeshTestbed {
    fn drop(&mut self) {
        let _ = Command::new(TESTBED)
            .args(["mesh", "down", "--name", &self.name])
            .status();
    }
}

impl MeshTestbed {
    /// `scripts/testbed mesh COMMAND --name NAME ARGS...` (fault, clear,
    /// stop, start, show), which must succeed; its output.
    pub fn run(&self, command: &str, args: &[&str]) -> std::process::Output {
        let mut all = vec!["mesh", command, "--name", &self.name];
        all.extend(args);
        succeeds(TESTBED, &all, Duration::from_secs(60))
    }

    /// Where `up` wrote remote_hosts, endpoints, inventory.toml and each
    /// node's netserver log (nI.log).
    pub fn state(&self) -> std::path::PathBuf {
        std::path::PathBuf::from(format!("/tmp/{}-mesh", self.name))
    }

    /// Node `node`'s (1-based) address, as `up` recorded it.
    pub fn address(&self, node: usize) -> String {
        let endpoints = std::fs::read_to_string(self.state().join("endpoints")).unwrap();
        endpoints
            .lines()
            .filter_map(|l| l.split_once(' '))
            .find(|(index, _)| *index == node.to_string())
            .and_then(|(_, rest)| rest.split(' ').next())
            .unwrap_or_else(|| panic!("no node {node} in {endpoints}"))
            .to_string()
    }

    /// The namespace to run the coordinator in (it reaches every node).
    pub fn coordinator(&self) -> String {
        format!("{}-c", self.name)
    }
}

/// Brings up mesh testbed `name` (at most 8 lower-case letters and digits)
/// with `nodes` nodes in `zones` zones (1 or 2), each running our
/// netserver with `server_args` (the mesh opt-in: --mesh-key FILE
/// --mesh-peers 198.19.0.0/16); returns its guard and `up`'s output.
pub fn mesh_up(
    name: &str,
    nodes: u32,
    zones: u32,
    server_args: &[&str],
) -> (MeshTestbed, std::process::Output) {
    let bed = MeshTestbed {
        name: name.to_string(),
    };
    let (nodes, zones) = (nodes.to_string(), zones.to_string());
    let mut args = vec![
        "mesh",
        "up",
        "--name",
        name,
        "--nodes",
        &nodes,
        "--zones",
        &zones,
        "--netserver",
        &NETSERVER,
        "--",
    ];
    args.extend(server_args);
    (bed, succeeds(TESTBED, &args, Duration::from_secs(120)))
}
