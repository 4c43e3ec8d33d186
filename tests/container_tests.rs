//! The container image end to end with podman: `scripts/container-build`
//! makes it, two netserver containers (read-only root, the image's default
//! command, healthy by the image's own health check) serve on a podman
//! network in 198.18.0.0/15 that the test creates, and netperf and netagg run
//! from the same image against them. podman is installed when missing (as
//! root, from Debian's packages) and the image's static build made if the
//! checkout has none (scripts/test starts it in the background). Skipped,
//! saying why, where podman cannot run (not root, not installable, `podman
//! info` failing).

mod common;
use common::podman::*;
use common::*;
use std::path::PathBuf;
use std::process::Output;
use std::time::{Duration, Instant};

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

#[test]
fn image_serves_netperf_and_netagg_between_containers() {
    let podman = match podman_for_image_tests() {
        Ok(p) => p,
        Err(why) => return skip(why),
    };
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
    made.image = Some(image.clone());
    build_image(&podman, &image);

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
    let octet = podman.create_network(&network, 240..=247);
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
        let value = p0_result(&stdout);
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

    // The matrix from the image: netagg finds netperf beside it, and the
    // aggregate's per-stream histograms go to a tmpfs /tmp (the image has
    // none, and its root is read-only), as the matrix Job mounts one.
    let matrix = client(
        "matrix",
        &["-v", &volume, "--tmpfs", "/tmp"],
        &[
            "netagg",
            "matrix",
            "--scenario",
            &format!("first={}", servers[0].1),
            "--scenario",
            &format!("second={}", servers[1].1),
            "--tests",
            "TCP_RR*2",
            "--duration",
            "1",
            "--replicates",
            "1",
            "--no-store",
            "--out",
            "/out/matrix",
        ],
    );
    let stdout = text(&matrix.stdout);
    assert!(
        matrix.status.success(),
        "matrix: {stdout}{}",
        text(&matrix.stderr)
    );
    for scenario in ["first", "second"] {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&format!("| {scenario} ")))
            .unwrap_or_else(|| panic!("no row {scenario}: {stdout}"));
        let values: Vec<f64> = row
            .split('|')
            .skip(2)
            .filter_map(|v| v.trim().parse().ok())
            .collect();
        assert_eq!(values.len(), 3, "tx/s, merged P50 and P99: {row}");
        assert!(values.iter().all(|v| *v > 0.0), "{row}");
    }
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
