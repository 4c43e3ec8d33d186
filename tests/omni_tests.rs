//! Omni output end to end against our netserver: the shapes of `-o all`,
//! `-O all` and `-k all` against netperf 2.7.1's transcripts, a value for
//! every selector in every kind of test, selector lists, files and `?`, the
//! switch of migrated tests to omni output, and the JSON output against its
//! schema in docs/.

mod common;
use common::*;
use std::collections::BTreeMap;

const TRANSCRIPTS: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/netperf-2.7.1-transcripts.txt"
));
const SCHEMA: &str = include_str!("../docs/omni-output.schema.json");

/// The output lines of the transcript command that starts with `command`.
fn transcript(command: &str) -> Vec<&'static str> {
    let start = TRANSCRIPTS
        .find(&format!("$ {command}\n"))
        .unwrap_or_else(|| panic!("{command} not in the transcripts"));
    TRANSCRIPTS[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("[exit"))
        .collect()
}

/// NAME=value lines of keyval output.
fn keyvals(stdout: &str) -> BTreeMap<String, String> {
    stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn csv_all_has_netperfs_header_and_columns() {
    let server = Server::start("127.0.0.1");
    let ours = run_ok(
        &server,
        &[
            "-l", "1", "-t", "omni", "-c", "-C", "--", "-d", "stream", "-o", "all",
        ],
    );
    let theirs = transcript("netperf -H 127.0.0.1 -l 1 -t omni -c -C -- -d stream -o all");
    let ours: Vec<&str> = ours.lines().collect();
    assert_eq!(ours.len(), 3, "{ours:?}");
    assert_eq!(ours[0], theirs[0], "banner");
    assert_eq!(ours[1], theirs[1], "CSV title line");
    // The brand is absent, so its field is empty and the UUID starts with a space.
    let fields = |line: &str| line.split(',').count();
    assert_eq!(fields(ours[2]), fields(theirs[2]));
    assert!(ours[2].contains(",, "), "{}", ours[2]);
    assert!(ours[2].starts_with("Stream,TCP,Send,"));
}

#[test]
fn keyval_all_names_the_same_selectors_in_the_same_order() {
    let server = Server::start("127.0.0.1");
    let ours = run_ok(
        &server,
        &[
            "-l", "1", "-t", "omni", "-c", "-C", "--", "-d", "stream", "-k", "all",
        ],
    );
    let theirs = transcript("netperf -H 127.0.0.1 -l 1 -t omni -c -C -- -d stream -k all");
    let names = |lines: Vec<&str>| -> Vec<String> {
        lines
            .iter()
            .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_string()))
            .collect()
    };
    assert_eq!(names(ours.lines().collect()), names(theirs));
}

#[test]
fn human_all_has_netperfs_blocks_and_titles() {
    let server = Server::start("127.0.0.1");
    let ours = run_ok(
        &server,
        &[
            "-l", "1", "-t", "omni", "-c", "-C", "--", "-d", "rr", "-O", "all",
        ],
    );
    let theirs = transcript("netperf -H 127.0.0.1 -l 1 -t omni -c -C -- -d rr -O all");
    // Blocks are separated by one blank line; each is 4 title lines + values.
    let blocks = |lines: Vec<&str>| -> Vec<Vec<String>> {
        lines[1..]
            .split(|l| l.is_empty())
            .map(|b| {
                b.iter()
                    .take(4)
                    .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                    .collect()
            })
            .collect()
    };
    let ours_blocks = blocks(ours.lines().collect());
    let theirs_blocks = blocks(theirs);
    assert_eq!(ours_blocks.len(), 4);
    assert_eq!(ours_blocks, theirs_blocks);
    // Every value line has the column count of its title's first line... at
    // least one value per selector: the first block has 24 selectors.
    let first_values = ours.lines().nth(5).unwrap();
    assert_eq!(
        first_values.split_whitespace().count(),
        24,
        "{first_values}"
    );
}

