//! Both sides of many-flow tests over loopback: every flow's work adds up to
//! the total, and what netperf's side counts is what netserver's did.

use super::answer::{self, Service};
use super::initiate::{self, Plan};
use super::*;
use crate::engine::stop_flag::StopFlag;
use crate::net::socket::SocketOptions;
use socket2::{Domain, Socket, Type};
use std::net::SocketAddr;
use std::time::Duration;

/// A loopback data socket for `datagram` flows, listening for TCP.
fn data_socket(datagram: bool) -> (Socket, SocketAddr) {
    let ty = if datagram { Type::DGRAM } else { Type::STREAM };
    let s = Socket::new(Domain::IPV4, ty, None).unwrap();
    s.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
        .unwrap();
    if !datagram {
        s.listen(1024).unwrap();
    }
    let at = s.local_addr().unwrap().as_socket().unwrap();
    (s, at)
}

/// Runs `flows` flows of `client` work against `server` work for `run`,
/// returning both sides.
fn exchange(
    client: Work,
    server: Work,
    flows: u32,
    datagram: bool,
    reconnect: bool,
) -> (FlowsReport, u64, answer::Served) {
    exchange_on(2, client, server, flows, datagram, reconnect)
}

/// `exchange` with `threads` threads at each end.
fn exchange_on(
    threads: u32,
    client: Work,
    server: Work,
    flows: u32,
    datagram: bool,
    reconnect: bool,
) -> (FlowsReport, u64, answer::Served) {
    let (socket, at) = data_socket(datagram);
    let svc = Service {
        work: server,
        threads,
        flows,
        datagram,
        reconnect,
        payload: vec![],
        echo: false,
        drop_every: None,
        gro: false,
    };
    let plan = Plan {
        work: client,
        flows,
        threads,
        datagram,
        segments: 1,
        reconnect,
        burst: 0,
        remote: at,
        local: None,
        opts: SocketOptions {
            udp: datagram,
            ..SocketOptions::default()
        },
        loss_timeout: Duration::from_millis(200),
        interval: Duration::from_millis(100),
        flow_samples: true,
        payload: b"netperf".to_vec(),
        board: Some(std::sync::Arc::new(FlowBoard::new(flows, threads))),
        open: None,
    };
    let (server_stop, client_stop) = (StopFlag::new(), StopFlag::new());
    let finished = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let served = scope.spawn(|| answer::serve(&socket, &svc, &server_stop, &|_| true));
        // At least 500 ms, and on until every flow has done some work: a
        // loaded machine may not schedule each of 50 flows within a fixed
        // time (bounded at 60 s, past which the checks below say which flow
        // did nothing).
        let (board, stop) = (plan.board.clone().expect("given"), &client_stop);
        let timer = scope.spawn(move || {
            let started = std::time::Instant::now();
            let all_worked = || (0..flows).all(|flow| board.units(flow) > 0);
            while started.elapsed() < Duration::from_millis(500)
                || (!all_worked() && started.elapsed() < Duration::from_secs(60))
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            stop.set();
        });
        let ran = initiate::run(&plan, &client_stop);
        // What a reader saw last on the board is each flow's whole work.
        let board = plan.board.as_deref().expect("given");
        for f in &ran.report.flows {
            assert_eq!(board.units(f.flow), f.units, "flow {}", f.flow);
            assert_eq!(board.timeouts(f.flow), f.tally.timeouts, "flow {}", f.flow);
        }
        let (outcome, latency) = (ran.report, ran.latency);
        timer.join().unwrap();
        if reconnect {
            crate::engine::connect::mark_end(&at, &SocketOptions::default());
        }
        // Bounded: the server must end by itself; this only unsticks a failure.
        let guard = scope.spawn(|| {
            for _ in 0..3000 {
                if finished.load(std::sync::atomic::Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            server_stop.set();
        });
        let served = served.join().unwrap().unwrap();
        let ended_by_itself = !server_stop.is_set();
        finished.store(true, std::sync::atomic::Ordering::Relaxed);
        guard.join().unwrap();
        assert!(ended_by_itself, "netserver's side did not see the end");
        assert!(client_stop.units() > 0);
        (outcome, latency.latency().count(), served)
    })
}

/// Both sides of request/response with `size`-byte messages.
fn request_response(size: usize) -> (Work, Work) {
    (
        Work::Ask {
            request: size,
            response: size,
        },
        Work::Answer {
            request: size,
            response: size,
        },
    )
}

fn check_flows_add_up(outcome: &FlowsReport, flows: u32) {
    assert_eq!(outcome.flows.len(), flows as usize);
    let ids: Vec<u32> = outcome.flows.iter().map(|f| f.flow).collect();
    assert_eq!(ids, (0..flows).collect::<Vec<_>>());
    for f in &outcome.flows {
        assert!(f.failure.is_none(), "flow {}: {:?}", f.flow, f.failure);
        assert!(f.units > 0, "flow {} did nothing", f.flow);
    }
    let total = outcome.total();
    let per_flow: u64 = outcome.flows.iter().map(|f| f.tally.bytes_sent).sum();
    assert_eq!(total.bytes_sent, per_flow);
    // The samples of each flow add up to less than its whole work (the
    // last part-interval is not sampled), never more.
    for f in &outcome.flows {
        let sampled: u64 = outcome
            .samples
            .iter()
            .filter(|s| s.flow == f.flow)
            .map(|s| s.units)
            .sum();
        assert!(
            sampled <= f.units,
            "flow {}: {sampled} > {}",
            f.flow,
            f.units
        );
    }
}

