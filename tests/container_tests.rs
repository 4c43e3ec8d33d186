//! The container image end to end with podman: `scripts/container-build`
//! makes it, two netserver containers (read-only root, the image's default
//! command, healthy by the image's own health check) serve on a podman
//! network in 198.18.0.0/15 that the test creates, and netperf and netagg run
//! from the same image against them. Skipped, saying why, where podman
//! cannot run (not root, podman missing, `podman info` failing) or where
//! the checkout has no static build yet (minutes from nothing; run
//! scripts/container-build once, or set NETPERF_NG_CONTAINER_BUILD=1).

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The first static release build of all three binaries takes minutes on
/// two shared cores; later ones only relink what changed.
const BUILD_LIMIT: Duration = Duration::from_secs(1200);
const COMMAND_LIMIT: Duration = Duration::from_secs(60);
const CLEANUP_LIMIT: Duration = Duration::from_secs(30);
/// podman raises the containers' open-file and process limits beyond the
/// host's by default, which fails where podman itself lacks CAP_SYS_RESOURCE
/// (as here, nested in a container). Lowering them works everywhere, and a
/// few streams need no more.
const ULIMITS: [&str; 4] = [
    "--ulimit",
    "nofile=4096:4096",
    "--ulimit",
    "nproc=4096:4096",
];

/// podman with the options it needs on this kind of host: runc (crun fails
/// on hybrid cgroup hierarchies) and cgroupfs (no systemd to manage them).
struct Podman {
    global: Vec<String>,
}

