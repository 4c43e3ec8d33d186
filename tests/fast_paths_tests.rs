//! `--gso N`, `--gro` and `--skip-rx-copy` end to end: refused in one line
//! where they cannot apply, and honest where they run — every datagram
//! count in wire datagrams, checked against the kernel's own UDP counters
//! (/proc/net/snmp) in a network namespace of the test's own, where no
//! other traffic moves them; every byte counted when none is copied.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::time::Duration;

/// netperf with `args` against a port nothing listens on: what the command
/// line alone decides.
fn refused(args: &[&str]) -> String {
    let port = closed_port().to_string();
    let mut all = vec!["-H", "127.0.0.1", "-p", port.as_str(), "-l", "1"];
    all.extend_from_slice(args);
    let out = run_with_limit(&NETPERF, &all, Duration::from_secs(30));
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{args:?} ran: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    err
}

#[test]
fn options_that_cannot_apply_are_refused_in_one_line() {
    let cases = [
        ("-t UDP_STREAM -- --gso 0", "between 1 and 64"),
        ("-t UDP_STREAM -- --gso 65", "between 1 and 64"),
        ("-t UDP_STREAM -- --gso many", "not a number"),
        ("-t UDP_STREAM -- --gso", "needs a value"),
        ("-t UDP_STREAM -- --gso 8", "needs the message size"),
        ("-t UDP_STREAM -- --gso 64 -m 1472", "at most 44 segments"),
        ("-t UDP_STREAM -- --gso 8 -m 9000", "1 to 1472 bytes"),
        (
            "-t TCP_STREAM -- --gso 8 -m 1000",
            "--gso sends UDP stream datagrams",
        ),
        ("-t TCP_MAERTS -- --gro", "--gro receives UDP"),
        ("-t UDP_RR -- --gro", "--gro receives UDP"),
        (
            "-t UDP_STREAM -- --skip-rx-copy",
            "--skip-rx-copy receives a TCP stream",
        ),
        (
            "-t TCP_RR -- --skip-rx-copy",
            "--skip-rx-copy receives a TCP stream",
        ),
        ("-t UDP_STREAM -- -m 1000 --gso 8 --mmsg 8", "choose one"),
        ("-t TCP_STREAM -- --skip-rx-copy --flows 2", "one flow only"),
        ("-t DG_STREAM -- -m 1000 --gso 8", "AF_UNIX"),
        ("-t UDP_STREAM -v 2 -- -m 1000 --gso 8", "per-call timing"),
    ];
    for (line, says) in cases {
        let args: Vec<&str> = line.split_whitespace().collect();
        let err = refused(&args);
        assert!(err.contains(says), "{line}: {err}");
    }
}

#[test]
fn skipping_the_copy_counts_every_byte() {
    let server = Server::start("127.0.0.1");
    // A byte count ends each test: the receiver counts every byte it took
    // up to it, none copied.
    for test in ["TCP_STREAM", "TCP_MAERTS"] {
        let out = run_ok(
            &server,
            &[
                "-t",
                test,
                "-l",
                "-5000000",
                "--",
                "--skip-rx-copy",
                "-k",
                "LOCAL_BYTES_SENT,LOCAL_BYTES_RECVD,REMOTE_BYTES_SENT,REMOTE_BYTES_RECVD",
            ],
        );
        let v = keyvals(&out);
        let (sent, received) = match test {
            "TCP_STREAM" => (v["LOCAL_BYTES_SENT"], v["REMOTE_BYTES_RECVD"]),
            _ => (v["REMOTE_BYTES_SENT"], v["LOCAL_BYTES_RECVD"]),
        };
        // The sender ends with a whole message past the count; the
        // receiver stops once the count has arrived (as the copying loop
        // does), so it may leave the tail of that last message unread.
        assert!(received >= 5_000_000.0, "{test}: {out}");
        assert!(
            received <= sent && sent - received < 65_536.0,
            "{test}: {out}"
        );
    }
}

