//! The namespace testbed (scripts/testbed) for tests: whether namespaces
//! can be made here (else the test skips, saying so), and a testbed
//! brought up and removed when the test ends, also when it fails.

use super::{fast_tier_skips, run_with_limit, skip, text, NETSERVER};
use std::process::Command;
use std::time::Duration;

pub const TESTBED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/testbed");

/// Removes the testbed when the test ends, also when it fails.
pub struct Testbed {
    pub name: String,
}

impl Drop for Testbed {
    fn drop(&mut self) {
        let _ = Command::new(TESTBED)
            .args(["down", "--name", &self.name])
            .status();
    }
}

/// Whether a namespace can be made (not in the fast tier); where not, the
/// running test skips. `tag` keeps the probes of tests that run at once
/// apart.
pub fn namespaces_work(tag: &str) -> bool {
    if fast_tier_skips("needs root (network namespaces)") {
        return false;
    }
    let probe = format!("ngprobe{tag}{}", std::process::id() % 100);
    let ok = Command::new("ip")
        .args(["netns", "add", &probe])
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        let _ = Command::new("ip")
            .args(["netns", "delete", &probe])
            .status();
    } else {
        skip("cannot create network namespaces here (needs root and iproute2)");
    }
    ok
}

/// Brings up testbed `name` with `lgs` load generators whose netservers
/// see `env` (VAR=value words); returns its guard and `up`'s output.
pub fn up(name: &str, lgs: u32, env: &[&str]) -> (Testbed, std::process::Output) {
    let bed = Testbed {
        name: name.to_string(),
    };
    let lgs = lgs.to_string();
    let mut args = env.to_vec();
    args.extend([
        TESTBED,
        "up",
        "--name",
        name,
        "--lgs",
        &lgs,
        "--netserver",
        &NETSERVER,
    ]);
    let up = run_with_limit("env", &args, Duration::from_secs(60));
    assert!(
        up.status.success(),
        "{}{}",
        text(&up.stdout),
        text(&up.stderr)
    );
    (bed, up)
}
