//! Load generators: the seed's `remote_hosts` file (REMOTE_HOSTS[i]=name
//! lines and NUM_REMOTE_HOSTS=N, in any order, `#` comments), a list given
//! on the command line, a DNS name's addresses, or the ready pods a
//! Kubernetes label selector picks (`netperf_k8s`).

use std::collections::BTreeMap;

/// Why a hosts file could not be used.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum HostsError {
    #[error("cannot read {0}: {1}")]
    Read(String, String),
    #[error("{file}:{line}: {reason}")]
    Bad {
        file: String,
        line: usize,
        reason: String,
    },
    #[error("{0}: NUM_REMOTE_HOSTS={1} but REMOTE_HOSTS[{2}] is missing")]
    Missing(String, usize, usize),
    #[error("no load generators: give --hosts-file, --host, --hosts-dns or --k8s-selector")]
    None,
    #[error("{0}")]
    Usage(String),
    #[error("cannot resolve {0}: {1}")]
    Dns(String, String),
    #[error("Kubernetes discovery: {0}")]
    K8s(String),
    #[error("no ready pods match {selector:?} in namespace {namespace}")]
    NoPods { selector: String, namespace: String },
    #[error(
        "the pods' control ports differ ({0}); netagg has one --port for every load generator"
    )]
    PortsDiffer(String),
    #[error("the pods' control port is {pods} (their container port named control, else 12865) but --port says {given}")]
    PortConflict { pods: u16, given: u16 },
}

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

/// Largest number of load generators we take from a file.
const MAX_HOSTS: usize = 4096;

/// Parse the text of a remote_hosts file; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Vec<String>, HostsError> {
    let bad = |line: usize, reason: &str| HostsError::Bad {
        file: file.to_string(),
        line,
        reason: reason.to_string(),
    };
    let mut hosts = BTreeMap::new();
    let mut declared = None;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let line_no = index + 1;
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| bad(line_no, "expected NAME=VALUE"))?;
        let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
        if key.trim() == "NUM_REMOTE_HOSTS" {
            let n: usize = value.parse().map_err(|_| bad(line_no, "not a number"))?;
            if n > MAX_HOSTS {
                return Err(bad(line_no, "too many hosts"));
            }
            declared = Some(n);
        } else if let Some(index) = key
            .trim()
            .strip_prefix("REMOTE_HOSTS[")
            .and_then(|rest| rest.strip_suffix(']'))
        {
            let i: usize = index.parse().map_err(|_| bad(line_no, "bad index"))?;
            if i >= MAX_HOSTS || value.is_empty() {
                return Err(bad(line_no, "bad host entry"));
            }
            hosts.insert(i, value.to_string());
        }
        // Other shell variables are allowed and ignored, as the scripts do.
    }
    let count = declared.unwrap_or(hosts.len());
    let list = (0..count)
        .map(|i| {
            hosts
                .get(&i)
                .cloned()
                .ok_or_else(|| HostsError::Missing(file.to_string(), count, i))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if list.is_empty() {
        return Err(HostsError::None);
    }
    Ok(list)
}

/// Read and parse a remote_hosts file.
pub fn read(path: &str) -> Result<Vec<String>, HostsError> {
    // A hosts file is a few lines; a pipe (`<(...)`) or a device must not
    // be read without end.
    const MAX_BYTES: usize = 1 << 20;
    let bytes = netperf_base::input::read_text(std::path::Path::new(path), MAX_BYTES + 1)
        .map_err(|e| HostsError::Read(path.to_string(), e.to_string()))?;
    if bytes.len() > MAX_BYTES {
        return Err(HostsError::Read(
            path.to_string(),
            format!("larger than {MAX_BYTES} bytes"),
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| HostsError::Read(path.to_string(), "not UTF-8 text".to_string()))?;
    parse(path, &text)
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

    #[test]
    fn the_seed_format_in_any_order() {
        let text = "NUM_REMOTE_HOSTS=3\nREMOTE_HOSTS[2]=lg3\n# comment\nREMOTE_HOSTS[0]=lg1\nREMOTE_HOSTS[1]=10.0.0.2\n";
        assert_eq!(parse("f", text).unwrap(), ["lg1", "10.0.0.2", "lg3"]);
        // Without NUM_REMOTE_HOSTS the entries themselves count.
        assert_eq!(parse("f", "REMOTE_HOSTS[0]=a\n").unwrap(), ["a"]);
    }

    #[test]
    fn mistakes_are_named() {
        assert!(matches!(
            parse("f", "NUM_REMOTE_HOSTS=2\nREMOTE_HOSTS[0]=a\n"),
            Err(HostsError::Missing(_, 2, 1))
        ));
        assert!(matches!(
            parse("f", "garbage\n"),
            Err(HostsError::Bad { line: 1, .. })
        ));
        assert_eq!(parse("f", "\n"), Err(HostsError::None));
        assert!(parse("f", "REMOTE_HOSTS[99999]=a\n").is_err());
    }
}
