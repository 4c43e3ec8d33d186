//! netperf's half of a Unix-domain test over an established control
//! connection: ask netserver for its socket file, connect to the path it
//! answers with, run the engine's loop on it, and take its results.
//!
//! A stock netserver ends STREAM_RR and DG_RR on its own timer, `PAD_TIME`
//! seconds after netperf has stopped, and netperf must keep its socket open
//! until then (a stock netserver spins on an early end of file). Our
//! netserver announces itself by filling `path_name_len` (see `wire::unix`);
//! only then do we end those tests at once: a half-close for STREAM_RR, a
//! zero-length datagram for DG_RR. DG_STREAM always ends with a zero-length
//! datagram: stock netserver also stops at a datagram of another size.

use super::data::{run_loop, Rings};
use super::error::ClientError;
use super::request::{self, LocalSizes, RunOptions};
use crate::cli::config::GlobalOptions;
use crate::report::unix::Measured;
use netperf_data::engine::sizing::MAX_MESSAGE;
use netperf_data::engine::stop_flag::StopFlag;
use netperf_data::engine::timer::Timer;
use netperf_data::engine::watchdog::{self, UNTIMED_IO_WAIT, UNTIMED_SILENCE};
use netperf_data::engine::{Counters, DataError};
use netperf_data::measure::cpu::{self, CpuSampler};
use netperf_data::measure::outcome::{CpuUsage, Outcome, SideStats};
use netperf_data::net::channel::{Channel, ChannelError, RESPONSE_WAIT};
use netperf_data::net::socket;
use netperf_data::net::strerror;
use netperf_data::net::unix_path::{self as path, SocketFile};
use netperf_data::spec::{Limit, TestSpec};
use netperf_wire::unix::{self as layouts, Fields, Role, UnixPath, UnixTest};
use netperf_wire::Message;
use socket2::{Domain, Socket, Type};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Tries at the zero-length end marker, one socket timeout each.
const END_MARKER_TRIES: u32 = 8;

/// Why a run stopped: the line for stderr and anything netperf prints on
/// stdout with it. netperf exits with 1 for all of them.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub stdout: String,
}

