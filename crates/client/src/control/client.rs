//! The netperf side of a test: establish the control connection, ask
//! netserver for its half (omni request), run our half of the data path,
//! collect netserver's results, and return what both ends measured.

use super::data::finish_data;
pub use super::error::ClientError;
use super::local_end::{
    clock_and_count, debug_data_phase, receive_pad, tcp_end_figures, LocalData, Recorders, Watch,
    Watched,
};
use super::request::build_request;
pub use super::request::RunOptions;
use crate::cli::config::GlobalOptions;
use netperf_data::engine::{DataError, Histogram};
use netperf_data::measure::outcome::{CpuUsage, Outcome, SideStats};
use netperf_data::net::channel::{Channel, ChannelError, RESPONSE_WAIT};
use netperf_data::net::resolve::Family;
use netperf_data::net::resolve::{self, af_text};
use netperf_data::net::socket::{self, SocketOptions};
use netperf_data::spec::{Protocol, TestSpec};
use netperf_wire::omni::{self, OmniResponse, OmniResults};
use netperf_wire::{self as wire, kind};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// How long connecting the control or data connection may take.
const CONNECT_WAIT: Duration = Duration::from_secs(30);

fn remote_error(errno: i32) -> ClientError {
    ClientError::Remote {
        errno,
        text: netperf_data::net::strerror(errno),
    }
}

/// A netserver's refusal to open the data socket, with what a netserver
/// with `--data-ports` means by the two errnos it refuses with, and ours
/// by the two it refuses too many flows with.
fn data_socket_refused(errno: i32, flows: u32) -> ClientError {
    let hint = match (errno, flows > 0) {
        (libc::EADDRINUSE, _) => {
            " (the data port is taken; with netserver --data-ports, every port of its range)"
        }
        (libc::EADDRNOTAVAIL, _) => {
            " (or, with netserver --data-ports, -P's remote port is outside its range)"
        }
        (libc::EMFILE, true) => {
            " (--flows: more sockets than the netserver's open-file limit allows; ask for fewer flows, or raise its hard limit: ulimit -Hn)"
        }
        (libc::EUSERS, true) => {
            " (--flows: more flows than the netserver's --max-connections; ask for fewer, or start it with a larger --max-connections)"
        }
        _ => "",
    };
    ClientError::Remote {
        errno,
        text: format!("{}{hint}", netperf_data::net::strerror(errno)),
    }
}

/// Open the control connection as netperf's establish_control does.
pub fn establish(g: &GlobalOptions) -> Result<Channel, ClientError> {
    establish_within(g, CONNECT_WAIT)
}

/// `establish`, each connect attempt bounded by `wait`.
pub fn establish_within(g: &GlobalOptions, wait: Duration) -> Result<Channel, ClientError> {
    let port: u16 = g
        .port
        .parse()
        .map_err(|_| ClientError::Setup(format!("invalid netserver port '{}'", g.port)))?;
    let addrs = resolve::resolve(&g.host, None, g.host_family, false)?;
    let local_port: u16 = g.local_port.as_deref().unwrap_or("0").parse().unwrap_or(0);
    let local = match &g.local_host {
        Some(h) => Some(resolve::resolve(h, None, g.local_family, false)?[0]),
        None => None,
    };
    let mut last_errno = 0;
    for mut addr in addrs.iter().copied() {
        addr.set_port(port);
        let attempt = || -> std::io::Result<TcpStream> {
            let s = socket::create(
                &addr,
                &SocketOptions {
                    routing_allowed: true,
                    ..Default::default()
                },
            )?;
            if local.is_some() || local_port != 0 {
                let mut l = local.unwrap_or_else(|| resolve::unspecified_like(&addr));
                l.set_port(local_port);
                socket::bind(&s, &l)?;
            }
            socket::connect_timeout(&s, &addr, wait)?;
            Ok(s.into())
        };
        let tried = attempt();
        if let Err(e) = &tried {
            // A connect that timed out has no OS error of its own.
            last_errno = e.raw_os_error().unwrap_or(match e.kind() {
                std::io::ErrorKind::TimedOut => libc::ETIMEDOUT,
                _ => libc::EIO,
            });
        }
        if let (Err(_), true) = (&tried, g.debug > 0) {
            // netperf -d's lines for a failed attempt.
            let errno = last_errno;
            eprintln!(
                "establish_control: connect failed, errno {errno} {}\n    trying next address combination",
                netperf_data::net::strerror(errno)
            );
        }
        if let Ok(stream) = tried {
            let mut chan = Channel::new(stream);
            if let Some(phrase) = &g.passphrase {
                chan.send(&wire::encode_passphrase(phrase))?;
            }
            return Ok(chan);
        }
    }
    Err(ClientError::NoServer(
        format!(
        "establish control: are you sure there is a netserver listening on {host} at port {port}?\n\
         establish_control could not establish the control connection from {local} port {local_port} \
         address family {local_family} to {host} port {port} address family {family}",
        host = g.host,
        port = g.port,
        local = g.local_host.as_deref().unwrap_or("0.0.0.0"),
        local_port = g.local_port.as_deref().unwrap_or("0"),
        local_family = resolve::family_name(g.local_family),
        family = addrs.first().map_or("AF_UNSPEC", af_text),
    ),
        last_errno,
    ))
}

