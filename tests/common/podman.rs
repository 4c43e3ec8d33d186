//! podman for the container tests: finding one that can run here (rootful,
//! runc, cgroupfs), the rule for when the tests run at all (a static build
//! in the checkout), building the image with `scripts/container-build`, and
//! a test network in 198.18.0.0/15.

use super::{run_with_limit, text};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The first static release build of all three binaries takes minutes on
/// two shared cores; later ones only relink what changed.
pub const BUILD_LIMIT: Duration = Duration::from_secs(1200);
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

/// Why the image tests should not run in this checkout: the first static
/// build costs minutes the suite cannot spend, so they run once the
/// checkout has one (or when NETPERF_NG_CONTAINER_BUILD=1 asks to build it).
pub fn static_build_missing() -> Option<&'static str> {
    let built = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/static/installed/bin/netserver")
        .exists();
    (!built && std::env::var("NETPERF_NG_CONTAINER_BUILD").as_deref() != Ok("1")).then_some(
        "no static build in this checkout yet; it takes about 4.5 min from nothing, more than \
         the suite can spend: run scripts/container-build once (or set \
         NETPERF_NG_CONTAINER_BUILD=1) and this test runs",
    )
}

/// podman usable here and a static build present, or why the test skips
/// (always in the fast tier: rootful podman and an image build).
pub fn podman_for_image_tests() -> Result<Podman, String> {
    if super::fast_tier() {
        return Err("fast tier: needs root, podman and a container build".into());
    }
    let podman = Podman::find().map_err(|why| format!("podman cannot run here: {why}"))?;
    match static_build_missing() {
        Some(why) => Err(why.to_string()),
        None => Ok(podman),
    }
}

/// Build the image as `tag` with the documented command and this host's
/// podman options; panics with the script's output if it fails.
pub fn build_image(podman: &Podman, tag: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/container-build");
    let started = Instant::now();
    let mut build = Command::new(&script);
    build
        .args(["--tag", tag])
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
