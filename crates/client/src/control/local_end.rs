//! Our end of one iteration's data connection, as `client::run_iteration`
//! steps through it: the data socket set up before netserver is asked
//! (`LocalData`), what records and watches the data phase (`Recorders`,
//! `Watch`: the stop flag and its timer, the -D sampler, our CPU and
//! interface counters, the clock), and our side's figures once it ended.

use super::client::{data_endpoints, Endpoints};
use super::data::{run_data, DataRun, Rings};
use super::error::ClientError;
use super::request::{local_sizes, local_socket_options, LocalSizes, RunOptions};
use netperf_data::engine::stop_flag::StopFlag;
use netperf_data::engine::timer::Timer;
use netperf_data::engine::watchdog::{self, UNTIMED_IO_WAIT, UNTIMED_SILENCE};
use netperf_data::engine::{Counters, DataError, Histogram};
use netperf_data::measure::cpu::CpuSampler;
use netperf_data::measure::outcome::{CpuUsage, SideStats};
use netperf_data::net::interface::InterfaceCounters;
use netperf_data::net::resolve;
use netperf_data::net::socket::{self, SocketOptions};
use netperf_data::spec::{Limit, TestSpec};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant, SystemTime};

/// Bind the local data socket to `local`; with `-- --data-ports`, to the
/// first free port of the range (or `-P`'s, checked to lie in it), which
/// `local` then names so that a connection test's later sockets reuse it.
fn bind_local(
    sock: &socket2::Socket,
    local: &mut SocketAddr,
    range: Option<netperf_data::net::port_range::PortRange>,
) -> Result<(), ClientError> {
    if range.is_none() {
        return socket::bind(sock, local).map_err(|e| ClientError::Setup(e.to_string()));
    }
    let base = *local;
    let port = netperf_data::net::port_range::open_in_range(range, base.port(), |port| {
        let mut addr = base;
        addr.set_port(port);
        sock.bind(&socket2::SockAddr::from(addr)).map(|()| port)
    })
    .map_err(|e| ClientError::Setup(format!("local data socket: {e}")))?;
    local.set_port(port);
    Ok(())
}

/// Whether netperf binds the data socket before it connects: for a local
/// port (`-P`, `--data-ports`, a connection test's next port) or a
/// datagram socket, never for a stream test's `-L` address alone.
pub fn must_bind(spec: &TestSpec) -> bool {
    spec.protocol == netperf_data::spec::Protocol::Udp
        || spec.connection
        || spec.local_data_port != 0
        || spec.local_data_ports.is_some()
}

/// The local data socket as set up before netserver is asked: where the
/// data connection goes and from where, and the buffers, sizes and rings
/// settled on.
pub(super) struct LocalData {
    opts: SocketOptions,
    /// Where the data connection goes, as resolved (what the request and
    /// the banner name).
    pub(super) resolved: SocketAddr,
    /// Where it goes once the port is known: the netserver's data port, or
    /// without a control connection `-P`'s or the inetd service's.
    pub(super) dest: SocketAddr,
    /// Where `-L`, `-P` or `--data-ports` bind it, if anywhere.
    bind: Option<SocketAddr>,
    /// `-L`'s address where it does not bind (a TCP socket without a
    /// port): what the banner names.
    named: Option<SocketAddr>,
    /// The socket's own address.
    pub(super) addr: SocketAddr,
    /// The socket's send and receive buffers as created.
    send_buf: i32,
    recv_buf: i32,
    pub(super) sizes: LocalSizes,
    rings: Rings,
}

impl LocalData {
    /// Create (and bind) the data socket, settle the sizes on its buffers
    /// and make the rings. The socket itself goes to the data phase.
    pub(super) fn open(
        spec: &TestSpec,
        run: &RunOptions,
    ) -> Result<(socket2::Socket, LocalData), ClientError> {
        let (resolved, mut bind) = data_endpoints(spec)?;
        // netperf binds its data socket only for a port or a datagram
        // socket: a TCP test's `-L addr` names its source in the banner,
        // and the kernel picks the one it connects from (so netperf's
        // request carries no address of its own either).
        let named = bind.filter(|_| !must_bind(spec));
        if named.is_some() {
            bind = None;
        }
        let opts = local_socket_options(spec);
        let sock = socket::create(&resolved, &opts)
            .map_err(|e| ClientError::Setup(format!("unable to create data socket: {e}")))?;
        if let Some(l) = &mut bind {
            bind_local(&sock, l, spec.local_data_ports)?;
        }
        let (send_buf, recv_buf) = socket::buffer_sizes(&sock);
        let sizes = local_sizes(spec, send_buf, recv_buf);
        let rings = Rings::prepare(spec, &sizes, run)?;
        let addr =
            socket::local_addr(&sock).unwrap_or_else(|| resolve::unspecified_like(&resolved));
        let local = LocalData {
            opts,
            resolved,
            dest: resolved,
            bind,
            named,
            addr,
            send_buf,
            recv_buf,
            sizes,
            rings,
        };
        Ok((sock, local))
    }

