//! The pod specs of deploy/kubernetes run by a real engine: podman's
//! `kube play`, through `scripts/kube-play` (the command users run), from
//! the image `scripts/container-build` makes, on a podman network in
//! 198.18.248-252.0/24 that the test creates. podman 4.3 plays Pod,
//! Deployment and PersistentVolumeClaim only ("YAML document does not
//! contain any supported kube kind" for DaemonSet, Job and Service), so the
//! script plays each DaemonSet's and Job's pod template, read from the
//! manifest, as a Pod, and gives the pods the Services' DNS names as
//! network aliases.
//!
//! Checked: the netserver pod serves our netperf from the host (TCP_STREAM,
//! TCP_RR); its data connections use ports of its --data-ports range and a
//! port outside is refused; it runs as the spec's runAsUser/runAsGroup,
//! with no-new-privileges, no capabilities, a seccomp filter, a read-only
//! root (writing to / inside fails with EROFS) and the spec's memory limit
//! and request, published on no host port; the netagg Job's pod, its args
//! unchanged but for a shorter run at a fixed burst (and, there being no
//! API server under podman, its --k8s-selector SELECTOR played as --hosts-dns
//! with the headless Service selecting the same pods), finds the netserver
//! pod through the Service's name, completes with
//! status 0, prints its result and writes it to its emptyDir. The
//! hostNetwork DaemonSet's pod serves in a network namespace the test
//! makes, and runs in that namespace.
//!
//! What podman 4.3.1 does NOT honour of these specs (found by playing them
//! and reading `podman inspect`, the cgroups and /proc): readinessProbe
//! (ignored; the script waits for its port itself); livenessProbe (becomes
//! a health check running `nc` through /bin/sh, which the scratch image
//! lacks, so `podman healthcheck run` says unhealthy; and health checks
//! are scheduled only through systemd timers, so never here);
//! runAsNonRoot (not enforced: runAsUser 0 runs as root); seccompProfile
//! (not read: Unconfined still gets podman's default filter, which is what
//! RuntimeDefault names anyway); resources.requests.cpu (cpu.shares stays
//! 1024); containerPort without hostPort (published on the host's port of
//! the same number, so the script drops it); emptyDir (a volume named
//! after the volume, shared by the pods naming it, so the script renames it
//! per pod); the downward API's spec.nodeName and metadata.namespace
//! (refused: the script gives this host's name and the manifest's
//! namespace as values). Not played at all: Services (no virtual IP, no
//! sessionAffinity), Namespaces, RBAC (no API server), the Job's backoffLimit and
//! ttlSecondsAfterFinished, a DaemonSet's one pod per node. Honoured:
//! runAsUser/runAsGroup, readOnlyRootFilesystem, allowPrivilegeEscalation,
//! capabilities, limits.memory (and requests.memory as a soft limit),
//! restartPolicy, hostNetwork, args, volumeMounts.
//!
//! The mesh (deploy/kubernetes/mesh) is checked as the script plays it
//! (--print: a DaemonSet as several pods, the Secret as a directory, the
//! ConfigMap's peers in the args) and played: three mesh netserver pods
//! standing in for three nodes and the mesh Job, whose 6 ordered pairs are
//! each measured from the source pod's netserver. Both played tests share
//! one image, built once.
//!
//! Skipped, saying why, as tests/container_tests.rs is: where podman
//! cannot run; and where PyYAML (which the script needs) is missing and pip
//! cannot install it.

mod common;
use common::podman::*;
use common::*;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kube-play");
const BASE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/kubernetes/base");
const HOSTNET: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/kubernetes/hostnetwork");
const MESH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/kubernetes/mesh");
/// The mesh DaemonSet played as three pods: three nodes.
const MESH_REPLICAS: &str = "netserver-mesh=3";
const SCRIPT_LIMIT: Duration = Duration::from_secs(180);

/// The image the played tests run, built once for all of them that run at
/// once (two builds at the same time would share scripts/container-build's
/// staging directory, and each costs a relink and an image), its tag
/// removed when the last of them ends.
struct Image {
    podman: Podman,
    tag: String,
}

impl Drop for Image {
    fn drop(&mut self) {
        let _ = self.podman.bounded(&["rmi", &self.tag], CLEANUP_LIMIT);
    }
}

