//! The three programs under test. The tests live in the umbrella package
//! and the programs in crates/netperf, crates/netserver and crates/netagg,
//! and cargo tells a test only where its own package's binaries are
//! (CARGO_BIN_EXE_*). So the first use of a program in a test binary runs
//! one `cargo build` of all three with this test binary's profile, target
//! and target directory: a no-op once they are built (every test binary
//! after the first finds them fresh), and never a stale program when only
//! this package's tests were built. (`cargo test` at the root compiles
//! every crate they use but not the programs themselves, so after it this
//! build compiles and links only their three `main.rs`: the test build
//! resolves features with the tests' dev-dependencies, and
//! crates/workspace-hack turns the same ones on for this build, which
//! would otherwise compile serde and much above it a second time.)

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fmt;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

pub static NETPERF: Bin = Bin("netperf");
pub static NETSERVER: Bin = Bin("netserver");
pub static NETAGG: Bin = Bin("netagg");

/// A program of the workspace, by name (its package has the same name); it
/// reads as the program's path wherever a `&str`, a path or an `OsStr` is
/// wanted.
#[derive(Clone, Copy, Debug)]
pub struct Bin(&'static str);

impl Bin {
    /// The program's path, built first if this process has not yet.
    pub fn path(self) -> &'static str {
        static BUILT: OnceLock<Mutex<HashMap<&'static str, &'static str>>> = OnceLock::new();
        let mut built = BUILT.get_or_init(Default::default).lock().unwrap();
        if built.is_empty() {
            for (name, path) in build_all() {
                built.insert(name, Box::leak(path.into_boxed_str()));
            }
        }
        built[self.0]
    }
}

impl Deref for Bin {
    type Target = str;
    fn deref(&self) -> &str {
        self.path()
    }
}

impl AsRef<OsStr> for Bin {
    fn as_ref(&self) -> &OsStr {
        OsStr::new(self.path())
    }
}

impl AsRef<Path> for Bin {
    fn as_ref(&self) -> &Path {
        Path::new(self.path())
    }
}

impl fmt::Display for Bin {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.path())
    }
}

/// Where this test binary's build lives: target/[TRIPLE/]PROFILE/deps/.
struct Build {
    target_dir: PathBuf,
    triple: Option<String>,
    profile_dir: PathBuf,
    profile: String,
}

/// This test binary's profile directory: it runs from PROFILE/deps/.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("a test binary lives in PROFILE/deps/")
        .to_path_buf()
}

fn this_build() -> Build {
    let profile_dir = profile_dir();
    let dir_name = profile_dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let profile = if dir_name == "debug" {
        "dev".to_string()
    } else {
        dir_name
    };
    let above = profile_dir
        .parent()
        .expect("a target directory")
        .to_path_buf();
    // cargo marks the target directory's root; a --target build adds a
    // directory named for the triple between it and the profile. A copied
    // target directory may lack the mark: then no triple is assumed.
    let marked = |dir: &Path| dir.join("CACHEDIR.TAG").exists();
    let (target_dir, triple) = match above.parent() {
        Some(root) if marked(root) && !marked(&above) => {
            let triple = above.file_name().unwrap().to_string_lossy().into_owned();
            (root.to_path_buf(), Some(triple))
        }
        _ => (above, None),
    };
    Build {
        target_dir,
        triple,
        profile_dir,
        profile,
    }
}

/// Variables cargo sets for a running test: they describe this test (its
/// package, manifest, binaries), not a build.
const SET_FOR_A_TEST: &[&str] = &[
    "CARGO_MANIFEST_",
    "CARGO_PKG_",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "CARGO_RUSTC_CURRENT_DIR",
    "OUT_DIR",
];

/// cargo, to run from a test, without what cargo set for the test: a
/// dependency's build script that watches one of those variables (ring's
/// watches CARGO_MANIFEST_DIR) would run again in the nested build, and the
/// next `cargo test` would undo it, each time compiling all above it.
pub fn nested_cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if SET_FOR_A_TEST.iter().any(|set| name.starts_with(set)) {
            command.env_remove(&*name);
        }
    }
    command
}

/// The three programs, built by one cargo: one set of features for the
/// crates they share (three builds of one package each would each resolve
/// their own, and compile the crates below them again: a minute of the
/// suite's first test binary on a fresh checkout).
fn build_all() -> Vec<(&'static str, String)> {
    let programs = [NETPERF.0, NETSERVER.0, NETAGG.0];
    let b = this_build();
    let mut command = nested_cargo();
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["build", "--quiet"]);
    for name in programs {
        command.args(["--package", name, "--bin", name]);
    }
    command
        .arg("--profile")
        .arg(&b.profile)
        .arg("--target-dir")
        .arg(&b.target_dir);
    if let Some(triple) = &b.triple {
        command.args(["--target", triple]);
    }
    let out = command
        .output()
        .expect("run cargo to build the programs under test");
    assert!(
        out.status.success(),
        "cargo build of {programs:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    programs
        .into_iter()
        .map(|name| {
            let path = b.profile_dir.join(name);
            assert!(
                path.is_file(),
                "cargo built {name} but {} is missing",
                path.display()
            );
            (name, path.to_string_lossy().into_owned())
        })
        .collect()
}
