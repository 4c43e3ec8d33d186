//! netserver's half of the two classic tests stock netperf 2.7.1 still sends
//! without omni: TCP_SENDFILE (as DO_TCP_STREAM) and TCP_CC (DO_TCP_CC).

use super::limits::{defaults, Limits};
use super::log;
use super::options::ServerOptions;
use crate::control::channel::{Channel, ChannelError};
use crate::engine::ring::BufferRing;
use crate::engine::timer::StopFlag;
use crate::engine::watchdog;
use crate::engine::{self, Counters};
use crate::measure::cpu::{self, CpuSampler};
use crate::measure::outcome::CpuUsage;
use crate::net::port_range::{open_in_range, PortRange, RangeError};
use crate::net::socket::{self, SocketOptions};
use crate::wire::legacy::{
    TcpCcRequest, TcpCcResponse, TcpCcResults, TcpStreamRequest, TcpStreamResponse,
    TcpStreamResults, PAD_TIME_SECS,
};
use crate::wire::omni::{NF_INET, NF_INET6, NF_UNSPEC};
use crate::wire::Message;
use socket2::Socket;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

/// The wildcard address netserver listens on for a legacy test's family.
fn wildcard(ipfamily: i32, port: i32) -> SocketAddr {
    let port = u16::try_from(port).unwrap_or(0);
    if [NF_INET6, NF_UNSPEC, libc::AF_INET6 as u32].contains(&(ipfamily as u32)) {
        SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), port)
    } else {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port)
    }
}

/// Check a legacy request's fields; the reason for a refusal.
fn validate(
    ipfamily: i32,
    port: i32,
    bufs: (i32, i32),
    test_length: i32,
    limits: &Limits,
) -> Result<(), String> {
    // netperf's NF_* values; the AF_* ones an older netperf might send.
    let known = [
        NF_UNSPEC,
        NF_INET,
        NF_INET6,
        libc::AF_INET as u32,
        libc::AF_INET6 as u32,
    ];
    if !known.contains(&(ipfamily as u32)) {
        return Err(format!("address family {ipfamily} not supported"));
    }
    if !(0..=65535).contains(&port) {
        return Err(format!("port {port} out of range"));
    }
    if bufs.0 > limits.max_socket_buffer || bufs.1 > limits.max_socket_buffer {
        return Err(format!(
            "socket buffer {} or {} out of range",
            bufs.0, bufs.1
        ));
    }
    if test_length > limits.max_test_seconds {
        return Err(format!("test length {test_length} s out of range"));
    }
    Ok(())
}

/// Open the data listener on `addr`, within netserver's --data-ports when
/// it has one; the errno for the client and the reason for the log if not.
/// The data listener of a legacy test in netserver's data-port range, a
/// failure logged with the test's name; the errno for the client.
fn data_listener(
    test: &str,
    opts: &ServerOptions,
    peer: SocketAddr,
    addr: &SocketAddr,
    send_buf: i32,
    recv_buf: i32,
    nodelay: bool,
) -> Result<Socket, i32> {
    open_listener(addr, send_buf, recv_buf, nodelay, opts.data_ports).map_err(|(errno, why)| {
        log::line(opts, Some(peer), &format!("{test} test failed: {why}"));
        errno
    })
}

fn open_listener(
    addr: &SocketAddr,
    send_buf: i32,
    recv_buf: i32,
    nodelay: bool,
    range: Option<PortRange>,
) -> Result<Socket, (i32, String)> {
    let opts = SocketOptions {
        send_buf,
        recv_buf,
        nodelay,
        routing_allowed: true,
        reuse_address: true,
        priority: -1,
        tos: -1,
        ..Default::default()
    };
    let open = |port: u16| -> std::io::Result<Socket> {
        let mut addr = *addr;
        addr.set_port(port);
        let s = socket::create(&addr, &opts)?;
        if addr.is_ipv6() {
            let _ = s.set_only_v6(false);
        }
        s.bind(&socket2::SockAddr::from(addr))?;
        s.listen(128)?;
        Ok(s)
    };
    let s = open_in_range(range, addr.port(), open).map_err(|e| {
        let reason = match &e {
            RangeError::Open(io) => format!("cannot open a data socket on {addr}: {io}"),
            other => other.to_string(),
        };
        (e.errno(), reason)
    })?;
    socket::set_timeouts(&s, Some(Duration::from_millis(250)))
        .map_err(|e| (e.raw_os_error().unwrap_or(libc::EINVAL), e.to_string()))?;
    Ok(s)
}

