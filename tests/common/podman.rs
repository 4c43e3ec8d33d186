//! podman for the container tests: finding one that can run here (rootful,
//! runc, cgroupfs; installed from Debian's packages when missing), building
//! the image with `scripts/container-build` (its static build included), and
//! a test network in 198.18.0.0/15.

use super::{run_with_limit, text};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The first static release build of all three binaries takes minutes on
/// two shared cores (about 5 from nothing, more beside the other tests);
/// later ones only relink what changed.
pub const BUILD_LIMIT: Duration = Duration::from_secs(1200);
/// What the image tests need from Debian's packages (scripts/test installs
/// the same list): the CNI dnsname plugin resolves a container's name on a
/// podman network (Debian's podman uses CNI and only recommends it), and
/// catatonit is the pause process of `podman kube play`'s pods.
pub const IMAGE_TEST_PACKAGES: &str =
    "podman runc file catatonit golang-github-containernetworking-plugin-dnsname";
const DNSNAME_PLUGIN: &str = "/usr/lib/cni/dnsname";

/// The cargo profile of the tests' image: dev builds the same code and the
/// same image in less than half the CPU time of release (whose thin LTO and
/// single codegen unit cost over 8 CPU-minutes), which the suite's budget
/// needs; scripts/test starts this build in the background.
pub const IMAGE_PROFILE: &str = "dev";
pub const COMMAND_LIMIT: Duration = Duration::from_secs(60);
pub const CLEANUP_LIMIT: Duration = Duration::from_secs(30);
/// podman raises the containers' open-file and process limits beyond the
/// host's by default, which fails where podman itself lacks CAP_SYS_RESOURCE
/// (as here, nested in a container). Lowering them works everywhere, and a
/// few streams need no more.
pub const ULIMITS: [&str; 4] = [
    "--ulimit",
    "nofile=4096:4096",
    "--ulimit",
    "nproc=4096:4096",
];

/// podman with the options it needs on this kind of host: runc (crun fails
/// on hybrid cgroup hierarchies) and cgroupfs (no systemd to manage them).
pub struct Podman {
    pub global: Vec<String>,
}

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|dir| dir.join(name).is_file()))
}

impl Podman {
    /// Why podman cannot run here, or a podman that can.
    pub fn find() -> Result<Podman, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(
                "not root (rootful podman is needed for networks with fixed addresses)".into(),
            );
        }
        if !on_path("podman") {
            return Err("podman is not installed (apt-get install podman runc)".into());
        }
        for tool in ["file", "ldd"] {
            if !on_path(tool) {
                return Err(format!(
                    "{tool} is not installed (scripts/container-build needs it)"
                ));
            }
        }
        let mut global = vec!["--cgroup-manager=cgroupfs".to_string()];
        if on_path("runc") {
            global.extend(["--runtime".to_string(), "runc".to_string()]);
        }
        let podman = Podman { global };
        match podman.bounded(
            &["info", "--format", "{{.Host.OCIRuntime.Name}}"],
            COMMAND_LIMIT,
        ) {
            Some(out) if out.status.success() => Ok(podman),
            Some(out) => Err(format!(
                "`podman info` failed: {}",
                text(&out.stderr).trim()
            )),
            None => Err("`podman info` did not answer within a minute".into()),
        }
    }

    /// The global options as scripts take them (CONTAINER_ENGINE_OPTS).
    pub fn engine_opts(&self) -> String {
        self.global.join(" ")
    }

    fn args<'a>(&'a self, args: &[&'a str]) -> Vec<&'a str> {
        self.global
            .iter()
            .map(String::as_str)
            .chain(args.iter().copied())
            .collect()
    }

    /// Run podman, panicking (the guard still cleans up) past `limit`.
    pub fn run(&self, args: &[&str], limit: Duration) -> Output {
        run_with_limit("podman", &self.args(args), limit)
    }

    /// Run podman and require success; its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args, COMMAND_LIMIT);
        assert!(
            out.status.success(),
            "podman {args:?} failed ({}): {}{}",
            out.status,
            text(&out.stdout),
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// Run podman for at most `limit` without panicking (for cleanup, which
    /// may run while a failure unwinds): None when it had to be killed.
    pub fn bounded(&self, args: &[&str], limit: Duration) -> Option<Output> {
        let mut child = Command::new("podman")
            .args(self.args(args))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        let deadline = Instant::now() + limit;
        loop {
            match child.try_wait() {
                Ok(Some(_)) => return child.wait_with_output().ok(),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return None;
                }
            }
        }
    }

    /// Create `name` on the first of 198.18.OCTET.0/24 for `octets` that
    /// podman grants (it refuses a subnet another of its networks holds:
    /// the same test running in another checkout); that octet. The caller
    /// removes the network.
    pub fn create_network(&self, name: &str, octets: std::ops::RangeInclusive<u8>) -> u8 {
        let mut refusals = String::new();
        let (first, last) = (*octets.start(), *octets.end());
        let octet = octets.into_iter().find(|octet| {
            let subnet = format!("198.18.{octet}.0/24");
            let out = self.run(
                &["network", "create", "--subnet", &subnet, name],
                COMMAND_LIMIT,
            );
            refusals += &text(&out.stderr);
            out.status.success()
        });
        octet.unwrap_or_else(|| {
            panic!("no podman network on 198.18.{first}.0/24 to 198.18.{last}.0/24: {refusals}")
        })
    }
}

