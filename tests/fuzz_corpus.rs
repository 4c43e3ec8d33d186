//! The fuzz corpora (fuzz/corpus/) on the stable toolchain: every
//! decode_message input through the fuzz target's own checks, and a few
//! session scripts against a live session, so CI exercises what the fuzzers
//! found without nightly; and the seeds are current (NETPERF_NG_WRITE_SEEDS=1
//! writes them again; docs/fuzzing.md says when).

use netperf_ng::fuzzing::script::{self, Step};
use netperf_ng::fuzzing::{decode, session, templates};
use netperf_ng::wire::extension::Extension;
use netperf_ng::wire::legacy;
use netperf_ng::wire::mesh;
use netperf_ng::wire::offload::Offload;
use netperf_ng::wire::offload::{
    OffloadBits, OffloadOp, OffloadRequest, OffloadResponse, OffloadStatus,
};
use netperf_ng::wire::omni::{OmniRequest, OmniResponse, OmniResults};
use netperf_ng::wire::system_facts::{self, SystemFacts};
use netperf_ng::wire::unix;
use netperf_ng::wire::{self, Message, MESSAGE_LEN};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn corpus(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target)
}

/// Every file of a corpus, by name, in name order.
fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(corpus(target))
        .unwrap_or_else(|e| panic!("fuzz/corpus/{target}: {e}"))
        .map(|entry| entry.expect("corpus entry").path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("read corpus file"))
        })
        .collect()
}

#[test]
fn decode_message_corpus_passes_the_fuzz_checks() {
    let started = Instant::now();
    let all = inputs("decode_message");
    assert!(all.len() >= 10, "the seeds are in git: {}", all.len());
    for (name, data) in &all {
        let outcome = std::panic::catch_unwind(|| decode::check_message(data));
        assert!(outcome.is_ok(), "fuzz/corpus/decode_message/{name} fails");
    }
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn session_scripts_parse_and_reencode() {
    let all = inputs("session");
    assert!(all.len() >= 10, "the seeds are in git: {}", all.len());
    for (name, data) in &all {
        let script = script::parse(data);
        assert!(!script.steps.is_empty(), "{name} does nothing");
        assert_eq!(script::parse(&script::encode(&script)), script, "{name}");
    }
}

/// A few scripts live, the quick ones: the fuzzer plays them all.
#[test]
fn session_seeds_run_without_a_finding() {
    for name in [
        "omni-tcp-stream-with-data",
        "passphrase-then-calibrate",
        "partial-message-then-close",
        "unknown-and-small-requests",
        "offload-read-set-restore",
        "offload-foreign-and-absurd-interfaces",
        "fill-names-escaping-the-directory",
    ] {
        let data = std::fs::read(corpus("session").join(name)).expect(name);
        let started = Instant::now();
        session::run_input(&data);
        assert!(started.elapsed() < Duration::from_secs(4), "{name}");
    }
}

// ---- the seeds ----

fn captured() -> Vec<(String, [u8; MESSAGE_LEN])> {
    let text = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/netperf-2.7.1-wire-capture.txt"
    ));
    let (mut test, mut out) = (String::new(), Vec::new());
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("TEST ") {
            test = name
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .filter(|word| !word.is_empty())
                .collect::<Vec<_>>()
                .join("-");
            continue;
        }
        let mut parts = line.split_whitespace();
        let (Some(dir), Some(_), Some(hex)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        let side = if dir == "C>S" { "netperf" } else { "netserver" };
        let n = seen.entry(format!("{test}-{side}")).or_default();
        *n += 1;
        let name = format!("stock-{}-{side}-{n}", test.to_lowercase());
        out.push((name, bytes.try_into().expect("656 bytes")));
    }
    out
}

/// A netserver's TCP_INFO series of three intervals and the whole test.
fn tcp_series_message() -> Message {
    use netperf_ng::wire::tcp_series::{encode, TcpInterval, TcpRecord, TcpSeries};
    let record = |n: u32| TcpRecord {
        end_secs: f64::from(n + 1),
        interval_secs: 1.0,
        tcp: TcpInterval {
            rtt_us: 40 + n,
            snd_cwnd: 10,
            delivery_rate: 1 << 30,
            busy: 0.5,
            ..Default::default()
        },
    };
    let series = TcpSeries {
        records: (0..3).map(record).collect(),
        dropped: 0,
        whole: Some(record(3)),
    };
    encode(&series).remove(0)
}

