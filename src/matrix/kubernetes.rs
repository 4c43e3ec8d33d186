//! Placeholder until the k8s discovery branch lands (this session).
use super::inventory::Inventory;
use std::path::Path;

pub fn inventory(_: &str, _: Option<&str>, _: Option<&Path>) -> Result<Inventory, String> {
    Err("--k8s-selector: not built yet".into())
}
