//! Our codecs against the real control bytes of netperf 2.7.1
//! (tests/fixtures/netperf-2.7.1-wire-capture.txt, recorded by
//! scripts/record-stock-fixtures).

use netperf_ng::wire::omni::{OmniRequest, OmniResponse, OmniResults};
use netperf_ng::wire::{self, kind, Message, MESSAGE_LEN};

struct Exchange {
    test: String,
    client: Vec<[u8; MESSAGE_LEN]>,
    server: Vec<[u8; MESSAGE_LEN]>,
}

fn capture() -> Vec<Exchange> {
    let text = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/netperf-2.7.1-wire-capture.txt"
    ));
    let mut out: Vec<Exchange> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("TEST ") {
            out.push(Exchange {
                test: name.to_string(),
                client: vec![],
                server: vec![],
            });
            continue;
        }
        let mut parts = line.split_whitespace();
        let (Some(dir), Some(len), Some(hex)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        assert_eq!(len, "656", "{line}");
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        let msg: [u8; MESSAGE_LEN] = bytes.try_into().unwrap();
        let ex = out.last_mut().unwrap();
        match dir {
            "C>S" => ex.client.push(msg),
            "S>C" => ex.server.push(msg),
            other => panic!("unknown direction {other}"),
        }
    }
    out
}

#[test]
fn omni_requests_and_responses_round_trip_byte_for_byte() {
    let exchanges = capture();
    let mut checked = 0;
    for ex in exchanges.iter().filter(|e| {
        e.client
            .first()
            .is_some_and(|m| Message::from_bytes(*m).kind() == kind::DO_OMNI)
    }) {
        let req = Message::from_bytes(ex.client[0]);
        let decoded = OmniRequest::decode(&req);
        assert_eq!(decoded.encode().bytes, req.bytes, "request of {}", ex.test);
        let resp = Message::from_bytes(ex.server[0]);
        assert_eq!(resp.kind(), kind::OMNI_RESPONSE);
        let decoded = OmniResponse::decode(&resp);
        assert_eq!(
            decoded.encode().bytes,
            resp.bytes,
            "response of {}",
            ex.test
        );
        checked += 1;
    }
    assert_eq!(checked, 7);
}

#[test]
fn omni_request_fields_mean_what_netperf_meant() {
    let exchanges = capture();
    let by = |name: &str| exchanges.iter().find(|e| e.test == name).unwrap();
    let stream = OmniRequest::decode(&Message::from_bytes(by("TCP_STREAM").client[0]));
    assert_eq!(
        (stream.protocol, stream.socket_type, stream.ipfamily),
        (6, 1, 4)
    );
    assert_eq!(stream.direction, 0x4, "netserver receives in TCP_STREAM");
    assert_eq!(
        (
            stream.send_alignment,
            stream.recv_alignment,
            stream.test_length
        ),
        (8, 8, 1)
    );
    assert_eq!((stream.request_size, stream.send_buf_size), (-1, -1));
    assert_eq!(stream.flags, 0x20);
    let rr = OmniRequest::decode(&Message::from_bytes(by("TCP_RR").client[0]));
    assert_eq!(
        (rr.request_size, rr.response_size, rr.direction),
        (1, 1, 0x6)
    );
    let crr = OmniRequest::decode(&Message::from_bytes(by("TCP_CRR").client[0]));
    assert_eq!(crr.flags, 0x24);
    let udp = OmniRequest::decode(&Message::from_bytes(by("UDP_STREAM").client[0]));
    assert_eq!(
        (udp.protocol, udp.socket_type, udp.flags, udp.netperf_port),
        (17, 2, 0, 0xce1f)
    );
    let cpu = OmniRequest::decode(&Message::from_bytes(by("omni -c -C -d rr -b 4").client[0]));
    assert_eq!(cpu.flags, 0x28);
}

#[test]
fn omni_results_decode_to_plausible_counts() {
    let exchanges = capture();
    for ex in exchanges.iter().filter(|e| e.server.len() == 2) {
        let raw = Message::from_bytes(ex.server[1]);
        assert_eq!(
            &raw.bytes[0..4],
            &[0x62, 0, 0, 0],
            "{}: results type arrives byte-swapped",
            ex.test
        );
        assert_eq!(raw.kind(), kind::OMNI_RESPONSE);
        let r = OmniResults::decode(&raw);
        assert!(
            r.elapsed_time > 0.9 && r.elapsed_time < 1.1,
            "{}: elapsed {}",
            ex.test,
            r.elapsed_time
        );
        assert!(r.bytes_received > 0 || r.bytes_sent > 0, "{}", ex.test);
        // Re-encoding reproduces the real bytes, garbage words included.
        assert_eq!(r.encode().bytes, raw.bytes, "{}", ex.test);
    }
    let rr = exchanges.iter().find(|e| e.test == "TCP_RR").unwrap();
    let r = OmniResults::decode(&Message::from_bytes(rr.server[1]));
    assert_eq!(
        (r.trans_received, r.recv_calls, r.send_calls),
        (0x3731, 0x3731, 0x3731)
    );
    assert_eq!(r.cong_control, "bbr");
    let cpu = exchanges
        .iter()
        .find(|e| e.test.starts_with("omni -c -C"))
        .unwrap();
    let r = OmniResults::decode(&Message::from_bytes(cpu.server[1]));
    assert_eq!((r.cpu_method, r.num_cpus), (8, 2));
    assert!((r.cpu_util - 72.89).abs() < 0.01, "{}", r.cpu_util);
    let resp = OmniResponse::decode(&Message::from_bytes(cpu.server[0]));
    assert_eq!((resp.flags, resp.cpu_rate), (8, 100.0));
}

#[test]
fn rem_cpu_exchange_matches() {
    let exchanges = capture();
    let ex = exchanges.iter().find(|e| e.test == "REM_CPU").unwrap();
    assert_eq!(wire::encode_cpu_calibrate_request().bytes, ex.client[0]);
    assert_eq!(
        wire::encode_cpu_calibrate_response(100.0, 2).bytes,
        ex.server[0]
    );
}
