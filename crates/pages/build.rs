//! Records the git revision netperf-ng is built from, for the reports'
//! context (`page::REVISION`): `git rev-parse --short=12 HEAD`, "+changes"
//! when tracked files differ from it, "unknown" outside a git checkout.
//! NETPERF_NG_REVISION in the build's environment wins (a build from a
//! source tarball or a container context without .git can say where it
//! came from).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=NETPERF_NG_REVISION");
    // The workspace's sources: a change there may change "+changes".
    for source in ["../../crates", "../../src", "../../Cargo.toml"] {
        println!("cargo:rerun-if-changed={source}");
    }
    let given = std::env::var("NETPERF_NG_REVISION")
        .ok()
        .filter(|r| !r.trim().is_empty());
    let revision = given.or_else(|| {
        let head = git(&["rev-parse", "--short=12", "HEAD"])?;
        for dir in [
            git(&["rev-parse", "--git-dir"]),
            git(&["rev-parse", "--git-common-dir"]),
        ]
        .into_iter()
        .flatten()
        {
            // Only what exists: cargo takes a missing file as changed and
            // would build again every time (a worktree's git directory has
            // no packed-refs or refs of its own). The branch HEAD names,
            // not all of refs/heads: a commit on another branch (another
            // worktree's) changes nothing here.
            let branch = git(&["symbolic-ref", "--quiet", "HEAD"]);
            for file in ["HEAD", "packed-refs"]
                .into_iter()
                .map(String::from)
                .chain(branch.clone())
            {
                let path = std::path::Path::new(&dir).join(file);
                if path.exists() {
                    println!("cargo:rerun-if-changed={}", path.display());
                }
            }
        }
        let changed =
            git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        Some(if changed {
            format!("{head}+changes")
        } else {
            head
        })
    });
    println!(
        "cargo:rustc-env=NETPERF_NG_REVISION={}",
        revision.unwrap_or_else(|| "unknown".to_string())
    );
}
