//! netperf's half of the Unix-domain tests: read the options, ask netserver
//! for its socket, connect to the path it answers with, move the data, take
//! its results and print netperf 2.7.1's output.
//!
//! A stock netserver ends STREAM_RR and DG_RR on its own timer, `PAD_TIME`
//! seconds after netperf has stopped, and netperf must keep its socket open
//! until then (a stock netserver spins on an early end of file). Our
//! netserver announces itself by filling `path_name_len` (see `wire`); only
//! then do we end those tests at once: a half-close for STREAM_RR, a
//! zero-length datagram for DG_RR. DG_STREAM always ends with a zero-length
//! datagram: stock netserver also stops at a datagram of another size.

use super::data::{self, Idle};
use super::path::{self, SocketFile};
use super::report::{self, Cpu, Measured, ReportOptions};
use super::wire::{
    DgRrRequest, DgRrResponse, DgRrResults, DgStreamRequest, DgStreamResponse, DgStreamResults,
    StreamRrRequest, StreamRrResponse, StreamRrResults, StreamStreamRequest, StreamStreamResponse,
    StreamStreamResults, UnixPath,
};
use super::{strerror, UnixTest};
use crate::cli::config::{Config, GlobalOptions};
use crate::control::channel::{Channel, ChannelError, RESPONSE_WAIT};
use crate::control::client;
use crate::engine::ring::BufferRing;
use crate::engine::timer::{StopFlag, Timer};
use crate::engine::{Counters, DataError};
use crate::measure::cpu::{self, CpuSampler};
use crate::net::socket;
use crate::report::units;
use crate::run::EXIT_FAILURE;
use crate::server::omni::limits;
use crate::wire::Message;
use socket2::{Domain, Socket, Type};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::time::Instant;

/// netperf's UNIX_LENGTH_MAX: the largest default DG_STREAM datagram.
const DG_LENGTH_MAX: i32 = 0xFFFF - 28;
/// Tries at the zero-length end marker, one socket timeout each.
const END_MARKER_TRIES: u32 = 8;
/// CPU counts beyond this in results are a stock netserver's leftover word.
const MAX_PLAUSIBLE_CPUS: i32 = 1 << 16;

/// How long the test runs.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Length {
    Seconds(u32),
    /// Bytes for the stream tests, transactions for request/response.
    Count(u64),
}

/// The options of one run, with netperf's defaults applied.
#[derive(Debug, Clone)]
struct Params {
    test: UnixTest,
    /// `-p dir`, checked and absolute; sent to netserver when given.
    dir: Option<PathBuf>,
    /// Local socket buffer requests (-s), remote ones (-S); -1: default.
    local_send_buf: i32,
    local_recv_buf: i32,
    remote_send_buf: i32,
    remote_recv_buf: i32,
    /// -m (0: from the socket buffer), -M for netserver (0: its default).
    send_size: i32,
    remote_recv_size: i32,
    request_size: i32,
    response_size: i32,
    length: Length,
    unit: char,
}

fn size(value: Option<u32>, default: i32) -> Result<i32, String> {
    match value {
        None => Ok(default),
        Some(v) if v <= limits::MAX_MESSAGE as u32 => Ok(v as i32),
        Some(v) => Err(format!(
            "netperf: a message size of {v} bytes is beyond netperf-ng's limit of {} bytes",
            limits::MAX_MESSAGE
        )),
    }
}

