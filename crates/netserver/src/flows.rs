//! netserver's half of a many-flow test (`netperf -- --flows N`): whether
//! it may serve that many flows (the operator's --max-connections, its
//! open-file limit), and serving them on the engine's epoll threads from
//! the test's one data socket.

use super::limits::Limits;
use super::omni_checks::{refuse, Refusal};
use super::omni_results::DataOutcome;
use netperf_data::engine::fast_paths;
use netperf_data::engine::flows::answer::{self, Service};
use netperf_data::engine::flows::{blocks_per_flow, Work, THREAD_PER_FLOW_MAX};
use netperf_data::engine::stop_flag::StopFlag;
use netperf_data::engine::{Counters, DataError};
use netperf_data::spec::Protocol;
use netperf_wire::extension::Extension;
use netperf_wire::omni::{self, OmniRequest};
use socket2::Socket;
use std::net::IpAddr;

/// The listen backlog of a test's data socket: room for every flow's
/// connect at once (up to what the kernel takes), 128 as before otherwise.
pub fn backlog(ext: &Extension) -> i32 {
    match ext.flows {
        0 => 128,
        n => n.clamp(128, 65_535) as i32,
    }
}

/// Whether this netserver serves the many-flow test asked for; refused
/// with the reason (and an errno the client turns into a hint) if not.
pub fn check(
    r: &OmniRequest,
    protocol: Protocol,
    ext: &Extension,
    limits: &Limits,
) -> Result<(), Refusal> {
    if ext.flows == 0 {
        return Ok(());
    }
    if ext.flows as usize > limits.max_connections {
        return Err(refuse(
            libc::EUSERS,
            format!(
                "{} flows are over --max-connections {} (each flow is a connection)",
                ext.flows, limits.max_connections
            ),
        ));
    }
    if protocol == Protocol::Udp && r.direction == omni::DIR_XMIT {
        return Err(refuse(
            libc::EINVAL,
            "UDP flows that netserver sends to are not served",
        ));
    }
    if r.flags & omni::flag::CONNECT_TEST != 0 && r.direction == 0 {
        return Err(refuse(libc::EINVAL, "TCP_CC is not served with flows"));
    }
    netperf_base::rlimit::room_for_flows(ext.flows).map_err(|why| refuse(libc::EMFILE, why))
}

/// The work netserver's side of each flow does: the sizes it settled on.
fn work(r: &OmniRequest, send_size: i32, recv_size: i32) -> Work {
    let size = |s: i32| s.max(1) as usize;
    match (
        r.direction & omni::DIR_XMIT != 0,
        r.direction & omni::DIR_RECV != 0,
    ) {
        (true, false) => Work::Send {
            size: size(send_size),
        },
        (false, true) => Work::Receive {
            size: size(recv_size),
        },
        _ => Work::Answer {
            request: size(r.request_size),
            response: size(r.response_size),
        },
    }
}

/// Threads netserver runs a test's flows on: what the client asked, at
/// most twice the CPUs, or a thread per flow for TCP bulk flows up to
/// THREAD_PER_FLOW_MAX (each thread then blocks on its one flow, as the
/// client's do).
fn threads(ext: &Extension, per_flow: bool) -> u32 {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let most = match per_flow {
        true => (2 * cpus).max(ext.flows.min(THREAD_PER_FLOW_MAX)),
        false => 2 * cpus,
    };
    ext.flow_threads.clamp(1, most).min(ext.flows.max(1))
}

/// What the flows of a test need from the omni test around them.
pub struct FlowsTest<'a> {
    pub r: &'a OmniRequest,
    pub ext: &'a Extension,
    pub protocol: Protocol,
    /// The sizes netserver settled on.
    pub send_size: i32,
    pub recv_size: i32,
    /// Which client addresses are served.
    pub permit: &'a (dyn Fn(IpAddr) -> bool + Sync),
}

/// Serves the flows on `socket` until they end (or `stop`).
pub fn serve(socket: &Socket, test: &FlowsTest, stop: &StopFlag) -> Result<DataOutcome, DataError> {
    let r = test.r;
    let work = work(r, test.send_size, test.recv_size);
    let datagram = test.protocol == Protocol::Udp;
    let reconnect = r.flags & omni::flag::CONNECT_TEST != 0;
    let svc = Service {
        work,
        threads: threads(test.ext, blocks_per_flow(work, datagram, reconnect)),
        flows: test.ext.flows,
        datagram,
        reconnect,
        payload: b"netperf".to_vec(),
        echo: test.ext.echo_sequence && test.protocol == Protocol::Udp,
        drop_every: crate::omni::test_drop_every(),
        // The data socket has UDP_GRO exactly when this holds (omni_socket).
        gro: matches!(
            fast_paths::pick(
                datagram,
                test.ext,
                false,
                matches!(work, Work::Receive { .. })
            ),
            Some(fast_paths::Loop::Receive(fast_paths::Receiver::Gro))
        ),
    };
    let served = answer::serve(socket, &svc, stop, test.permit).map_err(DataError::Recv)?;
    let t = served.tally;
    Ok(DataOutcome {
        counters: Counters {
            bytes_sent: t.bytes_sent,
            bytes_received: t.bytes_received,
            send_calls: t.send_calls,
            recv_calls: t.recv_calls,
            failed_sends: t.failed_sends,
            transactions: t.transactions,
            timeouts: t.timeouts,
            ..Counters::default()
        },
        end_buffers: None,
        retrans: -1,
        cong: String::new(),
        // Many connections: their subflows are not one figure.
        mptcp_subflows: None,
        tcp_series: None,
    })
}