/// `--gso` and `--gro` over many flows: every flow's sends carry 8
/// datagrams and netserver's coalesced receives count each, so messages and
/// bytes agree in wire datagrams on both ends.
#[test]
fn many_flows_count_segmented_and_coalesced_datagrams() {
    let server = Server::start("127.0.0.1");
    let line = "-t UDP_STREAM -l 1 -- -m 1000 --gso 8 --gro --flows 4 -k \
                LOCAL_SEND_CALLS,LOCAL_BYTES_SENT,REMOTE_RECV_CALLS,REMOTE_BYTES_RECVD,FLOWS";
    let out = run_ok(&server, &line.split_whitespace().collect::<Vec<_>>());
    let v = keyvals(&out);
    let (sent, got) = (v["LOCAL_SEND_CALLS"] as i64, v["REMOTE_RECV_CALLS"] as i64);
    assert!(got > 0 && sent % 8 == 0 && got <= sent, "{out}");
    assert_eq!(v["LOCAL_BYTES_SENT"] as i64, sent * 1000, "{out}");
    assert_eq!(v["REMOTE_BYTES_RECVD"] as i64, got * 1000, "{out}");
    assert_eq!(v["FLOWS"], 4.0, "{out}");
}

#[test]
fn a_gro_receiver_grows_its_buffer_unless_one_is_asked_for() {
    let server = Server::start("127.0.0.1");
    let rsr = |extra: &[&str]| {
        let mut args = vec![
            "-t",
            "UDP_STREAM",
            "-l",
            "1",
            "--",
            "-m",
            "1000",
            "--gso",
            "8",
            "--gro",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-k", "RSR_SIZE_END"]);
        keyvals(&run_ok(&server, &args))["RSR_SIZE_END"]
    };
    let default: f64 = std::fs::read_to_string("/proc/sys/net/core/rmem_default")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(212_992.0);
    let max: f64 = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(default);
    // 4 MiB, past rmem_max as root (the kernel reports twice what it was
    // asked), else as far as rmem_max lets.
    let grown = rsr(&[]);
    let root = unsafe { libc::geteuid() } == 0;
    let want = if root {
        8.0 * 1024.0 * 1024.0
    } else {
        default.max(2.0 * max.min(4194304.0))
    };
    assert!(grown >= want, "{grown} < {want}");
    // -S is what the user asked: kept (doubled by the kernel, as ever).
    assert_eq!(rsr(&["-S", "65536"]), 131_072.0);
}

/// `KEY=value` lines as numbers (the non-numeric ones dropped).
fn keyvals(out: &str) -> BTreeMap<String, f64> {
    out.lines()
        .filter_map(|l| l.split_once('='))
        .filter_map(|(k, v)| Some((k.trim().to_string(), v.trim().parse().ok()?)))
        .collect()
}

/// The Udp counters of /proc/net/snmp, by name, from its two Udp lines.
fn udp_counters(header: &str, values: &str) -> BTreeMap<String, i64> {
    header
        .split_whitespace()
        .zip(values.split_whitespace())
        .skip(1)
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect()
}

/// One run's -k values and the Udp counters' deltas over it.
type Run = (BTreeMap<String, f64>, BTreeMap<String, i64>);

/// Runs each netperf command line (its words after `-H 127.0.0.1 -l 1`)
/// in a network namespace of its own with our netserver, and returns per
/// run its -k values and the Udp counters' deltas over it.
fn in_namespace(runs: &[&str]) -> Option<Vec<Run>> {
    if fast_tier_skips("needs root (a network namespace of its own)") {
        return None;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip("the /proc/net/snmp checks need root (unshare -n)");
        return None;
    }
    // netserver is bounded by `timeout` in case the shell is killed; the
    // namespace goes with its last process.
    let script = format!(
        "ip link set lo up || exit 97
         timeout 120 {netserver} -D -p 12865 >/dev/null 2>&1 &
         ns=$!
         trap 'kill $ns 2>/dev/null' EXIT
         sleep 0.5
         snap() {{ grep '^Udp:' /proc/net/snmp | tr '\\n' ';'; echo; }}
         for run in \"$@\"; do
           echo \"SNMP $(snap)\"
           {netperf} -H 127.0.0.1 -l 1 $run 2>&1
           echo \"SNMP $(snap)\"
           echo END
         done",
        netserver = NETSERVER.path(),
        netperf = NETPERF.path(),
    );
    let mut args = vec!["-n", "sh", "-c", script.as_str(), "sh"];
    args.extend_from_slice(runs);
    let out = run_with_limit("unshare", &args, Duration::from_secs(120));
    if out.status.code() == Some(97) || !out.status.success() && out.stdout.is_empty() {
        skip(format!(
            "no network namespace here: {}",
            text(&out.stderr).trim()
        ));
        return None;
    }
    let stdout = text(&out.stdout);
    let mut results = Vec::new();
    for block in stdout.split("END\n").filter(|b| b.contains("SNMP")) {
        let snaps: Vec<BTreeMap<String, i64>> = block
            .lines()
            .filter_map(|l| l.strip_prefix("SNMP "))
            .map(|l| {
                let mut parts = l.split(';');
                udp_counters(parts.next().unwrap_or(""), parts.next().unwrap_or(""))
            })
            .collect();
        assert_eq!(snaps.len(), 2, "{stdout}");
        let delta = snaps[1]
            .iter()
            .map(|(k, v)| (k.clone(), v - snaps[0][k]))
            .collect();
        results.push((keyvals(block), delta));
    }
    assert_eq!(results.len(), runs.len(), "{stdout}");
    Some(results)
}

/// The datagrams the kernel counted as dropped against those `--seq`
/// counted lost: the same, but for what neither counts — the end marks
/// (dropped, never numbered) and what the receiver left unread in its
/// queue when it closed at its end of the test (freed uncounted: at most
/// its receive buffer — as the test reports it, else the default — of
/// 1000-byte datagrams, and a train more).
fn same_losses(kernel: i64, lost: i64, v: &BTreeMap<String, f64>, snmp: &BTreeMap<String, i64>) {
    let default: i64 = std::fs::read_to_string("/proc/sys/net/core/rmem_default")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(212_992);
    let rmem = ["RSR_SIZE_END", "LSR_SIZE_END"]
        .iter()
        .find_map(|k| v.get(*k))
        .map_or(default, |b| *b as i64);
    let uncounted = END_MARKS + rmem / 1000 + 8;
    assert!(
        (kernel - lost).abs() <= uncounted,
        "kernel {kernel}, --seq {lost}: {v:?} {snmp:?}"
    );
}

/// The selectors of datagrams sent, received and lost, and bytes received,
/// netperf sending and netserver sending.
const FORWARD: [&str; 4] = [
    "LOCAL_SEND_CALLS",
    "REMOTE_RECV_CALLS",
    "REMOTE_DGRAMS_LOST",
    "REMOTE_BYTES_RECVD",
];
const REVERSE: [&str; 4] = [
    "REMOTE_SEND_CALLS",
    "LOCAL_RECV_CALLS",
    "LOCAL_DGRAMS_LOST",
    "LOCAL_BYTES_RECVD",
];

/// netperf's end of a UDP stream test sends up to three zero-length
/// datagrams: they leave as datagrams of their own.
const END_MARKS: i64 = 3;

#[test]
fn datagram_counts_are_wire_datagrams_as_the_kernel_counts_them() {
    let Some(runs) = in_namespace(&[
        &format!(
            "-t UDP_STREAM -- -m 1000 --gso 8 --seq -k {}",
            FORWARD.join(",")
        ),
        // --gro grows the receive buffer unless one is asked for: a small
        // one keeps what is left unread at the end, uncounted, small.
        &format!(
            "-t UDP_STREAM -- -m 1000 --gso 8 --gro -S 106496 --seq -k {},RSR_SIZE_END",
            FORWARD.join(",")
        ),
        &format!(
            "-t omni -- -d recv -T udp -m ,1000 --gso 8 --gro -s 106496 --seq -k {},LSR_SIZE_END",
            REVERSE.join(",")
        ),
        "-t UDP_STREAM -- -m 1000 --gso 8 --gro --flows 4 -k LOCAL_SEND_CALLS,REMOTE_RECV_CALLS,REMOTE_BYTES_RECVD",
    ]) else {
        return;
    };
    let n = |v: &BTreeMap<String, f64>, k: &str| v[k] as i64;
    // (sent, received, lost) datagrams by their -k names: every one sent
    // is received or counted lost, and each 1000-byte datagram's bytes are
    // there.
    let datagrams = |v: &BTreeMap<String, f64>, [sent, got, lost, bytes]: [&str; 4]| {
        let (sent, got, lost) = (n(v, sent), n(v, got), n(v, lost));
        assert!(got > 0 && sent % 8 == 0, "{v:?}");
        assert_eq!(sent, got + lost, "{v:?}");
        assert_eq!(n(v, bytes), got * 1000, "{v:?}");
        (sent, got, lost)
    };

    // --gso alone: the kernel counts a segmented send once on the way out
    // and cuts it into datagrams for a receiver without UDP_GRO, which it
    // counts one by one on the way in (the end mark too) or as dropped.
    let (v, snmp) = &runs[0];
    let (sent, got, lost) = datagrams(v, FORWARD);
    assert_eq!(snmp["OutDatagrams"], sent / 8 + END_MARKS, "{v:?} {snmp:?}");
    assert!(
        (0..=1).contains(&(snmp["InDatagrams"] - got)),
        "{v:?} {snmp:?}"
    );
    // Lost in the receive buffer one by one, or whole (NoPorts) when a send
    // arrived after the receiver's socket closed at its end of the test.
    same_losses(snmp["RcvbufErrors"] + 8 * snmp["NoPorts"], lost, v, snmp);

    // With --gro the kernel hands (and counts, or drops) each send whole:
    // every one of them is 8 datagrams on our counts.
    let (v, snmp) = &runs[1];
    let (sent, got, lost) = datagrams(v, FORWARD);
    assert_eq!(snmp["OutDatagrams"], sent / 8 + END_MARKS, "{v:?} {snmp:?}");
    let trains = snmp["InDatagrams"] - got / 8;
    assert!((0..=1).contains(&trains), "{v:?} {snmp:?}");
    same_losses(8 * (snmp["RcvbufErrors"] + snmp["NoPorts"]), lost, v, snmp);

    // Four flows: each send is one datagram out (plus each flow's three
    // end marks), and netserver takes each send whole.
    let (v, snmp) = &runs[3];
    let (sent, got) = (n(v, "LOCAL_SEND_CALLS"), n(v, "REMOTE_RECV_CALLS"));
    assert!(got > 0 && sent % 8 == 0 && got <= sent, "{v:?}");
    assert_eq!(n(v, "REMOTE_BYTES_RECVD"), got * 1000, "{v:?}");
    let marks = 4 * END_MARKS;
    assert!(
        (0..=marks).contains(&(snmp["OutDatagrams"] - sent / 8)),
        "{v:?} {snmp:?}"
    );
    assert!(
        (0..=marks).contains(&(snmp["InDatagrams"] - got / 8)),
        "{v:?} {snmp:?}"
    );

    // The other way: netserver segments, netperf coalesces.
    let (v, snmp) = &runs[2];
    let (sent, got, lost) = datagrams(v, REVERSE);
    let trains = snmp["InDatagrams"] - got / 8;
    assert!((0..=1).contains(&trains), "{v:?} {snmp:?}");
    assert!(
        (0..=END_MARKS).contains(&(snmp["OutDatagrams"] - sent / 8)),
        "{v:?} {snmp:?}"
    );
    same_losses(8 * (snmp["RcvbufErrors"] + snmp["NoPorts"]), lost, v, snmp);
}