impl Failure {
    fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            stdout: String::new(),
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

/// netperf's wording for each test's failures: remote setup, remote
/// results, connect, send, receive.
fn wording(test: UnixTest) -> [&'static str; 5] {
    match test {
        UnixTest::StreamStream => [
            "netperf: send_stream_stream: remote error",
            "netperf: remote error",
            "netperf: send_stream_stream: data socket connect failed",
            "netperf: data send error",
            "netperf: data recv error",
        ],
        UnixTest::StreamRr => [
            "netperf: remote error",
            "netperf: remote error",
            "netperf: data socket connect failed",
            "send_stream_rr: data send error",
            "send_stream_rr: data recv error",
        ],
        UnixTest::DgStream => [
            "send_dg_stream: error on remote",
            "send_dg_stream: error on remote",
            "send_dg_stream: data socket connect failed",
            "dg_send: data send error",
            "dg_send: data recv error",
        ],
        UnixTest::DgRr => [
            "netperf: remote error",
            "netperf: remote error",
            "netperf: data socket connect failed",
            "send_dg_rr: data send error",
            "send_dg_rr: data recv error",
        ],
    }
}

fn data_failure(test: UnixTest, e: DataError) -> Failure {
    let [.., connect, send, recv] = wording(test);
    let (context, io) = match e {
        DataError::Send(io) => (send, io),
        DataError::Recv(io) => (recv, io),
        DataError::Connect(io) => (connect, io),
    };
    let reason = io.raw_os_error().map_or_else(|| io.to_string(), strerror);
    Failure::new(format!("{context}: {reason}"))
}

/// A size the user gave, within netperf-ng's limit.
fn checked_size(v: i64) -> Result<i32, Failure> {
    i32::try_from(v)
        .ok()
        .filter(|v| *v <= MAX_MESSAGE)
        .ok_or_else(|| {
            Failure::new(format!(
                "netperf: a message size of {v} bytes is beyond netperf-ng's limit of {} bytes",
                MAX_MESSAGE
            ))
        })
}

/// The `test_length` word netperf sends: seconds, or the count (positive
/// bytes for STREAM_STREAM, negated transactions for request/response).
fn wire_length(test: UnixTest, limit: Limit) -> i32 {
    let clamp = |v: u64| i32::try_from(v).unwrap_or(i32::MAX);
    match (limit, test) {
        (Limit::Seconds(s), _) => clamp(u64::from(s)),
        (Limit::Units(n), UnixTest::StreamStream) => clamp(n),
        (Limit::Units(n), UnixTest::StreamRr | UnixTest::DgRr) => -clamp(n),
        // Stock netperf has no count mode here and sends its test time, 0;
        // we count bytes and end with a zero-length datagram all the same.
        (Limit::Units(_), UnixTest::DgStream) => 0,
    }
}

/// The request for `spec`, with the send size settled.
pub fn request(test: UnixTest, spec: &TestSpec, g: &GlobalOptions, send_size: i32) -> Message {
    let path = spec.unix_dir.as_ref().map_or_else(UnixPath::default, |d| {
        UnixPath::new(std::os::unix::ffi::OsStrExt::as_bytes(d.as_os_str()))
    });
    let fields = Fields {
        cpu_bind: g.remote_cpu_bind,
        // Stock netperf sends 0 here, which stock netserver turns into the
        // smallest buffer the kernel allows; -1 asks both netservers for
        // their default, as netperf's own comments intend.
        recv_buf_size: spec.remote_recv_buf,
        send_buf_size: spec.remote_send_buf,
        receive_size: spec.remote_recv_size.max(0),
        message_size: send_size,
        recv_alignment: g.remote_recv_align as i32,
        recv_offset: g.remote_recv_offset as i32,
        send_alignment: g.remote_send_align as i32,
        send_offset: g.remote_send_offset as i32,
        request_size: spec.request_size,
        response_size: spec.response_size,
        measure_cpu: i32::from(g.remote_cpu),
        cpu_rate: g.remote_cpu_rate,
        test_length: wire_length(test, spec.limit),
        path,
        ..Default::default()
    };
    layouts::encode(test, Role::Request, &fields)
}

/// netserver's CPU count, or `local` when it cannot be one (netperf's
/// calc_service_demand takes 0 to mean ours). A stock netserver never
/// writes `num_cpus` into these results: the word netperf reads is a
/// leftover of the response (its `measure_cpu`, `cpu_rate` or
/// `so_rcvavoid`, byte-swapped). netserver runs on this machine, so a real
/// count is at most our own.
fn remote_num_cpus(reported: i32, local: u32) -> u32 {
    match u32::try_from(reported) {
        Ok(n) if (1..=cpu::num_cpus()).contains(&n) => n,
        _ => local,
    }
}

/// The data socket with netperf's local buffer requests applied.
fn data_socket(test: UnixTest, spec: &TestSpec) -> Result<Socket, Failure> {
    let kind = if test.is_datagram() {
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
            strerror(io_errno(&e))
        ))
    };
    if spec.local_send_buf >= 0 {
        s.set_send_buffer_size(spec.local_send_buf as usize)
            .map_err(|e| set("SO_SNDBUF", e))?;
    }
    if spec.local_recv_buf >= 0 {
        s.set_recv_buffer_size(spec.local_recv_buf as usize)
            .map_err(|e| set("SO_RCVBUF", e))?;
    }
    Ok(s)
}

/// Send a zero-length datagram: the end of the test for a netserver that
/// listens for one. Bounded: a few socket timeouts at most.
fn send_end_marker(s: &Socket) {
    let _ = socket::set_timeouts(s, Some(UNTIMED_IO_WAIT));
    for _ in 0..END_MARKER_TRIES {
        match s.send(&[]) {
            Ok(_) => return,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EINTR)) => {}
            Err(_) => return,
        }
    }
}

/// The local measurements of the data phase: counters, netperf's elapsed
/// seconds (every rate is per this time), CPU usage and the CPU rate.
type Local = (Counters, f32, Option<CpuUsage>, f32);

