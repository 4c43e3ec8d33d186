//! Networking plumbing: name resolution with netperf's error texts (`resolve`)
//! and data/control socket creation with the socket options a test asks for
//! (`socket`).

pub mod resolve;
pub mod socket;
