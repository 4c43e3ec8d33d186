//! What the matrix can reach: the netservers (pod network, host network,
//! Services) with the node and zone each runs on, and where this process
//! runs — from the Kubernetes API or from an inventory file written by
//! hand for hosts that are not in a cluster (VMs in zones, a testbed).

use serde::Deserialize;
use std::path::Path;

/// Largest inventory file read.
const MAX_INVENTORY_BYTES: usize = 1 << 20;
/// Most endpoints one inventory may list.
const MAX_ENDPOINTS: usize = 4096;

/// How an endpoint is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Network {
    /// A pod's own address on the pod network (CNI).
    Pod,
    /// A netserver on its node's host network.
    Host,
    /// A ClusterIP Service: kube-proxy (or eBPF) picks a pod anywhere.
    Service,
    /// A Service with internalTrafficPolicy Local: a pod on this node.
    ServiceLocal,
}

impl Network {
    pub fn describe(self) -> &'static str {
        match self {
            Network::Pod => "pod",
            Network::Host => "host-network netserver",
            Network::Service => "Service",
            Network::ServiceLocal => "node-local Service",
        }
    }
}

/// Where something runs; either may be unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    pub node: Option<String>,
    pub zone: Option<String>,
}

/// One netserver (or Service in front of netservers).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Endpoint {
    /// The pod's or Service's name.
    pub name: String,
    pub address: String,
    #[serde(default = "default_port")]
    pub port: u16,
    #[serde(default)]
    pub node: Option<String>,
    #[serde(default)]
    pub zone: Option<String>,
    pub network: Network,
}

fn default_port() -> u16 {
    12865
}

/// Everything the matrix chooses its pairs from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Inventory {
    /// Where this process (the client side of every pair) runs.
    #[serde(default)]
    pub me: Placement,
    #[serde(default, rename = "endpoint")]
    pub endpoints: Vec<Endpoint>,
}

/// Reads an inventory file (TOML: a `[me]` table and `[[endpoint]]`s).
pub fn read_inventory(path: &Path) -> Result<Inventory, String> {
    let bytes = netperf_base::input::read_text(path, MAX_INVENTORY_BYTES)
        .map_err(|e| format!("cannot read inventory {}: {e}", path.display()))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("inventory {} is not UTF-8 text", path.display()))?;
    parse_inventory(&text).map_err(|e| format!("inventory {}: {e}", path.display()))
}

/// Parses and checks inventory text.
pub fn parse_inventory(text: &str) -> Result<Inventory, String> {
    let inventory: Inventory = toml::from_str(text).map_err(|e| e.message().trim().to_string())?;
    inventory.check()?;
    Ok(inventory)
}

impl Inventory {
    /// Every name, address and place is short printable text, addresses
    /// are host names or IP addresses, and there are not absurdly many.
    pub fn check(&self) -> Result<(), String> {
        if self.endpoints.len() > MAX_ENDPOINTS {
            return Err(format!("more than {MAX_ENDPOINTS} endpoints"));
        }
        let text_ok = |what: &str, value: &str| -> Result<(), String> {
            let bad = value.is_empty()
                || value.len() > 253
                || value.chars().any(|c| c.is_control() || c.is_whitespace());
            match bad {
                true => Err(format!(
                    "{what} \"{value}\" is empty, too long or has spaces"
                )),
                false => Ok(()),
            }
        };
        for place in [&self.me.node, &self.me.zone].into_iter().flatten() {
            text_ok("me", place)?;
        }
        for e in &self.endpoints {
            text_ok("endpoint name", &e.name)?;
            text_ok("endpoint address", &e.address)?;
            if e.port == 0 {
                return Err(format!("endpoint {}: port 0", e.name));
            }
            for place in [&e.node, &e.zone].into_iter().flatten() {
                text_ok("endpoint node/zone", place)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inventory_reads_with_defaults() {
        let inv = parse_inventory(
            r#"
[me]
node = "a"
zone = "z1"
[[endpoint]]
name = "netserver-1"
address = "198.18.151.2"
node = "a"
zone = "z1"
network = "pod"
[[endpoint]]
name = "vip"
address = "198.18.151.100"
port = 12866
network = "service-local"
"#,
        )
        .unwrap();
        assert_eq!(inv.me.node.as_deref(), Some("a"));
        assert_eq!(inv.endpoints[0].port, 12865);
        assert_eq!(inv.endpoints[1].network, Network::ServiceLocal);
    }

    #[test]
    fn bad_inventories_are_refused() {
        for (text, expect) in [
            ("colour = 1", "unknown field"),
            (
                "[[endpoint]]\nname = \"x\"\naddress = \"h\"\nnetwork = \"wifi\"",
                "unknown variant",
            ),
            (
                "[[endpoint]]\nname = \"x\"\naddress = \"a b\"\nnetwork = \"pod\"",
                "has spaces",
            ),
            (
                "[[endpoint]]\nname = \"x\"\naddress = \"h\"\nport = 0\nnetwork = \"pod\"",
                "port 0",
            ),
            (
                "[[endpoint]]\nname = \"x\"\naddress = \"h\"\nport = 70000\nnetwork = \"pod\"",
                "70000",
            ),
        ] {
            let e = parse_inventory(text).unwrap_err();
            assert!(e.contains(expect), "{text}: {e}");
        }
    }
}
