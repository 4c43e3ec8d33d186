//! Connection tests: TCP_CRR (connect, request, response, close) and TCP_CC
//! (connect, close), client and server halves. Each transaction is a new
//! connection.

use super::io::{self, Io};
use super::ring::BufferRing;
use super::timer::StopFlag;
use super::{Counters, DataError, Histogram};
use crate::net::socket::{self, SocketOptions};
use socket2::Socket;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// How long one connect may take before the test gives up.
const CONNECT_LIMIT: Duration = Duration::from_secs(10);

/// Exchange one request/response on `s`; false when the peer went away.
fn exchange(
    s: &Socket,
    send_ring: &mut BufferRing,
    recv_ring: &mut BufferRing,
    stop: &StopFlag,
    c: &mut Counters,
) -> Result<bool, DataError> {
    let fd = s.as_raw_fd();
    let (req, rsp) = (send_ring.size(), recv_ring.size());
    if req > 0 {
        let buf = send_ring.next_ptr();
        let mut done = 0;
        while done < req {
            // SAFETY: inside the ring buffer.
            match io::send(fd, unsafe { buf.add(done) }, req - done, None) {
                Io::Moved(n) => done += n,
                Io::Retry if !stop.is_set() => {}
                Io::Failed(e) if !stop.is_set() => return Err(DataError::Send(e)),
                _ => return Ok(false),
            }
        }
        c.send_calls += 1;
        c.bytes_sent += req as u64;
    }
    if rsp > 0 {
        let buf = recv_ring.next_ptr();
        let mut got = 0;
        while got < rsp {
            // SAFETY: inside the ring buffer.
            match io::recv(fd, unsafe { buf.add(got) }, rsp - got) {
                Io::Moved(n) => {
                    got += n;
                    c.recv_calls += 1;
                    c.bytes_received += n as u64;
                }
                Io::Retry if !stop.is_set() => {}
                Io::Failed(e) if !stop.is_set() => return Err(DataError::Recv(e)),
                _ => return Ok(false),
            }
        }
    }
    Ok(true)
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
    mut hist: Option<&mut Histogram>,
) -> Result<(Counters, i32), DataError> {
    let mut c = Counters::default();
    let mut mss = -1;
    while !stop.is_set() {
        if let Some(limit) = trans_limit {
            if c.transactions >= limit {
                break;
            }
        }
        let started = hist.as_ref().map(|_| Instant::now());
        let s = socket::create(remote, opts).map_err(DataError::Connect)?;
        if let Some(l) = local {
            socket::bind(&s, &l).map_err(DataError::Connect)?;
        }
        if let Err(e) = socket::connect_timeout(&s, remote, CONNECT_LIMIT) {
            if stop.is_set() {
                break;
            }
            // Out of local ports or a transient refusal: try again, as netperf does.
            if matches!(
                e.raw_os_error(),
                Some(libc::EADDRNOTAVAIL) | Some(libc::EADDRINUSE)
            ) {
                continue;
            }
            return Err(DataError::Connect(e));
        }
        let _ = socket::set_timeouts(&s, Some(Duration::from_millis(500)));
        if mss < 0 {
            mss = socket::mss(&s);
        }
        if !exchange(&s, send_ring, recv_ring, stop, &mut c)? {
            break;
        }
        let _ = s.shutdown(std::net::Shutdown::Write);
        drain_until_close(&s, stop);
        drop(s);
        c.transactions += 1;
        if let (Some(h), Some(t0)) = (hist.as_deref_mut(), started) {
            h.record_ns(t0.elapsed().as_nanos() as u64);
        }
    }
    Ok((c, mss))
}

/// The netserver side: accept, answer one request, close; until stopped.
/// `listener` must have a receive timeout so accept returns to check `stop`.
pub fn server(
    listener: &Socket,
    send_ring: &mut BufferRing,
    recv_ring: &mut BufferRing,
    stop: &StopFlag,
    trans_limit: Option<u64>,
) -> Result<(Counters, Option<(i32, i32)>), DataError> {
    let mut c = Counters::default();
    let mut buffers = None;
    while !stop.is_set() {
        if let Some(limit) = trans_limit {
            if c.transactions >= limit {
                break;
            }
        }
        let (s, _) = match listener.accept() {
            Ok(pair) => pair,
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
        let _ = socket::set_timeouts(&s, Some(Duration::from_millis(500)));
        if buffers.is_none() {
            buffers = Some(socket::buffer_sizes(&s));
        }
        // The server side reads the request first, then answers.
        if !exchange_server(&s, recv_ring, send_ring, stop, &mut c)? {
            continue;
        }
        drop(s);
        c.transactions += 1;
    }
    Ok((c, buffers))
}

fn exchange_server(
    s: &Socket,
    recv_ring: &mut BufferRing,
    send_ring: &mut BufferRing,
    stop: &StopFlag,
    c: &mut Counters,
) -> Result<bool, DataError> {
    let fd = s.as_raw_fd();
    let (req, rsp) = (recv_ring.size(), send_ring.size());
    if req > 0 {
        let buf = recv_ring.next_ptr();
        let mut got = 0;
        while got < req {
            // SAFETY: inside the ring buffer.
            match io::recv(fd, unsafe { buf.add(got) }, req - got) {
                Io::Moved(n) => {
                    got += n;
                    c.recv_calls += 1;
                    c.bytes_received += n as u64;
                }
                Io::Retry if !stop.is_set() => {}
                _ => return Ok(false),
            }
        }
    }
    if rsp > 0 {
        let buf = send_ring.next_ptr();
        let mut done = 0;
        while done < rsp {
            // SAFETY: inside the ring buffer.
            match io::send(fd, unsafe { buf.add(done) }, rsp - done, None) {
                Io::Moved(n) => done += n,
                Io::Retry if !stop.is_set() => {}
                _ => return Ok(false),
            }
        }
        c.send_calls += 1;
        c.bytes_sent += rsp as u64;
    }
    Ok(true)
}
