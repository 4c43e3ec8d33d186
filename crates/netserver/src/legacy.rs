//! netserver's half of the two classic tests stock netperf 2.7.1 still sends
//! without omni: TCP_SENDFILE (as DO_TCP_STREAM) and TCP_CC (DO_TCP_CC).
//! One flow serves both (`serve`): check the request (refuse it with a
//! logged reason), open the data listener, answer, run the watched data
//! phase, send the results; each test gives only its own parts.

use super::limits::{defaults, Limits};
use super::options::ServerOptions;
use super::phase::{Caller, Phase, Served};
use libc::{AF_INET, AF_INET6};
use netperf_data::engine::ring::BufferRing;
use netperf_data::engine::{self, Counters};
use netperf_data::measure::cpu;
use netperf_data::net::channel::{Channel, ChannelError};
use netperf_data::net::port_range::{open_in_range, RangeError};
use netperf_data::net::socket::{self, SocketOptions};
use netperf_wire::legacy::{
    TcpCcRequest, TcpCcResponse, TcpCcResults, TcpStreamRequest, TcpStreamResponse,
    TcpStreamResults,
};
use netperf_wire::omni::{NF_INET, NF_INET6, NF_UNSPEC};
use netperf_wire::{kind, Message, PAD_TIME};
use socket2::{SockAddr, Socket};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::AsRawFd;
use std::time::Duration;

/// The families a legacy request may name: netperf's NF_* values, and the
/// AF_* ones an older netperf might send.
const KNOWN_FAMILIES: [u32; 5] = [
    NF_UNSPEC,
    NF_INET,
    NF_INET6,
    AF_INET as u32,
    AF_INET6 as u32,
];

/// How often a blocked accept on a legacy listener looks at the stop flag.
const ACCEPT_POLL: Duration = Duration::from_millis(250);

/// The wildcard address netserver listens on for a legacy test's family.
fn wildcard(ipfamily: i32, port: i32) -> SocketAddr {
    let port = u16::try_from(port).unwrap_or(0);
    if [NF_INET6, NF_UNSPEC, AF_INET6 as u32].contains(&(ipfamily as u32)) {
        SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), port)
    } else {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port)
    }
}

/// The data listener a legacy request asks for: where, and its options.
type Listen = (SocketAddr, SocketOptions);

/// Check a legacy request's listener fields and test length: the listener,
/// or the reason for a refusal.
fn listen(
    (ipfamily, port): (i32, i32),
    (send_buf, recv_buf): (i32, i32),
    no_delay: i32,
    test_length: i32,
    limits: &Limits,
) -> Result<Listen, String> {
    if !KNOWN_FAMILIES.contains(&(ipfamily as u32)) {
        return Err(format!("address family {ipfamily} not supported"));
    }
    if !(0..=65535).contains(&port) {
        return Err(format!("port {port} out of range"));
    }
    if send_buf > limits.max_socket_buffer || recv_buf > limits.max_socket_buffer {
        return Err(format!(
            "socket buffer {send_buf} or {recv_buf} out of range"
        ));
    }
    if test_length > limits.max_test_seconds {
        return Err(format!("test length {test_length} s out of range"));
    }
    let options = SocketOptions {
        send_buf,
        recv_buf,
        nodelay: no_delay != 0,
        routing_allowed: true,
        reuse_address: true,
        priority: -1,
        tos: -1,
        ..Default::default()
    };
    Ok((wildcard(ipfamily, port), options))
}

/// TCP_SENDFILE's request checked; its test length may be a byte count,
/// which the timer clamps, so only its other fields are bounded here.
fn check_tcp_stream(r: &TcpStreamRequest, limits: &Limits) -> Result<Listen, String> {
    let (at, bufs) = ((r.ipfamily, r.port), (r.send_buf_size, r.recv_buf_size));
    let listener = listen(at, bufs, r.no_delay, 0, limits)?;
    if r.receive_size > limits.max_message {
        return Err(format!("receive size {} out of range", r.receive_size));
    }
    let align_ok = (0..=defaults::MAX_ALIGNMENT as i32).contains(&r.recv_alignment)
        && (0..=defaults::MAX_OFFSET as i32).contains(&r.recv_offset);
    align_ok
        .then_some(listener)
        .ok_or_else(|| "alignment or offset out of range".to_string())
}

