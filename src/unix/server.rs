//! netserver's half of the Unix-domain tests: check every field of the
//! request, create the socket file, answer with its path and sizes, run the
//! receiving or answering end of the data path, send the results, and remove
//! the socket file however the test ends.
//!
//! Where stock netserver 2.7.1 differs from what its own comments promise we
//! follow the comments: a socket buffer request of 0 means the system
//! default (stock would shrink the buffer to the minimum, and every stock
//! netperf asks for 0 unless `-S` is given), and DG_STREAM's receive buffer
//! request is honoured (stock ignores it).

use super::data::{self, Idle};
use super::UnixTest;
use crate::control::channel::{Channel, ChannelError};
use crate::control::client::PAD_TIME;
use crate::engine::ring::BufferRing;
use crate::engine::timer::{StopFlag, Timer};
use crate::engine::{Counters, DataError};
use crate::measure::cpu::{self, CpuSampler};
use crate::net::socket;
use crate::net::unix_path::{self as path, SocketFile};
use crate::server::limits::{defaults, Limits};
use crate::server::log;
use crate::server::omni::Refusal;
use crate::server::options::ServerOptions;
use crate::server::watchdog;
use crate::wire::unix::{
    DgRrRequest, DgRrResponse, DgRrResults, DgStreamRequest, DgStreamResponse, DgStreamResults,
    StreamRrRequest, StreamRrResponse, StreamRrResults, StreamStreamRequest, StreamStreamResponse,
    StreamStreamResults, UnixPath,
};
use crate::wire::{self, Message};
use socket2::{Domain, Socket, Type};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn refuse(errno: i32, reason: impl Into<String>) -> Refusal {
    Refusal {
        errno,
        reason: reason.into(),
    }
}

/// A request of any of the four tests, in one shape. Fields a test does
/// not have are 0.
#[derive(Debug, Clone, PartialEq)]
struct Plan {
    test: UnixTest,
    cpu_bind: i32,
    send_buf: i32,
    recv_buf: i32,
    /// STREAM_STREAM's receive size (0: default) or DG_STREAM's message size.
    recv_size: i32,
    request_size: i32,
    response_size: i32,
    recv_align: i32,
    recv_offset: i32,
    send_align: i32,
    send_offset: i32,
    measure_cpu: bool,
    test_length: i32,
    path: UnixPath,
}

impl Plan {
    /// Every field netserver acts on. The copy-avoidance flags and dirty
    /// counts are not read: stock netserver ignores them too, and stock
    /// netperf leaves some of them unset.
    fn decode(test: UnixTest, m: &Message) -> Plan {
        let blank = Plan {
            test,
            cpu_bind: -1,
            send_buf: 0,
            recv_buf: 0,
            recv_size: 0,
            request_size: 0,
            response_size: 0,
            recv_align: 0,
            recv_offset: 0,
            send_align: 0,
            send_offset: 0,
            measure_cpu: false,
            test_length: 0,
            path: UnixPath::default(),
        };
        match test {
            UnixTest::StreamStream => {
                let r = StreamStreamRequest::decode(m);
                Plan {
                    cpu_bind: r.cpu_bind,
                    send_buf: r.send_buf_size,
                    recv_buf: r.recv_buf_size,
                    recv_size: r.receive_size,
                    recv_align: r.recv_alignment,
                    recv_offset: r.recv_offset,
                    measure_cpu: r.measure_cpu != 0,
                    test_length: r.test_length,
                    path: r.path,
                    ..blank
                }
            }
            UnixTest::StreamRr => {
                let r = StreamRrRequest::decode(m);
                Plan {
                    cpu_bind: r.cpu_bind,
                    send_buf: r.send_buf_size,
                    recv_buf: r.recv_buf_size,
                    request_size: r.request_size,
                    response_size: r.response_size,
                    recv_align: r.recv_alignment,
                    recv_offset: r.recv_offset,
                    send_align: r.send_alignment,
                    send_offset: r.send_offset,
                    measure_cpu: r.measure_cpu != 0,
                    test_length: r.test_length,
                    path: r.path,
                    ..blank
                }
            }
            UnixTest::DgStream => {
                let r = DgStreamRequest::decode(m);
                Plan {
                    cpu_bind: r.cpu_bind,
                    recv_buf: r.recv_buf_size,
                    recv_size: r.message_size,
                    recv_align: r.recv_alignment,
                    recv_offset: r.recv_offset,
                    measure_cpu: r.measure_cpu != 0,
                    test_length: r.test_length,
                    path: r.path,
                    ..blank
                }
            }
            UnixTest::DgRr => {
                let r = DgRrRequest::decode(m);
                Plan {
                    cpu_bind: r.cpu_bind,
                    send_buf: r.send_buf_size,
                    recv_buf: r.recv_buf_size,
                    request_size: r.request_size,
                    response_size: r.response_size,
                    recv_align: r.recv_alignment,
                    recv_offset: r.recv_offset,
                    send_align: r.send_alignment,
                    send_offset: r.send_offset,
                    measure_cpu: r.measure_cpu != 0,
                    test_length: r.test_length,
                    path: r.path,
                    ..blank
                }
            }
        }
    }

