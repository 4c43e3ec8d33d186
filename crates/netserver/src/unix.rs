//! netserver's half of the Unix-domain tests: check every field of the
//! request, create the socket file, answer with its path and sizes, run the
//! engine's receiving or answering loop on it, send the results, and remove
//! the socket file however the test ends.
//!
//! Where stock netserver 2.7.1 differs from what its own comments promise we
//! follow the comments: a socket buffer request of 0 means the system
//! default (stock would shrink the buffer to the minimum, and every stock
//! netperf asks for 0 unless `-S` is given), and DG_STREAM's receive buffer
//! request is honoured (stock ignores it).

use super::limits::{defaults, Limits};
use super::omni_checks::Refusal;
use super::phase::{Caller, Phase, Served};
use netperf_data::engine::ring::BufferRing;
use netperf_data::engine::watchdog::UNTIMED_IO_WAIT;
use netperf_data::engine::{self, Counters, DataError};
use netperf_data::measure::cpu;
use netperf_data::net::channel::{Channel, ChannelError};
use netperf_data::net::socket;
use netperf_data::net::unix_path::{self as path, SocketFile};
use netperf_wire::unix::{self as layouts, Fields, Role, UnixPath, UnixTest};
use netperf_wire::{self as wire, Message, PAD_TIME};
use socket2::{Domain, Socket, Type};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

fn refuse(errno: i32, reason: impl Into<String>) -> Refusal {
    Refusal {
        errno,
        reason: reason.into(),
    }
}

/// A request of any of the four tests: the fields its layout carries.
#[derive(Debug, Clone, PartialEq)]
struct Plan {
    test: UnixTest,
    f: Fields,
}

impl Plan {
    fn decode(test: UnixTest, m: &Message) -> Plan {
        Plan {
            test,
            f: layouts::decode(test, Role::Request, m),
        }
    }

    /// STREAM_STREAM's receive size (0: default) or DG_STREAM's datagram
    /// size; the request size of the request/response tests.
    fn recv_size(&self) -> i32 {
        match self.test {
            UnixTest::StreamStream => self.f.receive_size,
            UnixTest::DgStream => self.f.message_size,
            UnixTest::StreamRr | UnixTest::DgRr => self.f.request_size,
        }
    }

    /// Check every field before anything is opened; the directory to use.
    /// The copy-avoidance flags and dirty counts are not read: stock
    /// netserver ignores them too, and stock netperf leaves some unset.
    fn validate(&self, limits: &Limits) -> Result<PathBuf, Refusal> {
        let f = &self.f;
        let out_of_range =
            |name: &str, v: i32| refuse(libc::EINVAL, format!("{name} {v} out of range"));
        for (name, v) in [
            ("send buffer", f.send_buf_size),
            ("receive buffer", f.recv_buf_size),
        ] {
            if v > limits.max_socket_buffer {
                return Err(out_of_range(name, v));
            }
        }
        let message = |v: i32, min: i32| (min..=limits.max_message).contains(&v);
        let sizes: &[(&str, i32, i32)] = match self.test {
            UnixTest::StreamStream => &[("receive size", f.receive_size, 0)],
            UnixTest::DgStream => &[("message size", f.message_size, 1)],
            UnixTest::StreamRr | UnixTest::DgRr => &[
                ("request size", f.request_size, 1),
                ("response size", f.response_size, 1),
            ],
        };
        if let Some((name, v, _)) = sizes.iter().find(|(_, v, min)| !message(*v, *min)) {
            return Err(out_of_range(name, *v));
        }
        let align = 0..=defaults::MAX_ALIGNMENT as i32;
        let offset = 0..=defaults::MAX_OFFSET as i32;
        if !align.contains(&f.recv_alignment)
            || !align.contains(&f.send_alignment)
            || !offset.contains(&f.recv_offset)
            || !offset.contains(&f.send_offset)
        {
            return Err(refuse(libc::EINVAL, "alignment or offset out of range"));
        }
        // STREAM_STREAM's length may be a byte count; it ends at end of file.
        if self.test != UnixTest::StreamStream && f.test_length > limits.max_test_seconds {
            return Err(out_of_range("test length", f.test_length));
        }
        if self.test.is_request_response() && f.test_length == 0 {
            return Err(refuse(libc::EINVAL, "test length 0: no time and no count"));
        }
        self.directory()
    }

