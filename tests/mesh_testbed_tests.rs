//! `netagg mesh` on the namespace testbed (`scripts/testbed mesh`): node
//! namespaces in two zones whose every link is rate-limited with tbf, so the
//! network and not this machine's two CPUs sets the numbers, each node
//! running our netserver with the mesh opt-in. Faults injected there — a
//! slow node, one slow path, a slow link between the zones — are named, and
//! only they; a clean mesh names nothing, three times over; a node whose
//! netserver dies mid-mesh leaves its pairs failed with a reason (never a
//! zero) and every other pair measured. Skipped, saying so, without root
//! and in the fast tier.

mod common;
use common::testbed::{mesh_up, MeshTestbed};
use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The testbed's netservers take this key (written per test) and test only
/// toward the testbed's own addresses.
const PEERS: &str = "198.19.0.0/16";
/// One test length: tbf makes a second of TCP_STREAM steady.
const SECONDS: &str = "1";
/// A mesh of 6 endpoints is 10 rounds of about 2 s; ten times that.
const MESH_LIMIT: Duration = Duration::from_secs(240);

/// A testbed of `nodes` nodes in `zones` zones (1 or 2) with the opt-in,
/// its key file and an output directory; None (the test skips) where it
/// cannot run.
fn bed(name: &str, nodes: u32, zones: u32) -> Option<(MeshTestbed, PathBuf)> {
    if fast_tier_skips("needs root (network namespaces)") || !testbed::namespaces_work(name) {
        skip("mesh testbed: needs root and network namespaces");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("ng-mesh-bed-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("key");
    std::fs::write(&key, "a testbed key of more than sixteen bytes\n").unwrap();
    let key = key.to_str().unwrap().to_string();
    let (bed, _) = mesh_up(
        name,
        nodes,
        zones,
        &["--mesh-key", &key, "--mesh-peers", PEERS],
    );
    Some((bed, dir))
}

/// Run the mesh from the coordinator's namespace (TCP_STREAM only) into
/// `dir/NAME`; its exit status, stderr and mesh.json.
fn mesh(bed: &MeshTestbed, dir: &std::path::Path, name: &str) -> (i32, String, Value) {
    mesh_with(bed, dir, name, &[])
}

/// `mesh` with more of netagg mesh's options.
fn mesh_with(
    bed: &MeshTestbed,
    dir: &std::path::Path,
    name: &str,
    extra: &[&str],
) -> (i32, String, Value) {
    let out = dir.join(name);
    let child = mesh_command(bed, dir, &out)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let output = wait_bounded(child, MESH_LIMIT);
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    let json = std::fs::read_to_string(out.join("mesh.json"))
        .unwrap_or_else(|e| panic!("{name}: no mesh.json ({e}): {stderr}"));
    let code = output.status.code().unwrap_or(-1);
    (code, stderr, serde_json::from_str(&json).unwrap())
}

fn mesh_command(bed: &MeshTestbed, dir: &std::path::Path, out: &std::path::Path) -> Command {
    let inventory = bed.state().join("inventory.toml");
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", &bed.coordinator(), NETAGG.path(), "mesh"])
        .args(["--inventory", inventory.to_str().unwrap()])
        .args(["--mesh-key", dir.join("key").to_str().unwrap()])
        .args(["--tests", "TCP_STREAM", "--duration", SECONDS])
        .args(["--out", out.to_str().unwrap()]);
    cmd
}

/// Each finding as "kind endpoints/zones side", sorted.
fn findings(mesh: &Value) -> Vec<String> {
    let mut said: Vec<String> = mesh["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let names = |k: &str| {
                f[k].as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().to_string())
                    .collect::<Vec<_>>()
                    .join(">")
            };
            let at = match f["kind"].as_str().unwrap() {
                "zone-link" => names("zones"),
                _ => names("endpoints"),
            };
            let side = f["side"].as_str().unwrap_or("");
            format!("{} {at} {side}", f["kind"].as_str().unwrap())
                .trim_end()
                .to_string()
        })
        .collect();
    said.sort();
    said
}

/// Inject `faults` together, run the mesh (with `extra` options), expect
/// exactly their findings — each named, nothing else — then clear them.
fn named_and_only_they(bed: &MeshTestbed, dir: &std::path::Path, faults: &[Fault], extra: &[&str]) {
    for (fault, _, _) in faults {
        bed.run("fault", fault);
    }
    let (code, stderr, run) = mesh_with(bed, dir, "faults", extra);
    assert_eq!(code, 0, "{stderr}");
    let mut expected: Vec<&str> = faults.iter().map(|(_, _, e)| *e).collect();
    expected.sort();
    assert_eq!(findings(&run), expected, "{run:#}");
    for (_, clear, _) in faults {
        bed.run("clear", &clear.split(' ').collect::<Vec<_>>());
    }
}

/// A fault's `scripts/testbed mesh fault` words, its `clear` words and the
/// one finding expected ("kind names side").
type Fault = (&'static [&'static str], &'static str, &'static str);