impl Params {
    fn new(test: UnixTest, config: &Config) -> Result<Params, String> {
        let (g, t) = (&config.global, &config.test);
        let dir = match &t.unix_dir {
            Some(text) => Some(path::resolve_user_dir(text)?),
            None => None,
        };
        let length = if g.test_length > 0 {
            Length::Seconds(u32::try_from(g.test_length).unwrap_or(u32::MAX))
        } else {
            Length::Count(g.test_length.unsigned_abs())
        };
        let requested = if g.format_units_explicit {
            Some(g.format_units)
        } else {
            None
        };
        Ok(Params {
            test,
            dir,
            local_send_buf: t.local_send_buf.unwrap_or(-1),
            local_recv_buf: t.local_recv_buf.unwrap_or(-1),
            // Stock netperf sends 0 here, which stock netserver turns into
            // the smallest buffer the kernel allows; -1 asks both netservers
            // for their default, as netperf's own comments intend.
            remote_send_buf: t.remote_send_buf.unwrap_or(-1),
            remote_recv_buf: t.remote_recv_buf.unwrap_or(-1),
            send_size: size(t.local_send_size, 0)?,
            remote_recv_size: size(t.remote_recv_size, 0)?,
            request_size: size(t.request_size, 1)?,
            response_size: size(t.response_size, 1)?,
            length,
            unit: units::resolve_unit(requested, test.is_request_response()),
        })
    }

    /// The `test_length` word netperf sends for this test.
    fn wire_length(&self) -> i32 {
        let clamp = |v: u64| i32::try_from(v).unwrap_or(i32::MAX);
        match (self.length, self.test) {
            (Length::Seconds(s), _) => clamp(u64::from(s)),
            (Length::Count(n), UnixTest::StreamStream) => clamp(n),
            (Length::Count(n), UnixTest::StreamRr | UnixTest::DgRr) => -clamp(n),
            // Stock netperf has no count mode here and sends its test time, 0.
            (Length::Count(_), UnixTest::DgStream) => 0,
        }
    }

    fn path_field(&self) -> UnixPath {
        self.dir
            .as_ref()
            .map(|d| UnixPath::new(std::os::unix::ffi::OsStrExt::as_bytes(d.as_os_str())))
            .unwrap_or_default()
    }
}

/// Why a run stopped: the line(s) for stderr, anything netperf prints on
/// stdout with it, and the exit status.
#[derive(Debug)]
struct Failure {
    message: String,
    stdout: String,
    exit: i32,
}

impl Failure {
    fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            stdout: String::new(),
            exit: 1,
        }
    }

    /// netperf's perror(): "<context>: <strerror>".
    fn errno(context: &str, errno: i32) -> Failure {
        Failure::new(format!("{context}: {}", strerror(errno)))
    }
}

impl From<ChannelError> for Failure {
    fn from(e: ChannelError) -> Failure {
        Failure {
            message: format!("netperf: {e}"),
            stdout: String::new(),
            exit: EXIT_FAILURE,
        }
    }
}

fn io_errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// netserver's response, whichever test it answers.
struct Reply {
    serv_errno: i32,
    kind: u32,
    remote_send_buf: i32,
    remote_recv_buf: i32,
    /// Whether netserver measures CPU; None where netperf does not read it
    /// (DG_STREAM keeps its own idea).
    measure_cpu: Option<bool>,
    cpu_rate: f32,
    path: UnixPath,
}

/// netserver's results, whichever test they report.
struct Remote {
    serv_errno: i32,
    recv_calls: i64,
    messages: u64,
    cpu_util: f32,
    num_cpus: i32,
}