#[test]
fn short_selections_match_the_transcripts() {
    let server = Server::start("127.0.0.1");
    let cases: [(&[&str], &str); 3] = [
        (
            &[
                "-l",
                "1",
                "-t",
                "omni",
                "--",
                "-d",
                "rr",
                "-O",
                "THROUGHPUT,THROUGHPUT_UNITS",
            ],
            "netperf -H 127.0.0.1 -l 1 -t omni -- -d rr -O THROUGHPUT,THROUGHPUT_UNITS",
        ),
        (
            &[
                "-l",
                "1",
                "-t",
                "omni",
                "--",
                "-d",
                "rr",
                "-o",
                "THROUGHPUT,THROUGHPUT_UNITS",
            ],
            "netperf -H 127.0.0.1 -l 1 -t omni -- -d rr -o THROUGHPUT,THROUGHPUT_UNITS",
        ),
        (
            &["-l", "1", "-t", "omni", "--", "-d", "rr"],
            "netperf -H 127.0.0.1 -l 1 -t omni -- -d rr",
        ),
    ];
    for (args, command) in cases {
        let ours = run_ok(&server, args);
        let theirs = transcript(command);
        let ours: Vec<&str> = ours.lines().collect();
        assert_eq!(ours.len(), theirs.len(), "{command}: {ours:?}");
        // Titles are identical; value lines have the same columns.
        for (o, t) in ours.iter().zip(&theirs).take(theirs.len() - 1) {
            assert_eq!(o, t, "{command}");
        }
        let last = |l: &str| l.split([' ', ',']).filter(|w| !w.is_empty()).count();
        assert_eq!(last(ours[ours.len() - 1]), last(theirs[theirs.len() - 1]));
    }
}

/// Every netperf selector, per kind of test: present, and numeric where
/// netperf prints a number.
#[test]
fn every_selector_has_a_value_in_every_kind_of_test() {
    if fast_tier_skips("slow (9 s)") {
        return;
    }
    let server = Server::start("127.0.0.1");
    let kinds: [&[&str]; 10] = [
        &["-t", "TCP_STREAM", "-l", "1"],
        &["-t", "TCP_MAERTS", "-l", "1"],
        &["-t", "UDP_STREAM", "-l", "1", "--", "-m", "1024"],
        &["-t", "TCP_RR", "-l", "1"],
        &["-t", "UDP_RR", "-l", "1"],
        &["-t", "TCP_CRR", "-l", "-200"],
        &["-t", "TCP_CC", "-l", "-200"],
        &["-t", "omni", "-l", "1", "--", "-d", "rr", "-b", "4"],
        &["-t", "omni", "-l", "1", "--", "-T", "udplite", "-d", "rr"],
        &["-t", "omni", "-l", "1", "-c", "-C", "--", "-d", "recv"],
    ];
    let list = std::process::Command::new(NETPERF)
        .args(["-t", "omni", "--", "-o", "?"])
        .output()
        .unwrap();
    let all_names: Vec<String> = text(&list.stdout)
        .trim()
        .split(',')
        .filter(|n| *n != "OUTPUT_NONE" && *n != "OUTPUT_END" && *n != "RESULT_BRAND")
        .map(str::to_string)
        .collect();
    assert_eq!(all_names.len(), 172);
    for kind in kinds {
        let mut args = kind.to_vec();
        if !args.contains(&"--") {
            args.push("--");
        }
        args.extend_from_slice(&["-k", "all"]);
        let values = keyvals(&run_ok(&server, &args));
        for name in &all_names {
            let value = values
                .get(name)
                .unwrap_or_else(|| panic!("{kind:?}: no {name}"));
            let textual = name.contains("MODEL")
                || name.ends_with("SYSNAME")
                || name.ends_with("RELEASE")
                || name.ends_with("VERSION")
                || name.ends_with("MACHINE")
                || name.contains("INTERFACE_NAME")
                || name.contains("DRIVER")
                || name.contains("SLOT")
                || name.contains("SECURITY_TYPE")
                || name.contains("SECURITY_ENABLED")
                || name.contains("SECURITY_SPECIFIC")
                || name.contains("FILL_FILE")
                || name.contains("CONG_CONTROL")
                || name.ends_with("_METHOD")
                || matches!(
                    name.as_str(),
                    "SOCKET_TYPE"
                        | "PROTOCOL"
                        | "DIRECTION"
                        | "THROUGHPUT_UNITS"
                        | "SD_UNITS"
                        | "SOURCE_ADDR"
                        | "DEST_ADDR"
                        | "SOURCE_PORT"
                        | "DEST_PORT"
                        | "UUID"
                        | "COMMAND_LINE"
                );
            let hex = value.starts_with("0x") && u64::from_str_radix(&value[2..], 16).is_ok();
            assert!(
                textual || hex || value.parse::<f64>().is_ok(),
                "{kind:?}: {name}={value:?} is not a number"
            );
        }
        assert!(
            values["THROUGHPUT"].parse::<f64>().unwrap() > 0.0,
            "{kind:?}"
        );
        assert!(
            values["MEAN_LATENCY"].parse::<f64>().unwrap() > 0.0,
            "{kind:?}"
        );
    }
}

