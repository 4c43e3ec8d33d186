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
use super::report::{self, Cpu, Measured, ReportOptions};
use super::request::{remote, reply, request, Length, Params};
use super::UnixTest;
use crate::cli::config::{Config, GlobalOptions};
use crate::control::channel::{Channel, ChannelError, RESPONSE_WAIT};
use crate::control::client;
use crate::engine::ring::BufferRing;
use crate::engine::timer::{StopFlag, Timer};
use crate::engine::{Counters, DataError};
use crate::measure::cpu::{self, CpuSampler};
use crate::net::socket;
use crate::net::strerror;
use crate::net::unix_path::{self as path, SocketFile};
use crate::run::EXIT_FAILURE;
use crate::server::limits::defaults as limits;
use socket2::{Domain, Socket, Type};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::time::Instant;

/// netperf's UNIX_LENGTH_MAX: the largest default DG_STREAM datagram.
const DG_LENGTH_MAX: i32 = 0xFFFF - 28;
/// Tries at the zero-length end marker, one socket timeout each.
const END_MARKER_TRIES: u32 = 8;
/// netserver's CPU count, or 0 (use ours) when it cannot be one. A stock
/// netserver never writes `num_cpus` into these results: the word netperf
/// reads is a leftover of the response (its `measure_cpu`, `cpu_rate` or
/// `so_rcvavoid`, byte-swapped). netserver runs on this machine, so a real
/// count is at most our own.
fn remote_num_cpus(reported: i32) -> u32 {
    let ours = cpu::num_cpus();
    match u32::try_from(reported) {
        Ok(n) if (1..=ours).contains(&n) => n,
        _ => 0,
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

/// A control connection that fails mid-test: netperf's recv_response
/// exits with 1.
impl From<ChannelError> for Failure {
    fn from(e: ChannelError) -> Failure {
        Failure::new(format!("netperf: {e}"))
    }
}

fn io_errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
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

/// A ring of `width` buffers, fewer if that much memory is beyond
/// netperf-ng's limits: a command line (-W) must not abort us.
fn ring(width: u32, size: i32, align: u32, offset: u32) -> BufferRing {
    let per_buffer = size.max(1) as u64 + u64::from(align) + u64::from(offset);
    let fits = u32::try_from(limits::MAX_RING_BYTES / per_buffer).unwrap_or(u32::MAX);
    let width = width.clamp(1, limits::MAX_WIDTH).min(fits.max(1));
    BufferRing::new(width, size.max(0) as usize, align, offset)
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
    let chosen = |width: u32, natural: u32| if width > 0 { width } else { natural };
    let mut recv_ring = ring(
        chosen(g.recv_width, 1),
        p.response_size,
        g.local_recv_align,
        g.local_recv_offset,
    );
    let mut send_ring = match p.test {
        UnixTest::StreamRr | UnixTest::DgRr => {
            ring(chosen(g.send_width, 1), p.request_size, align, offset)
        }
        // netperf's default: enough sends to fill the socket buffer, plus one.
        UnixTest::StreamStream => {
            let natural = ((lss.max(0) / send_size.max(1)) + 1).max(2) as u32;
            ring(chosen(g.send_width, natural), send_size, align, offset)
        }
        UnixTest::DgStream => ring(chosen(g.send_width, 32), send_size, align, offset),
    };
    if let Some(path) = &g.local_fill_file {
        let data = crate::input::read_fill(std::path::Path::new(path), send_ring.capacity())
            .map_err(|e| Failure::new(format!("netperf: cannot read fill file '{path}': {e}")))?;
        send_ring.fill_continuous(&data);
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
        num_cpus: remote_num_cpus(results.num_cpus),
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
        crate::run::out("The UNIX tests do not know how to run with no control connection\n");
        return EXIT_FAILURE;
    }
    let p = match Params::new(test, config) {
        Ok(p) => p,
        Err(message) => {
            eprintln!("{message}");
            return 1;
        }
    };
    // --store: a database that cannot be opened stops us before the test.
    let store = match crate::resultsdb::netperf::PendingStore::open(config) {
        Ok(store) => store,
        Err(code) => return code,
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
        crate::run::out(&report::header(test, g.local_cpu || g.remote_cpu, p.unit));
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
            crate::run::out(&report::result(&measured, &opts));
            match store {
                Some(store) => {
                    let (figures, unit) = report::figures(&measured, &opts);
                    store.finish_figures(config, &figures, &unit)
                }
                None => 0,
            }
        }
        Err(f) => {
            crate::run::out(&f.stdout);
            let _ = std::io::stdout().flush();
            eprintln!("{}", f.message);
            f.exit
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftover_cpu_counts_are_not_believed() {
        assert_eq!(remote_num_cpus(1), 1);
        assert_eq!(remote_num_cpus(0), 0);
        assert_eq!(remote_num_cpus(-3), 0);
        // A stock netserver's cpu_rate of 100.0, read back byte-swapped.
        assert_eq!(remote_num_cpus(100f32.to_bits().swap_bytes() as i32), 0);
    }

    #[test]
    fn failures_read_like_perror() {
        let f = Failure::errno("netperf: remote error", libc::ENOENT);
        assert_eq!(
            f.message,
            "netperf: remote error: No such file or directory"
        );
        assert_eq!(f.exit, 1);
        let f = data_failure(
            UnixTest::DgRr,
            DataError::Recv(std::io::Error::from_raw_os_error(libc::ECONNREFUSED)),
        );
        assert_eq!(f.message, "send_dg_rr: data recv error: Connection refused");
    }
}