fn check_tcp_cc(r: &TcpCcRequest, limits: &Limits) -> Result<Listen, String> {
    let (at, bufs) = ((r.ipfamily, r.port), (r.send_buf_size, r.recv_buf_size));
    listen(at, bufs, r.no_delay, r.test_length, limits)
}

/// What netserver decides about a legacy request (the fuzzer's check); other
/// message types pass.
#[doc(hidden)]
pub fn check_request(m: &Message, limits: &Limits) -> Result<(), String> {
    match m.kind() {
        kind::DO_TCP_STREAM => check_tcp_stream(&TcpStreamRequest::decode(m), limits).map(drop),
        kind::DO_TCP_CC => check_tcp_cc(&TcpCcRequest::decode(m), limits).map(drop),
        _ => Ok(()),
    }
}

/// The stop timer of a test (`Limits::test_clock` with netserver's pad),
/// and for `test_length <= 0` the count of `-test_length`.
pub(crate) fn timer_for(test_length: i32, limits: &Limits) -> (Option<Duration>, Option<u64>) {
    let count = (test_length <= 0).then(|| u64::from(test_length.unsigned_abs()));
    (Some(limits.test_clock(test_length, PAD_TIME)), count)
}

/// Open `listen` within netserver's --data-ports when it has one, with the
/// receive timeout its accepts need; the errno for the client and the reason
/// for the log if it cannot.
fn data_listener((addr, options): &Listen, opts: &ServerOptions) -> Result<Socket, (i32, String)> {
    let open = |port: u16| -> std::io::Result<Socket> {
        let mut addr = *addr;
        addr.set_port(port);
        let s = socket::create(&addr, options)?;
        if addr.is_ipv6() {
            let _ = s.set_only_v6(false);
        }
        s.bind(&SockAddr::from(addr))?;
        s.listen(128)?;
        Ok(s)
    };
    let s = open_in_range(opts.data_ports, addr.port(), open).map_err(|e| {
        let reason = match &e {
            RangeError::Open(io) => format!("cannot open a data socket on {addr}: {io}"),
            other => other.to_string(),
        };
        (e.errno(), reason)
    })?;
    socket::set_timeouts(&s, Some(ACCEPT_POLL))
        .map_err(|e| (e.raw_os_error().unwrap_or(libc::EINVAL), e.to_string()))?;
    Ok(s)
}

/// What netserver grants a legacy test, read from its data listener.
struct Granted {
    send_buf: i32,
    recv_buf: i32,
    port: i32,
    /// 1 if netserver measures CPU, else 0.
    measure: i32,
    cpu_rate: f32,
}

impl Served<Counters> {
    /// The CPU fields netserver writes: the utilisation if `asked` (0 if it
    /// could not measure; else `leftover` stays), netperf's method code
    /// (PROC_STAT, 8) and the number of CPUs (both 0 unmeasured).
    fn cpu(&self, asked: i32, leftover: f32) -> (f32, i32, i32) {
        match &self.usage {
            Some(u) => (u.util as f32, 8, u.num_cpus as i32),
            None => (if asked != 0 { 0.0 } else { leftover }, 0, 0),
        }
    }
}