    /// Run our half of the data phase on `sock` under `watch`. A timed
    /// test is ended by the timer's signal, and one that runs until stopped
    /// (-l 0) by a signal like a timed one; only a count needs socket
    /// timeouts so that no call can block for ever. A count has no clock:
    /// one that stops moving ends with an error, the same watch whatever
    /// the socket family (engine::watchdog).
    pub(super) fn move_data(
        &mut self,
        sock: socket2::Socket,
        spec: &TestSpec,
        run: &RunOptions,
        watch: &Watch,
        rec: &mut Recorders,
    ) -> Result<DataRun, ClientError> {
        if spec.extension.flows > 0 {
            return self.move_flows(sock, spec, run, watch, rec);
        }
        let io_wait = watch.units.is_some().then_some(UNTIMED_IO_WAIT);
        let silence = watch.units.map(|_| UNTIMED_SILENCE);
        watched(watch, silence, || {
            run_data(
                spec,
                sock,
                &self.dest,
                self.bind,
                &self.opts,
                &mut self.rings,
                run,
                &watch.stop,
                watch.units,
                io_wait,
                rec.hist.as_mut(),
                rec.seq.as_mut(),
                rec.open_loop.as_mut(),
            )
        })
        .inspect(|_| {
            // -j and -v 2's histogram time each transaction from its send,
            // as in a closed loop: the open loop's raw times.
            if let (Some(hist), Some(open)) = (rec.hist.as_mut(), rec.open_loop.as_ref()) {
                hist.merge(&open.raw);
            }
        })
    }

    /// `move_data` for a many-flow test: the flows run on their own
    /// sockets (the one made for the test is not used), watched alike.
    fn move_flows(
        &mut self,
        sock: socket2::Socket,
        spec: &TestSpec,
        run: &RunOptions,
        watch: &Watch,
        rec: &mut Recorders,
    ) -> Result<DataRun, ClientError> {
        drop(sock);
        let ran = watched(watch, None, || {
            super::flows::run(
                spec,
                &self.sizes,
                &self.dest,
                self.bind,
                &self.opts,
                run,
                &watch.stop,
            )
        })?;
        if let Some(hist) = rec.hist.as_mut() {
            hist.merge(&ran.latency);
        }
        // Every flow is accounted for: those that failed, and why, on
        // stderr (the output keeps its shape), unless the board's holder
        // accounts for them.
        if let Some(line) = ran
            .report
            .failures_line()
            .filter(|_| run.flow_board.is_none())
        {
            eprintln!("netperf: --flows: {line}");
        }
        rec.flows = Some(ran.report);
        rec.data_ended = Some(ran.stopped_at);
        if ran.open_loop.is_some() {
            rec.open_loop = ran.open_loop;
        }
        Ok((ran.counters, -1, None))
    }

    /// Our side's figures as the data phase left them (before the data
    /// socket's own end-of-test figures).
    pub(super) fn side_stats(
        &self,
        spec: &TestSpec,
        elapsed: f64,
        cpu: Option<CpuUsage>,
        counters: &Counters,
    ) -> SideStats {
        let (lss, lsr, sizes) = (self.send_buf, self.recv_buf, &self.sizes);
        let mut local = SideStats {
            send_buf_req: spec.local_send_buf,
            recv_buf_req: spec.local_recv_buf,
            send_buf: lss,
            recv_buf: lsr,
            send_buf_end: lss,
            recv_buf_end: lsr,
            send_size: if spec.xmit() { sizes.send_size } else { -1 },
            recv_size: if spec.recv() { sizes.recv_size } else { -1 },
            send_align: spec.local_send_align,
            recv_align: spec.local_recv_align,
            send_offset: spec.local_send_offset,
            recv_offset: spec.local_recv_offset,
            send_width: sizes.send_width,
            recv_width: sizes.recv_width,
            retransmits: -1,
            elapsed,
            cpu,
            ..Default::default()
        };
        fill_counters(&mut local, counters);
        local
    }

    /// The data connection's addresses as the banner and results name them.
    pub(super) fn endpoints(&self) -> Endpoints {
        Endpoints {
            local: self.bind.or(self.named).unwrap_or(self.addr),
            remote: self.resolved,
        }
    }
}