/// podman usable here, installed if need be, or why the test skips (always
/// in the fast tier: rootful podman and an image build). The image's static
/// build is made by `build_image` when the checkout has none: scripts/test
/// starts it in the background while the other tests run, so that the
/// container tests usually find it done.
pub fn podman_for_image_tests() -> Result<Podman, String> {
    if super::fast_tier() {
        return Err("fast tier: needs root, podman and a container build".into());
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let tools = ["podman", "runc", "file", "ldd", "catatonit"];
        super::install::ensure(super::install::From::Apt, IMAGE_TEST_PACKAGES, || {
            tools.iter().all(|tool| on_path(tool)) && Path::new(DNSNAME_PLUGIN).exists()
        })
        .map_err(|why| format!("podman cannot run here: {why}"))?;
    }
    Podman::find().map_err(|why| format!("podman cannot run here: {why}"))
}

/// Build the image as `tag` with the documented command and this host's
/// podman options; panics with the script's output if it fails.
pub fn build_image(podman: &Podman, tag: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/container-build");
    let started = Instant::now();
    let mut build = Command::new(&script);
    build
        .args(["--tag", tag, "--profile", IMAGE_PROFILE])
        .env("CONTAINER_ENGINE_OPTS", podman.engine_opts());
    let build = run_command_with_limit(build, BUILD_LIMIT);
    assert!(
        build.status.success(),
        "scripts/container-build failed ({}): {}{}",
        build.status,
        text(&build.stdout),
        text(&build.stderr)
    );
    eprintln!("image {tag} built in {:.0?}", started.elapsed());
}

/// The user id a host process runs as (from /proc).
pub fn uid_of(pid: &str) -> Option<String> {
    status_field(pid, "Uid:")
}

/// The first value of a /proc/PID/status field ("Uid:", "NoNewPrivs:", ...).
pub fn status_field(pid: &str, field: &str) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", pid.trim())).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1).map(str::to_string)
}

/// `run_with_limit` for a prepared Command (a script that needs its
/// environment), in its own process group so that one past its limit is
/// killed with the cargo and podman it started.
pub fn run_command_with_limit(mut command: Command, limit: Duration) -> Output {
    use std::os::unix::process::CommandExt;
    let mut child = command
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn a script");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stderr, &mut v);
        v
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            // SAFETY: kill only sends a signal, to the group the child leads.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            panic!("{command:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Output {
        status,
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}
