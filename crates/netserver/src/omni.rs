//! netserver's half of an omni test: validate the request, set up the data
//! socket, answer with its port and sizes, run the data path, send results.

use super::allow::AllowList;
use super::limits::Limits;
use super::omni_checks::{client_data_addr, refuse, validate, Refusal};
use super::omni_results::{self, DataOutcome, Measured};
use super::omni_sizes::{plan, Plan};
use super::omni_socket::data_socket_options;
use super::phase::{accept_within, Caller, Phase};
use netperf_data::engine::pacing::Pacer;
use netperf_data::engine::ring::BufferRing;
use netperf_data::engine::sequence::Sequence;

use netperf_data::engine::stop_flag::StopFlag;
use netperf_data::engine::{self, Counters, DataError};
use netperf_data::measure::cpu;
use netperf_data::net::channel::{Channel, ChannelError};
use netperf_data::net::interface::{egress_interface, InterfaceCounters};
use netperf_data::net::port_range::{open_in_range, PortRange, RangeError};
use netperf_data::net::socket::{self, SocketOptions};
use netperf_data::spec::Protocol;
use netperf_wire::extension::Extension;
use netperf_wire::omni::{self, OmniRequest, OmniResponse};
use netperf_wire::system_facts::InterfaceDelta;
use netperf_wire::{kind, Message, PAD_TIME};
use socket2::{SockAddr, Socket};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

fn local_bind_addr(r: &OmniRequest) -> SocketAddr {
    let port = r.data_port as u16;
    let ip: IpAddr = if r.ipfamily == omni::NF_INET6 {
        IpAddr::V6(Ipv6Addr::from(r.netserver_ip))
    } else {
        IpAddr::V4(Ipv4Addr::new(
            r.netserver_ip[0],
            r.netserver_ip[1],
            r.netserver_ip[2],
            r.netserver_ip[3],
        ))
    };
    SocketAddr::new(ip, port)
}

/// The response refusing a test: `errno` and nothing else.
fn refusal_response(errno: i32) -> Message {
    OmniResponse {
        serv_errno: errno,
        ..Default::default()
    }
    .encode()
}

/// Serve one DO_OMNI request. Errors returned are control-connection
/// failures; a refused request is answered and logged here.
pub fn serve(chan: &mut Channel, m: &Message, caller: Caller) -> Result<(), ChannelError> {
    let (r, opts, peer) = (OmniRequest::decode(m), caller.opts, caller.peer);
    // Every check before anything is opened; the first failure is answered.
    let checked = validate(&r, &opts.limits).and_then(|protocol| {
        let ext = Extension::decode(m)
            .map_err(|reason| refuse(libc::EINVAL, reason))?
            .unwrap_or_default();
        super::flows::check(&r, protocol, &ext, &opts.limits)?;
        super::omni_checks::fast_paths(&r, protocol, &ext)?;
        let fill = super::fill::read(&r.fill_file, opts.fill_dir.as_deref())?;
        let client = client_data_addr(&r, protocol, peer, &opts.allow)?;
        Ok((protocol, ext, fill, client))
    });
    let (protocol, ext, fill, client) = match checked {
        Ok(v) => v,
        Err(refusal) => {
            caller.log(&format!("refused omni request: {}", refusal.reason));
            return chan.send(&refusal_response(refusal.errno));
        }
    };
    let test = Test {
        r: &r,
        protocol,
        ext: &ext,
        limits: &opts.limits,
        allow: &opts.allow,
        client,
        refused_sources: AtomicU64::new(0),
    };
    match setup_and_run(chan, caller, &test, fill.as_deref())? {
        Ok(summary) => caller.log(&summary),
        Err(refusal) => caller.log(&format!("omni test failed: {}", refusal.reason)),
    }
    Ok(())
}

/// The environment variable of the test mode that leaves every Nth UDP
/// request unanswered, so that tests can exercise netperf's -e recovery
/// without a firewall. Never set in normal use.
pub const DROP_EVERY_ENV: &str = "NETPERF_NG_TEST_DROP_EVERY";

pub(crate) fn test_drop_every() -> Option<u64> {
    static DROP_EVERY: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *DROP_EVERY.get_or_init(|| {
        std::env::var(DROP_EVERY_ENV)
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|n| *n > 0)
    })
}

/// A validated request and the bounds it runs under.
struct Test<'a> {
    r: &'a OmniRequest,
    protocol: Protocol,
    ext: &'a Extension,
    limits: &'a Limits,
    allow: &'a AllowList,
    /// The client's data address (`client_data_addr`).
    client: SocketAddr,
    /// UDP requests dropped for coming from another address.
    refused_sources: AtomicU64,
}

