//! One many-flow TCP_RR run on loopback, its client driven by epoll (the
//! engine's `flows::initiate`, what `netperf -- --flows` runs) or by
//! io_uring (below), against the engine's netserver side
//! (`flows::answer`) in a child process. Prints one line: driver, flows,
//! threads, seconds, transactions/s, the client's CPU seconds per million
//! transactions. bench/uring-vs-epoll runs it alternating the drivers.
//!
//!   uring-probe epoll|uring FLOWS THREADS SECS [REQUEST_BYTES]

use io_uring::{opcode, squeue, types, IoUring};
use netperf_data::engine::flows::answer::{self, Service};
use netperf_data::engine::flows::initiate::{self, Plan};
use netperf_data::engine::flows::Work;
use netperf_data::engine::stop_flag::StopFlag;
use netperf_data::net::socket::SocketOptions;
use socket2::{Domain, Socket, Type};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--serve") {
        return serve(&args[2..]);
    }
    let usage = "usage: uring-probe epoll|uring FLOWS THREADS SECS [REQUEST_BYTES]";
    let (Some(driver), Some(flows), Some(threads), Some(secs)) = (
        args.get(1).cloned(),
        args.get(2).and_then(|v| v.parse::<u32>().ok()),
        args.get(3).and_then(|v| v.parse::<u32>().ok()),
        args.get(4).and_then(|v| v.parse::<u64>().ok()),
    ) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let size: usize = args.get(5).and_then(|v| v.parse().ok()).unwrap_or(1);
    if !matches!(driver.as_str(), "epoll" | "uring") || flows == 0 || size == 0 {
        eprintln!("{usage}");
        std::process::exit(2);
    }
    raise_files();
    let listener = Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket");
    listener.set_reuse_address(true).ok();
    listener
        .bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
        .expect("bind");
    listener.listen(65535).expect("listen");
    let at = listener.local_addr().unwrap().as_socket().unwrap();
    // The server gets the listener as its descriptor 3.
    let fd = listener.as_raw_fd();
    let mut server = spawn_server(fd, flows, threads, size);
    drop(listener);
    let stop = StopFlag::new();
    let timer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(secs));
            stop.set();
        })
    };
    let started = Instant::now();
    let cpu0 = cpu_seconds();
    let transactions = match driver.as_str() {
        "epoll" => epoll_client(at, flows, threads, size, &stop),
        _ => uring_client(at, flows, threads, size, &stop),
    };
    let cpu = cpu_seconds() - cpu0;
    let elapsed = started.elapsed().as_secs_f64();
    timer.join().ok();
    let _ = server.wait();
    println!(
        "{driver} flows={flows} threads={threads} secs={elapsed:.2} rate={:.0} cpu_s_per_mtrans={:.3}",
        transactions as f64 / elapsed,
        cpu / (transactions.max(1) as f64 / 1e6)
    );
}

/// The netserver side, in a child so that the client's CPU is its own: it
/// inherits the listener as its descriptor 3.
fn spawn_server(fd: i32, flows: u32, threads: u32, size: usize) -> std::process::Child {
    // SAFETY: plain descriptor calls; the parent closes its copy on 3 right
    // after the spawn.
    unsafe {
        libc::dup2(fd, 3);
        // The child must inherit it: clear close-on-exec.
        libc::fcntl(3, libc::F_SETFD, 0);
    }
    let me = std::env::current_exe().expect("current_exe");
    let child = Command::new(me)
        .args([
            "--serve",
            &flows.to_string(),
            &threads.to_string(),
            &size.to_string(),
        ])
        .stdout(Stdio::inherit())
        .spawn()
        .expect("spawn the server");
    // SAFETY: 3 is the copy made above.
    unsafe { libc::close(3) };
    child
}

