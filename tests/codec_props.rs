//! Property tests of the control-message codecs: every value encodes and
//! decodes back to itself, strings come back cut as the encoder documents
//! (at the first NUL, to their field less its NUL, on a character
//! boundary), and decoding any bytes never panics. Byte layouts against
//! stock netperf are checked elsewhere (wire_capture, the unit tests).

use netperf_ng::fuzzing::decode;
use netperf_ng::wire::extension::{
    Extension, MAX_BUSY_POLL_USECS, MAX_FLOWS, MAX_FLOW_THREADS, MAX_GSO_SEGMENTS, MAX_MMSG,
    MAX_NOTSENT_LOWAT, MAX_TCP_INFO_MS,
};
use netperf_ng::wire::omni::{OmniRequest, OmniResponse, OmniResults, NF_INET6};
use netperf_ng::wire::system_facts::DatagramCounts;
use netperf_ng::wire::system_facts::{self, SystemFacts};
use netperf_ng::wire::unix::{self as unix, UnixPath, PATH_FIELD_MAX};
use netperf_ng::wire::{self, legacy, Message, MESSAGE_LEN, PASSPHRASE_MAX};
use proptest::collection::vec;
use proptest::prelude::*;
use std::fmt::Debug;

/// Few cases: there are many properties, and the file should take seconds.
/// Failures print their minimal case; none are written into the tree.
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// What a string field of `len` bytes gives back: up to the first NUL, at
/// most `len - 1` bytes (room for the NUL), never half a character.
fn bounded(s: &str, len: usize) -> String {
    let s = s.split('\0').next().unwrap_or("");
    let mut end = s.len().min(len - 1);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// Strings of any characters, NUL included, some longer than any field.
fn text(max: usize) -> impl Strategy<Value = String> {
    prop_oneof![
        vec(any::<char>(), 0..max).prop_map(String::from_iter),
        vec(prop::char::range('a', 'z'), 0..max).prop_map(String::from_iter),
    ]
}

/// `v` decodes back as `expected` (by Debug text: floats may be NaN) and
/// the encoding is stable.
fn round_trips<T: Debug>(
    v: &T,
    expected: &T,
    encode: impl Fn(&T) -> Message,
    decode: impl Fn(&Message) -> T,
) {
    let m = encode(v);
    let back = decode(&m);
    assert_eq!(format!("{back:?}"), format!("{expected:?}"));
    assert!(
        encode(&back).bytes == m.bytes,
        "encoding of {back:?} is not stable"
    );
}

/// Random data words, as many as a struct has fields.
fn words() -> impl Strategy<Value = Vec<u32>> {
    vec(any::<u32>(), 40)
}

/// A message whose data words are `words`: each codec field of the legacy
/// and Unix structs is one word, so decoding random words reaches every
/// value of those structs, whose encode → decode is then checked.
fn words_message(kind: u32, second: u32, words: &[u32]) -> Message {
    let mut m = Message::new(kind, second as i32);
    for (i, w) in words.iter().enumerate() {
        m.set_data_u32(i, *w);
    }
    m
}

fn ip(family: u32) -> impl Strategy<Value = [u8; 16]> {
    any::<[u8; 16]>().prop_map(move |mut ip| {
        // IPv4 travels as one word; the other 12 bytes are not sent.
        if family != NF_INET6 {
            ip[4..].fill(0);
        }
        ip
    })
}

fn omni_request() -> impl Strategy<Value = OmniRequest> {
    let family = prop_oneof![Just(4u32), Just(NF_INET6), any::<u32>()];
    (words(), family, text(40), text(60))
        .prop_flat_map(|(w, family, cong, fill)| {
            (Just((w, family, cong, fill)), ip(family), ip(family))
        })
        .prop_map(
            |((w, ipfamily, cong_control, fill_file), netperf_ip, netserver_ip)| {
                let i = |n: usize| w[n] as i32;
                OmniRequest {
                    cpu_bind: i(0),
                    send_buf_size: i(1),
                    send_size: i(2),
                    send_alignment: w[3],
                    send_offset: w[4],
                    send_width: w[5],
                    request_size: i(6),
                    recv_buf_size: i(7),
                    receive_size: i(8),
                    recv_alignment: w[9],
                    recv_offset: w[10],
                    recv_width: w[11],
                    response_size: i(12),
                    flags: w[13],
                    cpu_rate: f32::from_bits(w[14]),
                    test_length: i(15),
                    so_rcvavoid: w[16],
                    so_sndavoid: w[17],
                    send_dirty_count: i(18),
                    recv_dirty_count: i(19),
                    recv_clean_count: i(20),
                    data_port: w[21],
                    ipfamily,
                    socket_type: w[22],
                    protocol: w[23],
                    direction: w[24],
                    netperf_port: w[25],
                    interval_burst: w[26],
                    interval_usecs: w[27],
                    netperf_ip,
                    netserver_ip,
                    socket_prio: i(28),
                    socket_tos: i(29),
                    cong_control,
                    fill_file,
                }
            },
        )
}

fn omni_response() -> impl Strategy<Value = OmniResponse> {
    (words(), text(50), text(100), text(30)).prop_map(|(w, system_model, cpu_model, security)| {
        let i = |n: usize| w[n] as i32;
        OmniResponse {
            serv_errno: i(0),
            recv_buf_size: i(1),
            receive_size: i(2),
            recv_width: i(3),
            send_buf_size: i(4),
            send_size: i(5),
            send_width: i(6),
            flags: w[7],
            cpu_rate: f32::from_bits(w[8]),
            test_length: w[9],
            so_rcvavoid: w[10],
            so_sndavoid: w[11],
            data_port: w[12],
            interval_burst: w[13],
            interval_usecs: w[14],
            cpu_frequency: w[15],
            security_info: w[16],
            socket_prio: i(17),
            socket_tos: i(18),
            system_model,
            cpu_model,
            security_string: security,
        }
    })
}

fn omni_results() -> impl Strategy<Value = OmniResults> {
    (words(), vec(text(50), 7)).prop_map(|(w, s)| {
        let i = |n: usize| w[n] as i32;
        let f = |n: usize| f32::from_bits(w[n]);
        OmniResults {
            serv_errno: i(0),
            bytes_received: u64::from(w[1]) << 32 | u64::from(w[2]),
            recv_calls: w[3],
            recv_buf_size: i(4),
            bytes_sent: u64::from(w[5]) << 32 | u64::from(w[6]),
            send_calls: w[7],
            send_buf_size: i(8),
            failed_sends: w[9],
            trans_received: w[10],
            elapsed_time: f(11),
            cpu_util: f(12),
            cpu_percent_user: f(13),
            cpu_percent_system: f(14),
            cpu_percent_iowait: f(15),
            cpu_percent_irq: f(16),
            cpu_percent_swintr: f(17),
            serv_dem: f(18),
            cpu_method: w[19],
            num_cpus: w[20],
            peak_cpu_id: i(21),
            peak_cpu_util: f(22),
            vendor: i(23),
            device: i(24),
            subvendor: i(25),
            subdevice: i(26),
            transport_retrans: i(27),
            ifname: s[0].clone(),
            driver: s[1].clone(),
            version: s[2].clone(),
            firmware: s[3].clone(),
            bus: s[4].clone(),
            ifslot: s[5].clone(),
            cong_control: s[6].clone(),
        }
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn omni_request_round_trips(r in omni_request()) {
        let expected = OmniRequest {
            cong_control: bounded(&r.cong_control, 16),
            fill_file: bounded(&r.fill_file, 32),
            ..r.clone()
        };
        round_trips(&r, &expected, OmniRequest::encode, OmniRequest::decode);
    }

    #[test]
    fn omni_response_round_trips(r in omni_response()) {
        let expected = OmniResponse {
            system_model: bounded(&r.system_model, 33),
            cpu_model: bounded(&r.cpu_model, 80),
            security_string: bounded(&r.security_string, 16),
            ..r.clone()
        };
        round_trips(&r, &expected, OmniResponse::encode, OmniResponse::decode);
    }

    #[test]
    fn omni_results_round_trip(r in omni_results()) {
        let expected = OmniResults {
            ifname: bounded(&r.ifname, 16),
            driver: bounded(&r.driver, 32),
            version: bounded(&r.version, 32),
            firmware: bounded(&r.firmware, 32),
            bus: bounded(&r.bus, 32),
            ifslot: bounded(&r.ifslot, 16),
            cong_control: bounded(&r.cong_control, 16),
            ..r.clone()
        };
        round_trips(&r, &expected, OmniResults::encode, OmniResults::decode);
    }

    #[test]
    fn legacy_messages_round_trip(w in words(), second in any::<u32>()) {
        let m = words_message(0, second, &w);
        macro_rules! check {
            ($($ty:ty),*) => {$(
                let v = <$ty>::decode(&m);
                round_trips(&v, &v, <$ty>::encode, <$ty>::decode);
            )*};
        }
        check!(
            legacy::TcpStreamRequest, legacy::TcpStreamResponse, legacy::TcpStreamResults,
            legacy::TcpCcRequest, legacy::TcpCcResponse, legacy::TcpCcResults
        );
    }

    #[test]
    fn unix_messages_round_trip(
        w in words(),
        second in any::<u32>(),
        name_len in any::<i32>(),
        path in prop_oneof![vec(1u8..=255, 0..PATH_FIELD_MAX + 20), vec(any::<u8>(), 0..40)],
    ) {
        let m = words_message(0, second, &w);
        // Up to the first NUL, cut to leave room for one.
        let sent = path.split(|&b| b == 0).next().unwrap_or(&[]);
        let cut = sent.len().min(PATH_FIELD_MAX - 1);
        let expected_path = UnixPath { name_len, bytes: sent[..cut].to_vec(), terminated: true };
        let with_path = UnixPath { name_len, bytes: path.clone(), terminated: true };
        macro_rules! check {
            (path: $($ty:ty),*) => {$(
                let mut v = <$ty>::decode(&m);
                v.path = with_path.clone();
                let mut expected = v.clone();
                expected.path = expected_path.clone();
                round_trips(&v, &expected, <$ty>::encode, <$ty>::decode);
                assert_eq!(v.encode().kind(), <$ty>::KIND);
            )*};
            ($($ty:ty),*) => {$(
                let v = <$ty>::decode(&m);
                round_trips(&v, &v, <$ty>::encode, <$ty>::decode);
            )*};
        }
        check!(path:
            unix::StreamStreamRequest, unix::StreamStreamResponse,
            unix::StreamRrRequest, unix::StreamRrResponse,
            unix::DgStreamRequest, unix::DgStreamResponse,
            unix::DgRrRequest, unix::DgRrResponse
        );
        check!(
            unix::StreamStreamResults, unix::StreamRrResults,
            unix::DgStreamResults, unix::DgRrResults
        );
    }

    #[test]
    fn extension_round_trips_in_range_and_is_refused_beyond(
        mmsg_batch in 0..=MAX_MMSG,
        busy in prop::option::of(0..=MAX_BUSY_POLL_USECS),
        bits in any::<[bool; 8]>(),
        gso_segments in 0..=MAX_GSO_SEGMENTS,
        tcp_info_ms in prop::option::of(0..=MAX_TCP_INFO_MS),
        notsent_lowat in prop::option::of(0..=MAX_NOTSENT_LOWAT),
        big_mark in MAX_NOTSENT_LOWAT + 1..,
        flows in prop::option::of((1..=MAX_FLOWS, 1..=MAX_FLOW_THREADS)),
        over in (MAX_MMSG + 1.., MAX_BUSY_POLL_USECS + 1.., MAX_FLOWS + 1.., MAX_GSO_SEGMENTS + 1..),
    ) {
        let (flows, flow_threads) = flows.unwrap_or((0, 0));
        let ext = Extension {
            mmsg_batch,
            zerocopy: bits[0],
            busy_poll_usecs: busy,
            system_facts: bits[1],
            sequence: bits[2],
            interface_counters: bits[3],
            flows,
            flow_threads,
            echo_sequence: bits[6],
            mptcp: bits[7],
            gso_segments,
            gro: bits[4],
            skip_rx_copy: bits[5],
            tcp_info_ms,
            notsent_lowat,
        };
        // It lives in an omni request, beside the request's own fields.
        let mut m = OmniRequest::default().encode();
        ext.encode_into(&mut m);
        let expected = ext.is_used().then_some(ext);
        prop_assert_eq!(Extension::decode(&m), Ok(expected));
        prop_assert_eq!(OmniRequest::decode(&m), OmniRequest::default());
        // Out of range values are refused with a reason, never cut.
        let big_batch = Extension { mmsg_batch: over.0, ..ext };
        let mut m = Message::default();
        big_batch.encode_into(&mut m);
        prop_assert!(Extension::decode(&m).is_err());
        let long_poll = Extension { busy_poll_usecs: Some(over.1), ..ext };
        let mut m = Message::default();
        long_poll.encode_into(&mut m);
        prop_assert!(Extension::decode(&m).is_err());
        let too_many = Extension { flows: over.2, flow_threads: 1, ..ext };
        let mut m = Message::default();
        too_many.encode_into(&mut m);
        prop_assert!(Extension::decode(&m).is_err());
        let too_many_segments = Extension { gso_segments: over.3, ..ext };
        let mut m = Message::default();
        too_many_segments.encode_into(&mut m);
        prop_assert!(Extension::decode(&m).is_err());
        let past_an_int = Extension { notsent_lowat: Some(big_mark), ..ext };
        let mut m = Message::default();
        past_an_int.encode_into(&mut m);
        prop_assert!(Extension::decode(&m).is_err());
    }

    #[test]
    fn results_blocks_round_trip(
        texts in vec(text(90), 6),
        cpu_mhz in any::<i32>(),
        cpu_count in any::<u32>(),
        delta in any::<[u64; 4]>(),
        counts in any::<[u64; 3]>(),
        results in omni_results(),
    ) {
        let facts = SystemFacts {
            sysname: texts[0].clone(),
            machine: texts[1].clone(),
            release: texts[2].clone(),
            version: texts[3].clone(),
            model: texts[4].clone(),
            cpu_model: texts[5].clone(),
            cpu_mhz,
            cpu_count,
        };
        let datagrams = DatagramCounts {
            lost: counts[0],
            duplicated: counts[1],
            out_of_order: counts[2],
            next_expected: 0,
        };
        let mut m = results.encode();
        facts.encode_into(&mut m);
        system_facts::encode_interface(&mut m, &delta);
        system_facts::encode_datagrams(&mut m, &datagrams);
        let expected_facts = SystemFacts {
            sysname: bounded(&facts.sysname, 16),
            machine: bounded(&facts.machine, 16),
            release: bounded(&facts.release, 48),
            version: bounded(&facts.version, 76),
            model: bounded(&facts.model, 64),
            cpu_model: bounded(&facts.cpu_model, 64),
            cpu_mhz,
            cpu_count,
        };
        prop_assert_eq!(SystemFacts::decode(&m), Some(expected_facts));
        prop_assert_eq!(system_facts::decode_interface(&m), Some(delta));
        // Counts travel as 32 bits, saturated.
        let saturated = |v: u64| v.min(u64::from(u32::MAX));
        prop_assert_eq!(
            system_facts::decode_datagrams(&m),
            Some(DatagramCounts {
                lost: saturated(counts[0]),
                duplicated: saturated(counts[1]),
                out_of_order: saturated(counts[2]),
                next_expected: 0,
            })
        );
        // The blocks leave the results' own fields alone.
        let alone = OmniResults::decode(&results.encode());
        prop_assert_eq!(format!("{:?}", OmniResults::decode(&m)), format!("{alone:?}"));
    }

    #[test]
    fn passphrase_and_calibration_round_trip(
        phrase in text(PASSPHRASE_MAX + 40),
        rate in any::<u32>().prop_map(f32::from_bits),
        cpus in any::<u32>(),
    ) {
        let m = wire::encode_passphrase(&phrase);
        prop_assert_eq!(m.kind(), wire::kind::PASSPHRASE);
        prop_assert_eq!(wire::decode_passphrase(&m), bounded(&phrase, PASSPHRASE_MAX + 1));
        let (r, n) = wire::decode_cpu_calibrate_response(&wire::encode_cpu_calibrate_response(rate, cpus));
        prop_assert_eq!((r.to_bits(), n), (rate.to_bits(), cpus));
    }

    /// The decode_message fuzz target's checks, on random bytes and on
    /// random words after a known message type.
    #[test]
    fn decoding_any_bytes_never_panics(
        bytes in vec(any::<u8>(), 0..MESSAGE_LEN + 8),
        kind in prop::sample::select(vec![5u32, 6, 10, 11, 12, 37, 38, 43, 46, 97, 98, 99, 300, 301]),
        w in vec(any::<u32>(), 0..164),
    ) {
        decode::check_message(&bytes);
        decode::check_message(&words_message(kind, 0, &w).bytes);
    }
}