impl Test<'_> {
    /// The test sends data from netserver.
    fn xmit(&self) -> bool {
        self.r.direction & omni::DIR_XMIT != 0
    }

    /// The test receives data at netserver.
    fn recv(&self) -> bool {
        self.r.direction & omni::DIR_RECV != 0
    }

    fn measures_cpu(&self) -> bool {
        self.r.flags & omni::flag::MEASURE_CPU != 0
    }
}

/// Set up, answer, run and report. The outer Result is the control channel;
/// the inner one a test that could not be run (already answered).
fn setup_and_run(
    chan: &mut Channel,
    caller: Caller,
    test: &Test,
    fill: Option<&[u8]>,
) -> Result<Result<String, Refusal>, ChannelError> {
    let sopts = data_socket_options(test.r, test.protocol, test.ext);
    let data = match open_data_socket(test, caller.opts.data_ports, &sopts) {
        Ok(data) => data,
        Err(refusal) => {
            chan.send(&refusal_response(refusal.errno))?;
            return Ok(Err(refusal));
        }
    };
    let mut accepted = accept_response(test.r, &data, sopts.nodelay).encode();
    if test.ext.is_used() {
        netperf_wire::extension::acknowledge(&mut accepted);
    }
    let clock = Clock::of(test);
    // Buffers are made before the answer, which starts the clock.
    let (mut send_ring, mut recv_ring) = rings(test, &data.plan, fill);
    let counters_before = interface_counters_before(test);
    let mut seq = match (test.ext, test.protocol) {
        (e, Protocol::Udp) if e.echo_sequence => Some(Sequence::echoing()),
        (e, Protocol::Udp) if e.sequence => Some(Sequence::new()),
        _ => None,
    };
    let phase = caller.phase("omni", kind::OMNI_RESPONSE, test.measures_cpu());
    phase.answer(chan, &accepted)?;
    // A client that closes the control connection or goes silent mid-test
    // has vanished: stop the test, which nothing else would end if it is
    // counted (UDP, TCP_CRR) or long.
    let (listener, stop) = (&data.socket, &phase.stop);
    let (fd, limit, pad) = (listener.as_raw_fd(), clock.limit, clock.pad);
    // A fast path (--gso, --gro, --skip-rx-copy) is a data phase of its
    // own: the plain one, its loops inlined, stays as it was
    // (bench/callgrind: a branch to the fast path inside it cost UDP_RR 8 to
    // 11 instructions a transaction).
    let fast = engine::fast_paths::pick(
        test.protocol == Protocol::Udp,
        test.ext,
        test.xmit(),
        test.recv(),
    );
    macro_rules! data_phase {
        ($run:expr) => {
            phase.measured(fd, limit, pad, || {
                let path = DataPath {
                    send_ring: &mut send_ring,
                    recv_ring: &mut recv_ring,
                    stop,
                    units: clock.units,
                    seq: seq.as_mut(),
                };
                run_data(listener, test, path, $run)
            })
        };
    }
    let served = match fast {
        None => data_phase!(run_plain),
        Some(fast) => data_phase!(|fd, test: &Test, path| run_fast(fd, test, path, fast)),
    };
    log_refused_sources(&phase, test);
    let interface_delta = counters_before.map(|before| interface_delta(&before));
    let mut outcome = match served.value {
        Ok(outcome) => outcome,
        Err(e) => return send_failure(chan, e).map(Err),
    };
    let counters = outcome.counters;
    let tcp_series = outcome.tcp_series.take();
    let measured = Measured {
        outcome,
        buffers: (data.lss, data.lsr),
        elapsed: served.elapsed,
        usage: served.usage,
        seq: seq.as_ref(),
        interface_delta,
    };
    let results = omni_results::message(test.r, test.ext, &test.client, measured);
    chan.send(&results)?;
    omni_results::send_tcp_series(chan, test.ext, tcp_series)?;
    Ok(Ok(summary(test, served.elapsed, &counters)))
}

/// Tell the client its test failed in the data phase: the refusal logged.
fn send_failure(chan: &mut Channel, e: DataError) -> Result<Refusal, ChannelError> {
    let (message, errno) = omni_results::failure(&e);
    chan.send(&message)?;
    Ok(refuse(errno, e.to_string()))
}