/// The flow of a legacy test. A refusal (`asked`'s reason) or a listener
/// that cannot open is logged and answered with the errno alone; else the
/// response that `respond` builds goes out, `finish` runs the data phase, and
/// the results it returns go out and its summary to the log.
fn serve<R>(
    chan: &mut Channel,
    phase: &Phase,
    asked: Result<Listen, String>,
    encode: fn(&R) -> Message,
    respond: impl FnOnce(&Granted) -> R,
    finish: impl FnOnce(&Socket, &R) -> (Message, String),
) -> Result<(), ChannelError> {
    let name = phase.name;
    let opened = asked
        .map_err(|reason| (libc::EINVAL, format!("refused {name} request: {reason}")))
        .and_then(|listen| {
            data_listener(&listen, phase.caller.opts)
                .map_err(|(errno, why)| (errno, format!("{name} test failed: {why}")))
        });
    let listener = match opened {
        Ok(s) => s,
        Err((errno, why)) => {
            phase.log(&why);
            return chan.send(&Message::new(phase.response_kind, errno));
        }
    };
    let (send_buf, recv_buf) = socket::buffer_sizes(&listener);
    let response = respond(&Granted {
        send_buf,
        recv_buf,
        port: socket::local_addr(&listener).map_or(0, |a| i32::from(a.port())),
        measure: i32::from(phase.measure),
        cpu_rate: phase.measure.then(cpu::calibrate_rate).unwrap_or(0.0),
    });
    phase.answer(chan, &encode(&response))?;
    let (results, summary) = finish(&listener, &response);
    chan.send(&results)?;
    phase.log(&summary);
    Ok(())
}

/// TCP_SENDFILE's server half: receive until the client's end of file.
pub fn serve_tcp_stream(
    chan: &mut Channel,
    m: &Message,
    caller: Caller,
) -> Result<(), ChannelError> {
    let r = TcpStreamRequest::decode(m);
    let limits = &caller.opts.limits;
    let phase = caller.phase("TCP_STREAM", TcpStreamResponse::KIND, r.measure_cpu != 0);
    let respond = |g: &Granted| TcpStreamResponse {
        recv_buf_size: g.recv_buf,
        receive_size: if r.receive_size > 0 {
            r.receive_size
        } else if g.recv_buf > 0 {
            g.recv_buf.min(limits.max_message)
        } else {
            4096
        },
        no_delay: r.no_delay,
        measure_cpu: g.measure,
        send_buf_size: g.send_buf,
        data_port_number: g.port,
        cpu_rate: g.cpu_rate,
        so_rcvavoid: r.so_rcvavoid,
        so_sndavoid: r.so_sndavoid,
        ..Default::default()
    };
    let receive = |d: Socket, response: &TcpStreamResponse| {
        let size = response.receive_size;
        let width = ((response.recv_buf_size.max(0) / size.max(1)) + 1)
            .clamp(2, limits.max_ring_width.max(2) as i32) as u32;
        let ring = u64::from(width) * (size as u64 + 2 * u64::from(defaults::MAX_ALIGNMENT));
        let too_big = ring > limits.max_ring_bytes;
        let width = if too_big { 1 } else { width };
        let (align, offset) = (r.recv_alignment as u32, r.recv_offset as u32);
        let mut ring = BufferRing::new(width, size as usize, align, offset);
        let (limit, _) = timer_for(r.test_length.max(1), limits);
        let fd = d.as_raw_fd();
        let measured = phase.measured(fd, limit, PAD_TIME, || {
            engine::stream::recv(fd, &mut ring, &phase.stop, None, None, None)
        });
        let _ = d.shutdown(std::net::Shutdown::Write);
        measured
    };
    let finish = |listener: &Socket, response: &TcpStreamResponse| {
        let left = TcpStreamResults::left_over_from(response);
        // No connection, or a receive that failed: an error for netperf,
        // never a count of zero bytes it would print as 0.00.
        let got = match phase.accept(listener) {
            Ok(Some(d)) => receive(d, response),
            Ok(None) => return failed(left, super::omni::no_data_connection()),
            Err(e) => return failed(left, e),
        };
        let got = match got.value {
            Ok(counters) => Served {
                value: counters,
                elapsed: got.elapsed,
                usage: got.usage,
            },
            Err(e) => return failed(left, e.into_io()),
        };
        let (cpu_util, cpu_method, num_cpus) = got.cpu(response.measure_cpu, left.cpu_util);
        let results = TcpStreamResults {
            bytes_received: got.value.bytes_received as f64,
            recv_calls: got.value.recv_calls as u32,
            elapsed_time: got.elapsed as f32,
            cpu_util,
            cpu_method,
            num_cpus,
            ..left
        };
        let summary = format!(
            "TCP_STREAM (legacy) test: received {} bytes in {:.2}s",
            got.value.bytes_received, got.elapsed
        );
        (results.encode(), summary)
    };
    let asked = check_tcp_stream(&r, limits);
    let encode = TcpStreamResponse::encode;
    serve(chan, &phase, asked, encode, respond, finish)
}