/// TCP_SENDFILE's request checked; its test length may be a byte count,
/// which the timer clamps, so only its other fields are bounded here.
fn check_tcp_stream(r: &TcpStreamRequest, limits: &Limits) -> Result<(), String> {
    validate(
        r.ipfamily,
        r.port,
        (r.send_buf_size, r.recv_buf_size),
        0,
        limits,
    )?;
    if r.receive_size > limits.max_message {
        return Err(format!("receive size {} out of range", r.receive_size));
    }
    let align_ok = (0..=defaults::MAX_ALIGNMENT as i32).contains(&r.recv_alignment)
        && (0..=defaults::MAX_OFFSET as i32).contains(&r.recv_offset);
    align_ok
        .then_some(())
        .ok_or_else(|| "alignment or offset out of range".to_string())
}

fn check_tcp_cc(r: &TcpCcRequest, limits: &Limits) -> Result<(), String> {
    let bufs = (r.send_buf_size, r.recv_buf_size);
    validate(r.ipfamily, r.port, bufs, r.test_length, limits)
}

/// What netserver decides about a legacy request (the fuzzer's check); other
/// message types pass.
#[doc(hidden)]
pub fn check_request(m: &Message, limits: &Limits) -> Result<(), String> {
    match m.kind() {
        crate::wire::kind::DO_TCP_STREAM => check_tcp_stream(&TcpStreamRequest::decode(m), limits),
        crate::wire::kind::DO_TCP_CC => check_tcp_cc(&TcpCcRequest::decode(m), limits),
        _ => Ok(()),
    }
}

/// The stop timer of a legacy test: seconds (at most the longest test
/// allowed) plus pad; none for counts.
fn timer_for(test_length: i32, limits: &Limits) -> (Option<Duration>, Option<u64>) {
    if test_length > 0 {
        let secs = test_length
            .min(limits.max_test_seconds)
            .saturating_add(PAD_TIME_SECS);
        (Some(Duration::from_secs(secs as u64)), None)
    } else {
        (None, Some(u64::from(test_length.unsigned_abs())))
    }
}

fn cpu_fields(u: &Option<CpuUsage>) -> (f32, i32, i32) {
    match u {
        Some(u) => (u.util as f32, 8, u.num_cpus as i32),
        None => (0.0, 0, 0),
    }
}