fn encoded_messages() -> Vec<(&'static str, Message)> {
    let mut with_ext = OmniRequest {
        protocol: 17,
        socket_type: 2,
        ipfamily: 4,
        direction: 4,
        test_length: 1,
        cong_control: "cubic".into(),
        fill_file: "fill".into(),
        ..Default::default()
    }
    .encode();
    Extension {
        mmsg_batch: 16,
        zerocopy: true,
        busy_poll_usecs: Some(50),
        system_facts: true,
        sequence: true,
        interface_counters: true,
        flows: 0,
        flow_threads: 0,
        echo_sequence: false,
        mptcp: true,
        gso_segments: 44,
        gro: true,
        skip_rx_copy: false,
        tcp_info_ms: None,
        notsent_lowat: Some(256 * 1024),
    }
    .encode_into(&mut with_ext);
    let mut results = OmniResults {
        bytes_received: 1 << 33,
        elapsed_time: 1.0,
        ifname: "lo".into(),
        cong_control: "cubic".into(),
        ..Default::default()
    }
    .encode();
    SystemFacts {
        sysname: "Linux".into(),
        machine: "x86_64".into(),
        release: "6.1.0".into(),
        version: "#1 SMP".into(),
        model: "Standard PC".into(),
        cpu_model: "Xeon".into(),
        cpu_mhz: 2000,
        cpu_count: 8,
    }
    .encode_into(&mut results);
    system_facts::encode_interface(&mut results, &[1, 2, 3, 4]);
    let response = OmniResponse {
        data_port: 40000,
        system_model: "model".into(),
        cpu_model: "cpu".into(),
        security_string: "sec".into(),
        ..Default::default()
    }
    .encode();
    let stream_response = legacy::TcpStreamResponse {
        data_port_number: 40001,
        ..Default::default()
    };
    let cc_response = legacy::TcpCcResponse {
        data_port_number: 40002,
        ..Default::default()
    };
    let unix_path = unix::UnixPath::new(b"/tmp");
    vec![
        ("ng-omni-request-with-extension", with_ext),
        ("ng-omni-results-with-blocks", results),
        ("ng-omni-response", response),
        ("ng-tcp-stream-response", stream_response.encode()),
        (
            "ng-tcp-stream-results",
            legacy::TcpStreamResults::left_over_from(&stream_response).encode(),
        ),
        ("ng-tcp-cc-response", cc_response.encode()),
        (
            "ng-tcp-cc-results",
            legacy::TcpCcResults::left_over_from(&cc_response).encode(),
        ),
        (
            "ng-unix-stream-stream-request",
            unix::StreamStreamRequest {
                receive_size: 4096,
                test_length: 1,
                path: unix_path.clone(),
                ..Default::default()
            }
            .encode(),
        ),
        (
            "ng-unix-dg-rr-response",
            unix::DgRrResponse {
                path: unix_path,
                ..Default::default()
            }
            .encode(),
        ),
        (
            "ng-unix-stream-rr-results",
            unix::StreamRrResults {
                trans_received: 7,
                ..Default::default()
            }
            .encode(),
        ),
        ("ng-passphrase", wire::encode_passphrase("secret phrase")),
        ("ng-tcp-series", tcp_series_message()),
        (
            "ng-offload-request-set",
            OffloadRequest {
                op: OffloadOp::Set,
                interface: Some("eth0".into()),
                changes: OffloadBits::from_pairs(&[(Offload::Tso, false), (Offload::Lro, true)]),
            }
            .encode(),
        ),
        (
            "ng-offload-response-refused",
            OffloadResponse {
                status: OffloadStatus::Refused,
                interface: "eth0".into(),
                active: 0b0111,
                fixed: 0b1000,
                mtu: 9000,
                refused: Some((Offload::Lro, true)),
                text: "cannot turn lro on on eth0: the driver does not let it change".into(),
            }
            .encode(),
        ),
        (
            "ng-cpu-calibrate-response",
            wire::encode_cpu_calibrate_response(100.0, 8),
        ),
        ("ng-mesh-hello", mesh::encode_hello()),
        (
            "ng-mesh-challenge",
            mesh::Challenge::Nonce([7; mesh::NONCE_LEN]).encode(),
        ),
        ("ng-mesh-origin", mesh_origin("TCP_RR", [127, 0, 0, 1])),
        (
            "ng-mesh-result",
            mesh::encode_result(
                &mesh::Outcome::Record("{\"test\":\"TCP_RR\"}".into()),
                Some((b"a key that is long enough", &[7; mesh::NONCE_LEN])),
            )
            .remove(0),
        ),
    ]
}

