//! The data loops of the Unix-domain tests, for both ends: bulk send, bulk
//! receive until end of file or an odd-sized datagram, and request/response
//! on a stream or datagram socket. Like the engine's loops they allocate
//! nothing and read the stop flag with a relaxed load; unlike them, an
//! untimed test also gives up after a long silence, so that a peer that
//! stops moving data without closing cannot hold a count test for ever.

use crate::engine::io::{self, Io};
use crate::engine::ring::BufferRing;
use crate::engine::timer::StopFlag;
use crate::engine::{Counters, DataError};
use std::os::fd::RawFd;
use std::time::Duration;

/// How long a blocking call of an untimed test waits before looking again
/// (SO_RCVTIMEO/SO_SNDTIMEO), as our other count tests.
pub const UNTIMED_IO_WAIT: Duration = Duration::from_millis(250);
/// Consecutive empty waits after which an untimed test gives up: 60 s.
const IDLE_WAKEUPS: u32 = 240;

/// The silence an untimed loop tolerates. A timed loop needs none: its
/// timer's signal ends every blocking call.
#[derive(Debug, Clone, Copy)]
pub struct Idle {
    limit: Option<u32>,
    waited: u32,
}

/// The error of a loop whose peer was silent for `waits` empty wake-ups.
fn silence_error(waits: u32) -> std::io::Error {
    let secs = (UNTIMED_IO_WAIT * waits).as_secs_f64();
    std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("no data moved for {secs:.1} seconds"),
    )
}

impl Idle {
    pub fn timed() -> Idle {
        Idle {
            limit: None,
            waited: 0,
        }
    }

    pub fn untimed() -> Idle {
        Idle {
            limit: Some(IDLE_WAKEUPS),
            waited: 0,
        }
    }

    /// netserver's loops, timed or not: give up after `silent` without data
    /// (its --silent-timeout), looking every UNTIMED_IO_WAIT.
    pub fn for_silence(silent: Duration) -> Idle {
        let waits = silent.as_secs_f64() / UNTIMED_IO_WAIT.as_secs_f64();
        Idle {
            limit: Some(waits.ceil().clamp(1.0, f64::from(u32::MAX)) as u32),
            waited: 0,
        }
    }

    /// For the loop's socket timeouts: None when timed.
    pub fn io_wait(&self) -> Option<Duration> {
        self.limit.map(|_| UNTIMED_IO_WAIT)
    }

    #[inline]
    fn progress(&mut self) {
        self.waited = 0;
    }

    /// One more empty wake-up; an error once the silence is too long.
    fn wait(&mut self) -> std::io::Result<()> {
        self.waited += 1;
        match self.limit {
            Some(limit) if self.waited >= limit => Err(silence_error(limit)),
            _ => Ok(()),
        }
    }
}

/// How moving one whole message ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Moved {
    Done,
    /// ENOBUFS/ENOMEM on a send: netperf counts a failed send and goes on.
    Dropped,
    Stopped,
    /// End of file, a zero-length datagram, or the peer reset.
    Closed,
}

/// Send `len` bytes from `buf` (one datagram, or all of them on a stream).
#[inline]
fn send_whole(
    fd: RawFd,
    buf: *const u8,
    len: usize,
    stop: &StopFlag,
    idle: &mut Idle,
    c: &mut Counters,
) -> Result<Moved, DataError> {
    let mut done = 0usize;
    let outcome = loop {
        if done >= len {
            break Moved::Done;
        }
        // SAFETY: done < len keeps the pointer inside the caller's buffer.
        match io::send(fd, unsafe { buf.add(done) }, len - done, None) {
            Io::Moved(n) => {
                done += n;
                idle.progress();
            }
            Io::Zero => break Moved::Closed,
            Io::NoBuffers => break Moved::Dropped,
            Io::Retry if stop.is_set() => break Moved::Stopped,
            Io::Retry => idle.wait().map_err(DataError::Send)?,
            Io::Failed(_) if stop.is_set() => break Moved::Stopped,
            Io::Failed(e) => return Err(DataError::Send(e)),
        }
    };
    // A message cut short by the end of the test still moved its bytes.
    c.bytes_sent += done as u64;
    if outcome == Moved::Done {
        c.send_calls += 1;
    } else if outcome == Moved::Dropped {
        c.failed_sends += 1;
    }
    Ok(outcome)
}