/// REM_CPU: ask netserver for its CPU rate. Returns (rate, cpus).
pub fn remote_cpu_rate(chan: &mut Channel) -> Result<(f32, u32), ClientError> {
    chan.send(&wire::encode_cpu_calibrate_request())?;
    let m = chan.recv(RESPONSE_WAIT)?;
    if m.serv_errno() != 0 {
        return Err(remote_error(m.serv_errno()));
    }
    Ok(wire::decode_cpu_calibrate_response(&m))
}

/// Addresses of the data connection, for the banner.
#[derive(Debug, Clone)]
pub struct Endpoints {
    pub local: SocketAddr,
    pub remote: SocketAddr,
}

/// Resolve where the data connection goes, and from where.
pub fn data_endpoints(spec: &TestSpec) -> Result<(SocketAddr, Option<SocketAddr>), ClientError> {
    let datagram = spec.protocol == Protocol::Udp;
    let data_error = |port: u16| {
        move |e: resolve::ResolveError| ClientError::DataResolve {
            error: Box::new(e),
            port,
        }
    };
    let remote = resolve::resolve(&spec.data_host, None, spec.data_family, datagram)
        .map_err(data_error(spec.remote_data_port))?[0];
    let local = match &spec.data_local {
        Some(h) => {
            // In the family the test gave its source, as netperf resolves
            // it: `-L 0.0.0.0,6` fails there as here.
            let fam = match (spec.data_local_family, remote) {
                (Family::Unspec, SocketAddr::V4(_)) => Family::Inet,
                (Family::Unspec, SocketAddr::V6(_)) => Family::Inet6,
                (given, _) => given,
            };
            let mut l = resolve::resolve(h, None, fam, datagram)
                .map_err(data_error(spec.local_data_port))?[0];
            l.set_port(spec.local_data_port);
            Some(l)
        }
        None if spec.local_data_port != 0 || datagram || spec.local_data_ports.is_some() => {
            let mut l = resolve::unspecified_like(&remote);
            l.set_port(spec.local_data_port);
            Some(l)
        }
        None => None,
    };
    Ok((remote, local))
}

