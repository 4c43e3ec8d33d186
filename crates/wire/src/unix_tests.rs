//! Codec tests against hand-made bytes: what a little-endian stock netperf
//! 2.7.1 or netserver puts on the control connection for these structs.

use super::*;

/// The wire bytes of consecutive big-endian words.
fn be(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_be_bytes()).collect()
}

/// A message whose first bytes are `prefix`, the rest zero.
fn message(prefix: &[u8]) -> Message {
    let mut bytes = [0u8; MESSAGE_LEN];
    bytes[..prefix.len()].copy_from_slice(prefix);
    Message::from_bytes(bytes)
}

#[test]
fn stream_stream_request_bytes() {
    let r = StreamStreamRequest {
        cpu_bind: -1,
        recv_buf_size: -1,
        send_buf_size: 65536,
        receive_size: 0,
        recv_alignment: 8,
        recv_offset: 0,
        measure_cpu: 1,
        cpu_rate: 0.0,
        test_length: 10,
        path: UnixPath::new(b"/tmp"),
        ..Default::default()
    };
    let m = r.encode();
    let mut want = be(&[
        37,
        0xffff_ffff, // type, cpu binding
        0xffff_ffff,
        65536,
        0,
        8,
        0, // buffers, receive size, alignment, offset
        0,
        0,
        1,
        0,
        10,
        0,
        0, // avoids, measure_cpu, cpu_rate, length, dirty, clean
        4, // path_name_len
    ]);
    // "/tmp" as a little-endian host's word after htonl: reversed.
    want.extend_from_slice(b"pmt/");
    want.extend_from_slice(&[0, 0, 0, 0]);
    assert_eq!(&m.bytes[..want.len()], &want[..]);
    assert!(m.bytes[want.len()..].iter().all(|&b| b == 0));
    assert_eq!(StreamStreamRequest::decode(&m), r);
}

#[test]
fn stock_stream_rr_response_with_its_path() {
    // serv_errno 0; recv/send buffers 212992; avoids 0; measure_cpu 1;
    // test_length 0; cpu_rate 100.0; path_name_len 0 (stock never sets it).
    let mut bytes = be(&[41, 0, 212_992, 212_992, 0, 0, 1, 0, 100f32.to_bits(), 0]);
    for group in [b"pmt/", b"ten/", b"frep", b"CbA.", b"\x00321"] {
        bytes.extend_from_slice(group);
    }
    let r = StreamRrResponse::decode(&message(&bytes));
    assert_eq!(r.serv_errno, 0);
    assert_eq!((r.recv_buf_size, r.send_buf_size), (212_992, 212_992));
    assert_eq!((r.measure_cpu, r.cpu_rate), (1, 100.0));
    assert_eq!(r.path.bytes, b"/tmp/netperf.AbC123");
    assert!(r.path.terminated && !r.path.is_announced());
}

#[test]
fn dg_rr_request_layout() {
    let r = DgRrRequest {
        cpu_bind: 3,
        recv_buf_size: 1,
        send_buf_size: 2,
        recv_alignment: 3,
        recv_offset: 4,
        send_alignment: 5,
        send_offset: 6,
        request_size: 7,
        response_size: 8,
        measure_cpu: 9,
        cpu_rate: 1.5,
        test_length: -100,
        so_rcvavoid: 12,
        so_sndavoid: 13,
        path: UnixPath::default(),
    };
    let m = r.encode();
    let want = be(&[
        46,
        3,
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        9,
        1.5f32.to_bits(),
        (-100i32) as u32,
        12,
        13,
        0,
    ]);
    assert_eq!(&m.bytes[..want.len()], &want[..]);
    assert_eq!(DgRrRequest::decode(&m), r);
}

#[test]
fn dg_stream_request_and_response_layouts() {
    let bytes = be(&[43, 0xffff_ffff, 0, 1024, 8, 0, 0, 0, 1, 0, 0, 0]);
    let r = DgStreamRequest::decode(&message(&bytes));
    assert_eq!(
        (r.cpu_bind, r.message_size, r.recv_alignment),
        (-1, 1024, 8)
    );
    assert_eq!((r.test_length, r.path.name_len), (1, 0));
    assert!(r.path.terminated && r.path.bytes.is_empty());

    let response = DgStreamResponse {
        recv_buf_size: 4096,
        test_length: 1,
        path: UnixPath::new(b"/x"),
        ..Default::default()
    };
    let m = response.encode();
    let mut want = be(&[44, 0, 4096, 0, 0, 1, 0, 0, 0, 2]);
    want.extend_from_slice(&[0, 0, b'x', b'/']);
    assert_eq!(&m.bytes[..want.len()], &want[..]);
}

