//! Tests of the batched UDP loops (`mmsg.rs`) over real loopback sockets.

use super::*;
use crate::engine::timer::Timer;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

const BACKSTOP: Duration = Duration::from_secs(20);

fn udp() -> UdpSocket {
    UdpSocket::bind("127.0.0.1:0").unwrap()
}

/// A receive buffer big enough that modest bursts are not dropped.
fn big_rcvbuf(s: &UdpSocket) {
    let want: libc::c_int = 4 << 20;
    let _ = socket2::SockRef::from(s).set_recv_buffer_size(want as usize);
    // SAFETY: a valid fd and an int option value of the right size;
    // SO_RCVBUFFORCE passes rmem_max when privileged, else fails harmlessly.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            &want as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// The kernel's count of datagrams dropped on the IPv4 UDP socket bound
/// to 127.0.0.1:`port` (/proc/net/udp, last column).
fn udp_drops(port: u16) -> Option<u64> {
    let table = std::fs::read_to_string("/proc/net/udp").ok()?;
    let local = format!("0100007F:{port:04X}");
    table.lines().skip(1).find_map(|line| {
        let mut f = line.split_whitespace();
        if f.nth(1)? != local {
            return None;
        }
        line.split_whitespace().last()?.parse().ok()
    })
}

/// Send zero-length datagrams to `to` until `done` reports true.
fn send_end_until(from: &UdpSocket, to: SocketAddr, done: impl Fn() -> bool) {
    let deadline = Instant::now() + BACKSTOP;
    while !done() && Instant::now() < deadline {
        let _ = from.send_to(&[], to);
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn batched_stream_counts_every_message() {
    const N: u64 = 2000;
    const SIZE: usize = 64;
    let rx = udp();
    big_rcvbuf(&rx);
    let to = rx.local_addr().unwrap();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let receiver = std::thread::spawn(move || {
        let stop = StopFlag::new();
        let timer = Timer::arm(Some(BACKSTOP), stop.clone());
        // Bigger buffers than the messages: bytes come from msg_len.
        let mut ring = BufferRing::new(4, 2 * SIZE, 8, 0);
        ready_tx.send(()).unwrap();
        let got = stream_recv_batched(rx.as_raw_fd(), &mut ring, 64, &stop, None);
        let drops = udp_drops(to.port());
        let fired = timer.fired();
        drop(timer);
        (got.unwrap(), drops, fired)
    });
    ready_rx.recv().unwrap();
    let tx = udp();
    tx.connect(to).unwrap();
    let mut ring = BufferRing::new(8, SIZE, 8, 0);
    let (sc, send_syscalls) = stream_send_batched(
        tx.as_raw_fd(),
        &mut ring,
        32,
        &StopFlag::new(),
        Some(N * SIZE as u64),
        None,
    )
    .unwrap();
    assert_eq!(sc.send_calls + sc.failed_sends, N);
    assert_eq!(sc.bytes_sent, sc.send_calls * SIZE as u64);
    assert!(
        (N.div_ceil(32)..N).contains(&send_syscalls),
        "{send_syscalls}"
    );
    send_end_until(&tx, to, || receiver.is_finished());
    let ((rc, recv_syscalls), drops, fired) = receiver.join().unwrap();
    assert!(!fired, "receiver did not see the end datagram");
    assert_eq!(rc.bytes_received, rc.recv_calls * SIZE as u64);
    assert!(recv_syscalls >= 1 && recv_syscalls <= rc.recv_calls + 1);
    match drops {
        Some(d) if d > 0 => {
            assert!(rc.recv_calls <= sc.send_calls);
            assert!(rc.recv_calls + d >= sc.send_calls, "{rc:?} drops {d}");
        }
        _ => assert_eq!(rc.recv_calls, sc.send_calls, "drops {drops:?}"),
    }
}

#[test]
fn zero_length_datagram_ends_the_receiver_mid_batch() {
    let rx = udp();
    let tx = udp();
    tx.connect(rx.local_addr().unwrap()).unwrap();
    let data = [7u8; 64];
    for _ in 0..5 {
        tx.send(&data).unwrap();
    }
    tx.send(&[]).unwrap();
    for _ in 0..3 {
        tx.send(&data).unwrap();
    }
    let mut ring = BufferRing::new(2, 64, 8, 0);
    let (c, calls) =
        stream_recv_batched(rx.as_raw_fd(), &mut ring, 16, &StopFlag::new(), None).unwrap();
    assert_eq!((c.recv_calls, c.bytes_received, calls), (5, 5 * 64, 1));
    // The three after the end signal came in the same call: taken from
    // the queue and not counted.
    rx.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 128];
    assert!(rx.recv(&mut buf).is_err());
}

#[test]
fn receive_byte_limit_stops_where_one_call_at_a_time_would() {
    let rx = udp();
    let tx = udp();
    tx.connect(rx.local_addr().unwrap()).unwrap();
    for _ in 0..10 {
        tx.send(&[1u8; 40]).unwrap();
    }
    // 100 bytes: the third 40-byte message crosses the limit.
    let mut ring = BufferRing::new(1, 64, 8, 0);
    let (c, _) =
        stream_recv_batched(rx.as_raw_fd(), &mut ring, 16, &StopFlag::new(), Some(100)).unwrap();
    assert_eq!((c.recv_calls, c.bytes_received), (3, 120));
}

#[test]
fn batch_is_clamped_and_byte_limit_rounds_up_to_whole_messages() {
    let rx = udp();
    big_rcvbuf(&rx);
    let tx = udp();
    let dest = socket2::SockAddr::from(rx.local_addr().unwrap());
    let mut ring = BufferRing::new(3, 64, 8, 0);
    let stop = StopFlag::new();
    // Batch 0 is 1: one call per message; unconnected, so `dest` is used.
    let (c, calls) =
        stream_send_batched(tx.as_raw_fd(), &mut ring, 0, &stop, Some(640), Some(&dest)).unwrap();
    assert_eq!((c.send_calls, c.bytes_sent, calls), (10, 640, 10));
    // A huge batch is MAX_BATCH; 100 bytes is two 64-byte messages.
    let (c, calls) = stream_send_batched(
        tx.as_raw_fd(),
        &mut ring,
        usize::MAX,
        &stop,
        Some(100),
        Some(&dest),
    )
    .unwrap();
    assert_eq!((c.send_calls, c.bytes_sent, calls), (2, 128, 1));
    // Nothing to send with a zero-size ring, and a zero byte limit.
    let mut empty = BufferRing::new(1, 0, 0, 0);
    let got = stream_send_batched(tx.as_raw_fd(), &mut empty, 8, &stop, None, Some(&dest));
    assert_eq!(got.unwrap(), (Counters::default(), 0));
    let got = stream_send_batched(tx.as_raw_fd(), &mut ring, 8, &stop, Some(0), Some(&dest));
    assert_eq!(got.unwrap(), (Counters::default(), 0));
    let mut rring = BufferRing::new(1, 64, 8, 0);
    let (rc, _) = stream_recv_batched(rx.as_raw_fd(), &mut rring, 0, &stop, Some(768)).unwrap();
    assert_eq!((rc.recv_calls, rc.bytes_received), (12, 768));
}

/// Run a batched RR exchange of `limit` transactions; the client's
/// socket is connected or given the server's address.
fn run_rr(limit: u64, connected: bool) -> ((Counters, u64), (Counters, u64)) {
    const REQ: usize = 32;
    const RSP: usize = 48;
    let srv = udp();
    big_rcvbuf(&srv);
    let srv_addr = srv.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let stop = StopFlag::new();
        let timer = Timer::arm(Some(BACKSTOP), stop.clone());
        let mut rring = BufferRing::new(16, REQ, 8, 0);
        let mut sring = BufferRing::new(16, RSP, 8, 0);
        let got = rr_server_batched(
            srv.as_raw_fd(),
            &mut rring,
            &mut sring,
            16,
            &stop,
            None,
            |_| true,
        );
        assert!(!timer.fired(), "server did not see the end datagram");
        got.unwrap()
    });
    let cli = udp();
    big_rcvbuf(&cli);
    if connected {
        cli.connect(srv_addr).unwrap();
    }
    let cli = std::sync::Arc::new(cli);
    let cli2 = cli.clone();
    let client = std::thread::spawn(move || {
        let stop = StopFlag::new();
        let timer = Timer::arm(Some(BACKSTOP), stop.clone());
        let dest = socket2::SockAddr::from(srv_addr);
        let mut sring = BufferRing::new(16, REQ, 8, 0);
        let mut rring = BufferRing::new(16, RSP, 8, 0);
        let got = rr_client_batched(
            cli2.as_raw_fd(),
            &mut sring,
            &mut rring,
            15,
            16,
            &stop,
            Some(limit),
            (!connected).then_some(&dest),
        );
        assert!(!timer.fired(), "client stalled: a datagram was lost");
        got.unwrap()
    });
    let cc = client.join().unwrap();
    send_end_until(&cli, srv_addr, || server.is_finished());
    let sc = server.join().unwrap();
    (cc, sc)
}

