//! The client end of a `session` script: the control connection, the data
//! connections and datagrams it opens, each wait bounded so that a script
//! cannot stall the fuzzer whatever the server does.

use super::script::Step;
use super::templates;
use crate::wire::message::MESSAGE_WORDS;
use crate::wire::unix;
use crate::wire::{kind, Message, MESSAGE_LEN};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpStream, UdpSocket};
use std::os::fd::OwnedFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Longest wait for one message in an `await` step, and for all of them (a
/// test's results come within about a second).
const AWAIT_LIMIT: Duration = Duration::from_millis(1200);
const AWAIT_BUDGET: Duration = Duration::from_secs(3);
/// Longest wait for the server to close after the client has (it first
/// finishes what the client sent, each test cut short by the close).
const DRAIN_LIMIT: Duration = Duration::from_secs(5);
/// Most time the pause steps of one input may take.
const PAUSE_BUDGET: Duration = Duration::from_millis(600);
/// Largest write of a `data` step: 127 × 256 bytes.
const DATA_UNIT: usize = 256;
/// Longest wait for a data connection or write.
const DATA_WAIT: Duration = Duration::from_millis(200);

/// Where the last response told the client to send its data.
enum DataTarget {
    Port(u16),
    /// A Unix-domain socket file, stream or datagram.
    Unix {
        path: PathBuf,
        stream: bool,
    },
}

/// The client end of one script.
pub(super) struct Client {
    control: TcpStream,
    /// Where the netserver's UDP sends go (see `templates::confine`).
    sink_port: u16,
    /// The data address of the last response that named one.
    target: Option<DataTarget>,
    /// Data connections, held open until the end.
    data: Vec<OwnedFd>,
    paused: Duration,
    awaited: Duration,
}

impl Client {
    pub(super) fn new(control: TcpStream, sink_port: u16) -> Self {
        let _ = control.set_write_timeout(Some(AWAIT_LIMIT));
        Client {
            control,
            sink_port,
            target: None,
            data: Vec::new(),
            paused: Duration::ZERO,
            awaited: Duration::ZERO,
        }
    }

    /// Do one step; false once the connection is gone.
    pub(super) fn step(&mut self, step: &Step) -> bool {
        match step {
            Step::Message(bytes) => self.send(Message::from_bytes(**bytes)),
            Step::Template { index, edits } => {
                let all = templates::templates();
                let mut m = all[usize::from(*index) % all.len()].clone();
                for (at, value) in edits {
                    m.set_word(usize::from(*at) % MESSAGE_WORDS, *value);
                }
                self.send(m)
            }
            Step::Await => self.await_message(),
            Step::Data { udp, units } => {
                self.data_step(*udp, usize::from(*units) * DATA_UNIT);
                true
            }
            Step::Partial(bytes) => self.control.write_all(bytes).is_ok(),
            Step::Pause(p) => {
                let wait = Duration::from_millis(u64::from(p % 8) * 40);
                let wait = wait.min(PAUSE_BUDGET.saturating_sub(self.paused));
                self.paused += wait;
                std::thread::sleep(wait);
                true
            }
        }
    }

    fn send(&mut self, mut m: Message) -> bool {
        templates::confine(&mut m, self.sink_port);
        self.control.write_all(&m.bytes).is_ok()
    }

    /// Read one message; false if the server closed.
    fn await_message(&mut self) -> bool {
        let mut buf = [0u8; MESSAGE_LEN];
        let limit = AWAIT_LIMIT.min(AWAIT_BUDGET.saturating_sub(self.awaited));
        let started = Instant::now();
        let got = read_within(&mut self.control, &mut buf, limit);
        self.awaited += started.elapsed();
        match got {
            Got::Whole => {
                let m = Message::from_bytes(buf);
                if m.serv_errno() == 0 {
                    if let Some(target) = data_target(&m) {
                        self.target = Some(target);
                    }
                }
                true
            }
            Got::Short => true,
            Got::Closed => false,
        }
    }

    fn data_step(&mut self, udp: bool, len: usize) {
        let payload = vec![0x5a; len.max(1)];
        match &self.target {
            None | Some(DataTarget::Port(0)) => {}
            Some(DataTarget::Port(port)) => {
                let to = SocketAddr::from((Ipv4Addr::LOCALHOST, *port));
                if udp {
                    if let Ok(s) = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)) {
                        for chunk in payload.chunks(1024) {
                            let _ = s.send_to(chunk, to);
                        }
                    }
                } else if let Ok(mut s) = TcpStream::connect_timeout(&to, DATA_WAIT) {
                    let _ = s.set_write_timeout(Some(DATA_WAIT));
                    let _ = s.write_all(&payload);
                    self.data.push(s.into());
                }
            }
            Some(DataTarget::Unix { path, stream: true }) => {
                if let Ok(mut s) = UnixStream::connect(path) {
                    let _ = s.set_write_timeout(Some(DATA_WAIT));
                    let _ = s.write_all(&payload);
                    self.data.push(s.into());
                }
            }
            Some(DataTarget::Unix {
                path,
                stream: false,
            }) => {
                if let Some(s) = datagram_socket() {
                    let _ = s.set_write_timeout(Some(DATA_WAIT));
                    for chunk in payload.chunks(1024) {
                        let _ = s.send_to(chunk, path);
                    }
                    self.data.push(s.into());
                }
            }
        }
    }

    /// Close our sending side, read until the server closes (bounded), then
    /// drop every connection.
    pub(super) fn finish(self) {
        let _ = self.control.shutdown(Shutdown::Write);
        let deadline = Instant::now() + DRAIN_LIMIT;
        let mut control = self.control;
        let mut buf = [0u8; MESSAGE_LEN];
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            if matches!(read_within(&mut control, &mut buf, left), Got::Closed) {
                break;
            }
        }
    }
}

/// The data address a response names: its type word as sent (results reuse
/// the response type, byte-swapped, and name none).
fn data_target(m: &Message) -> Option<DataTarget> {
    let unix = |path: unix::UnixPath, stream: bool| {
        use std::os::unix::ffi::OsStrExt;
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(&path.bytes));
        Some(DataTarget::Unix { path, stream })
    };
    let port = |index: usize| u16::try_from(m.data_u32(index)).ok().map(DataTarget::Port);
    match m.word(0) {
        kind::OMNI_RESPONSE => port(11),
        kind::TCP_STREAM_RESPONSE => port(6),
        kind::TCP_CC_RESPONSE => port(5),
        word => {
            let test = unix::UnixTest::from_response_kind(word)?;
            let path = unix::decode(test, unix::Role::Response, m).path;
            unix(path, !test.is_datagram())
        }
    }
}

/// A datagram socket with an address the server can answer to: an
/// abstract one, so no file is left behind.
fn datagram_socket() -> Option<UnixDatagram> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "netperf-ng-fuzz-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name).ok()?;
    UnixDatagram::bind_addr(&addr).ok()
}

/// How a bounded read of one message ended.
enum Got {
    Whole,
    /// The wait ran out first (what was read is dropped).
    Short,
    Closed,
}

fn read_within(s: &mut TcpStream, buf: &mut [u8; MESSAGE_LEN], limit: Duration) -> Got {
    let deadline = Instant::now() + limit;
    let mut got = 0;
    while got < MESSAGE_LEN {
        let Some(left) = deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
        else {
            return Got::Short;
        };
        let _ = s.set_read_timeout(Some(left));
        match s.read(&mut buf[got..]) {
            Ok(0) => return Got::Closed,
            Ok(n) => got += n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(_) => return Got::Closed,
        }
    }
    Got::Whole
}