/// Run the engine's loop for `test` on the connected socket `s`. A count
/// test has no clock to end a blocked call: its socket calls wake up to
/// look, and the watchdog ends it when no data moved for a minute (or
/// netserver closed the control connection).
fn move_data(
    test: UnixTest,
    spec: &TestSpec,
    g: &GlobalOptions,
    s: &Socket,
    control_fd: std::os::fd::RawFd,
    sizes: &LocalSizes,
) -> Result<Local, Failure> {
    let (timer_after, count) = match spec.limit {
        Limit::Seconds(secs) => (Some(Duration::from_secs(u64::from(secs))), None),
        Limit::Units(n) => (None, Some(n)),
    };
    let io_wait = count.map(|_| UNTIMED_IO_WAIT);
    socket::set_timeouts(s, io_wait).map_err(|e| data_failure(test, DataError::Connect(e)))?;
    let run = RunOptions::from_global(g);
    let mut rings = Rings::prepare(spec, sizes, &run).map_err(|e| Failure::new(e.to_string()))?;
    let stop = StopFlag::new();
    let mut sampler = if g.local_cpu {
        CpuSampler::start(g.num_cpus).ok()
    } else {
        None
    };
    let started = Instant::now();
    // A stop signal (SIGALRM, SIGINT) ends the data phase as in every test.
    let timer = Timer::arm_watching(timer_after, stop.clone(), true);
    let silence = count.map(|_| UNTIMED_SILENCE);
    let (outcome, gone) = watchdog::netperf_watched(control_fd, &stop, silence, || {
        run_loop(spec, s, None, &mut rings, &run, &stop, count, None, None)
    });
    drop(timer);
    if test == UnixTest::StreamStream {
        // netperf closes before it stops its clock: netserver's end of file.
        let _ = s.shutdown(std::net::Shutdown::Both);
    }
    let elapsed = started.elapsed().as_secs_f32();
    let usage = sampler.as_mut().and_then(|c| c.stop().ok());
    let counters = outcome.map_err(|e| match e {
        ClientError::Data(e) => data_failure(test, e),
        other => Failure::new(other.to_string()),
    })?;
    if let Some(silent) = gone {
        return Err(data_failure(test, DataError::Recv(silent)));
    }
    let rate = if g.local_cpu_rate > 0.0 {
        g.local_cpu_rate
    } else {
        cpu::calibrate_rate()
    };
    Ok((counters, elapsed, usage, rate))
}

/// The sizes and ring widths netperf settles on, by the rule of every test
/// (`engine::sizing`), but DG_STREAM's default of 32 buffers.
fn local_sizes(test: UnixTest, spec: &TestSpec, lss: i32, lsr: i32) -> Result<LocalSizes, Failure> {
    checked_size(spec.send_size.into())?;
    let mut sizes = request::local_sizes(spec, lss, lsr);
    sizes.send_size = sizes.send_size.min(MAX_MESSAGE);
    if test == UnixTest::DgStream && spec.send_width == 0 {
        sizes.send_width = 32;
    }
    Ok(sizes)
}

/// One whole test over an established control connection.
pub fn run_test(
    chan: &mut Channel,
    test: UnixTest,
    spec: &TestSpec,
    g: &GlobalOptions,
) -> Result<Measured, Failure> {
    for size in [spec.request_size, spec.response_size, spec.remote_recv_size] {
        checked_size(size.into())?;
    }
    let s = data_socket(test, spec)?;
    let (lss, lsr) = socket::buffer_sizes(&s);
    let sizes = local_sizes(test, spec, lss, lsr)?;
    let answer = ask_netserver(chan, test, spec, g, sizes.send_size)?;
    let _own_file = connect_data(test, spec, &s, &answer)?;
    let (counters, elapsed, cpu, cpu_rate) =
        move_data(test, spec, g, &s, chan.as_raw_fd(), &sizes)?;
    end_data(test, &s, answer.path.is_announced());
    let results = await_results(chan, test)?;
    drop(s);
    let ours = Ours {
        send_buf: lss,
        recv_buf: lsr,
        send_size: sizes.send_size,
        counters,
        elapsed,
        cpu,
        cpu_rate,
    };
    Ok(measured(test, spec, g, ours, &answer, &results))
}

