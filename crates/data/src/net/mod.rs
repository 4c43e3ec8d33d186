//! Networking plumbing: name resolution with netperf's error texts (`resolve`)
//! and data/control socket creation with the socket options a test asks for
//! (`socket`; MPTCP's own facts: `mptcp`); facts about this system (`sysinfo`) and its interfaces: egress
//! interface, driver, PCI ids and packet counters (`interface`); its
//! stateless offloads, read, changed and restored (`offload`); the fixed range
//! data sockets are opened in (`port_range`); the socket files of the
//! Unix-domain tests (`unix_path`); the framed control connection both ends
//! talk over (`channel`).

pub mod channel;
pub mod interface;
pub mod mptcp;
pub mod offload;
pub mod port_range;
pub mod resolve;
pub mod socket;
pub mod sysinfo;
pub mod unix_path;

/// The text C's `strerror` gives for `errno`, as netperf's perror prints it.
pub fn strerror(errno: i32) -> String {
    let full = std::io::Error::from_raw_os_error(errno).to_string();
    match full.find(" (os error") {
        Some(at) => full[..at].to_string(),
        None => full,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn strerror_has_no_rust_suffix() {
        assert_eq!(super::strerror(libc::ENOENT), "No such file or directory");
    }
}