/// What the netperf side learned about one iteration beyond the Outcome.
pub struct Iteration {
    pub outcome: Outcome,
    pub endpoints: Endpoints,
    /// The netserver's results as sent (its congestion control, interface).
    pub results: OmniResults,
    /// Our netserver's OS and CPU facts, when asked for and sent.
    pub remote_system: Option<netperf_wire::system_facts::SystemFacts>,
    /// Datagram accounting of each receiving end (`--seq`).
    pub local_datagrams: Option<netperf_wire::system_facts::DatagramCounts>,
    pub remote_datagrams: Option<netperf_wire::system_facts::DatagramCounts>,
    /// Our netserver's interface counters over its data phase.
    pub remote_interface_delta: Option<netperf_wire::system_facts::InterfaceDelta>,
    /// Interim results (-D) printed during the data phase.
    pub interims: Vec<crate::report::interim::Interim>,
    /// The local data socket's congestion control algorithm ("" for UDP).
    pub local_cong_control: String,
    /// The local interface's counters over the data phase, when asked for.
    pub interface_delta: Option<netperf_data::net::interface::InterfaceCounters>,
    /// The recorder behind `outcome.histogram`, when kept: its HDR half is
    /// what `--latency-histogram` writes; iterations of `-i` merge it.
    pub histogram: Option<Histogram>,
    /// Wall-clock time the data phase started (the latency log's StartTime).
    pub data_started: std::time::SystemTime,
    /// What each flow of a many-flow test (`--flows`) did.
    pub flows: Option<netperf_data::measure::flows::FlowsReport>,
    /// An open-loop test's schedule and two latencies (`--rate`).
    pub open_loop: Option<netperf_data::measure::open_loop::OpenLoopReport>,
}

/// Run one iteration of `spec` over an established control connection, or
/// with none (`-N`): then the data connection goes straight to `-P`'s port
/// or the inetd service that fits the test (discard, chargen, echo), and
/// only the local end is measured, as netperf does.
pub fn run_iteration(
    mut chan: Option<&mut Channel>,
    spec: &TestSpec,
    run: &RunOptions,
    explicit_remote: bool,
) -> Result<Iteration, ClientError> {
    let no_control = chan.is_none();
    let control_fd = chan.as_deref().map_or(-1, |c| c.as_raw_fd());
    let (sock, mut local) = LocalData::open(spec, run)?;
    let response = aim(chan.as_deref_mut(), spec, run, &mut local, explicit_remote)?;

    if run.wait_secs > 0 {
        std::thread::sleep(Duration::from_secs(u64::from(run.wait_secs)));
    }
    let (seconds, units) = clock_and_count(spec.limit);
    let mut rec = Recorders::new(spec);
    // One TCP connection that lives through the data phase (the socket
    // comes back from it): its TCP_INFO goes into each -D interval.
    let tcp_fd = super::remote_tcp::single_tcp_connection(spec)
        .then(|| std::os::fd::AsRawFd::as_raw_fd(&sock));
    let pad = receive_pad(spec, !no_control);
    let watch = Watch::start(run, seconds.map(|s| s + pad), units, control_fd, tcp_fd);
    let (counters, mss_seen, data_sock) = local.move_data(sock, spec, run, &watch, &mut rec)?;
    let ended = rec.data_ended.unwrap_or_else(Instant::now);
    let mut elapsed = ended.duration_since(watch.started).as_secs_f64();
    if watch.timer.fired() {
        elapsed = (elapsed - pad.as_secs_f64()).max(0.0);
    }
    debug_data_phase(run, &local.dest, elapsed, &counters);
    // Stopped before its own end (a signal, netagg's coordinator, -l 0):
    // the far end's half may still be running and must be told.
    let cut_short = watch.stop.is_set() && !watch.timer.fired();
    let by_signal = netperf_data::engine::signals::stop_requested();
    if by_signal {
        // Our netserver ends its half when it sees the control connection
        // half-closed; a stock one ignores it until after its results.
        // netperf sends nothing more after a stop signal.
        if let Some(chan) = chan.as_deref() {
            chan.shutdown_write();
        }
    }
    let (watched, cpu) = watch.finish(spec, &counters, ended);

    let mut stats = local.side_stats(spec, elapsed, cpu, &counters);
    let (cong_control, mss) = match (&data_sock, spec.protocol) {
        (Some(s), Protocol::Tcp) => tcp_end_figures(s, spec, run.debug, &mut stats, mss_seen),
        // TCP_CRR's connections are gone: their counts were summed as each
        // closed (stock reads whichever is left open, -1 when none is).
        (None, Protocol::Tcp) if spec.connection => {
            stats.retransmits =
                i32::try_from(counters.connection_retransmissions).unwrap_or(i32::MAX);
            (String::new(), mss_seen)
        }
        _ => (String::new(), mss_seen),
    };
    // An inetd chargen never stops sending: just close on it.
    if let (Some(s), false) = (&data_sock, no_control) {
        finish_data(s, spec, &local.dest, cut_short);
    }
    drop(data_sock);

    let mut series = None;
    let mut theirs = match (chan, &response) {
        (Some(chan), Some((response, series_due))) => {
            let wait = match by_signal {
                true => STOPPED_RESULTS_WAIT,
                false => {
                    RESPONSE_WAIT
                        + seconds.unwrap_or_default()
                        + Duration::from_secs(u64::from(netperf_wire::PAD_TIME))
                }
            };
            let theirs = await_results(chan, spec, response, run.remote_cpu, wait, by_signal)?;
            // Our netserver sends its TCP_INFO series after results only.
            if *series_due && theirs.1.is_some() {
                series = Some(super::remote_tcp::read(chan)?);
            }
            theirs
        }
        _ => (OmniResults::default(), None, assumed_remote(&stats)),
    };
    let mut watched = watched;
    if let Some(s) = &series {
        super::remote_tcp::attach(&mut watched.interims, s);
        theirs.2.tcp_info = s.whole.map(|w| w.tcp);
    }
    if let Some(opts) = &run.interim {
        super::remote_tcp::print_after(opts, &watched.interims, series.as_ref());
    }
    let ours = Ours {
        stats,
        mss,
        cong_control,
        watched,
        endpoints: local.endpoints(),
    };
    Ok(assemble(spec, ours, rec, theirs))
}