/// A signed mesh request, as a coordinator sends it.
fn mesh_origin(test: &str, destination: [u8; 4]) -> Message {
    mesh::Origin {
        test: test.into(),
        destination: destination.into(),
        port: 12865,
        duration_secs: 3,
        start_in_ms: 250,
    }
    .sign(b"a key that is long enough", &[7; mesh::NONCE_LEN])
}

/// What a hostile client sends: offload changes of interfaces beyond its
/// route or with absurd names, fill names that try to leave the directory.
fn hostile_messages() -> Vec<(&'static str, Message)> {
    vec![
        (
            "ng-omni-request-absurd-flows",
            omni_with_flows(u32::MAX, u32::MAX),
        ),
        (
            "ng-omni-request-absurd-gso",
            omni_with(Extension {
                gso_segments: u32::MAX,
                ..Default::default()
            }),
        ),
        (
            "ng-omni-request-fast-paths-on-the-wrong-test",
            omni_with(Extension {
                gso_segments: 64,
                gro: true,
                ..Default::default()
            }),
        ),
        (
            "ng-offload-request-foreign-interface",
            offload_set_naming(b"mgmt0"),
        ),
        (
            "ng-offload-request-escape-in-name",
            offload_set_naming(b"lo\x1b[2J"),
        ),
        (
            "ng-offload-request-path-as-name",
            offload_set_naming(b"../../etc"),
        ),
        (
            "ng-offload-request-unterminated-name",
            offload_set_naming(b"0123456789abcdef"),
        ),
        (
            "ng-mesh-origin-unknown-test",
            mesh_origin("TCP_SENDFILE", [127, 0, 0, 1]),
        ),
        (
            "ng-mesh-origin-broadcast",
            mesh_origin("TCP_STREAM", [255, 255, 255, 255]),
        ),
        (
            "ng-omni-request-fill-escape",
            omni_with_fill("../../etc/shadow"),
        ),
        (
            "ng-omni-request-fill-absolute",
            omni_with_fill("/etc/passwd"),
        ),
        (
            "ng-omni-request-fill-line-break",
            omni_with_fill("x\nnetserver 6.6.6.6 forged"),
        ),
    ]
}

/// An offload change (gso off) naming the interface by these raw bytes,
/// as a hostile client may write them (at most the field's 16 bytes).
fn offload_set_naming(name: &[u8]) -> Message {
    let mut m = OffloadRequest {
        op: OffloadOp::Set,
        interface: None,
        changes: OffloadBits::from_pairs(&[(Offload::Gso, false)]),
    }
    .encode();
    let at = wire::message::DATA_OFFSET + 16;
    m.bytes[at..at + name.len()].copy_from_slice(name);
    m
}

/// The session target's TCP_MAERTS template (netserver sends, from a fill
/// file when one is named) asking for fill file `name`.
/// An omni request (a TCP one of the templates) asking for `flows` flows on
/// `threads` threads.
fn omni_with_flows(flows: u32, threads: u32) -> Message {
    omni_with(Extension {
        flows,
        flow_threads: threads,
        ..Default::default()
    })
}

/// The same TCP omni request carrying the extension block `ext`.
fn omni_with(ext: Extension) -> Message {
    let mut m = templates::templates()[1].clone();
    ext.encode_into(&mut m);
    m
}

