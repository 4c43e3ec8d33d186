//! Tests of the legacy codecs against real captured control bytes. That any
//! value round-trips and any bytes decode is checked for every codec in
//! tests/codec_props.rs (`legacy_messages_round_trip`, `decoding_any_bytes_never_panics`).

use super::*;

/// A captured message: the words given, zeros after (as captured).
fn captured(words: &[u32]) -> Message {
    let mut m = Message::default();
    for (index, word) in words.iter().enumerate() {
        m.set_word(index, *word);
    }
    m
}

// Real control messages between stock netperf and netserver 2.7.1 on
// x86_64 Linux over loopback (strace of netperf); all later bytes are 0.

// netperf -t TCP_SENDFILE -l 1 -c -C -- -s 65536 -S 87380 -m 8192 -D
const SENDFILE_CPU_REQUEST: &[u32] = &[
    0x0000000a, 0xffffffff, 0x00015554, 0x00015554, 0x00000000, 0x00000008, 0x00000000, 0x00000001,
    0x00000001, 0x00000000, 0x00000001, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000004,
];
const SENDFILE_CPU_RESPONSE: &[u32] = &[
    0x0000000b, 0x00000000, 0x0002aaa8, 0x0002aaa8, 0x00000001, 0x00000001, 0x00000000, 0x0002aaa8,
    0x00009019, 0x42c80000,
];
const SENDFILE_CPU_RESULTS: &[u32] = &[
    0x0b000000, 0x00000000, 0x41bd8380, 0x00000000, 0x0000ead7, 0x3f80095f, 0x42853d92, 0xa8aa0200,
    0x00000008, 0x00000002,
];

// netperf -t TCP_SENDFILE -l 1 -- -V (request omitted)
const SENDFILE_AVOID_RESPONSE: &[u32] = &[
    0x0000000b, 0x00000000, 0x00020000, 0x00020000, 0x00000000, 0x00000000, 0x00000000, 0x00004000,
    0x0000905b, 0x00000000, 0x00000001, 0x00000001,
];
const SENDFILE_AVOID_RESULTS: &[u32] = &[
    0x0b000000, 0x00000000, 0x41c48500, 0x00000000, 0x00006f83, 0x3f800924, 0x00000000, 0x00400000,
    0x00000000, 0x00000000, 0x01000000, 0x01000000,
];

// netperf -t TCP_CC -l 1 -c -C -- -r 32,64 -D
const CC_CPU_REQUEST: &[u32] = &[
    0x0000012c, 0xffffffff, 0xffffffff, 0xffffffff, 0x00000008, 0x00000000, 0x00000008, 0x00000000,
    0x00000020, 0x00000040, 0x00000001, 0x00000001, 0x00000000, 0x00000001, 0x00000000, 0x00000000,
    0x00000000, 0x00000004,
];
const CC_CPU_RESPONSE: &[u32] = &[
    0x0000012d, 0x00000000, 0x00020000, 0x00000001, 0x00000001, 0x00000000, 0x00004000, 0x0000860f,
    0x42c80000,
];
const CC_CPU_RESULTS: &[u32] = &[
    0x2d010000, 0x00000000, 0x00042f60, 0x01000000, 0x00000b29, 0x3f800840, 0x41fd5cde, 0x0f860000,
    0x0000c842, 0x00000002,
];

// netperf -t TCP_CC -l -100 -- -V
const CC_COUNT_REQUEST: &[u32] = &[
    0x0000012c, 0xffffffff, 0xffffffff, 0xffffffff, 0x00000008, 0x00000000, 0x00000008, 0x00000000,
    0x00000001, 0x00000001, 0x00000000, 0x00000000, 0x00000000, 0xffffff9c, 0x00000001, 0x00000001,
    0x00000000, 0x00000004,
];
const CC_COUNT_RESPONSE: &[u32] = &[
    0x0000012d, 0x00000000, 0x00020000, 0x00000000, 0x00000000, 0x00000000, 0x00004000, 0x0000895f,
    0x00000000, 0x00000001, 0x00000001,
];
const CC_COUNT_RESULTS: &[u32] = &[
    0x2d010000, 0x00000000, 0x000000c8, 0x00000000, 0x00000064, 0x3c71d3ed, 0x00400000, 0x5f890000,
    0x00000000, 0x00000000, 0x01000000,
];