fn request(p: &Params, g: &GlobalOptions) -> Message {
    let measure_cpu = i32::from(g.remote_cpu);
    let (cpu_bind, cpu_rate, test_length, path) = (
        g.remote_cpu_bind,
        g.remote_cpu_rate,
        p.wire_length(),
        p.path_field(),
    );
    let (recv_alignment, recv_offset) = (g.remote_recv_align as i32, g.remote_recv_offset as i32);
    let (send_alignment, send_offset) = (g.remote_send_align as i32, g.remote_send_offset as i32);
    match p.test {
        UnixTest::StreamStream => StreamStreamRequest {
            cpu_bind,
            recv_buf_size: p.remote_recv_buf,
            send_buf_size: p.remote_send_buf,
            receive_size: p.remote_recv_size,
            recv_alignment,
            recv_offset,
            measure_cpu,
            cpu_rate,
            test_length,
            path,
            ..Default::default()
        }
        .encode(),
        UnixTest::StreamRr => StreamRrRequest {
            cpu_bind,
            recv_buf_size: p.remote_recv_buf,
            send_buf_size: p.remote_send_buf,
            recv_alignment,
            recv_offset,
            send_alignment,
            send_offset,
            request_size: p.request_size,
            response_size: p.response_size,
            measure_cpu,
            cpu_rate,
            test_length,
            path,
            ..Default::default()
        }
        .encode(),
        UnixTest::DgStream => DgStreamRequest {
            cpu_bind,
            recv_buf_size: p.remote_recv_buf,
            message_size: p.send_size,
            recv_alignment,
            recv_offset,
            measure_cpu,
            cpu_rate,
            test_length,
            path,
            ..Default::default()
        }
        .encode(),
        UnixTest::DgRr => DgRrRequest {
            cpu_bind,
            recv_buf_size: p.remote_recv_buf,
            send_buf_size: p.remote_send_buf,
            recv_alignment,
            recv_offset,
            send_alignment,
            send_offset,
            request_size: p.request_size,
            response_size: p.response_size,
            measure_cpu,
            cpu_rate,
            test_length,
            path,
            ..Default::default()
        }
        .encode(),
    }
}

fn reply(test: UnixTest, m: &Message) -> Reply {
    let kind = m.kind();
    match test {
        UnixTest::StreamStream => {
            let r = StreamStreamResponse::decode(m);
            Reply {
                serv_errno: r.serv_errno,
                kind,
                remote_send_buf: r.send_buf_size,
                remote_recv_buf: r.recv_buf_size,
                measure_cpu: Some(r.measure_cpu != 0),
                cpu_rate: r.cpu_rate,
                path: r.path,
            }
        }
        UnixTest::StreamRr => {
            let r = StreamRrResponse::decode(m);
            Reply {
                serv_errno: r.serv_errno,
                kind,
                remote_send_buf: r.send_buf_size,
                remote_recv_buf: r.recv_buf_size,
                measure_cpu: Some(r.measure_cpu != 0),
                cpu_rate: r.cpu_rate,
                path: r.path,
            }
        }
        UnixTest::DgStream => {
            let r = DgStreamResponse::decode(m);
            Reply {
                serv_errno: r.serv_errno,
                kind,
                remote_send_buf: r.send_buf_size,
                remote_recv_buf: r.recv_buf_size,
                measure_cpu: None,
                cpu_rate: r.cpu_rate,
                path: r.path,
            }
        }
        UnixTest::DgRr => {
            let r = DgRrResponse::decode(m);
            Reply {
                serv_errno: r.serv_errno,
                kind,
                remote_send_buf: r.send_buf_size,
                remote_recv_buf: r.recv_buf_size,
                measure_cpu: Some(r.measure_cpu != 0),
                cpu_rate: r.cpu_rate,
                path: r.path,
            }
        }
    }
}

fn remote(test: UnixTest, m: &Message) -> Remote {
    match test {
        UnixTest::StreamStream => {
            let r = StreamStreamResults::decode(m);
            Remote {
                serv_errno: r.serv_errno,
                recv_calls: i64::from(r.recv_calls),
                messages: 0,
                cpu_util: r.cpu_util,
                num_cpus: r.num_cpus,
            }
        }
        UnixTest::StreamRr => {
            let r = StreamRrResults::decode(m);
            Remote {
                serv_errno: r.serv_errno,
                recv_calls: i64::from(r.recv_calls),
                messages: 0,
                cpu_util: r.cpu_util,
                num_cpus: r.num_cpus,
            }
        }
        UnixTest::DgStream => {
            let r = DgStreamResults::decode(m);
            Remote {
                serv_errno: r.serv_errno,
                recv_calls: 0,
                messages: u64::from(r.messages_recvd.max(0) as u32),
                cpu_util: r.cpu_util,
                num_cpus: r.num_cpus,
            }
        }
        UnixTest::DgRr => {
            let r = DgRrResults::decode(m);
            Remote {
                serv_errno: r.serv_errno,
                recv_calls: i64::from(r.recv_calls),
                messages: 0,
                cpu_util: r.cpu_util,
                num_cpus: r.num_cpus,
            }
        }
    }
}

