//! The TCP_INFO figures of both ends (-D, LOCAL_/REMOTE_TCP_* selectors):
//! our netserver's series beside our intervals in every output, the
//! selectors' columns on the interim lines only when selected, and a
//! series a netserver garbles refused in one clear line. Counts and
//! presence only, never timings.

mod common;
use common::*;
use netperf_ng::wire::{kind, Message, MESSAGE_LEN};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::Duration;

const SCHEMA: &str = include_str!("../docs/omni-output.schema.json");

/// TCP_STREAM with -D 0.5 and `-J selectors` through the proxy on `port`.
fn through_proxy(port: u16, selectors: &str) -> std::process::Output {
    let port = port.to_string();
    let args = [
        "-H",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "TCP_STREAM",
        "-l",
        "1",
    ];
    let mut args = args.to_vec();
    args.extend_from_slice(&["-D", "0.5", "--", "-J", selectors]);
    run_with_limit(&NETPERF, &args, Duration::from_secs(60))
}

#[test]
fn the_netservers_series_comes_beside_ours() {
    let server = Server::start("127.0.0.1");
    // --tcp-info: our line under each interim, the netserver's after the test.
    let (out, ours) = tcp_interims_verbose(&server);
    let theirs: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("Interim TCP (netserver): rtt "))
        .collect();
    assert!(ours >= 2, "{out}");
    // Its intervals run from its accept to the end: as many as ours, give
    // or take the one at either end.
    assert!(
        theirs.len() + 1 >= ours && theirs.len() <= ours + 1,
        "{out}"
    );
    assert!(
        theirs.iter().all(|l| l.contains(" seconds into the test")),
        "{out}"
    );
    // Without --tcp-info nothing is asked, even at -v 2: no netserver
    // lines (checked by tcp_interims_verbose).

    // -J: `remote_tcp` beside `tcp`, valid to the schema; the netserver
    // sends in TCP_MAERTS, so its round trip and window are measured.
    let schema: serde_json::Value = serde_json::from_str(SCHEMA).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    for test in ["TCP_STREAM", "TCP_MAERTS"] {
        let out = run_ok(
            &server,
            &[
                "-t",
                test,
                "-l",
                "2",
                "-D",
                "0.5",
                "--",
                "-J",
                "THROUGHPUT,LOCAL_TCP_RTT,REMOTE_TCP_RTT,REMOTE_TCP_BUSY",
            ],
        );
        let doc = json_of(&out);
        let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{test}: {errors:?}");
        let interims = doc["interim"].as_array().unwrap();
        let paired: Vec<&serde_json::Value> = interims
            .iter()
            .filter_map(|i| i.get("remote_tcp"))
            .collect();
        assert!(paired.len() >= 2, "{test}: {doc}");
        for t in &paired {
            assert!(t["rtt_us"].as_u64().unwrap() > 0, "{test}: {t}");
            assert!(t["snd_cwnd"].as_u64().unwrap() > 0, "{test}: {t}");
        }
        let results = &doc["results"];
        assert!(
            results["REMOTE_TCP_RTT"]["value"].as_f64().unwrap() > 0.0,
            "{doc}"
        );
        assert_eq!(results["REMOTE_TCP_RTT"]["unit"], "us");
        assert!(
            results["LOCAL_TCP_RTT"]["value"].as_f64().unwrap() > 0.0,
            "{doc}"
        );
        let busy = results["REMOTE_TCP_BUSY"]["value"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&busy), "{doc}");
        if test == "TCP_MAERTS" {
            assert!(busy > 0.0, "the sending netserver was never busy: {doc}");
        }
    }
}

#[test]
fn selected_columns_follow_netperfs_four_fields_and_only_then() {
    let server = Server::start("127.0.0.1");
    let interim_lines = |out: &str| -> Vec<Vec<String>> {
        out.lines()
            .skip(1)
            .take_while(|l| !l.starts_with("Throughput"))
            .map(|l| l.split(',').map(String::from).collect())
            .collect()
    };
    // TCP_STREAM with -D and `style` (-o or -k) of `selectors`.
    let tcp_stream = |style: &str, selectors: &str| {
        let args = [
            "-t",
            "TCP_STREAM",
            "-l",
            "2",
            "-D",
            "0.5",
            "--",
            style,
            selectors,
        ];
        run_ok(&server, &args)
    };
    let csv = |selectors: &str| tcp_stream("-o", selectors);
    let plain = csv("THROUGHPUT,THROUGHPUT_UNITS");
    let lines = interim_lines(&plain);
    assert!(
        lines.len() >= 2 && lines.iter().all(|f| f.len() == 4),
        "{plain}"
    );

    let selected = "THROUGHPUT,LOCAL_TCP_RTT,REMOTE_TCP_CWND,LOCAL_TCP_BUSY,REMOTE_TCP_RETRANSMITS";
    let out = csv(selected);
    let lines = interim_lines(&out);
    assert!(lines.len() >= 2, "{out}");
    for f in &lines {
        assert_eq!(f.len(), 8, "{f:?}: {out}");
        assert!(f[4].parse::<u64>().unwrap() > 0, "local rtt: {out}");
        let busy: f64 = f[6].parse().unwrap();
        assert!((0.0..=100.0).contains(&busy), "{out}");
    }
    // The netserver's columns are filled in most intervals (its first
    // and last may lie too far from ours in time to pair).
    let remote = lines.iter().filter(|f| !f[5].is_empty()).count();
    assert!(remote + 2 >= lines.len() && remote >= 1, "{out}");
    // The final line: the whole test.
    let last = out.lines().last().unwrap();
    let fields: Vec<&str> = last.split(',').collect();
    assert_eq!(fields.len(), 5, "{out}");
    assert!(fields[2].parse::<u64>().unwrap() > 0, "{out}");

    // Not a TCP test: empty columns, the lines still of the same shape.
    let udp = run_ok(
        &server,
        &[
            "-t",
            "UDP_RR",
            "-l",
            "1",
            "-D",
            "0.5",
            "--",
            "-o",
            "THROUGHPUT,LOCAL_TCP_RTT",
        ],
    );
    let lines = interim_lines(&udp);
    assert!(!lines.is_empty(), "{udp}");
    assert!(
        lines.iter().all(|f| f.len() == 5 && f[4].is_empty()),
        "{udp}"
    );

    // -k: one more line per interval and column, after netperf's four.
    let out = tcp_stream("-k", "THROUGHPUT,LOCAL_TCP_CWND,REMOTE_TCP_RTT");
    let keys: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("NETPERF_"))
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .collect();
    assert!(keys.len() >= 12 && keys.len().is_multiple_of(6), "{out}");
    for (n, chunk) in keys.chunks(6).enumerate() {
        assert_eq!(chunk[0], format!("NETPERF_INTERIM_RESULT[{n}]"));
        assert_eq!(chunk[3], format!("NETPERF_ENDING[{n}]"));
        assert_eq!(chunk[4], format!("NETPERF_LOCAL_TCP_CWND[{n}]"));
        assert_eq!(chunk[5], format!("NETPERF_REMOTE_TCP_RTT[{n}]"));
    }
    assert!(
        out.lines().any(|l| l.starts_with("REMOTE_TCP_RTT=")),
        "{out}"
    );
}

