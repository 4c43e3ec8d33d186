//! The Kubernetes manifests in deploy/kubernetes: every resource validated
//! against the Kubernetes OpenAPI schema (kubernetes-validate from PyPI,
//! strict: unknown fields refused), and checked for what the schema cannot
//! say (tests/k8s/check_manifests.py: non-root, read-only root, no CPU
//! limit, netserver's --data-ports exactly what the pods and Services
//! expose, its limits set, RBAC read-only and bound to what exists, netagg
//! and the matrix picking netserver pods (--k8s-selector) with a
//! service account allowed to list them, a writable /tmp for the matrix;
//! the mesh's opt-in: key from a Secret only the container's group reads,
//! peers no wider than the cluster, no usable key in the repository, the
//! coordinator picking netservers with the opt-in, a nightly CronJob never
//! running two meshes at once; the watch a single Deployment with its
//! database on a volume and its /metrics port annotated, exposed and
//! picked by the ServiceMonitor example).
//! A broken copy must fail both, so the checks are known to bite; and every
//! overlay must build with kustomize where kubectl is installed. Skipped,
//! saying so, where the validator cannot be installed (in the fast tier,
//! where it is not installed already). No cluster is
//! involved: this checks the files, not a cluster.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

const MANIFESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/kubernetes");
const CHECKER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/k8s/check_manifests.py");

/// kubernetes-validate, installed from PyPI when missing; where it cannot
/// be, the running test skips.
fn have_validator() -> bool {
    let present = || install::runs("kubernetes-validate", &["--version"]);
    match install::ensure(install::From::Pip, "kubernetes-validate", present) {
        Ok(()) => true,
        Err(why) => {
            skip(why);
            false
        }
    }
}