#[test]
fn results_carry_the_response_type_swapped_except_dg_stream() {
    let m = StreamStreamResults::default().encode();
    assert_eq!(&m.bytes[..4], &[38, 0, 0, 0]);
    assert_eq!(m.kind(), STREAM_STREAM_RESPONSE);
    assert_eq!(
        &StreamRrResults::default().encode().bytes[..4],
        &[41, 0, 0, 0]
    );
    assert_eq!(&DgRrResults::default().encode().bytes[..4], &[47, 0, 0, 0]);
    assert_eq!(
        &DgStreamResults::default().encode().bytes[..4],
        &[0, 0, 0, 45]
    );
}

#[test]
fn results_fields_in_order() {
    let r = StreamRrResults {
        serv_errno: 0,
        bytes_received: 20,
        recv_calls: 10,
        trans_received: 10,
        elapsed_time: 1.0,
        cpu_util: 12.5,
        serv_dem: -1.0,
        num_cpus: 2,
    };
    let m = r.encode();
    let want = be(&[
        0x2900_0000,
        0,
        20,
        10,
        10,
        1f32.to_bits(),
        12.5f32.to_bits(),
        (-1f32).to_bits(),
        2,
    ]);
    assert_eq!(&m.bytes[..want.len()], &want[..]);
    assert_eq!(StreamRrResults::decode(&m), r);
    let d = DgStreamResults {
        serv_errno: 0,
        messages_recvd: 5,
        bytes_received: 5120,
        elapsed_time: 2.0,
        cpu_util: -1.0,
        num_cpus: 4,
    };
    assert_eq!(DgStreamResults::decode(&d.encode()), d);
    let s = StreamStreamResults {
        bytes_received: 7,
        recv_calls: 3,
        num_cpus: 8,
        ..Default::default()
    };
    assert_eq!(StreamStreamResults::decode(&s.encode()), s);
    let g = DgRrResults {
        trans_received: 9,
        ..Default::default()
    };
    assert_eq!(DgRrResults::decode(&g.encode()), g);
}

#[test]
fn every_request_and_response_round_trips_with_a_path() {
    let path = UnixPath::new(b"/tmp/netperf.abcdef");
    let m = StreamRrRequest {
        request_size: 64,
        path: path.clone(),
        ..Default::default()
    };
    assert_eq!(StreamRrRequest::decode(&m.encode()), m);
    let m = StreamStreamResponse {
        receive_size: 4096,
        path: path.clone(),
        ..Default::default()
    };
    assert_eq!(StreamStreamResponse::decode(&m.encode()), m);
    let m = DgRrResponse {
        send_buf_size: 9,
        path: path.clone(),
        ..Default::default()
    };
    assert_eq!(DgRrResponse::decode(&m.encode()), m);
    assert!(DgRrResponse::decode(&m.encode()).path.is_announced());
    let m = DgStreamRequest {
        message_size: 1,
        path,
        ..Default::default()
    };
    assert_eq!(DgStreamRequest::decode(&m.encode()), m);
}

#[test]
fn long_paths_spill_past_the_field_and_are_bounded() {
    let long = [b'd'; 80];
    let r = StreamRrResponse {
        path: UnixPath::new(&long),
        ..Default::default()
    };
    assert_eq!(StreamRrResponse::decode(&r.encode()).path.bytes, long);
    let too_long = [b'e'; 200];
    let cut = UnixPath::new(&too_long);
    assert_eq!(cut.bytes.len(), PATH_FIELD_MAX - 1);
    let back = StreamRrResponse::decode(
        &StreamRrResponse {
            path: cut,
            ..Default::default()
        }
        .encode(),
    );
    assert_eq!(back.path.bytes.len(), PATH_FIELD_MAX - 1);
    assert!(back.path.terminated);
}

#[test]
fn unterminated_or_inconsistent_paths_are_flagged() {
    let mut bytes = [0x41u8; MESSAGE_LEN];
    bytes[..4].copy_from_slice(&37u32.to_be_bytes());
    let r = StreamStreamRequest::decode(&Message::from_bytes(bytes));
    assert!(!r.path.terminated);
    assert_eq!(r.path.bytes.len(), PATH_FIELD_MAX);
    assert!(!r.path.is_announced());
    // Re-sent as read: still unterminated, not cut to fit a NUL.
    assert_eq!(StreamStreamRequest::decode(&r.encode()), r);
    let mut lying = UnixPath::new(b"/tmp");
    lying.name_len = 3;
    assert!(!lying.is_announced());
}

#[test]
fn names_and_kinds_round_trip() {
    for (name, test, _) in UNIX_TESTS {
        assert_eq!(UnixTest::lookup(&name.to_lowercase()), Some(test));
        assert_eq!(test.name(), name);
        assert_eq!(UnixTest::from_request_kind(test.request_kind()), Some(test));
    }
    assert_eq!(UnixTest::lookup("TCP_STREAM"), None);
    assert_eq!(UnixTest::from_request_kind(DO_STREAM_STREAM + 1), None);
    assert_eq!(UnixTest::DgRr.response_kind(), 47);
    assert_eq!(UnixTest::from_response_kind(47), Some(UnixTest::DgRr));
    assert_eq!(UnixTest::from_response_kind(0), None);
}
