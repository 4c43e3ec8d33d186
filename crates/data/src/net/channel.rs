//! One control connection, either end: whole-message send and receive with a
//! deadline, so a silent or vanished peer can never hang us.

use netperf_wire::{Message, MESSAGE_LEN};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How long netperf waits for a response before giving up (netperf: 120 s).
pub const RESPONSE_WAIT: Duration = Duration::from_secs(120);

#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    #[error("the control connection was closed by the other end")]
    Closed,
    #[error("no message arrived on the control connection within {0:?}")]
    TimedOut(Duration),
    #[error("partial message on the control connection: {0} of 656 bytes")]
    Partial(usize),
    #[error("control connection error: {0}")]
    Io(#[from] io::Error),
}

pub struct Channel {
    stream: TcpStream,
    /// netperf's -d: 1 names every message on stderr, 2 dumps it too.
    debug: i32,
}

/// For a watcher that looks for the peer closing the connection mid-test.
impl std::os::fd::AsRawFd for Channel {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.stream.as_raw_fd()
    }
}

impl Channel {
    pub fn new(stream: TcpStream) -> Self {
        let _ = stream.set_nodelay(true);
        Channel { stream, debug: 0 }
    }

    pub fn set_debug(&mut self, level: i32) {
        self.debug = level;
    }

    fn trace(&self, what: &str, m: &Message) {
        if self.debug < 1 {
            return;
        }
        eprintln!(
            "netperf: debug: {what} control message type {} ({} bytes)",
            m.kind(),
            m.bytes.len()
        );
        if self.debug >= 2 {
            for (row, chunk) in m.bytes.chunks(32).enumerate() {
                let hex: String = chunk.iter().map(|b| format!("{b:02x}")).collect();
                eprintln!("netperf: debug:   {:04x} {hex}", row * 32);
            }
        }
    }

    pub fn peer(&self) -> Option<SocketAddr> {
        self.stream.peer_addr().ok()
    }

    pub fn local(&self) -> Option<SocketAddr> {
        self.stream.local_addr().ok()
    }

    pub fn send(&mut self, m: &Message) -> Result<(), ChannelError> {
        self.stream.set_write_timeout(Some(RESPONSE_WAIT))?;
        self.trace("sent", m);
        self.stream.write_all(&m.bytes)?;
        Ok(())
    }

    /// Receive one whole message, waiting at most `limit` for all of it.
    /// A peer that dribbles bytes cannot extend the wait.
    pub fn recv(&mut self, limit: Duration) -> Result<Message, ChannelError> {
        self.recv_within(limit, limit)
    }

    /// Receive one whole message: its first byte within `idle`, the rest
    /// within `rest` of the first (netserver: a client that starts a request
    /// and dribbles or stalls is not waited for as long as an idle one).
    pub fn recv_within(&mut self, idle: Duration, rest: Duration) -> Result<Message, ChannelError> {
        let mut deadline = Instant::now() + idle;
        let mut buf = [0u8; MESSAGE_LEN];
        let mut got = 0;
        while got < MESSAGE_LEN {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(if got == 0 {
                    ChannelError::TimedOut(idle)
                } else {
                    ChannelError::Partial(got)
                });
            }
            self.stream
                .set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
            match self.stream.read(&mut buf[got..]) {
                Ok(0) => {
                    return Err(if got == 0 {
                        ChannelError::Closed
                    } else {
                        ChannelError::Partial(got)
                    });
                }
                Ok(n) => {
                    if got == 0 {
                        deadline = deadline.min(Instant::now() + rest);
                    }
                    got += n;
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(ChannelError::Io(e)),
            }
        }
        let m = Message::from_bytes(buf);
        self.trace("received", &m);
        Ok(m)
    }

    /// A second handle on the connection, with which another thread can
    /// shut it down (and so end a wait for a message on it).
    pub fn shutdown_handle(&self) -> io::Result<TcpStream> {
        self.stream.try_clone()
    }

    /// Say that no more messages follow, and still receive (netperf after a
    /// stop signal: the netserver's results are yet to come).
    pub fn shutdown_write(&self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Write);
    }

    pub fn shutdown(&self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}