#[test]
fn batched_rr_completes_exactly_the_transaction_limit() {
    for (limit, connected) in [(1000, true), (1000, false), (5, true)] {
        let ((c, ccalls), (s, scalls)) = run_rr(limit, connected);
        let rr = (c.transactions, c.send_calls, c.recv_calls);
        assert_eq!(rr, (limit, limit, limit), "{c:?}");
        assert_eq!((c.bytes_sent, c.bytes_received), (limit * 32, limit * 48));
        assert_eq!(c.failed_sends, 0);
        assert!(ccalls >= 2 && ccalls <= 2 * limit, "{ccalls}");
        assert_eq!(
            (s.transactions, s.recv_calls, s.send_calls),
            (limit, limit, limit)
        );
        assert_eq!((s.bytes_received, s.bytes_sent), (limit * 32, limit * 48));
        assert!(scalls >= 2 && scalls <= 2 * limit + 1, "{scalls}");
    }
}

#[test]
fn server_transaction_limit_and_end_mid_batch() {
    let srv = udp();
    let cli = udp();
    cli.connect(srv.local_addr().unwrap()).unwrap();
    for _ in 0..3 {
        cli.send(&[1u8; 10]).unwrap();
    }
    cli.send(&[]).unwrap();
    let mut rring = BufferRing::new(2, 10, 8, 0);
    let mut sring = BufferRing::new(2, 20, 8, 0);
    let stop = StopFlag::new();
    let mut serve = |limit| {
        let fd = srv.as_raw_fd();
        rr_server_batched(fd, &mut rring, &mut sring, 8, &stop, limit, |_| true).unwrap()
    };
    // Limit 2: answers two of the three, one recvmmsg and one sendmmsg.
    let (s, calls) = serve(Some(2));
    assert_eq!((s.transactions, s.send_calls, calls), (2, 2, 2));
    // Then the third is answered and the zero-length one ends it.
    let (s, calls) = serve(None);
    assert_eq!((s.transactions, s.bytes_sent, calls), (1, 20, 2));
    cli.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 64];
    for _ in 0..3 {
        assert_eq!(cli.recv(&mut buf).unwrap(), 20);
    }
}

