//! Getting a tool a test needs from Debian's or PyPI's packages when it is
//! missing: at most one attempt per package set and test binary, bounded in
//! time, and never in the fast tier (which installs nothing). Where the
//! tool is still missing the caller skips with the reason returned.

use super::skip::fast_tier;
use std::collections::HashSet;
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// Where a package comes from.
#[derive(Clone, Copy)]
pub enum From {
    /// Debian's packages (as root).
    Apt,
    /// PyPI, for python3.
    Pip,
}

impl From {
    fn command(self, packages: &str) -> (String, String) {
        match self {
            From::Apt => (
                format!("apt-get install {packages}"),
                // The lock timeout: scripts/test may be installing the
                // full tier's packages in the background meanwhile.
                format!(
                    "apt-get install -y -q -o DPkg::Lock::Timeout=300 --no-install-recommends {packages} \
                     || (apt-get update -q && apt-get install -y -q -o DPkg::Lock::Timeout=300 \
                         --no-install-recommends {packages})"
                ),
            ),
            From::Pip => (
                format!("pip install {packages}"),
                format!("python3 -m pip install --quiet {packages}"),
            ),
        }
    }
}

/// Ok when `present()` holds, if need be after installing `packages`
/// (space-separated) from `from`; else why not, for the caller's skip.
pub fn ensure(from: From, packages: &str, present: impl Fn() -> bool) -> Result<(), String> {
    if present() {
        return Ok(());
    }
    let (named, script) = from.command(packages);
    if fast_tier() {
        return Err(format!("fast tier: needs a package install ({named})"));
    }
    // Held through the install: a second test asking for the same
    // packages meanwhile waits for this attempt instead of skipping.
    static TRIED: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut tried = TRIED.lock().unwrap_or_else(|p| p.into_inner());
    if tried
        .get_or_insert_with(HashSet::new)
        .insert(script.clone())
    {
        // `timeout` bounds it: a package mirror that hangs ends the attempt.
        let _ = Command::new("timeout")
            .args(["600", "sh", "-c", &script])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    if present() {
        Ok(())
    } else {
        Err(format!(
            "{packages}: not installed, and `{named}` did not install it"
        ))
    }
}

/// Whether `command probe...` runs and succeeds.
pub fn runs(command: &str, probe: &[&str]) -> bool {
    Command::new(command)
        .args(probe)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether python3 can import `module`.
pub fn python_imports(module: &str) -> bool {
    runs("python3", &["-c", &format!("import {module}")])
}