    /// Check every field before anything is opened; the directory to use.
    fn validate(&self, limits: &Limits) -> Result<PathBuf, Refusal> {
        let out_of_range =
            |name: &str, v: i32| refuse(libc::EINVAL, format!("{name} {v} out of range"));
        for (name, v) in [
            ("send buffer", self.send_buf),
            ("receive buffer", self.recv_buf),
        ] {
            if v > limits.max_socket_buffer {
                return Err(out_of_range(name, v));
            }
        }
        let message = |v: i32, min: i32| (min..=limits.max_message).contains(&v);
        match self.test {
            UnixTest::StreamStream if !message(self.recv_size, 0) => {
                return Err(out_of_range("receive size", self.recv_size))
            }
            UnixTest::DgStream if !message(self.recv_size, 1) => {
                return Err(out_of_range("message size", self.recv_size))
            }
            UnixTest::StreamRr | UnixTest::DgRr => {
                for (name, v) in [
                    ("request size", self.request_size),
                    ("response size", self.response_size),
                ] {
                    if !message(v, 1) {
                        return Err(out_of_range(name, v));
                    }
                }
            }
            _ => {}
        }
        let align = 0..=defaults::MAX_ALIGNMENT as i32;
        let offset = 0..=defaults::MAX_OFFSET as i32;
        if !align.contains(&self.recv_align)
            || !align.contains(&self.send_align)
            || !offset.contains(&self.recv_offset)
            || !offset.contains(&self.send_offset)
        {
            return Err(refuse(libc::EINVAL, "alignment or offset out of range"));
        }
        // STREAM_STREAM's length may be a byte count; it ends at end of file.
        if self.test != UnixTest::StreamStream && self.test_length > limits.max_test_seconds {
            return Err(out_of_range("test length", self.test_length));
        }
        if self.test.is_request_response() && self.test_length == 0 {
            return Err(refuse(libc::EINVAL, "test length 0: no time and no count"));
        }
        self.directory()
    }

    /// The directory for the socket file: the one the request names, or
    /// the default when it names none (every stock netperf).
    fn directory(&self) -> Result<PathBuf, Refusal> {
        let p = &self.path;
        if p.name_len == 0 {
            return Ok(path::default_dir());
        }
        if !p.is_announced() {
            return Err(refuse(
                libc::EINVAL,
                format!(
                    "path field not a NUL-terminated string of path_name_len {} bytes",
                    p.name_len
                ),
            ));
        }
        let dir = PathBuf::from(std::ffi::OsStr::from_bytes(&p.bytes));
        path::check_dir(&dir).map_err(|(errno, reason)| refuse(errno, reason))?;
        Ok(dir)
    }

    fn timed(&self) -> bool {
        self.test != UnixTest::StreamStream && self.test_length > 0
    }

    fn transaction_limit(&self) -> Option<u64> {
        (self.test.is_request_response() && self.test_length < 0)
            .then(|| u64::from(self.test_length.unsigned_abs()))
    }
}

/// What netserver decides about a Unix-domain request (the fuzzer's check);
/// other message types pass.
#[doc(hidden)]
pub fn check_request(m: &Message, limits: &Limits) -> Result<(), String> {
    let Some(test) = UnixTest::from_request_kind(m.kind()) else {
        return Ok(());
    };
    Plan::decode(test, m)
        .validate(limits)
        .map(drop)
        .map_err(|r| r.reason)
}

/// The socket, its file, and what the kernel made of the buffer requests.
struct Setup {
    socket: Socket,
    file: SocketFile,
    lss: i32,
    lsr: i32,
    /// The receive size STREAM_STREAM settles on (netperf: the receive
    /// buffer size unless asked), and the receive ring's width.
    recv_size: i32,
    recv_width: u32,
}

