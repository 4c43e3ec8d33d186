//! Kubernetes API discovery (`netperf_ng::k8s`, `netagg --k8s-selector`)
//! against a STAND-IN API server, not a cluster: a small HTTP server on
//! 127.0.0.1 started by each test, answering the real API paths
//! (/api/v1/namespaces/NS/pods?labelSelector=..., /api/v1/nodes/NAME,
//! /api/v1/namespaces/NS/services) with JSON shaped like real API server
//! responses (the Kubernetes API reference's PodList, Node, ServiceList and
//! Status), and a kubeconfig pointing at it. It shows that the client, our
//! filtering and netagg's wiring do what they should with such answers; it
//! cannot show that a real API server or RBAC behaves as recorded here.
//! The end-to-end test runs a short netagg tps test against our real
//! netserver on loopback, whose address the stand-in reports as a pod IP.

mod common;
use common::*;
#[path = "k8s/stand_in.rs"]
mod stand_in;
use netperf_ng::k8s::{self, K8sError, Query};
use serde_json::{json, Value};
use stand_in::{Answer, StandIn};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use common::NETAGG;
const NS: &str = "netperf-ng";
const SELECTOR: &str = "app.kubernetes.io/name=netserver";

/// A temporary directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("ngk8sapi-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn kubeconfig_for(dir: &TempDir, server: &str) -> PathBuf {
    let path = dir.0.join("kubeconfig");
    let text = format!(
        "apiVersion: v1
kind: Config
clusters:
- name: stand-in
  cluster:
    server: {server}
    insecure-skip-tls-verify: true
contexts:
- name: stand-in
  context:
    cluster: stand-in
    user: stand-in
    namespace: {NS}
current-context: stand-in
users:
- name: stand-in
  user:
    token: not-a-real-token
"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// A pod as a real API server lists it (a DaemonSet's netserver pod).
fn pod(name: &str, node: &str, ip: &str, port: u16, ready: bool, phase: &str) -> Value {
    let flag = if ready { "True" } else { "False" };
    let condition = |kind: &str, status: &str| {
        json!({"type": kind, "status": status, "lastProbeTime": null,
               "lastTransitionTime": "2026-11-23T10:00:05Z"})
    };
    json!({
        "metadata": {
            "name": name, "generateName": "netserver-", "namespace": NS,
            "uid": format!("0b0e7c1e-0000-4000-8000-{:012}", name.len()),
            "resourceVersion": "4711", "creationTimestamp": "2026-11-23T10:00:00Z",
            "labels": {"app.kubernetes.io/name": "netserver", "app.kubernetes.io/part-of": "netperf-ng",
                       "controller-revision-hash": "6d5f8b7c9", "pod-template-generation": "1"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "netserver",
                                 "uid": "5a1d0000-0000-4000-8000-000000000001",
                                 "controller": true, "blockOwnerDeletion": true}]
        },
        "spec": {
            "containers": [{"name": "netserver", "image": "localhost/netperf-ng:0.1.0",
                "args": ["netserver", "-D", "-p", port.to_string()],
                "ports": [{"name": "control", "containerPort": port, "protocol": "TCP"},
                          {"name": "data-tcp-0", "containerPort": 42424, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "500m", "memory": "64Mi"}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst", "serviceAccountName": "default",
            "nodeName": node, "hostNetwork": false, "schedulerName": "default-scheduler",
            "priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority"
        },
        "status": {
            "phase": phase,
            "conditions": [condition("PodReadyToStartContainers", "True"),
                           condition("Initialized", "True"), condition("Ready", flag),
                           condition("ContainersReady", flag), condition("PodScheduled", "True")],
            "hostIP": "198.18.0.10", "hostIPs": [{"ip": "198.18.0.10"}],
            "podIP": ip, "podIPs": [{"ip": ip}],
            "startTime": "2026-11-23T10:00:01Z", "qosClass": "Burstable"
        }
    })
}

fn pod_list(items: Vec<Value>) -> String {
    json!({"kind": "PodList", "apiVersion": "v1",
           "metadata": {"resourceVersion": "4712"}, "items": items})
    .to_string()
}

fn node(name: &str, zone_label: &str, zone: &str) -> String {
    json!({
        "kind": "Node", "apiVersion": "v1",
        "metadata": {"name": name, "uid": "7e57ab1e-0000-4000-8000-000000000002",
                     "resourceVersion": "99", "creationTimestamp": "2026-11-20T08:00:00Z",
                     "labels": {"beta.kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name,
                                "kubernetes.io/os": "linux", zone_label: zone,
                                "topology.kubernetes.io/region": "region-1"}},
        "spec": {"podCIDR": "198.19.0.0/24", "podCIDRs": ["198.19.0.0/24"]},
        "status": {"addresses": [{"type": "InternalIP", "address": "198.18.0.10"},
                                 {"type": "Hostname", "address": name}],
                   "conditions": [{"type": "Ready", "status": "True",
                                   "lastHeartbeatTime": "2026-11-23T10:00:00Z",
                                   "lastTransitionTime": "2026-11-20T08:00:00Z",
                                   "reason": "KubeletReady", "message": "kubelet is posting ready status"}]}
    })
    .to_string()
}

fn service(name: &str, cluster_ip: &str, policy: &str) -> Value {
    json!({
        "metadata": {"name": name, "namespace": NS, "uid": "5e71ce00-0000-4000-8000-000000000003",
                     "resourceVersion": "120", "creationTimestamp": "2026-11-23T09:59:00Z",
                     "labels": {"app.kubernetes.io/part-of": "netperf-ng"}},
        "spec": {"ports": [{"name": "control", "protocol": "TCP", "port": 12865, "targetPort": 12865},
                           {"name": "data-tcp-0", "protocol": "TCP", "port": 42424, "targetPort": 42424}],
                 "selector": {"app.kubernetes.io/name": "netserver"},
                 "clusterIP": cluster_ip, "clusterIPs": [cluster_ip], "type": "ClusterIP",
                 "sessionAffinity": "None", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                 "internalTrafficPolicy": policy},
        "status": {"loadBalancer": {}}
    })
}

fn service_list() -> String {
    json!({"kind": "ServiceList", "apiVersion": "v1", "metadata": {"resourceVersion": "121"},
           "items": [service("netserver", "None", "Cluster"),
                     service("netserver-local", "198.18.200.2", "Local"),
                     service("netserver-vip", "198.18.200.1", "Cluster")]})
    .to_string()
}

fn forbidden(what: &str, name: &str) -> (u16, String) {
    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("{what} \"{name}\" is forbidden: User \"system:serviceaccount:netperf-ng:netagg\" cannot get resource \"{what}\" in API group \"\" at the cluster scope"),
        "reason": "Forbidden", "details": {"name": name, "kind": what}, "code": 403});
    (403, body.to_string())
}

fn not_found(path: &str) -> Answer {
    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("the server could not find the requested resource ({path})"),
        "reason": "NotFound", "details": {}, "code": 404});
    Some((404, body.to_string()))
}

