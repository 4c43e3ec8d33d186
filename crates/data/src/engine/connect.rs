//! Connection tests: TCP_CRR (connect, request, response, close) and TCP_CC
//! (connect, close), client and server halves. Each transaction is a new
//! connection.

use super::io::{self, Io};
use super::message::{recv_message, send_message, Got};
use super::ring::BufferRing;
use super::stop_flag::StopFlag;
use super::{Counters, DataError, Histogram};
use crate::net::socket::{self, SocketOptions};
use socket2::{SockAddr, Socket};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// How long connecting may keep failing before the test gives up.
const CONNECT_LIMIT: Duration = Duration::from_secs(10);

/// Exchange one request/response on `s`; false when the peer went away.
/// The client sends first; the server (`server_side`) receives first.
fn exchange(
    s: &Socket,
    out_ring: &mut BufferRing,
    in_ring: &mut BufferRing,
    stop: &StopFlag,
    c: &mut Counters,
    server_side: bool,
) -> Result<bool, DataError> {
    let fd = s.as_raw_fd();
    let (out_len, in_len) = (out_ring.size(), in_ring.size());
    let send = |ring: &mut BufferRing, c: &mut Counters| -> Result<bool, DataError> {
        if out_len == 0 {
            Ok(true)
        } else {
            send_message(fd, ring.next_ptr(), out_len, None, stop, c)
        }
    };
    let recv = |ring: &mut BufferRing, c: &mut Counters| -> Result<bool, DataError> {
        if in_len == 0 {
            return Ok(true);
        }
        Ok(matches!(
            recv_message(fd, ring.next_ptr(), in_len, false, stop, false, c)?,
            Got::Message
        ))
    };
    // A connection test's server reads the request before it answers.
    let ok = if server_side {
        let got = recv(in_ring, c)?;
        got && send(out_ring, c)?
    } else {
        let sent = send(out_ring, c)?;
        sent && recv(in_ring, c)?
    };
    Ok(ok)
}

/// Tell our netserver that a connection test ended early: a connection
/// closed without a request. Best effort; a stock netserver ends by its timer.
pub fn mark_end(remote: &SocketAddr, opts: &SocketOptions) {
    if let Ok(s) = socket::create(remote, opts) {
        let _ = socket::connect_timeout(&s, remote, Duration::from_secs(1));
    }
}

/// Wait for the peer's close after our shutdown; bounded by the socket timeout.
fn drain_until_close(s: &Socket, stop: &StopFlag) {
    let mut b = [0u8; 64];
    for _ in 0..1000 {
        match io::recv(s.as_raw_fd(), b.as_mut_ptr(), b.len()) {
            Io::Moved(_) => {}
            Io::Retry if !stop.is_set() => {}
            _ => return,
        }
    }
}

/// The netperf side: one connection per transaction to `remote`.
#[allow(clippy::too_many_arguments)]
pub fn client(
    remote: &SocketAddr,
    local: Option<SocketAddr>,
    opts: &SocketOptions,
    send_ring: &mut BufferRing,
    recv_ring: &mut BufferRing,
    stop: &StopFlag,
    trans_limit: Option<u64>,
    io_wait: Option<Duration>,
    mut hist: Option<&mut Histogram>,
) -> Result<(Counters, i32), DataError> {
    let mut c = Counters::default();
    let mut mss = -1;
    let mut failing_since: Option<Instant> = None;
    while !stop.is_set() {
        if let Some(limit) = trans_limit {
            if c.transactions >= limit {
                break;
            }
        }
        let started = hist.as_ref().map(|_| Instant::now());
        let s = socket::create(remote, opts).map_err(DataError::Connect)?;
        // In a timed test the timer's signal bounds every call; otherwise one
        // timeout bounds the blocking connect, the send and the receives.
        if io_wait.is_some() {
            socket::set_timeouts(&s, io_wait).map_err(DataError::Connect)?;
        }
        // A port in use (k8s-netperf's `-- -P D` names the netserver's own
        // port, which it listens on at this host) is connected from an
        // ephemeral one: netperf 2.7.1 ignores a failed bind of its data
        // socket the same way.
        if let Some(l) = local {
            match socket::bind(&s, &l) {
                Err(e) if e.kind() != std::io::ErrorKind::AddrInUse => {
                    return Err(DataError::Connect(e))
                }
                _ => {}
            }
        }
        if let Err(e) = s.connect(&SockAddr::from(*remote)) {
            if stop.is_set() {
                break;
            }
            // Out of local ports, a full backlog or a slow handshake: try
            // again with a new socket, as netperf does, for a bounded time.
            let transient = matches!(
                e.raw_os_error(),
                Some(
                    libc::EADDRNOTAVAIL
                        | libc::EADDRINUSE
                        | libc::EINPROGRESS
                        | libc::EAGAIN
                        | libc::EINTR
                )
            );
            let since = *failing_since.get_or_insert_with(Instant::now);
            if transient && since.elapsed() < CONNECT_LIMIT {
                continue;
            }
            return Err(DataError::Connect(e));
        }
        failing_since = None;
        if mss < 0 {
            mss = socket::mss(&s);
        }
        let answered = exchange(&s, send_ring, recv_ring, stop, &mut c, false)?;
        // Each connection's own count, before it is gone: LOCAL_TRANSPORT_RETRANS
        // is the test's sum (one getsockopt per connection, beside a connect
        // and an accept).
        let info = socket::tcp_info(s.as_raw_fd());
        c.connection_retransmissions += socket::retransmissions(info.as_ref()).max(0) as u64;
        if !answered {
            break;
        }
        // The server closes after its response; wait for that, as netperf does.
        drain_until_close(&s, stop);
        drop(s);
        c.transactions += 1;
        stop.publish(c.transactions);
        if let (Some(h), Some(t0)) = (hist.as_deref_mut(), started) {
            h.record_ns(t0.elapsed().as_nanos() as u64);
        }
    }
    Ok((c, mss))
}

/// The netserver side: accept, answer one request, close; until stopped.
/// `listener` must have a receive timeout so accept returns to check `stop`.
/// A connection from an address `permit` refuses is closed uncounted.
pub fn server(
    listener: &Socket,
    send_ring: &mut BufferRing,
    recv_ring: &mut BufferRing,
    stop: &StopFlag,
    trans_limit: Option<u64>,
    permit: impl Fn(std::net::IpAddr) -> bool,
) -> Result<(Counters, Option<(i32, i32)>), DataError> {
    let mut c = Counters::default();
    let mut buffers = None;
    while !stop.is_set() {
        if let Some(limit) = trans_limit {
            if c.transactions >= limit {
                break;
            }
        }
        let s = match listener.accept() {
            Ok((s, from)) if from.as_socket().is_some_and(|a| permit(a.ip())) => s,
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EAGAIN) | Some(libc::EINTR) | Some(libc::ECONNABORTED)
                ) =>
            {
                continue
            }
            Err(e) => return Err(DataError::Connect(e)),
        };
        // The accepted socket inherits the listener's timeouts.
        if buffers.is_none() {
            buffers = Some(socket::buffer_sizes(&s));
        }
        // The server side reads the request first, then answers. A client
        // that connects and closes without a request marks the end of a test
        // it stopped early (a signal, or -l 0): no timer or count tells us.
        let received_before = c.bytes_received;
        if !exchange(&s, send_ring, recv_ring, stop, &mut c, true)? {
            if recv_ring.size() > 0 && c.bytes_received == received_before {
                break;
            }
            continue;
        }
        drop(s);
        c.transactions += 1;
        stop.publish(c.transactions);
    }
    Ok((c, buffers))
}
