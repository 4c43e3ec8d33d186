//! The pure half of discovery: which pods count (Running, Ready, with an
//! address), their control port and node, which Services front them, and a
//! node's zone — each answer from the API server checked, since a broken or
//! hostile server must give a clear error, not a panic or a nonsense host.

use super::{K8sError, Placement, PodEndpoint, ServiceEndpoint};
use k8s_openapi::api::core::v1::{Pod, Service};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// Most pods (and nodes) one discovery takes, as hosts.rs caps a hosts file.
pub const MAX_PODS: usize = 4096;
/// Most Services one namespace may list.
pub const MAX_SERVICES: usize = 4096;
/// The port name netserver's manifests give the control port.
const CONTROL_PORT_NAME: &str = "control";
/// netserver's control port when no container port is named `control`.
const DEFAULT_CONTROL_PORT: u16 = 12865;
/// A node's zone: the well-known label, then its deprecated predecessor.
const ZONE_LABELS: [&str; 2] = [
    "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/zone",
];

fn invalid(what: impl Into<String>, reason: impl Into<String>) -> K8sError {
    K8sError::Invalid(what.into(), reason.into())
}

/// A pod, node, Service or namespace name as the API allows them (a DNS
/// subdomain): anything else is refused before it reaches a terminal or a
/// file name.
pub(super) fn checked_name(what: &str, name: &str) -> Result<String, K8sError> {
    let fine = !name.is_empty()
        && name.len() <= 253
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
    if fine {
        Ok(name.to_string())
    } else {
        Err(invalid(
            format!("{what} {:?}", truncated(name)),
            "not a valid Kubernetes name",
        ))
    }
}

/// At most 64 characters of something hostile, for an error message.
fn truncated(s: &str) -> String {
    s.chars().take(64).collect()
}

fn port_of(value: i32, what: &str) -> Result<u16, K8sError> {
    u16::try_from(value)
        .ok()
        .filter(|&p| p != 0)
        .ok_or_else(|| invalid(what.to_string(), format!("port {value} is out of range")))
}

fn address_of(text: &str, what: &str) -> Result<IpAddr, K8sError> {
    text.parse().map_err(|_| {
        invalid(
            what.to_string(),
            format!("{:?} is not an IP address", truncated(text)),
        )
    })
}

fn is_ready(pod: &Pod) -> bool {
    let Some(status) = &pod.status else {
        return false;
    };
    status.phase.as_deref() == Some("Running")
        && status.conditions.as_ref().is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True")
        })
}

/// The endpoint of a pod that is Running and Ready with an address; None for
/// one that is not (pending, not ready, terminating, no IP yet). Its zone is
/// left for the caller, who reads nodes.
pub fn pod_endpoint(pod: &Pod) -> Result<Option<PodEndpoint>, K8sError> {
    let name = checked_name("pod", pod.metadata.name.as_deref().unwrap_or(""))?;
    let what = format!("pod {name}");
    // A terminating pod may still say Ready, but its netserver is going away.
    if pod.metadata.deletion_timestamp.is_some() || !is_ready(pod) {
        return Ok(None);
    }
    let Some(ip) = pod
        .status
        .as_ref()
        .and_then(|s| s.pod_ip.as_deref())
        .filter(|ip| !ip.is_empty())
    else {
        return Ok(None);
    };
    let address = address_of(ip, &what)?;
    let spec = pod
        .spec
        .as_ref()
        .ok_or_else(|| invalid(what.clone(), "has no spec"))?;
    let control = spec
        .containers
        .iter()
        .flat_map(|c| c.ports.iter().flatten())
        .find(|p| p.name.as_deref() == Some(CONTROL_PORT_NAME));
    let port = match control {
        Some(p) => port_of(p.container_port, &what)?,
        None => DEFAULT_CONTROL_PORT,
    };
    let node = match spec.node_name.as_deref() {
        Some(node) => Some(checked_name("node", node)?),
        None => None,
    };
    Ok(Some(PodEndpoint {
        pod: name,
        address,
        port,
        placement: Placement { node, zone: None },
        host_network: spec.host_network.unwrap_or(false),
    }))
}