/// A cluster of two nodes in two zones (node-b's zone under the deprecated
/// label) and pods on them in every state; `nodes_forbidden` answers node
/// reads with 403, as RBAC without the ClusterRole does.
fn cluster(netserver_port: u16, nodes_forbidden: bool) -> impl Fn(&str) -> Answer {
    move |target: &str| {
        let path = target.split('?').next().unwrap_or("");
        let pods = format!("/api/v1/namespaces/{NS}/pods");
        let answer = match path {
            p if p == pods => (
                200,
                pod_list(vec![
                    pod(
                        "netserver-zz9",
                        "node-b",
                        "127.0.0.3",
                        netserver_port,
                        true,
                        "Running",
                    ),
                    pod(
                        "netserver-aa1",
                        "node-a",
                        "127.0.0.2",
                        netserver_port,
                        true,
                        "Running",
                    ),
                    pod(
                        "netserver-nr0",
                        "node-a",
                        "127.0.0.4",
                        netserver_port,
                        false,
                        "Running",
                    ),
                    {
                        let mut pending = pod(
                            "netserver-pd0",
                            "node-a",
                            "",
                            netserver_port,
                            false,
                            "Pending",
                        );
                        pending["status"].as_object_mut().unwrap().remove("podIP");
                        pending["status"].as_object_mut().unwrap().remove("podIPs");
                        pending
                    },
                ]),
            ),
            p if p == format!("{pods}/netagg-x7k2p") => {
                let mut me = pod("netagg-x7k2p", "node-b", "127.0.0.9", 1, true, "Running");
                me["metadata"]["labels"] = json!({"app.kubernetes.io/name": "netagg"});
                (200, me.to_string())
            }
            p if p.starts_with("/api/v1/nodes/") && nodes_forbidden => {
                forbidden("nodes", &p["/api/v1/nodes/".len()..])
            }
            "/api/v1/nodes/node-a" => {
                (200, node("node-a", "topology.kubernetes.io/zone", "zone-1"))
            }
            "/api/v1/nodes/node-b" => (
                200,
                node("node-b", "failure-domain.beta.kubernetes.io/zone", "zone-2"),
            ),
            p if p == format!("/api/v1/namespaces/{NS}/services") => (200, service_list()),
            // A namespace with no pods: a real server lists none, even for
            // a namespace that does not exist.
            "/api/v1/namespaces/empty/pods" => (200, pod_list(vec![])),
            _ => return not_found(path),
        };
        Some(answer)
    }
}

