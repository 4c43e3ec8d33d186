//! Options that parse but that this build does not act on yet. Each one in
//! use is named on stderr, so nothing is silently ignored.

use netperf_client::cli::config::Config;

type Check = fn(&Config) -> bool;

/// (how the user wrote it, whether this command line uses it)
const NOT_YET: &[(&str, Check)] = &[("-- -p (connection test port range)", |c| {
    c.test.port_min.is_some() || c.test.port_max.is_some()
})];

/// The options in `config` that are accepted but not acted on.
pub fn in_use(config: &Config) -> Vec<String> {
    let mut out: Vec<String> = NOT_YET
        .iter()
        .filter(|(_, used)| used(config))
        .map(|(name, _)| name.to_string())
        .collect();
    out.extend(config.unsupported.iter().cloned());
    out.extend(config.test.unsupported.iter().cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use netperf_client::cli::test_support::run as config;

    #[test]
    fn named_when_used_and_silent_otherwise() {
        assert!(in_use(&config("-H x -l 1")).is_empty());
        let used = in_use(&config("-D 1 -N -- -k THROUGHPUT -f -p 5000"));
        assert!(!used.iter().any(|u| u.starts_with("-D")), "{used:?}");
        assert!(!used.iter().any(|u| u.starts_with("-N")), "{used:?}");
        assert!(!used.iter().any(|u| u.starts_with("-- -f")), "{used:?}");
        assert!(used.iter().any(|u| u.starts_with("-- -p")), "{used:?}");
        assert!(!used.iter().any(|u| u.starts_with("-- -k")), "{used:?}");
    }
}
