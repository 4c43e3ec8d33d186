//! Kubernetes API discovery: the ready pods a label selector picks (address,
//! control port, node, zone, host network), the ClusterIP Services in front
//! of them, and where this process runs. Blocking outward; a small tokio
//! current-thread runtime lives only inside `discover` because the
//! ecosystem's client (`kube`) is async. Every call to the API server is
//! bounded in time and everything it answers is validated (`select`).

mod discover;
mod select;

pub use discover::{discover, discover_within, DEFAULT_CALL_TIMEOUT};
pub use select::{pod_endpoint, services_for, zone_of_labels, MAX_PODS, MAX_SERVICES};

/// Where a pod or this process runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Placement {
    pub node: Option<String>,
    pub zone: Option<String>,
}

/// One ready pod matching the selector.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PodEndpoint {
    pub pod: String,
    pub address: std::net::IpAddr,
    /// The container port named `control`, else netserver's 12865.
    pub port: u16,
    pub placement: Placement,
    pub host_network: bool,
}

/// A ClusterIP Service whose selector picks the selected pods.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ServiceEndpoint {
    pub name: String,
    pub address: std::net::IpAddr,
    /// The service port named `control`, else its first port.
    pub port: u16,
    /// `internalTrafficPolicy: Local`: only endpoints on the client's node answer.
    pub node_local: bool,
}

/// What the API server said about the selected pods, their Services and us.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Discovery {
    pub namespace: String,
    /// Sorted by (node, pod).
    pub pods: Vec<PodEndpoint>,
    /// Sorted by name.
    pub services: Vec<ServiceEndpoint>,
    /// This process: both None outside a cluster.
    pub me: Placement,
}

/// What to discover.
#[derive(Debug, Clone)]
pub struct Query {
    /// A label selector, e.g. `app.kubernetes.io/name=netserver`.
    pub selector: String,
    /// None: the config's default namespace (the kubeconfig context's, or
    /// the in-cluster service account's).
    pub namespace: Option<String>,
    /// None: `$KUBECONFIG` or `~/.kube/config`, else the in-cluster service account.
    pub kubeconfig: Option<std::path::PathBuf>,
}

/// Why discovery failed; each says what to look at in one line.
#[derive(Debug, thiserror::Error)]
pub enum K8sError {
    #[error("bad label selector {0:?}: {1}")]
    Selector(String, String),
    #[error("no Kubernetes config (kubeconfig or in-cluster service account): {0}")]
    Config(String),
    #[error("cannot read kubeconfig {0}: {1}")]
    Kubeconfig(String, String),
    #[error("cannot start the Kubernetes client: {0}")]
    Client(String),
    #[error("Kubernetes API: cannot {0}: {1}")]
    Api(String, String),
    #[error(
        "Kubernetes API: cannot {0}: no answer within {1} s (is the API server up and reachable?)"
    )]
    Timeout(String, u64),
    #[error("Kubernetes API: {0}: {1}")]
    Invalid(String, String),
}
