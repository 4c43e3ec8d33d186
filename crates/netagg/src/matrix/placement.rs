//! The matrix's scenarios as one table — where the far end runs relative
//! to this process (same node, another node in the zone, another zone, or
//! wherever a Service sends it) and how it is reached (pod IP, host
//! network, Service) — and the choice of one endpoint for each, or the
//! reason the place cannot offer it.

use super::inventory::{Endpoint, Inventory, Network, Placement};
use netperf_results::model::Target;

/// Where the far end runs relative to this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Where {
    SameNode,
    OtherNodeSameZone,
    OtherZone,
    /// Not chosen by us: a Service's load balancing decides.
    Anywhere,
}

/// Every scenario, nearest first: (where, network, label).
const SCENARIOS: &[(Where, Network, &str)] = &[
    (Where::SameNode, Network::Pod, "same node, pod IP"),
    (Where::SameNode, Network::Host, "same node, host network"),
    (
        Where::SameNode,
        Network::ServiceLocal,
        "same node, Service (node-local)",
    ),
    (
        Where::OtherNodeSameZone,
        Network::Pod,
        "other node, same zone, pod IP",
    ),
    (
        Where::OtherNodeSameZone,
        Network::Host,
        "other node, same zone, host network",
    ),
    (Where::OtherZone, Network::Pod, "other zone, pod IP"),
    (Where::OtherZone, Network::Host, "other zone, host network"),
    (Where::Anywhere, Network::Service, "Service (ClusterIP)"),
];

/// The scenario labels, for help and docs.
pub fn scenario_labels() -> Vec<&'static str> {
    SCENARIOS.iter().map(|&(_, _, label)| label).collect()
}

/// One target per scenario: the endpoint chosen, or why none can be.
pub fn choose(inventory: &Inventory) -> Vec<Target> {
    let mut endpoints: Vec<&Endpoint> = inventory.endpoints.iter().collect();
    endpoints.sort_by(|a, b| (&a.node, &a.name).cmp(&(&b.node, &b.name)));
    SCENARIOS
        .iter()
        .map(
            |&(place, network, label)| match pick(&inventory.me, &endpoints, place, network) {
                Ok(e) => Target {
                    about: describe(e, place),
                    ..Target::reachable(label, e.address.clone(), e.port)
                },
                Err(why) => Target {
                    label: label.to_string(),
                    host: String::new(),
                    port: 0,
                    about: String::new(),
                    unavailable: Some(why),
                },
            },
        )
        .collect()
}

fn describe(e: &Endpoint, place: Where) -> String {
    let mut text = format!("{} {}", e.network.describe(), e.name);
    if let Some(node) = &e.node {
        text += &format!(" on node {node}");
    }
    if let Some(zone) = &e.zone {
        text += &format!(", zone {zone}");
    }
    if place == Where::Anywhere {
        text += "; the Service picks the pod";
    }
    text
}

fn pick<'a>(
    me: &Placement,
    endpoints: &[&'a Endpoint],
    place: Where,
    network: Network,
) -> Result<&'a Endpoint, String> {
    let of_network: Vec<&Endpoint> = endpoints
        .iter()
        .copied()
        .filter(|e| e.network == network)
        .collect();
    let what = match network {
        Network::Pod => "netserver pod",
        Network::Host => "host-network netserver",
        Network::Service => "ClusterIP Service selecting the netservers",
        Network::ServiceLocal => {
            "Service with internalTrafficPolicy: Local selecting the netservers"
        }
    };
    let hint = match network {
        Network::Host => "; deploy/kubernetes/hostnetwork runs one on every node",
        _ => "",
    };
    let first = || {
        of_network
            .first()
            .copied()
            .ok_or_else(|| format!("no {what}"))
    };
    if place == Where::Anywhere || network == Network::ServiceLocal {
        return first();
    }
    let Some(my_node) = &me.node else {
        return Err(
            "this process's node is unknown (in a pod, set NODE_NAME from the downward API)".into(),
        );
    };
    let nodes_with = |filter: &dyn Fn(&Endpoint) -> bool| -> Vec<&'a Endpoint> {
        endpoints.iter().copied().filter(|e| filter(e)).collect()
    };
    let other_nodes = nodes_with(&|e| e.node.as_ref().is_some_and(|n| n != my_node));
    match place {
        Where::SameNode => of_network
            .iter()
            .copied()
            .find(|e| e.node.as_ref() == Some(my_node))
            .ok_or_else(|| format!("no {what} on this node ({my_node}){hint}")),
        Where::OtherNodeSameZone | Where::OtherZone if other_nodes.is_empty() => {
            Err("the cluster has no second node with a netserver".into())
        }
        Where::OtherNodeSameZone => {
            let candidates: Vec<&Endpoint> = of_network
                .iter()
                .copied()
                .filter(|e| e.node.as_ref().is_some_and(|n| n != my_node))
                .collect();
            match &me.zone {
                None => Err(zones_unknown()),
                Some(zone) => candidates
                    .into_iter()
                    .find(|e| e.zone.as_ref() == Some(zone))
                    .ok_or_else(|| format!("no {what} on another node in zone {zone}{hint}")),
            }
        }
        Where::OtherZone => {
            let Some(zone) = &me.zone else {
                return Err(zones_unknown());
            };
            if !other_nodes
                .iter()
                .any(|e| e.zone.as_ref().is_some_and(|z| z != zone))
            {
                return Err(format!(
                    "the cluster has no second zone with a netserver (all in {zone})"
                ));
            }
            of_network
                .iter()
                .copied()
                .find(|e| e.zone.as_ref().is_some_and(|z| z != zone))
                .ok_or_else(|| format!("no {what} outside zone {zone}{hint}"))
        }
        Where::Anywhere => first(),
    }
}