/// Three faults in one mesh (one run instead of three): a node slow both
/// ways, another slow only sending, and one path slow in one direction. One
/// zone: with two zones of three, a node slow receiving and another slow
/// sending toward it from the other zone slow five of that block's nine
/// cells, which is what a slow zone link looks like too.
#[test]
fn slow_nodes_and_a_slow_path_are_named_and_only_they() {
    let Some((bed, dir)) = bed("ngmf", 6, 1) else {
        return;
    };
    let faults: [Fault; 3] = [
        (
            &["node", "2", "--dir", "both"],
            "node 2",
            "node ngmf-n2 both",
        ),
        (
            &["node", "5", "--dir", "out"],
            "node 5",
            "node ngmf-n5 sending",
        ),
        (
            &["path", "4", "6", "--rate", "40mbit"],
            "path 4 6",
            "path ngmf-n4>ngmf-n6",
        ),
    ];
    named_and_only_they(&bed, &dir, &faults, &[]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The zone link is one tbf that the round's crossing pairs share: one
/// pair at a time (`--concurrency 1`) gives each crossing pair the same
/// slower link, as an inter-zone link far wider than one test would.
#[test]
fn a_slow_link_between_the_zones_is_named_and_only_it() {
    let Some((bed, dir)) = bed("ngmz", 4, 2) else {
        return;
    };
    let cases: [Fault; 1] = [(&["zone", "--dir", "1to2"], "zone", "zone-link z1>z2")];
    named_and_only_they(&bed, &dir, &cases, &["--concurrency", "1"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_clean_mesh_names_nothing_three_times() {
    let Some((bed, dir)) = bed("ngmc", 4, 2) else {
        return;
    };
    for run in 1..=3 {
        let (code, stderr, mesh) = mesh(&bed, &dir, &format!("clean{run}"));
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(findings(&mesh), Vec::<String>::new(), "run {run}: {mesh:#}");
        let pairs = mesh["pairs"].as_array().unwrap();
        assert_eq!(pairs.len(), 12);
        assert!(pairs.iter().all(|p| p["outcome"] == "ok"), "{mesh:#}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_node_that_dies_mid_mesh_leaves_its_pairs_failed_and_the_rest_complete() {
    let Some((bed, dir)) = bed("ngmd", 4, 2) else {
        return;
    };
    let out = dir.join("dies");
    let mut child = mesh_command(&bed, &dir, &out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Stop node 3's netserver once the second round has begun.
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let started = Instant::now();
    let mut said = Vec::new();
    let mut stopped_at = None;
    for line in stderr.lines() {
        let Ok(line) = line else { break };
        if stopped_at.is_none() && line.contains("round 2/") {
            bed.run("stop", &["--node", "3"]);
            stopped_at = Some(said.len());
        }
        said.push(line);
        assert!(started.elapsed() < MESH_LIMIT, "{said:#?}");
    }
    let status = wait_bounded(child, MESH_LIMIT).status;
    assert!(stopped_at.is_some(), "never reached round 2: {said:#?}");
    assert_eq!(status.code(), Some(0), "{said:#?}");
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("mesh.json")).unwrap()).unwrap();
    let dead = "ngmd-n3";
    let mut failed_with_dead = 0;
    for pair in run["pairs"].as_array().unwrap() {
        let touches = pair["src"] == dead || pair["dst"] == dead;
        match pair["outcome"].as_str().unwrap() {
            "ok" => {
                let value = &pair["values"]["tcp_stream_throughput"]["value"];
                assert!(value.as_f64().unwrap() > 0.0, "{pair}");
            }
            "failed" => {
                assert!(touches, "a pair without the dead node failed: {pair}");
                assert!(!pair["reason"].as_str().unwrap().is_empty(), "{pair}");
                assert!(pair.get("values").is_none_or(|v| v.is_null()), "{pair}");
                failed_with_dead += 1;
            }
            other => panic!("{other}: {pair}"),
        }
    }
    assert!(failed_with_dead >= 1, "{run:#}");
    // The grid has no value where a pair failed: never a zero.
    let grid = &run["grids"][0]["values"];
    assert!(
        grid.as_array()
            .unwrap()
            .iter()
            .flatten_values()
            .all(|v| v != 0.0),
        "{grid}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The numbers of a grid's rows (nested arrays or a flat list, nulls left out).
trait FlattenValues {
    fn flatten_values(self) -> Box<dyn Iterator<Item = f64>>;
}

impl<'a, I: Iterator<Item = &'a Value>> FlattenValues for I {
    fn flatten_values(self) -> Box<dyn Iterator<Item = f64>> {
        let mut all = Vec::new();
        for v in self {
            match v {
                Value::Array(row) => all.extend(row.iter().filter_map(Value::as_f64)),
                other => all.extend(other.as_f64()),
            }
        }
        Box::new(all.into_iter())
    }
}