/// A test's data socket (a TCP listener, or the UDP socket the test runs
/// on), the buffer sizes the kernel gave it, and the sizes netserver
/// settled on.
struct DataSocket {
    socket: Socket,
    /// Its send buffer's size at set-up.
    lss: i32,
    /// Its receive buffer's size at set-up.
    lsr: i32,
    plan: Plan,
}

/// Open the test's data socket and settle its sizes. With --data-ports,
/// a free port of the range or a refusal: never an ephemeral port a Service
/// or firewall would not carry.
fn open_data_socket(
    test: &Test,
    data_ports: Option<PortRange>,
    sopts: &SocketOptions,
) -> Result<DataSocket, Refusal> {
    let bind_addr = local_bind_addr(test.r);
    let open = |port: u16| -> std::io::Result<Socket> {
        let mut addr = bind_addr;
        addr.set_port(port);
        let s = socket::create(&addr, sopts)?;
        s.bind(&SockAddr::from(addr))?;
        if test.protocol == Protocol::Tcp {
            s.listen(super::flows::backlog(test.ext))?;
        }
        Ok(s)
    };
    let socket = open_in_range(data_ports, bind_addr.port(), open).map_err(|e| {
        let reason = match &e {
            RangeError::Open(io) => format!("cannot open a data socket on {bind_addr}: {io}"),
            other => other.to_string(),
        };
        refuse(e.errno(), reason)
    })?;
    let (lss, lsr) = socket::buffer_sizes(&socket);
    let plan = plan(test.r, test.protocol, lss, lsr, test.limits)?;
    Ok(DataSocket {
        socket,
        lss,
        lsr,
        plan,
    })
}

/// The response accepting a test: the data port, the sizes settled on, and
/// this host's CPU rate when the client measures the CPU here.
fn accept_response(r: &OmniRequest, data: &DataSocket, nodelay: bool) -> OmniResponse {
    let measure_cpu = r.flags & omni::flag::MEASURE_CPU != 0;
    let data_port = socket::local_addr(&data.socket).map_or(0, |a| a.port());
    let mut flags = 0;
    if measure_cpu {
        flags |= omni::flag::MEASURE_CPU;
    }
    if nodelay {
        flags |= omni::flag::NO_DELAY;
    }
    let p = &data.plan;
    OmniResponse {
        serv_errno: 0,
        recv_buf_size: data.lsr,
        receive_size: p.recv_size,
        recv_width: p.recv_width as i32,
        send_buf_size: data.lss,
        send_size: p.send_size,
        send_width: p.send_width as i32,
        flags,
        cpu_rate: if measure_cpu {
            cpu::calibrate_rate()
        } else {
            0.0
        },
        data_port: u32::from(data_port),
        socket_prio: r.socket_prio,
        socket_tos: r.socket_tos,
        ..Default::default()
    }
}

/// How a test is ended: by its clock (`limit`, which includes `pad`
/// seconds), or after `units` when it is counted rather than timed.
struct Clock {
    pad: u32,
    units: Option<u64>,
    limit: Option<Duration>,
}

impl Clock {
    fn of(test: &Test) -> Clock {
        let r = test.r;
        let xmit_only = test.xmit() && !test.recv();
        let pad = if xmit_only { 0 } else { PAD_TIME };
        Clock {
            pad,
            units: (r.test_length < 0).then(|| u64::from(r.test_length.unsigned_abs())),
            limit: Some(test.limits.test_clock(r.test_length, pad)),
        }
    }
}

/// The test's send and receive rings, the send ring filled from the fill
/// file if there is one. A direction the test does not use gets empty
/// buffers.
fn rings(test: &Test, p: &Plan, fill: Option<&[u8]>) -> (BufferRing, BufferRing) {
    let r = test.r;
    let mut send_ring = BufferRing::new(
        p.send_width,
        if test.xmit() {
            p.send_size.max(0) as usize
        } else {
            0
        },
        r.send_alignment,
        r.send_offset,
    );
    if let Some(data) = fill {
        send_ring.fill_continuous(data);
    }
    let recv_ring = BufferRing::new(
        p.recv_width,
        if test.recv() {
            p.recv_size.max(0) as usize
        } else {
            0
        },
        r.recv_alignment,
        r.recv_offset,
    );
    (send_ring, recv_ring)
}

/// The packet counters, before the test, of the interface this host reaches
/// the client by, when the client asked for them.
fn interface_counters_before(test: &Test) -> Option<InterfaceCounters> {
    test.ext
        .interface_counters
        .then(|| egress_interface(&test.client))
        .flatten()
        .map(|name| InterfaceCounters::read(&name))
}

