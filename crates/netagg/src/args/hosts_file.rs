//! The seed's `remote_hosts` file (REMOTE_HOSTS[i]=name lines and
//! NUM_REMOTE_HOSTS=N, in any order, `#` comments) read for `--hosts-file`,
//! and why a host selection could not be used.

use std::collections::BTreeMap;

/// Why a hosts file could not be used.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum HostsError {
    #[error("cannot read {0}: {1}")]
    Read(String, String),
    #[error("{file}:{line}: {reason}")]
    Bad {
        file: String,
        line: usize,
        reason: String,
    },
    #[error("{0}: NUM_REMOTE_HOSTS={1} but REMOTE_HOSTS[{2}] is missing")]
    Missing(String, usize, usize),
    #[error("no load generators: give --hosts-file, --host, --hosts-dns or --k8s-selector")]
    None,
    #[error("{0}")]
    Usage(String),
    #[error("cannot resolve {0}: {1}")]
    Dns(String, String),
    #[error("Kubernetes discovery: {0}")]
    K8s(String),
    #[error("no ready pods match {selector:?} in namespace {namespace}")]
    NoPods { selector: String, namespace: String },
    #[error(
        "the pods' control ports differ ({0}); netagg has one --port for every load generator"
    )]
    PortsDiffer(String),
    #[error("the pods' control port is {pods} (their container port named control, else 12865) but --port says {given}")]
    PortConflict { pods: u16, given: u16 },
}

/// Largest number of load generators we take from a file.
pub const MAX_HOSTS: usize = 4096;

/// Parse the text of a remote_hosts file; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Vec<String>, HostsError> {
    let bad = |line: usize, reason: &str| HostsError::Bad {
        file: file.to_string(),
        line,
        reason: reason.to_string(),
    };
    let mut hosts = BTreeMap::new();
    let mut declared = None;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let line_no = index + 1;
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| bad(line_no, "expected NAME=VALUE"))?;
        let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
        if key.trim() == "NUM_REMOTE_HOSTS" {
            let n: usize = value.parse().map_err(|_| bad(line_no, "not a number"))?;
            if n > MAX_HOSTS {
                return Err(bad(line_no, "too many hosts"));
            }
            declared = Some(n);
        } else if let Some(index) = key
            .trim()
            .strip_prefix("REMOTE_HOSTS[")
            .and_then(|rest| rest.strip_suffix(']'))
        {
            let i: usize = index.parse().map_err(|_| bad(line_no, "bad index"))?;
            if i >= MAX_HOSTS || value.is_empty() {
                return Err(bad(line_no, "bad host entry"));
            }
            hosts.insert(i, value.to_string());
        }
        // Other shell variables are allowed and ignored, as the scripts do.
    }
    let count = declared.unwrap_or(hosts.len());
    let list = (0..count)
        .map(|i| {
            hosts
                .get(&i)
                .cloned()
                .ok_or_else(|| HostsError::Missing(file.to_string(), count, i))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if list.is_empty() {
        return Err(HostsError::None);
    }
    Ok(list)
}

/// Read and parse a remote_hosts file.
pub fn read(path: &str) -> Result<Vec<String>, HostsError> {
    // A hosts file is a few lines; a pipe (`<(...)`) or a device must not
    // be read without end.
    const MAX_BYTES: usize = 1 << 20;
    let bytes = netperf_base::input::read_text(std::path::Path::new(path), MAX_BYTES + 1)
        .map_err(|e| HostsError::Read(path.to_string(), e.to_string()))?;
    if bytes.len() > MAX_BYTES {
        return Err(HostsError::Read(
            path.to_string(),
            format!("larger than {MAX_BYTES} bytes"),
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| HostsError::Read(path.to_string(), "not UTF-8 text".to_string()))?;
    parse(path, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_format_in_any_order() {
        let text = "NUM_REMOTE_HOSTS=3\nREMOTE_HOSTS[2]=lg3\n# comment\nREMOTE_HOSTS[0]=lg1\nREMOTE_HOSTS[1]=10.0.0.2\n";
        assert_eq!(parse("f", text).unwrap(), ["lg1", "10.0.0.2", "lg3"]);
        // Without NUM_REMOTE_HOSTS the entries themselves count.
        assert_eq!(parse("f", "REMOTE_HOSTS[0]=a\n").unwrap(), ["a"]);
    }

    #[test]
    fn mistakes_are_named() {
        assert!(matches!(
            parse("f", "NUM_REMOTE_HOSTS=2\nREMOTE_HOSTS[0]=a\n"),
            Err(HostsError::Missing(_, 2, 1))
        ));
        assert!(matches!(
            parse("f", "garbage\n"),
            Err(HostsError::Bad { line: 1, .. })
        ));
        assert_eq!(parse("f", "\n"), Err(HostsError::None));
        assert!(parse("f", "REMOTE_HOSTS[99999]=a\n").is_err());
    }
}
