//! The operator's rule for which interfaces a client may change the
//! offloads of (`--allow-offload-changes[=IF[,IF...]]`): none without the
//! option; with it, the interface toward that client (its route), and the
//! interfaces the operator lists — never any other, so that a client that
//! can reach the control port cannot switch, say, the management interface.

use netperf_wire::offload::valid_interface_name;
use std::net::IpAddr;

/// Which interfaces offload changes may touch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum OffloadScope {
    /// No changes (reads are always answered).
    #[default]
    Off,
    /// The interface toward the requesting client, and these.
    TowardClient { listed: Vec<String> },
}

impl OffloadScope {
    /// Add one `--allow-offload-changes` option: `value` is what follows
    /// its '=' (None for the bare option). Names are checked as the kernel
    /// would; they need not exist yet (a veth made after netserver starts).
    pub fn add(&mut self, value: Option<&str>) -> Result<(), String> {
        let mut listed = match std::mem::take(self) {
            OffloadScope::Off => Vec::new(),
            OffloadScope::TowardClient { listed } => listed,
        };
        if let Some(value) = value {
            if value.is_empty() {
                return Err(
                    "--allow-offload-changes= needs interface names (IF[,IF...]), or no '='".into(),
                );
            }
            for name in value.split(',') {
                if !valid_interface_name(name) {
                    return Err(format!(
                        "--allow-offload-changes: '{}' is not an interface name \
                         (1 to 15 bytes, no '/', ':' or blanks, not '.' or '..')",
                        name.escape_debug()
                    ));
                }
                if !listed.iter().any(|l| l == name) {
                    listed.push(name.to_string());
                }
            }
        }
        *self = OffloadScope::TowardClient { listed };
        Ok(())
    }

    pub fn enabled(&self) -> bool {
        *self != OffloadScope::Off
    }

    /// Whether the client at `client`, whose route from here leaves by
    /// `toward` (None: no route found), may change `interface`; else the
    /// reason, naming the rule that refuses it.
    pub fn permits(
        &self,
        interface: &str,
        client: IpAddr,
        toward: Option<&str>,
    ) -> Result<(), String> {
        let listed = match self {
            OffloadScope::Off => {
                return Err(
                    "offload changes are off: its operator must start netserver \
                     with --allow-offload-changes"
                        .into(),
                )
            }
            OffloadScope::TowardClient { listed } => listed,
        };
        if toward == Some(interface) || listed.iter().any(|l| l == interface) {
            return Ok(());
        }
        Err(format!(
            "not the interface toward the client {} ({}); netserver allows changes there only, \
             or on the interfaces its operator lists with --allow-offload-changes=IF[,IF]",
            client.to_canonical(),
            toward.unwrap_or("none found")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(values: &[Option<&str>]) -> Result<OffloadScope, String> {
        let mut scope = OffloadScope::default();
        for v in values {
            scope.add(*v)?;
        }
        Ok(scope)
    }

    #[test]
    fn the_option_forms_parse_and_bad_names_are_refused() {
        assert!(!OffloadScope::default().enabled());
        assert_eq!(
            parsed(&[None]),
            Ok(OffloadScope::TowardClient { listed: vec![] })
        );
        // Repeated options add up; the bare one keeps the list.
        assert_eq!(
            parsed(&[Some("veth1,eth2"), None, Some("eth2,bond0.100")]),
            Ok(OffloadScope::TowardClient {
                listed: vec!["veth1".into(), "eth2".into(), "bond0.100".into()]
            })
        );
        for bad in [
            "",
            ",",
            "eth0,",
            "eth0,,eth1",
            "a/b",
            "..",
            ".",
            "eth0:1",
            "two words",
            "abcdefghijklmnop",
            "x\n",
        ] {
            let e = parsed(&[Some(bad)]).expect_err(bad);
            assert!(
                e.starts_with("--allow-offload-changes") && !e.contains('\n'),
                "{bad:?}: {e}"
            );
        }
    }

    #[test]
    fn changes_reach_the_clients_route_and_the_listed_interfaces_only() {
        let client: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        let bare = parsed(&[None]).unwrap();
        assert_eq!(bare.permits("lo", client, Some("lo")), Ok(()));
        let e = bare.permits("eth1", client, Some("lo")).unwrap_err();
        assert_eq!(
            e,
            "not the interface toward the client 127.0.0.1 (lo); netserver allows changes there \
             only, or on the interfaces its operator lists with --allow-offload-changes=IF[,IF]"
        );
        assert!(bare
            .permits("eth1", client, None)
            .unwrap_err()
            .contains("(none found)"));
        let listed = parsed(&[Some("eth1")]).unwrap();
        assert_eq!(listed.permits("eth1", client, Some("lo")), Ok(()));
        assert_eq!(listed.permits("lo", client, Some("lo")), Ok(()));
        assert!(listed.permits("eth2", client, Some("lo")).is_err());
        // Names are the kernel's, compared exactly.
        assert!(listed.permits("ETH1", client, Some("lo")).is_err());
        let off = OffloadScope::Off
            .permits("lo", client, Some("lo"))
            .unwrap_err();
        assert!(off.ends_with("must start netserver with --allow-offload-changes"));
    }
}
