//! Offloads on veth pairs: read (checked against `ethtool -k`), changed and
//! read back, restored by a guard; a fixed offload refused with nothing
//! changed; a missing interface named. Then the remote side: our netserver in
//! a namespace answers reads always and changes only with
//! `--allow-offload-changes`, restores when its client closes or is killed,
//! and a stock netserver is recognised as one.
//!
//! Each test makes its own namespace and veth pair (198.18.200.0/24 and up,
//! one /24 per test) and removes them also when it fails. Skipped, saying so,
//! when not root, without `ip netns`, on a kernel without ethtool netlink,
//! and in the fast tier.

mod common;
use common::{ip, skip};

use netperf_ng::control::offload::{NetserverAt, RemoteOffloadError, RemoteOffloads};
use netperf_ng::net::offload::{self, on_off, OffloadError, OffloadSnapshot, RestoreGuard};
use netperf_ng::wire::offload::Offload;
use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Port netserver listens on inside a test's own namespace (nothing else
/// is there).
const PORT: u16 = 12865;

/// A namespace holding one end of a veth pair; the other end stays here.
struct Bed {
    ns: String,
    local: String,
    remote: String,
    subnet: u8,
}

impl Bed {
    /// The bed for test `tag` on 198.18.`subnet`.0/24, or None (after
    /// skipping) where this host, or the fast tier, cannot make one.
    fn up(tag: char, subnet: u8) -> Option<Bed> {
        if common::fast_tier_skips("needs root (network namespaces, ethtool -K)") {
            return None;
        }
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            skip("offload tests need root (network namespaces, ethtool -K)");
            return None;
        }
        match offload::read("lo") {
            Err(OffloadError::KernelUnsupported) => {
                skip("this kernel has no ethtool netlink interface");
                return None;
            }
            Err(e) => panic!("reading the offloads of lo: {e}"),
            Ok(_) => {}
        }
        let pid = std::process::id() % 100_000;
        let bed = Bed {
            ns: format!("ngoff-{pid}-{tag}"),
            local: format!("ngo{pid}{tag}a"),
            remote: format!("ngo{pid}{tag}b"),
            subnet,
        };
        if !ip(&["netns", "add", &bed.ns]) {
            skip("'ip netns add' does not work here");
            return None;
        }
        let cidr = |host: u8| format!("198.18.{subnet}.{host}/24");
        let steps: [&[&str]; 7] = [
            &[
                "link",
                "add",
                &bed.local,
                "type",
                "veth",
                "peer",
                "name",
                &bed.remote,
            ],
            &["link", "set", &bed.remote, "netns", &bed.ns],
            &["addr", "add", &cidr(1), "dev", &bed.local],
            &["link", "set", &bed.local, "up"],
            &["-n", &bed.ns, "addr", "add", &cidr(2), "dev", &bed.remote],
            &["-n", &bed.ns, "link", "set", &bed.remote, "up"],
            &["-n", &bed.ns, "link", "set", "lo", "up"],
        ];
        for step in steps {
            assert!(ip(step), "ip {}", step.join(" "));
        }
        Some(bed)
    }

    fn remote_ip(&self) -> String {
        format!("198.18.{}.2", self.subnet)
    }

    /// `ethtool -k` of our end, or of the namespace's end, as offload ->
    /// on; None without the ethtool binary.
    fn ethtool(&self, remote: bool) -> Option<BTreeMap<String, bool>> {
        let output = if remote {
            Command::new("ip")
                .args(["netns", "exec", &self.ns, "ethtool", "-k", &self.remote])
                .output()
        } else {
            Command::new("ethtool").args(["-k", &self.local]).output()
        };
        let output = output.ok().filter(|o| o.status.success())?;
        let text = String::from_utf8_lossy(&output.stdout);
        Some(
            Offload::ALL
                .iter()
                .map(|o| {
                    let prefix = format!("{}: ", o.ethtool_name());
                    let line = text
                        .lines()
                        .find(|l| l.starts_with(&prefix))
                        .expect(&prefix);
                    (o.name().to_string(), line[prefix.len()..].starts_with("on"))
                })
                .collect(),
        )
    }

    /// `ethtool -K` on our end (a sub-feature, to make uneven states).
    fn ethtool_set(&self, feature: &str, on: bool) -> bool {
        Command::new("ethtool")
            .args(["-K", &self.local, feature, if on { "on" } else { "off" }])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        // Deleting one end of a veth pair deletes both.
        ip(&["link", "del", &self.local]);
        ip(&["netns", "delete", &self.ns]);
    }
}