/// `work` under the watchdog of `watch`'s control connection; a netserver
/// silent for `silence` (a counted test's bound) ends it with an error.
fn watched<T>(
    watch: &Watch,
    silence: Option<Duration>,
    work: impl FnOnce() -> Result<T, ClientError>,
) -> Result<T, ClientError> {
    let (done, silent) = watchdog::netperf_watched(watch.control_fd, &watch.stop, silence, work);
    let done = done?;
    match silent {
        Some(e) => Err(ClientError::Data(DataError::Recv(e))),
        None => Ok(done),
    }
}

/// A test's length: the seconds its clock runs, or the count of work units
/// that ends it. `-l 0` has neither: it runs until stopped.
pub(super) fn clock_and_count(limit: Limit) -> (Option<Duration>, Option<u64>) {
    match limit {
        Limit::Seconds(0) => (None, None),
        Limit::Seconds(s) => (Some(Duration::from_secs(u64::from(s))), None),
        Limit::Units(n) => (None, Some(n)),
    }
}

/// The pad on netperf's clock for a TCP stream that netperf only receives
/// from a netserver: such a test ends at netserver's end of file, sent when
/// netserver's own clock ends its sends, so every byte netserver counts as
/// sent is counted here as received (flent compares LOCAL_BYTES_RECVD with
/// REMOTE_BYTES_SENT). Stock netperf means to pad here too (its comment says
/// so) but sets the pad to zero: its netperf then stops first whenever its
/// clock starts before netserver's, megabytes short. The pad only ends a
/// test whose netserver vanished; it is taken off the time then.
pub(super) fn receive_pad(spec: &TestSpec, controlled: bool) -> Duration {
    let receives_to_end = controlled
        && spec.recv()
        && !spec.xmit()
        && !spec.is_rr()
        && super::remote_tcp::single_tcp_connection(spec);
    match receives_to_end {
        true => Duration::from_secs(u64::from(netperf_wire::PAD_TIME)),
        false => Duration::ZERO,
    }
}

/// What the data phase records beside its counters, when the test asks:
/// its latency histogram and its datagrams' sequence (`--seq`).
pub(super) struct Recorders {
    pub(super) hist: Option<Histogram>,
    pub(super) seq: Option<netperf_data::engine::sequence::Sequence>,
    /// What each flow of a many-flow test did.
    pub(super) flows: Option<netperf_data::measure::flows::FlowsReport>,
    /// When the data phase ended, if before its loop returned (a
    /// many-flow test ends its flows after the stop).
    pub(super) data_ended: Option<Instant>,
    /// An open-loop test's schedule and its two latencies (`--rate`).
    pub(super) open_loop: Option<netperf_data::measure::open_loop::OpenLoopReport>,
}

impl Recorders {
    pub(super) fn new(spec: &TestSpec) -> Recorders {
        Recorders {
            hist: spec.keep_histogram.then(Histogram::new),
            seq: spec
                .extension
                .sequence
                .then(netperf_data::engine::sequence::Sequence::new),
            flows: None,
            data_ended: None,
            open_loop: spec.open_loop.map(|o| {
                netperf_data::measure::open_loop::OpenLoopReport::new(o.rate, o.max_inflight)
            }),
        }
    }
}

/// What watches the data phase and is read once it ends: the stop flag and
/// the timer that sets it, the watchdog's control connection, the -D
/// sampler, our CPU and the interface's counters, and the clock.
pub(super) struct Watch {
    sampler: Option<super::interim::InterimSampler>,
    pub(super) timer: Timer,
    pub(super) stop: StopFlag,
    /// The count that ends the test, if one does.
    units: Option<u64>,
    control_fd: RawFd,
    cpu: Option<CpuSampler>,
    counters_before: Option<InterfaceCounters>,
    pub(super) started: Instant,
    /// Wall-clock time the data phase started.
    data_started: SystemTime,
}

/// What the watch saw of the data phase.
pub(super) struct Watched {
    pub(super) interims: Vec<crate::report::interim::Interim>,
    pub(super) interface_delta: Option<InterfaceCounters>,
    pub(super) data_started: SystemTime,
}