fn omni_with_fill(name: &str) -> Message {
    let mut r = OmniRequest::decode(&templates::templates()[1]);
    r.fill_file = name.to_string();
    r.encode()
}

fn session_seeds(stock: &[(String, [u8; MESSAGE_LEN])]) -> Vec<(String, script::Script)> {
    use Step::{Await, Data, Pause};
    let t = |index: u8| Step::Template {
        index,
        edits: vec![],
    };
    let script = |passphrase: bool, steps: Vec<Step>| script::Script { passphrase, steps };
    let mut seeds = vec![
        (
            "omni-tcp-stream-with-data",
            script(
                false,
                vec![
                    t(0),
                    Await,
                    Data {
                        udp: false,
                        units: 16,
                    },
                    Await,
                ],
            ),
        ),
        (
            "omni-tcp-maerts",
            script(
                false,
                vec![
                    t(1),
                    Await,
                    Data {
                        udp: false,
                        units: 0,
                    },
                    Await,
                ],
            ),
        ),
        (
            "omni-tcp-rr-by-count",
            script(
                false,
                vec![
                    t(2),
                    Await,
                    Data {
                        udp: false,
                        units: 1,
                    },
                    Await,
                ],
            ),
        ),
        (
            "omni-tcp-crr",
            script(
                false,
                vec![
                    t(3),
                    Await,
                    Data {
                        udp: false,
                        units: 0,
                    },
                    Data {
                        udp: false,
                        units: 0,
                    },
                    Await,
                ],
            ),
        ),
        (
            "omni-udp-stream-extension",
            script(
                false,
                vec![
                    t(4),
                    Await,
                    Data {
                        udp: true,
                        units: 8,
                    },
                    Await,
                ],
            ),
        ),
        (
            "omni-udp-rr",
            script(
                false,
                vec![
                    t(5),
                    Await,
                    Data {
                        udp: true,
                        units: 1,
                    },
                    Await,
                ],
            ),
        ),
        ("omni-udp-send", script(false, vec![t(6), Await, Await])),
        (
            "legacy-tcp-sendfile",
            script(
                false,
                vec![
                    t(7),
                    Await,
                    Data {
                        udp: false,
                        units: 4,
                    },
                    Await,
                ],
            ),
        ),
        (
            "legacy-tcp-cc",
            script(
                false,
                vec![
                    t(8),
                    Await,
                    Data {
                        udp: false,
                        units: 0,
                    },
                    Await,
                ],
            ),
        ),
        (
            "unix-stream-stream",
            script(
                false,
                vec![
                    t(9),
                    Await,
                    Data {
                        udp: false,
                        units: 4,
                    },
                    Await,
                ],
            ),
        ),
        (
            "unix-stream-rr",
            script(
                false,
                vec![
                    t(10),
                    Await,
                    Data {
                        udp: false,
                        units: 4,
                    },
                    Await,
                ],
            ),
        ),
        (
            "unix-dg-stream",
            script(
                false,
                vec![
                    t(11),
                    Await,
                    Data {
                        udp: false,
                        units: 4,
                    },
                    Await,
                ],
            ),
        ),
        (
            "unix-dg-rr",
            script(
                false,
                vec![
                    t(12),
                    Await,
                    Data {
                        udp: false,
                        units: 4,
                    },
                    Await,
                ],
            ),
        ),
        (
            "passphrase-then-calibrate",
            script(true, vec![t(14), t(13), Await]),
        ),
        ("wrong-passphrase", script(true, vec![t(13), Await])),
        (
            "unknown-and-small-requests",
            script(false, vec![t(15), Await, t(16), Await, t(17), Await]),
        ),
        (
            "offload-read-set-restore",
            script(false, vec![t(18), Await, t(19), Await, t(20), Await]),
        ),
        (
            "partial-message-then-close",
            script(
                false,
                vec![Step::Partial(vec![0, 0, 0, 97, 0xff]), Pause(2)],
            ),
        ),
        (
            "two-tests-one-connection",
            script(false, vec![t(2), Await, t(5), Await, Await]),
        ),
        (
            "test-edited-sizes",
            script(
                false,
                vec![
                    Step::Template {
                        index: 0,
                        edits: vec![(3, 0x7fff_ffff), (12, 64)],
                    },
                    Await,
                ],
            ),
        ),
    ]
    .into_iter()
    .map(|(name, s)| (name.to_string(), s))
    .collect::<Vec<_>>();
    // The stock netperf requests as they were captured.
    for (name, bytes) in stock.iter().filter(|(n, _)| n.contains("-netperf-1")) {
        let steps = vec![
            Step::Message(Box::new(*bytes)),
            Await,
            Data {
                udp: name.contains("udp"),
                units: 2,
            },
            Await,
        ];
        seeds.push((name.replace("-netperf-1", ""), script(false, steps)));
    }
    seeds
}