#[test]
fn tcp_rr_flows_each_transaction_counted_on_both_ends() {
    let rr = request_response(1);
    let (outcome, timed, served) = exchange(rr.0, rr.1, 50, false, false);
    check_flows_add_up(&outcome, 50);
    assert_eq!(outcome.total().transactions, served.tally.transactions);
    assert_eq!(served.flows_seen, 50);
    assert_eq!(timed, outcome.total().transactions);
    let spread = outcome.spread(0.5, 1.0);
    assert!(spread.min <= spread.median && spread.median <= spread.max);
    assert!(spread.jain > 0.0 && spread.jain <= 1.0);
}

#[test]
fn tcp_stream_flows_bytes_sent_are_the_bytes_received() {
    let (outcome, _, served) = exchange(
        Work::Send { size: 16384 },
        Work::Receive { size: 16384 },
        20,
        false,
        false,
    );
    check_flows_add_up(&outcome, 20);
    assert_eq!(outcome.total().bytes_sent, served.tally.bytes_received);
}

#[test]
fn tcp_maerts_flows_receive() {
    let (outcome, _, served) = exchange(
        Work::Receive { size: 16384 },
        Work::Send { size: 16384 },
        8,
        false,
        false,
    );
    check_flows_add_up(&outcome, 8);
    assert!(served.tally.bytes_sent >= outcome.total().bytes_received);
}

/// A thread per flow at both ends: each thread blocks on its one flow,
/// and both ends still see the end (the client's stop, netserver's EOF).
#[test]
fn tcp_stream_and_maerts_with_a_thread_per_flow() {
    let (outcome, _, served) = exchange_on(
        4,
        Work::Send { size: 65536 },
        Work::Receive { size: 65536 },
        4,
        false,
        false,
    );
    check_flows_add_up(&outcome, 4);
    assert_eq!(outcome.total().bytes_sent, served.tally.bytes_received);
    assert_eq!(served.flows_seen, 4);
    let (outcome, _, served) = exchange_on(
        3,
        Work::Receive { size: 65536 },
        Work::Send { size: 65536 },
        3,
        false,
        false,
    );
    check_flows_add_up(&outcome, 3);
    assert!(served.tally.bytes_sent >= outcome.total().bytes_received);
}

#[test]
fn udp_rr_flows_are_answered_and_end() {
    let rr = request_response(64);
    let (outcome, timed, served) = exchange(rr.0, rr.1, 30, true, false);
    check_flows_add_up(&outcome, 30);
    assert_eq!(timed, outcome.total().transactions);
    assert!(outcome.total().transactions <= served.tally.transactions);
    assert_eq!(served.flows_seen, 30);
}

#[test]
fn tcp_crr_flows_open_a_connection_per_transaction() {
    let rr = request_response(1);
    let (outcome, timed, served) = exchange(rr.0, rr.1, 16, false, true);
    check_flows_add_up(&outcome, 16);
    assert_eq!(timed, outcome.total().transactions);
    let total = outcome.total().transactions;
    assert!(
        total <= served.tally.transactions,
        "{total} > {}",
        served.tally.transactions
    );
    assert!(
        served.flows_seen as u64 > total,
        "a connection per transaction"
    );
}

#[test]
fn flow_samples_are_csv_rows() {
    let outcome = FlowsReport {
        samples: vec![
            FlowSample {
                flow: 3,
                thread: 1,
                end_s: 1.0,
                units: 10,
                latency_us: Some([10.0, 20.0, 30.0]),
                tcp: None,
            },
            FlowSample {
                flow: 4,
                thread: 0,
                end_s: 1.0,
                units: 0,
                latency_us: None,
                tcp: Some(crate::measure::tcp_info::TcpInterval {
                    rtt_us: 50,
                    rttvar_us: 10,
                    snd_cwnd: 10,
                    retransmits: 1,
                    delivery_rate: 1000,
                    pacing_rate: 2000,
                    busy: 0.5,
                    rwnd_limited: 0.25,
                    sndbuf_limited: 0.0,
                }),
            },
        ],
        ..FlowsReport::default()
    };
    assert_eq!(
        outcome.samples_csv(),
        "flow,thread,interval_end_s,units,p50_us,p99_us,max_us,rtt_us,rttvar_us,snd_cwnd,\
         retransmits,delivery_rate_bytes_per_s,pacing_rate_bytes_per_s,busy,rwnd_limited,sndbuf_limited\n\
         3,1,1.000,10,10.0,20.0,30.0,,,,,,,,,\n\
         4,0,1.000,0,,,,50,10,10,1,1000,2000,0.500,0.250,0.000\n"
    );
}