/// netperf's TCP_MSS test: netserver is asked for its half of a
/// TCP_STREAM, the data connection is opened and closed at once (netserver
/// sees it end with no data), and its maximum segment size is all there is
/// to report (-1 when the kernel does not say). No results are read.
pub fn segment_size(
    chan: Option<&mut Channel>,
    spec: &TestSpec,
    run: &RunOptions,
    explicit_remote: bool,
) -> Result<i32, ClientError> {
    let (sock, mut local) = LocalData::open(spec, run)?;
    aim(chan, spec, run, &mut local, explicit_remote)?;
    socket::connect_timeout(&sock, &local.dest, CONNECT_WAIT)
        .map_err(|e| ClientError::Data(DataError::Connect(e)))?;
    Ok(socket::mss(&sock))
}

/// Where the data connection goes: the data port netserver names when
/// asked for its half of the test (its response is returned, and whether
/// its TCP_INFO series will follow its results), or without a control
/// connection `-P`'s port or the inetd service's.
fn aim(
    chan: Option<&mut Channel>,
    spec: &TestSpec,
    run: &RunOptions,
    local: &mut LocalData,
    explicit_remote: bool,
) -> Result<Option<(OmniResponse, bool)>, ClientError> {
    match chan {
        Some(chan) => {
            let response = ask_netserver(chan, spec, run, local, explicit_remote)?;
            local.dest.set_port(data_port(&response.0)?);
            await_start(run)?;
            Ok(Some(response))
        }
        None => {
            local.dest.set_port(no_control_port(spec));
            Ok(None)
        }
    }
}