/// `discover` on another thread, so a hang fails the test instead of
/// holding it: the answer, or a failure after 30 s.
fn discover_bounded(q: Query, call_timeout: Duration) -> Result<k8s::Discovery, K8sError> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(k8s::discover_within(&q, call_timeout));
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("discover returned within 30 s")
}

fn query(kubeconfig: PathBuf) -> Query {
    Query {
        selector: SELECTOR.into(),
        namespace: None,
        kubeconfig: Some(kubeconfig),
    }
}

/// The value of `key` in a request's query string, percent-decoded.
fn query_param(target: &str, key: &str) -> Option<String> {
    let query = target.split_once('?')?.1;
    let raw = query
        .split('&')
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))?;
    let bytes = raw.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 3 <= bytes.len() {
            out.push(u8::from_str_radix(&raw[i + 1..i + 3], 16).ok()?);
            i += 3;
        } else {
            out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[test]
fn ready_pods_come_back_with_nodes_zones_and_their_services() {
    let api = StandIn::start(cluster(12866, false));
    let dir = TempDir::new("ready");
    let found = discover_bounded(
        query(kubeconfig_for(&dir, &api.url())),
        Duration::from_secs(10),
    )
    .unwrap();
    assert_eq!(found.namespace, NS, "the kubeconfig context's namespace");
    let pods: Vec<(&str, String, Option<&str>, Option<&str>)> = found
        .pods
        .iter()
        .map(|p| {
            (
                p.pod.as_str(),
                p.address.to_string(),
                p.placement.node.as_deref(),
                p.placement.zone.as_deref(),
            )
        })
        .collect();
    // Sorted by node, then pod; the not-ready and the pending pod left out.
    assert_eq!(
        pods,
        [
            (
                "netserver-aa1",
                "127.0.0.2".to_string(),
                Some("node-a"),
                Some("zone-1")
            ),
            (
                "netserver-zz9",
                "127.0.0.3".to_string(),
                Some("node-b"),
                Some("zone-2")
            ),
        ]
    );
    assert!(found
        .pods
        .iter()
        .all(|p| p.port == 12866 && !p.host_network));
    // The headless Service is skipped; the node-local one is told apart.
    let services: Vec<(&str, String, u16, bool)> = found
        .services
        .iter()
        .map(|s| (s.name.as_str(), s.address.to_string(), s.port, s.node_local))
        .collect();
    assert_eq!(
        services,
        [
            ("netserver-local", "198.18.200.2".to_string(), 12865, true),
            ("netserver-vip", "198.18.200.1".to_string(), 12865, false),
        ]
    );
    let seen = api.seen();
    let list = seen
        .iter()
        .find(|t| t.starts_with(&format!("/api/v1/namespaces/{NS}/pods?")))
        .unwrap_or_else(|| panic!("no pod list among {seen:?}"));
    assert_eq!(
        query_param(list, "labelSelector").as_deref(),
        Some(SELECTOR)
    );
    // Each node read once.
    assert_eq!(
        seen.iter()
            .filter(|t| t.starts_with("/api/v1/nodes/node-a"))
            .count(),
        1
    );
}

#[test]
fn host_network_pods_are_told_apart_and_the_namespace_given_wins() {
    let api = StandIn::start(|target: &str| {
        let path = target.split('?').next().unwrap_or("");
        match path {
            "/api/v1/namespaces/other/pods" => {
                let mut p = pod(
                    "netserver-h1",
                    "node-a",
                    "198.18.0.10",
                    12865,
                    true,
                    "Running",
                );
                p["spec"]["hostNetwork"] = json!(true);
                Some((200, pod_list(vec![p])))
            }
            "/api/v1/nodes/node-a" => {
                Some((200, node("node-a", "topology.kubernetes.io/zone", "z")))
            }
            "/api/v1/namespaces/other/services" => Some((
                200,
                json!({"kind": "ServiceList", "apiVersion": "v1", "metadata": {}, "items": []})
                    .to_string(),
            )),
            _ => not_found(path),
        }
    });
    let dir = TempDir::new("hostnet");
    let mut q = query(kubeconfig_for(&dir, &api.url()));
    q.namespace = Some("other".into());
    let found = discover_bounded(q, Duration::from_secs(10)).unwrap();
    assert_eq!(found.namespace, "other");
    assert_eq!(found.pods.len(), 1);
    assert!(found.pods[0].host_network);
    assert!(found.services.is_empty());
}

#[test]
fn forbidden_nodes_leave_zones_unknown_and_discovery_working() {
    let api = StandIn::start(cluster(12865, true));
    let dir = TempDir::new("forbidden");
    let found = discover_bounded(
        query(kubeconfig_for(&dir, &api.url())),
        Duration::from_secs(10),
    )
    .unwrap();
    assert_eq!(found.pods.len(), 2);
    assert!(found.pods.iter().all(|p| p.placement.zone.is_none()));
    assert_eq!(found.pods[0].placement.node.as_deref(), Some("node-a"));
    // Asked once, not once per node.
    let node_reads = api
        .seen()
        .iter()
        .filter(|t| t.starts_with("/api/v1/nodes/"))
        .count();
    assert_eq!(node_reads, 1);
}

#[test]
fn an_api_server_that_is_down_or_hangs_is_a_clear_error() {
    let dir = TempDir::new("down");
    // Nothing listens on a port just freed.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for scheme in ["http", "https"] {
        let config = kubeconfig_for(&dir, &format!("{scheme}://127.0.0.1:{closed}"));
        let e = discover_bounded(query(config), Duration::from_secs(10)).unwrap_err();
        assert!(matches!(e, K8sError::Api(..)), "{scheme}: {e}");
        // The cause, not only the client's "client error (Connect)".
        assert!(
            e.to_string().contains("Connection refused"),
            "{scheme}: {e}"
        );
        assert!(
            e.to_string().starts_with(&format!(
                "Kubernetes API: cannot list pods in namespace {NS}"
            )),
            "{scheme}: {e}"
        );
    }
    // Accepts, never answers: our bound, not the client's patience, ends it.
    let api = StandIn::start(|_: &str| None);
    let e = discover_bounded(
        query(kubeconfig_for(&dir, &api.url())),
        Duration::from_secs(1),
    )
    .unwrap_err();
    assert!(matches!(e, K8sError::Timeout(..)), "{e}");
    assert!(e.to_string().contains("no answer within 1 s"), "{e}");
}

