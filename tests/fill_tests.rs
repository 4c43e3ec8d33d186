//! Fill files (netperf's `-F local,remote`). Locally any readable file
//! works — a character device such as /dev/urandom, a FIFO — read only as
//! far as the send ring needs, and the bytes on the wire are the file's.
//! Our netserver reads remote ones only from the directory its operator
//! names with `-F DIR`, only by plain file name, never through a link out
//! of it, and a FIFO there never hangs it.

mod common;
use common::*;
use std::io::{Read, Write};
use std::net::{TcpListener, UdpSocket};
use std::process::Output;
use std::time::Duration;

/// Send ring geometry of the tests below: two buffers of this many bytes,
/// so the bytes on the wire repeat with a period of `2 * BUF`.
const BUF: usize = 1000;
const RING: usize = 2 * BUF;

/// A receiver the test runs itself (netperf's `-N` mode sends to it):
/// collects up to `keep` bytes a test sent, in the order received.
enum Receiver {
    Tcp(TcpListener),
    Udp(UdpSocket),
}

impl Receiver {
    fn port(&self) -> u16 {
        match self {
            Receiver::Tcp(l) => l.local_addr().unwrap().port(),
            Receiver::Udp(s) => s.local_addr().unwrap().port(),
        }
    }

    /// Collect in a thread; stream bytes as one vector, or each datagram.
    fn collect(self, keep: usize) -> std::thread::JoinHandle<Vec<Vec<u8>>> {
        std::thread::spawn(move || match self {
            Receiver::Tcp(l) => {
                let (mut c, _) = l.accept().unwrap();
                c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                let mut all = Vec::new();
                let mut buf = vec![0u8; 65536];
                while let Ok(n) = c.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    if all.len() < keep {
                        all.extend_from_slice(&buf[..n]);
                    }
                }
                vec![all]
            }
            Receiver::Udp(s) => {
                s.set_read_timeout(Some(Duration::from_millis(1500)))
                    .unwrap();
                let mut grams = Vec::new();
                let mut buf = vec![0u8; 65536];
                while let Ok(n) = s.recv(&mut buf) {
                    if grams.len() < keep {
                        grams.push(buf[..n].to_vec());
                    }
                }
                grams
            }
        })
    }
}

/// An echo server for TCP_RR: each request of `BUF` bytes is answered and
/// kept (up to `keep` bytes).
fn echo(l: TcpListener, keep: usize) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let (mut c, _) = l.accept().unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut all = Vec::new();
        let mut req = vec![0u8; BUF];
        while c.read_exact(&mut req).is_ok() {
            if all.len() < keep {
                all.extend_from_slice(&req);
            }
            if c.write_all(&req).is_err() {
                break;
            }
        }
        all
    })
}

/// netperf in `-N` mode against a receiver of ours on `port`, with a send
/// ring of two `BUF`-byte buffers filled from `fill`.
fn netperf_no_control(test: &str, port: u16, fill: &str, sizes: &[&str]) -> Output {
    let port = format!(",{port}");
    let mut args = vec![
        "-H",
        "127.0.0.1",
        "-N",
        "-t",
        test,
        "-l",
        "1",
        "-W",
        "2,2",
        "-F",
        fill,
        "-P",
        "0",
        "--",
        "-P",
        &port,
    ];
    args.extend_from_slice(sizes);
    run_with_limit(&NETPERF, &args, Duration::from_secs(30))
}

/// The first `RING` bytes of a stream, checked to be what the whole stream
/// repeats: the ring's bytes, buffer after buffer, from the fill source.
fn ring_of_stream(stream: &[u8]) -> Vec<u8> {
    assert!(
        stream.len() > 2 * RING,
        "only {} bytes arrived",
        stream.len()
    );
    let ring = stream[..RING].to_vec();
    for (i, b) in stream.iter().enumerate() {
        assert_eq!(*b, ring[i % RING], "byte {i} is not the ring's");
    }
    ring
}

