//! netserver's half of the two classic tests stock netperf 2.7.1 still sends
//! without omni: TCP_SENDFILE (as DO_TCP_STREAM) and TCP_CC (DO_TCP_CC).

use super::log;
use super::omni::limits;
use super::options::ServerOptions;
use crate::control::channel::{Channel, ChannelError};
use crate::engine::ring::BufferRing;
use crate::engine::timer::{StopFlag, Timer};
use crate::engine::{self, Counters};
use crate::measure::cpu::{self, CpuSampler};
use crate::measure::outcome::CpuUsage;
use crate::net::socket::{self, SocketOptions};
use crate::wire::legacy::{
    TcpCcRequest, TcpCcResponse, TcpCcResults, TcpStreamRequest, TcpStreamResponse,
    TcpStreamResults, PAD_TIME_SECS,
};
use crate::wire::omni::{NF_INET6, NF_UNSPEC};
use crate::wire::Message;
use socket2::Socket;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// The wildcard address netserver listens on for a legacy test's family.
fn wildcard(ipfamily: i32, port: i32) -> SocketAddr {
    let port = u16::try_from(port).unwrap_or(0);
    if ipfamily as u32 == NF_INET6 || ipfamily as u32 == NF_UNSPEC {
        SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), port)
    } else {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port)
    }
}

fn open_listener(
    addr: &SocketAddr,
    send_buf: i32,
    recv_buf: i32,
    nodelay: bool,
) -> Result<Socket, i32> {
    if send_buf > limits::MAX_SOCKET_BUFFER || recv_buf > limits::MAX_SOCKET_BUFFER {
        return Err(libc::EINVAL);
    }
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
    let s = socket::create(addr, &opts).map_err(|e| e.raw_os_error().unwrap_or(libc::EINVAL))?;
    if addr.is_ipv6() {
        let _ = s.set_only_v6(false);
    }
    socket::bind(&s, addr).map_err(|e| e.raw_os_error().unwrap_or(libc::EADDRINUSE))?;
    s.listen(128)
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EINVAL))?;
    socket::set_timeouts(&s, Some(Duration::from_millis(250)))
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EINVAL))?;
    Ok(s)
}

/// The stop timer of a legacy test: seconds plus pad, clamped; none for counts.
fn timer_for(test_length: i32) -> (Option<Duration>, Option<u64>) {
    if test_length > 0 {
        let secs = test_length.min(limits::MAX_TEST_SECONDS) + PAD_TIME_SECS;
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
    m: &Message,
    peer: SocketAddr,
    opts: &ServerOptions,
) -> Result<(), ChannelError> {
    let r = TcpStreamRequest::decode(m);
    let addr = wildcard(r.ipfamily, r.port);
    let s = match open_listener(&addr, r.send_buf_size, r.recv_buf_size, r.no_delay != 0) {
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
        r.receive_size.min(limits::MAX_MESSAGE)
    } else if lsr > 0 {
        lsr
    } else {
        4096
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
    let (limit, _) = timer_for(r.test_length.max(1));
    let give_up = Instant::now() + Duration::from_secs(limits::ACCEPT_WAIT_SECS);
    let data = loop {
        match s.accept() {
            Ok((d, _)) => break Some(d),
            Err(_) if Instant::now() < give_up => continue,
            Err(_) => break None,
        }
    };
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
        // A netserver told to stop (SIGTERM) cuts the test; results still go.
        let timer = Timer::arm_watching(limit, stop.clone(), true);
        let width = ((lsr.max(0) / recv_size.max(1)) + 1).max(2) as u32;
        let mut ring = BufferRing::new(
            width,
            recv_size as usize,
            r.recv_alignment.clamp(0, 16384) as u32,
            r.recv_offset.clamp(0, 4096) as u32,
        );
        counters = engine::stream::recv(d.as_raw_fd(), &mut ring, &stop, None, None, None)
            .unwrap_or_default();
        elapsed = started.elapsed().as_secs_f64();
        if timer.fired() {
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
    m: &Message,
    peer: SocketAddr,
    opts: &ServerOptions,
) -> Result<(), ChannelError> {
    let r = TcpCcRequest::decode(m);
    let addr = wildcard(r.ipfamily, r.port);
    let s = match open_listener(&addr, r.send_buf_size, r.recv_buf_size, r.no_delay != 0) {
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
    let (limit, count) = timer_for(r.test_length);
    let mut cpu = if measure {
        CpuSampler::start(None).ok()
    } else {
        None
    };
    let started = Instant::now();
    // A netserver told to stop (SIGTERM) cuts the test; results still go.
    let timer = Timer::arm_watching(limit, stop.clone(), true);
    let mut empty_send = BufferRing::new(1, 0, 8, 0);
    let mut empty_recv = BufferRing::new(1, 0, 8, 0);
    let (counters, _) = engine::connect::server(&s, &mut empty_send, &mut empty_recv, &stop, count)
        .unwrap_or_default();
    let mut elapsed = started.elapsed().as_secs_f64();
    if timer.fired() {
        elapsed -= f64::from(PAD_TIME_SECS);
    }
    drop(timer);
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