/// netperf's wording for each test's failures.
struct Wording {
    remote_setup: &'static str,
    remote_results: &'static str,
    connect: &'static str,
    send: &'static str,
    recv: &'static str,
}

fn wording(test: UnixTest) -> Wording {
    match test {
        UnixTest::StreamStream => Wording {
            remote_setup: "netperf: send_stream_stream: remote error",
            remote_results: "netperf: remote error",
            connect: "netperf: send_stream_stream: data socket connect failed",
            send: "netperf: data send error",
            recv: "netperf: data recv error",
        },
        UnixTest::StreamRr => Wording {
            remote_setup: "netperf: remote error",
            remote_results: "netperf: remote error",
            connect: "netperf: data socket connect failed",
            send: "send_stream_rr: data send error",
            recv: "send_stream_rr: data recv error",
        },
        UnixTest::DgStream => Wording {
            remote_setup: "send_dg_stream: error on remote",
            remote_results: "send_dg_stream: error on remote",
            connect: "send_dg_stream: data socket connect failed",
            send: "dg_send: data send error",
            recv: "dg_send: data recv error",
        },
        UnixTest::DgRr => Wording {
            remote_setup: "netperf: remote error",
            remote_results: "netperf: remote error",
            connect: "netperf: data socket connect failed",
            send: "send_dg_rr: data send error",
            recv: "send_dg_rr: data recv error",
        },
    }
}

fn data_failure(test: UnixTest, e: DataError) -> Failure {
    let w = wording(test);
    match e {
        DataError::Send(io) => Failure::new(format!("{}: {}", w.send, describe(&io))),
        DataError::Recv(io) => Failure::new(format!("{}: {}", w.recv, describe(&io))),
        DataError::Connect(io) => Failure::new(format!("{}: {}", w.connect, describe(&io))),
    }
}

fn describe(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(errno) => strerror(errno),
        None => e.to_string(),
    }
}

/// The data socket with netperf's local buffer requests applied.
fn data_socket(p: &Params) -> Result<Socket, Failure> {
    let kind = if p.test.is_datagram() {
        Type::DGRAM
    } else {
        Type::STREAM
    };
    let s = Socket::new(Domain::UNIX, kind, None).map_err(|e| {
        Failure::new(format!(
            "netperf: create_unix_socket: socket: {}",
            io_errno(&e)
        ))
    })?;
    let set = |which: &str, e: std::io::Error| {
        Failure::new(format!(
            "netperf: set_sock_buffer: {which} option: errno {} ({})",
            io_errno(&e),
            describe(&e)
        ))
    };
    if p.local_send_buf >= 0 {
        s.set_send_buffer_size(p.local_send_buf as usize)
            .map_err(|e| set("SO_SNDBUF", e))?;
    }
    if p.local_recv_buf >= 0 {
        s.set_recv_buffer_size(p.local_recv_buf as usize)
            .map_err(|e| set("SO_RCVBUF", e))?;
    }
    Ok(s)
}

/// Send a zero-length datagram: the end of the test for a netserver that
/// listens for one. Bounded: a few socket timeouts at most.
fn send_end_marker(s: &Socket) {
    let _ = socket::set_timeouts(s, Some(data::UNTIMED_IO_WAIT));
    for _ in 0..END_MARKER_TRIES {
        match s.send(&[]) {
            Ok(_) => return,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EINTR)) => {}
            Err(_) => return,
        }
    }
}

