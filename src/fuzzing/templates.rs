//! Requests the `session` target starts from, and the rewrite that keeps a
//! fuzzed request's data traffic on this machine.
//!
//! Templates are well-formed requests of every kind netserver serves, so
//! that a few word edits reach deep states (a running test) instead of the
//! fuzzer having to discover a valid omni request byte by byte.

use crate::net::unix_path as path;
use crate::wire::extension::Extension;
use crate::wire::legacy::{TcpCcRequest, TcpStreamRequest};
use crate::wire::offload::{Offload, OffloadBits, OffloadOp, OffloadRequest};
use crate::wire::omni::{self, flag, OmniRequest};
use crate::wire::unix;
use crate::wire::unix::UnixTest;
use crate::wire::{self, kind, Message};
use std::sync::OnceLock;

/// The passphrase of a script whose server asks for one.
pub const PASSPHRASE: &str = "fuzz";

const IPPROTO_TCP: u32 = libc::IPPROTO_TCP as u32;
const IPPROTO_UDP: u32 = libc::IPPROTO_UDP as u32;

fn omni_request(protocol: u32, direction: u32, flags: u32, test_length: i32) -> OmniRequest {
    let (socket_type, size) = if protocol == IPPROTO_UDP {
        (omni::NST_DGRAM, 1024)
    } else {
        (omni::NST_STREAM, 16384)
    };
    let rr = direction == omni::DIR_XMIT | omni::DIR_RECV;
    OmniRequest {
        cpu_bind: -1,
        send_buf_size: -1,
        recv_buf_size: -1,
        send_size: if rr { 1 } else { size },
        receive_size: if rr { 1 } else { size },
        request_size: i32::from(rr),
        response_size: i32::from(rr),
        flags,
        test_length,
        ipfamily: omni::NF_INET,
        socket_type,
        protocol,
        direction,
        socket_prio: -1,
        socket_tos: -1,
        ..Default::default()
    }
}

fn offload_request(op: OffloadOp, changes: OffloadBits) -> Message {
    OffloadRequest {
        op,
        interface: None,
        changes,
    }
    .encode()
}

fn with_extension(mut m: Message, ext: Extension) -> Message {
    ext.encode_into(&mut m);
    m
}

fn build() -> Vec<Message> {
    let (tcp, udp) = (IPPROTO_TCP, IPPROTO_UDP);
    let (xmit, recv) = (omni::DIR_XMIT, omni::DIR_RECV);
    // One set of fields for every Unix layout: each takes its own.
    let unix_request = |test: UnixTest| -> Message {
        let fields = unix::Fields {
            cpu_bind: -1,
            receive_size: 4096,
            message_size: 1024,
            request_size: 1,
            response_size: 1,
            test_length: if test == UnixTest::DgRr { -10 } else { 1 },
            ..Default::default()
        };
        unix::encode(test, unix::Role::Request, &fields)
    };
    vec![
        // 0-6: omni as netperf's classic presets send it (TCP_STREAM,
        // TCP_MAERTS, TCP_RR by count, TCP_CRR, UDP_STREAM with every
        // extension, UDP_RR, a UDP send towards netperf).
        omni_request(tcp, recv, 0, 1).encode(),
        omni_request(tcp, xmit, flag::NO_DELAY, 1).encode(),
        omni_request(tcp, xmit | recv, 0, -100).encode(),
        omni_request(tcp, xmit | recv, flag::CONNECT_TEST, 1).encode(),
        with_extension(
            omni_request(udp, recv, flag::MEASURE_CPU, 1).encode(),
            Extension {
                mmsg_batch: 8,
                system_facts: true,
                sequence: true,
                interface_counters: true,
                ..Default::default()
            },
        ),
        omni_request(udp, xmit | recv, 0, -5).encode(),
        omni_request(udp, xmit, flag::WANT_IFNAME, 1).encode(),
        // 7-8: the legacy tests stock netperf still sends.
        TcpStreamRequest {
            cpu_bind: -1,
            receive_size: 16384,
            test_length: 1,
            ipfamily: omni::NF_INET as i32,
            ..Default::default()
        }
        .encode(),
        TcpCcRequest {
            cpu_bind: -1,
            request_size: 1,
            response_size: 1,
            test_length: -3,
            ipfamily: omni::NF_INET as i32,
            ..Default::default()
        }
        .encode(),
        // 9-12: the Unix-domain tests.
        unix_request(UnixTest::StreamStream),
        unix_request(UnixTest::StreamRr),
        unix_request(UnixTest::DgStream),
        unix_request(UnixTest::DgRr),
        // 13-17: the small messages, and a type netserver does not know.
        wire::encode_cpu_calibrate_request(),
        wire::encode_passphrase(PASSPHRASE),
        Message::new(kind::DEBUG_ON, 0),
        Message::new(kind::DO_SYSINFO, 0),
        Message::new(999, 0),
        // 18-20: netperf-ng's offload control: read the interface facing
        // the client, change it (refused: the fuzzed server does not allow
        // changes), restore.
        offload_request(OffloadOp::Read, OffloadBits::default()),
        offload_request(
            OffloadOp::Set,
            OffloadBits::from_pairs(&[(Offload::Tso, false), (Offload::Gro, true)]),
        ),
        offload_request(OffloadOp::Restore, OffloadBits::default()),
    ]
}