/// A ring that looks filled from /dev/urandom: many distinct values, not
/// the default fill pattern, and its two buffers hold different bytes (the
/// file runs on from one buffer to the next, as netperf fills them).
fn looks_random(ring: &[u8]) -> bool {
    let distinct: std::collections::HashSet<u8> = ring.iter().copied().collect();
    distinct.len() > 200 && !ring.windows(7).any(|w| w == b"netperf") && ring[..BUF] != ring[BUF..]
}

fn throughput(out: &Output) -> f64 {
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    numbers(first_line(&text(&out.stdout)))
        .last()
        .copied()
        .unwrap_or(0.0)
}

#[test]
fn tcp_stream_sends_the_bytes_of_dev_urandom() {
    let mut rings = Vec::new();
    for _ in 0..2 {
        let rx = Receiver::Tcp(TcpListener::bind("127.0.0.1:0").unwrap());
        let port = rx.port();
        let got = rx.collect(1 << 20);
        let out = netperf_no_control("TCP_STREAM", port, "/dev/urandom", &["-m", "1000"]);
        assert!(throughput(&out) > 0.0);
        let stream = got.join().unwrap().remove(0);
        let ring = ring_of_stream(&stream);
        assert!(looks_random(&ring), "{:?}", &ring[..64]);
        rings.push(ring);
    }
    // Each run reads its own bytes from the device.
    assert_ne!(rings[0], rings[1]);
}