fn errno_of(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// How many buffers of `size` (plus alignment slack) a ring may hold.
fn ring_width(desired: u32, size: i32, plan: &Plan, limits: &Limits) -> Result<u32, Refusal> {
    let slack = i64::from(plan.recv_align.max(plan.send_align))
        + i64::from(plan.recv_offset.max(plan.send_offset));
    let per_buffer = (i64::from(size.max(0)) + slack).max(1) as u64;
    let fits = limits.max_ring_bytes / per_buffer;
    if fits == 0 {
        return Err(refuse(libc::ENOMEM, "buffer ring too large"));
    }
    Ok(desired
        .clamp(1, limits.max_ring_width)
        .min(fits.min(u64::from(u32::MAX)) as u32))
}

fn open(plan: &Plan, dir: &std::path::Path, limits: &Limits) -> Result<Setup, Refusal> {
    let kind = if plan.test.is_datagram() {
        Type::DGRAM
    } else {
        Type::STREAM
    };
    let failed = |what: &str, e: std::io::Error| refuse(errno_of(&e), format!("{what}: {e}"));
    let s = Socket::new(Domain::UNIX, kind, None).map_err(|e| failed("socket", e))?;
    if plan.send_buf >= 0 {
        s.set_send_buffer_size(plan.send_buf as usize)
            .map_err(|e| failed("SO_SNDBUF", e))?;
    }
    if plan.recv_buf >= 0 {
        s.set_recv_buffer_size(plan.recv_buf as usize)
            .map_err(|e| failed("SO_RCVBUF", e))?;
    }
    let file =
        path::bind_fresh(&s, dir).map_err(|e| failed(&format!("bind in {}", dir.display()), e))?;
    if !plan.test.is_datagram() {
        s.listen(5).map_err(|e| failed("listen", e))?;
    }
    let (lss, lsr) = socket::buffer_sizes(&s);
    let (recv_size, desired_width) = match plan.test {
        UnixTest::StreamStream => {
            let size = if plan.recv_size > 0 {
                plan.recv_size
            } else if lsr > 0 {
                lsr.min(limits.max_message)
            } else {
                4096
            };
            (size, (lsr.max(0) / size + 1).max(2) as u32)
        }
        UnixTest::DgStream => (plan.recv_size, 1),
        UnixTest::StreamRr | UnixTest::DgRr => (plan.request_size, 1),
    };
    let recv_width = ring_width(desired_width, recv_size, plan, limits)?;
    ring_width(1, plan.response_size, plan, limits)?;
    Ok(Setup {
        socket: s,
        file,
        lss,
        lsr,
        recv_size,
        recv_width,
    })
}

/// The response that tells netperf where to connect.
fn response(plan: &Plan, s: &Setup, cpu_rate: f32) -> Message {
    let path = UnixPath::new(s.file.as_bytes());
    let measure_cpu = i32::from(plan.measure_cpu);
    match plan.test {
        UnixTest::StreamStream => StreamStreamResponse {
            recv_buf_size: s.lsr,
            send_buf_size: s.lss,
            receive_size: s.recv_size,
            measure_cpu,
            cpu_rate,
            path,
            ..Default::default()
        }
        .encode(),
        UnixTest::StreamRr => StreamRrResponse {
            recv_buf_size: s.lsr,
            send_buf_size: s.lss,
            measure_cpu,
            cpu_rate,
            path,
            ..Default::default()
        }
        .encode(),
        UnixTest::DgStream => DgStreamResponse {
            recv_buf_size: s.lsr,
            send_buf_size: s.lss,
            measure_cpu,
            test_length: plan.test_length,
            cpu_rate,
            path,
            ..Default::default()
        }
        .encode(),
        UnixTest::DgRr => DgRrResponse {
            recv_buf_size: s.lsr,
            send_buf_size: s.lss,
            measure_cpu,
            cpu_rate,
            path,
            ..Default::default()
        }
        .encode(),
    }
}

/// What the data phase measured, for the results message.
#[derive(Default)]
struct Done {
    counters: Counters,
    datagrams: data::Datagrams,
    elapsed: f64,
    cpu_util: Option<f64>,
    num_cpus: u32,
}

/// The results message; `serv_errno` set reports a failed data phase.
fn results(plan: &Plan, d: &Done, serv_errno: i32) -> Message {
    let elapsed_time = d.elapsed as f32;
    let cpu_util = d.cpu_util.map_or(-1.0, |u| u as f32);
    let num_cpus = d.num_cpus as i32;
    let c = &d.counters;
    // These fields are C ints: they wrap as netserver's do.
    let transactions = c.transactions as i32;
    let rr_bytes = transactions.wrapping_mul(plan.request_size.wrapping_add(plan.response_size));
    match plan.test {
        UnixTest::StreamStream => StreamStreamResults {
            serv_errno,
            bytes_received: c.bytes_received as i32,
            recv_calls: c.recv_calls as i32,
            elapsed_time,
            cpu_util,
            serv_dem: -1.0,
            num_cpus,
        }
        .encode(),
        UnixTest::StreamRr => StreamRrResults {
            serv_errno,
            bytes_received: rr_bytes,
            recv_calls: c.recv_calls as i32,
            trans_received: transactions,
            elapsed_time,
            cpu_util,
            serv_dem: -1.0,
            num_cpus,
        }
        .encode(),
        UnixTest::DgStream => DgStreamResults {
            serv_errno,
            messages_recvd: d.datagrams.messages as i32,
            bytes_received: (d.datagrams.messages as i32)
                .wrapping_mul(plan.recv_size)
                .wrapping_add(d.datagrams.last_len as i32),
            elapsed_time,
            cpu_util,
            num_cpus,
        }
        .encode(),
        UnixTest::DgRr => DgRrResults {
            serv_errno,
            bytes_received: rr_bytes,
            recv_calls: c.recv_calls as i32,
            trans_received: transactions,
            elapsed_time,
            cpu_util,
            serv_dem: -1.0,
            num_cpus,
        }
        .encode(),
    }
}

/// A Unix-domain test only makes sense for a netperf on this host, and only
/// such a client may have netserver create socket files: the control
/// connection must come from loopback or from one of this host's addresses
/// (one a socket can be bound to).
fn same_host(peer: SocketAddr) -> Result<(), Refusal> {
    let ip = peer.ip().to_canonical();
    if ip.is_loopback() || std::net::UdpSocket::bind((ip, 0)).is_ok() {
        return Ok(());
    }
    Err(refuse(
        libc::EPERM,
        format!("{ip} is not this host: Unix-domain tests are for local clients"),
    ))
}

/// Wait for netperf's connection, bounded like our other tests' accepts.
fn accept(listener: &Socket, limits: &Limits, stop: &StopFlag) -> Result<Socket, DataError> {
    socket::set_timeouts(listener, Some(data::UNTIMED_IO_WAIT)).map_err(DataError::Connect)?;
    let give_up = Instant::now() + limits.accept_timeout;
    loop {
        match listener.accept() {
            Ok((s, _)) => return Ok(s),
            Err(e) if !matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EINTR)) => {
                return Err(DataError::Connect(e))
            }
            Err(_) if stop.is_set() => {
                return Err(DataError::Connect(std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "the test was stopped before its data connection",
                )))
            }
            Err(_) if Instant::now() >= give_up => {
                return Err(DataError::Connect(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "no data connection within {:.1} s (--accept-timeout)",
                        limits.accept_timeout.as_secs_f64()
                    ),
                )))
            }
            Err(_) => {}
        }
    }
}