/// SOCKET_TYPE is the test name's preset, as netperf 2.7.1 prints it:
/// "Datagram" for UDP_STREAM and UDP_RR only; omni over UDP prints
/// "Stream" (the first CSV field of netperf's aggregate demo scripts).
#[test]
fn socket_type_follows_the_test_name_as_netperf_prints_it() {
    let server = Server::start("127.0.0.1");
    let cases: [(&[&str], &str); 5] = [
        (&["-t", "omni", "--", "-T", "udp", "-d", "rr"], "Stream,UDP"),
        (
            &["-t", "omni", "--", "-T", "udp", "-m", "512"],
            "Stream,UDP",
        ),
        (&["-t", "omni", "--"], "Stream,TCP"),
        (&["-t", "UDP_RR", "--"], "Datagram,UDP"),
        (&["-t", "UDP_STREAM", "--", "-m", "512"], "Datagram,UDP"),
    ];
    for (test, want) in cases {
        let mut args = vec!["-l", "1", "-P", "0"];
        args.extend_from_slice(test);
        args.extend_from_slice(&["-o", "SOCKET_TYPE,PROTOCOL"]);
        assert_eq!(run_ok(&server, &args).trim(), want, "{test:?}");
    }
}

#[test]
fn migrated_tests_switch_to_omni_output_and_keep_their_banner() {
    let server = Server::start("127.0.0.1");
    let out = run_ok(
        &server,
        &[
            "-t",
            "UDP_STREAM",
            "-l",
            "1",
            "--",
            "-m",
            "1024",
            "-O",
            "local_send_size,local_send_calls,remote_recv_calls",
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("MIGRATED UDP STREAM TEST"), "{out}");
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["Local", "Local", "Remote"]
    );
    let values = numbers(lines[5]);
    assert_eq!(values.len(), 3, "{out}");
    assert_eq!(values[0], 1024.0);
    assert!(values[1] >= values[2] && values[2] > 0.0, "{out}");
}