fn serve(args: &[String]) {
    use std::os::fd::FromRawFd;
    let num = |i: usize| args[i].parse::<u32>().expect("number");
    let (flows, threads, size) = (num(0), num(1), num(2) as usize);
    raise_files();
    // SAFETY: the parent put the listening socket on descriptor 3.
    let socket = unsafe { Socket::from_raw_fd(3) };
    let svc = Service {
        work: Work::Answer {
            request: size,
            response: size,
        },
        threads,
        flows,
        datagram: false,
        reconnect: false,
        payload: vec![b'n'],
    };
    let stop = StopFlag::new();
    let _ = answer::serve(&socket, &svc, &stop, &|_| true);
}

fn epoll_client(at: SocketAddr, flows: u32, threads: u32, size: usize, stop: &StopFlag) -> u64 {
    let plan = Plan {
        work: Work::Ask {
            request: size,
            response: size,
        },
        flows,
        threads,
        datagram: false,
        reconnect: false,
        burst: 0,
        remote: at,
        local: None,
        opts: SocketOptions::default(),
        loss_timeout: Duration::from_secs(1),
        interval: Duration::from_secs(1),
        flow_samples: false,
        payload: vec![b'n'],
        board: None,
    };
    initiate::run(&plan, stop).report.total().transactions
}

/// io_uring: each thread's flows each keep a send linked to a recv in
/// flight; a recv's completion is a transaction and queues the next pair.
fn uring_client(at: SocketAddr, flows: u32, threads: u32, size: usize, stop: &StopFlag) -> u64 {
    let threads = threads.clamp(1, flows.max(1));
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let mine = (t..flows).step_by(threads as usize).count();
                scope.spawn(move || uring_thread(at, mine, size, stop))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
    })
}

fn uring_thread(at: SocketAddr, flows: usize, size: usize, stop: &StopFlag) -> u64 {
    let sockets: Vec<Socket> = (0..flows)
        .map(|_| {
            let s = Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket");
            s.connect(&at.into()).expect("connect");
            s
        })
        .collect();
    let entries = (2 * flows).next_power_of_two().clamp(64, 32768) as u32;
    // io_uring's best case for one thread owning its ring: completions
    // run when this thread asks for them, without interrupting it.
    let mut ring: IoUring = IoUring::builder()
        .setup_cqsize(entries * 2)
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
        .expect("io_uring");
    let send_buf = vec![b'n'; size];
    let mut recv_bufs = vec![0u8; size * flows];
    let mut due: Vec<usize> = (0..flows).collect();
    let mut transactions = 0u64;
    while !stop.is_set() {
        for &f in &due {
            let fd = types::Fd(sockets[f].as_raw_fd());
            let send = opcode::Send::new(fd, send_buf.as_ptr(), size as u32)
                .build()
                .flags(squeue::Flags::IO_LINK)
                .user_data((f as u64) << 1);
            let recv_at = recv_bufs[f * size..].as_mut_ptr();
            let recv = opcode::Recv::new(fd, recv_at, size as u32)
                .flags(libc::MSG_WAITALL)
                .build()
                .user_data(((f as u64) << 1) | 1);
            // SAFETY: the buffers outlive the ring's use of them (they
            // live until this function returns, after the ring drains).
            unsafe {
                while ring.submission().push(&send).is_err() {
                    ring.submit().expect("submit");
                }
                while ring.submission().push(&recv).is_err() {
                    ring.submit().expect("submit");
                }
            }
        }
        due.clear();
        // A bounded wait, so that the stop flag is seen.
        let ts = types::Timespec::new().nsec(10_000_000);
        let want = types::SubmitArgs::new().timespec(&ts);
        match ring.submitter().submit_with_args(1, &want) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(e) => panic!("io_uring_enter: {e}"),
        }
        for cqe in ring.completion() {
            let flow = (cqe.user_data() >> 1) as usize;
            let is_recv = cqe.user_data() & 1 == 1;
            if cqe.result() < 0 {
                continue;
            }
            if is_recv {
                transactions += 1;
                due.push(flow);
            }
        }
    }
    // Close every flow: netserver ends when each has ended. Completions
    // still in flight are cancelled by the close and the ring's drop.
    drop(sockets);
    drop(ring);
    transactions
}

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

fn raise_files() {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit take a valid struct.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut l);
        l.rlim_cur = l.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &l);
    }
}