#[test]
fn stop_flag_ends_blocked_loops() {
    std::thread::spawn(|| {
        let rx = udp();
        let stop = StopFlag::new();
        let timer = Timer::arm(Some(Duration::from_millis(50)), stop.clone());
        let mut ring = BufferRing::new(2, 64, 8, 0);
        // Nobody sends: only the timer's signal ends the wait.
        let (c, calls) = stream_recv_batched(rx.as_raw_fd(), &mut ring, 32, &stop, None).unwrap();
        assert!(stop.is_set() && timer.fired());
        assert_eq!(c, Counters::default());
        assert!(calls <= 1, "{calls}");
        drop(timer);

        // A client whose requests go to a socket that never answers.
        let silent = udp();
        let cli = udp();
        cli.connect(silent.local_addr().unwrap()).unwrap();
        let stop = StopFlag::new();
        let timer = Timer::arm(Some(Duration::from_millis(50)), stop.clone());
        let mut sring = BufferRing::new(2, 16, 8, 0);
        let (c, calls) = rr_client_batched(
            cli.as_raw_fd(),
            &mut sring,
            &mut ring,
            3,
            16,
            &stop,
            None,
            None,
        )
        .unwrap();
        assert!(timer.fired());
        assert_eq!((c.send_calls, c.transactions), (4, 0));
        assert!(calls <= 2, "{calls}");
        drop(timer);
    })
    .join()
    .unwrap();
}