/// The local measurements of the data phase.
struct Local {
    counters: Counters,
    elapsed: f32,
    cpu: Option<Cpu>,
}

/// Run the data loop of `p.test` on the connected socket `s`.
fn move_data(
    p: &Params,
    g: &GlobalOptions,
    s: &Socket,
    lss: i32,
    send_size: i32,
) -> Result<Local, Failure> {
    let (timer_after, idle, count) = match p.length {
        Length::Seconds(secs) => (
            Some(std::time::Duration::from_secs(u64::from(secs))),
            Idle::timed(),
            None,
        ),
        Length::Count(n) => (None, Idle::untimed(), Some(n)),
    };
    socket::set_timeouts(s, idle.io_wait())
        .map_err(|e| data_failure(p.test, DataError::Connect(e)))?;
    let fd = s.as_raw_fd();
    let (align, offset) = (g.local_send_align, g.local_send_offset);
    let mut send_ring;
    let mut recv_ring = BufferRing::new(
        if g.recv_width > 0 { g.recv_width } else { 1 },
        p.response_size as usize,
        g.local_recv_align,
        g.local_recv_offset,
    );
    if p.test.is_request_response() {
        let width = if g.send_width > 0 { g.send_width } else { 1 };
        send_ring = BufferRing::new(width, p.request_size as usize, align, offset);
    } else {
        let natural = if p.test == UnixTest::DgStream {
            32
        } else {
            ((lss.max(0) / send_size.max(1)) + 1).max(2) as u32
        };
        let width = if g.send_width > 0 {
            g.send_width
        } else {
            natural
        };
        let fits = (limits::MAX_RING_BYTES
            / (send_size.max(1) as u64 + u64::from(align) + u64::from(offset)))
        .max(1);
        send_ring = BufferRing::new(
            width.min(fits as u32).min(limits::MAX_WIDTH),
            send_size as usize,
            align,
            offset,
        );
    }
    let stop = StopFlag::new();
    let mut sampler = if g.local_cpu {
        CpuSampler::start(g.num_cpus).ok()
    } else {
        None
    };
    let started = Instant::now();
    let timer = Timer::arm(timer_after, stop.clone());
    let outcome = match p.test {
        UnixTest::StreamStream | UnixTest::DgStream => {
            data::send_stream(fd, &mut send_ring, &stop, count, idle)
        }
        UnixTest::StreamRr | UnixTest::DgRr => data::rr_client(
            fd,
            &mut send_ring,
            &mut recv_ring,
            p.test.is_datagram(),
            &stop,
            count,
            idle,
        ),
    };
    drop(timer);
    if p.test == UnixTest::StreamStream {
        // netperf closes before it stops its clock: netserver's end of file.
        let _ = s.shutdown(std::net::Shutdown::Both);
    }
    let elapsed = started.elapsed().as_secs_f32();
    let usage = sampler.as_mut().and_then(|c| c.stop().ok());
    let counters = outcome.map_err(|e| data_failure(p.test, e))?;
    let rate = if g.local_cpu_rate > 0.0 {
        g.local_cpu_rate
    } else {
        cpu::calibrate_rate()
    };
    Ok(Local {
        counters,
        elapsed,
        cpu: usage.map(|u| Cpu {
            util: u.util,
            num_cpus: u.num_cpus,
            rate,
        }),
    })
}