/// Run the data phase on a set-up socket. A silent client ends the test
/// through its loops' idle limit (they publish no units for the watchdog),
/// a closed control connection through the watchdog.
fn run_data(
    plan: &Plan,
    s: &Setup,
    limits: &Limits,
    control_fd: RawFd,
) -> (Result<Done, DataError>, Option<watchdog::ClientGone>) {
    let stop = StopFlag::new();
    watchdog::watched(control_fd, &stop, Duration::MAX, || {
        run_watched(plan, s, limits, &stop)
    })
}

fn run_watched(
    plan: &Plan,
    s: &Setup,
    limits: &Limits,
    stop: &StopFlag,
) -> Result<Done, DataError> {
    let owned;
    let data_socket = if plan.test.is_datagram() {
        &s.socket
    } else {
        owned = accept(&s.socket, limits, stop)?;
        &owned
    };
    let timed = plan.timed();
    let idle = Idle::for_silence(limits.silent_timeout);
    socket::set_timeouts(data_socket, idle.io_wait()).map_err(DataError::Connect)?;
    let fd = data_socket.as_raw_fd();
    let mut rx = BufferRing::new(
        s.recv_width,
        s.recv_size.max(0) as usize,
        plan.recv_align as u32,
        plan.recv_offset as u32,
    );
    let mut tx = BufferRing::new(
        1,
        plan.response_size.max(0) as usize,
        plan.send_align as u32,
        plan.send_offset as u32,
    );
    let limit = timed.then(|| {
        let secs = plan.test_length.min(limits.max_test_seconds) as u64 + u64::from(PAD_TIME);
        Duration::from_secs(secs)
    });
    let mut sampler = if plan.measure_cpu {
        CpuSampler::start(None).ok()
    } else {
        None
    };
    let started = Instant::now();
    // A netserver told to stop (SIGTERM) cuts the test; results still go.
    let timer = Timer::arm_watching(limit, stop.clone(), true);
    let stop = stop.clone();
    let count = plan.transaction_limit();
    let mut done = Done::default();
    let outcome = match plan.test {
        UnixTest::StreamStream => {
            data::recv_stream(fd, &mut rx, &stop, idle).map(|c| done.counters = c)
        }
        UnixTest::StreamRr => data::rr_server_stream(fd, &mut rx, &mut tx, &stop, count, idle)
            .map(|c| done.counters = c),
        UnixTest::DgStream => {
            data::recv_datagrams(fd, &mut rx, &stop, idle).map(|d| done.datagrams = d)
        }
        UnixTest::DgRr => data::rr_server_datagram(fd, &mut rx, &mut tx, &stop, count, idle)
            .map(|c| done.counters = c),
    };
    done.elapsed = started.elapsed().as_secs_f64();
    let fired = timer.fired();
    drop(timer);
    if fired {
        // The pad was ours, not the test's.
        done.elapsed = (done.elapsed - f64::from(PAD_TIME)).max(0.0);
    }
    if plan.test == UnixTest::StreamStream {
        // Tells netperf all its data was taken, as netserver's shutdown does.
        let _ = data_socket.shutdown(std::net::Shutdown::Write);
    }
    let usage = sampler.as_mut().and_then(|c| {
        if fired {
            c.stop_scaled_to(done.elapsed).ok()
        } else {
            c.stop().ok()
        }
    });
    done.cpu_util = usage.as_ref().map(|u| u.util);
    done.num_cpus = usage.map_or_else(cpu::num_cpus, |u| u.num_cpus);
    outcome.map(|()| done)
}

