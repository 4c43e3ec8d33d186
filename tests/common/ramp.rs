//! What tests of netagg's ramp share: an output directory removed when the
//! test ends (also when it fails), and the arguments of one level.

/// Removes a test's output directory, also when the test fails.
pub struct OutDir(pub std::path::PathBuf);

impl OutDir {
    /// `name`-PID under the temporary directory.
    pub fn named(name: &str) -> OutDir {
        OutDir(std::env::temp_dir().join(format!("{name}-{}", std::process::id())))
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

/// netagg's arguments for one level of `streams` streams of `kind` to
/// 127.0.0.1:`port` for `duration` seconds, written under `out`.
pub fn one_level<'a>(
    port: &'a str,
    kind: &'a str,
    streams: &'a str,
    duration: &'a str,
    out: &'a OutDir,
) -> Vec<&'a str> {
    vec![
        "--host",
        "127.0.0.1",
        "--port",
        port,
        "--kind",
        kind,
        "--streams",
        streams,
        "--duration",
        duration,
        "--out",
        out.0.to_str().unwrap(),
    ]
}