/// Receive one datagram, or exactly `len` bytes of a stream.
#[inline]
fn recv_whole(
    fd: RawFd,
    buf: *mut u8,
    len: usize,
    datagram: bool,
    stop: &StopFlag,
    idle: &mut Idle,
    c: &mut Counters,
) -> Result<Moved, DataError> {
    let mut got = 0usize;
    while got < len {
        // SAFETY: got < len keeps the pointer inside the caller's buffer.
        match io::recv(fd, unsafe { buf.add(got) }, len - got) {
            Io::Moved(n) => {
                got += n;
                c.recv_calls += 1;
                c.bytes_received += n as u64;
                idle.progress();
                if datagram {
                    break;
                }
            }
            Io::Zero => return Ok(Moved::Closed),
            Io::Retry | Io::NoBuffers if stop.is_set() => return Ok(Moved::Stopped),
            Io::Retry | Io::NoBuffers => idle.wait().map_err(DataError::Recv)?,
            Io::Failed(_) if stop.is_set() => return Ok(Moved::Stopped),
            Io::Failed(e) if e.raw_os_error() == Some(libc::ECONNRESET) => {
                return Ok(Moved::Closed)
            }
            Io::Failed(e) => return Err(DataError::Recv(e)),
        }
    }
    Ok(Moved::Done)
}

/// Send ring buffers until `stop`, `byte_limit` bytes, or the peer goes.
/// `send_calls` counts whole messages, `failed_sends` dropped datagrams.
pub fn send_stream(
    fd: RawFd,
    ring: &mut BufferRing,
    stop: &StopFlag,
    byte_limit: Option<u64>,
    mut idle: Idle,
) -> Result<Counters, DataError> {
    let mut c = Counters::default();
    let size = ring.size();
    while !stop.is_set() && byte_limit.is_none_or(|limit| c.bytes_sent < limit) {
        match send_whole(fd, ring.next_ptr(), size, stop, &mut idle, &mut c)? {
            Moved::Done | Moved::Dropped => {}
            Moved::Stopped | Moved::Closed => break,
        }
    }
    Ok(c)
}

/// Receive a stream into ring buffers until end of file (how netserver
/// learns that a STREAM_STREAM test is over) or `stop`.
pub fn recv_stream(
    fd: RawFd,
    ring: &mut BufferRing,
    stop: &StopFlag,
    mut idle: Idle,
) -> Result<Counters, DataError> {
    let mut c = Counters::default();
    let size = ring.size();
    while !stop.is_set() {
        match recv_whole(fd, ring.next_ptr(), size, true, stop, &mut idle, &mut c)? {
            Moved::Done | Moved::Dropped => {}
            Moved::Stopped | Moved::Closed => break,
        }
    }
    Ok(c)
}

/// What a DG_STREAM receiver counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Datagrams {
    /// Datagrams of exactly the message size.
    pub messages: u64,
    /// Length of the datagram of another size that ended the test, if any
    /// (0 for netperf-ng's zero-length end marker).
    pub last_len: usize,
}

/// Receive datagrams of `ring.size()` bytes until one of another size
/// arrives (netserver's end of test) or `stop`.
pub fn recv_datagrams(
    fd: RawFd,
    ring: &mut BufferRing,
    stop: &StopFlag,
    mut idle: Idle,
) -> Result<Datagrams, DataError> {
    let mut d = Datagrams::default();
    let size = ring.size();
    while !stop.is_set() {
        match io::recv(fd, ring.next_ptr(), size) {
            Io::Moved(n) if n == size => {
                d.messages += 1;
                idle.progress();
            }
            Io::Moved(n) => {
                d.last_len = n;
                break;
            }
            Io::Zero => break,
            Io::Retry | Io::NoBuffers if stop.is_set() => break,
            Io::Retry | Io::NoBuffers => idle.wait().map_err(DataError::Recv)?,
            Io::Failed(_) if stop.is_set() => break,
            Io::Failed(e) => return Err(DataError::Recv(e)),
        }
    }
    Ok(d)
}

