//! Networking plumbing: name resolution with netperf's error texts (`resolve`)
//! and data/control socket creation with the socket options a test asks for
//! (`socket`); facts about this system (`sysinfo`) and its interfaces: egress
//! interface, driver, PCI ids and packet counters (`interface`); its
//! stateless offloads, read, changed and restored (`offload`); the fixed range
//! data sockets are opened in (`port_range`).

pub mod interface;
pub mod offload;
pub mod port_range;
pub mod resolve;
pub mod socket;
pub mod sysinfo;