/// The Services among `services` that have a cluster IP (not headless, not
/// ExternalName) and whose selector picks at least one of the pods with
/// `pod_labels`, sorted by name. Services without a selector (endpoints
/// managed by hand) are left out: nothing ties them to the pods.
pub fn services_for(
    services: &[Service],
    pod_labels: &[&BTreeMap<String, String>],
) -> Result<Vec<ServiceEndpoint>, K8sError> {
    let mut found = Vec::new();
    for service in services {
        let name = checked_name("service", service.metadata.name.as_deref().unwrap_or(""))?;
        let Some(spec) = &service.spec else { continue };
        let cluster_ip = spec.cluster_ip.as_deref().unwrap_or("");
        if spec.type_.as_deref() == Some("ExternalName")
            || cluster_ip.is_empty()
            || cluster_ip == "None"
        {
            continue;
        }
        let Some(selector) = spec.selector.as_ref().filter(|s| !s.is_empty()) else {
            continue;
        };
        let picks = |labels: &&BTreeMap<String, String>| {
            selector.iter().all(|(k, v)| labels.get(k) == Some(v))
        };
        if !pod_labels.iter().any(picks) {
            continue;
        }
        let what = format!("service {name}");
        let address = address_of(cluster_ip, &what)?;
        let ports = spec.ports.as_deref().unwrap_or(&[]);
        let Some(port) = ports
            .iter()
            .find(|p| p.name.as_deref() == Some(CONTROL_PORT_NAME))
            .or(ports.first())
        else {
            continue;
        };
        found.push(ServiceEndpoint {
            port: port_of(port.port, &what)?,
            name,
            address,
            node_local: spec.internal_traffic_policy.as_deref() == Some("Local"),
        });
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(found)
}

/// A node's zone from its labels; None when it has none.
pub fn zone_of_labels(
    node: &str,
    labels: Option<&BTreeMap<String, String>>,
) -> Result<Option<String>, K8sError> {
    let Some(zone) = labels.and_then(|l| ZONE_LABELS.iter().find_map(|key| l.get(*key))) else {
        return Ok(None);
    };
    // A label value: at most 63 of these characters.
    let fine = zone.len() <= 63
        && zone
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if !fine {
        return Err(invalid(
            format!("node {node}"),
            format!("zone {:?} is not a valid label value", truncated(zone)),
        ));
    }
    Ok((!zone.is_empty()).then(|| zone.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A pod as the API returns it (the fields discovery reads).
    fn pod(name: &str, phase: &str, ready: &str, ip: Option<&str>) -> serde_json::Value {
        json!({
            "metadata": {"name": name, "namespace": "ns",
                         "labels": {"app.kubernetes.io/name": "netserver"}},
            "spec": {"nodeName": "node-a", "containers": [{"name": "netserver", "image": "x",
                "ports": [{"name": "data-tcp-0", "containerPort": 42424, "protocol": "TCP"},
                          {"name": "control", "containerPort": 12866, "protocol": "TCP"}]}]},
            "status": {"phase": phase, "podIP": ip,
                       "conditions": [{"type": "Ready", "status": ready}]}
        })
    }

    fn endpoint(v: serde_json::Value) -> Result<Option<PodEndpoint>, K8sError> {
        pod_endpoint(&serde_json::from_value(v).unwrap())
    }

    #[test]
    fn a_ready_pod_gives_its_address_named_control_port_and_node() {
        let ep = endpoint(pod("ns-1", "Running", "True", Some("198.18.0.7")))
            .unwrap()
            .unwrap();
        assert_eq!(ep.pod, "ns-1");
        assert_eq!(ep.address.to_string(), "198.18.0.7");
        assert_eq!(ep.port, 12866);
        assert_eq!(ep.placement.node.as_deref(), Some("node-a"));
        assert!(!ep.host_network);
        let mut host = pod("ns-2", "Running", "True", Some("198.18.0.8"));
        host["spec"]["hostNetwork"] = json!(true);
        host["spec"]["containers"][0]["ports"] = json!([]);
        let ep = endpoint(host).unwrap().unwrap();
        assert!(ep.host_network);
        assert_eq!(ep.port, 12865, "no port named control: netserver's default");
    }

    #[test]
    fn pods_not_ready_pending_terminating_or_without_ip_are_left_out() {
        assert_eq!(
            endpoint(pod("p", "Running", "False", Some("198.18.0.1"))).unwrap(),
            None
        );
        assert_eq!(endpoint(pod("p", "Pending", "False", None)).unwrap(), None);
        assert_eq!(endpoint(pod("p", "Running", "True", None)).unwrap(), None);
        let mut going = pod("p", "Running", "True", Some("198.18.0.1"));
        going["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        assert_eq!(endpoint(going).unwrap(), None);
    }

    #[test]
    fn hostile_pods_are_clear_errors() {
        let e = endpoint(pod("p", "Running", "True", Some("1.2.3.999"))).unwrap_err();
        assert!(e.to_string().contains("not an IP address"), "{e}");
        let mut port = pod("p", "Running", "True", Some("198.18.0.1"));
        port["spec"]["containers"][0]["ports"][1]["containerPort"] = json!(70000);
        let e = endpoint(port).unwrap_err();
        assert!(e.to_string().contains("port 70000 is out of range"), "{e}");
        let e = endpoint(pod("p\u{1b}[2J", "Running", "True", Some("198.18.0.1"))).unwrap_err();
        assert!(e.to_string().contains("not a valid Kubernetes name"), "{e}");
        let mut node = pod("p", "Running", "True", Some("198.18.0.1"));
        node["spec"]["nodeName"] = json!("a/../b");
        assert!(endpoint(node).is_err());
    }

    fn service(name: &str, ip: &str, selector: serde_json::Value) -> Service {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {"type": "ClusterIP", "clusterIP": ip, "selector": selector,
                     "ports": [{"name": "data-tcp-0", "port": 42424, "protocol": "TCP"},
                               {"name": "control", "port": 12865, "protocol": "TCP"}]}
        }))
        .unwrap()
    }

    #[test]
    fn services_whose_selector_picks_a_pod_are_found_headless_ones_not() {
        let labels: BTreeMap<String, String> =
            [("app.kubernetes.io/name", "netserver"), ("tier", "a")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into();
        let mut local = service("z-local", "198.18.1.2", json!({"tier": "a"}));
        local.spec.as_mut().unwrap().internal_traffic_policy = Some("Local".into());
        let services = [
            service(
                "vip",
                "198.18.1.1",
                json!({"app.kubernetes.io/name": "netserver"}),
            ),
            local,
            service(
                "headless",
                "None",
                json!({"app.kubernetes.io/name": "netserver"}),
            ),
            service(
                "other",
                "198.18.1.3",
                json!({"app.kubernetes.io/name": "web"}),
            ),
            service("wider", "198.18.1.4", json!({"tier": "a", "extra": "x"})),
        ];
        let found = services_for(&services, &[&labels]).unwrap();
        let names: Vec<_> = found.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["vip", "z-local"]);
        assert_eq!(found[0].port, 12865);
        assert_eq!(found[0].address.to_string(), "198.18.1.1");
        assert!(!found[0].node_local);
        assert!(found[1].node_local);
        // Without a port named control, the first.
        let mut first = service("first", "198.18.1.5", json!({"tier": "a"}));
        first.spec.as_mut().unwrap().ports.as_mut().unwrap().pop();
        assert_eq!(services_for(&[first], &[&labels]).unwrap()[0].port, 42424);
        let bad = service("bad", "not-an-ip", json!({"tier": "a"}));
        assert!(services_for(&[bad], &[&labels]).is_err());
    }

    #[test]
    fn the_zone_label_then_the_deprecated_one() {
        let labels = |k: &str, v: &str| BTreeMap::from([(k.to_string(), v.to_string())]);
        let new = labels("topology.kubernetes.io/zone", "eu-1a");
        let old = labels("failure-domain.beta.kubernetes.io/zone", "eu-1b");
        assert_eq!(
            zone_of_labels("n", Some(&new)).unwrap().as_deref(),
            Some("eu-1a")
        );
        assert_eq!(
            zone_of_labels("n", Some(&old)).unwrap().as_deref(),
            Some("eu-1b")
        );
        assert_eq!(zone_of_labels("n", None).unwrap(), None);
        let bad = labels("topology.kubernetes.io/zone", "a\nb");
        assert!(zone_of_labels("n", Some(&bad)).is_err());
    }
}