/// Sessions of a hostile client: offload changes beyond its route and with
/// absurd names; fill names that try to leave the directory, then one in it.
fn hostile_session_seeds() -> Vec<(String, script::Script)> {
    use Step::{Await, Data};
    let t = |index: u8| Step::Template {
        index,
        edits: vec![],
    };
    let script = |steps: Vec<Step>| script::Script {
        passphrase: false,
        steps,
    };
    vec![
        (
            "flows-absurd-counts",
            script(
                [
                    (u32::MAX, 1),
                    (2_000_000, 2),
                    (10, 0),
                    (10, u32::MAX),
                    (500_000, 2),
                ]
                .iter()
                .flat_map(|&(flows, threads)| {
                    [
                        Step::Message(Box::new(omni_with_flows(flows, threads).bytes)),
                        Await,
                    ]
                })
                .collect(),
            ),
        ),
        (
            "offload-foreign-and-absurd-interfaces",
            script(
                [
                    &b"mgmt0"[..],
                    b"lo\x1b[2J",
                    b"../../etc",
                    b"0123456789abcdef",
                ]
                .iter()
                .flat_map(|name| {
                    [
                        Step::Message(Box::new(offload_set_naming(name).bytes)),
                        Await,
                    ]
                })
                .chain([t(18), Await, t(20), Await])
                .collect(),
            ),
        ),
        (
            "fill-names-escaping-the-directory",
            script(
                [
                    "../Cargo.toml",
                    "/etc/passwd",
                    "escape",
                    "..",
                    "x\nnetserver 6.6.6.6 forged",
                    "pattern",
                ]
                .iter()
                .flat_map(|name| [Step::Message(Box::new(omni_with_fill(name).bytes)), Await])
                .chain([
                    Data {
                        udp: false,
                        units: 0,
                    },
                    Await,
                ])
                .collect(),
            ),
        ),
    ]
    .into_iter()
    .map(|(name, s)| (name.to_string(), s))
    .collect()
}

/// The seed files are what the capture and our encoders give now: a stale
/// seed fuzzes a message nothing sends any more. With
/// NETPERF_NG_WRITE_SEEDS=1 the test writes them instead. Inputs the
/// fuzzers found (regress-*) are not seeds: kept, never compared.
#[test]
fn the_seeds_are_what_the_encoders_write() {
    let write = std::env::var_os("NETPERF_NG_WRITE_SEEDS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    let mut seed = |target: &str, name: &str, bytes: &[u8]| {
        let dir = corpus(target);
        let path = dir.join(name);
        if write {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, bytes).unwrap();
        } else if std::fs::read(&path).ok().as_deref() != Some(bytes) {
            stale.push(format!("{target}/{name}"));
        }
    };
    let stock = captured();
    for (name, bytes) in &stock {
        seed("decode_message", name, bytes);
    }
    for (name, m) in encoded_messages().into_iter().chain(hostile_messages()) {
        seed("decode_message", name, &m.bytes);
    }
    for (name, script) in session_seeds(&stock)
        .into_iter()
        .chain(hostile_session_seeds())
    {
        seed("session", &name, &script::encode(&script));
    }
    assert!(
        stale.is_empty(),
        "seeds missing or stale in fuzz/corpus (NETPERF_NG_WRITE_SEEDS=1 cargo test --test \
         fuzz_corpus writes them again): {stale:?}"
    );
}
