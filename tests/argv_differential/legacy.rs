//! What a legacy request asks for, against an omni one: stock netperf
//! 2.7.1 asks for TCP_CC with DO_TCP_CC and for TCP_SENDFILE and TCP_MSS
//! with DO_TCP_STREAM, where ours sends omni (docs/compatibility.md). Both
//! are read into the fields the legacy request has (the test, sizes,
//! length, buffers, alignments, nodelay, CPU, port, family), so that a
//! parser divergence in these tests is still caught.

use crate::message;
use netperf_ng::wire::kind;
use netperf_ng::wire::legacy::{TcpCcRequest, TcpStreamRequest};
use netperf_ng::wire::omni::{self, OmniRequest};

/// Whether stock's request of this kind is one of the legacy two.
pub fn is_legacy(kind: u32) -> bool {
    kind == kind::DO_TCP_CC || kind == kind::DO_TCP_STREAM
}

/// What the netserver is asked to run, by the legacy message's kind:
/// connect/close only, or receive a stream.
const CONNECT_CLOSE: i64 = 1;
const RECEIVE_STREAM: i64 = 2;
const OTHER_TEST: i64 = 0;

type Fields = Vec<(&'static str, i64)>;

/// A size where 0 and below are netserver's default, as both requests
/// mean them.
fn size(bytes: i32) -> i64 {
    i64::from(bytes.max(0))
}

fn flag(set: bool) -> i64 {
    i64::from(set)
}

/// Stock's legacy request, by field.
fn legacy_fields(words: &[u32]) -> Fields {
    let m = message(words);
    if words[0] == kind::DO_TCP_CC {
        let r = TcpCcRequest::decode(&m);
        return vec![
            ("test", CONNECT_CLOSE),
            ("cpu_bind", r.cpu_bind.into()),
            ("recv_buf_size", r.recv_buf_size.into()),
            ("send_buf_size", r.send_buf_size.into()),
            ("recv_alignment", r.recv_alignment.into()),
            ("recv_offset", r.recv_offset.into()),
            ("send_alignment", r.send_alignment.into()),
            ("send_offset", r.send_offset.into()),
            ("request_size", size(r.request_size)),
            ("response_size", size(r.response_size)),
            ("no_delay", flag(r.no_delay != 0)),
            ("measure_cpu", flag(r.measure_cpu != 0)),
            ("cpu_rate", r.cpu_rate.to_bits().into()),
            ("test_length", r.test_length.into()),
            ("so_rcvavoid", r.so_rcvavoid.into()),
            ("so_sndavoid", r.so_sndavoid.into()),
            ("port", r.port.into()),
            ("ipfamily", r.ipfamily.into()),
        ];
    }
    let r = TcpStreamRequest::decode(&m);
    vec![
        ("test", RECEIVE_STREAM),
        ("cpu_bind", r.cpu_bind.into()),
        ("send_buf_size", r.send_buf_size.into()),
        ("recv_buf_size", r.recv_buf_size.into()),
        ("receive_size", size(r.receive_size)),
        ("recv_alignment", r.recv_alignment.into()),
        ("recv_offset", r.recv_offset.into()),
        ("no_delay", flag(r.no_delay != 0)),
        ("measure_cpu", flag(r.measure_cpu != 0)),
        ("cpu_rate", r.cpu_rate.to_bits().into()),
        // A byte count goes out positive here, negated in omni.
        ("test_length", i64::from(r.test_length).abs()),
        ("so_rcvavoid", r.so_rcvavoid.into()),
        ("so_sndavoid", r.so_sndavoid.into()),
        ("port", r.port.into()),
        ("ipfamily", r.ipfamily.into()),
    ]
}

/// Our omni request read into the fields of the legacy request `kind`.
fn omni_fields(legacy_kind: u32, words: &[u32]) -> Fields {
    let r = OmniRequest::decode(&message(words));
    let connect = r.flags & omni::flag::CONNECT_TEST != 0;
    let test = match (connect, r.direction) {
        (true, 0) => CONNECT_CLOSE,
        (false, omni::DIR_RECV) => RECEIVE_STREAM,
        _ => OTHER_TEST,
    };
    let common = |length: i64| -> Fields {
        vec![
            ("test", test),
            ("cpu_bind", r.cpu_bind.into()),
            ("recv_buf_size", r.recv_buf_size.into()),
            ("send_buf_size", r.send_buf_size.into()),
            ("no_delay", flag(r.flags & omni::flag::NO_DELAY != 0)),
            ("measure_cpu", flag(r.flags & omni::flag::MEASURE_CPU != 0)),
            ("cpu_rate", r.cpu_rate.to_bits().into()),
            ("test_length", length),
            ("so_rcvavoid", r.so_rcvavoid.into()),
            ("so_sndavoid", r.so_sndavoid.into()),
            ("port", r.data_port.into()),
            ("ipfamily", r.ipfamily.into()),
        ]
    };
    let bits = |v: u32| i64::from(v as i32);
    if legacy_kind == kind::DO_TCP_CC {
        let mut fields = common(r.test_length.into());
        fields.extend([
            ("recv_alignment", bits(r.recv_alignment)),
            ("recv_offset", bits(r.recv_offset)),
            ("send_alignment", bits(r.send_alignment)),
            ("send_offset", bits(r.send_offset)),
            ("request_size", size(r.request_size)),
            ("response_size", size(r.response_size)),
        ]);
        return fields;
    }
    let mut fields = common(i64::from(r.test_length).abs());
    fields.extend([
        ("receive_size", size(r.receive_size)),
        ("recv_alignment", bits(r.recv_alignment)),
        ("recv_offset", bits(r.recv_offset)),
    ]);
    fields
}

/// The fields in which stock's legacy request `stock` and our omni request
/// `ours` ask for different things, each as `name stock/ours`.
pub fn differences(stock: &[u32], ours: &[u32]) -> Vec<String> {
    let ours: std::collections::BTreeMap<_, _> = omni_fields(stock[0], ours).into_iter().collect();
    legacy_fields(stock)
        .into_iter()
        .filter(|(name, value)| ours.get(name) != Some(value))
        .map(|(name, value)| format!("{name} {value}/{:?}", ours.get(name)))
        .collect()
}