static IMAGE: Mutex<Weak<Image>> = Mutex::new(Weak::new());
/// Held by the test playing pods: one plays at a time (at once, on two
/// cores, both took more than twice as long), the other holding the image
/// meanwhile.
static PLAYING: Mutex<()> = Mutex::new(());

/// The image, built now unless another test of this file holds it.
fn shared_image(podman: &Podman) -> Arc<Image> {
    // A test whose build panicked poisons the lock; the next one builds again.
    let mut shared = IMAGE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(image) = shared.upgrade() {
        return image;
    }
    let image = Arc::new(Image {
        podman: Podman {
            global: podman.global.clone(),
        },
        tag: format!("localhost/netperf-ng:kube-{}", std::process::id()),
    });
    build_image(podman, &image.tag);
    *shared = Arc::downgrade(&image);
    image
}

/// What the test played, removed when it ends, also on failure: the
/// script's own --down (with `down`: the prefix, the manifests and the
/// options that name the pods) first, then whatever pod still carries the
/// prefix; then the network, namespace and files the test made.
struct Played<'a> {
    podman: &'a Podman,
    prefix: String,
    down: Vec<String>,
    network: Option<String>,
    netns: Option<String>,
    files: Vec<PathBuf>,
    /// Dropped after the pods: its tag goes with the last test using it.
    image: Option<Arc<Image>>,
    /// Released once everything above is removed.
    playing: Option<MutexGuard<'static, ()>>,
}

impl<'a> Played<'a> {
    /// Nothing played yet: `down` names what `--down` must remove.
    fn new(podman: &'a Podman, prefix: &str, down: &[&str]) -> Played<'a> {
        let mut args = vec!["--down".to_string(), "--prefix".into(), prefix.into()];
        args.extend(down.iter().map(|a| a.to_string()));
        Played {
            podman,
            prefix: prefix.into(),
            down: args,
            network: None,
            netns: None,
            files: Vec::new(),
            image: None,
            playing: None,
        }
    }

    /// The shared image, then this test's turn to play; the image's tag.
    fn image_and_turn(&mut self) -> String {
        let image = shared_image(self.podman);
        let tag = image.tag.clone();
        self.image = Some(image);
        // A test that panicked while playing poisons the lock; its
        // guard has removed what it played all the same.
        self.playing = Some(PLAYING.lock().unwrap_or_else(PoisonError::into_inner));
        tag
    }
}

impl Drop for Played<'_> {
    fn drop(&mut self) {
        let mut down = Command::new(SCRIPT);
        down.args(&self.down)
            .env("CONTAINER_ENGINE_OPTS", self.podman.engine_opts())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Ok(mut child) = down.spawn() {
            let deadline = Instant::now() + CLEANUP_LIMIT;
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        let filter = format!("name=^{}", self.prefix);
        let left = self
            .podman
            .bounded(&["pod", "ps", "-q", "--filter", &filter], CLEANUP_LIMIT);
        for id in left.map(|o| text(&o.stdout)).unwrap_or_default().lines() {
            let _ = self
                .podman
                .bounded(&["pod", "rm", "-f", "-t", "0", id], CLEANUP_LIMIT);
        }
        if let Some(network) = &self.network {
            let _ = self
                .podman
                .bounded(&["network", "rm", "-f", network], CLEANUP_LIMIT);
        }
        if let Some(netns) = &self.netns {
            let _ = run_with_limit("ip", &["netns", "del", netns], CLEANUP_LIMIT);
        }
        for file in &self.files {
            let _ = std::fs::remove_file(file);
        }
    }
}

/// A played pod's address on `network`.
fn pod_address(podman: &Podman, pod: &str, network: &str) -> String {
    let infra = podman.ok(&["pod", "inspect", "--format", "{{.InfraContainerID}}", pod]);
    podman
        .ok(&[
            "inspect",
            "--format",
            &format!("{{{{(index .NetworkSettings.Networks \"{network}\").IPAddress}}}}"),
            infra.trim(),
        ])
        .trim()
        .to_string()
}

/// The directory podman keeps a played pod's emptyDir in (kube-play names
/// the volume POD-VOLUME).
fn volume_dir(podman: &Podman, volume: &str) -> PathBuf {
    let mountpoint = podman.ok(&["volume", "inspect", "--format", "{{.Mountpoint}}", volume]);
    PathBuf::from(mountpoint.trim())
}

fn script(podman: &Podman, args: &[&str]) -> Output {
    let mut command = Command::new(SCRIPT);
    command
        .args(args)
        .env("CONTAINER_ENGINE_OPTS", podman.engine_opts());
    run_command_with_limit(command, SCRIPT_LIMIT)
}

/// The Pods the script plays, as JSON (its --print YAML through PyYAML).
fn printed_pods(podman: &Podman, args: &[&str]) -> Vec<serde_json::Value> {
    let printed = script(podman, &[&["--print"], args].concat());
    assert!(printed.status.success(), "{}", text(&printed.stderr));
    yaml_documents(&printed.stdout)
}

/// YAML documents as JSON values, read by PyYAML.
fn yaml_documents(yaml: &[u8]) -> Vec<serde_json::Value> {
    let mut python = Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(sys.stdin))))",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    std::io::Write::write_all(&mut python.stdin.take().unwrap(), yaml).unwrap();
    let out = python.wait_with_output().unwrap();
    serde_json::from_slice(&out.stdout).expect("the printed pods as JSON")
}