    /// The directory for the socket file: the one the request names, or
    /// the default when it names none (every stock netperf).
    fn directory(&self) -> Result<PathBuf, Refusal> {
        let p = &self.f.path;
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
        self.test != UnixTest::StreamStream && self.f.test_length > 0
    }

    fn transaction_limit(&self) -> Option<u64> {
        (self.test.is_request_response() && self.f.test_length < 0)
            .then(|| u64::from(self.f.test_length.unsigned_abs()))
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
fn ring_width(desired: u32, size: i32, f: &Fields, limits: &Limits) -> Result<u32, Refusal> {
    let slack = i64::from(f.recv_alignment.max(f.send_alignment))
        + i64::from(f.recv_offset.max(f.send_offset));
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
    if plan.f.send_buf_size >= 0 {
        s.set_send_buffer_size(plan.f.send_buf_size as usize)
            .map_err(|e| failed("SO_SNDBUF", e))?;
    }
    if plan.f.recv_buf_size >= 0 {
        s.set_recv_buffer_size(plan.f.recv_buf_size as usize)
            .map_err(|e| failed("SO_RCVBUF", e))?;
    }
    let file =
        path::bind_fresh(&s, dir).map_err(|e| failed(&format!("bind in {}", dir.display()), e))?;
    if !plan.test.is_datagram() {
        s.listen(5).map_err(|e| failed("listen", e))?;
    }
    let (lss, lsr) = socket::buffer_sizes(&s);
    let (recv_size, desired_width) = match (plan.test, plan.recv_size()) {
        (UnixTest::StreamStream, asked) => {
            let size = match asked {
                n if n > 0 => n,
                _ if lsr > 0 => lsr.min(limits.max_message),
                _ => 4096,
            };
            (size, (lsr.max(0) / size + 1).max(2) as u32)
        }
        (_, size) => (size, 1),
    };
    let recv_width = ring_width(desired_width, recv_size, &plan.f, limits)?;
    ring_width(1, plan.f.response_size, &plan.f, limits)?;
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
    let fields = Fields {
        recv_buf_size: s.lsr,
        send_buf_size: s.lss,
        receive_size: s.recv_size,
        measure_cpu: plan.f.measure_cpu,
        // Only DG_STREAM's netserver echoes the length (stock does the same).
        test_length: if plan.test == UnixTest::DgStream {
            plan.f.test_length
        } else {
            0
        },
        cpu_rate,
        path: UnixPath::new(s.file.as_bytes()),
        ..Default::default()
    };
    layouts::encode(plan.test, Role::Response, &fields)
}

/// What the data phase measured, for the results message.
type Done = Served<Counters>;

/// The results message; `serv_errno` set reports a failed data phase.
fn results(plan: &Plan, d: &Done, serv_errno: i32) -> Message {
    let c = &d.value;
    // These fields are C ints: they wrap as netserver's do.
    let transactions = c.transactions as i32;
    let bytes_received = if plan.test.is_request_response() {
        transactions.wrapping_mul(plan.f.request_size.wrapping_add(plan.f.response_size))
    } else {
        c.bytes_received as i32
    };
    let usage = d.usage.as_ref();
    let fields = Fields {
        serv_errno,
        bytes_received,
        recv_calls: c.recv_calls as i32,
        trans_received: transactions,
        // Every datagram but the zero-length end marker is one message.
        messages_recvd: c.recv_calls as i32,
        elapsed_time: d.elapsed as f32,
        cpu_util: usage.map_or(-1.0, |u| u.util as f32),
        serv_dem: -1.0,
        num_cpus: usage.map_or_else(cpu::num_cpus, |u| u.num_cpus) as i32,
        ..Default::default()
    };
    layouts::encode(plan.test, Role::Results, &fields)
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

/// Run the data phase: netperf's connection (a stream) or the socket
/// itself (datagrams), the engine's loop for the test, the end of file
/// STREAM_STREAM's netperf waits for.
fn run_data(plan: &Plan, s: &Setup, phase: &Phase) -> Result<Done, DataError> {
    let limits = &phase.caller.opts.limits;
    // Blocking calls wake up this often to see the watcher's stop.
    socket::set_timeouts(&s.socket, Some(UNTIMED_IO_WAIT)).map_err(DataError::Connect)?;
    let accepted = match plan.test.is_datagram() {
        true => None,
        false => Some(
            phase
                .accept(&s.socket)
                .map_err(DataError::Connect)?
                .ok_or_else(|| {
                    let why = match phase.stop.is_set() {
                        true => "the test was stopped before its data connection".to_string(),
                        false => format!(
                            "no data connection within {:.1} s (--accept-timeout)",
                            limits.accept_timeout.as_secs_f64()
                        ),
                    };
                    DataError::Connect(std::io::Error::new(std::io::ErrorKind::TimedOut, why))
                })?,
        ),
    };
    let data = accepted.as_ref().unwrap_or(&s.socket);
    socket::set_timeouts(data, Some(UNTIMED_IO_WAIT)).map_err(DataError::Connect)?;
    let fd = data.as_raw_fd();
    let f = &plan.f;
    let mut rx = BufferRing::new(
        s.recv_width,
        s.recv_size.max(0) as usize,
        f.recv_alignment as u32,
        f.recv_offset as u32,
    );
    let mut tx = BufferRing::new(
        1,
        f.response_size.max(0) as usize,
        f.send_alignment as u32,
        f.send_offset as u32,
    );
    // STREAM_STREAM's length is no time: it ends at end of file, or at
    // the longest length, as a count does.
    let asked = if plan.timed() { f.test_length } else { 0 };
    let limit = Some(limits.test_clock(asked, PAD_TIME));
    let (stop, count) = (&phase.stop, plan.transaction_limit());
    let served = phase.measured(fd, limit, PAD_TIME, || match plan.test {
        UnixTest::StreamStream | UnixTest::DgStream => {
            engine::stream::recv(fd, &mut rx, stop, None, None, None)
        }
        UnixTest::StreamRr => engine::rr::server_stream(fd, &mut rx, &mut tx, stop, count),
        // Answers go to the sender's own socket file; the zero-length
        // datagram of our netperf ends the test.
        UnixTest::DgRr => {
            let (rx, tx) = (&mut rx, &mut tx);
            engine::rr::server_datagram(fd, rx, tx, stop, count, false, None, None, |_| true)
        }
    });
    if plan.test == UnixTest::StreamStream {
        // Tells netperf all its data was taken, as netserver's shutdown does.
        let _ = data.shutdown(std::net::Shutdown::Write);
    }
    Ok(Done {
        value: served.value?,
        elapsed: served.elapsed,
        usage: served.usage,
    })
}

/// Serve one request of a Unix-domain test. Errors returned are
/// control-connection failures; a refused or failed test is answered and
/// logged here.
pub fn serve(chan: &mut Channel, m: &Message, caller: Caller) -> Result<(), ChannelError> {
    let Some(test) = UnixTest::from_request_kind(m.kind()) else {
        return chan.send(&wire::encode_error_response(0, libc::EINVAL));
    };
    let plan = Plan::decode(test, m);
    let phase = caller.phase(test.name(), test.response_kind(), plan.f.measure_cpu != 0);
    let limits = &caller.opts.limits;
    let setup = match same_host(caller.peer)
        .and_then(|()| plan.validate(limits))
        .and_then(|dir| open(&plan, &dir, limits))
    {
        Ok(s) => s,
        Err(r) => {
            phase.log(&format!("refused {} request: {}", phase.name, r.reason));
            return chan.send(&wire::encode_error_response(phase.response_kind, r.errno));
        }
    };
    let rate = phase.measure.then(cpu::calibrate_rate).unwrap_or(0.0);
    chan.send(&response(&plan, &setup, rate))?;
    match run_data(&plan, &setup, &phase) {
        Ok(done) => {
            chan.send(&results(&plan, &done, 0))?;
            let c = &done.value;
            let moved = match test {
                UnixTest::StreamStream => format!("received {} bytes", c.bytes_received),
                UnixTest::DgStream => format!("received {} datagrams", c.recv_calls),
                UnixTest::StreamRr | UnixTest::DgRr => format!("{} transactions", c.transactions),
            };
            let file = setup.file.path().display();
            let secs = done.elapsed;
            phase.log(&format!(
                "{} test over {file}: {moved} in {secs:.2}s",
                phase.name
            ));
        }
        Err(e) => {
            let errno = match &e {
                DataError::Send(io) | DataError::Recv(io) | DataError::Connect(io) => errno_of(io),
            };
            chan.send(&results(&plan, &Done::default(), errno))?;
            phase.log(&format!("{} test failed: {e}", phase.name));
        }
    }
    // `setup` drops here: its socket closes and its file is removed.
    Ok(())
}

#[cfg(test)]
#[path = "unix_tests.rs"]
mod tests;