fn on(snapshot: &OffloadSnapshot, offload: Offload) -> bool {
    snapshot.features[offload.name()]
}

#[test]
fn read_agrees_with_ethtool() {
    let Some(bed) = Bed::up('a', 200) else { return };
    let snapshot = offload::read(&bed.local).unwrap();
    assert_eq!(snapshot.interface, bed.local);
    assert_eq!(snapshot.mtu, Some(1500));
    assert_eq!(snapshot.features.len(), 4);
    match bed.ethtool(false) {
        Some(shown) => assert_eq!(snapshot.features, shown),
        None => eprintln!("no ethtool binary: not cross-checked"),
    }
    // veth: lro off and fixed; gro changeable.
    let states = offload::states(&bed.local).unwrap();
    let lro = &states[Offload::Lro.index()];
    assert!(lro.fixed && !lro.active);
    assert_eq!(lro.ethtool, "large-receive-offload: off [fixed]");
    assert!(!states[Offload::Gro.index()].fixed);
}

#[test]
fn set_off_and_on_reads_back() {
    let Some(bed) = Bed::up('b', 201) else { return };
    let before = offload::read(&bed.local).unwrap();
    let flipped: Vec<(Offload, bool)> = [Offload::Tso, Offload::Gso, Offload::Gro]
        .iter()
        .map(|&o| (o, !on(&before, o)))
        .collect();
    let after = offload::set(&bed.local, &flipped).unwrap();
    for &(o, wanted) in &flipped {
        assert_eq!(on(&after, o), wanted, "{o}");
    }
    assert_eq!(offload::read(&bed.local).unwrap(), after);
    if let Some(shown) = bed.ethtool(false) {
        assert_eq!(after.features, shown);
    }
    // And back; asking for the state it already has changes nothing.
    let back: Vec<(Offload, bool)> = flipped.iter().map(|&(o, v)| (o, !v)).collect();
    assert_eq!(offload::set(&bed.local, &back).unwrap(), before);
    assert_eq!(offload::set(&bed.local, &back).unwrap(), before);
    // A later pair for the same offload wins.
    let last = offload::set(&bed.local, &[(Offload::Gso, false), (Offload::Gso, true)]).unwrap();
    assert!(on(&last, Offload::Gso));
}

#[test]
fn a_restore_guard_puts_back_the_exact_state() {
    let Some(bed) = Bed::up('c', 202) else { return };
    // An uneven tso: one of its features off, the others on.
    assert!(bed.ethtool_set("tx-tcp6-segmentation", false));
    let uneven = offload::states(&bed.local).unwrap();
    let before = offload::read(&bed.local).unwrap();
    assert!(
        on(&before, Offload::Tso),
        "tso still reads on with one feature off"
    );

    let mut guard = RestoreGuard::capture(&[&bed.local], &Offload::ALL).unwrap();
    assert_eq!(guard.interfaces(), vec![bed.local.as_str()]);
    offload::set(
        &bed.local,
        &[
            (Offload::Tso, true),
            (Offload::Gro, true),
            (Offload::Gso, false),
        ],
    )
    .unwrap();
    let restored = guard.restore().unwrap();
    assert_eq!(restored, vec![before.clone()]);
    assert_eq!(
        offload::states(&bed.local).unwrap(),
        uneven,
        "tcp6 is off again, the rest on"
    );
    assert_eq!(
        guard.restore().unwrap(),
        vec![],
        "a spent guard does nothing"
    );

    // Dropping the guard restores too.
    {
        let _guard = RestoreGuard::capture(&[&bed.local], &[]).unwrap();
        offload::set(&bed.local, &[(Offload::Tso, false), (Offload::Gro, true)]).unwrap();
        assert_ne!(offload::read(&bed.local).unwrap(), before);
    }
    assert_eq!(offload::read(&bed.local).unwrap(), before);
    assert_eq!(offload::states(&bed.local).unwrap(), uneven);
}