fn container<'a>(pods: &'a [serde_json::Value], name: &str) -> &'a serde_json::Value {
    pods.iter()
        .flat_map(|p| p["spec"]["containers"].as_array().unwrap())
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no container {name} in {pods:?}"))
}

/// A Kubernetes quantity in bytes ("256Mi").
fn bytes(quantity: &serde_json::Value) -> u64 {
    let q = quantity.as_str().expect("a quantity");
    let (digits, unit) = q.split_at(q.find(|c: char| !c.is_ascii_digit()).unwrap_or(q.len()));
    let scale = match unit {
        "" => 1,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        other => panic!("unit {other} of {q}"),
    };
    digits.parse::<u64>().unwrap() * scale
}

/// netserver's --data-ports MIN-MAX from its args.
fn data_ports(args: &serde_json::Value) -> (u16, u16) {
    let args: Vec<&str> = args
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    let at = args.iter().position(|a| *a == "--data-ports").unwrap();
    let (min, max) = args[at + 1].split_once('-').unwrap();
    (min.parse().unwrap(), max.parse().unwrap())
}

/// Local ports of the established TCP sockets in the network namespace of
/// host process `pid`, but `except`.
fn established_ports(pid: &str, except: u16) -> Vec<u16> {
    const ESTABLISHED: &str = "01";
    let mut ports = Vec::new();
    for table in ["tcp", "tcp6"] {
        let path = format!("/proc/{}/net/{table}", pid.trim());
        for line in std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .skip(1)
        {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let port = fields
                .get(1)
                .and_then(|a| a.rsplit(':').next())
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            if let Some(port) = port {
                if fields.get(3) == Some(&ESTABLISHED) && port != except {
                    ports.push(port);
                }
            }
        }
    }
    ports
}