#[test]
fn garbage_and_hostile_answers_are_clear_errors() {
    let dir = TempDir::new("garbage");
    let answers: Vec<(String, &str)> = vec![
        (
            "{\"kind\": \"PodList\", \"items\": [".into(),
            "Error deserializing response",
        ),
        (
            "<html>502 Bad Gateway</html>".into(),
            "Error deserializing response",
        ),
        (
            pod_list(vec![pod(
                "netserver-x",
                "node-a",
                "127.0.0.300",
                12865,
                true,
                "Running",
            )]),
            "not an IP address",
        ),
        (
            pod_list(vec![pod(
                "netserver-x",
                "node-a",
                "127.0.0.2",
                0,
                true,
                "Running",
            )]),
            "port 0 is out of range",
        ),
        (
            pod_list(
                (0..4097)
                    .map(|i| {
                        pod(
                            &format!("p{i}"),
                            "node-a",
                            "127.0.0.2",
                            12865,
                            false,
                            "Pending",
                        )
                    })
                    .collect(),
            ),
            "more than 4096 pods",
        ),
    ];
    for (body, says) in answers {
        let body = Arc::new(body);
        let api = StandIn::start(move |_: &str| Some((200, body.to_string())));
        let e = discover_bounded(
            query(kubeconfig_for(&dir, &api.url())),
            Duration::from_secs(10),
        )
        .unwrap_err();
        assert!(e.to_string().contains(says), "wanted {says:?}: {e}");
        assert!(!e.to_string().contains('\n'), "one line: {e}");
    }
}

