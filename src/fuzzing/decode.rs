//! The `decode_message` target: any bytes, as one control message, through
//! every decoder of netperf-ng and the server's request checks (omni
//! validation, fill file names, the offload opt-in's rule, the mesh opt-in's
//! messages).
//! Nothing may panic, and a decoded value must come back unchanged from
//! encode → decode, with an encoding that is then stable: a value we can
//! read is one we can write, so a relayed or re-sent message means the same.

use crate::server::limits::Limits;
use crate::server::offload_scope::OffloadScope;
use crate::server::omni_checks::validate;
use crate::wire::extension::Extension;
use crate::wire::unix::{self, Role, UnixTest};
use crate::wire::{
    self, legacy, mesh, offload, omni, system_facts, tcp_series, Message, MESSAGE_LEN,
};
use std::fmt::Debug;

/// The message a fuzz input stands for: its first 656 bytes, zero-padded.
pub fn message_from(data: &[u8]) -> Message {
    let mut bytes = [0u8; MESSAGE_LEN];
    let n = data.len().min(MESSAGE_LEN);
    bytes[..n].copy_from_slice(&data[..n]);
    Message::from_bytes(bytes)
}

/// `first` was decoded from a message: encoding and decoding it again must
/// give the same value, and encoding that the same bytes. Values are
/// compared by their Debug text because floats may be NaN (never equal to
/// themselves); the byte comparison covers what Debug cannot tell apart.
fn round_trip<T: Debug>(
    what: &str,
    first: T,
    encode: impl Fn(&T) -> Message,
    decode: impl Fn(&Message) -> T,
) {
    let encoded = encode(&first);
    let second = decode(&encoded);
    let (a, b) = (format!("{first:?}"), format!("{second:?}"));
    assert!(
        a == b,
        "{what}: decode(encode(v)) differs from v\n  v:     {a}\n  again: {b}"
    );
    assert!(
        encode(&second).bytes == encoded.bytes,
        "{what}: encode(decode(encode(v))) differs from encode(v) for {a}"
    );
}

/// The codecs of the messages that carry a fixed struct.
macro_rules! plain_codecs {
    ($m:expr; $($ty:path),* $(,)?) => {
        $( round_trip(stringify!($ty), <$ty>::decode($m), |v| v.encode(), <$ty>::decode); )*
    };
}

/// Run every check on `data` as one message; panics on a finding.
pub fn check_message(data: &[u8]) {
    let m = &message_from(data);
    let kind = m.kind();
    plain_codecs!(m;
        omni::OmniRequest, omni::OmniResponse, omni::OmniResults,
        legacy::TcpStreamRequest, legacy::TcpStreamResponse, legacy::TcpStreamResults,
        legacy::TcpCcRequest, legacy::TcpCcResponse, legacy::TcpCcResults,
        unix::StreamStreamRequest, unix::StreamStreamResponse, unix::StreamStreamResults,
        unix::StreamRrRequest, unix::StreamRrResponse, unix::StreamRrResults,
        unix::DgStreamRequest, unix::DgStreamResponse, unix::DgStreamResults,
        unix::DgRrRequest, unix::DgRrResponse, unix::DgRrResults,
    );
    check_blocks(m);
    check_offload_messages(m);
    check_mesh_messages(m);
    round_trip(
        "passphrase",
        wire::decode_passphrase(m),
        |p| wire::encode_passphrase(p),
        wire::decode_passphrase,
    );
    round_trip(
        "cpu calibrate response",
        wire::decode_cpu_calibrate_response(m),
        |(rate, cpus)| wire::encode_cpu_calibrate_response(*rate, *cpus),
        wire::decode_cpu_calibrate_response,
    );
    // What netserver decides about a request, and what our netperf makes of
    // a Unix-domain reply: only "no panic" is asked of them.
    let limits = Limits::default();
    let request = omni::OmniRequest::decode(m);
    let _ = validate(&request, &limits);
    check_fill_name(&request.fill_file);
    let _ = crate::server::legacy::check_request(m, &limits);
    let _ = crate::server::unix::check_request(m, &limits);
    let _ = UnixTest::from_request_kind(kind);
    for test in [
        UnixTest::StreamStream,
        UnixTest::StreamRr,
        UnixTest::DgStream,
        UnixTest::DgRr,
    ] {
        for role in [Role::Request, Role::Response, Role::Results] {
            let fields = unix::decode(test, role, m);
            round_trip(
                "unix fields",
                fields,
                |f| unix::encode(test, role, f),
                |m| unix::decode(test, role, m),
            );
        }
    }
}

/// A fill file name netserver accepts names one entry of its directory:
/// joined to it, it can reach nothing else.
fn check_fill_name(name: &str) {
    if crate::server::fill::check_name(name).is_ok() {
        let parts: Vec<_> = std::path::Path::new(name).components().collect();
        assert!(
            matches!(parts[..], [std::path::Component::Normal(_)]),
            "fill name {name:?} passed the check but is not one entry: {parts:?}"
        );
    }
}