/// The data ports netserver uses while a TCP_STREAM runs, read from its
/// network namespace every few milliseconds until the run ends.
fn ports_during_stream(address: &str, netserver_pid: &str) -> Vec<u16> {
    let mut run: Child = Command::new(NETPERF)
        .args(["-H", address, "-t", "TCP_STREAM", "-l", "1", "-P", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("netperf");
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    while matches!(run.try_wait(), Ok(None)) && Instant::now() < deadline {
        seen.extend(established_ports(netserver_pid, 12865));
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = run.kill();
    let out = run.wait_with_output().unwrap();
    assert!(
        out.status.success() && p0_result(&text(&out.stdout)) > 0.0,
        "TCP_STREAM: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    seen.sort_unstable();
    seen.dedup();
    seen
}

#[test]
fn pod_specs_serve_under_podman_kube_play() {
    let podman = match podman_for_image_tests() {
        Ok(p) => p,
        Err(why) => return skip(why),
    };
    if let Err(why) = install::ensure(install::From::Pip, "pyyaml", || {
        install::python_imports("yaml")
    }) {
        return skip(format!("python3 has no PyYAML: {why}"));
    }
    let pid = std::process::id();
    let prefix = format!("kube-{pid}-");
    let network = format!("netperf-ng-kube-{pid}");
    let mut played = Played::new(&podman, &prefix, &[BASE, HOSTNET]);
    let image = played.image_and_turn();
    let started = Instant::now();
    // 240-247 are tests/container_tests.rs's.
    podman.create_network(&network, 248..=252);
    played.network = Some(network.clone());

    // The Job's own ramp (10 s a level, up to 8 streams, after a search
    // for the burst) is shortened to one 2 s level at a given burst;
    // nothing else of the spec changes.
    let args = [
        "--network",
        &network,
        "--image",
        &image,
        "--prefix",
        &prefix,
        "--ulimit",
        ULIMITS[1],
        "--ulimit",
        ULIMITS[3],
        "--set-arg",
        "netagg:--duration=2",
        "--set-arg",
        "netagg:--max-streams=1",
        "--add-arg",
        "netagg:--burst=4",
        BASE,
    ];
    let pods = printed_pods(&podman, &args);
    let server_spec = container(&pods, "netserver");
    let out = script(&podman, &args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "scripts/kube-play: {stdout}{stderr}");
    assert!(
        stderr.contains(&format!("{prefix}netserver/netserver ready")),
        "{stderr}"
    );

    // The Job's pod ran to completion and printed its result.
    let agg = format!("{prefix}netagg-netagg");
    let state = podman.ok(&[
        "inspect",
        "--format",
        "{{.State.Status}} {{.State.ExitCode}}",
        &agg,
    ]);
    assert_eq!(state.trim(), "exited 0", "{stdout}{stderr}");
    assert!(
        stdout.starts_with("Average of peak interval is ") && stdout.contains("1 streams: average"),
        "{stdout}"
    );

    // The netserver pod's address on the test's network.
    let address = pod_address(&podman, &format!("{prefix}netserver"), &network);
    assert!(address.starts_with("198.18.2"), "{address}");

    // netagg found that pod through the headless Service's name: its
    // streams went to it and moved data.
    let results = volume_dir(&podman, &format!("{prefix}netagg-results"));
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(results.join("netagg_tps.json"))
            .expect("netagg_tps.json in the Job's emptyDir"),
    )
    .expect("netagg's JSON");
    let streams = json["levels"][0]["health"]["per_stream"]
        .as_array()
        .unwrap_or_else(|| panic!("{json}"));
    assert!(!streams.is_empty(), "{json}");
    for stream in streams {
        assert_eq!(stream["host"].as_str(), Some(address.as_str()), "{json}");
        assert!(stream["transactions"].as_u64() > Some(0), "{json}");
    }

    // Our netperf from the host: a TCP_STREAM whose data connection is
    // seen on a port of the range, a TCP_RR on the range's last port, and
    // a refusal for the port after it.
    let server = format!("{prefix}netserver-netserver");
    let host_pid = podman.ok(&["inspect", "--format", "{{.State.Pid}}", &server]);
    let (min, max) = data_ports(&server_spec["args"]);
    let used = ports_during_stream(&address, &host_pid);
    assert!(!used.is_empty(), "no data connection seen");
    assert!(
        used.iter().all(|p| (min..=max).contains(p)),
        "data ports {used:?} outside {min}-{max}"
    );
    for (port, served) in [(max, true), (max + 1, false)] {
        let port = format!(",{port}");
        let rr = run_with_limit(
            &NETPERF,
            &[
                "-H", &address, "-t", "TCP_RR", "-l", "1", "-P", "0", "--", "-P", &port,
            ],
            COMMAND_LIMIT,
        );
        let stdout = text(&rr.stdout);
        assert_eq!(
            rr.status.success() && p0_result(&stdout) > 0.0,
            served,
            "TCP_RR, data port {port}: {stdout}{}",
            text(&rr.stderr)
        );
    }

    // The securityContext, seen from /proc and from inside.
    let security = &server_spec["securityContext"];
    let field = |name: &str| status_field(&host_pid, name).unwrap_or_default();
    assert_eq!(field("Uid:"), security["runAsUser"].to_string());
    assert_eq!(field("Gid:"), security["runAsGroup"].to_string());
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(field("NoNewPrivs:"), "1");
    assert_eq!(security["capabilities"]["drop"][0], "ALL");
    assert_eq!(field("CapEff:"), "0000000000000000");
    assert_eq!(field("CapBnd:"), "0000000000000000");
    assert_eq!(field("Seccomp:"), "2", "a seccomp filter");
    assert_eq!(security["readOnlyRootFilesystem"], true);
    let write = podman.run(
        &[
            "exec",
            &server,
            "netagg",
            "--host",
            "127.0.0.1",
            "--kind",
            "tps",
            "--duration",
            "2",
            "--out",
            "/probe",
        ],
        COMMAND_LIMIT,
    );
    assert!(
        !write.status.success() && text(&write.stderr).contains("Read-only file system"),
        "writing to / inside: {}{}",
        text(&write.stdout),
        text(&write.stderr)
    );
    let memory = podman.ok(&[
        "inspect",
        "--format",
        "{{.HostConfig.Memory}} {{.HostConfig.MemoryReservation}}",
        &server,
    ]);
    let resources = &server_spec["resources"];
    assert_eq!(
        memory.trim(),
        format!(
            "{} {}",
            bytes(&resources["limits"]["memory"]),
            bytes(&resources["requests"]["memory"])
        )
    );
    // Only published where the spec asks (hostPort): nowhere.
    let published = podman.ok(&["port", &server]);
    assert_eq!(published.trim(), "", "published on the host");

    hostnetwork_pod_serves(&podman, &mut played, &image);
    eprintln!(
        "kube_play_tests: played and checked in {:.0?}",
        started.elapsed()
    );
}

/// The hostNetwork DaemonSet's pod, played from inside a network namespace
/// the test creates (nsenter, not `ip netns exec`, whose fresh /sys has no
/// cgroups for podman): its "host" network is that namespace, so it binds
/// 12865 and the data ports there and not on this shared host.
fn hostnetwork_pod_serves(podman: &Podman, played: &mut Played, image: &str) {
    let netns = format!("{}hostnet", played.prefix);
    let made = run_with_limit("ip", &["netns", "add", &netns], COMMAND_LIMIT);
    assert!(made.status.success(), "{}", text(&made.stderr));
    played.netns = Some(netns.clone());
    let lo = run_with_limit(
        "ip",
        &["-n", &netns, "link", "set", "lo", "up"],
        COMMAND_LIMIT,
    );
    assert!(lo.status.success(), "{}", text(&lo.stderr));
    let mut play = Command::new("nsenter");
    play.arg(format!("--net=/run/netns/{netns}"))
        .args([SCRIPT, "--image", image, "--prefix", &played.prefix])
        .args(["--ulimit", ULIMITS[1], "--ulimit", ULIMITS[3], HOSTNET])
        .env("CONTAINER_ENGINE_OPTS", podman.engine_opts());
    let out = run_command_with_limit(play, SCRIPT_LIMIT);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "hostnetwork: {stderr}");
    let pod = format!("{}netserver-hostnet", played.prefix);
    assert!(
        stderr.contains(&format!("{pod}/netserver ready on 127.0.0.1:12865")),
        "{stderr}"
    );
    let rr = run_with_limit(
        "ip",
        &[
            "netns",
            "exec",
            &netns,
            &NETPERF,
            "-H",
            "127.0.0.1",
            "-t",
            "TCP_RR",
            "-l",
            "1",
            "-P",
            "0",
        ],
        COMMAND_LIMIT,
    );
    assert!(
        rr.status.success() && p0_result(&text(&rr.stdout)) > 0.0,
        "TCP_RR in the hostNetwork pod's namespace: {}{}",
        text(&rr.stdout),
        text(&rr.stderr)
    );
    // Its network namespace is the one made here, not a pod's own.
    let host_pid = podman.ok(&[
        "inspect",
        "--format",
        "{{.State.Pid}}",
        &format!("{pod}-netserver"),
    ]);
    let theirs = std::fs::read_link(format!("/proc/{}/ns/net", host_pid.trim())).unwrap();
    let made_here = std::fs::metadata(format!("/run/netns/{netns}")).unwrap();
    assert_eq!(
        theirs.to_string_lossy(),
        format!("net:[{}]", std::os::unix::fs::MetadataExt::ino(&made_here))
    );
}

/// The mesh played: the DaemonSet as three pods standing in for three
/// nodes, each netserver with the opt-in (the key from --secret-file, the
/// peers the test's podman network: the ConfigMap's placeholder CIDRs are
/// a cluster's, so the test overrides the arg, not the manifests), then
/// the mesh Job, shortened to one 1 s test a pair. It must exit 0 and
/// write a mesh.json whose 6 ordered pairs between the three pods'
/// addresses were all measured, each test started at its source's
/// netserver (two "done" lines in each one's log, toward the other two).
#[test]
fn mesh_plays_under_podman_kube_play() {
    let podman = match podman_for_image_tests() {
        Ok(p) => p,
        Err(why) => return skip(why),
    };
    if let Err(why) = install::ensure(install::From::Pip, "pyyaml", || {
        install::python_imports("yaml")
    }) {
        return skip(format!("python3 has no PyYAML: {why}"));
    }
    let pid = std::process::id();
    let prefix = format!("kmesh-{pid}-");
    let network = format!("netperf-ng-kmesh-{pid}");
    let mut played = Played::new(&podman, &prefix, &["--replicas", MESH_REPLICAS, MESH]);
    let key = std::env::temp_dir().join(format!("kmesh-{pid}.key"));
    played.files.push(key.clone());
    std::fs::write(&key, random_key()).unwrap();
    let image = played.image_and_turn();
    let started = Instant::now();
    let octet = podman.create_network(&network, 248..=252);
    played.network = Some(network.clone());

    let secret = format!("netperf-ng-mesh-key/key={}", key.display());
    let peers = format!("netserver:--mesh-peers=198.18.{octet}.0/24");
    let out = script(
        &podman,
        &[
            "--network",
            &network,
            "--image",
            &image,
            "--prefix",
            &prefix,
            "--ulimit",
            ULIMITS[1],
            "--ulimit",
            ULIMITS[3],
            "--replicas",
            MESH_REPLICAS,
            "--secret-file",
            &secret,
            "--set-arg",
            &peers,
            "--set-arg",
            "netagg:--duration=1",
            "--set-arg",
            "netagg:--tests=TCP_STREAM",
            "--job-timeout",
            "120",
            MESH,
        ],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "scripts/kube-play: {stdout}{stderr}");
    let job = format!("{prefix}netagg-mesh-netagg");
    let state = podman.ok(&[
        "inspect",
        "--format",
        "{{.State.Status}} {{.State.ExitCode}}",
        &job,
    ]);
    assert_eq!(state.trim(), "exited 0", "{stdout}{stderr}");

    // The endpoints the Job found through the headless Service's name are
    // the three pods.
    let servers: Vec<String> = (1..=3)
        .map(|i| format!("{prefix}netserver-mesh-{i}"))
        .collect();
    let addresses: Vec<String> = servers
        .iter()
        .map(|pod| pod_address(&podman, pod, &network))
        .collect();
    let results = volume_dir(&podman, &format!("{prefix}netagg-mesh-results"));
    let json = std::fs::read_to_string(results.join("mesh/mesh.json"))
        .unwrap_or_else(|e| panic!("no mesh.json in the Job's emptyDir ({e}): {stdout}{stderr}"));
    let mesh: serde_json::Value = serde_json::from_str(&json).expect("mesh.json");
    let mut names: Vec<&str> = mesh["endpoints"]
        .as_array()
        .unwrap_or_else(|| panic!("{mesh:#}"))
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    let mut want: Vec<&str> = addresses.iter().map(String::as_str).collect();
    want.sort_unstable();
    assert_eq!(names, want, "{mesh:#}");
    assert!(mesh["findings"].is_array(), "{mesh:#}");
    assert_eq!(mesh["duration"], 1, "{mesh:#}");

    // Every ordered pair measured once, none failed.
    let pairs = mesh["pairs"].as_array().unwrap();
    let mut measured = std::collections::BTreeSet::new();
    for pair in pairs {
        let (src, dst) = (pair["src"].as_str().unwrap(), pair["dst"].as_str().unwrap());
        let value = &pair["values"]["tcp_stream_throughput"]["value"];
        assert!(
            pair["outcome"] == "ok" && value.as_f64().is_some_and(|v| v > 0.0),
            "{pair}: {stdout}{stderr}"
        );
        assert_ne!(src, dst);
        measured.insert((src, dst));
    }
    assert_eq!((pairs.len(), measured.len()), (6, 6), "{mesh:#}");

    // Each test ran from its source's netserver: each pod's log has its
    // two, toward the other two pods.
    for (server, address) in servers.iter().zip(&addresses) {
        let logs = podman.run(&["logs", &format!("{server}-netserver")], COMMAND_LIMIT);
        let log = text(&logs.stdout) + &text(&logs.stderr);
        let done = log.lines().filter(|l| l.ends_with(": done")).count();
        assert_eq!(done, 2, "{server}: {log}");
        for other in addresses.iter().filter(|a| *a != address) {
            let line = format!("mesh TCP_STREAM to {other}:12865 for 1 s: done");
            assert!(log.contains(&line), "{server}: no {line:?} in {log}");
        }
    }
    eprintln!(
        "kube_play_tests: the mesh played and checked in {:.0?}",
        started.elapsed()
    );
}

/// A mesh key for one run: 24 random bytes, hex.
fn random_key() -> String {
    let mut bytes = [0u8; 24];
    std::io::Read::read_exact(
        &mut std::fs::File::open("/dev/urandom").unwrap(),
        &mut bytes,
    )
    .unwrap();
    bytes.iter().map(|b| format!("{b:02x}")).collect::<String>() + "\n"
}

/// The mesh's pod specs as the script plays them, printed (no engine
/// needed): the DaemonSet as three pods standing in for three nodes, each
/// with the peers from the ConfigMap in its args and the key, given with
/// --secret-file, as a directory in place of the Secret volume (written
/// only when played); the Job's --k8s-selector played as --hosts-dns of
/// the mesh's headless Service, after the subcommand (played by
/// mesh_plays_under_podman_kube_play).
#[test]
fn mesh_pod_specs_as_played() {
    if let Err(why) = install::ensure(install::From::Pip, "pyyaml", || {
        install::python_imports("yaml")
    }) {
        return skip(format!("python3 has no PyYAML: {why}"));
    }
    let key = std::env::temp_dir().join(format!("ngkube-mesh-{}.key", std::process::id()));
    std::fs::write(&key, "a key of more than sixteen bytes\n").unwrap();
    let secret = format!("netperf-ng-mesh-key/key={}", key.display());
    let prefix = format!("kubemesh-{}-", std::process::id());
    let printed = run_with_limit(
        SCRIPT,
        &[
            "--print",
            "--prefix",
            &prefix,
            "--replicas",
            "netserver-mesh=3",
            "--secret-file",
            &secret,
            MESH,
        ],
        SCRIPT_LIMIT,
    );
    let _ = std::fs::remove_file(&key);
    assert!(printed.status.success(), "{}", text(&printed.stderr));
    let pods = yaml_documents(&printed.stdout);
    let names: Vec<&str> = pods
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap())
        .collect();
    let want: Vec<String> = [
        "netserver-mesh-1",
        "netserver-mesh-2",
        "netserver-mesh-3",
        "netagg-mesh",
    ]
    .iter()
    .map(|n| format!("{prefix}{n}"))
    .collect();
    assert_eq!(names, want);
    let peers = std::fs::read_to_string(format!("{MESH}/mesh-peers-configmap.yaml")).unwrap();
    for pod in &pods {
        let name = pod["metadata"]["name"].as_str().unwrap();
        let volume = pod["spec"]["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == "mesh-key")
            .unwrap_or_else(|| panic!("{pod}"));
        let dir = volume["hostPath"]["path"]
            .as_str()
            .unwrap_or_else(|| panic!("{pod}"));
        assert!(volume.get("secret").is_none() && dir.ends_with(&format!("{name}-mesh-key")));
        assert!(!std::path::Path::new(dir).exists(), "--print wrote {dir}");
        let args: Vec<&str> = pod["spec"]["containers"][0]["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        if name.ends_with("netagg-mesh") {
            assert_eq!(
                args[..4],
                [
                    "netagg",
                    "mesh",
                    "--hosts-dns",
                    "netserver-mesh.netperf-ng.svc.cluster.local"
                ]
            );
            assert!(!args.contains(&"--k8s-selector"), "{args:?}");
        } else {
            let given = args[args.iter().position(|a| *a == "--mesh-peers").unwrap() + 1];
            assert!(
                !given.contains("$(") && peers.contains(&format!("peers: \"{given}\"")),
                "{given}"
            );
        }
    }
}