#[test]
fn a_fixed_or_unapplied_offload_is_refused_and_nothing_stays_changed() {
    let Some(bed) = Bed::up('d', 203) else { return };
    let before = offload::read(&bed.local).unwrap();
    // lro is fixed off on veth: refused before gso changes.
    let e = offload::set(
        &bed.local,
        &[
            (Offload::Gso, !on(&before, Offload::Gso)),
            (Offload::Lro, true),
        ],
    )
    .unwrap_err();
    match &e {
        OffloadError::Refused {
            interface,
            offload,
            wanted,
            shown,
            ..
        } => {
            assert_eq!(
                (interface.as_str(), *offload, *wanted),
                (bed.local.as_str(), Offload::Lro, true)
            );
            assert_eq!(shown, "large-receive-offload: off [fixed]");
        }
        other => panic!("{other:?}"),
    }
    let text = e.to_string();
    assert!(
        text.contains("[fixed]") && text.ends_with("nothing was changed"),
        "{text}"
    );
    assert_eq!(offload::read(&bed.local).unwrap(), before);

    // gso needs scatter-gather: with sg off the kernel keeps gso off
    // ("[requested on]"), and the gro change asked with it is put back.
    assert!(bed.ethtool_set("sg", false));
    let without_sg = offload::read(&bed.local).unwrap();
    assert!(!on(&without_sg, Offload::Gso));
    let gro = !on(&without_sg, Offload::Gro);
    let e = offload::set(&bed.local, &[(Offload::Gro, gro), (Offload::Gso, true)]).unwrap_err();
    assert!(
        matches!(
            e,
            OffloadError::Refused {
                offload: Offload::Gso,
                wanted: true,
                ..
            }
        ),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.contains("'generic-segmentation-offload: off [requested on]'")
            && text.ends_with("what this call changed was put back"),
        "{text}"
    );
    assert_eq!(offload::read(&bed.local).unwrap(), without_sg);
    assert!(bed.ethtool_set("sg", true));
}

#[test]
fn a_missing_interface_is_named() {
    let Some(_bed) = Bed::up('h', 207) else {
        return;
    };
    let missing = "ngoffnone0";
    for result in [
        offload::read(missing).map(|_| ()),
        offload::set(missing, &[(Offload::Tso, false)]).map(|_| ()),
        RestoreGuard::capture(&[missing], &[]).map(|_| ()),
    ] {
        match result {
            Err(OffloadError::NoSuchInterface { interface }) => assert_eq!(interface, missing),
            other => panic!("{other:?}"),
        }
    }
    let text = offload::read(missing).unwrap_err().to_string();
    assert_eq!(
        text,
        "there is no network interface named 'ngoffnone0' here ('ip link' lists them)"
    );
}

/// A netserver in the bed's namespace, killed when dropped.
struct NsServer {
    child: Child,
}

impl Drop for NsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `program -D -L <remote ip> -p PORT extra...` in the namespace
/// (through `prefix`, e.g. setpriv) and wait until it accepts connections.
fn serve_in(bed: &Bed, program: &str, prefix: &[&str], extra: &[&str]) -> NsServer {
    serve_logging_in(bed, program, prefix, extra, None)
}