/// One whole test over an established control connection.
fn run_test(chan: &mut Channel, p: &Params, g: &GlobalOptions) -> Result<Measured, Failure> {
    let test = p.test;
    let words = wording(test);
    let s = data_socket(p)?;
    let (lss, lsr) = socket::buffer_sizes(&s);
    let send_size = match (p.send_size, test) {
        (n, _) if n > 0 => n,
        (_, UnixTest::DgStream) if lss > 0 => lss.min(DG_LENGTH_MAX),
        (_, _) if lss > 0 => lss.min(limits::MAX_MESSAGE),
        _ => 4096,
    };
    let p = &Params {
        send_size,
        ..p.clone()
    };
    chan.send(&request(p, g))?;
    let answer = reply(test, &chan.recv(RESPONSE_WAIT)?);
    if answer.serv_errno != 0 {
        return Err(Failure::errno(words.remote_setup, answer.serv_errno));
    }
    if answer.kind != test.response_kind() {
        return Err(Failure::new(format!(
            "netperf: unexpected message type {} from netserver",
            answer.kind
        )));
    }
    let server_path = path::address(&answer.path.bytes).map_err(|_| {
        Failure::new(format!(
            "{}: netserver sent no usable socket path",
            words.connect
        ))
    })?;
    // DG_RR's answers come back to a name of ours, in the same directory.
    let _own_file: Option<SocketFile> = if test == UnixTest::DgRr {
        let dir = p.dir.clone().unwrap_or_else(path::default_dir);
        Some(
            path::bind_fresh(&s, &dir)
                .map_err(|e| Failure::errno("netperf: send_dg_rr", io_errno(&e)))?,
        )
    } else {
        None
    };
    if let Err(e) = s.connect(&server_path) {
        let mut f = Failure::errno(words.connect, io_errno(&e));
        if test == UnixTest::StreamStream {
            f.stdout = format!(" path: {}\n", String::from_utf8_lossy(&answer.path.bytes));
        }
        return Err(f);
    }
    let local = move_data(p, g, &s, lss, send_size)?;
    if test == UnixTest::DgStream || (test == UnixTest::DgRr && answer.path.is_announced()) {
        send_end_marker(&s);
    } else if test == UnixTest::StreamRr && answer.path.is_announced() {
        let _ = s.shutdown(std::net::Shutdown::Write);
    }
    let results = remote(test, &chan.recv(RESPONSE_WAIT)?);
    if results.serv_errno != 0 {
        return Err(Failure::errno(words.remote_results, results.serv_errno));
    }
    drop(s);
    let remote_cpu = answer.measure_cpu.unwrap_or(g.remote_cpu).then(|| Cpu {
        util: f64::from(results.cpu_util),
        num_cpus: if (1..=MAX_PLAUSIBLE_CPUS).contains(&results.num_cpus) {
            results.num_cpus as u32
        } else {
            0
        },
        rate: answer.cpu_rate,
    });
    let c = &local.counters;
    Ok(Measured {
        test,
        local_send_buf: lss,
        local_recv_buf: lsr,
        remote_send_buf: answer.remote_send_buf,
        remote_recv_buf: answer.remote_recv_buf,
        send_size,
        request_size: p.request_size,
        response_size: p.response_size,
        elapsed: local.elapsed,
        bytes_sent: c.bytes_sent as f64,
        messages_sent: c.send_calls,
        failed_sends: c.failed_sends,
        remote_messages: results.messages,
        remote_recv_calls: results.recv_calls,
        transactions: c.transactions,
        local_cpu: local.cpu,
        remote_cpu,
        local_send_align: g.local_send_align,
        remote_recv_align: g.remote_recv_align,
        local_send_offset: g.local_send_offset,
        remote_recv_offset: g.remote_recv_offset,
    })
}

