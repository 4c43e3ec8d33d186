//! The scenario matrix (`netagg matrix`): the same tests from here to a
//! netserver on this node, another node in the zone and another zone, over
//! the pod network, the host network and a Service — chosen from what the
//! Kubernetes API or an inventory says is where (`inventory`,
//! `kubernetes`, `placement`), and run as an experiment with a `target`
//! factor, so its table, CSV/JSON, HTML report and results database are
//! the experiment's (`cli`).

pub mod cli;
pub mod inventory;
pub mod kubernetes;
pub mod placement;