/// TCP_SENDFILE's server half: receive until the client's end of file.
pub fn serve_tcp_stream(
    chan: &mut Channel,
    control_fd: RawFd,
    m: &Message,
    peer: SocketAddr,
    opts: &ServerOptions,
) -> Result<(), ChannelError> {
    let r = TcpStreamRequest::decode(m);
    let limits = &opts.limits;
    let checked = check_tcp_stream(&r, limits).map_err(|reason| {
        log::line(
            opts,
            Some(peer),
            &format!("refused TCP_STREAM request: {reason}"),
        );
        libc::EINVAL
    });
    let addr = wildcard(r.ipfamily, r.port);
    let opened = checked.and_then(|()| {
        data_listener(
            "TCP_STREAM",
            opts,
            peer,
            &addr,
            r.send_buf_size,
            r.recv_buf_size,
            r.no_delay != 0,
        )
    });
    let s = match opened {
        Ok(s) => s,
        Err(errno) => {
            return chan.send(
                &TcpStreamResponse {
                    serv_errno: errno,
                    ..Default::default()
                }
                .encode(),
            )
        }
    };
    let (lss, lsr) = socket::buffer_sizes(&s);
    let recv_size = if r.receive_size > 0 {
        r.receive_size
    } else if lsr > 0 {
        lsr.min(limits.max_message)
    } else {
        4096
    };
    let width =
        ((lsr.max(0) / recv_size.max(1)) + 1).clamp(2, limits.max_ring_width.max(2) as i32) as u32;
    let ring_bytes = u64::from(width) * (recv_size as u64 + 2 * u64::from(defaults::MAX_ALIGNMENT));
    let width = if ring_bytes > limits.max_ring_bytes {
        1
    } else {
        width
    };
    let measure = r.measure_cpu != 0;
    let response = TcpStreamResponse {
        serv_errno: 0,
        recv_buf_size: lsr,
        receive_size: recv_size,
        no_delay: r.no_delay,
        measure_cpu: i32::from(measure),
        test_length: 0,
        send_buf_size: lss,
        data_port_number: socket::local_addr(&s).map_or(0, |a| i32::from(a.port())),
        cpu_rate: if measure { cpu::calibrate_rate() } else { 0.0 },
        so_rcvavoid: r.so_rcvavoid,
        so_sndavoid: r.so_sndavoid,
    };
    chan.send(&response.encode())?;
    let stop = StopFlag::new();
    let (limit, _) = timer_for(r.test_length.max(1), limits);
    let (data, gone) = watchdog::watched(control_fd, &stop, limits.accept_timeout, || {
        accept(&s, &stop, limits, &opts.allow)
    });
    if let Some(why) = gone {
        log::line(opts, Some(peer), &format!("ending the test: {why}"));
    }
    let mut counters = Counters::default();
    let mut elapsed = 0.0;
    let mut usage = None;
    if let Some(d) = data {
        let mut cpu = if measure {
            CpuSampler::start(None).ok()
        } else {
            None
        };
        let started = Instant::now();
        let mut ring = BufferRing::new(
            width,
            recv_size as usize,
            r.recv_alignment as u32,
            r.recv_offset as u32,
        );
        // A netserver told to stop (SIGTERM) cuts the test; results still go.
        let received = watchdog::watched_alone(
            control_fd,
            &stop,
            limits.silent_timeout,
            &[d.as_raw_fd()],
            limit,
            || engine::stream::recv(d.as_raw_fd(), &mut ring, &stop, None, None, None),
        );
        counters = received.value.unwrap_or_default();
        if let Some(why) = received.gone {
            log::line(opts, Some(peer), &format!("ending the test: {why}"));
        }
        elapsed = started.elapsed().as_secs_f64();
        if received.timer_fired {
            elapsed -= f64::from(PAD_TIME_SECS);
        }
        usage = cpu.as_mut().and_then(|c| c.stop().ok());
        let _ = d.shutdown(std::net::Shutdown::Write);
    }
    let (util, method, cpus) = cpu_fields(&usage);
    let mut results = TcpStreamResults {
        bytes_received: counters.bytes_received as f64,
        recv_calls: counters.recv_calls as u32,
        elapsed_time: elapsed as f32,
        cpu_method: method,
        num_cpus: cpus,
        ..TcpStreamResults::left_over_from(&response)
    };
    if measure {
        results.cpu_util = util;
    }
    chan.send(&results.encode())?;
    log::line(
        opts,
        Some(peer),
        &format!(
            "TCP_STREAM (legacy) test: received {} bytes in {:.2}s",
            counters.bytes_received, elapsed
        ),
    );
    Ok(())
}