/// Ask netserver for its half of the test: send the request and take its
/// response, which must accept the test.
fn ask_netserver(
    chan: &mut Channel,
    test: UnixTest,
    spec: &TestSpec,
    g: &GlobalOptions,
    send_size: i32,
) -> Result<Fields, Failure> {
    let [remote_setup, ..] = wording(test);
    chan.send(&request(test, spec, g, send_size))?;
    let reply = chan.recv(RESPONSE_WAIT)?;
    let answer = layouts::decode(test, Role::Response, &reply);
    if answer.serv_errno != 0 {
        return Err(Failure::errno(remote_setup, answer.serv_errno));
    }
    if reply.kind() != test.response_kind() {
        return Err(Failure::new(format!(
            "netperf: unexpected message type {} from netserver",
            reply.kind()
        )));
    }
    Ok(answer)
}

/// Connect the data socket `s` to the socket file netserver's `answer`
/// names. DG_RR's answers come back to a name of ours, in the same
/// directory: its file, returned, lives as long as the test.
fn connect_data(
    test: UnixTest,
    spec: &TestSpec,
    s: &Socket,
    answer: &Fields,
) -> Result<Option<SocketFile>, Failure> {
    let [_, _, connect, ..] = wording(test);
    let server_path = path::address(&answer.path.bytes)
        .map_err(|_| Failure::new(format!("{connect}: netserver sent no usable socket path")))?;
    let own_file = if test == UnixTest::DgRr {
        let dir = spec.unix_dir.clone().unwrap_or_else(path::default_dir);
        Some(
            path::bind_fresh(s, &dir)
                .map_err(|e| Failure::errno("netperf: send_dg_rr", io_errno(&e)))?,
        )
    } else {
        None
    };
    if let Err(e) = s.connect(&server_path) {
        let mut f = Failure::errno(connect, io_errno(&e));
        if test == UnixTest::StreamStream {
            f.stdout = format!(" path: {}\n", String::from_utf8_lossy(&answer.path.bytes));
        }
        return Err(f);
    }
    Ok(own_file)
}

/// Tell netserver the data phase is over, where it listens for that: a
/// zero-length datagram for DG_STREAM, and for DG_RR and (a half-close)
/// STREAM_RR only when our netserver `announced` itself.
fn end_data(test: UnixTest, s: &Socket, announced: bool) {
    if test == UnixTest::DgStream || (test == UnixTest::DgRr && announced) {
        send_end_marker(s);
    } else if test == UnixTest::StreamRr && announced {
        let _ = s.shutdown(std::net::Shutdown::Write);
    }
}

/// netserver's results, which must report no error.
fn await_results(chan: &mut Channel, test: UnixTest) -> Result<Fields, Failure> {
    let [_, remote_results, ..] = wording(test);
    let results = layouts::decode(test, Role::Results, &chan.recv(RESPONSE_WAIT)?);
    if results.serv_errno != 0 {
        return Err(Failure::errno(remote_results, results.serv_errno));
    }
    Ok(results)
}

/// Our end's figures: the data socket's buffers, the send size, and what
/// the data phase measured (see `Local`).
struct Ours {
    send_buf: i32,
    recv_buf: i32,
    send_size: i32,
    counters: Counters,
    elapsed: f32,
    cpu: Option<CpuUsage>,
    cpu_rate: f32,
}