fn sendfile_cpu_response() -> TcpStreamResponse {
    TcpStreamResponse {
        serv_errno: 0,
        recv_buf_size: 174760,
        receive_size: 174760,
        no_delay: 1,
        measure_cpu: 1,
        test_length: 0,
        send_buf_size: 174760,
        data_port_number: 36889,
        cpu_rate: 100.0,
        so_rcvavoid: 0,
        so_sndavoid: 0,
    }
}

fn cc_cpu_response() -> TcpCcResponse {
    TcpCcResponse {
        serv_errno: 0,
        recv_buf_size: 131072,
        no_delay: 1,
        measure_cpu: 1,
        test_length: 0,
        send_buf_size: 16384,
        data_port_number: 34319,
        cpu_rate: 100.0,
        so_rcvavoid: 0,
        so_sndavoid: 0,
    }
}

#[test]
fn sendfile_request_matches_capture() {
    let expected = TcpStreamRequest {
        cpu_bind: -1,
        send_buf_size: 87380,
        recv_buf_size: 87380,
        receive_size: 0,
        recv_alignment: 8,
        recv_offset: 0,
        no_delay: 1,
        measure_cpu: 1,
        cpu_rate: 0.0,
        test_length: 1,
        so_rcvavoid: 0,
        so_sndavoid: 0,
        dirty_count: 0,
        clean_count: 0,
        port: 0,
        ipfamily: 4,
        recv_aio: 0,
    };
    let wire = captured(SENDFILE_CPU_REQUEST);
    assert_eq!(TcpStreamRequest::decode(&wire), expected);
    assert_eq!(expected.encode(), wire);
    assert_eq!(&wire.bytes[0..8], &[0, 0, 0, 0x0a, 0xff, 0xff, 0xff, 0xff]);
    // ipfamily NF_INET is data word 14.
    assert_eq!(&wire.bytes[64..68], &[0, 0, 0, 4]);
}

#[test]
fn sendfile_response_matches_capture() {
    let wire = captured(SENDFILE_CPU_RESPONSE);
    assert_eq!(TcpStreamResponse::decode(&wire), sendfile_cpu_response());
    assert_eq!(sendfile_cpu_response().encode(), wire);
    // Port 36889 is data word 6; cpu_rate 100.0 is data word 7.
    assert_eq!(&wire.bytes[32..40], &[0, 0, 0x90, 0x19, 0x42, 0xc8, 0, 0]);
}

#[test]
fn sendfile_results_match_capture() {
    let response = sendfile_cpu_response();
    let results = TcpStreamResults {
        bytes_received: 495_157_248.0,
        recv_calls: 60119,
        elapsed_time: f32::from_bits(0x3f80095f),
        cpu_util: f32::from_bits(0x42853d92),
        cpu_method: 8,
        num_cpus: 2,
        ..TcpStreamResults::left_over_from(&response)
    };
    let wire = captured(SENDFILE_CPU_RESULTS);
    assert_eq!(results.encode(), wire);
    assert_eq!(TcpStreamResults::decode(&wire), results);
    assert_eq!(wire.kind(), kind::TCP_STREAM_RESPONSE);
    assert_eq!(&wire.bytes[0..4], &[0x0b, 0, 0, 0]);
    // bytes_received: one big-endian IEEE double.
    assert_eq!(&wire.bytes[8..16], &495_157_248.0f64.to_be_bytes());
    // serv_dem is the response's send_buf_size, byte-reversed.
    assert_eq!(results.serv_dem.to_bits(), 174760u32.swap_bytes());
}

#[test]
fn sendfile_results_keep_copy_avoidance_leftovers() {
    let response = TcpStreamResponse::decode(&captured(SENDFILE_AVOID_RESPONSE));
    assert_eq!((response.so_rcvavoid, response.so_sndavoid), (1, 1));
    let results = TcpStreamResults {
        bytes_received: f64::from_bits(0x41c4_8500_0000_0000),
        recv_calls: 0x6f83,
        elapsed_time: f32::from_bits(0x3f800924),
        cpu_method: 0,
        num_cpus: 0,
        ..TcpStreamResults::left_over_from(&response)
    };
    assert_eq!(results.encode(), captured(SENDFILE_AVOID_RESULTS));
    assert_eq!(
        (results.recv_buf_size, results.send_buf_size),
        (1 << 24, 1 << 24)
    );
    assert_eq!(results.cpu_util, 0.0);
}

