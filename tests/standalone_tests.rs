//! The repository stands alone: nothing at build or test time reads outside
//! it. A clone of HEAD, in a directory with nothing beside it, builds every
//! test target offline, and no tracked file (documentation aside) names a
//! path outside the checkout. The clone holds commits only: uncommitted
//! changes are not in it, so this checks HEAD.

mod common;
use common::podman::run_command_with_limit;
use common::{fast_tier_skips, skip};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The clone's build compiles this package only (its dependencies are
/// copied from this build, see `seed_target`): a minute or two on two
/// busy cores. The bound only catches a hang.
const BUILD_LIMIT: Duration = Duration::from_secs(20 * 60);

/// git with the environment a hook or an outer git may have set removed,
/// so that `-C` alone says which repository.
fn git(args: &[&str]) -> Command {
    let mut command = Command::new("git");
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_COMMON_DIR",
    ] {
        command.env_remove(var);
    }
    command.args(args);
    command
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// HEAD's commit, or why there is no git checkout to test.
fn head() -> Result<String, String> {
    if !git(&["--version"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return Err("git is not installed".into());
    }
    let out = run_command_with_limit(
        git(&["-C", REPO, "rev-parse", "--verify", "HEAD"]),
        Duration::from_secs(30),
    );
    if !out.status.success() {
        return Err(format!(
            "{REPO} is not a git checkout: {}",
            text(&out).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A path outside the checkout, spelled in pieces so that this file does not
/// name it: the directory beside the checkout the stock recordings were read
/// from, the build machine's absolute work directory (after a character
/// that cannot end a directory name, so `fuzz/work/` passes) and a string
/// that climbs out of the manifest directory (`concat!(env!(...), "/..`)
/// further than that directory lies below the repository's root.
const OUTSIDE: [(&str, bool); 2] = [
    (concat!("..", "/shared"), false),
    (concat!("/wo", "rk/"), true),
];

/// A string that starts by climbing from a manifest directory.
const CLIMB: &str = concat!("\"/", "..");

/// Whether a line of the tracked file `name` names a path outside the
/// checkout. A crate's manifest directory (crates/X) is two levels below
/// the root, the root package's is the root itself.
fn names_outside(name: &str, line: &str) -> bool {
    let fixed = OUTSIDE.iter().any(|&(needle, absolute)| {
        line.match_indices(needle).any(|(at, _)| {
            !absolute
                || !line[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || "_.-".contains(c))
        })
    });
    let depth = if name.starts_with("crates/") { 2 } else { 0 };
    let climbs_out = line.match_indices(CLIMB).any(|(at, _)| {
        let path = &line[at + 2..];
        let up = path.split('/').take_while(|part| *part == "..").count();
        up > depth
    });
    fixed || climbs_out
}

#[test]
fn no_tracked_file_names_a_path_outside_the_checkout() {
    if let Err(why) = head() {
        return skip(why);
    }
    // The working tree's copies of the tracked files: what the next commit
    // would hold, checked before it is made.
    let listed = run_command_with_limit(
        git(&["-C", REPO, "ls-files", "-z"]),
        Duration::from_secs(30),
    );
    assert!(listed.status.success(), "git ls-files: {}", text(&listed));
    let mut offenders = Vec::new();
    let mut files = 0;
    for name in String::from_utf8_lossy(&listed.stdout).split('\0') {
        // Prose may say where things used to be; only what runs counts.
        if name.is_empty() || name.ends_with(".md") {
            continue;
        }
        // A tracked file deleted in the working tree reads nothing.
        let Ok(bytes) = std::fs::read(Path::new(REPO).join(name)) else {
            continue;
        };
        files += 1;
        for (number, line) in String::from_utf8_lossy(&bytes).lines().enumerate() {
            if names_outside(name, line) {
                offenders.push(format!("{name}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(files > 100, "only {files} tracked files");
    assert!(
        offenders.is_empty(),
        "tracked files name paths outside the repository:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_pattern_finds_what_it_should_and_nothing_else() {
    let dot_dot = concat!("..", "/");
    let work = concat!("/wo", "rk/");
    let root = "tests/x.rs";
    let deep = "crates/client/src/x.rs";
    assert!(names_outside(
        root,
        &format!("\"{dot_dot}shared/reference\"")
    ));
    assert!(names_outside(
        root,
        &format!("let p = \"{work}stock/src\";")
    ));
    let climb = |levels: usize| {
        format!(
            "concat!(env!(\"X\"), \"/{}tests/fixtures/x\")",
            dot_dot.repeat(levels)
        )
    };
    assert!(names_outside(root, &climb(1)));
    assert!(!names_outside(deep, &climb(2)));
    assert!(names_outside(deep, &climb(3)));
    assert!(!names_outside(root, "work=\"fuzz/work/$t\""));
    assert!(!names_outside(
        root,
        &format!("include_str!(\"{dot_dot}docs/x.json\")")
    ));
}

/// A directory of its own under the temporary directory, the same for
/// every run from this target directory: a run's leftovers are replaced,
/// never piled up.
fn scratch(target: &Path, what: &str) -> PathBuf {
    let mut hasher = DefaultHasher::new();
    target.hash(&mut hasher);
    std::env::temp_dir().join(format!("netperf-ng-{what}-{:016x}", hasher.finish()))
}

/// Removes a directory however the test ends.
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A target directory for the clone holding copies of this build's compiled
/// dependencies (`deps`, `build`, `.fingerprint`, this package's own left
/// out): cargo finds them fresh and compiles only the clone's package, whose
/// artifacts land there, never over the binaries the rest of this suite
/// runs. Copies, not hard links: a dependency whose build script runs again
/// rewrites its files in place, which through a link would be this build's.
fn seed_target(profile_dir: &Path, seeded: &Path) -> std::io::Result<u64> {
    let profile = profile_dir.file_name().unwrap_or_default();
    let mut bytes = 0;
    for part in ["deps", "build", ".fingerprint"] {
        bytes += copy_tree(&profile_dir.join(part), &seeded.join(profile).join(part))?;
    }
    Ok(bytes)
}

/// The workspace's own packages (netperf-ng, netperf-data, netserver,
/// netagg, ...), by the names their artifacts carry.
fn is_ours(name: &str) -> bool {
    let name = name.strip_prefix("lib").unwrap_or(name);
    ["netperf", "netserver", "netagg"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// Copy `from` into `to`, all but the workspace's own artifacts and test
/// executables.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<u64> {
    std::fs::create_dir_all(to)?;
    let mut bytes = 0;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type()?;
        if is_ours(&name) {
            continue;
        }
        if kind.is_dir() {
            bytes += copy_tree(&entry.path(), &to.join(&name))?;
        } else if kind.is_file() {
            // In deps/, a dependency is a library (lib*.rlib, .rmeta, .so)
            // or its dep-info (.d); anything else is an executable of ours.
            let in_deps = from.file_name().is_some_and(|f| f == "deps");
            if in_deps && !name.starts_with("lib") && !name.ends_with(".d") {
                continue;
            }
            let copy = to.join(&name);
            bytes += std::fs::copy(entry.path(), &copy)?;
            // Cargo tells a fresh artifact by its time.
            let modified = entry.metadata()?.modified()?;
            std::fs::File::options()
                .write(true)
                .open(&copy)?
                .set_modified(modified)?;
        }
    }
    Ok(bytes)
}

#[test]
fn a_clone_with_nothing_beside_it_builds_offline() {
    if fast_tier_skips("slow: clones the repository and builds it (a minute or more)") {
        return;
    }
    let head = match head() {
        Ok(head) => head,
        Err(why) => return skip(why),
    };
    let dirty = run_command_with_limit(
        git(&["-C", REPO, "status", "--porcelain", "--untracked-files=no"]),
        Duration::from_secs(30),
    );
    if !dirty.stdout.is_empty() {
        eprintln!("note: uncommitted changes are not in the clone; this checks HEAD {head}");
    }
    let profile_dir = common::bins::profile_dir();
    let parent = scratch(&profile_dir, "standalone");
    let seeded = scratch(&profile_dir, "standalone-target");
    for dir in [&parent, &seeded] {
        let _ = std::fs::remove_dir_all(dir);
    }
    std::fs::create_dir_all(&parent).expect("the clone's directory");
    let _cleanup = (Cleanup(parent.clone()), Cleanup(seeded.clone()));
    let clone = parent.join("netperf-ng");
    let mut clone_command = git(&["clone", "--quiet", "--no-hardlinks", REPO]);
    clone_command.arg(&clone).current_dir(&parent);
    let cloned = run_command_with_limit(clone_command, Duration::from_secs(120));
    assert!(cloned.status.success(), "git clone: {}", text(&cloned));
    let beside: Vec<_> = std::fs::read_dir(&parent)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(beside, ["netperf-ng"], "the clone is alone in {parent:?}");
    if let Err(why) = seed_target(&profile_dir, &seeded) {
        return skip(format!("cannot copy this build's dependencies: {why}"));
    }

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let release = profile_dir.file_name().is_some_and(|p| p == "release");
    let build = cargo_build(&clone, &seeded, release, &["--tests"]);
    let built = match Command::new(&cargo).arg("--version").output() {
        Ok(o) if o.status.success() => run_command_with_limit(build, BUILD_LIMIT),
        _ => {
            return skip(format!("no cargo ({cargo}) to build the clone with"));
        }
    };
    let said = text(&built);
    // A dependency that was never downloaded: the network's business, not
    // the repository's. A path dependency outside it fails below.
    if !built.status.success() && said.contains("--offline") {
        return skip(format!(
            "cargo cannot build without the network here:\n{said}"
        ));
    }
    assert!(
        built.status.success(),
        "a clone of HEAD {head} alone in {parent:?} does not build:\n{said}"
    );
    // Every dependency came from this build: had the clone compiled any
    // again, the seed would be wrong and the test slow for nothing.
    let in_clone = format!("({}", clone.display());
    let recompiled: Vec<&str> = said
        .lines()
        .filter(|l| l.trim_start().starts_with("Compiling") && !l.contains(&in_clone))
        .collect();
    assert!(
        recompiled.is_empty(),
        "the clone rebuilt dependencies: {recompiled:?}"
    );
    lean_netperf_refuses_what_it_cannot_do(&clone, &seeded, &profile_dir);
}

/// `cargo build --offline` in the clone into `seeded`, with `args`.
fn cargo_build(clone: &Path, seeded: &Path, release: bool, args: &[&str]) -> Command {
    let mut build = common::bins::nested_cargo();
    // A one-off build: no incremental caches to write, and no line tables
    // for test binaries nobody runs (the dependencies, seeded, have none
    // either, so they stay fresh). A fifth of the test's time.
    build
        .env("CARGO_INCREMENTAL", "0")
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .args(["build", "--offline", "--target-dir"])
        .arg(seeded)
        .args(args)
        .current_dir(clone);
    if release {
        build.arg("--release");
    }
    build
}

/// The netperf a user installs with `--no-default-features` (no results
/// store, no pages) builds from the clone, and refuses `--store` and
/// `--report` with the reason and exit 2 before any traffic: port 1 on
/// loopback would answer a connection attempt with a different error.
fn lean_netperf_refuses_what_it_cannot_do(clone: &Path, seeded: &Path, profile_dir: &Path) {
    let release = profile_dir.file_name().is_some_and(|p| p == "release");
    let args = [
        "--package",
        "netperf",
        "--no-default-features",
        "--bin",
        "netperf",
    ];
    let built = run_command_with_limit(cargo_build(clone, seeded, release, &args), BUILD_LIMIT);
    assert!(built.status.success(), "the lean netperf: {}", text(&built));
    let netperf = seeded
        .join(profile_dir.file_name().unwrap())
        .join("netperf");
    let page = seeded.join("page.html");
    let cases: [(&[&str], &str); 2] = [
        (&["--", "--store"], "built without the results store"),
        (
            &["-D", "1", "--", "--report", page.to_str().unwrap()],
            "built without pages",
        ),
    ];
    for (extra, says) in cases {
        let mut command = Command::new(&netperf);
        command
            .args(["-H", "127.0.0.1", "-p", "1", "-l", "1"])
            .args(extra);
        let out = run_command_with_limit(command, Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", text(&out));
        assert!(text(&out).contains(says), "{extra:?}: {}", text(&out));
    }
    assert!(!page.exists(), "the lean netperf created the page");
}