/// Run the test `config` names and print its output; the exit status.
pub fn run(test: UnixTest, config: &Config) -> i32 {
    let g = &config.global;
    if g.no_control {
        println!("The UNIX tests do not know how to run with no control connection");
        return EXIT_FAILURE;
    }
    let p = match Params::new(test, config) {
        Ok(p) => p,
        Err(message) => {
            eprintln!("{message}");
            return 1;
        }
    };
    if let Err(e) = crate::engine::affinity::bind_current_thread(g.local_cpu_bind) {
        eprintln!("netperf: cannot bind to CPU {}: {e}", g.local_cpu_bind);
        return 1;
    }
    let mut chan = match client::establish(g) {
        Ok(chan) => chan,
        Err(e) => {
            eprintln!("{e}");
            return EXIT_FAILURE;
        }
    };
    if g.print_headers {
        print!(
            "{}",
            report::header(test, g.local_cpu || g.remote_cpu, p.unit)
        );
        let _ = std::io::stdout().flush();
    }
    let outcome = run_test(&mut chan, &p, g);
    chan.shutdown();
    match outcome {
        Ok(measured) => {
            let opts = ReportOptions {
                verbosity: g.verbosity,
                unit: p.unit,
                local_num_cpus: cpu::num_cpus(),
            };
            print!("{}", report::result(&measured, &opts));
            0
        }
        Err(f) => {
            print!("{}", f.stdout);
            let _ = std::io::stdout().flush();
            eprintln!("{}", f.message);
            f.exit
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::test_support::run as config;

    fn params(line: &str) -> Params {
        let c = config(line);
        let test = UnixTest::lookup(&c.global.test_name).expect("a unix test");
        Params::new(test, &c).expect("valid params")
    }

    #[test]
    fn defaults_follow_netperf() {
        let p = params("-t STREAM_RR -l -500");
        assert_eq!((p.request_size, p.response_size), (1, 1));
        assert_eq!(p.length, Length::Count(500));
        assert_eq!(p.wire_length(), -500);
        assert_eq!(p.unit, 'x');
        assert_eq!((p.remote_send_buf, p.local_recv_buf), (-1, -1));
        let p = params("-t STREAM_STREAM -l -4096 -f x");
        assert_eq!((p.wire_length(), p.unit), (4096, 'm'));
        let p = params("-t DG_STREAM -l -4096");
        assert_eq!(p.wire_length(), 0);
        let p = params("-t DG_RR -l 3 -- -r 32,64 -s 64K -S ,128K");
        assert_eq!(
            (p.request_size, p.response_size, p.wire_length()),
            (32, 64, 3)
        );
        assert_eq!((p.local_send_buf, p.local_recv_buf), (65536, 65536));
        assert_eq!((p.remote_send_buf, p.remote_recv_buf), (-1, 131072));
    }

    #[test]
    fn the_directory_is_checked_and_sent() {
        let tmp = path::default_dir();
        let p = params(&format!("-t STREAM_STREAM -- -p {}", tmp.display()));
        let field = p.path_field();
        assert!(field.is_announced());
        assert_eq!(
            PathBuf::from(String::from_utf8_lossy(&field.bytes).into_owned()),
            std::fs::canonicalize(&tmp).unwrap()
        );
        assert!(params("-t STREAM_STREAM").path_field().bytes.is_empty());
        let c = config("-t DG_RR -- -p /no/such/netperf-ng/dir");
        let e = Params::new(UnixTest::DgRr, &c).unwrap_err();
        assert!(e.contains("No such file or directory"), "{e}");
    }

    #[test]
    fn oversized_messages_are_refused_before_anything_runs() {
        let c = config("-t STREAM_STREAM -- -m 1G");
        assert!(Params::new(UnixTest::StreamStream, &c)
            .unwrap_err()
            .contains("limit"));
    }

    #[test]
    fn requests_carry_the_options() {
        let c = config("-t STREAM_STREAM -l 7 -C -- -M 8K -S 1M");
        let p = Params::new(UnixTest::StreamStream, &c).unwrap();
        let r = StreamStreamRequest::decode(&request(&p, &c.global));
        assert_eq!(
            (r.receive_size, r.send_buf_size, r.recv_buf_size),
            (8192, 1 << 20, 1 << 20)
        );
        assert_eq!((r.measure_cpu, r.test_length, r.recv_alignment), (1, 7, 8));
        assert_eq!(r.cpu_bind, -1);
    }
}