/// netperf's side of a request/response test on a connected socket: one
/// request, one response, one transaction, until `stop` or the count.
pub fn rr_client(
    fd: RawFd,
    send_ring: &mut BufferRing,
    recv_ring: &mut BufferRing,
    datagram: bool,
    stop: &StopFlag,
    trans_limit: Option<u64>,
    mut idle: Idle,
) -> Result<Counters, DataError> {
    let mut c = Counters::default();
    let (req, rsp) = (send_ring.size(), recv_ring.size());
    while !stop.is_set() && trans_limit.is_none_or(|limit| c.transactions < limit) {
        match send_whole(fd, send_ring.next_ptr(), req, stop, &mut idle, &mut c)? {
            Moved::Done => {}
            // No request went out, so no response will come: send again.
            Moved::Dropped => continue,
            Moved::Stopped | Moved::Closed => break,
        }
        let got = recv_whole(
            fd,
            recv_ring.next_ptr(),
            rsp,
            datagram,
            stop,
            &mut idle,
            &mut c,
        )?;
        if got != Moved::Done {
            break;
        }
        c.transactions += 1;
    }
    Ok(c)
}

/// netserver's side of STREAM_RR on the accepted socket: answer each whole
/// request until end of file, `stop` or the count.
pub fn rr_server_stream(
    fd: RawFd,
    recv_ring: &mut BufferRing,
    send_ring: &mut BufferRing,
    stop: &StopFlag,
    trans_limit: Option<u64>,
    mut idle: Idle,
) -> Result<Counters, DataError> {
    let mut c = Counters::default();
    let (req, rsp) = (recv_ring.size(), send_ring.size());
    while !stop.is_set() && trans_limit.is_none_or(|limit| c.transactions < limit) {
        let got = recv_whole(
            fd,
            recv_ring.next_ptr(),
            req,
            false,
            stop,
            &mut idle,
            &mut c,
        )?;
        if got != Moved::Done {
            break;
        }
        match send_whole(fd, send_ring.next_ptr(), rsp, stop, &mut idle, &mut c)? {
            Moved::Done | Moved::Dropped => c.transactions += 1,
            Moved::Stopped | Moved::Closed => break,
        }
    }
    Ok(c)
}