/// Serve one request of a Unix-domain test. Errors returned are
/// control-connection failures; a refused or failed test is answered and
/// logged here.
pub fn serve(
    chan: &mut Channel,
    control_fd: RawFd,
    m: &Message,
    peer: SocketAddr,
    opts: &ServerOptions,
) -> Result<(), ChannelError> {
    let Some(test) = UnixTest::from_request_kind(m.kind()) else {
        return chan.send(&wire::encode_error_response(0, libc::EINVAL));
    };
    let name = test.name();
    let plan = Plan::decode(test, m);
    if let Err(e) = crate::engine::affinity::bind_current_thread(plan.cpu_bind) {
        log::line(
            opts,
            Some(peer),
            &format!("cannot bind to CPU {}: {e}", plan.cpu_bind),
        );
    }
    let refused = |chan: &mut Channel, r: Refusal| {
        log::line(
            opts,
            Some(peer),
            &format!("refused {name} request: {}", r.reason),
        );
        chan.send(&wire::encode_error_response(test.response_kind(), r.errno))
    };
    let limits = &opts.limits;
    let setup = match same_host(peer)
        .and_then(|()| plan.validate(limits))
        .and_then(|dir| open(&plan, &dir, limits))
    {
        Ok(s) => s,
        Err(r) => return refused(chan, r),
    };
    let rate = if plan.measure_cpu {
        cpu::calibrate_rate()
    } else {
        0.0
    };
    chan.send(&response(&plan, &setup, rate))?;
    let (outcome, gone) = run_data(&plan, &setup, limits, control_fd);
    if let Some(why) = gone {
        log::line(opts, Some(peer), &format!("ending the test: {why}"));
    }
    match outcome {
        Ok(done) => {
            chan.send(&results(&plan, &done, 0))?;
            let c = &done.counters;
            let moved = match test {
                UnixTest::StreamStream => format!("received {} bytes", c.bytes_received),
                UnixTest::DgStream => format!("received {} datagrams", done.datagrams.messages),
                UnixTest::StreamRr | UnixTest::DgRr => format!("{} transactions", c.transactions),
            };
            log::line(
                opts,
                Some(peer),
                &format!(
                    "{name} test over {}: {moved} in {:.2}s",
                    setup.file.path().display(),
                    done.elapsed
                ),
            );
        }
        Err(e) => {
            let errno = match &e {
                DataError::Send(io) | DataError::Recv(io) | DataError::Connect(io) => errno_of(io),
            };
            chan.send(&results(&plan, &Done::default(), errno))?;
            log::line(opts, Some(peer), &format!("{name} test failed: {e}"));
        }
    }
    // `setup` drops here: its socket closes and its file is removed.
    Ok(())
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
