//! Talking to the API server: the config (kubeconfig or in-cluster service
//! account), the pod, node and Service calls, each bounded in time, and this
//! process's own node. The async client runs on a current-thread runtime
//! that lives for one `discover` call.

use super::select::{checked_name, pod_endpoint, services_for, zone_of_labels};
use super::{Discovery, K8sError, Placement, Query, MAX_PODS, MAX_SERVICES};
use k8s_openapi::api::core::v1::{Node, Pod, Service};
use kube::api::{Api, ListParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

/// How long one call to the API server (or loading the config) may take.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// The whole discovery may take as long as this many calls.
const OVERALL_CALLS: u32 = 6;

/// Longest label selector taken: real ones are a few dozen characters.
const MAX_SELECTOR: usize = 1024;

/// Where a pod finds its own namespace (the service account's).
const IN_CLUSTER_NAMESPACE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// Discover the ready pods `q.selector` picks, with their nodes' zones, the
/// Services in front of them and where this process runs. Blocking; each
/// call to the API server is bounded by `DEFAULT_CALL_TIMEOUT`, the whole by
/// six times that.
pub fn discover(q: &Query) -> Result<Discovery, K8sError> {
    discover_within(q, DEFAULT_CALL_TIMEOUT)
}

/// `discover` with each call bounded by `call_timeout`.
pub fn discover_within(q: &Query, call_timeout: Duration) -> Result<Discovery, K8sError> {
    check_selector(&q.selector)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| K8sError::Client(format!("cannot start its runtime: {e}")))?;
    // Each call is bounded, but a server answering every one just in time
    // could still stretch a discovery of many nodes; the whole is bounded too.
    let overall = call_timeout * OVERALL_CALLS;
    runtime.block_on(async {
        tokio::time::timeout(overall, discover_async(q, call_timeout))
            .await
            .map_err(|_| K8sError::Timeout("finish discovery".into(), overall.as_secs()))?
    })
}

/// The API server parses the selector; we refuse only what no selector is,
/// so that a mistake is not sent (an empty one would pick every pod).
fn check_selector(selector: &str) -> Result<(), K8sError> {
    let bad = |why: &str| {
        Err(K8sError::Selector(
            selector.chars().take(64).collect(),
            why.into(),
        ))
    };
    if selector.trim().is_empty() {
        return bad("empty (it would pick every pod in the namespace)");
    }
    if selector.len() > MAX_SELECTOR {
        return bad("too long");
    }
    if selector.chars().any(char::is_control) {
        return bad("control characters");
    }
    Ok(())
}

/// Await `call`, at most `limit`; `what` names it in the error.
async fn bounded<T>(
    limit: Duration,
    what: &str,
    call: impl Future<Output = Result<T, kube::Error>>,
) -> Result<Result<T, kube::Error>, K8sError> {
    tokio::time::timeout(limit, call)
        .await
        .map_err(|_| K8sError::Timeout(what.to_string(), limit.as_secs().max(1)))
}

/// An error and its causes in one line ("client error (Connect): tcp
/// connect error: Connection refused"), each cause's first line only (a
/// YAML parser's answer quotes the file), at most 300 characters.
fn one_line(e: &dyn std::error::Error) -> String {
    let mut line = String::new();
    let mut cause = Some(e);
    while let Some(err) = cause {
        let text = err.to_string();
        let first = text.lines().next().unwrap_or("").trim();
        if !first.is_empty() && !line.contains(first) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(first);
        }
        cause = err.source();
    }
    line.chars().take(300).collect()
}

/// An API error in one line: the server's own message when it sent a Status.
fn api_error(what: &str, e: kube::Error) -> K8sError {
    let detail = match &e {
        kube::Error::Api(status) => format!(
            "{} {}: {}",
            status.code,
            status.reason,
            status.message.chars().take(200).collect::<String>()
        ),
        other => one_line(other),
    };
    K8sError::Api(what.to_string(), detail)
}

