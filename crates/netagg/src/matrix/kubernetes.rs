//! The matrix's inventory from the Kubernetes API: the pods a label
//! selector finds (pod network or host network, each with its node and
//! zone), the ClusterIP Services in front of them, and this pod's own node
//! and zone — read by `netperf_k8s`.

use super::inventory::{Endpoint, Inventory, Network, Placement};
use netperf_k8s::{discover, Discovery, Query};
use std::path::Path;

/// Discovers the netservers and turns them into the matrix's inventory.
pub fn inventory(
    selector: &str,
    namespace: Option<&str>,
    kubeconfig: Option<&Path>,
) -> Result<Inventory, String> {
    let query = Query {
        selector: selector.to_string(),
        namespace: namespace.map(String::from),
        kubeconfig: kubeconfig.map(Path::to_path_buf),
    };
    let found = discover(&query).map_err(|e| e.to_string())?;
    let inventory = of_discovery(&found);
    inventory.check()?;
    Ok(inventory)
}

/// The discovery as placement facts: pods keep their node and zone;
/// Services have none (the Service decides where a connection lands).
pub fn of_discovery(found: &Discovery) -> Inventory {
    let pods = found.pods.iter().map(|p| Endpoint {
        name: p.pod.clone(),
        address: p.address.to_string(),
        port: p.port,
        node: p.placement.node.clone(),
        zone: p.placement.zone.clone(),
        network: match p.host_network {
            true => Network::Host,
            false => Network::Pod,
        },
    });
    let services = found.services.iter().map(|s| Endpoint {
        name: s.name.clone(),
        address: s.address.to_string(),
        port: s.port,
        node: None,
        zone: None,
        network: match s.node_local {
            true => Network::ServiceLocal,
            false => Network::Service,
        },
    });
    Inventory {
        me: Placement {
            node: found.me.node.clone(),
            zone: found.me.zone.clone(),
        },
        endpoints: pods.chain(services).collect(),
    }
}
