//! Load generators: the seed's `remote_hosts` file or a list given on the
//! command line (`crate::args`, shared with the experiment), a DNS name's
//! addresses, or the ready pods a Kubernetes label selector picks
//! (`netperf_k8s`).

pub use crate::args::hosts_file::{parse, read, HostsError, MAX_HOSTS};

/// The load generators a Kubernetes discovery found — each ready pod's
/// address — and their control port, which every pod must share since netagg
/// has one port for all hosts; `given` is a --port the user typed, which must
/// agree with it.
pub fn from_k8s(
    found: &netperf_k8s::Discovery,
    selector: &str,
    given: Option<u16>,
) -> Result<(Vec<String>, u16), HostsError> {
    let Some(first) = found.pods.first() else {
        return Err(HostsError::NoPods {
            selector: selector.to_string(),
            namespace: found.namespace.clone(),
        });
    };
    let ports: std::collections::BTreeSet<u16> = found.pods.iter().map(|p| p.port).collect();
    if ports.len() > 1 {
        let list: Vec<String> = ports.iter().map(u16::to_string).collect();
        return Err(HostsError::PortsDiffer(list.join(", ")));
    }
    if let Some(given) = given.filter(|&g| g != first.port) {
        return Err(HostsError::PortConflict {
            pods: first.port,
            given,
        });
    }
    let hosts = found.pods.iter().map(|p| p.address.to_string()).collect();
    Ok((hosts, first.port))
}

/// One line per discovered pod (and Service, and where we run) for stderr.
pub fn k8s_lines(found: &netperf_k8s::Discovery) -> Vec<String> {
    let or_unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let mut lines: Vec<String> = found
        .pods
        .iter()
        .map(|p| {
            format!(
                "load generator {} (pod {}, node {}, zone {}{})",
                p.address,
                p.pod,
                or_unknown(&p.placement.node),
                or_unknown(&p.placement.zone),
                if p.host_network { ", host network" } else { "" }
            )
        })
        .collect();
    lines.extend(found.services.iter().map(|s| {
        format!(
            "service {} at {} port {}{} fronts them (not used by this run)",
            s.name,
            s.address,
            s.port,
            if s.node_local { ", node-local" } else { "" }
        )
    }));
    if found.me.node.is_some() {
        lines.push(format!(
            "this run: node {}, zone {}",
            or_unknown(&found.me.node),
            or_unknown(&found.me.zone)
        ));
    }
    lines
}

/// Every address of `name` (all its A and AAAA records, e.g. a Kubernetes
/// headless Service's pods), once each in the resolver's order, as the
/// load generators' host names. `port` is only for the lookup.
pub fn from_dns(name: &str, port: u16) -> Result<Vec<String>, HostsError> {
    use std::net::ToSocketAddrs;
    let fail = |why: String| HostsError::Dns(name.to_string(), why);
    let addrs = (name, port)
        .to_socket_addrs()
        .map_err(|e| fail(e.to_string()))?;
    let mut hosts: Vec<String> = Vec::new();
    for addr in addrs {
        let ip = addr.ip().to_string();
        if !hosts.contains(&ip) {
            hosts.push(ip);
        }
        if hosts.len() > MAX_HOSTS {
            return Err(fail(format!("more than {MAX_HOSTS} addresses")));
        }
    }
    if hosts.is_empty() {
        return Err(fail("no addresses".into()));
    }
    Ok(hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_gives_each_of_its_addresses_once() {
        let hosts = from_dns("127.0.0.1", 12865).unwrap();
        assert_eq!(hosts, ["127.0.0.1"]);
        let e = from_dns("no-such-host.invalid", 12865).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot resolve no-such-host.invalid"),
            "{e}"
        );
    }

    fn pod(name: &str, ip: &str, port: u16) -> netperf_k8s::PodEndpoint {
        netperf_k8s::PodEndpoint {
            pod: name.into(),
            address: ip.parse().unwrap(),
            port,
            placement: netperf_k8s::Placement {
                node: Some("n1".into()),
                zone: None,
            },
            host_network: false,
        }
    }

    #[test]
    fn pods_give_their_addresses_and_their_one_port() {
        let mut found = netperf_k8s::Discovery {
            namespace: "ns".into(),
            pods: vec![
                pod("a", "198.18.0.1", 13000),
                pod("b", "2001:db8::1", 13000),
            ],
            ..Default::default()
        };
        let (hosts, port) = from_k8s(&found, "app=x", None).unwrap();
        assert_eq!(hosts, ["198.18.0.1", "2001:db8::1"]);
        assert_eq!(port, 13000);
        assert_eq!(from_k8s(&found, "app=x", Some(13000)).unwrap().1, 13000);
        assert_eq!(
            from_k8s(&found, "app=x", Some(12865)),
            Err(HostsError::PortConflict {
                pods: 13000,
                given: 12865
            })
        );
        assert_eq!(
            k8s_lines(&found)[0],
            "load generator 198.18.0.1 (pod a, node n1, zone unknown)"
        );
        found.pods.push(pod("c", "198.18.0.3", 12865));
        assert_eq!(
            from_k8s(&found, "app=x", None),
            Err(HostsError::PortsDiffer("12865, 13000".into()))
        );
        found.pods.clear();
        let e = from_k8s(&found, "app=x", None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no ready pods match \"app=x\" in namespace ns"
        );
    }
}