/// Ask netserver for its half of the test: send the omni request (with
/// `run`'s extra flags and the test's extensions) and take its response,
/// which must accept the test; and whether the TCP_INFO series asked for
/// will follow its results (our netserver acknowledged the extension).
fn ask_netserver(
    chan: &mut Channel,
    spec: &TestSpec,
    run: &RunOptions,
    local: &LocalData,
    explicit_remote: bool,
) -> Result<(OmniResponse, bool), ClientError> {
    let mut request = build_request(
        spec,
        run,
        &local.sizes,
        &local.addr,
        &local.resolved,
        explicit_remote,
    );
    request.flags |= run.extra_flags;
    let mut ext = spec.extension;
    let reply = loop {
        let mut message = request.encode();
        ext.encode_into(&mut message);
        chan.send(&message)?;
        let reply = chan.recv(RESPONSE_WAIT)?;
        // A netperf-ng netserver older than the TCP_INFO flag refuses it
        // as unknown: ask once more without it, as before the flag.
        let refused = OmniResponse::decode(&reply).serv_errno == libc::EINVAL;
        if !(refused && ext.tcp_info_ms.take().is_some()) {
            break reply;
        }
    };
    let response = OmniResponse::decode(&reply);
    if response.serv_errno != 0 {
        let errno = response.serv_errno;
        if spec.extension.mptcp && matches!(errno, libc::ENOPROTOOPT | libc::EPROTONOSUPPORT) {
            return Err(ClientError::NotServedThere(format!(
                "--mptcp: netserver on {} cannot open MPTCP sockets ({}): MPTCP is off in its kernel (sysctl net.mptcp.enabled=0) or not built in",
                spec.data_host,
                netperf_data::net::strerror(errno)
            )));
        }
        return Err(data_socket_refused(errno, spec.extension.flows));
    }
    if reply.kind() != kind::OMNI_RESPONSE {
        return Err(ClientError::Unexpected(reply.kind()));
    }
    let ours = netperf_wire::extension::acknowledged(&reply);
    if !ours {
        if let Some(why) = needs_our_netserver(spec) {
            return Err(ClientError::NeedsOurNetserver(why));
        }
    }
    Ok((response, ours && ext.tcp_info_ms.is_some()))
}

/// What the test asks that only our netserver serves, said for a netserver
/// that did not read the extension block (a stock one); None when a stock
/// netserver serves the test as asked.
fn needs_our_netserver(spec: &TestSpec) -> Option<String> {
    let (ext, host) = (&spec.extension, &spec.data_host);
    if ext.flows > 0 {
        return Some(format!(
            "--flows {} needs netperf-ng's netserver on {host}: this one runs one data connection per test (a stock netserver?)",
            ext.flows
        ));
    }
    if ext.echo_sequence {
        return Some(format!(
            "--rate over UDP needs netperf-ng's netserver on {host}: it echoes each request's number, which pairs a response with its request when datagrams are lost; this one does not (a stock netserver?). TCP_RR --rate runs against any netserver"
        ));
    }
    if ext.mptcp {
        return Some(format!(
            "--mptcp needs netperf-ng's netserver on {host}: this one would answer with plain TCP (a stock netserver?)"
        ));
    }
    if ext.notsent_lowat.is_some() && spec.recv() {
        return Some(format!(
            "--notsent-lowat on netserver's end (it sends) needs netperf-ng's netserver on {host}: this one would leave its socket at the kernel's default (a stock netserver?)"
        ));
    }
    remote_fast_path(spec).map(|option| {
        format!(
            "{option} on netserver's end needs netperf-ng's netserver on {host}: this one would run its plain loop (a stock netserver?)"
        )
    })
}

/// The fast-path option netserver's end of a stream test must run, if
/// any: segmented sends when it sends, coalesced or uncopied receives when
/// it receives. Ours alone may run them against any peer.
fn remote_fast_path(spec: &TestSpec) -> Option<&'static str> {
    let ext = &spec.extension;
    [
        ("--gso", ext.gso_segments > 0 && spec.recv()),
        ("--gro", ext.gro && spec.xmit()),
        ("--skip-rx-copy", ext.skip_rx_copy && spec.xmit()),
    ]
    .into_iter()
    .find_map(|(option, remote)| remote.then_some(option))
}

/// The data port netserver's response names.
fn data_port(response: &OmniResponse) -> Result<u16, ClientError> {
    u16::try_from(response.data_port).map_err(|_| {
        ClientError::Setup(format!(
            "netserver sent an invalid data port {}",
            response.data_port
        ))
    })
}

