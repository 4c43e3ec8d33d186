//! The tests that move no data: UUID (print a fresh UUID), LOC_CPU and
//! REM_CPU (print the local or remote CPU rate), printed without a newline
//! as netperf does so scripts can capture them.

use crate::cli::config::Config;
use crate::control::client;
use crate::measure::cpu;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Uuid,
    LocCpu,
    RemCpu,
}

const NAMES: &[(&str, Special)] = &[
    ("UUID", Special::Uuid),
    ("LOC_CPU", Special::LocCpu),
    ("REM_CPU", Special::RemCpu),
];

pub fn lookup(name: &str) -> Option<Special> {
    NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, s)| *s)
}

/// A time-based (version 1) UUID like netperf's, with a random node id.
pub fn new_uuid() -> String {
    let mut node = [0u8; 6];
    // SAFETY: getrandom fills the buffer it is given.
    let filled = unsafe { libc::getrandom(node.as_mut_ptr() as *mut libc::c_void, node.len(), 0) };
    if filled != node.len() as isize {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        node.copy_from_slice(
            &(t.as_nanos() as u64 ^ u64::from(std::process::id())).to_le_bytes()[..6],
        );
    }
    node[0] |= 0x01; // multicast bit: not a real MAC address (RFC 4122 4.5)
    uuid::Uuid::now_v1(&node).to_string()
}

pub fn run(test: Special, config: &Config) -> i32 {
    match test {
        Special::Uuid => {
            super::out(&config.test.uuid.clone().unwrap_or_else(new_uuid));
            0
        }
        Special::LocCpu => {
            super::out(&cpu::calibrate_rate().to_string());
            0
        }
        Special::RemCpu => {
            let result = client::establish(&config.global)
                .and_then(|mut chan| client::remote_cpu_rate(&mut chan));
            match result {
                Ok((rate, _cpus)) => {
                    super::out(&rate.to_string());
                    0
                }
                Err(e) => {
                    eprintln!("{e}");
                    super::EXIT_FAILURE
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_looks_like_netperfs() {
        let u = new_uuid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "1", "version 1 (time-based): {u}");
        assert_ne!(new_uuid(), u);
    }

    #[test]
    fn names_match_case_insensitively() {
        assert_eq!(lookup("loc_cpu"), Some(Special::LocCpu));
        assert_eq!(lookup("TCP_STREAM"), None);
    }
}