fn resources(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for sub in std::fs::read_dir(dir).unwrap().flatten() {
        let path = sub.path();
        if path.is_dir() {
            files.extend(resources(&path));
        } else if path.extension().is_some_and(|e| e == "yaml")
            && !path.ends_with("kustomization.yaml")
        {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn validate(file: &Path) -> std::process::Output {
    run_with_limit(
        "kubernetes-validate",
        &["--strict", "--no-warn", file.to_str().unwrap()],
        Duration::from_secs(120),
    )
}

#[test]
fn every_manifest_passes_the_kubernetes_schema_and_our_checks() {
    if !have_validator() {
        return;
    }
    let files = resources(Path::new(MANIFESTS));
    assert!(files.len() >= 6, "{files:?}");
    for file in &files {
        let out = validate(file);
        assert!(
            out.status.success(),
            "{}: {}{}",
            file.display(),
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    let out = run_with_limit("python3", &[CHECKER, MANIFESTS], Duration::from_secs(60));
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[test]
fn broken_manifests_are_caught() {
    if !have_validator() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("ngk8s-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let job = std::fs::read_to_string(format!("{MANIFESTS}/base/netagg-job.yaml")).unwrap();
    // A misspelt field: the schema refuses it.
    let misspelt = dir.join("misspelt.yaml");
    std::fs::write(
        &misspelt,
        job.replace("readOnlyRootFilesystem", "readOnlyRootFileSystem"),
    )
    .unwrap();
    assert!(!validate(&misspelt).status.success());
    // A netserver exposing one data port fewer than --data-ports opens:
    // valid to the schema, caught by our checks.
    let daemonset =
        std::fs::read_to_string(format!("{MANIFESTS}/base/netserver-daemonset.yaml")).unwrap();
    let narrowed = daemonset.replace("42424-42431", "42424-42432");
    let (ok, said) = checked(
        &dir.join("base"),
        &[
            ("netserver-daemonset.yaml", &narrowed),
            (
                "kustomization.yaml",
                "resources:\n  - netserver-daemonset.yaml\n",
            ),
        ],
    );
    assert!(validate(&dir.join("base/netserver-daemonset.yaml"))
        .status
        .success());
    assert!(!ok && said.contains("unlike --data-ports"), "{said}");
    // netagg --k8s-selector with a selector no netserver pod carries, and a
    // service account no Role lets list pods: valid YAML, caught by our checks.
    let rbac = std::fs::read_to_string(format!("{MANIFESTS}/base/netagg-rbac.yaml")).unwrap();
    let (ok, said) = checked(
        &dir.join("k8s"),
        &[
            ("netserver-daemonset.yaml", &daemonset),
            (
                "netagg-rbac.yaml",
                &rbac.replace("\"pods\", \"services\"", "\"services\""),
            ),
            (
                "netagg-job.yaml",
                &job.replace("app.kubernetes.io/name=netserver", "app=netserver"),
            ),
        ],
    );
    assert!(
        !ok && said.contains("--k8s-selector app=netserver picks no netserver")
            && said.contains("service account netagg may not list pods"),
        "{said}"
    );
    // The matrix Job with a set-based selector naming no netserver
    // DaemonSet, and no writable /tmp for its streams' histograms.
    let matrix = std::fs::read_to_string(format!("{MANIFESTS}/matrix/matrix-job.yaml")).unwrap();
    let broken = matrix
        .replace("(netserver,netserver-hostnet)", "(netserver-typo)")
        .replace("mountPath: /tmp", "mountPath: /scratch");
    let (ok, said) = checked(
        &dir.join("matrix"),
        &[
            ("netserver-daemonset.yaml", &daemonset),
            ("netagg-rbac.yaml", &rbac),
            ("matrix-job.yaml", &broken),
        ],
    );
    assert!(
        !ok && said.contains(
            "--k8s-selector app.kubernetes.io/name in (netserver-typo) picks no netserver"
        ) && said.contains("no writable /tmp"),
        "{said}"
    );
    // The mesh: a usable key in the example Secret, peers of every
    // address, a key file others may read, the coordinator picking the
    // netservers without the opt-in, a CronJob that may run two meshes at
    // once and a netserver with the key but no peers: each caught.
    let mesh_file = |name: &str| std::fs::read_to_string(format!("{MANIFESTS}/{name}")).unwrap();
    let mesh_daemonset = mesh_file("mesh/netserver-mesh-daemonset.yaml");
    let (ok, said) = checked(
        &dir.join("mesh"),
        &[
            ("netserver-daemonset.yaml", &daemonset),
            ("netagg-rbac.yaml", &rbac),
            (
                "mesh-key-secret-example.yaml",
                &mesh_file("mesh/mesh-key-secret-example.yaml")
                    .replace("\"REPLACE-ME\"", "\"a key anyone can read here\""),
            ),
            (
                "mesh-peers-configmap.yaml",
                &mesh_file("mesh/mesh-peers-configmap.yaml").replace("10.244.0.0/16", "0.0.0.0/0"),
            ),
            (
                "netserver-mesh-daemonset.yaml",
                &mesh_daemonset.replace("defaultMode: 0440", "defaultMode: 0444"),
            ),
            (
                "netserver-half-daemonset.yaml",
                &mesh_daemonset
                    .replace("\"--mesh-peers\", \"$(MESH_PEERS)\",", "")
                    .replace("name: netserver-mesh\n", "name: netserver-half\n"),
            ),
            (
                "mesh-job.yaml",
                &mesh_file("mesh/mesh-job.yaml").replace(
                    "app.kubernetes.io/name=netserver-mesh",
                    "app.kubernetes.io/name=netserver",
                ),
            ),
            (
                "mesh-cronjob.yaml",
                &mesh_file("mesh-nightly/mesh-cronjob.yaml")
                    .replace("concurrencyPolicy: Forbid", "concurrencyPolicy: Allow"),
            ),
        ],
    );
    // The watch: two replicas that roll, the database on an emptyDir, a
    // grace period shorter than a run, --listen on a port nothing exposes
    // or annotates, and a ServiceMonitor naming a port the Service lacks.
    let watch_file = |name: &str| mesh_file(&format!("watch/{name}"));
    let (watch_ok, watch_said) = checked(
        &dir.join("watch"),
        &[
            ("netserver-daemonset.yaml", &daemonset),
            ("netagg-rbac.yaml", &rbac),
            ("watch-pvc.yaml", &watch_file("watch-pvc.yaml")),
            ("watch-service.yaml", &watch_file("watch-service.yaml")),
            (
                "watch-deployment.yaml",
                &watch_file("watch-deployment.yaml")
                    .replace("replicas: 1", "replicas: 2")
                    .replace("type: Recreate", "type: RollingUpdate")
                    .replace(
                        "persistentVolumeClaim:\n            claimName: netagg-watch-data",
                        "emptyDir: {}",
                    )
                    .replace(
                        "terminationGracePeriodSeconds: 60",
                        "terminationGracePeriodSeconds: 5",
                    )
                    .replace("0.0.0.0:9464", "0.0.0.0:9999"),
            ),
            (
                "servicemonitor-example.yaml",
                &watch_file("servicemonitor-example.yaml").replace("port: metrics", "port: web"),
            ),
        ],
    );
    for problem in [
        "replicas 1, strategy Recreate",
        "is not on a PersistentVolumeClaim",
        "terminationGracePeriodSeconds 5",
        "--listen port 9999 is not a container port",
        "no prometheus.io/scrape and port 9999",
        "does not reach --listen port 9999",
        "is not the watch Service's /metrics port",
    ] {
        assert!(
            !watch_ok && watch_said.contains(problem),
            "{problem}: {watch_said}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    for problem in [
        "holds a usable key",
        "--mesh-peers 0.0.0.0/0 allows every address",
        "the mesh key is readable by others",
        "--mesh-key and --mesh-peers go together",
        "--k8s-selector app.kubernetes.io/name=netserver picks no netserver with the mesh opt-in",
        "without concurrencyPolicy: Forbid",
    ] {
        assert!(!ok && said.contains(problem), "{problem}: {said}");
    }
}

/// Our checks over `files` (name, text) written in a new directory `dir`:
/// whether they passed, and the problems they printed.
fn checked(dir: &Path, files: &[(&str, &str)]) -> (bool, String) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, body) in files {
        std::fs::write(dir.join(name), body).unwrap();
    }
    let out = run_with_limit(
        "python3",
        &[CHECKER, dir.to_str().unwrap()],
        Duration::from_secs(60),
    );
    (out.status.success(), text(&out.stdout))
}

/// Every overlay builds with kustomize (kubectl's), and the matrix overlay
/// holds the matrix Job in place of the base's ramp Job. Skipped, saying
/// so, where kubectl is not installed (it is not in the registries here).
#[test]
fn every_overlay_builds_with_kustomize() {
    if !install::runs("kubectl", &["version", "--client"]) {
        return skip("no kubectl to run kustomize");
    }
    for overlay in [
        "base",
        "hostnetwork",
        "matrix",
        "mesh",
        "mesh-nightly",
        "watch",
    ] {
        let out = run_with_limit(
            "kubectl",
            &["kustomize", &format!("{MANIFESTS}/{overlay}")],
            Duration::from_secs(60),
        );
        let built = text(&out.stdout);
        assert!(out.status.success(), "{overlay}: {}", text(&out.stderr));
        let jobs = names_of(&built, "Job");
        let want: &[&str] = match overlay {
            "matrix" => &["  name: netagg-matrix"],
            "mesh" => &["  name: netagg-mesh"],
            "mesh-nightly" | "watch" => &[],
            _ => &["  name: netagg"],
        };
        assert_eq!(jobs, want, "{overlay}:\n{built}");
        // The mesh overlays run the mesh netservers only (the base's own
        // netserver left out), never apply the example key, and the
        // nightly one runs the mesh as a CronJob.
        if overlay.starts_with("mesh") {
            let daemonsets = names_of(&built, "DaemonSet");
            assert_eq!(
                daemonsets,
                ["  name: netserver-mesh"],
                "{overlay}:\n{built}"
            );
            assert!(names_of(&built, "Secret").is_empty(), "{overlay}:\n{built}");
            let cronjobs: &[&str] = match overlay {
                "mesh-nightly" => &["  name: netagg-mesh-nightly"],
                _ => &[],
            };
            assert_eq!(names_of(&built, "CronJob"), cronjobs, "{overlay}:\n{built}");
        }
        // The watch overlay runs the base's netservers and the watch as a
        // Deployment behind its metrics Service, on its volume.
        if overlay == "watch" {
            assert_eq!(
                names_of(&built, "Deployment"),
                ["  name: netagg-watch"],
                "{built}"
            );
            assert_eq!(
                names_of(&built, "PersistentVolumeClaim"),
                ["  name: netagg-watch-data"],
                "{built}"
            );
            assert!(names_of(&built, "Service").contains(&"  name: netagg-watch"));
        }
    }
}

/// The names of the `kind` resources in kustomize's output (its documents
/// list metadata, and so its name, before anything else with that indent).
fn names_of<'a>(built: &'a str, kind: &str) -> Vec<&'a str> {
    let kind = format!("kind: {kind}\n");
    built
        .split("\n---\n")
        .filter(|doc| doc.contains(&kind))
        .filter_map(|doc| doc.lines().find(|l| l.starts_with("  name: ")))
        .collect()
}