/// netperf-ng's offload control: what netserver accepts and what our client
/// accepts must survive encode → decode unchanged, and a change asked of a
/// server with the bare opt-in reaches the client's route only.
fn check_offload_messages(m: &Message) {
    match offload::OffloadRequest::decode(m) {
        Ok(request) => {
            if let Some(name) = &request.interface {
                let scope = OffloadScope::TowardClient { listed: vec![] };
                let client = std::net::Ipv4Addr::LOCALHOST.into();
                let allowed = scope.permits(name, client, Some("lo")).is_ok();
                assert_eq!(allowed, name == "lo", "the rule let {name:?} through");
            }
            round_trip(
                "OffloadRequest",
                request,
                |r| r.encode(),
                |out| offload::OffloadRequest::decode(out).expect("a re-encoded request decodes"),
            )
        }
        Err(reason) => assert!(!reason.is_empty(), "a refusal says why"),
    }
    if let Some(response) = offload::OffloadResponse::decode(m) {
        round_trip(
            "OffloadResponse",
            response,
            |r| r.encode(),
            |out| offload::OffloadResponse::decode(out).expect("a re-encoded response decodes"),
        );
    }
}

/// netperf-ng's mesh messages: a request netserver reads passes its own
/// checks and is the same request encoded again (MAC and nonce included); a
/// challenge reads back as itself; a result part never panics the reader
/// and never makes it hold more than the bound.
fn check_mesh_messages(m: &Message) {
    match mesh::SignedOrigin::decode(m) {
        Ok(signed) => {
            assert!(
                signed.origin.check().is_ok(),
                "{signed:?} decoded unchecked"
            );
            round_trip(
                "SignedOrigin",
                signed,
                |s| s.encode(),
                |out| mesh::SignedOrigin::decode(out).expect("a re-encoded request decodes"),
            )
        }
        Err(reason) => assert!(!reason.is_empty(), "a refusal says why"),
    }
    if let Ok(challenge) = mesh::Challenge::decode(m) {
        round_trip(
            "Challenge",
            challenge,
            |c| c.encode(),
            |out| mesh::Challenge::decode(out).expect("a re-encoded challenge decodes"),
        );
    }
    if let Ok(Some(read)) = mesh::ResultReader::default().push(m) {
        let text_len = match &read.outcome {
            mesh::Outcome::Record(t)
            | mesh::Outcome::Refused(t)
            | mesh::Outcome::Failed(t)
            | mesh::Outcome::NotEnabled(t) => t.len(),
        };
        assert!(
            text_len <= mesh::CHUNK_LEN,
            "one part held {text_len} bytes"
        );
    }
}

/// The netperf-ng blocks added to requests and results after a magic word.
fn check_blocks(m: &Message) {
    match Extension::decode(m) {
        // A block with nothing in it means the same as none (our netperf
        // sends none then), so both read as the default.
        Ok(ext) => round_trip(
            "Extension",
            ext.unwrap_or_default(),
            |e| {
                let mut out = Message::default();
                e.encode_into(&mut out);
                out
            },
            |out| Extension::decode(out).ok().flatten().unwrap_or_default(),
        ),
        Err(reason) => assert!(!reason.is_empty(), "a refusal says why"),
    }
    round_trip(
        "SystemFacts",
        system_facts::SystemFacts::decode(m),
        |facts| {
            let mut out = Message::default();
            if let Some(f) = facts {
                f.encode_into(&mut out);
            }
            out
        },
        system_facts::SystemFacts::decode,
    );
    round_trip(
        "interface counters",
        system_facts::decode_interface(m),
        |delta| {
            let mut out = Message::default();
            if let Some(d) = delta {
                system_facts::encode_interface(&mut out, d);
            }
            out
        },
        system_facts::decode_interface,
    );
    round_trip(
        "datagram counts",
        system_facts::decode_datagrams(m),
        |counts| {
            let mut out = Message::default();
            if let Some(c) = counts {
                system_facts::encode_datagrams(&mut out, c);
            }
            out
        },
        system_facts::decode_datagrams,
    );
    // A series the reader takes whole from one message (ten intervals at
    // most) is one it writes back in one message.
    let read = |m: &Message| {
        let mut reader = tcp_series::SeriesReader::default();
        matches!(reader.take(m), Ok(true)).then(|| reader.finish())
    };
    if let Some(series) = read(m) {
        round_trip(
            "TCP_INFO series",
            Some(series),
            |s| {
                let messages = s.as_ref().map(tcp_series::encode).unwrap_or_default();
                assert_eq!(messages.len(), 1, "one message's series fits one");
                messages.into_iter().next().unwrap_or_default()
            },
            read,
        );
    }
}