/// netagg holds its streams here until a whole level is set up; its start
/// hook may call the test off.
fn await_start(run: &RunOptions) -> Result<(), ClientError> {
    if let Some(hook) = &run.start_hook {
        if !(hook.0)() {
            return Err(ClientError::Setup(
                "the test was called off before its data phase".to_string(),
            ));
        }
    }
    Ok(())
}

/// Our side's figures of one iteration.
struct Ours {
    stats: SideStats,
    mss: i32,
    cong_control: String,
    watched: Watched,
    endpoints: Endpoints,
}

/// The netserver's results, its message and the far end's figures.
type Theirs = (OmniResults, Option<wire::Message>, SideStats);

/// The Iteration both ends' figures make.
fn assemble(spec: &TestSpec, ours: Ours, rec: Recorders, theirs: Theirs) -> Iteration {
    let (results, res_msg, mut remote) = theirs;
    remote.mptcp = res_msg
        .as_ref()
        .and_then(netperf_wire::system_facts::decode_mptcp_subflows)
        .map(|total| netperf_data::net::mptcp::Subflows {
            total,
            each: Vec::new(),
        });
    let outcome = Outcome {
        elapsed: ours.stats.elapsed,
        local: ours.stats,
        remote,
        request_size: spec.request_size,
        response_size: spec.response_size,
        first_burst: spec.first_burst,
        transport_mss: if spec.protocol == Protocol::Tcp {
            ours.mss
        } else {
            -1
        },
        histogram: rec.hist.as_ref().map(Histogram::to_outcome),
    };
    Iteration {
        outcome,
        endpoints: ours.endpoints,
        results,
        interims: ours.watched.interims,
        remote_system: res_msg
            .as_ref()
            .and_then(netperf_wire::system_facts::SystemFacts::decode),
        local_datagrams: rec.seq.map(|s| s.counts()),
        remote_datagrams: res_msg
            .as_ref()
            .and_then(netperf_wire::system_facts::decode_datagrams),
        remote_interface_delta: res_msg
            .as_ref()
            .and_then(netperf_wire::system_facts::decode_interface),
        local_cong_control: ours.cong_control,
        interface_delta: ours.watched.interface_delta,
        histogram: rec.hist,
        data_started: ours.watched.data_started,
        flows: rec.flows,
        open_loop: rec.open_loop,
    }
}

/// How long netperf waits for the netserver's results once a stop signal
/// cut the test short. Ours ends its half at once (the control connection's
/// half-close); a stock netserver ends it only when the data connection tells
/// it (a close, a reset, a zero-length datagram to a receiver), so one that
/// sends UDP or accepts TCP_CC connections runs on to its own clock, and
/// netperf reports without it rather than wait as long.
const STOPPED_RESULTS_WAIT: Duration = Duration::from_secs(5);

/// The netserver's results, its message and the far end as netperf reports
/// it. After a stop signal (`by_signal`) a netserver may have no results to
/// give: a stock one that was sending answers the reset with an error
/// response, and one sending UDP or accepting TCP_CC connections runs on to
/// its own clock. The test is then reported as our end measured it, with the
/// far end's set-up figures only, and a note says why.
fn await_results(
    chan: &mut Channel,
    spec: &TestSpec,
    response: &OmniResponse,
    remote_cpu: bool,
    wait: Duration,
    by_signal: bool,
) -> Result<(OmniResults, Option<wire::Message>, SideStats), ClientError> {
    // netperf 2.7.1's results keep the response's type (98), an error
    // included: only serv_errno tells a stock netserver's answer to the
    // reset (its send failed) from its results.
    let missing = match chan.recv(wait) {
        Ok(message) => match OmniResults::decode(&message) {
            results if results.serv_errno == 0 => {
                let stats = remote_side(spec, response, &results, remote_cpu);
                return Ok((results, Some(message), stats));
            }
            results if by_signal => format!(
                "the netserver answered the stop with an error ({}) instead of its results",
                netperf_data::net::strerror(results.serv_errno)
            ),
            results => return Err(remote_error(results.serv_errno)),
        },
        Err(ChannelError::TimedOut(_)) if by_signal => format!(
            "the netserver did not end its half of the test within {} s of the stop (a stock netserver sending UDP or accepting connections runs on to its own -l)",
            STOPPED_RESULTS_WAIT.as_secs()
        ),
        Err(e) => return Err(e.into()),
    };
    eprintln!("netperf: {missing}; the result has no remote counters");
    let results = OmniResults {
        send_buf_size: response.send_buf_size,
        recv_buf_size: response.recv_buf_size,
        ..Default::default()
    };
    let stats = remote_side(spec, response, &results, false);
    Ok((results, None, stats))
}