/// netserver's side of DG_RR: answer each request datagram to its sender's
/// path, until a zero-length datagram (netperf-ng's end marker), `stop` or
/// the count.
pub fn rr_server_datagram(
    fd: RawFd,
    recv_ring: &mut BufferRing,
    send_ring: &mut BufferRing,
    stop: &StopFlag,
    trans_limit: Option<u64>,
    mut idle: Idle,
) -> Result<Counters, DataError> {
    let mut c = Counters::default();
    let (req, rsp) = (recv_ring.size(), send_ring.size());
    // SAFETY: sockaddr_storage is plain data; all zeroes is a valid value.
    let mut from: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut from_len: libc::socklen_t = 0;
    'transactions: while !stop.is_set() && trans_limit.is_none_or(|limit| c.transactions < limit) {
        match io::recv_from(fd, recv_ring.next_ptr(), req, &mut from, &mut from_len) {
            Io::Moved(n) => {
                c.recv_calls += 1;
                c.bytes_received += n as u64;
                idle.progress();
            }
            Io::Zero => break,
            Io::Retry | Io::NoBuffers if stop.is_set() => break,
            Io::Retry | Io::NoBuffers => {
                idle.wait().map_err(DataError::Recv)?;
                continue;
            }
            Io::Failed(_) if stop.is_set() => break,
            Io::Failed(e) => return Err(DataError::Recv(e)),
        }
        let buf = send_ring.next_ptr();
        loop {
            match io::send_to_raw(fd, buf, rsp, &from, from_len) {
                Io::Moved(n) => {
                    c.send_calls += 1;
                    c.bytes_sent += n as u64;
                    idle.progress();
                    break;
                }
                Io::NoBuffers => {
                    c.failed_sends += 1;
                    break;
                }
                Io::Zero => break,
                Io::Retry if stop.is_set() => break 'transactions,
                Io::Retry => idle.wait().map_err(DataError::Send)?,
                Io::Failed(_) if stop.is_set() => break 'transactions,
                Io::Failed(e) => return Err(DataError::Send(e)),
            }
        }
        c.transactions += 1;
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::{UnixDatagram, UnixStream};

    #[test]
    fn stream_send_and_receive_until_end_of_file() {
        let (a, b) = UnixStream::pair().unwrap();
        let reader = std::thread::spawn(move || {
            let mut ring = BufferRing::new(2, 1000, 8, 0);
            recv_stream(b.as_raw_fd(), &mut ring, &StopFlag::new(), Idle::untimed()).unwrap()
        });
        let mut ring = BufferRing::new(2, 512, 8, 0);
        let sent = send_stream(
            a.as_raw_fd(),
            &mut ring,
            &StopFlag::new(),
            Some(4000),
            Idle::untimed(),
        )
        .unwrap();
        drop(a);
        let got = reader.join().unwrap();
        assert_eq!((sent.bytes_sent, sent.send_calls), (4096, 8));
        assert_eq!(got.bytes_received, 4096);
    }

    #[test]
    fn datagrams_end_at_an_odd_size() {
        let (a, b) = UnixDatagram::pair().unwrap();
        for _ in 0..3 {
            a.send(&[7u8; 64]).unwrap();
        }
        a.send(&[]).unwrap();
        let mut ring = BufferRing::new(1, 64, 8, 0);
        let d = recv_datagrams(b.as_raw_fd(), &mut ring, &StopFlag::new(), Idle::untimed());
        assert_eq!(
            d.unwrap(),
            Datagrams {
                messages: 3,
                last_len: 0
            }
        );
    }

    #[test]
    fn request_response_over_streams_and_datagrams() {
        for datagram in [false, true] {
            let stop = StopFlag::new();
            let (client_fd, server_thread) = if datagram {
                let (a, b) = UnixDatagram::pair().unwrap();
                let server = std::thread::spawn(move || {
                    let mut rx = BufferRing::new(1, 10, 8, 0);
                    let mut tx = BufferRing::new(1, 20, 8, 0);
                    let fd = b.as_raw_fd();
                    let r = rr_server_datagram(
                        fd,
                        &mut rx,
                        &mut tx,
                        &StopFlag::new(),
                        None,
                        Idle::untimed(),
                    );
                    drop(b);
                    r
                });
                (std::os::fd::OwnedFd::from(a), server)
            } else {
                let (a, b) = UnixStream::pair().unwrap();
                let server = std::thread::spawn(move || {
                    let mut rx = BufferRing::new(1, 10, 8, 0);
                    let mut tx = BufferRing::new(1, 20, 8, 0);
                    let fd = b.as_raw_fd();
                    let r = rr_server_stream(
                        fd,
                        &mut rx,
                        &mut tx,
                        &StopFlag::new(),
                        None,
                        Idle::untimed(),
                    );
                    drop(b);
                    r
                });
                (std::os::fd::OwnedFd::from(a), server)
            };
            let mut tx = BufferRing::new(1, 10, 8, 0);
            let mut rx = BufferRing::new(1, 20, 8, 0);
            let fd = client_fd.as_raw_fd();
            let c = rr_client(
                fd,
                &mut tx,
                &mut rx,
                datagram,
                &stop,
                Some(50),
                Idle::untimed(),
            )
            .unwrap();
            assert_eq!(c.transactions, 50);
            // The end of the test: a zero-length datagram, or end of file.
            if datagram {
                // SAFETY: fd is a live socket; a zero-length send reads nothing.
                unsafe { libc::send(fd, std::ptr::null(), 0, 0) };
            } else {
                // SAFETY: fd is a live socket.
                unsafe { libc::shutdown(fd, libc::SHUT_WR) };
            }
            let served = server_thread.join().unwrap().unwrap();
            assert_eq!(served.transactions, 50, "datagram {datagram}");
            assert_eq!(served.bytes_sent, 50 * 20);
        }
    }

    #[test]
    fn untimed_loops_give_up_on_silence() {
        let (_a, b) = UnixStream::pair().unwrap();
        let mut idle = Idle::untimed();
        idle.waited = IDLE_WAKEUPS - 1;
        let sock = socket2::SockRef::from(&b);
        sock.set_read_timeout(Some(Duration::from_millis(5)))
            .unwrap();
        let mut ring = BufferRing::new(1, 8, 8, 0);
        let err = recv_stream(b.as_raw_fd(), &mut ring, &StopFlag::new(), idle).unwrap_err();
        assert!(err.to_string().contains("60.0 seconds"), "{err}");
        assert_eq!(Idle::timed().io_wait(), None);
    }
}