/// What the interface counted since `before`, as the results carry it.
fn interface_delta(before: &InterfaceCounters) -> InterfaceDelta {
    let d = before.delta(&InterfaceCounters::read(&before.name));
    [d.tx_packets, d.rx_packets, d.tx_bytes, d.rx_bytes]
}

/// Log the UDP requests dropped for coming from another address than the
/// client's, if there were any.
fn log_refused_sources(phase: &Phase, test: &Test) {
    let refused_sources = test.refused_sources.load(Ordering::Relaxed);
    if refused_sources > 0 {
        phase.log(&format!(
            "dropped {} UDP requests from addresses other than the client's {} (netserver --allow can permit their network)",
            refused_sources,
            test.client.ip()
        ));
    }
}

/// The one-line log summary of a test served.
fn summary(test: &Test, elapsed: f64, counters: &Counters) -> String {
    format!(
        "omni test: protocol {} direction {:#x} elapsed {:.2}s sent {} bytes received {} bytes transactions {}",
        if test.protocol == Protocol::Tcp { "TCP" } else { "UDP" },
        test.r.direction,
        elapsed,
        counters.bytes_sent,
        counters.bytes_received,
        counters.transactions
    )
}

/// How long a blocked accept (and an untimed test's blocked call) waits
/// before looking at the stop flag again.
const ACCEPT_POLL: Duration = Duration::from_millis(250);

/// Accept a test's data connection from an allowed client, until `stop` or
/// the accept timeout. The listener wakes every ACCEPT_POLL to look.
fn accept_data(
    listener: &Socket,
    stop: &StopFlag,
    test: &Test,
) -> Result<Option<Socket>, DataError> {
    socket::set_timeouts(listener, Some(ACCEPT_POLL)).map_err(DataError::Connect)?;
    // Dropped unanswered: a connection not from a network --allow names.
    let allowed = |from: &SockAddr| from.as_socket().is_some_and(|a| test.allow.permits(a.ip()));
    let accepted = accept_within(listener, stop, test.limits, allowed);
    let Some(s) = accepted.map_err(DataError::Connect)? else {
        return Ok(None);
    };
    // A timed test's calls are ended by its timer's signal, not by
    // timeouts (accepted sockets inherit the listener's).
    let timeout = (test.r.test_length <= 0).then_some(ACCEPT_POLL);
    socket::set_timeouts(&s, timeout).map_err(DataError::Connect)?;
    Ok(Some(s))
}

/// Why a stream test ended without its data connection (ETIMEDOUT for the
/// client, which netperf prints as its remote error).
pub(crate) fn no_data_connection() -> std::io::Error {
    std::io::Error::from_raw_os_error(libc::ETIMEDOUT)
}

/// What a test's data loop runs with: its rings, its stop flag, its count
/// (a test of so many units rather than a timed one) and its datagram
/// sequence.
struct DataPath<'a> {
    send_ring: &'a mut BufferRing,
    recv_ring: &'a mut BufferRing,
    stop: &'a StopFlag,
    units: Option<u64>,
    seq: Option<&'a mut Sequence>,
}