/// TCP_CC's server half: accept and close until the timer or the count.
pub fn serve_tcp_cc(
    chan: &mut Channel,
    control_fd: RawFd,
    m: &Message,
    peer: SocketAddr,
    opts: &ServerOptions,
) -> Result<(), ChannelError> {
    let r = TcpCcRequest::decode(m);
    let checked = check_tcp_cc(&r, &opts.limits).map_err(|reason| {
        log::line(
            opts,
            Some(peer),
            &format!("refused TCP_CC request: {reason}"),
        );
        libc::EINVAL
    });
    let addr = wildcard(r.ipfamily, r.port);
    let opened = checked.and_then(|()| {
        data_listener(
            "TCP_CC",
            opts,
            peer,
            &addr,
            r.send_buf_size,
            r.recv_buf_size,
            r.no_delay != 0,
        )
    });
    let s = match opened {
        Ok(s) => s,
        Err(errno) => {
            return chan.send(
                &TcpCcResponse {
                    serv_errno: errno,
                    ..Default::default()
                }
                .encode(),
            )
        }
    };
    let (lss, lsr) = socket::buffer_sizes(&s);
    let measure = r.measure_cpu != 0;
    let response = TcpCcResponse {
        serv_errno: 0,
        recv_buf_size: lsr,
        no_delay: r.no_delay,
        measure_cpu: i32::from(measure),
        test_length: 0,
        send_buf_size: lss,
        data_port_number: socket::local_addr(&s).map_or(0, |a| i32::from(a.port())),
        cpu_rate: if measure { cpu::calibrate_rate() } else { 0.0 },
        so_rcvavoid: r.so_rcvavoid,
        so_sndavoid: r.so_sndavoid,
    };
    chan.send(&response.encode())?;
    let stop = StopFlag::new();
    let (limit, count) = timer_for(r.test_length, &opts.limits);
    let mut cpu = if measure {
        CpuSampler::start(None).ok()
    } else {
        None
    };
    let started = Instant::now();
    let mut empty_send = BufferRing::new(1, 0, 8, 0);
    let mut empty_recv = BufferRing::new(1, 0, 8, 0);
    // A netserver told to stop (SIGTERM) cuts the test; results still go.
    let served = watchdog::watched_alone(
        control_fd,
        &stop,
        opts.limits.silent_timeout,
        &[s.as_raw_fd()],
        limit,
        || {
            engine::connect::server(&s, &mut empty_send, &mut empty_recv, &stop, count, |ip| {
                opts.allow.permits(ip)
            })
        },
    );
    let (counters, _) = served.value.unwrap_or_default();
    if let Some(why) = served.gone {
        log::line(opts, Some(peer), &format!("ending the test: {why}"));
    }
    let mut elapsed = started.elapsed().as_secs_f64();
    if served.timer_fired {
        elapsed -= f64::from(PAD_TIME_SECS);
    }
    let usage = cpu.as_mut().and_then(|c| c.stop().ok());
    let (util, _, cpus) = cpu_fields(&usage);
    let mut results = TcpCcResults {
        bytes_received: 0,
        trans_received: counters.transactions as u32,
        elapsed_time: elapsed as f32,
        num_cpus: cpus,
        ..TcpCcResults::left_over_from(&response)
    };
    if measure {
        results.cpu_util = util;
    }
    chan.send(&results.encode())?;
    log::line(
        opts,
        Some(peer),
        &format!(
            "TCP_CC (legacy) test: {} connections in {:.2}s",
            counters.transactions, elapsed
        ),
    );
    Ok(())
}

/// Wait for the data connection from an allowed client, until `stop` or the
/// accept timeout (the listener wakes every 250 ms to look).
fn accept(
    listener: &Socket,
    stop: &StopFlag,
    limits: &Limits,
    allow: &super::allow::AllowList,
) -> Option<Socket> {
    let give_up = Instant::now() + limits.accept_timeout;
    while !stop.is_set() && Instant::now() < give_up {
        if let Ok((d, from)) = listener.accept() {
            if from.as_socket().is_some_and(|a| allow.permits(a.ip())) {
                return Some(d);
            }
        }
    }
    None
}