#[test]
fn udp_stream_sends_the_bytes_of_dev_urandom() {
    let rx = Receiver::Udp(UdpSocket::bind("127.0.0.1:0").unwrap());
    let port = rx.port();
    let got = rx.collect(10_000);
    let out = netperf_no_control("UDP_STREAM", port, "/dev/urandom", &["-m", "1000"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let grams = got.join().unwrap();
    assert!(grams.len() > 10, "only {} datagrams", grams.len());
    // Every datagram is one of the ring's two buffers.
    let first = grams[0].clone();
    let second = grams
        .iter()
        .find(|g| **g != first)
        .expect("two buffers")
        .clone();
    assert!(grams.iter().all(|g| *g == first || *g == second));
    assert_eq!(first.len(), BUF);
    let mut ring = first.clone();
    ring.extend_from_slice(&second);
    assert!(looks_random(&ring));
}

#[test]
fn tcp_rr_requests_carry_the_bytes_of_dev_urandom() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let got = echo(l, 1 << 20);
    let out = netperf_no_control("TCP_RR", port, "/dev/urandom", &["-r", "1000,1000"]);
    assert!(throughput(&out) > 0.0);
    let requests = got.join().unwrap();
    let ring = ring_of_stream(&requests);
    assert!(looks_random(&ring));
}

#[test]
fn a_fifo_and_a_short_file_are_sent_as_written() {
    // A known byte sequence, through a FIFO the test writes (read once, as
    // far as the ring needs) and through a regular file shorter than the
    // ring (repeated from its start, as netperf rewinds).
    let known: Vec<u8> = (0..RING).map(|i| (i * 7 % 251) as u8).collect();
    let dir = std::env::temp_dir().join(format!("netperf-ng-fillsrc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let writer = {
        let (fifo, known) = (fifo.clone(), known.clone());
        std::thread::spawn(move || {
            let mut w = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            let _ = w.write_all(&known);
        })
    };
    let rx = Receiver::Tcp(TcpListener::bind("127.0.0.1:0").unwrap());
    let port = rx.port();
    let got = rx.collect(1 << 20);
    let out = netperf_no_control("TCP_STREAM", port, fifo.to_str().unwrap(), &["-m", "1000"]);
    writer.join().unwrap();
    assert!(throughput(&out) > 0.0);
    assert_eq!(ring_of_stream(&got.join().unwrap()[0]), known);

    let short = dir.join("short");
    std::fs::write(&short, &known[..300]).unwrap();
    let rx = Receiver::Tcp(TcpListener::bind("127.0.0.1:0").unwrap());
    let port = rx.port();
    let got = rx.collect(1 << 20);
    let out = netperf_no_control("TCP_STREAM", port, short.to_str().unwrap(), &["-m", "1000"]);
    assert!(throughput(&out) > 0.0);
    let cycled: Vec<u8> = known[..300].iter().copied().cycle().take(RING).collect();
    assert_eq!(ring_of_stream(&got.join().unwrap()[0]), cycled);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn fill_sources_that_give_nothing_are_clear_errors() {
    let dir = std::env::temp_dir().join(format!("netperf-ng-fillnil-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("silent");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let server = Server::start("127.0.0.1");
    for (fill, says) in [
        ("/dev/null", "is empty"),
        (fifo.to_str().unwrap(), "no data arrived"),
        ("/no/such/file", "No such file"),
    ] {
        let out = netperf(&server, &["-l", "1", "-F", fill]);
        assert!(!out.status.success(), "{fill} ran");
        assert!(
            text(&out.stderr).contains(says),
            "{fill}: {}",
            text(&out.stderr)
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn tests_against_netserver_run_with_dev_urandom() {
    let server = Server::start("127.0.0.1");
    for test in [
        "TCP_STREAM",
        "UDP_STREAM",
        "TCP_RR",
        "UDP_RR",
        "TCP_SENDFILE",
    ] {
        let out = netperf(
            &server,
            &[
                "-t",
                test,
                "-l",
                "1",
                "-P",
                "0",
                "-F",
                "/dev/urandom",
                "--",
                "-k",
                "THROUGHPUT",
            ],
        );
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "{test}: {stdout}{}",
            text(&out.stderr)
        );
        let value: f64 = stdout
            .trim()
            .strip_prefix("THROUGHPUT=")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        assert!(value > 0.0, "{test}: {stdout}");
    }
}

#[test]
fn a_fifo_in_the_fill_directory_does_not_hang_netserver() {
    let dir = std::env::temp_dir().join(format!("netperf-ng-filldir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = std::ffi::CString::new(dir.join("fifo").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let server = Server::start_with("127.0.0.1", &["-F", dir.to_str().unwrap()]);
    let out = netperf(&server, &["-t", "TCP_MAERTS", "-l", "1", "-F", ",fifo"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("remote error"),
        "{}",
        text(&out.stderr)
    );
    // The session answered and netserver still serves.
    run_ok(&server, &["-l", "1", "-P", "0"]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn remote_fill_files_come_only_from_the_operators_directory() {
    let dir = std::env::temp_dir().join(format!("netperf-ng-fill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("pattern"), b"0123456789abcdef".repeat(1024)).unwrap();
    let outside = std::env::temp_dir().join(format!("netperf-ng-secret-{}", std::process::id()));
    std::fs::write(&outside, b"secret").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("escape")).unwrap();

    let closed = Server::start("127.0.0.1");
    let out = netperf(&closed, &["-t", "TCP_MAERTS", "-l", "1", "-F", ",pattern"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("remote error 1"),
        "{}",
        text(&out.stderr)
    );

    let open = Server::start_with("127.0.0.1", &["-F", dir.to_str().unwrap()]);
    let out = netperf(
        &open,
        &["-t", "TCP_MAERTS", "-l", "1", "-P", "0", "-F", ",pattern"],
    );
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        numbers(first_line(&text(&out.stdout)))
            .last()
            .copied()
            .unwrap_or(0.0)
            > 0.0
    );
    for bad in [",../secret", ",escape", ",missing"] {
        let out = netperf(&open, &["-t", "TCP_MAERTS", "-l", "1", "-F", bad]);
        assert!(!out.status.success(), "{bad} was served");
    }
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_file(&outside).ok();
}
