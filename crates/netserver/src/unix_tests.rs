//! Unit tests of netserver's Unix-domain half (`unix.rs`).

use netperf_wire::unix::{
    DgRrRequest, DgRrResponse, DgStreamRequest, StreamRrRequest, StreamRrResults,
    StreamStreamRequest,
};

use super::*;

#[test]
fn only_clients_on_this_host_get_socket_files() {
    let at = |ip: &str| SocketAddr::new(ip.parse().unwrap(), 40000);
    assert!(same_host(at("127.0.0.1")).is_ok());
    assert!(same_host(at("::ffff:127.0.0.1")).is_ok());
    // TEST-NET-1 is nobody's address.
    assert_eq!(same_host(at("192.0.2.1")).unwrap_err().errno, libc::EPERM);
}

fn plan(test: UnixTest) -> Plan {
    let m = match test {
        UnixTest::StreamStream => StreamStreamRequest {
            cpu_bind: -1,
            test_length: 1,
            ..Default::default()
        }
        .encode(),
        UnixTest::StreamRr => StreamRrRequest {
            cpu_bind: -1,
            request_size: 1,
            response_size: 1,
            test_length: -10,
            ..Default::default()
        }
        .encode(),
        UnixTest::DgStream => DgStreamRequest {
            cpu_bind: -1,
            message_size: 1024,
            test_length: 1,
            ..Default::default()
        }
        .encode(),
        UnixTest::DgRr => DgRrRequest {
            cpu_bind: -1,
            request_size: 1,
            response_size: 1,
            test_length: 1,
            ..Default::default()
        }
        .encode(),
    };
    Plan::decode(test, &m)
}

#[test]
fn good_requests_pass_with_the_default_directory() {
    for test in [
        UnixTest::StreamStream,
        UnixTest::StreamRr,
        UnixTest::DgStream,
        UnixTest::DgRr,
    ] {
        assert_eq!(
            plan(test).validate(&Limits::default()).unwrap(),
            path::default_dir(),
            "{test:?}"
        );
    }
    assert_eq!(plan(UnixTest::StreamRr).transaction_limit(), Some(10));
    assert!(plan(UnixTest::DgRr).timed() && !plan(UnixTest::StreamStream).timed());
}

#[test]
fn bad_fields_are_refused_with_errnos() {
    let errno = |p: Plan| p.validate(&Limits::default()).unwrap_err().errno;
    let mut p = plan(UnixTest::StreamRr);
    p.f.request_size = 0;
    assert_eq!(errno(p), libc::EINVAL);
    let mut p = plan(UnixTest::DgStream);
    p.f.message_size = netperf_data::engine::sizing::MAX_MESSAGE + 1;
    assert_eq!(errno(p), libc::EINVAL);
    let mut p = plan(UnixTest::StreamStream);
    p.f.recv_buf_size = i32::MAX;
    assert_eq!(errno(p), libc::EINVAL);
    let mut p = plan(UnixTest::StreamStream);
    p.f.recv_alignment = -8;
    assert_eq!(errno(p), libc::EINVAL);
    let mut p = plan(UnixTest::DgRr);
    p.f.test_length = 0;
    assert_eq!(errno(p), libc::EINVAL);
    let mut p = plan(UnixTest::DgRr);
    p.f.test_length = i32::MAX;
    assert_eq!(errno(p), libc::EINVAL);
    let mut p = plan(UnixTest::StreamStream);
    p.f.path = UnixPath::new(b"/no/such/netperf-ng/dir");
    assert_eq!(errno(p), libc::ENOENT);
    let mut p = plan(UnixTest::StreamStream);
    p.f.path = UnixPath::new(b"relative/dir");
    assert_eq!(errno(p), libc::EINVAL);
    let mut p = plan(UnixTest::StreamStream);
    p.f.path = UnixPath::new(b"/tmp");
    p.f.path.terminated = false;
    assert_eq!(errno(p), libc::EINVAL);
    let mut p = plan(UnixTest::StreamStream);
    p.f.path.name_len = -1;
    assert_eq!(errno(p), libc::EINVAL);
}

#[test]
fn any_bytes_decode_and_validate_without_panicking() {
    let mut seed: u32 = 0x1234_5678;
    for round in 0..200 {
        let mut bytes = [0u8; netperf_wire::MESSAGE_LEN];
        for b in bytes.iter_mut() {
            // A small LCG: varied but repeatable.
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            *b = match round % 4 {
                0 => (seed >> 16) as u8,
                1 => 0xff,
                2 => (seed >> 16) as u8 & 0x2f,
                _ => 0,
            };
        }
        for test in [
            UnixTest::StreamStream,
            UnixTest::StreamRr,
            UnixTest::DgStream,
            UnixTest::DgRr,
        ] {
            let _ = Plan::decode(test, &Message::from_bytes(bytes)).validate(&Limits::default());
        }
    }
}

#[test]
fn setup_creates_and_removes_the_socket_file() {
    let p = plan(UnixTest::DgRr);
    let s = open(&p, &path::default_dir(), &Limits::default()).unwrap();
    let file = s.file.path().to_path_buf();
    assert!(file.exists());
    let m = response(&p, &s, 0.0);
    let back = DgRrResponse::decode(&m);
    assert_eq!(back.path.bytes, s.file.as_bytes());
    assert!(back.path.is_announced());
    drop(s);
    assert!(!file.exists());
}

#[test]
fn results_wrap_like_c_ints() {
    let mut p = plan(UnixTest::StreamRr);
    p.f.request_size = 1 << 20;
    let done = Done {
        value: Counters {
            transactions: 1 << 12,
            ..Default::default()
        },
        ..Default::default()
    };
    let r = StreamRrResults::decode(&results(&p, &done, 0));
    assert_eq!(r.trans_received, 4096);
    assert_eq!(r.bytes_received, 4096i32.wrapping_mul((1 << 20) + 1));
    assert_eq!(r.cpu_util, -1.0);
}