/// Run netagg with `args` and extra environment in `dir` (where a run
/// without --out would leave its files), killed after 60 s.
fn netagg(dir: &TempDir, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut child = Command::new(NETAGG)
        .current_dir(&dir.0)
        .args(args)
        .env_remove("NODE_NAME")
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn netagg");
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait_with_output().unwrap()
}

#[test]
fn netagg_k8s_selector_runs_against_the_pods_the_api_reports() {
    let server = Server::start("127.0.0.2");
    // The stand-in reports this netserver as pod netserver-aa1; the other
    // ready pod must not be there, so it is answered as not ready.
    let routes = cluster(server.port, false);
    let api = StandIn::start(move |target: &str| {
        let answer = routes(target)?;
        if target.starts_with(&format!("/api/v1/namespaces/{NS}/pods?")) {
            let mut list: Value = serde_json::from_str(&answer.1).unwrap();
            list["items"][0]["status"]["conditions"][2]["status"] = json!("False");
            return Some((200, list.to_string()));
        }
        Some(answer)
    });
    let dir = TempDir::new("netagg");
    let config = kubeconfig_for(&dir, &api.url());
    let out_dir = dir.0.join("out");
    let out = netagg(
        &dir,
        &[
            "--k8s-selector",
            SELECTOR,
            "--kubeconfig",
            config.to_str().unwrap(),
            "--kind",
            "tps",
            "--duration",
            "2",
            "--streams",
            "1",
            "--burst",
            "1",
            "--interval",
            "0.5",
            "--out",
            out_dir.to_str().unwrap(),
        ],
        &[("POD_NAME", "netagg-x7k2p"), ("POD_NAMESPACE", NS)],
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{}{stderr}", text(&out.stdout));
    assert!(!stderr.contains("deprecated"), "{stderr}");
    assert!(
        stderr.contains(
            "netagg: load generator 127.0.0.2 (pod netserver-aa1, node node-a, zone zone-1)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("netagg: this run: node node-b, zone zone-2"),
        "{stderr}"
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("netagg_tps.json")).unwrap())
            .unwrap();
    assert_eq!(json["hosts"], json!(["127.0.0.2"]));
    let k8s = &json["kubernetes"];
    assert_eq!(k8s["namespace"], NS);
    assert_eq!(k8s["pods"][0]["pod"], "netserver-aa1");
    assert_eq!(k8s["pods"][0]["port"], server.port);
    assert_eq!(
        k8s["pods"][0]["placement"],
        json!({"node": "node-a", "zone": "zone-1"})
    );
    assert_eq!(k8s["me"], json!({"node": "node-b", "zone": "zone-2"}));
    let peak = json["levels"][0]["average"].as_f64().unwrap();
    assert!(peak > 0.0, "transactions went to the pod's address: {peak}");
    let list = api
        .seen()
        .into_iter()
        .find(|t| t.starts_with(&format!("/api/v1/namespaces/{NS}/pods?")))
        .unwrap();
    assert_eq!(
        query_param(&list, "labelSelector").as_deref(),
        Some(SELECTOR)
    );
}

#[test]
fn netagg_k8s_selector_refuses_what_it_cannot_run() {
    let api = StandIn::start(cluster(12866, false));
    let dir = TempDir::new("refuse");
    let config = kubeconfig_for(&dir, &api.url());
    let config = config.to_str().unwrap();
    let cases: [(&[&str], &str); 4] = [
        // --hosts-k8s: the old spelling of --k8s-selector, the same query.
        (
            &["--hosts-k8s", SELECTOR, "--kubeconfig", config, "--port", "12865"],
            "netagg: the pods' control port is 12866 (their container port named control, else 12865) but --port says 12865",
        ),
        (
            &["--k8s-selector", "app=none", "--kubeconfig", config, "--k8s-namespace", "empty"],
            "netagg: no ready pods match \"app=none\" in namespace empty",
        ),
        (
            &["--k8s-namespace", "x", "--host", "127.0.0.1"],
            "'--k8s-namespace <NS>' cannot be used with",
        ),
        (&["--kubeconfig", config], "netagg: --kubeconfig needs --k8s-selector"),
    ];
    for (args, says) in cases {
        let out = netagg(&dir, args, &[]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(says),
            "{args:?}: wanted {says:?} in {stderr}"
        );
    }
}

#[test]
fn netagg_matrix_chooses_its_far_ends_from_what_the_api_reports() {
    let api = StandIn::start(cluster(23999, false));
    let dir = TempDir::new("matrix");
    let config = kubeconfig_for(&dir, &api.url());
    let out = netagg(
        &dir,
        &[
            "matrix",
            "--k8s-selector",
            SELECTOR,
            "--kubeconfig",
            config.to_str().unwrap(),
            "--tests",
            "TCP_RR",
            "--replicates",
            "1",
            "--no-store",
            "--dry-run",
        ],
        &[("NODE_NAME", "node-b"), ("POD_NAMESPACE", NS)],
    );
    let stderr = text(&out.stderr);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stderr}{stdout}");
    // This pod is on node-b (zone-2): its node's pod, the other zone's pod,
    // both Services; no second node in zone-2, no host-network netservers.
    for (scenario, says) in [
        (
            "same node, pod IP",
            "127.0.0.3 port 23999  pod netserver-zz9 on node node-b, zone zone-2",
        ),
        (
            "same node, host network",
            "not available: no host-network netserver on this node (node-b)",
        ),
        (
            "same node, Service (node-local)",
            "198.18.200.2 port 12865  node-local Service netserver-local",
        ),
        (
            "other node, same zone, pod IP",
            "not available: no netserver pod on another node in zone zone-2",
        ),
        (
            "other zone, pod IP",
            "127.0.0.2 port 23999  pod netserver-aa1 on node node-a, zone zone-1",
        ),
        (
            "Service (ClusterIP)",
            "198.18.200.1 port 12865  Service netserver-vip",
        ),
    ] {
        let line = stderr
            .lines()
            .find(|l| l.trim_start().starts_with(scenario) && l.contains(says));
        assert!(line.is_some(), "{scenario}: {says}\n{stderr}");
    }
    // Each scenario's runs go where it says.
    for host in [
        "-H 127.0.0.3 -p 23999",
        "-H 127.0.0.2 -p 23999",
        "-H 198.18.200.1 -p 12865",
        "-H 198.18.200.2 -p 12865",
    ] {
        assert!(stdout.contains(host), "{host}\n{stdout}");
    }
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.contains("netperf -P 0"))
            .count(),
        4,
        "{stdout}"
    );
}