/// The test as both ends measured it: our figures, and netserver's from
/// its `answer` (buffers, CPU rate) and `results`.
fn measured(
    test: UnixTest,
    spec: &TestSpec,
    g: &GlobalOptions,
    ours: Ours,
    answer: &Fields,
    results: &Fields,
) -> Measured {
    let c = &ours.counters;
    let remote_cpu = remote_cpu(test, g, answer, results, ours.cpu.as_ref());
    let remote_messages = u64::from(results.messages_recvd.max(0) as u32);
    let (sent, received) = charged_work(test, c, ours.send_size, remote_messages);
    let outcome = Outcome {
        elapsed: f64::from(ours.elapsed),
        local: SideStats {
            bytes_sent: sent,
            send_calls: c.send_calls,
            failed_sends: c.failed_sends,
            transactions: c.transactions,
            send_buf: ours.send_buf,
            recv_buf: ours.recv_buf,
            send_size: ours.send_size,
            send_align: spec.local_send_align,
            send_offset: spec.local_send_offset,
            cpu: ours.cpu,
            ..SideStats::default()
        },
        remote: SideStats {
            bytes_received: received,
            recv_calls: match test {
                UnixTest::DgStream => remote_messages,
                _ => u64::try_from(results.recv_calls).unwrap_or(0),
            },
            send_buf: answer.send_buf_size,
            recv_buf: answer.recv_buf_size,
            recv_align: spec.remote_recv_align,
            recv_offset: spec.remote_recv_offset,
            cpu: remote_cpu,
            ..SideStats::default()
        },
        request_size: spec.request_size,
        response_size: spec.response_size,
        ..Outcome::default()
    };
    Measured {
        test,
        outcome,
        local_cpu_rate: ours.cpu_rate,
        remote_cpu_rate: answer.cpu_rate,
    }
}

/// netserver's CPU usage, when it measured it. DG_STREAM's netperf keeps
/// its own idea of whether netserver measures.
fn remote_cpu(
    test: UnixTest,
    g: &GlobalOptions,
    answer: &Fields,
    results: &Fields,
    local_cpu: Option<&CpuUsage>,
) -> Option<CpuUsage> {
    let remote_measures = match test {
        UnixTest::DgStream => g.remote_cpu,
        _ => answer.measure_cpu != 0,
    };
    let local_cpus = local_cpu.map_or(cpu::num_cpus(), |c| c.num_cpus);
    remote_measures.then(|| CpuUsage {
        util: f64::from(results.cpu_util),
        num_cpus: remote_num_cpus(results.num_cpus, local_cpus.max(1)),
        ..CpuUsage::default()
    })
}

