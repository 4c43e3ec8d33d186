//! The tests that move no data: UUID (print a fresh UUID), LOC_CPU and
//! REM_CPU (print the local or remote CPU rate), printed without a newline
//! as netperf does so scripts can capture them; and TCP_MSS (`mss`), which
//! opens a data connection only to read its segment size.

use netperf_base::ids::new_uuid;
use netperf_client::cli::config::Config;
use netperf_client::control::client;
use netperf_data::measure::cpu;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Uuid,
    LocCpu,
    RemCpu,
    TcpMss,
}

const NAMES: &[(&str, Special)] = &[
    ("UUID", Special::Uuid),
    ("LOC_CPU", Special::LocCpu),
    ("REM_CPU", Special::RemCpu),
    ("TCP_MSS", Special::TcpMss),
];

pub fn lookup(name: &str) -> Option<Special> {
    NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, s)| *s)
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
        Special::TcpMss => super::mss::run(config),
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
    fn names_match_case_insensitively() {
        assert_eq!(lookup("loc_cpu"), Some(Special::LocCpu));
        assert_eq!(lookup("TCP_STREAM"), None);
    }
}
