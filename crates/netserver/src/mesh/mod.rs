//! The mesh opt-in (`--mesh-key FILE --mesh-peers NET[,NET...]`): what the
//! operator allows, read and checked once at start (here); the exchange on
//! a control connection, challenge, authentication and checks (`serve`);
//! the bounds on how many and how often (`gate`); the test itself, our
//! netperf run as a child process (`child`). Without both options a
//! netserver originates nothing: every mesh request gets the refusal that
//! says how to enable it.

pub mod child;
pub mod gate;
pub mod serve;

use super::allow::AllowList;
use netperf_wire::mesh as wire;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The mesh options as given on the command line.
#[derive(Debug, Clone, Default)]
pub struct MeshOptions {
    /// --mesh-key FILE: the shared key's file.
    pub key_file: Option<PathBuf>,
    /// --mesh-peers NET[,NET...]: the only destinations (addresses or a/len).
    pub peers: Option<AllowList>,
    /// --mesh-max-duration SECS (default 60).
    pub max_duration_secs: u32,
    /// --mesh-concurrency N: originated tests at once (default 1).
    pub concurrency: usize,
    /// --mesh-rate N: originated tests per minute (default 60).
    pub rate_per_minute: usize,
    /// --mesh-netperf PATH: the netperf program to run.
    pub netperf: Option<PathBuf>,
    /// Set once both options are given and the key and netperf were found.
    pub enabled: Option<Arc<Enabled>>,
}

/// The opt-in in force.
pub struct Enabled {
    key: Vec<u8>,
    pub peers: AllowList,
    pub max_duration_secs: u32,
    pub concurrency: usize,
    pub rate_per_minute: usize,
    pub netperf: PathBuf,
}

impl std::fmt::Debug for Enabled {
    // Never the key, in any log or debug output.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Enabled")
            .field("key", &format_args!("<{} bytes>", self.key.len()))
            .field("peers", &self.peers)
            .field("max_duration_secs", &self.max_duration_secs)
            .field("concurrency", &self.concurrency)
            .field("rate_per_minute", &self.rate_per_minute)
            .field("netperf", &self.netperf)
            .finish()
    }
}

impl Enabled {
    pub fn key(&self) -> &[u8] {
        &self.key
    }
}

/// The mesh's long options: (name, what its value is).
pub const OPTIONS: &[(&str, &str)] = &[
    ("mesh-key", "a file"),
    ("mesh-peers", "networks"),
    ("mesh-max-duration", "seconds"),
    ("mesh-concurrency", "a count"),
    ("mesh-rate", "tests per minute"),
    ("mesh-netperf", "a path"),
];

/// The bounds of the numeric options: (name, least, most).
const BOUNDS: &[(&str, u64, u64)] = &[
    ("mesh-max-duration", 1, 86_400),
    ("mesh-concurrency", 1, 64),
    ("mesh-rate", 1, 6_000),
];

impl MeshOptions {
    pub fn new() -> MeshOptions {
        MeshOptions {
            max_duration_secs: 60,
            concurrency: 1,
            rate_per_minute: 60,
            ..Default::default()
        }
    }

    /// One of `OPTIONS`; the error is the text after "netserver: ".
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let number = || -> Result<u64, String> {
            let (_, least, most) = BOUNDS.iter().find(|(n, _, _)| *n == name).expect("bound");
            value
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| (*least..=*most).contains(n))
                .ok_or_else(|| format!("--{name} '{value}': a whole number {least}..{most}"))
        };
        match name {
            "mesh-key" => self.key_file = Some(value.into()),
            "mesh-peers" => {
                let peers = self.peers.get_or_insert_with(AllowList::default);
                peers.add(value).map_err(|e| format!("--mesh-peers: {e}"))?;
            }
            "mesh-max-duration" => self.max_duration_secs = number()? as u32,
            "mesh-concurrency" => self.concurrency = number()? as usize,
            "mesh-rate" => self.rate_per_minute = number()? as usize,
            "mesh-netperf" => self.netperf = Some(value.into()),
            other => return Err(format!("unknown option --{other}")),
        }
        Ok(())
    }

    /// At the end of the command line: both options or neither; the key
    /// read and checked, the netperf program found. The error says why the
    /// netserver does not start.
    pub fn finish(&mut self) -> Result<(), String> {
        let (file, peers) = match (&self.key_file, &self.peers) {
            (None, None) => return Ok(()),
            (Some(_), None) => {
                return Err("--mesh-key needs --mesh-peers NET[,NET...] too: the peers this netserver may test toward".into())
            }
            (None, Some(_)) => {
                return Err("--mesh-peers needs --mesh-key FILE too: the key a coordinator must prove it holds".into())
            }
            (Some(f), Some(p)) => (f.clone(), p.clone()),
        };
        let bytes = netperf_base::input::read_text(&file, wire::KEY_MAX + 256)
            .map_err(|e| format!("--mesh-key {}: {e}", file.display()))?;
        let key = wire::key_from_file_bytes(&bytes)
            .map_err(|e| format!("--mesh-key {}: {e}", file.display()))?;
        let netperf = match &self.netperf {
            Some(path) => path.clone(),
            None => default_netperf().ok_or(
                "--mesh-key: no netperf program beside netserver or in PATH: name it with --mesh-netperf PATH",
            )?,
        };
        self.enabled = Some(Arc::new(Enabled {
            key,
            peers,
            max_duration_secs: self.max_duration_secs,
            concurrency: self.concurrency,
            rate_per_minute: self.rate_per_minute,
            netperf,
        }));
        Ok(())
    }
}