impl Podman {
    /// Why podman cannot run here, or a podman that can.
    fn find() -> Result<Podman, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(
                "not root (rootful podman is needed for networks with fixed addresses)".into(),
            );
        }
        let on_path = |name: &str| {
            std::env::var_os("PATH")
                .is_some_and(|p| std::env::split_paths(&p).any(|dir| dir.join(name).is_file()))
        };
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

    fn args<'a>(&'a self, args: &[&'a str]) -> Vec<&'a str> {
        self.global
            .iter()
            .map(String::as_str)
            .chain(args.iter().copied())
            .collect()
    }

    /// Run podman, panicking (the guard still cleans up) past `limit`.
    fn run(&self, args: &[&str], limit: Duration) -> Output {
        run_with_limit("podman", &self.args(args), limit)
    }

    /// Run podman and require success; its stdout.
    fn ok(&self, args: &[&str]) -> String {
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
    fn bounded(&self, args: &[&str], limit: Duration) -> Option<Output> {
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
}

/// Everything the test made, removed when it ends, also on failure.
struct Made<'a> {
    podman: &'a Podman,
    containers: Vec<String>,
    network: Option<String>,
    image: Option<String>,
    out_dir: Option<PathBuf>,
}

impl Drop for Made<'_> {
    fn drop(&mut self) {
        for name in &self.containers {
            let _ = self
                .podman
                .bounded(&["rm", "-f", "-t", "0", name], CLEANUP_LIMIT);
        }
        if let Some(network) = &self.network {
            let _ = self
                .podman
                .bounded(&["network", "rm", "-f", network], CLEANUP_LIMIT);
        }
        if let Some(image) = &self.image {
            // Removes this tag only; the image stays while another tag
            // (netperf-ng:VERSION of a real build) names it.
            let _ = self.podman.bounded(&["rmi", image], CLEANUP_LIMIT);
        }
        if let Some(dir) = &self.out_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The result of a `-P 0` netperf run: the last number of its first line
/// (throughput, or transactions per second).
fn result_of(stdout: &str) -> f64 {
    numbers(first_line(stdout))
        .last()
        .copied()
        .unwrap_or(f64::NAN)
}

fn uid_of(pid: &str) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", pid.trim())).ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(1).map(str::to_string)
}

#[test]
fn image_serves_netperf_and_netagg_between_containers() {
    let podman = match Podman::find() {
        Ok(p) => p,
        Err(why) => {
            eprintln!("container_tests: SKIPPED: podman cannot run here: {why}");
            return;
        }
    };
    // The first static build costs minutes this suite cannot spend: the
    // test runs once the checkout has one (or when asked to build it).
    let built = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/static/x86_64-unknown-linux-gnu/release/netserver")
        .exists();
    if !built && std::env::var("NETPERF_NG_CONTAINER_BUILD").as_deref() != Ok("1") {
        eprintln!(
            "container_tests: SKIPPED: no static build in this checkout yet; it takes about 4.5 min \
             from nothing, more than the suite can spend: run scripts/container-build once (or set \
             NETPERF_NG_CONTAINER_BUILD=1) and this test runs"
        );
        return;
    }
    let pid = std::process::id();
    let image = format!("localhost/netperf-ng:test-{pid}");
    let mut made = Made {
        podman: &podman,
        containers: Vec::new(),
        network: None,
        image: None,
        out_dir: None,
    };

    // The documented command, with the podman options of this host.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/container-build");
    made.image = Some(image.clone());
    let started = Instant::now();
    let mut build = Command::new(&script);
    build
        .args(["--tag", &image])
        .env("CONTAINER_ENGINE_OPTS", podman.global.join(" "));
    let build = run_command_with_limit(build, BUILD_LIMIT);
    assert!(
        build.status.success(),
        "scripts/container-build failed ({}): {}{}",
        build.status,
        text(&build.stdout),
        text(&build.stderr)
    );
    eprintln!("container_tests: image built in {:.0?}", started.elapsed());

    // What the image promises: a numeric non-root user, the health check,
    // netserver in the foreground by default, the control port.
    let config = podman.ok(&[
        "image",
        "inspect",
        "--format",
        "{{.Config.User}}|{{json .Config.Cmd}}|{{json .Config.ExposedPorts}}|{{json .HealthCheck}}",
        &image,
    ]);
    let fields: Vec<&str> = config.trim().splitn(4, '|').collect();
    assert_eq!(fields[0], "65532:65532", "{config}");
    assert_eq!(
        fields[1], r#"["/usr/local/bin/netserver","-D","-v","1"]"#,
        "{config}"
    );
    assert!(fields[2].contains("12865/tcp"), "{config}");
    assert!(fields[3].contains("REM_CPU"), "{config}");

    let network = format!("netperf-ng-test-{pid}");
    // podman refuses a subnet another of its networks holds (this test
    // running in another checkout): the next of a few /24s is taken then.
    let mut refusals = String::new();
    let octet = (240..248u8).find(|octet| {
        let subnet = format!("198.18.{octet}.0/24");
        let out = podman.run(
            &["network", "create", "--subnet", &subnet, &network],
            COMMAND_LIMIT,
        );
        refusals += &text(&out.stderr);
        out.status.success()
    });
    let Some(octet) = octet else {
        panic!("no podman network on 198.18.240.0/24 to 198.18.247.0/24: {refusals}")
    };
    made.network = Some(network.clone());

    // Two netservers, as the image runs by default, on a read-only root.
    let addresses = [format!("198.18.{octet}.10"), format!("198.18.{octet}.11")];
    let servers = [("a", addresses[0].as_str()), ("b", addresses[1].as_str())];
    for (which, address) in servers {
        let name = format!("netperf-ng-test-{pid}-{which}");
        made.containers.push(name.clone());
        let mut run = vec![
            "run",
            "-d",
            "--name",
            &name,
            "--network",
            &network,
            "--ip",
            address,
            "--read-only",
        ];
        run.extend(ULIMITS);
        run.push(&image);
        podman.ok(&run);
    }
    for (which, _) in servers {
        let name = format!("netperf-ng-test-{pid}-{which}");
        // The image's own health check answers once netserver listens.
        let deadline = Instant::now() + Duration::from_secs(30);
        let healthy = loop {
            let check = podman.run(&["healthcheck", "run", &name], COMMAND_LIMIT);
            if check.status.success() {
                break true;
            }
            if Instant::now() > deadline {
                break false;
            }
            std::thread::sleep(Duration::from_millis(250));
        };
        let logs = podman.run(&["logs", &name], COMMAND_LIMIT);
        assert!(
            healthy,
            "{name} never healthy: {}{}",
            text(&logs.stdout),
            text(&logs.stderr)
        );
        assert!(
            text(&logs.stdout).contains("Starting netserver with host"),
            "{name}: {}",
            text(&logs.stdout)
        );
        // Seen from the host: the serving process is not root.
        let host_pid = podman.ok(&["inspect", "--format", "{{.State.Pid}}", &name]);
        assert_eq!(uid_of(&host_pid).as_deref(), Some("65532"), "{name}");
    }

    // A client container from the same image; its command replaces netserver.
    let client = |name: &str, extra: &[&str], command: &[&str]| -> Output {
        let name = format!("netperf-ng-test-{pid}-{name}");
        made_client(&podman, &name, &network, extra, &image, command)
    };
    // TCP_RR names its server: the static binary resolves it through the
    // network's DNS (glibc 2.34 and later have files and dns built in).
    let by_name = format!("netperf-ng-test-{pid}-b");
    for (test, target, unit) in [
        ("TCP_STREAM", servers[0].1, "10^6bits/s"),
        ("TCP_RR", by_name.as_str(), "Trans/s"),
        ("UDP_RR", servers[0].1, "Trans/s"),
    ] {
        let name = format!("netperf-{}", test.to_ascii_lowercase());
        let out = client(
            &name,
            &[],
            &["netperf", "-H", target, "-t", test, "-l", "1", "-P", "0"],
        );
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "{test}: {stdout}{}",
            text(&out.stderr)
        );
        let value = result_of(&stdout);
        assert!(value > 0.0, "{test}: {value} {unit} in {stdout:?}");
    }

    // netserver logs each test on stderr, which podman keeps.
    let logs = podman.run(
        &["logs", &format!("netperf-ng-test-{pid}-a")],
        COMMAND_LIMIT,
    );
    let logged = text(&logs.stderr);
    assert!(
        logged.contains("omni test: protocol TCP") && logged.contains("omni test: protocol UDP"),
        "{logged}"
    );

    // netagg writes its reports into a host directory the container user owns.
    let out_dir = std::env::temp_dir().join(format!("netperf-ng-container-{pid}"));
    std::fs::create_dir_all(&out_dir).unwrap();
    made.out_dir = Some(out_dir.clone());
    std::os::unix::fs::chown(&out_dir, Some(65532), Some(65532)).unwrap();
    let volume = format!("{}:/out", out_dir.display());
    let agg = client(
        "netagg",
        &["-v", &volume],
        &[
            "netagg",
            "--kind",
            "tps",
            "--host",
            servers[0].1,
            "--host",
            servers[1].1,
            "--duration",
            "2",
            "--max-streams",
            "2",
            "--burst",
            "4",
            "--out",
            "/out",
        ],
    );
    let stdout = text(&agg.stdout);
    assert!(
        agg.status.success(),
        "netagg: {stdout}{}",
        text(&agg.stderr)
    );
    assert!(
        stdout.starts_with("Average of peak interval is "),
        "{stdout}"
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("netagg_tps.json")).expect("netagg_tps.json"),
    )
    .expect("netagg's JSON");
    let levels = json["levels"].as_array().expect("levels");
    assert_eq!(levels.len(), 2, "levels of 1 and 2 streams: {json}");
    for level in levels {
        let per_stream = level["health"]["per_stream"]
            .as_array()
            .expect("per_stream");
        assert!(!per_stream.is_empty(), "{level}");
        assert!(
            per_stream
                .iter()
                .all(|s| s["transactions"].as_u64() > Some(0)),
            "every stream moved: {level}"
        );
        assert!(level["average"].as_f64() > Some(0.0), "{level}");
    }
    // Both load generators served streams of the two-stream level.
    let hosts: Vec<&str> = levels[1]["health"]["per_stream"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["host"].as_str())
        .collect();
    assert!(
        servers.iter().all(|(_, address)| hosts.contains(address)),
        "{hosts:?}"
    );
}

/// Run a client container (removed when it exits; the guard removes it if
/// it has to be killed).
fn made_client(
    podman: &Podman,
    name: &str,
    network: &str,
    extra: &[&str],
    image: &str,
    command: &[&str],
) -> Output {
    let mut args = vec![
        "run",
        "--rm",
        "--name",
        name,
        "--network",
        network,
        "--read-only",
    ];
    args.extend(ULIMITS);
    args.extend_from_slice(extra);
    args.push(image);
    args.extend_from_slice(command);
    let out = podman.run(&args, COMMAND_LIMIT);
    // A killed `podman run` may leave its container behind.
    let _ = podman.bounded(&["rm", "-f", "-t", "0", name], CLEANUP_LIMIT);
    out
}

/// `run_with_limit` for a prepared Command (the build needs its
/// environment), in its own process group so that a build past its limit is
/// killed with the cargo and podman it started.
fn run_command_with_limit(mut command: Command, limit: Duration) -> Output {
    use std::os::unix::process::CommandExt;
    let mut child = command
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn scripts/container-build");
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
            panic!("scripts/container-build did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Output {
        status,
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}