/// The data phase on `listener`: a TCP connection test's connections, or
/// the test's one data connection (TCP) or socket (UDP).
fn run_data(
    listener: &Socket,
    test: &Test,
    path: DataPath,
    run: impl FnOnce(RawFd, &Test, DataPath) -> Result<Counters, DataError>,
) -> Result<DataOutcome, DataError> {
    let timed = test.r.test_length > 0;
    // A timed test is ended by the timer's signal. Otherwise blocking calls
    // wake this often to look at the stop flag; accepted sockets inherit the
    // timeouts from the listener.
    if !timed {
        socket::set_timeouts(listener, Some(ACCEPT_POLL)).map_err(DataError::Connect)?;
    }
    if test.ext.flows > 0 {
        let client_ip = test.client.ip();
        let udp = test.protocol == Protocol::Udp;
        let permit = |ip: IpAddr| test.allow.permits(ip) && (!udp || ip == client_ip);
        let flows = super::flows::FlowsTest {
            r: test.r,
            ext: test.ext,
            protocol: test.protocol,
            send_size: path.send_ring.size() as i32,
            recv_size: path.recv_ring.size() as i32,
            permit: &permit,
        };
        return super::flows::serve(listener, &flows, path.stop);
    }
    let connection_test = test.r.flags & omni::flag::CONNECT_TEST != 0;
    if test.protocol == Protocol::Tcp && connection_test {
        return serve_connections(listener, test, path);
    }
    let owned;
    let data: &Socket = if test.protocol == Protocol::Tcp {
        match accept_data(listener, path.stop, test)? {
            Some(s) => {
                owned = s;
                &owned
            }
            // No data connection before the test's clock, the accept
            // timeout or the client's going: a failure, as stock netserver's
            // interrupted accept is, never a result of zeros that netperf
            // would print as a rate of 0.00.
            None => return Err(DataError::Connect(no_data_connection())),
        }
    } else {
        listener
    };
    // Read while the connection lives: the client's close at the end may
    // tear a subflow down before finish() reads them.
    let watch = test
        .ext
        .mptcp
        .then(|| netperf_data::net::mptcp::Watch::start(data.as_raw_fd()));
    // The client's -D interval, on a thread of its own (TCP only).
    let tcp_series = (test.protocol == Protocol::Tcp)
        .then_some(test.ext.tcp_info_ms)
        .flatten()
        .map(|ms| {
            let every = (ms > 0).then(|| Duration::from_millis(u64::from(ms)));
            netperf_data::measure::tcp_series::TcpSampler::start(data.as_raw_fd(), every)
        });
    let counters = run(data.as_raw_fd(), test, path)?;
    let mut outcome = finish(data, test.protocol, counters);
    outcome.mptcp_subflows = watch.and_then(|w| w.finish()).map(|s| s.total);
    outcome.tcp_series = tcp_series.map(|s| s.finish());
    Ok(outcome)
}

/// A TCP connection test (TCP_CRR, TCP_CC): a connection accepted, served
/// and closed per transaction.
fn serve_connections(
    listener: &Socket,
    test: &Test,
    path: DataPath,
) -> Result<DataOutcome, DataError> {
    let permit = |ip| test.allow.permits(ip);
    let (send, recv) = (path.send_ring, path.recv_ring);
    let (c, bufs) = engine::connect::server(listener, send, recv, path.stop, path.units, permit)?;
    Ok(DataOutcome {
        counters: c,
        end_buffers: bufs,
        retrans: -1,
        cong: socket::congestion_control(listener),
        // A connection per transaction: no one connection's subflows.
        mptcp_subflows: None,
        tcp_series: None,
    })
}

/// The plain loop's data phase: one run of the loop, or two around the
/// test mode's stall. The loop is called from this one place either way,
/// so that it is laid out as it always was (bench/callgrind counted up to
/// 10 instructions more per UDP_RR transaction with a second call site).
fn run_plain(fd: RawFd, test: &Test, path: DataPath) -> Result<Counters, DataError> {
    let pause = crate::test_pause::test_pause().filter(|_| test.xmit() && test.recv());
    let DataPath {
        send_ring,
        recv_ring,
        stop,
        units,
        mut seq,
    } = path;
    let mut runs = crate::test_pause::Runs::new(pause, units);
    let mut counters = Counters::default();
    while let Some(units) = runs.next(&counters, stop) {
        let path = DataPath {
            send_ring: &mut *send_ring,
            recv_ring: &mut *recv_ring,
            stop,
            units,
            seq: seq.as_deref_mut(),
        };
        counters.add(&run_loop(fd, test, path)?);
    }
    Ok(counters)
}

/// Run on `fd` the engine loop of the test's direction.
fn run_loop(fd: RawFd, test: &Test, path: DataPath) -> Result<Counters, DataError> {
    let (udp, ext) = (test.protocol == Protocol::Udp, test.ext);
    let batch =
        (udp && ext.mmsg_batch > 1 && path.seq.is_none()).then_some(ext.mmsg_batch as usize);
    match (test.xmit(), test.recv()) {
        (true, true) => serve_requests(fd, test, path, batch),
        (false, true) => receive(fd, path, batch),
        (true, false) => send(fd, test, path, batch),
        (false, false) => Ok(Counters::default()),
    }
}

/// Run on `fd` the fast-path loop `fast` picked for the test's direction.
fn run_fast(
    fd: RawFd,
    test: &Test,
    path: DataPath,
    fast: engine::fast_paths::Loop,
) -> Result<Counters, DataError> {
    let peer = (test.protocol == Protocol::Udp).then(|| SockAddr::from(test.client));
    let (send, recv) = (path.send_ring, &*path.recv_ring);
    fast.run(
        fd,
        send,
        recv,
        path.stop,
        path.units,
        peer.as_ref(),
        path.seq,
    )
}