/// The HTTP status of an API error, if the server answered with one.
fn status_code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

async fn load_config(q: &Query, limit: Duration) -> Result<Config, K8sError> {
    let loading = async {
        match &q.kubeconfig {
            Some(path) => {
                let file = Kubeconfig::read_from(path)
                    .map_err(|e| K8sError::Kubeconfig(path.display().to_string(), one_line(&e)))?;
                Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
                    .await
                    .map_err(|e| K8sError::Kubeconfig(path.display().to_string(), one_line(&e)))
            }
            None => Config::infer()
                .await
                .map_err(|e| K8sError::Config(one_line(&e))),
        }
    };
    tokio::time::timeout(limit, loading)
        .await
        .map_err(|_| K8sError::Timeout("load the config".into(), limit.as_secs().max(1)))?
}

async fn discover_async(q: &Query, limit: Duration) -> Result<Discovery, K8sError> {
    let mut config = load_config(q, limit).await?;
    // The client's own bounds, under ours: a stalled connection fails the
    // same way as a slow answer.
    config.connect_timeout = Some(limit);
    config.read_timeout = Some(limit);
    config.write_timeout = Some(limit);
    let namespace = checked_name(
        "namespace",
        q.namespace.as_deref().unwrap_or(&config.default_namespace),
    )?;
    let client = Client::try_from(config).map_err(|e| K8sError::Client(one_line(&e)))?;

    let what = format!("list pods in namespace {namespace}");
    let pods_api: Api<Pod> = Api::namespaced(client.clone(), &namespace);
    let params = ListParams::default()
        .labels(&q.selector)
        .limit(MAX_PODS as u32 + 1);
    let listed = bounded(limit, &what, pods_api.list(&params))
        .await?
        .map_err(|e| api_error(&what, e))?;
    if listed.items.len() > MAX_PODS || listed.metadata.continue_.is_some_and(|c| !c.is_empty()) {
        return Err(K8sError::Invalid(
            what,
            format!("more than {MAX_PODS} pods match {:?}", q.selector),
        ));
    }
    let mut pods = Vec::new();
    let mut labels = Vec::new();
    for pod in &listed.items {
        if let Some(endpoint) = pod_endpoint(pod)? {
            pods.push(endpoint);
            labels.push(pod.metadata.labels.clone().unwrap_or_default());
        }
    }

    let mut zones = Zones::new(client.clone(), limit);
    for endpoint in &mut pods {
        if let Some(node) = &endpoint.placement.node {
            endpoint.placement.zone = zones.of(node).await?;
        }
    }
    let me = match my_node(&client, &namespace, limit).await? {
        Some(node) => Placement {
            zone: zones.of(&node).await?,
            node: Some(node),
        },
        None => Placement::default(),
    };

    let services = if pods.is_empty() {
        Vec::new()
    } else {
        let what = format!("list services in namespace {namespace}");
        let services_api: Api<Service> = Api::namespaced(client, &namespace);
        let params = ListParams::default().limit(MAX_SERVICES as u32 + 1);
        let listed = bounded(limit, &what, services_api.list(&params))
            .await?
            .map_err(|e| api_error(&what, e))?;
        if listed.items.len() > MAX_SERVICES
            || listed.metadata.continue_.is_some_and(|c| !c.is_empty())
        {
            return Err(K8sError::Invalid(
                what,
                format!("more than {MAX_SERVICES} services"),
            ));
        }
        let label_refs: Vec<_> = labels.iter().collect();
        services_for(&listed.items, &label_refs)?
    };

    pods.sort_by(|a, b| (&a.placement.node, &a.pod).cmp(&(&b.placement.node, &b.pod)));
    Ok(Discovery {
        namespace,
        pods,
        services,
        me,
    })
}

/// Nodes' zones, each node read once. Reading nodes is cluster-scoped and
/// often not granted: then every zone is unknown, said once, and discovery
/// goes on.
struct Zones {
    nodes: Api<Node>,
    limit: Duration,
    known: HashMap<String, Option<String>>,
    forbidden: bool,
}