#[test]
fn threads_never_outnumber_flows() {
    assert_eq!(threads_for(1, Some(8), false), 1);
    assert_eq!(threads_for(100, Some(3), false), 3);
    assert!(threads_for(100, None, false) >= 1);
    assert_eq!(threads_for(2, None, true), 2);
}

/// TCP bulk gets a thread per flow up to THREAD_PER_FLOW_MAX flows, and
/// the CPUs' count past it; what the user asks wins.
#[test]
fn bulk_gets_a_thread_per_flow() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    assert_eq!(threads_for(8, None, true), 8);
    assert_eq!(
        threads_for(THREAD_PER_FLOW_MAX, None, true),
        THREAD_PER_FLOW_MAX
    );
    assert_eq!(threads_for(THREAD_PER_FLOW_MAX + 1, None, true), cpus);
    assert_eq!(threads_for(8, None, false), cpus.min(8));
    assert_eq!(threads_for(8, Some(2), true), 2);
    let send = Work::Send { size: 1 };
    assert!(blocks_per_flow(send, false, false));
    assert!(blocks_per_flow(Work::Receive { size: 1 }, false, false));
    assert!(!blocks_per_flow(send, true, false));
    assert!(!blocks_per_flow(send, false, true));
    assert!(!blocks_per_flow(
        Work::Ask {
            request: 1,
            response: 1
        },
        false,
        false
    ));
}

/// Many-flow TCP bulk senders get BULK_NOTSENT_LOWAT unless the user set
/// one (0 included); nothing else is touched.
#[test]
fn bulk_senders_get_a_notsent_low_water_mark() {
    assert_eq!(notsent_lowat(None, 8, true), Some(BULK_NOTSENT_LOWAT));
    assert_eq!(notsent_lowat(None, 0, true), None);
    assert_eq!(notsent_lowat(None, 8, false), None);
    assert_eq!(notsent_lowat(Some(0), 8, true), Some(0));
    assert_eq!(notsent_lowat(Some(4096), 0, false), Some(4096));
}

/// The mark is set on the socket, and netserver's listener passes it on to
/// every connection it accepts (netserver sets it there, once).
#[test]
fn the_notsent_low_water_mark_reaches_accepted_connections() {
    let read = |fd: std::os::fd::RawFd| {
        let (mut value, mut len) = (0i32, std::mem::size_of::<i32>() as libc::socklen_t);
        // SAFETY: a live descriptor and an int-sized out value.
        let rc = unsafe {
            libc::getsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_NOTSENT_LOWAT,
                &mut value as *mut i32 as *mut libc::c_void,
                &mut len,
            )
        };
        assert_eq!(rc, 0);
        value
    };
    use std::os::fd::AsRawFd;
    let at: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let opts = SocketOptions {
        send_buf: -1,
        recv_buf: -1,
        priority: -1,
        tos: -1,
        routing_allowed: true,
        notsent_lowat: Some(BULK_NOTSENT_LOWAT),
        ..Default::default()
    };
    let listener = crate::net::socket::create(&at, &opts).unwrap();
    listener.bind(&at.into()).unwrap();
    listener.listen(1).unwrap();
    let to = listener.local_addr().unwrap();
    let client = crate::net::socket::create(&at, &SocketOptions::default()).unwrap();
    client.connect(&to).unwrap();
    let (accepted, _) = listener.accept().unwrap();
    assert_eq!(read(accepted.as_raw_fd()), BULK_NOTSENT_LOWAT as i32);
    // Untouched: 0, which the kernel reads as its sysctl's default.
    assert_eq!(read(client.as_raw_fd()), 0);
}

/// A client that opens more connections than its flows gets the extra ones
/// closed: netserver never holds more than the test's flows.
#[test]
fn connections_beyond_the_flows_are_closed() {
    use std::io::Read;
    let (socket, at) = data_socket(false);
    let svc = Service {
        work: Work::Answer {
            request: 1,
            response: 1,
        },
        threads: 2,
        flows: 4,
        datagram: false,
        reconnect: false,
        payload: vec![],
        echo: false,
        drop_every: None,
        gro: false,
    };
    let stop = StopFlag::new();
    std::thread::scope(|scope| {
        let served = scope.spawn(|| answer::serve(&socket, &svc, &stop, &|_| true));
        let flows: Vec<_> = (0..4)
            .map(|_| std::net::TcpStream::connect(at).unwrap())
            .collect();
        std::thread::sleep(Duration::from_millis(200));
        for _ in 0..20 {
            let mut extra = std::net::TcpStream::connect(at).unwrap();
            extra
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let mut byte = [0u8; 1];
            // Closed by netserver: end of stream or a reset, never a wait.
            match extra.read(&mut byte) {
                Ok(0) => {}
                Err(e) => assert!(
                    !matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ),
                    "an extra connection was held: {e}"
                ),
                Ok(n) => panic!("an extra connection got {n} bytes"),
            }
        }
        drop(flows);
        let served = served.join().unwrap().unwrap();
        assert_eq!(served.flows_seen, 4);
    });
}
