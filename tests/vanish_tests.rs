//! Clients that vanish or go silent at every step of every test type netserver
//! runs (issue 7): omni TCP/UDP in each direction, TCP_CRR, the legacy
//! TCP_SENDFILE and TCP_CC, and the four Unix-domain tests. netserver runs
//! with one-second silent and accept timeouts, so every abandoned test must
//! end (a silent one with its results sent), and its threads and files must
//! come back within a few seconds, although the tests asked for an hour.
//! Every wait here is bounded; nothing asserts a timing.

mod common;

use common::control::*;
use common::*;
use netperf_ng::wire::legacy::{TcpCcRequest, TcpStreamRequest, TcpStreamResponse};
use netperf_ng::wire::omni::{OmniResponse, NF_INET};
use netperf_ng::wire::unix as uw;
use netperf_ng::wire::Message;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::path::PathBuf;
use std::time::Duration;

/// netserver's limits for these tests: short waits, room for every step.
const LIMITS: &[&str] = &[
    "--silent-timeout",
    "1",
    "--accept-timeout",
    "1",
    "--max-tests",
    "500",
];

/// A test length no step waits for: only vanishing can end these tests.
const HOUR: i32 = 3600;

/// How far a client gets before it vanishes (or goes silent).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    /// Connect and close without a byte.
    Connect,
    /// Half a request, then close.
    HalfRequest,
    /// Half a request, then silence with the connection open.
    HalfRequestSilent,
    /// The whole request, then close.
    Request,
    /// Read the response, then close.
    Response,
    /// Read the response, never connect, stay.
    ResponseSilent,
    /// Move some data, then close everything.
    Data,
    /// Move some data, then stay without moving more.
    DataSilent,
}

const STEPS: [Step; 8] = [
    Step::Connect,
    Step::HalfRequest,
    Step::HalfRequestSilent,
    Step::Request,
    Step::Response,
    Step::ResponseSilent,
    Step::Data,
    Step::DataSilent,
];

#[derive(Clone, Copy, Debug)]
enum Test {
    Omni(&'static str),
    LegacyStream,
    LegacyCc,
    Unix(u32),
}

/// What the client holds open while it is silent.
#[allow(dead_code)]
enum Held {
    Nothing,
    Tcp(TcpStream),
    Udp(UdpSocket),
    UnixStream(UnixStream),
    UnixDgram(UnixDatagram, PathBuf),
}

/// The request for `test`, and a UDP socket the server is to send to.
fn request(test: Test) -> (Message, Option<UdpSocket>) {
    match test {
        Test::Omni(name) => {
            let mut r = omni_request(name, HOUR);
            let sink = (name == "UDP_MAERTS").then(|| {
                let u = UdpSocket::bind("127.0.0.1:0").expect("udp bind");
                r.netperf_port = u32::from(u.local_addr().unwrap().port());
                u
            });
            (r.encode(), sink)
        }
        Test::LegacyStream => {
            let r = TcpStreamRequest {
                cpu_bind: -1,
                send_buf_size: -1,
                recv_buf_size: -1,
                test_length: HOUR,
                ipfamily: NF_INET as i32,
                ..Default::default()
            };
            (r.encode(), None)
        }
        Test::LegacyCc => {
            let r = TcpCcRequest {
                cpu_bind: -1,
                send_buf_size: -1,
                recv_buf_size: -1,
                test_length: HOUR,
                ipfamily: NF_INET as i32,
                ..Default::default()
            };
            (r.encode(), None)
        }
        Test::Unix(kind) => (unix_request(kind), None),
    }
}

fn unix_request(kind: u32) -> Message {
    match kind {
        uw::DO_STREAM_STREAM => uw::StreamStreamRequest {
            cpu_bind: -1,
            test_length: HOUR,
            ..Default::default()
        }
        .encode(),
        uw::DO_STREAM_RR => uw::StreamRrRequest {
            cpu_bind: -1,
            request_size: 1,
            response_size: 1,
            test_length: HOUR,
            ..Default::default()
        }
        .encode(),
        uw::DO_DG_STREAM => uw::DgStreamRequest {
            cpu_bind: -1,
            message_size: 64,
            test_length: HOUR,
            ..Default::default()
        }
        .encode(),
        _ => uw::DgRrRequest {
            cpu_bind: -1,
            request_size: 1,
            response_size: 1,
            test_length: HOUR,
            ..Default::default()
        }
        .encode(),
    }
}

/// The socket file a Unix test's response names.
fn unix_path(kind: u32, m: &Message) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let bytes = match kind {
        uw::DO_STREAM_STREAM => uw::StreamStreamResponse::decode(m).path.bytes,
        uw::DO_STREAM_RR => uw::StreamRrResponse::decode(m).path.bytes,
        uw::DO_DG_STREAM => uw::DgStreamResponse::decode(m).path.bytes,
        _ => uw::DgRrResponse::decode(m).path.bytes,
    };
    PathBuf::from(std::ffi::OsStr::from_bytes(&bytes))
}