/// What the proxy does to each series message.
type Garble = fn(&mut Message);
/// The proxy's answer in netserver's place to a request, if it has one.
type Answer = fn(&Message) -> Option<Message>;

/// Forward a netperf's control connection to `server`, answering a request
/// itself where `answer` does, and applying `garble` to each message of the
/// TCP_INFO series on its way back. Returns the port to point netperf at
/// and the forwarding thread.
fn garbling_proxy(
    server: &Server,
    answer: Answer,
    garble: Garble,
) -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let upstream = (server.host.clone(), server.port);
    let thread = std::thread::spawn(move || {
        let (client, _) = listener.accept().unwrap();
        let up = TcpStream::connect((upstream.0.as_str(), upstream.1)).unwrap();
        for s in [&client, &up] {
            s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        }
        let (mut c_read, mut u_write) = (client.try_clone().unwrap(), up.try_clone().unwrap());
        let mut c_answer = client.try_clone().unwrap();
        let onward = std::thread::spawn(move || {
            let mut frame = [0u8; MESSAGE_LEN];
            while c_read.read_exact(&mut frame).is_ok() {
                let sent = match answer(&Message::from_bytes(frame)) {
                    Some(reply) => c_answer.write_all(&reply.bytes),
                    None => u_write.write_all(&frame),
                };
                if sent.is_err() {
                    break;
                }
            }
            let _ = u_write.shutdown(Shutdown::Write);
        });
        let (mut u_read, mut c_write) = (up, client);
        let mut frame = [0u8; MESSAGE_LEN];
        while u_read.read_exact(&mut frame).is_ok() {
            let mut m = Message::from_bytes(frame);
            if m.kind() == kind::NG_TCP_SERIES {
                garble(&mut m);
            }
            if c_write.write_all(&m.bytes).is_err() {
                break;
            }
        }
        let _ = c_write.shutdown(Shutdown::Both);
        let _ = onward.join();
    });
    (port, thread)
}

#[test]
fn a_garbled_series_is_a_clear_error() {
    let server = Server::start("127.0.0.1");
    let cases: [(Garble, &str); 3] = [
        // More intervals than any netserver keeps.
        (|m| m.set_data_u32(1, 5_000_000), "at most 3600"),
        // Another message in its place.
        (
            |m| *m = Message::new(kind::OMNI_RESULTS, 0),
            "where its TCP_INFO series",
        ),
        // A share beyond the whole interval.
        (|m| m.set_data_u32(6 + 11, u32::MAX), "millionths"),
    ];
    for (garble, says) in cases {
        let (port, proxy) = garbling_proxy(&server, |_| None, garble);
        let out = through_proxy(port, "THROUGHPUT");
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{says}: {stderr}");
        assert!(
            stderr.contains("bad TCP_INFO series") && stderr.contains(says),
            "{says}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        proxy.join().unwrap();
    }
}

/// A netperf-ng netserver from before the TCP_INFO flag refuses the
/// request as unknown (EINVAL): netperf asks once more without it, and the
/// test runs with our end's figures alone.
#[test]
fn a_netserver_before_the_flag_is_asked_again_without_it() {
    use netperf_ng::wire::extension::Extension;
    use netperf_ng::wire::omni::OmniResponse;
    let server = Server::start("127.0.0.1");
    // As such a netserver answers: the request's block carries the flag.
    let (port, proxy) = garbling_proxy(
        &server,
        |m| {
            let flagged = m.kind() == kind::DO_OMNI
                && Extension::decode(m).is_ok_and(|e| e.is_some_and(|e| e.tcp_info_ms.is_some()));
            flagged.then(|| {
                OmniResponse {
                    serv_errno: libc::EINVAL,
                    ..Default::default()
                }
                .encode()
            })
        },
        |_| {},
    );
    let out = through_proxy(port, "THROUGHPUT,REMOTE_TCP_RTT");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success() && stderr.is_empty(),
        "{stdout}{stderr}"
    );
    assert_tcp_info_ours_alone(&json_of(&stdout));
    proxy.join().unwrap();
}
