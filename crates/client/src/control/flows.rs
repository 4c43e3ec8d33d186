//! netperf's half of a many-flow test's data phase (`-- --flows N`): the
//! flows opened to netserver's data port and run by the engine's epoll
//! threads until the stop flag, their work added up into the counters the
//! classic report prints, and, for TCP_CRR, the end marked for netserver.

use super::error::ClientError;
use super::request::{LocalSizes, RunOptions};
use netperf_data::engine::connect::mark_end;
use netperf_data::engine::fast_paths;
use netperf_data::engine::flows::initiate::{self, Plan};
use netperf_data::engine::flows::paced::OpenPlan;
use netperf_data::engine::flows::{FlowsReport, Work};
use netperf_data::engine::stop_flag::StopFlag;
use netperf_data::engine::{Counters, Histogram};
use netperf_data::measure::open_loop::OpenLoopReport;
use netperf_data::net::socket::SocketOptions;
use netperf_data::spec::{Protocol, TestSpec};
use std::net::SocketAddr;
use std::time::Duration;

/// A UDP request unanswered this long is lost (netperf's -e, else this).
const LOSS_TIMEOUT: Duration = Duration::from_secs(1);
/// How often the flows are sampled without -D.
const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// What the flows of one test did.
pub struct FlowsRun {
    pub counters: Counters,
    pub report: FlowsReport,
    pub latency: Histogram,
    /// When the flows stopped moving data: the data phase's end.
    pub stopped_at: std::time::Instant,
    /// The open loop's figures (`--rate`).
    pub open_loop: Option<OpenLoopReport>,
}

/// The work of every flow, as netperf's side does it: messages of the
/// sizes a single-flow test would use.
fn work(spec: &TestSpec, sizes: &LocalSizes) -> Work {
    let size = |s: i32| s.max(1) as usize;
    match (spec.is_rr(), spec.xmit()) {
        (true, _) => Work::Ask {
            request: size(spec.request_size),
            response: size(spec.response_size),
        },
        (false, true) => Work::Send {
            size: size(sizes.send_size),
        },
        (false, false) => Work::Receive {
            size: size(sizes.recv_size),
        },
    }
}

/// Datagrams each send of a UDP stream flow carries: `--gso N`'s N, else 1
/// (the fast-path rule the single-flow loops pick by).
fn segments(spec: &TestSpec) -> usize {
    let stream = !spec.is_rr();
    let udp = spec.protocol == Protocol::Udp;
    let sends = stream && spec.xmit();
    match fast_paths::pick(udp, &spec.extension, sends, stream && spec.recv()) {
        Some(fast_paths::Loop::Segmented(n)) => n,
        _ => 1,
    }
}

/// Runs `spec.extension.flows` flows to `remote` until `stop`.
pub fn run(
    spec: &TestSpec,
    sizes: &LocalSizes,
    remote: &SocketAddr,
    local: Option<SocketAddr>,
    opts: &SocketOptions,
    run: &RunOptions,
    stop: &StopFlag,
) -> Result<FlowsRun, ClientError> {
    let ext = &spec.extension;
    let datagram = spec.protocol == Protocol::Udp;
    let interval = run
        .interim
        .as_ref()
        .map_or(SAMPLE_EVERY, |i| i.interval)
        .max(Duration::from_millis(10));
    let plan = Plan {
        work: work(spec, sizes),
        flows: ext.flows,
        threads: ext.flow_threads.max(1),
        datagram,
        segments: segments(spec),
        reconnect: spec.connection,
        burst: spec.first_burst,
        remote: *remote,
        // The address only: each flow gets its own port.
        local: local.map(|mut l| {
            l.set_port(0);
            l
        }),
        opts: opts.clone(),
        loss_timeout: spec
            .receive_timeout
            .map_or(LOSS_TIMEOUT, |s| Duration::from_secs(s.max(1) as u64)),
        interval,
        flow_samples: spec.flow_samples,
        payload: Vec::new(),
        board: run.flow_board.clone(),
        open: spec.open_loop.map(|o| OpenPlan {
            rate: o.rate,
            max_inflight: o.max_inflight,
        }),
    };
    let initiate::Ran {
        report,
        latency,
        stopped_at,
        open_loop,
    } = initiate::run(&plan, stop);
    if spec.connection {
        mark_end(remote, opts);
    }
    let total = report.total();
    if total.transactions == 0 && total.bytes_sent == 0 && total.bytes_received == 0 {
        let why = report
            .flows
            .iter()
            .find_map(|f| f.failure.clone())
            .unwrap_or_else(|| "no flow moved any data".into());
        return Err(ClientError::Setup(format!("--flows: {why}")));
    }
    let counters = Counters {
        bytes_sent: total.bytes_sent,
        bytes_received: total.bytes_received,
        send_calls: total.send_calls,
        recv_calls: total.recv_calls,
        failed_sends: total.failed_sends,
        transactions: total.transactions,
        timeouts: total.timeouts,
        ..Counters::default()
    };
    Ok(FlowsRun {
        counters,
        report,
        latency,
        stopped_at,
        open_loop,
    })
}