fn tcp_to(port: u16) -> TcpStream {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("data connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

/// One request/response exchange of a byte on a stream.
fn exchange(s: &mut (impl Read + Write)) {
    s.write_all(b"x").expect("send a request");
    let mut b = [0u8; 1];
    s.read_exact(&mut b).expect("read a response");
}

/// Move a little data the way `test`'s client would; what stays open.
fn move_data(test: Test, response: &Message, sink: Option<UdpSocket>) -> Held {
    match test {
        Test::Omni(name) => {
            let port = OmniResponse::decode(response).data_port as u16;
            match name {
                "TCP_STREAM" => {
                    let mut d = tcp_to(port);
                    d.write_all(&[7u8; 4096]).expect("send data");
                    Held::Tcp(d)
                }
                "TCP_MAERTS" => {
                    let mut d = tcp_to(port);
                    let mut b = [0u8; 100];
                    d.read_exact(&mut b).expect("receive data");
                    Held::Tcp(d)
                }
                "TCP_RR" => {
                    let mut d = tcp_to(port);
                    exchange(&mut d);
                    Held::Tcp(d)
                }
                "TCP_CRR" => {
                    exchange(&mut tcp_to(port));
                    Held::Tcp(tcp_to(port))
                }
                "UDP_MAERTS" => {
                    let u = sink.expect("a UDP sink");
                    u.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                    let mut b = [0u8; 2048];
                    u.recv(&mut b).expect("a datagram from netserver");
                    Held::Udp(u)
                }
                _ => {
                    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
                    u.connect(("127.0.0.1", port)).unwrap();
                    for _ in 0..3 {
                        u.send(&[7u8; 1024]).expect("send a datagram");
                    }
                    Held::Udp(u)
                }
            }
        }
        Test::LegacyStream => {
            let port = TcpStreamResponse::decode(response).data_port_number as u16;
            let mut d = tcp_to(port);
            d.write_all(&[7u8; 4096]).expect("send data");
            Held::Tcp(d)
        }
        Test::LegacyCc => {
            let port = netperf_ng::wire::legacy::TcpCcResponse::decode(response).data_port_number;
            drop(tcp_to(port as u16));
            Held::Tcp(tcp_to(port as u16))
        }
        Test::Unix(kind) => {
            let path = unix_path(kind, response);
            match kind {
                uw::DO_STREAM_STREAM | uw::DO_STREAM_RR => {
                    let mut s = UnixStream::connect(&path).expect("connect to the socket file");
                    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                    if kind == uw::DO_STREAM_RR {
                        exchange(&mut s);
                    } else {
                        s.write_all(&[7u8; 4096]).expect("send data");
                    }
                    Held::UnixStream(s)
                }
                uw::DO_DG_STREAM => {
                    let u = UnixDatagram::unbound().unwrap();
                    for _ in 0..3 {
                        u.send_to(&[7u8; 64], &path).expect("send a datagram");
                    }
                    Held::UnixDgram(u, PathBuf::new())
                }
                _ => {
                    let own = std::env::temp_dir().join(format!(
                        "ng-vanish-{}-{}",
                        std::process::id(),
                        rand_tag()
                    ));
                    let u = UnixDatagram::bind(&own).expect("bind a client socket file");
                    u.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                    u.send_to(b"x", &path).expect("send a request");
                    let mut b = [0u8; 8];
                    u.recv(&mut b).expect("a response");
                    Held::UnixDgram(u, own)
                }
            }
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Held::UnixDgram(_, own) = self {
            if !own.as_os_str().is_empty() {
                let _ = std::fs::remove_file(own);
            }
        }
    }
}

fn rand_tag() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A UDP sender cannot tell a silent client from a listening one: it runs
/// until its length, the control connection closes, or SIGTERM.
fn can_go_silent(test: Test) -> bool {
    !matches!(test, Test::Omni("UDP_MAERTS"))
}

/// Run `step` of `test` against the server; panics name the step.
fn run_step(server: &Server, test: Test, step: Step) {
    let what = format!("{test:?} {step:?}");
    let (request, sink) = request(test);
    let mut control = connect(server);
    if step == Step::Connect {
        return;
    }
    if matches!(step, Step::HalfRequest | Step::HalfRequestSilent) {
        control.write_all(&request.bytes[..300]).unwrap();
        if step == Step::HalfRequestSilent {
            // The rest must come within the silent timeout: the server
            // closes without answering half a message.
            match read_reply(&mut control, Duration::from_secs(8)) {
                Reply::Closed => {}
                other => panic!("{what}: the server kept a half message: {other:?}"),
            }
        }
        return;
    }
    send_message(&mut control, &request).expect("send the request");
    if step == Step::Request {
        return;
    }
    let response = match read_reply(&mut control, Duration::from_secs(10)) {
        Reply::Message(m) => m,
        other => panic!("{what}: no response: {other:?}"),
    };
    assert_eq!(response.serv_errno(), 0, "{what}: refused");
    let held = match step {
        Step::Data | Step::DataSilent => move_data(test, &response, sink),
        _ => Held::Nothing,
    };
    if matches!(step, Step::ResponseSilent | Step::DataSilent) && can_go_silent(test) {
        // The server ends the abandoned test and still sends its results.
        match read_reply(&mut control, Duration::from_secs(10)) {
            // Results carry the response's type (stock netserver) or the next.
            Reply::Message(m) => assert!(
                m.kind() == response.kind() || m.kind() == response.kind() + 1,
                "{what}: {m:?}"
            ),
            other => panic!("{what}: no results after silence: {other:?}"),
        }
    }
    drop(held);
}

/// Every step of each of `tests`, four clients at a time; then netserver's
/// threads and files must be back to where they were, and it still serves.
fn vanish_all(tests: &[Test]) {
    let server = Server::start_with("127.0.0.1", LIMITS);
    still_serves(&server);
    let (base_threads, base_fds) = (threads(&server), open_fds(&server));
    for test in tests {
        for steps in STEPS.chunks(4) {
            std::thread::scope(|scope| {
                for &step in steps {
                    let server = &server;
                    scope.spawn(move || run_step(server, *test, step));
                }
            });
        }
    }
    let after = wait_threads_back(&server, base_threads, 1, 15);
    assert!(
        after <= base_threads + 1,
        "threads: {base_threads} before, {after} after"
    );
    let mut fds = open_fds(&server);
    for _ in 0..50 {
        if fds <= base_fds + 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        fds = open_fds(&server);
    }
    assert!(
        fds <= base_fds + 1,
        "open files: {base_fds} before, {fds} after"
    );
    let rss_kb = proc_status(server.pid(), "VmRSS:").expect("VmRSS");
    assert!(rss_kb < 200 * 1024, "netserver holds {rss_kb} kB");
    still_serves(&server);
}

#[test]
fn omni_tcp_clients_vanish_at_every_step() {
    vanish_all(&[
        Test::Omni("TCP_STREAM"),
        Test::Omni("TCP_MAERTS"),
        Test::Omni("TCP_RR"),
        Test::Omni("TCP_CRR"),
    ]);
}

#[test]
fn omni_udp_clients_vanish_at_every_step() {
    vanish_all(&[
        Test::Omni("UDP_STREAM"),
        Test::Omni("UDP_MAERTS"),
        Test::Omni("UDP_RR"),
    ]);
}

#[test]
fn legacy_and_unix_clients_vanish_at_every_step() {
    if fast_tier_skips("slow (13 s)") {
        return;
    }
    vanish_all(&[
        Test::LegacyStream,
        Test::LegacyCc,
        Test::Unix(uw::DO_STREAM_STREAM),
        Test::Unix(uw::DO_STREAM_RR),
        Test::Unix(uw::DO_DG_STREAM),
        Test::Unix(uw::DO_DG_RR),
    ]);
}