/// The work each end's service demand is charged for (see `Measured`):
/// what was sent and what was received.
fn charged_work(test: UnixTest, c: &Counters, send_size: i32, remote_messages: u64) -> (u64, u64) {
    match test {
        UnixTest::StreamStream => (c.bytes_sent, c.bytes_sent),
        UnixTest::DgStream => {
            let size = send_size as u64;
            (size * c.send_calls, size * remote_messages)
        }
        UnixTest::StreamRr | UnixTest::DgRr => (c.transactions * 1024, c.transactions * 1024),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::test_support::run as config;
    use netperf_data::spec::TestName;
    use netperf_wire::unix::StreamStreamRequest;

    fn spec(line: &str) -> TestSpec {
        config(line).test_spec().expect("a valid spec")
    }

    #[test]
    fn leftover_cpu_counts_are_not_believed() {
        assert_eq!(remote_num_cpus(1, 7), 1);
        // A count of 0 from netserver means ours.
        assert_eq!(remote_num_cpus(0, 7), 7);
        assert_eq!(remote_num_cpus(-3, 7), 7);
        // A stock netserver's cpu_rate of 100.0, read back byte-swapped.
        assert_eq!(remote_num_cpus(100f32.to_bits().swap_bytes() as i32, 7), 7);
    }

    #[test]
    fn failures_read_like_perror() {
        let f = Failure::errno("netperf: remote error", libc::ENOENT);
        assert_eq!(
            f.message,
            "netperf: remote error: No such file or directory"
        );
        let f = data_failure(
            UnixTest::DgRr,
            DataError::Recv(std::io::Error::from_raw_os_error(libc::ECONNREFUSED)),
        );
        assert_eq!(f.message, "send_dg_rr: data recv error: Connection refused");
    }

    #[test]
    fn lengths_follow_netperf() {
        let length = |line: &str| {
            let s = spec(line);
            let TestName::Unix(test) = s.test else {
                panic!("not a Unix-domain test")
            };
            wire_length(test, s.limit)
        };
        assert_eq!(length("-t STREAM_RR -l -500"), -500);
        assert_eq!(length("-t STREAM_STREAM -l -4096"), 4096);
        assert_eq!(length("-t DG_STREAM -l -4096"), 0);
        assert_eq!(length("-t DG_RR -l 3"), 3);
        let s = spec("-t DG_RR -l 3 -- -r 32,64 -s 64K -S ,128K");
        assert_eq!((s.request_size, s.response_size), (32, 64));
        assert_eq!((s.local_send_buf, s.local_recv_buf), (65536, 65536));
        assert_eq!((s.remote_send_buf, s.remote_recv_buf), (-1, 131072));
        let s = spec("-t STREAM_RR");
        assert_eq!((s.request_size, s.response_size), (1, 1));
    }

    #[test]
    fn the_directory_is_checked_and_sent() {
        let tmp = path::default_dir();
        let s = spec(&format!("-t STREAM_STREAM -- -p {}", tmp.display()));
        let g = config("-t STREAM_STREAM").global;
        let r = StreamStreamRequest::decode(&request(UnixTest::StreamStream, &s, &g, 0));
        assert!(r.path.is_announced());
        assert_eq!(
            std::path::PathBuf::from(String::from_utf8_lossy(&r.path.bytes).into_owned()),
            std::fs::canonicalize(&tmp).unwrap()
        );
        let r = StreamStreamRequest::decode(&request(
            UnixTest::StreamStream,
            &spec("-t STREAM_STREAM"),
            &g,
            0,
        ));
        assert!(r.path.bytes.is_empty());
        let e = config("-t DG_RR -- -p /no/such/netperf-ng/dir")
            .test_spec()
            .unwrap_err()
            .to_string();
        assert!(e.contains("No such file or directory"), "{e}");
    }

    #[test]
    fn oversized_messages_are_refused() {
        assert!(checked_size(1 << 30).unwrap_err().message.contains("limit"));
        let s = spec("-t STREAM_STREAM -- -m 1G");
        assert!(local_sizes(UnixTest::StreamStream, &s, 0, 0).is_err());
    }

    #[test]
    fn sizes_follow_the_one_rule() {
        let s = spec("-t DG_STREAM");
        let sizes = local_sizes(UnixTest::DgStream, &s, 212992, 212992).unwrap();
        // netperf's UNIX_LENGTH_MAX, and DG_STREAM's 32 buffers.
        assert_eq!((sizes.send_size, sizes.send_width), (0xFFFF - 28, 32));
        let s = spec("-t STREAM_STREAM -- -m 1000");
        let sizes = local_sizes(UnixTest::StreamStream, &s, 16384, 0).unwrap();
        assert_eq!((sizes.send_size, sizes.send_width), (1000, 17));
        let s = spec("-t DG_RR -- -r 32,64");
        let sizes = local_sizes(UnixTest::DgRr, &s, 16384, 16384).unwrap();
        assert_eq!(
            (sizes.send_size, sizes.send_width, sizes.recv_width),
            (32, 1, 1)
        );
    }

    #[test]
    fn only_what_the_unix_tests_take_is_taken() {
        let words = |line: &str| {
            line.split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>()
        };
        for line in [
            "-t DG_RR -- -b 4",
            "-t STREAM_STREAM -- -D",
            "-t stream_rr -- -P 5000",
        ] {
            let e = crate::cli::parse_netperf(&words(line))
                .unwrap_err()
                .to_string();
            assert!(e.contains("unknown option"), "{line}: {e}");
        }
        for ext in ["--zerocopy", "--busy-poll 50", "--data-ports 5000-5010"] {
            let line = format!("-t STREAM_STREAM -- {ext}");
            let e = config(&line).test_spec().unwrap_err().to_string();
            assert!(e.contains("AF_UNIX"), "{line}: {e}");
        }
        assert!(config("-t DG_RR -- --mmsg 8 -r 8,8").test_spec().is_ok());
    }

    #[test]
    fn requests_carry_the_options() {
        let c = config("-t STREAM_STREAM -l 7 -C -- -M 8K -S 1M");
        let s = c.test_spec().unwrap();
        let r = StreamStreamRequest::decode(&request(UnixTest::StreamStream, &s, &c.global, 0));
        assert_eq!(
            (r.receive_size, r.send_buf_size, r.recv_buf_size),
            (8192, 1 << 20, 1 << 20)
        );
        assert_eq!((r.measure_cpu, r.test_length, r.recv_alignment), (1, 7, 8));
        assert_eq!(r.cpu_bind, -1);
    }
}