/// The template messages, by index.
pub fn templates() -> &'static [Message] {
    static TEMPLATES: OnceLock<Vec<Message>> = OnceLock::new();
    TEMPLATES.get_or_init(build)
}

/// A port by a request's word: kept if out of range (so the refusal is
/// fuzzed), else replaced. Fixed ports could meet other programs' sockets.
fn replace_port(m: &mut Message, index: usize, port: u16) {
    if m.data_u32(index) <= 65535 {
        m.set_data_u32(index, u32::from(port));
    }
}

/// Rewrite `m`, if it is a test request, so that whatever the server binds,
/// connects or sends to is on this machine: omni addresses become loopback
/// and the address netserver sends UDP to is `sink_port` there; data ports
/// become 0 (any); a Unix-domain socket directory becomes the default one.
pub fn confine(m: &mut Message, sink_port: u16) {
    match m.kind() {
        kind::DO_OMNI => {
            if m.data_u32(21) == omni::NF_INET6 {
                let lo = std::net::Ipv6Addr::LOCALHOST.octets();
                m.set_data_swapped_bytes(28, &lo);
                m.set_data_swapped_bytes(32, &lo);
            } else {
                for index in [28, 32] {
                    m.set_data_u32(index, u32::from(std::net::Ipv4Addr::LOCALHOST));
                }
            }
            replace_port(m, 20, 0);
            replace_port(m, 25, sink_port);
        }
        // The listen port of TCP_SENDFILE and TCP_CC.
        kind::DO_TCP_STREAM => replace_port(m, 13, 0),
        kind::DO_TCP_CC => replace_port(m, 14, 0),
        k => {
            if let Some(test) = UnixTest::from_request_kind(k) {
                confine_unix_path(m, test);
            }
        }
    }
}

/// A well-formed socket directory is replaced by the default one, where
/// netserver puts its socket files anyway; malformed ones are kept, to be
/// refused.
fn confine_unix_path(m: &mut Message, test: UnixTest) {
    let dir = path::default_dir();
    let dir = unix::UnixPath::new(dir.as_os_str().as_encoded_bytes());
    let mut fields = unix::decode(test, unix::Role::Request, m);
    if !fields.path.is_announced() {
        return;
    }
    fields.path = dir;
    let fresh = unix::encode(test, unix::Role::Request, &fields);
    // Only the path's words: the rest of the message stays as fuzzed.
    let first = wire::message::DATA_OFFSET + 4 * unix::path_word(test, unix::Role::Request);
    let end = (first + 4 + unix::PATH_FIELD_MAX).min(wire::MESSAGE_LEN);
    m.bytes[first..end].copy_from_slice(&fresh.bytes[first..end]);
}