#[test]
fn cc_request_matches_capture() {
    let expected = TcpCcRequest {
        cpu_bind: -1,
        recv_buf_size: -1,
        send_buf_size: -1,
        recv_alignment: 8,
        recv_offset: 0,
        send_alignment: 8,
        send_offset: 0,
        request_size: 32,
        response_size: 64,
        no_delay: 1,
        measure_cpu: 1,
        cpu_rate: 0.0,
        test_length: 1,
        so_rcvavoid: 0,
        so_sndavoid: 0,
        port: 0,
        ipfamily: 4,
    };
    let wire = captured(CC_CPU_REQUEST);
    assert_eq!(TcpCcRequest::decode(&wire), expected);
    assert_eq!(expected.encode(), wire);
    assert_eq!(&wire.bytes[0..4], &[0, 0, 0x01, 0x2c]);
}

#[test]
fn cc_count_request_carries_negated_count() {
    let request = TcpCcRequest::decode(&captured(CC_COUNT_REQUEST));
    assert_eq!(request.test_length, -100);
    assert_eq!((request.so_rcvavoid, request.so_sndavoid), (1, 1));
    assert_eq!(request.encode(), captured(CC_COUNT_REQUEST));
}

#[test]
fn cc_response_matches_capture() {
    let wire = captured(CC_CPU_RESPONSE);
    assert_eq!(TcpCcResponse::decode(&wire), cc_cpu_response());
    assert_eq!(cc_cpu_response().encode(), wire);
    assert_eq!(&wire.bytes[0..4], &[0, 0, 0x01, 0x2d]);
    // Port 34319 is data word 5.
    assert_eq!(&wire.bytes[28..32], &[0, 0, 0x86, 0x0f]);
}

#[test]
fn cc_results_match_capture() {
    let response = cc_cpu_response();
    let results = TcpCcResults {
        bytes_received: 2857 * (32 + 64),
        trans_received: 2857,
        elapsed_time: f32::from_bits(0x3f800840),
        cpu_util: f32::from_bits(0x41fd5cde),
        num_cpus: 2,
        ..TcpCcResults::left_over_from(&response)
    };
    let wire = captured(CC_CPU_RESULTS);
    assert_eq!(results.encode(), wire);
    assert_eq!(TcpCcResults::decode(&wire), results);
    assert_eq!(wire.kind(), kind::TCP_CC_RESPONSE);
    assert_eq!(&wire.bytes[0..4], &[0x2d, 0x01, 0, 0]);
    // Leftovers: no_delay 1, port, cpu_rate 100.0, all byte-reversed.
    assert_eq!(results.recv_calls, 0x0100_0000);
    assert_eq!(results.serv_dem.to_bits(), 34319u32.swap_bytes());
    assert_eq!(results.cpu_method as u32, 100.0f32.to_bits().swap_bytes());
}

#[test]
fn cc_results_keep_word_past_the_struct() {
    let response = TcpCcResponse::decode(&captured(CC_COUNT_RESPONSE));
    let results = TcpCcResults {
        bytes_received: 200,
        trans_received: 100,
        elapsed_time: f32::from_bits(0x3c71d3ed),
        num_cpus: 0,
        ..TcpCcResults::left_over_from(&response)
    };
    assert_eq!(results.leftover_so_sndavoid, 0x0100_0000);
    // Not measuring CPU: cpu_util is the response's send_buf_size.
    assert_eq!(results.cpu_util.to_bits(), 16384u32.swap_bytes());
    assert_eq!(results.encode(), captured(CC_COUNT_RESULTS));
}

#[test]
fn leftovers_of_a_plain_response_are_zero_but_the_type() {
    let results = TcpStreamResults::left_over_from(&TcpStreamResponse::default());
    assert_eq!(results, TcpStreamResults::default());
    assert_eq!(
        &results.encode().bytes[0..4],
        &kind::TCP_STREAM_RESPONSE.swap_bytes().to_be_bytes()
    );
}