fn zones_unknown() -> String {
    "zones are unknown: this node or the others carry no topology.kubernetes.io/zone label (or nodes could not be read)".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(name: &str, node: &str, zone: &str, network: Network) -> Endpoint {
        Endpoint {
            name: name.into(),
            address: format!("198.18.151.{}", name.len()),
            port: 12865,
            node: Some(node.into()),
            zone: Some(zone.into()).filter(|z: &String| !z.is_empty()),
            network,
        }
    }

    fn me(node: &str, zone: &str) -> Placement {
        Placement {
            node: Some(node.into()),
            zone: Some(zone.into()),
        }
    }

    fn reasons(targets: &[Target]) -> Vec<(&str, Option<&str>)> {
        targets
            .iter()
            .map(|t| (t.label.as_str(), t.unavailable.as_deref()))
            .collect()
    }

    #[test]
    fn a_three_node_two_zone_cluster_fills_every_row() {
        let inv = Inventory {
            me: me("a", "z1"),
            endpoints: vec![
                endpoint("ns-c", "c", "z2", Network::Pod),
                endpoint("ns-a", "a", "z1", Network::Pod),
                endpoint("ns-b", "b", "z1", Network::Pod),
                endpoint("host-a", "a", "z1", Network::Host),
                endpoint("host-b", "b", "z1", Network::Host),
                endpoint("host-c", "c", "z2", Network::Host),
                endpoint("vip", "", "", Network::Service),
                endpoint("vip-local", "", "", Network::ServiceLocal),
            ],
        };
        let targets = choose(&inv);
        assert!(
            targets.iter().all(|t| t.unavailable.is_none()),
            "{targets:?}"
        );
        let about: Vec<&str> = targets.iter().map(|t| t.about.as_str()).collect();
        assert!(about[0].starts_with("pod ns-a on node a"), "{about:?}");
        assert!(
            about[3].starts_with("pod ns-b on node b, zone z1"),
            "{about:?}"
        );
        assert!(
            about[5].starts_with("pod ns-c on node c, zone z2"),
            "{about:?}"
        );
        assert!(about[7].ends_with("the Service picks the pod"), "{about:?}");
    }

    #[test]
    fn a_one_node_cluster_says_why_rows_are_missing() {
        let inv = Inventory {
            me: me("a", "z1"),
            endpoints: vec![endpoint("ns-a", "a", "z1", Network::Pod)],
        };
        let targets = choose(&inv);
        let r = reasons(&targets);
        assert_eq!(r[0], ("same node, pod IP", None));
        assert!(r[1]
            .1
            .unwrap()
            .contains("no host-network netserver on this node"));
        assert!(r[3].1.unwrap().contains("no second node"), "{r:?}");
        assert!(r[5].1.unwrap().contains("no second node"), "{r:?}");
        assert!(r[7].1.unwrap().contains("no ClusterIP Service"), "{r:?}");
    }

    #[test]
    fn one_zone_and_unknown_places_are_named() {
        let inv = Inventory {
            me: me("a", "z1"),
            endpoints: vec![
                endpoint("ns-a", "a", "z1", Network::Pod),
                endpoint("ns-b", "b", "z1", Network::Pod),
            ],
        };
        let r = choose(&inv);
        assert!(r[3].unavailable.is_none());
        assert!(r[5]
            .unavailable
            .as_deref()
            .unwrap()
            .contains("no second zone"));
        let nowhere = Inventory {
            me: Placement::default(),
            endpoints: inv.endpoints.clone(),
        };
        let r = choose(&nowhere);
        assert!(r[0].unavailable.as_deref().unwrap().contains("NODE_NAME"));
        let no_zones = Inventory {
            me: Placement {
                node: Some("a".into()),
                zone: None,
            },
            endpoints: inv.endpoints,
        };
        let r = choose(&no_zones);
        assert!(r[3]
            .unavailable
            .as_deref()
            .unwrap()
            .contains("zones are unknown"));
    }
}