/// The inetd service a test without a control connection talks to, unless
/// -P names a port: discard for sending, chargen for receiving, echo for
/// request/response.
fn no_control_port(spec: &TestSpec) -> u16 {
    const DISCARD: u16 = 9;
    const CHARGEN: u16 = 19;
    const ECHO: u16 = 7;
    match (spec.remote_data_port, spec.xmit(), spec.recv()) {
        (port, _, _) if port != 0 => port,
        (_, true, false) => DISCARD,
        (_, false, true) => CHARGEN,
        _ => ECHO,
    }
}

/// Without a control connection netperf assumes everything it sent arrived
/// and everything it received was sent; the rest of the far end is unknown.
fn assumed_remote(local: &SideStats) -> SideStats {
    SideStats {
        bytes_received: local.bytes_sent,
        bytes_sent: local.bytes_received,
        recv_calls: 0,
        send_calls: 0,
        transactions: local.transactions,
        send_buf_req: -1,
        recv_buf_req: -1,
        send_size: -1,
        recv_size: -1,
        retransmits: -1,
        elapsed: local.elapsed,
        ..Default::default()
    }
}

fn remote_side(
    spec: &TestSpec,
    resp: &OmniResponse,
    res: &OmniResults,
    measured_cpu: bool,
) -> SideStats {
    let cpu = (measured_cpu && resp.flags & omni::flag::MEASURE_CPU != 0).then(|| CpuUsage {
        util: f64::from(res.cpu_util),
        user: f64::from(res.cpu_percent_user),
        system: f64::from(res.cpu_percent_system),
        iowait: f64::from(res.cpu_percent_iowait),
        irq: f64::from(res.cpu_percent_irq),
        softirq: f64::from(res.cpu_percent_swintr),
        peak_util: f64::from(res.peak_cpu_util),
        peak_id: res.peak_cpu_id,
        num_cpus: res.num_cpus,
        method: if res.cpu_method == 8 { 'S' } else { '?' },
    });
    SideStats {
        bytes_sent: res.bytes_sent,
        bytes_received: res.bytes_received,
        send_calls: u64::from(res.send_calls),
        recv_calls: u64::from(res.recv_calls),
        failed_sends: u64::from(res.failed_sends),
        transactions: u64::from(res.trans_received),
        timeouts: 0,
        paced_wait_secs: 0.0,
        send_buf_req: spec.remote_send_buf,
        recv_buf_req: spec.remote_recv_buf,
        send_buf: resp.send_buf_size,
        recv_buf: resp.recv_buf_size,
        send_buf_end: res.send_buf_size,
        recv_buf_end: res.recv_buf_size,
        send_size: resp.send_size,
        recv_size: resp.receive_size,
        send_align: spec.remote_send_align,
        recv_align: spec.remote_recv_align,
        send_offset: spec.remote_send_offset,
        recv_offset: spec.remote_recv_offset,
        send_width: resp.send_width.max(0) as u32,
        recv_width: resp.recv_width.max(0) as u32,
        retransmits: res.transport_retrans,
        elapsed: f64::from(res.elapsed_time),
        cpu,
        mptcp: None,
        // From the TCP_INFO series, when our netserver sends one.
        tcp_info: None,
    }
}