/// Answer requests: on the TCP connection, or (UDP) `batch` datagrams a
/// call or one at a time, each answered only to an address `permit`s.
fn serve_requests(
    fd: RawFd,
    test: &Test,
    path: DataPath,
    batch: Option<usize>,
) -> Result<Counters, DataError> {
    let (recv_ring, send_ring, stop, units) =
        (path.recv_ring, path.send_ring, path.stop, path.units);
    let client = engine::io::SourceMatch::new(test.client.ip());
    Ok(match (test.protocol, batch) {
        (Protocol::Tcp, _) => engine::rr::server_stream(fd, recv_ring, send_ring, stop, units)?,
        (Protocol::Udp, Some(n)) => {
            let permit = source_permit(test, &client);
            engine::mmsg::rr_server_batched(fd, recv_ring, send_ring, n, stop, units, permit)?.0
        }
        (Protocol::Udp, None) => engine::rr::server_datagram(
            fd,
            recv_ring,
            send_ring,
            stop,
            units,
            test.r.flags & omni::flag::USE_CONNECTED != 0,
            path.seq,
            test_drop_every(),
            source_permit(test, &client),
        )?,
    })
}

/// Whether a request from `from` is answered: only one from the client's
/// data address (checked at set-up) or an --allow network, never a spoofed
/// source. Those refused are counted in `test.refused_sources`.
/// The closure holds `client` by reference, as the loop's own frame keeps
/// it: held by value it cost the UDP_RR loop about 3 instructions a
/// transaction (bench/callgrind).
fn source_permit<'a>(
    test: &'a Test,
    client: &'a engine::io::SourceMatch,
) -> impl Fn(&libc::sockaddr_storage) -> bool + 'a {
    move |from: &libc::sockaddr_storage| {
        client.matches(from)
            || engine::io::source_ip(from)
                .is_some_and(|ip| !test.allow.is_empty() && test.allow.permits(ip))
            || {
                test.refused_sources.fetch_add(1, Ordering::Relaxed);
                false
            }
    }
}

/// Receive a stream, `batch` datagrams a call or one call at a time.
fn receive(fd: RawFd, path: DataPath, batch: Option<usize>) -> Result<Counters, DataError> {
    let (ring, stop, units) = (path.recv_ring, path.stop, path.units);
    Ok(match batch {
        Some(n) => engine::mmsg::stream_recv_batched(fd, ring, n, stop, units)?.0,
        None => engine::stream::recv(fd, ring, stop, units, None, path.seq)?,
    })
}

/// Send a stream to the client: `batch` datagrams a call, with
/// MSG_ZEROCOPY (TCP) when asked, or one paced call at a time.
fn send(
    fd: RawFd,
    test: &Test,
    path: DataPath,
    batch: Option<usize>,
) -> Result<Counters, DataError> {
    let (ring, stop, units) = (path.send_ring, path.stop, path.units);
    let udp = test.protocol == Protocol::Udp;
    let peer = || SockAddr::from(test.client);
    Ok(match (batch, test.ext.zerocopy && !udp) {
        (Some(n), _) => {
            engine::mmsg::stream_send_batched(fd, ring, n, stop, units, Some(&peer()))?.0
        }
        (None, true) => engine::zerocopy::send(fd, ring, stop, units)?,
        (None, false) => engine::stream::send(
            fd,
            ring,
            stop,
            units,
            udp.then(peer).as_ref(),
            None,
            path.seq,
            Pacer::new(test.r.interval_usecs, test.r.interval_burst).as_mut(),
        )?,
    })
}

/// The data socket at the test's end: its buffer sizes, and TCP's
/// retransmissions and congestion control (its tcp_info dumped when
/// debugging). A TCP sender ends with a half-close so the client sees the
/// end of data.
fn finish(data: &Socket, protocol: Protocol, counters: Counters) -> DataOutcome {
    let bufs = socket::buffer_sizes(data);
    let (retrans, cong) = match protocol {
        Protocol::Tcp => {
            let info = socket::tcp_info(data.as_raw_fd());
            netperf_data::measure::tcp_info::dump(info.as_ref(), 0);
            (
                socket::retransmissions(info.as_ref()),
                socket::congestion_control(data),
            )
        }
        Protocol::Udp => (-1, String::new()),
    };
    if protocol == Protocol::Tcp {
        let _ = data.shutdown(std::net::Shutdown::Write);
    }
    DataOutcome {
        counters,
        end_buffers: Some(bufs),
        retrans,
        cong,
        mptcp_subflows: None,
        tcp_series: None,
    }
}