impl Zones {
    fn new(client: Client, limit: Duration) -> Self {
        Zones {
            nodes: Api::all(client),
            limit,
            known: HashMap::new(),
            forbidden: false,
        }
    }

    async fn of(&mut self, node: &str) -> Result<Option<String>, K8sError> {
        if self.forbidden {
            return Ok(None);
        }
        if let Some(zone) = self.known.get(node) {
            return Ok(zone.clone());
        }
        if self.known.len() >= MAX_PODS {
            return Err(K8sError::Invalid(
                "nodes".into(),
                format!("more than {MAX_PODS} nodes"),
            ));
        }
        let what = format!("get node {node}");
        let zone = match bounded(self.limit, &what, self.nodes.get(node)).await? {
            Ok(found) => zone_of_labels(node, found.metadata.labels.as_ref())?,
            Err(e) if matches!(status_code(&e), Some(401 | 403)) => {
                eprintln!(
                    "note: {}; zones are unknown (grant get on nodes to learn them)",
                    api_error(&what, e)
                );
                self.forbidden = true;
                return Ok(None);
            }
            // Gone since its pods were listed.
            Err(e) if status_code(&e) == Some(404) => None,
            Err(e) => return Err(api_error(&what, e)),
        };
        self.known.insert(node.to_string(), zone.clone());
        Ok(zone)
    }
}

/// A non-empty environment variable.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// This process's node: NODE_NAME (the downward API) or, inside a pod, the
/// node of that pod (POD_NAME, else HOSTNAME, which is the pod's name), in
/// POD_NAMESPACE, else the service account's namespace, else `namespace`.
/// None outside a cluster, and when our pod cannot be read (said once).
async fn my_node(
    client: &Client,
    namespace: &str,
    limit: Duration,
) -> Result<Option<String>, K8sError> {
    if let Some(node) = env("NODE_NAME") {
        return checked_name("NODE_NAME", &node).map(Some);
    }
    let in_cluster = env("KUBERNETES_SERVICE_HOST").is_some();
    let Some(pod) = env("POD_NAME").or_else(|| in_cluster.then(|| env("HOSTNAME")).flatten())
    else {
        return Ok(None);
    };
    let pod = checked_name("POD_NAME", &pod)?;
    let own_namespace = env("POD_NAMESPACE")
        .or_else(|| {
            std::fs::read_to_string(IN_CLUSTER_NAMESPACE)
                .ok()
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| namespace.to_string());
    let own_namespace = checked_name("own namespace", &own_namespace)?;
    let what = format!("get pod {pod} in namespace {own_namespace} (this process)");
    let api: Api<Pod> = Api::namespaced(client.clone(), &own_namespace);
    match bounded(limit, &what, api.get(&pod)).await? {
        Ok(found) => match found.spec.and_then(|s| s.node_name) {
            Some(node) => checked_name("node", &node).map(Some),
            None => Ok(None),
        },
        Err(e) if matches!(status_code(&e), Some(401 | 403 | 404)) => {
            eprintln!(
                "note: {}; this process's node is unknown (set NODE_NAME from the downward API)",
                api_error(&what, e)
            );
            Ok(None)
        }
        Err(e) => Err(api_error(&what, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_that_cannot_be_meant_are_refused_before_any_call() {
        for bad in ["", "  ", "a=b\nc=d", &"x".repeat(2000)] {
            let q = Query {
                selector: bad.to_string(),
                namespace: None,
                kubeconfig: None,
            };
            assert!(
                matches!(discover(&q), Err(K8sError::Selector(..))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_missing_kubeconfig_is_named() {
        let q = Query {
            selector: "a=b".into(),
            namespace: None,
            kubeconfig: Some("/nonexistent/kubeconfig".into()),
        };
        let e = discover(&q).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot read kubeconfig /nonexistent/kubeconfig"),
            "{e}"
        );
    }
}