/// As `serve_in`, with the server's stderr (its log) in `log`.
fn serve_logging_in(
    bed: &Bed,
    program: &str,
    prefix: &[&str],
    extra: &[&str],
    log: Option<&std::path::Path>,
) -> NsServer {
    let stderr = match log {
        Some(path) => Stdio::from(std::fs::File::create(path).expect("create the log")),
        None => Stdio::null(),
    };
    let address = bed.remote_ip();
    let port = PORT.to_string();
    let child = Command::new("ip")
        .args(["netns", "exec", &bed.ns])
        .args(prefix)
        .arg(program)
        .args(["-D", "-L", &address, "-p", &port])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("spawn netserver in the namespace");
    let server = NsServer { child };
    let target: SocketAddr = format!("{address}:{PORT}").parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if TcpStream::connect_timeout(&target, Duration::from_millis(200)).is_ok() {
            return server;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{program} did not listen on {target}");
}

/// Poll the namespace's end until `ethtool -k` (or our read, without the
/// binary) shows `wanted`; false after 10 s.
fn remote_becomes(bed: &Bed, wanted: &BTreeMap<String, bool>) -> bool {
    remote_becomes_within(bed, wanted, Duration::from_secs(10))
}

/// As `remote_becomes`, waiting up to `limit`.
fn remote_becomes_within(bed: &Bed, wanted: &BTreeMap<String, bool>, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if bed.ethtool(true).as_ref() == Some(wanted) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn our_netserver_reads_always_and_changes_only_when_allowed() {
    let Some(bed) = Bed::up('e', 204) else { return };
    let _server = serve_in(&bed, &common::NETSERVER, &[], &[]);
    let mut remote = RemoteOffloads::connect(&bed.remote_ip(), PORT).unwrap();
    let state = remote.state().unwrap();
    assert_eq!(
        state.snapshot.interface, bed.remote,
        "the interface facing us"
    );
    assert_eq!(state.snapshot.mtu, Some(1500));
    assert_eq!(state.fixed, vec![Offload::Lro]);
    if let Some(shown) = bed.ethtool(true) {
        assert_eq!(state.snapshot.features, shown);
    }
    let e = remote.set(&[(Offload::Tso, false)]).unwrap_err();
    assert!(
        matches!(&e, RemoteOffloadError::NotAllowed { at, interface, .. }
            if *at == NetserverAt::new(&bed.remote_ip(), PORT) && *interface == bed.remote),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!(
            "the remote netserver at {} port {PORT} refused to change the offloads of {}: \
             offload changes are off: its operator must start netserver with --allow-offload-changes",
            bed.remote_ip(),
            bed.remote
        )
    );
    assert_eq!(
        remote.read().unwrap(),
        state.snapshot,
        "nothing changed, the connection still works"
    );
    // Another interface by name; a missing one is named.
    remote.set_interface(Some("lo"));
    assert_eq!(remote.read().unwrap().interface, "lo");
    remote.set_interface(Some("nosuchif0"));
    let e = remote.read().unwrap_err();
    assert!(
        matches!(e, RemoteOffloadError::NoSuchInterface { .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("'nosuchif0'"), "{e}");
}

#[test]
fn our_netserver_changes_when_allowed_and_restores_when_the_client_closes() {
    let Some(bed) = Bed::up('f', 205) else { return };
    let _server = serve_in(&bed, &common::NETSERVER, &[], &["--allow-offload-changes"]);
    let host = bed.remote_ip();
    let mut remote = RemoteOffloads::connect(&host, PORT).unwrap();
    let original = remote.read().unwrap();
    let changed = remote
        .set(&[(Offload::Tso, false), (Offload::Gro, true)])
        .unwrap();
    assert!(!on(&changed, Offload::Tso) && on(&changed, Offload::Gro));
    if let Some(shown) = bed.ethtool(true) {
        assert_eq!(changed.features, shown);
    }
    // lro is fixed there too.
    match remote.set(&[(Offload::Lro, true)]).unwrap_err() {
        RemoteOffloadError::Refused {
            offload,
            wanted,
            detail,
            ..
        } => {
            assert_eq!((offload, wanted), (Offload::Lro, true));
            assert!(detail.contains("[fixed]"), "{detail}");
        }
        other => panic!("{other:?}"),
    }
    // A second connection may read but not change what the first holds.
    let mut other = RemoteOffloads::connect(&host, PORT).unwrap();
    assert_eq!(other.read().unwrap(), changed);
    let e = other.set(&[(Offload::Gso, false)]).unwrap_err();
    assert!(matches!(e, RemoteOffloadError::Busy { .. }), "{e:?}");
    // An explicit restore, then a change left for the close to undo.
    assert_eq!(remote.restore().unwrap(), original);
    remote
        .set(&[(Offload::Gso, false), (Offload::Tso, false)])
        .unwrap();
    drop(remote);
    let wanted = original.features.clone();
    assert!(
        remote_becomes(&bed, &wanted),
        "restored after the client closed"
    );
    // Free now for the other connection.
    assert!(!on(
        &other.set(&[(Offload::Gso, false)]).unwrap(),
        Offload::Gso
    ));
    drop(other);
    assert!(remote_becomes(&bed, &wanted));
}

/// A file removed when dropped, also when the test fails.
struct Scratch(std::path::PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Poll (about 10 s) until `read` gives `wanted`.
fn becomes(read: impl Fn() -> Option<OffloadSnapshot>, wanted: &OffloadSnapshot) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if read().as_ref() == Some(wanted) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// The bare opt-in reaches the interface toward the client only: another
/// interface of the netserver's host is refused, naming the rule, and left
/// as it was. Listed with `--allow-offload-changes=IF`, it may change; each
/// change and refusal is in the log (without -v) with the client's address.
#[test]
fn offload_changes_reach_the_clients_route_and_the_listed_interfaces_only() {
    let Some(bed) = Bed::up('l', 211) else { return };
    // A second veth pair inside the namespace: not the client's route.
    let pid = std::process::id() % 100_000;
    let (foreign, foreign_peer) = (format!("ngo{pid}lc"), format!("ngo{pid}ld"));
    let add = [
        "-n",
        &bed.ns,
        "link",
        "add",
        &foreign,
        "type",
        "veth",
        "peer",
        "name",
        &foreign_peer,
    ];
    assert!(ip(&add), "ip {}", add.join(" "));
    let log = Scratch(std::env::temp_dir().join(format!("ngoff-{pid}-l.log")));
    let client = format!("198.18.{}.1:", bed.subnet);
    let host = bed.remote_ip();

    let server = serve_logging_in(
        &bed,
        &common::NETSERVER,
        &[],
        &["--allow-offload-changes"],
        Some(&log.0),
    );
    let mut remote = RemoteOffloads::connect(&host, PORT).unwrap();
    remote.set_interface(Some(&foreign));
    let before = remote.read().unwrap();
    let flip = [(Offload::Gso, !on(&before, Offload::Gso))];
    let e = remote.set(&flip).unwrap_err();
    let rule = format!(
        "not the interface toward the client 198.18.{}.1 ({}); netserver allows changes there \
         only, or on the interfaces its operator lists with --allow-offload-changes=IF[,IF]",
        bed.subnet, bed.remote
    );
    assert_eq!(
        e,
        RemoteOffloadError::NotAllowed {
            at: NetserverAt::new(&host, PORT),
            interface: foreign.clone(),
            detail: rule.clone(),
        }
    );
    assert_eq!(remote.read().unwrap(), before, "{foreign} was changed");
    // The client's own route may change.
    remote.set_interface(None);
    let route = remote.read().unwrap();
    let changed = remote
        .set(&[(Offload::Gso, !on(&route, Offload::Gso))])
        .unwrap();
    assert_ne!(changed, route);
    assert_eq!(remote.restore().unwrap(), route);
    drop(remote);
    drop(server);
    let logged = std::fs::read_to_string(&log.0).unwrap_or_default();
    assert!(
        logged.lines().any(|l| l.contains(&client)
            && l.contains(&format!("refused offload change on {foreign} (gso "))
            && l.ends_with(&rule)),
        "the refusal is not logged with the client and the rule:\n{logged}"
    );

    let listed = format!("--allow-offload-changes={foreign}");
    let _server = serve_logging_in(&bed, &common::NETSERVER, &[], &[&listed], Some(&log.0));
    let mut remote = RemoteOffloads::connect(&host, PORT).unwrap();
    remote.set_interface(Some(&foreign));
    let changed = remote.set(&flip).unwrap();
    assert_eq!(on(&changed, Offload::Gso), flip[0].1);
    drop(remote);
    let read = || {
        let mut r = RemoteOffloads::connect(&host, PORT).ok()?;
        r.set_interface(Some(&foreign));
        r.read().ok()
    };
    assert!(becomes(read, &before), "{foreign} restored at close");
    let set = format!("offloads of {foreign} set: gso {}", on_off(flip[0].1));
    for wanted in [set, format!("offloads of {foreign} restored")] {
        // The restore is logged just after it is made: a loaded machine
        // may show the offloads back before the line is written.
        let logged_with_client = || {
            let logged = std::fs::read_to_string(&log.0).unwrap_or_default();
            let found = logged
                .lines()
                .any(|l| l.contains(&client) && l.ends_with(&wanted));
            (found, logged)
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let (mut found, mut logged) = logged_with_client();
        while !found && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
            (found, logged) = logged_with_client();
        }
        assert!(
            found,
            "'{wanted}' is not logged with the client {client}:\n{logged}"
        );
    }
}

#[test]
fn netserver_restores_at_shutdown_what_open_connections_changed() {
    let Some(bed) = Bed::up('k', 210) else { return };
    let server = serve_in(&bed, &common::NETSERVER, &[], &["--allow-offload-changes"]);
    let Some(original) = bed.ethtool(true) else {
        return skip("no ethtool binary to watch the namespace's interface");
    };
    let mut remote = RemoteOffloads::connect(&bed.remote_ip(), PORT).unwrap();
    remote
        .set(&[(Offload::Gso, false), (Offload::Gro, true)])
        .unwrap();
    assert_ne!(bed.ethtool(true).as_ref(), Some(&original));
    // SIGTERM while the client stays connected (and idle).
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(
        unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) },
        0
    );
    assert!(remote_becomes(&bed, &original), "restored at shutdown");
    // Changes are refused from now on.
    assert!(remote.set(&[(Offload::Gso, false)]).is_err());
    assert_eq!(bed.ethtool(true).as_ref(), Some(&original));
}

#[test]
fn a_malformed_request_is_refused_and_the_connection_lives() {
    use netperf_ng::net::channel::Channel;
    use netperf_ng::wire::offload::{
        OffloadBits, OffloadOp, OffloadRequest, OffloadResponse, OffloadStatus,
    };
    let server = common::Server::start_with("127.0.0.1", &["--allow-offload-changes"]);
    let stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    let mut chan = Channel::new(stream);
    let mut hostile = OffloadRequest {
        op: OffloadOp::Set,
        interface: None,
        changes: OffloadBits::from_pairs(&[(Offload::Gso, false)]),
    }
    .encode();
    hostile.set_data_u32(2, 0xff); // offloads past lro
    hostile.bytes[8 + 20] = b'/'; // and a slash in the name
    chan.send(&hostile).unwrap();
    let answer = OffloadResponse::decode(&chan.recv(Duration::from_secs(10)).unwrap()).unwrap();
    assert_eq!(answer.status, OffloadStatus::BadRequest);
    assert!(
        answer.text.starts_with("netserver refused the request: "),
        "{}",
        answer.text
    );
    // Still serving on that connection: a read of the interface facing us.
    let mut remote = RemoteOffloads::from_channel(chan, NetserverAt::new("127.0.0.1", server.port));
    match remote.read() {
        Ok(snapshot) => assert_eq!(snapshot.interface, "lo"),
        Err(RemoteOffloadError::Io { detail, .. }) if detail.contains("ethtool netlink") => {}
        Err(e) => panic!("{e}"),
    }
}

/// A runner killed (SIGKILL, with the netperf it started) while its
/// changes to the remote offloads stand: netserver puts them back when the
/// connection drops. The runner is a real one, `netagg experiment`
/// switching the remote end's tso and gro to what they are not.
#[test]
fn a_killed_client_leaves_nothing_changed() {
    let Some(bed) = Bed::up('g', 206) else { return };
    let _server = serve_in(&bed, &common::NETSERVER, &[], &["--allow-offload-changes"]);
    let Some(original) = bed.ethtool(true) else {
        return skip("no ethtool binary to watch the namespace's interface");
    };
    let mut changed = original.clone();
    for offload in ["tso", "gro"] {
        changed.insert(offload.to_string(), !original[offload]);
    }
    let out = std::env::temp_dir().join(format!("ngoff-killed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let runner = Command::new(common::NETAGG)
        .args(["experiment", "--host", &bed.remote_ip()])
        .args(["--port", &PORT.to_string(), "--offload-ends", "remote"])
        .args(["--factor", &format!("tso={}", on_off(changed["tso"]))])
        .args(["--factor", &format!("gro={}", on_off(changed["gro"]))])
        .args([
            "--duration",
            "30",
            "--replicates",
            "1",
            "--no-store",
            "--out",
        ])
        .arg(&out)
        // Its own group, so that the kill takes its netperf too.
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let switched = remote_becomes_within(&bed, &changed, Duration::from_secs(30));
    // SAFETY: kill(2) on the process group our own child leads.
    unsafe { libc::kill(-(runner.id() as i32), libc::SIGKILL) };
    let said = runner
        .wait_with_output()
        .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
        .unwrap_or_default();
    let _ = std::fs::remove_dir_all(&out);
    assert!(switched, "the runner did not change the offloads: {said}");
    assert!(
        remote_becomes(&bed, &original),
        "restored after the client was killed"
    );
}

#[test]
fn a_netserver_without_privilege_says_so() {
    let Some(bed) = Bed::up('i', 208) else { return };
    let nobody = [
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
    ];
    let usable = Command::new("setpriv")
        .args(&nobody[1..])
        .args([&*common::NETSERVER, "-V"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !usable {
        return skip(
            "cannot run netserver as nobody (setpriv, or the build directory's permissions)",
        );
    }
    let _server = serve_in(
        &bed,
        &common::NETSERVER,
        &nobody,
        &["--allow-offload-changes"],
    );
    let mut remote = RemoteOffloads::connect(&bed.remote_ip(), PORT).unwrap();
    let before = remote.read().unwrap();
    let e = remote.set(&[(Offload::Tso, false)]).unwrap_err();
    assert!(
        matches!(e, RemoteOffloadError::PermissionDenied { .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("needs root or CAP_NET_ADMIN"), "{e}");
    assert_eq!(remote.read().unwrap(), before);
}

#[test]
fn a_stock_netserver_cannot_change_offloads() {
    let Some(stock) = common::stock_dir() else {
        return;
    };
    let Some(bed) = Bed::up('j', 209) else { return };
    let _server = serve_in(&bed, &format!("{stock}/netserver"), &[], &[]);
    let host = bed.remote_ip();
    let mut remote = RemoteOffloads::connect(&host, PORT).unwrap();
    let e = remote.read().unwrap_err();
    assert_eq!(
        e,
        RemoteOffloadError::NotNetperfNg {
            at: NetserverAt::new(&host, PORT)
        }
    );
    assert_eq!(
        e.to_string(),
        format!("the remote netserver at {host} port {PORT} is not netperf-ng (or predates offload control): it cannot read or change offloads")
    );
    // The connection survives the unknown request: ask again.
    assert!(matches!(
        remote.set(&[(Offload::Tso, false)]),
        Err(RemoteOffloadError::NotNetperfNg { .. })
    ));
}