/// `netperf` beside netserver's own executable, else the first in PATH.
fn default_netperf() -> Option<PathBuf> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("netperf")));
    let in_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join("netperf"));
    beside.into_iter().chain(in_path).find(|p| is_program(p))
}

fn is_program(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_file(text: &[u8]) -> PathBuf {
        let path = std::env::temp_dir().join(format!(
            "netserver-mesh-key-{}-{}",
            std::process::id(),
            text.len()
        ));
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn the_opt_in_needs_both_options() {
        let mut none = MeshOptions::new();
        assert!(none.finish().is_ok() && none.enabled.is_none());
        let mut key_only = MeshOptions::new();
        key_only.set("mesh-key", "/nonexistent").unwrap();
        assert!(key_only.finish().unwrap_err().contains("--mesh-peers"));
        let mut peers_only = MeshOptions::new();
        peers_only.set("mesh-peers", "127.0.0.0/8").unwrap();
        assert!(peers_only.finish().unwrap_err().contains("--mesh-key"));
    }

    #[test]
    fn the_key_is_read_checked_and_never_shown() {
        let path = key_file(b"a key that is long enough\n");
        let mut o = MeshOptions::new();
        o.set("mesh-key", path.to_str().unwrap()).unwrap();
        o.set("mesh-peers", "127.0.0.0/8,::1").unwrap();
        o.set("mesh-netperf", "/bin/true").unwrap();
        o.finish().unwrap();
        let enabled = o.enabled.clone().unwrap();
        assert_eq!(enabled.key(), b"a key that is long enough");
        assert!(enabled.peers.permits("127.0.0.9".parse().unwrap()));
        assert!(!enabled.peers.permits("10.0.0.1".parse().unwrap()));
        assert!(!format!("{o:?}").contains("long enough"));
        let short = key_file(b"short\n");
        let mut o = MeshOptions::new();
        o.set("mesh-key", short.to_str().unwrap()).unwrap();
        o.set("mesh-peers", "127.0.0.1").unwrap();
        assert!(o.finish().unwrap_err().contains("at least 16"));
        let mut o = MeshOptions::new();
        o.set("mesh-key", "/nonexistent/key").unwrap();
        o.set("mesh-peers", "127.0.0.1").unwrap();
        assert!(o.finish().unwrap_err().contains("/nonexistent/key"));
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(short);
    }

    #[test]
    fn bounds_are_checked() {
        let mut o = MeshOptions::new();
        for (name, bad) in [
            ("mesh-max-duration", "0"),
            ("mesh-max-duration", "x"),
            ("mesh-concurrency", "0"),
            ("mesh-concurrency", "65"),
            ("mesh-rate", "-1"),
            ("mesh-peers", "10.0.0.0/33"),
            ("mesh-peers", ","),
        ] {
            assert!(o.set(name, bad).is_err(), "{name} {bad}");
        }
        o.set("mesh-max-duration", "120").unwrap();
        o.set("mesh-concurrency", "2").unwrap();
        o.set("mesh-rate", "10").unwrap();
        assert_eq!(
            (o.max_duration_secs, o.concurrency, o.rate_per_minute),
            (120, 2, 10)
        );
    }
}