/// TCP_SENDFILE's results when its data phase failed: `e`'s errno, which
/// netperf reports as the remote error, and the reason for the log.
fn failed(left: TcpStreamResults, e: std::io::Error) -> (Message, String) {
    let errno = e.raw_os_error().unwrap_or(libc::EIO);
    let results = TcpStreamResults {
        serv_errno: errno,
        ..left
    };
    (
        results.encode(),
        format!("TCP_STREAM (legacy) test failed: {e}"),
    )
}

/// TCP_CC's server half: accept and close until the timer or the count.
pub fn serve_tcp_cc(chan: &mut Channel, m: &Message, caller: Caller) -> Result<(), ChannelError> {
    let (r, opts) = (TcpCcRequest::decode(m), caller.opts);
    let phase = caller.phase("TCP_CC", TcpCcResponse::KIND, r.measure_cpu != 0);
    let respond = |g: &Granted| TcpCcResponse {
        recv_buf_size: g.recv_buf,
        no_delay: r.no_delay,
        measure_cpu: g.measure,
        send_buf_size: g.send_buf,
        data_port_number: g.port,
        cpu_rate: g.cpu_rate,
        so_rcvavoid: r.so_rcvavoid,
        so_sndavoid: r.so_sndavoid,
        ..Default::default()
    };
    let finish = |listener: &Socket, response: &TcpCcResponse| {
        let (limit, count) = timer_for(r.test_length, &opts.limits);
        let mut empty = (BufferRing::new(1, 0, 8, 0), BufferRing::new(1, 0, 8, 0));
        let permit = |ip| opts.allow.permits(ip);
        let got = phase.measured(listener.as_raw_fd(), limit, PAD_TIME, || {
            let (send, recv) = (&mut empty.0, &mut empty.1);
            engine::connect::server(listener, send, recv, &phase.stop, count, permit)
        });
        let left = TcpCcResults::left_over_from(response);
        // A failed accept is an error for netperf, not a count of zero.
        let got = match got.value {
            Ok((counters, _)) => Served {
                value: counters,
                elapsed: got.elapsed,
                usage: got.usage,
            },
            Err(e) => {
                let e = e.into_io();
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                let results = TcpCcResults {
                    serv_errno: errno,
                    ..left
                };
                return (
                    results.encode(),
                    format!("TCP_CC (legacy) test failed: {e}"),
                );
            }
        };
        let (cpu_util, _, num_cpus) = got.cpu(response.measure_cpu, left.cpu_util);
        let results = TcpCcResults {
            bytes_received: 0,
            trans_received: got.value.transactions as u32,
            elapsed_time: got.elapsed as f32,
            cpu_util,
            num_cpus,
            ..left
        };
        let summary = format!(
            "TCP_CC (legacy) test: {} connections in {:.2}s",
            got.value.transactions, got.elapsed
        );
        (results.encode(), summary)
    };
    let asked = check_tcp_cc(&r, &opts.limits);
    let encode = TcpCcResponse::encode;
    serve(chan, &phase, asked, encode, respond, finish)
}