impl Watch {
    /// Start watching: our CPU, the interface's counters, the clock, then
    /// the timer (`seconds`) and the -D sampler (reading `tcp_fd`'s
    /// TCP_INFO each interval, when given).
    pub(super) fn start(
        run: &RunOptions,
        seconds: Option<Duration>,
        units: Option<u64>,
        control_fd: RawFd,
        tcp_fd: Option<RawFd>,
    ) -> Watch {
        let cpu = if run.local_cpu {
            CpuSampler::start(run.num_cpus).ok()
        } else {
            None
        };
        let stop = run.shared_stop.clone().unwrap_or_default();
        let counters_before = run.count_interface.as_deref().map(InterfaceCounters::read);
        let started = Instant::now();
        let data_started = SystemTime::now();
        // SIGALRM, SIGINT or SIGTERM end the data phase at once (netperf only).
        // A flag shared with others (netagg's coordinator) needs the watching
        // thread; netperf's own test runs with no other thread.
        let timer = match run.shared_stop {
            Some(_) => Timer::arm_watching(seconds, stop.clone(), true),
            None => Timer::arm_alone(seconds, stop.clone()),
        };
        let sampler = run.interim.clone().map(|mut o| {
            o.tcp_info_fd = tcp_fd;
            super::interim::InterimSampler::start(o, stop.clone())
        });
        Watch {
            sampler,
            timer,
            stop,
            units,
            control_fd,
            cpu,
            counters_before,
            started,
            data_started,
        }
    }

    /// Stop watching the data phase that ended at `ended`: disarm the
    /// timer, then take the interim results, the interface's counters and
    /// (returned beside them) our CPU usage.
    pub(super) fn finish(
        self,
        spec: &TestSpec,
        counters: &Counters,
        ended: Instant,
    ) -> (Watched, Option<CpuUsage>) {
        let Watch {
            sampler,
            timer,
            mut cpu,
            counters_before,
            data_started,
            ..
        } = self;
        drop(timer);
        let interims = sampler
            .map(|s| s.finish(interim_units(spec, counters), ended))
            .unwrap_or_default();
        let interface_delta = counters_before.map(|before| {
            let after = InterfaceCounters::read(&before.name);
            before.delta(&after)
        });
        let watched = Watched {
            interims,
            interface_delta,
            data_started,
        };
        (watched, cpu.as_mut().and_then(|c| c.stop().ok()))
    }
}

/// netperf -d's summary of the data phase.
pub(super) fn debug_data_phase(
    run: &RunOptions,
    remote: &SocketAddr,
    elapsed: f64,
    counters: &Counters,
) {
    if run.debug > 0 {
        eprintln!(
            "netperf: debug: data phase to {remote} ended after {elapsed:.3} s: {} bytes sent in {} calls, {} received in {} calls, {} transactions, {} failed sends",
            counters.bytes_sent,
            counters.send_calls,
            counters.bytes_received,
            counters.recv_calls,
            counters.transactions,
            counters.failed_sends
        );
    }
}

/// What a TCP data socket tells at the end of the test: its congestion
/// control and MSS (`mss_seen` when the data phase saw one), and into
/// `local` its buffers at the end (when the kernel sized them) and its
/// retransmissions. `-d` dumps its TCP_INFO.
pub(super) fn tcp_end_figures(
    s: &socket2::Socket,
    spec: &TestSpec,
    debug: i32,
    local: &mut SideStats,
    mss_seen: i32,
) -> (String, i32) {
    let cong_control = socket::congestion_control(s);
    let (e_ss, e_sr) = socket::buffer_sizes(s);
    if spec.local_send_buf < 0 {
        local.send_buf_end = e_ss;
    }
    if spec.local_recv_buf < 0 {
        local.recv_buf_end = e_sr;
    }
    let mss = if mss_seen < 0 {
        socket::mss(s)
    } else {
        mss_seen
    };
    let info = socket::tcp_info(s.as_raw_fd());
    netperf_data::measure::tcp_info::dump(info.as_ref(), debug);
    local.retransmits = socket::retransmissions(info.as_ref());
    local.tcp_info = info
        .as_ref()
        .map(|i| netperf_data::measure::tcp_info::TcpInterval::whole(i, local.elapsed));
    if spec.extension.mptcp {
        local.mptcp = netperf_data::net::mptcp::subflows(s.as_raw_fd());
    }
    (cong_control, mss)
}

/// The work units interim results count: what the data thread publishes.
fn interim_units(spec: &TestSpec, c: &Counters) -> u64 {
    if spec.is_rr() {
        c.transactions
    } else if spec.xmit() {
        c.bytes_sent
    } else {
        c.bytes_received
    }
}

fn fill_counters(side: &mut SideStats, c: &Counters) {
    side.bytes_sent = c.bytes_sent;
    side.bytes_received = c.bytes_received;
    side.send_calls = c.send_calls;
    side.recv_calls = c.recv_calls;
    side.failed_sends = c.failed_sends;
    side.transactions = c.transactions;
    side.timeouts = c.timeouts;
    side.paced_wait_secs = c.paced_wait.as_secs_f64();
}
