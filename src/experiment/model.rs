//! The offload state of an interface as an experiment reads it back before
//! each run; the rest of what an experiment records is the stored model in
//! `resultsdb::model`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The stateless offloads of one interface as read back from the kernel
/// (ethtool netlink): feature ("tso", "gso", "gro", "lro") -> on. A feature
/// the interface does not have is absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffloadSnapshot {
    pub interface: String,
    pub features: BTreeMap<String, bool>,
    /// The interface's MTU, when known.
    #[serde(default)]
    pub mtu: Option<u32>,
}

impl OffloadSnapshot {
    /// The features as ethtool says them, "tso on" ..., `separator` between.
    pub fn features_text(&self, separator: &str) -> String {
        let words: Vec<String> = self
            .features
            .iter()
            .map(|(name, on)| format!("{name} {}", crate::net::offload::on_off(*on)))
            .collect();
        words.join(separator)
    }
}