#[test]
fn selector_files_blocks_and_the_list_of_choices() {
    let server = Server::start("127.0.0.1");
    let dir = std::env::temp_dir().join(format!("netperf-ng-omni-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("selectors");
    std::fs::write(&file, "THROUGHPUT,Throughput Units\nPROTOCOL\n").unwrap();
    let path = file.to_str().unwrap();
    let out = run_ok(
        &server,
        &["-t", "omni", "-l", "1", "--", "-d", "rr", "-o", path],
    );
    std::fs::remove_dir_all(&dir).ok();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[1], "Throughput,Throughput Units,Protocol", "{out}");
    assert!(lines[2].ends_with(",Trans/s,TCP"), "{out}");

    // `;` starts a new block of human output.
    let out = run_ok(
        &server,
        &["-t", "omni", "-l", "1", "--", "-O", "PROTOCOL;DIRECTION"],
    );
    let blocks: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(blocks.len(), 11, "{out}");
    assert_eq!(blocks[5], "");
    assert!(blocks[10].starts_with("Send"));

    // A file that is not there: netperf's message, a failure, no test.
    let out = netperf(
        &server,
        &["-t", "omni", "-l", "1", "--", "-o", "/no/such/selectors"],
    );
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("Could not open output selection file '/no/such/selectors'"));

    // `?` lists the selectors and exits 1 without running anything.
    for (option, separator) in [("-o", ","), ("-k", ","), ("-O", "\n")] {
        let out = std::process::Command::new(NETPERF)
            .args(["-H", "192.0.2.1", "-t", "omni", "--", option, "?"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let listed = text(&out.stdout);
        assert!(listed.starts_with(&format!("OUTPUT_NONE{separator}SOCKET_TYPE{separator}")));
        assert_eq!(listed.trim_end().split(separator).count(), 175);
    }
}

#[test]
fn latency_selectors_switch_on_timing_and_agree_with_the_rate() {
    let server = Server::start("127.0.0.1");
    let values = keyvals(&run_ok(
        &server,
        &[
            "-t", "TCP_RR", "-l", "1", "--", "-k",
            "MIN_LATENCY,P50_LATENCY,P99_LATENCY,P99_9_LATENCY,MAX_LATENCY,MEAN_LATENCY,RT_LATENCY,LATENCY_SAMPLES,LATENCY_CI99_LOW,LATENCY_CI99_HIGH",
        ],
    ));
    let v = |k: &str| values[k].parse::<f64>().unwrap();
    assert!(v("MIN_LATENCY") <= v("P50_LATENCY"));
    assert!(v("P50_LATENCY") <= v("P99_LATENCY") + 1.0);
    assert!(v("P99_LATENCY") <= v("P99_9_LATENCY") + 1.0);
    assert!(v("P99_9_LATENCY") <= v("MAX_LATENCY") + 1.0);
    assert!(
        v("LATENCY_CI99_LOW") <= v("MEAN_LATENCY") && v("MEAN_LATENCY") <= v("LATENCY_CI99_HIGH")
    );
    // One transaction in flight: the timed transactions never overlap, so
    // their mean cannot exceed the round trip the rate implies (elapsed time
    // per transaction); no lower bound, the loop between them may be
    // preempted on a busy machine.
    let (mean, rt) = (v("MEAN_LATENCY"), v("RT_LATENCY"));
    assert!(mean > 0.0 && mean <= rt * 1.01, "mean {mean} rt {rt}");
    assert!(v("LATENCY_SAMPLES") > 0.0);
}

#[test]
fn json_output_follows_the_schema() {
    let schema: serde_json::Value = serde_json::from_str(SCHEMA).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let server = Server::start("127.0.0.1");
    for args in [
        &["-t", "TCP_RR", "-l", "1", "--", "-J"][..],
        &[
            "-t", "omni", "-l", "1", "-B", "brand", "--", "-d", "stream", "-J", "all",
        ][..],
        &[
            "-t",
            "UDP_RR",
            "-l",
            "1",
            "--",
            "-J",
            "THROUGHPUT,P99_9_LATENCY,LOCAL_IF_TX_PPS,REMOTE_SYSNAME",
        ][..],
        // Interim results with what TCP did in each.
        &[
            "-t",
            "TCP_STREAM",
            "-l",
            "1",
            "-D",
            "0.4",
            "--",
            "-J",
            "THROUGHPUT",
        ][..],
    ] {
        let out = run_ok(&server, args);
        let body = out
            .split_once('\n')
            .map(|(_, rest)| rest)
            .unwrap_or_default();
        let doc: serde_json::Value = serde_json::from_str(body)
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {body}"));
        let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{args:?}: {errors:?}");
        let throughput = &doc["results"]["THROUGHPUT"];
        assert!(throughput["value"].as_f64().unwrap() > 0.0);
        assert!(throughput["unit"].as_str().unwrap().ends_with("/s"));
    }
}

/// UDP receive-buffer drops the kernel counted (/proc/net/snmp RcvbufErrors).
fn udp_rcvbuf_errors() -> u64 {
    let snmp = std::fs::read_to_string("/proc/net/snmp").unwrap_or_default();
    let mut udp = snmp.lines().filter(|l| l.starts_with("Udp:"));
    let (names, values) = (udp.next().unwrap_or(""), udp.next().unwrap_or(""));
    names
        .split_whitespace()
        .zip(values.split_whitespace())
        .find(|(n, _)| *n == "RcvbufErrors")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

#[test]
fn sequence_numbers_count_the_datagrams_the_receiver_lost() {
    let server = Server::start("127.0.0.1");
    let before = udp_rcvbuf_errors();
    let values = keyvals(&run_ok(
        &server,
        &[
            "-t", "UDP_STREAM", "-l", "1", "--", "-m", "1024", "-S", "16K", "--seq", "-k",
            "LOCAL_SEND_CALLS,REMOTE_RECV_CALLS,REMOTE_DGRAMS_LOST,REMOTE_DGRAMS_DUPLICATED,LOCAL_DGRAMS_LOST",
        ],
    ));
    let dropped_by_kernel = udp_rcvbuf_errors() - before;
    let v = |k: &str| values[k].parse::<i64>().unwrap();
    assert_eq!(
        v("REMOTE_DGRAMS_LOST"),
        v("LOCAL_SEND_CALLS") - v("REMOTE_RECV_CALLS")
    );
    assert_eq!(v("REMOTE_DGRAMS_DUPLICATED"), 0);
    assert_eq!(v("LOCAL_DGRAMS_LOST"), -1, "the sender receives nothing");
    // Loopback loses datagrams only in the receive buffer, and the kernel
    // counts every one (other tests may add their own to the counter).
    assert!(dropped_by_kernel >= v("REMOTE_DGRAMS_LOST") as u64);

    let values = keyvals(&run_ok(
        &server,
        &[
            "-t",
            "UDP_RR",
            "-l",
            "1",
            "--",
            "-r",
            "8",
            "--seq",
            "-k",
            "LOCAL_DGRAMS_LOST,REMOTE_DGRAMS_LOST,LOCAL_DGRAMS_OUT_OF_ORDER",
        ],
    ));
    // Loopback drops nothing here; the one transaction in flight when the
    // timer stops the test may count as lost on one side.
    for name in ["LOCAL_DGRAMS_LOST", "REMOTE_DGRAMS_LOST"] {
        let lost: i64 = values[name].parse().unwrap();
        assert!((0..=1).contains(&lost), "{name}={lost}");
    }
    assert_eq!(values["LOCAL_DGRAMS_OUT_OF_ORDER"], "0");
    let out = netperf(&server, &["-t", "UDP_RR", "-l", "1", "--", "--seq"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("at least 8 bytes"));
}

#[test]
fn interface_counters_and_system_facts_of_both_ends() {
    let server = Server::start("127.0.0.1");
    let values = keyvals(&run_ok(
        &server,
        &[
            "-t",
            "UDP_RR",
            "-l",
            "1",
            "--",
            "-k",
            "TRANSACTION_RATE,LOCAL_IF_TX_PACKETS,LOCAL_IF_RX_PACKETS,REMOTE_IF_TX_PACKETS,\
             REMOTE_IF_RX_BYTES,LOCAL_IF_TX_PPS,PACKETS_PER_TRANSACTION,LOCAL_INTERFACE_NAME,\
             REMOTE_INTERFACE_NAME,LOCAL_SYSNAME,REMOTE_SYSNAME,REMOTE_RELEASE,REMOTE_CPU_MODEL",
        ],
    ));
    let v = |k: &str| values[k].parse::<f64>().unwrap();
    // Every transaction is a request and a response; on loopback each is
    // counted both as sent and as received by `lo` (other tests add more).
    assert!(v("PACKETS_PER_TRANSACTION") >= 3.9, "{values:?}");
    assert!(
        v("LOCAL_IF_TX_PPS") >= 2.0 * v("TRANSACTION_RATE") * 0.95,
        "{values:?}"
    );
    assert!(v("REMOTE_IF_TX_PACKETS") > 0.0 && v("REMOTE_IF_RX_BYTES") > 0.0);
    assert_eq!(values["LOCAL_INTERFACE_NAME"], "lo");
    assert_eq!(values["REMOTE_INTERFACE_NAME"], "lo");
    assert_eq!(values["LOCAL_SYSNAME"], "Linux");
    assert_eq!(values["REMOTE_SYSNAME"], "Linux");
    assert!(!values["REMOTE_RELEASE"].is_empty() && !values["REMOTE_CPU_MODEL"].is_empty());
}

#[test]
fn an_unavailable_congestion_control_leaves_the_default_as_netperf_does() {
    let server = Server::start("127.0.0.1");
    let default = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control")
        .unwrap_or_default()
        .trim()
        .to_string();
    // Both ends' congestion control after asking for `pair` (local,remote).
    let used = |pair: &str| {
        let selectors = "LOCAL_CONG_CONTROL,REMOTE_CONG_CONTROL";
        let args = [
            "-t",
            "TCP_STREAM",
            "-l",
            "1",
            "--",
            "-K",
            pair,
            "-k",
            selectors,
        ];
        keyvals(&run_ok(&server, &args))
    };
    // reno is built into every Linux kernel: asked for, it is used.
    let reno = used("reno,reno");
    assert_eq!(reno["LOCAL_CONG_CONTROL"], "reno");
    assert_eq!(reno["REMOTE_CONG_CONTROL"], "reno");
    // A name no kernel has: the test runs, and says what really ran.
    let absent = used("nosuchcc,nosuchcc");
    if !default.is_empty() {
        assert_eq!(absent["LOCAL_CONG_CONTROL"], default);
        assert_eq!(absent["REMOTE_CONG_CONTROL"], default);
    }
}
